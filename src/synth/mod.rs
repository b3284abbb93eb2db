//! Shared-memory synthesis for hand-written CUDA kernels (KaniCUDA): the profiles of marked reads that the emulator records and the synthesizer learns from.
pub mod table;
