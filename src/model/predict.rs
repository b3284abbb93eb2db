//! The model's whole-program prediction as a library call: the time of one
//! sweep (every stencil launch) and of one iteration (stencils, reductions at
//! their share of the checks, and the check's read-back), as `stencilc explain`
//! sums it, for `bench-gpu`'s `predicted` column.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::lower::Lowered;
use crate::model::build::{self, RunFacts};
use crate::model::{cost, ptxas, Device, Role, ASSUMED_REGISTERS, CHECK_SYNC_US};
use crate::schedule::Schedule;

/// What the model predicts for one program, schedule and size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The preset predicted for (`h100-sxm`).
    pub device: String,
    /// One sweep: every stencil launch of an iteration, ms.
    pub sweep_ms: f64,
    /// One iteration: the sweep, the reductions (weighted by how often the
    /// check runs) and the check's read-back, ms.
    pub iteration_ms: f64,
    /// Whether every kernel's registers came from `ptxas -v` (else
    /// [`ASSUMED_REGISTERS`] were assumed where missing).
    pub registers_from_ptxas: bool,
    /// Why ptxas figures are missing, when they are.
    pub note: Option<String>,
}

/// Predicts `lowered` (of `program` under `schedule`) on `device`.
/// `registers` gives ptxas's registers per kernel name where known; a kernel
/// not in it is assumed to use [`ASSUMED_REGISTERS`].
pub fn predict(
    program: &crate::ir::Program,
    schedule: &Schedule,
    lowered: &Lowered,
    facts: &RunFacts<'_>,
    device: &Device,
    registers: &BTreeMap<String, u32>,
) -> Result<Prediction, String> {
    let specs = build::specs(program, schedule, lowered, facts);
    let (mut sweep, mut iteration, mut per_check) = (0.0, 0.0, 0.0f64);
    let mut all_known = true;
    for spec in &specs {
        let regs = registers.get(&spec.name).copied();
        all_known &= regs.is_some();
        let c = cost(spec, device, regs).map_err(|e| {
            format!(
                "kernel `{}` does not fit the {}: {e}",
                spec.name, device.name
            )
        })?;
        if matches!(spec.role, Role::Stencil(_)) {
            sweep += c.time;
        } else {
            per_check = per_check.max(spec.per_iteration);
        }
        iteration += c.time * spec.per_iteration;
    }
    if !lowered.plan.reductions.is_empty() {
        iteration += CHECK_SYNC_US * 1e-6 * per_check;
    }
    Ok(Prediction {
        device: device.key.to_string(),
        sweep_ms: sweep * 1e3,
        iteration_ms: iteration * 1e3,
        registers_from_ptxas: all_known && !specs.is_empty(),
        note: None,
    })
}

/// ptxas's registers per kernel of `lowered` for `device`'s architecture:
/// NVRTC to PTX, then `ptxas -v` wherever [`ptxas::find`] finds it (on a CUDA
/// machine, `/usr/local/cuda/bin/ptxas`). The error says why there are none.
pub fn ptxas_registers(
    lowered: &Lowered,
    device: &Device,
) -> Result<BTreeMap<String, u32>, String> {
    let path = ptxas::find()?;
    let source = crate::back::cuda::print(&lowered.module);
    let compiled = crate::exec::cuda::nvrtc::compile_with_log(&source, device.arch)
        .map_err(|e| format!("NVRTC could not compile the kernels to PTX: {e}"))?;
    let figures = ptxas::run(&path, &compiled.ptx, device.arch)?;
    Ok(figures
        .into_iter()
        .map(|(name, f)| (name, f.registers))
        .collect())
}

/// [`predict`] with ptxas's registers where ptxas runs, else with
/// [`ASSUMED_REGISTERS`] and a note saying why.
pub fn predict_with_ptxas(
    program: &crate::ir::Program,
    schedule: &Schedule,
    lowered: &Lowered,
    facts: &RunFacts<'_>,
    device: &Device,
) -> Result<Prediction, String> {
    let (registers, note) = match ptxas_registers(lowered, device) {
        Ok(r) => (r, None),
        Err(why) => (
            BTreeMap::new(),
            Some(format!(
                "no ptxas figures ({why}); {ASSUMED_REGISTERS} registers per thread assumed"
            )),
        ),
    };
    let mut prediction = predict(program, schedule, lowered, facts, device, &registers)?;
    prediction.note = note;
    Ok(prediction)
}

/// The preset of a CUDA device by its driver name (`NVIDIA H100 80GB HBM3`),
/// or `None` when no preset matches.
pub fn preset_for_name(name: &str) -> Option<&'static Device> {
    let upper = name.to_ascii_uppercase();
    let key = if upper.contains("H100") {
        if upper.contains("PCIE") {
            "h100-pcie"
        } else {
            "h100-sxm"
        }
    } else if upper.contains("H200") {
        "h200"
    } else if upper.contains("A100") {
        "a100"
    } else if upper.contains("L40S") {
        "l40s"
    } else if upper.contains("V100") {
        "v100"
    } else {
        return None;
    };
    Device::find(key)
}
