//! The reference interpreter: defines what every program means.
//!
//! (Placeholder until the interpreter lands.)
