//! augur-solver: graph algorithms, numerical and exact solvers for DTMCs, over CSR matrices
//! and state sets. It knows nothing about PCTL: the checker (`augur-check`) reduces every
//! property to the problems solved here.
//!
//! Main entry points (all take the CSR transition matrix and, where a backward search is
//! needed, its transpose from [`graph::transpose`]):
//! - [`graph`]: iterative SCC decomposition, bottom SCCs, reachability, Prob0 / Prob1;
//! - [`until_probabilities`], [`reachability_rewards`], [`total_rewards`]: unbounded
//!   reachability problems, solved by the [`Method`] of the [`SolveOptions`] (the default,
//!   [`Method::Auto`], is sound: exact elimination for small systems; for large ones SCC by
//!   SCC, a certified direct LU solve per block (dense, or sparse: a multifrontal LU in
//!   nested-dissection order with `f32` factors and refinement, `faer`'s LU as its fallback), exact
//!   elimination of a block whose certificate is too wide, interval iteration otherwise);
//! - [`long_run_average`]: steady-state probabilities and long-run average rewards;
//! - [`absorbing_analysis`]: fundamental matrix, absorption probabilities and expected steps;
//! - [`sweep`]: sparse matrix-vector products and step-bounded reachability;
//! - [`bounded`]: the finite-horizon operators (bounded until, restricted steps, cumulative
//!   and instantaneous rewards, discounted totals) and the all-horizon table
//!   ([`bounded::horizon_table`]);
//! - [`exact_steps`]: the same finite-horizon operators and the discounted total in exact
//!   rational arithmetic (`--method exact`), within a budget of multiply-adds.
//!
//! Long computations honour the [`Interrupt`] of their [`SolveOptions`] (deadline,
//! cancellation flag, progress callback), checked once per sweep.
//!
//! ```
//! use augur_solver::{graph, until_probabilities, SolveOptions};
//! use augur_dtmc::{Matrix, StateSet};
//! use sprs::TriMatI;
//!
//! // 0 -> 1 (1/2) | 2 (1/2); 1 and 2 absorbing.
//! let mut t = TriMatI::<f64, u32>::new((3, 3));
//! t.add_triplet(0, 1, 0.5);
//! t.add_triplet(0, 2, 0.5);
//! t.add_triplet(1, 1, 1.0);
//! t.add_triplet(2, 2, 1.0);
//! let m: Matrix = t.to_csr();
//! let mt = graph::transpose(&m);
//! let mut all = StateSet::with_capacity(3);
//! all.insert_range(..);
//! let mut goal = StateSet::with_capacity(3);
//! goal.insert(1);
//! let sol = until_probabilities(&m, &mt, None, &all, &goal, &SolveOptions::default()).unwrap();
//! assert_eq!(sol.values, vec![0.5, 1.0, 0.0]);
//! assert!(sol.bounds.is_some());
//! ```
#![deny(missing_docs)]

mod absorbing;
pub mod bounded;
mod direct;
pub mod exact;
pub mod exact_steps;
pub mod graph;
pub mod huge_k;
mod linear;
mod multifrontal;
pub mod numeric;
mod reach;
pub mod robust;
pub mod robust_exact;
mod steady;
pub mod sweep;

pub use absorbing::{absorbing_analysis, Absorption};
pub use numeric::{Interrupt, Interruption, Method, Result, Solution, SolveOptions, SolverError};
pub use reach::{
    discounted_total_rewards, reachability_rewards, total_rewards, until_probabilities, Rewards,
};
pub use steady::long_run_average;
pub use sweep::step_rewards;
