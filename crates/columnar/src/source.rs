//! A Parquet file opened for the columns of a step table, and the file helpers.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

use crate::decode::*;
use crate::read::*;
use crate::{ColumnarError, Columns, Result};

/// A Parquet file opened for reading the columns of a step table.
pub(crate) struct ParquetSource<'a> {
    pub(crate) path: &'a Path,
    pub(crate) file: &'a str,
    pub(crate) meta: ArrowReaderMetadata,
    /// The schema indices of the columns (trace id, order, states...).
    pub(crate) idx: Vec<usize>,
    /// Where each of them is in a projected batch (trace id, order, states...).
    pub(crate) positions: Vec<usize>,
    /// The rows of each row group.
    pub(crate) sizes: Vec<u64>,
}

impl<'a> ParquetSource<'a> {
    /// Reads the file's metadata and finds the columns (an error names a missing or
    /// mistyped one).
    pub(crate) fn open(
        path: &'a Path,
        file: &'a str,
        columns: &Columns,
    ) -> Result<ParquetSource<'a>> {
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
    pub(crate) fn reader(
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
    pub(crate) fn parts(&self, threads: usize) -> Vec<(Vec<usize>, u64)> {
        split(&self.sizes, threads.min(self.sizes.len()).max(1))
    }
}

/// `work(groups, first_row)` for each part, each on its own scoped thread, in the parts'
/// order (a panic in one is resumed here).
pub(crate) fn on_threads<T: Send>(
    parts: &[(Vec<usize>, u64)],
    work: impl Fn(&[usize], u64) -> T + Sync,
) -> Vec<T> {
    let work = &work;
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter()
            .map(|(groups, first_row)| s.spawn(move || work(groups, *first_row)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// The threads to read with: one per core.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub(crate) fn open_file(path: &Path, file: &str) -> Result<File> {
    File::open(path).map_err(|e| ColumnarError::Io {
        file: file.to_string(),
        message: format!("cannot open: {e}"),
    })
}

pub(crate) fn parquet_error(file: &str, e: &dyn std::fmt::Display) -> ColumnarError {
    ColumnarError::Format {
        file: file.to_string(),
        format: "Parquet",
        message: e.to_string(),
    }
}

/// The projected batches have the chosen columns in schema order: the columns' schema
/// indices sorted, and where each is among them.
pub(crate) fn positions_of(idx: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut sorted = idx.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let positions = idx
        .iter()
        .map(|i| sorted.binary_search(i).unwrap_or(0))
        .collect();
    (sorted, positions)
}
