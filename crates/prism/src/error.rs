//! Errors of the PRISM front-end and of state-space construction.

use augur_source::{Diagnostic, Location, Span};

fn missing(names: &[String]) -> String {
    format!(
        "undefined constant{} {} (give {} with --const {}=VALUE)",
        if names.len() == 1 { "" } else { "s" },
        names.join(", "),
        if names.len() == 1 { "it" } else { "them" },
        names.first().map_or("NAME", |s| s.as_str())
    )
}

/// An error of this crate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrismError {
    /// A syntax error or a static (semantic) error in the model file, with its location
    /// (rendered with the line and a caret by [`PrismError::diagnostic`]).
    #[error("{location}: {message}")]
    Located {
        /// Where.
        location: Location,
        /// What.
        message: String,
    },
    /// Constants without a value that were not given on the command line.
    #[error("{}", missing(names))]
    MissingConstants {
        /// Their names, in declaration order.
        names: Vec<String>,
    },
    /// A constant given on the command line that the model declares with another type.
    #[error("{message}")]
    BadConstant {
        /// What is wrong.
        message: String,
    },
    /// An error while building the state space, naming the state and the command.
    #[error("{message} in state {state}, {context}")]
    Build {
        /// What happened.
        message: String,
        /// The state's valuation, `(x=1, b=true)`.
        state: String,
        /// The command (`[a] in module M (file:line:col)`) or construct involved.
        context: String,
        /// Where the command or construct is in the model file.
        location: Option<Box<Location>>,
    },
    /// A limit of the implementation was exceeded (too many states, variables too wide).
    #[error("{message}")]
    Limit {
        /// What.
        message: String,
    },
    /// The build was stopped by one of the caller's limits ([`crate::BuildOptions`]).
    #[error("{reason} ({states} states found, {explored} explored so far)")]
    Stopped {
        /// Which limit.
        reason: StopReason,
        /// States discovered when the build stopped.
        states: usize,
        /// States whose successors had been computed.
        explored: usize,
    },
}

/// Which of the caller's limits stopped a build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StopReason {
    /// More reachable states than [`crate::BuildOptions::max_states`].
    #[error("the model has more than {0} states")]
    MaxStates(usize),
    /// [`crate::BuildOptions::deadline`] passed.
    #[error("the time limit was reached")]
    Deadline,
    /// [`crate::BuildOptions::cancel`] was set.
    #[error("cancelled")]
    Cancelled,
}

impl PrismError {
    /// A located error at byte `offset` of `source` (the text of `file`).
    pub fn at(file: &str, source: &str, offset: usize, message: impl Into<String>) -> PrismError {
        PrismError::at_span(file, source, Span::point(offset), message)
    }

    /// A located error covering `span` of `source` (the caret underlines its first line).
    pub fn at_span(file: &str, source: &str, span: Span, message: impl Into<String>) -> PrismError {
        PrismError::Located {
            location: Location::at(file, source, span),
            message: message.into(),
        }
    }

    /// The location, for located errors.
    pub fn location(&self) -> Option<&Location> {
        match self {
            PrismError::Located { location, .. } => Some(location),
            PrismError::Build { location, .. } => location.as_deref(),
            _ => None,
        }
    }

    /// The error as a [`Diagnostic`]: a located error with its line and a caret; a build
    /// error with the command it concerns.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            PrismError::Located { location, message } => {
                Diagnostic::error(message).at(location.clone())
            }
            PrismError::Build {
                message,
                state,
                context,
                location,
            } => Diagnostic::error(format!("{message} in state {state}"))
                .at_opt(location.as_deref().cloned())
                .with_note(format!("while building: {context}")),
            e => Diagnostic::error(e.to_string()),
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = PrismError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn located_errors_render_with_a_caret() {
        let src = "dtmc\nmdp x\n";
        let e = PrismError::at("m.pm", src, 5, "not supported: mdp");
        assert_eq!(e.to_string(), "m.pm:2:1: not supported: mdp");
        let l = e.location().unwrap();
        assert_eq!((l.line, l.column), (2, 1));
        assert_eq!(
            e.diagnostic().to_string(),
            "error: not supported: mdp\n --> m.pm:2:1\n  |\n2 | mdp x\n  | ^\n"
        );
        // Past the end: the last (empty) line.
        let e = PrismError::at("m.pm", src, 10_000, "x");
        assert_eq!(e.location().unwrap().line, 3);
    }
}
