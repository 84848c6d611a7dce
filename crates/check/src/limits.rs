//! [`Limits`]: how long, how large, and whether to stop — honoured by every long operation.

use crate::error::{CheckError, Stop};
use augur_solver::Interrupt;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default maximum number of states for front-ends (the CLI's `--max-states`): large
/// enough for every QVBS instance (nand.40-4 has 4.0 million states, crowds.6-15 2.5 million),
/// small enough to stop a runaway exploration before it exhausts a machine's memory.
pub const DEFAULT_MAX_STATES: usize = 20_000_000;

/// What a long operation reports to [`Limits::progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// State-space exploration of a PRISM-language model.
    Building {
        /// States found so far.
        states: usize,
        /// States whose successors have been computed.
        explored: usize,
        /// Transitions so far.
        transitions: usize,
        /// Whether the exploration is finished.
        done: bool,
    },
    /// Checking property `index` (0-based) of `count`.
    Property {
        /// The property's position.
        index: usize,
        /// The number of properties.
        count: usize,
    },
    /// A numerical computation (iterative solver, bounded operator, exact elimination) has
    /// done `sweeps` sweeps (or eliminated that many unknowns).
    Solving {
        /// Sweeps so far in the current computation.
        sweeps: u64,
    },
}

/// The callback type of [`Limits::progress`].
pub type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// Limits on a long operation (loading a model, checking properties, the horizon table):
/// a time limit, a maximum number of states, a cancellation flag that another thread may set
/// (Python's Ctrl-C, an MCP server's request cancellation), and a progress callback.
///
/// Every long operation honours it: the PRISM state-space exploration (the state limit as each
/// state is found, time and cancellation every 1024 states), the explicit readers (the state
/// limit once read), and the numerical solvers, bounded operators and exact elimination (time
/// and cancellation once per sweep or eliminated unknown, never inside a sweep). A limit hit is
/// [`CheckError::Stopped`], a user error. Clones share the cancellation flag.
///
/// ```
/// use augur_check::Limits;
/// use std::time::Duration;
/// let limits = Limits::default().with_timeout(Duration::from_secs(10)).with_max_states(1_000_000);
/// let handle = limits.clone();
/// std::thread::spawn(move || handle.cancel()).join().unwrap();
/// assert!(limits.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct Limits {
    /// Time allowed for each operation (load, check of a set of properties, horizon table),
    /// from its start.
    pub timeout: Option<Duration>,
    /// An absolute deadline shared by every operation (a front-end that limits a whole
    /// command sets it once).
    pub deadline: Option<Instant>,
    /// The largest number of states a model may have.
    pub max_states: Option<usize>,
    /// The most transitions a learned model kept implicitly (an Augur JSON file with
    /// `smoothing`) may expand to when it is loaded; `None`: the reader's default,
    /// [`augur_formats::DEFAULT_MAX_SMOOTHED_TRANSITIONS`].
    pub max_smoothed_transitions: Option<usize>,
    /// Set to stop (see [`Limits::cancel`]).
    pub cancel_flag: Arc<AtomicBool>,
    /// Called regularly during long operations (at most every 50 ms for solver sweeps) from
    /// the working thread.
    pub progress: Option<Arc<ProgressFn>>,
}

impl Limits {
    /// No limits (the same as `Limits::default()`).
    pub fn none() -> Limits {
        Limits::default()
    }

    /// The same with a time limit per operation.
    pub fn with_timeout(mut self, timeout: Duration) -> Limits {
        self.timeout = Some(timeout);
        self
    }

    /// The same with an absolute deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Limits {
        self.deadline = Some(deadline);
        self
    }

    /// The same with a maximum number of states.
    pub fn with_max_states(mut self, max_states: usize) -> Limits {
        self.max_states = Some(max_states);
        self
    }

    /// The same with a maximum number of transitions for a learned model's implicit rows.
    pub fn with_max_smoothed_transitions(mut self, max: usize) -> Limits {
        self.max_smoothed_transitions = Some(max);
        self
    }

    /// The same with a progress callback.
    pub fn with_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Limits {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Asks every operation running under this value (or a clone) to stop.
    pub fn cancel(&self) {
        self.cancel_flag.store(true, Ordering::Relaxed);
    }

    /// Whether [`Limits::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancel_flag.load(Ordering::Relaxed)
    }

    /// The deadline of an operation starting now.
    pub(crate) fn deadline_from_now(&self) -> Option<Instant> {
        let own = self.timeout.and_then(|t| Instant::now().checked_add(t));
        match (own, self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Reports progress, if there is a callback.
    pub(crate) fn report(&self, p: Progress) {
        if let Some(f) = &self.progress {
            f(&p);
        }
    }

    /// The solver's interrupt for an operation ending at `deadline`.
    pub(crate) fn interrupt(&self, deadline: Option<Instant>) -> Interrupt {
        let on_sweep = self.progress.as_ref().map(|f| {
            let f = Arc::clone(f);
            let last = std::sync::Mutex::new(Instant::now());
            let cb: Arc<dyn Fn(u64) + Send + Sync> = Arc::new(move |sweeps| {
                // Throttled: a solver may sweep millions of times a second on a small system.
                if let Ok(mut t) = last.try_lock() {
                    if t.elapsed() >= Duration::from_millis(50) {
                        *t = Instant::now();
                        f(&Progress::Solving { sweeps });
                    }
                }
            });
            cb
        });
        Interrupt {
            deadline,
            cancel: Some(Arc::clone(&self.cancel_flag)),
            on_sweep,
        }
    }

    /// Fails when cancelled or past `deadline` (for checks between the steps of an
    /// operation).
    pub(crate) fn check(&self, deadline: Option<Instant>) -> Result<(), CheckError> {
        if self.is_cancelled() {
            return Err(CheckError::Stopped(Stop::Cancelled));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(self.timeout_error());
        }
        Ok(())
    }

    /// [`Stop::Timeout`] with this value's time limit.
    pub(crate) fn timeout_error(&self) -> CheckError {
        CheckError::Stopped(Stop::Timeout {
            after: self.timeout,
        })
    }

    /// Converts an error of the solver, giving a timeout its limit.
    pub(crate) fn solver_error(&self, e: CheckError) -> CheckError {
        match e {
            CheckError::Stopped(Stop::Timeout { after: None }) => self.timeout_error(),
            e => e,
        }
    }
}

impl fmt::Debug for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limits")
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("max_states", &self.max_states)
            .field("max_smoothed_transitions", &self.max_smoothed_transitions)
            .field("cancelled", &self.is_cancelled())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}
