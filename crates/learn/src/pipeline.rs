//! From a trace file to learned models: read traces (with or without an abstraction spec),
//! map their steps to abstract states, count transitions (by category if asked), learn one
//! DTMC per group, and write each as Augur JSON with its transition counts (which `pac` reads).
//!
//! ```
//! use augur_abstraction::{TraceFormat, TraceReader};
//! use augur_learn::pipeline::{learn_from_traces, LearnOptions};
//! let traces = "{\"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}]}\n\
//!               {\"steps\": [{\"state\": \"a\"}, {\"state\": \"a\"}]}\n";
//! let reader = TraceReader::new(traces.as_bytes(), TraceFormat::JsonLines, "t.jsonl");
//! let outcome = learn_from_traces(reader, "t.jsonl", None, &LearnOptions::default()).unwrap();
//! let model = &outcome.models[0];
//! assert_eq!(model.state_names, ["a", "b"]);
//! let dtmc = model.to_dtmc(augur_learn::learn::MAX_LEARNED_TRANSITIONS).unwrap();
//! assert_eq!(dtmc.matrix.get(0, 1).copied(), Some(0.5));
//! ```
//!
//! With [`LearnOptions::order`] `k > 1` the learned chain is of order k, built as a first-order
//! chain over k-tuples of states (SafetyDrift's product embedding): the state after step i is
//! the tuple of the last `min(k, i+1)` abstract states, named `(a,b)`; a tuple moves only to the
//! tuples that extend it by one state (and, with a spec, only by a valid transition of its last
//! state); a tuple has the labels and valuation of its last state, so properties written for
//! the first-order chain apply unchanged.

use std::collections::{BTreeMap, HashMap};

use augur_abstraction::{Abstraction, Trace};
use augur_dtmc::{Dtmc, StateSet, Valuations};
use augur_formats::smoothing::SmoothedRows;

use crate::counts::KeyedCounts;
use crate::end_state;
use crate::error::{LearnError, Result};
use crate::intervals::LearnedIntervals;
pub use crate::jsonl::ReadProgress;
use crate::learn::{LearnReport, TransitionCounts, Unobserved};

mod build;
mod counter;
mod group;
mod indexed;
mod output;

use build::build_models;
pub use build::MAX_VALIDITY_CHECKS;
pub(crate) use counter::{count_groups, Counted, Counter};
use group::{count_end, Group, SpecValidity, TupleValidity, DENSE_PAIRS_MAX_STATES};
pub use indexed::{
    count_from_indexed, count_from_indexed_counts, learn_from_indexed, learn_from_indexed_counts,
    IndexedCounts, IndexedTraces,
};
pub use output::{
    category_path, learned_document, learned_document_with, output_paths, write_learned,
};

/// How to learn from a trace file.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnOptions {
    /// Laplace smoothing parameter α ≥ 0, added to every valid transition of every row.
    pub alpha: f64,
    /// One model per trace category (traces without one are `uncategorized`).
    pub by_category: bool,
    /// Skip bad trace lines (and traces with bad steps), listing them, instead of failing.
    pub skip_invalid: bool,
    /// What a state that is never left (seen only where traces end) becomes with α = 0.
    pub unobserved: Unobserved,
    /// The chain's order k (1: an ordinary chain; k > 1: a chain over k-tuples of states).
    pub order: usize,
    /// Model trace ends: every trace's last state moves to an extra absorbing state of this
    /// name (labelled with it; see [`crate::end_state`]).
    pub end_state: Option<String>,
}

impl Default for LearnOptions {
    fn default() -> Self {
        LearnOptions {
            alpha: 0.0,
            by_category: false,
            skip_invalid: false,
            unobserved: Unobserved::Uniform,
            order: 1,
            end_state: None,
        }
    }
}

/// A skipped trace or line (with [`LearnOptions::skip_invalid`]).
#[derive(Debug)]
pub struct Skipped {
    /// Its line (0 when unknown).
    pub line: usize,
    /// Why it was skipped (located).
    pub error: LearnError,
}

/// One learned model, its rows kept implicitly (the counts and the smoothing rule; see
/// [`LearnedModel::to_dtmc`] for the chain itself).
#[derive(Debug)]
pub struct LearnedModel {
    /// Its category (with [`LearnOptions::by_category`]).
    pub category: Option<String>,
    /// The rows: the observed counts and the smoothing rule.
    pub rows: SmoothedRows,
    /// The labels kept as sets of states: with a spec, its labels and predicates; with an
    /// end state, its label (last). Without a spec the states are also labelled by name
    /// ([`LearnedModel::name_labels`], before these).
    pub labels: Vec<(String, StateSet)>,
    /// Without a spec, every state is labelled with its name (order k > 1: with the name of
    /// its last state): kept as one label index per state, not as a set of states per name
    /// (n names × n states), and made into sets only when the chain is made
    /// ([`LearnedModel::to_dtmc`]); the written file lists each label's states.
    pub name_labels: Option<NameLabels>,
    /// The valuations (the predicates' values), when learned with a spec.
    pub valuations: Option<Valuations>,
    /// The initial states: those traces started in.
    pub initial: Vec<u32>,
    /// The transition counts it was learned from.
    pub counts: TransitionCounts,
    /// What the learner did to unobserved and dead-end states.
    pub report: LearnReport,
    /// The name of each state: `{a,b}` (the true predicates) with a spec, the trace's name
    /// without.
    pub state_names: Vec<String>,
    /// With [`LearnedModel::learn_intervals`]: the model is the interval DTMC of these rows
    /// (see [`crate::intervals`]) instead of the smoothed chain.
    pub intervals: Option<LearnedIntervals>,
}

/// The most transitions a learned model's file lists explicitly (`transitions`); a model
/// with more is written with its rows implicit (`smoothing` over the `counts`).
pub const MAX_EXPLICIT_TRANSITIONS: u64 = 1 << 16;

/// The most bytes [`LearnedModel::to_dtmc`] spends on the sets of states of the name labels
/// (`names × states / 8`): 256 MiB, e.g. 46,000 states each with its own name.
pub const MAX_NAME_LABEL_BYTES: u64 = 1 << 28;

/// The labels of states learned without a spec: label `names[of_state[s]]` holds in state `s`
/// (states past the end of `of_state`, such as an end state, have none).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NameLabels {
    /// The label names (the states' names; order k > 1: the names of the base states).
    pub names: Vec<String>,
    /// Each state's label, an index into `names`.
    pub of_state: Vec<u32>,
}

impl NameLabels {
    /// The states of each label, in the order of `names`.
    pub fn states(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.names.len()];
        for (s, &l) in self.of_state.iter().enumerate() {
            if let Some(v) = out.get_mut(l as usize) {
                v.push(s as u32);
            }
        }
        out
    }

    /// The labels as sets of `n` states (`n × names / 8` bytes; see [`MAX_NAME_LABEL_BYTES`]).
    fn sets(&self, n: usize) -> Result<Vec<(String, StateSet)>> {
        let bytes = (n as u64)
            .div_ceil(8)
            .saturating_mul(self.names.len() as u64);
        if bytes > MAX_NAME_LABEL_BYTES {
            return Err(LearnError::TooManyNamedStates {
                states: n,
                labels: self.names.len(),
                bytes,
                limit: MAX_NAME_LABEL_BYTES,
            });
        }
        let mut sets: Vec<(String, StateSet)> = self
            .names
            .iter()
            .map(|name| (name.clone(), StateSet::with_capacity(n)))
            .collect();
        for (s, &l) in self.of_state.iter().enumerate() {
            if let Some((_, set)) = sets.get_mut(l as usize) {
                set.insert(s);
            }
        }
        Ok(sets)
    }
}

impl LearnedModel {
    /// The number of states.
    pub fn num_states(&self) -> usize {
        self.rows.num_states()
    }

    /// The number of transitions of the smoothed chain (counted, not made).
    pub fn num_transitions(&self) -> u64 {
        self.rows.num_transitions()
    }

    /// The chain (the interval DTMC with [`Self::learn_intervals`]), with its labels and
    /// valuations; refused with [`LearnError::TooManyTransitions`] when it has more than
    /// `limit` transitions.
    pub fn to_dtmc(&self, limit: usize) -> Result<Dtmc> {
        self.chain(limit, self.shell()?)
    }

    /// [`Self::to_dtmc`] on `shell` (the labels and valuations to give it).
    fn chain(&self, limit: usize, shell: Dtmc) -> Result<Dtmc> {
        if let Some(iv) = &self.intervals {
            if iv.num_transitions() > limit {
                return Err(LearnError::TooManyTransitions {
                    transitions: iv.num_transitions() as u64,
                    states: self.num_states(),
                    limit,
                });
            }
            return iv.to_dtmc(shell);
        }
        let mut d = shell;
        d.matrix = crate::learn::materialise(&self.rows, limit)?;
        Ok(d)
    }

    /// Makes this model the interval DTMC whose intervals hold simultaneously with
    /// `confidence` (see [`crate::intervals`]), from its counts and valid successors (α and
    /// the rule for unobserved rows play no part). Refused when it would have more than
    /// [`crate::learn::MAX_LEARNED_TRANSITIONS`] transitions.
    pub fn learn_intervals(&mut self, confidence: f64) -> Result<()> {
        let iv = crate::intervals::learn_intervals(
            &self.rows,
            confidence,
            crate::learn::MAX_LEARNED_TRANSITIONS,
        )?;
        // Checked here, so that writing the model cannot fail (and fall back to the point
        // model) later.
        iv.to_dtmc(self.bare_shell())?;
        self.intervals = Some(iv);
        Ok(())
    }

    /// The model without its transitions (every row empty): labels (the name labels made
    /// into sets), valuations, initial states.
    fn shell(&self) -> Result<Dtmc> {
        let mut d = self.bare_shell();
        if let Some(names) = &self.name_labels {
            let mut labels = names.sets(self.num_states())?;
            labels.append(&mut d.labels);
            d.labels = labels;
        }
        Ok(d)
    }

    /// [`Self::shell`] without the name labels.
    fn bare_shell(&self) -> Dtmc {
        shell(
            self.num_states(),
            self.initial.clone(),
            self.labels.clone(),
            self.valuations.clone(),
        )
    }
}

/// A chain of `n` states without transitions, to carry labels and valuations.
fn shell(
    n: usize,
    initial: Vec<u32>,
    labels: Vec<(String, StateSet)>,
    valuations: Option<Valuations>,
) -> Dtmc {
    Dtmc {
        matrix: augur_dtmc::Matrix::new((n, n), vec![0; n + 1], Vec::new(), Vec::new()),
        initial,
        labels,
        rewards: Vec::new(),
        valuations,
        exact: None,
        intervals: None,
    }
}

/// What [`learn_from_traces`] read and learned.
#[derive(Debug)]
pub struct LearnOutcome {
    /// Traces read (including those of categories that were then empty).
    pub traces_read: u64,
    /// Skipped lines and traces.
    pub skipped: Vec<Skipped>,
    /// The learned models, in category order (one without `by_category`).
    pub models: Vec<LearnedModel>,
}

/// Checks the options that do not depend on the traces, before reading any.
pub(crate) fn check_options(opts: &LearnOptions) -> Result<()> {
    if !(opts.alpha.is_finite() && opts.alpha >= 0.0) {
        return Err(LearnError::BadAlpha(opts.alpha));
    }
    if !(1..=8).contains(&opts.order) {
        return Err(LearnError::BadOrder(opts.order));
    }
    if let Some(name) = &opts.end_state {
        end_state::check_name(name)?;
    }
    Ok(())
}

/// Learns from the traces of `reader` (named `file` in messages). With a `spec`, steps are
/// concrete values or `{a,b}` names abstracted by it, and only its valid transitions are
/// learned (invalid ones are counted apart); without one, steps must name their states.
/// Nothing of a trace is counted unless all its steps map.
pub fn learn_from_traces<I: IntoIterator<Item = augur_abstraction::Result<Trace>>>(
    reader: I,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    learn_counted(count_groups(reader, file, spec, opts)?, spec, opts)
}

/// A JSON Lines trace file read in parallel on `threads` threads (see [`crate::jsonl`]), to
/// be learned ([`ParallelJsonl::learn`]) or counted ([`ParallelJsonl::count`]): the same
/// model or counts, bit for bit, and the same errors as [`learn_from_traces`] and
/// [`count_from_traces`] reading it in order. `progress` is called after each block read
/// (some megabytes).
pub struct ParallelJsonl<'a, R> {
    /// The file's bytes.
    pub input: R,
    /// The file's name, for messages.
    pub file: &'a str,
    /// The abstraction, if any (as for [`learn_from_traces`]).
    pub spec: Option<&'a Abstraction>,
    /// The learning options.
    pub opts: &'a LearnOptions,
    /// Threads to read on.
    pub threads: usize,
    /// Called after each block read.
    pub progress: &'a mut dyn FnMut(ReadProgress),
}

impl<R: std::io::Read> ParallelJsonl<'_, R> {
    /// [`learn_from_traces`] on the file.
    pub fn learn(self) -> Result<LearnOutcome> {
        let (spec, opts) = (self.spec, self.opts);
        learn_counted(self.counted()?, spec, opts)
    }

    /// [`count_from_traces`] on the file.
    pub fn count(self) -> Result<CountsOutcome> {
        let (spec, opts) = (self.spec, self.opts);
        Ok(keyed_outcome(self.counted()?, spec, opts))
    }

    fn counted(self) -> Result<Counted> {
        let ParallelJsonl {
            input,
            file,
            spec,
            opts,
            threads,
            progress,
        } = self;
        crate::jsonl::count_jsonl(input, file, spec, opts, threads, progress)
    }
}

pub(crate) fn learn_counted(
    counted: Counted,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    let models = build_models(counted.groups, spec, opts)?;
    Ok(LearnOutcome {
        traces_read: counted.traces_read,
        skipped: counted.skipped,
        models,
    })
}

/// What [`count_from_traces`] gives: the keyed counts of a trace file and what was read.
#[derive(Debug)]
pub struct CountsOutcome {
    /// Traces read (those that parsed; skipped lines are in `skipped`).
    pub traces_read: u64,
    /// Skipped lines/traces (with [`LearnOptions::skip_invalid`]).
    pub skipped: Vec<Skipped>,
    /// The counts, keyed by state name (see [`crate::counts`]).
    pub counts: KeyedCounts,
}

/// Counts the traces of `reader` as [`learn_from_traces`] does, without learning: the counts
/// keyed by state name, to be summed with other shards' and learned by [`learn_from_counts`].
/// `opts.alpha` and `opts.unobserved` play no part; `opts.end_state` is recorded (trace ends
/// are always counted, so a model with or without an end state can be learned from them).
pub fn count_from_traces<I: IntoIterator<Item = augur_abstraction::Result<Trace>>>(
    reader: I,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<CountsOutcome> {
    Ok(keyed_outcome(
        count_groups(reader, file, spec, opts)?,
        spec,
        opts,
    ))
}

/// The keyed counts of counted groups.
pub(crate) fn keyed_outcome(
    counted: Counted,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> CountsOutcome {
    let groups = counted
        .groups
        .iter()
        .filter(|(_, g)| g.counts.traces() > 0)
        .map(|(category, g)| {
            g.to_keyed(opts.by_category.then(|| category.clone()), spec, opts.order)
        })
        .collect();
    CountsOutcome {
        traces_read: counted.traces_read,
        skipped: counted.skipped,
        counts: KeyedCounts::new(opts.order, opts.end_state.clone(), groups),
    }
}

/// Learns from keyed counts (any number of shards, summed), exactly as from the traces they
/// were counted from: a single shard gives the very model `learn_from_traces` gives (the same
/// state numbering); summed shards number states in the order they first appear in the
/// shards as given. `opts.order` must be the shards' order; `opts.by_category` learns one
/// model per category (otherwise all categories are summed into one); the spec, if the counts
/// were made with one, must be given again (states are matched to it by name).
pub fn learn_from_counts(
    shards: &[KeyedCounts],
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<Vec<LearnedModel>> {
    if !(opts.alpha.is_finite() && opts.alpha >= 0.0) {
        return Err(LearnError::BadAlpha(opts.alpha));
    }
    if let Some(name) = &opts.end_state {
        end_state::check_name(name)?;
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let spec_index: HashMap<String, u32> = spec
        .map(|a| {
            a.valid_states()
                .iter()
                .enumerate()
                .map(|(i, &c)| (a.state_name(c), i as u32))
                .collect()
        })
        .unwrap_or_default();
    for shard in shards {
        shard.check()?;
        if shard.order != opts.order {
            return Err(LearnError::BadCounts(format!(
                "the counts are of order {}, but order {} was asked for",
                shard.order, opts.order
            )));
        }
        for g in &shard.groups {
            let key = if opts.by_category {
                g.category.clone().unwrap_or_else(|| "uncategorized".into())
            } else {
                String::new()
            };
            let group = groups.entry(key).or_insert_with(|| Group {
                counts: TransitionCounts::new(if opts.order > 1 {
                    0
                } else {
                    spec.map_or(0, |a| a.num_states())
                }),
                ..Default::default()
            });
            group.add_keyed(g, spec.map(|_| &spec_index), opts.order)?;
        }
    }
    if groups.values().all(|g| g.counts.traces() == 0) {
        return Err(LearnError::NoTraces);
    }
    build_models(groups, spec, opts)
}

#[cfg(test)]
mod tests {
    use super::indexed::PARALLEL_COUNT_MIN_STEPS;
    use super::*;
    use crate::learn::MAX_LEARNED_TRANSITIONS as MAX;
    use augur_abstraction::StepKind;
    use augur_abstraction::{TraceFormat, TraceReader};
    use augur_formats::json::DtmcJson;
    use std::path::Path;

    fn run(traces: &str, spec: Option<&Abstraction>, opts: &LearnOptions) -> Result<LearnOutcome> {
        let reader = TraceReader::new(traces.as_bytes(), TraceFormat::JsonLines, "t.jsonl");
        learn_from_traces(reader, "t.jsonl", spec, opts)
    }

    #[test]
    fn categories_learn_apart_and_clash_on_file_names() {
        let traces = "{\"category\": \"a/b\", \"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n\
                      {\"category\": \"a_b\", \"steps\": [{\"state\": \"x\"}, {\"state\": \"x\"}]}\n";
        let opts = LearnOptions {
            by_category: true,
            ..LearnOptions::default()
        };
        let out = run(traces, None, &opts).unwrap();
        assert_eq!(out.models.len(), 2);
        assert_eq!(out.models[0].category.as_deref(), Some("a/b"));
        assert_eq!(
            out.models[0]
                .to_dtmc(MAX)
                .unwrap()
                .matrix
                .get(0, 1)
                .copied(),
            Some(1.0)
        );
        assert_eq!(
            out.models[1]
                .to_dtmc(MAX)
                .unwrap()
                .matrix
                .get(0, 0)
                .copied(),
            Some(1.0)
        );
        let e = output_paths(&out.models, Path::new("dir/m.json")).unwrap_err();
        assert!(matches!(e, LearnError::CategoryClash { .. }), "{e}");
        assert!(e.to_string().contains("dir/m.a_b.json"), "{e}");
    }

    #[test]
    fn bad_steps_are_located_or_skipped() {
        let traces =
            "{\"steps\": [{\"state\": \"x\"}, {\"v\": 1}]}\n{\"steps\": [{\"state\": \"x\"}]}\n";
        let e = run(traces, None, &LearnOptions::default()).unwrap_err();
        let d = e.diagnostic().to_string();
        assert!(d.contains(" --> t.jsonl:1:28\n"), "{d}");
        let opts = LearnOptions {
            skip_invalid: true,
            ..LearnOptions::default()
        };
        let out = run(traces, None, &opts).unwrap();
        assert_eq!((out.traces_read, out.skipped.len()), (2, 1));
        assert_eq!(out.skipped[0].line, 1);
        // Nothing left to learn from.
        let e = run("{\"steps\": [{\"v\": 1}]}\n", None, &opts).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.jsonl: no trace with at least one step (1 skipped)"
        );
    }

    #[test]
    fn learned_models_are_written_with_their_counts() {
        let out = run(
            "{\"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n",
            None,
            &LearnOptions::default(),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        write_learned(
            &out.models[0],
            &path,
            serde_json::json!({"learned": {"alpha": 0.0}}),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: DtmcJson = augur_formats::json::parse_json(&text, &path).unwrap();
        assert!(doc.counts.is_some());
        let meta = doc.metadata.unwrap();
        assert_eq!(meta["state_names"], serde_json::json!(["x", "y"]));
        assert_eq!(meta["learned"]["alpha"], 0.0);
    }

    /// Many indexed traces (counted in parts on several threads): the counts of the same
    /// traces read as named steps, by the sequential counter.
    #[test]
    fn many_indexed_traces_count_as_the_traces_do() {
        let names: Vec<String> = (0..7).map(|i| format!("s{i}")).collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let (mut offsets, mut states) = (vec![0usize], Vec::new());
        while states.len() < PARALLEL_COUNT_MIN_STEPS + 1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 13) as usize;
            for k in 0..len {
                states.push(((x >> (3 * k + 5)) % 7) as u32);
            }
            offsets.push(states.len());
        }
        let indexed = IndexedTraces {
            names: &names,
            offsets: &offsets,
            states: &states,
        };
        let traces: Vec<augur_abstraction::Result<Trace>> = offsets
            .windows(2)
            .map(|w| {
                Ok(Trace {
                    id: String::new(),
                    category: None,
                    line: 0,
                    steps: states[w[0]..w[1]]
                        .iter()
                        .map(|&s| augur_abstraction::Step {
                            line: 0,
                            kind: StepKind::Named(names[s as usize].clone()),
                            source: None,
                        })
                        .collect(),
                })
            })
            .collect();
        for opts in [
            LearnOptions::default(),
            LearnOptions {
                end_state: Some("end".into()),
                ..LearnOptions::default()
            },
        ] {
            let a = count_from_indexed(indexed, "t", &opts).unwrap();
            let b = count_from_traces(
                traces.iter().map(|t| match t {
                    Ok(t) => Ok(t.clone()),
                    Err(_) => unreachable!(),
                }),
                "t",
                None,
                &opts,
            )
            .unwrap();
            assert_eq!(a.counts, b.counts);
            assert_eq!(a.counts.groups[0].steps, states.len() as u64);
        }
    }

    /// Counts made elsewhere (a Parquet reader counting while it reads) give the counts and
    /// the model of their traces; counts that do not fit together, or a chain of order 2 from
    /// first-order counts, are errors.
    #[test]
    fn indexed_counts_give_the_counts_and_model_of_their_traces() {
        let names: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
        // Traces: a b b c, b, a c a.
        let (offsets, states) = (vec![0, 4, 5, 8], vec![0, 1, 1, 2, 1, 0, 2, 0]);
        let indexed = IndexedTraces {
            names: &names,
            offsets: &offsets,
            states: &states,
        };
        let counts = IndexedCounts {
            names: names.clone(),
            transitions: vec![(0, 1, 1), (0, 2, 1), (1, 1, 1), (1, 2, 1), (2, 0, 1)],
            initial: vec![2, 1, 0],
            ends: vec![1, 1, 1],
            traces: 3,
            steps: 8,
        };
        for opts in [
            LearnOptions::default(),
            LearnOptions {
                end_state: Some("end".into()),
                alpha: 0.5,
                ..LearnOptions::default()
            },
        ] {
            let a = count_from_indexed_counts(counts.clone(), "t", &opts).unwrap();
            let b = count_from_indexed(indexed, "t", &opts).unwrap();
            assert_eq!(a.counts, b.counts);
            let a = learn_from_indexed_counts(counts.clone(), "t", &opts).unwrap();
            let b = learn_from_indexed(indexed, "t", &opts).unwrap();
            let (a, b) = (&a.models[0], &b.models[0]);
            assert_eq!(a.state_names, b.state_names);
            assert_eq!(a.initial, b.initial);
            // (Debug: the rows, counts and report, not the label sets' addresses.)
            assert_eq!(format!("{:?}", a.rows), format!("{:?}", b.rows));
            assert_eq!(format!("{:?}", a.counts), format!("{:?}", b.counts));
            assert_eq!(format!("{:?}", a.report), format!("{:?}", b.report));
            let labels = |m: &LearnedModel| -> Vec<(String, Vec<usize>)> {
                m.labels
                    .iter()
                    .map(|(n, s)| (n.clone(), s.ones().collect()))
                    .collect()
            };
            assert_eq!(labels(a), labels(b));
        }
        let order2 = LearnOptions {
            order: 2,
            ..LearnOptions::default()
        };
        assert!(matches!(
            learn_from_indexed_counts(counts.clone(), "t", &order2),
            Err(LearnError::BadCounts(_))
        ));
        let short = IndexedCounts {
            ends: vec![1, 1],
            ..counts.clone()
        };
        assert!(matches!(
            learn_from_indexed_counts(short, "t", &LearnOptions::default()),
            Err(LearnError::BadCounts(_))
        ));
        let out_of_range = IndexedCounts {
            transitions: vec![(0, 3, 1)],
            ..counts
        };
        assert!(learn_from_indexed_counts(out_of_range, "t", &LearnOptions::default()).is_err());
    }

    /// A second-order chain is a first-order chain over pairs: after `x a` comes `y`, after
    /// `z a` comes `w` (a first-order chain can only say 1/2 each from `a`).
    #[test]
    fn second_order_chain_over_pairs() {
        let traces = "{\"steps\": [{\"state\": \"x\"}, {\"state\": \"a\"}, {\"state\": \"y\"}]}\n\
                      {\"steps\": [{\"state\": \"z\"}, {\"state\": \"a\"}, {\"state\": \"w\"}]}\n";
        let first = run(traces, None, &LearnOptions::default()).unwrap();
        let m1 = &first.models[0];
        let a = m1.state_names.iter().position(|n| n == "a").unwrap();
        let y = m1.state_names.iter().position(|n| n == "y").unwrap();
        assert_eq!(
            m1.to_dtmc(MAX).unwrap().matrix.get(a, y).copied(),
            Some(0.5)
        );
        let opts = LearnOptions {
            order: 2,
            ..LearnOptions::default()
        };
        let second = run(traces, None, &opts).unwrap();
        let m = &second.models[0];
        assert_eq!(
            m.state_names,
            ["(x)", "(x,a)", "(a,y)", "(z)", "(z,a)", "(a,w)"]
        );
        let md = m.to_dtmc(MAX).unwrap();
        let at = |i: usize, j: usize| md.matrix.get(i, j).copied();
        assert_eq!(at(0, 1), Some(1.0));
        assert_eq!(at(1, 2), Some(1.0));
        assert_eq!(at(4, 5), Some(1.0));
        assert_eq!(at(1, 5), None);
        // A tuple carries the label of its last state.
        let label_a = md.label("a").unwrap();
        assert_eq!(label_a.ones().collect::<Vec<_>>(), [1, 4]);
        // With smoothing, a tuple's valid successors are the tuples that extend it.
        let smoothed = run(
            traces,
            None,
            &LearnOptions {
                order: 2,
                alpha: 1.0,
                ..LearnOptions::default()
            },
        )
        .unwrap();
        let s = &smoothed.models[0].to_dtmc(MAX).unwrap();
        // (x,a) can go to (a,y) and (a,w): (1 + 1) / 3 and 1 / 3.
        assert!((s.matrix.get(1, 2).copied().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.matrix.get(1, 5).copied().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!(run(
            traces,
            None,
            &LearnOptions {
                order: 0,
                ..LearnOptions::default()
            }
        )
        .is_err());
    }

    /// Issue 43: without a spec each state is labelled by its name, kept as one label index per
    /// state: the chain gets a set per name (the last base state's name over tuples), the file
    /// lists them, and a chain whose name labels would take more than
    /// MAX_NAME_LABEL_BYTES is refused rather than made.
    #[test]
    fn name_labels_are_made_only_with_the_chain() {
        let out = run(
            "{\"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}, {\"state\": \"a\"}]}\n",
            None,
            &LearnOptions {
                order: 2,
                ..LearnOptions::default()
            },
        )
        .unwrap();
        let m = &out.models[0];
        assert_eq!(m.state_names, ["(a)", "(a,b)", "(b,a)"]);
        let d = m.to_dtmc(MAX).unwrap();
        let labels: Vec<(String, Vec<usize>)> = d
            .labels
            .iter()
            .map(|(n, s)| (n.clone(), s.ones().collect()))
            .collect();
        assert_eq!(
            labels,
            [("a".to_string(), vec![0, 2]), ("b".to_string(), vec![1])]
        );
        let doc = learned_document(m, serde_json::Value::Null);
        let text = serde_json::to_string(&doc.labels).unwrap();
        assert_eq!(
            text,
            r#"[{"name":"a","states":[0,2]},{"name":"b","states":[1]}]"#
        );
        // 50,000 states, each its own name: 50,000 sets of 50,000 states (312 MB) are not made.
        let n = 50_000u32;
        let counts = IndexedCounts {
            names: (0..n).map(|i| format!("s{i}")).collect(),
            transitions: (0..n - 1).map(|i| (i, i + 1, 1)).collect(),
            initial: std::iter::once(1)
                .chain(std::iter::repeat_n(0, n as usize - 1))
                .collect(),
            ends: std::iter::repeat_n(0, n as usize - 1).chain([1]).collect(),
            traces: 1,
            steps: u64::from(n),
        };
        let opts = LearnOptions {
            unobserved: Unobserved::Absorbing,
            ..LearnOptions::default()
        };
        let out = learn_from_indexed_counts(counts, "t.parquet", &opts).unwrap();
        let e = out.models[0].to_dtmc(MAX).unwrap_err();
        assert!(
            matches!(e, LearnError::TooManyNamedStates { states: 50_000, .. }),
            "{e}"
        );
        let doc = learned_document(&out.models[0], serde_json::Value::Null);
        assert!(
            matches!(&doc.labels, augur_formats::json::LabelsJson::List(l) if l.len() == 50_000)
        );
    }
}
