//! Every public type name is used by one crate only (issue 9): two crates exporting a `BExpr`
//! or a `Session` make every reader ask which one is meant. Reads the sources of
//! `crates/*/src` and lists each `pub struct | enum | type | trait | union` name defined in
//! more than one crate. A crate's `Result` alias is the one exception (every library crate
//! has its own, by convention).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Names every crate may define.
const SHARED_BY_CONVENTION: &[&str] = &["Result"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The name of the type a line declares public (`pub struct Name<...> {` → `Name`).
fn public_type(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("pub ")?;
    let rest = ["struct ", "enum ", "type ", "trait ", "union "]
        .iter()
        .find_map(|kw| rest.strip_prefix(kw))?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

#[test]
fn public_type_names_are_unique_across_crates() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut defined: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut n_files = 0;
    for krate in fs::read_dir(&crates).expect("crates/").flatten() {
        let mut files = Vec::new();
        rust_files(&krate.path().join("src"), &mut files);
        for file in files {
            n_files += 1;
            let text = fs::read_to_string(&file).expect("a readable source file");
            for (i, line) in text.lines().enumerate() {
                if let Some(name) = public_type(line) {
                    if SHARED_BY_CONVENTION.contains(&name) {
                        continue;
                    }
                    let at = format!(
                        "{}:{}",
                        file.strip_prefix(&crates).unwrap_or(&file).display(),
                        i + 1
                    );
                    defined.entry(name.to_string()).or_default().insert(at);
                }
            }
        }
    }
    assert!(n_files > 50, "only {n_files} source files under {crates:?}");
    let crate_of = |at: &String| at.split('/').next().unwrap_or_default().to_string();
    let duplicates: Vec<String> = defined
        .iter()
        .filter(|(_, at)| at.iter().map(crate_of).collect::<BTreeSet<_>>().len() > 1)
        .map(|(name, at)| {
            format!(
                "{name}: {}",
                at.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    assert!(
        duplicates.is_empty(),
        "public types with the same name in different crates (rename one):\n{}",
        duplicates.join("\n")
    );
}

#[test]
fn the_declaration_parser_sees_what_it_should() {
    assert_eq!(public_type("pub struct Model {"), Some("Model"));
    assert_eq!(
        public_type("    pub enum TypedExpr<'a> {"),
        Some("TypedExpr")
    );
    assert_eq!(
        public_type("pub type Result<T> = std::result::Result<T, E>;"),
        Some("Result")
    );
    assert_eq!(public_type("pub trait StateKey: Eq {"), Some("StateKey"));
    assert_eq!(public_type("pub(crate) struct Hidden {"), None);
    assert_eq!(public_type("struct Private;"), None);
    assert_eq!(public_type("pub fn structure() {}"), None);
    assert_eq!(public_type("// pub struct Commented;"), None);
}
