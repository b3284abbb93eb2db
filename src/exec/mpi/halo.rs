//! Ghost layers: filled from the neighbouring ranks (non-blocking sends and
//! receives), or at the grid's edge from the field's boundary mode.
//!
//! Axes are done in order, each slab spanning the whole local extent of the
//! other axes, so that once the last axis is done the corners hold the
//! diagonal neighbours' values (what stencils that read diagonally need)
//! without diagonal messages.

use mpi::request::{scope, WaitGuard};
use mpi::topology::CartesianCommunicator;
use mpi::traits::*;

use crate::exec::mpi::layout::Layout;
use crate::exec::FieldState;
use crate::ir::BoundaryMode;

/// One rank's view of the decomposition: its place and its neighbours.
pub struct Neighbourhood<'c> {
    /// The Cartesian communicator (periodic on every axis, so that periodic
    /// fields can wrap; other fields do not use the wrap-around link).
    pub comm: &'c CartesianCommunicator,
    /// The layout.
    pub layout: &'c Layout,
    /// This rank's coordinates.
    pub coords: Vec<usize>,
}

/// Bytes of one element and the local array's shape.
struct Array<'a> {
    bytes: &'a mut [u8],
    elem: usize,
    dims: &'a [usize],
}

impl Array<'_> {
    /// (outer count, extent of `axis`, bytes of one index along `axis`).
    fn shape(&self, axis: usize) -> (usize, usize, usize) {
        let outer: usize = self.dims[..axis].iter().product();
        let inner: usize = self.dims[axis + 1..].iter().product();
        (outer, self.dims[axis], inner * self.elem)
    }

    fn pack(&self, axis: usize, from: usize, width: usize) -> Vec<u8> {
        let (outer, extent, plane) = self.shape(axis);
        let mut out = Vec::with_capacity(outer * width * plane);
        for o in 0..outer {
            let start = (o * extent + from) * plane;
            out.extend_from_slice(&self.bytes[start..start + width * plane]);
        }
        out
    }

    fn unpack(&mut self, axis: usize, from: usize, width: usize, data: &[u8]) {
        let (outer, extent, plane) = self.shape(axis);
        for o in 0..outer {
            let start = (o * extent + from) * plane;
            let src = o * width * plane;
            self.bytes[start..start + width * plane]
                .copy_from_slice(&data[src..src + width * plane]);
        }
    }

    /// Index `to` along `axis` becomes a copy of index `from` (or zeros).
    fn copy_plane(&mut self, axis: usize, from: Option<usize>, to: usize) {
        let (outer, extent, plane) = self.shape(axis);
        for o in 0..outer {
            let dst = (o * extent + to) * plane;
            match from {
                Some(from) => {
                    let src = (o * extent + from) * plane;
                    self.bytes.copy_within(src..src + plane, dst);
                }
                None => self.bytes[dst..dst + plane].fill(0),
            }
        }
    }
}

impl Neighbourhood<'_> {
    /// Fills the ghost layers of level `level` of field `field` and returns
    /// the bytes sent. `during`, if given, runs once while the first axis's
    /// messages are in flight (the interior of a part, which reads no ghost).
    pub fn exchange(
        &self,
        state: &mut FieldState,
        (field, level): (usize, usize),
        boundary: BoundaryMode,
        mut during: Option<&mut dyn FnMut(&mut FieldState)>,
    ) -> u64 {
        let dims = self.layout.local_dims(&self.coords);
        let elem = state.fields[field][level].ty().size_bytes();
        let mut sent = 0u64;
        for axis in 0..dims.len() {
            let d = self.layout.dims[axis];
            if d == 1 {
                continue;
            }
            let (g_lo, g_hi) = self.layout.ghost[axis];
            let c = self.coords[axis];
            let (start, own) = self.layout.block(axis, c);
            let periodic = boundary == BoundaryMode::Periodic;
            let (below, above) = self.comm.shift(axis as i32, 1);
            let below = below.filter(|_| c > 0 || periodic);
            let above = above.filter(|_| c + 1 < d || periodic);
            // Tags say which way data travels, so that a rank that is both
            // neighbours (2 ranks, periodic) matches them right.
            const UP: i32 = 0;
            const DOWN: i32 = 1;
            let (to_above, to_below, plane) = {
                let array = Array {
                    bytes: state.fields[field][level].as_bytes_mut(),
                    elem,
                    dims: &dims,
                };
                (
                    above.map(|_| array.pack(axis, own, g_lo)),
                    below.map(|_| array.pack(axis, g_lo, g_hi)),
                    array.shape(axis).2,
                )
            };
            let outer: usize = dims[..axis].iter().product();
            let mut from_below = vec![0u8; outer * g_lo * plane];
            let mut from_above = vec![0u8; outer * g_hi * plane];
            scope(|scope| {
                let mut guards: Vec<WaitGuard<'_, [u8], _>> = Vec::new();
                if let Some(r) = below {
                    guards.push(
                        self.comm
                            .process_at_rank(r)
                            .immediate_receive_into_with_tag(scope, &mut from_below[..], UP)
                            .into(),
                    );
                }
                if let Some(r) = above {
                    guards.push(
                        self.comm
                            .process_at_rank(r)
                            .immediate_receive_into_with_tag(scope, &mut from_above[..], DOWN)
                            .into(),
                    );
                }
                if let (Some(r), Some(data)) = (above, &to_above) {
                    guards.push(
                        self.comm
                            .process_at_rank(r)
                            .immediate_send_with_tag(scope, &data[..], UP)
                            .into(),
                    );
                }
                if let (Some(r), Some(data)) = (below, &to_below) {
                    guards.push(
                        self.comm
                            .process_at_rank(r)
                            .immediate_send_with_tag(scope, &data[..], DOWN)
                            .into(),
                    );
                }
                if let Some(during) = during.take() {
                    during(state);
                }
                drop(guards);
            });
            sent += to_above.map_or(0, |v| v.len() as u64) + to_below.map_or(0, |v| v.len() as u64);
            let mut array = Array {
                bytes: state.fields[field][level].as_bytes_mut(),
                elem,
                dims: &dims,
            };
            if below.is_some() {
                array.unpack(axis, 0, g_lo, &from_below);
            } else {
                self.fill_edge(&mut array, axis, boundary, start, (0..g_lo).collect());
            }
            if above.is_some() {
                array.unpack(axis, g_lo + own, g_hi, &from_above);
            } else {
                self.fill_edge(
                    &mut array,
                    axis,
                    boundary,
                    start,
                    (g_lo + own..g_lo + own + g_hi).collect(),
                );
            }
        }
        if let Some(during) = during {
            during(state);
        }
        sent
    }

    /// Ghost planes `ghosts` at the grid's edge along `axis`, from the
    /// boundary mode: the plane it reads (inside this block, which
    /// [`Layout::new`] made at least as thick as the reach), or zeros.
    fn fill_edge(
        &self,
        array: &mut Array<'_>,
        axis: usize,
        boundary: BoundaryMode,
        start: usize,
        ghosts: Vec<usize>,
    ) {
        if boundary == BoundaryMode::None {
            return; // never read
        }
        let n = self.layout.global[axis] as i64;
        let g_lo = self.layout.ghost[axis].0 as i64;
        let own = self.layout.block(axis, self.coords[axis]).1 as i64;
        for ghost in ghosts {
            let global = start as i64 - g_lo + ghost as i64;
            let from = boundary
                .resolve(global, n)
                .map(|src| src - start as i64 + g_lo);
            // A source outside the block (mirror on a block thinner than the
            // reach) cannot be filled here; Layout::new refused such blocks.
            let from = from.filter(|&f| f >= g_lo && f < g_lo + own);
            array.copy_plane(axis, from.map(|f| f as usize), ghost);
        }
    }
}
