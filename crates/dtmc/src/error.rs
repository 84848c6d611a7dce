//! The crate's error type.

use std::fmt;
use std::path::{Path, PathBuf};

/// The result type of this crate.
pub type Result<T, E = DtmcError> = std::result::Result<T, E>;

/// A position in a file: line (1-based) and, when meaningful, column (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, when the error points at a particular token.
    pub column: Option<usize>,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "{}:{}", self.line, c),
            None => write!(f, "{}", self.line),
        }
    }
}

/// Everything that can go wrong when building, reading or writing a DTMC.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DtmcError {
    /// A malformed input file: the file, the position and what was wrong.
    #[error("{}:{position}: {message}", path.display())]
    Syntax {
        /// The file (or a pseudo-name such as `<input>`).
        path: PathBuf,
        /// Where in the file.
        position: Position,
        /// What was wrong.
        message: String,
    },
    /// A well-formed file that describes an invalid model, or an invalid model found at a
    /// known place in a file (e.g. a row that does not sum to 1, located at its last entry).
    #[error("{}{}: {source}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    InFile {
        /// The file.
        path: PathBuf,
        /// The line the problem is attributed to, if any.
        line: Option<usize>,
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
    /// A syntax error at `line` (1-based) and an optional column.
    pub fn syntax(
        path: &Path,
        line: usize,
        column: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        DtmcError::Syntax {
            path: path.to_path_buf(),
            position: Position { line, column },
            message: message.into(),
        }
    }

    /// Wraps a model error with the file (and line) it comes from.
    pub fn in_file(self, path: &Path, line: Option<usize>) -> Self {
        match self {
            e @ (DtmcError::Syntax { .. } | DtmcError::InFile { .. } | DtmcError::Io { .. }) => e,
            e => DtmcError::InFile {
                path: path.to_path_buf(),
                line,
                source: Box::new(e),
            },
        }
    }

    /// The line this error is located at, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            DtmcError::Syntax { position, .. } => Some(position.line),
            DtmcError::InFile { line, .. } => *line,
            _ => None,
        }
    }

    /// The column this error is located at, if any.
    pub fn column(&self) -> Option<usize> {
        match self {
            DtmcError::Syntax { position, .. } => position.column,
            _ => None,
        }
    }

    /// For an error located at a line (and column) of a readable file: that line of the file
    /// with a caret under the column, e.g.
    /// ```text
    ///    3 | 0 7 1
    ///      |   ^
    /// ```
    /// `None` when the error has no line or the file cannot be read (e.g. in-memory input).
    pub fn snippet(&self) -> Option<String> {
        use std::io::BufRead;
        let path = self.path()?;
        let line = self.line()?;
        let file = std::fs::File::open(path).ok()?;
        let text = std::io::BufReader::new(file)
            .lines()
            .nth(line.checked_sub(1)?)?
            .ok()?;
        let num = line.to_string();
        let pad = " ".repeat(num.len());
        let mut out = format!("{num} | {text}");
        if let Some(c) = self.column() {
            let spaces: String = text
                .chars()
                .take(c.saturating_sub(1))
                .map(|ch| if ch == '\t' { '\t' } else { ' ' })
                .collect();
            out.push_str(&format!("\n{pad} | {spaces}^"));
        }
        Some(out)
    }

    /// The file this error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            DtmcError::Syntax { path, .. }
            | DtmcError::InFile { path, .. }
            | DtmcError::Io { path, .. } => Some(path),
            DtmcError::UnknownFormat(p) => Some(p),
            _ => None,
        }
    }
}
