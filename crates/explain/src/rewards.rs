//! Explaining an expected reward `R{"r"}=? [ F ψ ]`: the states that contribute most of it and
//! the paths that carry most of it.
//!
//! The expected reward accumulated until ψ is reached is `Σ_s visits(s) · r(s)`, where
//! `visits(s)` is the expected number of visits to `s` before ψ (from the start) and `r(s)` the
//! expected one-step reward of `s` (its state reward plus `Σ_t P(s,t)·r(s,t)`, as the checker
//! counts it). [`contributions`] computes the visits by pushing the start's distribution
//! through the non-ψ states step by step (`x_{i+1} = x_i·Q`, `visits = Σ_i x_i`) until the mass
//! still on its way is below a tolerance: a state's contribution is `visits(s)·r(s)`, and the
//! sum of all contributions is the expected reward up to the remaining mass (reported).
//!
//! Mass that enters a state from which ψ cannot be reached is *missed*: it is counted apart
//! (where it left, [`Contributions::missed_into`]) and not pushed further, so the propagation
//! ends (the mass still on its way decays geometrically) and says why an expected reward is
//! infinite: ψ is missed with positive probability (`missed > 0`, by the graph, exactly), or,
//! with ψ reached almost surely, the rewards overflow `f64`.
//!
//! Each path to ψ carries `P(path) · R(path)` of the expected reward, `R(path)` being the
//! rewards earned along it (state rewards of the states it leaves and the rewards of the
//! transitions it takes). That weight is not additive along a path, so no shortest-path
//! search orders paths by it: [`reward_paths`] ranks the most probable paths (a fixed number
//! of them, the most probable first) by their weight, and says how many it ranked.

use crate::error::Result;
use crate::stop::Clock;
use augur_check::Limits;
use augur_dtmc::{Dtmc, RewardStructure, StateSet};

/// One state's share of an expected reward.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Contribution {
    /// The state.
    pub state: u32,
    /// Its expected one-step reward.
    pub reward: f64,
    /// Its expected number of visits before ψ.
    pub visits: f64,
    /// `reward · visits`.
    pub contribution: f64,
}

/// The contributions of every state with a non-zero one (largest first), the mass not yet
/// absorbed by ψ when the propagation stopped, and the number of steps propagated.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Contributions {
    /// The states, largest contribution first.
    pub states: Vec<Contribution>,
    /// Their sum (the expected reward, up to `remaining`).
    pub total: f64,
    /// The probability mass still outside ψ when the propagation stopped.
    pub remaining: f64,
    /// Steps propagated.
    pub steps: usize,
    /// The probability of never reaching ψ: of entering a state from which ψ cannot be
    /// reached (found by the propagation, up to `remaining`).
    pub missed: f64,
    /// Whether ψ is missed with positive probability, by the graph (exact): a state from which
    /// ψ cannot be reached is reachable from the start through non-ψ states.
    pub misses: bool,
    /// The states from which ψ cannot be reached that the mass entered, with how much of it
    /// (largest first).
    pub missed_into: Vec<(u32, f64)>,
}

/// When [`contributions`] stops pushing the mass: when less than `tolerance` is still on its
/// way, or after `max_steps` steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Propagation {
    /// The mass still on its way below which it stops.
    pub tolerance: f64,
    /// The most steps.
    pub max_steps: usize,
}

impl Default for Propagation {
    /// 1e-15 of the mass, at most a million steps.
    fn default() -> Self {
        Propagation {
            tolerance: 1e-15,
            max_steps: 1_000_000,
        }
    }
}

/// The expected visits before ψ from `start` and each state's contribution `visits · r`
/// (see the module documentation); stops as `until` says. `transpose` is the transpose of `dtmc.matrix` (to find the
/// states that can reach ψ). The propagation honours `limits` (time and cancellation, once
/// per step).
pub fn contributions(
    dtmc: &Dtmc,
    transpose: &augur_dtmc::Matrix,
    rewards: &RewardStructure,
    psi: &StateSet,
    start: usize,
    until: Propagation,
    limits: &Limits,
) -> Result<Contributions> {
    let Propagation {
        tolerance,
        max_steps,
    } = until;
    let n = dtmc.num_states();
    let clock = Clock::new(limits);
    let can_reach = can_reach(transpose, psi);
    let r = dtmc.expected_one_step_rewards(rewards);
    let mut visits = vec![0.0; n];
    let mut x = vec![0.0; n];
    let mut y = vec![0.0; n];
    let mut lost: std::collections::HashMap<u32, f64> = std::collections::HashMap::new();
    // The states with mass, to keep each step proportional to the mass's support.
    let mut active: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    let mut in_next = StateSet::with_capacity(n);
    let mut remaining = 0.0;
    if !psi.contains(start) {
        if can_reach.contains(start) {
            x[start] = 1.0;
            active.push(start as u32);
            remaining = 1.0;
        } else {
            lost.insert(start as u32, 1.0);
        }
    }
    let mut steps = 0;
    while remaining > tolerance && steps < max_steps {
        clock.check()?;
        steps += 1;
        for &s in &active {
            let s = s as usize;
            let m = x[s];
            visits[s] += m;
            for (t, p) in dtmc.successors(s) {
                let t = t as usize;
                if psi.contains(t) {
                    continue;
                }
                if !can_reach.contains(t) {
                    *lost.entry(t as u32).or_insert(0.0) += m * p;
                    continue;
                }
                y[t] += m * p;
                if !in_next.contains(t) {
                    in_next.insert(t);
                    next.push(t as u32);
                }
            }
            x[s] = 0.0;
        }
        remaining = 0.0;
        for &t in &next {
            let t = t as usize;
            x[t] = y[t];
            y[t] = 0.0;
            remaining += x[t];
            in_next.set(t, false);
        }
        std::mem::swap(&mut active, &mut next);
        next.clear();
    }
    let mut states: Vec<Contribution> = (0..n)
        .filter(|&s| visits[s] > 0.0 && r[s] != 0.0)
        .map(|s| Contribution {
            state: s as u32,
            reward: r[s],
            visits: visits[s],
            contribution: visits[s] * r[s],
        })
        .collect();
    let total = states.iter().map(|c| c.contribution).sum();
    states.sort_by(|a, b| {
        b.contribution
            .total_cmp(&a.contribution)
            .then(a.state.cmp(&b.state))
    });
    let mut missed_into: Vec<(u32, f64)> = lost.into_iter().collect();
    missed_into.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(Contributions {
        states,
        total,
        remaining,
        steps,
        missed: missed_into.iter().map(|&(_, m)| m).sum(),
        misses: misses(dtmc, psi, &can_reach, start),
        missed_into,
    })
}

/// The states that can reach ψ (ψ included): backward from ψ over `transpose`.
fn can_reach(transpose: &augur_dtmc::Matrix, psi: &StateSet) -> StateSet {
    let n = transpose.rows();
    let mut reach = StateSet::with_capacity(n);
    let mut stack: Vec<usize> = psi.ones().filter(|&s| s < n).collect();
    for &s in &stack {
        reach.insert(s);
    }
    let ptr = transpose.indptr();
    let ptr = ptr.raw_storage();
    let (idx, data) = (transpose.indices(), transpose.data());
    while let Some(v) = stack.pop() {
        for k in ptr[v] as usize..ptr[v + 1] as usize {
            let u = idx[k] as usize;
            if data[k] > 0.0 && !reach.contains(u) {
                reach.insert(u);
                stack.push(u);
            }
        }
    }
    reach
}

/// Whether a state that cannot reach ψ is reachable from `start` through non-ψ states (then
/// ψ is missed with positive probability).
fn misses(dtmc: &Dtmc, psi: &StateSet, can_reach: &StateSet, start: usize) -> bool {
    if psi.contains(start) {
        return false;
    }
    let mut seen = StateSet::with_capacity(dtmc.num_states());
    let mut stack = vec![start];
    seen.insert(start);
    while let Some(s) = stack.pop() {
        if !can_reach.contains(s) {
            return true;
        }
        for (t, p) in dtmc.successors(s) {
            let t = t as usize;
            if p > 0.0 && !psi.contains(t) && !seen.contains(t) {
                seen.insert(t);
                stack.push(t);
            }
        }
    }
    false
}

/// The reward earned along a path (it stops at its last state, a ψ-state, which earns
/// nothing): the state rewards of the states it leaves and the rewards of its transitions.
pub fn path_reward(dtmc: &Dtmc, rewards: &RewardStructure, states: &[u32]) -> f64 {
    states
        .windows(2)
        .map(|w| step_reward(dtmc, rewards, w[0], w[1]))
        .sum()
}

/// The reward earned by one step `s → t`: the state reward of `s` and the reward of the
/// transition.
pub fn step_reward(dtmc: &Dtmc, rewards: &RewardStructure, s: u32, t: u32) -> f64 {
    let mut total = 0.0;
    if let Some(v) = &rewards.state {
        total += v.get(s as usize).copied().unwrap_or(0.0);
    }
    if let (Some(tr), Some(k)) = (&rewards.transition, dtmc.transition_index(s, t)) {
        total += tr.get(k).copied().unwrap_or(0.0);
    }
    total
}
