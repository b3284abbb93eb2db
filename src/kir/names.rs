//! The namer of the code stencilc generates from a program: the identifiers of the
//! C back-end (with `compile`'s overtile host code) and of the kernel IR's CUDA and
//! OpenCL come from a [`Namer`], which hands out readable names that collide
//! neither with each other nor with any word the targets reserve. Fixed helper
//! names (`sdsl_div_i32`, ...), the CUDA-to-OpenCL printer of hand-written kernels
//! and `map`'s emitters for C loop nests name what they print themselves.
//!
//! Names are asked for by what they name (an [`Entity`] of the program, or a
//! temporary the generated code introduces) with a preferred spelling: the
//! program's own name where there is one. The preferred spelling is kept when it
//! is free; otherwise a suffix is added (`short` becomes `short_`, a second
//! `tile` becomes `tile_2`). Entities the program declares are named before the
//! generated code's temporaries, so a temporary gives way to a user's name, never
//! the other way round.
//!
//! A [`Namer::new`] reserves the words of every target (C, C++, OpenCL C and CUDA
//! C, with their built-in functions, types and macros), so a program's generated
//! code uses the same names on every back-end. A [`Namer::for_language`] reserves
//! only one [`Language`]'s words, for a printer that translates a program already
//! written in one language into another and keeps its names where it can.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::ir::{ConstId, FieldId, GridId, ParamId, ReductionId, TableId};

/// Keywords of C (C89 to C23) and C++.
#[rustfmt::skip]
const C_AND_CPP_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "alignas", "alignof", "bool", "constexpr",
    "false", "nullptr", "static_assert", "thread_local", "true", "typeof", "typeof_unqual",
    "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t",
    "class", "co_await", "co_return", "co_yield", "compl", "concept", "consteval", "constinit",
    "const_cast", "decltype", "delete", "dynamic_cast", "explicit", "export", "friend",
    "mutable", "namespace", "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq",
    "private", "protected", "public", "reinterpret_cast", "requires", "static_cast", "template",
    "this", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor",
    "xor_eq", "final", "override", "import", "module",
];

/// Names the C library headers the generated C includes (`math.h`, `stdlib.h`,
/// `string.h`) and OpenMP declare or define as macros, and common types.
#[rustfmt::skip]
const C_LIBRARY: &[&str] = &[
    "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "NULL", "EOF", "M_PI", "M_E",
    "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uchar", "ushort", "uint", "ulong", "malloc",
    "calloc", "realloc", "free", "abort", "exit", "abs", "labs", "llabs", "div", "ldiv",
    "memcpy", "memset", "memmove", "memcmp", "strlen", "strcmp", "strcpy", "printf", "errno",
    "assert", "main", "min", "max", "isnan", "isinf", "isfinite", "signbit", "fpclassify",
    "float_t", "double_t", "omp_get_thread_num", "omp_get_num_threads", "complex", "imaginary",
    "_Complex", "_Bool", "offsetof", "va_list", "time", "clock", "rand", "select",
];

/// `math.h` functions (each also has `f` and `l` forms, see [`is_reserved`]).
#[rustfmt::skip]
const MATH_FUNCTIONS: &[&str] = &[
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
    "cos", "cosh", "erf", "erfc", "exp", "exp2", "expm1", "fabs", "fdim", "floor", "fma",
    "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "llrint", "llround",
    "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan", "nearbyint",
    "nextafter", "nexttoward", "pow", "remainder", "remquo", "rint", "round", "scalbln",
    "scalbn", "sin", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc", "rsqrt", "sincos",
    "sinpi", "cospi", "tanpi", "exp10", "rcbrt", "mad", "clamp", "mix", "sign", "step",
    "smoothstep", "degrees", "radians", "dot", "cross", "length", "distance", "normalize",
    "pown", "powr", "rootn", "native_sqrt", "native_exp", "native_log", "native_sin",
    "native_cos", "native_divide", "native_recip", "half_sqrt", "half_exp", "mul24", "mad24",
    "popcount", "clz", "ctz", "rotate", "hadd", "rhadd", "abs_diff", "add_sat", "sub_sat",
    "upsample", "isequal", "isnotequal", "isgreater", "isless", "any", "all", "bitselect",
    "shuffle", "shuffle2", "fract", "maxmag", "minmag",
];

/// OpenCL C: address-space and access qualifiers, types, work-item and
/// synchronisation built-ins, and macros.
#[rustfmt::skip]
const OPENCL: &[&str] = &[
    "kernel", "__kernel", "global", "__global", "local", "__local", "constant", "__constant",
    "private", "__private", "generic", "__generic", "read_only", "write_only", "read_write",
    "__read_only", "__write_only", "__read_write", "uniform", "pipe", "half", "quad",
    "image1d_t", "image2d_t", "image3d_t", "image1d_array_t", "image2d_array_t",
    "image1d_buffer_t", "sampler_t", "event_t", "queue_t", "clk_event_t", "ndrange_t",
    "reserve_id_t", "cl_mem_fence_flags", "memory_scope", "memory_order", "atomic_int",
    "atomic_uint", "atomic_float", "atomic_flag", "get_work_dim", "get_global_size",
    "get_global_id", "get_local_size", "get_enqueued_local_size", "get_local_id",
    "get_num_groups", "get_group_id", "get_global_offset", "get_global_linear_id",
    "get_local_linear_id", "get_sub_group_size", "get_sub_group_id", "barrier",
    "work_group_barrier", "mem_fence", "read_mem_fence", "write_mem_fence",
    "CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE", "async_work_group_copy", "wait_group_events",
    "prefetch", "vload", "vstore", "convert", "as_int", "as_float", "as_uint", "as_double",
    "as_long", "printf", "MAXFLOAT", "FLT_MAX", "FLT_MIN", "FLT_EPSILON", "DBL_MAX", "DBL_MIN",
    "DBL_EPSILON", "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX", "LONG_MIN", "CHAR_BIT",
    "FP_CONTRACT", "OPENCL", "EXTENSION", "__OPENCL_VERSION__", "__FILE__", "__LINE__",
    "__attribute__", "__restrict", "reqd_work_group_size", "work_group_size_hint",
    "vec_type_hint", "aligned", "packed", "endian", "cl_khr_fp64", "atomic_add", "atomic_sub",
    "atomic_xchg", "atomic_inc", "atomic_dec", "atomic_cmpxchg", "atomic_min", "atomic_max",
    "atomic_and", "atomic_or", "atomic_xor", "atom_add", "sub_group_reduce_add",
    "work_group_reduce_add",
];

/// CUDA C: execution-space and memory qualifiers, built-in variables and types,
/// intrinsics NVRTC declares without headers.
#[rustfmt::skip]
const CUDA: &[&str] = &[
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__",
    "__restrict__", "__forceinline__", "__noinline__", "__launch_bounds__", "threadIdx",
    "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "__syncthreads",
    "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp",
    "__threadfence", "__threadfence_block", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
    "__shfl_xor_sync", "__shfl", "__shfl_down", "__ballot_sync", "__any_sync", "__all_sync",
    "__activemask", "__ldg", "__popc", "__clz", "__ffs", "__brev", "__fmaf_rn", "__fdividef",
    "__expf", "__logf", "__sinf", "__cosf", "__powf", "__int_as_float", "__float_as_int",
    "__double_as_longlong", "__longlong_as_double", "__float2int_rn", "__int2float_rn",
    "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc", "atomicDec",
    "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "clock64", "cudaError_t", "cudaSuccess",
    "make_int2", "make_int3", "make_int4", "make_float2", "make_float3", "make_float4",
    "make_double2", "__half", "__half2", "nv_bfloat16", "__nv_bfloat16", "texture", "surface",
    "cudaTextureObject_t", "tex1Dfetch", "tex2D", "__CUDACC__", "__CUDA_ARCH__", "__NVCC__",
    "__CUDACC_RTC__", "signbit", "std",
];

/// Base names of the vector types (`int4`, `float2`, `uchar16`, `longlong2`...).
#[rustfmt::skip]
const VECTOR_BASES: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double",
    "half", "longlong", "ulonglong", "bool",
];

/// Prefixes of names stencilc keeps for its own helpers (`sdsl_min`, `sc_clamp`,
/// `SDSL_RESTRICT`), never given to a program's entity.
const OWN_PREFIXES: &[&str] = &["sdsl_", "sc_", "SDSL_"];

/// A language of the generated code: what it reserves, and how it spells a
/// literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// C (C99 and later, with `math.h`), as the C back-end prints it.
    C,
    /// CUDA C++, as NVRTC compiles it (no headers).
    Cuda,
    /// OpenCL C 1.2.
    OpenCl,
}

fn reserved_set() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        [C_AND_CPP_KEYWORDS, C_LIBRARY, MATH_FUNCTIONS, OPENCL, CUDA]
            .iter()
            .flat_map(|list| list.iter().copied())
            .collect()
    })
}

/// The words one language reserves: C's and C++'s keywords (a C back-end's
/// code may be compiled as C++), the C library and math names every target
/// has, and the language's own built-ins.
fn language_set(language: Language) -> &'static HashSet<&'static str> {
    static SETS: OnceLock<[HashSet<&'static str>; 3]> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        let with = |own: &[&'static str]| -> HashSet<&'static str> {
            [C_AND_CPP_KEYWORDS, C_LIBRARY, MATH_FUNCTIONS, own]
                .iter()
                .flat_map(|list| list.iter().copied())
                .collect()
        };
        [with(&[]), with(CUDA), with(OPENCL)]
    });
    &sets[language as usize]
}

/// Prefixes that make every name starting with them reserved: OpenCL built-in
/// families (`convert_int4`, `as_float`, `vload4`, `atomic_add`) and stencilc's
/// own helpers. Suffixing such a name never frees it.
fn has_reserved_prefix(word: &str) -> bool {
    ["convert_", "as_", "vload", "vstore", "atomic_"]
        .iter()
        .chain(OWN_PREFIXES)
        .any(|p| word.starts_with(p))
}

/// Whether `word` is reserved in some target: a keyword, built-in type, function,
/// variable or macro of C, C++, OpenCL C or CUDA C, a name the implementation
/// reserves (`_X`, or with `__` anywhere, as C++ has it), or one with a prefix of
/// a built-in family or of stencilc's own helpers.
pub fn is_reserved(word: &str) -> bool {
    reserved_by(word, reserved_set(), true)
}

/// Whether `word` is reserved in `language`, as [`is_reserved`] has it for
/// every language at once (vector types and OpenCL's built-in families are
/// reserved in CUDA and OpenCL C only).
pub fn is_reserved_in(word: &str, language: Language) -> bool {
    reserved_by(word, language_set(language), language != Language::C)
}

fn reserved_by(word: &str, set: &HashSet<&str>, vectors: bool) -> bool {
    if set.contains(word) || word.contains("__") || has_reserved_prefix(word) {
        return true;
    }
    // `sqrtf`, `sqrtl`: the float and long double forms of the math functions.
    if let Some(stem) = word.strip_suffix('f').or_else(|| word.strip_suffix('l')) {
        if MATH_FUNCTIONS.contains(&stem) {
            return true;
        }
    }
    // Vector types: `int2` .. `int16` (OpenCL), `int1` .. `int4` (CUDA).
    let digits = word.trim_end_matches(|c: char| c.is_ascii_digit());
    if vectors && digits.len() < word.len() && VECTOR_BASES.contains(&digits) {
        return true;
    }
    let mut chars = word.chars();
    chars.next() == Some('_') && chars.next().is_some_and(|c| c.is_ascii_uppercase())
}

/// A valid identifier made from any text: `my-prog.v2` becomes `my_prog_v2`, an
/// empty text or one starting with a digit gets a leading `v`.
pub fn identifier(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    out
}

/// What a name names: an entity of the program, or one of the generated code's
/// own variables (by role, with a number where there are several).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Entity {
    /// A parameter.
    Param(ParamId),
    /// A constant.
    Const(ConstId),
    /// A field as a whole (its array of time levels).
    Field(FieldId),
    /// One time level of a field.
    Level(FieldId, i32),
    /// A coefficient table.
    Table(TableId),
    /// A stencil, by position in the iterate.
    Stencil(usize),
    /// A reduction.
    Reduction(ReductionId),
    /// The size of a grid along an axis (outermost first).
    GridSize(GridId, usize),
    /// The element stride of a grid along an axis.
    GridStride(GridId, usize),
    /// The linear index of the current point in a grid.
    GridPoint(GridId),
    /// A variable of the generated code itself, by its role and a number.
    Temp(&'static str, usize),
}

/// Hands out collision-free names. Cloning gives a nested scope: names taken in
/// the clone are unknown to the original, names taken before stay taken.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Namer {
    taken: HashSet<String>,
    named: HashMap<Entity, String>,
    /// The one language whose words are reserved; `None`: every language's.
    language: Option<Language>,
}

impl Namer {
    /// A namer with nothing taken but the words every language reserves.
    pub fn new() -> Namer {
        Namer::default()
    }

    /// A namer with nothing taken but the words `language` reserves.
    pub fn for_language(language: Language) -> Namer {
        Namer {
            language: Some(language),
            ..Namer::default()
        }
    }

    /// Whether `name` is reserved in this namer's language (or languages).
    pub fn is_reserved(&self, name: &str) -> bool {
        match self.language {
            Some(language) => is_reserved_in(name, language),
            None => is_reserved(name),
        }
    }

    /// Whether `name` can still be handed out.
    pub fn is_free(&self, name: &str) -> bool {
        !self.is_reserved(name) && !self.taken.contains(name)
    }

    /// A new name as close to `preferred` as is free, now taken: `preferred`
    /// itself, else with `_`, else with `_2`, `_3`... A name no suffix could
    /// free is first made plain: runs of `_` become one `_` and leading ones go
    /// (`__syncthreads` becomes `syncthreads`), and a reserved prefix gets a `v_`
    /// before it (`sdsl_min` becomes `v_sdsl_min`).
    pub fn fresh(&mut self, preferred: &str) -> String {
        let candidate = self.free_candidate(preferred, |_| true);
        self.taken.insert(candidate.clone());
        candidate
    }

    /// The first of [`Namer::fresh`]'s candidates for `preferred` that is free
    /// here and that `also_free` accepts, not taken.
    pub fn free_candidate(&self, preferred: &str, also_free: impl Fn(&str) -> bool) -> String {
        let mut base = identifier(preferred);
        if base.contains("__") || base.starts_with('_') {
            let parts: Vec<&str> = base.split('_').filter(|p| !p.is_empty()).collect();
            base = parts.join("_");
            if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
                base.insert(0, 'v');
            }
        }
        if has_reserved_prefix(&base) {
            base.insert_str(0, "v_");
        }
        // `tile_` + `_` would hold `__`: a base ending in `_` takes bare numbers.
        let stem = if base.ends_with('_') {
            base.clone()
        } else {
            format!("{base}_")
        };
        let free = |name: &str| self.is_free(name) && also_free(name);
        let mut candidate = base.clone();
        if !free(&candidate) {
            candidate = stem.clone();
        }
        let mut n = 2;
        while !free(&candidate) {
            candidate = format!("{stem}{n}");
            n += 1;
        }
        candidate
    }

    /// The name of `entity`: given on first request (as close to `preferred` as is
    /// free), the same on every later one.
    pub fn name(&mut self, entity: Entity, preferred: &str) -> String {
        if let Some(name) = self.named.get(&entity) {
            return name.clone();
        }
        let name = self.fresh(preferred);
        self.named.insert(entity, name.clone());
        name
    }

    /// The name already given to `entity`.
    ///
    /// # Panics
    /// When `entity` was never named: a bug in the back-end, which names every
    /// entity it prints before printing.
    pub fn get(&self, entity: &Entity) -> &str {
        match self.named.get(entity) {
            Some(name) => name,
            None => panic!("no name was given to {entity:?}"),
        }
    }

    /// Marks `name` as taken without giving it to anything (a name the
    /// surrounding code owns, such as a host variable).
    pub fn take(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_word_class_is_reserved() {
        for word in [
            "short",
            "int",
            "restrict",
            "signed",
            "kernel",
            "global",
            "local",
            "constant",
            "private",
            "half",
            "threadIdx",
            "blockDim",
            "__syncthreads",
            "get_global_id",
            "min",
            "max",
            "abs",
            "sqrt",
            "sqrtf",
            "int4",
            "float2",
            "uchar16",
            "class",
            "template",
            "NAN",
            "convert_int4",
            "_Bool",
            "sdsl_min",
            "sc_clamp",
            "a__b",
        ] {
            assert!(is_reserved(word), "{word} should be reserved");
        }
        for word in ["a", "scratch", "a_tile", "g_n0", "value", "tile", "sigma2"] {
            assert!(!is_reserved(word), "{word} should be free");
        }
    }

    #[test]
    fn names_stay_readable_and_never_collide() {
        let mut namer = Namer::new();
        assert_eq!(namer.name(Entity::Param(ParamId(0)), "short"), "short_");
        assert_eq!(namer.name(Entity::Param(ParamId(1)), "tile"), "tile");
        assert_eq!(namer.fresh("tile"), "tile_");
        assert_eq!(namer.fresh("tile"), "tile_2");
        assert_eq!(namer.fresh("tile_"), "tile_3");
        assert_eq!(namer.name(Entity::Param(ParamId(1)), "other"), "tile");
        assert_eq!(namer.fresh("3d-grid"), "v3d_grid");
        // Names no suffix could free are made plain first (this looped forever).
        assert_eq!(namer.fresh("__syncthreads"), "syncthreads");
        assert_eq!(namer.fresh("__syncthreads"), "syncthreads_");
        assert_eq!(namer.fresh("sdsl_min"), "v_sdsl_min");
        assert_eq!(namer.fresh("convert_int4"), "v_convert_int4");
        assert_eq!(namer.fresh("_Hidden"), "Hidden");
        assert_eq!(namer.fresh("local__t0"), "local_t0");
        assert_eq!(namer.fresh("x_"), "x_");
        assert_eq!(namer.fresh("x_"), "x_2");
        let mut scope = namer.clone();
        assert_eq!(scope.fresh("x"), "x");
        assert_eq!(namer.fresh("x"), "x");
    }

    #[test]
    fn a_language_reserves_its_own_words() {
        assert!(is_reserved_in("kernel", Language::OpenCl));
        assert!(!is_reserved_in("kernel", Language::Cuda));
        assert!(is_reserved_in("threadIdx", Language::Cuda));
        assert!(!is_reserved_in("threadIdx", Language::OpenCl));
        assert!(!is_reserved_in("float4", Language::C));
        assert!(is_reserved_in("float4", Language::OpenCl));
        assert!(is_reserved_in("restrict", Language::C));
        let mut namer = Namer::for_language(Language::OpenCl);
        namer.take("kernel_");
        assert_eq!(namer.fresh("kernel"), "kernel_2");
        assert_eq!(namer.fresh("threadIdx"), "threadIdx");
    }
}
