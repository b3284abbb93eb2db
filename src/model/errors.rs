//! Why the model gives no figure: a block that does not fit the device, or a
//! kernel of a prediction that does not. Typed so that callers that merely
//! report the reason print it and those that need the limit can match on it.

/// A block the device cannot run: the first limit it exceeds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OccupancyError {
    /// More threads per block than the device allows.
    #[error("a block of {threads} threads exceeds the {limit} threads per block of the {device}")]
    Threads {
        /// The block's threads.
        threads: u32,
        /// The device's limit.
        limit: u32,
        /// The device's name.
        device: &'static str,
    },
    /// More shared memory per block than the device allows.
    #[error(
        "{bytes} bytes of shared memory per block exceed the {limit} bytes a block may use on \
         the {device}"
    )]
    SharedMemory {
        /// The block's shared memory.
        bytes: usize,
        /// The device's limit per block.
        limit: u32,
        /// The device's name.
        device: &'static str,
    },
    /// The block's registers exceed an SM's.
    #[error(
        "a block of {threads} threads at {registers} registers each needs {needed} registers, \
         more than the {available} of an SM of the {device}"
    )]
    Registers {
        /// The block's threads.
        threads: u32,
        /// Registers per thread.
        registers: u32,
        /// Registers the block needs, as allocated per warp.
        needed: u32,
        /// Registers of an SM.
        available: u32,
        /// The device's name.
        device: &'static str,
    },
}

/// A prediction the model cannot make: one of the kernels does not fit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}` does not fit the {device}: {source}")]
pub struct PredictError {
    /// The kernel.
    pub kernel: String,
    /// The device's name.
    pub device: &'static str,
    /// The limit it exceeds.
    pub source: OccupancyError,
}
