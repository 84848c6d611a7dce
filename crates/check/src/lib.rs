//! augur-check: the one entry point for checking. Every front-end — the `augur` CLI, the runtime
//! monitor, the MCP server, the Python package — loads models, compiles properties and checks
//! them through this crate, and nothing below it.
//!
//! Main types:
//! - [`Model`]: a model loaded by file name (format by extension: `.pm`/`.prism`, `.tra` with
//!   its companions, `.drn`, `.json`) or from text with a [`Format`], with [`LoadOptions`]
//!   (constants, exact numbers, deadlock fixing, [`Limits`]).
//! - [`Constants`]: values given for constants (`N=3,p=0.5`).
//! - [`Properties`]: a properties file and single properties, parsed;
//!   [`Properties::compile`] resolves them against a model ([`CompiledProperties`]: constants
//!   substituted, bounds checked once, labels and formulas resolved — see
//!   [`augur_pctl::resolve`]).
//! - [`CheckSession`]: checks compiled properties (or property text, [`CheckSession::check_str`]) on one
//!   model under [`CheckOptions`], sharing work between them; [`CheckSession::horizon`] builds the
//!   all-horizon table P(F≤h target).
//! - [`CheckResult`]: the value with its [`Bounds`], the per-state [`StateValues`], the
//!   [`MethodUsed`] and notes; [`Report`]: the serialisable JSON of `augur check --json`
//!   (`docs/json.md`, [`SCHEMA_VERSION`]).
//! - [`Limits`]: timeout, maximum number of states, cancellation flag and progress callback,
//!   honoured by the PRISM exploration, the solvers and the bounded operators.
//! - [`CheckError`]: typed errors; user errors carry a located [`augur_source::Diagnostic`],
//!   [`CheckError::is_internal`] tells the failures that are not the user's.
//!
//! The PCTL checker itself ([`checker::Checker`]) walks a resolved formula over the DTMC and
//! reduces every operator to the numerical problems of `augur-solver`, which knows nothing about
//! PCTL.
//!
//! ```
//! use augur_check::{CheckOptions, Constants, LoadOptions, Model, Properties, Report, CheckSession};
//! use augur_check::Format;
//! let text = "dtmc
//! const double p;
//! module coin
//!   x : [0..2] init 0;
//!   [] x=0 -> p : (x'=1) + (1-p) : (x'=2);
//!   [] x>0 -> true;
//! endmodule
//! label \"heads\" = x=1;";
//! let constants = Constants::parse("p=0.25").unwrap();
//! let opts = LoadOptions { constants: constants.clone(), ..LoadOptions::default() };
//! let model = Model::from_text("coin.pm", text, Format::Prism, &opts).unwrap();
//! let mut props = Properties::new();
//! props.add("--prop", "\"h\": P=? [ F \"heads\" ]").unwrap();
//! props.add("--prop", "P>=p [ F x=2 ]").unwrap();
//! let compiled = props.compile(&model, &constants).unwrap();
//! let mut session = CheckSession::new(&model, CheckOptions::default());
//! let mut report = Report::new(&model);
//! for (p, outcome) in compiled.items.iter().zip(session.check_all(&compiled)) {
//!     report.push(p.name.as_deref(), &p.text, &outcome, false);
//! }
//! assert_eq!(report.results[0].value, Some(augur_check::Scalar::Num(0.25)));
//! assert_eq!(report.results[1].value, Some(augur_check::Scalar::Bool(true)));
//! assert!(report.to_json().starts_with("{\"schema_version\":1,"));
//! ```
#![deny(missing_docs)]

pub mod checker;
mod constants;
mod error;
mod limits;
mod model;
mod properties;
mod report;
mod result;
mod session;

pub use augur_pctl::BigRational;
pub use augur_solver::bounded::HorizonTable;
pub use augur_solver::Method;
pub use constants::{ConstRange, Constants, Experiments, MAX_EXPERIMENT_RUNS};
pub use error::{CheckError, Result, Stop};
pub use limits::{Limits, Progress, ProgressFn, DEFAULT_MAX_STATES};
pub use model::{ExplicitTexts, Format, LoadOptions, Model};
pub use properties::{CompiledProperties, CompiledProperty, Properties};
pub use report::{FilterReport, ModelSummary, PropertyReport, Report, SCHEMA_VERSION};
pub use result::{
    format_exact, Bounds, CheckResult, ExactFormat, InitialFilter, MethodUsed, NumValues, Scalar,
    StateValues, DECIMAL_DIGITS,
};
pub use session::{check_str, CheckOptions, CheckSession, MAX_HORIZON_ENTRIES};

/// Reads a user-named text file; a byte-order mark is dropped. Failures are user errors
/// naming the file. Under [`augur_formats::confine::within_root`] only a file inside the root
/// is read.
pub fn read_text(path: &std::path::Path) -> Result<String> {
    use std::io::Read as _;
    let cannot =
        |e: std::io::Error| CheckError::input(format!("cannot read {}: {e}", path.display()));
    let mut bytes = Vec::new();
    augur_formats::confine::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(cannot)?;
    let mut text =
        augur_source::decode_utf8(&path.display().to_string(), bytes).map_err(CheckError::Input)?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
