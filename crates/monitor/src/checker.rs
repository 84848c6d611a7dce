//! The monitor's only door to model loading and checking.
//!
//! Everything the monitor needs from a model checker goes through these few functions, so
//! that moving to the `augur-check` crate (one entry point for loading any model by file name
//! and checking properties) changes this file only. Today they call `augur-dtmc`'s readers,
//! `augur-prism` for PRISM-language files and `augur-solver`'s checker.

use crate::error::{MonitorError, Result};
use augur_dtmc::{Dtmc, StateSet};
use augur_formats::{Format, ReadOptions};
use augur_learn::learn::{CountsJson, TransitionCounts};
use augur_pctl::{Bound, PathFormula, StateFormula, StepBound};
use augur_solver::check::{check, horizon_table, CheckContext, Values};
use augur_solver::{Method, SolveOptions};
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

/// Load a model by its extension (`.tra` with its companions, `.drn`, `.json`, `.pm`/`.prism`).
pub fn load_model(path: &Path) -> Result<LoadedModel> {
    let name = path.display().to_string();
    let format = Format::from_path(path);
    let (dtmc, sha256) = match format {
        Some(Format::Prism) => {
            let bytes = read_bytes(path)?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let model = augur_prism::parse_model(&text, &name)
                .map_err(|e| MonitorError::Model(e.to_string()))?;
            let opts = augur_prism::BuildOptions {
                valuations: true,
                ..Default::default()
            };
            let (dtmc, _) = model
                .build(&[], &opts)
                .map_err(|e| MonitorError::Model(e.to_string()))?;
            (dtmc, sha256_hex([bytes.as_slice()]))
        }
        Some(Format::Tra | Format::Drn | Format::Json) => {
            let (dtmc, _) = augur_formats::read_model(path, &ReadOptions::default())
                .map_err(|e| MonitorError::Model(e.to_string()))?;
            let mut parts = vec![read_bytes(path)?];
            if format == Some(Format::Tra) {
                for ext in ["lab", "srew", "trew", "sta"] {
                    if let Ok(b) = std::fs::read(path.with_extension(ext)) {
                        parts.push(b);
                    }
                }
            }
            (dtmc, sha256_hex(parts.iter().map(Vec::as_slice)))
        }
        _ => {
            return Err(MonitorError::Model(format!(
                "{name}: unknown model format (expected .tra, .drn, .json, .pm or .prism)"
            )))
        }
    };
    let (mut counts, mut metadata) = (None, None);
    if format == Some(Format::Json) {
        let bytes = read_bytes(path)?;
        let doc: serde_json::Value = serde_json::from_slice(&bytes)
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
        dtmc,
        counts,
        metadata,
        sha256,
    })
}

/// The checker's settings for monitors: topological interval iteration (sound bounds; on the
/// monotone (d, t, r) chains every SCC is a single state, solved in closed form) instead of the
/// default's exact rational elimination, whose rationals grow with the learned probabilities.
fn context() -> CheckContext {
    CheckContext {
        options: SolveOptions {
            method: Method::Topological,
            ..SolveOptions::default()
        },
        ..CheckContext::default()
    }
}

/// The states where a state formula holds.
pub fn states_of(dtmc: &Dtmc, f: &StateFormula) -> Result<StateSet> {
    match check(dtmc, f, &context()).map_err(|e| MonitorError::Check(e.to_string()))? {
        Values::Bool(set) => Ok(set),
        Values::Num { .. } => Err(MonitorError::Property(
            "expected a boolean state formula, found a numerical one".into(),
        )),
    }
}

/// Every state's value of a numerical formula, with sound bounds when the method has them
/// (else the value itself on both sides).
pub struct Checked {
    /// The values.
    pub values: Vec<f64>,
    /// Lower bounds.
    pub lower: Vec<f64>,
    /// Upper bounds.
    pub upper: Vec<f64>,
}

/// Check `P=? [path]` (or any numerical formula) in every state.
pub fn values_of(dtmc: &Dtmc, f: &StateFormula) -> Result<Checked> {
    match check(dtmc, f, &context()).map_err(|e| MonitorError::Check(e.to_string()))? {
        Values::Num { values, bounds, .. } => {
            let (lower, upper) = bounds.unwrap_or_else(|| (values.clone(), values.clone()));
            Ok(Checked {
                values,
                lower,
                upper,
            })
        }
        Values::Bool(_) => Err(MonitorError::Property(
            "expected a numerical property (P=? [...]), found a boolean one".into(),
        )),
    }
}

/// The horizon curve of `P=? [ φ U≤h ψ ]` (`φ = None` for `F≤h ψ`), `h = 1..=max_h`: per
/// state, `max_h` values (state-major: `curve[s·max_h + h−1]`).
pub fn horizon_curve(
    dtmc: &Dtmc,
    stay: Option<&StateFormula>,
    target: &StateFormula,
    max_h: usize,
) -> Result<Vec<f64>> {
    let n = dtmc.num_states();
    let mut out = vec![0.0; n * max_h];
    match stay {
        None => {
            let t = states_of(dtmc, target)?;
            let table = horizon_table(&dtmc.matrix, &t, max_h);
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
                let f = StateFormula::Prob {
                    bound: Bound::Query,
                    path: Box::new(PathFormula::Until(
                        phi.clone(),
                        target.clone(),
                        StepBound::Le(augur_expr::Expr::Int(h as i64)),
                    )),
                };
                let c = values_of(dtmc, &f)?;
                for (s, &v) in c.values.iter().enumerate() {
                    out[s * max_h + h - 1] = v;
                }
            }
        }
    }
    Ok(out)
}

/// Expected number of steps to reach `target` from every state (`T=? [ F target ]`;
/// infinite where it is reached with probability < 1).
pub fn expected_steps(dtmc: &Dtmc, target: &StateFormula) -> Result<Vec<f64>> {
    let f = StateFormula::Time {
        bound: Bound::Query,
        target: Box::new(target.clone()),
    };
    Ok(values_of(dtmc, &f)?.values)
}
