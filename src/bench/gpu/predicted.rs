//! The model's prediction for a bench case with ptxas's registers: NVRTC (a
//! runtime library, hence here in `exec` rather than in `model`) compiles the
//! kernels to PTX, and `ptxas -v` counts their registers.

use std::collections::BTreeMap;

use crate::ir::env::RunEnv;
use crate::lower::Lowered;
use crate::model::predict::{predict, Prediction};
use crate::model::ptxas::{self, PtxasError};
use crate::model::{Device, PredictError, ASSUMED_REGISTERS};
use crate::schedule::Schedule;

/// ptxas's registers per kernel of `lowered` for `device`'s architecture:
/// NVRTC to PTX, then `ptxas -v` wherever [`ptxas::find`](crate::model::ptxas::find) finds it (on a CUDA
/// machine, `/usr/local/cuda/bin/ptxas`). The error says why there are none.
pub fn ptxas_registers(
    lowered: &Lowered,
    device: &Device,
) -> Result<BTreeMap<String, u32>, PtxasError> {
    let path = ptxas::find()?;
    // The module's own NVRTC options: `--fmad=true` under `--fma`.
    let (_, compiled) = crate::exec::cuda::nvrtc::compile_module(&lowered.module, device.arch)
        .map_err(PtxasError::Nvrtc)?;
    let figures = ptxas::run(&path, &compiled.ptx, device.arch)?;
    Ok(figures
        .into_iter()
        .map(|(name, f)| (name, f.registers))
        .collect())
}

/// [`predict`](crate::model::predict::predict) with ptxas's registers where ptxas runs, else with
/// [`ASSUMED_REGISTERS`](crate::model::ASSUMED_REGISTERS) and a note saying why.
pub fn predict_with_ptxas(
    program: &crate::ir::Program,
    schedule: &Schedule,
    lowered: &Lowered,
    env: &RunEnv,
    device: &Device,
) -> Result<Prediction, PredictError> {
    let (registers, note) = match ptxas_registers(lowered, device) {
        Ok(r) => (r, None),
        Err(why) => (
            BTreeMap::new(),
            Some(format!(
                "no ptxas figures ({why}); {ASSUMED_REGISTERS} registers per thread assumed"
            )),
        ),
    };
    let mut prediction = predict(program, schedule, lowered, env, device, &registers)?;
    prediction.note = note;
    Ok(prediction)
}
