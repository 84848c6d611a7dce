//! The crate's error type.

/// The result type of this crate.
pub type Result<T, E = DtmcError> = std::result::Result<T, E>;

/// Everything that can go wrong when building a DTMC or asking it for a label or a reward
/// structure (errors of reading and writing files are `augur-formats`'s `FormatError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DtmcError {
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
        augur_source::reward_structure_list(available)
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
}

fn valuation_suffix(v: &Option<String>) -> String {
    v.as_ref().map(|s| format!(" {s}")).unwrap_or_default()
}
