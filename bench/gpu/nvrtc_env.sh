# Sourced by the device scripts: a CUDA 13 toolkit may have only
# libnvrtc.so.13, a name cudarc does not try. Link the newest libnvrtc.so.N as
# libnvrtc.so in LINK_DIR (default /tmp/nvrtc-link) and put that folder and the
# library's own (for libnvrtc-builtins) on LD_LIBRARY_PATH; sets `nvrtc` to the
# library found (empty if none). Does nothing when STENCILC_NVRTC is set.
nvrtc=""
if [ -z "${STENCILC_NVRTC:-}" ]; then
    nvrtc="$(ls /usr/local/cuda*/lib64/libnvrtc.so.* /usr/local/cuda*/targets/*/lib/libnvrtc.so.* \
        /usr/lib/x86_64-linux-gnu/libnvrtc.so.* 2>/dev/null | grep -v builtins | sort -V | tail -n 1 || true)"
    if [ -n "$nvrtc" ]; then
        link_dir="${LINK_DIR:-/tmp/nvrtc-link}"
        mkdir -p "$link_dir"
        ln -sf "$nvrtc" "$link_dir/libnvrtc.so"
        export LD_LIBRARY_PATH="$link_dir:$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
fi
