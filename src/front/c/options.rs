//! How a C file is preprocessed for `map`: the include folders, macro
//! definitions and language standard of the project it belongs to, given on
//! the command line (`-I`, `-D`, `-U`, `--std`) or read from the project's
//! `compile_commands.json` entry for the file.

use std::path::{Path, PathBuf};

/// Why the options of a `compile_commands.json` could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CompileCommandsError {
    /// The database could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The database.
        path: PathBuf,
        /// Why.
        source: crate::source::ReadError,
    },
    /// The database is not a JSON list of entries.
    #[error("`{}` is not a compilation database: {source}", path.display())]
    NotADatabase {
        /// The database.
        path: PathBuf,
        /// What the JSON parser said.
        source: serde_json::Error,
    },
    /// No entry of the database is for the file.
    #[error("`{}` has no entry for `{}`", path.display(), file.display())]
    NoEntry {
        /// The database.
        path: PathBuf,
        /// The file looked for.
        file: PathBuf,
    },
}

/// The preprocessor's options for one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preprocess {
    /// Include folders (`-I`), searched in order.
    pub includes: Vec<PathBuf>,
    /// Macro definitions (`-D NAME` or `-D NAME=VALUE`), in order.
    pub defines: Vec<String>,
    /// Macros undefined (`-U NAME`), after the definitions.
    pub undefines: Vec<String>,
    /// The C standard (`gnu99`, `c11`, …), given to `cc -std=`.
    pub std: String,
}

impl Default for Preprocess {
    fn default() -> Self {
        Preprocess {
            includes: Vec::new(),
            defines: Vec::new(),
            undefines: Vec::new(),
            std: "gnu99".to_string(),
        }
    }
}

impl Preprocess {
    /// The options as `cc` arguments (without `-E` and the file).
    pub fn cc_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for dir in &self.includes {
            args.push("-I".to_string());
            args.push(dir.display().to_string());
        }
        for d in &self.defines {
            args.push(format!("-D{d}"));
        }
        for u in &self.undefines {
            args.push(format!("-U{u}"));
        }
        args.push(format!("-std={}", self.std));
        args
    }

    /// Adds the options of `file`'s entry in a `compile_commands.json`
    /// (its `-I`, `-D`, `-U` and `-std=`, include folders made absolute
    /// against the entry's `directory`), before those already given.
    pub fn add_compile_commands(
        &mut self,
        commands: &Path,
        file: &Path,
    ) -> Result<(), CompileCommandsError> {
        let text = crate::source::read_source(commands, 64 << 20).map_err(|source| {
            CompileCommandsError::Read {
                path: commands.to_path_buf(),
                source,
            }
        })?;
        let entries: Vec<serde_json::Value> =
            serde_json::from_str(&text).map_err(|source| CompileCommandsError::NotADatabase {
                path: commands.to_path_buf(),
                source,
            })?;
        let wanted = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        for entry in &entries {
            let dir = PathBuf::from(entry["directory"].as_str().unwrap_or("."));
            let Some(name) = entry["file"].as_str() else {
                continue;
            };
            let path = dir.join(name);
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            if path != wanted {
                continue;
            }
            let args: Vec<String> = match (&entry["arguments"], entry["command"].as_str()) {
                (serde_json::Value::Array(a), _) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
                (_, Some(command)) => split_command(command),
                _ => Vec::new(),
            };
            let mut from = Preprocess::default();
            from.take_args(&args, &dir);
            if !self.std_given() {
                self.std = from.std;
            }
            from.includes.append(&mut self.includes);
            from.defines.append(&mut self.defines);
            from.undefines.append(&mut self.undefines);
            self.includes = from.includes;
            self.defines = from.defines;
            self.undefines = from.undefines;
            return Ok(());
        }
        Err(CompileCommandsError::NoEntry {
            path: commands.to_path_buf(),
            file: file.to_path_buf(),
        })
    }

    fn std_given(&self) -> bool {
        self.std != Preprocess::default().std
    }

    /// Reads `-I`, `-D`, `-U` and `-std=` from a compiler's arguments (both
    /// `-Idir` and `-I dir`), relative folders against `dir`.
    fn take_args(&mut self, args: &[String], dir: &Path) {
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let mut value = |flag: &str| -> Option<String> {
                if a == flag {
                    i += 1;
                    args.get(i).cloned()
                } else {
                    a.strip_prefix(flag).map(str::to_string)
                }
            };
            if let Some(v) = value("-I") {
                self.includes.push(dir.join(v));
            } else if let Some(v) = value("-D") {
                self.defines.push(v);
            } else if let Some(v) = value("-U") {
                self.undefines.push(v);
            } else if let Some(v) = a.strip_prefix("-std=") {
                self.std = v.to_string();
            }
            i += 1;
        }
    }
}

/// A shell command line split into words: blanks separate them, single and
/// double quotes group, a backslash escapes the next character.
pub fn split_command(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_as_a_shell_would() {
        assert_eq!(
            split_command(r#"cc -DNAME="a b" -I inc 'x y.c' -Dq=\"s\""#),
            ["cc", "-DNAME=a b", "-I", "inc", "x y.c", "-Dq=\"s\""]
        );
    }

    #[test]
    fn compile_commands_give_the_entry_options() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("a.c");
        std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
        let db = dir.path().join("compile_commands.json");
        let entry = serde_json::json!([
            { "directory": dir.path(), "file": "other.c", "command": "cc -DOTHER -c other.c" },
            { "directory": dir.path(), "file": "a.c",
              "command": "cc -Iutilities -DPOLYBENCH_USE_RESTRICT -D N=40 -UNDEBUG -std=c11 -c a.c" }
        ]);
        std::fs::write(&db, entry.to_string()).unwrap();
        let mut p = Preprocess {
            defines: vec!["EXTRA".into()],
            ..Preprocess::default()
        };
        p.add_compile_commands(&db, &src).unwrap();
        assert_eq!(p.includes, [dir.path().join("utilities")]);
        assert_eq!(p.defines, ["POLYBENCH_USE_RESTRICT", "N=40", "EXTRA"]);
        assert_eq!(p.undefines, ["NDEBUG"]);
        assert_eq!(p.std, "c11");
        let missing = p.add_compile_commands(&db, &dir.path().join("b.c"));
        assert!(missing.unwrap_err().to_string().contains("has no entry"));
    }
}
