//! Schedule hints: the options of a region's `#pragma sdsl begin` line.
//!
//! Values are integer expressions as written: literals, host identifiers
//! (`IterPerCall`, `BX`) and `+ - * / %` of them with parentheses, as in
//! OverTile's `time_steps:IterPerCall block:BX*2,8`. An identifier's value comes
//! from a `#define` of the host file before the region, or later from the user
//! (`--set NAME=VALUE`); evaluating a value whose identifier has none is a
//! diagnostic at that identifier.

use std::collections::BTreeMap;

use crate::diag::Diagnostic;
use crate::source::Span;

/// An operator of an option value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HintOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`, truncating as in C.
    Div,
    /// `%`, with the sign of the dividend as in C.
    Rem,
}

/// An integer expression in a pragma option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HintExpr {
    /// A literal.
    Int(i64),
    /// A host identifier.
    Name {
        /// The identifier.
        name: String,
        /// Where it is written.
        span: Span,
    },
    /// `-e`.
    Neg(Box<HintExpr>),
    /// `a op b`.
    Binary(HintOp, Box<HintExpr>, Box<HintExpr>),
}

impl HintExpr {
    /// Calls `f` on every identifier, left to right.
    pub fn for_each_name<'a>(&'a self, f: &mut dyn FnMut(&'a str, Span)) {
        match self {
            HintExpr::Int(_) => {}
            HintExpr::Name { name, span } => f(name, *span),
            HintExpr::Neg(e) => e.for_each_name(f),
            HintExpr::Binary(_, a, b) => {
                a.for_each_name(f);
                b.for_each_name(f);
            }
        }
    }

    /// The value, with identifiers looked up in `values`.
    pub fn evaluate(&self, values: &dyn Fn(&str) -> Option<i64>) -> Result<i64, HintEvalError> {
        match self {
            HintExpr::Int(v) => Ok(*v),
            HintExpr::Name { name, span } => values(name).ok_or(HintEvalError::Unknown {
                name: name.clone(),
                span: *span,
            }),
            HintExpr::Neg(e) => e
                .evaluate(values)?
                .checked_neg()
                .ok_or(HintEvalError::Overflow),
            HintExpr::Binary(op, a, b) => {
                let (a, b) = (a.evaluate(values)?, b.evaluate(values)?);
                match op {
                    HintOp::Add => a.checked_add(b).ok_or(HintEvalError::Overflow),
                    HintOp::Sub => a.checked_sub(b).ok_or(HintEvalError::Overflow),
                    HintOp::Mul => a.checked_mul(b).ok_or(HintEvalError::Overflow),
                    HintOp::Div | HintOp::Rem if b == 0 => Err(HintEvalError::DivisionByZero),
                    HintOp::Div => a.checked_div(b).ok_or(HintEvalError::Overflow),
                    HintOp::Rem => a.checked_rem(b).ok_or(HintEvalError::Overflow),
                }
            }
        }
    }
}

/// Why a [`HintExpr`] has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HintEvalError {
    /// An identifier without a known value.
    Unknown {
        /// The identifier.
        name: String,
        /// Where it is written.
        span: Span,
    },
    /// A division or remainder by zero.
    DivisionByZero,
    /// The result does not fit 64 bits.
    Overflow,
}

/// One value of an option (`BX*2` in `block:BX*2,8`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HintValue {
    /// The expression.
    pub expr: HintExpr,
    /// The text as written, for messages.
    pub text: String,
    /// Where it is written.
    pub span: Span,
}

impl HintValue {
    /// A literal value (for programs built without a pragma).
    pub fn literal(value: u32) -> HintValue {
        HintValue {
            expr: HintExpr::Int(i64::from(value)),
            text: value.to_string(),
            span: Span::new(0, 0),
        }
    }

    /// The value as a positive integer, identifiers looked up in `values`;
    /// `option` names the option for messages.
    pub fn evaluate(
        &self,
        option: &str,
        values: &BTreeMap<String, i64>,
    ) -> Result<u32, Diagnostic> {
        let lookup = |name: &str| values.get(name).copied();
        let value = match self.expr.evaluate(&lookup) {
            Ok(v) => v,
            Err(HintEvalError::Unknown { name, span }) => {
                return Err(Diagnostic::error(
                    format!(
                        "the region's `{option}` option uses the host identifier `{name}`, whose value stencilc does not know"
                    ),
                    span,
                )
                .with_label("no value for this identifier")
                .with_help(format!(
                    "give its value with `--set {name}=VALUE` (an integer), or `#define {name} VALUE` in the host file before the region"
                )))
            }
            Err(HintEvalError::DivisionByZero) => {
                return Err(self.error(option, "divides by zero".into()))
            }
            Err(HintEvalError::Overflow) => {
                return Err(self.error(option, "does not fit a 64-bit integer".into()))
            }
        };
        match u32::try_from(value) {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(self.error(option, format!("is {value}"))),
        }
    }

    fn error(&self, option: &str, what: String) -> Diagnostic {
        Diagnostic::error(
            format!(
                "the region's `{option}` option `{}` {what}, but it must be a positive integer",
                self.text
            ),
            self.span,
        )
        .with_label(format!("{what} here"))
        .with_help("give a value from 1 up (check the identifiers' values and `--set`)")
    }
}

/// Options from `#pragma sdsl begin gpu(block:64,8 tile:1,8 time:10)` or
/// `#pragma sdsl begin time_steps:1 block:8,8,8 tile:1,3,1 time:1`, and
/// stencilc's own `vector:2 shm:none fuse:on` (what `stencilc tune` prints).
///
/// Lists are as written in the pragma; the GPU schedule interprets them
/// ([`ScheduleHints::block_values`], [`ScheduleHints::tile_values`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduleHints {
    /// Threads per block, as written.
    pub block: Option<Vec<HintValue>>,
    /// Points per thread, as written.
    pub tile: Option<Vec<HintValue>>,
    /// Time tile.
    pub time: Option<HintValue>,
    /// `time_steps:` of the OverTile spelling.
    pub time_steps: Option<HintValue>,
    /// `vector:W`: consecutive x points per thread as one vector access
    /// (`--vector`).
    pub vector: Option<HintValue>,
    /// `shm:none`, `shm:auto` or `shm:U,F`: shared-memory staging (`--shm`),
    /// the words as written.
    pub shm: Option<Vec<String>>,
    /// `fuse:on` or `fuse:off`: fuse consecutive stencils (`--fuse`).
    pub fuse: Option<bool>,
    /// Values of the host identifiers the options use, as far as known: from
    /// the host file's `#define`s, then from the user (which take precedence).
    pub values: BTreeMap<String, i64>,
    /// Where the pragma's options are.
    pub span: Span,
}

impl ScheduleHints {
    /// Every host identifier the options use, once each, with its first place.
    pub fn names(&self) -> Vec<(&str, Span)> {
        let mut names: Vec<(&str, Span)> = Vec::new();
        for value in self.all_values() {
            value.expr.for_each_name(&mut |name, span| {
                if !names.iter().any(|(n, _)| *n == name) {
                    names.push((name, span));
                }
            });
        }
        names
    }

    /// Whether the options use the host identifier `name`.
    pub fn uses(&self, name: &str) -> bool {
        self.names().iter().any(|(n, _)| *n == name)
    }

    /// Every value of every integer option, in the order block, tile, time,
    /// time_steps, vector.
    pub fn all_values(&self) -> impl Iterator<Item = &HintValue> {
        self.block
            .iter()
            .flatten()
            .chain(self.tile.iter().flatten())
            .chain(self.time.iter())
            .chain(self.time_steps.iter())
            .chain(self.vector.iter())
    }

    /// Whether the pragma sets any option (the C code uses none of them).
    pub fn any(&self) -> bool {
        self.all_values().next().is_some() || self.shm.is_some() || self.fuse.is_some()
    }

    /// `vector:` evaluated.
    pub fn vector_value(&self) -> Result<Option<u32>, Diagnostic> {
        self.vector
            .as_ref()
            .map(|v| v.evaluate("vector", &self.values))
            .transpose()
    }

    /// `block:` evaluated (threads per block, innermost axis first).
    pub fn block_values(&self) -> Result<Option<Vec<u32>>, Diagnostic> {
        self.list_values(self.block.as_deref(), "block")
    }

    /// `tile:` evaluated (points per thread, innermost axis first).
    pub fn tile_values(&self) -> Result<Option<Vec<u32>>, Diagnostic> {
        self.list_values(self.tile.as_deref(), "tile")
    }

    fn list_values(
        &self,
        list: Option<&[HintValue]>,
        option: &str,
    ) -> Result<Option<Vec<u32>>, Diagnostic> {
        list.map(|values| {
            values
                .iter()
                .map(|v| v.evaluate(option, &self.values))
                .collect()
        })
        .transpose()
    }
}
