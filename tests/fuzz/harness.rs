//! The fuzzing loop shared by every target: seed inputs mutated by a
//! deterministic generator for a fixed wall-clock budget, each input run on a
//! worker thread (with the command line's deep stack) under a time bound.
//!
//! Each target first runs its regression inputs (`tests/data/fuzz/<target>/`,
//! crafted cases that once hung, panicked or exhausted memory), then mutates
//! its seeds — bit and byte flips, deletions, duplications, truncation,
//! splicing two seeds, words from a dictionary, brackets nested a thousand
//! deep, huge and negative numbers, and binary length fields set to extremes —
//! until the budget is spent. A panic, or an input that runs past
//! [`PER_INPUT`], fails the test; the input is written under the target
//! directory and its path printed, to be added to the regression inputs with
//! the fix. The figures (cases, worst time per input) are printed past
//! libtest's capture so that `cargo test` shows them.
//!
//! `STENCILC_FUZZ_SECONDS` sets each target's budget (default
//! [`DEFAULT_SECONDS`]); the generator's seed is fixed, so a run is the same
//! sequence of inputs, as far as it gets, every time (`STENCILC_FUZZ_SEED`
//! picks another sequence).

use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default budget of each target, seconds.
pub const DEFAULT_SECONDS: f64 = 4.0;

/// The most one input may take: a generous correctness bound (a front-end or
/// reader that is linear takes milliseconds), not a performance threshold.
pub const PER_INPUT: Duration = Duration::from_secs(2);

/// Stack of the worker thread, as the command line's (`src/cli/mod.rs`).
const STACK_BYTES: usize = 1 << 30;

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// A fuzz target: its seeds, words worth splicing in, and what runs an input.
pub struct Target {
    /// The name, also the folder of its regression inputs.
    pub name: &'static str,
    /// Valid (or nearly valid) inputs to mutate.
    pub seeds: Vec<Vec<u8>>,
    /// Words of the input's language (keywords, punctuation, magic bytes).
    pub dictionary: &'static [&'static [u8]],
    /// Brackets to nest: pairs of opening and closing text.
    pub brackets: &'static [(&'static str, &'static str)],
    /// Inputs are cut to this length.
    pub max_len: usize,
    /// Runs one input; errors are fine, panics are not. Called on the worker
    /// thread, with a scratch folder of its own.
    pub run: fn(&[u8], &Path),
}

/// What a target's run did.
#[derive(Debug)]
pub struct Figures {
    /// Regression inputs run.
    pub regressions: usize,
    /// Mutated inputs run.
    pub cases: usize,
    /// The slowest input's time.
    pub worst: Duration,
    /// The slowest input's length in bytes.
    pub worst_len: usize,
}

fn budget() -> Duration {
    let seconds = std::env::var("STENCILC_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_SECONDS);
    Duration::from_secs_f64(seconds)
}

fn base_seed() -> u64 {
    std::env::var("STENCILC_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_5eed)
}

/// The regression inputs of `target`, sorted by name.
pub fn regression_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.retain(|p| p.is_file());
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// What the worker says about one input.
enum Outcome {
    Done(Duration),
    Panicked(String),
}

/// Runs inputs one at a time on a thread with a deep stack.
struct Worker {
    inputs: mpsc::Sender<Arc<Vec<u8>>>,
    outcomes: mpsc::Receiver<Outcome>,
    _scratch: tempfile::TempDir,
}

impl Worker {
    fn start(run: fn(&[u8], &Path)) -> Worker {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().to_path_buf();
        let (inputs, received) = mpsc::channel::<Arc<Vec<u8>>>();
        let (sent, outcomes) = mpsc::channel();
        std::thread::Builder::new()
            .name("fuzz-worker".into())
            .stack_size(STACK_BYTES)
            .spawn(move || {
                for input in received {
                    let started = Instant::now();
                    let outcome = match catch_unwind(AssertUnwindSafe(|| run(&input, &dir))) {
                        Ok(()) => Outcome::Done(started.elapsed()),
                        Err(payload) => Outcome::Panicked(
                            payload
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| payload.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "unknown panic".into()),
                        ),
                    };
                    if sent.send(outcome).is_err() {
                        break;
                    }
                }
            })
            .unwrap();
        Worker {
            inputs,
            outcomes,
            _scratch: scratch,
        }
    }

    /// Runs `input`; the time it took, or why it failed (a panic, or running
    /// past the bound, after which the worker is abandoned).
    fn run(&self, input: Vec<u8>) -> Result<Duration, String> {
        self.inputs.send(Arc::new(input)).unwrap();
        // Wait a little past the bound, so that an input that merely exceeds
        // it is reported with its time.
        match self.outcomes.recv_timeout(PER_INPUT * 3) {
            Ok(Outcome::Done(time)) if time <= PER_INPUT => Ok(time),
            Ok(Outcome::Done(time)) => Err(format!("took {time:.2?}, more than {PER_INPUT:?}")),
            Ok(Outcome::Panicked(why)) => Err(format!("panicked: {why}")),
            Err(_) => Err(format!("still running after {:?}", PER_INPUT * 3)),
        }
    }
}

/// Writes a failing input where it can be picked up, and returns its path.
fn keep_failure(target: &str, label: &str, input: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{target}-{label}"));
    let _ = std::fs::write(&path, input);
    path
}

/// Runs `target`'s regression inputs, then mutated seeds for the budget;
/// panics on the first input that panics or runs past [`PER_INPUT`].
pub fn fuzz(target: Target) -> Figures {
    let worker = Worker::start(target.run);
    let mut figures = Figures {
        regressions: 0,
        cases: 0,
        worst: Duration::ZERO,
        worst_len: 0,
    };
    let regressions = regression_inputs(target.name);
    for (path, bytes) in &regressions {
        match worker.run(bytes.clone()) {
            Ok(time) if time > figures.worst => {
                figures.worst = time;
                figures.worst_len = bytes.len();
            }
            Ok(_) => {}
            Err(why) => panic!(
                "fuzz target `{}`: regression input {} {why}",
                target.name,
                path.display()
            ),
        }
        figures.regressions += 1;
    }
    // Regressions are seeds too: their neighbourhoods are where bugs were.
    let mut seeds = target.seeds.clone();
    seeds.extend(regressions.into_iter().map(|(_, bytes)| bytes));
    assert!(
        !seeds.is_empty(),
        "fuzz target `{}` has no seeds",
        target.name
    );
    let seed = base_seed() ^ fnv(target.name.as_bytes());
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let budget = budget();
    while started.elapsed() < budget {
        let input = mutate(&mut rng, &seeds, &target);
        let len = input.len();
        match worker.run(input.clone()) {
            Ok(time) if time > figures.worst => {
                figures.worst = time;
                figures.worst_len = len;
            }
            Ok(_) => {}
            Err(why) => {
                let label = format!("seed{seed:x}-case{}", figures.cases);
                let path = keep_failure(target.name, &label, &input);
                panic!(
                    "fuzz target `{}`: case {} ({len} bytes, written to {}) {why}",
                    target.name,
                    figures.cases,
                    path.display()
                );
            }
        }
        figures.cases += 1;
    }
    let line = format!(
        "fuzz {}: {} regression input(s) and {} mutated case(s) in {:.1?}, worst {:.2?} per input ({} bytes)\n",
        target.name,
        figures.regressions,
        figures.cases,
        started.elapsed(),
        figures.worst,
        figures.worst_len
    );
    // Past libtest's capture, as the skip reports (tests/common/mod.rs).
    let _ = std::io::stderr().write_all(line.as_bytes());
    figures
}

/// FNV-1a, to give each target its own sequence.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One to four mutations stacked on a seed.
pub fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], target: &Target) -> Vec<u8> {
    let mut input = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        mutate_once(rng, &mut input, seeds, target);
    }
    input.truncate(target.max_len);
    input
}

const INTERESTING_BYTES: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, b'(', b'[', b'{', b'\'', b'"', b'\n'];
const HUGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775808",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "1e308",
    "1e999",
    "-0.0",
];
const EXTREME_WORDS: &[u32] = &[0, 1, 0x7fff, 0xffff, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff];

fn mutate_once(rng: &mut Rng, input: &mut Vec<u8>, seeds: &[Vec<u8>], target: &Target) {
    let len = input.len();
    let at = |rng: &mut Rng| rng.below(len + 1);
    match rng.below(11) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            input[i] = if rng.one_in(2) {
                INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())]
            } else {
                rng.next() as u8
            };
        }
        2 if len > 0 => {
            // Delete a range.
            let start = rng.below(len);
            let end = (start + 1 + rng.below(16.min(len - start))).min(len);
            input.drain(start..end);
        }
        3 if len > 0 => {
            // Duplicate a range in place.
            let start = rng.below(len);
            let end = (start + 1 + rng.below(64.min(len - start))).min(len);
            let copy = input[start..end].to_vec();
            let to = at(rng);
            input.splice(to..to, copy);
        }
        4 => {
            let cut = at(rng);
            input.truncate(cut);
        }
        5 => {
            // Splice: this input's start, another seed's end.
            let other = &seeds[rng.below(seeds.len())];
            let cut = at(rng);
            let from = rng.below(other.len() + 1);
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
        }
        6 if !target.dictionary.is_empty() => {
            let word = target.dictionary[rng.below(target.dictionary.len())];
            let to = at(rng);
            input.splice(to..to, word.iter().copied());
        }
        7 if !target.brackets.is_empty() => {
            // Nest brackets up to a few thousand deep around a part of the input.
            let (open, close) = target.brackets[rng.below(target.brackets.len())];
            let deepest = if rng.one_in(4) { 4000 } else { 40 };
            let depth = 1 + rng.below(deepest);
            let start = at(rng);
            let end = start + rng.below(len - start + 1);
            input.splice(end..end, close.repeat(depth).into_bytes());
            input.splice(start..start, open.repeat(depth).into_bytes());
        }
        8 => {
            // Replace a number (or insert one) with a huge or odd one.
            let number = HUGE_NUMBERS[rng.below(HUGE_NUMBERS.len())].as_bytes();
            let digits: Vec<usize> = (0..len).filter(|&i| input[i].is_ascii_digit()).collect();
            if digits.is_empty() {
                let to = at(rng);
                input.splice(to..to, number.iter().copied());
            } else {
                let mut start = digits[rng.below(digits.len())];
                while start > 0 && input[start - 1].is_ascii_digit() {
                    start -= 1;
                }
                let mut end = start;
                while end < len && input[end].is_ascii_digit() {
                    end += 1;
                }
                input.splice(start..end, number.iter().copied());
            }
        }
        9 if len >= 4 => {
            // A binary length or size field set to an extreme, either byte order.
            let value = EXTREME_WORDS[rng.below(EXTREME_WORDS.len())];
            let little = rng.one_in(2);
            let (le, be) = (value.to_le_bytes(), value.to_be_bytes());
            let width = if rng.one_in(2) { 2 } else { 4 };
            let part: &[u8] = match (width, little) {
                (4, true) => &le,
                (4, false) => &be,
                (_, true) => &le[..2],
                (_, false) => &be[2..],
            };
            let i = rng.below(len - width + 1);
            input[i..i + width].copy_from_slice(part);
        }
        _ => {
            // Insert random bytes.
            let to = at(rng);
            let count = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..count).map(|_| rng.next() as u8).collect();
            input.splice(to..to, bytes);
        }
    }
}
