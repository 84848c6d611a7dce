//! Errors of the PRISM front-end and of state-space construction.

use std::fmt;

/// A position in a model file, with the text of its line for a caret display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name as given to the parser.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub col: usize,
    /// The text of that line (without the newline).
    pub line_text: String,
}

impl Location {
    /// The location of byte `offset` in `source`.
    pub fn at(file: &str, source: &str, offset: usize) -> Location {
        let offset = offset.min(source.len());
        let mut line_start = 0;
        let mut line = 1;
        for (i, c) in source.char_indices() {
            if i >= offset {
                break;
            }
            if c == '\n' {
                line += 1;
                line_start = i + 1;
            }
        }
        let line_end = source[line_start..]
            .find('\n')
            .map_or(source.len(), |e| line_start + e);
        let col = source
            .get(line_start..offset)
            .map_or(1, |s| s.chars().count() + 1);
        Location {
            file: file.to_string(),
            line,
            col,
            line_text: source[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Renders `message` at `loc` as `file:line:col: message`, then the line and a caret.
fn render(loc: &Location, message: &str) -> String {
    let tabs_kept: String = loc
        .line_text
        .chars()
        .take(loc.col.saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("{loc}: {message}\n  | {}\n  | {tabs_kept}^", loc.line_text)
}

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
    /// A syntax error or a static (semantic) error in the model file, with its location.
    #[error("{}", render(location, message))]
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
    /// A located error at byte `offset` of `source`.
    pub fn at(file: &str, source: &str, offset: usize, message: impl Into<String>) -> PrismError {
        PrismError::Located {
            location: Location::at(file, source, offset),
            message: message.into(),
        }
    }

    /// The location, for located errors.
    pub fn location(&self) -> Option<&Location> {
        match self {
            PrismError::Located { location, .. } => Some(location),
            _ => None,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = PrismError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_of_offsets() {
        let src = "dtmc\nmodule M\n  x : [0..1];\n";
        let l = Location::at("m.pm", src, src.find("x :").unwrap());
        assert_eq!((l.line, l.col), (3, 3));
        assert_eq!(l.line_text, "  x : [0..1];");
        let l = Location::at("m.pm", src, 0);
        assert_eq!((l.line, l.col), (1, 1));
        // Past the end: the last (empty) line.
        let l = Location::at("m.pm", src, 10_000);
        assert_eq!(l.line, 4);
    }

    #[test]
    fn rendering_has_caret_under_column() {
        let e = PrismError::at("m.pm", "dtmc\nmdp x\n", 5, "not supported: mdp");
        let s = e.to_string();
        assert!(s.starts_with("m.pm:2:1: not supported: mdp"), "{s}");
        assert!(s.ends_with("  | ^"), "{s}");
    }
}
