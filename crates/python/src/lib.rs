//! `augur_mc._native`: the pyo3 module under the `augur_mc` Python package (whose pure-Python
//! layer, `python/augur_mc/__init__.py`, gives the documented API). Checks run in-process
//! through `augur-check` with the GIL released; Ctrl-C (KeyboardInterrupt) stops them through
//! the cancellation flag of [`augur_check::Limits`]. Errors are Python exceptions carrying
//! the located message (`ParseError` with `file`, `line`, `column`).
#![deny(missing_docs)]

use augur_abstraction::{Abstraction, TraceFormat, TraceReader};
use augur_check::{Limits, Model};
use augur_formats::json::write_json_document;
use augur_gate::{Action, Monitor, Policy, Session, ToolCall};
use augur_learn::learn::Unobserved;
use augur_learn::pipeline::{learn_from_traces, learned_document, LearnOptions};
use augur_learn::TransitionCounts;
use augur_mcp::ops::{self, CheckRequest, ModelSource};
use augur_mcp::pause::{self, PendingPause};
use augur_mcp::{ErrorKind, ToolError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde_json::Value;
use std::sync::{mpsc, Arc};
use std::time::Duration;

create_exception!(augur_mc, AugurError, PyException, "Every error of Augur. `message` is the located message (file:line:column, the line and a caret when the cause is in a text); `file`, `line`, `column` are set when known (else None).");
create_exception!(augur_mc, ParseError, AugurError, "A located error in a model, property, constant or policy text: `file`, `line`, `column` are set.");
create_exception!(
    augur_mc,
    ModelError,
    AugurError,
    "A model or property that cannot be used (an unknown label, an unreadable file, ...)."
);
create_exception!(
    augur_mc,
    LimitError,
    AugurError,
    "A limit stopped the work (max_states, timeout)."
);
create_exception!(
    augur_mc,
    ParameterError,
    AugurError,
    "A parameter out of range or of the wrong kind."
);
create_exception!(
    augur_mc,
    InternalError,
    AugurError,
    "A failure that is not the caller's (a solver that did not converge, a bug)."
);

fn py_err(py: Python<'_>, e: ToolError) -> PyErr {
    let err = match e.kind {
        ErrorKind::Parse => ParseError::new_err(e.message.clone()),
        ErrorKind::Model => ModelError::new_err(e.message.clone()),
        ErrorKind::Limit => LimitError::new_err(e.message.clone()),
        ErrorKind::Param | ErrorKind::Refused => ParameterError::new_err(e.message.clone()),
        ErrorKind::Internal => InternalError::new_err(e.message.clone()),
    };
    let v = err.value(py);
    let loc = e.location.as_ref();
    let _ = v.setattr("message", e.message.as_str());
    let _ = v.setattr("file", loc.map(|l| l.file.clone()));
    let _ = v.setattr("line", loc.map(|l| l.line));
    let _ = v.setattr("column", loc.map(|l| l.column));
    err
}

/// `l` with a limit on the transitions of a learned model's implicit rows, when given.
fn with_smoothed(l: Limits, max: Option<usize>) -> Limits {
    match max {
        Some(n) => l.with_max_smoothed_transitions(n),
        None => l,
    }
}

/// The limits of one call: `max_states` defaults to the CLI's `--max-states`
/// ([`augur_check::DEFAULT_MAX_STATES`]), so a small text cannot make the interpreter build
/// a model until memory runs out; no time limit unless `timeout` is given (as the CLI).
fn limits(max_states: Option<usize>, timeout: Option<f64>) -> PyResult<Limits> {
    let mut l =
        Limits::default().with_max_states(max_states.unwrap_or(augur_check::DEFAULT_MAX_STATES));
    if let Some(t) = timeout {
        let d = Duration::try_from_secs_f64(t)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                ParameterError::new_err(format!(
                    "timeout must be a positive number of seconds, got {t}"
                ))
            })?;
        l = l
            .with_timeout(d)
            .with_deadline(std::time::Instant::now() + d);
    }
    Ok(l)
}

/// Runs `f` on a worker thread with the GIL released, checking for signals every 50 ms: a
/// KeyboardInterrupt (or any other exception a signal handler raises) cancels the work
/// (through `limits`' flag) and is raised at once, without waiting for the worker: it stops
/// at its next check of the flag, its answer dropped. So Ctrl-C is noticed within 50 ms even
/// during a step that checks the flag seldom (reading a large explicit file, a transpose).
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    limits: &Limits,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("augur-worker".into())
        .spawn(move || {
            // (The receiver is gone when the caller was interrupted: nothing to do.)
            let _ = tx.send(f());
        })
        .map_err(|e| InternalError::new_err(format!("cannot start a worker thread: {e}")))?;
    // (A Mutex makes the receiver shareable with the GIL-free closure below.)
    let rx = std::sync::Mutex::new(rx);
    loop {
        let got = py.detach(|| {
            let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
            rx.recv_timeout(Duration::from_millis(50))
        });
        match got {
            Ok(v) => return Ok(v),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(InternalError::new_err(
                    "the worker thread ended without an answer",
                ))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    limits.cancel();
                    return Err(e);
                }
            }
        }
    }
}

fn json_str(py: Python<'_>, v: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(v)
        .map_err(|e| py_err(py, ToolError::new(ErrorKind::Internal, e.to_string())))
}

/// A model loaded in memory (a DTMC with its labels, rewards and constants); a learned one
/// keeps what it was learned from.
#[pyclass(module = "augur_mc._native", frozen)]
struct NativeModel {
    model: Arc<Model>,
    learned: Option<Arc<LearnedInfo>>,
}

/// What a model learned from traces carries besides its chain.
struct LearnedInfo {
    category: Option<String>,
    state_names: Vec<String>,
    counts: TransitionCounts,
    /// The model file `augur learn` writes (Augur JSON with counts and metadata).
    document: String,
    /// The learner's summary (JSON), as one model of `augur learn --json`.
    summary: String,
}

#[pymethods]
impl NativeModel {
    #[getter]
    fn states(&self) -> usize {
        self.model.dtmc().num_states()
    }
    #[getter]
    fn transitions(&self) -> usize {
        self.model.dtmc().matrix.nnz()
    }
    #[getter]
    fn initial(&self) -> Vec<u32> {
        self.model.dtmc().initial.clone()
    }
    #[getter]
    fn name(&self) -> String {
        self.model.name().to_string()
    }
    #[getter]
    fn labels(&self) -> Vec<String> {
        self.model
            .dtmc()
            .labels
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }
    /// The learned model's category (None: not by category, or not learned).
    #[getter]
    fn category(&self) -> Option<String> {
        self.learned.as_ref().and_then(|l| l.category.clone())
    }
    /// A learned model's state names (None when not learned).
    #[getter]
    fn state_names(&self) -> Option<Vec<String>> {
        self.learned.as_ref().map(|l| l.state_names.clone())
    }
    /// A learned model's file text (Augur JSON with its counts), None when not learned.
    #[getter]
    fn learned_json(&self) -> Option<String> {
        self.learned.as_ref().map(|l| l.document.clone())
    }
    /// A learned model's summary (JSON), None when not learned.
    #[getter]
    fn learn_summary(&self) -> Option<String> {
        self.learned.as_ref().map(|l| l.summary.clone())
    }
}

fn learn_err(py: Python<'_>, e: augur_learn::LearnError) -> PyErr {
    py_err(py, ToolError::learn(&e))
}

/// Learns models from traces as `augur learn` does: from a trace file (`traces_path`, JSON
/// Lines or `.csv`) or its text (`traces_text`, `traces_format` `jsonl` or `csv`), with an
/// abstraction spec (`abstraction_path` or `abstraction_text`, TOML) or named states. One
/// model, or one per category with `by_category`.
#[pyfunction]
#[pyo3(signature = (traces_path=None, traces_text=None, traces_format=None, abstraction_path=None, abstraction_text=None, alpha=0.0, by_category=false, skip_invalid=false, final_absorbing=false, order=1, end_state=None, confidence=None))]
#[allow(clippy::too_many_arguments)]
fn learn(
    py: Python<'_>,
    traces_path: Option<&str>,
    traces_text: Option<&str>,
    traces_format: Option<&str>,
    abstraction_path: Option<&str>,
    abstraction_text: Option<&str>,
    alpha: f64,
    by_category: bool,
    skip_invalid: bool,
    final_absorbing: bool,
    order: usize,
    end_state: Option<String>,
    confidence: Option<f64>,
) -> PyResult<Vec<NativeModel>> {
    if let Some(c) = confidence {
        // As `augur learn --intervals`: a level in (0, 1), and no smoothing to ignore.
        augur_learn::intervals::check_confidence(c).map_err(|e| learn_err(py, e))?;
        if alpha != 0.0 || final_absorbing {
            return Err(py_err(
                py,
                ToolError::param(
                    "intervals are learned from the counts alone: alpha and final_absorbing do \
                     not apply",
                ),
            ));
        }
    }
    let spec = match (abstraction_path, abstraction_text) {
        (Some(p), _) => Some(
            Abstraction::from_file(std::path::Path::new(p)).map_err(|e| learn_err(py, e.into()))?,
        ),
        (None, Some(t)) => {
            Some(Abstraction::parse(t, "abstraction").map_err(|e| learn_err(py, e.into()))?)
        }
        (None, None) => None,
    };
    let opts = LearnOptions {
        alpha,
        by_category,
        skip_invalid,
        unobserved: if final_absorbing {
            Unobserved::Absorbing
        } else {
            Unobserved::Uniform
        },
        order,
        end_state: end_state.clone(),
    };
    let (name, outcome) = match (traces_path, traces_text) {
        (Some(p), _) => {
            let path = std::path::Path::new(p);
            let file = std::fs::File::open(path).map_err(|e| {
                py_err(
                    py,
                    ToolError::new(ErrorKind::Model, format!("{p}: cannot open: {e}")),
                )
            })?;
            let reader = TraceReader::new(
                std::io::BufReader::new(file),
                TraceFormat::from_path(path),
                p,
            );
            (p, learn_from_traces(reader, p, spec.as_ref(), &opts))
        }
        (None, Some(text)) => {
            let format = match traces_format.unwrap_or("jsonl") {
                "jsonl" | "json" => TraceFormat::JsonLines,
                "csv" => TraceFormat::Csv,
                other => {
                    return Err(py_err(
                        py,
                        ToolError::param(format!("unknown trace format `{other}` (jsonl or csv)")),
                    ))
                }
            };
            let reader = TraceReader::new(text.as_bytes(), format, "traces");
            (
                "traces",
                learn_from_traces(reader, "traces", spec.as_ref(), &opts),
            )
        }
        (None, None) => {
            return Err(py_err(
                py,
                ToolError::param("give traces (a file or a list of traces)"),
            ))
        }
    };
    let outcome = outcome.map_err(|e| learn_err(py, e))?;
    let mut out = Vec::new();
    for mut m in outcome.models {
        if let Some(c) = confidence {
            m.learn_intervals(c).map_err(|e| learn_err(py, e))?;
        }
        let metadata = serde_json::json!({
            "learned": {
                "alpha": alpha,
                "traces_file": name,
                "abstraction": abstraction_path,
                "category": m.category,
                "order": order,
                "end_state": end_state,
            },
        });
        let mut bytes = Vec::new();
        write_json_document(&learned_document(&m, metadata), &mut bytes)
            .map_err(|e| py_err(py, ToolError::format(&e)))?;
        let names = &m.state_names;
        let named =
            |v: &[u32]| -> Vec<String> { v.iter().map(|&s| names[s as usize].clone()).collect() };
        let c = &m.counts;
        let summary = serde_json::json!({
            "category": m.category,
            "traces_read": outcome.traces_read,
            "skipped": outcome.skipped.len(),
            "traces": c.traces(),
            "steps": c.steps(),
            "states": m.num_states(),
            "states_seen": c.states_seen(),
            "transitions": m.intervals.as_ref().map_or(m.num_transitions(), |iv| iv.num_transitions() as u64),
            "invalid_transitions_dropped": c.invalid_total(),
            "intervals": m.intervals.as_ref().map(|iv| iv.metadata()),
            "absorbing": named(&m.report.absorbing),
            "unobserved_uniform": m.report.unobserved_uniform.len(),
            "unobserved_absorbing": m.report.unobserved_absorbing.len(),
            "initial": named(&m.initial),
        });
        let model_name = match &m.category {
            Some(cat) => format!("{name} [{cat}]"),
            None => name.to_string(),
        };
        // The chain itself, within the limit a file's reader applies.
        let dtmc = m
            .to_dtmc(augur_formats::DEFAULT_MAX_SMOOTHED_TRANSITIONS)
            .map_err(|e| learn_err(py, e))?;
        out.push(NativeModel {
            model: Arc::new(Model::from_dtmc(dtmc).named(model_name)),
            learned: Some(Arc::new(LearnedInfo {
                category: m.category,
                state_names: m.state_names,
                counts: m.counts,
                document: String::from_utf8_lossy(&bytes).into_owned(),
                summary: summary.to_string(),
            })),
        });
    }
    Ok(out)
}

/// Loads a model file (format from the extension).
#[pyfunction]
#[pyo3(signature = (path, constants=None, exact=false, max_states=None, timeout=None, max_smoothed_transitions=None))]
fn load_model(
    py: Python<'_>,
    path: &str,
    constants: Option<&str>,
    exact: bool,
    max_states: Option<usize>,
    timeout: Option<f64>,
    max_smoothed_transitions: Option<usize>,
) -> PyResult<NativeModel> {
    let p = std::path::PathBuf::from(path);
    let limits = (max_states, timeout, max_smoothed_transitions);
    read_model(py, constants, limits, move |constants, limits| {
        let opts = augur_check::LoadOptions {
            constants,
            exact,
            limits,
            ..Default::default()
        };
        Model::load(&p, &opts).map_err(|e| ToolError::check(&e))
    })
}

/// A model read by `read` from the constants given as text and the limits (`max_states`,
/// `timeout`, `max_smoothed_transitions`), on a worker thread (KeyboardInterrupt cancels it).
fn read_model(
    py: Python<'_>,
    constants: Option<&str>,
    (max_states, timeout, max_smoothed): (Option<usize>, Option<f64>, Option<usize>),
    read: impl FnOnce(augur_check::Constants, Limits) -> Result<Model, ToolError> + Send + 'static,
) -> PyResult<NativeModel> {
    let c = ops::parse_constants("const", constants.unwrap_or("")).map_err(|e| py_err(py, e))?;
    let l = with_smoothed(limits(max_states, timeout)?, max_smoothed);
    let worker = l.clone();
    let r = interruptible(py, &l, move || read(c, worker))?;
    r.map(|m| NativeModel {
        model: Arc::new(m),
        learned: None,
    })
    .map_err(|e| py_err(py, e))
}

/// Reads a model from text (`format`: prism, drn, json, tra).
#[pyfunction]
#[pyo3(signature = (text, format=None, constants=None, exact=false, max_states=None, timeout=None, max_smoothed_transitions=None))]
#[allow(clippy::too_many_arguments)]
fn parse_model(
    py: Python<'_>,
    text: &str,
    format: Option<&str>,
    constants: Option<&str>,
    exact: bool,
    max_states: Option<usize>,
    timeout: Option<f64>,
    max_smoothed_transitions: Option<usize>,
) -> PyResult<NativeModel> {
    let (text, format) = (text.to_string(), format.map(str::to_string));
    let limits = (max_states, timeout, max_smoothed_transitions);
    read_model(py, constants, limits, move |c, worker| {
        let source = ModelSource::Text {
            text: &text,
            format: format.as_deref(),
        };
        ops::load_model(source, None, &c, exact, &worker)
    })
}

/// Checks properties; returns the JSON of `augur check --json`. Raises the first failing
/// property's error.
#[pyfunction]
#[pyo3(signature = (model, properties, constants=None, method=None, all_states=false, timeout=None))]
fn check(
    py: Python<'_>,
    model: &NativeModel,
    properties: Vec<String>,
    constants: Option<&str>,
    method: Option<&str>,
    all_states: bool,
    timeout: Option<f64>,
) -> PyResult<String> {
    let c = ops::parse_constants("const", constants.unwrap_or("")).map_err(|e| py_err(py, e))?;
    let method = method
        .map(ops::parse_method)
        .transpose()
        .map_err(|e| py_err(py, e))?;
    let l = limits(None, timeout)?;
    let req = CheckRequest {
        properties,
        constants: c,
        method,
        all_states,
    };
    let m = Arc::clone(&model.model);
    let worker = l.clone();
    let out =
        interruptible(py, &l, move || ops::check(&m, &req, &worker))?.map_err(|e| py_err(py, e))?;
    if let Some((_, e)) = out.errors.into_iter().next() {
        return Err(py_err(py, e));
    }
    json_str(py, &out.report)
}

/// A number as `augur check` prints it: the shortest decimal within eight ulps (`0.0625`,
/// not `0.06249999999999999`), `inf` and `-inf`.
#[pyfunction]
fn format_number(x: f64) -> String {
    augur_check::Scalar::Num(x).to_string()
}

/// The curve P(F≤h target), h = 1..max (JSON: `curve`, and `table` with `all_states`).
#[pyfunction]
#[pyo3(signature = (model, target, max_h, constants=None, all_states=false, timeout=None))]
fn horizon(
    py: Python<'_>,
    model: &NativeModel,
    target: &str,
    max_h: usize,
    constants: Option<&str>,
    all_states: bool,
    timeout: Option<f64>,
) -> PyResult<String> {
    let c = ops::parse_constants("const", constants.unwrap_or("")).map_err(|e| py_err(py, e))?;
    let l = limits(None, timeout)?;
    let m = Arc::clone(&model.model);
    let (target, worker) = (target.to_string(), l.clone());
    let v = interruptible(py, &l, move || {
        ops::horizon(&m, &target, max_h, &c, all_states, &worker)
    })?
    .map_err(|e| py_err(py, e))?;
    Ok(v.to_string())
}

/// `augur explain --json` of one property (JSON): the most probable paths, the counterexample's
/// size, a critical subsystem (`"heuristic"` / `"minimal"`, with its DOT and PRISM text when
/// asked), the reward contributions.
#[pyfunction]
#[pyo3(signature = (model, property, paths=10, constants=None, from_state=None, subsystem=None, dot=false, prism=false, timeout=None))]
#[allow(clippy::too_many_arguments)]
fn explain(
    py: Python<'_>,
    model: &NativeModel,
    property: &str,
    paths: usize,
    constants: Option<&str>,
    from_state: Option<&str>,
    subsystem: Option<&str>,
    dot: bool,
    prism: bool,
    timeout: Option<f64>,
) -> PyResult<String> {
    let c = ops::parse_constants("const", constants.unwrap_or("")).map_err(|e| py_err(py, e))?;
    let req = ops::ExplainRequest {
        property: property.to_string(),
        constants: c,
        paths,
        from: from_state.map(str::to_string),
        subsystem: ops::parse_subsystem(subsystem).map_err(|e| py_err(py, e))?,
        dot,
        prism,
        names: model.learned.as_ref().map(|l| l.state_names.clone()),
    };
    let l = limits(None, timeout)?;
    let m = Arc::clone(&model.model);
    let worker = l.clone();
    let v = interruptible(py, &l, move || ops::explain(&m, &req, &worker))?
        .map_err(|e| py_err(py, e))?;
    Ok(v.to_string())
}

/// The PAC report of a learned model's JSON text (JSON).
#[pyfunction]
#[pyo3(signature = (name, text, epsilon, delta, hoeffding=false))]
fn pac_learned(
    py: Python<'_>,
    name: &str,
    text: &str,
    epsilon: f64,
    delta: f64,
    hoeffding: bool,
) -> PyResult<String> {
    ops::pac_learned(name, text, epsilon, delta, hoeffding)
        .map(|v| v.to_string())
        .map_err(|e| py_err(py, e))
}

/// The PAC calculator (JSON).
#[pyfunction]
#[pyo3(signature = (states, epsilon, delta, p_hat=None, observations=None, hoeffding=false))]
fn pac_calculator(
    py: Python<'_>,
    states: usize,
    epsilon: f64,
    delta: f64,
    p_hat: Option<f64>,
    observations: Option<u64>,
    hoeffding: bool,
) -> PyResult<String> {
    ops::pac_calculator(states, p_hat, observations, epsilon, delta, hoeffding)
        .map(|v| v.to_string())
        .map_err(|e| py_err(py, e))
}

/// One row of a counts table: `(kind, from_state, to_state, n, category)`.
type CountsRow = (String, String, Option<String>, u64, Option<String>);

/// Keyed counts from the rows of a counts table (`docs/sql/counts.sql`'s, numbered from 1),
/// checked as `augur learn --from-counts` checks a counts file: the JSON `augur learn
/// --counts-only` writes.
#[pyfunction]
#[pyo3(signature = (rows, order=1, end_state=None))]
fn counts_from_rows(
    py: Python<'_>,
    rows: Vec<CountsRow>,
    order: usize,
    end_state: Option<String>,
) -> PyResult<String> {
    let mut table = augur_learn::counts_table::CountsTable::new(order, end_state);
    for (kind, from, to, n, category) in rows {
        table
            .push(&kind, from, to, n, category)
            .map_err(|e| learn_err(py, e))?;
    }
    let counts = table.finish().map_err(|e| learn_err(py, e))?;
    counts.check().map_err(|e| learn_err(py, e))?;
    json_str(py, &counts)
}

fn monitor_err(py: Python<'_>, e: impl Into<augur_monitor::MonitorError>) -> PyErr {
    py_err(py, ToolError::monitor(&e.into()))
}

/// The options of `Monitor.compile`: those of `augur monitor compile`.
#[allow(clippy::too_many_arguments)]
fn compile_options(
    py: Python<'_>,
    prop: &str,
    horizon: Option<u32>,
    constants: Option<&str>,
    limits: &Limits,
    states: Option<&str>,
    classifier: Option<&str>,
    abstraction: Option<&str>,
    robust: bool,
    confidence: Option<f64>,
    explain: bool,
) -> PyResult<augur_monitor::compile::CompileOptions> {
    let c = ops::parse_constants("const", constants.unwrap_or("")).map_err(|e| py_err(py, e))?;
    let mut opts = augur_monitor::compile::CompileOptions::new(prop).with_limits(limits.clone());
    opts.load.constants = c;
    opts.horizon = horizon;
    if confidence.is_some() && !robust {
        return Err(ParameterError::new_err(
            "confidence= applies to robust=True (the intervals of the robust bound)",
        ));
    }
    if let Some(c) = confidence {
        if !(c > 0.0 && c < 1.0) {
            return Err(ParameterError::new_err(format!(
                "confidence={c}: give a confidence in (0, 1), e.g. 0.95"
            )));
        }
    }
    opts.robust = robust.then_some(augur_monitor::compile::RobustOptions { confidence });
    opts.explanations = explain;
    if let Some(s) = states {
        opts.mapping = Some(augur_gate::Mapping::parse(s).ok_or_else(|| {
            ParameterError::new_err(format!(
                "states={s:?}: expected \"dtr\", \"risk-level\" or \"abstraction\""
            ))
        })?);
    }
    if let Some(path) = classifier {
        opts.classifier = Some(
            augur_gate::Classifier::from_file(std::path::Path::new(path))
                .map_err(|e| monitor_err(py, e))?,
        );
    }
    if let Some(path) = abstraction {
        let text = augur_check::read_text(std::path::Path::new(path))
            .map_err(|e| py_err(py, ToolError::check(&e)))?;
        opts.abstraction = Some((text, path.to_string()));
    }
    Ok(opts)
}

/// A compiled runtime monitor.
#[pyclass(module = "augur_mc._native", frozen)]
struct NativeMonitor {
    monitor: Arc<Monitor>,
}

#[pymethods]
impl NativeMonitor {
    /// Compiles a monitor for a property as `augur monitor compile` does, from models
    /// (`(model, category or None)`) or, given `paths`, from model files (loaded with
    /// `constants` under `max_states` and `timeout`): `constants` for names used in the
    /// property, `states` (`dtr`, `risk-level`, `abstraction`), a classifier or abstraction
    /// spec file, under `timeout`; interruptible (KeyboardInterrupt cancels it).
    #[staticmethod]
    #[pyo3(signature = (models, paths, prop, horizon=None, constants=None, max_states=None, timeout=None, states=None, classifier=None, abstraction=None, robust=false, confidence=None, explain=false))]
    #[allow(clippy::too_many_arguments)]
    fn compile(
        py: Python<'_>,
        models: Vec<(PyRef<'_, NativeModel>, Option<String>)>,
        paths: Option<Vec<String>>,
        prop: &str,
        horizon: Option<u32>,
        constants: Option<&str>,
        max_states: Option<usize>,
        timeout: Option<f64>,
        states: Option<&str>,
        classifier: Option<&str>,
        abstraction: Option<&str>,
        robust: bool,
        confidence: Option<f64>,
        explain: bool,
    ) -> PyResult<NativeMonitor> {
        let l = limits(max_states, timeout)?;
        let opts = compile_options(
            py,
            prop,
            horizon,
            constants,
            &l,
            states,
            classifier,
            abstraction,
            robust,
            confidence,
            explain,
        )?;
        let m = if let Some(paths) = paths {
            interruptible(py, &l, move || {
                let args: Vec<_> = paths
                    .iter()
                    .map(|p| augur_monitor::compile::ModelArg::parse(p))
                    .collect();
                augur_monitor::compile::compile(&args, &opts)
            })?
        } else {
            let mut sources = Vec::new();
            for (m, cat) in &models {
                let mut s =
                    augur_monitor::compile::Source::from_model((*m.model).clone(), m.model.name());
                s.category = cat.clone();
                s.counts = m.learned.as_ref().map(|l| l.counts.clone());
                // A model learned with intervals: the confidence its document records.
                s.interval_confidence = m.learned.as_ref().and_then(|l| {
                    let doc: serde_json::Value = serde_json::from_str(&l.document).ok()?;
                    let iv = doc.pointer("/metadata/learned/intervals")?;
                    let method = iv.get("method").and_then(|m| m.as_str()).unwrap_or("");
                    Some((iv.get("confidence")?.as_f64()?, method.to_string()))
                });
                sources.push(s);
            }
            interruptible(py, &l, move || {
                augur_monitor::compile::compile_dtmcs(sources, &opts)
            })?
        }
        .map_err(|e| monitor_err(py, e))?;
        Ok(NativeMonitor {
            monitor: Arc::new(m),
        })
    }

    /// Loads a monitor file.
    #[staticmethod]
    fn load(py: Python<'_>, path: &str) -> PyResult<NativeMonitor> {
        let m = Monitor::load(std::path::Path::new(path)).map_err(|e| monitor_err(py, e))?;
        Ok(NativeMonitor {
            monitor: Arc::new(m),
        })
    }

    /// The built-in monitor (SafetyDrift's 5-state chain, `P=? [ F<=5 "violated" ]`).
    #[staticmethod]
    fn default(py: Python<'_>) -> PyResult<NativeMonitor> {
        let m = augur_mcp::server::default_monitor().map_err(|e| py_err(py, e))?;
        Ok(NativeMonitor {
            monitor: Arc::new(m),
        })
    }

    /// The built-in gateway monitor (`augur monitor gate`'s and `augur mcp --upstream`'s
    /// default): the risk-level chain with provenance, the user's intent and its tiers.
    #[staticmethod]
    fn gateway(py: Python<'_>) -> PyResult<NativeMonitor> {
        let m = augur_gate::builtin::gateway_monitor().map_err(|e| monitor_err(py, e))?;
        Ok(NativeMonitor {
            monitor: Arc::new(m),
        })
    }

    /// Saves it.
    fn save(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        self.monitor
            .save(std::path::Path::new(path))
            .map_err(|e| monitor_err(py, e))
    }

    /// The monitor file's JSON.
    fn to_json(&self) -> String {
        self.monitor.to_json()
    }

    #[getter]
    fn property(&self) -> String {
        self.monitor.property.clone()
    }

    /// A session (policy: a TOML file path or text, `None` for the default).
    #[pyo3(signature = (policy_path=None, policy_text=None, category=None))]
    fn session(
        &self,
        py: Python<'_>,
        policy_path: Option<&str>,
        policy_text: Option<&str>,
        category: Option<&str>,
    ) -> PyResult<NativeSession> {
        let policy = match (policy_path, policy_text) {
            (Some(p), _) => {
                Policy::from_file(std::path::Path::new(p)).map_err(|e| monitor_err(py, e))?
            }
            (None, Some(t)) => Policy::parse(t, "policy").map_err(|e| monitor_err(py, e))?,
            (None, None) => Policy::default(),
        };
        let s = Session::new(&self.monitor, &Arc::new(policy), category)
            .map_err(|e| monitor_err(py, e))?;
        Ok(NativeSession {
            inner: std::sync::Mutex::new(SessionState {
                session: s,
                pause: None,
                next_pause: 1,
            }),
        })
    }
}

/// One agent run being gated, with its pending pause (answered by `approve` / `deny`).
/// Threads may share it: its calls are serialised (a call waits, with the GIL released, for
/// the one in progress), so two threads answering the same pause get one answer each: one
/// wins, the other is told the pause is no longer pending (an `AugurError`).
#[pyclass(module = "augur_mc._native", frozen)]
struct NativeSession {
    inner: std::sync::Mutex<SessionState>,
}

/// The state of a [`NativeSession`].
struct SessionState {
    session: Session,
    pause: Option<PendingPause>,
    next_pause: u64,
}

impl NativeSession {
    /// The session's state, once the call in progress on another thread (if any) is done;
    /// waits with the GIL released. A call that panicked leaves it unusable: InternalError
    /// (the monitor fails closed).
    fn lock(&self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'_, SessionState>> {
        loop {
            match self.inner.try_lock() {
                Ok(g) => return Ok(g),
                Err(std::sync::TryLockError::Poisoned(_)) => {
                    return Err(InternalError::new_err(
                        "the session is unusable: a call on it failed inside Augur",
                    ))
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    // Wait for the other call without the GIL (it may need it to finish).
                    py.detach(|| drop(self.inner.lock()));
                }
            }
        }
    }
}

fn args_value(py: Python<'_>, args: Option<&str>) -> PyResult<Value> {
    match args {
        None => Ok(Value::Object(Default::default())),
        Some(text) => {
            let v: Value = serde_json::from_str(text)
                .map_err(|e| py_err(py, ToolError::param(format!("arguments: {e}"))))?;
            ToolCall::parse_args(v).map_err(|e| py_err(py, ToolError::param(e)))
        }
    }
}

fn state_map(py: Python<'_>, state: &str) -> PyResult<serde_json::Map<String, Value>> {
    match serde_json::from_str(state) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(py_err(
            py,
            ToolError::param("the state must be a dict of variable -> value"),
        )),
    }
}

#[pymethods]
impl NativeSession {
    /// Gates an action (arguments or state as JSON text); returns the decision's JSON.
    #[pyo3(signature = (session_id, tool=None, args_json=None, state_json=None))]
    fn gate(
        &self,
        py: Python<'_>,
        session_id: &str,
        tool: Option<&str>,
        args_json: Option<&str>,
        state_json: Option<&str>,
    ) -> PyResult<String> {
        if tool.is_none() && state_json.is_none() {
            return Err(ParameterError::new_err(
                "gate needs `tool` (with `args`) or `state`",
            ));
        }
        let args = args_value(py, args_json)?;
        let state = state_json.map(|s| state_map(py, s)).transpose()?;
        let action = match &state {
            Some(st) => Action::State { tool, state: st },
            None => Action::Tool(ToolCall::new(tool.unwrap_or(""), &args)),
        };
        let mut st = self.lock(py)?;
        let st = &mut *st;
        let d = st.session.gate(&action);
        let mut v = serde_json::to_value(st.session.report(&d, session_id))
            .map_err(|e| py_err(py, ToolError::new(ErrorKind::Internal, e.to_string())))?;
        let next = st.next_pause;
        let pid = PendingPause::after_gate(
            &mut st.pause,
            d.verdict,
            || format!("pause-{next}"),
            tool,
            &args,
            state.as_ref(),
        );
        if let Some(pid) = pid {
            v["pause_id"] = Value::from(pid);
            st.next_pause += 1;
        }
        json_str(py, &v)
    }

    /// Answers the pending pause `pause_id` (a person approved or denied the paused action);
    /// returns whether the session's state changed. Any other id is a `ParameterError`.
    fn answer_pause(&self, py: Python<'_>, pause_id: &str, approve: bool) -> PyResult<bool> {
        let mut st = self.lock(py)?;
        let st = &mut *st;
        pause::answer(&mut st.session, &mut st.pause, pause_id, approve).map_err(|e| py_err(py, e))
    }

    /// The pending pause's id and tool, if any.
    fn pending_pause(&self, py: Python<'_>) -> PyResult<Option<(String, String)>> {
        let st = self.lock(py)?;
        Ok(st.pause.as_ref().map(|p| (p.id.clone(), p.tool.clone())))
    }

    /// Records what happened to an action; returns whether the state changed.
    #[pyo3(signature = (tool, args_json=None, state_json=None, executed=true))]
    fn record(
        &self,
        py: Python<'_>,
        tool: &str,
        args_json: Option<&str>,
        state_json: Option<&str>,
        executed: bool,
    ) -> PyResult<bool> {
        let args = args_value(py, args_json)?;
        let state = state_json.map(|s| state_map(py, s)).transpose()?;
        let action = match &state {
            Some(st) => Action::State {
                tool: Some(tool),
                state: st,
            },
            None => Action::Tool(ToolCall::new(tool, &args)),
        };
        let mut st = self.lock(py)?;
        st.pause = None;
        Ok(st.session.record(&action, executed))
    }

    /// Observes text the agent saw (`source`: "user", "system" or "tool"; `tool` names the
    /// tool of a tool result; `args_json`, the arguments of the call whose result it is);
    /// returns `{"values", "new", "skipped"}` as JSON.
    #[pyo3(signature = (source, text, tool=None, args_json=None))]
    fn observe(
        &self,
        py: Python<'_>,
        source: &str,
        text: &str,
        tool: Option<&str>,
        args_json: Option<&str>,
    ) -> PyResult<String> {
        use augur_gate::provenance::ObservationSource as O;
        let source = match source {
            "user" => O::User,
            "system" => O::System,
            "tool" => O::Tool,
            other => {
                return Err(py_err(
                    py,
                    ToolError::param(format!(
                        "observe: source must be \"user\", \"system\" or \"tool\", not {other:?}"
                    )),
                ))
            }
        };
        if source == O::Tool && tool.is_none() {
            return Err(py_err(
                py,
                ToolError::param("observe: a tool result needs `tool`"),
            ));
        }
        if args_json.is_some() && source != O::Tool {
            return Err(py_err(
                py,
                ToolError::param("observe: `args` belongs to a tool result"),
            ));
        }
        let st = match (args_json, tool) {
            (Some(a), Some(t)) => {
                let args = args_value(py, Some(a))?;
                self.lock(py)?
                    .session
                    .observe_result(t, None, &args, text.as_bytes())
            }
            _ => self.lock(py)?.session.observe(source, tool, text),
        };
        json_str(
            py,
            &serde_json::json!({"values": st.found, "new": st.new, "skipped": st.skipped}),
        )
    }

    /// The counts (JSON).
    fn summary(&self, py: Python<'_>) -> PyResult<String> {
        let summary = self.lock(py)?.session.summary();
        json_str(py, &summary)
    }

    /// Back to the start state.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let mut st = self.lock(py)?;
        st.pause = None;
        st.session.reset();
        Ok(())
    }

    /// The current model state's name.
    fn state(&self, py: Python<'_>) -> PyResult<String> {
        let st = self.lock(py)?;
        let m = st.session.monitor();
        Ok(m.table_for(st.session.category())
            .map(|i| m.tables[i].name(st.session.state()).to_string())
            .unwrap_or_else(|| st.session.state().to_string()))
    }
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AugurError", py.get_type::<AugurError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("ParameterError", py.get_type::<ParameterError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add_class::<NativeModel>()?;
    m.add_class::<NativeMonitor>()?;
    m.add_class::<NativeSession>()?;
    m.add_function(wrap_pyfunction!(load_model, m)?)?;
    m.add_function(wrap_pyfunction!(parse_model, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(format_number, m)?)?;
    m.add_function(wrap_pyfunction!(horizon, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(pac_learned, m)?)?;
    m.add_function(wrap_pyfunction!(learn, m)?)?;
    m.add_function(wrap_pyfunction!(pac_calculator, m)?)?;
    m.add_function(wrap_pyfunction!(counts_from_rows, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
