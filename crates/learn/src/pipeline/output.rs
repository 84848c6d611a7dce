//! Where learned models are written and their JSON document.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use augur_formats::json::{write_json_document, DtmcJson, LabelJson, LabelsJson};

use super::*;
use crate::error::{LearnError, Result};

fn sanitize(category: &str) -> String {
    let s: String = category
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

/// The file of a category's model next to `out`: `OUT-stem.CATEGORY.json` (the category with
/// characters other than letters, digits, `-` and `_` replaced by `_`).
pub fn category_path(out: &Path, category: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    out.with_file_name(format!("{stem}.{}.json", sanitize(category)))
}

/// The file of each model: `out` itself, or with categories [`category_path`]. Two
/// categories that would be written to the same file are an error (one model would silently
/// overwrite the other).
pub fn output_paths(models: &[LearnedModel], out: &Path) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = Vec::with_capacity(models.len());
    for (i, m) in models.iter().enumerate() {
        let Some(category) = &m.category else {
            paths.push(out.to_path_buf());
            continue;
        };
        let p = category_path(out, category);
        if let Some(j) = paths.iter().position(|q| *q == p) {
            return Err(LearnError::CategoryClash {
                first: models[j].category.clone().unwrap_or_default(),
                second: category.clone(),
                path: p,
            });
        }
        debug_assert_eq!(paths.len(), i);
        paths.push(p);
    }
    Ok(paths)
}

/// The JSON document of a learned model: the model, its transition counts (`"counts"`, read
/// by `pac`) and `metadata` (the state names are added as `"state_names"`). An interval model
/// ([`LearnedModel::learn_intervals`]) lists its `intervals` (and its confidence is recorded by
/// the caller in `metadata`).
///
/// A model with at most [`MAX_EXPLICIT_TRANSITIONS`] transitions lists them (`transitions`,
/// readable by any Augur JSON reader); a larger one keeps its rows implicit: the smoothing
/// rule (`smoothing`) over the observed counts, which readers expand (see
/// [`augur_formats::smoothing`]).
pub fn learned_document(model: &LearnedModel, metadata: serde_json::Value) -> DtmcJson {
    learned_document_with(model, metadata, MAX_EXPLICIT_TRANSITIONS)
}

/// [`learned_document`], listing the transitions of models with at most `explicit_up_to`.
pub fn learned_document_with(
    model: &LearnedModel,
    metadata: serde_json::Value,
    explicit_up_to: u64,
) -> DtmcJson {
    // An interval model is always listed (its rows have no implicit form). (Its bounds were
    // checked when learned: making the model cannot fail.) The name labels are listed apart,
    // from one label index per state (never made into sets of states).
    let interval = model
        .intervals
        .as_ref()
        .and_then(|iv| Some((iv.metadata(), iv.to_dtmc(model.bare_shell()).ok()?)));
    let mut recorded = None;
    let explicit = if let Some((meta, d)) = interval {
        recorded = Some(meta);
        Some(d)
    } else if model.num_transitions() <= explicit_up_to {
        // (Cannot fail: the count is within the limit.)
        model
            .chain(explicit_up_to as usize, model.bare_shell())
            .ok()
    } else {
        None
    };
    let mut doc = match explicit {
        Some(d) => DtmcJson::from_dtmc(&d),
        None => {
            let mut doc = DtmcJson::from_dtmc(&model.bare_shell());
            doc.transitions = None;
            doc.smoothing = Some(model.rows.rule().clone());
            doc
        }
    };
    if let (Some(names), LabelsJson::List(list)) = (&model.name_labels, &mut doc.labels) {
        let named: Vec<LabelJson> = names
            .names
            .iter()
            .zip(names.states())
            .map(|(name, states)| LabelJson {
                name: name.clone(),
                states,
            })
            .collect();
        list.splice(0..0, named);
    }
    doc.counts = serde_json::to_value(model.counts.to_json()).ok();
    let mut metadata = match metadata {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => serde_json::Map::new(),
        other => {
            let mut m = serde_json::Map::new();
            m.insert("info".into(), other);
            m
        }
    };
    metadata.insert(
        "state_names".into(),
        serde_json::Value::from(model.state_names.clone()),
    );
    if let Some(meta) = recorded {
        // `metadata.learned.intervals`: the confidence `augur check` states.
        let learned = metadata
            .entry("learned")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(l) = learned.as_object_mut() {
            l.insert(
                "intervals".into(),
                serde_json::to_value(meta).unwrap_or_default(),
            );
        }
    }
    doc.metadata = Some(serde_json::Value::Object(metadata));
    doc
}

/// Writes a learned model to `path` as Augur JSON with its counts (see [`learned_document`]).
pub fn write_learned(model: &LearnedModel, path: &Path, metadata: serde_json::Value) -> Result<()> {
    let io = |what: &'static str| {
        move |source| LearnError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    };
    let f = std::fs::File::create(path).map_err(io("cannot create"))?;
    let mut w = BufWriter::new(f);
    write_json_document(&learned_document(model, metadata), &mut w)?;
    w.flush().map_err(io("cannot write"))?;
    Ok(())
}
