//! A kernel of the CUDA subset run on OpenCL (PoCL in CI): printed as OpenCL C
//! ([`crate::back::opencl::from_cuda`]) and launched with the arguments the
//! emulator takes ([`Arg`], [`Launch`]), so that the two executions can be
//! compared element by element.

use std::sync::Arc;

use opencl3::kernel::{ExecuteKernel, Kernel as ClKernel};
use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::CL_BLOCKING;

use crate::back::opencl::from_cuda::print_kernel;
use crate::diag::Diagnostics;
use crate::emu::{Arg, Launch, Value};
use crate::exec::ExecError;
use crate::front::cuda::ast::{Kernel, Scalar, Type};
use crate::source::SourceFile;

use super::{cl_err, runtime, unavailable, with_source_lines};

/// The bytes of `data` as elements of `elem`.
fn to_bytes(data: &[Value], elem: Scalar) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(data.len() * 8);
    for v in data {
        match v.convert(elem) {
            Value::Bool(b) => bytes.push(u8::from(b)),
            Value::Int(x) => bytes.extend_from_slice(&x.to_ne_bytes()),
            Value::UInt(x) => bytes.extend_from_slice(&x.to_ne_bytes()),
            Value::Long(x) => bytes.extend_from_slice(&x.to_ne_bytes()),
            Value::ULong(x) => bytes.extend_from_slice(&x.to_ne_bytes()),
            Value::Float(x) => bytes.extend_from_slice(&x.to_ne_bytes()),
            Value::Double(x) => bytes.extend_from_slice(&x.to_ne_bytes()),
        }
    }
    bytes
}

/// Elements of `elem` from their bytes.
fn from_bytes(bytes: &[u8], elem: Scalar) -> Vec<Value> {
    let size = crate::front::cuda::sema::size_of(elem) as usize;
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b8 = [0u8; 8];
            b8[..size].copy_from_slice(c);
            let b4 = [b8[0], b8[1], b8[2], b8[3]];
            match elem {
                Scalar::Bool => Value::Bool(c[0] != 0),
                Scalar::Int => Value::Int(i32::from_ne_bytes(b4)),
                Scalar::UInt => Value::UInt(u32::from_ne_bytes(b4)),
                Scalar::Long => Value::Long(i64::from_ne_bytes(b8)),
                Scalar::ULong => Value::ULong(u64::from_ne_bytes(b8)),
                Scalar::Float => Value::Float(f32::from_ne_bytes(b4)),
                Scalar::Double => Value::Double(f64::from_ne_bytes(b8)),
            }
        })
        .collect()
}

/// Runs `kernel` (parsed from `source` with `defines`) on OpenCL with `args`
/// (updated in place: arrays hold the results). `Unavailable` where there is
/// no OpenCL device; a kernel the printer refuses is a located diagnostic.
pub fn run_cuda_kernel(
    kernel: &Kernel,
    source: &Arc<SourceFile>,
    defines: &[(String, String)],
    launch: Launch,
    args: &mut [Arg],
) -> Result<(), ExecError> {
    let text = print_kernel(kernel, &source.text, defines)
        .map_err(|d| ExecError::Located(Diagnostics::new(source.clone(), vec![d])))?;
    if args.len() != kernel.params.len() {
        return Err(ExecError::Failed(format!(
            "kernel `{}` takes {} arguments, given {}",
            kernel.name,
            kernel.params.len(),
            args.len()
        )));
    }
    let rt = runtime()?
        .lock()
        .map_err(|_| unavailable("OpenCL runtime poisoned"))?;
    if text.contains("cl_khr_fp64") && !rt.fp64 {
        return Err(unavailable(format!(
            "the OpenCL device `{}` has no double precision (cl_khr_fp64)",
            rt.name
        )));
    }
    let program = ClProgram::create_and_build_from_source(
        &rt.context,
        &text,
        crate::back::opencl::BUILD_OPTIONS,
    )
    .map_err(|log| {
        ExecError::Failed(format!(
            "the OpenCL compiler rejected the printed kernel:\n{}",
            with_source_lines(&log, &text)
        ))
    })?;
    let cl_kernel = ClKernel::create(&program, &kernel.name).map_err(cl_err("clCreateKernel"))?;
    // Buffers first (they must outlive the launch), then the arguments.
    let mut buffers = Vec::new();
    for (param, arg) in kernel.params.iter().zip(args.iter()) {
        match (param.ty, arg) {
            (Type::Pointer(elem), Arg::Array(data)) => {
                let mut bytes = to_bytes(data, elem);
                if bytes.is_empty() {
                    bytes.push(0);
                }
                // SAFETY: no host pointer; written below before the launch.
                let mut buf = unsafe {
                    ClBuffer::<u8>::create(
                        &rt.context,
                        CL_MEM_READ_WRITE,
                        bytes.len(),
                        std::ptr::null_mut(),
                    )
                }
                .map_err(cl_err("clCreateBuffer"))?;
                // SAFETY: blocking write of a slice of the buffer's size.
                unsafe {
                    rt.queue
                        .enqueue_write_buffer(&mut buf, CL_BLOCKING, 0, &bytes, &[])
                }
                .map_err(cl_err("upload"))?;
                buffers.push(Some((buf, elem, bytes.len())));
            }
            (Type::Scalar(_), Arg::Scalar(_)) => buffers.push(None),
            _ => {
                return Err(ExecError::Failed(format!(
                    "parameter `{}`: give an array for a pointer and a value for a scalar",
                    param.name
                )))
            }
        }
    }
    let mut exec = ExecuteKernel::new(&cl_kernel);
    for ((param, arg), buffer) in kernel.params.iter().zip(args.iter()).zip(&buffers) {
        // SAFETY: each argument has the type of its parameter in the printed kernel.
        unsafe {
            match (buffer, arg, param.ty) {
                (Some((buf, _, _)), _, _) => exec.set_arg(buf),
                (None, Arg::Scalar(v), Type::Scalar(s)) => match v.convert(s) {
                    Value::Int(x) => exec.set_arg(&x),
                    Value::UInt(x) => exec.set_arg(&x),
                    Value::Long(x) => exec.set_arg(&x),
                    Value::ULong(x) => exec.set_arg(&x),
                    Value::Float(x) => exec.set_arg(&x),
                    Value::Double(x) => exec.set_arg(&x),
                    Value::Bool(x) => exec.set_arg(&i32::from(x)),
                },
                _ => exec.set_arg(&0i32),
            };
        }
    }
    let global: Vec<usize> = (0..3)
        .map(|d| (launch.grid[d] as usize) * (launch.block[d] as usize))
        .collect();
    let local: Vec<usize> = launch.block.iter().map(|&b| b as usize).collect();
    // SAFETY: every argument is set; the global size is a multiple of the local one.
    unsafe {
        exec.set_global_work_sizes(&global)
            .set_local_work_sizes(&local)
            .enqueue_nd_range(&rt.queue)
    }
    .map_err(cl_err("kernel launch"))?;
    rt.queue.finish().map_err(cl_err("clFinish"))?;
    for (arg, buffer) in args.iter_mut().zip(&buffers) {
        if let (Arg::Array(data), Some((buf, elem, len))) = (arg, buffer) {
            let mut bytes = vec![0u8; *len];
            // SAFETY: blocking read into a slice of the buffer's size.
            unsafe {
                rt.queue
                    .enqueue_read_buffer(buf, CL_BLOCKING, 0, &mut bytes, &[])
            }
            .map_err(cl_err("download"))?;
            let values = from_bytes(&bytes, *elem);
            let n = data.len();
            *data = values.into_iter().take(n).collect();
        }
    }
    Ok(())
}
