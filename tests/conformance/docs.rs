//! The documents as tests: every command block of `README.md`, `models/README.md`,
//! `models/learning.md`, `docs/monitor.md`, `docs/scale.md`, `docs/robust.md`, `docs/explain.md` and `docs/exact.md` is run, and its output compared with what the document shows, so the
//! documents cannot drift from the program.
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
//! - `not-run`: installs, builds, benchmarks. Shown as an ignored test with that reason.
//! - `release`: runnable, but too slow for a debug build (a large model's derivation): a test
//!   of its own, in a fresh directory, run in release builds
//!   (`cargo test --workspace --release --test conformance -- docs::`) and shown as ignored
//!   with that reason in debug builds.
//!
//! After a document's runnable commands, every file they wrote must be ignored by the
//! repository's `.gitignore` (`git check-ignore`): the outputs of documented commands never
//! show up as changes in a clone.
//!
//! Blocks of other languages (`text`, `toml`, ...) are not commands; a block without a
//! language must not hold a `$ augur` line (so a command block cannot lose its tag unseen).

use libtest_mimic::{Completion, Failed, Trial};
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
    "docs/mcp.md",
];

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

/// One command block.
#[derive(Clone, Debug)]
pub struct Block {
    pub line: usize,
    pub tag: Tag,
    pub commands: Vec<DocCommand>,
}

/// The command blocks of a Markdown document, or an error naming the offending line.
pub fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
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
        let tag = match tags.as_slice() {
            [] => Tag::Runnable,
            ["needs-external-data"] => Tag::NeedsExternalData,
            ["not-run"] => Tag::NotRun,
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
            }
            outputs_are_ignored(&sb, doc)?;
            Ok(())
        }));
        for b in blocks.into_iter().filter(|b| b.tag != Tag::Runnable) {
            let name = format!("docs::{doc}:{}", b.line);
            match b.tag {
                Tag::NotRun => {
                    not_run += 1;
                    trials.push(Trial::ignorable_test(name, || {
                        Ok(Completion::ignored_with(
                            "not-run: installs, builds or benchmarks",
                        ))
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

/// The parser and the matcher of this module, on a small document.
pub fn self_test() -> Result<(), Failed> {
    let doc = "text\n```console\n$ augur a \\\n  b   # exit 1\nout ... 0.003 s\n\n$ augur c\n```\n\
               ```toml\nx = 1\n```\n```sh not-run\n$ cargo build\n```\n";
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
    Ok(())
}
