//! The emulator as a GPU runtime: runs the CUDA that stencilc generates for a
//! program, launch by launch, through the same host plan as the CUDA runner
//! ([`crate::exec::host_plan`]), so that every kernel of every schedule can be
//! checked for races, out-of-bounds accesses, barriers and shuffles not every
//! thread reaches, and against the interpreter's results, with no GPU.
//!
//! The module is printed with [`crate::back::cuda::print`], exactly as NVRTC
//! would receive it, and parsed by the CUDA-subset front-end; buffers live in
//! host memory. The first problem a launch finds ends the run with the
//! finding located in the printed CUDA (file `generated.cu`).

use std::sync::Arc;
use std::time::Duration;

use crate::exec::host_plan::{GpuDevice, KernelArg, Rect};
use crate::exec::{Buffer, ExecError, FieldState, RunSummary};
use crate::front::cuda::ast::Kernel;
use crate::front::cuda::parse_unit;
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType};
use crate::kir::Module;
use crate::lower::{lower_for, Target};
use crate::schedule::{DeviceLimits, Schedule};
use crate::source::SourceFile;

use crate::emu::{run, Arg, Limits, Value};

/// A [`GpuDevice`] whose kernels run in the emulator.
pub struct EmuDevice {
    /// The printed CUDA of the compiled module (for located findings).
    source: Option<Arc<SourceFile>>,
    /// The module's kernels, parsed and checked, in the module's order.
    kernels: Vec<Kernel>,
    /// Every buffer allocated, by handle.
    buffers: Vec<Vec<Value>>,
    limits: Limits,
    /// Launches run so far.
    pub launches: usize,
    /// Emulated operations so far, over all launches.
    pub steps: u64,
    /// A rewrite of the printed CUDA before it is parsed.
    rewrite: Option<Rewrite>,
}

/// A rewrite of printed CUDA ([`EmuDevice::with_rewrite`]).
type Rewrite = Box<dyn Fn(&str) -> String>;

impl EmuDevice {
    /// A device with the emulator's default limits.
    pub fn new() -> EmuDevice {
        EmuDevice::with_limits(Limits::default())
    }

    /// A device whose launches run under `limits`.
    pub fn with_limits(limits: Limits) -> EmuDevice {
        EmuDevice {
            source: None,
            kernels: Vec::new(),
            buffers: Vec::new(),
            limits,
            launches: 0,
            steps: 0,
            rewrite: None,
        }
    }

    /// The device with the printed CUDA passed through `rewrite` before it is
    /// parsed: tests break generated kernels (a barrier removed, a bound
    /// loosened) to show that the checks catch it.
    pub fn with_rewrite(mut self, rewrite: impl Fn(&str) -> String + 'static) -> EmuDevice {
        self.rewrite = Some(Box::new(rewrite));
        self
    }

    fn buffer(&self, handle: usize) -> Result<&Vec<Value>, ExecError> {
        self.buffers
            .get(handle)
            .ok_or_else(|| ExecError::Failed("internal: unknown emulator buffer".into()))
    }
}

impl Default for EmuDevice {
    fn default() -> EmuDevice {
        EmuDevice::new()
    }
}

fn to_emu(value: crate::ir::Value) -> Value {
    match value {
        crate::ir::Value::Int(v) => Value::Int(v),
        crate::ir::Value::Long(v) => Value::Long(v),
        crate::ir::Value::Float(v) => Value::Float(v),
        crate::ir::Value::Double(v) => Value::Double(v),
    }
}

/// Copies boxes `rects` of `from` into the same places of `to` (same shape).
fn copy_rects(from: &[u8], to: &mut [u8], rects: &[Rect]) -> Result<(), ExecError> {
    for rect in rects {
        rect.check(from.len().min(to.len()))?;
        for (start, len) in rect.runs() {
            to[start..start + len].copy_from_slice(&from[start..start + len]);
        }
    }
    Ok(())
}

impl GpuDevice for EmuDevice {
    type Buf = usize;

    fn limits(&self) -> DeviceLimits {
        DeviceLimits {
            max_threads_per_block: 1024,
            max_block_dims: [1024, 1024, 64],
            shared_bytes_per_block: crate::front::cuda::sema::MAX_SHARED_BYTES as usize,
            max_threads_per_sm: 2048,
        }
    }

    fn compile(&mut self, module: &Module) -> Result<(), ExecError> {
        let mut text = crate::back::cuda::print(module);
        if let Some(rewrite) = &self.rewrite {
            text = rewrite(&text);
        }
        let source = SourceFile::new("generated.cu", text);
        let unit = parse_unit(&source, &[]).map_err(ExecError::Located)?;
        let mut kernels = Vec::new();
        for k in &module.kernels {
            let kernel = unit.kernel(Some(&k.name)).ok_or_else(|| {
                ExecError::Failed(format!(
                    "internal: kernel `{}` missing from the printed CUDA",
                    k.name
                ))
            })?;
            kernels.push(kernel.clone());
        }
        self.kernels = kernels;
        self.source = Some(source);
        Ok(())
    }

    fn alloc(&mut self, ty: ScalarType, len: usize) -> Result<usize, ExecError> {
        let zero = match ty {
            ScalarType::Int => Value::Int(0),
            ScalarType::Long => Value::Long(0),
            ScalarType::Float => Value::Float(0.0),
            ScalarType::Double => Value::Double(0.0),
        };
        self.buffers.push(vec![zero; len.max(1)]);
        Ok(self.buffers.len() - 1)
    }

    fn upload(&mut self, dst: &mut usize, src: &Buffer) -> Result<(), ExecError> {
        let data = (0..src.len()).map(|i| to_emu(src.get(i))).collect();
        match self.buffers.get_mut(*dst) {
            Some(buffer) => *buffer = data,
            None => {
                return Err(ExecError::Failed(
                    "internal: unknown emulator buffer".into(),
                ))
            }
        }
        Ok(())
    }

    fn download(&mut self, src: &usize, dst: &mut Buffer) -> Result<(), ExecError> {
        let data = self.buffer(*src)?;
        let data = &data[..dst.len().min(data.len())];
        // Elements hold the buffer's type already (stores convert to it).
        *dst = match dst.ty() {
            ScalarType::Int => Buffer::Int(data.iter().map(|v| v.as_i64() as i32).collect()),
            ScalarType::Long => Buffer::Long(data.iter().map(|v| v.as_i64()).collect()),
            ScalarType::Float => Buffer::Float(data.iter().map(|v| v.as_f64() as f32).collect()),
            ScalarType::Double => Buffer::Double(data.iter().map(|v| v.as_f64()).collect()),
        };
        Ok(())
    }

    fn download_rects(
        &mut self,
        src: &usize,
        dst: &mut Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError> {
        // Through a whole copy: the emulator is for tests, not speed.
        let mut whole = Buffer::zeros(dst.ty(), dst.len());
        self.download(src, &mut whole)?;
        copy_rects(whole.as_bytes(), dst.as_bytes_mut(), rects)
    }

    fn upload_rects(
        &mut self,
        dst: &mut usize,
        src: &Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError> {
        let mut whole = Buffer::zeros(src.ty(), src.len());
        self.download(dst, &mut whole)?;
        copy_rects(src.as_bytes(), whole.as_bytes_mut(), rects)?;
        self.upload(dst, &whole)
    }

    fn launch(
        &mut self,
        kernel: usize,
        groups: [u32; 3],
        block: [u32; 3],
        args: &[KernelArg<'_, usize>],
    ) -> Result<(), ExecError> {
        let code = self
            .kernels
            .get(kernel)
            .ok_or_else(|| ExecError::Failed("internal: launch before compile".into()))?;
        let mut emu_args = Vec::with_capacity(args.len());
        for arg in args {
            emu_args.push(match arg {
                KernelArg::Buffer(handle) => Arg::Array(self.buffer(**handle)?.clone()),
                KernelArg::Value(v) => Arg::Scalar(to_emu(*v)),
            });
        }
        let launch = crate::emu::Launch {
            grid: groups,
            block,
        };
        let report = run(code, launch, &mut emu_args, self.limits)
            .map_err(|e| ExecError::Failed(format!("emulating `{}`: {e}", code.name)))?;
        self.launches += 1;
        self.steps += report.steps;
        if let Some(finding) = report.findings.first() {
            let text = match &self.source {
                Some(source) => finding.to_diagnostic().render(source),
                None => finding.message.clone(),
            };
            return Err(ExecError::Failed(format!(
                "kernel `{}` launched with grid {:?} and block {:?}:\n{text}",
                code.name, groups, block
            )));
        }
        for (arg, result) in args.iter().zip(emu_args) {
            if let (KernelArg::Buffer(handle), Arg::Array(data)) = (arg, result) {
                self.buffers[**handle] = data;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Duration, ExecError> {
        Ok(Duration::ZERO)
    }
}

/// Runs `program` under `schedule` with every kernel in the emulator, as
/// `--backend cuda` would run it on a GPU (without `--fma`); returns the run's
/// summary and the device (its launch and operation counts). The first
/// problem a kernel shows is the error.
pub fn run_with_schedule(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    schedule: &Schedule,
    limits: Limits,
) -> Result<(RunSummary, EmuDevice), ExecError> {
    run_on(
        EmuDevice::with_limits(limits),
        program,
        env,
        state,
        schedule,
    )
}

/// [`run_with_schedule`] on a given device (one with a rewrite, say).
pub fn run_on(
    mut device: EmuDevice,
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    schedule: &Schedule,
) -> Result<(RunSummary, EmuDevice), ExecError> {
    let lowered = lower_for(program, schedule, Target::Cuda, Some(env));
    let summary = crate::exec::host_plan::run(&mut device, program, &lowered, env, state)?;
    Ok((summary, device))
}
