//! The `stencilc` command line.

fn main() {
    println!("stencilc");
}
