//! The options shared by several commands, each written once and flattened into the commands
//! that take it (docs/options.md is the glossary; a test holds every command's options to it):
//! - [`LoadArgs`]: loading a model (constants, JSON output, deadlocks, the limits);
//! - [`ModelOptions`]: loading and checking (with the solution method and its precision);
//! - [`IgnoredSolverArgs`]: the solver options that `horizon` and `export` used to accept and
//!   ignore, now deprecated;
//! - [`Seconds`]: every duration, in seconds (fractions allowed);
//! - [`deprecated`]: the note an old spelling prints (listed in CHANGELOG.md).

use crate::check_cmd::{constants, MethodArg};
use crate::error::CliError;
use crate::limits::LimitArgs;
use augur_check::{CheckOptions, Constants, Experiments, LoadOptions, Method};
use clap::Args;

/// The options of a command that loads a model.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Values of constants (the model's undefined ones, or names used in properties), e.g.
    /// `N=3,p=0.5` (repeatable).
    #[arg(long = "const", value_name = "N=V,...")]
    pub consts: Vec<String>,
    /// Print one JSON document instead of text (schema: docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// PRISM models: fail on a deadlock state instead of giving it a self-loop.
    #[arg(long)]
    pub no_fix_deadlocks: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl LoadArgs {
    /// The constants and the load options (`exact`: read the numbers as exact rationals).
    pub fn resolve(&self, exact: bool) -> Result<(Constants, LoadOptions), CliError> {
        let constants = constants(&self.consts)?;
        let load = LoadOptions {
            constants: constants.clone(),
            exact,
            fix_deadlocks: !self.no_fix_deadlocks,
            limits: self.limits.limits()?,
        };
        Ok((constants, load))
    }
}

/// The options of a command that loads a model and checks properties on it.
#[derive(Args, Debug, Clone)]
pub struct ModelOptions {
    #[command(flatten)]
    pub load: LoadArgs,
    /// Solution method for linear equation systems.
    #[arg(long, value_enum, default_value_t = MethodArg(Method::Auto))]
    pub method: MethodArg,
    /// Requested precision of the solution methods (relative).
    #[arg(long, default_value_t = 1e-6)]
    pub epsilon: f64,
}

impl ModelOptions {
    /// The constants, the load options and the check options (one `--timeout` deadline for
    /// loading and checking together).
    pub fn resolve(&self) -> Result<(Constants, LoadOptions, CheckOptions), CliError> {
        let constants = constants(&self.load.consts)?;
        self.resolve_with(constants)
    }

    /// As [`ModelOptions::resolve`], where `--const` may give ranges (`N=1:2:9`): the
    /// experiment, and the load options with its fixed values.
    pub fn resolve_experiments(
        &self,
    ) -> Result<(Experiments, LoadOptions, CheckOptions), CliError> {
        let mut e = Experiments::default();
        for text in &self.load.consts {
            e.add_from("--const", text)?;
        }
        let (_, load, check) = self.resolve_with(e.fixed.clone())?;
        Ok((e, load, check))
    }

    fn resolve_with(
        &self,
        constants: Constants,
    ) -> Result<(Constants, LoadOptions, CheckOptions), CliError> {
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(CliError::User(format!(
                "error: --epsilon must be in (0, 1), got {}",
                augur_source::number::exact(self.epsilon)
            )));
        }
        let limits = self.load.limits.limits()?;
        let load = LoadOptions {
            constants: constants.clone(),
            exact: self.method.0 == Method::Exact,
            fix_deadlocks: !self.load.no_fix_deadlocks,
            limits: limits.clone(),
        };
        let check = CheckOptions {
            method: self.method.into(),
            epsilon: self.epsilon,
            limits,
            ..CheckOptions::default()
        };
        Ok((constants, load, check))
    }
}

/// `--method` and `--epsilon` where nothing is solved (`horizon` computes its table by
/// matrix-vector products, `export` only reads and writes): accepted until 0.2 with a
/// deprecation note, and ignored, as they always were.
#[derive(Args, Debug, Clone, Default)]
pub struct IgnoredSolverArgs {
    /// Deprecated: no effect here.
    #[arg(long = "method", hide = true, value_name = "METHOD")]
    pub method: Option<String>,
    /// Deprecated: no effect here.
    #[arg(long = "epsilon", hide = true, value_name = "EPSILON")]
    pub epsilon: Option<String>,
}

impl IgnoredSolverArgs {
    /// The deprecation notes of the options given (`command`: `horizon`, `export`).
    pub fn note(&self, command: &str) {
        for (given, name) in [(&self.method, "--method"), (&self.epsilon, "--epsilon")] {
            if given.is_some() {
                deprecated(&format!(
                    "`augur {command} {name}` has no effect (nothing is solved); it is ignored, and refused from 0.2"
                ));
            }
        }
    }
}

/// A duration in seconds, as every option that takes one reads it (`--timeout 2.5`): a
/// positive number, fractions allowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub std::time::Duration);

impl std::str::FromStr for Seconds {
    type Err = String;
    fn from_str(s: &str) -> Result<Seconds, String> {
        let bad = || format!("a positive number of seconds, got `{s}`");
        let x: f64 = s.trim().parse().map_err(|_| bad())?;
        std::time::Duration::try_from_secs_f64(x)
            .ok()
            .filter(|d| !d.is_zero())
            .map(Seconds)
            .ok_or_else(bad)
    }
}

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.as_secs_f64())
    }
}

/// Prints the note of a deprecated spelling on stderr (CHANGELOG.md lists them all).
pub fn deprecated(message: &str) {
    crate::error::diag(format_args!("warning: deprecated: {message}"));
}

/// The PAC status stored with a monitor's learned rows (`monitor compile`, `monitor learn`):
/// ε and δ as `augur pac --epsilon/--delta` take them, spelled `--pac-*` beside the solver's
/// `--epsilon`.
#[derive(Args, Debug, Clone)]
pub struct PacStatusArgs {
    /// The accuracy ε of the PAC status stored for learned models (`augur pac --epsilon`).
    #[arg(long, value_name = "EPSILON", default_value_t = 0.1)]
    pub pac_epsilon: f64,
    /// The confidence δ of the PAC status stored for learned models (`augur pac --delta`).
    #[arg(long, value_name = "DELTA", default_value_t = 0.05)]
    pub pac_delta: f64,
}

impl PacStatusArgs {
    /// `(ε, δ)`, each in (0, 1).
    pub fn pac(&self) -> Result<(f64, f64), CliError> {
        for (name, x) in [
            ("--pac-epsilon", self.pac_epsilon),
            ("--pac-delta", self.pac_delta),
        ] {
            if !(x > 0.0 && x < 1.0) {
                return Err(CliError::User(format!(
                    "error: {name} must be in (0, 1), got {}",
                    augur_source::number::exact(x)
                )));
            }
        }
        Ok((self.pac_epsilon, self.pac_delta))
    }
}

/// How `monitor eval` and `monitor learn` learn the (d, t, r[, p]) chain from labelled runs
/// and compile it: one set of options, so that the monitor `learn` writes is the one `eval`
/// evaluates (`augur_monitor::eval::train_monitor` for both).
#[derive(Args, Debug, Clone)]
pub struct ChainArgs {
    /// The property compiled for every learned model.
    #[arg(long, value_name = "PCTL", default_value = "P=? [ F<=5 \"VIOLATED\" ]")]
    pub prop: String,
    /// The horizons h = 1..H of the monitor's curve P(F<=h target) (and of eval's
    /// per-horizon breakdown).
    #[arg(long, value_name = "H", default_value_t = 5)]
    pub horizon: u32,
    /// Laplace smoothing parameter α ≥ 0, added to every valid transition of every row (the
    /// chain's rows have up to 960 valid successors: 0.01 keeps a row's added mass under 10
    /// observations).
    #[arg(long, value_name = "A", default_value_t = 0.01)]
    pub alpha: f64,
    /// Classifier rules (TOML); default: the built-in rules, models/classifier.toml.
    #[arg(long, value_name = "RULES")]
    pub classifier: Option<std::path::PathBuf>,
    /// Learn the 60-state (d, t, r) chain of version-1 monitors instead of the 960-state
    /// chain with provenance and the predicates delegated, i and u.
    #[arg(long)]
    pub no_provenance: bool,
}

impl ChainArgs {
    /// The evaluation options these set (everything else by default): the property, the
    /// horizon, α, the chain and the classifier.
    pub fn eval_options(&self) -> Result<augur_monitor::eval::EvalOptions, CliError> {
        let mut opts = augur_monitor::eval::EvalOptions::new();
        opts.property = self.prop.clone();
        opts.horizon = self.horizon;
        opts.alpha = self.alpha;
        opts.provenance = !self.no_provenance;
        if let Some(c) = &self.classifier {
            opts.classifier = augur_gate::Classifier::from_file(c)
                .map_err(|e| CliError::User(augur_monitor::MonitorError::from(e).render()))?;
        }
        Ok(opts)
    }
}
