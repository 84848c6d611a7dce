//! What is read: the columns of a step table, the file formats, the [`StepTable`].

use std::path::Path;

use augur_abstraction::{Step, StepKind, Trace};
use augur_learn::pipeline::IndexedCounts;

use crate::{ColumnarError, Result};

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
    pub(crate) id_text: String,
    pub(crate) id_ends: Vec<usize>,
    /// Every step's row in the file (1-based), aligned with `states`; empty when the file was
    /// already grouped by trace and ordered (then position p is row p + 1).
    pub(crate) rows: Vec<u64>,
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
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    pub(crate) fn number_states_in_order(&mut self) {
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

/// What [`crate::count_steps`] gives: the first-order counts of the table's traces, or, when they
/// cannot be counted while reading, the table itself.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum StepsRead {
    /// The counts (states numbered by first appearance along the traces, as the learner
    /// numbers them), for `augur_learn::pipeline::learn_from_indexed_counts`.
    Counted(IndexedCounts),
    /// The table, read whole by [`crate::read_steps`] (not a Parquet file, several state columns,
    /// trace ids that are not increasing strings, rows not in order, or an error to report).
    Table(StepTable),
}
