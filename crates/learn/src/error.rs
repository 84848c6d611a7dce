//! The crate's error type.

use augur_abstraction::AbstractionError;
use augur_formats::FormatError;
use augur_source::{Diagnostic, Location};
use std::path::PathBuf;

/// Errors of learning from traces, PAC computations and simulation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LearnError {
    /// No trace had a single step, so the model would have no initial state.
    #[error("no traces: cannot learn a model without at least one trace step")]
    NoTraces,
    /// A trace file in which no trace has a step (some may have been skipped as invalid).
    #[error("{file}: no trace with at least one step{}", if *.skipped > 0 { format!(" ({skipped} skipped)") } else { String::new() })]
    EmptyTraceFile {
        /// The trace file.
        file: String,
        /// How many bad lines or traces were skipped.
        skipped: usize,
    },
    /// The smoothing parameter is negative or not a number.
    #[error("invalid smoothing parameter alpha = {0}: it must be a finite number >= 0")]
    BadAlpha(f64),
    /// A confidence level outside (0, 1) (`--confidence`).
    #[error("invalid confidence {0}: it must be a number strictly between 0 and 1 (e.g. 0.95)")]
    BadConfidence(f64),
    /// A smoothing parameter so large that a row's total overflows (its entries would be 0).
    #[error("invalid smoothing parameter alpha = {}: alpha × {successors} valid successors overflows (use at most {})", augur_dtmc::format_f64(*.alpha), augur_dtmc::format_f64(f64::MAX / (*.successors).max(1) as f64 / 2.0))]
    AlphaTooLarge {
        /// α.
        alpha: f64,
        /// The valid successors of the row that overflowed.
        successors: usize,
    },
    /// A learned chain with more transitions than a limit (for [`crate::learn::learn_with`],
    /// [`crate::learn::MAX_LEARNED_TRANSITIONS`]), counted before it is made.
    #[error("the learned model would have {states} states and {transitions} transitions, more than the limit of {limit}: smoothing gives every valid successor of a row an entry; add validity constraints to the spec or use fewer predicates")]
    TooManyTransitions {
        /// Transitions the smoothed chain has.
        transitions: u64,
        /// States of the model.
        states: usize,
        /// The limit.
        limit: usize,
    },
    /// A chain whose states are labelled by name (learned without a spec) too large to make
    /// in memory: its labels are sets of states, one per name.
    #[error("the learned model has {states} states labelled by {labels} names: as the chain's labels (a set of states per name) that is {bytes} bytes, more than the limit of {limit}; the model is learned and written (its file lists each label's states), but the chain is not made in memory")]
    TooManyNamedStates {
        /// States of the model.
        states: usize,
        /// Names labelling them.
        labels: usize,
        /// The bytes the labels would take.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// An abstraction spec with too many valid states for its transition constraints: each
    /// row's valid successors are found by checking every move.
    #[error("the abstraction spec has {states} valid states and constrains transitions (`validity.monotone` or `validity.invalid_transition`): the learned rows would check {checks} moves for validity, more than the limit of {limit}; use fewer predicates, more `validity.invalid_state` constraints, or no transition constraints")]
    TooManyValidityChecks {
        /// Valid states of the spec.
        states: usize,
        /// Moves to check (states²).
        checks: u64,
        /// The limit.
        limit: u64,
    },
    /// A chain order outside 1..=8.
    #[error("invalid order {0}: a k-th order chain needs 1 <= k <= 8")]
    BadOrder(usize),
    /// An end state (`--end-state NAME`) that cannot be used: not an identifier, or the name
    /// of a state, label or predicate the model already has.
    #[error("invalid end state `{name}`: {why}")]
    BadEndState {
        /// The name given.
        name: String,
        /// Why it cannot be used.
        why: String,
    },
    /// A state index outside `0..num_states`.
    #[error("state index {index} out of range (the model has {num_states} states)")]
    StateOutOfRange {
        /// The offending index.
        index: u32,
        /// The number of states.
        num_states: usize,
    },
    /// A PAC parameter out of its range.
    #[error("invalid PAC parameter: {0}")]
    BadPacParameter(String),
    /// Counts read from a file that do not fit together.
    #[error("inconsistent transition counts: {0}")]
    BadCounts(String),
    /// A row of a counts table (`counts_table`) that cannot be counted; rows are numbered
    /// from 1.
    #[error("row {row}: {message}")]
    CountsRow {
        /// The row, from 1.
        row: u64,
        /// What is wrong with it.
        message: String,
    },
    /// `--parametric`: a state that is not in the model, or whose row has nothing to keep
    /// symbolic.
    #[error("--parametric: {0}")]
    BadParametric(String),
    /// A model that cannot be simulated.
    #[error("cannot simulate: {0}")]
    Simulation(String),
    /// A bad spec, a bad trace line, or a step the abstraction cannot map (located).
    #[error(transparent)]
    Abstraction(#[from] AbstractionError),
    /// A step that cannot be learned from as written (e.g. concrete values without a spec).
    #[error("{location}: {message}")]
    Step {
        /// Where the step is.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// Two trace categories whose models would be written to the same file.
    #[error("categories `{first}` and `{second}` would both be written to {}; rename one of them in the traces", path.display())]
    CategoryClash {
        /// The first category.
        first: String,
        /// The second category.
        second: String,
        /// The file both would be written to.
        path: PathBuf,
    },
    /// A file that cannot be read or written.
    #[error("{}: {what}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// `cannot open`, `cannot create`, `cannot write`.
        what: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Writing the learned model, or reading a model or counts file.
    #[error(transparent)]
    Format(#[from] FormatError),
}

impl LearnError {
    /// The error as a [`Diagnostic`]: located errors (spec, trace lines, steps, model files)
    /// with their line and a caret.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            LearnError::Abstraction(e) => e.diagnostic(),
            LearnError::Format(e) => e.diagnostic(),
            LearnError::Step { location, message } => {
                Diagnostic::error(message).at(location.clone())
            }
            LearnError::Io { source, .. } => {
                Diagnostic::error(format!("{self}")).with_note(source.to_string())
            }
            e => Diagnostic::error(e.to_string()),
        }
    }

    /// The line of a located error (0 when it has none), e.g. for a list of skipped lines.
    pub fn line(&self) -> usize {
        match self {
            LearnError::Abstraction(e) => e.location().map_or(0, |l| l.line),
            LearnError::Format(e) => e.line().unwrap_or(0),
            LearnError::Step { location, .. } => location.line,
            _ => 0,
        }
    }
}

/// `Result` with [`LearnError`].
pub type Result<T, E = LearnError> = std::result::Result<T, E>;
