//! The monitor's only door to model loading and checking: `augur-check`, the entry point every
//! front-end uses. Properties and state formulas are handed to it as PCTL text, so that it
//! resolves and locates them like any other property.

use crate::error::{MonitorError, Result};
use augur_check::{
    CheckError, CheckOptions, CheckSession, Constants, LoadOptions, Model, Properties, StateValues,
};
use augur_dtmc::StateSet;
use augur_formats::Format;
use augur_learn::{CountsJson, TransitionCounts};
use augur_pctl::{ResolvedFormula, ResolvedPath, ResolvedProperty, Steps};
use augur_source::{SourceFile, Span};
use std::path::Path;
use std::sync::Arc;

/// A model read from a file, with what the monitor keeps about it.
pub struct LoadedModel {
    /// The model (its constants and formulas usable in the property).
    pub model: Model,
    /// Transition counts, when the model was learned (`"counts"` of Augur's JSON).
    pub counts: Option<TransitionCounts>,
    /// `metadata` of Augur's JSON (the learner's category, state names, spec path).
    pub metadata: Option<serde_json::Value>,
    /// SHA-256 of the bytes read (the model file and its companion files, in order).
    pub sha256: String,
}

pub(crate) use augur_gate::sha256_hex;

fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| MonitorError::io(path.display().to_string(), e))
}

pub(crate) fn check_error(e: CheckError) -> MonitorError {
    match e {
        CheckError::Input(d) => MonitorError::input(*d),
        CheckError::Stopped(s) => MonitorError::Stopped(s),
        CheckError::UnusedConstant { ref name } => {
            MonitorError::Check(format!("--const {name}: {e}"))
        }
        e => MonitorError::Check(e.to_string()),
    }
}

/// Load a model by its extension (`.tra` with its companions, `.drn`, `.json`, `.pm`/`.prism`)
/// under `opts` (constants, deadlock fixing, the state, time and cancellation limits). An
/// interval model is refused unless `intervals` (`monitor compile --robust`, whose robust
/// tables use its intervals).
pub fn load_model(path: &Path, opts: &LoadOptions, intervals: bool) -> Result<LoadedModel> {
    let model = Model::load(path, opts).map_err(check_error)?;
    // The monitor's point tables are of one chain; an interval model fails closed without
    // the robust tables.
    if !intervals {
        model
            .require_point("the monitor's probability tables (compile it with --robust)")
            .map_err(check_error)?;
    }
    let format = Format::from_path(path);
    let mut parts = vec![read_bytes(path)?];
    if format == Some(Format::Tra) {
        for ext in ["lab", "srew", "trew", "sta"] {
            if let Ok(b) = std::fs::read(path.with_extension(ext)) {
                parts.push(b);
            }
        }
    }
    let sha256 = sha256_hex(parts.iter().map(Vec::as_slice));
    let (mut counts, mut metadata) = (None, None);
    if format == Some(Format::Json) {
        let name = path.display().to_string();
        let doc: serde_json::Value = serde_json::from_slice(&parts[0])
            .map_err(|e| MonitorError::Model(format!("{name}: {e}")))?;
        if let Some(c) = doc.get("counts") {
            let cj: CountsJson = serde_json::from_value(c.clone())
                .map_err(|e| MonitorError::Model(format!("{name}: counts: {e}")))?;
            counts = Some(
                TransitionCounts::from_json(&cj)
                    .map_err(|e| MonitorError::Model(format!("{name}: counts: {e}")))?,
            );
        }
        metadata = doc.get("metadata").cloned();
    }
    Ok(LoadedModel {
        model,
        counts,
        metadata,
        sha256,
    })
}

/// The property as the monitor uses it on one model: resolved by `augur-check` (constants,
/// labels, formulas, bounds — the resolution and the located errors of `augur check`), then
/// taken apart into `φ U≤k ψ` (`φ = None` for `F≤k ψ`).
pub(crate) struct MonitorProperty {
    /// The resolved property.
    pub resolved: ResolvedProperty,
    /// `φ` of `φ U ψ` (`None` for `F ψ`).
    pub stay: Option<ResolvedFormula>,
    /// `ψ`.
    pub target: ResolvedFormula,
    /// The step bound `k` (`None`: unbounded).
    pub bound: Option<u32>,
    /// Where the step bound (or the operator, when there is none) is written.
    pub bound_span: Span,
}

/// What a monitor compiles, for the messages of the property's restrictions.
pub(crate) const PATH_QUERY: &str = "a monitor compiles a probability query of a path property: `P=? [ F ψ ]`, `P=? [ F<=k ψ ]` or `P=? [ φ U<=k ψ ]`";

/// The property `text` as parsed (written in `--prop`, its syntax errors located there).
pub(crate) fn parse_property(text: &str) -> Result<augur_pctl::Property> {
    let mut props = Properties::new();
    props.add("--prop", text).map_err(check_error)?;
    let first = props.properties().next().cloned();
    first.ok_or_else(|| MonitorError::Property("no property to compile".into()))
}

/// Label names of `text` rewritten to the model's spelling when the model has no label of
/// that name but exactly one that differs only in case (`"VIOLATED"` on a chain labelled
/// `violated`). The rewrite keeps every byte offset (ASCII case only), so errors located in
/// the rewritten text point at the same places.
fn match_label_case(text: &str, labels: &[String], model: &Model) -> String {
    let mut out = text.to_string();
    for name in labels {
        if model.dtmc().label(name).is_some() {
            continue;
        }
        let hits: Vec<&String> = model
            .dtmc()
            .labels
            .iter()
            .map(|(n, _)| n)
            .filter(|n| n.eq_ignore_ascii_case(name))
            .collect();
        if let [one] = hits.as_slice() {
            out = out.replace(&format!("\"{name}\""), &format!("\"{one}\""));
        }
    }
    out
}

/// Resolves the property `text` (written in `--prop`) on `model` with the given constants,
/// as `augur check --prop` does, then applies the monitor's restrictions as located errors:
/// a `P=?` query of `F ψ` or `φ U ψ`, with an upper step bound of 1 to `max_bound` steps or
/// none.
pub(crate) fn resolve_property(
    text: &str,
    model: &Model,
    constants: &Constants,
    max_bound: u32,
) -> Result<MonitorProperty> {
    let mut props = Properties::new();
    props.add("--prop", text).map_err(check_error)?;
    let labels: Vec<String> = props
        .properties()
        .flat_map(|p| p.formula.labels())
        .collect();
    let rewritten = match_label_case(text, &labels, model);
    if rewritten != text {
        props = Properties::new();
        props.add("--prop", &rewritten).map_err(check_error)?;
    }
    let compiled = props.compile(model, constants).map_err(check_error)?;
    let Some(item) = compiled.items.into_iter().next() else {
        return Err(MonitorError::Property("no property to compile".into()));
    };
    let resolved = item.resolved.map_err(MonitorError::input)?;
    let at = |span: Span, message: String| {
        MonitorError::located(resolved.source.location(span), message)
    };
    let ResolvedFormula::Prob {
        threshold,
        path,
        span,
        ..
    } = &resolved.formula
    else {
        return Err(at(resolved.formula.span(), PATH_QUERY.to_string()));
    };
    if let Some(t) = threshold {
        return Err(at(
            *span,
            format!(
                "{PATH_QUERY}; this one compares with a threshold ({}), give `P=?`",
                t.value.value
            ),
        ));
    }
    let (stay, target, steps): (Option<&ResolvedFormula>, &ResolvedFormula, &Steps) =
        match path.as_ref() {
            ResolvedPath::Eventually(t, s) => (None, t, s),
            ResolvedPath::Until(f, t, s) => (Some(f), t, s),
            ResolvedPath::Globally(_, s)
            | ResolvedPath::WeakUntil(_, _, s)
            | ResolvedPath::Release(_, _, s) => return Err(at(s.span, PATH_QUERY.to_string())),
            ResolvedPath::Next(_) | ResolvedPath::Ltl(_) => {
                return Err(at(*span, PATH_QUERY.to_string()))
            }
        };
    if steps.lower > 0 {
        return Err(at(
            steps.span,
            "a monitor needs an upper step bound (`<=k`, `<k`) or none: the probability of reaching the target within the next k steps".to_string(),
        ));
    }
    let bound = match steps.upper {
        None => None,
        Some(k) => match u32::try_from(k) {
            Ok(k) if (1..=max_bound).contains(&k) => Some(k),
            _ => {
                return Err(at(
                    steps.span,
                    format!("step bound {k}: a monitor looks 1 to {max_bound} steps ahead"),
                ))
            }
        },
    };
    let bound_span = steps.span;
    let stay = stay.cloned();
    let target = target.clone();
    Ok(MonitorProperty {
        resolved,
        stay,
        target,
        bound,
        bound_span,
    })
}

/// Checking on one model, under the given options (with their limits).
pub(crate) struct Checker<'m> {
    session: CheckSession<'m>,
    source: Arc<SourceFile>,
}

impl<'m> Checker<'m> {
    /// A checker for `model`; errors are located in the property's text `source`.
    pub fn new(model: &'m Model, options: &CheckOptions, source: Arc<SourceFile>) -> Checker<'m> {
        Checker {
            session: CheckSession::new(model, options.clone()),
            source,
        }
    }

    fn values(&mut self, f: &ResolvedFormula) -> Result<StateValues> {
        self.session.values(f, &self.source).map_err(check_error)
    }

    /// The states where a boolean state formula holds.
    pub fn states(&mut self, f: &ResolvedFormula) -> Result<StateSet> {
        match self.values(f)? {
            StateValues::Bool(set) => Ok(set),
            StateValues::Num(_) => Err(MonitorError::located(
                self.source.location(f.span()),
                "expected a label or a boolean state formula",
            )),
        }
    }

    /// Every state's value of a numerical state formula (`P=? [...]`, `T=? [...]`), with
    /// sound bounds when the method has them (else the value itself on both sides).
    pub fn numbers(&mut self, f: &ResolvedFormula) -> Result<Checked> {
        match self.values(f)? {
            StateValues::Num(n) => {
                let (lower, upper) = n
                    .bounds
                    .unwrap_or_else(|| (n.values.clone(), n.values.clone()));
                Ok(Checked {
                    values: n.values,
                    lower,
                    upper,
                })
            }
            StateValues::Bool(_) => Err(MonitorError::located(
                self.source.location(f.span()),
                "expected a numerical property, found a boolean one",
            )),
        }
    }

    /// The horizon curve of `P=? [ φ U≤h ψ ]` (`stay = None` for `F≤h ψ`), `h = 1..=max_h`:
    /// per state, `max_h` values (state-major: `curve[s·max_h + h−1]`).
    pub fn horizon_curve(
        &mut self,
        stay: Option<&ResolvedFormula>,
        target: &ResolvedFormula,
        span: Span,
        max_h: usize,
    ) -> Result<Vec<f64>> {
        let n = self.session.dtmc().num_states();
        let mut out = vec![0.0; n * max_h];
        match stay {
            None => {
                let set = self.states(target)?;
                let table = self.session.horizon_of(&set, max_h).map_err(check_error)?;
                for h in 1..=max_h {
                    if let Some(row) = table.horizon(h) {
                        for (s, &v) in row.iter().enumerate() {
                            out[s * max_h + h - 1] = v;
                        }
                    }
                }
            }
            Some(phi) => {
                for h in 1..=max_h {
                    let f = ResolvedFormula::Prob {
                        opt: None,
                        threshold: None,
                        path: Box::new(ResolvedPath::Until(
                            phi.clone(),
                            target.clone(),
                            Steps {
                                lower: 0,
                                upper: Some(h as u64),
                                span,
                            },
                        )),
                        span,
                    };
                    let v = self.numbers(&f)?;
                    for (s, &x) in v.values.iter().enumerate() {
                        out[s * max_h + h - 1] = x;
                    }
                }
            }
        }
        Ok(out)
    }

    /// The robust horizon curve `Pmax(φ U≤h ψ)`, `h = 1..=max_h`, state-major, of an
    /// interval model (see [`augur_check::CheckSession::robust_horizon_of`]).
    pub fn robust_curve(
        &mut self,
        stay: Option<&StateSet>,
        target: &StateSet,
        max_h: usize,
    ) -> Result<Vec<f64>> {
        self.session
            .robust_horizon_of(stay, target, max_h, true)
            .map_err(check_error)
    }

    /// Expected number of steps to reach `target` from every state (`T=? [ F target ]`;
    /// infinite where it is reached with probability < 1).
    pub fn expected_steps(&mut self, target: &ResolvedFormula, span: Span) -> Result<Vec<f64>> {
        let f = ResolvedFormula::Time {
            threshold: None,
            target: Box::new(target.clone()),
            span,
        };
        Ok(self.numbers(&f)?.values)
    }
}

/// Every state's value of a numerical property, with sound bounds when the method has them
/// (else the value itself on both sides).
pub struct Checked {
    /// The values.
    pub values: Vec<f64>,
    /// Lower bounds.
    pub lower: Vec<f64>,
    /// Upper bounds.
    pub upper: Vec<f64>,
}
