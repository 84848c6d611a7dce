//! Export as a PRISM-language model that PRISM and Storm can read.
//!
//! When the model has state valuations (a PRISM model, a `.sta` file, a learned model) whose
//! variables are integers or Booleans and which tell the states apart, the exported module
//! keeps those variables (integers with the range of their values), so that a property
//! written for the model (`F s>=2`) means the same thing on the export: one command per state
//! guarded by its valuation (`[] s=3&done=false -> 0.5:(s'=1)&(done'=false) + ...;`), labels
//! and rewards as disjunctions of valuations. Otherwise the module has one variable
//! [`INDEX_VAR`] `: [0..n-1]` (the state index; the leading underscore keeps it apart from the
//! names of a model's own variables, constants and formulas, and a comment in the file says
//! so), labels as disjunctions of `_s=k` and ranges `(_s>=a&_s<=b)`.
//!
//! Probabilities are printed with shortest round-trip digits (parsing them gives the same
//! f64), reward structures become `rewards` blocks. Transition rewards become the per-state
//! action reward `[] guard : Σ_t P(k,t)·r(k,t);` (the same expected one-step reward, so the
//! same value for every cumulative, reachability and long-run reward property). Several
//! initial states become an `init ... endinit` block. A deadlock state (whose self-loop was
//! added when the model was built) has no command, so the reader sees the same deadlock and
//! adds the same loop. The built-in labels `"init"` and
//! `"deadlock"` are not written (PRISM defines them itself).

use crate::error::{FormatError, Result};
use augur_dtmc::{format_f64, format_value, Dtmc, RewardStructure, StateSet, Valuations};
use augur_expr::{Type, Value};
use std::collections::HashSet;
use std::io::Write;

/// The state-index variable of an export without valuations of its own.
pub const INDEX_VAR: &str = "_s";

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `_s=1|(_s>=3&_s<=7)`, or `false` for the empty set.
fn set_expr(set: impl Iterator<Item = usize>) -> String {
    let v = INDEX_VAR;
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    let flush = |run: (usize, usize), parts: &mut Vec<String>| {
        let (a, b) = run;
        if a == b {
            parts.push(format!("{v}={a}"));
        } else if b == a + 1 {
            parts.push(format!("{v}={a}|{v}={b}"));
        } else {
            parts.push(format!("({v}>={a}&{v}<={b})"));
        }
    };
    for x in set {
        run = match run {
            Some((a, b)) if x == b + 1 => Some((a, x)),
            Some(r) => {
                flush(r, &mut parts);
                Some((x, x))
            }
            None => Some((x, x)),
        };
    }
    if let Some(r) = run {
        flush(r, &mut parts);
    }
    if parts.is_empty() {
        "false".into()
    } else {
        parts.join("|")
    }
}

/// How the exported module names the states: by the model's own variables, or by an index.
enum Vars<'a> {
    /// The model's valuations (integer and Boolean variables that tell the states apart),
    /// with the `[min..max]` range of each integer variable.
    Kept(&'a Valuations, Vec<(i64, i64)>),
    /// One variable [`INDEX_VAR`] `: [0..n-1]`.
    Index,
}

impl<'a> Vars<'a> {
    fn new(d: &'a Dtmc) -> Vars<'a> {
        let Some(v) = &d.valuations else {
            return Vars::Index;
        };
        let n = d.num_states();
        let k = v.names.len();
        let usable = k > 0
            && v.num_states() == n
            && v.num_values() == n * k
            && v.names.iter().all(|x| is_identifier(x))
            && v.types.len() == k
            && v.types.iter().all(|t| matches!(t, Type::Int | Type::Bool));
        if !usable {
            return Vars::Index;
        }
        let mut ranges = vec![(i64::MAX, i64::MIN); k];
        for s in 0..n {
            let vals = v.of_state(s).unwrap_or_default();
            for (j, (val, ty)) in vals.iter().zip(&v.types).enumerate() {
                match (val, ty) {
                    (Value::Int(i), Type::Int) => {
                        ranges[j] = (ranges[j].0.min(*i), ranges[j].1.max(*i));
                    }
                    (Value::Bool(_), Type::Bool) => {}
                    _ => return Vars::Index,
                }
            }
        }
        // The valuations must tell the states apart.
        let mut seen = HashSet::with_capacity(n);
        for s in 0..n {
            if !seen.insert(
                v.of_state(s)
                    .map(|vals| vals.iter().map(format_value).collect::<Vec<_>>()),
            ) {
                return Vars::Index;
            }
        }
        Vars::Kept(v, ranges)
    }

    /// The guard that holds in state `s` only.
    fn guard(&self, s: usize) -> String {
        self.assignments(s, false)
    }

    /// The update that moves to state `t`.
    fn update(&self, t: usize) -> String {
        self.assignments(t, true)
    }

    /// State `s`'s variables with their values, joined by `&`: `x=v` (a guard) or `(x'=v)`
    /// (an update, `primed`).
    fn assignments(&self, s: usize, primed: bool) -> String {
        let one = |n: &dyn std::fmt::Display, x: &dyn std::fmt::Display| {
            if primed {
                format!("({n}'={x})")
            } else {
                format!("{n}={x}")
            }
        };
        match self {
            Vars::Index => one(&INDEX_VAR, &s),
            Vars::Kept(v, _) => {
                let vals = v.of_state(s).unwrap_or_default();
                let parts: Vec<String> = v
                    .names
                    .iter()
                    .zip(vals)
                    .map(|(n, x)| one(n, &format_value(&x)))
                    .collect();
                parts.join("&")
            }
        }
    }

    /// An expression true exactly in the states of `set` (of `n` states).
    fn set(&self, set: &StateSet, n: usize) -> String {
        match self {
            Vars::Index => set_expr(set.ones()),
            Vars::Kept(..) => {
                let count = set.ones().count();
                if count == 0 {
                    "false".into()
                } else if count == n {
                    "true".into()
                } else {
                    let parts: Vec<String> =
                        set.ones().map(|s| format!("({})", self.guard(s))).collect();
                    parts.join("|")
                }
            }
        }
    }
}

/// What a PRISM-language source adds to its chain, kept by the export so that the properties
/// written for the source still parse and mean the same: the constants' values and the
/// formulas (`formula total = x+y;`, written only when the variables are kept).
#[derive(Clone, Debug, Default)]
pub struct PrismSource {
    /// The constants and their values, in declaration order.
    pub constants: Vec<(String, Value)>,
    /// The formulas `(name, body)`, in declaration order.
    pub formulas: Vec<(String, String)>,
}

/// Writes the model in the PRISM language.
pub fn write_prism(d: &Dtmc, w: &mut dyn Write) -> Result<()> {
    write_prism_with(d, &PrismSource::default(), w)
}

/// Writes the model in the PRISM language, with the constants and formulas of its source.
pub fn write_prism_with(d: &Dtmc, source: &PrismSource, w: &mut dyn Write) -> Result<()> {
    let unsupported = |m: String| FormatError::Unsupported {
        format: "prism".into(),
        message: m,
    };
    for (l, _) in &d.labels {
        if !is_identifier(l) {
            return Err(unsupported(format!(
                "label name {l:?} is not an identifier"
            )));
        }
    }
    for r in &d.rewards {
        if let Some(n) = &r.name {
            if !is_identifier(n) {
                return Err(unsupported(format!(
                    "reward structure name {n:?} is not an identifier"
                )));
            }
        }
    }
    let n = d.num_states();
    let vars = Vars::new(d);
    writeln!(
        w,
        "// Exported by augur: {n} states, {} transitions",
        d.num_transitions()
    )?;
    match &vars {
        Vars::Kept(..) => writeln!(
            w,
            "// The states keep the model's variables; one command per state."
        )?,
        Vars::Index => writeln!(
            w,
            "// The model has no integer or Boolean variables that tell its states apart:\n\
             // {INDEX_VAR} is the state index, a name chosen not to clash with a model's or a\n\
             // properties file's identifiers."
        )?,
    }
    writeln!(w, "dtmc")?;
    writeln!(w)?;
    for (name, value) in &source.constants {
        let ty = match value {
            Value::Int(_) => "int",
            Value::Bool(_) => "bool",
            Value::Double(_) => "double",
        };
        writeln!(w, "const {ty} {name} = {};", format_value(value))?;
    }
    if !source.formulas.is_empty() {
        match &vars {
            Vars::Kept(..) => {
                for (name, body) in &source.formulas {
                    writeln!(w, "formula {name} = {body};")?;
                }
            }
            Vars::Index => writeln!(
                w,
                "// The source's formulas are not written: they name variables the export does not have."
            )?,
        }
    }
    if !source.constants.is_empty() || !source.formulas.is_empty() {
        writeln!(w)?;
    }
    writeln!(w, "module augur_model")?;
    let single_init = match d.initial.as_slice() {
        [i] => Some(*i as usize),
        _ => None,
    };
    match &vars {
        Vars::Index => match single_init {
            Some(i) => writeln!(w, "  {INDEX_VAR} : [0..{}] init {i};", n - 1)?,
            None => writeln!(w, "  {INDEX_VAR} : [0..{}];", n - 1)?,
        },
        Vars::Kept(v, ranges) => {
            let init_vals = single_init.and_then(|i| v.of_state(i));
            for (j, (name, ty)) in v.names.iter().zip(&v.types).enumerate() {
                let init = init_vals
                    .as_ref()
                    .map(|vals| format!(" init {}", format_value(&vals[j])))
                    .unwrap_or_default();
                match ty {
                    Type::Bool => writeln!(w, "  {name} : bool{init};")?,
                    _ => writeln!(w, "  {name} : [{}..{}]{init};", ranges[j].0, ranges[j].1)?,
                }
            }
        }
    }
    // The model's deadlock states (their self-loop was added when it was built) are written
    // without a command, so that a reader sees the same deadlocks (and adds the same loop).
    let deadlock = d
        .labels
        .iter()
        .find(|(l, _)| l == "deadlock")
        .map(|(_, set)| set);
    let is_fixed_deadlock = |s: usize| {
        deadlock.is_some_and(|set| set.contains(s))
            && d.successors(s).eq(std::iter::once((s as u32, 1.0)))
    };
    let mut upd: Vec<String> = Vec::new();
    for s in 0..n {
        if is_fixed_deadlock(s) {
            writeln!(w, "  // {}: a deadlock state (no command)", vars.guard(s))?;
            continue;
        }
        upd.clear();
        upd.extend(
            d.successors(s)
                .map(|(t, p)| format!("{}:{}", format_f64(p), vars.update(t as usize))),
        );
        writeln!(w, "  [] {} -> {};", vars.guard(s), upd.join(" + "))?;
    }
    writeln!(w, "endmodule")?;
    if single_init.is_none() {
        let mut init = StateSet::with_capacity(n);
        for &s in &d.initial {
            init.insert(s as usize);
        }
        writeln!(w)?;
        writeln!(w, "init {} endinit", vars.set(&init, n))?;
    }
    let user_labels: Vec<&(String, StateSet)> = d
        .labels
        .iter()
        .filter(|(l, _)| l != "init" && l != "deadlock")
        .collect();
    if !user_labels.is_empty() {
        writeln!(w)?;
    }
    for (l, set) in user_labels {
        writeln!(w, "label \"{l}\" = {};", vars.set(set, n))?;
    }
    for r in &d.rewards {
        writeln!(w)?;
        match &r.name {
            Some(name) => writeln!(w, "rewards \"{name}\"")?,
            None => writeln!(w, "rewards")?,
        }
        if let Some(v) = &r.state {
            for (s, &x) in v.iter().enumerate() {
                if x != 0.0 {
                    writeln!(w, "  {} : {};", vars.guard(s), format_f64(x))?;
                }
            }
        }
        if r.transition.is_some() {
            let only = RewardStructure {
                name: None,
                state: None,
                transition: r.transition.clone(),
                exact: None,
            };
            for (s, x) in d.expected_one_step_rewards(&only).into_iter().enumerate() {
                if x != 0.0 {
                    writeln!(w, "  [] {} : {};", vars.guard(s), format_f64(x))?;
                }
            }
        }
        writeln!(w, "endrewards")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PRISM text `write_prism` writes for `d`.
    fn exported(d: &Dtmc) -> String {
        let mut out = Vec::new();
        write_prism(d, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ranges() {
        assert_eq!(set_expr([].into_iter()), "false");
        assert_eq!(
            set_expr([0, 2, 3, 5, 6, 7, 9].into_iter()),
            "_s=0|_s=2|_s=3|(_s>=5&_s<=7)|_s=9"
        );
    }

    #[test]
    fn writes_a_prism_model() {
        let d = crate::explicit::tests::sample();
        let s = exported(&d);
        let expected = "\
// Exported by augur: 4 states, 7 transitions
// The model has no integer or Boolean variables that tell its states apart:
// _s is the state index, a name chosen not to clash with a model's or a
// properties file's identifiers.
dtmc

module augur_model
  _s : [0..3] init 0;
  [] _s=0 -> 0.5:(_s'=1) + 0.25:(_s'=2) + 0.25:(_s'=3);
  [] _s=1 -> 0.1:(_s'=0) + 0.9:(_s'=1);
  [] _s=2 -> 1.0:(_s'=2);
  [] _s=3 -> 1.0:(_s'=3);
endmodule

label \"goal\" = _s=2|_s=3;
label \"bad\" = _s=3;

rewards \"cost\"
  _s=0 : 1.5;
  _s=1 : 0.3333333333333333;
  [] _s=0 : 0.5;
endrewards
";
        assert_eq!(s, expected);
        // Every printed probability parses back to the same f64.
        for (_, p) in (0..4).flat_map(|s| d.successors(s)) {
            assert_eq!(format_f64(p).parse::<f64>().unwrap(), p);
        }
    }

    #[test]
    fn several_initial_states_and_bad_names() {
        let mut b = augur_dtmc::DtmcBuilder::new(3);
        for s in 0..3 {
            b.add_row(s, [(s, 1.0)]).unwrap();
            b.add_initial(s).unwrap();
        }
        let (mut d, _) = b.build().unwrap();
        let s = exported(&d);
        assert!(s.contains("  _s : [0..2];\n"));
        assert!(s.contains("init (_s>=0&_s<=2) endinit"));
        d.set_label("a b", StateSet::with_capacity(3));
        assert!(write_prism(&d, &mut Vec::new()).is_err());
    }

    #[test]
    fn keeps_integer_and_boolean_variables() {
        let mut d = crate::explicit::tests::sample();
        d.valuations = Some(Valuations::new(
            vec!["x".into(), "ok".into()],
            vec![Type::Int, Type::Bool],
            (0..4)
                .flat_map(|i| [Value::Int(i - 1), Value::Bool(i % 2 == 0)])
                .collect(),
        ));
        let s = exported(&d);
        let expected = "\
// Exported by augur: 4 states, 7 transitions
// The states keep the model's variables; one command per state.
dtmc

module augur_model
  x : [-1..2] init -1;
  ok : bool init true;
  [] x=-1&ok=true -> 0.5:(x'=0)&(ok'=false) + 0.25:(x'=1)&(ok'=true) + 0.25:(x'=2)&(ok'=false);
  [] x=0&ok=false -> 0.1:(x'=-1)&(ok'=true) + 0.9:(x'=0)&(ok'=false);
  [] x=1&ok=true -> 1.0:(x'=1)&(ok'=true);
  [] x=2&ok=false -> 1.0:(x'=2)&(ok'=false);
endmodule

label \"goal\" = (x=1&ok=true)|(x=2&ok=false);
label \"bad\" = (x=2&ok=false);

rewards \"cost\"
  x=-1&ok=true : 1.5;
  x=0&ok=false : 0.3333333333333333;
  [] x=-1&ok=true : 0.5;
endrewards
";
        assert_eq!(s, expected);
        // Two states with the same valuation: back to the state index.
        let v = d.valuations.as_mut().unwrap();
        let mut vals: Vec<Value> = (0..v.num_states())
            .flat_map(|s| v.row(s).unwrap())
            .collect();
        vals[2] = Value::Int(-1);
        vals[3] = Value::Bool(true);
        *v = Valuations::new(v.names.clone(), v.types.clone(), vals);
        assert!(exported(&d).contains("  _s : [0..3] init 0;\n"));
    }
}
