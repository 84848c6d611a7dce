//! `--timeout` and `--max-states`, shared by the commands that load a model, and the progress
//! line of long builds.

use crate::error::CliError;
use augur_check::{Limits, Progress, DEFAULT_MAX_STATES};
use augur_formats::DEFAULT_MAX_SMOOTHED_TRANSITIONS;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The limits of a command that loads a model.
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Stop after this many seconds (loading and checking together); an error (exit code 1).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Refuse a model with more reachable states than this; an error (exit code 1).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STATES)]
    pub max_states: usize,
    /// Refuse a learned model whose smoothed rows (kept implicitly in its file) expand to more
    /// transitions than this; an error (exit code 1).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SMOOTHED_TRANSITIONS)]
    pub max_smoothed_transitions: usize,
}

impl LimitArgs {
    /// The limits, with a progress line on stderr (only on a terminal, and only once a build
    /// has taken more than a second). The time limit covers the whole command.
    pub fn limits(&self) -> Result<Limits, CliError> {
        let mut limits = Limits::default()
            .with_max_states(self.max_states)
            .with_max_smoothed_transitions(self.max_smoothed_transitions);
        if let Some(t) = self.timeout {
            let t = Duration::try_from_secs_f64(t)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    CliError::User(format!(
                        "error: --timeout must be a positive number of seconds, got {t}"
                    ))
                })?;
            limits = limits.with_timeout(t);
            if let Some(deadline) = Instant::now().checked_add(t) {
                limits = limits.with_deadline(deadline);
            }
        }
        if std::io::stderr().is_terminal() {
            let start = Instant::now();
            let bar = ProgressBar::hidden();
            // Replaced by a fresh bar for each property: a finished bar never draws again.
            let solve_bar = std::sync::Mutex::new(ProgressBar::hidden());
            // (start of the current computation, its last sweep count)
            let solving = std::sync::Mutex::new((Instant::now(), 0u64));
            limits = limits.with_progress(move |p| {
                let (states, explored, transitions, done) = match *p {
                    Progress::Building {
                        states,
                        explored,
                        transitions,
                        done,
                    } => (states, explored, transitions, done),
                    Progress::Solving { sweeps } => {
                        if let Ok(bar) = solve_bar.lock() {
                            show_solving(&bar, &solving, sweeps);
                        }
                        return;
                    }
                    _ => {
                        // The next property: its computation starts afresh.
                        if let Ok(mut bar) = solve_bar.lock() {
                            bar.finish_and_clear();
                            *bar = ProgressBar::hidden();
                        }
                        if let Ok(mut st) = solving.lock() {
                            *st = (Instant::now(), 0);
                        }
                        return;
                    }
                };
                let elapsed = start.elapsed();
                if done {
                    bar.finish_and_clear();
                    return;
                }
                if elapsed < Duration::from_secs(1) {
                    return;
                }
                if bar.is_hidden() {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} building {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                }
                let rate = explored as f64 / elapsed.as_secs_f64().max(1e-9);
                bar.set_message(format!(
                    "{states} states ({explored} explored), {transitions} transitions, {rate:.0} states/s"
                ));
                bar.tick();
            });
        }
        Ok(limits)
    }
}

/// The progress line of a long numerical computation (an iterative solver's sweeps, exact
/// elimination's eliminated unknowns), shown once it has run for two seconds.
fn show_solving(bar: &ProgressBar, state: &std::sync::Mutex<(Instant, u64)>, sweeps: u64) {
    let Ok(mut st) = state.lock() else { return };
    if sweeps < st.1 {
        // A new computation.
        st.0 = Instant::now();
    }
    st.1 = sweeps;
    let elapsed = st.0.elapsed();
    if elapsed < Duration::from_secs(2) {
        return;
    }
    if bar.is_hidden() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} solving {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
    }
    bar.set_message(format!(
        "{sweeps} sweeps or eliminated unknowns, {:.0} s (--timeout SECONDS limits the wait)",
        elapsed.as_secs_f64()
    ));
    bar.tick();
}
