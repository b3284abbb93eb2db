//! Which file a path names on disk, and the check that a command's outputs
//! overwrite none of its inputs and none of each other.
//!
//! Two paths name one file when they resolve to the same canonical path
//! (links and `..` followed; for a file not yet created, its folder's
//! canonical path and its name) or, for existing files, share a device and an
//! inode (hard links). Comparing the strings as given would let `./x.npy`, an
//! absolute path or a link through.

use std::fmt;
use std::path::{Path, PathBuf};

/// Whether `a` and `b` name one file (see the module docs).
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Some(a), Some(b)) = (resolve(a), resolve(b)) {
        if a == b {
            return true;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    false
}

/// The canonical form of `path`; for a file that does not exist yet, its
/// folder's canonical form joined with its name. `None` when the folder does
/// not exist either.
pub fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(full) = path.canonicalize() {
        return Some(full);
    }
    // A dangling symbolic link names the file it would create.
    if let Ok(target) = std::fs::read_link(path) {
        let base = path.parent().unwrap_or(Path::new("."));
        return resolve(&base.join(target));
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// The file a write to `path` replaces: `path` itself, or for a symbolic
/// link (followed as far as it goes) the file it points to.
pub fn write_target(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    // A bounded walk: a loop of links is left for the write to report.
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(target) => {
                current = match current.parent() {
                    Some(base) if target.is_relative() => base.join(target),
                    _ => target,
                };
            }
            Err(_) => return current,
        }
    }
    path.to_path_buf()
}

/// A command's inputs and outputs, each with the role a message names it by
/// (`the program`, `--output u`, `-o`).
#[derive(Debug, Default)]
pub struct OutputCheck {
    inputs: Vec<(String, PathBuf)>,
    outputs: Vec<(String, PathBuf)>,
}

/// Two paths of a command that name one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// An output would replace an input.
    OverInput {
        /// The output's role and path as given.
        output: (String, PathBuf),
        /// The input's role and path as given.
        input: (String, PathBuf),
    },
    /// Two outputs would go to one file (one result lost).
    SameOutput {
        /// The first output's role and path as given.
        first: (String, PathBuf),
        /// The second output's role and path as given.
        second: (String, PathBuf),
    },
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::OverInput { output, input } => write!(
                f,
                "{} `{}` is the same file as {} `{}`: writing it would overwrite the input",
                output.0,
                output.1.display(),
                input.0,
                input.1.display()
            ),
            Conflict::SameOutput { first, second } => write!(
                f,
                "{} `{}` and {} `{}` are the same file: one result would overwrite the other",
                first.0,
                first.1.display(),
                second.0,
                second.1.display()
            ),
        }
    }
}

impl Conflict {
    /// What to change, in one sentence.
    pub fn help(&self) -> &'static str {
        match self {
            Conflict::OverInput { .. } => {
                "write the output to another file (rename it afterwards if you mean to replace \
                 the input); nothing was written"
            }
            Conflict::SameOutput { .. } => "give each output its own file; nothing was written",
        }
    }
}

impl OutputCheck {
    /// An empty check.
    pub fn new() -> OutputCheck {
        OutputCheck::default()
    }

    /// Adds an input the command reads.
    pub fn input(&mut self, role: impl Into<String>, path: &Path) -> &mut OutputCheck {
        self.inputs.push((role.into(), path.to_path_buf()));
        self
    }

    /// Adds an output the command writes.
    pub fn output(&mut self, role: impl Into<String>, path: &Path) -> &mut OutputCheck {
        self.outputs.push((role.into(), path.to_path_buf()));
        self
    }

    /// The first conflict: an output that is an input, or two outputs that
    /// are one file.
    pub fn check(&self) -> Result<(), Conflict> {
        for (i, output) in self.outputs.iter().enumerate() {
            if let Some(input) = self
                .inputs
                .iter()
                .find(|input| same_file(&output.1, &input.1))
            {
                return Err(Conflict::OverInput {
                    output: output.clone(),
                    input: input.clone(),
                });
            }
            if let Some(first) = self.outputs[..i]
                .iter()
                .find(|first| same_file(&first.1, &output.1))
            {
                return Err(Conflict::SameOutput {
                    first: first.clone(),
                    second: output.clone(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_file_is_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.npy");
        std::fs::write(&file, "x").unwrap();
        let dotted = dir.path().join(".").join("x.npy");
        let through_parent = dir.path().join("sub/../x.npy");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(same_file(&file, &dotted));
        assert!(same_file(&file, &through_parent));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.npy");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(same_file(&file, &link));
            let hard = dir.path().join("hard.npy");
            std::fs::hard_link(&file, &hard).unwrap();
            assert!(same_file(&file, &hard));
        }
        assert!(!same_file(&file, &dir.path().join("y.npy")));
    }

    #[test]
    fn files_not_yet_written_compare_by_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("new.npy");
        let b = dir.path().join("sub/../new.npy");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(same_file(&a, &b));
        #[cfg(unix)]
        {
            let dangling = dir.path().join("dangling.npy");
            std::os::unix::fs::symlink(&a, &dangling).unwrap();
            assert!(same_file(&a, &dangling));
        }
    }

    #[test]
    fn the_check_names_both_roles() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.c");
        std::fs::write(&input, "int x;").unwrap();
        let mut check = OutputCheck::new();
        check.input("the input", &input);
        check.output("-o", &dir.path().join("./in.c"));
        let conflict = check.check().unwrap_err();
        assert!(conflict.to_string().contains("-o"), "{conflict}");
        assert!(conflict.to_string().contains("the input"), "{conflict}");

        let mut outputs = OutputCheck::new();
        outputs.output("--output out", &dir.path().join("x.npy"));
        outputs.output("--output img", &dir.path().join("sub/../x.npy"));
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(matches!(outputs.check(), Err(Conflict::SameOutput { .. })));

        let mut fine = OutputCheck::new();
        fine.input("the input", &input);
        fine.output("-o", &dir.path().join("out.c"));
        assert_eq!(fine.check(), Ok(()));
    }

    #[cfg(unix)]
    #[test]
    fn a_write_goes_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.npy");
        let first = dir.path().join("l1.npy");
        let second = dir.path().join("l2.npy");
        std::os::unix::fs::symlink("t.npy", &first).unwrap();
        std::os::unix::fs::symlink(&first, &second).unwrap();
        assert_eq!(write_target(&second), target);
        assert_eq!(write_target(&target), target);
    }
}
