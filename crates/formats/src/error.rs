//! The crate's error type.

use augur_dtmc::DtmcError;
use augur_source::json::JsonPath;
use augur_source::{Diagnostic, Location};
use std::path::{Path, PathBuf};

/// The result type of this crate.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;

/// Everything that can go wrong when reading or writing a model file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A malformed input file: where (file, line, column, the line's text) and what was
    /// wrong.
    #[error("{location}: {message}")]
    Syntax {
        /// Where in the file (the file name is the one given to the reader).
        location: Location,
        /// What was wrong.
        message: String,
    },
    /// A well-formed file that describes an invalid model, located where the problem is
    /// (e.g. a row that does not sum to 1, at its last entry).
    #[error("{location}: {source}")]
    InFile {
        /// Where the problem is attributed to (at least the file).
        location: Location,
        /// The underlying error (a [`FormatError::Model`], possibly at a JSON path).
        #[source]
        source: Box<FormatError>,
    },
    /// An error at a place of a JSON document, before the document's text is known (the
    /// reader turns it into [`FormatError::InFile`] located at that place).
    #[error("{path}: {source}")]
    AtJsonPath {
        /// Where in the document, e.g. `transitions[3][1]`.
        path: JsonPath,
        /// The underlying error.
        #[source]
        source: Box<FormatError>,
    },
    /// A learned model's smoothing rule or counts that do not make a chain.
    #[error("invalid smoothing: {0}")]
    Smoothing(#[from] crate::smoothing::SmoothingError),
    /// A learned model whose implicit rows would make more transitions than the limit
    /// ([`crate::ReadOptions::max_smoothed_transitions`]), refused before they are made.
    #[error("the smoothed model has {states} states and {transitions} transitions, more than the limit of {limit} transitions (smoothing gives every valid successor of a row an entry; raise the limit with --max-smoothed-transitions N, or learn with validity constraints or fewer predicates)")]
    TooManySmoothedTransitions {
        /// States of the model.
        states: usize,
        /// Transitions the smoothed chain has.
        transitions: u64,
        /// The limit.
        limit: usize,
    },
    /// An invalid model (from the builder), not located in a file.
    #[error(transparent)]
    Model(#[from] DtmcError),
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

impl FormatError {
    /// A syntax error at `location`.
    pub fn syntax(location: Location, message: impl Into<String>) -> Self {
        FormatError::Syntax {
            location,
            message: message.into(),
        }
    }

    /// Wraps an error with the place in a file it comes from (located errors are kept).
    pub fn in_file(self, location: Location) -> Self {
        match self {
            e @ (FormatError::Syntax { .. }
            | FormatError::InFile { .. }
            | FormatError::Io { .. }) => e,
            e => FormatError::InFile {
                location,
                source: Box::new(e),
            },
        }
    }

    /// Wraps an error with the place in a JSON document it comes from.
    pub fn at_json_path(self, path: JsonPath) -> Self {
        FormatError::AtJsonPath {
            path,
            source: Box::new(self),
        }
    }

    /// The location of this error in a file, if it has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            FormatError::Syntax { location, .. } | FormatError::InFile { location, .. } => {
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
            FormatError::Syntax { location, .. } | FormatError::InFile { location, .. } => {
                Some(Path::new(&location.file))
            }
            FormatError::Io { path, .. } => Some(path),
            FormatError::UnknownFormat(p) => Some(p),
            _ => None,
        }
    }

    /// The error as a [`Diagnostic`]: a located error with its line and a caret under the
    /// offending token (see `augur_source`).
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            FormatError::Syntax { location, message } => {
                Diagnostic::error(message).at(location.clone())
            }
            FormatError::InFile { location, source } => {
                Diagnostic::error(source.to_string()).at(location.clone())
            }
            e => Diagnostic::error(e.to_string()),
        }
    }
}

/// [`FormatError::at_json_path`] and [`FormatError::in_file`] for the builder's errors.
pub(crate) trait Place {
    /// The error at `path` of a JSON document.
    fn at_json_path(self, path: JsonPath) -> FormatError;
    /// The error at `location` of a file.
    fn in_file(self, location: Location) -> FormatError;
}

impl Place for DtmcError {
    fn at_json_path(self, path: JsonPath) -> FormatError {
        FormatError::from(self).at_json_path(path)
    }

    fn in_file(self, location: Location) -> FormatError {
        FormatError::from(self).in_file(location)
    }
}
