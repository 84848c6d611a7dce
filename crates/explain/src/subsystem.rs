//! Critical subsystems: a set of states whose sub-chain alone (every transition leaving the set
//! redirected to one added sink state) already gives the path formula a probability above the
//! threshold. [`grow`] is the heuristic (the states ranked by their share of the probability,
//! expected visits × probability to go on to ψ, added in doubling batches until the sub-chain
//! exceeds the threshold, then pruned); [`minimal`] the exact minimum for small models (branch
//! and bound over state subsets).

use crate::error::{ExplainError, Result};
use crate::paths::{distances_to_target, PathGoal};
use crate::stop::Clock;
use augur_check::{CheckOptions, CheckSession, Limits, Method, Scalar};
use augur_dtmc::{Dtmc, DtmcBuilder, StateSet, Valuations};
use nalgebra::{DMatrix, DVector};

/// The label of the φ-states in a sub-chain (for its check; not written to exports).
pub const PHI_LABEL: &str = "__explain_phi";
/// The label of the ψ-states in a sub-chain (for its check; not written to exports).
pub const PSI_LABEL: &str = "__explain_psi";

/// The exact search ([`minimal`]) handles at most this many relevant states.
pub const MINIMAL_MAX_STATES: usize = 24;

/// The default budget of subset evaluations of [`minimal`].
pub const MINIMAL_BUDGET: usize = 4_000_000;

/// A sub-chain of a DTMC: the chosen states, then one sink.
#[derive(Clone, Debug)]
pub struct SubChain {
    /// The chain: state `i < states.len()` is `states[i]` of the model, the last state is the
    /// sink (absorbing) that every transition leaving the set goes to. It keeps the model's
    /// labels (restricted to the set), its valuations when the sink can be given one that no
    /// chosen state has and that is no ψ-state's, and has [`PHI_LABEL`] and [`PSI_LABEL`].
    pub dtmc: Dtmc,
    /// The model's states, in the chain's order.
    pub states: Vec<u32>,
}

impl SubChain {
    /// The index of the sink.
    pub fn sink(&self) -> usize {
        self.states.len()
    }

    /// The chain without the two labels of the path formula (for writing it out).
    pub fn for_export(&self) -> Dtmc {
        let mut d = self.dtmc.clone();
        d.labels.retain(|(n, _)| n != PHI_LABEL && n != PSI_LABEL);
        d
    }
}

/// The sub-chain of `states` (the first is its initial state).
pub fn restrict(dtmc: &Dtmc, states: &[u32], formula: &PathGoal<'_>) -> Result<SubChain> {
    let n = dtmc.num_states();
    let m = states.len();
    let mut local = std::collections::HashMap::with_capacity(m);
    for (i, &s) in states.iter().enumerate() {
        if s as usize >= n || local.insert(s, i as u32).is_some() {
            return Err(ExplainError::input(format!(
                "state {s} is not a state of the model or is chosen twice"
            )));
        }
    }
    let sink = m as u32;
    let mut b = DtmcBuilder::with_capacity(m + 1, m * 4);
    // A dropped transition's target that is no ψ-state: its valuation names the sink.
    let mut sink_like: Option<usize> = None;
    let build = |e: augur_dtmc::DtmcError| ExplainError::input(e.to_string());
    for (i, &s) in states.iter().enumerate() {
        let mut out = 0.0;
        for (t, p) in dtmc.successors(s as usize) {
            match local.get(&t) {
                Some(&j) => b.add_transition(i as u32, j, p).map_err(build)?,
                None => {
                    out += p;
                    if sink_like.is_none() && !formula.psi.contains(t as usize) {
                        sink_like = Some(t as usize);
                    }
                }
            }
        }
        if out > 0.0 {
            b.add_transition(i as u32, sink, out).map_err(build)?;
        }
    }
    b.add_transition(sink, sink, 1.0).map_err(build)?;
    if !states.is_empty() {
        b.add_initial(0).map_err(build)?;
    }
    let mut sets: Vec<(String, StateSet)> = Vec::new();
    for (name, set) in &dtmc.labels {
        if name == "init" || name == "deadlock" {
            continue;
        }
        let mut sub = StateSet::with_capacity(m + 1);
        for (i, &s) in states.iter().enumerate() {
            if set.contains(s as usize) {
                sub.insert(i);
            }
        }
        sets.push((name.clone(), sub));
    }
    let mut phi = StateSet::with_capacity(m + 1);
    let mut psi = StateSet::with_capacity(m + 1);
    for (i, &s) in states.iter().enumerate() {
        if formula.phi.is_none_or(|p| p.contains(s as usize)) {
            phi.insert(i);
        }
        if formula.psi.contains(s as usize) {
            psi.insert(i);
        }
    }
    if let Some(v) = &dtmc.valuations {
        if sink_like.is_none() {
            let chosen: StateSet = states.iter().map(|&s| s as usize).collect();
            sink_like = (0..n).find(|&t| !formula.psi.contains(t) && !chosen.contains(t));
        }
        if let Some(like) = sink_like {
            let mut values = Vec::with_capacity((m + 1) * v.names.len());
            for s in states
                .iter()
                .map(|&s| s as usize)
                .chain(std::iter::once(like))
            {
                match v.row(s) {
                    Some(row) => values.extend(row),
                    None => {
                        values.clear();
                        break;
                    }
                }
            }
            if values.len() == (m + 1) * v.names.len() {
                b.set_valuations(Valuations::new(v.names.clone(), v.types.clone(), values));
            }
        }
    }
    let (mut d, _) = b.build().map_err(build)?;
    for (name, set) in sets {
        d.set_label(&name, set);
    }
    d.set_label(PHI_LABEL, phi);
    d.set_label(PSI_LABEL, psi);
    Ok(SubChain {
        dtmc: d,
        states: states.to_vec(),
    })
}

/// The probability of a sub-chain's path formula from its initial state, as the checker
/// computes it (sound bounds `lo ≤ value ≤ hi` with the default method).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Mass {
    /// The value.
    pub value: f64,
    /// A sound lower bound.
    pub lo: f64,
    /// A sound upper bound.
    pub hi: f64,
}

/// The checker's property text of the path formula over the sub-chain's two labels.
fn sub_property(formula: &PathGoal<'_>) -> String {
    let bound = formula.bound.map(|k| format!("<={k}")).unwrap_or_default();
    match formula.phi {
        Some(_) => format!("P=? [ \"{PHI_LABEL}\" U{bound} \"{PSI_LABEL}\" ]"),
        None => format!("P=? [ F{bound} \"{PSI_LABEL}\" ]"),
    }
}

/// Checks the path formula on a sub-chain (by `augur-check`, under `options`).
pub fn probability(sub: &SubChain, formula: &PathGoal<'_>, options: &CheckOptions) -> Result<Mass> {
    let mut session = CheckSession::for_dtmc(&sub.dtmc, options.clone());
    let r = session.check_str(&sub_property(formula))?;
    let Scalar::Num(value) = r.value else {
        return Err(ExplainError::input("the sub-chain's check gave no number"));
    };
    let (lo, hi) = r.bounds.map(|b| (b.lo, b.hi)).unwrap_or((value, value));
    Ok(Mass { value, lo, hi })
}

/// A critical subsystem: its states (in the order they were added; the start first), its
/// sub-chain's probability and how it was found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Subsystem {
    /// The model's states.
    pub states: Vec<u32>,
    /// The sub-chain's probability (checked by `augur-check`).
    pub probability: Mass,
    /// Transitions among the states (the sink's not counted).
    pub transitions: usize,
    /// How many sub-chains were checked to find it (the heuristic), or subsets evaluated
    /// (the exact search).
    pub checks: usize,
}

fn inner_transitions(dtmc: &Dtmc, states: &[u32]) -> usize {
    let set: std::collections::HashSet<u32> = states.iter().copied().collect();
    states
        .iter()
        .map(|&s| {
            dtmc.successors(s as usize)
                .filter(|(t, _)| set.contains(t))
                .count()
        })
        .sum()
}

/// The first prefix of the ranked states [`grow`] checks; it doubles until one exceeds.
const FIRST_BATCH: usize = 16;

/// The largest number of Gauss–Seidel sweeps over one cyclic strongly connected component
/// when [`ranking`] computes the expected visits (a ranking needs no more precision).
const MAX_SWEEPS: usize = 1000;

/// At most this many rounds of re-ranking inside the found set ([`grow`]'s pruning).
const REFINE_ROUNDS: usize = 4;

/// The raw CSR arrays of a matrix.
fn raw(m: &augur_dtmc::Matrix) -> (&[u32], &[u32], &[f64]) {
    (m.indptr().into_raw_storage(), m.indices(), m.data())
}

/// The states that can matter to the path formula from `start`, ranked by their share of its
/// probability: the start first, then the others by decreasing *flow* — for a state that
/// continues (a φ-state that is no ψ-state), its expected number of visits from `start`
/// before ψ times `values[s]`, its probability of the path formula; for a ψ-state, the
/// probability of reaching it first. On an acyclic chain the flow of a state is exactly the
/// probability of the paths through it. Only *relevant* states are ranked: those reached from
/// `start` through continuing states that can reach ψ through continuing states (a sub-chain
/// of the relevant states has the probability of the whole chain; no other state can help).
/// Empty when ψ cannot be reached from `start`. The sweeps honour `limits` (time and
/// cancellation).
///
/// The visits solve `ξ = e_start + ξ·Q` over the continuing relevant states (a transient
/// sub-chain: from each of them ψ can be reached): one pass over the strongly connected
/// components in topological order, each acyclic state in closed form (its self-loop
/// divided out), the states of a cyclic component by Gauss–Seidel sweeps (at most
/// [`MAX_SWEEPS`]; an approximate ranking is still a ranking, the checks are exact).
/// `values` may be any approximation of the probabilities (for `U≤k`, those with all `k`
/// steps left): they only order the states.
pub fn ranking(
    dtmc: &Dtmc,
    transpose: &augur_dtmc::Matrix,
    formula: &PathGoal<'_>,
    start: usize,
    values: &[f64],
    limits: &Limits,
) -> Result<Vec<u32>> {
    Ok(
        flows(dtmc, transpose, formula, start, values, &Clock::new(limits))?
            .into_iter()
            .map(|(s, _)| s)
            .collect(),
    )
}

/// The relevant states with their flows, in the order of [`ranking`] (the start first, with
/// flow 1).
pub(crate) fn flows(
    dtmc: &Dtmc,
    transpose: &augur_dtmc::Matrix,
    formula: &PathGoal<'_>,
    start: usize,
    values: &[f64],
    clock: &Clock,
) -> Result<Vec<(u32, f64)>> {
    let n = dtmc.num_states();
    let (ptr, idx, val) = raw(transpose);
    // Backward from ψ through continuing states.
    let mut reach = StateSet::with_capacity(n);
    let mut stack: Vec<u32> = Vec::new();
    for t in formula.psi.ones().filter(|&t| t < n) {
        reach.insert(t);
        stack.push(t as u32);
    }
    while let Some(v) = stack.pop() {
        let v = v as usize;
        for k in ptr[v] as usize..ptr[v + 1] as usize {
            let u = idx[k] as usize;
            if val[k] > 0.0 && !reach.contains(u) && formula.continues(u) {
                reach.insert(u);
                stack.push(u as u32);
            }
        }
    }
    if start >= n || !reach.contains(start) {
        return Ok(Vec::new());
    }
    if formula.psi.contains(start) {
        return Ok(vec![(start as u32, 1.0)]);
    }
    // Forward from the start through continuing relevant states.
    let mut inner = StateSet::with_capacity(n);
    let mut targets: Vec<u32> = Vec::new();
    let mut members: Vec<u32> = vec![start as u32];
    inner.insert(start);
    stack.push(start as u32);
    while let Some(s) = stack.pop() {
        for (t, p) in dtmc.successors(s as usize) {
            let tu = t as usize;
            if p <= 0.0 || !reach.contains(tu) || inner.contains(tu) {
                continue;
            }
            inner.insert(tu);
            if formula.psi.contains(tu) {
                targets.push(t);
            } else {
                members.push(t);
                stack.push(t);
            }
        }
    }
    // `inner` now holds the targets too: keep the continuing states only.
    for &t in &targets {
        inner.set(t as usize, false);
    }
    let sccs = augur_solver::graph::scc_restricted(&dtmc.matrix, &inner);
    let comp = &sccs.component;
    // Topological order: decreasing component ids (predecessors first).
    members.sort_unstable_by(|&a, &b| comp[b as usize].cmp(&comp[a as usize]).then(a.cmp(&b)));
    let mut xi = vec![0.0f64; n];
    let mut ext: Vec<f64> = Vec::new();
    let mut i = 0;
    while i < members.len() {
        let c = comp[members[i] as usize];
        let mut j = i + 1;
        while j < members.len() && comp[members[j] as usize] == c {
            j += 1;
        }
        let group = &members[i..j];
        // Inflow from earlier components (final), and each state's self-loop.
        ext.clear();
        for &s in group {
            let s = s as usize;
            let mut inflow = if s == start { 1.0 } else { 0.0 };
            let mut own = 0.0;
            for k in ptr[s] as usize..ptr[s + 1] as usize {
                let u = idx[k] as usize;
                if u == s {
                    own += val[k];
                } else if comp[u] != u32::MAX && comp[u] != c {
                    inflow += xi[u] * val[k];
                }
            }
            // A relevant state leaves itself with positive probability (it reaches ψ).
            let stay = (1.0 - own).max(f64::MIN_POSITIVE);
            ext.push(inflow);
            ext.push(stay);
        }
        if group.len() == 1 {
            xi[group[0] as usize] = ext[0] / ext[1];
        } else {
            for _ in 0..MAX_SWEEPS {
                clock.check()?;
                let (mut change, mut largest) = (0.0f64, 0.0f64);
                for (g, &s) in group.iter().enumerate() {
                    let s = s as usize;
                    let mut x = ext[2 * g];
                    for k in ptr[s] as usize..ptr[s + 1] as usize {
                        let u = idx[k] as usize;
                        if u != s && comp[u] == c {
                            x += xi[u] * val[k];
                        }
                    }
                    x /= ext[2 * g + 1];
                    change = change.max((x - xi[s]).abs());
                    largest = largest.max(x);
                    xi[s] = x;
                }
                if change <= 1e-10 * largest {
                    break;
                }
            }
        }
        i = j;
    }
    let mut scored: Vec<(f64, u32)> = Vec::with_capacity(members.len() + targets.len());
    for &s in &members {
        if s as usize != start {
            let v = values.get(s as usize).copied().unwrap_or(0.0);
            scored.push((xi[s as usize] * v.max(0.0), s));
        }
    }
    for &t in &targets {
        let t = t as usize;
        let mut hit = 0.0;
        for k in ptr[t] as usize..ptr[t + 1] as usize {
            let u = idx[k] as usize;
            if comp[u] != u32::MAX {
                hit += xi[u] * val[k];
            }
        }
        scored.push((hit, t as u32));
    }
    scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut order = Vec::with_capacity(scored.len() + 1);
    order.push((start as u32, 1.0));
    order.extend(scored.into_iter().map(|(f, s)| (s, f)));
    Ok(order)
}

/// Checks the path formula on a sub-chain: its probability from the initial state and its
/// value in every state of the sub-chain.
fn check_values(
    sub: &SubChain,
    formula: &PathGoal<'_>,
    options: &CheckOptions,
) -> Result<(Mass, Vec<f64>)> {
    let mut session = CheckSession::for_dtmc(&sub.dtmc, options.clone());
    let r = session.check_str(&sub_property(formula))?;
    let Scalar::Num(value) = r.value else {
        return Err(ExplainError::input("the sub-chain's check gave no number"));
    };
    let (lo, hi) = r.bounds.map(|b| (b.lo, b.hi)).unwrap_or((value, value));
    let values = match r.states {
        augur_check::StateValues::Num(v) => v.values,
        augur_check::StateValues::Bool(_) => Vec::new(),
    };
    Ok((Mass { value, lo, hi }, values))
}

/// The shortest prefix of `order` whose sub-chain exceeds, by bisection between a prefix
/// length `lo` that does not (0: none) and one `hi` that does (the probability only grows
/// with the set).
fn shortest_prefix(
    order: &[u32],
    mut lo: usize,
    mut hi: usize,
    check: &mut dyn FnMut(&[u32]) -> Result<bool>,
) -> Result<usize> {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if check(&order[..mid])? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The heuristic: a small set of states whose sub-chain exceeds the threshold (`exceeds` of
/// the checker's sound lower bound), in two phases.
///
/// 1. *Grow*: the relevant states are ranked by their flow ([`ranking`]: expected visits from
///    `start` × probability of the path formula, from `values`, the path formula's
///    probability in every state of `dtmc` — e.g. the checker's), and prefixes of that order
///    are checked by `augur-check` in batches that double (16, 32, 64, … states) until one
///    exceeds; the shortest prefix that exceeds is then found by bisection.
/// 2. *Prune*: the states of the set are ranked again by their flow *in its own sub-chain*
///    (the sub-chain's values from its check), which drops the states that no longer lead
///    anywhere and puts last those whose paths mostly left the set; the shortest exceeding
///    prefix of that order is found by bisection, for as long as it shrinks (at most
///    [`REFINE_ROUNDS`] rounds).
///
/// The work is a few dozen sub-chain checks and two graph passes, whatever `θ`. `None` when
/// the sub-chain of all relevant states does not exceed (the property holds).
pub fn grow(
    dtmc: &Dtmc,
    transpose: &augur_dtmc::Matrix,
    formula: PathGoal<'_>,
    start: usize,
    values: &[f64],
    exceeds: &dyn Fn(f64) -> bool,
    options: &CheckOptions,
) -> Result<Option<Subsystem>> {
    let order = ranking(dtmc, transpose, &formula, start, values, &options.limits)?;
    if order.is_empty() {
        return Ok(None);
    }
    // The candidates are checked by sound iteration, SCC by SCC (`Method::Topological`)
    // rather than by the default's exact elimination of small cyclic systems (rational
    // arithmetic, far slower on dozens of sub-chains): its lower bound decides just as
    // soundly. The set found is checked once more with the caller's options.
    let fast = match options.method {
        Method::Auto => CheckOptions {
            method: Method::Topological,
            ..options.clone()
        },
        _ => options.clone(),
    };
    let options_for_checks = &fast;
    let checks = std::cell::Cell::new(0usize);
    let mut check = |states: &[u32]| -> Result<bool> {
        checks.set(checks.get() + 1);
        let sub = restrict(dtmc, states, &formula)?;
        Ok(exceeds(probability(&sub, &formula, options_for_checks)?.lo))
    };
    let mut lo = 0;
    let mut size = order.len().min(FIRST_BATCH);
    let hi = loop {
        if check(&order[..size])? {
            break size;
        }
        lo = size;
        if size == order.len() {
            return Ok(None);
        }
        size = size.saturating_mul(2).min(order.len());
    };
    let found = shortest_prefix(&order, lo, hi, &mut check)?;
    let mut best: Vec<u32> = order[..found].to_vec();
    for _ in 0..REFINE_ROUNDS {
        let sub = restrict(dtmc, &best, &formula)?;
        checks.set(checks.get() + 1);
        let (_, sub_values) = check_values(&sub, &formula, options_for_checks)?;
        let (phi, psi) = (sub.dtmc.label(PHI_LABEL), sub.dtmc.label(PSI_LABEL));
        let (Some(phi), Some(psi)) = (phi, psi) else {
            break;
        };
        let sub_formula = PathGoal {
            phi: formula.phi.map(|_| phi),
            psi,
            bound: formula.bound,
        };
        let local = ranking(
            &sub.dtmc,
            &sub.dtmc.transpose(),
            &sub_formula,
            0,
            &sub_values,
            &options.limits,
        )?;
        let again: Vec<u32> = local
            .iter()
            .filter(|&&i| (i as usize) < best.len())
            .map(|&i| best[i as usize])
            .collect();
        // The relevant states of the set alone have its probability; checked to be sure.
        if again.is_empty() || !check(&again)? {
            break;
        }
        let shorter = shortest_prefix(&again, 0, again.len(), &mut check)?;
        if shorter >= best.len() {
            break;
        }
        best = again[..shorter].to_vec();
    }
    let sub = restrict(dtmc, &best, &formula)?;
    let probability = probability(&sub, &formula, options)?;
    Ok(Some(Subsystem {
        transitions: inner_transitions(dtmc, &best),
        states: best,
        probability,
        checks: checks.get() + 1,
    }))
}

/// The relevant states of a small model, as a dense chain: the states reachable from the start
/// through φ-states that can reach ψ (the only ones a subsystem needs), with the probability of
/// the path formula of every subset (a bit mask over them) computed densely in `f64`.
pub(crate) struct SmallChain {
    /// The model's states; index 0 is the start.
    pub states: Vec<u32>,
    /// `p[i][j]`, row-major.
    p: Vec<f64>,
    target: Vec<bool>,
    continues: Vec<bool>,
    bound: Option<u32>,
    clock: Clock,
}

impl SmallChain {
    /// The relevant states of the model from `start`, `None` when ψ is unreachable; an error
    /// when there are more than `max`.
    pub fn new(
        dtmc: &Dtmc,
        transpose: &augur_dtmc::Matrix,
        formula: &PathGoal<'_>,
        start: usize,
        max: usize,
    ) -> Result<Option<SmallChain>> {
        let h = distances_to_target(transpose, formula);
        if h[start].is_infinite() {
            return Ok(None);
        }
        let mut index = std::collections::HashMap::new();
        let mut states = vec![start as u32];
        index.insert(start as u32, 0usize);
        let mut i = 0;
        while i < states.len() {
            let s = states[i] as usize;
            i += 1;
            if !formula.continues(s) {
                continue;
            }
            for (t, p) in dtmc.successors(s) {
                if p > 0.0 && h[t as usize].is_finite() && !index.contains_key(&t) {
                    index.insert(t, states.len());
                    states.push(t);
                    if states.len() > max {
                        return Err(ExplainError::input(format!(
                            "the exact minimal subsystem is searched among at most {max} relevant states (reachable from the start through φ-states and able to reach ψ); this model has more"
                        )));
                    }
                }
            }
        }
        let m = states.len();
        let mut p = vec![0.0; m * m];
        for (a, &s) in states.iter().enumerate() {
            for (t, q) in dtmc.successors(s as usize) {
                if let Some(&b) = index.get(&t) {
                    p[a * m + b] += q;
                }
            }
        }
        Ok(Some(SmallChain {
            target: states
                .iter()
                .map(|&s| formula.psi.contains(s as usize))
                .collect(),
            continues: states
                .iter()
                .map(|&s| formula.continues(s as usize))
                .collect(),
            states,
            p,
            bound: formula.bound,
            clock: Clock::unlimited(),
        }))
    }

    /// The same under `limits`: [`SmallChain::mass`] stops when cancelled or past the time
    /// limit.
    pub fn with_limits(mut self, limits: &Limits) -> SmallChain {
        self.clock = Clock::new(limits);
        self
    }

    /// The number of relevant states.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// The probability of the path formula from the start in the sub-chain of `mask`. A step
    /// bound is iterated until the values stop changing (bit for bit: every later step gives
    /// the same) or the bound is reached, the limits checked every 1,024 steps.
    pub fn mass(&self, mask: u32) -> Result<f64> {
        self.clock.check()?;
        let m = self.len();
        let inside = |i: usize| mask & (1 << i) != 0;
        if !inside(0) {
            return Ok(0.0);
        }
        if self.target[0] {
            return Ok(1.0);
        }
        if let Some(k) = self.bound {
            let mut x: Vec<f64> = (0..m)
                .map(|i| f64::from(u8::from(inside(i) && self.target[i])))
                .collect();
            let mut y = x.clone();
            for step in 0..k {
                if step % 1024 == 1023 {
                    self.clock.check()?;
                }
                for (i, yi) in y.iter_mut().enumerate() {
                    *yi = if !inside(i) {
                        0.0
                    } else if self.target[i] {
                        1.0
                    } else if self.continues[i] {
                        (0..m)
                            .filter(|&j| inside(j))
                            .map(|j| self.p[i * m + j] * x[j])
                            .sum()
                    } else {
                        0.0
                    };
                }
                std::mem::swap(&mut x, &mut y);
                if x == y {
                    // A fixed point: every later step gives the same values.
                    break;
                }
            }
            return Ok(x[0]);
        }
        // Unknowns: continuing states of the set that reach a target of the set within it.
        let mut reach = vec![false; m];
        let mut stack: Vec<usize> = (0..m).filter(|&i| inside(i) && self.target[i]).collect();
        for &i in &stack {
            reach[i] = true;
        }
        while let Some(j) = stack.pop() {
            for (i, r) in reach.iter_mut().enumerate() {
                if !*r && inside(i) && self.continues[i] && self.p[i * m + j] > 0.0 {
                    *r = true;
                    stack.push(i);
                }
            }
        }
        if !reach[0] {
            return Ok(0.0);
        }
        let unknowns: Vec<usize> = (0..m).filter(|&i| reach[i] && !self.target[i]).collect();
        let u = unknowns.len();
        let mut a = DMatrix::<f64>::identity(u, u);
        let mut b = DVector::<f64>::zeros(u);
        for (r, &i) in unknowns.iter().enumerate() {
            for (c, &j) in unknowns.iter().enumerate() {
                a[(r, c)] -= self.p[i * m + j];
            }
            b[r] = (0..m)
                .filter(|&j| inside(j) && self.target[j])
                .map(|j| self.p[i * m + j])
                .sum();
        }
        Ok(match a.lu().solve(&b) {
            Some(x) => x[0].clamp(0.0, 1.0),
            None => 0.0,
        })
    }
}

/// The exact minimum: a smallest set of states (containing the start) whose sub-chain exceeds
/// the threshold, by branch and bound over subsets of the relevant states (see [`SmallChain`]):
/// states are decided in order of the probability of their most probable path, each first
/// included, then excluded; a branch is cut when it cannot be smaller than the best set found,
/// when its included states already exceed (no superset is smaller), or when even all its
/// undecided states added cannot exceed (the probability only grows with the set). Subsets are
/// evaluated densely in `f64` (LU of `I − Q`); the set found is checked again by `augur-check`.
/// `None` when no subset exceeds (the property holds). An error above
/// [`MINIMAL_MAX_STATES`] relevant states, or past `budget` subset evaluations.
pub fn minimal(
    dtmc: &Dtmc,
    transpose: &augur_dtmc::Matrix,
    formula: PathGoal<'_>,
    start: usize,
    exceeds: &dyn Fn(f64) -> bool,
    options: &CheckOptions,
    budget: usize,
) -> Result<Option<Subsystem>> {
    let Some(chain) = SmallChain::new(dtmc, transpose, &formula, start, MINIMAL_MAX_STATES)? else {
        return Ok(None);
    };
    let chain = chain.with_limits(&options.limits);
    let Some((mask, evaluations)) = minimal_mask(&chain, exceeds, budget)? else {
        return Ok(None);
    };
    let states: Vec<u32> = (0..chain.len())
        .filter(|&i| mask & (1 << i) != 0)
        .map(|i| chain.states[i])
        .collect();
    let sub = restrict(dtmc, &states, &formula)?;
    let probability = probability(&sub, &formula, options)?;
    Ok(Some(Subsystem {
        transitions: inner_transitions(dtmc, &states),
        states,
        probability,
        checks: evaluations,
    }))
}

/// The branch and bound of [`minimal`] on the dense chain: the mask of a minimum set and the
/// number of subsets evaluated.
pub(crate) fn minimal_mask(
    chain: &SmallChain,
    exceeds: &dyn Fn(f64) -> bool,
    budget: usize,
) -> Result<Option<(u32, usize)>> {
    let m = chain.len();
    let all: u32 = if m == 32 { u32::MAX } else { (1u32 << m) - 1 };
    if !exceeds(chain.mass(all)?) {
        return Ok(None);
    }
    // Order: by the probability of the most probable path through the state (start first).
    let order = decision_order(chain);
    struct Search<'c> {
        chain: &'c SmallChain,
        exceeds: &'c dyn Fn(f64) -> bool,
        order: Vec<usize>,
        best: Option<(u32, u32)>,
        evaluations: usize,
        budget: usize,
    }
    impl Search<'_> {
        fn eval(&mut self, mask: u32) -> Result<bool> {
            self.evaluations += 1;
            if self.evaluations > self.budget {
                return Err(ExplainError::Budget {
                    what: "the exact minimal subsystem",
                    limit: self.budget,
                    unit: "subset evaluations",
                    hint: String::new(),
                });
            }
            Ok((self.exceeds)(self.chain.mass(mask)?))
        }
        fn go(&mut self, depth: usize, included: u32, undecided: u32) -> Result<()> {
            let size = included.count_ones();
            if self.best.is_some_and(|(_, b)| size >= b) {
                return Ok(());
            }
            if self.eval(included)? {
                self.best = Some((included, size));
                return Ok(());
            }
            if depth == self.order.len() || self.best.is_some_and(|(_, b)| size + 1 >= b) {
                return Ok(());
            }
            if !self.eval(included | undecided)? {
                return Ok(());
            }
            let bit = 1u32 << self.order[depth];
            self.go(depth + 1, included | bit, undecided & !bit)?;
            self.go(depth + 1, included, undecided & !bit)
        }
    }
    let rest: u32 = order[1..].iter().fold(0, |a, &i| a | (1 << i));
    let mut s = Search {
        chain,
        exceeds,
        order: order[1..].to_vec(),
        best: None,
        evaluations: 0,
        budget,
    };
    s.go(0, 1, rest)?;
    Ok(s.best.map(|(mask, _)| (mask, s.evaluations)))
}

/// The relevant states, the start first, then by decreasing probability of the most probable
/// path from the start through them to ψ (dense Dijkstra both ways).
fn decision_order(chain: &SmallChain) -> Vec<usize> {
    let m = chain.len();
    let dijkstra = |forward: bool| -> Vec<f64> {
        let mut d = vec![f64::INFINITY; m];
        let mut done = vec![false; m];
        if forward {
            d[0] = 0.0;
        } else {
            for (di, &t) in d.iter_mut().zip(&chain.target) {
                if t {
                    *di = 0.0;
                }
            }
        }
        for _ in 0..m {
            let Some(v) = (0..m)
                .filter(|&i| !done[i] && d[i].is_finite())
                .min_by(|&a, &b| d[a].total_cmp(&d[b]))
            else {
                break;
            };
            done[v] = true;
            for u in 0..m {
                let (from, to) = if forward { (v, u) } else { (u, v) };
                let p = chain.p[from * m + to];
                if p > 0.0 && chain.continues[from] {
                    let nd = d[v] - p.ln();
                    if nd < d[u] {
                        d[u] = nd;
                    }
                }
            }
        }
        d
    };
    let (f, b) = (dijkstra(true), dijkstra(false));
    let mut order: Vec<usize> = (1..m).collect();
    order.sort_by(|&x, &y| (f[x] + b[x]).total_cmp(&(f[y] + b[y])).then(x.cmp(&y)));
    order.insert(0, 0);
    order
}
