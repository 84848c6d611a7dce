//! Shared helpers of the conformance tests: finding `../shared`, running the binary.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The shared reference folder (`../shared` beside the repository), or `None` after printing
/// a notice when it is absent. Under `CI=true` a missing folder is a failure.
pub fn shared_dir(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{} is missing (required under CI=true)", dir.display());
    }
    eprintln!(
        "SKIPPED: {} not found (conformance data lives beside the repository)",
        dir.display()
    );
    None
}

/// Output of one run of the `augur` binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn augur(args: &[String]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_augur"))
        .args(args)
        .output()
        .expect("running the augur binary");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Whether `got` is within `rel` relative error of `want` (absolute `abs` when `want` is 0).
pub fn close(got: f64, want: f64, rel: f64, abs: f64) -> bool {
    if want == 0.0 {
        got.abs() <= abs
    } else {
        (got - want).abs() <= rel * want.abs()
    }
}
