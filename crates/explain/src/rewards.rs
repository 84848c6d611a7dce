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
//! Each path to ψ carries `P(path) · R(path)` of the expected reward, `R(path)` being the
//! rewards earned along it (state rewards of the states it leaves and the rewards of the
//! transitions it takes). That weight is not additive along a path, so no shortest-path
//! search orders paths by it: [`reward_paths`] ranks the most probable paths (a fixed number
//! of them, the most probable first) by their weight, and says how many it ranked.

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
}

/// The expected visits before ψ from `start` and each state's contribution `visits · r`
/// (see the module documentation); stops when the mass outside ψ is below `tolerance` or after
/// `max_steps` steps.
pub fn contributions(
    dtmc: &Dtmc,
    rewards: &RewardStructure,
    psi: &StateSet,
    start: usize,
    tolerance: f64,
    max_steps: usize,
) -> Contributions {
    let n = dtmc.num_states();
    let r = dtmc.expected_one_step_rewards(rewards);
    let mut visits = vec![0.0; n];
    let mut x = vec![0.0; n];
    let mut y = vec![0.0; n];
    // The states with mass, to keep each step proportional to the mass's support.
    let mut active: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    let mut in_next = StateSet::with_capacity(n);
    let mut remaining = 0.0;
    if !psi.contains(start) {
        x[start] = 1.0;
        active.push(start as u32);
        remaining = 1.0;
    }
    let mut steps = 0;
    while remaining > tolerance && steps < max_steps {
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
    Contributions {
        states,
        total,
        remaining,
        steps,
    }
}

/// The reward earned along a path (it stops at its last state, a ψ-state, which earns
/// nothing): the state rewards of the states it leaves and the rewards of its transitions.
pub fn path_reward(dtmc: &Dtmc, rewards: &RewardStructure, states: &[u32]) -> f64 {
    let mut total = 0.0;
    for w in states.windows(2) {
        let (s, t) = (w[0] as usize, w[1]);
        if let Some(v) = &rewards.state {
            total += v.get(s).copied().unwrap_or(0.0);
        }
        if let (Some(tr), Some(k)) = (&rewards.transition, dtmc.transition_index(w[0], t)) {
            total += tr.get(k).copied().unwrap_or(0.0);
        }
    }
    total
}
