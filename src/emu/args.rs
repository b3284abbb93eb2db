//! Kernel arguments from the command line: `NAME=VALUE` for a scalar,
//! `NAME=random:N` and `NAME=zeros:N` for arrays, parsed once against the
//! kernel's parameters ([`parse_specs`]) and made into emulator arguments
//! ([`materialize`]) as often as a caller needs, with another seed each time
//! for the random arrays. `check-kernel` and `synth` share it.

use std::collections::HashMap;

use crate::front::cuda::ast::{Kernel, Scalar, Type};

use super::{Arg, Value};

/// What one parameter is given.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A scalar's value, converted to the parameter's type.
    Scalar(Value),
    /// `random:N`: N deterministic pseudo-random elements.
    Random(usize),
    /// `zeros:N`: N zeros.
    Zeros(usize),
}

/// A bad `--arg`: what is wrong and what to write instead.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgError {
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: String,
}

impl ArgError {
    fn new(message: impl Into<String>, help: impl Into<String>) -> ArgError {
        ArgError {
            message: message.into(),
            help: help.into(),
        }
    }
}

/// Parses `X,Y[,Z]` (`what` is the flag's name, `grid` or `block`, for the
/// message); missing sizes are 1.
pub fn parse_sizes(text: &str, what: &str) -> Result<[u32; 3], ArgError> {
    let parts: Result<Vec<u32>, _> = text.split(',').map(|p| p.trim().parse::<u32>()).collect();
    match parts {
        Ok(p) if (1..=3).contains(&p.len()) && p.iter().all(|&v| v > 0) => {
            Ok([p[0], *p.get(1).unwrap_or(&1), *p.get(2).unwrap_or(&1)])
        }
        _ => Err(ArgError::new(
            format!("`--{what} {text}` is not a list of 1 to 3 positive sizes"),
            format!("write it as X,Y[,Z], as in `--{what} 16,8`"),
        )),
    }
}

/// The arguments `given` (`NAME=VALUE` texts) for every parameter of
/// `kernel`, in parameter order; a missing, unknown or malformed one is an
/// error that says what to write.
pub fn parse_specs(kernel: &Kernel, given: &[String]) -> Result<Vec<ArgSpec>, ArgError> {
    let mut by_name = HashMap::new();
    for arg in given {
        let Some((name, value)) = arg.split_once('=') else {
            return Err(ArgError::new(
                format!("`--arg {arg}` has no value"),
                "write `--arg NAME=VALUE` or `--arg NAME=random:N`",
            ));
        };
        if !kernel.params.iter().any(|p| p.name == name) {
            let names: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
            return Err(ArgError::new(
                format!(
                    "`--arg {arg}`: kernel `{}` has no parameter `{name}`",
                    kernel.name
                ),
                format!("its parameters are {}", names.join(", ")),
            ));
        }
        by_name.insert(name.to_string(), value.to_string());
    }
    let mut specs = Vec::new();
    for param in &kernel.params {
        let Some(value) = by_name.get(&param.name) else {
            let example = match param.ty {
                Type::Pointer(_) => format!("--arg {}=random:1024", param.name),
                _ => format!("--arg {}=16", param.name),
            };
            return Err(ArgError::new(
                format!(
                    "argument `{}` of kernel `{}` is missing",
                    param.name, kernel.name
                ),
                format!("give it, as in `{example}`"),
            ));
        };
        let bad = |what: &str| {
            ArgError::new(
                format!("`--arg {}={value}`: {what}", param.name),
                "scalars take a number; arrays take `random:N` or `zeros:N`",
            )
        };
        specs.push(match param.ty {
            Type::Pointer(_) => {
                let (kind, count) = value.split_once(':').ok_or_else(|| bad("not an array"))?;
                let n: usize = count
                    .parse()
                    .map_err(|_| bad("the count is not a number"))?;
                match kind {
                    "random" => ArgSpec::Random(n),
                    "zeros" => ArgSpec::Zeros(n),
                    _ => return Err(bad("unknown array kind")),
                }
            }
            Type::Scalar(s) => {
                let parsed = if s.is_float() {
                    value
                        .parse::<f64>()
                        .map(|v| Value::Double(v).convert(s))
                        .ok()
                } else {
                    value.parse::<i64>().map(|v| Value::Long(v).convert(s)).ok()
                };
                ArgSpec::Scalar(parsed.ok_or_else(|| bad("not a number"))?)
            }
            _ => return Err(bad("not a kernel parameter")),
        });
    }
    Ok(specs)
}

/// The emulator's arguments for `specs` (from [`parse_specs`] on the same
/// kernel). Random array `k` (the parameter's position) is seeded with
/// `seed + k`: seed 0 gives the arrays `check-kernel` reports on, other seeds
/// other inputs.
pub fn materialize(kernel: &Kernel, specs: &[ArgSpec], seed: u64) -> Vec<Arg> {
    kernel
        .params
        .iter()
        .zip(specs)
        .enumerate()
        .map(|(k, (param, spec))| {
            let elem = match param.ty {
                Type::Pointer(e) | Type::Scalar(e) | Type::Shared(e) => e,
                Type::Void => Scalar::Int,
            };
            match spec {
                ArgSpec::Scalar(v) => Arg::Scalar(*v),
                ArgSpec::Random(n) => Arg::Array(
                    random(*n, seed.wrapping_add(k as u64))
                        .map(|x| array_value(elem, x))
                        .collect(),
                ),
                ArgSpec::Zeros(n) => Arg::Array(vec![Value::zero(elem); *n]),
            }
        })
        .collect()
}

/// Deterministic pseudo-random numbers in [-1, 1) (a 64-bit LCG), so that a
/// reported problem can be reproduced.
fn random(n: usize, seed: u64) -> impl Iterator<Item = f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n).map(move |_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    })
}

fn array_value(elem: Scalar, x: f64) -> Value {
    if elem.is_float() {
        Value::Double(x).convert(elem)
    } else {
        Value::Long((x * 50.0 + 50.0) as i64).convert(elem)
    }
}
