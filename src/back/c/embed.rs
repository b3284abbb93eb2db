//! Source-to-source for C/C++ hosts, like `sdslc -b affine-c` (guide ch. 4-5).
//!
//! Each `#pragma sdsl begin ... end` region is replaced by one line,
//! `int sdsl_return_<N> = <program>_sdsl(params..., (T *)(field), STENCILC_HOST_BYTES(field, 1), ...);`,
//! that calls a wrapper generated at the top of the output file (see
//! [`wrapper_symbol`]). The wrapper binds
//! the region's parameters and griddata to the host variables of the same names
//! (ch. 4.1.2): a host array must have the grid's size exactly (checked with
//! `sizeof`), or be a pointer whose extent the grid gives (`double *U`). Which
//! of the two a host variable is, the C compiler says (`STENCILC_HOST_BYTES`),
//! not its size: `static float o[2]` is as large as a pointer. A field with more than
//! one time level gets its other levels allocated by the wrapper, each starting from
//! the host data, and the newest level is copied back into the host array at the
//! end when it is not already there. The wrapper returns 0 on success, 2 when a host
//! array has the wrong size, 3 when memory runs out (ch. 4.1.3).
//!
//! The call passes each host array through a cast, so before it stencilc emits a
//! compile-time check (`STENCILC_CHECK_HOST_ARRAY`) that the array's first scalar
//! element has the griddata's type; the host declaration's rank, which says how
//! many times to dereference the name, comes from a scan of the host text
//! (`host_scan`). Parameters are
//! not checked: they convert as C arguments do.
//!
//! A host variable the region needs but the host lacks is an "undeclared" error
//! of the C compiler at the region's first line; [`unmentioned_host_names`] lets
//! `stencilc compile` warn about it first.

use std::collections::BTreeSet;

use crate::back::c::expr::{Access, Scope};
use crate::back::c::names;
use crate::back::c::writer::{header, Linkage, Writer};
use crate::ir::{ConstId, ExprKind, Program, Region};
use crate::source::SourceFile;

mod host_scan;

/// Options of `stencilc compile`.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmbedOptions {
    /// `-x`: give the wrappers C linkage (`extern "C"` under C++), for C++ hosts
    /// whose wrappers are declared in C headers.
    pub extern_c: bool,
}

/// The name of the wrapper for a region's program: `<program>_sdsl`, where the
/// program is named after the host file (and the region's index when the file has
/// several), so it cannot clash with the generated `<program>_run`,
/// `<program>_stencil_*` or `<program>_reduce_*`, nor with a host function named
/// after the file.
pub fn wrapper_symbol(program: &Program) -> String {
    format!("{}_sdsl", crate::kir::names::identifier(&program.name))
}

/// A host variable that a region binds but the host file never mentions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnmentionedHostName {
    /// The SDSL parameter's or griddata's name.
    pub name: String,
    /// What the host should declare, for a message: "`float c1`", or
    /// "a `double` array or pointer `U`".
    pub wanted: String,
}

/// The parameters and griddata of `region` whose names the host file never
/// mentions before the region (other regions' text not counted).
///
/// The generated call passes host variables by name, so each of these will be an
/// "undeclared" error from the C compiler; saying so first, with what to declare,
/// is clearer. It is a hint, not a proof: a variable declared in an included
/// header is not seen here, which is why callers warn rather than fail.
pub fn unmentioned_host_names(
    host: &SourceFile,
    regions: &[Region],
    region: &Region,
) -> Vec<UnmentionedHostName> {
    let before = host_text_before(host, regions, region);
    let program = &region.program;
    let params = program.params.iter().map(|p| UnmentionedHostName {
        name: p.name.clone(),
        wanted: format!("`{} {}`", names::c_type(p.ty), p.name),
    });
    let fields = program.fields.iter().map(|f| UnmentionedHostName {
        name: f.name.clone(),
        wanted: format!("a `{}` array or pointer `{}`", names::c_type(f.ty), f.name),
    });
    params
        .chain(fields)
        .filter(|h| !names::mentions_word(&before, &h.name))
        .collect()
}

/// The host text before `region`, other regions' text left out (each replaced by
/// a line break, so that its SDSL declarations are not taken for host ones).
fn host_text_before(host: &SourceFile, regions: &[Region], region: &Region) -> String {
    let start = region.span.start as usize;
    let mut before = String::with_capacity(start);
    let mut cursor = 0;
    let mut earlier: Vec<&Region> = regions
        .iter()
        .filter(|r| (r.span.start as usize) < start)
        .collect();
    earlier.sort_by_key(|r| r.span.start);
    for other in earlier {
        let range = other.span.range();
        before.push_str(&host.text[cursor..range.start]);
        before.push('\n');
        cursor = range.end;
    }
    before.push_str(&host.text[cursor.min(start)..start]);
    before
}

/// For each griddata of `region` (in declaration order), the rank of the host
/// array's declaration before the region (see [`host_scan::declared_rank`]).
fn host_array_ranks(host: &SourceFile, regions: &[Region], region: &Region) -> Vec<Option<usize>> {
    let before = host_text_before(host, regions, region);
    region
        .program
        .fields
        .iter()
        .map(|f| host_scan::declared_rank(&before, &f.name))
        .collect()
}

/// For each griddata of `region`, whether its host declaration before the
/// region declares an array (see [`host_scan::declared_array`]).
fn host_declares_arrays(
    host: &SourceFile,
    regions: &[Region],
    region: &Region,
) -> Vec<Option<bool>> {
    let before = host_text_before(host, regions, region);
    region
        .program
        .fields
        .iter()
        .map(|f| host_scan::declared_array(&before, &f.name))
        .collect()
}

/// The griddata of `region` whose host arrays get no element-type check, because
/// no declaration of them was recognised before the region (a typedef'd array
/// type, a pointer to an array, a declaration in a header): the names, in order.
pub fn unchecked_host_arrays(
    host: &SourceFile,
    regions: &[Region],
    region: &Region,
) -> Vec<String> {
    region
        .program
        .fields
        .iter()
        .zip(host_array_ranks(host, regions, region))
        .filter(|(_, rank)| rank.is_none())
        .map(|(f, _)| f.name.clone())
        .collect()
}

/// Defines `STENCILC_CHECK_HOST_ARRAY(name, element, T, message)`, the
/// compile-time check that a host array holds `T`: `static_assert` with
/// `std::is_same` in C++11, `_Static_assert` with `_Generic` in C11, and before C11
/// (where glibc's `_Static_assert` stand-in drops the message) a bit-field whose
/// width is negative and whose name says what is wrong, with GCC's builtins (clang
/// has them too); no check in C++98 or with other pre-C11 compilers.
pub(super) const HOST_ARRAY_CHECK: &str = "\
/* STENCILC_CHECK_HOST_ARRAY(name, element, T, message): fails to compile, with the
   message, unless `element`, the first scalar element of host array `name`, is a T. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#include <type_traits>
#define STENCILC_CHECK_HOST_ARRAY(name, element, T, message) \\
    static_assert(std::is_same<std::remove_cv<std::remove_reference<decltype(element)>::type>::type, T>::value, message)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define STENCILC_CHECK_HOST_ARRAY(name, element, T, message) \\
    _Static_assert(_Generic((element), T: 1, default: 0), message)
#elif !defined(__cplusplus) && defined(__GNUC__)
#define STENCILC_CHECK_HOST_ARRAY(name, element, T, message) \\
    (void)sizeof(struct { int stencilc_host_array_##name##_must_hold_##T##_elements \\
        : __builtin_types_compatible_p(__typeof__(element), T) ? 1 : -1; })
#else
#define STENCILC_CHECK_HOST_ARRAY(name, element, T, message) /* C++98, pre-C11 C: unchecked */
#endif
/* STENCILC_HOST_BYTES(name, declared_array): the size a wrapper checks host variable `name`
   against: sizeof(name) for an array, which must then hold the grid exactly, and
   STENCILC_HOST_POINTER for a pointer, whose size says nothing of what it points to (the
   wrapper trusts a pointer). The compiler tells the two apart in C++11 and GNU C; other
   compilers take `declared_array`, stencilc's reading of the declaration. Comparing
   sizeof(name) with sizeof(T *) instead would let `float o[2]` pass for a large grid. */
#define STENCILC_HOST_POINTER ((size_t)-1)
#if defined(__cplusplus) && __cplusplus >= 201103L
#define STENCILC_HOST_BYTES(name, declared_array) \\
    (std::is_array<std::remove_reference<decltype(name)>::type>::value ? sizeof(name) : STENCILC_HOST_POINTER)
#elif !defined(__cplusplus) && defined(__GNUC__)
#define STENCILC_HOST_BYTES(name, declared_array) \\
    (__builtin_types_compatible_p(__typeof__(name), __typeof__(&(name)[0])) ? STENCILC_HOST_POINTER : sizeof(name))
#else
#define STENCILC_HOST_BYTES(name, declared_array) ((declared_array) ? sizeof(name) : STENCILC_HOST_POINTER)
#endif
";

/// The host file with every region replaced by a call, and the generated code
/// (one run function and one wrapper per region) placed before the host text.
pub fn rewrite_host(host: &SourceFile, regions: &[Region], options: EmbedOptions) -> String {
    let mut generated = String::new();
    let mut helpers = BTreeSet::new();
    for region in regions {
        let mut w = Writer::new(&region.program, Linkage::Embedded);
        w.write_program_body();
        w.blank();
        w.wrapper(region, options);
        helpers.extend(w.helpers.iter().copied());
        generated.push_str(&w.code.out);
        generated.push('\n');
    }
    let mut out = header(&host.name);
    out.push_str(HOST_ARRAY_CHECK);
    out.push('\n');
    let helper_text = crate::back::c::boundary::helper_definitions(&helpers);
    if !helper_text.is_empty() {
        out.push_str(&helper_text);
        out.push('\n');
    }
    out.push_str(&generated);
    splice_calls(host, regions, &mut out);
    out
}

/// Appends the host text to `out` with every region replaced by its element
/// checks and the line calling its wrapper ([`wrapper_symbol`]), each under a
/// `#line` directive naming the region's line of the host file.
pub(super) fn splice_calls(host: &SourceFile, regions: &[Region], out: &mut String) {
    let file = host.name.replace('\\', "\\\\").replace('"', "\\\"");
    out.push_str(&format!("#line 1 \"{file}\"\n"));
    let text = &host.text;
    let mut cursor = 0;
    let mut sorted: Vec<&Region> = regions.iter().collect();
    sorted.sort_by_key(|r| r.span.start);
    for region in sorted {
        let range = region.span.range();
        let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
        // Keep the region's indentation when the span starts at the line start.
        let indent: String = if range.start == line_start {
            text[range.start..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect()
        } else {
            String::new()
        };
        out.push_str(&text[cursor..range.start]);
        let mut end = range.end.min(text.len());
        if text[end..].starts_with('\n') {
            end += 1;
        }
        let (next_line, _) = host.line_col(end);
        let (region_line, _) = host.line_col(range.start);
        // Each line is numbered as the `#pragma sdsl begin` line, where the
        // compiler's messages about the region's host variables belong.
        let line_directive = format!("#line {region_line} \"{file}\"\n");
        let checks = element_checks(region, &host_array_ranks(host, regions, region));
        if !checks.is_empty() {
            out.push_str(&indent);
            out.push_str("/* stencilc: each host array must hold its griddata's element type */\n");
            for check in checks {
                out.push_str(&line_directive);
                out.push_str(&indent);
                out.push_str(&check);
                out.push('\n');
            }
            out.push_str(&line_directive);
        }
        out.push_str(&indent);
        out.push_str(&call_line(
            region,
            &host_declares_arrays(host, regions, region),
        ));
        out.push('\n');
        out.push_str(&format!("#line {next_line} \"{file}\"\n"));
        cursor = end;
    }
    out.push_str(&text[cursor..]);
}

/// One `STENCILC_CHECK_HOST_ARRAY(a, **a, float, "...");` per griddata whose host
/// declaration has a known rank: the name dereferenced that many times is the
/// host array's first scalar element.
fn element_checks(region: &Region, ranks: &[Option<usize>]) -> Vec<String> {
    region
        .program
        .fields
        .iter()
        .zip(ranks)
        .filter_map(|(field, rank)| {
            let ty = names::c_type(field.ty);
            let name = &field.name;
            Some(format!(
                "STENCILC_CHECK_HOST_ARRAY({name}, {}{name}, {ty}, \"stencilc: host array `{name}` must hold \
                 {ty} elements, as `{ty} griddata {name}` declares\");",
                "*".repeat((*rank)?)
            ))
        })
        .collect()
}

/// `int sdsl_return_N = wrapper(dim0, dim1, c1, (float *)(a), STENCILC_HOST_BYTES(a, 1));`,
/// where `1` says the host declaration read as an array (`0`: a pointer; an
/// unread declaration counts as an array, whose size is then checked exactly).
fn call_line(region: &Region, arrays: &[Option<bool>]) -> String {
    let program = &region.program;
    let mut args: Vec<String> = program.params.iter().map(|p| p.name.clone()).collect();
    for (field, array) in program.fields.iter().zip(arrays) {
        args.push(format!("({} *)({})", names::c_type(field.ty), field.name));
        args.push(format!(
            "STENCILC_HOST_BYTES({}, {})",
            field.name,
            u8::from(array.unwrap_or(true))
        ));
    }
    format!(
        "int sdsl_return_{} = {}({});",
        region.index,
        wrapper_symbol(program),
        args.join(", ")
    )
}

impl Writer<'_> {
    /// The host wrapper of a region: checks sizes, allocates the extra time
    /// levels, runs, leaves the newest level in the host array, frees.
    fn wrapper(&mut self, region: &Region, options: EmbedOptions) {
        let p = self.program;
        let (line, _) = p.source.line_col(region.span.start as usize);
        self.line(&format!(
            "/* Region {} (line {line}): binds its parameters and griddata to the host variables\n   \
             of the same names. Returns 0, 2 if a host array has the wrong size, 3 if out of memory,\n   \
             4 if an access would leave its grid, 5 if a grid is empty or too large to index\n   \
             (4 and 5 print a line on stderr; the host arrays are left as they were). */",
            region.index
        ));
        if options.extern_c {
            self.line("#ifdef __cplusplus");
            self.line("extern \"C\"");
            self.line("#endif");
        }
        let n = std::rc::Rc::clone(&self.names);
        let (summary, status) = (n.temp("summary"), n.temp("status"));
        // Per field: the host pointer, its size in bytes, its element count and
        // its array of time levels.
        let fields: Vec<(String, String, String, String)> = (0..p.fields.len())
            .map(|f| {
                (
                    n.field(f),
                    n.field_temp("bytes", f),
                    n.field_temp("count", f),
                    n.field_temp("levels", f),
                )
            })
            .collect();
        let mut list: Vec<String> = p
            .params
            .iter()
            .enumerate()
            .map(|(i, q)| format!("{} {}", names::c_type(q.ty), n.param(i)))
            .collect();
        for (f, (name, bytes, _, _)) in p.fields.iter().zip(&fields) {
            list.push(format!("{} *{name}", names::c_type(f.ty)));
            list.push(format!("size_t {bytes}"));
        }
        self.function_head(&format!("int {}", wrapper_symbol(p)), &list.join(", "));
        self.open("{");
        self.size_constants();
        self.grid_size_checks();
        self.line(&format!("{} {summary};", names::summary_type(p)));
        self.line(&format!("int {status};"));
        for (f, (_, _, count, levels)) in p.fields.iter().zip(&fields) {
            let ty = names::c_type(f.ty);
            let sizes: Vec<String> = (0..p.grids[f.grid.0].rank())
                .map(|a| n.grid_size(f.grid, a))
                .collect();
            self.line(&format!(
                "const size_t {count} = (size_t)({});",
                sizes.join(" * ")
            ));
            self.line(&format!("{ty} *{levels}[{}];", f.levels()));
        }
        for (f, (_, bytes, count, _)) in p.fields.iter().zip(&fields) {
            let ty = names::c_type(f.ty);
            // A pointer's size says nothing (STENCILC_HOST_BYTES); an array
            // must hold the grid exactly.
            self.line(&format!(
                "if ({bytes} != STENCILC_HOST_POINTER && {bytes} != {count} * sizeof({ty})) return 2;"
            ));
        }
        let allocated: Vec<String> = p
            .fields
            .iter()
            .zip(&fields)
            .flat_map(|(f, (_, _, _, levels))| {
                (1..f.levels()).map(move |l| format!("{levels}[{l}]"))
            })
            .collect();
        for (f, (name, _, count, levels)) in p.fields.iter().zip(&fields) {
            let ty = names::c_type(f.ty);
            self.line(&format!("{levels}[0] = {name};"));
            for l in 1..f.levels() {
                self.line(&format!(
                    "{levels}[{l}] = ({ty} *)malloc({count} * sizeof({ty}));"
                ));
            }
        }
        if !allocated.is_empty() {
            let missing: Vec<String> = allocated.iter().map(|a| format!("{a} == NULL")).collect();
            self.open(&format!("if ({}) {{", missing.join(" || ")));
            for a in &allocated {
                self.line(&format!("free({a});"));
            }
            self.line("return 3;");
            self.close("}");
        }
        for (f, (name, _, count, levels)) in p.fields.iter().zip(&fields) {
            if f.levels() < 2 {
                continue;
            }
            let ty = names::c_type(f.ty);
            self.line(&format!(
                "/* {}: every time level starts from the host array */",
                f.name
            ));
            for l in 1..f.levels() {
                self.line(&format!(
                    "memcpy({levels}[{l}], {name}, {count} * sizeof({ty}));"
                ));
            }
        }
        let mut args: Vec<String> = (0..p.params.len()).map(|i| n.param(i)).collect();
        args.extend(fields.iter().map(|(_, _, _, levels)| levels.clone()));
        args.push(format!("&{summary}"));
        self.line(&format!(
            "{status} = {}({});",
            names::run_symbol(p),
            args.join(", ")
        ));
        for (f, (name, _, count, levels)) in p.fields.iter().zip(&fields) {
            if f.levels() < 2 {
                continue;
            }
            let ty = names::c_type(f.ty);
            let newest = f.level_of(f.newest_offset());
            self.line(&format!(
                "/* {}: leave the newest level in the host array (unless the run failed), free the others */",
                f.name
            ));
            self.line(&format!(
                "if ({status} == 0 && {levels}[{newest}] != {name}) memcpy({name}, {levels}[{newest}], {count} * sizeof({ty}));"
            ));
            for l in 0..f.levels() {
                self.line(&format!(
                    "if ({levels}[{l}] != {name}) free({levels}[{l}]);"
                ));
            }
        }
        self.line(&format!("return {status};"));
        self.close("}");
    }

    /// The constants that grid sizes need (and those they depend on), then the sizes.
    fn size_constants(&mut self) {
        let p = self.program;
        let mut needed = BTreeSet::new();
        for grid in &p.grids {
            for dim in &grid.dims {
                collect_consts(dim, &mut needed);
            }
        }
        // Constants depend only on earlier ones: one backward pass closes the set.
        for c in (0..p.constants.len()).rev() {
            if needed.contains(&c) {
                collect_consts(&p.constants[c].value, &mut needed);
            }
        }
        let scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        for &c in &needed {
            let constant = &p.constants[ConstId(c).0];
            let value = self.expr(&constant.value, scope);
            let name = self.names.constant(c);
            self.line(&format!(
                "const {} {name} = {value};",
                names::c_type(constant.ty)
            ));
        }
        for (g, grid) in p.grids.iter().enumerate() {
            for (axis, dim) in grid.dims.iter().enumerate() {
                let value = self.expr(dim, scope);
                self.line(&format!(
                    "const long {} = {value};",
                    self.names.grid_size(crate::ir::GridId(g), axis)
                ));
            }
        }
    }
}

fn collect_consts(e: &crate::ir::Expr, out: &mut BTreeSet<usize>) {
    e.visit(&mut |node| {
        if let ExprKind::Const(c) = node.kind {
            out.insert(c.0);
        }
    });
}
