//! Reading a step table: in one pass when the file is grouped by trace and ordered (a Parquet
//! file's row groups in parallel, the parts then joined), else read again and sorted.

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};

use crate::decode::*;
use crate::source::*;
use crate::{ColumnarError, ColumnarFormat, Columns, Result, StepTable};

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
                crate::source::on_threads(&parts, |groups, first_row| {
                    // The first range's states become the table's: room for all.
                    let capacity = if first_row == 1 {
                        total_rows
                    } else {
                        groups.iter().map(|&g| sizes[g]).sum()
                    };
                    read_chunk(
                        &file_name,
                        columns,
                        &source.positions,
                        first_row,
                        capacity,
                        source.reader(groups.to_vec())?,
                    )
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
pub(crate) fn ordered(file: &str, chunks: Vec<Result<Chunk>>) -> Result<Option<StepTable>> {
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
pub(crate) fn split(sizes: &[u64], parts: usize) -> Vec<(Vec<usize>, u64)> {
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
pub(crate) struct Chunk {
    /// The range's first row (1-based).
    pub(crate) first_row: u64,
    /// Rows read.
    pub(crate) len: usize,
    pub(crate) states: StateIds,
    pub(crate) state_of: Vec<u32>,
    /// Where each run of rows with one trace id starts (positions in the range).
    pub(crate) run_starts: Vec<usize>,
    /// The runs' trace ids, concatenated; run r's ends at `id_ends[r]`.
    pub(crate) id_text: String,
    pub(crate) id_ends: Vec<usize>,
    /// The hash of each run's id ([`id_hash`]), sorted; made only when the ids are not
    /// increasing ([`Chunk::hash_ids`]).
    pub(crate) id_hashes: Vec<u64>,
    /// Whether each run's id is greater than the one before in [`id_less`]'s order (then no
    /// id repeats within the range, and no hashes are needed).
    pub(crate) increasing: bool,
    /// False once a run's order values are not increasing: the range is not in order.
    pub(crate) ordered: bool,
    pub(crate) first_order: i64,
    pub(crate) last_order: i64,
    pub(crate) order_buf: Vec<i64>,
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
        macro_rules! strs {
            ($arr:expr) => {
                runs!($arr, |v| std::borrow::Cow::Borrowed(v))
            };
        }
        macro_rules! bins {
            ($arr:expr) => {
                runs!($arr, |v| hex(v))
            };
        }
        macro_rules! ints {
            ($t:ty) => {
                runs!(col.as_primitive::<$t>(), |v| v.to_string())
            };
        }
        match_key_type!(
            col,
            role,
            {
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
            },
            strs,
            bins,
            ints
        );
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
            &Role::trace_id(file, columns),
            row,
        )?;
        let mut order = std::mem::take(&mut self.order_buf);
        let values = order_values(batch, positions, &mut order, file, columns, row)?;
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
        self.states
            .intern(file, columns, positions, batch, row, &mut self.state_of)?;
        self.len += n;
        Ok(())
    }
}

/// Reads a range of rows in file order (stopping early once it is out of order), `capacity`
/// rows reserved for its states.
pub(crate) fn read_chunk(
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
pub(crate) fn id_less(a: &str, b: &str) -> bool {
    (a.len(), a.as_bytes()) < (b.len(), b.as_bytes())
}

/// The hash of a trace id, for the check that no trace id comes back (equal hashes are
/// then compared as ids).
pub(crate) fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// Whether two values are equal in sorted `a` or in sorted `b` or between them.
pub(crate) fn any_repeated(a: &[u64], b: &[u64]) -> bool {
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
pub(crate) fn merge_sorted(a: Vec<u64>, b: &[u64]) -> Vec<u64> {
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
pub(crate) fn join_chunks(file: &str, chunks: Vec<Chunk>) -> Option<StepTable> {
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
        let map: Vec<u32> = c
            .states
            .interner
            .names
            .iter()
            .map(|n| names.id(n))
            .collect();
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
pub(crate) fn collect(
    file: &str,
    columns: &Columns,
    positions: &[usize],
    batches: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<StepTable> {
    let mut traces = Interner::default();
    let mut states = StateIds::default();
    let mut trace_of: Vec<u32> = Vec::new();
    let mut order_of: Vec<i64> = Vec::new();
    let mut state_of: Vec<u32> = Vec::new();
    let mut row = 1u64;
    for batch in batches {
        let batch = batch?;
        let n = batch.num_rows();
        intern_column(
            batch.column(positions[0]).as_ref(),
            &mut traces,
            &mut trace_of,
            &Role::trace_id(file, columns),
            row,
        )?;
        order_column(
            batch.column(positions[1]).as_ref(),
            &mut order_of,
            &Role::order(file, columns),
            row,
        )?;
        states.intern(file, columns, positions, &batch, row, &mut state_of)?;
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
        state_names: states.interner.names,
        offsets,
        states: states_sorted,
        id_text,
        id_ends,
        rows,
    };
    table.number_states_in_order();
    Ok(table)
}
