//! The searches' time limit and cancellation: the [`Limits`] of the request, checked between
//! steps of a search (a path prefix expanded, a subset evaluated, a sweep), as the checker
//! checks them between the sweeps of a solver.

use crate::error::{ExplainError, Result};
use augur_check::{CheckError, Limits, Stop};
use std::time::Instant;

/// How often [`Clock::tick`] looks at the time: every this many ticks (a power of two).
const TICKS_PER_CHECK: u32 = 1024;

/// A request's deadline and cancellation flag.
#[derive(Clone, Debug, Default)]
pub(crate) struct Clock {
    limits: Option<Limits>,
    deadline: Option<Instant>,
    ticks: u32,
}

impl Clock {
    /// No limit.
    pub(crate) fn unlimited() -> Clock {
        Clock::default()
    }

    /// The limits of an operation starting now: its own time limit (`timeout`) and the
    /// shared deadline, whichever comes first, and the cancellation flag.
    pub(crate) fn new(limits: &Limits) -> Clock {
        let own = limits.timeout.and_then(|t| Instant::now().checked_add(t));
        let deadline = match (own, limits.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Clock {
            limits: Some(limits.clone()),
            deadline,
            ticks: 0,
        }
    }

    /// Fails with the checker's limit error when cancelled or past the deadline.
    pub(crate) fn check(&self) -> Result<()> {
        let Some(limits) = &self.limits else {
            return Ok(());
        };
        if limits.is_cancelled() {
            return Err(ExplainError::Check(CheckError::Stopped(Stop::Cancelled)));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ExplainError::Check(CheckError::Stopped(Stop::Timeout {
                after: limits.timeout,
            })));
        }
        Ok(())
    }

    /// [`Clock::check`] once every [`TICKS_PER_CHECK`] calls (a cheap call in a search's
    /// inner loop).
    #[inline]
    pub(crate) fn tick(&mut self) -> Result<()> {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks.is_multiple_of(TICKS_PER_CHECK) {
            self.check()
        } else {
            Ok(())
        }
    }
}
