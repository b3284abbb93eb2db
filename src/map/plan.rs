//! The planner: per outermost loop of each function, the analysis, the
//! classification, the criteria, the decision, the lift and the device
//! code, gathered into the nest's plan.

use std::collections::BTreeMap;

use super::analysis::analyse;
use super::facts::{NestFacts, ScalarRole};
use super::nest::{device_id, Decision, FilePlan, LoopReport, NestPlan, Target};
use super::subscript::Sub;
use super::syntax::{lookup, trip_count, walk};
use super::{criteria, device, lift, opencl, resident, rewrite};
use crate::front::c::loops::{CUnit, Function, Loop, Stmt};
use crate::front::c::lower::declared_functions;
use crate::front::c::CFile;
use crate::model::device::Device;

/// Plans every nest of a parsed file for `target` on `device`.
pub fn plan_file(file: &CFile, unit: &CUnit, target: Target, device: &Device) -> FilePlan {
    let declared = declared_functions(file);
    let mut nests = Vec::new();
    for function in &unit.functions {
        let mut outer = Vec::new();
        outermost_loops(&function.body, &mut outer);
        for l in outer {
            if !file.scops.is_empty()
                && !file
                    .scops
                    .iter()
                    .any(|&(a, b)| a < l.lines.0 && l.lines.1 < b)
            {
                continue;
            }
            let mut plan = plan_nest(l, function, unit, &declared, target, device, file);
            try_lift(&mut plan, l, function, unit, target, file);
            if target == Target::Cuda && plan.device.is_none() {
                leave_on_cpu(&mut plan);
            }
            if target != Target::C {
                resident::plan(&mut plan, l, file);
            }
            nests.push(plan);
        }
    }
    FilePlan {
        file: file.original.name.clone(),
        target,
        device: device.name.to_string(),
        nests,
        transformed: false,
    }
}

/// Lifts an outermost mapped nest, or an iterate whose inner nests are all
/// mapped, into an `ir::Program`, noting the outcome in the plan.
fn try_lift(
    plan: &mut NestPlan,
    root: &Loop,
    function: &Function,
    unit: &CUnit,
    target: Target,
    file: &CFile,
) {
    let name = format!("{}_{}", function.name, root.lines.0);
    let outcome = match &plan.decision {
        Decision::Mapped { .. } => lift::lift_nest(root, function, unit, file, &name),
        Decision::Iterate => match plan.inner.iter().find(|p| {
            !matches!(p.decision, Decision::Mapped { .. }) && p.parallel_without_kernel.is_none()
        }) {
            Some(cpu) => Err(lift::NotLifted(format!(
                "its nest {} stays on the CPU",
                cpu.id
            ))),
            None => lift::lift_iterate(root, function, unit, file, &name),
        },
        Decision::Cpu { .. } => return,
    };
    let lifted = match outcome {
        Ok(lifted) => lifted,
        Err(why) => {
            plan.lift = Some(format!("not lifted: {why}"));
            return;
        }
    };
    plan.lift = Some(lifted.summary());
    plan.lift_sdsl = Some(lifted.sdsl.clone());
    if let Some(check) = &lifted.check {
        plan.transformations.push(check.describe());
    }
    let gpu = match target {
        Target::C => None,
        Target::Opencl => Some(crate::lower::Target::OpenCl),
        Target::Cuda => Some(crate::lower::Target::Cuda),
    };
    if let Some(gpu) = gpu {
        let first = file.original_line(root.lines.0).trim_start();
        let last = file.original_line(root.lines.1).trim_end();
        let code = if !first.starts_with("for") || !(last.ends_with('}') || last.ends_with(';')) {
            Err(device::DeviceCodeError::SharesLines)
        } else {
            let indent: String = file
                .original_line(root.lines.0)
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            device::device_code(&lifted, gpu, &device_id(&plan.id), &indent)
        };
        match code {
            Ok(code) => {
                plan.transformations.push(format!(
                    "communication specialisation: the arrays ({}) are copied to the device once before the {} step(s) and back once after; the steps run stencilc's own kernels ({})",
                    lifted.arrays.iter().map(|a| a.c_name.as_str()).collect::<Vec<_>>().join(", "),
                    lifted.steps,
                    code.kernel_names.join(", ")
                ));
                plan.device = Some(code);
                // Its nests run in the lifted program's kernels.
                for inner in &mut plan.inner {
                    if let Some(parallel) = inner.parallel_without_kernel.take() {
                        inner.decision = Decision::Mapped { parallel };
                        inner
                            .transformations
                            .push("runs in the kernels of the lifted loop around it".to_string());
                    }
                }
            }
            Err(why) => plan
                .transformations
                .push(format!("lifted, but no device code for it: {why}")),
        }
    }
    plan.lifted = Some(lifted);
}

/// With `--target cuda`, a mapped nest outside a lifted loop runs as its
/// direct kernel; one without a kernel stays on the CPU.
fn leave_on_cpu(plan: &mut NestPlan) {
    if matches!(plan.decision, Decision::Mapped { .. }) && plan.kernel.is_none() {
        plan.decision = Decision::Cpu {
            reasons: vec!["parallel, but it has no CUDA kernel".into()],
        };
    }
    for inner in &mut plan.inner {
        leave_on_cpu(inner);
    }
}

fn outermost_loops<'a>(body: &'a [Stmt], out: &mut Vec<&'a Loop>) {
    for s in body {
        match s {
            Stmt::For(l) => out.push(l),
            Stmt::If { then, els, .. } => {
                outermost_loops(then, out);
                outermost_loops(els, out);
            }
            Stmt::Other { body, .. } => outermost_loops(body, out),
            _ => {}
        }
    }
}

fn plan_nest(
    root: &Loop,
    function: &Function,
    unit: &CUnit,
    declared: &BTreeMap<String, bool>,
    target: Target,
    device: &Device,
    file: &CFile,
) -> NestPlan {
    let facts = analyse(root, function, unit, declared);
    let mut plan = new_plan(root, function, &facts);
    let parallel = if facts.obstacles.is_empty() {
        parallel_band(root, &facts)
    } else {
        Vec::new()
    };
    if parallel.is_empty() {
        plan_sequential(
            &mut plan, root, &facts, function, unit, declared, target, device, file,
        );
        return plan;
    }
    if check_criteria(
        &mut plan, &parallel, root, &facts, function, unit, target, device,
    ) {
        decide(
            &mut plan, &parallel, root, &facts, function, unit, target, file,
        );
    }
    plan
}

/// The plan of a nest before any decision: its loops, scalars and dependences as the report gives them.
fn new_plan(root: &Loop, function: &Function, facts: &NestFacts) -> NestPlan {
    NestPlan {
        id: format!("{}:{}", function.name, root.lines.0),
        function: function.name.clone(),
        lines: root.lines,
        loops: loop_reports(root, facts),
        class: String::new(),
        decision: Decision::Iterate,
        criteria: Vec::new(),
        transformations: Vec::new(),
        memory: Vec::new(),
        scalars: facts
            .scalars
            .iter()
            .map(|(n, r)| {
                let how = match r {
                    ScalarRole::Local(_) => "declared inside the nest: private".to_string(),
                    ScalarRole::Private(v) => {
                        format!("written before read in each iteration of `{v}`: privatised")
                    }
                    ScalarRole::Reduction(op) => format!("reduction ({op})"),
                    ScalarRole::Carried => "carries a value across iterations".to_string(),
                };
                (n.clone(), how)
            })
            .collect(),
        dependences: facts
            .dependences
            .iter()
            .map(|d| {
                format!(
                    "{} {} (lines {} and {}) distance {}",
                    d.array,
                    d.kind,
                    d.lines.0,
                    d.lines.1,
                    d.vector()
                )
            })
            .chain(facts.no_alias.iter().cloned())
            .fold(Vec::new(), |mut seen, d| {
                if !seen.contains(&d) {
                    seen.push(d);
                }
                seen
            }),
        inner: Vec::new(),
        omp: None,
        kernel: None,
        lift: None,
        lift_sdsl: None,
        lifted: None,
        device: None,
        parallel_without_kernel: None,
        resident: Vec::new(),
    }
}

/// A nest with no parallel loop: an iterate around inner nests planned in
/// turn, or a sequential nest that stays on the CPU with the reasons.
#[allow(clippy::too_many_arguments)]
fn plan_sequential(
    plan: &mut NestPlan,
    root: &Loop,
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    declared: &BTreeMap<String, bool>,
    target: Target,
    device: &Device,
    file: &CFile,
) {
    // A sequential loop around loops: an iterate, its inner nests planned in turn.
    let mut inner_loops = Vec::new();
    outermost_loops(&root.body, &mut inner_loops);
    if !inner_loops.is_empty() {
        for l in inner_loops {
            plan.inner
                .push(plan_nest(l, function, unit, declared, target, device, file));
        }
        let any_mapped = plan.inner.iter().any(|p| {
            !matches!(p.decision, Decision::Cpu { .. }) || p.parallel_without_kernel.is_some()
        });
        if any_mapped {
            // The inner nests report their own loops and dependences.
            plan.class = "iterate".into();
            plan.decision = Decision::Iterate;
            plan.loops.truncate(1);
            plan.dependences.clear();
            plan.transformations.push(iterate_note(root, facts));
        } else {
            plan.class = "sequential".into();
            let mut reasons = facts.obstacles.clone();
            reasons.dedup();
            for l in &plan.loops {
                if let Some(first) = l.sequential.first() {
                    reasons.push(format!(
                        "`{}` (line {}) is sequential: {first}",
                        l.var, l.line
                    ));
                }
            }
            plan.decision = Decision::Cpu { reasons };
        }
        return;
    }
    if !facts.obstacles.is_empty() {
        let mut reasons = facts.obstacles.clone();
        reasons.dedup();
        plan.class = "sequential".into();
        plan.decision = Decision::Cpu { reasons };
        return;
    }
    plan.class = "sequential".into();
    let reasons = facts.sequential.get(&root.var).cloned().unwrap_or_default();
    plan.decision = Decision::Cpu {
        reasons: vec![format!(
            "no loop of the nest is parallel: `{}` is sequential ({})",
            root.var,
            reasons.join("; ")
        )],
    };
}

/// The class, criteria, memory choices and transformations of a nest with
/// parallel loops `parallel`; `false` when a failed criterion keeps it on
/// the CPU.
#[allow(clippy::too_many_arguments)]
fn check_criteria(
    plan: &mut NestPlan,
    parallel: &[String],
    root: &Loop,
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    target: Target,
    device: &Device,
) -> bool {
    plan.class = classify(facts);
    plan.criteria = criteria::check(parallel, facts, function, unit, device);
    plan.memory = criteria::memory_choices(parallel, root, facts, function, unit);
    plan.transformations
        .extend(criteria::transformations(parallel, facts));
    for (name, role) in &facts.scalars {
        if let ScalarRole::Reduction(op) = role {
            let floating = lookup(name, function, unit)
                .is_some_and(|v| v.elem == "float" || v.elem == "double");
            plan.transformations.push(if floating {
                format!("reduction ({op}) of `{name}`: partial results combined per thread, so the operations are reordered (floating point: equal within rounding, not bit-identical)")
            } else {
                format!("reduction ({op}) of `{name}`: partial results combined per thread (exact)")
            });
        }
    }
    let failed: Vec<String> = plan
        .criteria
        .iter()
        .filter(|c| !c.pass)
        .map(|c| format!("{}: {}", c.name, c.detail))
        .collect();
    if !failed.is_empty() && target != Target::C {
        plan.decision = Decision::Cpu { reasons: failed };
        return false;
    }
    true
}

/// The decision for a nest that passed the criteria: its OpenMP clause and,
/// on a GPU target, its direct kernel (or why it stays on the CPU).
#[allow(clippy::too_many_arguments)]
fn decide(
    plan: &mut NestPlan,
    parallel: &[String],
    root: &Loop,
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    target: Target,
    file: &CFile,
) {
    match rewrite::omp_clause(root, parallel, facts, function, unit, file) {
        Ok(clause) => {
            plan.omp = Some(clause);
            plan.decision = Decision::Mapped {
                parallel: parallel.to_vec(),
            };
        }
        Err(reason) => {
            plan.decision = Decision::Cpu {
                reasons: vec![reason.to_string()],
            }
        }
    }
    let dialect = match target {
        Target::C => None,
        Target::Opencl => Some((opencl::Dialect::OpenCl, "OpenCL")),
        Target::Cuda => Some((opencl::Dialect::Cuda, "CUDA")),
    };
    if let (Some((dialect, language)), Decision::Mapped { .. }) = (dialect, &plan.decision) {
        match opencl::kernel(root, parallel, facts, function, unit, file, dialect) {
            Ok(kernel) => {
                if !kernel.specialised.is_empty() {
                    plan.transformations.push(format!(
                        "memory specialisation applied in the {language} kernel: {}",
                        kernel.specialised.join("; ")
                    ));
                }
                plan.kernel = Some(kernel)
            }
            Err(reason) => {
                plan.parallel_without_kernel = Some(parallel.to_vec());
                plan.decision = Decision::Cpu {
                    reasons: vec![format!(
                        "parallel, but not as an {language} kernel yet: {reason}"
                    )],
                }
            }
        }
    }
}

fn iterate_note(root: &Loop, facts: &NestFacts) -> String {
    let mut forms = Vec::new();
    for subs in facts.subs.values() {
        if subs.iter().any(|s| {
            s.iter()
                .any(|x| matches!(x, Sub::Modulo(b, _, _) if *b == root.var))
        }) {
            forms.push("ping-pong buffers indexed by time (`A[(t+1)%2]` / `A[t%2]`)");
            break;
        }
    }
    let why = facts
        .sequential
        .get(&root.var)
        .and_then(|r| r.first())
        .or(facts.obstacles.first())
        .cloned()
        .unwrap_or_else(|| "it is sequential".into());
    format!(
        "`{}` (line {}) recognised as an iterate around the inner nests{}: it stays on the host; sequential because {why}",
        root.var,
        root.lines.0,
        if forms.is_empty() { String::new() } else { format!(" with {}", forms.join(", ")) }
    )
}

/// The outer parallel loops of the nest: the root, then its only child loop
/// while the body is exactly that loop and it is parallel (at most 3).
fn parallel_band(root: &Loop, facts: &NestFacts) -> Vec<String> {
    let mut band = Vec::new();
    let mut l = root;
    loop {
        if !facts.sequential.get(&l.var).is_none_or(|r| r.is_empty()) || band.len() == 3 {
            break;
        }
        band.push(l.var.clone());
        match l.body.as_slice() {
            [Stmt::For(inner)] => l = inner,
            _ => break,
        }
    }
    band
}

fn classify(facts: &NestFacts) -> String {
    if facts
        .scalars
        .values()
        .any(|r| matches!(r, ScalarRole::Reduction(_)))
    {
        return "reduction".into();
    }
    let written: Vec<&String> = facts
        .subs
        .keys()
        .filter(|a| facts.accesses.iter().any(|x| &x.array == *a && x.write))
        .collect();
    let offsets = |a: &String| -> bool {
        let subs = &facts.subs[a];
        subs.iter().any(|s| s.iter().any(|x| matches!(x, Sub::Affine(p) if p.constant_term() != 0 && !p.without_constant().0.is_empty())))
    };
    let stencil_shaped = facts.subs.values().all(|subs| {
        subs.iter().all(|s| {
            s.iter().all(|x| match x {
                Sub::Affine(p) => {
                    p.without_constant().0.values().all(|c| *c == 1)
                        && p.without_constant().0.len() <= 1
                }
                Sub::Modulo(..) | Sub::Invariant(_) => true,
                Sub::NonAffine(_) => false,
            })
        })
    });
    let reads_neighbours = facts
        .subs
        .keys()
        .any(|a| !written.contains(&a) && offsets(a))
        || written.iter().any(|a| offsets(a));
    if stencil_shaped && reads_neighbours {
        "stencil".into()
    } else {
        "parallel".into()
    }
}

fn loop_reports(root: &Loop, facts: &NestFacts) -> Vec<LoopReport> {
    let mut out = Vec::new();
    let mut all = vec![root];
    walk(&root.body, &mut |s| {
        if let Stmt::For(l) = s {
            all.push(l);
        }
    });
    for l in all {
        out.push(LoopReport {
            var: l.var.clone(),
            line: l.lines.0,
            range: if l.descending {
                format!("{} down to {}", l.start(), l.lower)
            } else {
                format!(
                    "{} .. {}{}",
                    l.lower,
                    l.upper,
                    if l.step == 1 {
                        String::new()
                    } else {
                        format!(" step {}", l.step)
                    }
                )
            },
            trip: trip_count(l),
            sequential: facts.sequential.get(&l.var).cloned().unwrap_or_default(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> FilePlan {
        let pre = format!("# 1 \"t.c\"\n{text}");
        let file = match CFile::from_preprocessed("t.c", text.to_string(), pre) {
            Ok(file) => file,
            Err(_) => panic!("does not parse"),
        };
        let unit = crate::front::c::lower_unit(&file);
        plan_file(&file, &unit, Target::C, Device::default_device())
    }

    #[test]
    fn a_gauss_seidel_sweep_has_flow_distances_on_both_loops() {
        let p = plan("double A[9][9];\nvoid f(void) {\n  for (int i = 1; i < 8; i++)\n    for (int j = 1; j < 8; j++)\n      A[i][j] = A[i-1][j] + A[i][j-1];\n}\n");
        let nest = &p.nests[0];
        assert!(matches!(nest.decision, Decision::Cpu { .. }));
        assert!(
            nest.dependences
                .iter()
                .any(|d| d == "A flow (lines 5 and 5) distance (i: 1, j: 0)"),
            "{:?}",
            nest.dependences
        );
        assert!(
            nest.dependences
                .iter()
                .any(|d| d == "A flow (lines 5 and 5) distance (i: 0, j: 1)"),
            "{:?}",
            nest.dependences
        );
    }

    #[test]
    fn the_gcd_test_separates_even_and_odd_elements() {
        let p = plan("double a[64];\nvoid f(void) {\n  for (int i = 0; i < 31; i++)\n    a[2*i] = a[2*i + 1];\n}\n");
        assert!(
            matches!(p.nests[0].decision, Decision::Mapped { .. }),
            "{:?}",
            p.nests[0].decision
        );
    }

    #[test]
    fn ping_pong_buffers_make_a_time_loop_an_iterate_around_a_stencil() {
        let p = plan("float A[2][9][9];\nvoid f(void) {\n  for (int t = 0; t < 4; t++)\n    for (int i = 1; i < 8; i++)\n      for (int j = 1; j < 8; j++)\n        A[(t+1)%2][i][j] = A[t%2][i-1][j] + A[t%2][i][j+1];\n}\n");
        let nest = &p.nests[0];
        assert!(matches!(nest.decision, Decision::Iterate));
        assert_eq!(nest.inner[0].class, "stencil");
        assert!(
            matches!(&nest.inner[0].decision, Decision::Mapped { parallel } if parallel == &["i", "j"])
        );
    }
}
