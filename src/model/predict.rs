//! The model's whole-program prediction as a library call: the time of one
//! sweep (every stencil launch) and of one iteration (stencils, reductions at
//! their share of the checks, and the check's read-back), as `stencilc explain`
//! sums it, for `bench-gpu`'s `predicted` column.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ir::env::RunEnv;
use crate::lower::Lowered;
use crate::model::build;
use crate::model::{cost, Device, PredictError, Role, CHECK_SYNC_US};
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
    env: &RunEnv,
    device: &Device,
    registers: &BTreeMap<String, u32>,
) -> Result<Prediction, PredictError> {
    let specs = build::specs(program, schedule, lowered, env);
    let (mut sweep, mut iteration, mut per_check) = (0.0, 0.0, 0.0f64);
    let mut all_known = true;
    for spec in &specs {
        let regs = registers.get(&spec.name).copied();
        all_known &= regs.is_some();
        let c = cost(spec, device, regs).map_err(|source| PredictError {
            kernel: spec.name.clone(),
            device: device.name,
            source,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::env::Bindings;
    use crate::ir::env::RunEnv;
    use crate::ir::Value;
    use crate::lower::{lower, Target};
    use crate::schedule::ScheduleRequest;

    const CHECKED: &str = "int n;\nint steps;\ngrid g[n][n];\nfloat griddata a on g at 0,1;\n\
        iterate steps {\n    stencil s {\n        [1:n-2][1:n-2] : [1]a[0][0] = 0.25f*([0]a[-1][0] + \
        [0]a[1][0] + [0]a[0][-1] + [0]a[0][1]);\n    }\n    reduction change max {\n        \
        [1:n-2][1:n-2] : fabsf([1]a[0][0] - [0]a[0][0]);\n    }\n} check (change < 0.001f) \
        every 4 iterations\n";

    #[test]
    fn an_iteration_is_the_sweep_plus_reductions_at_their_share_plus_the_read_back() {
        let source = crate::source::SourceFile::new("checked.sdsl", CHECKED);
        let program = crate::front::parse_program(source).unwrap();
        let bindings = Bindings {
            params: vec![Value::Int(4096), Value::Int(100)],
        };
        let env = RunEnv::new(&program, &bindings).unwrap();
        let schedule = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
        let lowered = lower(&program, &schedule, Target::Cuda);
        let device = Device::find("h100").unwrap();
        let specs = build::specs(&program, &schedule, &lowered, &env);
        let (mut stencils, mut variant, mut reductions) = (0.0, 0.0, 0.0);
        for spec in &specs {
            let t = cost(spec, device, None).unwrap().time;
            match spec.role {
                Role::Stencil(_) => stencils += t,
                Role::FusedCheck(_) => variant += t,
                _ => reductions += t,
            }
        }
        // The check fuses into the stencil: a variant, and no second pass
        // over the levels (only the folds of the partials).
        assert!(lowered.plan.fused.is_some() && variant > 0.0);
        assert!(lowered.plan.reductions[0].parts.is_empty());
        assert!(reductions > 0.0);
        let p = predict(
            &program,
            &schedule,
            &lowered,
            &env,
            device,
            &BTreeMap::new(),
        )
        .unwrap();
        assert!((p.sweep_ms - stencils * 1e3).abs() < 1e-12);
        // Checked every 4 iterations: then the variant replaces the plain
        // kernel, and a quarter of the reductions and the read-back.
        let expected = stencils * 0.75 + (variant + reductions + CHECK_SYNC_US * 1e-6) / 4.0;
        assert!((p.iteration_ms - expected * 1e3).abs() < 1e-12, "{p:?}");
        assert!(!p.registers_from_ptxas);
        // Registers from ptxas for every kernel: said so; more registers than
        // assumed cannot make a kernel faster.
        let many: BTreeMap<String, u32> = specs.iter().map(|s| (s.name.clone(), 128)).collect();
        let q = predict(&program, &schedule, &lowered, &env, device, &many).unwrap();
        assert!(q.registers_from_ptxas);
        assert!(q.sweep_ms >= p.sweep_ms);
    }

    #[test]
    fn driver_names_find_their_presets() {
        let key = |name: &str| preset_for_name(name).map(|d| d.key);
        assert_eq!(key("NVIDIA H100 80GB HBM3"), Some("h100-sxm"));
        assert_eq!(key("NVIDIA H100 PCIe"), Some("h100-pcie"));
        assert_eq!(key("NVIDIA H200"), Some("h200"));
        assert_eq!(key("NVIDIA A100-SXM4-80GB"), Some("a100"));
        assert_eq!(key("NVIDIA L40S"), Some("l40s"));
        assert_eq!(key("Tesla V100-SXM2-16GB"), Some("v100"));
        assert_eq!(key("NVIDIA GeForce RTX 4090"), None);
    }

    #[test]
    fn ptxas_is_looked_for_in_the_cuda_toolkit_of_the_device_machine() {
        // The device machine has CUDA 13 at /usr/local/cuda: its ptxas is a candidate
        // whether or not /usr/local/cuda exists here (the fallback names it).
        let others = std::fs::read_dir("/usr/local")
            .map(|d| {
                d.flatten().any(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with("cuda") && name != "cuda"
                })
            })
            .unwrap_or(false);
        if !others {
            assert!(crate::model::ptxas::candidates()
                .contains(&std::path::PathBuf::from("/usr/local/cuda/bin/ptxas")));
        }
    }
}
