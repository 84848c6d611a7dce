//! Keyed transition counts ([`KeyedCounts`], the `augur-counts` schema) as a Parquet table:
//! the rows `docs/sql/counts.sql` produces, one count per row, with the header fields as the
//! file's key-value metadata.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `kind` | string | `step`, `initial`, `transition`, `invalid` or `end` |
//! | `from_state` | string | the state (of a `transition` or `invalid` row: the source) |
//! | `to_state` | string, null unless a move | the target of a `transition` or `invalid` row |
//! | `n` | unsigned 64-bit integer | the count |
//! | `category` | string, nullable | the category (`--by-category`), null without |
//!
//! A `step` row counts the steps taken in its state; the `step` rows list every state of a
//! group, in the group's first-seen order (the learner's numbering), and sum to its steps. The
//! `initial` rows sum to its traces. In a chain of order k > 1 a state is written as the JSON
//! array of the names of its last states (`["ok","bad"]`). The metadata: `format`
//! (`augur-counts`), `version` (`1`), `order` (k), and `end_state` when one was asked for.
//!
//! Reading accepts any string type (plain, large, view or dictionary-encoded) and any
//! integer type for `n` (as SQL engines write `COUNT(*)`), and rows in any order; `category`
//! may be absent. A missing or mistyped column, a null where a value is needed or an unknown
//! kind is an error naming the file and the column (and the row).

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use augur_learn::counts::{KeyedCounts, StateKey};
use augur_learn::counts_table::CountsTable;
use augur_learn::LearnError;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;

use crate::{ColumnarError, Result};

/// The columns of a counts table, in the order written.
pub const COUNTS_COLUMNS: [&str; 5] = ["kind", "from_state", "to_state", "n", "category"];

/// The key of a state as written in a cell: its name, or the JSON array of a tuple's names.
fn cell(key: &StateKey) -> String {
    match key {
        StateKey::Name(n) => n.clone(),
        StateKey::Tuple(t) => serde_json::to_string(t).unwrap_or_default(),
    }
}

/// Writes keyed counts to `path` as a Parquet counts table (see the [module](self) docs).
pub fn write_counts_parquet(path: &Path, counts: &KeyedCounts) -> Result<()> {
    let file = path.display().to_string();
    let io = |e: &dyn std::fmt::Display| ColumnarError::Io {
        file: file.clone(),
        message: e.to_string(),
    };
    let mut kind: Vec<&str> = Vec::new();
    let mut from: Vec<String> = Vec::new();
    let mut to: Vec<Option<String>> = Vec::new();
    let mut n: Vec<u64> = Vec::new();
    let mut category: Vec<Option<&str>> = Vec::new();
    for g in &counts.groups {
        let mut row = |k: &'static str, f: &StateKey, t: Option<&StateKey>, c: u64| {
            kind.push(k);
            from.push(cell(f));
            to.push(t.map(cell));
            n.push(c);
            category.push(g.category.as_deref());
        };
        // The steps taken in each state: each step is followed by a move (valid or not) or
        // ends its trace.
        let mut steps: HashMap<&StateKey, u64> = g.states.iter().map(|s| (s, 0)).collect();
        for (s, _, c) in g.transitions.iter().chain(&g.invalid) {
            *steps.entry(s).or_insert(0) += c;
        }
        for (s, c) in &g.ends {
            *steps.entry(s).or_insert(0) += c;
        }
        for s in &g.states {
            row("step", s, None, steps.get(s).copied().unwrap_or(0));
        }
        for (s, c) in &g.initial {
            row("initial", s, None, *c);
        }
        for (f, t, c) in &g.transitions {
            row("transition", f, Some(t), *c);
        }
        for (f, t, c) in &g.invalid {
            row("invalid", f, Some(t), *c);
        }
        for (s, c) in &g.ends {
            row("end", s, None, *c);
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("kind", DataType::Utf8, false),
        Field::new("from_state", DataType::Utf8, false),
        Field::new("to_state", DataType::Utf8, true),
        Field::new("n", DataType::UInt64, false),
        Field::new("category", DataType::Utf8, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(kind)),
        Arc::new(StringArray::from(from)),
        Arc::new(StringArray::from(to)),
        Arc::new(UInt64Array::from(n)),
        Arc::new(StringArray::from(category)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| io(&e))?;
    let mut meta = vec![
        KeyValue::new("format".into(), counts.format.clone()),
        KeyValue::new("version".into(), counts.version.to_string()),
        KeyValue::new("order".into(), counts.order.to_string()),
    ];
    if let Some(e) = &counts.end_state {
        meta.push(KeyValue::new("end_state".into(), e.clone()));
    }
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_key_value_metadata(Some(meta))
        .build();
    let f = File::create(path).map_err(|e| io(&format!("cannot create: {e}")))?;
    let mut writer = ArrowWriter::try_new(f, schema, Some(props)).map_err(|e| io(&e))?;
    writer.write(&batch).map_err(|e| io(&e))?;
    writer.close().map_err(|e| io(&e))?;
    Ok(())
}

const STRING_TYPES: &str = "a string column";
const COUNT_TYPES: &str = "an integer column";

fn is_string(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(k, v) => k.is_integer() && is_string(v),
        _ => false,
    }
}

/// The strings of a column of a string type (`None` for nulls).
fn strings(col: &dyn Array) -> Vec<Option<String>> {
    let get = |i: usize| -> Option<String> {
        if col.is_null(i) {
            return None;
        }
        Some(match col.data_type() {
            DataType::Utf8 => col.as_string::<i32>().value(i).to_string(),
            DataType::LargeUtf8 => col.as_string::<i64>().value(i).to_string(),
            DataType::Utf8View => col.as_string_view().value(i).to_string(),
            _ => return None,
        })
    };
    match col.data_type() {
        DataType::Dictionary(_, _) => {
            let dict = col.as_any_dictionary();
            let values = strings(dict.values().as_ref());
            let keys = dict.normalized_keys();
            (0..col.len())
                .map(|i| {
                    if col.is_null(i) {
                        None
                    } else {
                        values.get(keys[i]).cloned().flatten()
                    }
                })
                .collect()
        }
        _ => (0..col.len()).map(get).collect(),
    }
}

/// The counts of an integer column (`Err(i)`: row `i` is negative; `None` for nulls).
fn integers(col: &dyn Array) -> std::result::Result<Vec<Option<u64>>, usize> {
    macro_rules! each {
        ($t:ty) => {{
            let a = col.as_primitive::<$t>();
            (0..a.len())
                .map(|i| {
                    if a.is_null(i) {
                        Ok(None)
                    } else {
                        u64::try_from(a.value(i)).map(Some).map_err(|_| i)
                    }
                })
                .collect()
        }};
    }
    match col.data_type() {
        DataType::Int8 => each!(Int8Type),
        DataType::Int16 => each!(Int16Type),
        DataType::Int32 => each!(Int32Type),
        DataType::Int64 => each!(Int64Type),
        DataType::UInt8 => each!(UInt8Type),
        DataType::UInt16 => each!(UInt16Type),
        DataType::UInt32 => each!(UInt32Type),
        DataType::UInt64 => each!(UInt64Type),
        _ => Ok(Vec::new()),
    }
}

/// Reads a Parquet counts table (see the [module](self) docs) as keyed counts. The counts are
/// not checked beyond their table's shape: [`KeyedCounts::check`] does that, as for JSON.
pub fn read_counts_parquet(path: &Path) -> Result<KeyedCounts> {
    let file = path.display().to_string();
    let bad = |message: String| ColumnarError::Counts {
        file: file.clone(),
        message,
    };
    let f = File::open(path).map_err(|e| ColumnarError::Io {
        file: file.clone(),
        message: format!("cannot open: {e}"),
    })?;
    let format_err = |e: &dyn std::fmt::Display| ColumnarError::Format {
        file: file.clone(),
        format: "Parquet",
        message: e.to_string(),
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| format_err(&e))?;
    // The header, from the key-value metadata.
    let meta: HashMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .filter_map(|k| Some((k.key.clone(), k.value.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    // The columns.
    let schema = builder.schema().clone();
    let available = || crate::decode::field_names(&schema);
    let mut idx = Vec::new();
    for (column, role) in [
        ("kind", "kind"),
        ("from_state", "state"),
        ("to_state", "state"),
        ("n", "count"),
        ("category", "category"),
    ] {
        let Ok(i) = schema.index_of(column) else {
            if column == "category" {
                continue;
            }
            return Err(ColumnarError::MissingCountsColumn {
                file: file.clone(),
                column: column.to_string(),
                available: available(),
            });
        };
        let t = schema.field(i).data_type();
        let (ok, expected) = if column == "n" {
            (t.is_integer(), COUNT_TYPES)
        } else {
            (is_string(t), STRING_TYPES)
        };
        if !ok {
            return Err(ColumnarError::ColumnType {
                file: file.clone(),
                column: column.to_string(),
                role,
                found: t.to_string(),
                expected,
            });
        }
        idx.push(i);
    }
    let header = |key: &str| -> Result<&str> {
        meta.get(key).map(String::as_str).ok_or_else(|| {
            bad(format!(
                "no key-value metadata `{key}` (an augur-counts table carries format, version \
                 and order; see docs/scale.md)"
            ))
        })
    };
    let format = header("format")?.to_string();
    let number = |key: &str| -> Result<u64> {
        let v = header(key)?;
        v.parse()
            .map_err(|_| bad(format!("key-value metadata `{key}` is `{v}`, not a number")))
    };
    let version = u32::try_from(number("version")?).unwrap_or(u32::MAX);
    let order = usize::try_from(number("order")?).unwrap_or(usize::MAX);
    let end_state = meta.get("end_state").cloned();
    let has_category = idx.len() == 5;
    let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), idx.iter().copied());
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| format_err(&e))?;
    let null = |column: &str, role: &'static str, row: u64| ColumnarError::Null {
        file: file.clone(),
        column: column.to_string(),
        role,
        row,
    };
    let mut table = CountsTable::new(order, end_state);
    let row_err = |e: LearnError| bad(e.to_string());
    for batch in reader {
        let batch = batch.map_err(|e| format_err(&e))?;
        // The projected columns are in schema order: find each by name.
        let col = |name: &str| -> Result<&ArrayRef> {
            batch
                .column_by_name(name)
                .ok_or_else(|| bad(format!("column `{name}` cannot be read")))
        };
        let kinds = strings(col("kind")?.as_ref());
        let froms = strings(col("from_state")?.as_ref());
        let mut tos = strings(col("to_state")?.as_ref());
        let ns = integers(col("n")?.as_ref()).map_err(|i| {
            bad(format!(
                "row {}: column `n` (the count column) is negative",
                table.rows() + i as u64 + 1
            ))
        })?;
        let mut cats = if has_category {
            strings(col("category")?.as_ref())
        } else {
            vec![None; batch.num_rows()]
        };
        for (i, (kind, from)) in kinds.iter().zip(froms).enumerate() {
            let row = table.rows() + 1;
            let kind = kind.as_deref().ok_or_else(|| null("kind", "kind", row))?;
            let from = from.ok_or_else(|| null("from_state", "state", row))?;
            let n = ns[i].ok_or_else(|| null("n", "count", row))?;
            let to = tos[i].take();
            if to.is_none() && matches!(kind, "transition" | "invalid") {
                return Err(null("to_state", "state", row));
            }
            table
                .push(kind, from, to, n, cats[i].take())
                .map_err(row_err)?;
        }
    }
    let mut counts = table.finish().map_err(row_err)?;
    counts.format = format;
    counts.version = version;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_learn::counts::GroupCounts;

    fn name(s: &str) -> StateKey {
        StateKey::Name(s.into())
    }

    #[test]
    fn counts_round_trip_through_parquet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.parquet");
        let counts = KeyedCounts::new(
            1,
            Some("done".into()),
            vec![
                GroupCounts {
                    category: Some("a".into()),
                    traces: 3,
                    steps: 7,
                    states: vec![name("x"), name("y"), name("unseen")],
                    initial: vec![(name("x"), 2), (name("y"), 1)],
                    transitions: vec![(name("x"), name("y"), 2), (name("y"), name("y"), 1)],
                    invalid: vec![(name("y"), name("x"), 1)],
                    ends: vec![(name("x"), 1), (name("y"), 2)],
                },
                GroupCounts {
                    category: None,
                    traces: 1,
                    steps: 1,
                    states: vec![name("z")],
                    initial: vec![(name("z"), 1)],
                    transitions: vec![],
                    invalid: vec![],
                    ends: vec![(name("z"), 1)],
                },
            ],
        );
        write_counts_parquet(&path, &counts).unwrap();
        assert_eq!(read_counts_parquet(&path).unwrap(), counts);
        // Order 2: tuples as JSON arrays.
        let t = |v: &[&str]| StateKey::Tuple(v.iter().map(|s| s.to_string()).collect());
        let counts = KeyedCounts::new(
            2,
            None,
            vec![GroupCounts {
                category: None,
                traces: 1,
                steps: 2,
                states: vec![t(&["a"]), t(&["a", "b,\"c"])],
                initial: vec![(t(&["a"]), 1)],
                transitions: vec![(t(&["a"]), t(&["a", "b,\"c"]), 1)],
                invalid: vec![],
                ends: vec![(t(&["a", "b,\"c"]), 1)],
            }],
        );
        write_counts_parquet(&path, &counts).unwrap();
        assert_eq!(read_counts_parquet(&path).unwrap(), counts);
    }

    /// A table of the given columns (all strings but `n`) and metadata.
    fn table(path: &Path, cols: &[(&str, Vec<Option<&str>>)], n: Vec<i64>, meta: &[(&str, &str)]) {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for (name, values) in cols {
            fields.push(Field::new(*name, DataType::Utf8, true));
            arrays.push(Arc::new(StringArray::from(values.clone())));
        }
        fields.push(Field::new("n", DataType::Int64, true));
        arrays.push(Arc::new(arrow_array::Int64Array::from(n)));
        let schema = Arc::new(Schema::new(fields));
        let props = parquet::file::properties::WriterProperties::builder()
            .set_key_value_metadata(Some(
                meta.iter()
                    .map(|(k, v)| KeyValue::new(k.to_string(), v.to_string()))
                    .collect(),
            ))
            .build();
        let mut w =
            ArrowWriter::try_new(File::create(path).unwrap(), schema.clone(), Some(props)).unwrap();
        w.write(&RecordBatch::try_new(schema, arrays).unwrap())
            .unwrap();
        w.close().unwrap();
    }

    #[test]
    fn bad_counts_tables_are_located_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.parquet");
        let header = [("format", "augur-counts"), ("version", "1"), ("order", "1")];
        let err = |cols: &[(&str, Vec<Option<&str>>)], n: Vec<i64>, meta: &[(&str, &str)]| {
            table(&path, cols, n, meta);
            read_counts_parquet(&path)
                .unwrap_err()
                .to_string()
                .replace(dir.path().to_str().unwrap(), "DIR")
        };
        let rows = |kind: Option<&'static str>, from: Option<&'static str>| {
            vec![
                ("kind", vec![Some("step"), kind]),
                ("from_state", vec![Some("a"), from]),
                ("to_state", vec![None, None]),
            ]
        };
        // An engine's output read as it is: the rows counted, the header still needed.
        assert_eq!(
            err(&rows(Some("end"), Some("a")), vec![1, 1], &[]),
            "DIR/c.parquet: not an augur-counts table: no key-value metadata `format` (an \
             augur-counts table carries format, version and order; see docs/scale.md)"
        );
        assert_eq!(
            err(&rows(Some("stop"), Some("a")), vec![1, 1], &header),
            "DIR/c.parquet: not an augur-counts table: row 2: column `kind` is `stop`; \
             expected step, initial, transition, invalid or end"
        );
        assert_eq!(
            err(&rows(Some("end"), None), vec![1, 1], &header),
            "DIR/c.parquet: row 2: column `from_state` (the state column) is null"
        );
        assert_eq!(
            err(&rows(Some("transition"), Some("a")), vec![1, 1], &header),
            "DIR/c.parquet: row 2: column `to_state` (the state column) is null"
        );
        assert_eq!(
            err(&rows(Some("end"), Some("a")), vec![1, -1], &header),
            "DIR/c.parquet: not an augur-counts table: row 2: column `n` (the count column) \
             is negative"
        );
        let order = [
            ("format", "augur-counts"),
            ("version", "1"),
            ("order", "two"),
        ];
        assert_eq!(
            err(&rows(Some("end"), Some("a")), vec![1, 1], &order),
            "DIR/c.parquet: not an augur-counts table: key-value metadata `order` is `two`, \
             not a number"
        );
        let order2 = [("format", "augur-counts"), ("version", "1"), ("order", "2")];
        assert_eq!(
            err(&rows(Some("end"), Some("a")), vec![1, 1], &order2),
            "DIR/c.parquet: not an augur-counts table: row 1: column `from_state`: `a` is not \
             a JSON array of state names (the counts are of order 2)"
        );
        // A good one, rows in any order, `n` as SQL's signed integers, no category column.
        let good = vec![
            (
                "kind",
                vec![
                    Some("transition"),
                    Some("initial"),
                    Some("step"),
                    Some("end"),
                ],
            ),
            (
                "from_state",
                vec![Some("a"), Some("a"), Some("a"), Some("a")],
            ),
            ("to_state", vec![Some("a"), None, None, None]),
        ];
        table(&path, &good, vec![2, 1, 3, 1], &header);
        let c = read_counts_parquet(&path).unwrap();
        assert_eq!(c.groups.len(), 1);
        let g = &c.groups[0];
        assert_eq!((g.traces, g.steps), (1, 3));
        assert_eq!(g.transitions, [(name("a"), name("a"), 2)]);
        c.check().unwrap();
        // Issue 43: a key counted by two rows (it was summed), and a `step` row that the
        // moves and trace ends of its state do not add up to, are errors naming the rows.
        let mut twice = good.clone();
        twice[0].1.push(Some("transition"));
        twice[1].1.push(Some("a"));
        twice[2].1.push(Some("a"));
        assert_eq!(
            err(&twice, vec![1, 1, 3, 1, 1], &header),
            "DIR/c.parquet: not an augur-counts table: row 5: a `transition` row for `a` -> \
             `a` again (first at row 1); a counts table gives each key its total once"
        );
        assert_eq!(
            err(&good, vec![2, 1, 4, 1], &header),
            "DIR/c.parquet: not an augur-counts table: row 3: the `step` row of state `a` \
             counts 4 steps, but the moves that leave it and the traces that end in it add up \
             to 3"
        );
    }
}
