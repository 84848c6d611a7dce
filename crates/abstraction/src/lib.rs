//! augur-abstraction: predicate abstraction of concrete states into bit-vector abstract
//! states, with validity constraints and labels, and streaming trace readers.
//!
//! Main types: [`Abstraction`] (read from a TOML spec with [`Abstraction::parse`] or
//! [`Abstraction::from_file`]), [`TraceReader`] (JSON Lines or CSV long form, one trace at a
//! time), [`AbstractionError`] (every spec or trace error carries an `augur_source::Location`:
//! file, line, column; [`AbstractionError::diagnostic`] renders it with a caret).
//!
//! A spec:
//!
//! ```toml
//! [variables]
//! location = { type = "enum", values = ["table", "counter", "microwave"] }
//! holding_fork = { type = "bool" }
//! temperature = { type = "int", min = 0, max = 300 }
//!
//! [predicates]                       # bit i = the i-th predicate, in this order
//! fork_in_microwave = "location = microwave & !holding_fork"
//! hot = "temperature > 100"
//!
//! [validity]
//! monotone = ["hot"]                 # once true, stays true
//! exclusive = [["a", "b"]]           # at most one true
//! invalid_state = "hot & !fork_in_microwave"            # over predicates
//! invalid_transition = "fork_in_microwave & !fork_in_microwave'"   # x' = next value of x
//!
//! [labels]
//! unsafe = "fork_in_microwave & hot"
//! ```
//!
//! Enum variables are ints in expressions (the position of their value) and their value
//! names are constants, so `location = microwave` and `level >= HIGH` work. Predicates are over
//! variables; constraints and labels are over predicates (the primed form `p'` only in
//! `invalid_transition`). The valid abstract states are enumerated by a depth-first search
//! over the predicates that prunes a partial assignment as soon as an exclusive group has two
//! true predicates or `invalid_state` is decided true (three-valued evaluation), so a
//! constrained spec never visits all 2^k bit-vectors.
//!
//! ```
//! use augur_abstraction::Abstraction;
//! let spec = r#"
//! [variables]
//! x = { type = "int", min = 0, max = 9 }
//! [predicates]
//! big = "x >= 5"
//! huge = "x >= 8"
//! [validity]
//! monotone = ["big"]
//! invalid_state = "huge & !big"
//! [labels]
//! unsafe = "huge"
//! "#;
//! let abs = Abstraction::parse(spec, "spec.toml").unwrap();
//! assert_eq!(abs.num_states(), 3); // {}, {big}, {big,huge}
//! let s = abs.abstract_state(&[augur_expr::Value::Int(9)]).unwrap();
//! assert_eq!(abs.state_name(abs.code_of(s).unwrap()), "{big,huge}");
//! assert!(abs.label_states("unsafe").unwrap().contains(s as usize));
//! assert!(!abs.is_valid_transition(0b01, 0b00)); // big is monotone
//! ```
#![deny(missing_docs)]

mod bexpr;
mod error;
mod spec;
mod traces;

pub use bexpr::PredicateExpr;
pub use error::{AbstractionError, Result};
pub use spec::{Abstraction, Predicate, VarKind, Variable, MAX_PREDICATES, MAX_STATES};
pub use traces::{
    jsonl_content, parse_jsonl_line, read_traces, RawValue, Step, StepKind, StepSource, Trace,
    TraceFormat, TraceReader,
};

#[cfg(test)]
mod tests;
