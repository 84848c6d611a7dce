//! `--timeout` and `--max-states`, shared by the commands that load a model, and the progress
//! line of long builds.

use crate::error::CliError;
use augur_check::{Limits, Progress, DEFAULT_MAX_STATES};
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
}

impl LimitArgs {
    /// The limits, with a progress line on stderr (only on a terminal, and only once a build
    /// has taken more than a second). The time limit covers the whole command.
    pub fn limits(&self) -> Result<Limits, CliError> {
        let mut limits = Limits::default().with_max_states(self.max_states);
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
            limits = limits.with_progress(move |p| {
                let Progress::Building {
                    states,
                    explored,
                    transitions,
                    done,
                } = *p
                else {
                    return;
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
