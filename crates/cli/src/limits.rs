//! `--timeout` and `--max-states`, shared by the commands that load a model, and the progress
//! line of long builds.

use crate::error::CliError;
use crate::options::Seconds;
use augur_check::{Limits, Progress, DEFAULT_MAX_STATES};
use augur_formats::DEFAULT_MAX_SMOOTHED_TRANSITIONS;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The limits of a command that loads a model (`augur mcp`: of each request). The defaults
/// are the command's ([`LimitDefaults`]), so one declaration serves the one-shot commands
/// and the server.
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Stop after this many seconds (loading and checking together; `augur mcp`: each request,
    /// default 10); an error (exit code 1).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<Seconds>,
    /// Refuse a model with more reachable states than this (default 20000000; `augur mcp`:
    /// 1000000 per request); an error (exit code 1).
    #[arg(long, value_name = "N")]
    pub max_states: Option<usize>,
    /// Refuse a learned model whose smoothed rows (kept implicitly in its file) expand to more
    /// transitions than this (default 16777216); an error (exit code 1).
    #[arg(long, value_name = "N")]
    pub max_smoothed_transitions: Option<usize>,
}

/// The defaults of [`LimitArgs`] for one command.
#[derive(Clone, Copy, Debug)]
pub struct LimitDefaults {
    /// `--timeout` (none: no time limit).
    pub timeout: Option<Duration>,
    /// `--max-states`.
    pub max_states: usize,
    /// `--max-smoothed-transitions`.
    pub max_smoothed_transitions: usize,
}

impl LimitDefaults {
    /// The one-shot commands' defaults: no time limit, [`DEFAULT_MAX_STATES`] states.
    pub const COMMAND: LimitDefaults = LimitDefaults {
        timeout: None,
        max_states: DEFAULT_MAX_STATES,
        max_smoothed_transitions: DEFAULT_MAX_SMOOTHED_TRANSITIONS,
    };
}

impl LimitArgs {
    /// The values given, else `defaults`: (timeout, max states, max smoothed transitions).
    pub fn values(&self, defaults: LimitDefaults) -> (Option<Duration>, usize, usize) {
        (
            self.timeout.map(|s| s.0).or(defaults.timeout),
            self.max_states.unwrap_or(defaults.max_states),
            self.max_smoothed_transitions
                .unwrap_or(defaults.max_smoothed_transitions),
        )
    }

    /// The limits, with a progress line on stderr (only on a terminal, and only once a build
    /// has taken more than a second). The time limit covers the whole command.
    pub fn limits(&self) -> Result<Limits, CliError> {
        let (timeout, max_states, max_smoothed) = self.values(LimitDefaults::COMMAND);
        let mut limits = Limits::default()
            .with_max_states(max_states)
            .with_max_smoothed_transitions(max_smoothed);
        if let Some(t) = timeout {
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
