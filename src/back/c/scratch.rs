//! The time-tiled sweeps' per-thread scratch (windows and snapshots), kept
//! from sweep to sweep for the whole run.
//!
//! A sweep used to `malloc` its windows and snapshot rings inside its
//! parallel region and `free` them at the end. Blocks that large come
//! straight from the system (`mmap`), so every sweep paid the first touch
//! of tens of MiB per thread again: page faults and zero-filled pages, and
//! `munmap`'s TLB shootdowns. In 3-D, where sweeps are a few iterations and
//! a thread's snapshots are planes, that was 10-15 % of a sweep (star3d1r
//! at 512³, T = 8, tiles of 64 × 512 points per plane: 58-65 ms per
//! iteration before, 49-52 after, on the 2-core development machine; see
//! `bench/NOTES.md`). Now the run function
//! owns an `sdsl_scratch`, one block per thread that grows when a sweep
//! needs more (never shrinks), and frees it on every way out of the run.

use std::rc::Rc;

use crate::back::c::writer::Writer;

/// The C of `sdsl_scratch` and its three functions, printed once per
/// translation unit (guarded, as several embedded programs may share one).
const SCRATCH_C: &[&str] = &[
    "#ifndef SDSL_SCRATCH",
    "#define SDSL_SCRATCH",
    "/* The time-tiled sweeps' scratch, one block per thread, kept from sweep to sweep so that",
    "   a run allocates (and the system zero-fills) its windows and snapshots once. */",
    "typedef struct {",
    "    char **block;",
    "    size_t *bytes;",
    "    long threads;",
    "} sdsl_scratch;",
    "/* Room for `threads` blocks; 0, or 3 when out of memory. */",
    "static int sdsl_scratch_reserve(sdsl_scratch *scratch, long threads)",
    "{",
    "    if (threads <= scratch->threads) return 0;",
    "    char **block = (char **)realloc(scratch->block, (size_t)threads * sizeof(char *));",
    "    if (block == NULL) return 3;",
    "    scratch->block = block;",
    "    size_t *bytes = (size_t *)realloc(scratch->bytes, (size_t)threads * sizeof(size_t));",
    "    if (bytes == NULL) return 3;",
    "    scratch->bytes = bytes;",
    "    for (long t = scratch->threads; t < threads; t++) {",
    "        scratch->block[t] = NULL;",
    "        scratch->bytes[t] = 0;",
    "    }",
    "    scratch->threads = threads;",
    "    return 0;",
    "}",
    "/* Thread `me`'s block of at least `bytes`, or NULL when out of memory. */",
    "static char *sdsl_scratch_block(sdsl_scratch *scratch, long me, size_t bytes)",
    "{",
    "    if (scratch->bytes[me] < bytes) {",
    "        free(scratch->block[me]);",
    "        scratch->block[me] = (char *)malloc(bytes);",
    "        scratch->bytes[me] = scratch->block[me] == NULL ? 0 : bytes;",
    "    }",
    "    return scratch->block[me];",
    "}",
    "static void sdsl_scratch_free(sdsl_scratch *scratch)",
    "{",
    "    for (long t = 0; t < scratch->threads; t++) free(scratch->block[t]);",
    "    free(scratch->block);",
    "    free(scratch->bytes);",
    "    scratch->block = NULL;",
    "    scratch->bytes = NULL;",
    "    scratch->threads = 0;",
    "}",
    "#endif",
];

impl Writer<'_> {
    /// Prints `sdsl_scratch` (see the module doc), before the sweep.
    pub(super) fn scratch_type(&mut self) {
        for line in SCRATCH_C {
            self.line(line);
        }
    }

    /// In the sweep, before its parallel region: room for a block per
    /// thread of its team (at most its `num_threads`, else OpenMP's
    /// maximum), or status 3.
    pub(super) fn scratch_reserve(&mut self) {
        let scratch = self.names.temp("scratch");
        let team = match self.threads {
            Some(n) => n.to_string(),
            None => "omp_get_max_threads()".to_string(),
        };
        self.line("#ifdef _OPENMP");
        self.line(&format!(
            "if (sdsl_scratch_reserve({scratch}, {team}) != 0) return 3;"
        ));
        self.line("#else");
        self.line(&format!(
            "if (sdsl_scratch_reserve({scratch}, 1) != 0) return 3;"
        ));
        self.line("#endif");
    }

    /// In the parallel region: thread `me`'s block, cut into `buffers`
    /// (each `(name, bytes)`, bytes a multiple of 64); every name is NULL
    /// when the block could not be had. Returns the test that it could not.
    pub(super) fn scratch_buffers(&mut self, me: &str, buffers: &[(String, String)]) -> String {
        let n = Rc::clone(&self.names);
        let scratch = n.temp("scratch");
        let total: Vec<String> = buffers.iter().map(|(_, bytes)| bytes.clone()).collect();
        let (first, _) = &buffers[0];
        self.line(&format!(
            "char *{first} = sdsl_scratch_block({scratch}, {me}, (size_t)({}));",
            total.join(" + ")
        ));
        let broken = n.temp("broken");
        self.line(&format!("const int {broken} = {first} == NULL;"));
        let mut offset = Vec::new();
        for pair in buffers.windows(2) {
            let ((_, bytes), (name, _)) = (&pair[0], &pair[1]);
            offset.push(bytes.clone());
            self.line(&format!(
                "char *{name} = {broken} ? NULL : {first} + {};",
                offset.join(" + ")
            ));
        }
        broken
    }

    /// What the run function does before it returns once the sweeps may
    /// have run: free the scratch (nothing when it does not time-tile).
    pub(super) fn run_cleanup(&self) -> String {
        if self.tiling.is_some() {
            format!("sdsl_scratch_free(&{});", self.names.temp("scratch"))
        } else {
            String::new()
        }
    }
}
