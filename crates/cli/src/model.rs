//! Loading a model by extension: the one place where every model format is wired.

use crate::error::CliError;
use augur_dtmc::{read_model, BuildReport, Dtmc, Format, ReadOptions};
use augur_expr::Value;
use std::path::Path;
use std::time::Instant;

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
    let start = Instant::now();
    match Format::from_path(path) {
        Some(Format::Prism) => {
            let _ = consts;
            Err(CliError::User(format!(
                "error: {}: PRISM-language models are not supported yet (use .tra, .drn or .json)",
                path.display()
            )))
        }
        Some(Format::Tra | Format::Drn | Format::Json) => {
            let (dtmc, report) = read_model(path, &ReadOptions::default())
                .map_err(|e| CliError::User(format!("error: {e}")))?;
            Ok(LoadedModel {
                dtmc,
                constants: Vec::new(),
                build_seconds: start.elapsed().as_secs_f64(),
                notes: report_notes(&report),
            })
        }
        _ => Err(CliError::User(format!(
            "error: {}: unknown model format (expected .tra, .drn, .json, .pm or .prism)",
            path.display()
        ))),
    }
}
