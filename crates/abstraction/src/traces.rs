//! Reading traces, streaming: JSON Lines (one trace per line) and CSV long form (one step per
//! row). Neither reader holds more than one trace in memory.
//!
//! JSON Lines: `{"id": "t1", "category": "cooking", "steps": [{"location": "table", ...},
//! {"state": "NAME"}, ...]}`. `id` (a string or a number) and `category` are optional; a step
//! is either an object of concrete variable values or `{"state": "NAME"}` for an abstract state.
//! Blank lines are ignored.
//!
//! CSV long form: a header `trace,step,var1,var2,...` (`category` and `state` columns are
//! optional), one row per step; the rows of a trace are consecutive and their `step` numbers
//! increase. Empty cells are missing values.
//!
//! Every error names the file and the line, with a caret under the offending field: the JSON
//! value or the CSV cell. Steps remember where they were written ([`StepSource`]), so that an
//! error found later (a value the abstraction cannot take) points at the value too.

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{BufRead, Read};
use std::rc::Rc;
use std::sync::Arc;

use augur_expr::Value;
use augur_source::json::JsonPath;
use augur_source::{Location, Span};

use crate::error::{AbstractionError, Result};
use crate::spec::{Abstraction, VarKind};

/// A trace file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// JSON Lines, one trace per line.
    JsonLines,
    /// CSV long form, one step per row.
    Csv,
}

impl TraceFormat {
    /// CSV for a `.csv` file name, JSON Lines otherwise.
    pub fn from_path(path: &std::path::Path) -> TraceFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => TraceFormat::Csv,
            _ => TraceFormat::JsonLines,
        }
    }
}

/// A value as written in a trace.
#[derive(Clone, Debug, PartialEq)]
pub enum RawValue {
    /// A JSON value (JSON Lines).
    Json(serde_json::Value),
    /// A CSV cell's text.
    Text(String),
}

/// One step of a trace.
#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// An abstract state given by name (`{"state": "NAME"}`).
    Named(String),
    /// Concrete variable values, by variable name.
    Values(Vec<(String, RawValue)>),
}

/// A step and the line it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// 1-based line of the file.
    pub line: usize,
    /// The step.
    pub kind: StepKind,
    /// The text the step was read from, for locating errors about it (`None` for steps made
    /// in memory).
    pub source: Option<StepSource>,
}

/// Where a step was written: the text of its line (shared by the steps of a JSON Lines trace)
/// and how to find the step and its values in it. Spans are computed only when an error
/// needs them.
#[derive(Clone, Debug, PartialEq)]
pub enum StepSource {
    /// Step `index` of the `"steps"` array of a JSON Lines trace.
    Json {
        /// The line's text.
        text: Arc<str>,
        /// The step's position in `"steps"`.
        index: usize,
    },
    /// One CSV row.
    Csv {
        /// The row's (first) line of text.
        text: Arc<str>,
        /// The header's column names, to find a variable's cell.
        columns: Arc<[String]>,
    },
}

impl StepSource {
    /// The text of the step's line.
    pub fn text(&self) -> &str {
        match self {
            StepSource::Json { text, .. } | StepSource::Csv { text, .. } => text,
        }
    }

    /// The byte range of the step in its line, or of `variable`'s value when the step gives
    /// one (the JSON value, the CSV cell).
    pub fn span_of(&self, variable: Option<&str>) -> Span {
        match self {
            StepSource::Json { text, index } => {
                let step = JsonPath::root().key("steps").index(*index);
                let whole = step.span_in(text);
                variable
                    .and_then(|v| step.key(v).span_in(text))
                    .or(whole)
                    .unwrap_or_else(|| trimmed_span(text))
            }
            StepSource::Csv { text, columns } => {
                let cells = csv_cell_spans(text);
                variable
                    .and_then(|v| columns.iter().position(|c| c == v))
                    .and_then(|i| cells.get(i).copied())
                    .unwrap_or_else(|| trimmed_span(text))
            }
        }
    }
}

impl Step {
    /// The location of this step in `file` (of `variable`'s value when given and found); the
    /// line alone for a step without a [`StepSource`].
    pub fn location(&self, file: &str, variable: Option<&str>) -> Location {
        match &self.source {
            Some(src) => {
                Location::in_line_bytes(file, self.line, src.text(), src.span_of(variable))
            }
            None => Location::line(file, self.line),
        }
    }
}

/// The span of `text` without its leading and trailing whitespace (the whole line as the
/// cause).
fn trimmed_span(text: &str) -> Span {
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len().max(start);
    Span::new(start, end)
}

/// The byte ranges of the cells of one CSV line (comma-separated, `"..."` quoting with `""`
/// for a quote; surrounding spaces left out, as the reader trims them). A quoted cell that
/// runs past the end of the line ends there.
fn csv_cell_spans(line: &str) -> Vec<Span> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        let start = i;
        if i < bytes.len() && bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() {
                if bytes[i] == b'"' {
                    if bytes.get(i + 1) == Some(&b'"') {
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                i += 1;
            }
        }
        while i < bytes.len() && bytes[i] != b',' {
            i += 1;
        }
        let mut end = i;
        while end > start && matches!(bytes[end - 1], b' ' | b'\t' | b'\r') {
            end -= 1;
        }
        spans.push(Span::new(start, end));
        if i >= bytes.len() {
            return spans;
        }
        i += 1;
    }
}

/// A trace as read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// Its id (`line N` when the file gives none).
    pub id: String,
    /// Its category, if given.
    pub category: Option<String>,
    /// The line where it starts.
    pub line: usize,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

enum Inner<R: BufRead> {
    Jsonl {
        reader: R,
        line: usize,
        buf: Vec<u8>,
    },
    Csv(Box<CsvState<R>>),
}

/// A reader that keeps what it has read since the start of the current CSV record, so that
/// errors can show the record's line as the user wrote it.
struct Tap<R> {
    inner: R,
    log: Rc<RefCell<TapLog>>,
}

#[derive(Default)]
struct TapLog {
    /// Byte offset (in the input) of `bytes[0]`.
    start: u64,
    bytes: Vec<u8>,
}

impl TapLog {
    /// The text of the line starting at input offset `at` (the start of the current
    /// record), after dropping what comes before it.
    fn line_at(&mut self, at: u64) -> String {
        let mut rel = (at.saturating_sub(self.start) as usize).min(self.bytes.len());
        // Drop what was read before in large steps (not per record: that would move the
        // read-ahead buffer's bytes on every row).
        if rel >= 1 << 16 {
            self.bytes.drain(..rel);
            self.start += rel as u64;
            rel = 0;
        }
        let rest = &self.bytes[rel..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let text = String::from_utf8_lossy(&rest[..end]);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        // A byte-order mark (Windows editors) is not part of the first line.
        text.strip_prefix('\u{feff}').unwrap_or(text).to_string()
    }
}

impl<R: Read> Read for Tap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.log.borrow_mut().bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

struct CsvState<R: BufRead> {
    reader: csv::Reader<Tap<R>>,
    log: Rc<RefCell<TapLog>>,
    columns: Option<CsvColumns>,
    current: Option<(Trace, i64)>,
    finished: HashSet<String>,
    poisoned: Option<String>,
    done: bool,
}

struct CsvColumns {
    trace: usize,
    step: usize,
    category: Option<usize>,
    state: Option<usize>,
    vars: Vec<(usize, String)>,
    /// Number of columns in the header.
    width: usize,
    /// The header's names, in order.
    names: Arc<[String]>,
}

/// A streaming reader of traces: an iterator of `Result<Trace>`. After an error the reader goes
/// on with the next line (JSON Lines) or the next trace (CSV), so callers may skip bad input.
pub struct TraceReader<R: BufRead> {
    file: String,
    inner: Inner<R>,
}

/// The traces of `reader` in `format`, as [`TraceReader`] reads them, behind a trait object.
/// The reader's code is compiled once, in this crate (optimised), rather than in each caller
/// that names a reader type: the binary is built at a lower optimisation level.
pub fn read_traces<'a>(
    reader: Box<dyn BufRead + 'a>,
    format: TraceFormat,
    file: &str,
) -> Box<dyn Iterator<Item = Result<Trace>> + 'a> {
    Box::new(TraceReader::new(reader, format, file))
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `format` over `reader`; `file` names the input in errors.
    pub fn new(reader: R, format: TraceFormat, file: &str) -> Self {
        let inner = match format {
            TraceFormat::JsonLines => Inner::Jsonl {
                reader,
                line: 0,
                buf: Vec::new(),
            },
            TraceFormat::Csv => {
                let log = Rc::new(RefCell::new(TapLog::default()));
                Inner::Csv(Box::new(CsvState {
                    reader: csv::ReaderBuilder::new()
                        .has_headers(false)
                        .flexible(true)
                        .trim(csv::Trim::All)
                        .from_reader(Tap {
                            inner: reader,
                            log: Rc::clone(&log),
                        }),
                    log,
                    columns: None,
                    current: None,
                    finished: HashSet::new(),
                    poisoned: None,
                    done: false,
                }))
            }
        };
        TraceReader {
            file: file.to_string(),
            inner,
        }
    }
}

/// A bad CSV row: the cell at fault (the whole row when `None`) and the message.
type CellError = (Option<usize>, String);

/// Where in a JSON Lines trace an error is: a byte offset (serde's syntax errors) or a value.
enum JsonAt {
    Offset(usize),
    Path(JsonPath),
}

fn parse_json_trace(text: &str, line: usize) -> std::result::Result<Trace, (String, JsonAt)> {
    let root = JsonPath::root;
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        // serde's message ends with "at line 1 column N": the line within the JSON text,
        // which is always 1 here and contradicts the file line of the error.
        let msg = e.to_string();
        let msg = match msg.rsplit_once(" at line ") {
            Some((m, _)) => m.to_string(),
            None => msg,
        };
        // serde counts the column in bytes from 1 (0 at the very start); at the end of the
        // input the cause is the missing rest, after the last character.
        if e.is_eof() {
            return (format!("invalid JSON: {msg}"), JsonAt::Offset(text.len()));
        }
        let offset = text
            .lines()
            .take(e.line().saturating_sub(1))
            .map(|l| l.len() + 1)
            .sum::<usize>()
            + e.column().saturating_sub(1);
        (format!("invalid JSON: {msg}"), JsonAt::Offset(offset))
    })?;
    let bad = |m: &str, p: JsonPath| (m.to_string(), JsonAt::Path(p));
    let obj = v.as_object().ok_or_else(|| {
        bad(
            "a trace must be a JSON object {\"id\": ..., \"steps\": [...]}",
            root(),
        )
    })?;
    let id = match obj.get("id") {
        None | Some(serde_json::Value::Null) => format!("line {line}"),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(_) => return Err(bad("\"id\" must be a string or a number", root().key("id"))),
    };
    let category = match obj.get("category") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad("\"category\" must be a string", root().key("category"))),
    };
    let steps = obj
        .get("steps")
        .ok_or_else(|| bad("missing \"steps\"", root()))?
        .as_array()
        .ok_or_else(|| bad("\"steps\" must be an array", root().key("steps")))?;
    let shared: Arc<str> = Arc::from(text);
    let mut out = Vec::with_capacity(steps.len());
    for (i, s) in steps.iter().enumerate() {
        let at = || root().key("steps").index(i);
        let so = s
            .as_object()
            .ok_or_else(|| bad(&format!("step {i}: a step must be an object"), at()))?;
        let kind = match so.get("state") {
            Some(serde_json::Value::String(name)) => StepKind::Named(name.clone()),
            Some(_) => {
                return Err(bad(
                    &format!("step {i}: \"state\" must be a string"),
                    at().key("state"),
                ))
            }
            None => StepKind::Values(
                so.iter()
                    .map(|(k, v)| (k.clone(), RawValue::Json(v.clone())))
                    .collect(),
            ),
        };
        out.push(Step {
            line,
            kind,
            source: Some(StepSource::Json {
                text: Arc::clone(&shared),
                index: i,
            }),
        });
    }
    Ok(Trace {
        id,
        category,
        line,
        steps: out,
    })
}

/// The message of a line that is not UTF-8 (as the standard library words it).
const NOT_UTF8: &str = "cannot read: stream did not contain valid UTF-8";

/// One line of a JSON Lines trace file, as [`TraceReader`] reads it: line `line` (1-based) of
/// `file`, its bytes with or without the line break. `None` for a blank line; an error for a
/// line that is not UTF-8 or not a trace, located at the offending byte or value. A
/// byte-order mark before line 1 is ignored. Every reader of JSON Lines traces (sequential or
/// parallel) goes through this function, so that they accept and reject the same lines with
/// the same messages.
pub fn parse_jsonl_line(bytes: &[u8], line: usize, file: &str) -> Option<Result<Trace>> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Some(Err(AbstractionError::Trace {
            location: Location::line(file, line),
            message: NOT_UTF8.to_string(),
        }));
    };
    let content = jsonl_content(text, line)?;
    Some(parse_json_trace(content, line).map_err(|(message, at)| {
        let span = match at {
            JsonAt::Offset(o) => Span::point(o.min(content.len())),
            JsonAt::Path(p) => p.span_in(content).unwrap_or_else(|| trimmed_span(content)),
        };
        AbstractionError::Trace {
            location: Location::in_line_bytes(file, line, content, span),
            message,
        }
    }))
}

/// The JSON text of line `line` (1-based): without its line break, and on line 1 without a
/// byte-order mark (Windows editors); `None` when it is blank.
pub fn jsonl_content(text: &str, line: usize) -> Option<&str> {
    let text = if line == 1 {
        text.strip_prefix('\u{feff}').unwrap_or(text)
    } else {
        text
    };
    let content = text.trim_end_matches(['\n', '\r']);
    (!content.trim().is_empty()).then_some(content)
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Trace>;

    fn next(&mut self) -> Option<Result<Trace>> {
        let file = self.file.clone();
        match &mut self.inner {
            Inner::Jsonl { reader, line, buf } => loop {
                buf.clear();
                *line += 1;
                match reader.read_until(b'\n', buf) {
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(e) => {
                        return Some(Err(AbstractionError::Trace {
                            location: Location::line(&file, *line),
                            message: format!("cannot read: {e}"),
                        }))
                    }
                }
                if let Some(item) = parse_jsonl_line(buf, *line, &file) {
                    return Some(item);
                }
            },
            Inner::Csv(_) => self.next_csv(),
        }
    }
}

impl<R: BufRead> TraceReader<R> {
    fn next_csv(&mut self) -> Option<Result<Trace>> {
        let file = self.file.clone();
        let Inner::Csv(state) = &mut self.inner else {
            return None;
        };
        let CsvState {
            reader,
            log,
            columns,
            current,
            finished,
            poisoned,
            done,
        } = &mut **state;
        // An error on a line of text, under the cell `cell` (the whole line when `None`).
        let err = |line: usize, text: &str, cell: Option<usize>, m: String| {
            let span = cell
                .and_then(|c| csv_cell_spans(text).get(c).copied())
                .unwrap_or_else(|| trimmed_span(text));
            AbstractionError::Trace {
                location: Location::in_line_bytes(&file, line, text, span),
                message: m,
            }
        };
        loop {
            if *done {
                return None;
            }
            let mut record = csv::StringRecord::new();
            let read = reader.read_record(&mut record);
            let line = record.position().map_or(0, |p| p.line() as usize);
            let byte = record.position().map_or(0, |p| p.byte());
            match read {
                Err(e) => {
                    let pos = e.position();
                    let l = pos.map_or(line, |p| p.line() as usize);
                    let text = log.borrow_mut().line_at(pos.map_or(byte, |p| p.byte()));
                    if let Some((t, _)) = current.take() {
                        *poisoned = Some(t.id);
                    }
                    return Some(Err(err(l, &text, None, format!("invalid CSV: {e}"))));
                }
                Ok(false) => {
                    *done = true;
                    return current.take().map(|(t, _)| Ok(t));
                }
                Ok(true) => {}
            }
            let text = log.borrow_mut().line_at(byte);
            let Some(cols) = columns.as_ref() else {
                // The header.
                // A byte-order mark (Windows editors) is not part of the first column's name.
                let names: Vec<String> = record
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let c = if i == 0 {
                            c.trim_start_matches('\u{feff}')
                        } else {
                            c
                        };
                        c.to_string()
                    })
                    .collect();
                let find = |n: &str| names.iter().position(|c| c == n);
                let (Some(trace), Some(step)) = (find("trace"), find("step")) else {
                    *done = true;
                    return Some(Err(err(
                        line,
                        &text,
                        None,
                        "the CSV header must name the columns `trace` and `step` (then the variables)"
                            .into(),
                    )));
                };
                let category = find("category");
                let state = find("state");
                let vars = names
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| {
                        ![Some(trace), Some(step), category, state].contains(&Some(*i))
                    })
                    .map(|(i, n)| (i, n.clone()))
                    .collect();
                *columns = Some(CsvColumns {
                    trace,
                    step,
                    category,
                    state,
                    vars,
                    width: names.len(),
                    names: names.into(),
                });
                continue;
            };
            let id = record.get(cols.trace).unwrap_or("").to_string();
            if poisoned.as_deref() == Some(id.as_str()) {
                continue;
            }
            let row = (|| -> std::result::Result<(i64, Option<String>, Step), CellError> {
                if id.is_empty() {
                    return Err((Some(cols.trace), "empty `trace` cell".into()));
                }
                if record.len() > cols.width {
                    return Err((
                        Some(cols.width),
                        format!(
                            "{} fields, but the header names {} columns",
                            record.len(),
                            cols.width
                        ),
                    ));
                }
                let step_text = record.get(cols.step).unwrap_or("");
                let step: i64 = step_text.parse().map_err(|_| {
                    (
                        Some(cols.step),
                        format!("`step` must be an integer, found `{step_text}`"),
                    )
                })?;
                let category = cols
                    .category
                    .and_then(|c| record.get(c))
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                let named = cols
                    .state
                    .and_then(|c| record.get(c))
                    .filter(|s| !s.is_empty());
                let kind = match named {
                    Some(n) => StepKind::Named(n.to_string()),
                    None => StepKind::Values(
                        cols.vars
                            .iter()
                            .filter_map(|(i, n)| {
                                record
                                    .get(*i)
                                    .filter(|s| !s.is_empty())
                                    .map(|s| (n.clone(), RawValue::Text(s.to_string())))
                            })
                            .collect(),
                    ),
                };
                let source = Some(StepSource::Csv {
                    text: Arc::from(text.as_str()),
                    columns: Arc::clone(&cols.names),
                });
                Ok((step, category, Step { line, kind, source }))
            })();
            let (step_no, category, step) = match row {
                Ok(r) => r,
                Err((cell, m)) => {
                    if current.as_ref().is_some_and(|(t, _)| t.id == id) {
                        current.take();
                    }
                    *poisoned = Some(id);
                    return Some(Err(err(line, &text, cell, m)));
                }
            };
            if let Some((t, last)) = current.as_mut() {
                if t.id == id {
                    if step_no <= *last {
                        let m = format!(
                            "trace `{id}`: step {step_no} after step {last} (steps must increase)"
                        );
                        current.take();
                        *poisoned = Some(id);
                        return Some(Err(err(line, &text, Some(cols.step), m)));
                    }
                    *last = step_no;
                    t.steps.push(step);
                    continue;
                }
            }
            // A new trace starts here.
            if finished.contains(&id) {
                // The pending trace (another id) stays pending; the stray rows are dropped.
                let e = err(
                    line,
                    &text,
                    Some(cols.trace),
                    format!("trace `{id}` continues after other traces: the rows of a trace must be consecutive"),
                );
                *poisoned = Some(id);
                return Some(Err(e));
            }
            let new = Trace {
                id: id.clone(),
                category,
                line,
                steps: vec![step],
            };
            let previous = current.replace((new, step_no));
            if let Some((t, _)) = previous {
                finished.insert(t.id.clone());
                return Some(Ok(t));
            }
        }
    }
}

fn describe(v: &RawValue) -> String {
    match v {
        RawValue::Json(j) => j.to_string(),
        RawValue::Text(t) => format!("`{t}`"),
    }
}

impl Abstraction {
    /// The concrete state of a step's values: one value per variable in spec order (enum values
    /// as their positions). Every variable must be given; other keys are ignored.
    pub fn concrete_values(&self, values: &[(String, RawValue)]) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.variables().len());
        for var in self.variables() {
            let Some((_, raw)) = values.iter().find(|(n, _)| n == &var.name) else {
                return Err(AbstractionError::State(format!(
                    "missing variable `{}`",
                    var.name
                )));
            };
            let bad = |what: &str| AbstractionError::Value {
                variable: var.name.clone(),
                message: format!(
                    "variable `{}`: expected {what}, found {}",
                    var.name,
                    describe(raw)
                ),
            };
            let v = match (&var.kind, raw) {
                (VarKind::Bool, RawValue::Json(serde_json::Value::Bool(b))) => Value::Bool(*b),
                (VarKind::Bool, RawValue::Text(t)) => match t.as_str() {
                    "true" | "1" => Value::Bool(true),
                    "false" | "0" => Value::Bool(false),
                    _ => return Err(bad("a bool")),
                },
                (VarKind::Int { min, max }, _) => {
                    let i = match raw {
                        RawValue::Json(j) => j.as_i64(),
                        RawValue::Text(t) => t.parse().ok(),
                    }
                    .ok_or_else(|| bad("an int"))?;
                    if i < *min || i > *max {
                        return Err(AbstractionError::Value {
                            variable: var.name.clone(),
                            message: format!(
                                "variable `{}` = {i} is outside its range [{min}, {max}]",
                                var.name
                            ),
                        });
                    }
                    Value::Int(i)
                }
                (VarKind::Double, _) => {
                    let d = match raw {
                        RawValue::Json(j) => j.as_f64(),
                        RawValue::Text(t) => t.parse().ok(),
                    }
                    .filter(|d: &f64| d.is_finite())
                    .ok_or_else(|| bad("a number"))?;
                    Value::Double(d)
                }
                (VarKind::Enum(names), _) => {
                    let s = match raw {
                        RawValue::Json(serde_json::Value::String(s)) => s.as_str(),
                        RawValue::Text(t) => t.as_str(),
                        _ => return Err(bad(&format!("one of {}", names.join(", ")))),
                    };
                    let pos = names
                        .iter()
                        .position(|n| n == s)
                        .ok_or_else(|| bad(&format!("one of {}", names.join(", "))))?;
                    Value::Int(pos as i64)
                }
                (VarKind::Bool, _) => return Err(bad("a bool")),
            };
            out.push(v);
        }
        Ok(out)
    }

    /// The abstract state index of a step (concrete values or a canonical `{a,b}` name), with
    /// an error located in `file` at the step (at the offending value, when one is).
    pub fn step_state(&self, step: &Step, file: &str) -> Result<u32> {
        let r = match &step.kind {
            StepKind::Named(name) => self.parse_state_name(name).and_then(|code| {
                self.index_of(code).ok_or_else(|| {
                    AbstractionError::State(format!(
                        "state `{name}` is not a valid abstract state: {}",
                        self.why_invalid(code).unwrap_or_default()
                    ))
                })
            }),
            StepKind::Values(values) => self
                .concrete_values(values)
                .and_then(|c| self.abstract_state(&c)),
        };
        r.map_err(|e| e.at_step(file, step))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_located_in_the_line() {
        let line = " t1 ,\"a,\"\"b\"\" c\", 3 ,,x\r";
        let cells: Vec<&str> = csv_cell_spans(line)
            .iter()
            .map(|s| &line[s.start..s.end])
            .collect();
        assert_eq!(cells, ["t1", "\"a,\"\"b\"\" c\"", "3", "", "x"]);
        // An unterminated quote runs to the end of the line.
        let cells = csv_cell_spans("a,\"b,c");
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1], Span::new(2, 6));
    }

    #[test]
    fn the_tap_keeps_the_current_records_line() {
        let text = "trace,step,x\nt,0,1\nt,zero,2\n";
        let r: Vec<_> = TraceReader::new(text.as_bytes(), TraceFormat::Csv, "t.csv").collect();
        let e = r.iter().find_map(|x| x.as_ref().err()).unwrap();
        let loc = e.location().unwrap();
        assert_eq!((loc.line, loc.column, loc.width), (3, 3, 4));
        assert_eq!(loc.line_text.as_deref(), Some("t,zero,2"));
    }
}
