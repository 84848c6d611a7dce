//! The learned models of counted groups: smoothing, labels and valuations.

use std::collections::BTreeMap;

use augur_abstraction::Abstraction;
use augur_dtmc::{Dtmc, Valuations};
use augur_expr::{Type, Value};

use super::*;
use crate::end_state::{self, EndValidity};
use crate::error::Result;
use crate::learn::{smoothed_rows, AllValid, Validity};

/// Learns one model per group of counted traces.
pub(super) fn build_models(
    groups: BTreeMap<String, Group>,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<Vec<LearnedModel>> {
    let k = opts.order;
    let spec_validity = spec.map(SpecValidity);
    let validity: &dyn Validity = match &spec_validity {
        Some(v) => v,
        None => &AllValid,
    };
    let mut models = Vec::new();
    for (category, mut group) in groups {
        if group.counts.traces() == 0 {
            continue;
        }
        let base_names: Vec<String> = match spec {
            Some(a) => a.valid_states().iter().map(|&c| a.state_name(c)).collect(),
            None => group.names.clone(),
        };
        let tuples = std::mem::take(&mut group.tuples);
        let tv = TupleValidity {
            tuples: &tuples,
            order: k,
            base: validity,
        };
        let v: &dyn Validity = if k > 1 { &tv } else { validity };
        let end = match opts.end_state {
            Some(_) => Some(group.counts.observe_ends(&group.ends)?),
            None => None,
        };
        let ev;
        let v: &dyn Validity = match end {
            Some(end) => {
                ev = EndValidity { base: v, end };
                &ev
            }
            None => v,
        };
        group.counts.mark_determined(v);
        let (rows, mut report) = smoothed_rows(&group.counts, v, opts.alpha, opts.unobserved)?;
        if let Some(end) = end {
            // The end state is absorbing by validity, not an unobserved row.
            report.unobserved_uniform.retain(|&s| s != end);
        }
        let initial: Vec<u32> = group.counts.initial().keys().copied().collect();
        let mut dtmc = shell(rows.num_states(), initial, Vec::new(), None);
        let mut state_names: Vec<String> = if k > 1 {
            tuples
                .iter()
                .map(|t| {
                    let parts: Vec<&str> =
                        t.iter().map(|&s| base_names[s as usize].as_str()).collect();
                    format!("({})", parts.join(","))
                })
                .collect()
        } else {
            base_names.clone()
        };
        if k > 1 {
            let last: Vec<u32> = tuples
                .iter()
                .map(|t| t.last().copied().unwrap_or(0))
                .collect();
            decorate_tuples(&mut dtmc, spec, &base_names, &last);
        } else {
            decorate(&mut dtmc, spec, &state_names);
        }
        if let Some(name) = &opts.end_state {
            end_state::check_unused(name, &state_names, &dtmc)?;
            end_state::decorate(&mut dtmc, name);
            state_names.push(name.clone());
        }
        models.push(LearnedModel {
            category: opts.by_category.then_some(category),
            rows,
            labels: dtmc.labels,
            valuations: dtmc.valuations,
            initial: dtmc.initial,
            counts: group.counts,
            report,
            state_names,
            intervals: None,
        });
    }
    Ok(models)
}

/// Labels and valuations: with a spec, its labels and predicates, and predicate valuations;
/// without, every state labelled with its name.
fn decorate(dtmc: &mut Dtmc, spec: Option<&Abstraction>, names: &[String]) {
    match spec {
        Some(a) => {
            dtmc.labels = a.labels();
            let k = a.predicates().len();
            let mut values = Vec::with_capacity(a.num_states() * k);
            for &c in a.valid_states() {
                values.extend(a.decode(c).into_iter().map(Value::Bool));
            }
            dtmc.valuations = Some(Valuations::new(
                a.predicates().iter().map(|p| p.name.clone()).collect(),
                vec![Type::Bool; k],
                values,
            ));
        }
        None => {
            let n = dtmc.num_states();
            dtmc.labels = names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let mut set = fixedbitset::FixedBitSet::with_capacity(n);
                    set.insert(i);
                    (name.clone(), set)
                })
                .collect();
        }
    }
}

/// Labels and valuations of a chain over tuples: those of each tuple's last state.
fn decorate_tuples(
    dtmc: &mut Dtmc,
    spec: Option<&Abstraction>,
    base_names: &[String],
    last: &[u32],
) {
    let n = dtmc.num_states();
    let lift = |set: &fixedbitset::FixedBitSet| {
        let mut out = fixedbitset::FixedBitSet::with_capacity(n);
        for (t, &s) in last.iter().enumerate() {
            if set.contains(s as usize) {
                out.insert(t);
            }
        }
        out
    };
    match spec {
        Some(a) => {
            dtmc.labels = a
                .labels()
                .iter()
                .map(|(name, set)| (name.clone(), lift(set)))
                .collect();
            let k = a.predicates().len();
            let mut values = Vec::with_capacity(n * k);
            for &s in last {
                let code = a.code_of(s).unwrap_or(0);
                values.extend(a.decode(code).into_iter().map(Value::Bool));
            }
            dtmc.valuations = Some(Valuations::new(
                a.predicates().iter().map(|p| p.name.clone()).collect(),
                vec![Type::Bool; k],
                values,
            ));
        }
        None => {
            dtmc.labels = base_names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let mut one = fixedbitset::FixedBitSet::with_capacity(base_names.len());
                    one.insert(i);
                    (name.clone(), lift(&one))
                })
                .collect();
        }
    }
}
