//! The names of a printed program: every other program renames the
//! generator's identifiers to reserved words of the target languages and to
//! names the generated code uses, so that the back-ends must name around them.

use super::ast::GenProgram;

impl GenProgram {
    /// The generator's names and the reserved words (of C, C++, OpenCL C, CUDA)
    /// and generated-code names that replace them in every other program: the
    /// back-ends must name their output around any of them.
    pub(super) fn renames(&self) -> &'static [(&'static str, &'static str)] {
        const RESERVED: &[(&str, &str)] = &[
            ("f0", "scratch"),
            ("f1", "kernel"),
            ("f2", "local"),
            ("f3", "a_tile"),
            ("n0", "short"),
            ("n1", "g_n0"),
            ("n2", "restrict"),
            ("alpha", "threadIdx"),
            ("c0", "global"),
            ("c1", "private"),
            ("c2", "half"),
            ("c3", "signed"),
            ("K", "int4"),
            ("g", "constant"),
            ("s0", "tid"),
            ("s1", "blockDim"),
            ("s2", "get_global_id"),
            ("r0", "partials"),
            ("r1", "__syncthreads"),
            ("t0", "value"),
            ("t1", "float2"),
            ("t2", "iter"),
            ("t3", "size_x"),
            ("h", "shared"),
            ("m0", "inline"),
            ("m1", "g_h"),
            ("m2", "volatile"),
        ];
        if self.iterations % 2 == 1 {
            RESERVED
        } else {
            &[]
        }
    }

    /// The name `name` of the generator has in the printed program.
    pub(super) fn rename<'n>(&self, name: &'n str) -> &'n str {
        match self.renames().iter().find(|(from, _)| *from == name) {
            Some((_, to)) => to,
            None => name,
        }
    }

    /// The generator's name of a name of the printed program.
    pub(super) fn generator_name<'n>(&self, name: &'n str) -> &'n str {
        match self.renames().iter().find(|(_, to)| *to == name) {
            Some((from, _)) => from,
            None => name,
        }
    }

    /// `text` with every identifier renamed by [`GenProgram::rename`].
    pub(super) fn renamed(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        for c in text.chars().chain(std::iter::once('\n')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            // A number (`1.5f`, `0x1`) is not an identifier.
            if word.starts_with(|d: char| d.is_ascii_digit()) {
                out.push_str(&word);
            } else {
                out.push_str(self.rename(&word));
            }
            word.clear();
            out.push(c);
        }
        out.pop();
        out
    }
}
