//! Export as a PRISM-language model that PRISM and Storm can read.
//!
//! One module with one variable `s : [0..n-1]`, one command per state
//! (`[] s=3 -> 0.5:(s'=1) + 0.5:(s'=4);`) with probabilities printed with shortest
//! round-trip digits (parsing them gives the same f64), labels as disjunctions of `s=k` and
//! ranges `(s>=a&s<=b)`, reward structures as `rewards` blocks. Transition rewards become the
//! per-state action reward `[] s=k : Σ_t P(k,t)·r(k,t);` (the same expected one-step reward,
//! so the same value for every cumulative, reachability and long-run reward property).
//! Several initial states become an `init ... endinit` block. The built-in labels `"init"`
//! and `"deadlock"` are not written (PRISM defines them itself).

use crate::error::{FormatError, Result};
use augur_dtmc::{format_f64, Dtmc, RewardStructure, StateSet};
use std::io::Write;

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `s=1|(s>=3&s<=7)`, or `false` for the empty set.
fn set_expr(set: impl Iterator<Item = usize>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    let flush = |run: (usize, usize), parts: &mut Vec<String>| {
        let (a, b) = run;
        if a == b {
            parts.push(format!("s={a}"));
        } else if b == a + 1 {
            parts.push(format!("s={a}|s={b}"));
        } else {
            parts.push(format!("(s>={a}&s<={b})"));
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

/// Writes the model in the PRISM language.
pub fn write_prism(d: &Dtmc, w: &mut dyn Write) -> Result<()> {
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
    writeln!(
        w,
        "// Exported by augur: {n} states, {} transitions",
        d.num_transitions()
    )?;
    writeln!(w, "dtmc")?;
    writeln!(w)?;
    writeln!(w, "module augur_model")?;
    match d.initial.as_slice() {
        [i] => writeln!(w, "  s : [0..{}] init {i};", n - 1)?,
        _ => writeln!(w, "  s : [0..{}];", n - 1)?,
    }
    let mut upd: Vec<String> = Vec::new();
    for s in 0..n {
        upd.clear();
        upd.extend(
            d.successors(s)
                .map(|(t, p)| format!("{}:(s'={t})", format_f64(p))),
        );
        writeln!(w, "  [] s={s} -> {};", upd.join(" + "))?;
    }
    writeln!(w, "endmodule")?;
    if d.initial.len() > 1 {
        writeln!(w)?;
        writeln!(
            w,
            "init {} endinit",
            set_expr(d.initial.iter().map(|&s| s as usize))
        )?;
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
        writeln!(w, "label \"{l}\" = {};", set_expr(set.ones()))?;
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
                    writeln!(w, "  s={s} : {};", format_f64(x))?;
                }
            }
        }
        if r.transition.is_some() {
            let only = RewardStructure {
                name: None,
                state: None,
                transition: r.transition.clone(),
            };
            for (s, x) in d.expected_one_step_rewards(&only).into_iter().enumerate() {
                if x != 0.0 {
                    writeln!(w, "  [] s={s} : {};", format_f64(x))?;
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

    #[test]
    fn ranges() {
        assert_eq!(set_expr([].into_iter()), "false");
        assert_eq!(
            set_expr([0, 2, 3, 5, 6, 7, 9].into_iter()),
            "s=0|s=2|s=3|(s>=5&s<=7)|s=9"
        );
    }

    #[test]
    fn writes_a_prism_model() {
        let d = crate::explicit::tests::sample();
        let mut out = Vec::new();
        write_prism(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        let expected = "\
// Exported by augur: 4 states, 7 transitions
dtmc

module augur_model
  s : [0..3] init 0;
  [] s=0 -> 0.5:(s'=1) + 0.25:(s'=2) + 0.25:(s'=3);
  [] s=1 -> 0.1:(s'=0) + 0.9:(s'=1);
  [] s=2 -> 1.0:(s'=2);
  [] s=3 -> 1.0:(s'=3);
endmodule

label \"goal\" = s=2|s=3;
label \"bad\" = s=3;

rewards \"cost\"
  s=0 : 1.5;
  s=1 : 0.3333333333333333;
  [] s=0 : 0.5;
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
        let mut out = Vec::new();
        write_prism(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("  s : [0..2];\n"));
        assert!(s.contains("init (s>=0&s<=2) endinit"));
        d.set_label("a b", StateSet::with_capacity(3));
        assert!(write_prism(&d, &mut Vec::new()).is_err());
    }
}
