//! Counting a Parquet step table's first-order transitions while its row groups are read:
//! no array of steps at all. Each thread reads a contiguous run of row groups and counts the
//! transitions, initial states and trace ends of its rows in a matrix keyed by its own state
//! numbers (by first appearance in its rows); the parts are then added in file order, a
//! later part's new states numbered after the earlier parts' (the numbering the learner
//! gives the same traces), and a trace that crosses from one part into the next joined.
//!
//! This applies to the common table: grouped by trace with each trace's order values
//! increasing, trace ids increasing ([`id_less`]: no id can come back, checked without
//! storing or hashing ids), string trace ids (dictionary-encoded, as Parquet stores them and
//! as they are read) and one state column. Anything else (or an error) gives up, and the
//! table is read whole by [`read_steps`] instead, which sorts it or reports the error.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, GenericStringArray, OffsetSizeTrait, RecordBatch};
use augur_learn::pipeline::IndexedCounts;
use rustc_hash::FxHashMap;

use crate::{
    id_less, intern_column, order_values, read_steps, ColumnarFormat, Columns, Interner,
    ParquetSource, Result, Role, StepsRead,
};

/// Above this many states, pairs are counted in a hash map rather than a dense matrix.
const DENSE_MAX_STATES: usize = 1024;

/// Counts the first-order transitions of a step table's traces while reading it (a Parquet
/// file in order, see the module's documentation), else reads the table ([`read_steps`]).
/// The counts are those `augur_learn::pipeline::count_from_indexed` gives of the table
/// [`read_steps`] reads, state numbering included.
///
/// ```
/// use augur_columnar::{count_steps, write_steps_parquet, Columns, StepsRead};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("t.parquet");
/// let rows = [("t1", 0, "a"), ("t1", 1, "b"), ("t2", 0, "b")];
/// write_steps_parquet(&path, rows.iter().copied(), &Columns::default()).unwrap();
/// let StepsRead::Counted(c) = count_steps(&path, &Columns::default()).unwrap() else {
///     panic!("an ordered table is counted while read")
/// };
/// assert_eq!(c.names, ["a", "b"]);
/// assert_eq!(c.transitions, [(0, 1, 1)]);
/// assert_eq!((c.initial, c.ends, c.traces, c.steps), (vec![1, 1], vec![0, 2], 2, 3));
/// ```
pub fn count_steps(path: &Path, columns: &Columns) -> Result<StepsRead> {
    if ColumnarFormat::from_path(path) == Some(ColumnarFormat::Parquet) && columns.state.len() == 1
    {
        let file = path.display().to_string();
        let source = ParquetSource::open(path, &file, columns)?;
        if let Some(counts) = count_source(&source, columns, crate::threads()) {
            return Ok(StepsRead::Counted(counts));
        }
    }
    read_steps(path, columns).map(StepsRead::Table)
}

/// The counts of an ordered table read on up to `threads` threads, `None` when it cannot be
/// counted so.
fn count_source(
    source: &ParquetSource<'_>,
    columns: &Columns,
    threads: usize,
) -> Option<IndexedCounts> {
    let parts = source.parts(threads);
    let give_up = AtomicBool::new(false);
    let count = |groups: Vec<usize>, first_row: u64| -> Option<Part> {
        let mut part = Part::default();
        let batches = source.reader(groups).ok()?;
        let mut row = first_row;
        for batch in batches {
            if give_up.load(Ordering::Relaxed) {
                return None;
            }
            let batch = batch.ok()?;
            let done = part.add_batch(source, columns, &batch, row);
            if done.is_none() {
                give_up.store(true, Ordering::Relaxed);
                return None;
            }
            row += batch.num_rows() as u64;
        }
        part.finish();
        Some(part)
    };
    let results: Vec<Option<Part>> = if parts.len() <= 1 {
        vec![count((0..source.sizes.len()).collect(), 1)]
    } else {
        crate::source::on_threads(&parts, |groups, first_row| {
            count(groups.to_vec(), first_row)
        })
    };
    let parts: Vec<Part> = results.into_iter().collect::<Option<_>>()?;
    join(parts)
}

/// The counts of a contiguous run of rows, in the part's own state numbers.
#[derive(Default)]
struct Part {
    states: Interner,
    /// The state numbers of the rows of the batch being read.
    ids: Vec<u32>,
    order_buf: Vec<i64>,
    /// `dense[from * cap + to]` while there are at most [`DENSE_MAX_STATES`] states, then
    /// `sparse`.
    dense: Vec<u64>,
    cap: usize,
    sparse: FxHashMap<(u32, u32), u64>,
    is_sparse: bool,
    initial: Vec<u64>,
    ends: Vec<u64>,
    traces: u64,
    steps: u64,
    /// Whether a row has been read.
    started: bool,
    /// The first trace: its id, first state and order value.
    first_id: String,
    first_state: u32,
    first_order: i64,
    /// The trace being read: its id, last state and order value.
    id: String,
    last_state: u32,
    last_order: i64,
}

impl Part {
    /// Makes room for the states named so far.
    fn grow(&mut self) {
        let n = self.states.names.len();
        if n > self.initial.len() {
            self.initial.resize(n, 0);
            self.ends.resize(n, 0);
        }
        if self.is_sparse || n <= self.cap {
            return;
        }
        if n > DENSE_MAX_STATES {
            for (i, &c) in self.dense.iter().enumerate() {
                if c > 0 {
                    let key = ((i / self.cap) as u32, (i % self.cap) as u32);
                    self.sparse.insert(key, c);
                }
            }
            self.dense = Vec::new();
            self.is_sparse = true;
            return;
        }
        let cap = n.next_power_of_two().clamp(64, DENSE_MAX_STATES);
        let mut dense = vec![0u64; cap * cap];
        for from in 0..self.cap {
            dense[from * cap..from * cap + self.cap]
                .copy_from_slice(&self.dense[from * self.cap..(from + 1) * self.cap]);
        }
        self.dense = dense;
        self.cap = cap;
    }

    /// Counts a batch whose rows start at `row` (1-based); `None` to give up.
    fn add_batch(
        &mut self,
        source: &ParquetSource<'_>,
        columns: &Columns,
        batch: &RecordBatch,
        row: u64,
    ) -> Option<()> {
        let file = source.file;
        let positions = &source.positions;
        let n = batch.num_rows();
        self.ids.clear();
        intern_column(
            batch.column(positions[2]).as_ref(),
            &mut self.states,
            &mut self.ids,
            &Role::state(file, columns, 0),
            row,
        )
        .ok()?;
        self.grow();
        let mut order = std::mem::take(&mut self.order_buf);
        let values = order_values(batch, positions, &mut order, file, columns, row).ok()?;
        let trace = batch.column(positions[0]);
        let dict = trace.as_dictionary_opt::<Int32Type>()?;
        if trace.null_count() > 0 || dict.values().null_count() > 0 {
            return None;
        }
        let keys = dict.keys().values();
        let ids = std::mem::take(&mut self.ids);
        let ok = if let Some(s) = dict.values().as_string_opt::<i32>() {
            self.rows(keys, s, &ids[..n], &values[..n])
        } else if let Some(s) = dict.values().as_string_opt::<i64>() {
            self.rows(keys, s, &ids[..n], &values[..n])
        } else {
            None
        };
        self.ids = ids;
        self.order_buf = order;
        self.steps += n as u64;
        ok
    }

    /// The rows of a batch: trace ids as dictionary keys into `dict`, state numbers, order
    /// values. A row starts a trace when its id differs from the row before's (compared as
    /// keys, and as strings where the keys differ); within a trace each row counts a
    /// transition from the row before.
    fn rows<O: OffsetSizeTrait>(
        &mut self,
        keys: &[i32],
        dict: &GenericStringArray<O>,
        ids: &[u32],
        order: &[i64],
    ) -> Option<()> {
        let cap = self.cap;
        let mut prev_key = -1i32;
        let (mut last, mut last_order) = (self.last_state, self.last_order);
        for ((&k, &s), &o) in keys.iter().zip(ids).zip(order) {
            if k != prev_key {
                prev_key = k;
                let id = dict.value(usize::try_from(k).ok().filter(|&k| k < dict.len())?);
                if !self.started || id != self.id {
                    // A new trace: its id must be above the last one's.
                    if self.started {
                        if !id_less(&self.id, id) {
                            return None;
                        }
                        self.ends[last as usize] += 1;
                    } else {
                        self.started = true;
                        self.first_id = id.to_string();
                        self.first_state = s;
                        self.first_order = o;
                    }
                    self.id.clear();
                    self.id.push_str(id);
                    self.initial[s as usize] += 1;
                    self.traces += 1;
                    (last, last_order) = (s, o);
                    continue;
                }
            }
            if o <= last_order {
                return None;
            }
            if self.is_sparse {
                *self.sparse.entry((last, s)).or_insert(0) += 1;
            } else {
                self.dense[last as usize * cap + s as usize] += 1;
            }
            (last, last_order) = (s, o);
        }
        (self.last_state, self.last_order) = (last, last_order);
        Some(())
    }

    /// Counts the end of the last trace.
    fn finish(&mut self) {
        if self.started {
            self.ends[self.last_state as usize] += 1;
        }
    }

    /// Every counted pair `(from, to, n)` in the part's numbers.
    fn pairs(&self) -> Box<dyn Iterator<Item = (u32, u32, u64)> + '_> {
        if self.is_sparse {
            Box::new(self.sparse.iter().map(|(&(f, t), &c)| (f, t, c)))
        } else {
            let cap = self.cap;
            Box::new(
                self.dense
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c > 0)
                    .map(move |(i, &c)| ((i / cap) as u32, (i % cap) as u32, c)),
            )
        }
    }
}

/// Adds the parts' counts in file order, `None` when together they are not in order (a
/// trace id not above the one before, or a trace that goes on in the next part with an
/// order value not above its last).
fn join(parts: Vec<Part>) -> Option<IndexedCounts> {
    let mut names = Interner::default();
    let maps: Vec<Vec<u32>> = parts
        .iter()
        .map(|p| p.states.names.iter().map(|n| names.id(n)).collect())
        .collect();
    let m = names.names.len();
    let is_dense = m <= DENSE_MAX_STATES;
    let mut dense = vec![0u64; if is_dense { m * m } else { 0 }];
    let mut sparse: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    let mut add = |f: u32, t: u32, c: u64| {
        if is_dense {
            dense[f as usize * m + t as usize] += c;
        } else {
            *sparse.entry((f, t)).or_insert(0) += c;
        }
    };
    let (mut initial, mut ends) = (vec![0u64; m], vec![0u64; m]);
    let (mut traces, mut steps) = (0u64, 0u64);
    // The last trace so far: its id, order value and last state.
    let mut prev: Option<(&str, i64, u32)> = None;
    for (p, map) in parts.iter().zip(&maps) {
        if !p.started {
            continue;
        }
        for (f, t, c) in p.pairs() {
            add(map[f as usize], map[t as usize], c);
        }
        for (s, (&i, &e)) in p.initial.iter().zip(&p.ends).enumerate() {
            initial[map[s] as usize] += i;
            ends[map[s] as usize] += e;
        }
        traces += p.traces;
        steps += p.steps;
        if let Some((id, order, state)) = prev {
            if p.first_id == id {
                // The trace goes on here: one trace, not two, and one more transition.
                if p.first_order <= order {
                    return None;
                }
                let first = map[p.first_state as usize];
                traces -= 1;
                initial[first as usize] -= 1;
                ends[state as usize] -= 1;
                add(state, first, 1);
            } else if !id_less(id, &p.first_id) {
                return None;
            }
        }
        prev = Some((&p.id, p.last_order, map[p.last_state as usize]));
    }
    let transitions = IndexedCounts::transition_list(is_dense.then_some(&dense[..]), m, sparse);
    Some(IndexedCounts {
        names: names.names,
        transitions,
        initial,
        ends,
        traces,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{write_steps_parquet, StepTable};
    use augur_learn::pipeline::{
        count_from_indexed, count_from_indexed_counts, IndexedTraces, LearnOptions,
    };
    use std::collections::BTreeMap;

    /// The counts of a table read whole, counted a second way (trace by trace).
    fn expected(table: &StepTable) -> IndexedCounts {
        let m = table.state_names.len();
        let mut pairs: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        let (mut initial, mut ends) = (vec![0; m], vec![0; m]);
        for t in 0..table.num_traces() {
            let states = table.trace_states(t);
            initial[states[0] as usize] += 1;
            ends[states[states.len() - 1] as usize] += 1;
            for w in states.windows(2) {
                *pairs.entry((w[0], w[1])).or_default() += 1;
            }
        }
        IndexedCounts {
            names: table.state_names.clone(),
            transitions: pairs.into_iter().map(|((f, t), n)| (f, t, n)).collect(),
            initial,
            ends,
            traces: table.num_traces() as u64,
            steps: table.num_steps() as u64,
        }
    }

    fn write(path: &Path, rows: &[(String, i64, String)]) {
        write_steps_parquet(
            path,
            rows.iter().map(|(t, o, s)| (t.as_str(), *o, s.as_str())),
            &Columns::default(),
        )
        .unwrap();
    }

    /// Counted while read on `threads` threads (`None`: given up).
    fn counted(path: &Path, threads: usize) -> Option<IndexedCounts> {
        let file = path.display().to_string();
        let source = ParquetSource::open(path, &file, &Columns::default()).unwrap();
        count_source(&source, &Columns::default(), threads)
    }

    /// The counts while read, on 1 to 5 threads, are the table's; and the learner's counts
    /// of them are its counts of the table.
    fn check_counted(path: &Path) {
        let table = read_steps(path, &Columns::default()).unwrap();
        assert!(!table.reordered());
        let want = expected(&table);
        for threads in 1..=5 {
            assert_eq!(
                counted(path, threads).as_ref(),
                Some(&want),
                "{threads} threads"
            );
        }
        let StepsRead::Counted(c) = count_steps(path, &Columns::default()).unwrap() else {
            panic!("not counted while read")
        };
        let opts = LearnOptions::default();
        let indexed = IndexedTraces {
            names: &table.state_names,
            offsets: &table.offsets,
            states: &table.states,
        };
        assert_eq!(
            count_from_indexed_counts(c, "t", &opts).unwrap().counts,
            count_from_indexed(indexed, "t", &opts).unwrap().counts
        );
    }

    /// `n` traces `sim-0`, `sim-1`, ... of 1 to 12 steps over `states` states.
    fn rows(n: usize, states: u64, seed: u64) -> Vec<(String, i64, String)> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = Vec::new();
        for t in 0..n {
            for k in 0..1 + next() % 12 {
                out.push((
                    format!("sim-{t}"),
                    k as i64,
                    format!("s{}", next() % states),
                ));
            }
        }
        out
    }

    #[test]
    fn ordered_tables_are_counted_while_read_as_the_whole_table_counts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        // About 200 000 rows: two row groups, the traces crossing their boundary.
        write(&path, &rows(31_000, 7, 0x9E37_79B9_7F4A_7C15));
        check_counted(&path);
        // A single row group, and a single row.
        write(&path, &rows(50, 3, 7));
        check_counted(&path);
        write(&path, &[("a".into(), 0, "x".into())]);
        check_counted(&path);
    }

    /// One trace longer than a row group, across three of them: with three threads the
    /// middle part is that trace alone, going on from the part before and into the next; its
    /// 3 000 states are more than a dense matrix holds (counted in a map, in the parts and
    /// when added).
    #[test]
    fn a_trace_across_row_groups_and_parts_is_one_trace() {
        let mut rs = rows(13_000, 5, 3);
        let long = "sim-99999";
        for k in 0..(crate::ROW_GROUP_ROWS as i64 + 20_000) {
            rs.push((long.into(), 10 * k, format!("t{}", (k * 7919) % 3000)));
        }
        rs.extend(
            rows(20_000, 9, 5)
                .into_iter()
                .map(|(t, o, s)| (format!("tail-{t}"), o, s)),
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write(&path, &rs);
        let table = read_steps(&path, &Columns::default()).unwrap();
        assert!(table.state_names.len() > DENSE_MAX_STATES);
        assert_eq!(table.num_traces(), 13_000 + 1 + 20_000);
        check_counted(&path);
    }

    /// Tables the counting gives up on are read whole (and counted from the table): rows out
    /// of order within a part and across two, trace ids that do not increase, integer ids.
    #[test]
    fn tables_not_in_order_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let table_of = |path: &Path| match count_steps(path, &Columns::default()).unwrap() {
            StepsRead::Table(t) => t,
            StepsRead::Counted(_) => panic!("counted a table not in order"),
        };
        // A trace across the two row groups (so across the two parts) whose order value
        // goes back where the second starts: each part in order, not the two together.
        let mut rs = rows(31_000, 7, 11);
        let at = crate::ROW_GROUP_ROWS;
        rs[at].0 = rs[at - 1].0.clone();
        rs[at].1 = -1;
        write(&path, &rs);
        let file = path.display().to_string();
        let source = ParquetSource::open(&path, &file, &Columns::default()).unwrap();
        assert_eq!(source.parts(2).len(), 2);
        assert_eq!(source.parts(2)[1].1, at as u64 + 1);
        assert_eq!(counted(&path, 2), None);
        assert!(table_of(&path).reordered());
        // Two traces interleaved.
        let rs: Vec<(String, i64, String)> = [("a", 0, "x"), ("b", 0, "y"), ("a", 1, "y")]
            .iter()
            .map(|&(t, o, s)| (t.to_string(), o, s.to_string()))
            .collect();
        write(&path, &rs);
        assert!(table_of(&path).reordered());
        // Ids not increasing (`b` before `a`): in order, but read whole to check them.
        let rs: Vec<(String, i64, String)> = [("b", 0, "x"), ("b", 1, "y"), ("a", 0, "y")]
            .iter()
            .map(|&(t, o, s)| (t.to_string(), o, s.to_string()))
            .collect();
        write(&path, &rs);
        let t = table_of(&path);
        assert!(!t.reordered());
        assert_eq!((t.num_traces(), t.trace_id(1)), (2, "a"));
        // The same ids, increasing across the parts but not within one.
        let mut rs = rows(31_000, 7, 13);
        let n = rs.len();
        rs[n - 1].0 = "sim-0".into();
        rs[n - 1].1 = 1000;
        write(&path, &rs);
        assert_eq!(counted(&path, 2), None);
        assert!(table_of(&path).reordered());
    }
}
