//! Graphviz DOT export: states as circles (with their labels and valuation), initial states
//! marked by an incoming arrow from a point and a double circle, probabilities on edges.

use crate::error::Result;
use crate::text::Num;
use augur_dtmc::Dtmc;
use std::io::Write;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes the model as a DOT digraph.
pub fn write_dot(d: &Dtmc, w: &mut dyn Write) -> Result<()> {
    writeln!(w, "digraph dtmc {{")?;
    writeln!(w, "  rankdir=LR;")?;
    writeln!(w, "  node [shape=circle];")?;
    let init = d.initial_set();
    for s in 0..d.num_states() {
        let mut text = s.to_string();
        if let Some(v) = d.describe_state(s) {
            text.push_str("\\n");
            text.push_str(&escape(&v));
        }
        let names: Vec<String> = d
            .labels
            .iter()
            .filter(|(n, set)| n != "init" && set.contains(s))
            .map(|(n, _)| escape(n))
            .collect();
        if !names.is_empty() {
            text.push_str("\\n{");
            text.push_str(&names.join(", "));
            text.push('}');
        }
        let extra = if init.contains(s) {
            ", shape=doublecircle"
        } else {
            ""
        };
        writeln!(w, "  {s} [label=\"{text}\"{extra}];")?;
    }
    for &s in &d.initial {
        writeln!(w, "  __init{s} [shape=point, label=\"\"];")?;
        writeln!(w, "  __init{s} -> {s};")?;
    }
    for s in 0..d.num_states() {
        for (t, p) in d.successors(s) {
            writeln!(w, "  {s} -> {t} [label=\"{}\"];", Num(p))?;
        }
    }
    writeln!(w, "}}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_lists_states_edges_labels_and_initial() {
        let d = crate::explicit::tests::sample();
        let mut out = Vec::new();
        write_dot(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("digraph dtmc {"));
        assert!(s.contains("  0 -> 1 [label=\"0.5\"];"));
        assert!(s.contains("  0 -> 3 [label=\"0.25\"];"));
        assert!(s.contains("  __init0 -> 0;"));
        assert!(s.contains("  3 [label=\"3\\n(x=2,ok=false,w=0.75)\\n{goal, bad}\"];"));
        assert!(s.contains("  0 [label=\"0\\n(x=-1,ok=true,w=0.0)\", shape=doublecircle];"));
        assert_eq!(s.matches(" -> ").count(), d.num_transitions() + 1);
        assert!(s.trim_end().ends_with('}'));
    }
}
