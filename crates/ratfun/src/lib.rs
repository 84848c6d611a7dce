//! augur-ratfun: rational functions over the rationals, the values of parametric DTMCs.
//!
//! Main types: [`RatFunc`] (`num / den`, sparse multivariate polynomials with integer
//! coefficients, always cancelled by their gcd and normalised — no common integer factor, the
//! denominator's leading coefficient positive — so `==` is equality of functions), [`Poly`]
//! (the polynomials: flat exponent storage, graded reverse lexicographic order), [`CompiledFunc`] (a
//! floating-point form for many evaluations), [`parse`] / [`RatFunc::display`] (PRISM's and
//! Storm's notation), [`RatFuncError`]. The gcd is the `zippel-gcd` crate's (sparse modular
//! algorithms, exactly certified). No I/O.
//!
//! ```
//! use augur_ratfun::{parse, RatFunc};
//! use num_rational::BigRational;
//! let names = vec!["p".to_string()];
//! let idx = |s: &str| (s == "p").then_some(0);
//! let f = parse("p^2 / (p^2 + p)", 1, &idx).unwrap();
//! // cancelled by the gcd p: p / (p + 1)
//! assert_eq!(f.display(&names).to_string(), "(p)/(p+1)");
//! let half = BigRational::new(1.into(), 2.into());
//! assert_eq!(f.eval(&[half]).unwrap(), BigRational::new(1.into(), 3.into()));
//! let g = &f + &parse("1/(p+1)", 1, &idx).unwrap();
//! assert!(g.is_one());
//! ```
#![deny(missing_docs)]

mod error;
mod func;
mod poly;
mod text;

/// The rational functions of a parametric chain, aligned with the `f64` chain (at a
/// reference point) built or read beside them.
#[derive(Clone, Debug, PartialEq)]
pub struct ParametricValues {
    /// The parameters' names (parameter `i` is variable `i` of every function).
    pub params: Vec<String>,
    /// The function of each matrix entry, in CSR order.
    pub transitions: Vec<RatFunc>,
    /// Per reward structure: the state rewards (`None` when it has none).
    pub state_rewards: Vec<Option<Vec<RatFunc>>>,
    /// Per reward structure: the transition rewards, one per matrix entry (`None` when it
    /// has none).
    pub transition_rewards: Vec<Option<Vec<RatFunc>>>,
}

pub use error::{RatFuncError, Result};
pub use func::{rational_f64, CompiledFunc, IntPoly, RatFunc};
pub use poly::Poly;
pub use text::{decimal, parse, poly_text, rational_text, Display};

#[cfg(test)]
mod tests;
