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
//! Every error names the file and the line.

use std::collections::HashSet;
use std::io::BufRead;

use augur_expr::Value;

use crate::error::{AbstractionError, Location, Result};
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
    Jsonl { reader: R, line: usize, buf: String },
    Csv(Box<CsvState<R>>),
}

struct CsvState<R: BufRead> {
    reader: csv::Reader<R>,
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
}

/// A streaming reader of traces: an iterator of `Result<Trace>`. After an error the reader goes
/// on with the next line (JSON Lines) or the next trace (CSV), so callers may skip bad input.
pub struct TraceReader<R: BufRead> {
    file: String,
    inner: Inner<R>,
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `format` over `reader`; `file` names the input in errors.
    pub fn new(reader: R, format: TraceFormat, file: &str) -> Self {
        let inner = match format {
            TraceFormat::JsonLines => Inner::Jsonl {
                reader,
                line: 0,
                buf: String::new(),
            },
            TraceFormat::Csv => Inner::Csv(Box::new(CsvState {
                reader: csv::ReaderBuilder::new()
                    .has_headers(false)
                    .flexible(true)
                    .trim(csv::Trim::All)
                    .from_reader(reader),
                columns: None,
                current: None,
                finished: HashSet::new(),
                poisoned: None,
                done: false,
            })),
        };
        TraceReader {
            file: file.to_string(),
            inner,
        }
    }

    fn err(&self, line: usize, message: impl Into<String>) -> AbstractionError {
        AbstractionError::Trace {
            location: Location::line(&self.file, line),
            message: message.into(),
        }
    }
}

fn parse_json_trace(text: &str, line: usize) -> std::result::Result<Trace, String> {
    // A byte-order mark (Windows editors) before the first line is not JSON.
    let text = if line == 1 {
        text.strip_prefix('\u{feff}').unwrap_or(text)
    } else {
        text
    };
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        // serde's message ends with "at line 1 column N": the line within the JSON text,
        // which is always 1 here and contradicts the file line of the error.
        let msg = e.to_string();
        let msg = match msg.rsplit_once(" at line ") {
            Some((m, _)) => m.to_string(),
            None => msg,
        };
        format!("invalid JSON (column {}): {msg}", e.column())
    })?;
    let obj = v
        .as_object()
        .ok_or("a trace must be a JSON object {\"id\": ..., \"steps\": [...]}")?;
    let id = match obj.get("id") {
        None | Some(serde_json::Value::Null) => format!("line {line}"),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(_) => return Err("\"id\" must be a string or a number".into()),
    };
    let category = match obj.get("category") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("\"category\" must be a string".into()),
    };
    let steps = obj
        .get("steps")
        .ok_or("missing \"steps\"")?
        .as_array()
        .ok_or("\"steps\" must be an array")?;
    let mut out = Vec::with_capacity(steps.len());
    for (i, s) in steps.iter().enumerate() {
        let so = s
            .as_object()
            .ok_or_else(|| format!("step {i}: a step must be an object"))?;
        let kind = match so.get("state") {
            Some(serde_json::Value::String(name)) => StepKind::Named(name.clone()),
            Some(_) => return Err(format!("step {i}: \"state\" must be a string")),
            None => StepKind::Values(
                so.iter()
                    .map(|(k, v)| (k.clone(), RawValue::Json(v.clone())))
                    .collect(),
            ),
        };
        out.push(Step { line, kind });
    }
    Ok(Trace {
        id,
        category,
        line,
        steps: out,
    })
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Trace>;

    fn next(&mut self) -> Option<Result<Trace>> {
        let file = self.file.clone();
        match &mut self.inner {
            Inner::Jsonl { reader, line, buf } => loop {
                buf.clear();
                *line += 1;
                match reader.read_line(buf) {
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(e) => {
                        return Some(Err(AbstractionError::Trace {
                            location: Location::line(&file, *line),
                            message: format!("cannot read: {e}"),
                        }))
                    }
                }
                let text = buf.trim();
                if text.is_empty() {
                    continue;
                }
                let l = *line;
                return Some(parse_json_trace(text, l).map_err(|m| self.err(l, m)));
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
            columns,
            current,
            finished,
            poisoned,
            done,
        } = &mut **state;
        let err = |line: usize, m: String| AbstractionError::Trace {
            location: Location::line(&file, line),
            message: m,
        };
        loop {
            if *done {
                return None;
            }
            let mut record = csv::StringRecord::new();
            let read = reader.read_record(&mut record);
            let line = record.position().map_or(0, |p| p.line() as usize);
            match read {
                Err(e) => {
                    let l = e.position().map_or(line, |p| p.line() as usize);
                    if let Some((t, _)) = current.take() {
                        *poisoned = Some(t.id);
                    }
                    return Some(Err(err(l, format!("invalid CSV: {e}"))));
                }
                Ok(false) => {
                    *done = true;
                    return current.take().map(|(t, _)| Ok(t));
                }
                Ok(true) => {}
            }
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
                });
                continue;
            };
            let id = record.get(cols.trace).unwrap_or("").to_string();
            if poisoned.as_deref() == Some(id.as_str()) {
                continue;
            }
            let row = (|| -> std::result::Result<(i64, Option<String>, Step), String> {
                if id.is_empty() {
                    return Err("empty `trace` cell".into());
                }
                if record.len() > cols.width {
                    return Err(format!(
                        "{} fields, but the header names {} columns",
                        record.len(),
                        cols.width
                    ));
                }
                let step_text = record.get(cols.step).unwrap_or("");
                let step: i64 = step_text
                    .parse()
                    .map_err(|_| format!("`step` must be an integer, found `{step_text}`"))?;
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
                Ok((step, category, Step { line, kind }))
            })();
            let (step_no, category, step) = match row {
                Ok(r) => r,
                Err(m) => {
                    if current.as_ref().is_some_and(|(t, _)| t.id == id) {
                        current.take();
                    }
                    *poisoned = Some(id);
                    return Some(Err(err(line, m)));
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
                        return Some(Err(err(line, m)));
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
            let bad = |what: &str| {
                AbstractionError::State(format!(
                    "variable `{}`: expected {what}, found {}",
                    var.name,
                    describe(raw)
                ))
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
                        return Err(AbstractionError::State(format!(
                            "variable `{}` = {i} is outside its range [{min}, {max}]",
                            var.name
                        )));
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
    /// an error located at the step's line of `file`.
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
        r.map_err(|e| e.at_line(file, step.line))
    }
}
