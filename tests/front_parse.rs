//! Front-end: every construct parses into the expected IR; every example parses.

mod common;

use stencilc::front::parse_program;
use stencilc::source::SourceFile;

#[test]
fn all_examples_parse() {
    let mut count = 0;
    for entry in std::fs::read_dir(common::examples_dir()).expect("examples dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sdsl") {
            let text = std::fs::read_to_string(&path).expect("read");
            let source = SourceFile::new(path.display().to_string(), text);
            match parse_program(source) {
                Ok(p) => println!("{p}"),
                Err(d) => panic!("{} failed:\n{d}", path.display()),
            }
            count += 1;
        }
    }
    assert!(count >= 6);
}
