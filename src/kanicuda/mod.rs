//! KaniCUDA end to end, as `stencilc synth` runs it: profile a kernel's
//! marked reads in the emulator on several launches, synthesize each read's
//! shared index and guard ([`crate::synth`]), insert the barriers the served
//! reads need ([`barriers`]), rewrite the kernel's text ([`rewrite`]), and
//! verify the result against the original in the emulator on launches that
//! were not profiled. Nothing is returned that failed verification.
//!
//! The launches derive from the given one ([`shapes`]): the profiles come
//! from the given grid and block, the block one and two shorter along one
//! axis at a time, and the grid one smaller; the verification from other blocks (two
//! smaller along x or y, one larger along x and smaller along y, ...), each on
//! the largest grid inside the given launch's extent and on the smallest one
//! covering it (partial blocks at the edges). A launch the original kernel
//! cannot run (an out-of-bounds access, a shared array too small for the
//! block) is left out and said so.

pub mod barriers;
pub mod rewrite;
pub mod shapes;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::diag::Diagnostic;
use crate::front::cuda::ast::{ChosenSlot, Kernel, Type};
use crate::front::cuda::{parse_kernel_in_file, FileError, FileOptions};
use crate::source::SourceFile;
use crate::synth::guard::synthesize_guard_for;
use crate::synth::print::guard_to_cuda;
use crate::synth::table::AccessProfile;
use crate::synth::{merge_profiles, synthesize_access, AccessPlan, Bounds, NotFound, SearchStats};

use crate::emu::args::{materialize, ArgSpec};
use crate::emu::{self, Arg, FindingKind, Launch, Limits, Value};

/// What to synthesize and how.
pub struct Request<'a> {
    /// The kernel's file: its name and text.
    pub source: &'a Arc<SourceFile>,
    /// The `-D` macros it was parsed with.
    pub defines: &'a [(String, String)],
    /// The checked kernel.
    pub kernel: &'a Kernel,
    /// The launch the user gave.
    pub launch: Launch,
    /// The arguments (random arrays get another seed per run).
    pub args: &'a [ArgSpec],
    /// The searches' bounds.
    pub bounds: Bounds,
    /// Also compare on the profiled launches, and on a second seed each.
    pub check: bool,
    /// Limits of each emulation.
    pub limits: Limits,
    /// The launch's dynamic shared bytes (an `extern __shared__` array's size).
    pub shared_bytes: Option<u64>,
}

/// A marked read and how it is served now.
#[derive(Clone, Debug)]
pub struct AccessResult {
    /// The marked read's number in the kernel.
    pub read: usize,
    /// The merged profile it was synthesized from.
    pub profile: AccessProfile,
    /// Its index and guard.
    pub plan: AccessPlan,
    /// The text that replaces `__opt__.in[w]`.
    pub replacement: String,
    /// The slot the user chose, `sb[csb - 1]` of `__opt__(in[w], sb[csb - 1])`
    /// (verified, not searched: [`AccessResult::plan`] has no index then).
    pub chosen: Option<String>,
}

impl AccessResult {
    /// Whether the rewritten read uses the shared array at all.
    pub fn served(&self) -> bool {
        self.plan.guard != crate::synth::Guard::False
    }
}

/// An inserted `__syncthreads()`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedBarrier {
    /// Its 1-based line in the rewritten kernel.
    pub line: usize,
    /// Why it is there (lines of the rewritten kernel).
    pub reason: String,
    /// Where it was hoisted from, if not beside the store or read.
    pub hoisted: Option<String>,
}

/// One comparison of the original and the rewritten kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The launch.
    pub launch: Launch,
    /// The seed of the random arrays.
    pub seed: u64,
    /// Whether the launch was one of the profiled ones.
    pub profiled: bool,
    /// Array elements compared (every element of every array).
    pub elements: usize,
}

/// What a synthesis did and made.
#[derive(Clone, Debug)]
pub struct Synthesis {
    /// The rewritten file.
    pub text: String,
    /// The rewritten kernel alone, at its place, the rest of the file
    /// blanked (what NVRTC compiles).
    pub kernel_text: String,
    /// Each marked read, in source order.
    pub accesses: Vec<AccessResult>,
    /// The barriers inserted, in text order.
    pub barriers: Vec<PlacedBarrier>,
    /// The launches profiled.
    pub profiled: Vec<Launch>,
    /// The comparisons that verified the result, all equal and race-free.
    pub compared: Vec<Comparison>,
    /// Launches left out, and why.
    pub skipped: Vec<(Launch, String)>,
    /// Time spent profiling.
    pub profile_time: Duration,
    /// Time spent in the searches.
    pub search_time: Duration,
    /// Time spent verifying.
    pub verify_time: Duration,
}

/// Why nothing was written.
#[derive(Debug)]
pub enum Failure {
    /// Located in the user's kernel.
    Located(Vec<Diagnostic>),
    /// Anything else: what is wrong and what to do.
    Plain {
        /// What is wrong.
        message: String,
        /// What to do.
        help: String,
    },
}

fn plain(message: impl Into<String>, help: impl Into<String>) -> Failure {
    Failure::Plain {
        message: message.into(),
        help: help.into(),
    }
}

/// `grid 2,2 x block 4,4` (trailing sizes of 1 left out).
pub fn describe(launch: Launch) -> String {
    let sizes = |v: [u32; 3]| {
        let n = if v[2] > 1 { 3 } else { 2 };
        v[..n]
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "grid {} x block {}",
        sizes(launch.grid),
        sizes(launch.block)
    )
}

/// Profiles, synthesizes, places barriers, rewrites and verifies.
pub fn synthesize(req: &Request) -> Result<Synthesis, Failure> {
    let kernel = req.kernel;
    if kernel.marked.is_empty() {
        return Err(plain(
            format!("kernel `{}` marks no read to serve from shared memory", kernel.name),
            "mark the global reads with `__opt__.`, as in `__opt__.in[w]`, and name the candidates with `profile(\"...\")`",
        ));
    }
    let mut skipped = Vec::new();
    // Profiles.
    let started = Instant::now();
    let mut profiles: Vec<Vec<AccessProfile>> = vec![Vec::new(); kernel.marked.len()];
    let mut profiled = Vec::new();
    for (n, launch) in shapes::profile_launches(req.launch).into_iter().enumerate() {
        let mut args = materialize(kernel, req.args, n as u64 * 1000);
        let given = launch == req.launch;
        let report = match emu::run(kernel, launch, &mut args, req.limits) {
            Ok(report) => report,
            Err(e) if given => {
                return Err(plain(e.to_string(), "change the launch or the arguments"))
            }
            Err(e) => {
                skipped.push((launch, e.to_string()));
                continue;
            }
        };
        if !report.is_clean() {
            let stops = report.findings.iter().any(|f| f.kind != FindingKind::Race);
            if given || !stops {
                // The user's launch must run, and a race is the kernel's own.
                return Err(Failure::Located(
                    report.findings.iter().map(|f| f.to_diagnostic()).collect(),
                ));
            }
            skipped.push((launch, first_problem(&report.findings)));
            continue;
        }
        for (all, p) in profiles.iter_mut().zip(report.profiles) {
            all.push(p);
        }
        profiled.push(launch);
    }
    let distinct = |f: &dyn Fn(&Launch) -> [u32; 3]| {
        let mut v: Vec<[u32; 3]> = profiled.iter().map(f).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    if distinct(&|l| l.block) < 2 || distinct(&|l| l.grid) < 2 {
        let tried: Vec<String> = skipped
            .iter()
            .map(|(l, why)| format!("{}: {why}", describe(*l)))
            .collect();
        return Err(plain(
            format!(
                "the kernel ran on {} only, too few launches to profile (two block shapes and two grid sizes at least){}",
                profiled.iter().map(|l| describe(*l)).collect::<Vec<_>>().join(", "),
                if tried.is_empty() { String::new() } else { format!("; left out: {}", tried.join("; ")) }
            ),
            "give a block of at least 2 threads along x or y and a grid of at least 2 blocks along an axis, with arrays large enough for them",
        ));
    }
    let profile_time = started.elapsed();
    // Searches.
    let started = Instant::now();
    let mut accesses = Vec::new();
    for (m, launches) in profiles.iter().enumerate() {
        let merged =
            merge_profiles(launches).map_err(|e| plain(e.to_string(), "report this as a bug"))?;
        let read = &kernel.marked[m];
        let global = rewrite::global_read(read);
        let (plan, replacement) = match &read.chosen {
            Some(chosen) => {
                let plan = chosen_plan(kernel, m, chosen, &merged, &req.bounds)?;
                let replacement = chosen_to_cuda(&plan, &merged, chosen, &global);
                (plan, replacement)
            }
            None => {
                let plan = synthesize_access(&merged, &req.bounds)
                    .map_err(|nf| Failure::Located(vec![not_found(kernel, m, &nf)]))?;
                let replacement = plan.to_cuda(&merged, &global);
                (plan, replacement)
            }
        };
        accesses.push(AccessResult {
            read: m,
            profile: merged,
            plan,
            replacement,
            chosen: read.chosen.as_ref().map(|c| c.text.clone()),
        });
    }
    let search_time = started.elapsed();
    // Barriers and text.
    let started = Instant::now();
    let all: Vec<usize> = accesses
        .iter()
        .filter(|a| a.served())
        .map(|a| a.read)
        .collect();
    let (text, barriers) = rewritten(req, &accesses, &all)?;
    let (rewritten_kernel, kernel_text) = parse_rewritten(req, &text)?;
    // Verification.
    let mut launches: Vec<(Launch, u64, bool)> = Vec::new();
    for (n, launch) in shapes::verify_launches(req.launch, &profiled)
        .into_iter()
        .enumerate()
    {
        launches.push((launch, 7919 + n as u64, false));
    }
    if req.check {
        for (n, launch) in profiled.iter().enumerate() {
            launches.push((*launch, 104_729 + n as u64, true));
        }
        let again: Vec<(Launch, u64, bool)> = launches
            .iter()
            .map(|&(l, seed, p)| (l, seed + 1_000_003, p))
            .collect();
        launches.extend(again);
    }
    let compared = verify(
        req,
        &accesses,
        (&rewritten_kernel, &text),
        &launches,
        &mut skipped,
    )?;
    let verify_time = started.elapsed();
    Ok(Synthesis {
        text,
        kernel_text,
        accesses,
        barriers,
        profiled,
        compared,
        skipped,
        profile_time,
        search_time,
        verify_time,
    })
}

/// Compares the original and the rewritten kernel on each (launch, seed,
/// profiled) of `launches`; a launch the original cannot run joins
/// `skipped`. A difference or a finding in the rewritten kernel is a failure
/// that names the read responsible (see [`blame`]).
fn verify(
    req: &Request,
    accesses: &[AccessResult],
    rewritten: (&Kernel, &str),
    launches: &[(Launch, u64, bool)],
    skipped: &mut Vec<(Launch, String)>,
) -> Result<Vec<Comparison>, Failure> {
    let mut compared = Vec::new();
    for &(launch, seed, was_profiled) in launches {
        match compare(req, rewritten, launch, seed)? {
            Outcome::Equal(elements) => compared.push(Comparison {
                launch,
                seed,
                profiled: was_profiled,
                elements,
            }),
            Outcome::OriginalFails(why) => {
                if !skipped.iter().any(|(l, _)| *l == launch) {
                    skipped.push((launch, why));
                }
            }
            Outcome::Differs(what) => return Err(blame(req, accesses, launch, seed, &what)),
        }
    }
    if !compared.iter().any(|c| !c.profiled) {
        return Err(plain(
            "no launch other than the profiled ones runs the original kernel cleanly, so the rewritten kernel cannot be verified",
            "give a larger problem (array sizes and extents) for the launch, so that smaller blocks and grids fit inside it",
        ));
    }
    Ok(compared)
}

fn first_problem(findings: &[emu::Finding]) -> String {
    findings
        .iter()
        .find(|f| f.kind != FindingKind::Race)
        .or(findings.first())
        .map_or_else(String::new, |f| f.message.clone())
}

/// The located error of a search that found nothing.
fn not_found(kernel: &Kernel, m: usize, nf: &NotFound) -> Diagnostic {
    let read = &kernel.marked[m];
    let closest = match &nf.closest {
        Some(c) => format!(
            "the closest, `{}`, is wrong on {} of {} profiled rows",
            c.text, c.mismatches, c.rows
        ),
        None => "no candidate was evaluated on every row".to_string(),
    };
    Diagnostic::error(
        format!(
            "no expression for {} of `{}` within the bounds: {closest}",
            nf.what, nf.access
        ),
        read.span,
    )
    .with_label(format!(
        "{} expressions tested{}",
        nf.stats.tested,
        if nf.stats.budget_exhausted {
            ", the time budget ran out"
        } else {
            ""
        }
    ))
    .with_help(format!(
        "the bounds: {}. Name the variables the index depends on in profile(\"...\"), or raise --budget",
        nf.bounds
    ))
}

/// The text with the reads in `served` rewritten (the others back to their
/// global read) and their barriers.
fn rewritten(
    req: &Request,
    accesses: &[AccessResult],
    served: &[usize],
) -> Result<(String, Vec<PlacedBarrier>), Failure> {
    let text = &req.source.text;
    let insertions =
        barriers::plan(req.kernel, text, served).map_err(|d| Failure::Located(vec![d]))?;
    let replacements: Vec<String> = accesses
        .iter()
        .map(|a| {
            if served.contains(&a.read) {
                a.replacement.clone()
            } else {
                rewrite::global_read(&req.kernel.marked[a.read])
            }
        })
        .collect();
    let out = rewrite::rewrite(text, req.kernel, &replacements, &insertions);
    let line = |offset: usize| out.line_of_original(offset);
    let placed = insertions
        .iter()
        .zip(&out.barrier_lines)
        .map(|(i, &at)| PlacedBarrier {
            line: at,
            reason: i.reason(&line),
            hoisted: i.hoisted(&line),
        })
        .collect();
    Ok((out.text, placed))
}

/// The rewritten kernel, parsed out of the rewritten file, and the text it
/// was parsed from (the rest of the file blanked).
fn parse_rewritten(req: &Request, text: &str) -> Result<(Kernel, String), Failure> {
    let source = SourceFile::new(format!("{} (rewritten)", req.source.name), text);
    let options = FileOptions {
        defines: req.defines,
        kernel: Some(&req.kernel.name),
        shared_bytes: req.shared_bytes,
    };
    match parse_kernel_in_file(&source, &options) {
        Ok(found) => Ok((found.kernel, found.masked.text.clone())),
        Err(FileError::Located(d)) => Err(plain(
            format!("the rewritten kernel does not parse:\n{d}"),
            "this is a bug in stencilc; please report it with the kernel",
        )),
        Err(FileError::Choice { message, .. }) => Err(plain(
            format!("the rewritten file lost its kernel: {message}"),
            "report this as a bug",
        )),
    }
}

/// The plan of a read whose slot the user chose: served where the chosen
/// slot holds the element on the profiled executions, under the smallest
/// guard true exactly there. An error when it never does.
fn chosen_plan(
    kernel: &Kernel,
    m: usize,
    chosen: &ChosenSlot,
    profile: &AccessProfile,
    bounds: &Bounds,
) -> Result<AccessPlan, Failure> {
    let read = &kernel.marked[m];
    let served: Vec<bool> = profile
        .rows
        .iter()
        .map(
            |r| match (&r.slot, chosen.eval(&read.candidates, &r.values)) {
                (Some(held), Some(slot)) => *held == slot,
                _ => false,
            },
        )
        .collect();
    let count = served.iter().filter(|&&s| s).count();
    let with_slot = profile.rows.iter().filter(|r| r.slot.is_some()).count();
    if count == 0 {
        return Err(Failure::Located(vec![Diagnostic::error(
            format!(
                "`{}` never holds the element `{}` reads on the {} profiled executions ({with_slot} of them find it in another slot of `{}`)",
                chosen.text,
                chosen.read_text,
                profile.rows.len(),
                profile.shared
            ),
            chosen.span,
        )
        .with_label("the chosen slot")
        .with_secondary(read.span, "the marked read")
        .with_help(format!(
            "choose the slot the kernel's store fills with that element, or write `__opt__.{}` to let synth search for it",
            chosen.read_text
        ))]));
    }
    let guard = synthesize_guard_for(profile, &served, bounds)
        .map_err(|nf| Failure::Located(vec![not_found(kernel, m, &nf)]))?;
    Ok(AccessPlan {
        index: Vec::new(),
        guard: guard.expr,
        exact: count == with_slot,
        served: count,
        with_slot,
        index_stats: SearchStats::default(),
        guard_stats: guard.stats,
    })
}

/// `((guard) ? sb[chosen] : in[w])`, as [`AccessPlan::to_cuda`] with the
/// user's slot.
fn chosen_to_cuda(
    plan: &AccessPlan,
    profile: &AccessProfile,
    chosen: &ChosenSlot,
    global: &str,
) -> String {
    match &plan.guard {
        crate::synth::Guard::True => chosen.text.clone(),
        crate::synth::Guard::False => global.to_string(),
        guard => format!(
            "(({}) ? {} : {global})",
            guard_to_cuda(guard, &profile.candidates),
            chosen.text
        ),
    }
}

enum Outcome {
    /// Every element equal; how many were compared.
    Equal(usize),
    /// The original kernel cannot run this launch (why).
    OriginalFails(String),
    /// What differs, or what the emulator found in the rewritten kernel.
    Differs(String),
}

/// Runs the original and the rewritten kernel on one launch and seed.
fn compare(
    req: &Request,
    (rewritten, text): (&Kernel, &str),
    launch: Launch,
    seed: u64,
) -> Result<Outcome, Failure> {
    let mut before = materialize(req.kernel, req.args, seed);
    let mut after = before.clone();
    let original = match emu::run(req.kernel, launch, &mut before, req.limits) {
        Ok(r) => r,
        Err(e) => return Ok(Outcome::OriginalFails(e.to_string())),
    };
    if !original.is_clean() {
        return Ok(Outcome::OriginalFails(first_problem(&original.findings)));
    }
    let report = emu::run(rewritten, launch, &mut after, req.limits)
        .map_err(|e| plain(e.to_string(), "report this as a bug"))?;
    let line = |span: crate::source::Span| barriers::line_of(text, span.start as usize);
    if let Some(f) = report.findings.first() {
        return Ok(Outcome::Differs(format!(
            "the rewritten kernel has a problem at its line {}: {}",
            line(f.span),
            f.message
        )));
    }
    let mut elements = 0;
    for ((param, a), b) in req.kernel.params.iter().zip(&before).zip(&after) {
        if let (Type::Pointer(_), Arg::Array(x), Arg::Array(y)) = (param.ty, a, b) {
            elements += x.len();
            if let Some(k) = (0..x.len()).find(|&k| !same(x[k], y[k])) {
                return Ok(Outcome::Differs(format!(
                    "element {}[{k}] is {} where the original computes {}",
                    param.name,
                    y[k].as_f64(),
                    x[k].as_f64()
                )));
            }
        }
    }
    Ok(Outcome::Equal(elements))
}

fn same(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The failure of a verification, naming the access (each served read
/// rewritten alone until one fails) and the launch.
fn blame(
    req: &Request,
    accesses: &[AccessResult],
    launch: Launch,
    seed: u64,
    what: &str,
) -> Failure {
    let shape = describe(launch);
    for a in accesses.iter().filter(|a| a.served()) {
        let Ok((text, _)) = rewritten(req, accesses, &[a.read]) else {
            continue;
        };
        let Ok((kernel, _)) = parse_rewritten(req, &text) else {
            continue;
        };
        if let Ok(Outcome::Differs(alone)) = compare(req, (&kernel, &text), launch, seed) {
            let read = &req.kernel.marked[a.read];
            return Failure::Located(vec![Diagnostic::error(
                format!(
                    "the synthesized `{}` fails verification on {shape} (seed {seed}): {alone}",
                    a.replacement
                ),
                read.span,
            )
            .with_label("this read")
            .with_help(
                "the profiled launches did not tell the right expression apart: profile on more shapes (another --grid/--block), or name fewer, more telling candidates in profile(\"...\")",
            )]);
        }
    }
    plain(
        format!("the rewritten kernel fails verification on {shape} (seed {seed}): {what}; each read rewritten alone passes"),
        "nothing was written; the reads interfere through the barriers: report this with the kernel",
    )
}
