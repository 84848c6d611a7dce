//! The `augur` command-line tool.

fn main() {
    println!("augur");
}
