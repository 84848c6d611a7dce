//! Unbounded numerical problems on a DTMC: the API the checker calls.
//!
//! All functions take the transition matrix (CSR) and state sets, and return one value per state.
//! They do no I/O.

use serde::{Deserialize, Serialize};

/// Errors of the solver.
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    /// The method did not reach the requested precision within its iteration budget.
    #[error(
        "{method} did not converge within {iterations} iterations (last difference {difference:e})"
    )]
    NotConverged {
        /// The method's name.
        method: String,
        /// Iterations performed.
        iterations: u64,
        /// The last difference (or bound gap) seen.
        difference: f64,
    },
    /// A method was asked for a problem it cannot solve (e.g. closed form on too many unknowns).
    #[error("{0}")]
    Unsupported(String),
}

/// Result alias of this crate.
pub type Result<T, E = SolverError> = std::result::Result<T, E>;

/// The method used for linear equation systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Pick by problem size: exact elimination for small systems, topological sound
    /// iteration for large ones. Always sound.
    #[default]
    Auto,
    /// Gauss-Seidel value iteration (not sound: stops on a small change).
    GaussSeidel,
    /// Jacobi iteration (not sound).
    Jacobi,
    /// Power / plain value iteration (not sound).
    Power,
    /// Interval iteration (sound: lower and upper sequences).
    Interval,
    /// SCC by SCC in reverse topological order, each block solved soundly.
    Topological,
    /// Direct solve with nalgebra LU (up to a few thousand unknowns).
    ClosedForm,
    /// Exact rational Gaussian elimination.
    Exact,
}

/// Options for the numerical solvers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveOptions {
    /// The method.
    pub method: Method,
    /// Requested precision (default 1e-6).
    pub epsilon: f64,
    /// Whether `epsilon` is relative (default) or absolute.
    pub relative: bool,
    /// Iteration budget for iterative methods.
    pub max_iterations: u64,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            method: Method::Auto,
            epsilon: 1e-6,
            relative: true,
            max_iterations: 1_000_000,
        }
    }
}

/// A per-state numerical result.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The value of every state (`f64::INFINITY` for infinite expected rewards).
    pub values: Vec<f64>,
    /// Guaranteed lower and upper bounds per state, when the method is sound
    /// (exact methods give `lower == upper == values`).
    pub bounds: Option<(Vec<f64>, Vec<f64>)>,
    /// Human-readable name of what was actually used, e.g. "exact (201 unknowns)".
    pub method: String,
}
