//! Training: splits and folds, runs to (d, t, r, p) trajectories, the learned chains, the compiled monitor.

use super::*;
use augur_gate::dtr::{Predicates, Prov};
use augur_gate::intent::Tier;

/// Stratified split by label: `(train, test)` run indices.
pub fn split(runs: &[Run], test_fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for label in [Label::Safe, Label::Unsafe] {
        let mut idx: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].label == label)
            .collect();
        idx.shuffle(&mut rng);
        let n_test = ((idx.len() as f64) * test_fraction).round() as usize;
        test.extend_from_slice(&idx[..n_test.min(idx.len())]);
        train.extend_from_slice(&idx[n_test.min(idx.len())..]);
    }
    train.sort_unstable();
    test.sort_unstable();
    (train, test)
}

/// Stratified k folds: fold `i` holds the test indices of round `i`.
pub fn folds(runs: &[Run], k: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![Vec::new(); k];
    for label in [Label::Safe, Label::Unsafe] {
        let mut idx: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].label == label)
            .collect();
        idx.shuffle(&mut rng);
        for (j, i) in idx.into_iter().enumerate() {
            out[j % k].push(i);
        }
    }
    for f in &mut out {
        f.sort_unstable();
    }
    out
}

/// The `(d, t, r)` trajectory of a run: `s₀ = START` and one state per step, up to the first
/// step the classifier cannot map.
pub fn trajectory(classifier: &Classifier, run: &Run) -> Vec<SafetyState> {
    let mut s = SafetyState::START;
    let mut out = vec![s];
    for step in &run.steps {
        let crate::runs::RunStep::Tool { tool, args } = step else {
            break;
        };
        match classifier.classify(tool, args) {
            Some(c) => {
                s = s.update(c.implication);
                out.push(s);
            }
            None => break,
        }
    }
    out
}

/// The `(d, t, r, p)` trajectory of a run as a session sees it: the run's observations are fed
/// to a provenance store before each call (tool results trusted as `trusted` says), each call
/// gets its p ([`Classifier::call_provenance`]) and its classification may test provenance
/// (`when`); VIOLATED is absorbing as in a session. Up to the first step the classifier cannot
/// map.
pub fn trajectory_p(
    classifier: &Classifier,
    trusted: &[NamePattern],
    run: &Run,
) -> Vec<SafetyState> {
    let mut store = augur_gate::provenance::Provenance::new();
    let mut intent = augur_gate::intent::Intent::new();
    let mut next = 0;
    let mut s = SafetyState::START;
    let mut out = vec![s];
    for (k, step) in run.steps.iter().enumerate() {
        feed_with(&mut store, Some(&mut intent), trusted, run, &mut next, k);
        let crate::runs::RunStep::Tool { tool, args } = step else {
            break;
        };
        match classifier.classify_with(tool, args, Some(&store)) {
            Some(c) => {
                let p = classifier.call_provenance(&c, args, &store, false).p;
                // Decided as a session decides it (issue 41: a value the user delegated).
                let raw = p;
                let p = intent.decided_p(s, classifier, &c, args, &store, p);
                // The chain's predicates, as a session finds them (issue 41, item 4).
                let delegated =
                    raw == Prov::Untrusted
                        && p == Prov::User
                        && intent.call_tier(classifier, &c, args, &store).is_some_and(
                            |(_, _, h)| matches!(h.tier, Tier::Requested | Tier::Delegated),
                        );
                let x = intent.predicates(tool, &c, delegated);
                s = augur_gate::session::absorbing(s, s.update_p(c.implication, p).with_x(x));
                out.push(s);
            }
            None => break,
        }
    }
    out
}

/// Validity over the `(d, t, r)` and `(d, t, r, p)` states: d and t never decrease; VIOLATED
/// is absorbing.
pub fn dtr_valid(from: u32, to: u32) -> bool {
    match (
        SafetyState::from_index(from as usize),
        SafetyState::from_index(to as usize),
    ) {
        (Some(a), Some(b)) => step_valid(a, b),
        _ => false,
    }
}

/// Validity over the learned chain's 960 states ([`SafetyState::chain_index`]): as
/// [`dtr_valid`], and `i` (an instruction seen) is never unset.
pub fn chain_valid(from: u32, to: u32) -> bool {
    match (
        SafetyState::from_chain_index(from as usize),
        SafetyState::from_chain_index(to as usize),
    ) {
        (Some(a), Some(b)) => step_valid(a, b),
        _ => false,
    }
}

/// Whether a run can step from `a` to `b`: d, t and `i` never decrease, VIOLATED is
/// absorbing (the states of [`dtr_valid`] have no `i`).
fn step_valid(a: SafetyState, b: SafetyState) -> bool {
    b.d >= a.d
        && b.t >= a.t
        && (b.x.signal || !a.x.signal)
        && !(a.risk_level() == RiskLevel::Violated && b.risk_level() != RiskLevel::Violated)
}

/// Learn the 60-state `(d, t, r)` chain from trajectories, labelled with the risk levels
/// (`SAFE` .. `VIOLATED`) and valued with `d`, `t`, `r`.
pub fn learn_dtr(trajectories: &[&[SafetyState]], alpha: f64) -> Result<(Dtmc, TransitionCounts)> {
    learn_states(trajectories, alpha, States::Dtr)
}

/// Learn the 180-state `(d, t, r, p)` chain from trajectories, labelled with the risk levels
/// and valued with `d`, `t`, `r`, `p` (the predicates are left out).
pub fn learn_dtrp(trajectories: &[&[SafetyState]], alpha: f64) -> Result<(Dtmc, TransitionCounts)> {
    learn_states(trajectories, alpha, States::Dtrp)
}

/// Learn the 960-state chain of issue 41 from trajectories ([`trajectory_p`]'s, which carry
/// the predicates): labelled with the risk levels and valued with `d`, `t`, `r`, `p` (3 is
/// DELEGATED), `i` and `u` (0 or 1).
pub fn learn_chain(
    trajectories: &[&[SafetyState]],
    alpha: f64,
) -> Result<(Dtmc, TransitionCounts)> {
    learn_states(trajectories, alpha, States::Chain)
}

/// The state spaces a chain is learned over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum States {
    /// The 60 `(d, t, r)` states.
    Dtr,
    /// The 180 `(d, t, r, p)` states.
    Dtrp,
    /// The 960 chain states.
    Chain,
}

pub(super) fn learn_states(
    trajectories: &[&[SafetyState]],
    alpha: f64,
    space: States,
) -> Result<(Dtmc, TransitionCounts)> {
    let n = match space {
        States::Dtr => NUM_DTR_STATES,
        States::Dtrp => NUM_DTRP_STATES,
        States::Chain => NUM_CHAIN_STATES,
    };
    let chain = space == States::Chain;
    let index = |s: &SafetyState| if chain { s.chain_index() } else { s.index() };
    let states = || {
        (0..n).filter_map(move |i| {
            if chain {
                SafetyState::from_chain_index(i)
            } else {
                SafetyState::from_index(i)
            }
        })
    };
    let validity = |i: u32, j: u32| {
        if chain {
            chain_valid(i, j)
        } else {
            dtr_valid(i, j)
        }
    };
    let mut counts = TransitionCounts::new(n);
    let mut buf = Vec::new();
    for t in trajectories {
        buf.clear();
        buf.extend(t.iter().map(|s| index(s) as u32));
        counts
            .try_observe_trace(&buf, &validity)
            .map_err(|e| MonitorError::Eval(e.to_string()))?;
    }
    counts.mark_determined(&validity);
    let learned = learn_with(&counts, &validity, alpha, Unobserved::Uniform)
        .map_err(|e| MonitorError::Eval(e.to_string()))?;
    let mut dtmc = learned.dtmc;
    if chain {
        dtmc = back_off(&counts, &dtmc, trajectories, alpha)?;
    }
    dtmc.labels = RiskLevel::ALL
        .iter()
        .map(|l| {
            let mut set = FixedBitSet::with_capacity(n);
            for s in states() {
                if s.risk_level() == *l {
                    set.insert(index(&s));
                }
            }
            (l.as_str().to_string(), set)
        })
        .collect();
    let cols = match space {
        States::Dtr => 3,
        States::Dtrp => 4,
        States::Chain => 6,
    };
    let mut values = Vec::with_capacity(n * cols);
    for s in states() {
        values.extend([
            EValue::Int(s.d.index() as i64),
            EValue::Int(s.t.index() as i64),
            EValue::Int(s.r.index() as i64),
        ]);
        if space != States::Dtr {
            values.push(EValue::Int(s.chain_class() as i64));
        }
        if chain {
            values.push(EValue::Int(i64::from(s.x.signal)));
            values.push(EValue::Int(i64::from(s.x.unrequested)));
        }
    }
    let names: Vec<String> = ["d", "t", "r", "p", "i", "u"][..cols]
        .iter()
        .map(|x| x.to_string())
        .collect();
    dtmc.valuations = Some(Valuations::new(names, vec![Type::Int; cols], values));
    Ok((dtmc, counts))
}

/// The chain's rows that no training run observed, backed off to coarser data (issue 41):
/// such a chain state takes the row of its `(d, t, r, p)` state (the predicates dropped,
/// DELEGATED read as USER), learned from the same trajectories projected the same way, and
/// lifted into the chain: every successor keeps `i` when it held (an instruction seen stays
/// seen) and has no other predicate. A uniform row over an unseen state's valid successors
/// (up to 960) would put a quarter to a third of its next step in VIOLATED states, whatever
/// the runs say; the coarse state's row is what they say of the same `(d, t, r, p)`. Observed
/// and determined rows are the chain's own.
fn back_off(
    counts: &TransitionCounts,
    chain: &Dtmc,
    trajectories: &[&[SafetyState]],
    alpha: f64,
) -> Result<Dtmc> {
    let projected: Vec<Vec<SafetyState>> = trajectories
        .iter()
        .map(|t| t.iter().map(|s| s.with_x(Predicates::default())).collect())
        .collect();
    let refs: Vec<&[SafetyState]> = projected.iter().map(Vec::as_slice).collect();
    let (coarse, _) = learn_states(&refs, alpha, States::Dtrp)?;
    let n = chain.num_states();
    let err = |e: augur_dtmc::DtmcError| MonitorError::Eval(e.to_string());
    let mut b = augur_dtmc::DtmcBuilder::with_capacity(n, chain.num_transitions());
    for s in 0..n {
        let own = counts.row_total(s as u32) > 0 || counts.determined().contains(&(s as u32));
        let st = SafetyState::from_chain_index(s)
            .ok_or_else(|| MonitorError::Eval(format!("chain state {s} out of range")))?;
        if own {
            b.add_row(s as u32, chain.successors(s)).map_err(err)?;
        } else {
            let keep = Predicates {
                signal: st.x.signal,
                ..Predicates::default()
            };
            for (to, p) in coarse.successors(st.index()) {
                let to = SafetyState::from_index(to as usize)
                    .ok_or_else(|| MonitorError::Eval(format!("state {to} out of range")))?
                    .with_x(keep)
                    .chain_index();
                b.add_transition(s as u32, to as u32, p).map_err(err)?;
            }
        }
    }
    for &i in &chain.initial {
        b.add_initial(i).map_err(err)?;
    }
    Ok(b.build().map_err(err)?.0)
}

/// Learn the per-category monitors (plus the fallback on all training runs) and compile them:
/// the monitor each round of [`evaluate`] replays, and what `augur monitor learn` writes for
/// all the runs of a file (one path for both, so that a learned monitor is the evaluated one).
pub fn train_monitor(runs: &[&Run], opts: &EvalOptions) -> Result<Monitor> {
    let trusted = trusted_tools(opts);
    let trajs: Vec<Vec<SafetyState>> = runs
        .iter()
        .map(|r| {
            if opts.provenance {
                trajectory_p(&opts.classifier, trusted, r)
            } else {
                trajectory(&opts.classifier, r)
            }
        })
        .collect();
    let space = if opts.provenance {
        States::Chain
    } else {
        States::Dtr
    };
    let learn = |ts: &[&[SafetyState]]| learn_states(ts, opts.alpha, space);
    let mut by_cat: BTreeMap<String, Vec<&[SafetyState]>> = BTreeMap::new();
    for (r, t) in runs.iter().zip(&trajs) {
        if let Some(c) = &r.category {
            by_cat.entry(c.clone()).or_default().push(t);
        }
    }
    let all: Vec<&[SafetyState]> = trajs.iter().map(Vec::as_slice).collect();
    if all.is_empty() {
        return Err(MonitorError::Eval("no training run".into()));
    }
    let mut sources = Vec::new();
    for (c, ts) in &by_cat {
        let (dtmc, counts) = learn(ts)?;
        let mut s = Source::new(dtmc, &format!("learned[{c}]"));
        s.category = Some(c.clone());
        s.counts = Some(counts);
        sources.push(s);
    }
    let (dtmc, counts) = learn(&all)?;
    let mut s = Source::new(dtmc, "learned[all]");
    s.counts = Some(counts);
    sources.push(s);
    let mut copts = compile_options(opts);
    copts.horizon = Some(opts.horizon);
    copts.mapping = Some(Mapping::Dtr);
    copts.classifier = Some(opts.classifier.clone());
    compile_dtmcs(sources, &copts)
}

/// The trusted tools of an evaluation: its policy's, else [`EvalOptions::trusted_tools`].
pub(super) fn trusted_tools(opts: &EvalOptions) -> &[NamePattern] {
    match &opts.policy {
        Some(p) => &p.base.trusted_tools,
        None => &opts.trusted_tools,
    }
}

/// The compilation options of an evaluation (its property, constants, method and limits).
pub(super) fn compile_options(opts: &EvalOptions) -> CompileOptions {
    let mut c = CompileOptions::new(&opts.property);
    c.pac = opts.pac;
    c.load = opts.load.clone();
    c.check = opts.check.clone();
    c
}

/// Next-state accuracy of orders 1..=3 (learned on `train` trajectories, measured on `test`):
/// a k-th order chain predicts the most frequent successor of the last k states; a context
/// never seen in training backs off to the last k−1 states (and to "stay" at none).
pub fn markov_order(
    train: &[Vec<SafetyState>],
    test: &[Vec<SafetyState>],
    max_order: usize,
) -> Vec<OrderAccuracy> {
    let idx = |t: &[SafetyState]| -> Vec<u8> { t.iter().map(|s| s.index() as u8).collect() };
    let train: Vec<Vec<u8>> = train.iter().map(|t| idx(t)).collect();
    let test: Vec<Vec<u8>> = test.iter().map(|t| idx(t)).collect();
    // counts[k][context] -> successor counts
    let mut counts: Vec<HashMap<Vec<u8>, [u32; NUM_DTR_STATES]>> =
        vec![HashMap::new(); max_order + 1];
    for t in &train {
        for i in 1..t.len() {
            for k in 1..=max_order.min(i) {
                let ctx = t[i - k..i].to_vec();
                counts[k].entry(ctx).or_insert([0; NUM_DTR_STATES])[t[i] as usize] += 1;
            }
        }
    }
    let predict = |t: &[u8], i: usize, k: usize| -> u8 {
        for kk in (1..=k.min(i)).rev() {
            if let Some(c) = counts[kk].get(&t[i - kk..i]) {
                let (best, _) =
                    c.iter().enumerate().fold(
                        (0usize, 0u32),
                        |acc, (j, &n)| if n > acc.1 { (j, n) } else { acc },
                    );
                return best as u8;
            }
        }
        t[i - 1]
    };
    (1..=max_order)
        .map(|k| {
            let (mut ok, mut n) = (0u64, 0u64);
            for t in &test {
                for i in 1..t.len() {
                    n += 1;
                    if predict(t, i, k) == t[i] {
                        ok += 1;
                    }
                }
            }
            OrderAccuracy {
                order: k,
                accuracy: Rate::new(ok, n),
            }
        })
        .collect()
}

/// Per risk level, the observation-weighted mean horizon curve of the fallback table's states
/// of that level (states never observed are left out).
pub fn level_curves(m: &Monitor) -> Vec<(String, Vec<f64>)> {
    let Some(ti) = m.table_for(None) else {
        return Vec::new();
    };
    let t = &m.tables[ti];
    let h = m.horizon_max as usize;
    let mut out = Vec::new();
    for level in &RiskLevel::ALL[..4] {
        let mut acc = vec![0.0; h];
        let mut w = 0.0;
        let chain = t.map.len() == NUM_CHAIN_STATES;
        let states: Vec<SafetyState> = if chain {
            SafetyState::all_chain().collect()
        } else if t.map.len() == NUM_DTRP_STATES {
            SafetyState::all_p().collect()
        } else {
            SafetyState::all().collect()
        };
        for s in states.into_iter().filter(|s| s.risk_level() == *level) {
            let ms = t.map[if chain { s.chain_index() } else { s.index() }] as usize;
            let obs = t.learning.as_ref().map_or(1, |l| l[ms].observations) as f64;
            if obs == 0.0 {
                continue;
            }
            for (k, a) in acc.iter_mut().enumerate() {
                *a += obs * t.curve[ms * h + k];
            }
            w += obs;
        }
        if w > 0.0 {
            out.push((
                level.as_str().to_string(),
                acc.into_iter().map(|a| a / w).collect(),
            ));
        }
    }
    out
}
