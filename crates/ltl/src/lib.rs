//! augur-ltl: LTL on discrete-time Markov chains.
//!
//! Main types: [`Ltl`] (a formula over atomic propositions `p0, p1, …`), [`Product`] (the
//! chain times the formula's deterministic automaton, with its accepting bottom SCCs),
//! [`probabilities`] (the probability of the formula from every state, with the sound bounds of
//! `augur-solver`), [`PrefixProduct`] and [`OmegaProduct`] (the products interval chains are
//! checked on: co-safe and safe formulas, and any formula through a limit-deterministic
//! automaton), [`LtlOptions`] (size limits) and [`LtlError`].
//!
//! The automaton is built on the fly by formula progression (the "after" function `af`): a
//! state is the positive Boolean combination of subformulas that the rest of the path must
//! satisfy, kept as a minimal DNF, so the automaton is deterministic and finite. A path of the
//! product ends in a bottom SCC almost surely, and the probability of the formula is 0 or 1
//! uniformly on each bottom SCC; which one is decided by the Master Theorem of Esparza,
//! Křetínský and Sickert (see [`mod@product`] for the argument), by graph searches only. The
//! answer is then the probability of reaching the accepting BSCCs, solved by
//! `augur_solver::until_probabilities` (so sound bounds come with the default method).
//!
//! The crate knows nothing about PCTL: state subformulas (labels, expressions, nested `P`
//! operators) arrive as atomic propositions, each a set of chain states.
//!
//! ```
//! use augur_ltl::{probabilities, Ltl, LtlOptions};
//! use augur_dtmc::StateSet;
//! use augur_solver::SolveOptions;
//! use sprs::TriMatI;
//!
//! // 0 → {0: 1/2, 1: 1/2}, 1 → {2: 1}, 2 → {1: 1}; "a" holds in state 2.
//! let mut t = TriMatI::<f64, u32>::new((3, 3));
//! for (s, d, p) in [(0, 0, 0.5), (0, 1, 0.5), (1, 2, 1.0), (2, 1, 1.0)] {
//!     t.add_triplet(s, d, p);
//! }
//! let matrix = t.to_csr();
//! let mut a = StateSet::with_capacity(3);
//! a.insert(2);
//! // G F a: the chain reaches the cycle 1 ↔ 2 with probability 1 and visits 2 infinitely often.
//! let gfa = Ltl::globally(Ltl::eventually(Ltl::Ap(0)));
//! let result = probabilities(&matrix, None, &[a.clone()], &gfa, &LtlOptions::default(),
//!                            &SolveOptions::default()).unwrap();
//! assert!((result.solution.values[0] - 1.0).abs() < 1e-9);
//! // X a from state 1: the next state is 2.
//! let xa = Ltl::next(Ltl::Ap(0));
//! let result = probabilities(&matrix, None, &[a], &xa, &LtlOptions::default(),
//!                            &SolveOptions::default()).unwrap();
//! assert_eq!(result.solution.values[1], 1.0);
//! assert_eq!(result.solution.values[0], 0.0);
//! ```
#![deny(missing_docs)]

mod automaton;
mod error;
mod formula;
pub mod omega;
#[cfg(test)]
mod omega_tests;
pub mod product;
#[cfg(test)]
mod tests;

pub use error::{LtlError, Result};
pub use formula::{Ltl, StepInterval};
pub use omega::{OmegaProduct, RowBounds, CHOICE_ENTRY};
pub use product::{
    probabilities, Fragment, LtlOptions, LtlSolution, PrefixProduct, Product, ProductRows, NO_ENTRY,
};
