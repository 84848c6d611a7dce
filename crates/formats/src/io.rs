//! Format dispatch: [`read_model`] by extension, [`write_model`] by [`Format`].

/// Options for reading models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Give states without successors a self-loop (listed in the [`crate::BuildReport`])
    /// instead of failing. Default `true`, as in PRISM.
    pub fix_deadlocks: bool,
    /// The largest number of states a model may have: a file that declares more (in a header
    /// or by a state index) is refused with a located error before anything is allocated for
    /// them. `None`: no limit (allocations then grow with the data read, and fail cleanly).
    pub max_states: Option<usize>,
    /// The largest number of transitions a learned model kept implicitly (the `smoothing`
    /// field of an Augur JSON file) may expand to: its size is not bounded by the file's, so
    /// it is counted first and refused above this, before anything is allocated for it.
    /// Default [`DEFAULT_MAX_SMOOTHED_TRANSITIONS`]; `None`: no limit.
    pub max_smoothed_transitions: Option<usize>,
}

/// The default of [`ReadOptions::max_smoothed_transitions`]: 2^24 transitions (about 200 MB
/// in memory).
pub const DEFAULT_MAX_SMOOTHED_TRANSITIONS: usize = 1 << 24;

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            fix_deadlocks: true,
            max_states: None,
            max_smoothed_transitions: Some(DEFAULT_MAX_SMOOTHED_TRANSITIONS),
        }
    }
}

use crate::error::{FormatError, Result};
use augur_dtmc::BuildReport;
use augur_dtmc::Dtmc;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A model file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// PRISM explicit files (`.tra` + `.lab`, `.srew`, `.trew`, `.sta`).
    Tra,
    /// Storm's DRN.
    Drn,
    /// Augur's JSON.
    Json,
    /// Graphviz DOT (write only).
    Dot,
    /// The PRISM language (write only here; reading is `augur-prism`'s job).
    Prism,
}

impl Format {
    /// All formats.
    pub const ALL: [Format; 5] = [
        Format::Tra,
        Format::Drn,
        Format::Json,
        Format::Dot,
        Format::Prism,
    ];

    /// The format's name as used on the command line (`tra`, `drn`, `json`, `dot`, `prism`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Tra => "tra",
            Format::Drn => "drn",
            Format::Json => "json",
            Format::Dot => "dot",
            Format::Prism => "prism",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Prism => "pm",
            f => f.name(),
        }
    }

    /// Whether [`read_model`] reads this format.
    pub fn readable(self) -> bool {
        matches!(self, Format::Tra | Format::Drn | Format::Json)
    }

    /// The format of a path, by extension (`.tra`, `.drn`, `.json`, `.dot`/`.gv`,
    /// `.pm`/`.prism`), case-insensitive.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "tra" => Format::Tra,
            "drn" => Format::Drn,
            "json" => Format::Json,
            "dot" | "gv" => Format::Dot,
            "pm" | "prism" | "nm" => Format::Prism,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "tra" | "explicit" => Ok(Format::Tra),
            "drn" => Ok(Format::Drn),
            "json" => Ok(Format::Json),
            "dot" => Ok(Format::Dot),
            "prism" | "pm" => Ok(Format::Prism),
            _ => Err(format!(
                "unknown format `{s}` (expected tra, drn, json, dot or prism)"
            )),
        }
    }
}

fn open(path: &Path) -> Result<BufReader<File>> {
    crate::confine::open(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })
}

/// Reads a model file chosen by extension: `.tra` (with its same-stem companions), `.drn`,
/// `.json`. PRISM-language files are not read here (see `augur-prism`).
pub fn read_model(path: &Path, opts: &ReadOptions) -> Result<(Dtmc, BuildReport)> {
    match Format::from_path(path) {
        Some(Format::Tra) => crate::explicit::read_prism_explicit(path, opts),
        Some(Format::Drn) => crate::drn::read_drn(open(path)?, path, opts),
        Some(Format::Json) => crate::json::read_json(open(path)?, path, opts),
        _ => Err(FormatError::UnknownFormat(path.to_path_buf())),
    }
}

/// Writes a model in a format to a stream. For [`Format::Tra`] this is the `.tra` file only;
/// use [`write_model_to_path`] to get the `.lab`, `.srew`, `.trew`, `.sta` companions too.
pub fn write_model(dtmc: &Dtmc, format: Format, w: &mut dyn Write) -> Result<()> {
    refuse_intervals(dtmc, format)?;
    match format {
        Format::Tra => crate::explicit::write_tra(dtmc, w),
        Format::Drn => crate::drn::write_drn(dtmc, w),
        Format::Json => crate::json::write_json(dtmc, w),
        Format::Dot => crate::dot::write_dot(dtmc, w),
        Format::Prism => crate::prism_export::write_prism(dtmc, w),
    }
}

/// Writes a model to a file (for [`Format::Tra`], also the companion files). Returns the
/// paths written.
pub fn write_model_to_path(dtmc: &Dtmc, format: Format, path: &Path) -> Result<Vec<PathBuf>> {
    refuse_intervals(dtmc, format)?;
    if format == Format::Tra {
        return crate::explicit::write_prism_explicit(dtmc, path);
    }
    let io_err = |e| FormatError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut w = BufWriter::new(File::create(path).map_err(io_err)?);
    write_model(dtmc, format, &mut w)?;
    w.flush().map_err(io_err)?;
    Ok(vec![path.to_path_buf()])
}

/// Refuses `n` states declared by a file (at `location`) when they exceed
/// [`ReadOptions::max_states`] — before anything is allocated for them.
pub(crate) fn check_declared_states(
    n: usize,
    opts: &ReadOptions,
    location: impl FnOnce() -> augur_source::Location,
) -> Result<()> {
    match opts.max_states {
        Some(max) if n > max => Err(FormatError::syntax(
            location(),
            format!(
                "the file declares {n} states, more than the limit of {max} \
                 (raise it with --max-states)"
            ),
        )),
        _ => Ok(()),
    }
}

/// A vector of `n` copies of `value`, or a located error when the memory for it cannot be
/// had (instead of aborting the process).
pub(crate) fn try_filled<T: Clone>(
    n: usize,
    value: T,
    what: &str,
    location: impl FnOnce() -> augur_source::Location,
) -> Result<Vec<T>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        return Err(FormatError::syntax(
            location(),
            format!("the file declares {n} {what}, more than memory can hold"),
        ));
    }
    v.resize(n, value);
    Ok(v)
}

/// An interval DTMC is written as `.tra` (PRISM's `src dst [lo,hi]`) or JSON (`intervals`);
/// the other formats would silently write one resolution of it, so they refuse.
pub fn refuse_intervals(dtmc: &Dtmc, format: Format) -> Result<()> {
    if dtmc.intervals.is_some() && !matches!(format, Format::Tra | Format::Json) {
        return Err(FormatError::Unsupported {
            format: format!("{format:?}").to_lowercase(),
            message: "an interval DTMC is written as .tra (`src dst [lo,hi]`) or .json \
                      (`intervals`); this format has no intervals"
                .into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name_and_extension() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
            let p = PathBuf::from(format!("m.{}", f.extension()));
            assert_eq!(Format::from_path(&p), Some(f));
        }
        assert!("xml".parse::<Format>().is_err());
        assert_eq!(Format::from_path(Path::new("M.TRA")), Some(Format::Tra));
        assert_eq!(Format::from_path(Path::new("m")), None);
    }

    #[test]
    fn read_and_write_files_of_every_readable_format() {
        let d = crate::explicit::tests::sample();
        let dir = tempfile::tempdir().unwrap();
        for f in Format::ALL.into_iter().filter(|f| f.readable()) {
            let p = dir.path().join(format!("m.{}", f.extension()));
            write_model_to_path(&d, f, &p).unwrap();
            let (back, _) = read_model(&p, &ReadOptions::default()).unwrap();
            assert_eq!(back.matrix, d.matrix, "{f}");
            assert_eq!(back.labels, d.labels, "{f}");
            assert_eq!(back.initial, d.initial, "{f}");
        }
        let e = read_model(&dir.path().join("m.pm"), &ReadOptions::default()).unwrap_err();
        assert!(matches!(e, FormatError::UnknownFormat(_)));
        let e = read_model(&dir.path().join("missing.drn"), &ReadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("missing.drn"), "{e}");
    }
}
