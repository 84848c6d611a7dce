//! The `augur` command-line tool.
//!
//! Each subcommand lives in its own module (`parse_cmd`, ...) exposing an `Args` struct
//! (clap derive) and `fn run(args, out) -> Result<(), CliError>`; `main` only dispatches and maps
//! errors to exit codes: 0 success, 1 user error (bad file, bad property, bad arguments, a
//! limit hit), 2 internal error, 3 a requirement checked with `--assert` does not hold. Only this crate prints. Loading and checking go through
//! `augur-check` (this crate depends on neither `augur-solver` nor `augur-prism`).

mod check_cmd;
mod error;
mod experiment_cmd;
mod explain_cmd;
mod export_cmd;
#[cfg(test)]
mod glossary;
mod hook_cmd;
mod horizon_cmd;
mod learn_cmd;
mod limits;
mod mcp_cmd;
mod monitor_cmd;
mod monitor_learn_cmd;
mod options;
mod pac_cmd;
mod param_cmd;
mod parse_cmd;
mod simulate_cmd;
mod smoothing;
mod table;

use clap::{Parser, Subcommand};
use error::CliError;
use std::io::Write;
use std::process::ExitCode;

/// The version line's text: the package version and the optional cargo features this binary
/// was built with, `+` on and `-` off (as ripgrep lists its own).
macro_rules! version_line {
    ($parquet:literal, $http:literal) => {
        concat!(
            env!("CARGO_PKG_VERSION"),
            " (features: ",
            $parquet,
            "parquet ",
            $http,
            "http-upstream)"
        )
    };
}
#[cfg(all(feature = "parquet", feature = "http-upstream"))]
const VERSION: &str = version_line!("+", "+");
#[cfg(all(feature = "parquet", not(feature = "http-upstream")))]
const VERSION: &str = version_line!("+", "-");
#[cfg(all(not(feature = "parquet"), feature = "http-upstream"))]
const VERSION: &str = version_line!("-", "+");
#[cfg(not(any(feature = "parquet", feature = "http-upstream")))]
const VERSION: &str = version_line!("-", "-");

/// Augur: a probabilistic model checker for discrete-time Markov chains.
#[derive(Debug, Parser)]
#[command(
    name = "augur",
    version = VERSION,
    about,
    long_about = None,
    after_help = "Exit codes: 0 success, 1 user error (bad file, property or option; a limit \
                  hit), 2 internal error, 3 a requirement checked with --assert does not hold \
                  (check: a false boolean property; pac: an unmet PAC bound)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands (one module each).
#[derive(Debug, Subcommand)]
enum Command {
    /// Parse PCTL properties and print them in canonical form (or as JSON).
    Parse(parse_cmd::ParseArgs),
    /// Check PCTL properties on a model.
    Check(check_cmd::CheckArgs),
    /// Counterexamples and explanations: the most probable paths, a critical subsystem,
    /// the states carrying an expected reward (docs/explain.md).
    Explain(explain_cmd::ExplainArgs),
    /// The all-horizon table P(F<=h target) for h = 1..H and every state.
    Horizon(horizon_cmd::HorizonArgs),
    /// Convert a model to another format (tra, drn, json, dot, prism).
    Export(export_cmd::ExportArgs),
    /// Learn a DTMC from traces (validity-aware Laplace smoothing), keeping the counts.
    Learn(learn_cmd::LearnArgs),
    /// PAC sample-size bounds for a learned model, or the calculator form.
    Pac(pac_cmd::PacArgs),
    /// Write seeded random traces of a DTMC in the JSON Lines trace format.
    Simulate(simulate_cmd::SimulateArgs),
    /// The runtime monitor: compile, gate, replay, eval, agentdojo.
    Monitor(monitor_cmd::MonitorArgs),
    /// An MCP server over stdio: the monitor's gate and the checker as tools; with --upstream
    /// the gateway in front of the agent's tool servers (docs/mcp.md).
    Mcp(mcp_cmd::McpArgs),
    /// A client's hooks for its built-in tools: `augur hook claude-code` (docs/mcp.md).
    Hook(hook_cmd::HookArgs),
}

/// The learning commands report every failure as a user error (bad trace, spec or model file,
/// bad parameter, unwritable output), with its location when it has one.
fn learning_error(e: anyhow::Error) -> CliError {
    // Writing to a closed stdout (`augur simulate ... | head`) is not a user error.
    let broken_pipe = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return CliError::BrokenPipe;
    }
    // The library's own errors print through their diagnostics (located ones with the line
    // and a caret).
    if let Some(d) = e.downcast_ref::<augur_source::Diagnostic>() {
        return d.clone().into();
    }
    if let Some(l) = e.downcast_ref::<augur_learn::LearnError>() {
        return l.diagnostic().into();
    }
    if let Some(f) = e.downcast_ref::<augur_formats::FormatError>() {
        return f.diagnostic().into();
    }
    CliError::User(format!("error: {e:#}"))
}

/// Lets glibc's allocator keep freed memory for reuse instead of returning it to the system:
/// every block comes from the heap (no `mmap` of its own, which is unmapped again on `free`),
/// and the heap is not trimmed below 1 GiB of free space. A page the process has never touched
/// costs a page fault when first written (measured on this project's 2-core VM: 1.6 µs per
/// 4 KiB page, 16× the cost of clearing it), and a check allocates large short-lived vectors
/// (the transpose, the linear system, bounds) after the build has freed its own. Reusing that
/// memory took the checks of crowds.6-10 from 0.050 s to 0.036 s and of crowds.6-15 from
/// 0.45 s to 0.32 s. Peak memory is the high-water mark either way (crowds.6-15: 343 MB
/// before, 357–371 MB after). Not used for `augur mcp`, a long-running server that should
/// give memory back.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_allocator() {
    // SAFETY: `mallopt` only sets two parameters of glibc's allocator; it is called once,
    // before this process starts any thread, with values glibc documents as valid. Its result
    // only says whether the setting was taken; either way allocation stays correct.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

/// Elsewhere the system allocator keeps its defaults.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// PRISM's single-dash spellings that users paste from PRISM command lines, and the Augur
/// option each means: `-pf`, `-pctl` and `-prop` give a property (`--prop`), `-const` the
/// constants (`--const N=3,K=2`, the same syntax).
const PRISM_SPELLINGS: [(&str, &str); 5] = [
    ("-pf", "--prop"),
    ("-pctl", "--prop"),
    ("-prop", "--prop"),
    ("-const", "--const"),
    ("-param", "--param"),
];

/// The arguments with PRISM's spellings ([`PRISM_SPELLINGS`]) replaced by Augur's. Only a
/// whole argument is replaced, never the value of an option (`--prop -pf` keeps `-pf`) nor
/// anything after `--`.
fn prism_spellings(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut rest = false;
    for a in args {
        let value_of_option = out
            .last()
            .and_then(|p| p.to_str())
            .is_some_and(|p| p == "--prop" || p == "--const" || p == "--param");
        let replaced = match a.to_str() {
            Some("--") => {
                rest = true;
                None
            }
            Some(t) if !rest && !value_of_option => PRISM_SPELLINGS
                .iter()
                .find(|(prism, _)| *prism == t)
                .map(|(_, augur)| std::ffi::OsString::from(augur)),
            _ => None,
        };
        out.push(replaced.unwrap_or(a));
    }
    out
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(prism_spellings(std::env::args_os())) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors; every other argument error is a user error,
            // except for `augur hook`, whose caller (a client's hook runner) lets a tool call
            // through on any exit code but 2: a misconfigured hook must block, not allow.
            let hook = std::env::args_os().nth(1).is_some_and(|a| a == "hook");
            let code = match (e.use_stderr(), hook) {
                (false, _) => 0,
                (true, false) => 1,
                (true, true) => 2,
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // The MCP server owns stdout (the protocol); it must not be locked here.
    if let Command::Mcp(args) = &cli.command {
        return finish(mcp_cmd::run(args));
    }
    // A hook answers in its client's protocol and exit codes (2 blocks), not the CLI's.
    if let Command::Hook(args) = &cli.command {
        return hook_cmd::run(args);
    }
    // A one-shot command keeps the memory it frees for reuse (the long-running server does
    // not: it gives memory back).
    tune_allocator();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::Parse(args) => parse_cmd::run(&args, &mut out),
        Command::Check(args) => check_cmd::run(&args, &mut out),
        Command::Explain(args) => explain_cmd::run(&args, &mut out),
        Command::Horizon(args) => horizon_cmd::run(&args, &mut out),
        Command::Export(args) => export_cmd::run(&args, &mut out),
        Command::Learn(args) => learn_cmd::run(&args, &mut out).map_err(learning_error),
        Command::Pac(args) => pac_cmd::run(&args, &mut out)
            .map_err(learning_error)
            .and_then(|holds| {
                if args.assert && !holds {
                    Err(CliError::AssertionFailed(
                        "assertion failed: the PAC requirement does not hold (--assert)".into(),
                    ))
                } else {
                    Ok(())
                }
            }),
        Command::Simulate(args) => simulate_cmd::run(&args, &mut out).map_err(learning_error),
        Command::Monitor(args) => monitor_cmd::run(&args, &mut out),
        Command::Mcp(args) => mcp_cmd::run(&args), // (returned above)
        Command::Hook(args) => {
            // (returned above)
            return hook_cmd::run(&args);
        }
    };
    let result = result.and_then(|()| out.flush().map_err(CliError::from));
    finish(result)
}

/// The exit code of a subcommand's outcome (its message printed to stderr).
fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        // `eprint!` panics when stderr is closed; a failed diagnostic must not turn into a panic.
        Err(CliError::User(msg)) => {
            let nl = if msg.ends_with('\n') { "" } else { "\n" };
            let _ = write!(std::io::stderr(), "{msg}{nl}");
            ExitCode::from(1)
        }
        Err(CliError::AssertionFailed(msg)) => {
            let _ = writeln!(std::io::stderr(), "{msg}");
            ExitCode::from(3)
        }
        Err(CliError::Internal(e)) => {
            let _ = writeln!(std::io::stderr(), "internal error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::prism_spellings;

    fn rewrite(args: &[&str]) -> Vec<String> {
        prism_spellings(args.iter().map(std::ffi::OsString::from))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn prism_spellings_become_augur_options_only_as_whole_options() {
        assert_eq!(
            rewrite(&[
                "augur",
                "check",
                "m.pm",
                "-pf",
                "P=? [ F \"a\" ]",
                "-const",
                "N=3,K=2"
            ]),
            [
                "augur",
                "check",
                "m.pm",
                "--prop",
                "P=? [ F \"a\" ]",
                "--const",
                "N=3,K=2"
            ]
        );
        assert_eq!(
            rewrite(&["augur", "-pctl", "-prop"]),
            ["augur", "--prop", "-prop"]
        );
        // The value of an option, and anything after `--`, is kept.
        assert_eq!(
            rewrite(&["augur", "--prop", "-pf"]),
            ["augur", "--prop", "-pf"]
        );
        assert_eq!(rewrite(&["augur", "--", "-pf"]), ["augur", "--", "-pf"]);
        assert_eq!(rewrite(&["augur", "-pfx", "-p"]), ["augur", "-pfx", "-p"]);
    }
}
