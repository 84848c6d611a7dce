//! The errors of `augur-ltl`.

use augur_solver::SolverError;

/// What can go wrong when checking an LTL formula on a chain.
#[derive(Debug, thiserror::Error)]
pub enum LtlError {
    /// The automaton of the formula has more states than allowed.
    #[error("the automaton of the LTL formula is too large (more than {limit} states)")]
    AutomatonTooLarge {
        /// The limit.
        limit: usize,
    },
    /// The product of the chain and the automaton has more states than allowed.
    #[error(
        "the product of the model and the LTL automaton is too large (more than {limit} states)"
    )]
    ProductTooLarge {
        /// The limit.
        limit: usize,
    },
    /// More than 64 distinct atomic propositions (state subformulas) in one formula.
    #[error(
        "the LTL formula has {0} atomic propositions (state subformulas); at most 64 are supported"
    )]
    TooManyPropositions(usize),
    /// A step bound above [`crate::LtlOptions::max_step_bound`].
    #[error("step bound {bound} inside an LTL formula is above the limit {limit} (bounded operators are unrolled)")]
    StepBoundTooLarge {
        /// The bound.
        bound: u64,
        /// The limit.
        limit: u64,
    },
    /// A formula that is neither co-safe nor safe where only those are supported (interval
    /// chains: see [`crate::PrefixProduct`]).
    #[error(
        "the LTL formula is neither co-safe nor safe (once negations are pushed inward it \
         combines F or U with G, W or R, as `G F a` does)"
    )]
    NotPrefixDecided,
    /// A formula with more temporal subformulas than an interval product's automaton may
    /// guess among ([`crate::omega::MAX_GUESS_SUBFORMULAS`]).
    #[error(
        "the LTL formula has {subformulas} temporal subformulas (F, U, G, W, R and the like); \
         on interval DTMCs a formula that is neither co-safe nor safe may have at most {limit} \
         (its automaton guesses among 2^k sets of them)"
    )]
    TooManyGuesses {
        /// Its temporal subformulas.
        subformulas: usize,
        /// The limit.
        limit: usize,
    },
    /// The inputs do not fit together (matrix not square, a proposition without its set).
    #[error("LTL product: {0}")]
    Dimensions(String),
    /// The reachability problem on the product failed or was interrupted.
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// The result type of `augur-ltl`.
pub type Result<T, E = LtlError> = std::result::Result<T, E>;
