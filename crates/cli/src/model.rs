//! Loading a model by extension: the one place where every model format is wired.

use crate::error::CliError;
use augur_dtmc::{BuildReport, Dtmc};
use augur_expr::Value;
use augur_formats::{read_model, Format, ReadOptions};
use augur_prism::{BuildOptions, BuildProgress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

/// How to load a model (the options that matter for PRISM-language models).
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Read the model's numbers as exact rationals and fill `Dtmc::exact` (`--method exact`).
    pub exact: bool,
    /// Give deadlock states a self-loop with a warning (default) instead of failing
    /// (`--no-fix-deadlocks`).
    pub fix_deadlocks: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            exact: false,
            fix_deadlocks: true,
        }
    }
}

/// A model ready to check.
pub struct LoadedModel {
    /// The DTMC.
    pub dtmc: Dtmc,
    /// Constants defined by the model (PRISM-language models), usable in properties.
    pub constants: Vec<(String, Value)>,
    /// Seconds spent reading and building.
    pub build_seconds: f64,
    /// Remarks about the build (deadlocks fixed, entries merged), for the user.
    pub notes: Vec<String>,
    /// The PRISM model, for PRISM-language files (its formulas may be used in properties).
    pub prism: Option<augur_prism::Model>,
}

fn report_notes(r: &BuildReport) -> Vec<String> {
    let mut notes = Vec::new();
    if !r.deadlocks_fixed.is_empty() {
        notes.push(format!(
            "{} state(s) without successors got a self-loop (first: {})",
            r.deadlocks_fixed.len(),
            r.deadlocks_fixed[0]
        ));
    }
    if r.duplicates_merged > 0 {
        notes.push(format!(
            "{} duplicate transition(s) merged by summing",
            r.duplicates_merged
        ));
    }
    notes
}

/// Load the model at `path`, chosen by extension: `.tra` (with the `.lab/.srew/.trew/.sta`
/// of the same stem), `.drn`, `.json`; `.pm`/`.prism` (PRISM language, with `consts` for
/// its undefined constants).
pub fn load_model(path: &Path, consts: &[(String, Value)]) -> Result<LoadedModel, CliError> {
    load_model_with(path, consts, &LoadOptions::default())
}

/// [`load_model`] with options. PRISM build warnings (deadlocks, several enabled choices) are
/// printed on stderr; a build that takes more than a second shows a progress line on stderr
/// when it is a terminal.
pub fn load_model_with(
    path: &Path,
    consts: &[(String, Value)],
    opts: &LoadOptions,
) -> Result<LoadedModel, CliError> {
    let start = Instant::now();
    match Format::from_path(path) {
        Some(Format::Prism) => load_prism(path, consts, opts, start),
        Some(Format::Tra | Format::Drn | Format::Json) => {
            let (dtmc, report) =
                read_model(path, &ReadOptions::default()).map_err(|e| e.diagnostic())?;
            Ok(LoadedModel {
                dtmc,
                constants: Vec::new(),
                build_seconds: start.elapsed().as_secs_f64(),
                notes: report_notes(&report),
                prism: None,
            })
        }
        _ => Err(CliError::User(format!(
            "error: {}: unknown model format (expected .tra, .drn, .json, .pm or .prism)",
            path.display()
        ))),
    }
}

fn load_prism(
    path: &Path,
    consts: &[(String, Value)],
    opts: &LoadOptions,
    start: Instant,
) -> Result<LoadedModel, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::User(format!("error: {}: {e}", path.display())))?;
    let name = path.display().to_string();
    let model = augur_prism::parse_model(&text, &name).map_err(prism_failure)?;
    // Progress: a spinner line on stderr, only on a terminal and only once the build has
    // taken more than a second.
    let bar = ProgressBar::hidden();
    let tty = std::io::stderr().is_terminal();
    let progress = |p: BuildProgress| {
        if !tty {
            return;
        }
        let elapsed = start.elapsed();
        if p.done {
            bar.finish_and_clear();
            return;
        }
        if elapsed < Duration::from_secs(1) {
            return;
        }
        if bar.is_hidden() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} building {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
        }
        let rate = p.explored as f64 / elapsed.as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{} states ({} explored), {} transitions, {:.0} states/s",
            p.states, p.explored, p.transitions, rate
        ));
        bar.tick();
    };
    let build_opts = BuildOptions {
        exact: opts.exact,
        fix_deadlocks: opts.fix_deadlocks,
        valuations: true,
        progress: Some(&progress),
    };
    let result = model.build(consts, &build_opts);
    bar.finish_and_clear();
    let (dtmc, report) = result.map_err(prism_failure)?;
    for w in &report.warnings {
        crate::error::diag(format_args!("warning: {name}: {w}"));
    }
    Ok(LoadedModel {
        dtmc,
        constants: report.constants.clone(),
        build_seconds: start.elapsed().as_secs_f64(),
        notes: Vec::new(),
        prism: Some(model),
    })
}

fn prism_failure(e: augur_prism::PrismError) -> CliError {
    match e {
        augur_prism::PrismError::Limit { .. } => CliError::Internal(anyhow::anyhow!("{e}")),
        e => e.diagnostic().into(),
    }
}
