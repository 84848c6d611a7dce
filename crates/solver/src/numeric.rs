//! Unbounded numerical problems on a DTMC: the API the checker calls, its options and errors.
//!
//! All functions take the transition matrix (CSR) and state sets, and return one value per state.
//! They do no I/O.

use num_rational::BigRational;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
    /// The computation was stopped by its [`Interrupt`] (deadline passed or cancelled).
    #[error("{0}")]
    Interrupted(Interruption),
}

/// Why a computation was stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Interruption {
    /// [`Interrupt::deadline`] passed.
    #[error("the time limit was reached")]
    Deadline,
    /// [`Interrupt::cancel`] was set.
    #[error("cancelled")]
    Cancelled,
}

/// When to stop a long computation early. Every iterative solver, bounded operator and exact
/// elimination calls [`Interrupt::check`] once per sweep (or per eliminated unknown), never
/// inside a sweep.
#[derive(Clone, Default)]
pub struct Interrupt {
    /// Stop with [`Interruption::Deadline`] once this instant has passed.
    pub deadline: Option<Instant>,
    /// Stop with [`Interruption::Cancelled`] once this flag is set (from any thread).
    pub cancel: Option<Arc<AtomicBool>>,
    /// Called at every check with the number of sweeps done so far by the current
    /// computation (progress display; a front-end may also set `cancel` from it).
    pub on_sweep: Option<Arc<dyn Fn(u64) + Send + Sync>>,
}

impl Interrupt {
    /// `Err(SolverError::Interrupted(..))` when the computation must stop; `sweeps` is the
    /// number of sweeps (or steps) done so far.
    #[inline]
    pub fn check(&self, sweeps: u64) -> Result<()> {
        if let Some(f) = &self.on_sweep {
            f(sweeps);
        }
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(SolverError::Interrupted(Interruption::Cancelled));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(SolverError::Interrupted(Interruption::Deadline));
        }
        Ok(())
    }
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("deadline", &self.deadline)
            .field("cancel", &self.cancel)
            .field("on_sweep", &self.on_sweep.is_some())
            .finish()
    }
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

impl Method {
    /// Every method, in the order the command line lists them.
    pub const ALL: [Method; 8] = [
        Method::Auto,
        Method::GaussSeidel,
        Method::Jacobi,
        Method::Power,
        Method::Interval,
        Method::Topological,
        Method::ClosedForm,
        Method::Exact,
    ];

    /// The method's name on the command line and in JSON (`gauss-seidel`, `closed-form`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::GaussSeidel => "gauss-seidel",
            Method::Jacobi => "jacobi",
            Method::Power => "power",
            Method::Interval => "interval",
            Method::Topological => "topological",
            Method::ClosedForm => "closed-form",
            Method::Exact => "exact",
        }
    }

    /// One line on what the method does and whether it is sound.
    pub fn summary(self) -> &'static str {
        match self {
            Method::Auto => "Sound; picks exact/direct or interval iteration by problem size",
            Method::GaussSeidel => "Gauss-Seidel (not sound)",
            Method::Jacobi => "Jacobi (not sound)",
            Method::Power => "Power iteration (not sound)",
            Method::Interval => "Interval iteration (sound)",
            Method::Topological => "SCC by SCC, each block sound",
            Method::ClosedForm => "Direct LU solve",
            Method::Exact => "Exact rational elimination",
        }
    }
}

/// Options for the numerical solvers.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// The method.
    pub method: Method,
    /// Requested precision (default 1e-6).
    pub epsilon: f64,
    /// Whether `epsilon` is relative (default) or absolute.
    pub relative: bool,
    /// Iteration budget for iterative methods.
    pub max_iterations: u64,
    /// When to stop early (checked once per sweep).
    pub interrupt: Interrupt,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            method: Method::Auto,
            epsilon: 1e-6,
            relative: true,
            max_iterations: 1_000_000,
            interrupt: Interrupt::default(),
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
    /// The exact rational value of every state, when every value was computed exactly (exact
    /// elimination, graph analysis): `None` in an entry whose value is infinite. The rationals
    /// are exact for the model's probabilities as given (`Dtmc::exact`, else the `f64`s read
    /// as the dyadic rationals they are).
    pub exact: Option<Vec<Option<BigRational>>>,
}
