//! augur-columnar: traces stored as tables, one row per step, in Parquet or Arrow IPC files.
//!
//! A step table has a trace id column, an order column (a step index or a timestamp) and the
//! state, as one column or several ([`Columns`]; defaults `trace_id`, `step`, `state`, and the
//! [`Columns::preset`] `otel-genai` for OpenTelemetry GenAI spans exported to Parquet).
//! [`read_steps`] reads only those columns, interns strings by dictionary index when a column is
//! dictionary-encoded (the usual Parquet encoding of such columns), sorts each trace by its
//! order column and gives a [`StepTable`]; [`StepTable::traces`] hands its traces to the
//! learner (`augur_learn::pipeline::learn_from_traces`) like those of a JSON Lines file.
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
//! assert_eq!(table.state_names, ["b", "a"]);
//! let traces: Vec<_> = table.traces().collect();
//! assert_eq!(traces.len(), 2);
//! assert_eq!(traces[0].id, "t1");
//! assert_eq!(table.trace_states(0), [1, 0]);
//! ```
#![deny(missing_docs)]

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use augur_abstraction::{Step, StepKind, Trace};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use rustc_hash::FxHashMap;

/// Errors of reading and writing step tables.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ColumnarError {
    /// The file cannot be opened, read or written.
    #[error("{file}: {message}")]
    Io {
        /// The file.
        file: String,
        /// What failed.
        message: String,
    },
    /// The file is not a readable Parquet or Arrow IPC file (or uses an unsupported codec).
    #[error("{file}: not a readable {format} file: {message}")]
    Format {
        /// The file.
        file: String,
        /// `Parquet` or `Arrow IPC`.
        format: &'static str,
        /// The reader's message.
        message: String,
    },
    /// A column the options name is not in the file.
    #[error("{file}: no column `{column}` (the {role} column; name another with {option}); the file's columns: {available}")]
    MissingColumn {
        /// The file.
        file: String,
        /// The column looked for.
        column: String,
        /// Its role: `trace id`, `order` or `state`.
        role: &'static str,
        /// The option that names it.
        option: &'static str,
        /// The file's top-level columns, comma-separated.
        available: String,
    },
    /// A column whose type cannot serve its role.
    #[error("{file}: column `{column}` (the {role} column) has type {found}; expected {expected}")]
    ColumnType {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Its role.
        role: &'static str,
        /// Its Arrow type.
        found: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// A null in a column that needs a value in every row.
    #[error("{file}: row {row}: column `{column}` (the {role} column) is null")]
    Null {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Its role.
        role: &'static str,
        /// The row (1-based, in file order).
        row: u64,
    },
    /// Two steps of one trace with the same order value: their order is unknown.
    #[error("{file}: rows {first} and {second}: trace `{trace}` has two steps with {column} = {value}, so their order is unknown")]
    DuplicateOrder {
        /// The file.
        file: String,
        /// The trace id.
        trace: String,
        /// The order column.
        column: String,
        /// The repeated value.
        value: i64,
        /// The earlier row (1-based).
        first: u64,
        /// The later row (1-based).
        second: u64,
    },
    /// An unknown preset name.
    #[error("unknown column preset `{0}` (known: default, otel-genai)")]
    UnknownPreset(String),
    /// A file whose extension is neither Parquet's nor Arrow IPC's.
    #[error("{0}: not a columnar trace file (expected .parquet, .arrow, .ipc or .feather)")]
    NotColumnar(String),
}

/// Result alias of this crate.
pub type Result<T, E = ColumnarError> = std::result::Result<T, E>;

/// The columns of a step table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    /// The trace id column (strings, integers or binary ids, shown in hex).
    pub trace_id: String,
    /// The order column: integers or timestamps; each trace's steps are sorted by it.
    pub order: String,
    /// The state column(s): strings or integers. With several, a state is named by its values
    /// joined with `|` in the order given.
    pub state: Vec<String>,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            trace_id: "trace_id".into(),
            order: "step".into(),
            state: vec!["state".into()],
        }
    }
}

impl Columns {
    /// A named preset: `default` (`trace_id`, `step`, `state`) or `otel-genai` (OpenTelemetry
    /// GenAI spans exported to Parquet: `trace_id`, `start_time_unix_nano`, and the tool name
    /// attribute `gen_ai.tool.name` as the state).
    pub fn preset(name: &str) -> Result<Columns> {
        match name {
            "default" => Ok(Columns::default()),
            "otel-genai" => Ok(Columns {
                trace_id: "trace_id".into(),
                order: "start_time_unix_nano".into(),
                state: vec!["gen_ai.tool.name".into()],
            }),
            other => Err(ColumnarError::UnknownPreset(other.to_string())),
        }
    }
}

/// The two columnar file formats read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnarFormat {
    /// Apache Parquet (`.parquet`, `.pq`).
    Parquet,
    /// Arrow IPC file format (`.arrow`, `.ipc`, `.feather`).
    ArrowIpc,
}

impl ColumnarFormat {
    /// The format of a file by its extension (case-insensitive), `None` for other files.
    pub fn from_path(path: &Path) -> Option<ColumnarFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(ColumnarFormat::Parquet),
            "arrow" | "ipc" | "feather" => Some(ColumnarFormat::ArrowIpc),
            _ => None,
        }
    }
}

/// The steps of a table, grouped by trace and sorted by the order column.
#[derive(Clone, Debug, Default)]
pub struct StepTable {
    /// The file read.
    pub file: String,
    /// State names, by first appearance in file order.
    pub state_names: Vec<String>,
    /// Trace ids, by first appearance in file order (the order of the traces).
    pub trace_ids: Vec<String>,
    /// `offsets[t]..offsets[t+1]` are trace t's positions in `states` and `rows`.
    pub offsets: Vec<usize>,
    /// Every step's state (an index into `state_names`), trace after trace, in order.
    pub states: Vec<u32>,
    /// Every step's row in the file (1-based), aligned with `states`.
    pub rows: Vec<u64>,
}

impl StepTable {
    /// Number of traces.
    pub fn num_traces(&self) -> usize {
        self.trace_ids.len()
    }

    /// Number of steps.
    pub fn num_steps(&self) -> usize {
        self.states.len()
    }

    /// Trace `t`'s states, in order.
    pub fn trace_states(&self, t: usize) -> &[u32] {
        &self.states[self.offsets[t]..self.offsets[t + 1]]
    }

    /// The traces as the learner reads them: named steps, each with its row in the file as
    /// its line.
    pub fn traces(&self) -> impl Iterator<Item = Trace> + '_ {
        (0..self.num_traces()).map(move |t| {
            let range = self.offsets[t]..self.offsets[t + 1];
            let steps = self.states[range.clone()]
                .iter()
                .zip(&self.rows[range])
                .map(|(&s, &row)| Step {
                    line: row as usize,
                    kind: StepKind::Named(self.state_names[s as usize].clone()),
                    source: None,
                })
                .collect::<Vec<_>>();
            Trace {
                id: self.trace_ids[t].clone(),
                category: None,
                line: steps.first().map_or(0, |s| s.line),
                steps,
            }
        })
    }
}

/// Strings to dense ids, by first appearance.
#[derive(Default)]
struct Interner {
    ids: FxHashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }
}

/// One column being read: its name, role and the option naming it, for messages.
struct Role<'a> {
    file: &'a str,
    column: &'a str,
    role: &'static str,
}

impl Role<'_> {
    fn null(&self, row: u64) -> ColumnarError {
        ColumnarError::Null {
            file: self.file.to_string(),
            column: self.column.to_string(),
            role: self.role,
            row,
        }
    }
    fn mistyped(&self, found: &DataType, expected: &'static str) -> ColumnarError {
        ColumnarError::ColumnType {
            file: self.file.to_string(),
            column: self.column.to_string(),
            role: self.role,
            found: found.to_string(),
            expected,
        }
    }
}

const KEY_TYPES: &str = "a string, integer or binary column (or a dictionary of strings)";
const ORDER_TYPES: &str = "an integer or timestamp column";

/// Whether a type can be interned (trace ids and states).
fn internable(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(k, v) => k.is_integer() && internable(v),
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::FixedSizeBinary(_)
        | DataType::BinaryView => true,
        t => t.is_integer(),
    }
}

fn orderable(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Timestamp(..))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Appends, for each row of `col`, the id of its value in `interner` (`first_row`: the
/// 1-based row of the column's first value, for messages).
fn intern_column(
    col: &dyn Array,
    interner: &mut Interner,
    out: &mut Vec<u32>,
    role: &Role<'_>,
    first_row: u64,
) -> Result<()> {
    let check = |i: usize| -> Result<()> {
        if col.is_null(i) {
            Err(role.null(first_row + i as u64))
        } else {
            Ok(())
        }
    };
    macro_rules! each {
        ($arr:expr, |$v:ident| $name:expr) => {{
            let arr = $arr;
            for i in 0..arr.len() {
                check(i)?;
                let $v = arr.value(i);
                out.push(interner.id($name));
            }
        }};
    }
    macro_rules! ints {
        ($t:ty) => {
            each!(col.as_primitive::<$t>(), |v| &v.to_string())
        };
    }
    match col.data_type() {
        DataType::Dictionary(_, _) => {
            // Intern the dictionary's values once, then map each row by its key.
            let dict = col.as_any_dictionary();
            let mut value_ids = Vec::with_capacity(dict.values().len());
            intern_values(dict.values().as_ref(), interner, &mut value_ids, role)?;
            let keys = dict.normalized_keys();
            out.reserve(keys.len());
            for (i, &k) in keys.iter().enumerate() {
                check(i)?;
                match value_ids.get(k) {
                    Some(&Some(id)) => out.push(id),
                    _ => return Err(role.null(first_row + i as u64)),
                }
            }
        }
        DataType::Utf8 => each!(col.as_string::<i32>(), |v| v),
        DataType::LargeUtf8 => each!(col.as_string::<i64>(), |v| v),
        DataType::Utf8View => each!(col.as_string_view(), |v| v),
        DataType::Binary => each!(col.as_binary::<i32>(), |v| &hex(v)),
        DataType::LargeBinary => each!(col.as_binary::<i64>(), |v| &hex(v)),
        DataType::BinaryView => each!(col.as_binary_view(), |v| &hex(v)),
        DataType::FixedSizeBinary(_) => each!(col.as_fixed_size_binary(), |v| &hex(v)),
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        other => return Err(role.mistyped(other, KEY_TYPES)),
    }
    Ok(())
}

/// The ids of a dictionary's values (`None` for a null value).
fn intern_values(
    values: &dyn Array,
    interner: &mut Interner,
    out: &mut Vec<Option<u32>>,
    role: &Role<'_>,
) -> Result<()> {
    let mut ids = Vec::with_capacity(values.len());
    if values.null_count() == 0 {
        intern_column(values, interner, &mut ids, role, 1)?;
        out.extend(ids.into_iter().map(Some));
        return Ok(());
    }
    for i in 0..values.len() {
        if values.is_null(i) {
            out.push(None);
        } else {
            ids.clear();
            intern_column(values.slice(i, 1).as_ref(), interner, &mut ids, role, 1)?;
            out.push(ids.first().copied());
        }
    }
    Ok(())
}

/// Appends each row's order value.
fn order_column(
    col: &dyn Array,
    out: &mut Vec<i64>,
    role: &Role<'_>,
    first_row: u64,
) -> Result<()> {
    macro_rules! each {
        ($arr:expr) => {{
            let arr = $arr;
            for i in 0..arr.len() {
                if arr.is_null(i) {
                    return Err(role.null(first_row + i as u64));
                }
                out.push(i64::try_from(arr.value(i)).map_err(|_| {
                    role.mistyped(col.data_type(), "order values that fit in a 64-bit integer")
                })?);
            }
        }};
    }
    match col.data_type() {
        DataType::Int8 => each!(col.as_primitive::<Int8Type>()),
        DataType::Int16 => each!(col.as_primitive::<Int16Type>()),
        DataType::Int32 => each!(col.as_primitive::<Int32Type>()),
        DataType::Int64 => each!(col.as_primitive::<Int64Type>()),
        DataType::UInt8 => each!(col.as_primitive::<UInt8Type>()),
        DataType::UInt16 => each!(col.as_primitive::<UInt16Type>()),
        DataType::UInt32 => each!(col.as_primitive::<UInt32Type>()),
        DataType::UInt64 => each!(col.as_primitive::<UInt64Type>()),
        DataType::Timestamp(unit, _) => match unit {
            TimeUnit::Second => each!(col.as_primitive::<TimestampSecondType>()),
            TimeUnit::Millisecond => each!(col.as_primitive::<TimestampMillisecondType>()),
            TimeUnit::Microsecond => each!(col.as_primitive::<TimestampMicrosecondType>()),
            TimeUnit::Nanosecond => each!(col.as_primitive::<TimestampNanosecondType>()),
        },
        other => return Err(role.mistyped(other, ORDER_TYPES)),
    }
    Ok(())
}

/// Finds the columns in a schema, checking their types; gives their indices.
fn locate(file: &str, schema: &Schema, columns: &Columns) -> Result<Vec<usize>> {
    let available = || {
        schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut wanted: Vec<(&str, &'static str, &'static str)> = vec![
        (&columns.trace_id, "trace id", "--trace-id-column"),
        (&columns.order, "order", "--order-column"),
    ];
    for s in &columns.state {
        wanted.push((s, "state", "--state-column"));
    }
    let mut idx = Vec::new();
    for (column, role, option) in wanted {
        let Ok(i) = schema.index_of(column) else {
            return Err(ColumnarError::MissingColumn {
                file: file.to_string(),
                column: column.to_string(),
                role,
                option,
                available: available(),
            });
        };
        let t = schema.field(i).data_type();
        let r = Role { file, column, role };
        if role == "order" {
            if !orderable(t) {
                return Err(r.mistyped(t, ORDER_TYPES));
            }
        } else if !internable(t) {
            return Err(r.mistyped(t, KEY_TYPES));
        }
        idx.push(i);
    }
    Ok(idx)
}

/// Reads the step table of a Parquet or Arrow IPC file (by its extension, see
/// [`ColumnarFormat::from_path`]), reading only the named columns.
pub fn read_steps(path: &Path, columns: &Columns) -> Result<StepTable> {
    let file_name = path.display().to_string();
    let format = ColumnarFormat::from_path(path)
        .ok_or_else(|| ColumnarError::NotColumnar(file_name.clone()))?;
    let f = File::open(path).map_err(|e| ColumnarError::Io {
        file: file_name.clone(),
        message: format!("cannot open: {e}"),
    })?;
    let bad = |format: &'static str| {
        let file = file_name.clone();
        move |e: &dyn std::fmt::Display| ColumnarError::Format {
            file: file.clone(),
            format,
            message: e.to_string(),
        }
    };
    match format {
        ColumnarFormat::Parquet => {
            let err = bad("Parquet");
            let builder = ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| err(&e))?;
            let idx = locate(&file_name, builder.schema(), columns)?;
            let mask = ProjectionMask::roots(builder.parquet_schema(), idx.iter().copied());
            // The projected batch has the chosen columns in schema order.
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let positions: Vec<usize> = idx
                .iter()
                .map(|i| sorted.binary_search(i).unwrap_or(0))
                .collect();
            let reader = builder
                .with_projection(mask)
                .with_batch_size(64 * 1024)
                .build()
                .map_err(|e| err(&e))?;
            collect(
                &file_name,
                columns,
                &positions,
                reader.map(|b| b.map_err(|e| err(&e))),
            )
        }
        ColumnarFormat::ArrowIpc => {
            let err = bad("Arrow IPC");
            let probe = arrow_ipc::reader::FileReader::try_new(f, None).map_err(|e| err(&e))?;
            let schema: SchemaRef = probe.schema();
            let idx = locate(&file_name, &schema, columns)?;
            let f = File::open(path).map_err(|e| ColumnarError::Io {
                file: file_name.clone(),
                message: format!("cannot open: {e}"),
            })?;
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let positions: Vec<usize> = idx
                .iter()
                .map(|i| sorted.binary_search(i).unwrap_or(0))
                .collect();
            let reader =
                arrow_ipc::reader::FileReader::try_new(f, Some(sorted)).map_err(|e| err(&e))?;
            collect(
                &file_name,
                columns,
                &positions,
                reader.map(|b| b.map_err(|e| err(&e))),
            )
        }
    }
}

/// Reads batches whose columns `positions` are (trace id, order, states...), groups the
/// steps by trace and sorts each trace by its order column.
fn collect(
    file: &str,
    columns: &Columns,
    positions: &[usize],
    batches: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<StepTable> {
    let mut traces = Interner::default();
    let mut states = Interner::default();
    let mut parts: Vec<Interner> = (0..columns.state.len())
        .map(|_| Interner::default())
        .collect();
    let mut trace_of: Vec<u32> = Vec::new();
    let mut order_of: Vec<i64> = Vec::new();
    let mut state_of: Vec<u32> = Vec::new();
    let mut part_ids: Vec<Vec<u32>> = vec![Vec::new(); columns.state.len()];
    let mut row = 1u64;
    for batch in batches {
        let batch = batch?;
        let n = batch.num_rows();
        intern_column(
            batch.column(positions[0]).as_ref(),
            &mut traces,
            &mut trace_of,
            &Role {
                file,
                column: &columns.trace_id,
                role: "trace id",
            },
            row,
        )?;
        order_column(
            batch.column(positions[1]).as_ref(),
            &mut order_of,
            &Role {
                file,
                column: &columns.order,
                role: "order",
            },
            row,
        )?;
        if columns.state.len() == 1 {
            intern_column(
                batch.column(positions[2]).as_ref(),
                &mut states,
                &mut state_of,
                &Role {
                    file,
                    column: &columns.state[0],
                    role: "state",
                },
                row,
            )?;
        } else {
            for (k, name) in columns.state.iter().enumerate() {
                part_ids[k].clear();
                intern_column(
                    batch.column(positions[2 + k]).as_ref(),
                    &mut parts[k],
                    &mut part_ids[k],
                    &Role {
                        file,
                        column: name,
                        role: "state",
                    },
                    row,
                )?;
            }
            let mut name = String::new();
            for i in 0..n {
                name.clear();
                for (k, ids) in part_ids.iter().enumerate() {
                    if k > 0 {
                        name.push('|');
                    }
                    name.push_str(&parts[k].names[ids[i] as usize]);
                }
                state_of.push(states.id(&name));
            }
        }
        row += n as u64;
    }
    // Group by trace (first appearance), then by order within a trace; equal order values in
    // one trace are an error. A stable sort keeps file order among equal keys.
    let mut perm: Vec<u32> = (0..trace_of.len() as u32).collect();
    perm.sort_by_key(|&i| (trace_of[i as usize], order_of[i as usize]));
    let mut offsets = vec![0usize; traces.names.len() + 1];
    for &t in &trace_of {
        offsets[t as usize + 1] += 1;
    }
    for t in 0..traces.names.len() {
        offsets[t + 1] += offsets[t];
    }
    for w in perm.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if trace_of[a] == trace_of[b] && order_of[a] == order_of[b] {
            return Err(ColumnarError::DuplicateOrder {
                file: file.to_string(),
                trace: traces.names[trace_of[a] as usize].clone(),
                column: columns.order.clone(),
                value: order_of[a],
                first: a.min(b) as u64 + 1,
                second: a.max(b) as u64 + 1,
            });
        }
    }
    let states_sorted: Vec<u32> = perm.iter().map(|&i| state_of[i as usize]).collect();
    let rows: Vec<u64> = perm.iter().map(|&i| i as u64 + 1).collect();
    Ok(StepTable {
        file: file.to_string(),
        state_names: states.names,
        trace_ids: traces.names,
        offsets,
        states: states_sorted,
        rows,
    })
}

/// Writes steps `(trace id, order, state)` as a Parquet step table with the given column
/// names (the first state column), snappy-compressed, strings dictionary-encoded.
pub fn write_steps_parquet<'a>(
    path: &Path,
    steps: impl IntoIterator<Item = (&'a str, i64, &'a str)>,
    columns: &Columns,
) -> Result<()> {
    let file = path.display().to_string();
    let io = |e: &dyn std::fmt::Display| ColumnarError::Io {
        file: file.clone(),
        message: e.to_string(),
    };
    let state = columns.state.first().map_or("state", String::as_str);
    let schema = Arc::new(Schema::new(vec![
        Field::new(&columns.trace_id, DataType::Utf8, false),
        Field::new(&columns.order, DataType::Int64, false),
        Field::new(state, DataType::Utf8, false),
    ]));
    let f = File::create(path).map_err(|e| io(&format!("cannot create: {e}")))?;
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut writer = ArrowWriter::try_new(f, schema.clone(), Some(props)).map_err(|e| io(&e))?;
    let mut it = steps.into_iter().peekable();
    const BATCH: usize = 64 * 1024;
    while it.peek().is_some() {
        let (mut t, mut o, mut s) = (Vec::new(), Vec::new(), Vec::new());
        for (ti, oi, si) in it.by_ref().take(BATCH) {
            t.push(ti);
            o.push(oi);
            s.push(si);
        }
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(t)),
            Arc::new(Int64Array::from(o)),
            Arc::new(StringArray::from(s)),
        ];
        let batch = RecordBatch::try_new(schema.clone(), cols).map_err(|e| io(&e))?;
        writer.write(&batch).map_err(|e| io(&e))?;
    }
    writer.close().map_err(|e| io(&e))?;
    Ok(())
}
