//! The options shared by every command that loads a model (`check`, `horizon`, `export`):
//! constants, JSON output, the solution method and precision, deadlocks and the limits — one
//! struct flattened into each command's arguments, so that a sibling never lacks an option.

use crate::check_cmd::{constants, MethodArg};
use crate::error::CliError;
use crate::limits::LimitArgs;
use augur_check::{CheckOptions, Constants, Experiments, LoadOptions};
use clap::Args;

/// The options of a command that loads a model.
#[derive(Args, Debug, Clone)]
pub struct ModelOptions {
    /// Values of constants (the model's undefined ones, or names used in properties), e.g.
    /// `N=3,p=0.5` (repeatable).
    #[arg(long = "const", value_name = "N=V,...")]
    pub consts: Vec<String>,
    /// Solution method for linear equation systems.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Requested precision (relative).
    #[arg(long, default_value_t = 1e-6)]
    pub epsilon: f64,
    /// Print one JSON document instead of text (schema: docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// PRISM models: fail on a deadlock state instead of giving it a self-loop.
    #[arg(long)]
    pub no_fix_deadlocks: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl ModelOptions {
    /// The constants, the load options and the check options (one `--timeout` deadline for
    /// loading and checking together).
    pub fn resolve(&self) -> Result<(Constants, LoadOptions, CheckOptions), CliError> {
        let constants = constants(&self.consts)?;
        self.resolve_with(constants)
    }

    /// As [`ModelOptions::resolve`], where `--const` may give ranges (`N=1:2:9`): the
    /// experiment, and the load options with its fixed values.
    pub fn resolve_experiments(
        &self,
    ) -> Result<(Experiments, LoadOptions, CheckOptions), CliError> {
        let mut e = Experiments::default();
        for text in &self.consts {
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
        let limits = self.limits.limits()?;
        let load = LoadOptions {
            constants: constants.clone(),
            exact: self.method == MethodArg::Exact,
            fix_deadlocks: !self.no_fix_deadlocks,
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
