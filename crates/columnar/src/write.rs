//! Writing a step table as Parquet.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;

use crate::{ColumnarError, Columns, Result};

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
