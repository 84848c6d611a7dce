//! Learned models with symbolic rows (`augur learn --parametric STATE[,STATE...]`): the
//! outgoing probabilities of the named states are kept as parameters of a parametric DTMC
//! (docs/parametric.md, "From learned models"), and [`confidence_boxes`] gives the box of
//! each such row that the data allows (`augur pac MODEL --param-box`).
//!
//! **The row.** A named state `s` with successors `t_1 … t_k` (`k ≥ 2`, those of the learned
//! row) gets one parameter per successor but one, named after the state and the successor
//! (`p_work_done` for `{work} → {done}`: the names' letters and digits, runs of anything else
//! made `_`). The successor with the most observations (the first of them on a tie) is the
//! *dependent* one: its probability is `1` minus the others' (`1-p_work_s0-p_work_unsafe`), so
//! the row sums to 1 as a function. It is the best estimated entry, so the one least likely to
//! reach 0 inside a box of the others.
//!
//! **The box.** For confidence `C`, every estimated entry of the named rows gets the
//! anytime-valid interval of [`crate::intervals::entry_interval`] at level `δ_e = (1 − C)/K`,
//! `K` the entries of the named rows (1 for a row of two successors, whose entries are
//! complements), so the true rows lie in their intervals simultaneously with probability
//! ≥ `C`. The intervals are then tightened by the row's sum
//! (`lo_i := max(lo_i, 1 − Σ_{j≠i} hi_j)`, `hi_i := min(hi_i, 1 − Σ_{j≠i} lo_j)`), which
//! loses no row of the event. The box of the parameters is their intervals; it contains every
//! row the event allows (and possibly more: a box cannot say that the dependent entry stays in
//! its interval, only [`RowBox::dependent_range`] can).
//!
//! ```
//! use augur_learn::parametric::parameter_name;
//! assert_eq!(parameter_name("{work}", "{done}", 1, 3), "p_work_done");
//! assert_eq!(parameter_name("{}", "a b", 0, 2), "p_s0_a_b");
//! ```

use crate::error::{LearnError, Result};
use crate::intervals::{check_confidence, entry_interval};
use crate::learn::TransitionCounts;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// A successor of a symbolic row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SymbolicSuccessor {
    /// The successor's state index.
    pub target: u32,
    /// The successor's name.
    pub name: String,
    /// Its observations from the row's state.
    pub count: u64,
    /// Its parameter; `None` for the dependent successor (`1` minus the others).
    pub parameter: Option<String>,
}

/// A learned row kept symbolic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SymbolicRow {
    /// The state's index.
    pub state: u32,
    /// The state's name.
    pub name: String,
    /// Its successors (those of the learned row), in state order.
    pub successors: Vec<SymbolicSuccessor>,
}

impl SymbolicRow {
    /// The observed departures from the state (to the row's successors).
    pub fn departures(&self) -> u64 {
        self.successors.iter().map(|s| s.count).sum()
    }

    /// The row's parameters, in successor order.
    pub fn parameters(&self) -> Vec<String> {
        self.successors
            .iter()
            .filter_map(|s| s.parameter.clone())
            .collect()
    }

    /// The dependent successor.
    pub fn dependent(&self) -> Option<&SymbolicSuccessor> {
        self.successors.iter().find(|s| s.parameter.is_none())
    }

    /// The function of the transition to successor `k`: its parameter, or `1` minus the
    /// others (`1-p_a_b-p_a_c`).
    pub fn function(&self, k: usize) -> String {
        match &self.successors[k].parameter {
            Some(p) => p.clone(),
            None => {
                let mut f = "1".to_string();
                for p in self.parameters() {
                    f.push('-');
                    f.push_str(&p);
                }
                f
            }
        }
    }
}

/// The identifier made of a state's name: its runs of letters and digits joined by `_`;
/// `s<index>` when it has none.
fn ident(name: &str, index: u32) -> String {
    let parts: Vec<&str> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        format!("s{index}")
    } else {
        parts.join("_")
    }
}

/// The parameter of the transition `state → successor` (indices `s`, `t`):
/// `p_<state>_<successor>` (see the module docs).
pub fn parameter_name(state: &str, successor: &str, s: u32, t: u32) -> String {
    format!("p_{}_{}", ident(state, s), ident(successor, t))
}

/// The symbolic rows of the states named in `states` (by name, as in `names`), over the
/// learned chain's `transitions` (`[src, dst, prob]`) and the `counts` it was learned from.
/// A state that is not in the model, or whose row has fewer than two successors, is refused.
pub fn symbolic_rows(
    transitions: &[(u32, u32, f64)],
    names: &[String],
    counts: &TransitionCounts,
    states: &[String],
) -> Result<Vec<SymbolicRow>> {
    let mut rows: Vec<SymbolicRow> = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for wanted in states {
        let wanted = wanted.trim();
        let Some(s) = names.iter().position(|n| n == wanted) else {
            let some: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
            return Err(LearnError::BadParametric(format!(
                "the model has no state named `{wanted}` (its states: {}{})",
                some.join(", "),
                if names.len() > some.len() {
                    ", ..."
                } else {
                    ""
                }
            )));
        };
        let s = s as u32;
        if rows.iter().any(|r| r.state == s) {
            continue;
        }
        let mut succ: Vec<(u32, u64)> = transitions
            .iter()
            .filter(|t| t.0 == s && t.2 > 0.0)
            .map(|t| (t.1, counts.count(s, t.1)))
            .collect();
        succ.sort_unstable();
        succ.dedup_by_key(|x| x.0);
        if succ.len() < 2 {
            let only = succ
                .first()
                .map(|x| format!(" (`{}`)", names[x.0 as usize]))
                .unwrap_or_default();
            return Err(LearnError::BadParametric(format!(
                "state `{wanted}` has one successor{only}: its probability is 1, there is nothing to keep symbolic"
            )));
        }
        // The dependent successor: the most observed, the first on a tie.
        let mut dependent = 0;
        for (k, x) in succ.iter().enumerate() {
            if x.1 > succ[dependent].1 {
                dependent = k;
            }
        }
        let successors = succ
            .iter()
            .enumerate()
            .map(|(k, &(t, c))| {
                let parameter = (k != dependent).then(|| {
                    let base = parameter_name(wanted, &names[t as usize], s, t);
                    let mut p = base.clone();
                    let mut i = 2;
                    while used.contains(&p) {
                        p = format!("{base}_{i}");
                        i += 1;
                    }
                    used.insert(p.clone());
                    p
                });
                SymbolicSuccessor {
                    target: t,
                    name: names[t as usize].clone(),
                    count: c,
                    parameter,
                }
            })
            .collect();
        rows.push(SymbolicRow {
            state: s,
            name: wanted.to_string(),
            successors,
        });
    }
    Ok(rows)
}

/// The learned model's JSON document (`doc`, with its transitions listed) made parametric:
/// `"parameters"` names the rows' parameters and each symbolic row's transitions are their
/// functions (strings, as Augur's parametric JSON reads them); the rows are recorded in
/// `metadata.learned.parametric`.
///
/// The other rows are written exactly too, so that every row sums to 1 as a function: a row of
/// observed frequencies as the fractions `count/departures`, a never-left row spread uniformly
/// as `1/k`, and any other (smoothed) row as the decimals of its probabilities with its largest
/// entry written `1-d1-d2-...` (the same doubles, closing the row exactly).
pub fn make_symbolic(
    doc: serde_json::Value,
    rows: &[SymbolicRow],
    counts: &TransitionCounts,
) -> Result<serde_json::Value> {
    let mut doc = doc;
    let Some(ts) = doc.get_mut("transitions").and_then(|t| t.as_array_mut()) else {
        return Err(LearnError::BadParametric(
            "the learned model has too many transitions to list them (its rows are written implicitly), so none can be made symbolic".into(),
        ));
    };
    exact_rows(ts, counts);
    for t in ts.iter_mut() {
        let Some(a) = t.as_array_mut() else { continue };
        let (Some(s), Some(d)) = (
            a.first().and_then(|v| v.as_u64()),
            a.get(1).and_then(|v| v.as_u64()),
        ) else {
            continue;
        };
        let Some(row) = rows.iter().find(|r| u64::from(r.state) == s) else {
            continue;
        };
        if let Some(k) = row.successors.iter().position(|x| u64::from(x.target) == d) {
            if a.len() > 2 {
                a[2] = serde_json::Value::from(row.function(k));
            }
        }
    }
    let params: Vec<String> = rows.iter().flat_map(SymbolicRow::parameters).collect();
    if let Some(o) = doc.as_object_mut() {
        o.insert("parameters".into(), serde_json::Value::from(params));
        let meta = o
            .entry("metadata")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(m) = meta.as_object_mut() {
            let learned = m
                .entry("learned")
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if let Some(l) = learned.as_object_mut() {
                l.insert(
                    "parametric".into(),
                    serde_json::to_value(rows).unwrap_or_default(),
                );
            }
        }
    }
    Ok(doc)
}

/// Rewrites the probabilities of `ts` (`[src, dst, prob]`, grouped by source) as exact texts
/// whose rows sum to 1 (see [`make_symbolic`]).
fn exact_rows(ts: &mut [serde_json::Value], counts: &TransitionCounts) {
    let entry = |t: &serde_json::Value| -> Option<(u32, u32, f64)> {
        let a = t.as_array()?;
        Some((
            a.first()?.as_u64()? as u32,
            a.get(1)?.as_u64()? as u32,
            a.get(2)?.as_f64()?,
        ))
    };
    let mut start = 0;
    while start < ts.len() {
        let Some((s, _, _)) = entry(&ts[start]) else {
            start += 1;
            continue;
        };
        let mut end = start;
        while end < ts.len() && entry(&ts[end]).is_some_and(|e| e.0 == s) {
            end += 1;
        }
        let row: Vec<(u32, f64)> = ts[start..end]
            .iter()
            .filter_map(|t| entry(t).map(|e| (e.1, e.2)))
            .collect();
        let n: u64 = row.iter().map(|&(t, _)| counts.count(s, t)).sum();
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12;
        let texts: Vec<String> = if n > 0
            && row
                .iter()
                .all(|&(t, p)| close(p, counts.count(s, t) as f64 / n as f64))
        {
            row.iter()
                .map(|&(t, _)| format!("{}/{n}", counts.count(s, t)))
                .collect()
        } else if row.iter().all(|&(_, p)| close(p, 1.0 / row.len() as f64)) {
            vec![format!("1/{}", row.len()); row.len()]
        } else {
            let largest = (0..row.len())
                .max_by(|&a, &b| row[a].1.total_cmp(&row[b].1))
                .unwrap_or(0);
            let mut rest = String::from("1");
            for (k, &(_, p)) in row.iter().enumerate() {
                if k != largest {
                    rest.push_str(&format!("-{p}"));
                }
            }
            row.iter()
                .enumerate()
                .map(|(k, &(_, p))| {
                    if k == largest {
                        rest.clone()
                    } else {
                        format!("{p}")
                    }
                })
                .collect()
        };
        for (t, text) in ts[start..end].iter_mut().zip(texts) {
            if let Some(a) = t.as_array_mut() {
                a[2] = serde_json::Value::from(text);
            }
        }
        start = end;
    }
}

/// The symbolic rows recorded in a learned model's metadata (`metadata.learned.parametric`).
pub fn recorded_rows(metadata: Option<&serde_json::Value>) -> Option<Vec<SymbolicRow>> {
    let v = metadata?.get("learned")?.get("parametric")?;
    serde_json::from_value(v.clone()).ok()
}

/// A symbolic row's confidence box.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowBox {
    /// The state's name.
    pub state: String,
    /// Its observed departures.
    pub departures: u64,
    /// Per successor: its name, parameter (`None`: the dependent one), count and interval.
    pub entries: Vec<BoxEntry>,
}

/// One entry of a [`RowBox`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoxEntry {
    /// The successor's name.
    pub successor: String,
    /// Its parameter (`None`: the dependent successor).
    pub parameter: Option<String>,
    /// Its observations.
    pub count: u64,
    /// The estimate `count / departures`.
    pub estimate: f64,
    /// The interval's lower end (tightened by the row's sum).
    pub lo: f64,
    /// The interval's upper end.
    pub hi: f64,
}

impl RowBox {
    /// The dependent entry's interval (what the box of the others cannot state).
    pub fn dependent_range(&self) -> Option<(f64, f64)> {
        self.entries
            .iter()
            .find(|e| e.parameter.is_none())
            .map(|e| (e.lo, e.hi))
    }

    /// Whether the dependent entry stays positive over the whole box of the parameters
    /// (`Σ hi < 1` over the parameters): else a region check over the box is refused, as the
    /// chain's graph would change in a corner.
    pub fn graph_preserving(&self) -> bool {
        self.entries
            .iter()
            .filter(|e| e.parameter.is_some())
            .map(|e| e.hi)
            .sum::<f64>()
            < 1.0
            && self
                .entries
                .iter()
                .filter(|e| e.parameter.is_some())
                .all(|e| e.lo > 0.0)
    }
}

/// The boxes of the symbolic rows at `confidence` (see the module docs), with `K` and `δ_e`.
pub fn confidence_boxes(rows: &[SymbolicRow], confidence: f64) -> Result<(Vec<RowBox>, u64, f64)> {
    check_confidence(confidence)?;
    let pairs: u64 = rows
        .iter()
        .map(|r| match r.successors.len() {
            0 | 1 => 0,
            2 => 1,
            k => k as u64,
        })
        .sum();
    let delta_e = (1.0 - confidence) / pairs.max(1) as f64;
    // The tightening by the row's sum is done in floating point: widen by this much so that
    // rounding never cuts a true value off.
    const SLACK: f64 = 1e-12;
    let boxes = rows
        .iter()
        .map(|r| {
            let n = r.departures();
            let raw: Vec<(f64, f64)> = r
                .successors
                .iter()
                .map(|s| entry_interval(s.count, n, delta_e))
                .collect();
            let sum_lo: f64 = raw.iter().map(|x| x.0).sum();
            let sum_hi: f64 = raw.iter().map(|x| x.1).sum();
            let entries = r
                .successors
                .iter()
                .zip(&raw)
                .map(|(s, &(raw_lo, raw_hi))| {
                    let lo = raw_lo.max(1.0 - (sum_hi - raw_hi) - SLACK).max(0.0);
                    let hi = raw_hi.min(1.0 - (sum_lo - raw_lo) + SLACK).min(1.0);
                    BoxEntry {
                        successor: s.name.clone(),
                        parameter: s.parameter.clone(),
                        count: s.count,
                        estimate: if n == 0 {
                            1.0 / r.successors.len() as f64
                        } else {
                            s.count as f64 / n as f64
                        },
                        lo,
                        hi,
                    }
                })
                .collect();
            RowBox {
                state: r.name.clone(),
                departures: n,
                entries,
            }
        })
        .collect();
    Ok((boxes, pairs, delta_e))
}

/// `x` written with `d` decimals, trailing zeros dropped.
fn decimals(x: f64, d: usize) -> String {
    let s = format!("{x:.d$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `[lo, hi]` rounded outward to the fewest decimals (at least 4) that keep a positive `lo`
/// positive and an `hi` below 1 below 1.
pub fn outward(lo: f64, hi: f64) -> (String, String) {
    for d in 4..=15 {
        let f = 10f64.powi(d as i32);
        let l = ((lo * f) - 1e-6).floor().max(0.0) / f;
        let h = ((hi * f) + 1e-6).ceil().min(f) / f;
        if (lo <= 0.0 || l > 0.0) && (hi >= 1.0 || h < 1.0) || d == 15 {
            return (decimals(l, d), decimals(h, d));
        }
    }
    unreachable!("the loop returns at d = 15")
}

/// The options that check a model over the boxes: `--param` with every parameter's bounds
/// and `--region` with the same box (`p_a_b=0.21:0.55,...`, `0.21<=p_a_b<=0.55,...`).
pub fn region_options(boxes: &[RowBox]) -> (String, String) {
    let mut params = Vec::new();
    let mut region = Vec::new();
    for b in boxes {
        for e in &b.entries {
            if let Some(p) = &e.parameter {
                let (l, h) = outward(e.lo, e.hi);
                params.push(format!("{p}={l}:{h}"));
                region.push(format!("{l}<={p}<={h}"));
            }
        }
    }
    (params.join(","), region.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(rows: &[(u32, u32, u64)], n: usize) -> TransitionCounts {
        let mut c = TransitionCounts::new(n);
        for &(a, b, k) in rows {
            for _ in 0..k {
                c.observe_trace(&[a, b], &crate::AllValid);
            }
        }
        c
    }

    #[test]
    fn rows_name_parameters_and_keep_the_most_observed_dependent() {
        let names: Vec<String> = ["start", "work", "done", "bad"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = counts(&[(1, 0, 3), (1, 2, 6), (1, 3, 1)], 4);
        let ts = vec![(1, 0, 0.3), (1, 2, 0.6), (1, 3, 0.1), (0, 1, 1.0)];
        let rows = symbolic_rows(&ts, &names, &c, &["work".into()]).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.departures(), 10);
        assert_eq!(r.parameters(), vec!["p_work_start", "p_work_bad"]);
        assert_eq!(r.dependent().unwrap().name, "done");
        assert_eq!(r.function(1), "1-p_work_start-p_work_bad");
        // A state with one successor and an unknown state are refused.
        let e = symbolic_rows(&ts, &names, &c, &["start".into()]).unwrap_err();
        assert!(e.to_string().contains("one successor"), "{e}");
        let e = symbolic_rows(&ts, &names, &c, &["nope".into()]).unwrap_err();
        assert!(e.to_string().contains("no state named `nope`"), "{e}");
    }

    #[test]
    fn boxes_use_the_union_over_the_named_rows_and_contain_the_estimates() {
        let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let c = counts(
            &[(0, 1, 30), (0, 2, 70), (3, 1, 5), (3, 2, 3), (3, 0, 2)],
            4,
        );
        let ts = vec![
            (0, 1, 0.3),
            (0, 2, 0.7),
            (3, 0, 0.2),
            (3, 1, 0.5),
            (3, 2, 0.3),
        ];
        let rows = symbolic_rows(&ts, &names, &c, &["a".into(), "d".into()]).unwrap();
        let (boxes, pairs, de) = confidence_boxes(&rows, 0.9).unwrap();
        // One pair for the two-successor row, three for the other.
        assert_eq!(pairs, 4);
        assert!((de - 0.1 / 4.0).abs() < 1e-15);
        // Row a: two complements, so the tightened intervals are each other's mirror.
        let (l, h) = entry_interval(30, 100, de);
        let e = &boxes[0].entries;
        assert!((e[0].lo - l).abs() < 1e-9 && (e[0].hi - h).abs() < 1e-9);
        assert!((e[1].lo - (1.0 - h)).abs() < 1e-9 && (e[1].hi - (1.0 - l)).abs() < 1e-9);
        for b in &boxes {
            for e in &b.entries {
                assert!(e.lo <= e.estimate && e.estimate <= e.hi, "{e:?}");
            }
        }
        let (params, region) = region_options(&boxes);
        assert!(params.starts_with("p_a_b="), "{params}");
        assert_eq!(region.matches("<=").count(), 2 * 3);
    }

    #[test]
    fn outward_rounding_keeps_the_interval_inside_and_ends_positive() {
        let (l, h) = outward(0.3, 0.7);
        assert!(l.parse::<f64>().unwrap() <= 0.3 && h.parse::<f64>().unwrap() >= 0.7);
        let (l, _) = outward(0.00001234, 0.5);
        assert!(l.parse::<f64>().unwrap() > 0.0 && l.parse::<f64>().unwrap() <= 0.00001234);
        let (_, h) = outward(0.2, 0.999_99);
        assert!(h.parse::<f64>().unwrap() < 1.0);
    }
}
