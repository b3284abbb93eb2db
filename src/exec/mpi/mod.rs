//! Runs across processes and machines: MPI domain decomposition.
//!
//! [`layout`] cuts the grid into blocks over a Cartesian grid of ranks and
//! derives the program each rank runs on its block (with ghost layers); it
//! needs no MPI. With the `mpi` Cargo feature, [`halo`] fills ghost layers
//! (neighbours through the Cartesian communicator, boundary modes at the grid's
//! edges), [`driver`] runs the iterate part by part with the interpreter and
//! combines reductions in the single-process order, and [`slab`] reads and
//! writes each rank's block of `.npy` files in place.

pub mod layout;

#[cfg(feature = "mpi")]
pub mod driver;
#[cfg(feature = "mpi")]
pub mod halo;
#[cfg(feature = "mpi")]
pub mod slab;
