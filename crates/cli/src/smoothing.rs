//! The warning of `augur check` for an unbounded probability that is 1 on a learned model only
//! because of smoothing.
//!
//! Criterion: the property is a query `P=? [ path ]` whose path formula has no step bound
//! (`F`, `U`, `G`, `W`, `R` unbounded), its value is 1 (at least 1 − 1e-9) on the learned
//! model, and the same property on the chain of the observed runs
//! ([`augur_learn::observed::observed_runs_chain`]: from each state the empirical
//! frequencies of its observed transitions and of the runs that ended there, the ends going
//! to an absorbing state where no label holds) is below 1 − 1e-9. Then some observed runs
//! stopped (or cycle among observed transitions) without satisfying the path formula, and
//! the 1 rests on what the data does not show: the transitions smoothing adds (α on every
//! valid successor, the uniform row of a state never left), with the runs' ends not
//! modelled. A 1 that the observed runs support (each of them satisfies the path formula,
//! as with a model learned with `--end-state`, where the runs' ends are modelled) gets no
//! warning; bounded properties are not concerned (a bounded horizon does not rely on where
//! runs end).

use augur_check::{CheckOptions, CheckSession, CompiledProperty, Model, Scalar};
use augur_formats::json::read_json_document;
use augur_formats::Format;
use augur_learn::observed::observed_runs_chain;
use augur_learn::{CountsJson, TransitionCounts};
use augur_pctl::resolve::{ResolvedFormula, ResolvedPath};
use std::path::Path;

/// How close to 1 a value counts as 1.
const ONE: f64 = 1.0 - 1e-9;

/// Whether `p` is `P=? [ path ]` with an unbounded `F`, `U`, `G`, `W` or `R` path formula.
pub fn is_unbounded_query(p: &CompiledProperty) -> bool {
    let Ok(r) = &p.resolved else {
        return false;
    };
    let ResolvedFormula::Prob {
        threshold: None,
        path,
        ..
    } = &r.formula
    else {
        return false;
    };
    match path.as_ref() {
        ResolvedPath::Until(_, _, s)
        | ResolvedPath::Eventually(_, s)
        | ResolvedPath::Globally(_, s)
        | ResolvedPath::WeakUntil(_, _, s)
        | ResolvedPath::Release(_, _, s) => s.lower == 0 && s.upper.is_none(),
        ResolvedPath::Next(_) | ResolvedPath::Ltl(_) => false,
    }
}

/// Whether a result is 1.
pub fn is_one(value: &Scalar) -> bool {
    matches!(value, Scalar::Num(v) if *v >= ONE)
}

/// The chain of the observed runs of a learned model (an Augur JSON file with its
/// `"counts"`, as `augur learn` writes it); `None` for any other model.
pub fn observed_model(path: &Path, model: &Model) -> Option<Model> {
    if Format::from_path(path) != Some(Format::Json) {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let doc = read_json_document(std::io::BufReader::new(file), path).ok()?;
    let counts: CountsJson = serde_json::from_value(doc.counts?).ok()?;
    let counts = TransitionCounts::from_json(&counts).ok()?;
    let chain = observed_runs_chain(&counts, model.dtmc()).ok()?;
    Some(Model::from_dtmc(chain).named(model.name()))
}

/// The warning for `p` (whose value on the learned model is 1), when its value on the
/// chain of the observed runs is below 1.
pub fn warning(observed: &Model, options: &CheckOptions, p: &CompiledProperty) -> Option<String> {
    let r = CheckSession::new(observed, options.clone()).check(p).ok()?;
    let Scalar::Num(v) = r.value else {
        return None;
    };
    (v < ONE).then(|| {
        format!(
            "{} = 1 only because of smoothing: on the observed runs (the observed transitions, \
             each run stopping where its trace ended) it is {}; the learned model lets every \
             state go on to every valid state and does not model where runs end. Learn with \
             --end-state NAME to model it (models/learning.md)",
            p.text, r.value
        )
    })
}

/// [`warning`] for a learned interval model (`augur learn --intervals`): there the 1 comes from
/// the intervals `[0, small]` of transitions never observed (nature may take them at every
/// step, forever) and from not modelling where runs end.
pub fn interval_warning(
    observed: &Model,
    options: &CheckOptions,
    p: &CompiledProperty,
) -> Option<String> {
    let r = CheckSession::new(observed, options.clone()).check(p).ok()?;
    let Scalar::Num(v) = r.value else {
        return None;
    };
    (v < ONE).then(|| {
        format!(
            "{} = 1 only because of the learned intervals: on the observed runs (the observed \
             transitions, each run stopping where its trace ended) it is {}; a transition never \
             observed keeps an interval [0, small] that nature may take at every step, forever, \
             and trace ends are not modelled. Give a spec whose validity rules such \
             transitions out (final states absorbing), or learn with --end-state NAME \
             (docs/robust.md)",
            p.text, r.value
        )
    })
}
