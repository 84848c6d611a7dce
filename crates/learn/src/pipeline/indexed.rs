//! Traces whose steps are already numbered states (a Parquet step table's), and their
//! first-order counts made while reading ([`IndexedCounts`]).

use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::error::{LearnError, Result};
use crate::learn::{AllValid, CountsJson, TransitionCounts};

/// Traces whose steps are already numbered states, e.g. a Parquet step table's: trace t's
/// states are `states[offsets[t]..offsets[t + 1]]`, indices into `names`. (The states need
/// not be numbered by first appearance: the learner numbers them so, as it does the named
/// states of a trace file.)
#[derive(Clone, Copy, Debug)]
pub struct IndexedTraces<'a> {
    /// The state names.
    pub names: &'a [String],
    /// Where each trace starts in `states`, and (last) where the last one ends.
    pub offsets: &'a [usize],
    /// Every step's state, trace after trace.
    pub states: &'a [u32],
}

/// Indexed traces of at least this many steps are counted on several threads.
pub(super) const PARALLEL_COUNT_MIN_STEPS: usize = 1 << 20;

/// What [`count_indexed`] counts of a range of traces (first-order).
struct IndexedPart {
    /// `dense[from * m + to]` (up to [`DENSE_PAIRS_MAX_STATES`] states), else `sparse`.
    dense: Vec<u64>,
    sparse: HashMap<(u32, u32), u64>,
    initial: Vec<u64>,
    ends: Vec<u64>,
    counted: u64,
    steps: u64,
}

/// Counts indexed traces without a spec (the learner's counts of the same traces read as
/// named steps: the same state numbering, the same counts).
fn count_indexed(traces: IndexedTraces<'_>, file: &str, opts: &LearnOptions) -> Result<Counted> {
    check_options(opts)?;
    let n = traces.names.len();
    let num_traces = traces.offsets.len().saturating_sub(1);
    let range = |t: usize| traces.offsets[t]..traces.offsets[t + 1];
    // Number the states by first appearance (usually they are already: one check per step).
    let mut next = 0u32;
    let mut in_order = true;
    for &s in traces.states {
        if s as usize >= n {
            return Err(LearnError::StateOutOfRange {
                index: s,
                num_states: n,
            });
        }
        if s >= next {
            if s > next {
                in_order = false;
                break;
            }
            next += 1;
        }
    }
    let renumbered: Vec<u32>;
    let mut names: Vec<String>;
    let states: &[u32] = if in_order {
        names = traces.names[..next as usize].to_vec();
        traces.states
    } else {
        let mut map = vec![u32::MAX; n];
        names = Vec::new();
        renumbered = traces
            .states
            .iter()
            .map(|&s| {
                let m = &mut map[s as usize];
                if *m == u32::MAX {
                    *m = names.len() as u32;
                    names.push(traces.names[s as usize].clone());
                }
                *m
            })
            .collect();
        &renumbered
    };
    let mut group = Group::indexing(&names);
    let m = names.len();
    if opts.order > 1 {
        group.names = std::mem::take(&mut names);
        let mut tuple_buf = Vec::new();
        for t in 0..num_traces {
            group.observe_tuples(&states[range(t)], opts.order, &AllValid, &mut tuple_buf)?;
        }
    } else {
        // Count pairs in a dense matrix (or a hash map for many states), then hand the
        // totals to the counts at once. Many traces are counted in parts on several threads
        // (the parts' counts then added).
        let is_dense = m <= DENSE_PAIRS_MAX_STATES;
        let count_part = |ts: std::ops::Range<usize>| -> IndexedPart {
            let mut p = IndexedPart {
                dense: if is_dense { vec![0; m * m] } else { Vec::new() },
                sparse: HashMap::new(),
                initial: vec![0u64; m],
                ends: vec![0u64; m],
                counted: 0,
                steps: 0,
            };
            for t in ts {
                let trace = &states[range(t)];
                let (Some(&first), Some(&last)) = (trace.first(), trace.last()) else {
                    continue;
                };
                p.counted += 1;
                p.steps += trace.len() as u64;
                p.initial[first as usize] += 1;
                p.ends[last as usize] += 1;
                if is_dense {
                    for w in trace.windows(2) {
                        p.dense[w[0] as usize * m + w[1] as usize] += 1;
                    }
                } else {
                    for w in trace.windows(2) {
                        *p.sparse.entry((w[0], w[1])).or_insert(0) += 1;
                    }
                }
            }
            p
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let IndexedPart {
            dense,
            sparse,
            initial,
            ends,
            counted,
            steps,
        } = if threads > 1 && is_dense && states.len() >= PARALLEL_COUNT_MIN_STEPS {
            // Parts of about equal steps, at trace boundaries.
            let mut cuts = vec![0usize];
            for i in 1..threads {
                let target = states.len() * i / threads;
                let t = traces
                    .offsets
                    .partition_point(|&o| o < target)
                    .min(num_traces);
                if t > *cuts.last().unwrap_or(&0) {
                    cuts.push(t);
                }
            }
            cuts.push(num_traces);
            let parts: Vec<IndexedPart> = std::thread::scope(|s| {
                let handles: Vec<_> = cuts
                    .windows(2)
                    .map(|w| {
                        let count_part = &count_part;
                        let r = w[0]..w[1];
                        s.spawn(move || count_part(r))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            let mut parts = parts.into_iter();
            let mut sum = parts.next().unwrap_or_else(|| count_part(0..0));
            for p in parts {
                for (a, b) in sum.dense.iter_mut().zip(&p.dense) {
                    *a += b;
                }
                for (a, b) in sum.initial.iter_mut().zip(&p.initial) {
                    *a += b;
                }
                for (a, b) in sum.ends.iter_mut().zip(&p.ends) {
                    *a += b;
                }
                sum.counted += p.counted;
                sum.steps += p.steps;
            }
            sum
        } else {
            count_part(0..num_traces)
        };
        let transitions = IndexedCounts::transition_list(is_dense.then_some(&dense[..]), m, sparse);
        let counts = IndexedCounts {
            names,
            transitions,
            initial,
            ends,
            traces: counted,
            steps,
        };
        return counted_first_order(counts, num_traces as u64, file, opts);
    }
    one_group(group, num_traces as u64, file, opts)
}

/// The counts of a numbered trace file: its one group (`uncategorized` under `--by-category`,
/// as such files carry no category); no trace of a step is an error.
fn one_group(group: Group, traces_read: u64, file: &str, opts: &LearnOptions) -> Result<Counted> {
    if group.counts.traces() == 0 {
        return Err(LearnError::EmptyTraceFile {
            file: file.to_string(),
            skipped: 0,
        });
    }
    let key = if opts.by_category {
        "uncategorized".to_string()
    } else {
        String::new()
    };
    Ok(Counted {
        groups: BTreeMap::from([(key, group)]),
        traces_read,
        skipped: Vec::new(),
    })
}

/// The first-order counts of traces whose states are numbered, counted already (e.g. by a
/// Parquet reader while it reads, without an array of steps): what [`count_from_indexed`]
/// counts of the same traces. States are numbered by first appearance along the traces
/// (trace after trace, each in step order), as the learner numbers the states of a trace
/// file; that numbering is the learned model's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexedCounts {
    /// The state names, by first appearance.
    pub names: Vec<String>,
    /// `(from, to, n)`: transitions observed, indices into `names`, each pair at most once.
    pub transitions: Vec<(u32, u32, u64)>,
    /// Traces starting in each state (`names.len()` entries).
    pub initial: Vec<u64>,
    /// Traces ending in each state (`names.len()` entries).
    pub ends: Vec<u64>,
    /// Traces counted (each of at least one step).
    pub traces: u64,
    /// Steps counted.
    pub steps: u64,
}

impl IndexedCounts {
    /// [`IndexedCounts::transitions`] from a counting table: the dense `m × m` table
    /// (`dense[from * m + to]`) when there is one, else the sparse map; sorted, zero counts left out.
    pub fn transition_list(
        dense: Option<&[u64]>,
        m: usize,
        sparse: impl IntoIterator<Item = ((u32, u32), u64)>,
    ) -> Vec<(u32, u32, u64)> {
        let mut transitions: Vec<(u32, u32, u64)> = match dense {
            Some(dense) => dense
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(i, &c)| ((i / m) as u32, (i % m) as u32, c))
                .collect(),
            None => sparse.into_iter().map(|((f, t), c)| (f, t, c)).collect(),
        };
        transitions.sort_unstable();
        transitions
    }
}

/// The one group of first-order counts (`traces_read`: traces read, empty ones included).
fn counted_first_order(
    counts: IndexedCounts,
    traces_read: u64,
    file: &str,
    opts: &LearnOptions,
) -> Result<Counted> {
    let IndexedCounts {
        names,
        transitions,
        initial,
        ends,
        traces,
        steps,
    } = counts;
    let m = names.len();
    if initial.len() != m || ends.len() != m {
        return Err(LearnError::BadCounts(format!(
            "{m} states but {} initial and {} end counts",
            initial.len(),
            ends.len()
        )));
    }
    let pairs = |v: Vec<u64>| -> Vec<(u32, u64)> {
        v.into_iter()
            .enumerate()
            .filter(|&(_, c)| c > 0)
            .map(|(s, c)| (s as u32, c))
            .collect()
    };
    let mut group = Group::indexing(&names);
    group.ends = pairs(ends).into_iter().collect();
    group.counts = TransitionCounts::from_json(&CountsJson {
        num_states: m,
        traces,
        steps,
        initial: pairs(initial),
        transitions,
        invalid: Vec::new(),
        determined: Vec::new(),
    })?;
    group.names = names;
    one_group(group, traces_read, file, opts)
}

/// Checks first-order counts for [`learn_from_indexed_counts`]: the options, and order 1.
fn counted_from_indexed_counts(
    counts: IndexedCounts,
    file: &str,
    opts: &LearnOptions,
) -> Result<Counted> {
    check_options(opts)?;
    if opts.order != 1 {
        return Err(LearnError::BadCounts(format!(
            "{file}: first-order counts cannot give a chain of order {}",
            opts.order
        )));
    }
    let traces = counts.traces;
    counted_first_order(counts, traces, file, opts)
}

/// [`learn_from_indexed`] for traces counted already ([`IndexedCounts`], first order only):
/// the same model as from the traces.
///
/// ```
/// use augur_learn::pipeline::{learn_from_indexed_counts, IndexedCounts, LearnOptions};
/// // Two traces: a b, a a.
/// let counts = IndexedCounts {
///     names: vec!["a".into(), "b".into()],
///     transitions: vec![(0, 0, 1), (0, 1, 1)],
///     initial: vec![2, 0],
///     ends: vec![1, 1],
///     traces: 2,
///     steps: 4,
/// };
/// let outcome = learn_from_indexed_counts(counts, "t.parquet", &LearnOptions::default()).unwrap();
/// assert_eq!(outcome.models[0].counts.count(0, 1), 1);
/// ```
pub fn learn_from_indexed_counts(
    counts: IndexedCounts,
    file: &str,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    learn_counted(counted_from_indexed_counts(counts, file, opts)?, None, opts)
}

/// [`count_from_indexed`] for traces counted already ([`IndexedCounts`], first order only).
pub fn count_from_indexed_counts(
    counts: IndexedCounts,
    file: &str,
    opts: &LearnOptions,
) -> Result<CountsOutcome> {
    let counted = counted_from_indexed_counts(counts, file, opts)?;
    Ok(keyed_outcome(counted, None, opts))
}

/// [`learn_from_traces`] for traces whose states are already numbered (and need no spec):
/// the same model as from the same traces read as named steps, counted without a string per
/// step.
///
/// ```
/// use augur_learn::pipeline::{learn_from_indexed, IndexedTraces, LearnOptions};
/// let names = ["b".to_string(), "a".to_string()];
/// // Two traces: a b, a a.
/// let traces = IndexedTraces { names: &names, offsets: &[0, 2, 4], states: &[1, 0, 1, 1] };
/// let outcome = learn_from_indexed(traces, "t.parquet", &LearnOptions::default()).unwrap();
/// assert_eq!(outcome.models[0].state_names, ["a", "b"]);
/// assert_eq!(outcome.models[0].counts.count(0, 1), 1);
/// ```
pub fn learn_from_indexed(
    traces: IndexedTraces<'_>,
    file: &str,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    learn_counted(count_indexed(traces, file, opts)?, None, opts)
}

/// [`count_from_traces`] for traces whose states are already numbered (and need no spec).
pub fn count_from_indexed(
    traces: IndexedTraces<'_>,
    file: &str,
    opts: &LearnOptions,
) -> Result<CountsOutcome> {
    let counted = count_indexed(traces, file, opts)?;
    Ok(keyed_outcome(counted, None, opts))
}
