//! The readers and writers of a build without the cargo feature `parquet`: the same
//! signatures, each an error naming the file and the feature ([`ColumnarError::NotBuilt`]).

use std::path::Path;

use augur_learn::counts::KeyedCounts;

use crate::{ColumnarError, Columns, Result, StepTable, StepsRead};

fn not_built<T>(path: &Path) -> Result<T> {
    Err(ColumnarError::NotBuilt(path.display().to_string()))
}

/// Reads a step table (needs the feature `parquet`).
pub fn read_steps(path: &Path, _columns: &Columns) -> Result<StepTable> {
    not_built(path)
}

/// Counts a step table's transitions while reading it (needs the feature `parquet`).
pub fn count_steps(path: &Path, _columns: &Columns) -> Result<StepsRead> {
    not_built(path)
}

/// Reads a Parquet counts table (needs the feature `parquet`).
pub fn read_counts_parquet(path: &Path) -> Result<KeyedCounts> {
    not_built(path)
}

/// Writes a Parquet counts table (needs the feature `parquet`).
pub fn write_counts_parquet(path: &Path, _counts: &KeyedCounts) -> Result<()> {
    not_built(path)
}

/// Writes a Parquet step table (needs the feature `parquet`).
pub fn write_steps_parquet<'a>(
    path: &Path,
    _steps: impl IntoIterator<Item = (&'a str, i64, &'a str)>,
    _columns: &Columns,
) -> Result<()> {
    not_built(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reader_and_writer_names_the_file_and_the_feature() {
        let p = Path::new("traces.parquet");
        let c = Columns::default();
        let messages = [
            read_steps(p, &c).unwrap_err().to_string(),
            count_steps(p, &c).unwrap_err().to_string(),
            read_counts_parquet(p).unwrap_err().to_string(),
            write_counts_parquet(p, &KeyedCounts::new(1, None, Vec::new()))
                .unwrap_err()
                .to_string(),
            write_steps_parquet(p, [("t", 0, "s")], &c)
                .unwrap_err()
                .to_string(),
        ];
        for m in messages {
            assert!(m.starts_with("traces.parquet: "), "{m}");
            assert!(m.contains("--features parquet"), "{m}");
        }
    }
}
