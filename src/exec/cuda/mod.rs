//! Running programs through CUDA (`cudarc`, loaded dynamically): NVRTC compiles
//! the generated CUDA C, the driver API allocates, copies and launches, events time
//! the kernels. Builds and runs on machines without CUDA: every entry point
//! returns [`ExecError::Unavailable`] there.

pub mod nvrtc;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cudarc::driver::sys::{CUdeviceptr, CUmemorytype};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    LaunchConfig, PushKernelArg, SyncOnDrop,
};

use crate::exec::host_plan::{GpuDevice, KernelArg, Rect};
use crate::exec::options::{ProgressHook, RunOptions};
use crate::exec::{Buffer, ExecError, FieldState, RunSummary};
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType, Value};
use crate::kir::Module;
use crate::lower::{lower_for, Target};
use crate::schedule::{DeviceLimits, Schedule};

// The GPU benchmark suite (`bench::gpu`) times kernels on this
// runtime's context and stream directly.
pub(crate) struct Runtime {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) name: String,
    pub(crate) arch: String,
    limits: DeviceLimits,
    /// Loaded modules by hash of (source, options).
    modules: HashMap<blake3::Hash, Vec<CudaFunction>>,
}

// SAFETY: cudarc's handles are Send + Sync; the mutex serialises all use.
unsafe impl Send for Runtime {}

static RUNTIME: OnceLock<Result<Mutex<Runtime>, String>> = OnceLock::new();

/// The device index [`choose_device`] asked for (modulo the device count).
static CHOSEN: OnceLock<usize> = OnceLock::new();

/// Makes this process run on device `index` modulo the number of devices
/// (an MPI rank passes its rank on its machine) instead of device 0; only
/// before the first use of CUDA in the process, `false` after.
pub fn choose_device(index: usize) -> bool {
    CHOSEN.set(index).is_ok() && RUNTIME.get().is_none()
}

/// A CUDA event that can time: cudarc's `new_event(None)` creates one with
/// `CU_EVENT_DISABLE_TIMING`, and reading elapsed time from such an event fails
/// with `CUDA_ERROR_INVALID_HANDLE` (seen on the first H100 run).
pub(crate) fn timing_event(ctx: &Arc<CudaContext>) -> Result<CudaEvent, ExecError> {
    ctx.new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(driver_error("creating an event"))
}

pub(crate) fn driver_error(what: &str) -> impl Fn(cudarc::driver::DriverError) -> ExecError + '_ {
    move |e| ExecError::Failed(format!("CUDA: {what} failed: {e}"))
}

fn open() -> Result<Runtime, String> {
    // SAFETY: only probes whether the shared library can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so) on this machine".into());
    }
    nvrtc::load().map_err(|e| e.to_string())?;
    let count = CudaContext::device_count().map_err(|e| format!("CUDA driver: {e}"))?;
    if count < 1 {
        return Err("the CUDA driver sees no GPU".into());
    }
    let ordinal = CHOSEN.get().copied().unwrap_or(0) % count as usize;
    let ctx = CudaContext::new(ordinal).map_err(|e| format!("CUDA context: {e}"))?;
    let stream = ctx.default_stream();
    use cudarc::driver::sys::CUdevice_attribute as A;
    let attr = |a| ctx.attribute(a).map(|v| v as u32).unwrap_or(0);
    let limits = DeviceLimits {
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        max_block_dims: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z),
        ],
        shared_bytes_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) as usize,
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
    };
    let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    let name = ctx
        .name()
        .unwrap_or_else(|_| format!("CUDA device {ordinal}"));
    Ok(Runtime {
        ctx,
        stream,
        name,
        arch: format!("sm_{major}{minor}"),
        limits,
        modules: HashMap::new(),
    })
}

pub(crate) fn runtime() -> Result<&'static Mutex<Runtime>, ExecError> {
    RUNTIME
        .get_or_init(|| open().map(Mutex::new))
        .as_ref()
        .map_err(|e| ExecError::Unavailable(format!("CUDA unavailable: {e}")))
}

/// The GPU CUDA would run on; `Unavailable` without a driver, a GPU or NVRTC.
pub fn probe() -> Result<String, ExecError> {
    let rt = runtime()?
        .lock()
        .map_err(|_| ExecError::Unavailable("CUDA runtime poisoned".into()))?;
    Ok(format!("{} ({})", rt.name, rt.arch))
}

/// A device buffer of one element type.
pub enum DeviceBuffer {
    /// `int`
    Int(CudaSlice<i32>),
    /// `long`
    Long(CudaSlice<i64>),
    /// `float`
    Float(CudaSlice<f32>),
    /// `double`
    Double(CudaSlice<f64>),
}

impl DeviceBuffer {
    fn ty(&self) -> ScalarType {
        match self {
            DeviceBuffer::Int(_) => ScalarType::Int,
            DeviceBuffer::Long(_) => ScalarType::Long,
            DeviceBuffer::Float(_) => ScalarType::Float,
            DeviceBuffer::Double(_) => ScalarType::Double,
        }
    }

    /// The buffer's address, for a copy `stream` runs (the guard records the
    /// read when dropped, after the copy is enqueued).
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        match self {
            DeviceBuffer::Int(d) => d.device_ptr(stream),
            DeviceBuffer::Long(d) => d.device_ptr(stream),
            DeviceBuffer::Float(d) => d.device_ptr(stream),
            DeviceBuffer::Double(d) => d.device_ptr(stream),
        }
    }

    /// As [`DeviceBuffer::device_ptr`], for a copy that writes the buffer.
    fn device_ptr_mut<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        match self {
            DeviceBuffer::Int(d) => d.device_ptr_mut(stream),
            DeviceBuffer::Long(d) => d.device_ptr_mut(stream),
            DeviceBuffer::Float(d) => d.device_ptr_mut(stream),
            DeviceBuffer::Double(d) => d.device_ptr_mut(stream),
        }
    }
}

/// The `cuMemcpy3D` parameters copying box `rect` between two arrays of
/// the same shape, each given as (memory type, device address, host address).
fn memcpy_3d(
    rect: &Rect,
    (src_type, src_device, src_host): (CUmemorytype, CUdeviceptr, *const std::ffi::c_void),
    (dst_type, dst_device, dst_host): (CUmemorytype, CUdeviceptr, *mut std::ffi::c_void),
) -> cudarc::driver::sys::CUDA_MEMCPY3D {
    let rows = rect.slice_pitch / rect.row_pitch;
    cudarc::driver::sys::CUDA_MEMCPY3D {
        srcXInBytes: rect.origin[0],
        srcY: rect.origin[1],
        srcZ: rect.origin[2],
        srcLOD: 0,
        srcMemoryType: src_type,
        srcHost: src_host,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: rect.row_pitch,
        srcHeight: rows,
        dstXInBytes: rect.origin[0],
        dstY: rect.origin[1],
        dstZ: rect.origin[2],
        dstLOD: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: rect.row_pitch,
        dstHeight: rows,
        WidthInBytes: rect.region[0],
        Height: rect.region[1],
        Depth: rect.region[2],
    }
}

/// The process's CUDA device, held (locked) while a run uses it.
pub struct Session {
    pub(crate) rt: std::sync::MutexGuard<'static, Runtime>,
    pub(crate) module: Option<blake3::Hash>,
    /// The event recorded before the first launch since the last `finish`.
    pub(crate) timer: Option<CudaEvent>,
}

impl Session {
    fn open() -> Result<Session, ExecError> {
        Ok(Session {
            rt: runtime()?
                .lock()
                .map_err(|_| ExecError::Unavailable("CUDA runtime poisoned".into()))?,
            module: None,
            timer: None,
        })
    }
}

/// Generated CUDA one stencil part at a time, for the MPI driver.
pub type CudaParts = crate::exec::gpu_parts::GpuParts<Session>;

/// Builds `program`'s kernels under a plain per-part schedule (`--block` and
/// `--tile` from `options`) on this process's GPU ([`choose_device`]) and
/// uploads `state` (see [`GpuParts`](crate::exec::gpu_parts::GpuParts)).
pub fn part_runner(
    program: &Program,
    env: &RunEnv,
    state: &FieldState,
    options: &RunOptions,
) -> Result<CudaParts, ExecError> {
    crate::exec::gpu_parts::GpuParts::prepare(
        Session::open()?,
        program,
        env,
        state,
        Target::Cuda,
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
        // The source says whether it was built with `--fma` (its prelude).
        let source = crate::back::cuda::print(module);
        let key = blake3::hash(format!("{}\n{source}", self.rt.arch).as_bytes());
        if !self.rt.modules.contains_key(&key) {
            let (_, ptx) = nvrtc::compile(module, &self.rt.arch)?;
            let loaded = self
                .rt
                .ctx
                .load_module(ptx)
                .map_err(driver_error("loading the compiled kernels"))?;
            let mut functions = Vec::new();
            for k in &module.kernels {
                functions.push(
                    loaded
                        .load_function(&k.name)
                        .map_err(driver_error("finding a kernel"))?,
                );
            }
            self.rt.modules.insert(key, functions);
        }
        self.module = Some(key);
        Ok(())
    }

    fn alloc(&mut self, ty: ScalarType, len: usize) -> Result<DeviceBuffer, ExecError> {
        let len = len.max(1);
        let oom = |e: cudarc::driver::DriverError| {
            ExecError::Failed(format!(
                "CUDA: could not allocate {} bytes on {} ({e}); use a smaller grid",
                len * ty.size_bytes(),
                self.rt.name
            ))
        };
        let s = &self.rt.stream;
        Ok(match ty {
            ScalarType::Int => DeviceBuffer::Int(s.alloc_zeros(len).map_err(oom)?),
            ScalarType::Long => DeviceBuffer::Long(s.alloc_zeros(len).map_err(oom)?),
            ScalarType::Float => DeviceBuffer::Float(s.alloc_zeros(len).map_err(oom)?),
            ScalarType::Double => DeviceBuffer::Double(s.alloc_zeros(len).map_err(oom)?),
        })
    }

    fn upload(&mut self, dst: &mut DeviceBuffer, src: &Buffer) -> Result<(), ExecError> {
        let s = &self.rt.stream;
        let r = match (dst, src) {
            (DeviceBuffer::Int(d), Buffer::Int(h)) => s.memcpy_htod(h, d),
            (DeviceBuffer::Long(d), Buffer::Long(h)) => s.memcpy_htod(h, d),
            (DeviceBuffer::Float(d), Buffer::Float(h)) => s.memcpy_htod(h, d),
            (DeviceBuffer::Double(d), Buffer::Double(h)) => s.memcpy_htod(h, d),
            _ => {
                return Err(ExecError::Failed(
                    "internal: upload of mismatched types".into(),
                ))
            }
        };
        r.map_err(driver_error("upload"))
    }

    fn download(&mut self, src: &DeviceBuffer, dst: &mut Buffer) -> Result<(), ExecError> {
        let s = &self.rt.stream;
        let r = match (src, dst) {
            (DeviceBuffer::Int(d), Buffer::Int(h)) => s.memcpy_dtoh(d, h.as_mut_slice()),
            (DeviceBuffer::Long(d), Buffer::Long(h)) => s.memcpy_dtoh(d, h.as_mut_slice()),
            (DeviceBuffer::Float(d), Buffer::Float(h)) => s.memcpy_dtoh(d, h.as_mut_slice()),
            (DeviceBuffer::Double(d), Buffer::Double(h)) => s.memcpy_dtoh(d, h.as_mut_slice()),
            _ => {
                return Err(ExecError::Failed(
                    "internal: download of mismatched types".into(),
                ))
            }
        };
        r.map_err(driver_error("download"))?;
        s.synchronize().map_err(driver_error("synchronize"))
    }

    fn download_rects(
        &mut self,
        src: &DeviceBuffer,
        dst: &mut Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError> {
        if src.ty() != dst.ty() {
            return Err(ExecError::Failed(
                "internal: download of mismatched types".into(),
            ));
        }
        let host = dst.as_bytes_mut();
        self.rt
            .ctx
            .bind_to_thread()
            .map_err(driver_error("binding the context"))?;
        let stream = &self.rt.stream;
        let (device, _recorded) = src.device_ptr(stream);
        for rect in rects {
            rect.check(host.len())?;
            let copy = memcpy_3d(
                rect,
                (CUmemorytype::CU_MEMORYTYPE_DEVICE, device, std::ptr::null()),
                (
                    CUmemorytype::CU_MEMORYTYPE_HOST,
                    0,
                    host.as_mut_ptr().cast(),
                ),
            );
            // SAFETY: the box lies inside the device buffer and the host
            // array (same shape, checked above); the stream is synchronised
            // below, before the host array can be touched again.
            unsafe { cudarc::driver::sys::cuMemcpy3DAsync_v2(&copy, stream.cu_stream()) }
                .result()
                .map_err(driver_error("cuMemcpy3DAsync (device to host)"))?;
        }
        stream.synchronize().map_err(driver_error("synchronize"))
    }

    fn upload_rects(
        &mut self,
        dst: &mut DeviceBuffer,
        src: &Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError> {
        if dst.ty() != src.ty() {
            return Err(ExecError::Failed(
                "internal: upload of mismatched types".into(),
            ));
        }
        let host = src.as_bytes();
        self.rt
            .ctx
            .bind_to_thread()
            .map_err(driver_error("binding the context"))?;
        let stream = &self.rt.stream;
        let (device, _recorded) = dst.device_ptr_mut(stream);
        for rect in rects {
            rect.check(host.len())?;
            let copy = memcpy_3d(
                rect,
                (CUmemorytype::CU_MEMORYTYPE_HOST, 0, host.as_ptr().cast()),
                (
                    CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    device,
                    std::ptr::null_mut(),
                ),
            );
            // SAFETY: as in `download_rects`; the host array is only read.
            unsafe { cudarc::driver::sys::cuMemcpy3DAsync_v2(&copy, stream.cu_stream()) }
                .result()
                .map_err(driver_error("cuMemcpy3DAsync (host to device)"))?;
        }
        stream.synchronize().map_err(driver_error("synchronize"))
    }

    fn launch(
        &mut self,
        kernel: usize,
        groups: [u32; 3],
        block: [u32; 3],
        args: &[KernelArg<'_, DeviceBuffer>],
    ) -> Result<(), ExecError> {
        if self.timer.is_none() {
            let start = timing_event(&self.rt.ctx)?;
            start
                .record(&self.rt.stream)
                .map_err(driver_error("recording an event"))?;
            self.timer = Some(start);
        }
        let key = self
            .module
            .ok_or_else(|| ExecError::Failed("internal: launch before compile".into()))?;
        launch_function(
            &self.rt.stream,
            &self.rt.modules[&key][kernel],
            groups,
            block,
            args,
        )
    }

    fn finish(&mut self) -> Result<Duration, ExecError> {
        let Some(start) = self.timer.take() else {
            self.rt
                .stream
                .synchronize()
                .map_err(driver_error("synchronize"))?;
            return Ok(Duration::ZERO);
        };
        let end = timing_event(&self.rt.ctx)?;
        end.record(&self.rt.stream)
            .map_err(driver_error("recording an event"))?;
        end.synchronize().map_err(driver_error("synchronize"))?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(driver_error("reading an event"))?;
        Ok(Duration::from_secs_f64(ms as f64 / 1000.0))
    }
}

/// Enqueues `function` on `stream` with `args` (which must follow its parameters).
pub(crate) fn launch_function(
    stream: &CudaStream,
    function: &CudaFunction,
    groups: [u32; 3],
    block: [u32; 3],
    args: &[KernelArg<'_, DeviceBuffer>],
) -> Result<(), ExecError> {
    let mut builder = stream.launch_builder(function);
    for arg in args {
        match arg {
            KernelArg::Buffer(DeviceBuffer::Int(b)) => builder.arg(b),
            KernelArg::Buffer(DeviceBuffer::Long(b)) => builder.arg(b),
            KernelArg::Buffer(DeviceBuffer::Float(b)) => builder.arg(b),
            KernelArg::Buffer(DeviceBuffer::Double(b)) => builder.arg(b),
            KernelArg::Value(Value::Int(v)) => builder.arg(v),
            KernelArg::Value(Value::Long(v)) => builder.arg(v),
            KernelArg::Value(Value::Float(v)) => builder.arg(v),
            KernelArg::Value(Value::Double(v)) => builder.arg(v),
        };
    }
    let config = LaunchConfig {
        grid_dim: (groups[0], groups[1], groups[2]),
        block_dim: (block[0], block[1], block[2]),
        shared_mem_bytes: 0,
    };
    // SAFETY: the caller passes arguments following the kernel's parameter list;
    // buffers outlive the launch (they are freed only after a synchronisation).
    unsafe { builder.launch(config) }.map_err(driver_error("kernel launch"))?;
    Ok(())
}

/// Runs `program` through CUDA under the schedule the options ask for.
pub fn run(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    options: &RunOptions,
) -> Result<RunSummary, ExecError> {
    crate::exec::check_inputs(program, env, state)?;
    // The model of the GPU CUDA runs on, where stencilc has a preset for it.
    let name = probe()?;
    let device = crate::model::predict::preset_for_name(&name)
        .unwrap_or_else(crate::model::Device::default_device);
    let schedule = options.schedule(program, env, Target::Cuda, device)?;
    run_scheduled(program, env, state, &schedule, options.progress.as_ref())
}

/// Runs `program` through CUDA under `schedule` (contracting `a * b + c` when its `fma` says so).
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
    let mut session = Session::open()?;
    let lowered = lower_for(program, schedule, Target::Cuda, Some(env));
    crate::exec::host_plan::run_observed(&mut session, program, &lowered, env, state, progress)
}
