//! The documents as tests: every command block of `README.md`, `models/README.md`,
//! `models/learning.md`, `models/agentdojo/README.md`, `docs/monitor.md`, `docs/scale.md`,
//! `docs/robust.md`, `docs/explain.md`, `docs/exact.md`, `docs/json.md`, `docs/ltl.md` and
//! `docs/fuzzing.md` is run, and its output compared with what the document shows, so the
//! documents cannot drift from the program. (`docs/python.md`'s blocks run in pytest:
//! `crates/python/tests/test_docs.py`; the formulas of `docs/ltl.md`'s list are checked on
//! `models/ltl.pm` by `tests/integration/prism_models.rs`.)
//!
//! A command block is a fenced block of language `console` (or `sh`): lines starting with `$ `
//! are commands, run with `sh -c`; the lines below a command, up to the next one, are the
//! output it prints (stdout, then stderr), all of it, line by line, in order: a document shows
//! a run as it is. A line `...` alone stands for any number of output lines the document
//! leaves out (so an omission is always marked); `...` within a line matches any text, and
//! timings (`0.003 s`) are compared as `<t> s`. A command exits 0 unless it ends with a comment
//! `# exit N`. A trailing `\` continues a command on the next line.
//!
//! A tag after the language says how the block is treated:
//! - none: runnable. The runnable blocks of a document run in order, in one fresh directory
//!   that holds a link to `models/` and an `augur` (the binary under test) on the `PATH`, and
//!   no `../shared`: a fresh clone without the reference data. One test per document.
//! - `needs-external-data`: the block needs a data set that is not in the repository. It is a
//!   test of its own: in the same fresh directory (without the data) its first command must
//!   fail (exit 1) with a message naming where the data comes from (the words
//!   `not in this repository` and the data set's origin).
//! - `not-run` (then, optionally, the reason in words: `not-run needs the nightly toolchain`):
//!   installs, builds, benchmarks. Shown as an ignored test with the reason (by default
//!   "installs, builds or benchmarks").
//! - `release`: runnable, but too slow for a debug build (a large model's derivation): a test
//!   of its own, in a fresh directory, run in release builds
//!   (`cargo test --workspace --release --test conformance -- docs::`) and shown as ignored
//!   with that reason in debug builds.
//!
//! A block of language `json` must be JSON, where `...` (outside strings) stands for left-out
//! values, array elements or object members. Tagged with a file name (```` ```json check.json
//! ````), it shows that file as the runnable commands above it (in the same directory) wrote it:
//! the file must be the JSON shown, member for member (in any order), except that `...` stands
//! for what the document leaves out (any value, any elements, other members; within a string,
//! any text) and a number under a key ending in `seconds` for any number (timings). An object
//! without a `...` member has exactly the members shown, so a field the program adds or renames
//! fails the test.
//!
//! After a document's runnable commands, every file they wrote must be ignored by the
//! repository's `.gitignore` (`git check-ignore`): the outputs of documented commands never
//! show up as changes in a clone.
//!
//! Blocks of the input languages are checked as what they document, each in a fresh directory
//! of its own (a block that no longer parses or compiles fails):
//! - `prism`: a PRISM model, written to a file and loaded by `augur check FILE --prop true`.
//! - `toml abstraction`: an abstraction spec (the tag says what the TOML is; a `toml` block
//!   without it is an error), loaded by `augur learn EMPTY.jsonl --abstraction FILE`: the spec
//!   is read and validated before the traces, so the only error must be the empty trace file.
//! - `rust`: library code, compiled and run by a test of the crate named in [`RUST_BLOCKS`],
//!   between the comment lines `// DOC, ...: begin` and `// DOC, ...: end` (indentation aside,
//!   the same lines as the block, the document's n-th block being the file's n-th region).
//!
//! Blocks of other languages (`text`, `python`, ...) are not commands (`python` blocks run in
//! pytest: `crates/python/tests/test_docs.py`); a block without a language must not hold a
//! `$ augur` line (so a command block cannot lose its tag unseen).

use libtest_mimic::{Completion, Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The documents whose commands are tested.
pub const DOCUMENTS: &[&str] = &[
    "README.md",
    "models/README.md",
    "models/learning.md",
    "docs/monitor.md",
    "docs/scale.md",
    "docs/robust.md",
    "docs/explain.md",
    "docs/exact.md",
    "docs/json.md",
    "docs/ltl.md",
    "docs/fuzzing.md",
    "models/agentdojo/README.md",
    "docs/mcp.md",
];

/// The test files that compile and run a document's ```rust blocks (see the module comment).
pub const RUST_BLOCKS: &[(&str, &str)] =
    &[("docs/monitor.md", "crates/monitor/tests/library_use.rs")];

/// A block of an input language, checked as what it documents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// A PRISM model.
    Prism(String),
    /// An abstraction spec (TOML).
    Abstraction(String),
    /// Library code: the `n`-th ```rust block of its document.
    Rust(usize, String),
}

/// How a block is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Runnable,
    NeedsExternalData,
    NotRun,
    Release,
}

/// One command of a block, with the output it must print.
#[derive(Clone, Debug)]
pub struct DocCommand {
    pub line: usize,
    pub text: String,
    pub exit: i32,
    pub shown: Vec<String>,
}

/// One command block, or a JSON block (then `commands` is empty).
#[derive(Clone, Debug)]
pub struct Block {
    pub line: usize,
    pub tag: Tag,
    pub commands: Vec<DocCommand>,
    /// Why a `not-run` block is not run, when the document says (the words after the tag).
    pub reason: Option<String>,
    /// A `json FILE` block: the file and the JSON the document shows for it.
    pub shows: Option<(String, String)>,
    /// A block of an input language (`prism`, `toml abstraction`, `rust`).
    pub checked: Option<Checked>,
}

/// The command blocks of a Markdown document, or an error naming the offending line.
pub fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut rust_blocks = 0;
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        let tags: Vec<&str> = words.collect();
        let mut body = Vec::new();
        for (j, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push((j + 1, l));
        }
        if lang == "json" {
            let text: String = body.iter().map(|(_, l)| format!("{l}\n")).collect();
            pattern(&text).map_err(|e| {
                format!(
                    "line {}: a JSON block that is not JSON (with `...`): {e}",
                    i + 1
                )
            })?;
            let shows = match tags.as_slice() {
                [] => None,
                [file] => Some((file.to_string(), text)),
                other => {
                    return Err(format!(
                    "line {}: a JSON block takes at most one tag, the file it shows, not {other:?}",
                    i + 1
                ))
                }
            };
            if shows.is_some() {
                out.push(Block {
                    line: i + 1,
                    tag: Tag::Runnable,
                    commands: Vec::new(),
                    reason: None,
                    shows,
                    checked: None,
                });
            }
            continue;
        }
        let text: String = body.iter().map(|(_, l)| format!("{l}\n")).collect();
        let checked = match (lang, tags.as_slice()) {
            ("prism", []) => Some(Checked::Prism(text)),
            ("toml", ["abstraction"]) => Some(Checked::Abstraction(text)),
            ("toml", other) => {
                return Err(format!(
                    "line {}: a toml block says what it is (```toml abstraction), not {other:?}",
                    i + 1
                ))
            }
            ("rust", []) => {
                rust_blocks += 1;
                Some(Checked::Rust(rust_blocks, text))
            }
            ("prism" | "rust", other) => {
                return Err(format!(
                    "line {}: a {lang} block takes no tag, not {other:?}",
                    i + 1
                ))
            }
            _ => None,
        };
        if checked.is_some() {
            out.push(Block {
                line: i + 1,
                tag: Tag::Runnable,
                commands: Vec::new(),
                reason: None,
                shows: None,
                checked,
            });
            continue;
        }
        if !matches!(lang, "console" | "sh") {
            if lang.is_empty() {
                if let Some((j, _)) = body
                    .iter()
                    .find(|(_, l)| l.trim_start().starts_with("$ augur"))
                {
                    return Err(format!(
                        "line {j}: a command in a block without a language (write ```console)"
                    ));
                }
            }
            continue;
        }
        let mut reason = None;
        let tag = match tags.as_slice() {
            [] => Tag::Runnable,
            ["needs-external-data"] => Tag::NeedsExternalData,
            ["not-run"] => Tag::NotRun,
            ["not-run", why @ ..] => {
                reason = Some(why.join(" "));
                Tag::NotRun
            }
            ["release"] => Tag::Release,
            other => {
                return Err(format!(
                    "line {}: unknown tag {other:?} (runnable blocks have none; else \
                     needs-external-data, not-run or release)",
                    i + 1
                ))
            }
        };
        let mut commands: Vec<DocCommand> = Vec::new();
        let mut continued = false;
        for (j, l) in body {
            if continued {
                let c = commands.last_mut().expect("a command continues");
                let t = l.trim_end();
                continued = t.ends_with('\\');
                c.text.push(' ');
                c.text.push_str(t.trim_end_matches('\\').trim());
            } else if let Some(cmd) = l.strip_prefix("$ ") {
                let t = cmd.trim_end();
                continued = t.ends_with('\\');
                commands.push(DocCommand {
                    line: j,
                    text: t.trim_end_matches('\\').trim().to_string(),
                    exit: 0,
                    shown: Vec::new(),
                });
            } else if let Some(c) = commands.last_mut() {
                if !l.trim().is_empty() {
                    c.shown.push(l.trim_end().to_string());
                }
            } else if !l.trim().is_empty() {
                return Err(format!("line {j}: text before the first `$ ` command"));
            }
        }
        for c in &mut commands {
            if let Some((_, rest)) = c.text.rsplit_once("# exit ") {
                c.exit = rest
                    .trim()
                    .parse()
                    .map_err(|_| format!("line {}: `# exit N` needs a number", c.line))?;
            }
        }
        if commands.is_empty() {
            return Err(format!(
                "line {}: a command block without a `$ ` command",
                i + 1
            ));
        }
        out.push(Block {
            line: i + 1,
            tag,
            commands,
            reason,
            shows: None,
            checked: None,
        });
    }
    Ok(out)
}

/// Timings (`0.003 s`, `12.5 s`) become `<t> s`; trailing blanks go.
pub fn normalise(line: &str) -> String {
    let chars: Vec<char> = line.trim_end().chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let start_ok = i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '.');
        if start_ok && chars[i].is_ascii_digit() {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            let unit = j + 2 <= chars.len()
                && chars[j] == ' '
                && chars[j + 1] == 's'
                && (j + 2 == chars.len() || !chars[j + 2].is_ascii_alphanumeric());
            if unit {
                out.push_str("<t>");
                i = j;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Whether an output line matches a shown line (`...` matches any text).
pub fn line_matches(shown: &str, got: &str) -> bool {
    let parts: Vec<&str> = shown.split("...").collect();
    if parts.len() == 1 {
        return shown == got;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !got.starts_with(first) || got.len() < first.len() + last.len() || !got.ends_with(last) {
        return false;
    }
    let mut rest = &got[first.len()..got.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(k) => rest = &rest[k + p.len()..],
            None => return false,
        }
    }
    true
}

/// A fresh directory as a new user has it: `models/` (a link to the repository's), `augur` on
/// the `PATH`, no `../shared`.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub work: PathBuf,
    bin: PathBuf,
}

impl Sandbox {
    pub fn new() -> Result<Sandbox, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
        let work = dir.path().join("augur");
        let bin = dir.path().join("bin");
        for d in [&work, &bin] {
            std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let link = |from: &Path, to: &Path| {
            std::os::unix::fs::symlink(from, to).map_err(|e| format!("{}: {e}", to.display()))
        };
        link(&crate::util::root().join("models"), &work.join("models"))?;
        link(Path::new(env!("CARGO_BIN_EXE_augur")), &bin.join("augur"))?;
        Ok(Sandbox {
            _dir: dir,
            work,
            bin,
        })
    }

    /// Runs one command; returns (exit code, stdout and stderr lines, normalised).
    pub fn run(&self, command: &str) -> Result<(i32, Vec<String>, String), String> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let o = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&self.work)
            .env(
                "PATH",
                std::env::join_paths(paths).map_err(|e| e.to_string())?,
            )
            .env_remove("CI")
            .output()
            .map_err(|e| format!("running sh: {e}"))?;
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let work = self.work.display().to_string();
        let lines = stdout
            .lines()
            .chain(stderr.lines())
            .map(|l| normalise(&l.replace(&work, ".")))
            .collect();
        Ok((o.status.code().unwrap_or(-1), lines, stderr.into_owned()))
    }
}

/// Runs a command and compares its exit code and output with the document.
fn check_command(sb: &Sandbox, doc: &str, c: &DocCommand) -> Result<(), String> {
    let (code, lines, _) = sb.run(&c.text)?;
    let at = format!("{doc}:{}: `{}`", c.line, c.text);
    if code != c.exit {
        return Err(format!(
            "{at}: exit code {code}, the document says {}\n{}",
            c.exit,
            lines.join("\n")
        ));
    }
    // Blank lines are not shown in a document (a block's blank lines separate its commands).
    let lines: Vec<String> = lines.into_iter().filter(|l| !l.is_empty()).collect();
    let want: Vec<String> = c.shown.iter().map(|s| normalise(s)).collect();
    if !output_matches(&want, &lines) {
        // The first shown line that is not in the output (in order), for the message.
        let mut got = lines.iter();
        let missing = c
            .shown
            .iter()
            .zip(&want)
            .filter(|(_, w)| w.as_str() != ELIDED)
            .find(|(_, w)| !got.any(|g| line_matches(w, g)));
        let why = match missing {
            Some((shown, _)) => {
                format!("the document shows\n  {shown}\nwhich is not in the output (in order)")
            }
            None => "the output has lines the document neither shows nor marks as left out \
                     (a line `...`)"
                .to_string(),
        };
        return Err(format!(
            "{at}: {why}; the document:\n{}\nthe output:\n{}",
            c.shown.join("\n"),
            lines.join("\n")
        ));
    }
    Ok(())
}

/// A shown line standing for any number of output lines left out.
pub const ELIDED: &str = "...";

/// Whether the output lines are the shown lines (normalised), one for one and in order, where
/// a shown line [`ELIDED`] stands for any number of output lines.
pub fn output_matches(shown: &[String], got: &[String]) -> bool {
    // ok[j]: the shown lines so far match got[..j].
    let mut ok = vec![false; got.len() + 1];
    ok[0] = true;
    for s in shown {
        let mut next = vec![false; got.len() + 1];
        if s == ELIDED {
            let mut any = false;
            for j in 0..=got.len() {
                any |= ok[j];
                next[j] = any;
            }
        } else {
            for j in 0..got.len() {
                next[j + 1] = ok[j] && line_matches(s, &got[j]);
            }
        }
        ok = next;
    }
    ok[got.len()]
}

/// What `...` becomes in a JSON block: a string no document or program writes.
const ANY: &str = "\u{0}...";

/// The JSON a document shows, with its omissions made explicit: a `...` outside a string
/// becomes the string [`ANY`] where a value or an array element stands, and a member
/// `ANY: null` where an object's member stands (the object then has members the document does
/// not show). An error says where the text is not JSON.
pub fn pattern(text: &str) -> Result<Json, String> {
    let mut out = String::with_capacity(text.len());
    // The open brackets, and the last character outside strings and blanks.
    let mut open: Vec<char> = Vec::new();
    let mut last = ' ';
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => open.push(c),
            '}' | ']' => {
                open.pop();
            }
            '.' if chars.peek() == Some(&'.') => {
                chars.next();
                if chars.next() != Some('.') {
                    return Err("`..` is neither a number nor `...`".into());
                }
                let member = open.last() == Some(&'{') && last != ':';
                out.push_str(if member {
                    "\"\\u0000...\": null"
                } else {
                    "\"\\u0000...\""
                });
                last = '.';
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last = c;
        }
        out.push(c);
    }
    serde_json::from_str(&out).map_err(|e| e.to_string())
}

/// Whether a file's JSON is what the document shows (a [`pattern`]): the same members and
/// values, where [`ANY`] stands for any value, any array elements or other members, `...` in a
/// string for any text, and a number under a key ending in `seconds` for any number (timings).
/// An error names the first difference by its path (`results[1].method`).
pub fn json_matches(shown: &Json, got: &Json, path: &str) -> Result<(), String> {
    let differ = || {
        Err(format!(
            "{}: the document shows {shown}, the file has {got}",
            if path.is_empty() { "(top)" } else { path }
        ))
    };
    match (shown, got) {
        (Json::String(s), _) if s == ANY => Ok(()),
        (Json::String(s), Json::String(g)) if s.contains("...") => {
            if line_matches(s, g) {
                Ok(())
            } else {
                differ()
            }
        }
        (Json::Number(_), Json::Number(_)) if path.ends_with("seconds") => Ok(()),
        (Json::Number(s), Json::Number(g)) => {
            if s.as_f64() == g.as_f64() {
                Ok(())
            } else {
                differ()
            }
        }
        (Json::Object(s), Json::Object(g)) => {
            for (k, v) in s.iter().filter(|(k, _)| k.as_str() != ANY) {
                let at = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match g.get(k) {
                    Some(gv) => json_matches(v, gv, &at)?,
                    None => return Err(format!("{at}: shown in the document, not in the file")),
                }
            }
            if !s.contains_key(ANY) {
                if let Some(k) = g.keys().find(|k| !s.contains_key(k.as_str())) {
                    return Err(format!(
                        "{}{k}: in the file, neither shown in the document nor left out (`...`)",
                        if path.is_empty() {
                            String::new()
                        } else {
                            format!("{path}.")
                        }
                    ));
                }
            }
            Ok(())
        }
        (Json::Array(s), Json::Array(g)) if !s.iter().any(|e| e.as_str() == Some(ANY)) => {
            if s.len() != g.len() {
                return Err(format!(
                    "{}: the document shows {} elements, the file has {}",
                    if path.is_empty() { "(top)" } else { path },
                    s.len(),
                    g.len()
                ));
            }
            for (i, (se, ge)) in s.iter().zip(g).enumerate() {
                json_matches(se, ge, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (Json::Array(s), Json::Array(g)) => {
            if elements_match(s, g, path) {
                Ok(())
            } else {
                differ()
            }
        }
        _ => {
            if shown == got {
                Ok(())
            } else {
                differ()
            }
        }
    }
}

/// Whether an array's elements are the shown ones, in order, an [`ANY`] element standing for
/// any number of elements.
fn elements_match(shown: &[Json], got: &[Json], path: &str) -> bool {
    match shown.split_first() {
        None => got.is_empty(),
        Some((Json::String(s), rest)) if s == ANY => {
            (0..=got.len()).any(|k| elements_match(rest, &got[k..], path))
        }
        Some((first, rest)) => got.split_first().is_some_and(|(g, more)| {
            json_matches(first, g, path).is_ok() && elements_match(rest, more, path)
        }),
    }
}

/// A `json FILE` block: the file the commands above wrote is the JSON the document shows.
fn check_shown_file(
    sb: &Sandbox,
    doc: &str,
    line: usize,
    file: &str,
    shown: &str,
) -> Result<(), String> {
    let at = format!("{doc}:{line}: `{file}`");
    let text = std::fs::read_to_string(sb.work.join(file))
        .map_err(|e| format!("{at}: the commands above do not write it: {e}"))?;
    let got: Json =
        serde_json::from_str(&text).map_err(|e| format!("{at}: the file is not JSON: {e}"))?;
    let shown = pattern(shown).map_err(|e| format!("{at}: {e}"))?;
    json_matches(&shown, &got, "").map_err(|e| format!("{at}: {e}\nthe file:\n{text}"))
}

fn read(doc: &str) -> Result<Vec<Block>, String> {
    let path = crate::util::root().join(doc);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    blocks(&text).map_err(|e| format!("{doc}: {e}"))
}

/// The tests of the documents.
pub fn trials(trials: &mut Vec<Trial>) -> String {
    let (mut runnable, mut external, mut not_run) = (0, 0, 0);
    trials.push(Trial::test("docs::self_test", self_test));
    trials.push(Trial::test("docs::docs/json.md:fields", json_fields));
    trials.push(Trial::test(
        "docs::checked_blocks_fail",
        checked_blocks_fail,
    ));
    for &doc in DOCUMENTS {
        let blocks = match read(doc) {
            Ok(b) => b,
            Err(e) => {
                trials.push(Trial::test(format!("docs::{doc}"), move || Err(e.into())));
                continue;
            }
        };
        let run: Vec<Block> = blocks
            .iter()
            .filter(|b| b.tag == Tag::Runnable)
            .cloned()
            .collect();
        runnable += run.iter().map(|b| b.commands.len()).sum::<usize>();
        trials.push(Trial::test(format!("docs::{doc}"), move || {
            let sb = Sandbox::new()?;
            for b in &run {
                for c in &b.commands {
                    check_command(&sb, doc, c)?;
                }
                if let Some((file, shown)) = &b.shows {
                    check_shown_file(&sb, doc, b.line, file, shown)?;
                }
                if let Some(c) = &b.checked {
                    check_block(doc, b.line, c)?;
                }
            }
            outputs_are_ignored(&sb, doc)?;
            Ok(())
        }));
        for b in blocks.into_iter().filter(|b| b.tag != Tag::Runnable) {
            let name = format!("docs::{doc}:{}", b.line);
            match b.tag {
                Tag::NotRun => {
                    not_run += 1;
                    let why = format!(
                        "not-run: {}",
                        b.reason
                            .as_deref()
                            .unwrap_or("installs, builds or benchmarks")
                    );
                    trials.push(Trial::ignorable_test(name, move || {
                        Ok(Completion::ignored_with(why))
                    }));
                }
                Tag::Release if cfg!(debug_assertions) => {
                    not_run += 1;
                    trials.push(Trial::ignorable_test(name, || {
                        Ok(Completion::ignored_with(
                            "release: too slow for a debug build; run with --release",
                        ))
                    }));
                }
                Tag::Release => {
                    runnable += b.commands.len();
                    trials.push(Trial::test(name, move || {
                        let sb = Sandbox::new()?;
                        for c in &b.commands {
                            check_command(&sb, doc, c)?;
                        }
                        Ok(())
                    }));
                }
                _ => {
                    external += 1;
                    trials.push(Trial::test(name, move || external_data_named(doc, &b)));
                }
            }
        }
    }
    format!(
        "{runnable} documented commands in runnable blocks, {external} blocks needing external data, {not_run} not run"
    )
}

/// A block of an input language is what it documents: a PRISM model the PRISM parser loads,
/// an abstraction spec `augur learn` loads, library code a test compiles and runs.
pub fn check_block(doc: &str, line: usize, c: &Checked) -> Result<(), String> {
    let at = format!("{doc}:{line}");
    let write = |sb: &Sandbox, name: &str, text: &str| {
        std::fs::write(sb.work.join(name), text).map_err(|e| format!("{at}: {name}: {e}"))
    };
    match c {
        Checked::Prism(text) => {
            let sb = Sandbox::new()?;
            write(&sb, "block.pm", text)?;
            let (code, lines, _) = sb.run("augur check block.pm --prop true")?;
            if code != 0 {
                return Err(format!(
                    "{at}: the PRISM block does not load (`augur check block.pm --prop true`, \
                     exit {code}):\n{}",
                    lines.join("\n")
                ));
            }
        }
        Checked::Abstraction(text) => {
            let sb = Sandbox::new()?;
            write(&sb, "block.toml", text)?;
            write(&sb, "empty.jsonl", "")?;
            let (code, _, stderr) =
                sb.run("augur learn empty.jsonl --abstraction block.toml -o model.json")?;
            if code != 1 || stderr.trim() != "error: empty.jsonl: no trace with at least one step" {
                return Err(format!(
                    "{at}: the abstraction spec does not load (`augur learn empty.jsonl \
                     --abstraction block.toml`, exit {code}; only the empty trace file may be \
                     an error):\n{stderr}"
                ));
            }
        }
        Checked::Rust(n, text) => {
            let Some(&(_, file)) = RUST_BLOCKS.iter().find(|(d, _)| *d == doc) else {
                return Err(format!(
                    "{at}: a rust block that no test compiles: put it in a test between \
                     `// {doc}, ...: begin` and `end` comments and the file in RUST_BLOCKS"
                ));
            };
            let source = std::fs::read_to_string(crate::util::root().join(file))
                .map_err(|e| format!("{file}: {e}"))?;
            let regions = marked_regions(&source, doc);
            let Some(region) = regions.get(n - 1) else {
                return Err(format!(
                    "{at}: the document's rust block {n} is not in {file} ({} marked regions \
                     `// {doc}, ...: begin`)",
                    regions.len()
                ));
            };
            let shown: Vec<&str> = text.lines().map(str::trim_end).collect();
            if *region != shown {
                return Err(format!(
                    "{at}: the rust block differs from the code {file} compiles and runs; \
                     the document:\n{}\n{file}:\n{}",
                    shown.join("\n"),
                    region.join("\n")
                ));
            }
        }
    }
    Ok(())
}

/// The regions of a source file between the comment lines `// DOC, ...: begin` and
/// `// DOC, ...: end`, each without its common indentation and trailing blanks.
pub fn marked_regions<'a>(source: &'a str, doc: &str) -> Vec<Vec<&'a str>> {
    let marker = format!("// {doc}, ");
    let mut out = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for l in source.lines() {
        let t = l.trim();
        if t.starts_with(&marker) && t.ends_with(": begin") {
            current = Some(Vec::new());
        } else if t.starts_with(&marker) && t.ends_with(": end") {
            if let Some(r) = current.take() {
                out.push(r);
            }
        } else if let Some(r) = current.as_mut() {
            r.push(l.trim_end());
        }
    }
    for r in &mut out {
        let indent = r
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        for l in r.iter_mut() {
            *l = l.get(indent..).unwrap_or("");
        }
    }
    out
}

/// The checks of the input-language blocks fail on a block that no longer parses (run on
/// the binary: a broken model, a spec naming an undeclared predicate).
pub fn checked_blocks_fail() -> Result<(), Failed> {
    let prism = "dtmc\nmodule m\n  s : [0..1] init 0;\n  [] s=0 -> (s'=2;\nendmodule\n";
    let err = check_block("x.md", 3, &Checked::Prism(prism.into())).unwrap_err();
    assert!(
        err.starts_with("x.md:3: the PRISM block does not load"),
        "{err}"
    );
    check_block(
        "x.md",
        3,
        &Checked::Prism(
            "dtmc\nmodule m\n  s : [0..1] init 0;\n  [] s=0 -> (s'=1);\nendmodule\n".into(),
        ),
    )?;
    let spec =
        "[variables]\nx = { type = \"int\", min = 0, max = 3 }\n[predicates]\nhigh = \"x > 1\"\n";
    check_block("x.md", 5, &Checked::Abstraction(spec.into()))?;
    let bad = format!("{spec}[validity]\nexclusive = [[\"a\", \"b\"]]\n");
    let err = check_block("x.md", 5, &Checked::Abstraction(bad)).unwrap_err();
    assert!(err.contains("undeclared predicate `a`"), "{err}");
    let err = check_block("x.md", 1, &Checked::Rust(1, "let x = 1;\n".into())).unwrap_err();
    assert!(err.contains("no test compiles"), "{err}");
    let err = check_block(
        "docs/monitor.md",
        1,
        &Checked::Rust(1, "let x = 1;\n".into()),
    )
    .unwrap_err();
    assert!(err.contains("differs from the code"), "{err}");
    // Each file of RUST_BLOCKS holds its document's rust blocks (checked here too, apart from
    // the document's commands, which run before them).
    for &(doc, _) in RUST_BLOCKS {
        let blocks = read(doc)?;
        let rust: Vec<_> = blocks
            .iter()
            .filter(|b| matches!(b.checked, Some(Checked::Rust(..))))
            .collect();
        assert!(!rust.is_empty(), "{doc}: no rust block");
        for b in rust {
            check_block(doc, b.line, b.checked.as_ref().expect("checked"))?;
        }
    }
    Ok(())
}

/// Every file the document's commands wrote (run from the repository root, as the documents
/// say) is ignored by the repository's `.gitignore` (issue 14, item 10): `git check-ignore
/// --no-index` on each path, relative to the root.
fn outputs_are_ignored(sb: &Sandbox, doc: &str) -> Result<(), String> {
    let mut written = Vec::new();
    let mut stack = vec![sb.work.clone()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            if p == sb.work.join("models") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(&sb.work) {
                written.push(rel.to_path_buf());
            }
        }
    }
    if written.is_empty() {
        return Ok(());
    }
    let o = Command::new("git")
        .arg("check-ignore")
        .arg("--no-index")
        .arg("--verbose")
        .arg("--non-matching")
        .args(&written)
        .current_dir(crate::util::root())
        .output()
        .map_err(|e| format!("running git check-ignore: {e}"))?;
    // `::\tPATH` marks a path that no pattern ignores.
    let kept: Vec<&str> = std::str::from_utf8(&o.stdout)
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.strip_prefix("::\t"))
        .collect();
    if o.stdout.is_empty() && !o.status.success() {
        return Err(format!(
            "git check-ignore failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    if kept.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{doc}: its commands write files that .gitignore does not ignore: {}",
            kept.join(", ")
        ))
    }
}

/// Without the data, the block's first command fails and says where the data comes from.
fn external_data_named(doc: &str, b: &Block) -> Result<(), Failed> {
    let sb = Sandbox::new()?;
    let c = &b.commands[0];
    let (code, _, stderr) = sb.run(&c.text)?;
    let at = format!("{doc}:{}: `{}`", c.line, c.text);
    if code != 1 {
        return Err(
            format!("{at}: without the data, exit code {code} (expected 1):\n{stderr}").into(),
        );
    }
    if !stderr.contains("not in this repository") {
        return Err(format!(
            "{at}: without the data, the message does not say where the data comes from:\n{stderr}"
        )
        .into());
    }
    Ok(())
}

/// The field names of the Markdown table that follows the line `intro` (its first column, in
/// backticks), in order.
pub fn table_fields(doc: &str, intro: &str) -> Result<Vec<String>, String> {
    let mut lines = doc.lines().skip_while(|l| l.trim() != intro);
    if lines.next().is_none() {
        return Err(format!("no line `{intro}`"));
    }
    let rows: Vec<&str> = lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .collect();
    rows.iter()
        .map(|r| {
            let cell = r.split('|').nth(1).unwrap_or("").trim();
            cell.strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .map(str::to_string)
                .ok_or_else(|| format!("after `{intro}`: a row without a `field`: {r}"))
        })
        .collect()
}

/// The keys of a JSON object, in order.
fn keys(v: &Json) -> Vec<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// docs/json.md's field tables name exactly the fields that `augur_check::Report` emits (serde),
/// with every optional field present: a field added, renamed or removed in the code, or in
/// the document alone, fails here. (The struct literals below stop compiling when a field is
/// added, which brings the author here.) `confidence` is the one field the library does not
/// emit: `augur check` adds it on learned interval models.
pub fn json_fields() -> Result<(), Failed> {
    use augur_check::{Bounds, FilterReport, ModelSummary, PropertyReport, Report, Scalar};
    let doc = std::fs::read_to_string(crate::util::root().join("docs/json.md"))
        .map_err(|e| format!("docs/json.md: {e}"))?;
    let entry = |filter: FilterReport| PropertyReport {
        name: Some("p".into()),
        property: "P=? [ F \"a\" ]".into(),
        value: Some(Scalar::Num(0.5)),
        bounds: Some(Bounds { lo: 0.5, hi: 0.5 }),
        method: Some("exact (1 unknowns)".into()),
        exact: Some("1/2".into()),
        seconds: 0.0,
        filter: Some(filter),
        notes: vec!["a note".into()],
        interval_rows_normalised: Some(1),
        printed: Some(vec![(0, Scalar::Num(0.5))]),
        states: Some(vec![Scalar::Num(0.5)]),
        error: Some("an error".into()),
    };
    let report = Report {
        schema_version: augur_check::SCHEMA_VERSION,
        model: ModelSummary {
            states: 1,
            transitions: 1,
            initial: vec![0],
            build_seconds: 0.0,
        },
        results: vec![
            entry(FilterReport::Range {
                initial_states: 2,
                min: Scalar::Num(0.5),
                max: Scalar::Num(0.5),
            }),
            entry(FilterReport::Forall { initial_states: 2 }),
        ],
        warnings: vec!["a warning".into()],
    };
    let json: Json = serde_json::from_str(&report.to_json()).map_err(|e| e.to_string())?;
    let result = &json["results"][0];
    let mut filter = keys(&result["filter"]);
    for k in keys(&json["results"][1]["filter"]) {
        if !filter.contains(&k) {
            filter.push(k);
        }
    }
    let mut entry_fields = keys(result);
    entry_fields.push("confidence".into());
    let sort = |mut v: Vec<String>| {
        v.sort();
        v
    };
    for (intro, emitted) in [
        ("Top level:", keys(&json)),
        ("`model`:", keys(&json["model"])),
        ("Each entry of `results`:", entry_fields),
        ("`filter` (several initial states):", filter),
    ] {
        let documented = table_fields(&doc, intro).map_err(|e| format!("docs/json.md: {e}"))?;
        if sort(documented.clone()) != sort(emitted.clone()) {
            return Err(format!(
                "docs/json.md, the table after `{intro}`: documents {documented:?}, the library \
                 emits {emitted:?}"
            )
            .into());
        }
    }
    Ok(())
}

/// The parser and the matcher of this module, on a small document.
pub fn self_test() -> Result<(), Failed> {
    let doc = "text\n```console\n$ augur a \\\n  b   # exit 1\nout ... 0.003 s\n\n$ augur c\n```\n\
               ```text\nx = 1\n```\n```sh not-run\n$ cargo build\n```\n";
    let b = blocks(doc)?;
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].tag, Tag::Runnable);
    assert_eq!(b[0].commands[0].text, "augur a b   # exit 1");
    assert_eq!(b[0].commands[0].exit, 1);
    assert_eq!(b[0].commands[0].shown, ["out ... 0.003 s"]);
    assert_eq!(b[0].commands[1].line, 7);
    assert_eq!(b[1].tag, Tag::NotRun);
    assert!(blocks("```\n$ augur x\n```\n").is_err());
    assert!(blocks("```console bogus\n$ augur x\n```\n").is_err());
    assert_eq!(
        blocks("```console release\n$ augur x\n```\n")?[0].tag,
        Tag::Release
    );
    assert_eq!(
        normalise("x (exact, 0.003 s) 12 s"),
        "x (exact, <t> s) <t> s"
    );
    assert_eq!(normalise("v2 s 1.5 steps"), "v2 s 1.5 steps");
    assert!(line_matches("a = 0.04...", "a = 0.0445 [x]"));
    assert!(line_matches("a ... c ... e", "a b c d e"));
    assert!(!line_matches("a ... c", "a b"));
    assert!(!line_matches("a", "ab"));
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(output_matches(&v(&["a", "b"]), &v(&["a", "b"])));
    assert!(!output_matches(&v(&["a"]), &v(&["a", "b"])));
    assert!(!output_matches(&v(&["b"]), &v(&["a", "b"])));
    assert!(output_matches(&v(&["...", "b"]), &v(&["a", "b"])));
    assert!(output_matches(
        &v(&["a", "...", "d"]),
        &v(&["a", "b", "c", "d"])
    ));
    assert!(output_matches(&v(&["a", "...", "b"]), &v(&["a", "b"])));
    assert!(output_matches(&v(&["..."]), &v(&[])));
    assert!(!output_matches(&v(&["a", "...", "c"]), &v(&["a", "b"])));
    assert!(output_matches(&v(&["x = ..."]), &v(&["x = 1"])));

    // `not-run` with the reason the test list shows.
    let b = blocks("```sh not-run needs cargo-fuzz\n$ cargo fuzz run x\n```\n")?;
    assert_eq!(
        (b[0].tag, b[0].reason.as_deref()),
        (Tag::NotRun, Some("needs cargo-fuzz"))
    );
    assert_eq!(
        blocks("```sh not-run\n$ cargo build\n```\n")?[0].reason,
        None
    );

    // JSON blocks: checked as JSON (with `...`); `json FILE` shows a file, in document order.
    let b = blocks("```json\n{\"a\": [1, ...], ...}\n```\n```json out.json\n{\"a\": 1}\n```\n")?;
    assert_eq!(
        b.len(),
        1,
        "an untagged JSON block is only checked to be JSON"
    );
    assert_eq!(
        b[0].shows,
        Some(("out.json".to_string(), "{\"a\": 1}\n".to_string()))
    );
    assert!(b[0].commands.is_empty());
    assert!(blocks("```json\n{\"a\": 1,}\n```\n").is_err());
    assert!(blocks("```json a b\n{}\n```\n").is_err());
    let j = |t: &str| serde_json::from_str::<Json>(t).unwrap();
    let any = || Json::String(ANY.into());
    assert_eq!(pattern("[1, ...]")?, Json::Array(vec![j("1"), any()]));
    assert_eq!(
        pattern("{\"a\": ..., ...}")?,
        Json::Object(
            [("a".to_string(), any()), (ANY.to_string(), Json::Null)]
                .into_iter()
                .collect()
        )
    );
    assert_eq!(pattern("{...}")?, pattern("{ ... }")?);
    assert_eq!(pattern("\"a ... \\\" ...\"")?, j("\"a ... \\\" ...\""));
    assert_eq!(pattern("[0.5, 1e-3]")?, j("[0.5, 1e-3]"));
    assert!(pattern("[1, ..]").is_err());
    let m = |shown: &str, got: &str| json_matches(&pattern(shown).unwrap(), &j(got), "");
    assert!(m("{\"a\": 1, \"b\": [1, 2]}", "{\"b\": [1, 2], \"a\": 1.0}").is_ok());
    assert_eq!(
        m("{\"a\": 1}", "{\"a\": 1, \"b\": 2}").unwrap_err(),
        "b: in the file, neither shown in the document nor left out (`...`)"
    );
    assert!(m("{\"a\": 1, ...}", "{\"a\": 1, \"b\": 2}").is_ok());
    assert!(m("{\"a\": 1, \"b\": 2}", "{\"a\": 1}")
        .unwrap_err()
        .starts_with("b: shown"));
    assert!(m("{\"r\": [{\"x\": 1}]}", "{\"r\": [{\"x\": 2}]}")
        .unwrap_err()
        .starts_with("r[0].x: the document shows 1, the file has 2"));
    assert!(m("{\"r\": {\"x\": 1}}", "{\"r\": {\"x\": 2}}")
        .unwrap_err()
        .starts_with("r.x: "));
    assert!(m("{\"build_seconds\": 0.1}", "{\"build_seconds\": 7}").is_ok());
    assert!(m("{\"build_seconds\": 0.1}", "{\"build_seconds\": null}").is_err());
    assert!(m("{\"states\": 3}", "{\"states\": 4}").is_err());
    assert!(m(
        "{\"e\": \"unknown ... (known: ...)\"}",
        "{\"e\": \"unknown x (known: a, b)\"}"
    )
    .is_ok());
    assert!(m("{\"e\": \"unknown ...\"}", "{\"e\": \"known x\"}").is_err());
    assert!(m("[1, ..., 4]", "[1, 2, 3, 4]").is_ok());
    assert!(m("[1, ...]", "[1]").is_ok());
    assert!(m("[1, ...]", "[2, 1]").is_err());
    assert!(m("[1, 2]", "[1, 2, 3]").is_err());
    assert!(m("{\"a\": ...}", "{\"a\": {\"b\": [1]}}").is_ok());
    assert!(m("null", "0").is_err());
    assert!(m("[1, 2]", "[1, 2, 3]")
        .unwrap_err()
        .contains("2 elements, the file has 3"));

    // Input-language blocks: checked as what they are; a toml block says what it is.
    let b = blocks("```prism\ndtmc\n```\n```toml abstraction\n[variables]\n```\n```rust\nlet x = 1;\n```\n```text\nx\n```\n")?;
    assert_eq!(b.len(), 3);
    assert_eq!(b[0].checked, Some(Checked::Prism("dtmc\n".into())));
    assert_eq!(
        b[1].checked,
        Some(Checked::Abstraction("[variables]\n".into()))
    );
    assert_eq!(b[2].checked, Some(Checked::Rust(1, "let x = 1;\n".into())));
    assert!(blocks("```toml\nx = 1\n```\n").is_err());
    assert!(blocks("```rust ignore\nx\n```\n").is_err());
    let src = "fn f() {\n    // d.md, a: begin\n    let x = 1;\n      y();\n    // d.md, a: end\n    // e.md, b: begin\n}\n";
    assert_eq!(
        marked_regions(src, "d.md"),
        vec![vec!["let x = 1;", "  y();"]]
    );
    assert!(marked_regions(src, "e.md").is_empty());

    // The field tables of docs/json.md.
    let t = "x:\n\n| field | type |\n|---|---|\n| `a` | int |\n| `b_c` | `x` |\n\nafter\n| `z` |\n";
    assert_eq!(table_fields(t, "x:")?, ["a", "b_c"]);
    assert!(table_fields(t, "y:").is_err());
    assert!(table_fields("x:\n| f |\n|-|\n| a |\n", "x:").is_err());
    Ok(())
}
