//! The crate's error type.

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
    /// A Parquet or Arrow IPC file given to a build without the cargo feature `parquet`.
    #[error(
        "{0}: this build of Augur reads and writes no Parquet or Arrow files; build it with the \
         cargo feature `parquet` (`cargo install --path . --features parquet`, or \
         `cargo build --release --features parquet`)"
    )]
    NotBuilt(String),
}

/// Result alias of this crate.
pub type Result<T, E = ColumnarError> = std::result::Result<T, E>;
