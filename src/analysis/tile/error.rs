//! Why an iteration cannot be time-tiled, run as a wavefront or march: one
//! error per question, each variant naming the construct that prevents it,
//! so that a caller can print the reason in its note or tell the cases apart.

/// Why an iteration cannot be time-tiled at all ([`super::tile_shape`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TileShapeError {
    /// The program has no iterate to tile.
    #[error("the program has no iterate")]
    NoIterate,
    /// A stencil touches fields of two grids.
    #[error(
        "stencil `{stencil}` uses fields of grid `{first}` and of grid `{second}` (tiles \
         cover one grid)"
    )]
    TwoGrids {
        /// The stencil.
        stencil: String,
        /// The grid of the fields met first.
        first: String,
        /// The other grid.
        second: String,
    },
    /// A stencil writes a field away from its own point.
    #[error("stencil `{stencil}` writes `{field}` at another point than its own")]
    WritesAway {
        /// The stencil.
        stencil: String,
        /// The field written.
        field: String,
    },
    /// A stencil reads at an offset a parameter gives.
    #[error("stencil `{stencil}` reads `{field}` at an offset that depends on a parameter")]
    ParameterOffset {
        /// The stencil.
        stencil: String,
        /// The field read.
        field: String,
    },
    /// A stencil reads a level it writes in the same step, away from the point.
    #[error(
        "stencil `{stencil}` reads `[{time}]{field}`, which it writes in the same step, away \
         from the point"
    )]
    ReadsWhatItWrites {
        /// The stencil.
        stencil: String,
        /// The level read.
        time: i32,
        /// The field read.
        field: String,
    },
    /// The iterate runs no stencil.
    #[error("the iterate has no stencil")]
    NoStencil,
    /// A part's subset has another rank than its grid.
    #[error("a stencil part's subset has another rank than its grid")]
    SubsetRank,
}

/// Why an iteration cannot run in the wavefront order
/// ([`super::TileShape::wavefront`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WavefrontError {
    /// The grid is 1-D.
    #[error("the grid is 1-D, so a row of the wave would be one point")]
    OneDimensional,
    /// A periodic boundary is read across the outermost axis.
    #[error(
        "a periodic boundary is read across the outermost axis, whose wrapped reads the wave \
         reaches last"
    )]
    PeriodicOutermost,
}

/// Why an iteration cannot march ([`super::march_shape`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MarchError {
    /// The grid is neither 2-D nor 3-D.
    #[error("the grid is {0}-D (a march takes 2-D and 3-D grids)")]
    Rank(usize),
    /// The program has no iterate.
    #[error("the program has no iterate")]
    NoIterate,
    /// An iteration runs other than one stencil part.
    #[error("an iteration runs {0} stencil parts (a march takes one)")]
    Parts(usize),
    /// The stencil uses other fields than the one it updates.
    #[error("the stencil uses more than the one field it updates (a march takes one)")]
    OtherFields,
    /// The field the stencil writes is not the one it reads.
    #[error("the stencil does not update the field it reads")]
    NotUpdated,
    /// The field has other than two time levels.
    #[error("`{field}` has {levels} time levels (a march takes two)")]
    Levels {
        /// The field.
        field: String,
        /// Its levels.
        levels: usize,
    },
    /// A periodic boundary is read across an axis.
    #[error("a periodic boundary is read across an axis")]
    Periodic,
    /// The stencil writes the lower level.
    #[error("the stencil writes `[{time}]{field}` (a march writes the upper level only)")]
    WritesLower {
        /// The lower level.
        time: i32,
        /// The field.
        field: String,
    },
    /// The stencil reads the level it writes.
    #[error("the stencil reads `[{time}]{field}`, the level it writes")]
    ReadsUpper {
        /// The upper level.
        time: i32,
        /// The field.
        field: String,
    },
}
