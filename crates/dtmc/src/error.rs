//! The crate's error type.

use augur_source::json::JsonPath;
use augur_source::{Diagnostic, Location};
use std::path::{Path, PathBuf};

/// The result type of this crate.
pub type Result<T, E = DtmcError> = std::result::Result<T, E>;

/// Everything that can go wrong when building, reading or writing a DTMC.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DtmcError {
    /// A malformed input file: where (file, line, column, the line's text) and what was
    /// wrong.
    #[error("{location}: {message}")]
    Syntax {
        /// Where in the file (the file name is the one given to the reader).
        location: Location,
        /// What was wrong.
        message: String,
    },
    /// A well-formed file that describes an invalid model, or an invalid model found at a
    /// known place in a file (e.g. a row that does not sum to 1, located at its last entry).
    #[error("{location}: {source}")]
    InFile {
        /// Where the problem is attributed to (at least the file).
        location: Location,
        /// The underlying model error.
        #[source]
        source: Box<DtmcError>,
    },
    /// A model error at a place of a JSON document, before the document's text is known
    /// (the reader turns it into [`DtmcError::InFile`] located at that place).
    #[error("{path}: {source}")]
    AtJsonPath {
        /// Where in the document, e.g. `transitions[3][1]`.
        path: JsonPath,
        /// The underlying model error.
        #[source]
        source: Box<DtmcError>,
    },
    /// An I/O error on a file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An I/O error while writing to a stream.
    #[error("write error: {0}")]
    Write(#[from] std::io::Error),
    /// A row whose probabilities do not sum to 1 (within 1e-9).
    #[error("row of state {state}{} sums to {sum}, not 1", valuation_suffix(.valuation))]
    RowSum {
        /// The state.
        state: u32,
        /// The row's sum.
        sum: f64,
        /// The state's valuation, e.g. `(x=1,y=true)`, when known.
        valuation: Option<String>,
    },
    /// A probability that is NaN, infinite, or outside [0, 1].
    #[error("probability {prob} of transition {src} -> {dst} not in [0,1]")]
    BadProbability {
        /// Source state.
        src: u32,
        /// Target state.
        dst: u32,
        /// The offending value.
        prob: f64,
    },
    /// A state index that is out of range.
    #[error("state {state} out of range ({num_states} states)")]
    StateOutOfRange {
        /// The offending index.
        state: u64,
        /// The number of states of the model.
        num_states: usize,
    },
    /// States without successors, when deadlocks are not to be fixed.
    #[error("{} state(s) without successors (deadlocks), first: {}{}", states.len(), states.first().copied().unwrap_or(0), if states.len() > 1 { ", ..." } else { "" })]
    Deadlock {
        /// The deadlock states (sorted).
        states: Vec<u32>,
    },
    /// A model without initial states.
    #[error("the model has no initial state")]
    NoInitialState,
    /// A label that the model does not have.
    #[error("unknown label \"{name}\" (the model has: {})", available.join(", "))]
    UnknownLabel {
        /// The requested label.
        name: String,
        /// The labels the model has.
        available: Vec<String>,
    },
    /// A reward structure that the model does not have.
    #[error(
        "no reward structure {what} (the model has {})",
        describe_rewards(available)
    )]
    UnknownRewardStructure {
        /// What was asked for: `"name"`, `number 3`, or `(the default)`.
        what: String,
        /// The names of the model's structures (`""` for unnamed ones), in order.
        available: Vec<String>,
    },
    /// A reward that is NaN or infinite.
    #[error("reward {value} {what} is not a finite number")]
    BadReward {
        /// Where: `of state 3` or `of transition 3 -> 4`.
        what: String,
        /// The value.
        value: f64,
    },
    /// A transition reward on a transition that the matrix does not have.
    #[error("transition reward on {src} -> {dst}, which is not a transition of the model")]
    NoSuchTransition {
        /// Source.
        src: u32,
        /// Target.
        dst: u32,
    },
    /// Any other violation of the [`crate::Dtmc`] invariants.
    #[error("invalid model: {0}")]
    Invalid(String),
    /// A model that the requested output format cannot express.
    #[error("cannot write as {format}: {message}")]
    Unsupported {
        /// The format.
        format: String,
        /// Why.
        message: String,
    },
    /// A file name whose extension does not name a supported format.
    #[error("{}: unknown model format (expected .tra, .drn or .json)", .0.display())]
    UnknownFormat(PathBuf),
}

fn describe_rewards(names: &[String]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.is_empty() {
                format!("{} (unnamed)", i + 1)
            } else {
                format!("{} \"{n}\"", i + 1)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn valuation_suffix(v: &Option<String>) -> String {
    v.as_ref().map(|s| format!(" {s}")).unwrap_or_default()
}

impl DtmcError {
    /// A syntax error at `location`.
    pub fn syntax(location: Location, message: impl Into<String>) -> Self {
        DtmcError::Syntax {
            location,
            message: message.into(),
        }
    }

    /// Wraps a model error with the place in a file it comes from (located errors are kept).
    pub fn in_file(self, location: Location) -> Self {
        match self {
            e @ (DtmcError::Syntax { .. } | DtmcError::InFile { .. } | DtmcError::Io { .. }) => e,
            e => DtmcError::InFile {
                location,
                source: Box::new(e),
            },
        }
    }

    /// Wraps a model error with the place in a JSON document it comes from.
    pub fn at_json_path(self, path: JsonPath) -> Self {
        DtmcError::AtJsonPath {
            path,
            source: Box::new(self),
        }
    }

    /// The location of this error in a file, if it has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            DtmcError::Syntax { location, .. } | DtmcError::InFile { location, .. } => {
                Some(location)
            }
            _ => None,
        }
    }

    /// The line this error is located at, if any.
    pub fn line(&self) -> Option<usize> {
        self.location().map(|l| l.line).filter(|&l| l > 0)
    }

    /// The column this error is located at, if any.
    pub fn column(&self) -> Option<usize> {
        self.location().map(|l| l.column).filter(|&c| c > 0)
    }

    /// The file this error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            DtmcError::Syntax { location, .. } | DtmcError::InFile { location, .. } => {
                Some(Path::new(&location.file))
            }
            DtmcError::Io { path, .. } => Some(path),
            DtmcError::UnknownFormat(p) => Some(p),
            _ => None,
        }
    }

    /// The error as a [`Diagnostic`]: a located error with its line and a caret under the
    /// offending token (see `augur_source`).
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            DtmcError::Syntax { location, message } => {
                Diagnostic::error(message).at(location.clone())
            }
            DtmcError::InFile { location, source } => {
                Diagnostic::error(source.to_string()).at(location.clone())
            }
            e => Diagnostic::error(e.to_string()),
        }
    }
}
