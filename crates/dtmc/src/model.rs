//! The sparse DTMC type.

use augur_expr::{Type, Value};
use fixedbitset::FixedBitSet;
use num_rational::BigRational;
use serde::{Deserialize, Serialize};
use sprs::CsMatI;

/// A state set, one bit per state.
pub type StateSet = FixedBitSet;

/// The transition matrix: CSR, u32 column indices and row pointers, f64 probabilities.
pub type Matrix = CsMatI<f64, u32, u32>;

/// A reward structure: a reward per state and/or per transition (PRISM's `rewards "name"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewardStructure {
    /// The structure's name (`None` for PRISM's unnamed `rewards ... endrewards`).
    pub name: Option<String>,
    /// Reward earned in each state (one entry per state), if the structure has state rewards.
    pub state: Option<Vec<f64>>,
    /// Reward earned on each transition, aligned with the transition matrix's stored entries
    /// (`matrix.data()[i]` ↔ `transition[i]`), if the structure has transition rewards.
    pub transition: Option<Vec<f64>>,
}

/// Variable valuations of the states (from a PRISM model or a `.sta` file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Valuations {
    /// Variable names, in column order.
    pub names: Vec<String>,
    /// Variable types, in column order.
    pub types: Vec<Type>,
    /// Row-major values: state `s`'s valuation is `values[s*names.len() .. (s+1)*names.len()]`.
    pub values: Vec<Value>,
}

/// A labelled discrete-time Markov chain.
///
/// Invariants (established by [`crate::DtmcBuilder`] and every reader):
/// every row of `matrix` has at least one entry, its entries are in `[0, 1]` and sum to 1
/// within 1e-9; `labels` bitsets and reward vectors have one entry per state;
/// `initial` is non-empty and in range.
#[derive(Clone, Debug)]
pub struct Dtmc {
    /// Transition probabilities, CSR, rows = source states.
    pub matrix: Matrix,
    /// Initial states, sorted, without duplicates.
    pub initial: Vec<u32>,
    /// Labels by name (including `"init"` and `"deadlock"` when the source defines them).
    pub labels: Vec<(String, StateSet)>,
    /// Reward structures, in declaration order (`R{1}` is the first).
    pub rewards: Vec<RewardStructure>,
    /// State valuations, if known.
    pub valuations: Option<Valuations>,
    /// Exact transition probabilities aligned with `matrix.data()`, when the source was read
    /// exactly (PRISM models under `--method exact`); `None` means the f64 entries are exact
    /// as they stand (every f64 is a dyadic rational).
    pub exact: Option<Vec<BigRational>>,
}

impl Dtmc {
    /// Number of states.
    pub fn num_states(&self) -> usize {
        self.matrix.rows()
    }

    /// Number of stored transitions (non-zero entries).
    pub fn num_transitions(&self) -> usize {
        self.matrix.nnz()
    }

    /// The state set of a label, if the model has it.
    pub fn label(&self, name: &str) -> Option<&StateSet> {
        self.labels.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// A reward structure by name.
    pub fn reward_structure(&self, name: &str) -> Option<&RewardStructure> {
        self.rewards
            .iter()
            .find(|r| r.name.as_deref() == Some(name))
    }
}
