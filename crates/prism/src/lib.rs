//! augur-prism: the PRISM modelling language (DTMC subset) and state-space construction.
//!
//! Main types: [`PrismModel`] (a parsed, statically checked model file, from [`parse_model`]),
//! [`BuildOptions`], [`ExplorationReport`], [`PrismError`]. [`PrismModel::build`] explores the reachable
//! states breadth-first into an [`augur_dtmc::Dtmc`] (valuations, labels including `"init"`
//! and `"deadlock"`, reward structures; exact rational probabilities under
//! [`BuildOptions::exact`]), within the caller's limits ([`BuildOptions::max_states`],
//! [`BuildOptions::deadline`], [`BuildOptions::cancel`]: [`PrismError::Stopped`]). Properties
//! can use the model's constants ([`PrismModel::constant_values`]) and formulas
//! ([`PrismModel::expand_formulas`]).
//!
//! ```
//! use augur_prism::{parse_model, BuildOptions};
//! use augur_expr::Value;
//! let src = "dtmc
//! const double p;
//! module coin
//!   x : [0..2] init 0;
//!   [flip] x=0 -> p : (x'=1) + (1-p) : (x'=2);
//!   [] x>0 -> true;
//! endmodule
//! label \"heads\" = x=1;
//! ";
//! let model = parse_model(src, "coin.pm").unwrap();
//! let consts = [("p".to_string(), Value::Double(0.25))];
//! let (dtmc, report) = model.build(&consts, &BuildOptions::default()).unwrap();
//! assert_eq!((dtmc.num_states(), dtmc.num_transitions()), (3, 4));
//! assert_eq!(dtmc.label("heads").unwrap().count_ones(..), 1);
//! assert!(report.warnings.is_empty());
//! ```
#![deny(missing_docs)]

pub mod ast;
mod build;
pub mod compile;
mod error;
pub mod eval;
mod explore;
mod fast;
mod index;
mod model;
mod param;
mod parser;
mod program;

pub use build::{BuildOptions, BuildProgress, ExplorationReport};
pub use error::{PrismError, Result, StopReason};
pub use model::{PrismModel, MAX_PROPERTY_EXPANSION};
pub use param::ParametricValues;
pub use parser::parse_model;

#[cfg(test)]
mod tests;
