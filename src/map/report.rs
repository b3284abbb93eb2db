//! The mapping report (`--report`): per nest, the methodology's steps —
//! loops and their classification, dependences, scalars, the three criteria
//! with their numbers, transformations, memory choices and the decision.

use std::fmt::Write;

use super::nest::{Decision, FilePlan, NestPlan, Target};

/// The report as text.
pub fn text(plan: &FilePlan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "stencilc map: {} (target {:?}, device {})",
        plan.file, plan.target, plan.device
    );
    if plan.transformed {
        let _ = writeln!(
            out,
            "(loops were transformed: line numbers are those of the transformed program)"
        );
    }
    for nest in &plan.nests {
        nest_text(nest, 0, &mut out);
    }
    out
}

fn nest_text(nest: &NestPlan, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let verdict = match &nest.decision {
        Decision::Mapped { parallel } => {
            format!("mapped (parallel loops: {})", parallel.join(", "))
        }
        Decision::Iterate => "iterate on the host, inner nests below".to_string(),
        Decision::Cpu { .. } => "stays on the CPU".to_string(),
    };
    let _ = writeln!(
        out,
        "\n{pad}nest {} (lines {}-{}): {}, {verdict}",
        nest.id, nest.lines.0, nest.lines.1, nest.class
    );
    let _ = writeln!(out, "{pad}  loops:");
    for l in &nest.loops {
        let trip = l
            .trip
            .map_or(String::new(), |t| format!(", {t} iterations"));
        let status = if l.sequential.is_empty() {
            "parallel".to_string()
        } else {
            let shown: Vec<&str> = l.sequential.iter().take(2).map(|r| r.as_str()).collect();
            let more = l.sequential.len().saturating_sub(2);
            let more = if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            };
            format!("sequential: {}{more}", shown.join("; "))
        };
        let _ = writeln!(
            out,
            "{pad}    {} (line {}): {}{trip}; {status}",
            l.var, l.line, l.range
        );
    }
    let sections: [(&str, Vec<String>); 2] = [
        ("dependences", nest.dependences.clone()),
        (
            "scalars",
            nest.scalars
                .iter()
                .map(|(n, h)| format!("{n}: {h}"))
                .collect(),
        ),
    ];
    for (title, items) in sections {
        if !items.is_empty() {
            let _ = writeln!(out, "{pad}  {title}:");
            for i in items {
                let _ = writeln!(out, "{pad}    {i}");
            }
        }
    }
    if !nest.criteria.is_empty() {
        let _ = writeln!(out, "{pad}  criteria:");
        for c in &nest.criteria {
            let _ = writeln!(
                out,
                "{pad}    [{}] {}: {}",
                if c.pass { "pass" } else { "FAIL" },
                c.name,
                c.detail
            );
        }
    }
    if !nest.transformations.is_empty() {
        let _ = writeln!(out, "{pad}  transformations:");
        for t in &nest.transformations {
            let _ = writeln!(out, "{pad}    {t}");
        }
    }
    if !nest.memory.is_empty() {
        let _ = writeln!(out, "{pad}  memory:");
        for m in &nest.memory {
            let _ = writeln!(out, "{pad}    {}: {} ({})", m.array, m.choice, m.reason);
        }
    }
    if let Some(lift) = &nest.lift {
        let _ = writeln!(out, "{pad}  lift: {lift}");
    }
    match &nest.decision {
        Decision::Mapped { .. } => {
            if let Some(omp) = &nest.omp {
                let _ = writeln!(out, "{pad}  decision: mapped; with --target c: {omp}");
            }
        }
        Decision::Cpu { reasons } => {
            let _ = writeln!(out, "{pad}  decision: stays on the CPU because:");
            for r in reasons {
                let _ = writeln!(out, "{pad}    {r}");
            }
        }
        Decision::Iterate => {}
    }
    for inner in &nest.inner {
        nest_text(inner, depth + 1, out);
    }
}

/// The nests a device target leaves on the CPU, outermost first, each with
/// why: nests that are neither lifted into stencilc's kernels nor a direct
/// kernel of their own. An iterate stays on the host by design; its inner
/// nests are what counts. Empty for `--target c`, which has no device.
pub fn left_on_cpu(plan: &FilePlan) -> Vec<(String, Vec<String>)> {
    /// `around`: why the loop around these nests was not lifted.
    fn walk(nests: &[NestPlan], around: Option<&str>, out: &mut Vec<(String, Vec<String>)>) {
        for n in nests {
            if n.device.is_some() {
                continue;
            }
            let not_lifted = n.lift.as_deref().filter(|l| l.starts_with("not lifted"));
            let at = format!("nest {} (lines {}-{})", n.id, n.lines.0, n.lines.1);
            let mut why = match &n.decision {
                Decision::Iterate => {
                    let this = not_lifted.map(|l| format!("the loop around it was {l}"));
                    walk(&n.inner, this.as_deref().or(around), out);
                    continue;
                }
                Decision::Mapped { .. } if n.kernel.is_some() => continue,
                Decision::Mapped { .. } => vec!["parallel, but it has no device kernel".into()],
                Decision::Cpu { reasons } => reasons.clone(),
            };
            why.extend(not_lifted.map(str::to_string));
            why.extend(around.map(str::to_string));
            out.push((at, why));
        }
    }
    let mut out = Vec::new();
    if plan.target != Target::C {
        walk(&plan.nests, None, &mut out);
    }
    out
}

/// The report as JSON.
pub fn json(plan: &FilePlan) -> String {
    serde_json::to_string_pretty(plan).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
