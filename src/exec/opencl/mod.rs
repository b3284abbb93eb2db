//! Running programs through OpenCL (`opencl3`, loaded dynamically): any platform,
//! including PoCL on a CPU. Kernels are built once per process and cached by a
//! hash of their source, build options and device; device limits are queried.

pub mod cuda_kernel;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::event::Event;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING};

use crate::exec::host_plan::{GpuDevice, KernelArg, Rect};
use crate::exec::options::{ProgressHook, RunOptions};
use crate::exec::{Buffer, ExecError, FieldState, RunSummary};
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType, Value};
use crate::kir::Module;
use crate::lower::{lower_for, Target};
use crate::schedule::{DeviceLimits, Schedule};

/// The chosen OpenCL device with its context and queue.
struct Runtime {
    device: Device,
    name: String,
    is_gpu: bool,
    fp64: bool,
    context: Context,
    queue: CommandQueue,
    limits: DeviceLimits,
    /// Built programs by hash of (source, options, device name).
    programs: HashMap<blake3::Hash, (ClProgram, Vec<Kernel>)>,
}

// SAFETY: OpenCL objects are thread-safe handles (OpenCL 1.2 §A.2, all API calls
// except clSetKernelArg on the same kernel are thread-safe); every use goes through
// the `RUNTIME` mutex, which also serialises kernel argument setting.
unsafe impl Send for Runtime {}

static RUNTIME: OnceLock<Result<Mutex<Runtime>, String>> = OnceLock::new();

fn unavailable(msg: impl Into<String>) -> ExecError {
    ExecError::Unavailable(msg.into())
}

fn cl_err(what: &str) -> impl Fn(opencl3::error_codes::ClError) -> ExecError + '_ {
    move |e| ExecError::Failed(format!("OpenCL: {what} failed: {e}"))
}

fn open() -> Result<Runtime, String> {
    let platforms = opencl3::platform::get_platforms().map_err(|e| {
        format!(
            "no OpenCL platform ({e}); install an ICD loader and a platform, e.g. \
                 `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`"
        )
    })?;
    let wanted = std::env::var("STENCILC_OPENCL_DEVICE").ok();
    let mut candidates = Vec::new();
    for platform in &platforms {
        for id in platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
            let device = Device::new(id);
            let name = device.name().unwrap_or_default();
            let is_gpu = device
                .dev_type()
                .map(|t| t & CL_DEVICE_TYPE_GPU != 0)
                .unwrap_or(false);
            candidates.push((device, name, is_gpu));
        }
    }
    if candidates.is_empty() {
        return Err("no OpenCL device on any platform; install a driver or PoCL".into());
    }
    // A GPU first, unless STENCILC_OPENCL_DEVICE names (part of) a device.
    candidates.sort_by_key(|(_, _, gpu)| !gpu);
    let (device, name, is_gpu) = match &wanted {
        Some(w) => candidates
            .into_iter()
            .find(|(_, n, _)| n.contains(w.as_str()))
            .ok_or_else(|| format!("STENCILC_OPENCL_DEVICE={w} matches no OpenCL device"))?,
        None => candidates.remove(0),
    };
    let sizes = device
        .max_work_item_sizes()
        .unwrap_or_else(|_| vec![256, 256, 64]);
    let dim = |i: usize| sizes.get(i).copied().unwrap_or(1).min(u32::MAX as usize) as u32;
    let limits = DeviceLimits {
        max_threads_per_block: device
            .max_work_group_size()
            .unwrap_or(256)
            .min(u32::MAX as usize) as u32,
        max_block_dims: [dim(0), dim(1), dim(2)],
        shared_bytes_per_block: device.local_mem_size().unwrap_or(16384) as usize,
        // OpenCL kernels carry no `--min-blocks` (nothing to check).
        max_threads_per_sm: u32::MAX,
    };
    let fp64 = device
        .extensions()
        .map(|e| e.contains("cl_khr_fp64"))
        .unwrap_or(false);
    let context = Context::from_device(&device).map_err(|e| format!("OpenCL context: {e}"))?;
    let queue =
        CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
            .map_err(|e| format!("OpenCL command queue: {e}"))?;
    Ok(Runtime {
        device,
        name,
        is_gpu,
        fp64,
        context,
        queue,
        limits,
        programs: HashMap::new(),
    })
}

fn runtime() -> Result<&'static Mutex<Runtime>, ExecError> {
    RUNTIME
        .get_or_init(|| open().map(Mutex::new))
        .as_ref()
        .map_err(|e| unavailable(format!("OpenCL unavailable: {e}")))
}

/// The device OpenCL would run on, and whether it is a GPU; `Unavailable` when
/// there is no OpenCL platform or device here.
pub fn probe() -> Result<(String, bool), ExecError> {
    let rt = runtime()?
        .lock()
        .map_err(|_| unavailable("OpenCL runtime poisoned"))?;
    Ok((rt.name.clone(), rt.is_gpu))
}

/// A device buffer (bytes; kernels see the element type of their parameter).
pub struct DeviceBuffer {
    buf: ClBuffer<u8>,
}

/// The process's OpenCL device, held (locked) while a run uses it.
pub struct Session {
    rt: std::sync::MutexGuard<'static, Runtime>,
    kernels: Option<blake3::Hash>,
    events: Vec<Event>,
}

impl Session {
    fn open() -> Result<Session, ExecError> {
        Ok(Session {
            rt: runtime()?
                .lock()
                .map_err(|_| unavailable("OpenCL runtime poisoned by an earlier panic"))?,
            kernels: None,
            events: Vec::new(),
        })
    }
}

/// Generated OpenCL one stencil part at a time, for the MPI driver.
pub type OpenClParts = crate::exec::gpu_parts::GpuParts<Session>;

/// Builds `program`'s kernels under a plain per-part schedule (`--block` and
/// `--tile` from `options`) on this process's OpenCL device and uploads
/// `state` (see [`GpuParts`](crate::exec::gpu_parts::GpuParts)).
pub fn part_runner(
    program: &Program,
    env: &RunEnv,
    state: &FieldState,
    options: &RunOptions,
) -> Result<OpenClParts, ExecError> {
    crate::exec::gpu_parts::GpuParts::prepare(
        Session::open()?,
        program,
        env,
        state,
        Target::OpenCl,
        (options.block.clone(), options.tile.clone()),
        options.fma,
    )
}

impl GpuDevice for Session {
    type Buf = DeviceBuffer;

    fn limits(&self) -> DeviceLimits {
        self.rt.limits
    }

    fn compile(&mut self, module: &Module) -> Result<(), ExecError> {
        if module.uses_double() && !self.rt.fp64 {
            return Err(ExecError::Failed(format!(
                "the OpenCL device `{}` has no double precision (cl_khr_fp64); use float \
                 fields or another device",
                self.rt.name
            )));
        }
        let source = crate::back::opencl::print(module);
        let options = crate::back::opencl::build_options(module);
        let mut hasher = blake3::Hasher::new();
        hasher.update(source.as_bytes());
        hasher.update(options.as_bytes());
        hasher.update(self.rt.name.as_bytes());
        let key = hasher.finalize();
        if !self.rt.programs.contains_key(&key) {
            let program =
                ClProgram::create_and_build_from_source(&self.rt.context, &source, options)
                    .map_err(|log| {
                        ExecError::Failed(format!(
                            "the OpenCL compiler rejected the generated kernels (a stencilc bug; \
                         please report it):\n{}",
                            with_source_lines(&log, &source)
                        ))
                    })?;
            let mut kernels = Vec::new();
            for k in &module.kernels {
                let kernel = Kernel::create(&program, &k.name).map_err(cl_err("clCreateKernel"))?;
                let max = kernel
                    .get_work_group_size(self.rt.device.id())
                    .unwrap_or(usize::MAX);
                if (k.threads() as usize) > max {
                    return Err(ExecError::Failed(format!(
                        "kernel `{}`: the device `{}` runs at most {max} threads per block for \
                         it but the schedule asks {}; pass a smaller --block",
                        k.name,
                        self.rt.name,
                        k.threads()
                    )));
                }
                kernels.push(kernel);
            }
            self.rt.programs.insert(key, (program, kernels));
        }
        self.kernels = Some(key);
        Ok(())
    }

    fn alloc(&mut self, ty: ScalarType, len: usize) -> Result<DeviceBuffer, ExecError> {
        let bytes = (len * ty.size_bytes()).max(1);
        // SAFETY: no host pointer; the buffer is written before it is read.
        let buf = unsafe {
            ClBuffer::<u8>::create(
                &self.rt.context,
                CL_MEM_READ_WRITE,
                bytes,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| {
            ExecError::Failed(format!(
                "OpenCL: could not allocate {bytes} bytes on `{}` ({e}); use a smaller grid",
                self.rt.name
            ))
        })?;
        Ok(DeviceBuffer { buf })
    }

    fn upload(&mut self, dst: &mut DeviceBuffer, src: &Buffer) -> Result<(), ExecError> {
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of a host slice no larger than the buffer.
        unsafe {
            self.rt
                .queue
                .enqueue_write_buffer(&mut dst.buf, CL_BLOCKING, 0, src.as_bytes(), &[])
        }
        .map_err(cl_err("upload"))?;
        Ok(())
    }

    fn download(&mut self, src: &DeviceBuffer, dst: &mut Buffer) -> Result<(), ExecError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking read into a host slice no larger than the buffer.
        unsafe {
            self.rt
                .queue
                .enqueue_read_buffer(&src.buf, CL_BLOCKING, 0, dst.as_bytes_mut(), &[])
        }
        .map_err(cl_err("download"))?;
        Ok(())
    }

    fn download_rects(
        &mut self,
        src: &DeviceBuffer,
        dst: &mut Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError> {
        let host = dst.as_bytes_mut();
        for rect in rects {
            rect.check(host.len())?;
            // SAFETY: non-blocking read of a box inside both the buffer and
            // the host array (same shape, checked above); the queue is
            // finished below, before the host array can be touched again.
            unsafe {
                self.rt.queue.enqueue_read_buffer_rect(
                    &src.buf,
                    CL_NON_BLOCKING,
                    rect.origin.as_ptr(),
                    rect.origin.as_ptr(),
                    rect.region.as_ptr(),
                    rect.row_pitch,
                    rect.slice_pitch,
                    rect.row_pitch,
                    rect.slice_pitch,
                    host.as_mut_ptr().cast(),
                    &[],
                )
            }
            .map_err(cl_err("clEnqueueReadBufferRect"))?;
        }
        self.rt.queue.finish().map_err(cl_err("clFinish"))
    }

    fn upload_rects(
        &mut self,
        dst: &mut DeviceBuffer,
        src: &Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError> {
        let host = src.as_bytes();
        for rect in rects {
            rect.check(host.len())?;
            // SAFETY: as in `download_rects`; OpenCL only reads the host array.
            unsafe {
                self.rt.queue.enqueue_write_buffer_rect(
                    &mut dst.buf,
                    CL_NON_BLOCKING,
                    rect.origin.as_ptr(),
                    rect.origin.as_ptr(),
                    rect.region.as_ptr(),
                    rect.row_pitch,
                    rect.slice_pitch,
                    rect.row_pitch,
                    rect.slice_pitch,
                    host.as_ptr().cast_mut().cast(),
                    &[],
                )
            }
            .map_err(cl_err("clEnqueueWriteBufferRect"))?;
        }
        self.rt.queue.finish().map_err(cl_err("clFinish"))
    }

    fn launch(
        &mut self,
        kernel: usize,
        groups: [u32; 3],
        block: [u32; 3],
        args: &[KernelArg<'_, DeviceBuffer>],
    ) -> Result<(), ExecError> {
        let key = self
            .kernels
            .ok_or_else(|| ExecError::Failed("internal: launch before compile".into()))?;
        let kernel = &self.rt.programs[&key].1[kernel];
        let mut exec = ExecuteKernel::new(kernel);
        for arg in args {
            // SAFETY: argument types follow the kernel's parameter list, which the
            // plan was generated with.
            unsafe {
                match arg {
                    KernelArg::Buffer(b) => exec.set_arg(&b.buf),
                    KernelArg::Value(Value::Int(v)) => exec.set_arg(v),
                    KernelArg::Value(Value::Long(v)) => exec.set_arg(v),
                    KernelArg::Value(Value::Float(v)) => exec.set_arg(v),
                    KernelArg::Value(Value::Double(v)) => exec.set_arg(v),
                };
            }
        }
        let global: Vec<usize> = (0..3).map(|d| (groups[d] * block[d]) as usize).collect();
        let local: Vec<usize> = block.iter().map(|&b| b as usize).collect();
        // SAFETY: the arguments are set; sizes are multiples of the block.
        let event = unsafe {
            exec.set_global_work_sizes(&global)
                .set_local_work_sizes(&local)
                .enqueue_nd_range(&self.rt.queue)
        }
        .map_err(cl_err("kernel launch"))?;
        self.events.push(event);
        Ok(())
    }

    fn finish(&mut self) -> Result<Duration, ExecError> {
        self.rt.queue.finish().map_err(cl_err("clFinish"))?;
        let mut total = 0u64;
        for e in self.events.drain(..) {
            if let (Ok(s), Ok(t)) = (e.profiling_command_start(), e.profiling_command_end()) {
                total += t.saturating_sub(s);
            }
        }
        Ok(Duration::from_nanos(total))
    }
}

/// The compiler log with each `<source>:LINE:` reference followed by that line of
/// the generated source, so the message shows what was rejected.
fn with_source_lines(log: &str, source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    for l in log.lines() {
        out.push_str(l);
        out.push('\n');
        let number = l
            .split(':')
            .nth(1)
            .and_then(|n| n.trim().parse::<usize>().ok());
        if let Some(n) = number.filter(|n| *n >= 1 && *n <= lines.len()) {
            out.push_str(&format!("    | {}\n", lines[n - 1]));
        }
    }
    out
}

/// Builds `module` with the OpenCL platform's compiler, as a run would, and
/// runs nothing: a check that generated kernels compile for sizes too large
/// to run here.
pub fn build(module: &Module) -> Result<(), ExecError> {
    Session::open()?.compile(module)
}

/// Runs `program` through OpenCL under the schedule the options ask for.
pub fn run(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    options: &RunOptions,
) -> Result<RunSummary, ExecError> {
    crate::exec::check_inputs(program, env, state)?;
    // The model knows NVIDIA GPUs only: OpenCL devices get the default
    // preset's choice (any schedule computes the same results).
    let device = crate::model::Device::default_device();
    let schedule = options.schedule(program, env, Target::OpenCl, device)?;
    run_scheduled(program, env, state, &schedule, options.progress.as_ref())
}

/// Runs `program` through OpenCL under `schedule` (contracting `a * b + c` when its `fma` says so).
pub fn run_with_schedule(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    schedule: &Schedule,
) -> Result<RunSummary, ExecError> {
    run_scheduled(program, env, state, schedule, None)
}

fn run_scheduled(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    schedule: &Schedule,
    progress: Option<&ProgressHook>,
) -> Result<RunSummary, ExecError> {
    crate::exec::check_inputs(program, env, state)?;
    let lowered = lower_for(program, schedule, Target::OpenCl, Some(env));
    let mut session = Session::open()?;
    crate::exec::host_plan::run_observed(&mut session, program, &lowered, env, state, progress)
}
