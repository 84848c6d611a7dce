//! The checker's operations as the MCP tools (and the Python package) call them: load a model
//! from text or from a file under a root folder, check properties (the JSON of
//! `augur check --json`), the all-horizon curve, the PAC report. Every operation runs under
//! the given [`Limits`].

use crate::error::{ErrorKind, Result, ToolError};
use augur_check::{
    CheckError, CheckOptions, CheckSession, Constants, Format, Limits, LoadOptions, Method, Model,
    Properties, Report, Scalar,
};
use augur_learn::pac::{pac_report, required_samples, PacBound};
use augur_learn::{CountsJson, TransitionCounts};
use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};

/// Where a model comes from: its text, or a file under the server's root.
#[derive(Clone, Copy, Debug)]
pub enum ModelSource<'a> {
    /// The text of a model, in `format` (default: the PRISM language).
    Text {
        /// The text.
        text: &'a str,
        /// `prism`, `drn`, `json` or `tra`.
        format: Option<&'a str>,
    },
    /// A file, relative to the root (or absolute inside it).
    Path(&'a str),
}

/// The name a model given as text carries in located messages.
pub const TEXT_NAME: &str = "model_text";

/// Parses a method name as the CLI spells it (`auto`, `exact`, `interval`, `topological`,
/// `power`, `jacobi`, `gauss-seidel`, `closed-form`).
pub fn parse_method(name: &str) -> Result<Method> {
    Ok(match name.to_ascii_lowercase().replace('_', "-").as_str() {
        "auto" => Method::Auto,
        "exact" => Method::Exact,
        "interval" => Method::Interval,
        "topological" => Method::Topological,
        "power" => Method::Power,
        "jacobi" => Method::Jacobi,
        "gauss-seidel" => Method::GaussSeidel,
        "closed-form" => Method::ClosedForm,
        other => {
            return Err(ToolError::param(format!(
                "unknown method `{other}` (auto, exact, interval, topological, power, jacobi, gauss-seidel, closed-form)"
            )))
        }
    })
}

/// Parses constants written `N=3,p=0.5`; the error is located in a text named `name`.
pub fn parse_constants(name: &str, text: &str) -> Result<Constants> {
    let mut c = Constants::new();
    if !text.trim().is_empty() {
        c.add_from(name, text).map_err(|e| ToolError::check(&e))?;
    }
    Ok(c)
}

/// Constants given as a JSON string (`"N=3,p=0.5"`) or object (`{"N": 3, "p": 0.5}`).
pub fn constants_from_json(v: Option<&Value>) -> Result<Constants> {
    match v {
        None | Some(Value::Null) => Ok(Constants::new()),
        Some(Value::String(s)) => parse_constants("constants", s),
        Some(Value::Object(m)) => {
            let mut parts = Vec::with_capacity(m.len());
            for (k, v) in m {
                let v = match v {
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => {
                        return Err(ToolError::param(format!(
                            "constants: the value of `{k}` must be a number or a boolean"
                        )))
                    }
                };
                parts.push(format!("{k}={v}"));
            }
            parse_constants("constants", &parts.join(","))
        }
        Some(_) => Err(ToolError::param(
            "constants must be a string (`N=3,p=0.5`) or an object ({\"N\": 3})",
        )),
    }
}

/// Resolves `path` under `root`: relative paths are taken from the root, and the file (after
/// following symbolic links) must be inside it. Without a root no file is read.
pub fn resolve_under(root: Option<&Path>, path: &str) -> Result<PathBuf> {
    let Some(root) = root else {
        return Err(ToolError::refused(
            "model_path is disabled: this server was started without --root DIR; send the model as model_text",
        ));
    };
    let p = Path::new(path);
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(ToolError::refused(format!(
            "model_path `{path}`: `..` is not allowed; give a path inside the server's root"
        )));
    }
    let root = root.canonicalize().map_err(|e| {
        ToolError::new(
            ErrorKind::Internal,
            format!("the server's root cannot be read: {e}"),
        )
    })?;
    let joined = root.join(p);
    let real = joined.canonicalize().map_err(|_| {
        ToolError::new(
            ErrorKind::Model,
            format!("model_path `{path}`: no such file under the server's root"),
        )
    })?;
    if !real.starts_with(&root) || !real.is_file() {
        return Err(ToolError::refused(format!(
            "model_path `{path}` is not a file inside the server's root"
        )));
    }
    Ok(real)
}

/// Checks the companion files an explicit model at `real` (a path [`resolve_under`] gave)
/// would be read with (`.lab`, `.srew`, `.trew`, `.sta` of the same stem): each that exists
/// must, after following symbolic links, be a file inside `root`, or the request is refused
/// with a message that names the companion as the caller would (`path` with its extension),
/// never the file it points to.
fn check_companions(root: &Path, real: &Path, path: &str) -> Result<()> {
    if Format::from_path(real) != Some(Format::Tra) {
        return Ok(());
    }
    let root = root.canonicalize().map_err(|e| {
        ToolError::new(
            ErrorKind::Internal,
            format!("the server's root cannot be read: {e}"),
        )
    })?;
    let c = augur_formats::explicit::ExplicitPaths::from_tra(real);
    for companion in [&c.lab, &c.srew, &c.trew, &c.sta] {
        if std::fs::symlink_metadata(companion).is_err() {
            continue;
        }
        let inside = companion
            .canonicalize()
            .is_ok_and(|r| r.starts_with(&root) && r.is_file());
        if !inside {
            let ext = companion
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or_default();
            let shown = Path::new(path).with_extension(ext);
            return Err(ToolError::refused(format!(
                "model_path `{path}`: its companion `{}` is not a file inside the server's root",
                shown.display()
            )));
        }
    }
    Ok(())
}

fn text_format(format: Option<&str>) -> Result<Format> {
    Ok(match format.map(|f| f.to_ascii_lowercase()).as_deref() {
        None | Some("prism") | Some("pm") => Format::Prism,
        Some("drn") => Format::Drn,
        Some("json") => Format::Json,
        Some("tra") => Format::Tra,
        Some(other) => {
            return Err(ToolError::param(format!(
                "unknown format `{other}` (prism, drn, json, tra)"
            )))
        }
    })
}

/// Loads a model under `limits` (states and time).
pub fn load_model(
    source: ModelSource<'_>,
    root: Option<&Path>,
    constants: &Constants,
    exact: bool,
    limits: &Limits,
) -> Result<Model> {
    let opts = LoadOptions {
        constants: constants.clone(),
        exact,
        limits: limits.clone(),
        ..LoadOptions::default()
    };
    let r = match source {
        ModelSource::Text { text, format } => {
            Model::from_text(TEXT_NAME, text, text_format(format)?, &opts)
        }
        ModelSource::Path(p) => {
            let path = resolve_under(root, p)?;
            let root = root.and_then(|r| r.canonicalize().ok());
            if let Some(root) = &root {
                check_companions(root, &path, p)?;
            }
            // Messages name the file as the caller wrote it, not the server's absolute path;
            // a companion's (`.lab`, ...) is named relative to the root.
            // Every file the load opens (the model, its companions, an error's excerpt) is
            // opened first and then checked to be inside the root: no window between the
            // check above and the read (a companion swapped for a link out of the root after
            // `check_companions` is refused).
            let load = || Model::load(&path, &opts);
            let loaded = match &root {
                Some(r) => augur_formats::confine::within_root(r, load).map_err(|e| {
                    ToolError::new(
                        ErrorKind::Internal,
                        format!("the server's root cannot be read: {e}"),
                    )
                })?,
                None => load(),
            };
            return loaded
                .map(|m| m.named(p))
                .map_err(|e| hide_root(ToolError::check(&e), root.as_deref()));
        }
    };
    r.map_err(|e| ToolError::check(&e))
}

/// Removes the server's root folder (`root/`) from an error's message and location, so that
/// a file under it is named relative to it.
fn hide_root(mut e: ToolError, root: Option<&Path>) -> ToolError {
    let Some(root) = root else { return e };
    let prefix = format!("{}{}", root.display(), std::path::MAIN_SEPARATOR);
    e.message = e.message.replace(&prefix, "");
    if let Some(l) = &mut e.location {
        l.file = l.file.replace(&prefix, "");
    }
    e
}

/// The outcome of [`check`]: the report (`augur check --json`) and the errors of the
/// properties that could not be checked (index, error).
#[derive(Debug)]
pub struct CheckOutcome {
    /// The report.
    pub report: Report,
    /// The failures, by property index.
    pub errors: Vec<(usize, ToolError)>,
}

/// What [`check`] checks and how.
#[derive(Clone, Debug, Default)]
pub struct CheckRequest {
    /// PCTL properties (each may carry a name: `"p": P=? [...]`).
    pub properties: Vec<String>,
    /// Constants of the model and properties.
    pub constants: Constants,
    /// The method (default: `auto`).
    pub method: Option<Method>,
    /// Report every state's value.
    pub all_states: bool,
}

/// Checks `req.properties` on `model` (the properties named `property 1`, `property 2`, ...
/// in located messages).
pub fn check(model: &Model, req: &CheckRequest, limits: &Limits) -> Result<CheckOutcome> {
    if req.properties.is_empty() {
        return Err(ToolError::param("no property to check: give at least one"));
    }
    let mut props = Properties::new();
    for (i, text) in req.properties.iter().enumerate() {
        props
            .add(&format!("property {}", i + 1), text)
            .map_err(|e| ToolError::check(&e))?;
    }
    let compiled = props
        .compile(model, &req.constants)
        .map_err(|e| ToolError::check(&e))?;
    let options = CheckOptions {
        method: req.method.unwrap_or(Method::Auto),
        limits: limits.clone(),
        ..CheckOptions::default()
    };
    let mut report = Report::new(model);
    report.warnings.extend(compiled.warnings.iter().cloned());
    let mut errors = Vec::new();
    let mut session = CheckSession::new(model, options);
    session.check_each(&compiled, |i, p, outcome| {
        if let Err(e) = &outcome {
            errors.push((i, located(e, &p.text)));
        }
        report.push(p.name.as_deref(), &p.text, &outcome, req.all_states);
    });
    Ok(CheckOutcome { report, errors })
}

/// A check error with its location, or prefixed by the property when it has none.
fn located(e: &CheckError, property: &str) -> ToolError {
    let mut t = ToolError::check(e);
    if t.location.is_none() {
        t.message = format!("{property}: {}", t.message);
    }
    t
}

/// The curve `P(F≤h target)` for `h = 1..=max_h`: the initial state's values (`curve`),
/// and with `all_states` every state's (`table`, one row per state, as `augur horizon
/// --json`).
pub fn horizon(
    model: &Model,
    target: &str,
    max_h: usize,
    constants: &Constants,
    all_states: bool,
    limits: &Limits,
) -> Result<Value> {
    if max_h == 0 {
        return Err(ToolError::param("max must be at least 1"));
    }
    let options = CheckOptions {
        limits: limits.clone(),
        ..CheckOptions::default()
    };
    let mut session = CheckSession::new(model, options).with_constants(constants);
    let table = session
        .horizon(target, "target", max_h)
        .map_err(|e| ToolError::check(&e))?;
    let n = table.num_states;
    let num = |x: f64| serde_json::to_value(Scalar::Num(x)).unwrap_or(Value::Null);
    let at = |s: usize, h: usize| num(table.get(s, h).unwrap_or(f64::NAN));
    let init = model.dtmc().initial.first().copied().unwrap_or(0) as usize;
    let mut doc = json!({
        "target": target.trim().trim_matches('"'),
        "max": max_h,
        "states": n,
        "initial": model.dtmc().initial,
        "curve": (1..=max_h).map(|h| at(init, h)).collect::<Vec<_>>(),
    });
    if all_states {
        doc["table"] = Value::Array(
            (0..n)
                .map(|s| Value::Array((1..=max_h).map(|h| at(s, h)).collect()))
                .collect(),
        );
    }
    Ok(doc)
}

fn bound(hoeffding: bool) -> PacBound {
    if hoeffding {
        PacBound::Hoeffding
    } else {
        PacBound::ChenEtAl
    }
}

/// The PAC report of a learned model (its JSON text, as `augur learn` writes it, with
/// transition counts), as `augur pac MODEL --json` prints it.
pub fn pac_learned(
    name: &str,
    text: &str,
    epsilon: f64,
    delta: f64,
    hoeffding: bool,
) -> Result<Value> {
    #[derive(serde::Deserialize)]
    struct Learned {
        counts: Option<CountsJson>,
        metadata: Option<Value>,
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc: Learned = augur_formats::json::parse_json(text, Path::new(name))
        .map_err(|e| ToolError::format(&e))?;
    let Some(counts) = doc.counts else {
        return Err(ToolError::new(
            ErrorKind::Model,
            format!("{name}: the model has no transition counts (learn it with `augur learn` to keep them)"),
        ));
    };
    let counts = TransitionCounts::from_json(&counts)
        .map_err(|e| ToolError::new(ErrorKind::Model, format!("{name}: {e}")))?;
    let names: Option<Vec<String>> = doc
        .metadata
        .as_ref()
        .and_then(|m| m.get("state_names"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .filter(|v: &Vec<String>| v.len() == counts.num_states());
    let report =
        pac_report(&counts, epsilon, delta, bound(hoeffding)).map_err(|e| ToolError::learn(&e))?;
    let mut v = serde_json::to_value(&report)
        .map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))?;
    if let Some(states) = v.get_mut("per_state").and_then(|s| s.as_array_mut()) {
        for s in states.iter_mut() {
            let i = s["state"].as_u64().unwrap_or(0) as usize;
            s["name"] = match &names {
                Some(n) => json!(n.get(i)),
                None => json!(format!("s{i}")),
            };
        }
    }
    Ok(v)
}

/// The calculator form of `augur pac`: the observations needed out of one state of an
/// `states`-state model for accuracy ε with confidence δ (δ' = δ/m), with the binding
/// frequency `p_hat` (worst case 1/2 when `None`), and whether `observations` suffice.
pub fn pac_calculator(
    states: usize,
    p_hat: Option<f64>,
    observations: Option<u64>,
    epsilon: f64,
    delta: f64,
    hoeffding: bool,
) -> Result<Value> {
    let b = bound(hoeffding);
    let exact =
        required_samples(p_hat, states, epsilon, delta, b).map_err(|e| ToolError::learn(&e))?;
    let required = exact.ceil() as u64;
    Ok(json!({
        "bound": b,
        "states": states,
        "epsilon": epsilon,
        "delta": delta,
        "delta_prime": delta / states as f64,
        "p_hat": p_hat,
        "required_exact": exact,
        "required": required,
        "observations": observations,
        "holds": observations.map(|n| n >= required),
        "more_needed": observations.map(|n| required.saturating_sub(n)),
    }))
}

/// What `explain` is asked (the MCP tool and the Python package).
#[derive(Clone, Debug)]
pub struct ExplainRequest {
    /// The property (`P<=θ [ φ U ψ ]`, `R{"r"}<=r [ F ψ ]`, ...).
    pub property: String,
    /// Values of constants.
    pub constants: Constants,
    /// How many paths to list.
    pub paths: usize,
    /// The start state (an index or a boolean state formula), `None` for the initial state.
    pub from: Option<String>,
    /// A critical subsystem to find.
    pub subsystem: Option<augur_explain::SubsystemKind>,
    /// Include the subsystem's DOT (`"dot"`).
    pub dot: bool,
    /// Include the subsystem as a PRISM model (`"subsystem_model"`).
    pub prism: bool,
    /// State names (a learned model's).
    pub names: Option<Vec<String>>,
}

/// `heuristic` / `minimal` (the `subsystem` parameter).
pub fn parse_subsystem(text: Option<&str>) -> Result<Option<augur_explain::SubsystemKind>> {
    match text {
        None => Ok(None),
        Some("heuristic") => Ok(Some(augur_explain::SubsystemKind::Heuristic)),
        Some("minimal") => Ok(Some(augur_explain::SubsystemKind::Minimal)),
        Some(other) => Err(ToolError::param(format!(
            "`subsystem` must be \"heuristic\" or \"minimal\", got {other:?}"
        ))),
    }
}

/// At most this many paths are listed by a tool call.
pub const MAX_EXPLAIN_PATHS: usize = 10_000;

/// `augur explain --json` of one property, under `limits`; with `dot` / `prism`, the
/// subsystem's picture and PRISM text as `"dot"` and `"subsystem_model"`.
pub fn explain(model: &Model, req: &ExplainRequest, limits: &Limits) -> Result<Value> {
    if req.paths > MAX_EXPLAIN_PATHS {
        return Err(ToolError::param(format!(
            "`paths` must be at most {MAX_EXPLAIN_PATHS}"
        )));
    }
    let mut r = augur_explain::Request::new(req.property.clone(), req.paths);
    r.source_name = "property".into();
    r.constants = req.constants.clone();
    r.from = req.from.clone();
    r.subsystem = req.subsystem;
    r.names = req.names.clone();
    r.options = CheckOptions {
        limits: limits.clone(),
        ..CheckOptions::default()
    };
    let x = augur_explain::explain(model, &r).map_err(|e| ToolError::explain(&e))?;
    let mut doc = serde_json::to_value(&x.explanation)
        .map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))?;
    if req.dot {
        if let Some(d) = x.dot(model, req.names.as_deref()) {
            doc["dot"] = Value::String(d);
        }
    }
    if req.prism {
        let mut text = Vec::new();
        if let Some(w) = x.write_prism(model, &mut text) {
            w.map_err(|e| ToolError::explain(&e))?;
            doc["subsystem_model"] = Value::String(String::from_utf8_lossy(&text).into_owned());
        }
    }
    Ok(doc)
}
