//! The learned models of counted groups: smoothing, labels and valuations.

use std::collections::BTreeMap;

use augur_abstraction::Abstraction;
use augur_dtmc::{Dtmc, Valuations};
use augur_expr::{Type, Value};

use super::*;
use crate::end_state::{self, EndValidity};
use crate::error::Result;
use crate::learn::{smoothed_rows, AllValid, Validity};

/// The most moves a spec's transition constraints are checked for when its rows are learned
/// (states², order 1): 2^28, a spec of 16,384 valid states (some seconds).
pub const MAX_VALIDITY_CHECKS: u64 = 1 << 28;

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
    // A spec that constrains transitions: each row's valid successors are found by checking
    // every move (order 1; over tuples, only the tuples that extend a row's are checked).
    if let Some(a) = spec.filter(|a| k == 1 && a.constrains_transitions()) {
        let n = a.num_states() as u64;
        let checks = n.saturating_mul(n);
        if checks > MAX_VALIDITY_CHECKS {
            return Err(LearnError::TooManyValidityChecks {
                states: a.num_states(),
                checks,
                limit: MAX_VALIDITY_CHECKS,
            });
        }
    }
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
        let tv = TupleValidity::new(&tuples, k, validity);
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
        let last: Vec<u32> = tuples
            .iter()
            .map(|t| t.last().copied().unwrap_or(0))
            .collect();
        if let Some(a) = spec {
            if k > 1 {
                decorate_tuples(&mut dtmc, a, &last);
            } else {
                decorate(&mut dtmc, a);
            }
        }
        // Without a spec every state is labelled by name (its last state's, for k > 1): one
        // label index per state, not a set of states per name.
        let name_labels = spec.is_none().then(|| NameLabels {
            names: base_names.clone(),
            of_state: if k > 1 {
                last
            } else {
                (0..base_names.len() as u32).collect()
            },
        });
        if let Some(name) = &opts.end_state {
            let label_names = name_labels.as_ref().map_or(&[][..], |l| &l.names[..]);
            end_state::check_unused(name, &state_names, label_names, &dtmc)?;
            end_state::decorate(&mut dtmc, name);
            state_names.push(name.clone());
        }
        models.push(LearnedModel {
            category: opts.by_category.then_some(category),
            rows,
            labels: dtmc.labels,
            name_labels,
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

/// Labels and valuations of a spec: its labels and predicates, and predicate valuations.
fn decorate(dtmc: &mut Dtmc, a: &Abstraction) {
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

/// Labels and valuations of a chain over tuples, with a spec: those of each tuple's last
/// state.
fn decorate_tuples(dtmc: &mut Dtmc, a: &Abstraction, last: &[u32]) {
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
