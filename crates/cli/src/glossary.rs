//! The option glossary (docs/options.md) against clap's own list of every option of every
//! subcommand: one name, one meaning, one value name; every deprecated spelling documented
//! and in CHANGELOG.md.

use clap::CommandFactory;
use std::collections::{BTreeMap, BTreeSet};

/// One option of one subcommand, as clap declares it.
#[derive(Debug)]
struct Declared {
    command: String,
    long: String,
    short: Option<char>,
    /// The value name (`None`: a flag).
    value: Option<String>,
    hidden: bool,
}

fn declared() -> Vec<Declared> {
    fn walk(c: &clap::Command, path: &str, out: &mut Vec<Declared>) {
        for a in c.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if long == "help" || long == "version" {
                continue;
            }
            let value = a.get_action().takes_values().then(|| {
                a.get_value_names()
                    .map(|v| {
                        v.iter()
                            .map(|s| s.to_string())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_else(|| a.get_id().as_str().to_uppercase())
            });
            out.push(Declared {
                command: path.to_string(),
                long: format!("--{long}"),
                short: a.get_short(),
                value,
                hidden: a.is_hide_set(),
            });
        }
        for s in c.get_subcommands() {
            let p = format!("{path} {}", s.get_name());
            walk(s, p.trim(), out);
        }
    }
    let mut out = Vec::new();
    walk(&crate::Cli::command(), "", &mut out);
    out
}

/// A row of one of the glossary's tables.
#[derive(Debug, Clone)]
struct Row {
    long: String,
    short: Option<char>,
    values: BTreeSet<String>,
    commands: BTreeSet<String>,
}

fn cells(line: &str) -> Vec<String> {
    // `\|` inside a cell is a literal bar.
    let l = line.trim().trim_matches('|').replace("\\|", "\u{1}");
    l.split('|')
        .map(|c| c.trim().replace('\u{1}', "|"))
        .collect()
}

fn code_spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_string())
        .collect()
}

/// The rows of the table under `heading` (`## heading`).
fn table(text: &str, heading: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim() == heading;
            continue;
        }
        if inside && line.starts_with('|') && !line.starts_with("|---") {
            rows.push(cells(line));
        }
    }
    // The header row.
    if !rows.is_empty() {
        rows.remove(0);
    }
    rows
}

fn option_rows(text: &str, heading: &str) -> Vec<Row> {
    table(text, heading)
        .into_iter()
        .map(|c| {
            let names = code_spans(&c[0]);
            let long = names
                .iter()
                .find(|n| n.starts_with("--"))
                .unwrap_or_else(|| panic!("{heading}: a row without a long option: {c:?}"))
                .clone();
            let short = names
                .iter()
                .find(|n| n.len() == 2 && n.starts_with('-'))
                .and_then(|n| n.chars().nth(1));
            Row {
                long,
                short,
                values: code_spans(&c[1]).into_iter().collect(),
                commands: c[3].split(',').map(|s| s.trim().to_string()).collect(),
            }
        })
        .collect()
}

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn options_glossary() {
    let text = std::fs::read_to_string(root().join("docs/options.md")).expect("docs/options.md");
    let main = option_rows(&text, "Options");
    let exceptions = option_rows(&text, "Deliberate exceptions");
    assert!(main.len() > 50, "{} rows", main.len());
    let mut errors = Vec::new();
    // One row per name in the main table: two meanings are exceptions, listed as such.
    let mut seen = BTreeSet::new();
    for r in &main {
        if !seen.insert(r.long.clone()) {
            errors.push(format!("{} has two rows in the main table: list the second meaning under Deliberate exceptions", r.long));
        }
    }
    let rows: Vec<&Row> = main.iter().chain(&exceptions).collect();
    let decl = declared();
    let mut used: BTreeMap<(String, String), usize> = BTreeMap::new();
    for d in decl.iter().filter(|d| !d.hidden) {
        let matching: Vec<&&Row> = rows
            .iter()
            .filter(|r| r.long == d.long && r.commands.contains(&d.command))
            .collect();
        match matching.as_slice() {
            [r] => {
                *used.entry((r.long.clone(), d.command.clone())).or_default() += 1;
                let want: BTreeSet<String> = d.value.iter().cloned().collect();
                if !(want.is_subset(&r.values) && (d.value.is_some() || r.values.is_empty())) {
                    errors.push(format!(
                        "`augur {} {}` takes {:?}; the glossary says {:?}",
                        d.command, d.long, d.value, r.values
                    ));
                }
                if d.short != r.short {
                    errors.push(format!(
                        "`augur {} {}` has the short form {:?}; the glossary says {:?}",
                        d.command, d.long, d.short, r.short
                    ));
                }
            }
            [] => errors.push(format!(
                "`augur {} {}` is not in docs/options.md (or not listed for `{}`)",
                d.command, d.long, d.command
            )),
            _ => errors.push(format!(
                "`augur {} {}` matches {} rows of docs/options.md",
                d.command,
                d.long,
                matching.len()
            )),
        }
    }
    // No stale rows: every command a row names accepts the option.
    for r in &rows {
        for c in &r.commands {
            if !used.contains_key(&(r.long.clone(), c.clone())) {
                errors.push(format!(
                    "docs/options.md lists {} for `{c}`, which does not accept it",
                    r.long
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn every_hidden_option_is_a_documented_deprecated_spelling() {
    let text = std::fs::read_to_string(root().join("docs/options.md")).expect("docs/options.md");
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).expect("CHANGELOG.md");
    let deprecated: Vec<(String, BTreeSet<String>)> = table(&text, "Deprecated spellings")
        .into_iter()
        .map(|c| {
            let spelling = code_spans(&c[0]).first().cloned().unwrap_or_default();
            (
                spelling,
                c[1].split(',').map(|s| s.trim().to_string()).collect(),
            )
        })
        .collect();
    assert!(!deprecated.is_empty());
    for d in declared().iter().filter(|d| d.hidden) {
        assert!(
            deprecated
                .iter()
                .any(|(s, cmds)| *s == d.long && cmds.contains(&d.command)),
            "the hidden `augur {} {}` is not a deprecated spelling of docs/options.md",
            d.command,
            d.long
        );
    }
    for (s, cmds) in &deprecated {
        for c in cmds {
            assert!(
                changelog.contains(&format!("augur {c} {s}"))
                    || changelog.contains(&format!("`{s}`")),
                "CHANGELOG.md does not list the deprecated `augur {c} {s}`"
            );
        }
    }
}
