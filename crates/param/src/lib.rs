//! augur-param: parametric DTMCs, whose transition probabilities are rational functions of
//! parameters (`p`, `1-p`, `p*q`).
//!
//! Main types: [`ParametricModel`] (loaded from a PRISM model with undefined constants
//! declared parameters, or an explicit file with functions; checked well defined:
//! [`wellformed`]), [`ParamChecker`] (a property's value as an exact rational function, by
//! state elimination), [`Parameter`] and [`Region`] (the parameter space), [`regions`]
//! (parameter lifting: boxes proven to satisfy or violate a bound, refinement), [`optimize`]
//! (the extremal value over a region, with a sound bound), [`ParamError`].
//!
//! ```
//! use augur_param::{ParametricModel, ParamChecker, PValue, space::parse_params};
//! use augur_check::{LoadOptions, Properties, Constants};
//! let text = "dtmc
//! const double p;
//! module m
//!   s : [0..2] init 0;
//!   [] s=0 -> p : (s'=1) + (1-p) : (s'=2);
//!   [] s>0 -> true;
//! endmodule";
//! let params = parse_params(&["p".to_string()]).unwrap();
//! let m = ParametricModel::from_prism_text("coin.pm", text, params, &LoadOptions::default()).unwrap();
//! let mut props = Properties::new();
//! props.add("--prop", "P=? [ F s=1 ]").unwrap();
//! let compiled = props.compile(&m.model, &Constants::new()).unwrap();
//! let p = compiled.items[0].resolved.as_ref().unwrap();
//! let out = ParamChecker::new(&m, false).check(p).unwrap();
//! let Some(PValue::Func(f)) = &out.values[0] else { panic!() };
//! assert_eq!(f.display(&m.names()).to_string(), "p");
//! ```
#![deny(missing_docs)]

pub mod check;
pub mod elim;
mod error;
mod explicit;
pub mod model;
pub mod optimize;
pub mod regions;
pub mod space;
pub mod wellformed;

pub use check::{PValue, ParamChecker, ParamOutcome};
pub use error::{ParamError, Result};
pub use model::ParametricModel;
pub use space::{Parameter, Region};

#[cfg(test)]
mod tests;
