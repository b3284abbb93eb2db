//! How the command line shows a scalar: as JSON and as plain text. Apart from
//! the run summary so that `verify`, which the summary reports, can use it too.

use serde_json::{json, Value as Json};
use stencilc::ir::Value;

/// A scalar as JSON: integers stay integers; NaN and infinities become `null`
/// (JSON has no spelling for them).
pub fn value_json(value: Value) -> Json {
    match value {
        Value::Int(v) => json!(v),
        Value::Long(v) => json!(v),
        Value::Float(v) => json!(f64::from(v)),
        Value::Double(v) => json!(v),
    }
}

/// A scalar for people: no C suffix (`0.5`, not `0.5f`), shortest round-trip digits.
pub fn plain_number(value: Value) -> String {
    stencilc::back::text::plain(value)
}
