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
#![deny(missing_docs)]

mod count;
mod counts;

pub use count::{count_steps, StepsRead};

pub use counts::{read_counts_parquet, write_counts_parquet, COUNTS_COLUMNS};

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
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
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
    /// A counts table lacks a column it needs.
    #[error("{file}: no column `{column}` (a counts table has the columns kind, from_state, to_state, n and, by category, category); the file's columns: {available}")]
    MissingCountsColumn {
        /// The file.
        file: String,
        /// The column looked for.
        column: String,
        /// The file's top-level columns, comma-separated.
        available: String,
    },
    /// A counts table whose header or rows are not those of keyed counts.
    #[error("{file}: not an augur-counts table: {message}")]
    Counts {
        /// The file.
        file: String,
        /// What is wrong (and where).
        message: String,
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
///
/// States are numbered by first appearance in the traces taken in order (trace after trace,
/// each in step order): the numbering the learner gives the states of a JSON Lines file with
/// the same traces.
#[derive(Clone, Debug, Default)]
pub struct StepTable {
    /// The file read.
    pub file: String,
    /// State names, by first appearance in the traces in order.
    pub state_names: Vec<String>,
    /// `offsets[t]..offsets[t+1]` are trace t's positions in `states`.
    pub offsets: Vec<usize>,
    /// Every step's state (an index into `state_names`), trace after trace, in order.
    pub states: Vec<u32>,
    /// The trace ids, concatenated (trace t's is `id_text[id_ends[t-1]..id_ends[t]]`): one
    /// allocation, not one per trace.
    id_text: String,
    id_ends: Vec<usize>,
    /// Every step's row in the file (1-based), aligned with `states`; empty when the file was
    /// already grouped by trace and ordered (then position p is row p + 1).
    rows: Vec<u64>,
}

impl StepTable {
    /// Number of traces.
    pub fn num_traces(&self) -> usize {
        self.id_ends.len()
    }

    /// Number of steps.
    pub fn num_steps(&self) -> usize {
        self.states.len()
    }

    /// Trace `t`'s states, in order.
    pub fn trace_states(&self, t: usize) -> &[u32] {
        &self.states[self.offsets[t]..self.offsets[t + 1]]
    }

    /// Trace `t`'s id (traces are numbered by first appearance in the file).
    pub fn trace_id(&self, t: usize) -> &str {
        let start = if t == 0 { 0 } else { self.id_ends[t - 1] };
        &self.id_text[start..self.id_ends[t]]
    }

    /// The row in the file (1-based) of the step at position `p` of `states`.
    pub fn row(&self, p: usize) -> u64 {
        self.rows.get(p).copied().unwrap_or(p as u64 + 1)
    }

    /// Whether the rows had to be reordered: the file was not grouped by trace id with each
    /// trace's rows in increasing order (read in one pass without copying when it is).
    pub fn reordered(&self) -> bool {
        !self.rows.is_empty()
    }

    /// The traces as the learner reads them: named steps, each with its row in the file as
    /// its line.
    pub fn traces(&self) -> impl Iterator<Item = Trace> + '_ {
        (0..self.num_traces()).map(move |t| {
            let range = self.offsets[t]..self.offsets[t + 1];
            let steps = range
                .map(|p| Step {
                    line: self.row(p) as usize,
                    kind: StepKind::Named(self.state_names[self.states[p] as usize].clone()),
                    source: None,
                })
                .collect::<Vec<_>>();
            Trace {
                id: self.trace_id(t).to_string(),
                category: None,
                line: steps.first().map_or(0, |s| s.line),
                steps,
            }
        })
    }

    /// Renumbers the states by first appearance in `states` (trace after trace).
    fn number_states_in_order(&mut self) {
        let mut map = vec![u32::MAX; self.state_names.len()];
        let mut names = Vec::with_capacity(self.state_names.len());
        for s in &mut self.states {
            let m = &mut map[*s as usize];
            if *m == u32::MAX {
                *m = names.len() as u32;
                names.push(std::mem::take(&mut self.state_names[*s as usize]));
            }
            *s = *m;
        }
        self.state_names = names;
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

/// The value at `i` of a column of an internable type, as a name (`None` for a null).
fn value_string(col: &dyn Array, i: usize, role: &Role<'_>) -> Result<Option<String>> {
    if col.is_null(i) {
        return Ok(None);
    }
    macro_rules! ints {
        ($t:ty) => {
            col.as_primitive::<$t>().value(i).to_string()
        };
    }
    Ok(Some(match col.data_type() {
        DataType::Dictionary(_, _) => {
            let dict = col.as_any_dictionary();
            let k = dict.normalized_keys()[i];
            return value_string(dict.values().as_ref(), k, role);
        }
        DataType::Utf8 => col.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => col.as_string::<i64>().value(i).to_string(),
        DataType::Utf8View => col.as_string_view().value(i).to_string(),
        DataType::Binary => hex(col.as_binary::<i32>().value(i)),
        DataType::LargeBinary => hex(col.as_binary::<i64>().value(i)),
        DataType::BinaryView => hex(col.as_binary_view().value(i)),
        DataType::FixedSizeBinary(_) => hex(col.as_fixed_size_binary().value(i)),
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        other => return Err(role.mistyped(other, KEY_TYPES)),
    }))
}

/// The keys of a dictionary column as indices into its values: 32-bit keys (what string
/// columns are read as) in place, others converted.
enum Keys<'a> {
    I32(&'a [i32]),
    Other(Vec<usize>),
}

impl<'a> Keys<'a> {
    fn of(col: &'a dyn Array) -> Keys<'a> {
        match col.as_dictionary_opt::<Int32Type>() {
            Some(d) => Keys::I32(d.keys().values()),
            None => Keys::Other(col.as_any_dictionary().normalized_keys()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Keys::I32(k) => k.len(),
            Keys::Other(k) => k.len(),
        }
    }

    /// The key of row `i` (a negative one as an index past any dictionary).
    #[inline]
    fn get(&self, i: usize) -> usize {
        match self {
            Keys::I32(k) => usize::try_from(k[i]).unwrap_or(usize::MAX),
            Keys::Other(k) => k[i],
        }
    }
}

/// The first null of a column, as an error.
fn first_null(col: &dyn Array, role: &Role<'_>, first_row: u64) -> Result<()> {
    if col.null_count() > 0 {
        if let Some(i) = (0..col.len()).find(|&i| col.is_null(i)) {
            return Err(role.null(first_row + i as u64));
        }
    }
    Ok(())
}

/// Appends, for each row of `col`, the id of its value in `interner` (`first_row`: the
/// 1-based row of the column's first value, for messages). Values get ids in the order they
/// first appear; a dictionary-encoded column's values are named once per dictionary, not
/// once per row.
fn intern_column(
    col: &dyn Array,
    interner: &mut Interner,
    out: &mut Vec<u32>,
    role: &Role<'_>,
    first_row: u64,
) -> Result<()> {
    first_null(col, role, first_row)?;
    macro_rules! each {
        ($arr:expr, |$v:ident| $name:expr) => {{
            let arr = $arr;
            out.reserve(arr.len());
            for i in 0..arr.len() {
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
            // Each dictionary value is named (and interned) when a row first uses it.
            let dict = col.as_any_dictionary();
            let values = dict.values().as_ref();
            let mut slot = vec![u32::MAX; values.len()];
            let keys = Keys::of(col);
            out.reserve(keys.len());
            for i in 0..keys.len() {
                let k = keys.get(i);
                let id = match slot.get(k) {
                    Some(&id) if id != u32::MAX => id,
                    Some(_) => match value_string(values, k, role)? {
                        Some(name) => {
                            let id = interner.id(&name);
                            slot[k] = id;
                            id
                        }
                        None => return Err(role.null(first_row + i as u64)),
                    },
                    None => return Err(role.null(first_row + i as u64)),
                };
                out.push(id);
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
    if col.null_count() == 0 {
        // 64-bit values without nulls: copied as they are.
        let values = match col.data_type() {
            DataType::Int64 => Some(col.as_primitive::<Int64Type>().values()),
            DataType::Timestamp(TimeUnit::Second, _) => {
                Some(col.as_primitive::<TimestampSecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                Some(col.as_primitive::<TimestampMillisecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Some(col.as_primitive::<TimestampMicrosecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Some(col.as_primitive::<TimestampNanosecondType>().values())
            }
            _ => None,
        };
        if let Some(v) = values {
            out.extend_from_slice(v);
            return Ok(());
        }
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

/// A Parquet file opened for reading the columns of a step table.
struct ParquetSource<'a> {
    path: &'a Path,
    file: &'a str,
    meta: ArrowReaderMetadata,
    /// The schema indices of the columns (trace id, order, states...).
    idx: Vec<usize>,
    /// Where each of them is in a projected batch (trace id, order, states...).
    positions: Vec<usize>,
    /// The rows of each row group.
    sizes: Vec<u64>,
}

impl<'a> ParquetSource<'a> {
    /// Reads the file's metadata and finds the columns (an error names a missing or
    /// mistyped one).
    fn open(path: &'a Path, file: &'a str, columns: &Columns) -> Result<ParquetSource<'a>> {
        let f = open_file(path, file)?;
        let meta = ArrowReaderMetadata::load(&f, ArrowReaderOptions::new())
            .map_err(|e| parquet_error(file, &e))?;
        let idx = locate(file, meta.schema(), columns)?;
        let (_, positions) = positions_of(&idx);
        // String state columns are read as dictionaries (as Parquet usually stores
        // them), so that a state is named once per dictionary, not once per row.
        let mut fields: Vec<Field> = meta
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut hinted = false;
        // So are the trace ids: runs of equal ids are then runs of equal keys, an id
        // named once per run without being copied for every row.
        for (role, &i) in idx.iter().enumerate() {
            if role == 1 || idx[1] == i {
                continue;
            }
            let t = fields[i].data_type().clone();
            if matches!(t, DataType::Utf8 | DataType::LargeUtf8) {
                let f = fields[i].clone();
                fields[i] =
                    f.with_data_type(DataType::Dictionary(Box::new(DataType::Int32), Box::new(t)));
                hinted = true;
            }
        }
        let meta = if hinted {
            let schema = Arc::new(Schema::new_with_metadata(
                fields,
                meta.schema().metadata().clone(),
            ));
            ArrowReaderMetadata::try_new(
                meta.metadata().clone(),
                ArrowReaderOptions::new().with_schema(schema),
            )
            .unwrap_or(meta)
        } else {
            meta
        };
        let sizes = meta
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows().max(0) as u64)
            .collect();
        Ok(ParquetSource {
            path,
            file,
            meta,
            idx,
            positions,
            sizes,
        })
    }

    /// The batches of the given row groups, only the step table's columns decoded.
    fn reader(
        &self,
        groups: Vec<usize>,
    ) -> Result<impl Iterator<Item = Result<RecordBatch>> + use<'a>> {
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
            open_file(self.path, self.file)?,
            self.meta.clone(),
        );
        let mask = ProjectionMask::roots(builder.parquet_schema(), self.idx.iter().copied());
        let reader = builder
            .with_projection(mask)
            .with_row_groups(groups)
            .with_batch_size(64 * 1024)
            .build()
            .map_err(|e| parquet_error(self.file, &e))?;
        let file = self.file;
        Ok(reader.map(move |b| b.map_err(|e| parquet_error(file, &e))))
    }

    /// Contiguous runs of row groups of about equal rows, one per thread (up to `threads`).
    fn parts(&self, threads: usize) -> Vec<(Vec<usize>, u64)> {
        split(&self.sizes, threads.min(self.sizes.len()).max(1))
    }
}

/// The threads to read with: one per core.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn open_file(path: &Path, file: &str) -> Result<File> {
    File::open(path).map_err(|e| ColumnarError::Io {
        file: file.to_string(),
        message: format!("cannot open: {e}"),
    })
}

fn parquet_error(file: &str, e: &dyn std::fmt::Display) -> ColumnarError {
    ColumnarError::Format {
        file: file.to_string(),
        format: "Parquet",
        message: e.to_string(),
    }
}

/// The projected batches have the chosen columns in schema order: the columns' schema
/// indices sorted, and where each is among them.
fn positions_of(idx: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut sorted = idx.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let positions = idx
        .iter()
        .map(|i| sorted.binary_search(i).unwrap_or(0))
        .collect();
    (sorted, positions)
}

/// Reads the step table of a Parquet or Arrow IPC file (by its extension, see
/// [`ColumnarFormat::from_path`]), reading only the named columns.
///
/// A file already grouped by trace id with each trace's rows in increasing order (what
/// writers of step tables usually give) is read in one pass, a Parquet file's row groups in
/// parallel, its rows never copied or sorted; another is read again and sorted.
pub fn read_steps(path: &Path, columns: &Columns) -> Result<StepTable> {
    let file_name = path.display().to_string();
    let format = ColumnarFormat::from_path(path)
        .ok_or_else(|| ColumnarError::NotColumnar(file_name.clone()))?;
    let open = || {
        File::open(path).map_err(|e| ColumnarError::Io {
            file: file_name.clone(),
            message: format!("cannot open: {e}"),
        })
    };
    let bad = |format: &'static str| {
        let file = file_name.clone();
        move |e: &dyn std::fmt::Display| ColumnarError::Format {
            file: file.clone(),
            format,
            message: e.to_string(),
        }
    };
    let mut table = match format {
        ColumnarFormat::Parquet => {
            let source = ParquetSource::open(path, &file_name, columns)?;
            let parts = source.parts(threads());
            let sizes = &source.sizes;
            let total_rows: u64 = sizes.iter().sum();
            let all = || (0..sizes.len()).collect::<Vec<_>>();
            let chunks: Vec<Result<Chunk>> = if parts.len() <= 1 {
                vec![read_chunk(
                    &file_name,
                    columns,
                    &source.positions,
                    1,
                    total_rows,
                    source.reader(all())?,
                )]
            } else {
                std::thread::scope(|s| {
                    let handles: Vec<_> = parts
                        .iter()
                        .map(|(groups, first_row)| {
                            let source = &source;
                            let file_name = &file_name;
                            // The first range's states become the table's: room for all.
                            let capacity = if *first_row == 1 {
                                total_rows
                            } else {
                                groups.iter().map(|&g| sizes[g]).sum()
                            };
                            s.spawn(move || {
                                read_chunk(
                                    file_name,
                                    columns,
                                    &source.positions,
                                    *first_row,
                                    capacity,
                                    source.reader(groups.clone())?,
                                )
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                        .collect()
                })
            };
            match ordered(&file_name, chunks)? {
                Some(table) => table,
                None => collect(
                    &file_name,
                    columns,
                    &source.positions,
                    source.reader(all())?,
                )?,
            }
        }
        ColumnarFormat::ArrowIpc => {
            let err = bad("Arrow IPC");
            let probe =
                arrow_ipc::reader::FileReader::try_new(open()?, None).map_err(|e| err(&e))?;
            let schema: SchemaRef = probe.schema();
            let idx = locate(&file_name, &schema, columns)?;
            let (sorted, positions) = positions_of(&idx);
            let reader = || -> Result<_> {
                let r = arrow_ipc::reader::FileReader::try_new(open()?, Some(sorted.clone()))
                    .map_err(|e| err(&e))?;
                Ok(r.map(|b| b.map_err(|e| err(&e))))
            };
            let chunk = read_chunk(&file_name, columns, &positions, 1, 0, reader()?);
            match ordered(&file_name, vec![chunk])? {
                Some(table) => table,
                None => collect(&file_name, columns, &positions, reader()?)?,
            }
        }
    };
    table.file = file_name;
    Ok(table)
}

/// The step table of ranges read in order, `None` when the rows must be sorted. An error of
/// a range is the file's first error, unless an earlier range was out of order (then the
/// sorting reader finds the first error).
fn ordered(file: &str, chunks: Vec<Result<Chunk>>) -> Result<Option<StepTable>> {
    let mut ok = Vec::with_capacity(chunks.len());
    for c in chunks {
        let c = c?;
        let in_order = c.ordered;
        ok.push(c);
        if !in_order {
            return Ok(None);
        }
    }
    Ok(join_chunks(file, ok))
}

/// Splits row groups of the given sizes into up to `parts` contiguous runs of about equal
/// rows: each run's row groups and its first row (1-based).
fn split(sizes: &[u64], parts: usize) -> Vec<(Vec<usize>, u64)> {
    let total = u128::from(sizes.iter().sum::<u64>().max(1));
    let mut out: Vec<(Vec<usize>, u64)> = Vec::new();
    let (mut row, mut before, mut current) = (1u64, 0u64, usize::MAX);
    for (g, &n) in sizes.iter().enumerate() {
        // The part a group's middle row falls in.
        let p = ((u128::from(before) + u128::from(n / 2)) * parts as u128 / total) as usize;
        if p != current {
            out.push((Vec::new(), row));
            current = p;
        }
        if let Some(last) = out.last_mut() {
            last.0.push(g);
        }
        row += n;
        before += n;
    }
    out
}

/// The steps of a contiguous range of rows, read in file order by one thread: states as
/// ids local to the range (by first appearance), and the runs of equal trace ids.
#[derive(Default)]
struct Chunk {
    /// The range's first row (1-based).
    first_row: u64,
    /// Rows read.
    len: usize,
    states: Interner,
    state_of: Vec<u32>,
    /// Where each run of rows with one trace id starts (positions in the range).
    run_starts: Vec<usize>,
    /// The runs' trace ids, concatenated; run r's ends at `id_ends[r]`.
    id_text: String,
    id_ends: Vec<usize>,
    /// The hash of each run's id ([`id_hash`]), sorted; made only when the ids are not
    /// increasing ([`Chunk::hash_ids`]).
    id_hashes: Vec<u64>,
    /// Whether each run's id is greater than the one before in [`id_less`]'s order (then no
    /// id repeats within the range, and no hashes are needed).
    increasing: bool,
    /// False once a run's order values are not increasing: the range is not in order.
    ordered: bool,
    first_order: i64,
    last_order: i64,
    order_buf: Vec<i64>,
    /// With several state columns: each column's values and the joined name.
    parts: Vec<Interner>,
    part_ids: Vec<Vec<u32>>,
    name: String,
}

impl Chunk {
    fn last_id(&self) -> Option<&str> {
        let end = *self.id_ends.last()?;
        let start = self
            .id_ends
            .len()
            .checked_sub(2)
            .map_or(0, |r| self.id_ends[r]);
        Some(&self.id_text[start..end])
    }

    fn first_id(&self) -> Option<&str> {
        Some(&self.id_text[..*self.id_ends.first()?])
    }

    /// The sorted hashes of the runs' ids (once).
    fn hash_ids(&mut self) {
        if self.id_hashes.len() == self.id_ends.len() {
            return;
        }
        let mut start = 0;
        self.id_hashes = self
            .id_ends
            .iter()
            .map(|&end| {
                let h = id_hash(&self.id_text[start..end]);
                start = end;
                h
            })
            .collect();
        self.id_hashes.sort_unstable();
    }

    fn start_run(&mut self, pos: usize, id: &str) {
        if self.increasing && self.last_id().is_some_and(|prev| !id_less(prev, id)) {
            self.increasing = false;
        }
        self.run_starts.push(pos);
        self.id_text.push_str(id);
        self.id_ends.push(self.id_text.len());
    }

    /// Appends the runs of equal trace ids of `col` (the rows from position `self.len` on):
    /// a row starts a run when its id differs from the previous row's, compared in place (a
    /// name is made only where a run starts).
    fn trace_runs(&mut self, col: &dyn Array, role: &Role<'_>, first_row: u64) -> Result<()> {
        first_null(col, role, first_row)?;
        let base = self.len;
        macro_rules! runs {
            ($arr:expr, |$v:ident| $name:expr) => {{
                let arr = $arr;
                for i in 0..arr.len() {
                    let $v = arr.value(i);
                    if i == 0 {
                        let name = $name;
                        if self.last_id() != Some(&*name) {
                            self.start_run(base, &name);
                        }
                    } else if $v != arr.value(i - 1) {
                        self.start_run(base + i, &$name);
                    }
                }
            }};
        }
        macro_rules! ints {
            ($t:ty) => {
                runs!(col.as_primitive::<$t>(), |v| v.to_string())
            };
        }
        match col.data_type() {
            DataType::Dictionary(_, _) => {
                // Equal keys are equal ids; a new key's id is named from the dictionary
                // (borrowed from it when it holds strings).
                let dict = col.as_any_dictionary();
                let values = dict.values().as_ref();
                let strs = values.as_string_opt::<i32>();
                let keys = Keys::of(col);
                for i in 0..keys.len() {
                    let k = keys.get(i);
                    if i > 0 && k == keys.get(i - 1) {
                        continue;
                    }
                    let name = match strs {
                        Some(s) if k < s.len() && !s.is_null(k) => {
                            std::borrow::Cow::Borrowed(s.value(k))
                        }
                        _ => match value_string(values, k, role)? {
                            Some(name) => std::borrow::Cow::Owned(name),
                            None => return Err(role.null(first_row + i as u64)),
                        },
                    };
                    if i > 0 || self.last_id() != Some(&*name) {
                        self.start_run(base + i, &name);
                    }
                }
            }
            DataType::Utf8 => runs!(col.as_string::<i32>(), |v| std::borrow::Cow::Borrowed(v)),
            DataType::LargeUtf8 => {
                runs!(col.as_string::<i64>(), |v| std::borrow::Cow::Borrowed(v))
            }
            DataType::Utf8View => {
                runs!(col.as_string_view(), |v| std::borrow::Cow::Borrowed(v))
            }
            DataType::Binary => runs!(col.as_binary::<i32>(), |v| hex(v)),
            DataType::LargeBinary => runs!(col.as_binary::<i64>(), |v| hex(v)),
            DataType::BinaryView => runs!(col.as_binary_view(), |v| hex(v)),
            DataType::FixedSizeBinary(_) => runs!(col.as_fixed_size_binary(), |v| hex(v)),
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

    /// Reads one batch whose columns `positions` are (trace id, order, states...).
    fn add_batch(
        &mut self,
        file: &str,
        columns: &Columns,
        positions: &[usize],
        batch: &RecordBatch,
    ) -> Result<()> {
        let n = batch.num_rows();
        let row = self.first_row + self.len as u64;
        let base = self.len;
        let first_run = self.run_starts.len();
        self.trace_runs(
            batch.column(positions[0]).as_ref(),
            &Role {
                file,
                column: &columns.trace_id,
                role: "trace id",
            },
            row,
        )?;
        let mut order = std::mem::take(&mut self.order_buf);
        order.clear();
        let col = batch.column(positions[1]);
        // 64-bit integers without nulls are read in place; other types converted.
        let values: &[i64] = match col.as_primitive_opt::<Int64Type>() {
            Some(a) if a.null_count() == 0 => a.values(),
            _ => {
                order_column(
                    col.as_ref(),
                    &mut order,
                    &Role {
                        file,
                        column: &columns.order,
                        role: "order",
                    },
                    row,
                )?;
                &order
            }
        };
        // Within a run, order values must increase.
        let mut next = first_run;
        for (i, &o) in values.iter().enumerate() {
            if self.run_starts.get(next) == Some(&(base + i)) {
                next += 1;
            } else if o <= self.last_order {
                self.ordered = false;
            }
            self.last_order = o;
        }
        if base == 0 {
            if let Some(&o) = values.first() {
                self.first_order = o;
            }
        }
        self.order_buf = order;
        if columns.state.len() == 1 {
            intern_column(
                batch.column(positions[2]).as_ref(),
                &mut self.states,
                &mut self.state_of,
                &Role {
                    file,
                    column: &columns.state[0],
                    role: "state",
                },
                row,
            )?;
        } else {
            if self.parts.is_empty() {
                self.parts = (0..columns.state.len())
                    .map(|_| Interner::default())
                    .collect();
                self.part_ids = vec![Vec::new(); columns.state.len()];
            }
            for (k, name) in columns.state.iter().enumerate() {
                self.part_ids[k].clear();
                intern_column(
                    batch.column(positions[2 + k]).as_ref(),
                    &mut self.parts[k],
                    &mut self.part_ids[k],
                    &Role {
                        file,
                        column: name,
                        role: "state",
                    },
                    row,
                )?;
            }
            for i in 0..n {
                self.name.clear();
                for (k, ids) in self.part_ids.iter().enumerate() {
                    if k > 0 {
                        self.name.push('|');
                    }
                    self.name.push_str(&self.parts[k].names[ids[i] as usize]);
                }
                let id = self.states.id(&self.name);
                self.state_of.push(id);
            }
        }
        self.len += n;
        Ok(())
    }
}

/// Reads a range of rows in file order (stopping early once it is out of order), `capacity`
/// rows reserved for its states.
fn read_chunk(
    file: &str,
    columns: &Columns,
    positions: &[usize],
    first_row: u64,
    capacity: u64,
    batches: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<Chunk> {
    let mut chunk = Chunk {
        first_row,
        ordered: true,
        increasing: true,
        ..Chunk::default()
    };
    // (Room for the rows the metadata announces, up to a bound: the file may lie.)
    chunk
        .state_of
        .reserve(usize::try_from(capacity.min(1 << 25)).unwrap_or(0));
    for batch in batches {
        chunk.add_batch(file, columns, positions, &batch?)?;
        if !chunk.ordered {
            break;
        }
    }
    // Ids not in increasing order are hashed and sorted here, on the chunk's own thread:
    // joining then checks that no trace id comes back by merging sorted lists.
    if !chunk.increasing {
        chunk.hash_ids();
    }
    Ok(chunk)
}

/// A strict total order on trace ids, shorter first, then by bytes: sequential ids such as
/// `sim-9`, `sim-10` or zero-padded ones increase in it. Ranges whose ids increase (in
/// themselves and from one range to the next) repeat no id, which needs no hashing.
fn id_less(a: &str, b: &str) -> bool {
    (a.len(), a.as_bytes()) < (b.len(), b.as_bytes())
}

/// The hash of a trace id, for the check that no trace id comes back (equal hashes are
/// then compared as ids).
fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// Whether two values are equal in sorted `a` or in sorted `b` or between them.
fn any_repeated(a: &[u64], b: &[u64]) -> bool {
    if a.windows(2).any(|w| w[0] == w[1]) || b.windows(2).any(|w| w[0] == w[1]) {
        return true;
    }
    let (mut i, mut k) = (0, 0);
    while i < a.len() && k < b.len() {
        match a[i].cmp(&b[k]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => k += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// Two sorted lists merged.
fn merge_sorted(a: Vec<u64>, b: &[u64]) -> Vec<u64> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut k) = (0, 0);
    while i < a.len() && k < b.len() {
        if a[i] <= b[k] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[k]);
            k += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[k..]);
    out
}

/// Joins ranges read in file order into a step table, if together they are in order: each
/// trace id's rows contiguous (a run may continue from one range into the next) with
/// increasing order values. `None` when they are not (the rows must then be sorted).
fn join_chunks(file: &str, chunks: Vec<Chunk>) -> Option<StepTable> {
    if chunks.iter().any(|c| !c.ordered) {
        return None;
    }
    let total: usize = chunks.iter().map(|c| c.len).sum();
    // When every range's ids increase and each range starts above (or continuing) the last
    // id of the one before, no id comes back; otherwise the hashes decide.
    let mut chunks = chunks;
    let mut increasing = true;
    let mut last: Option<&str> = None;
    for c in chunks.iter().filter(|c| c.len > 0) {
        increasing = increasing
            && c.increasing
            && match (last, c.first_id()) {
                (Some(l), Some(f)) => l == f || id_less(l, f),
                _ => true,
            };
        last = c.last_id().or(last);
    }
    if !increasing {
        for c in &mut chunks {
            c.hash_ids();
        }
    }
    let mut names = Interner::default();
    let mut states: Vec<u32> = Vec::new();
    let mut offsets: Vec<usize> =
        Vec::with_capacity(chunks.iter().map(|c| c.run_starts.len()).sum::<usize>() + 1);
    let mut id_text = String::new();
    let mut id_ends: Vec<usize> = Vec::with_capacity(offsets.capacity());
    let mut prev: Option<(String, i64)> = None;
    // The hashes of the trace ids so far (sorted), and whether two may be equal.
    let mut hashes: Vec<u64> = Vec::new();
    let mut maybe_repeated = false;
    let last_chunk = chunks.len().saturating_sub(1);
    for (k, mut c) in chunks.into_iter().enumerate() {
        if c.len == 0 {
            continue;
        }
        let base = states.len();
        // Chunks are in file order and number their states by first appearance: mapping
        // each chunk's states in its own order numbers them by first appearance overall
        // (the first chunk's numbering is kept as it is).
        let map: Vec<u32> = c.states.names.iter().map(|n| names.id(n)).collect();
        if base == 0 && map.iter().enumerate().all(|(i, &m)| m as usize == i) {
            states = std::mem::take(&mut c.state_of);
            states.reserve(total - states.len());
        } else {
            states.extend(c.state_of.iter().map(|&s| map[s as usize]));
        }
        let mut r0 = 0;
        if let Some((last_id, last_order)) = &prev {
            if c.first_id() == Some(last_id.as_str()) {
                // The last trace of the previous range goes on here.
                if c.first_order <= *last_order {
                    return None;
                }
                r0 = 1;
                // That trace's id is counted once, in the previous range.
                if let Ok(p) = c.id_hashes.binary_search(&id_hash(last_id)) {
                    c.id_hashes.remove(p);
                }
            }
        }
        let last = c.last_id().map(|id| (id.to_string(), c.last_order));
        // The runs' ids, copied at once (the first range's taken as they are).
        let start = if r0 == 0 { 0 } else { c.id_ends[0] };
        let shift = id_text.len();
        if shift == 0 && start == 0 {
            id_text = std::mem::take(&mut c.id_text);
        } else {
            id_text.push_str(&c.id_text[start..]);
        }
        for r in r0..c.run_starts.len() {
            offsets.push(base + c.run_starts[r]);
            id_ends.push(shift + c.id_ends[r] - start);
        }
        prev = last;
        maybe_repeated = maybe_repeated || any_repeated(&hashes, &c.id_hashes);
        if k < last_chunk {
            hashes = merge_sorted(hashes, &c.id_hashes);
        }
    }
    drop(hashes);
    offsets.push(states.len());
    // Each trace id must make one run only (compared as ids only when two hashes are equal).
    let mut seen: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::with_capacity_and_hasher(
        if maybe_repeated { id_ends.len() } else { 0 },
        Default::default(),
    );
    let mut start = 0;
    for &end in id_ends.iter().filter(|_| maybe_repeated) {
        if !seen.insert(&id_text[start..end]) {
            return None;
        }
        start = end;
    }
    drop(seen);
    Some(StepTable {
        file: file.to_string(),
        state_names: names.names,
        offsets,
        states,
        id_text,
        id_ends,
        rows: Vec::new(),
    })
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
    let mut id_text = String::new();
    let mut id_ends = Vec::with_capacity(traces.names.len());
    for id in &traces.names {
        id_text.push_str(id);
        id_ends.push(id_text.len());
    }
    let mut table = StepTable {
        file: file.to_string(),
        state_names: states.names,
        offsets,
        states: states_sorted,
        id_text,
        id_ends,
        rows,
    };
    table.number_states_in_order();
    Ok(table)
}

/// Rows per row group written: several row groups let a reader use several threads.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

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
        .set_max_row_group_size(ROW_GROUP_ROWS)
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

#[cfg(test)]
mod tests {
    use super::*;

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
