// Two SDSL regions in one C++ file: region 0 blurs an image held in a
// std::vector (passed through a pointer, whose extent the grid gives), region 1
// diffuses the blurred image as heat and stops when it settles. Each region sets
// its own status variable, sdsl_return_0 and sdsl_return_1.
//
//   stencilc compile -x -f blur_then_heat.cpp -o blur_then_heat.out.cpp
//   g++ -O2 -fopenmp blur_then_heat.out.cpp -o blur_then_heat && ./blur_then_heat
//
// -x gives the generated functions C linkage, so that they could be declared in
// a C header and called from C as well.
#include <cstdio>
#include <vector>

int main() {
    int width = 40;
    int height = 30;

    std::vector<float> pixels(width * height);
    for (int i = 0; i < width * height; ++i) {
        pixels[i] = (float)((i * 37) % 101) / 100.0f;
    }
    std::vector<float> blurred(width * height, 0.0f);
    float *img = pixels.data();
    float *out = blurred.data();

    #pragma sdsl begin
    int width;
    int height;

    grid g[height][width];
    float griddata img on g at 0 boundary clamp;
    float griddata out on g at 0;

    const float K[3][3] = {
        {0.0625f, 0.125f, 0.0625f},
        {0.125f,  0.25f,  0.125f},
        {0.0625f, 0.125f, 0.0625f}
    };

    pointfunction blur3x3(src, dst) {
        float acc = 0.0f;
        for i in -1..1 {
            for j in -1..1 {
                acc = acc + K[i + 1][j + 1] * [0]src[i][j];
            }
        }
        [0]dst[0][0] = acc;
    }

    iterate 1 {
        stencil blur {
            [0:height-1][0:width-1] : blur3x3(img, out);
        }
    }
    #pragma sdsl end
    if (sdsl_return_0 != 0) {
        std::printf("blur failed with status %d\n", sdsl_return_0);
        return sdsl_return_0;
    }

    double blur_sum = 0.0;
    for (float v : blurred) {
        blur_sum += v;
    }
    std::printf("blur %.6f\n", blur_sum);

    std::vector<double> temperature(blurred.begin(), blurred.end());
    double *u = temperature.data();
    double alpha = 0.2;

    #pragma sdsl begin
    int width;
    int height;
    double alpha;

    grid g[height][width];
    double griddata u on g at 0,1;

    iterate 500 {
        stencil diffuse {
            [1:height-2][1:width-2] : [1]u[0][0] = [0]u[0][0] + alpha * ([0]u[-1][0] + [0]u[1][0] + [0]u[0][-1] + [0]u[0][1] - 4.0 * [0]u[0][0]);
        }
        reduction change max {
            [1:height-2][1:width-2] : fabs([1]u[0][0] - [0]u[0][0]);
        }
    } check (change < 1e-4) every 5 iterations
    #pragma sdsl end

    double heat_sum = 0.0;
    for (double v : temperature) {
        heat_sum += v;
    }
    std::printf("heat %.6f\n", heat_sum);
    return sdsl_return_1;
}
