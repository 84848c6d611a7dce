//! The monitor's only door to model loading and checking: `augur-check`, the entry point every
//! front-end uses. Properties and state formulas are handed to it as PCTL text, so that it
//! resolves and locates them like any other property.

use crate::error::{MonitorError, Result};
use augur_check::{
    CheckError, CheckOptions, CheckSession, LoadOptions, Method, Model, StateValues,
};
use augur_dtmc::{Dtmc, StateSet};
use augur_formats::Format;
use augur_learn::{CountsJson, TransitionCounts};
use sha2::{Digest, Sha256};
use std::path::Path;

/// A model read from a file, with what the monitor keeps about it.
pub struct LoadedModel {
    /// The chain.
    pub dtmc: Dtmc,
    /// Transition counts, when the model was learned (`"counts"` of Augur's JSON).
    pub counts: Option<TransitionCounts>,
    /// `metadata` of Augur's JSON (the learner's category, state names, spec path).
    pub metadata: Option<serde_json::Value>,
    /// SHA-256 of the bytes read (the model file and its companion files, in order).
    pub sha256: String,
}

/// Hex SHA-256 of some byte strings, in order.
pub fn sha256_hex<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| MonitorError::Io {
        file: path.display().to_string(),
        source: e,
    })
}

fn check_error(e: CheckError) -> MonitorError {
    match e {
        CheckError::Input(d) => MonitorError::Input(d),
        e => MonitorError::Check(e.to_string()),
    }
}

/// Load a model by its extension (`.tra` with its companions, `.drn`, `.json`, `.pm`/`.prism`).
pub fn load_model(path: &Path) -> Result<LoadedModel> {
    let model = Model::load(path, &LoadOptions::default()).map_err(check_error)?;
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
        dtmc: model.into_dtmc(),
        counts,
        metadata,
        sha256,
    })
}

/// The checker's settings for monitors: topological interval iteration (sound bounds; on the
/// monotone (d, t, r) chains every SCC is a single state, solved in closed form) instead of the
/// default's exact rational elimination, whose rationals grow with the learned probabilities.
fn session(dtmc: &Dtmc) -> CheckSession<'_> {
    CheckSession::for_dtmc(
        dtmc,
        CheckOptions {
            method: Method::Topological,
            ..CheckOptions::default()
        },
    )
}

/// The states where a state formula (PCTL text) holds.
pub fn states_of(dtmc: &Dtmc, formula: &str) -> Result<StateSet> {
    session(dtmc).states(formula, "--prop").map_err(check_error)
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

/// Check a numerical property (PCTL text: `P=? [...]`, `T=? [...]`) in every state.
pub fn values_of(dtmc: &Dtmc, property: &str) -> Result<Checked> {
    let r = session(dtmc).check_str(property).map_err(check_error)?;
    match r.states {
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
        StateValues::Bool(_) => Err(MonitorError::Property(format!(
            "`{property}`: expected a numerical property, found a boolean one"
        ))),
    }
}

/// The horizon curve of `P=? [ φ U≤h ψ ]` (`stay = None` for `F≤h ψ`), `h = 1..=max_h`,
/// as PCTL text: per state, `max_h` values (state-major: `curve[s·max_h + h−1]`).
pub fn horizon_curve(
    dtmc: &Dtmc,
    stay: Option<&str>,
    target: &str,
    max_h: usize,
) -> Result<Vec<f64>> {
    let n = dtmc.num_states();
    let mut out = vec![0.0; n * max_h];
    match stay {
        None => {
            let table = session(dtmc)
                .horizon(target, "--prop", max_h)
                .map_err(check_error)?;
            for h in 1..=max_h {
                if let Some(row) = table.horizon(h) {
                    for (s, &v) in row.iter().enumerate() {
                        out[s * max_h + h - 1] = v;
                    }
                }
            }
        }
        Some(phi) => {
            let mut sess = session(dtmc);
            for h in 1..=max_h {
                let r = sess
                    .check_str(&format!("P=? [ ({phi}) U<={h} ({target}) ]"))
                    .map_err(check_error)?;
                let StateValues::Num(v) = r.states else {
                    return Err(MonitorError::Check(
                        "a path probability gave truth values".into(),
                    ));
                };
                for (s, &x) in v.values.iter().enumerate() {
                    out[s * max_h + h - 1] = x;
                }
            }
        }
    }
    Ok(out)
}

/// Expected number of steps to reach `target` from every state (`T=? [ F target ]`;
/// infinite where it is reached with probability < 1).
pub fn expected_steps(dtmc: &Dtmc, target: &str) -> Result<Vec<f64>> {
    Ok(values_of(dtmc, &format!("T=? [ F ({target}) ]"))?.values)
}
