//! Counting traces one at a time, by group ([`Counter`]), as every learner does.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use augur_abstraction::{Abstraction, StepKind, Trace};

use super::*;
use crate::error::{LearnError, Result};
use crate::learn::{AllValid, TransitionCounts, Validity};

/// Counts the traces of `reader` by group (category key), as every learner does. `reader` is
/// an [`augur_abstraction::TraceReader`] or any other source of traces (e.g. the rows of a
/// Parquet step table).
pub(crate) fn count_groups<I: IntoIterator<Item = augur_abstraction::Result<Trace>>>(
    reader: I,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<Counted> {
    check_options(opts)?;
    let mut counter = Counter::new(spec, opts);
    for item in reader {
        counter.add(item, file)?;
    }
    counter.finish(file)
}

/// Counts traces one at a time, by group: what [`count_groups`] does for a whole file, and
/// each thread of the parallel JSON Lines reader ([`crate::jsonl`]) for its part of the
/// file, the parts' counters then [absorbed](Counter::absorb) in file order.
pub(crate) struct Counter<'s> {
    spec: Option<&'s Abstraction>,
    opts: &'s LearnOptions,
    spec_validity: Option<SpecValidity<'s>>,
    /// The groups by key, in the order met; the index of each key; the last group counted
    /// into (the next trace is most often of the same group).
    groups: Vec<(String, Group)>,
    group_index: FxHashMap<String, usize>,
    last_group: usize,
    skipped: Vec<Skipped>,
    traces_read: u64,
    /// Scratch buffers, reused from trace to trace.
    states_buf: Vec<u32>,
    tuple_buf: Vec<u32>,
    new_names: Vec<String>,
}

impl<'s> Counter<'s> {
    /// An empty counter (the options checked by [`check_options`]).
    pub(crate) fn new(spec: Option<&'s Abstraction>, opts: &'s LearnOptions) -> Self {
        Counter {
            spec,
            opts,
            spec_validity: spec.map(SpecValidity),
            groups: Vec::new(),
            group_index: FxHashMap::default(),
            last_group: 0,
            skipped: Vec::new(),
            traces_read: 0,
            states_buf: Vec::new(),
            tuple_buf: Vec::new(),
            new_names: Vec::new(),
        }
    }

    /// The index in `groups` of the group of `category` (created empty if new).
    fn group_of(&mut self, category: Option<&str>) -> usize {
        let key = if self.opts.by_category {
            category.unwrap_or("uncategorized")
        } else {
            ""
        };
        if let Some((k, _)) = self.groups.get(self.last_group) {
            if k.len() == key.len() && (key.is_empty() || k == key) {
                return self.last_group;
            }
        }
        let i = match self.group_index.get(key) {
            Some(&i) => i,
            None => {
                let spec = self.spec;
                let counts = TransitionCounts::new(if self.opts.order > 1 {
                    0
                } else {
                    spec.map_or(0, |a| a.num_states())
                });
                self.groups.push((
                    key.to_string(),
                    Group {
                        counts,
                        ..Default::default()
                    },
                ));
                self.group_index
                    .insert(key.to_string(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        self.last_group = i;
        i
    }

    /// Counts one trace (or records its error): nothing of a trace is counted unless all
    /// its steps map. An error is returned unless [`LearnOptions::skip_invalid`].
    pub(crate) fn add(&mut self, item: augur_abstraction::Result<Trace>, file: &str) -> Result<()> {
        let opts = self.opts;
        let trace = match item {
            Ok(t) => t,
            Err(e) if opts.skip_invalid => {
                let error = LearnError::from(e);
                self.skipped.push(Skipped {
                    line: error.line(),
                    error,
                });
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        self.traces_read += 1;
        let spec = self.spec;
        let gi = self.group_of(trace.category.as_deref());
        let group = &mut self.groups[gi].1;
        // Map the steps to state indices; nothing is recorded unless the whole trace maps.
        self.states_buf.clear();
        self.new_names.clear();
        let mut failure = None;
        for step in &trace.steps {
            let r = match (spec, &step.kind) {
                (Some(a), _) => a.step_state(step, file).map_err(LearnError::from),
                (None, StepKind::Named(name)) => Ok(name_index(group, &mut self.new_names, name)),
                (None, StepKind::Values(_)) => Err(LearnError::Step {
                    location: step.location(file, None),
                    message: format!(
                        "trace `{}` has a step with concrete variable values; give an \
                         abstraction spec to abstract them, or name abstract states with \
                         {{\"state\": \"NAME\"}}",
                        trace.id
                    ),
                }),
            };
            match r {
                Ok(s) => self.states_buf.push(s),
                Err(e) => {
                    failure = Some((step.line, e));
                    break;
                }
            }
        }
        if let Some((line, error)) = failure {
            if opts.skip_invalid {
                self.skipped.push(Skipped { line, error });
                return Ok(());
            }
            return Err(error);
        }
        self.record(gi)
    }

    /// Counts a trace whose steps all name their states (`{"state": NAME}`), without a spec,
    /// as [`Self::add`] counts it.
    pub(crate) fn add_named<S: AsRef<str>>(
        &mut self,
        category: Option<&str>,
        names: &[S],
    ) -> Result<()> {
        self.states_buf.clear();
        self.new_names.clear();
        let gi = self.group_of(category);
        let group = &self.groups[gi].1;
        // (A state often follows itself: its name is then not looked up again.)
        let mut prev: Option<(&str, u32)> = None;
        for name in names {
            let name = name.as_ref();
            let s = match prev {
                Some((p, s)) if p == name => s,
                _ => name_index(group, &mut self.new_names, name),
            };
            prev = Some((name, s));
            self.states_buf.push(s);
        }
        self.traces_read += 1;
        self.record(gi)
    }

    /// Counts a trace whose steps the spec maps to `states` (its state indices), as
    /// [`Self::add`] counts it.
    pub(crate) fn add_mapped(&mut self, category: Option<&str>, states: &[u32]) -> Result<()> {
        self.states_buf.clear();
        self.new_names.clear();
        self.states_buf.extend_from_slice(states);
        self.traces_read += 1;
        let gi = self.group_of(category);
        self.record(gi)
    }

    /// Records the trace mapped to `states_buf` (its new names in `new_names`) in group `gi`.
    fn record(&mut self, gi: usize) -> Result<()> {
        let opts = self.opts;
        let k = opts.order;
        let validity: &dyn Validity = match &self.spec_validity {
            Some(v) => v,
            None => &AllValid,
        };
        let group = &mut self.groups[gi].1;
        for name in self.new_names.drain(..) {
            group.index.insert(name.clone(), group.names.len() as u32);
            group.names.push(name);
        }
        let states = &self.states_buf;
        if k > 1 {
            // The states of a k-th order chain: the tuples of the last k abstract states.
            group.observe_tuples(states, k, validity, &mut self.tuple_buf)?;
            return Ok(());
        }
        if self.spec.is_none() {
            group.counts.ensure_states(group.names.len());
            if group.observe_dense(states)? {
                return Ok(());
            }
        }
        group.counts.try_observe_trace(states, validity)?;
        count_end(&mut group.ends, states);
        Ok(())
    }

    /// Adds what `later` counted, from the traces that follow this counter's in the file:
    /// its states are numbered after this counter's, in the order `later` first saw them,
    /// so that the states are numbered as one counter reading both parts in order numbers
    /// them.
    pub(crate) fn absorb(&mut self, later: Counter<'_>) -> Result<()> {
        self.traces_read += later.traces_read;
        self.skipped.extend(later.skipped);
        for (key, mut g) in later.groups {
            g.flush()?;
            let category = self.opts.by_category.then_some(key.as_str());
            // (`key` is the group key of `category`, so this finds or makes that group.)
            let gi = self.group_of(category);
            self.groups[gi]
                .1
                .absorb(g, self.spec.is_some(), self.opts.order);
        }
        Ok(())
    }

    /// Whether a line or trace was skipped ([`LearnOptions::skip_invalid`]).
    pub(crate) fn has_skipped(&self) -> bool {
        !self.skipped.is_empty()
    }

    /// The steps counted so far.
    pub(crate) fn steps(&self) -> u64 {
        self.groups
            .iter()
            .map(|(_, g)| g.counts.steps() + g.dense.steps)
            .sum()
    }

    /// The counted groups, or an error when no trace had a step.
    pub(crate) fn finish(mut self, file: &str) -> Result<Counted> {
        for (_, g) in &mut self.groups {
            g.flush()?;
        }
        if self.groups.iter().all(|(_, g)| g.counts.traces() == 0) {
            return Err(LearnError::EmptyTraceFile {
                file: file.to_string(),
                skipped: self.skipped.len(),
            });
        }
        Ok(Counted {
            groups: self.groups.into_iter().collect(),
            traces_read: self.traces_read,
            skipped: self.skipped,
        })
    }
}

/// The index in `group` of the state named `name`, numbering names not yet in the group
/// after its own in the order met (`new_names`, added to the group when the trace counts).
fn name_index(group: &Group, new_names: &mut Vec<String>, name: &str) -> u32 {
    match group.index.get(name) {
        Some(&i) => i,
        None => {
            let pos = new_names.iter().position(|n| n == name);
            let k = pos.unwrap_or_else(|| {
                new_names.push(name.to_string());
                new_names.len() - 1
            });
            (group.names.len() + k) as u32
        }
    }
}

/// What counting a trace file gives: the groups (by category key) and what was read.
pub(crate) struct Counted {
    pub(super) groups: BTreeMap<String, Group>,
    pub(super) traces_read: u64,
    pub(super) skipped: Vec<Skipped>,
}
