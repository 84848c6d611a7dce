//! What the test binaries share (ripgrep's `tests/util.rs`): running the `augur` binary from
//! the repository root, the paths of the example models and fixtures, the one reader of PRISM's
//! `// RESULT:` lines and the one comparison of a result with its expected value, and the
//! `../shared` reference folder.
//!
//! Both `tests/integration` and `tests/conformance` include this module
//! (`#[path = "../util/mod.rs"] mod util;`); not every binary uses every helper.

#![allow(dead_code)]

pub mod results;

use serde_json::Value as Json;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root (the `augur` package's manifest directory).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `models/`.
pub fn model(name: &str) -> PathBuf {
    root().join("models").join(name)
}

/// A file under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// The `augur` binary as a command, run from the repository root (so that the documented
/// relative paths such as `models/safetydrift.tra` work).
pub fn cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_augur"));
    c.current_dir(root());
    c
}

/// Runs `augur ARGS` from the repository root and returns its exit status and output.
pub fn augur<S: AsRef<OsStr>>(args: &[S]) -> Output {
    cmd().args(args).output().expect("running the augur binary")
}

/// Runs `augur ARGS` with `input` on its standard input.
pub fn augur_stdin<S: AsRef<OsStr>>(args: &[S], input: &str) -> Output {
    let mut child = cmd()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running the augur binary");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writing stdin");
    child.wait_with_output().expect("waiting for augur")
}

/// The exit code (`-1` when the process was killed by a signal).
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `augur ARGS`, which must succeed; returns its standard output.
pub fn ok<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let o = augur(args);
    assert!(
        o.status.success(),
        "augur {args:?} failed ({}): {}",
        code(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// Runs `augur ARGS`, which must be a user error (exit code 1); returns its standard error.
pub fn fail<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let o = augur(args);
    assert_eq!(
        code(&o),
        1,
        "augur {args:?} should fail with 1: {}{}",
        stdout(&o),
        stderr(&o)
    );
    stderr(&o)
}

/// Standard output parsed as one JSON document.
pub fn stdout_json(o: &Output) -> Json {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            stdout(o),
            stderr(o)
        )
    })
}

/// Standard output parsed as JSON Lines, one document a line.
pub fn stdout_json_lines(o: &Output) -> Vec<Json> {
    stdout(o)
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "a stdout line is not JSON ({e}): {l}\nstderr:\n{}",
                    stderr(o)
                )
            })
        })
        .collect()
}

/// Whether `CI=true`: then a missing `../shared` is a failure, not a skip.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `../shared/SUB` beside the repository (or under `$AUGUR_SHARED` when set, e.g. to see what
/// a clone without the reference data runs), or why it cannot be used (the reason printed for
/// the skipped tests).
pub fn shared_dir(sub: &str) -> Result<PathBuf, String> {
    let base = match std::env::var_os("AUGUR_SHARED") {
        Some(d) => PathBuf::from(d),
        None => root().join("..").join("shared"),
    };
    let dir = base.join(sub);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "{} not found: the reference data sits beside the repository as ../shared",
            dir.display()
        ))
    }
}

/// What [`capped`] gives: the exit code (`None` when killed by a signal) and the output.
pub struct Capped {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `augur args` in `dir` with its address space capped at `memory_kib` KiB (`ulimit -v`:
/// an input that asks for gigabytes fails the test instead of troubling the machine) and a
/// `watchdog` (a hang fails the test instead of CI; it asserts no timing). The binary is
/// `AUGUR_BIN_UNDER_TEST` when set (to run the same reproducers against another build, e.g.
/// the previous release's), else the one built with the tests.
pub fn capped(dir: &Path, args: &[&str], memory_kib: u64, watchdog: std::time::Duration) -> Capped {
    use std::io::Read;
    let bin = std::env::var("AUGUR_BIN_UNDER_TEST")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_augur").to_string());
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {memory_kib}; exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run augur");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for augur") {
            break status;
        }
        if start.elapsed() > watchdog {
            let _ = child.kill();
            let _ = child.wait();
            panic!("augur {args:?} still running after {watchdog:?}: a hang");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Capped {
        code: status.code(),
        stdout: t_out.join().expect("stdout reader"),
        stderr: t_err.join().expect("stderr reader"),
    }
}
