//! PRISM's explicit files: `.tra` (transitions), `.lab` (labels), `.srew` (state rewards),
//! `.trew` (transition rewards), `.sta` (state valuations).
//!
//! Formats (as PRISM exports them for DTMCs):
//! - `.tra`: a header `states transitions`, then one `src dst prob` line per transition.
//! - `.lab`: a first line `0="init" 1="deadlock" 2="goal"`, then `state: idx idx ...` lines.
//! - `.srew`: a header `states nonzero`, then `state reward` lines (`#` comment lines allowed;
//!   `# Reward structure "name"` names the structure).
//! - `.trew`: a header `states transitions`, then `src dst reward` lines.
//! - `.sta`: a first line `(x,y,z)`, then `state:(1,2,true)` lines.
//!
//! Storm's explicit variant is read too: a `.tra` whose first line is `dtmc` (no counts; the
//! number of states is the largest index + 1), a `.lab` with `#DECLARATION` / `#END` and
//! `state label label` lines, and reward files without headers.
//!
//! Initial states come from the `"init"` label; without a `.lab` file (or an `"init"` label)
//! the initial state is 0, as in PRISM. An `"init"` label declared with no state is an error
//! (as in a JSON model).

use crate::error::{FormatError, Place, Result};
use crate::io::{check_declared_states, ReadOptions};
use crate::text::{for_each_line, interval_bounds, parse_real, reread_location, Lines, Num};
use augur_dtmc::DtmcError;
use augur_dtmc::{BuildReport, DtmcBuilder};
use augur_dtmc::{Dtmc, RewardStructure, StateSet};
use augur_source::Location;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::sta::StaHead;
pub use crate::sta::{read_sta, write_sta};

const BUF: usize = 1 << 16;

/// The transitions of a `.tra` file, in a builder, with the line of each row's last entry
/// (for locating row errors).
pub struct TraContents {
    /// The builder holding the states and transitions.
    pub builder: DtmcBuilder,
    /// For each state, the line of its last transition (0 if it has none).
    pub row_lines: Vec<u32>,
    /// The line of the header.
    pub header_line: usize,
    /// Whether the file was in Storm's variant (first line `dtmc`, no counts); its
    /// companion files are then read in Storm's variants too.
    pub storm_format: bool,
    /// For an interval DTMC (entries `src dst [lo,hi]`, as PRISM exports them), every
    /// transition `(src, dst, lo, hi)` in file order; the builder then holds one resolution of
    /// each row ([`Dtmc::from_interval_bounds`] attaches the bounds after the build).
    pub intervals: Option<Vec<(u32, u32, f64, f64)>>,
}

fn parse_header(lines: &Lines<'_, impl BufRead>, what: &str) -> Result<(usize, usize)> {
    let mut it = lines.buf.split_whitespace();
    let msg = || format!("expected header `{what}`");
    let a = it.next().ok_or_else(|| lines.err(None, msg()))?;
    let n: usize = a.parse().map_err(|_| lines.err(Some(a), msg()))?;
    let b = it.next().ok_or_else(|| lines.err(None, msg()))?;
    let m: usize = b.parse().map_err(|_| lines.err(Some(b), msg()))?;
    if let Some(extra) = it.next() {
        return Err(lines.err(Some(extra), format!("{} (extra token)", msg())));
    }
    Ok((n, m))
}

pub(crate) fn parse_state(lines: &Lines<'_, impl BufRead>, tok: &str, n: usize) -> Result<u32> {
    let v: u64 = tok
        .parse()
        .map_err(|_| lines.err(Some(tok), format!("expected a state index, found `{tok}`")))?;
    if v >= n as u64 {
        return Err(lines.err(Some(tok), format!("state {v} out of range ({n} states)")));
    }
    Ok(v as u32)
}

/// Reads a `.tra` file: PRISM's (header `states transitions`, then `src dst prob`; a fourth
/// non-numeric column, an action label, is ignored) or Storm's explicit variant (first line
/// `dtmc`, then `src dst prob` lines; the number of states is the largest index + 1).
pub fn read_tra(reader: impl BufRead, path: &Path) -> Result<TraContents> {
    read_tra_with(reader, path, &ReadOptions::default())
}

/// [`read_tra`] within `opts`' limit on the number of states (checked against the header,
/// or, for Storm's variant, against the largest state index as it is read).
pub fn read_tra_with(reader: impl BufRead, path: &Path, opts: &ReadOptions) -> Result<TraContents> {
    TraHead::read(reader, path, opts)?.body()
}

/// A `.tra` file read up to its header (the first line with content).
struct TraHead<'p, 'o, R> {
    lines: Lines<'p, R>,
    /// The header's number of states and transitions (`None` in Storm's variant).
    header: Option<(usize, usize)>,
    /// Where the header's number of transitions is (PRISM) or the header line (Storm), for
    /// errors found at the end of the file.
    header_location: Location,
    storm_format: bool,
    opts: &'o ReadOptions,
}

impl<'p, 'o, R: BufRead> TraHead<'p, 'o, R> {
    /// Reads the header, checked.
    fn read(reader: R, path: &'p Path, opts: &'o ReadOptions) -> Result<Self> {
        let mut lines = Lines::new(reader, path);
        if !lines.advance_content("#", |_| {})? {
            return Err(FormatError::syntax(
                lines.end_location(1),
                "empty file: expected header `states transitions`",
            ));
        }
        let header_location = lines.field_location(1);
        let first = lines.buf.trim();
        let storm_format = !first.is_empty() && first.chars().all(|c| c.is_ascii_alphabetic());
        let header = if storm_format {
            if !first.eq_ignore_ascii_case("dtmc") {
                return Err(lines.err(
                    Some(first),
                    format!("model type `{first}`: Augur reads DTMCs only"),
                ));
            }
            None
        } else {
            let (n, m) = parse_header(&lines, "states transitions")?;
            if n == 0 {
                return Err(FormatError::syntax(
                    lines.field_location(0),
                    "a model needs at least one state",
                ));
            }
            if n > u32::MAX as usize {
                return Err(FormatError::syntax(
                    lines.field_location(0),
                    format!("{n} states: at most 2^32-1 supported"),
                ));
            }
            check_declared_states(n, opts, || lines.field_location(0))?;
            Some((n, m))
        };
        Ok(TraHead {
            lines,
            header,
            header_location,
            storm_format,
            opts,
        })
    }

    /// Reads the transitions after the header.
    fn body(self) -> Result<TraContents> {
        let TraHead {
            lines,
            header,
            header_location,
            storm_format,
            opts,
        } = self;
        let (path, header_line) = (lines.path, lines.line);
        let bound = header.map_or(u32::MAX as usize, |h| h.0);
        let mut body = TraBody {
            builder: DtmcBuilder::with_capacity(bound, header.map_or(0, |h| h.1.min(1 << 20))),
            row_lines: Vec::new(),
            count: 0,
            max_state: 0,
            intervals: None,
            bound,
            checked: header.is_none(),
            opts,
        };
        let (rest, line, offset) = lines.into_rest();
        for_each_line(rest, path, line, offset, |text, line, offset| {
            body.line(text, path, line, offset)
        })?;
        let TraBody {
            mut builder,
            row_lines,
            count,
            max_state,
            mut intervals,
            ..
        } = body;
        match header {
            Some((_, m)) => {
                if count != m {
                    return Err(FormatError::syntax(
                        header_location,
                        format!("header says {m} transitions, the file has {count}"),
                    ));
                }
            }
            None => {
                if count == 0 {
                    return Err(FormatError::syntax(
                        header_location,
                        "no transitions after `dtmc`",
                    ));
                }
                let n = max_state as usize + 1;
                builder.set_num_states(n);
            }
        }
        if let Some(iv) = &mut intervals {
            // One resolution of every row as the builder's probabilities (rows in any order).
            iv.sort_by_key(|e| (e.0, e.1));
            let mut start = 0;
            while start < iv.len() {
                let s = iv[start].0;
                let end = start + iv[start..].iter().take_while(|e| e.0 == s).count();
                let row = &iv[start..end];
                let (sl, sh) = row.iter().fold((0.0, 0.0), |(x, y), e| (x + e.2, y + e.3));
                let t = augur_dtmc::interval::row_resolution(s, sl, sh).map_err(|p| {
                    let line = row_lines.get(s as usize).copied().unwrap_or(0) as usize;
                    FormatError::syntax(
                        reread_location(path, line.max(1), 2),
                        p.message(&|x| x.to_string()),
                    )
                })?;
                for &(_, d, l, h) in row {
                    let p = l + t * (h - l);
                    if p > 0.0 {
                        builder.add_transition(s, d, p).map_err(|e| {
                            FormatError::syntax(
                                Location::file(path.display().to_string()),
                                e.to_string(),
                            )
                        })?;
                    }
                }
                start = end;
            }
        }
        Ok(TraContents {
            builder,
            row_lines,
            header_line,
            storm_format,
            intervals,
        })
    }
}

/// The state of a `.tra` read after its header.
struct TraBody<'o> {
    builder: DtmcBuilder,
    /// One entry per state with a row, growing with the rows read (not with the header).
    row_lines: Vec<u32>,
    count: usize,
    max_state: u32,
    intervals: Option<Vec<(u32, u32, f64, f64)>>,
    /// The number of states (the header's; `u32::MAX` in Storm's variant).
    bound: usize,
    /// Whether each state index is checked against `opts.max_states` (Storm's variant,
    /// without a header to check).
    checked: bool,
    opts: &'o ReadOptions,
}

impl TraBody<'_> {
    /// Reads line `line` (its bytes `text`, at `offset` in the file): a plain `src dst prob`
    /// line straight from its bytes, anything else (a comment, a blank line, an interval,
    /// an error) through [`TraBody::parse`], with the messages that has.
    fn line(&mut self, text: &[u8], path: &Path, line: usize, offset: usize) -> Result<()> {
        if self.intervals.is_none() {
            if let Some((src, dst, p)) = plain_entry(text, self.bound) {
                let within = !self.checked
                    || self
                        .opts
                        .max_states
                        .is_none_or(|m| (src.max(dst) as usize) < m);
                if within && self.grow_rows(src) && self.builder.add_transition(src, dst, p).is_ok()
                {
                    self.row_lines[src as usize] = line.min(u32::MAX as usize) as u32;
                    self.max_state = self.max_state.max(src).max(dst);
                    self.count += 1;
                    return Ok(());
                }
            }
        }
        let mut lines = Lines::resume(text, path, line - 1, offset);
        if lines.advance_content("#", |_| {})? {
            self.parse(&lines)?;
        }
        Ok(())
    }

    /// Whether `row_lines` has (or could be given) an entry for `src`.
    fn grow_rows(&mut self, src: u32) -> bool {
        let need = src as usize + 1;
        if self.row_lines.len() < need {
            if self
                .row_lines
                .try_reserve(need - self.row_lines.len())
                .is_err()
            {
                return false;
            }
            self.row_lines.resize(need, 0);
        }
        true
    }

    /// Reads the current line of `lines`, a line with content.
    fn parse(&mut self, lines: &Lines<'_, &[u8]>) -> Result<()> {
        const SHAPE: &str = "expected `src dst prob`";
        let (bound, opts) = (self.bound, self.opts);
        let mut it = lines.buf.split_whitespace();
        let (Some(a), Some(b), Some(c)) = (it.next(), it.next(), it.next()) else {
            return Err(lines.err(None, SHAPE));
        };
        // `[lo, hi]` written with a space after the comma: the interval is two tokens.
        let c2 = if c.starts_with('[') && !c.ends_with(']') {
            it.next()
        } else {
            None
        };
        if let Some(d) = it.next() {
            if parse_real(d).is_some() {
                return Err(lines.err(
                    Some(d),
                    "four numeric columns: this looks like an MDP transition file \
                     (`src choice dst prob`); Augur reads DTMCs only",
                ));
            }
            if let Some(e) = it.next() {
                return Err(lines.err(Some(e), format!("{SHAPE} (extra token)")));
            }
        }
        let src = parse_state(lines, a, bound)?;
        let dst = parse_state(lines, b, bound)?;
        if self.checked {
            for (s, tok) in [(src, a), (dst, b)] {
                check_declared_states(s as usize + 1, opts, || lines.location(Some(tok)))?;
            }
        }
        if c.starts_with('[') || self.intervals.is_some() {
            if self.count > 0 && self.intervals.is_none() {
                return Err(lines.err(
                    Some(c),
                    "an interval after point probabilities: an interval DTMC's `.tra` writes \
                     every transition as `src dst [lo,hi]`",
                ));
            }
            let (lo, hi) = read_interval(lines, c, c2)?;
            self.intervals
                .get_or_insert_with(Vec::new)
                .push((src, dst, lo, hi));
        } else {
            let p = parse_real(c).ok_or_else(|| {
                lines.err(Some(c), format!("expected a probability, found `{c}`"))
            })?;
            if !(0.0..=1.0).contains(&p) {
                return Err(lines.err(Some(c), format!("probability {c} not in [0,1]")));
            }
            self.builder
                .add_transition(src, dst, p)
                .map_err(|e| lines.err(Some(a), e.to_string()))?;
        }
        if !self.grow_rows(src) {
            return Err(lines.err(Some(a), format!("state {src}: more than memory can hold")));
        }
        self.row_lines[src as usize] = lines.line.min(u32::MAX as usize) as u32;
        self.max_state = self.max_state.max(src).max(dst);
        self.count += 1;
        Ok(())
    }
}

/// A line `src dst prob` written plainly (single spaces, decimal indices below `bound`, a
/// probability in [0, 1] in decimal or scientific notation, `\n` or nothing after): the
/// entry, read from the bytes. `None` for anything else, left to [`TraBody::parse`], which
/// reads every line this reads to the same entry.
fn plain_entry(text: &[u8], bound: usize) -> Option<(u32, u32, f64)> {
    fn index(b: &[u8], bound: usize) -> Option<(u32, &[u8])> {
        let len = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 || len > 10 {
            return None;
        }
        let v = b[..len]
            .iter()
            .fold(0u64, |a, &d| a * 10 + u64::from(d - b'0'));
        (v < bound as u64).then_some((v as u32, &b[len..]))
    }
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let (src, rest) = index(text, bound)?;
    let (dst, rest) = index(rest.strip_prefix(b" ")?, bound)?;
    let tok = rest.strip_prefix(b" ")?;
    let numeric = |c: &u8| matches!(c, b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+');
    if tok.is_empty() || !tok.iter().all(numeric) {
        return None;
    }
    let p: f64 = std::str::from_utf8(tok).ok()?.parse().ok()?;
    (0.0..=1.0).contains(&p).then_some((src, dst, p))
}

/// Reads `[lo,hi]` (the token `c`, or `c` and `c2` when written `[lo, hi]`), checked.
fn read_interval(lines: &Lines<'_, impl BufRead>, c: &str, c2: Option<&str>) -> Result<(f64, f64)> {
    let text = match c2 {
        Some(c2) => format!("{c}{c2}"),
        None => c.to_string(),
    };
    let bad = || {
        lines.err(
            Some(c),
            format!("expected a probability interval `[lo,hi]`, found `{text}`"),
        )
    };
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(bad)?;
    interval_bounds(lines, c, inner, &text, bad)
}

/// Reads a `.lab` file for a model with `n` states. Labels keep the order of their indices.
pub fn read_lab(reader: impl BufRead, path: &Path, n: usize) -> Result<Vec<(String, StateSet)>> {
    let mut lines = Lines::new(reader, path);
    if !lines.advance_content("", |_| {})? {
        return Err(FormatError::syntax(
            lines.end_location(1),
            "empty file: expected a first line like `0=\"init\" 1=\"deadlock\"`",
        ));
    }
    if lines.buf.trim() == "#DECLARATION" {
        return read_lab_storm(lines, n);
    }
    let mut names: Vec<Option<String>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut init_at = None;
    for tok in lines.buf.split_whitespace() {
        let bad = || {
            lines.err(
                Some(tok),
                format!("expected `index=\"name\"`, found `{tok}`"),
            )
        };
        let (i, name) = tok.split_once('=').ok_or_else(bad)?;
        let i: usize = i.parse().map_err(|_| bad())?;
        let name = name
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .filter(|s| !s.is_empty())
            .ok_or_else(bad)?;
        if i > 1_000_000 {
            return Err(lines.err(Some(tok), format!("label index {i} too large")));
        }
        if names.len() <= i {
            names.resize(i + 1, None);
        }
        if names[i].is_some() {
            return Err(lines.err(Some(tok), format!("label index {i} defined twice")));
        }
        if !seen.insert(name) {
            return Err(lines.err(Some(tok), format!("label \"{name}\" defined twice")));
        }
        if name == "init" {
            init_at = Some(lines.location(Some(tok)));
        }
        names[i] = Some(name.to_string());
    }
    // A set for each declared label only (indices may leave gaps).
    let mut sets: Vec<Option<StateSet>> = names
        .iter()
        .map(|x| x.as_ref().map(|_| StateSet::with_capacity(n)))
        .collect();
    while lines.advance_content("#", |_| {})? {
        let (s, rest) = lines
            .buf
            .split_once(':')
            .ok_or_else(|| lines.err(None, "expected `state: label-indices`"))?;
        let s = parse_state(&lines, s.trim(), n)?;
        for tok in rest.split_whitespace() {
            let i: usize = tok.parse().map_err(|_| {
                lines.err(Some(tok), format!("expected a label index, found `{tok}`"))
            })?;
            if !matches!(names.get(i), Some(Some(_))) {
                return Err(lines.err(
                    Some(tok),
                    format!("label index {i} out of range (not declared on line 1)"),
                ));
            }
            if let Some(set) = &mut sets[i] {
                set.insert(s as usize);
            }
        }
    }
    let labels: Vec<(String, StateSet)> = names
        .into_iter()
        .zip(sets)
        .filter_map(|(n, s)| n.zip(s))
        .collect();
    no_empty_init(&labels, init_at)?;
    Ok(labels)
}

/// Storm's label file: `#DECLARATION`, label names, `#END`, then `state label label ...`.
/// An `"init"` label declared (at `init_at`) with no state is an error: there would be no
/// initial state (a JSON model's empty `"init"` label is refused the same way). Without an
/// `"init"` label the initial state is 0, as in PRISM.
fn no_empty_init(labels: &[(String, StateSet)], init_at: Option<Location>) -> Result<()> {
    let empty = labels
        .iter()
        .any(|(name, set)| name == "init" && set.ones().next().is_none());
    match init_at {
        Some(at) if empty => Err(FormatError::syntax(
            at,
            "the \"init\" label has no state: no initial state (list the initial states \
             under it, or leave the label out to start in state 0)",
        )),
        _ => Ok(()),
    }
}

fn read_lab_storm(mut lines: Lines<'_, impl BufRead>, n: usize) -> Result<Vec<(String, StateSet)>> {
    let mut labels: Vec<(String, StateSet)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut init_at = None;
    loop {
        if !lines.advance_content("//", |_| {})? {
            return Err(FormatError::syntax(
                lines.end_location(lines.line + 1),
                "unexpected end of file: missing `#END` after `#DECLARATION`",
            ));
        }
        if lines.buf.trim() == "#END" {
            break;
        }
        for name in lines.buf.split_whitespace() {
            if index.contains_key(name) {
                return Err(lines.err(Some(name), format!("label `{name}` declared twice")));
            }
            if name == "init" {
                init_at = Some(lines.location(Some(name)));
            }
            index.insert(name.to_string(), labels.len());
            labels.push((name.to_string(), StateSet::with_capacity(n)));
        }
    }
    while lines.advance_content("//", |_| {})? {
        let mut it = lines.buf.split_whitespace();
        let Some(s) = it.next() else { continue };
        let s = parse_state(&lines, s, n)? as usize;
        for name in it {
            let set = index.get(name).map(|&i| &mut labels[i].1).ok_or_else(|| {
                lines.err(
                    Some(name),
                    format!("label `{name}` not declared in #DECLARATION"),
                )
            })?;
            set.insert(s);
        }
    }
    no_empty_init(&labels, init_at)?;
    Ok(labels)
}

fn reward_name_from_comment(c: &str, name: &mut Option<String>) {
    // PRISM writes `# Reward structure "name"` (or `# Reward structure 1` when unnamed).
    if let Some(rest) = c
        .trim_start_matches('#')
        .trim()
        .strip_prefix("Reward structure")
    {
        let rest = rest.trim();
        if let Some(q) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            *name = Some(q.to_string());
        }
    }
}

/// Reads a `.srew` file for `n` states: the state rewards (zeros where not listed) and the
/// structure's name if a `# Reward structure "name"` comment gives it.
pub fn read_srew(
    reader: impl BufRead,
    path: &Path,
    n: usize,
) -> Result<(Vec<f64>, Option<String>)> {
    read_srew_impl(reader, path, n, false)
}

/// Reads the header `states count` of a PRISM reward file, checking the number of states.
/// Returns the location of the count (for a count that the file does not match) and the count.
fn reward_header(
    lines: &mut Lines<'_, impl BufRead>,
    name: &mut Option<String>,
    n: usize,
    what: &str,
) -> Result<(Location, usize)> {
    if !lines.advance_content("#", |c| reward_name_from_comment(c, name))? {
        return Err(FormatError::syntax(
            lines.end_location(1),
            format!("empty file: expected header `{what}`"),
        ));
    }
    let (hn, count) = parse_header(lines, what)?;
    if hn != n {
        return Err(FormatError::syntax(
            lines.field_location(0),
            format!("header says {hn} states, the model has {n}"),
        ));
    }
    Ok((lines.field_location(1), count))
}

fn read_srew_impl(
    reader: impl BufRead,
    path: &Path,
    n: usize,
    headerless: bool,
) -> Result<(Vec<f64>, Option<String>)> {
    let mut lines = Lines::new(reader, path);
    let mut name = None;
    let header = if headerless {
        None
    } else {
        Some(reward_header(&mut lines, &mut name, n, "states nonzero")?)
    };
    let mut v = vec![0.0; n];
    let mut listed = StateSet::with_capacity(n);
    let mut count = 0;
    while lines.advance_content("#", |c| reward_name_from_comment(c, &mut name))? {
        let mut it = lines.buf.split_whitespace();
        let (Some(a), Some(b)) = (it.next(), it.next()) else {
            return Err(lines.err(None, "expected `state reward`"));
        };
        if let Some(e) = it.next() {
            return Err(lines.err(Some(e), "expected `state reward` (extra token)"));
        }
        let s = parse_state(&lines, a, n)?;
        let r = parse_real(b)
            .filter(|r| r.is_finite())
            .ok_or_else(|| lines.err(Some(b), format!("expected a finite reward, found `{b}`")))?;
        if listed.put(s as usize) {
            return Err(lines.err(
                Some(a),
                format!("state {s} listed twice (each state has at most one reward)"),
            ));
        }
        v[s as usize] = r;
        count += 1;
    }
    if let Some((location, nnz)) = header {
        if count != nnz {
            return Err(FormatError::syntax(
                location,
                format!("header says {nnz} rewards, the file has {count}"),
            ));
        }
    }
    Ok((v, name))
}

/// Reads a `.trew` file against a built model: the transition rewards aligned with
/// `dtmc.matrix.data()`, and the structure's name if a comment gives it.
pub fn read_trew(
    reader: impl BufRead,
    path: &Path,
    dtmc: &Dtmc,
) -> Result<(Vec<f64>, Option<String>)> {
    read_trew_impl(reader, path, dtmc, false)
}

fn read_trew_impl(
    reader: impl BufRead,
    path: &Path,
    dtmc: &Dtmc,
    headerless: bool,
) -> Result<(Vec<f64>, Option<String>)> {
    let n = dtmc.num_states();
    let mut lines = Lines::new(reader, path);
    let mut name = None;
    let header = if headerless {
        None
    } else {
        Some(reward_header(
            &mut lines,
            &mut name,
            n,
            "states transitions",
        )?)
    };
    let mut v = vec![0.0; dtmc.num_transitions()];
    let mut listed = StateSet::with_capacity(dtmc.num_transitions());
    let mut count = 0;
    while lines.advance_content("#", |c| reward_name_from_comment(c, &mut name))? {
        let mut it = lines.buf.split_whitespace();
        let (Some(a), Some(b), Some(c)) = (it.next(), it.next(), it.next()) else {
            return Err(lines.err(None, "expected `src dst reward`"));
        };
        if let Some(e) = it.next() {
            return Err(lines.err(Some(e), "expected `src dst reward` (extra token)"));
        }
        let s = parse_state(&lines, a, n)?;
        let t = parse_state(&lines, b, n)?;
        let r = parse_real(c)
            .filter(|r| r.is_finite())
            .ok_or_else(|| lines.err(Some(c), format!("expected a finite reward, found `{c}`")))?;
        let k = dtmc.transition_index(s, t).ok_or_else(|| {
            // Under both states: `src dst`.
            let start = a.as_ptr() as usize - lines.buf.as_ptr() as usize;
            let end = b.as_ptr() as usize - lines.buf.as_ptr() as usize + b.len();
            let both = &lines.buf[start..end];
            lines.err(
                Some(both),
                format!("{s} -> {t} is not a transition of the model"),
            )
        })?;
        if listed.put(k) {
            let start = a.as_ptr() as usize - lines.buf.as_ptr() as usize;
            let end = b.as_ptr() as usize - lines.buf.as_ptr() as usize + b.len();
            return Err(lines.err(
                Some(&lines.buf[start..end]),
                format!("{s} -> {t} listed twice (each transition has at most one reward)"),
            ));
        }
        v[k] = r;
        count += 1;
    }
    if let Some((location, m)) = header {
        if count != m {
            return Err(FormatError::syntax(
                location,
                format!("header says {m} transition rewards, the file has {count}"),
            ));
        }
    }
    Ok((v, name))
}

/// The readers of one PRISM explicit model: a `.tra` and optionally the other files.
pub struct ExplicitInputs<'a> {
    /// The `.tra` file's name and contents.
    pub tra: (&'a Path, &'a mut dyn BufRead),
    /// The `.lab` file.
    pub lab: Option<(&'a Path, &'a mut dyn BufRead)>,
    /// The `.srew` file.
    pub srew: Option<(&'a Path, &'a mut dyn BufRead)>,
    /// The `.trew` file.
    pub trew: Option<(&'a Path, &'a mut dyn BufRead)>,
    /// The `.sta` file.
    pub sta: Option<(&'a Path, &'a mut dyn BufRead)>,
}

/// Reads a PRISM explicit model from readers (see [`read_prism_explicit`] for files).
pub fn read_prism_explicit_from(
    inputs: ExplicitInputs<'_>,
    opts: &ReadOptions,
) -> Result<(Dtmc, BuildReport)> {
    let (tra_path, tra) = inputs.tra;
    let contents = read_tra_with(tra, tra_path, opts)?;
    let sta = inputs.sta;
    let companions = Companions {
        lab: inputs.lab,
        srew: inputs.srew,
        trew: inputs.trew,
    };
    assemble(contents, tra_path, companions, opts, |n| {
        sta.map(|(p, r)| read_sta(r, p, n))
    })
}

/// The companion files of a `.tra` but its `.sta`.
struct Companions<'a> {
    lab: Option<(&'a Path, &'a mut dyn BufRead)>,
    srew: Option<(&'a Path, &'a mut dyn BufRead)>,
    trew: Option<(&'a Path, &'a mut dyn BufRead)>,
}

/// The model of a `.tra` read (`contents`) with its companions; `sta(n)` gives the
/// valuations of its `n` states, if any, after the `.lab` and `.srew` are read (whose errors
/// come first).
fn assemble(
    contents: TraContents,
    tra_path: &Path,
    companions: Companions<'_>,
    opts: &ReadOptions,
    sta: impl FnOnce(usize) -> Option<Result<augur_dtmc::Valuations>>,
) -> Result<(Dtmc, BuildReport)> {
    let TraContents {
        mut builder,
        row_lines,
        header_line,
        storm_format,
        intervals,
    } = contents;
    let n = builder.num_states();
    let mut has_init = false;
    if let Some((p, r)) = companions.lab {
        for (name, set) in read_lab(r, p, n)? {
            if name == "init" {
                has_init = true;
                for s in set.ones() {
                    builder.add_initial(s as u32)?;
                }
            }
            builder.add_label(&name, &set)?;
        }
    }
    if !has_init {
        builder.add_initial(0)?;
    }
    let mut srew = None;
    if let Some((p, r)) = companions.srew {
        srew = Some(read_srew_impl(r, p, n, storm_format)?);
    }
    if let Some(v) = sta(n) {
        builder.set_valuations(v?);
    }
    builder.fix_deadlocks(opts.fix_deadlocks);
    let (mut dtmc, report) = builder.build().map_err(|e| {
        // A row error is located at the probability of the row's last entry, read again
        // from the file.
        let (line, field) = match &e {
            DtmcError::RowSum { state, .. } => (row_lines.get(*state as usize).copied(), 2),
            DtmcError::BadProbability { src, .. } => (row_lines.get(*src as usize).copied(), 2),
            DtmcError::Deadlock { .. } => (None, 0),
            _ => (Some(header_line as u32), usize::MAX),
        };
        let location = match line.filter(|&l| l > 0) {
            Some(l) => reread_location(tra_path, l as usize, field),
            None => Location::file(tra_path.display().to_string()),
        };
        e.in_file(location)
    })?;
    let mut trew = None;
    if let Some((p, r)) = companions.trew {
        trew = Some(read_trew_impl(r, p, &dtmc, storm_format)?);
    }
    if srew.is_some() || trew.is_some() {
        let name = srew
            .as_ref()
            .and_then(|x| x.1.clone())
            .or_else(|| trew.as_ref().and_then(|x| x.1.clone()));
        dtmc.rewards.push(RewardStructure {
            name,
            state: srew.map(|x| x.0),
            transition: trew.map(|x| x.0),
            exact: None,
        });
    }
    if let Some(iv) = intervals {
        dtmc = Dtmc::from_interval_entries(dtmc, iv.iter().copied()).map_err(|p| {
            let state = p.state();
            let location = match row_lines.get(state as usize).copied().filter(|&l| l > 0) {
                Some(l) => reread_location(tra_path, l as usize, 2),
                None => Location::file(tra_path.display().to_string()),
            };
            FormatError::syntax(location, p.message(&|x| x.to_string()))
        })?;
    }
    Ok((dtmc, report))
}

/// The paths of a PRISM explicit model's files, from its `.tra` path (same stem).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitPaths {
    /// The `.tra` file.
    pub tra: PathBuf,
    /// The `.lab` file.
    pub lab: PathBuf,
    /// The `.srew` file.
    pub srew: PathBuf,
    /// The `.trew` file.
    pub trew: PathBuf,
    /// The `.sta` file.
    pub sta: PathBuf,
}

impl ExplicitPaths {
    /// The same-stem companions of `tra`.
    pub fn from_tra(tra: &Path) -> Self {
        ExplicitPaths {
            tra: tra.to_path_buf(),
            lab: tra.with_extension("lab"),
            srew: tra.with_extension("srew"),
            trew: tra.with_extension("trew"),
            sta: tra.with_extension("sta"),
        }
    }
}

fn open(path: &Path) -> Result<BufReader<File>> {
    crate::confine::open(path)
        .map(|f| BufReader::with_capacity(BUF, f))
        .map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })
}

/// A companion file when there is one: a missing file is `None`; one that exists but cannot be
/// read (or, under [`crate::confine::within_root`], lies outside the root) is an error.
fn open_opt(path: &Path) -> Result<Option<BufReader<File>>> {
    if path.is_dir() {
        return Ok(None);
    }
    match open(path) {
        Ok(f) => Ok(Some(f)),
        Err(FormatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Reads `foo.tra` and, when present, `foo.lab`, `foo.srew`, `foo.trew` and `foo.sta`
/// (one reward structure from `.srew` + `.trew`).
///
/// The `.sta` is read on a second thread while the `.tra` is, when the `.tra`'s header gives
/// the number of states and the `.sta` is large enough to hold a line for each (so that its
/// columns are not sized by a header the `.tra` then contradicts); what is reported is the
/// same as when the files are read one after the other: an error in the `.tra`, `.lab` or
/// `.srew` comes before one in the `.sta`.
pub fn read_prism_explicit(tra: &Path, opts: &ReadOptions) -> Result<(Dtmc, BuildReport)> {
    let p = ExplicitPaths::from_tra(tra);
    let t = open(&p.tra)?;
    let mut lab = open_opt(&p.lab)?;
    let mut srew = open_opt(&p.srew)?;
    let mut trew = open_opt(&p.trew)?;
    let mut sta = open_opt(&p.sta)?;
    fn dynr<'a>(
        path: &'a Path,
        r: &'a mut Option<BufReader<File>>,
    ) -> Option<(&'a Path, &'a mut dyn BufRead)> {
        r.as_mut().map(|r| (path, r as &mut dyn BufRead))
    }
    let head = TraHead::read(t, &p.tra, opts)?;
    // The shortest line of a `.sta`: `0:(0)`.
    const SHORTEST_STA_LINE: u64 = 6;
    let early = match (head.header, sta.as_ref()) {
        (Some((n, _)), Some(f)) => f
            .get_ref()
            .metadata()
            .is_ok_and(|m| m.len() / SHORTEST_STA_LINE >= n as u64)
            .then_some(n),
        _ => None,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The `.sta`'s first line is read here (its error, if any, kept for its turn), its
        // values on the second thread.
        let sta_early = match (early, sta.take()) {
            (Some(n), Some(reader)) => Some(StaHead::read(reader, &p.sta, n).map(|head| {
                let (root, stop) = (crate::confine::current_root(), &stop);
                scope.spawn(move || crate::confine::within(root, || head.body(stop)))
            })),
            (_, reader) => {
                sta = reader;
                None
            }
        };
        let contents = head.body();
        let companions = Companions {
            lab: dynr(&p.lab, &mut lab),
            srew: dynr(&p.srew, &mut srew),
            trew: dynr(&p.trew, &mut trew),
        };
        let model = contents.and_then(|c| {
            assemble(c, &p.tra, companions, opts, |n| match sta_early {
                Some(Ok(h)) => Some(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
                Some(Err(e)) => Some(Err(e)),
                None => sta.as_mut().map(|r| read_sta(r, &p.sta, n)),
            })
        });
        // An error before the `.sta` was needed: the thread's work is not.
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        model
    })
}

/// Writes the `.tra` file (`states transitions` header, then `src dst prob`).
pub fn write_tra(dtmc: &Dtmc, w: &mut dyn Write) -> Result<()> {
    writeln!(w, "{} {}", dtmc.num_states(), dtmc.num_transitions())?;
    if let Some(iv) = &dtmc.intervals {
        // PRISM's interval DTMC export: `src dst [lo,hi]`.
        for s in 0..dtmc.num_states() {
            for k in dtmc.row_range(s) {
                let t = dtmc.matrix.indices()[k];
                writeln!(w, "{s} {t} [{},{}]", Num(iv.lo[k]), Num(iv.hi[k]))?;
            }
        }
        return Ok(());
    }
    for s in 0..dtmc.num_states() {
        for (t, p) in dtmc.successors(s) {
            writeln!(w, "{s} {t} {}", Num(p))?;
        }
    }
    Ok(())
}

/// Writes the `.lab` file. PRISM's first line lists every label; states without labels are
/// omitted. Label names must not contain whitespace or `"`.
pub fn write_lab(dtmc: &Dtmc, w: &mut dyn Write) -> Result<()> {
    for (name, _) in &dtmc.labels {
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '"') {
            return Err(FormatError::Unsupported {
                format: "lab".into(),
                message: format!("label name {name:?} contains whitespace or a quote"),
            });
        }
    }
    let head: Vec<String> = dtmc
        .labels
        .iter()
        .enumerate()
        .map(|(i, (n, _))| format!("{i}=\"{n}\""))
        .collect();
    writeln!(w, "{}", head.join(" "))?;
    for s in 0..dtmc.num_states() {
        let mut first = true;
        for (i, (_, set)) in dtmc.labels.iter().enumerate() {
            if set.contains(s) {
                if first {
                    write!(w, "{s}:")?;
                    first = false;
                }
                write!(w, " {i}")?;
            }
        }
        if !first {
            writeln!(w)?;
        }
    }
    Ok(())
}

fn reward_comment(r: &RewardStructure, w: &mut dyn Write) -> Result<()> {
    if let Some(n) = &r.name {
        writeln!(w, "# Reward structure \"{n}\"")?;
    }
    Ok(())
}

/// Writes the state rewards of `r` as a `.srew` file (only non-zero entries).
pub fn write_srew(dtmc: &Dtmc, r: &RewardStructure, w: &mut dyn Write) -> Result<()> {
    reward_comment(r, w)?;
    let zeros = vec![0.0; dtmc.num_states()];
    let v = r.state.as_deref().unwrap_or(&zeros);
    let nnz = v.iter().filter(|&&x| x != 0.0).count();
    writeln!(w, "{} {}", dtmc.num_states(), nnz)?;
    for (s, &x) in v.iter().enumerate() {
        if x != 0.0 {
            writeln!(w, "{s} {}", Num(x))?;
        }
    }
    Ok(())
}

/// Writes the transition rewards of `r` as a `.trew` file (only non-zero entries).
pub fn write_trew(dtmc: &Dtmc, r: &RewardStructure, w: &mut dyn Write) -> Result<()> {
    reward_comment(r, w)?;
    let zeros = vec![0.0; dtmc.num_transitions()];
    let v = r.transition.as_deref().unwrap_or(&zeros);
    let nnz = v.iter().filter(|&&x| x != 0.0).count();
    writeln!(w, "{} {}", dtmc.num_states(), nnz)?;
    for s in 0..dtmc.num_states() {
        for k in dtmc.row_range(s) {
            if let Some(&x) = v.get(k) {
                if x != 0.0 {
                    writeln!(w, "{s} {} {}", dtmc.matrix.indices()[k], Num(x))?;
                }
            }
        }
    }
    Ok(())
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(BUF, f))
        .map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })
}

/// Writes `foo.tra`, `foo.lab`, and when the model has them `foo.sta`, `foo.srew`,
/// `foo.trew` (the first reward structure only: the explicit format holds one). Returns the
/// paths written.
pub fn write_prism_explicit(dtmc: &Dtmc, tra: &Path) -> Result<Vec<PathBuf>> {
    let p = ExplicitPaths::from_tra(tra);
    let mut written = Vec::new();
    let mut go = |path: &Path, f: &dyn Fn(&mut dyn Write) -> Result<()>| -> Result<()> {
        let mut w = create(path)?;
        f(&mut w)?;
        w.flush().map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        written.push(path.to_path_buf());
        Ok(())
    };
    go(&p.tra, &|w| write_tra(dtmc, w))?;
    go(&p.lab, &|w| write_lab(dtmc, w))?;
    if let Some(v) = &dtmc.valuations {
        go(&p.sta, &|w| write_sta(v, w))?;
    }
    if let Some(r) = dtmc.rewards.first() {
        if r.state.is_some() {
            go(&p.srew, &|w| write_srew(dtmc, r, w))?;
        }
        if r.transition.is_some() {
            go(&p.trew, &|w| write_trew(dtmc, r, w))?;
        }
    }
    Ok(written)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use augur_dtmc::Valuations;
    use augur_expr::{Type, Value};
    use std::io::Cursor;

    pub(crate) fn sample() -> Dtmc {
        let mut b = DtmcBuilder::new(4);
        b.add_row(0, [(1, 0.5), (2, 0.25), (3, 0.25)]).unwrap();
        b.add_row(1, [(0, 0.1), (1, 0.9)]).unwrap();
        b.add_row(2, [(2, 1.0)]).unwrap();
        b.add_row(3, [(3, 1.0)]).unwrap();
        b.add_initial(0).unwrap();
        b.add_label_state("goal", 2).unwrap();
        b.add_label_state("bad", 3).unwrap();
        b.add_label_state("goal", 3).unwrap();
        let r = b.add_reward_structure(Some("cost"));
        b.add_state_reward(r, 0, 1.5).unwrap();
        b.add_state_reward(r, 1, 1.0 / 3.0).unwrap();
        b.add_transition_reward(r, 0, 2, 2.0).unwrap();
        b.set_valuations(Valuations::new(
            vec!["x".into(), "ok".into(), "w".into()],
            vec![Type::Int, Type::Bool, Type::Double],
            (0..4)
                .flat_map(|i| {
                    [
                        Value::Int(i - 1),
                        Value::Bool(i % 2 == 0),
                        Value::Double(i as f64 / 4.0),
                    ]
                })
                .collect(),
        ));
        b.build().unwrap().0
    }

    fn read_str(
        tra: &str,
        lab: Option<&str>,
        srew: Option<&str>,
        trew: Option<&str>,
        sta: Option<&str>,
    ) -> Result<(Dtmc, BuildReport)> {
        let mut t = Cursor::new(tra.as_bytes());
        let mut l = lab.map(|s| Cursor::new(s.as_bytes()));
        let mut sr = srew.map(|s| Cursor::new(s.as_bytes()));
        let mut tr = trew.map(|s| Cursor::new(s.as_bytes()));
        let mut st = sta.map(|s| Cursor::new(s.as_bytes()));
        read_prism_explicit_from(
            ExplicitInputs {
                tra: (Path::new("m.tra"), &mut t),
                lab: l
                    .as_mut()
                    .map(|r| (Path::new("m.lab"), r as &mut dyn BufRead)),
                srew: sr
                    .as_mut()
                    .map(|r| (Path::new("m.srew"), r as &mut dyn BufRead)),
                trew: tr
                    .as_mut()
                    .map(|r| (Path::new("m.trew"), r as &mut dyn BufRead)),
                sta: st
                    .as_mut()
                    .map(|r| (Path::new("m.sta"), r as &mut dyn BufRead)),
            },
            &ReadOptions::default(),
        )
    }

    pub(crate) fn assert_same(a: &Dtmc, b: &Dtmc) {
        assert_eq!(a.matrix, b.matrix);
        assert_eq!(a.initial, b.initial);
        assert_eq!(a.labels, b.labels);
        assert_eq!(a.rewards, b.rewards);
        assert_eq!(a.valuations, b.valuations);
    }

    #[test]
    fn round_trip_through_files() {
        let d = sample();
        let dir = tempfile::tempdir().unwrap();
        let tra = dir.path().join("m.tra");
        let written = write_prism_explicit(&d, &tra).unwrap();
        assert_eq!(written.len(), 5);
        let (back, rep) = read_prism_explicit(&tra, &ReadOptions::default()).unwrap();
        assert!(rep.deadlocks_fixed.is_empty());
        assert_same(&d, &back);
        let text = std::fs::read_to_string(dir.path().join("m.lab")).unwrap();
        assert_eq!(
            text,
            "0=\"init\" 1=\"deadlock\" 2=\"goal\" 3=\"bad\"\n0: 0\n2: 2\n3: 2 3\n"
        );
    }

    #[test]
    fn diagnostics_point_at_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let tra = dir.path().join("bad.tra");
        std::fs::write(&tra, "2 2\n0 1 1\n1\t9 1\n").unwrap();
        let e = read_prism_explicit(&tra, &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line(), Some(3));
        assert_eq!(e.column(), Some(3));
        let d = e.diagnostic().to_string();
        assert!(d.ends_with("3 | 1\t9 1\n  |  \t^\n"), "{d}");
        // A row that does not sum to 1, found when the model is built: the file is read again
        // to show the row's last entry, with the caret under its probability.
        std::fs::write(&tra, "2 2\n0 1 0.5\n1 1 1\n").unwrap();
        let e = read_prism_explicit(&tra, &ReadOptions::default()).unwrap_err();
        let d = e.diagnostic().to_string();
        assert!(
            d.starts_with("error: row of state 0 sums to 0.5, not 1\n"),
            "{d}"
        );
        assert!(d.ends_with("2 | 0 1 0.5\n  |     ^^^\n"), "{d}");
        // A count in the header that the file does not match: under the count.
        std::fs::write(&tra, "2 3\n0 1 1\n1 1 1\n").unwrap();
        let e = read_prism_explicit(&tra, &ReadOptions::default()).unwrap_err();
        assert!(e.diagnostic().to_string().ends_with("1 | 2 3\n  |   ^\n"));
    }

    #[test]
    fn reads_prism_style_files() {
        let (d, _) = read_str(
            "3 4\n0 1 0.5\n0 2 1/2\n1 1 1\n2 2 1\n",
            Some("0=\"init\" 1=\"deadlock\" 2=\"goal\"\n1: 0\n2: 2\n"),
            Some("# Reward structure \"r\"\n# State rewards\n3 1\n0 2.5\n"),
            Some("3 1\n0 2 4\n"),
            Some("(x,b)\n0:(0,false)\n1:(1,true)\n2:(2,false)\n"),
        )
        .unwrap();
        assert_eq!(d.initial, vec![1]);
        assert_eq!(d.rewards[0].name.as_deref(), Some("r"));
        assert_eq!(d.rewards[0].state, Some(vec![2.5, 0.0, 0.0]));
        assert_eq!(d.rewards[0].transition, Some(vec![0.0, 4.0, 0.0, 0.0]));
        assert_eq!(d.describe_state(1).unwrap(), "(x=1,b=true)");
        // An "init" label declared with no state is an error at its declaration (as a JSON
        // model whose "init" label is empty), in both label formats (issue 15, item 10).
        for (lab, at) in [
            ("0=\"x\" 1=\"init\"\n0: 0\n", "m.lab:1:7"),
            ("#DECLARATION\nx init\n#END\n0 x\n", "m.lab:2:3"),
        ] {
            let e = read_str("1 1\n0 0 1\n", Some(lab), None, None, None).unwrap_err();
            let text = e.to_string();
            assert!(text.contains("\"init\" label has no state"), "{text}");
            assert!(
                e.diagnostic().to_string().contains(at),
                "{}",
                e.diagnostic()
            );
        }
        // Without a label file the initial state is 0.
        let (d, _) = read_str("1 1\n0 0 1\n", None, None, None, None).unwrap();
        assert_eq!(d.initial, vec![0]);
    }

    #[test]
    fn reads_storm_explicit_variant() {
        let (d, _) = read_str(
            "dtmc\n0 1 0.5\n0 2 0.5\n1 1 1\n2 2 1\n",
            Some("#DECLARATION\ninit goal\ndone\n#END\n0 init\n2 goal done\n"),
            Some("0 3\n"),
            Some("0 2 1.5\n"),
            None,
        )
        .unwrap();
        assert_eq!(d.num_states(), 3);
        assert_eq!(d.initial, vec![0]);
        assert_eq!(
            d.label_names().collect::<Vec<_>>(),
            ["init", "deadlock", "goal", "done"]
        );
        assert!(d.label("done").unwrap().contains(2));
        assert_eq!(d.rewards[0].state, Some(vec![3.0, 0.0, 0.0]));
        assert_eq!(d.rewards[0].transition, Some(vec![0.0, 1.5, 0.0, 0.0]));
        let cases: &[(&str, Option<&str>, usize, &str)] = &[
            ("mdp\n0 0 1\n", None, 1, "model type `mdp`"),
            ("dtmc\n", None, 1, "no transitions after `dtmc`"),
            (
                "dtmc\n0 1 1\n",
                Some("#DECLARATION\ninit\n#END\n0 init\n1 goal\n"),
                5,
                "label `goal` not declared",
            ),
            (
                "dtmc\n0 1 1\n",
                Some("#DECLARATION\ninit\n"),
                3, // the end of the file
                "missing `#END`",
            ),
            (
                "dtmc\n0 1 1\n1 0 0.5\n",
                None,
                3,
                "row of state 1 sums to 0.5",
            ),
        ];
        for (tra, lab, line, msg) in cases {
            let e = read_str(tra, *lab, None, None, None).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.line(), Some(*line), "{m}");
            assert!(m.contains(msg), "{m}");
        }
    }

    fn line_of(r: Result<(Dtmc, BuildReport)>) -> (Option<usize>, String) {
        let e = r.unwrap_err();
        (e.line(), e.to_string())
    }

    /// Reads `tra` through a buffer of `capacity` bytes (lines then straddle the buffer's
    /// fills).
    fn read_buffered(tra: &str, capacity: usize) -> Result<(Dtmc, BuildReport)> {
        let mut t = std::io::BufReader::with_capacity(capacity, tra.as_bytes());
        read_prism_explicit_from(
            ExplicitInputs {
                tra: (Path::new("m.tra"), &mut t),
                lab: None,
                srew: None,
                trew: None,
                sta: None,
            },
            &ReadOptions::default(),
        )
    }

    #[test]
    fn lines_read_the_same_through_any_buffer() {
        // Plain lines and the others (a comment, a blank line, CRLF, a tab, a fraction, `+`,
        // a leading zero, a last line without `\n`).
        let tra = "# c\n4 6\n0 1 0.5\n\n0 2 1/4\r\n0  3 0.25\n1\t1 1\n# c\n+2 2 1e0\n3 03 1";
        let (d, _) = read_str(tra, None, None, None, None).unwrap();
        assert_eq!(d.matrix.indices(), &[1, 2, 3, 1, 2, 3]);
        assert_eq!(d.matrix.data(), &[0.5, 0.25, 0.25, 1.0, 1.0, 1.0]);
        for capacity in 1..12 {
            let (e, _) = read_buffered(tra, capacity).unwrap();
            assert_same(&d, &e);
        }
        // Errors name the same line, column and text whatever the buffer.
        for bad in [
            "2 2\n0 1 1\n1 1 1.5\n",
            "2 2\n0 1 1\n1\t9 1\n",
            "2 2\n0 1 1\n1 1 \u{e9}\n",
            "2 2\n0 1 0.5\n1 1 1\n",
            "2 3\n0 1 1\n1 1 1\n",
        ] {
            let want = read_str(bad, None, None, None, None)
                .unwrap_err()
                .diagnostic()
                .to_string();
            for capacity in 1..12 {
                let got = read_buffered(bad, capacity).unwrap_err();
                assert_eq!(got.diagnostic().to_string(), want, "{bad:?} {capacity}");
            }
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_located_in_the_body() {
        let bytes = b"2 2\n0 1 1\n1 1 1\xff\n";
        for capacity in [1, 5, 64] {
            let mut t = std::io::BufReader::with_capacity(capacity, &bytes[..]);
            let e = read_tra(&mut t, Path::new("m.tra")).err().unwrap();
            assert_eq!(e.line(), Some(3), "{e}");
            assert_eq!(e.column(), Some(6), "{e}");
        }
    }

    /// The files of a model `m.tra` with a `.sta` (and a `.lab` when given) in a new folder.
    fn files(tra: &str, lab: Option<&str>, sta: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.tra");
        std::fs::write(&path, tra).unwrap();
        std::fs::write(dir.path().join("m.sta"), sta).unwrap();
        if let Some(lab) = lab {
            std::fs::write(dir.path().join("m.lab"), lab).unwrap();
        }
        (dir, path)
    }

    #[test]
    fn a_sta_read_beside_its_tra_reports_as_one_read_after_it() {
        let sta = "(x)\n0:(4)\n1:(5)\n2:(6)\n";
        let tra = "3 3\n0 1 1\n1 2 1\n2 2 1\n";
        let (_dir, path) = files(tra, None, sta);
        let (d, _) = read_prism_explicit(&path, &ReadOptions::default()).unwrap();
        assert_eq!(d.describe_state(2).unwrap(), "(x=6)");
        // An error in the `.tra` (before or after its rows), or in the `.lab`, comes first; a
        // row error names the state's valuation.
        let bad_sta = "(x)\n0:(4)\n1:(5)\n1:(6)\n";
        let cases: &[(&str, Option<&str>, &str, &str)] = &[
            ("3 3\n0 1 1\n1 2 x\n2 2 1\n", None, bad_sta, "m.tra:3:5"),
            ("3 4\n0 1 1\n1 2 1\n2 2 1\n", None, bad_sta, "m.tra:1:3"),
            (tra, Some("0=\"init\"\n7: 0\n"), bad_sta, "m.lab:2:1"),
            (tra, None, bad_sta, "m.sta:4:1"),
            ("3 3\n0 1 1\n1 2 0.5\n2 2 1\n", None, sta, "m.tra:3:5"),
        ];
        for (tra, lab, sta, at) in cases {
            let (_dir, path) = files(tra, *lab, sta);
            let e = read_prism_explicit(&path, &ReadOptions::default()).unwrap_err();
            let d = e.diagnostic().to_string();
            assert!(d.contains(at), "{at}: {d}");
        }
        let (_dir, path) = files("3 3\n0 1 1\n1 2 0.5\n2 2 1\n", None, sta);
        let e = read_prism_explicit(&path, &ReadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("(x=5)"), "{e}");
        // Under a root, the reading thread keeps the confinement.
        let (dir, path) = files(tra, None, sta);
        let (d, _) = crate::confine::within_root(dir.path(), || {
            read_prism_explicit(&path, &ReadOptions::default())
        })
        .unwrap()
        .unwrap();
        assert_eq!(d.describe_state(1).unwrap(), "(x=5)");
    }

    #[test]
    fn malformed_tra() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "expected header"),
            ("3\n", 1, "expected header `states transitions`"),
            ("2 x\n", 1, "expected header"),
            ("2 2\n0 1 0.5\n0 1\n", 3, "expected `src dst prob`"),
            ("2 2\n0 1 1.5\n1 1 1\n", 2, "probability 1.5 not in [0,1]"),
            (
                "2 2\n0 1 abc\n1 1 1\n",
                2,
                "expected a probability, found `abc`",
            ),
            ("2 2\n0 1 NaN\n1 1 1\n", 2, "probability NaN not in [0,1]"),
            ("2 2\n0 7 1\n1 1 1\n", 2, "state 7 out of range (2 states)"),
            ("2 2\n0 1 1\n\n-1 1 1\n", 4, "expected a state index"),
            ("2 2\n0 0 1 1\n1 1 1\n", 2, "MDP"),
            (
                "2 3\n0 1 1\n1 1 1\n",
                1,
                "header says 3 transitions, the file has 2",
            ),
            (
                "3 4\n0 1 1\n1 1 1\n2 2 0.5\n2 1 0.4\n",
                5,
                "row of state 2 sums to 0.9",
            ),
        ];
        for (text, line, msg) in cases {
            let (l, m) = line_of(read_str(text, None, None, None, None));
            assert_eq!(l, Some(*line), "{text:?}: {m}");
            assert!(m.contains(msg), "{text:?}: {m}");
            assert!(m.starts_with("m.tra:"), "{m}");
        }
        // Column of the offending token.
        let e = read_str("2 2\n0  9 1\n1 1 1\n", None, None, None, None).unwrap_err();
        assert_eq!(e.column(), Some(4));
    }

    #[test]
    fn deadlocks_fixed_or_rejected() {
        let (d, rep) = read_str("2 1\n0 1 1\n", None, None, None, None).unwrap();
        assert_eq!(rep.deadlocks_fixed, vec![1]);
        assert_eq!(d.successors(1).collect::<Vec<_>>(), vec![(1, 1.0)]);
        let mut t = Cursor::new(&b"2 1\n0 1 1\n"[..]);
        let e = read_prism_explicit_from(
            ExplicitInputs {
                tra: (Path::new("m.tra"), &mut t),
                lab: None,
                srew: None,
                trew: None,
                sta: None,
            },
            &ReadOptions {
                fix_deadlocks: false,
                ..ReadOptions::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("deadlock"), "{e}");
    }

    type Case<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
        usize,
        &'a str,
    );

    #[test]
    fn malformed_companions() {
        let tra = "2 2\n0 1 1\n1 1 1\n";
        let cases: &[Case<'_>] = &[
            (
                Some("0=init\n"),
                None,
                None,
                None,
                "m.lab",
                1,
                "expected `index=\"name\"`",
            ),
            (
                Some("0=\"init\"\n0: 1\n"),
                None,
                None,
                None,
                "m.lab",
                2,
                "label index 1 out of range",
            ),
            (
                Some("0=\"init\"\n5: 0\n"),
                None,
                None,
                None,
                "m.lab",
                2,
                "state 5 out of range (2 states)",
            ),
            (
                Some("0=\"init\"\n0 0\n"),
                None,
                None,
                None,
                "m.lab",
                2,
                "expected `state: label-indices`",
            ),
            (
                None,
                Some("2 1\n0 x\n"),
                None,
                None,
                "m.srew",
                2,
                "expected a finite reward",
            ),
            (
                None,
                Some("3 0\n"),
                None,
                None,
                "m.srew",
                1,
                "header says 3 states",
            ),
            (
                None,
                Some("2 2\n0 1\n"),
                None,
                None,
                "m.srew",
                1,
                "header says 2 rewards, the file has 1",
            ),
            (
                None,
                None,
                Some("2 1\n0 0 1\n"),
                None,
                "m.trew",
                2,
                "0 -> 0 is not a transition",
            ),
            (
                None,
                None,
                Some("2 1\n0 1\n"),
                None,
                "m.trew",
                2,
                "expected `src dst reward`",
            ),
            (
                None,
                None,
                None,
                Some("x,y\n"),
                "m.sta",
                1,
                "expected the variable list",
            ),
            (
                None,
                None,
                None,
                Some("(x)\n0:(1)\n1:(true)\n"),
                "m.sta",
                3,
                "variable x is int on line 2",
            ),
            (
                None,
                None,
                None,
                Some("(x)\n0:(1)\n"),
                "m.sta",
                3, // the end of the file
                "state 1 has no valuation",
            ),
            (
                None,
                None,
                None,
                Some("(x,y)\n0:(1)\n1:(1,2)\n"),
                "m.sta",
                2,
                "expected 2 values, found 1",
            ),
            (
                None,
                None,
                None,
                Some("(x,y,x)\n0:(1,2,3)\n1:(1,2,3)\n"),
                "m.sta",
                1,
                "variable `x` listed twice",
            ),
        ];
        for (lab, srew, trew, sta, file, line, msg) in cases {
            let e = read_str(tra, *lab, *srew, *trew, *sta).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.line(), Some(*line), "{m}");
            assert!(m.starts_with(file), "{m}");
            assert!(m.contains(msg), "{m}");
        }
    }
}
