//! augur-columnar: traces stored as tables, one row per step, in Parquet or Arrow IPC files.
//!
//! A step table has a trace id column, an order column (a step index or a timestamp) and the
//! state, as one column or several ([`Columns`]; defaults `trace_id`, `step`, `state`, and the
//! [`Columns::preset`] `otel-genai` for OpenTelemetry GenAI spans exported to Parquet).
//! [`read_steps`] reads only those columns and gives a [`StepTable`]: the states of each trace
//! in order, numbered by first appearance as the learner numbers them. A file already grouped
//! by trace with increasing order values (checked in the same pass) is read as it is, a
//! Parquet file's row groups in parallel, a dictionary-encoded state column named once per
//! dictionary value rather than per row; another file is read again and sorted.
//! [`StepTable::traces`] hands its traces to the learner
//! (`augur_learn::pipeline::learn_from_traces`) like those of a JSON Lines file; the learner
//! also counts the table's numbered states directly (`augur_learn::pipeline::learn_from_indexed`).
//! [`write_steps_parquet`] writes a step table (what `augur simulate -o traces.parquet` writes).
//!
//! Errors ([`ColumnarError`], [`Result`]) name the file and the column: a missing column lists
//! the columns the file has and the option that names it, a mistyped one says what it is and
//! what was expected, a null says in which row. Parquet files may be uncompressed or use the
//! snappy or zstd codecs (what writers use by default); another codec is an error naming it.
//!
//! ```
//! use augur_columnar::{read_steps, write_steps_parquet, Columns};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("t.parquet");
//! // Rows need not be in order: each trace is sorted by its order column.
//! let rows = [("t1", 1, "b"), ("t1", 0, "a"), ("t2", 0, "a")];
//! write_steps_parquet(&path, rows.iter().map(|&(t, i, s)| (t, i, s)), &Columns::default()).unwrap();
//! let table = read_steps(&path, &Columns::default()).unwrap();
//! assert!(table.reordered());
//! assert_eq!(table.state_names, ["a", "b"]);
//! let traces: Vec<_> = table.traces().collect();
//! assert_eq!(traces.len(), 2);
//! assert_eq!(traces[0].id, "t1");
//! assert_eq!(table.trace_states(0), [0, 1]);
//! assert_eq!((table.row(0), table.row(1)), (2, 1));
//! ```
//!
//! The readers and writers need the cargo feature `parquet` (on by default in this crate; the
//! `augur` binary turns it on with its own feature `parquet`). Without it the same functions
//! exist and return [`ColumnarError::NotBuilt`], which says how to build them in: the
//! dependency on Arrow and Parquet is about a fifth of a cold release build.
#![deny(missing_docs)]

#[cfg(feature = "parquet")]
mod count;
#[cfg(feature = "parquet")]
mod counts;
#[cfg(feature = "parquet")]
mod decode;
mod error;
#[cfg(feature = "parquet")]
mod read;
#[cfg(feature = "parquet")]
mod source;
mod table;
// Compiled (and its unit test run) in every build, so that the test build, which has the
// feature, checks what a build without it answers; exported only without the feature.
#[cfg_attr(feature = "parquet", allow(dead_code))]
mod without;
#[cfg(feature = "parquet")]
mod write;

#[cfg(feature = "parquet")]
pub use count::count_steps;
#[cfg(feature = "parquet")]
pub use counts::{read_counts_parquet, write_counts_parquet, COUNTS_COLUMNS};
pub use error::{ColumnarError, Result};
#[cfg(feature = "parquet")]
pub use read::read_steps;
pub use table::{ColumnarFormat, Columns, StepTable, StepsRead};
#[cfg(not(feature = "parquet"))]
pub use without::{
    count_steps, read_counts_parquet, read_steps, write_counts_parquet, write_steps_parquet,
};
#[cfg(feature = "parquet")]
pub use write::{write_steps_parquet, ROW_GROUP_ROWS};

#[cfg(feature = "parquet")]
pub(crate) use decode::{intern_column, order_values, Interner, Role};
#[cfg(feature = "parquet")]
pub(crate) use read::id_less;
#[cfg(feature = "parquet")]
pub(crate) use source::{threads, ParquetSource};

#[cfg(all(test, feature = "parquet"))]
mod tests {
    use super::*;
    use crate::read::split;
    use parquet::arrow::arrow_reader::ArrowReaderMetadata;
    use std::fs::File;

    /// Deterministic traces: `n` traces of 1 to 12 steps over 7 states.
    fn traces(n: usize) -> Vec<(String, Vec<String>)> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|t| {
                let len = 1 + (next() % 12) as usize;
                let states = (0..len).map(|_| format!("s{}", next() % 7)).collect();
                (format!("trace-{t}"), states)
            })
            .collect()
    }

    /// What the table must hold: the traces in the given order, states numbered by first
    /// appearance along them.
    fn check(table: &StepTable, expected: &[(String, Vec<String>)]) {
        let mut names: Vec<String> = Vec::new();
        for (_, states) in expected {
            for s in states {
                if !names.contains(s) {
                    names.push(s.clone());
                }
            }
        }
        assert_eq!(table.state_names, names);
        assert_eq!(table.num_traces(), expected.len());
        for (t, (id, states)) in expected.iter().enumerate() {
            assert_eq!(table.trace_id(t), id);
            let got: Vec<&str> = table
                .trace_states(t)
                .iter()
                .map(|&s| table.state_names[s as usize].as_str())
                .collect();
            assert_eq!(got, *states, "trace {id}");
        }
    }

    #[test]
    fn ordered_files_over_many_row_groups_read_in_one_pass() {
        // About 200 000 rows: two row groups and more, traces crossing their boundaries.
        let ts = traces(31_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let rows = ts.iter().flat_map(|(id, states)| {
            states
                .iter()
                .enumerate()
                .map(move |(k, s)| (id.as_str(), k as i64, s.as_str()))
        });
        write_steps_parquet(&path, rows, &Columns::default()).unwrap();
        let meta =
            ArrowReaderMetadata::load(&File::open(&path).unwrap(), Default::default()).unwrap();
        assert!(meta.metadata().num_row_groups() >= 2);
        let table = read_steps(&path, &Columns::default()).unwrap();
        assert!(!table.reordered());
        check(&table, &ts);
        assert_eq!(table.row(5), 6);
    }

    #[test]
    fn unordered_files_are_sorted_by_trace_and_order() {
        // Two rows of every trace swapped, and traces interleaved: trace ids not contiguous.
        let ts = traces(500);
        let dir = tempfile::tempdir().unwrap();
        let mut rows: Vec<(&str, i64, &str)> = Vec::new();
        for pair in ts.chunks(2) {
            let longest = pair.iter().map(|t| t.1.len()).max().unwrap_or(0);
            for k in 0..longest {
                for (id, states) in pair {
                    if let Some(s) = states.get(k) {
                        rows.push((id, k as i64, s));
                    }
                }
            }
        }
        let path = dir.path().join("interleaved.parquet");
        write_steps_parquet(&path, rows.iter().copied(), &Columns::default()).unwrap();
        let table = read_steps(&path, &Columns::default()).unwrap();
        assert!(table.reordered());
        check(&table, &ts);
        // One trace's steps in reverse order, contiguous: still sorted.
        let (id, states) = &ts[3];
        let rows: Vec<(&str, i64, &str)> = states
            .iter()
            .enumerate()
            .rev()
            .map(|(k, s)| (id.as_str(), k as i64, s.as_str()))
            .collect();
        let path = dir.path().join("reversed.parquet");
        write_steps_parquet(&path, rows.iter().copied(), &Columns::default()).unwrap();
        let table = read_steps(&path, &Columns::default()).unwrap();
        check(&table, &ts[3..4]);
        assert_eq!(table.row(0), states.len() as u64);
    }

    /// A trace id that comes back in a later row group (read by another thread), its steps
    /// still in increasing order: not one run, so the rows are sorted, the trace whole.
    #[test]
    fn a_trace_id_coming_back_in_a_later_row_group_is_one_trace() {
        let mut ts = traces(31_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let (id, first) = ts[0].clone();
        let mut rows: Vec<(String, i64, String)> = Vec::new();
        for (t, (id, states)) in ts.iter().enumerate() {
            for (k, s) in states.iter().enumerate() {
                rows.push((id.clone(), k as i64, s.clone()));
            }
            if t + 1 == ts.len() {
                // Trace 0 again, its later steps.
                rows.push((ts[0].0.clone(), 100, "late".into()));
            }
        }
        write_steps_parquet(
            &path,
            rows.iter().map(|(t, i, s)| (t.as_str(), *i, s.as_str())),
            &Columns::default(),
        )
        .unwrap();
        let table = read_steps(&path, &Columns::default()).unwrap();
        assert!(table.reordered());
        let mut whole = first;
        whole.push("late".into());
        ts[0] = (id, whole);
        check(&table, &ts);
    }

    /// Every trace id in increasing order twice over (the second time with later steps):
    /// each half increases, so the check that no id comes back must not stop at that. The
    /// rows are sorted and each trace read whole.
    #[test]
    fn increasing_ids_that_start_over_are_one_trace_each() {
        let ts = traces(31_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut rows: Vec<(&str, i64, &str)> = Vec::new();
        for round in 0..2 {
            for (id, states) in &ts {
                for (k, s) in states.iter().enumerate() {
                    rows.push((id, 100 * round + k as i64, s));
                }
            }
        }
        write_steps_parquet(&path, rows.iter().copied(), &Columns::default()).unwrap();
        let table = read_steps(&path, &Columns::default()).unwrap();
        assert!(table.reordered());
        let doubled: Vec<(String, Vec<String>)> = ts
            .iter()
            .map(|(id, states)| (id.clone(), [states.clone(), states.clone()].concat()))
            .collect();
        check(&table, &doubled);
    }

    #[test]
    fn ids_are_ordered_shorter_first() {
        assert!(id_less("sim-9", "sim-10"));
        assert!(id_less("sim-10", "sim-11"));
        assert!(!id_less("sim-10", "sim-10"));
        assert!(!id_less("sim-10", "sim-9"));
    }

    #[test]
    fn split_gives_contiguous_parts_of_about_equal_rows() {
        assert_eq!(
            split(&[100, 100, 100, 100], 2),
            vec![(vec![0, 1], 1), (vec![2, 3], 201)]
        );
        assert_eq!(split(&[10], 2), vec![(vec![0], 1)]);
        assert_eq!(split(&[0, 0], 2).len(), 1);
    }
}
