//! Exact robust checking of small interval DTMCs (`--method exact`): `Pmin`/`Pmax` of `φ U ψ`
//! and `Rmin`/`Rmax` of reaching a target ([`reach_rewards`]) by policy (strategy) iteration
//! over nature's choices, step-bounded forms by exact robust sweeps, in rational arithmetic.
//!
//! * The bounds are rationals: a PRISM model built exactly carries them
//!   ([`augur_dtmc::ExactIntervals`]); otherwise each bound is the decimal its double prints as
//!   (an explicit file's `0.3` is 3/10). They are checked (`0 ≤ lo ≤ hi ≤ 1`, `Σlo ≤ 1 ≤ Σhi`
//!   exactly) and tightened (`lo ≥ 1 − Σ_{others} hi`, `hi ≤ 1 − Σ_{others} lo`).
//! * Graph precomputation in the same rationals: `Pmax = 0` where ψ cannot be reached through
//!   φ-states over transitions with (tight) `hi > 0`; `Pmin = 0` on the greatest set of
//!   non-ψ states in which nature can keep all the mass (transitions leaving it with `lo = 0`,
//!   those inside with `Σhi ≥ 1`), the ¬φ ∧ ¬ψ states included. The other non-ψ states are
//!   the unknowns.
//! * A policy picks one distribution per unknown state (a vertex of the row's polytope: the
//!   greedy resolution of an order of the successors). Its values solve a linear system,
//!   exactly ([`crate::exact`]). Improvement: per state, the greedy resolution for the
//!   successors sorted by the current exact values (the exact optimum of the row's linear
//!   problem), taken only when it is *strictly* better than the current distribution.
//!   Iteration stops when no state improves; then every unknown state satisfies the Bellman
//!   equation `x(s) = opt_P Σ P(t)·x(t)` exactly (the greedy value is the optimum and is not
//!   strictly better than `x(s)`, which is the value of a feasible distribution).
//! * Why this is the right fixpoint. `Pmin`: under any policy no set of unknown states is
//!   closed (it would be in the `Pmin = 0` set), so every policy's system is non-singular and
//!   the Bellman equation has one solution on the unknowns. `Pmax`: the first policy is
//!   *proper* (from every unknown state it reaches ψ or the `Pmax = 0` set with probability
//!   1): the float solver's order when that is proper, otherwise each state sends positive
//!   mass to a successor nearer to ψ. A strict improvement keeps a policy proper (on a closed
//!   set of the new policy a recurrent class would have `πx ≤ πPx = πx`, so no state in it
//!   changed, and it was closed under the old policy). The final `x` is a policy's value, so
//!   `x ≤ Pmax`, and a fixpoint of the Bellman operator, so `x ≥ Pmax` (the least fixpoint):
//!   `x = Pmax`. End components need no deflation: an improper policy never arises.
//! * Cost: one exact elimination per iteration (a few iterations from the float solver's
//!   order), each within the elimination budget; models above [`MAX_EXACT_ROBUST_STATES`]
//!   states are refused (the default method's sound robust iteration answers them).

use crate::exact::{self, ExactFailure, ExactSystem};
use crate::numeric::{Result, SolveOptions, SolverError};
use augur_dtmc::{Dtmc, StateSet};
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::collections::VecDeque;

/// The largest interval model (states) solved by `--method exact`.
pub const MAX_EXACT_ROBUST_STATES: usize = 2_000;

/// Work budget of one exact elimination (sum of operand bit sizes over all multiply-adds).
const ELIMINATION_BUDGET: u64 = 200_000_000;

/// Step-bounded sweeps: at most this many row evaluations (`k` × transitions).
pub const MAX_EXACT_ROBUST_STEPS_WORK: u64 = 2_000_000;

/// An interval DTMC's rows with exact, tight bounds.
#[derive(Clone, Debug)]
pub struct ExactRows {
    ptr: Vec<u32>,
    idx: Vec<u32>,
    lo: Vec<BigRational>,
    hi: Vec<BigRational>,
}

/// The exact values of a robust problem and how many policies were evaluated.
#[derive(Clone, Debug)]
pub struct ExactRobust {
    /// The value of every state.
    pub values: Vec<BigRational>,
    /// Policies evaluated (exact eliminations).
    pub iterations: u64,
}

fn unsupported(msg: impl Into<String>) -> SolverError {
    SolverError::Unsupported(msg.into())
}

impl ExactRows {
    /// The exact lower and upper bounds of every stored transition (tightened).
    pub fn bounds(&self) -> (&[BigRational], &[BigRational]) {
        (&self.lo, &self.hi)
    }

    /// The exact rows of an interval model: its exact bounds when it carries them, otherwise
    /// the decimals its doubles print as. Refuses a model above [`MAX_EXACT_ROBUST_STATES`]
    /// states and a row whose exact bounds hold no distribution.
    pub fn of(dtmc: &Dtmc) -> Result<ExactRows> {
        let iv = dtmc
            .intervals
            .as_deref()
            .ok_or_else(|| unsupported("not an interval model"))?;
        let n = dtmc.num_states();
        if n > MAX_EXACT_ROBUST_STATES {
            return Err(unsupported(format!(
                "exact robust checking is limited to interval models of at most \
                 {MAX_EXACT_ROBUST_STATES} states (this one has {n}); the default method \
                 (`--method auto`: robust interval iteration with sound bounds) answers it"
            )));
        }
        let (mut lo, mut hi): (Vec<BigRational>, Vec<BigRational>) = match iv.exact.as_deref() {
            Some(e) => (e.lo.clone(), e.hi.clone()),
            None => {
                // The decimals as read (before the float tightening, which rounds).
                let dec = |x: &f64| exact::from_decimal(*x).unwrap_or_else(BigRational::zero);
                let (l, h) = match iv.written.as_deref() {
                    Some((l, h)) => (l, h),
                    None => (&iv.lo, &iv.hi),
                };
                (l.iter().map(dec).collect(), h.iter().map(dec).collect())
            }
        };
        let ptr = dtmc.row_ptr().to_vec();
        let idx = dtmc.matrix.indices().to_vec();
        let (zero, one) = (BigRational::zero(), BigRational::one());
        for s in 0..n {
            let r = ptr[s] as usize..ptr[s + 1] as usize;
            let mut sum_lo = BigRational::zero();
            let mut sum_hi = BigRational::zero();
            for e in r.clone() {
                if lo[e] < zero || hi[e] > one || lo[e] > hi[e] {
                    return Err(unsupported(format!(
                        "the exact interval [{}, {}] of transition {s} -> {} is not within [0, 1] \
                         with lo <= hi",
                        lo[e], hi[e], idx[e]
                    )));
                }
                sum_lo += &lo[e];
                sum_hi += &hi[e];
            }
            if sum_lo > one || sum_hi < one {
                return Err(unsupported(format!(
                    "the exact intervals of state {s} cannot hold a distribution (lower bounds \
                     sum to {sum_lo}, upper bounds to {sum_hi}); the float check tolerates \
                     1e-9, exact mode does not"
                )));
            }
            // Tighten: every bound attained by some distribution of the row.
            for e in r {
                let l = (&one - (&sum_hi - &hi[e])).max(lo[e].clone());
                let h = (&one - (&sum_lo - &lo[e])).min(hi[e].clone());
                lo[e] = l;
                hi[e] = h;
            }
        }
        Ok(ExactRows { ptr, idx, lo, hi })
    }

    /// The rows of a product of this model (an LTL product, see `augur_ltl::PrefixProduct`):
    /// CSR pattern `ptr`/`idx` whose every entry copies entry `source[e]` of this model's rows
    /// with its exact, tight interval, or is a probability-1 self-loop (`source[e] ==
    /// u32::MAX`), or a free choice `[0, 1]` (`source[e] == u32::MAX - 1`: an automaton's
    /// guess). Refuses a product above [`MAX_EXACT_ROBUST_STATES`] states.
    pub fn product(&self, ptr: Vec<u32>, idx: Vec<u32>, source: &[u32]) -> Result<ExactRows> {
        const CHOICE: u32 = u32::MAX - 1;
        let n = ptr.len().saturating_sub(1);
        if n > MAX_EXACT_ROBUST_STATES {
            return Err(unsupported(format!(
                "exact robust checking is limited to {MAX_EXACT_ROBUST_STATES} states, and the \
                 product of the model with the LTL formula's automaton has {n}; the default \
                 method (`--method auto`: robust interval iteration with sound bounds) answers it"
            )));
        }
        let lo = source
            .iter()
            .map(|&e| match e {
                u32::MAX => BigRational::one(),
                CHOICE => BigRational::zero(),
                e => self.lo[e as usize].clone(),
            })
            .collect();
        let hi = source
            .iter()
            .map(|&e| match e {
                u32::MAX | CHOICE => BigRational::one(),
                e => self.hi[e as usize].clone(),
            })
            .collect();
        Ok(ExactRows { ptr, idx, lo, hi })
    }

    /// Number of states.
    pub fn n(&self) -> usize {
        self.ptr.len() - 1
    }

    fn range(&self, s: usize) -> std::ops::Range<usize> {
        self.ptr[s] as usize..self.ptr[s + 1] as usize
    }

    /// Whether nature can keep all of row `s`'s mass inside `set`.
    fn can_stay(&self, s: usize, set: &StateSet) -> bool {
        let mut hi_in = BigRational::zero();
        for e in self.range(s) {
            if set.contains(self.idx[e] as usize) {
                hi_in += &self.hi[e];
            } else if !self.lo[e].is_zero() {
                return false;
            }
        }
        hi_in >= BigRational::one()
    }

    /// The greedy resolution of row `s` for the successors in `order` (local indices, best
    /// first): every successor gets its `lo`, the rest goes in order up to `hi`. Writes the
    /// distribution into `dist` (aligned with the row) and returns `Σ dist·(add + x)` (`add`:
    /// a value per stored transition, e.g. transition rewards).
    fn resolve(
        &self,
        s: usize,
        order: &[u32],
        x: &[BigRational],
        add: Option<&[BigRational]>,
        dist: &mut [BigRational],
    ) -> BigRational {
        let r = self.range(s);
        let mut rest = BigRational::one();
        for (j, e) in r.clone().enumerate() {
            dist[j] = self.lo[e].clone();
            rest -= &self.lo[e];
        }
        for &j in order {
            if !rest.is_positive_q() {
                break;
            }
            let e = r.start + j as usize;
            let add = (&self.hi[e] - &self.lo[e]).min(rest.clone());
            rest -= &add;
            dist[j as usize] += add;
        }
        let mut v = BigRational::zero();
        for (j, e) in r.enumerate() {
            if !dist[j].is_zero() {
                v += &dist[j] * &x[self.idx[e] as usize];
                if let Some(a) = add {
                    v += &dist[j] * &a[e];
                }
            }
        }
        v
    }

    /// The order of row `s`'s successors by `key` of their stored transition (best first:
    /// descending when `maximise`), ties by position.
    fn order_entries<K: PartialOrd>(
        &self,
        s: usize,
        key: impl Fn(usize) -> K,
        maximise: bool,
    ) -> Vec<u32> {
        let r = self.range(s);
        let mut order: Vec<u32> = (0..r.len() as u32).collect();
        order.sort_by(|&a, &b| {
            let (ka, kb) = (key(r.start + a as usize), key(r.start + b as usize));
            let c = ka.partial_cmp(&kb).unwrap_or(std::cmp::Ordering::Equal);
            let c = if maximise { c.reverse() } else { c };
            c.then(a.cmp(&b))
        });
        order
    }

    /// The order of row `s`'s successors by `key` of the successor state.
    fn order_by<K: PartialOrd>(
        &self,
        s: usize,
        key: impl Fn(usize) -> K,
        maximise: bool,
    ) -> Vec<u32> {
        self.order_entries(s, |e| key(self.idx[e] as usize), maximise)
    }

    /// The optimal one-step value `opt_P Σ P·(add + x)` of row `s` (greedy for the exact
    /// order of `add + x`).
    fn best(
        &self,
        s: usize,
        x: &[BigRational],
        add: Option<&[BigRational]>,
        maximise: bool,
        dist: &mut Vec<BigRational>,
    ) -> BigRational {
        dist.clear();
        dist.resize(self.range(s).len(), BigRational::zero());
        let order = match add {
            None => self.order_by(s, |t| x[t].clone(), maximise),
            Some(a) => self.order_entries(s, |e| &a[e] + &x[self.idx[e] as usize], maximise),
        };
        self.resolve(s, &order, x, add, dist)
    }

    /// [`ExactRows::best`] for a minimum where the successors in `avoid` are worth ∞ (their
    /// stored values are placeholders): they come last, so they get only their `lo`.
    fn best_avoiding(
        &self,
        s: usize,
        x: &[BigRational],
        add: Option<&[BigRational]>,
        avoid: &StateSet,
        dist: &mut Vec<BigRational>,
    ) -> BigRational {
        dist.clear();
        dist.resize(self.range(s).len(), BigRational::zero());
        let order = self.order_entries(
            s,
            |e| {
                let t = self.idx[e] as usize;
                let v = add.map_or_else(|| x[t].clone(), |a| &a[e] + &x[t]);
                (avoid.contains(t), v)
            },
            false,
        );
        self.resolve(s, &order, x, add, dist)
    }

    /// Predecessor lists over the transitions with (tight) `hi > 0`.
    fn predecessors(&self) -> Vec<Vec<u32>> {
        let n = self.n();
        let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            for e in self.range(s) {
                if self.hi[e].is_positive_q() {
                    pred[self.idx[e] as usize].push(s as u32);
                }
            }
        }
        pred
    }

    /// The states that can reach `target` through states of `through` over transitions with
    /// `hi > 0` (`target` included).
    fn backward(&self, target: &StateSet, through: &StateSet) -> StateSet {
        let pred = self.predecessors();
        let mut reach = target.clone();
        let mut queue: VecDeque<usize> = target.ones().collect();
        while let Some(t) = queue.pop_front() {
            for &s in &pred[t] {
                let s = s as usize;
                if through.contains(s) && !reach.contains(s) {
                    reach.insert(s);
                    queue.push_back(s);
                }
            }
        }
        reach
    }

    /// The states where `Pmax` of `φ U ψ` is 1: `νX. μY. ψ ∪ {s ∈ φ ∩ X: nature can keep s's
    /// mass in X and reach Y}`.
    fn prob1_max(&self, phi: &StateSet, psi: &StateSet) -> StateSet {
        let n = self.n();
        let mut x = StateSet::with_capacity(n);
        x.insert_range(..);
        loop {
            let mut through = StateSet::with_capacity(n);
            for s in x.ones() {
                if phi.contains(s) && !psi.contains(s) && self.can_stay(s, &x) {
                    through.insert(s);
                }
            }
            let mut target = psi.clone();
            target.intersect_with(&x);
            let y = self.backward(&target, &through);
            if y == x {
                return x;
            }
            x = y;
        }
    }

    /// The states where `Pmin`/`Pmax` of `φ U ψ` is 0 (see the module documentation).
    pub fn prob0(&self, phi: &StateSet, psi: &StateSet, maximise: bool) -> StateSet {
        let n = self.n();
        let mut zero = StateSet::with_capacity(n);
        if maximise {
            // Backward reachability of ψ through φ-states over edges with hi > 0.
            let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
            for s in 0..n {
                for e in self.range(s) {
                    if self.hi[e].is_positive_q() {
                        pred[self.idx[e] as usize].push(s as u32);
                    }
                }
            }
            let mut reach = psi.clone();
            let mut queue: VecDeque<usize> = psi.ones().collect();
            while let Some(t) = queue.pop_front() {
                for &s in &pred[t] {
                    let s = s as usize;
                    if phi.contains(s) && !reach.contains(s) {
                        reach.insert(s);
                        queue.push_back(s);
                    }
                }
            }
            for s in 0..n {
                if !reach.contains(s) {
                    zero.insert(s);
                }
            }
        } else {
            for s in 0..n {
                if !psi.contains(s) {
                    zero.insert(s);
                }
            }
            loop {
                let mut changed = false;
                for s in 0..n {
                    if zero.contains(s) && phi.contains(s) && !self.can_stay(s, &zero) {
                        zero.set(s, false);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        zero
    }
}

trait PositiveQ {
    fn is_positive_q(&self) -> bool;
}

impl PositiveQ for BigRational {
    fn is_positive_q(&self) -> bool {
        self > &BigRational::zero()
    }
}

/// `Pmin` (`maximise = false`) or `Pmax` of `φ U ψ` in every state, exactly. `hint`: values
/// (e.g. the float robust solver's) whose order of successors gives the first policy.
pub fn until(
    rows: &ExactRows,
    phi: &StateSet,
    psi: &StateSet,
    maximise: bool,
    hint: Option<&[f64]>,
    opts: &SolveOptions,
) -> Result<ExactRobust> {
    let n = rows.n();
    let zero_set = rows.prob0(phi, psi, maximise);
    let mut x: Vec<BigRational> = (0..n)
        .map(|s| {
            if psi.contains(s) {
                BigRational::one()
            } else {
                BigRational::zero()
            }
        })
        .collect();
    let unknown: Vec<usize> = (0..n)
        .filter(|&s| !psi.contains(s) && !zero_set.contains(s))
        .collect();
    if unknown.is_empty() {
        return Ok(ExactRobust {
            values: x,
            iterations: 0,
        });
    }
    let mut slot = vec![u32::MAX; n];
    for (i, &s) in unknown.iter().enumerate() {
        slot[s] = i as u32;
    }
    // The policy: one distribution per stored transition of the unknown states.
    let mut policy: Vec<BigRational> = vec![BigRational::zero(); rows.idx.len()];
    let mut dist = Vec::new();
    for &s in &unknown {
        let r = rows.range(s);
        dist.clear();
        dist.resize(r.len(), BigRational::zero());
        let order = match hint {
            Some(h) => rows.order_by(s, |t| h[t], maximise),
            None => (0..r.len() as u32).collect(),
        };
        rows.resolve(s, &order, &x, None, &mut dist);
        policy[r].clone_from_slice(&dist);
    }
    if maximise && !proper(rows, &policy, &unknown, &slot) {
        // Each state sends mass to a successor nearer to ψ first (breadth-first distance over
        // edges with hi > 0; every unknown state has Pmax > 0, so a distance).
        let dist_to = distances(rows, psi, &unknown, &slot);
        for &s in &unknown {
            let r = rows.range(s);
            dist.clear();
            dist.resize(r.len(), BigRational::zero());
            let order = rows.order_by(s, |t| std::cmp::Reverse(dist_to[t]), true);
            rows.resolve(s, &order, &x, None, &mut dist);
            policy[r].clone_from_slice(&dist);
        }
        debug_assert!(proper(rows, &policy, &unknown, &slot));
    }
    let iterations = improve_policies(
        rows,
        &unknown,
        &slot,
        &mut x,
        policy,
        &Rewards::default(),
        maximise,
        None,
        opts,
    )?;
    Ok(ExactRobust {
        values: x,
        iterations,
    })
}

/// Rewards of a policy-iteration problem: a state reward and a transition reward (per stored
/// transition), both optional (zero).
#[derive(Clone, Copy, Debug, Default)]
struct Rewards<'r> {
    state: Option<&'r [BigRational]>,
    trans: Option<&'r [BigRational]>,
}

/// Policy iteration from `policy` (one distribution per stored transition of the `unknown`
/// states; `slot` maps a state to its unknown index or `u32::MAX`): evaluate
/// `x(s) = state(s) + Σ P(e)·(trans(e) + x(t))` on the unknowns exactly (`x` of the other
/// states fixed), then switch every state whose greedy resolution for the current values is
/// *strictly* better; stop when none is. Returns the policies evaluated. The caller makes the
/// first policy proper (every unknown state leaves the unknowns with probability 1); strict
/// improvement keeps it so (see the module documentation).
#[allow(clippy::too_many_arguments)]
fn improve_policies(
    rows: &ExactRows,
    unknown: &[usize],
    slot: &[u32],
    x: &mut [BigRational],
    mut policy: Vec<BigRational>,
    rewards: &Rewards<'_>,
    maximise: bool,
    avoid: Option<&StateSet>,
    opts: &SolveOptions,
) -> Result<u64> {
    let mut dist = Vec::new();
    let mut iterations = 0u64;
    loop {
        opts.interrupt.check(iterations)?;
        iterations += 1;
        // Evaluate the policy: x = P·(trans + x) + state on the unknowns.
        let mut sys = ExactSystem {
            rows: Vec::with_capacity(unknown.len()),
            diag: Vec::with_capacity(unknown.len()),
            b: Vec::with_capacity(unknown.len()),
        };
        for &s in unknown {
            let (mut row, mut diag) = (Vec::new(), BigRational::zero());
            let mut b = rewards
                .state
                .map_or_else(BigRational::zero, |r| r[s].clone());
            for e in rows.range(s) {
                let p = &policy[e];
                if p.is_zero() {
                    continue;
                }
                if let Some(tr) = rewards.trans {
                    if !tr[e].is_zero() {
                        b += p * &tr[e];
                    }
                }
                let t = rows.idx[e] as usize;
                if t == s {
                    diag += p;
                } else if slot[t] != u32::MAX {
                    row.push((slot[t], p.clone()));
                } else if !x[t].is_zero() {
                    b += p * &x[t];
                }
            }
            sys.rows.push(row);
            sys.diag.push(diag);
            sys.b.push(b);
        }
        let sol =
            match exact::solve(sys, Some(ELIMINATION_BUDGET), &opts.interrupt) {
                Ok(v) => v,
                Err(ExactFailure::Interrupted(e)) => return Err(e),
                Err(ExactFailure::Budget) => return Err(unsupported(
                    "exact robust checking exceeded its elimination budget; the default method \
                     (`--method auto`: robust interval iteration with sound bounds) answers it",
                )),
                Err(ExactFailure::Singular) => {
                    return Err(unsupported(
                        "internal error: a policy of the exact robust solver has a singular system",
                    ))
                }
            };
        for (&s, q) in unknown.iter().zip(sol) {
            x[s] = q;
        }
        // Improve: strictly better rows only.
        let mut changed = false;
        for &s in unknown {
            let mut v = match avoid {
                Some(a) => rows.best_avoiding(s, x, rewards.trans, a, &mut dist),
                None => rows.best(s, x, rewards.trans, maximise, &mut dist),
            };
            if let Some(r) = rewards.state {
                v += &r[s];
            }
            let better = if maximise { v > x[s] } else { v < x[s] };
            if better {
                policy[rows.range(s)].clone_from_slice(&dist);
                changed = true;
            }
        }
        if !changed {
            return Ok(iterations);
        }
    }
}

/// `Rmin` (`maximise = false`) or `Rmax` of `F target` in every state, exactly: `None` where
/// it is infinite, i.e. where nature can miss the target with positive probability (`Pmin < 1`
/// for `Rmax`, `Pmax < 1` for `Rmin`: the float path's convention and PRISM's). `state`: the
/// state rewards; `trans`: the transition rewards, one per stored transition (collected with
/// the mass nature gives the transition), all ≥ 0. `hint`: values (e.g. the float robust
/// solver's) whose order gives the first policy.
///
/// Policy iteration as for [`until`], on the finite states outside the target. `Rmax`: the
/// finite states are those where every resolution reaches the target almost surely, and
/// every transition a resolution can take stays among them, so every policy is proper. `Rmin`:
/// the first policy is proper (the hint's when it is, otherwise each state sends mass to a
/// successor nearer to the target first) and keeps all mass among the finite states; strict
/// improvement keeps it proper (a closed set of the new policy without the target would have
/// zero reward and values equal to their one-step values, so no state in it changed). At the
/// end `x` is a proper policy's value and a fixpoint of the Bellman operator; any finite
/// fixpoint is at most every proper policy's value (unroll it along the policy) and at least
/// (for `Rmax`) every policy's, so `x` is the optimum over proper policies, which is `Rmin`
/// (an improper policy is worth ∞) and `Rmax`. Zero-reward end components, where plain value
/// iteration from 0 stalls at 0, need nothing special.
pub fn reach_rewards(
    rows: &ExactRows,
    target: &StateSet,
    state: &[BigRational],
    trans: Option<&[BigRational]>,
    maximise: bool,
    hint: Option<&[f64]>,
    opts: &SolveOptions,
) -> Result<ExactRobustRewards> {
    let n = rows.n();
    let mut all = StateSet::with_capacity(n);
    all.insert_range(..);
    // Finite where the target is reached almost surely: under every resolution (max) or
    // under some (min).
    let finite = if maximise {
        let zero = rows.prob0(&all, target, false);
        let mut maybe = all.clone();
        maybe.difference_with(target);
        let mut below_one = rows.backward(&zero, &maybe);
        below_one.toggle_range(..);
        below_one
    } else {
        rows.prob1_max(&all, target)
    };
    let mut x = vec![BigRational::zero(); n];
    let unknown: Vec<usize> = (0..n)
        .filter(|&s| finite.contains(s) && !target.contains(s))
        .collect();
    let mut slot = vec![u32::MAX; n];
    for (i, &s) in unknown.iter().enumerate() {
        slot[s] = i as u32;
    }
    let done = |x: Vec<BigRational>, iterations| {
        let values = x
            .into_iter()
            .enumerate()
            .map(|(s, q)| (finite.contains(s) || target.contains(s)).then_some(q))
            .collect();
        Ok(ExactRobustRewards { values, iterations })
    };
    if unknown.is_empty() {
        return done(x, 0);
    }
    let mut policy: Vec<BigRational> = vec![BigRational::zero(); rows.idx.len()];
    let mut dist = Vec::new();
    let set_policy = |policy: &mut Vec<BigRational>,
                      dist: &mut Vec<BigRational>,
                      order_of: &dyn Fn(usize) -> Vec<u32>| {
        for &s in &unknown {
            let r = rows.range(s);
            dist.clear();
            dist.resize(r.len(), BigRational::zero());
            rows.resolve(s, &order_of(s), &x, None, dist);
            policy[r].clone_from_slice(dist);
        }
    };
    match hint {
        // The float values' order of `trans + x` (infinite values last for min).
        Some(h) => set_policy(&mut policy, &mut dist, &|s| {
            let key = |e: usize| {
                trans.map_or(0.0, |t| crate::exact::to_f64(&t[e])) + h[rows.idx[e] as usize]
            };
            rows.order_entries(s, key, maximise)
        }),
        None => set_policy(&mut policy, &mut dist, &|s| {
            (0..rows.range(s).len() as u32).collect()
        }),
    }
    let keeps_finite = |policy: &[BigRational]| {
        unknown.iter().all(|&s| {
            rows.range(s)
                .all(|e| policy[e].is_zero() || finite.contains(rows.idx[e] as usize))
        })
    };
    // (Rmax: every policy reaches the target almost surely, see above.)
    let usable = |policy: &[BigRational]| {
        maximise || (keeps_finite(policy) && proper(rows, policy, &unknown, &slot))
    };
    if !usable(&policy) {
        // Each state sends mass to a successor nearer to the target first (states outside
        // the finite set are not on the way: last, and given nothing, as every finite state
        // can keep its mass among the finite ones).
        let dist_to = distances(rows, target, &unknown, &slot);
        set_policy(&mut policy, &mut dist, &|s| {
            rows.order_by(s, |t| std::cmp::Reverse(dist_to[t]), true)
        });
        debug_assert!(usable(&policy));
    }
    // Rmin: the states outside the finite ones and the target are worth ∞ (their entries of
    // `x` are placeholders), so an improvement gives them no mass beyond their `lo`.
    let mut infinite = finite.clone();
    infinite.union_with(target);
    infinite.toggle_range(..);
    let iterations = improve_policies(
        rows,
        &unknown,
        &slot,
        &mut x,
        policy,
        &Rewards {
            state: Some(state),
            trans,
        },
        maximise,
        (!maximise).then_some(&infinite),
        opts,
    )?;
    done(x, iterations)
}

/// The exact values of a robust reward problem (`None`: infinite) and how many policies were
/// evaluated.
#[derive(Clone, Debug)]
pub struct ExactRobustRewards {
    /// The value of every state, `None` where infinite.
    pub values: Vec<Option<BigRational>>,
    /// Policies evaluated (exact eliminations).
    pub iterations: u64,
}

/// `k` exact steps of robust cumulative reward: `x ← state + opt_P Σ P·(trans + x)` from 0
/// (`C≤k`), or, with `instantaneous`, `x ← opt_P Σ P·x` from `x = state` (`I=k`), within
/// [`MAX_EXACT_ROBUST_STEPS_WORK`] row evaluations.
pub fn step_rewards(
    rows: &ExactRows,
    state: &[BigRational],
    trans: Option<&[BigRational]>,
    k: u64,
    instantaneous: bool,
    maximise: bool,
    opts: &SolveOptions,
) -> Result<Vec<BigRational>> {
    let n = rows.n();
    let work = k.saturating_mul(rows.idx.len() as u64);
    if work > MAX_EXACT_ROBUST_STEPS_WORK {
        return Err(unsupported(format!(
            "exact robust checking of {k} steps is limited to {MAX_EXACT_ROBUST_STEPS_WORK} \
             row evaluations (steps × transitions; here {work}); the default method answers it"
        )));
    }
    let mut x = if instantaneous {
        state.to_vec()
    } else {
        vec![BigRational::zero(); n]
    };
    let mut next = x.clone();
    let mut dist = Vec::new();
    for step in 0..k {
        opts.interrupt.check(step)?;
        for (s, y) in next.iter_mut().enumerate() {
            *y = if instantaneous {
                rows.best(s, &x, None, maximise, &mut dist)
            } else {
                &state[s] + rows.best(s, &x, trans, maximise, &mut dist)
            };
        }
        std::mem::swap(&mut x, &mut next);
    }
    Ok(x)
}

/// Whether every unknown state reaches a non-unknown state with probability 1 under `policy`.
fn proper(rows: &ExactRows, policy: &[BigRational], unknown: &[usize], slot: &[u32]) -> bool {
    let n = rows.n();
    let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut done = vec![false; n];
    let mut queue = VecDeque::new();
    for &s in unknown {
        for e in rows.range(s) {
            if !policy[e].is_zero() {
                let t = rows.idx[e] as usize;
                if slot[t] == u32::MAX {
                    if !done[s] {
                        done[s] = true;
                        queue.push_back(s);
                    }
                } else {
                    pred[t].push(s as u32);
                }
            }
        }
    }
    while let Some(t) = queue.pop_front() {
        for &s in &pred[t] {
            if !done[s as usize] {
                done[s as usize] = true;
                queue.push_back(s as usize);
            }
        }
    }
    unknown.iter().all(|&s| done[s])
}

/// Breadth-first distance to ψ over edges with `hi > 0` through unknown states.
fn distances(rows: &ExactRows, psi: &StateSet, unknown: &[usize], slot: &[u32]) -> Vec<u64> {
    let n = rows.n();
    let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &s in unknown {
        for e in rows.range(s) {
            if rows.hi[e].is_positive_q() {
                pred[rows.idx[e] as usize].push(s as u32);
            }
        }
    }
    let mut d = vec![u64::MAX; n];
    let mut queue: VecDeque<usize> = psi.ones().collect();
    for s in psi.ones() {
        d[s] = 0;
    }
    while let Some(t) = queue.pop_front() {
        for &s in &pred[t] {
            let s = s as usize;
            if slot[s] != u32::MAX && d[s] == u64::MAX {
                d[s] = d[t] + 1;
                queue.push_back(s);
            }
        }
    }
    d
}

/// `k` exact robust sweeps `x(s) ← opt_P Σ P(t)·x(t)` on the states of `active` (the others
/// keep their value): `X` (one sweep over all states) and step-bounded until.
pub fn bounded_sweeps(
    rows: &ExactRows,
    active: &StateSet,
    mut x: Vec<BigRational>,
    k: u64,
    maximise: bool,
    opts: &SolveOptions,
) -> Result<Vec<BigRational>> {
    let work = k.saturating_mul(rows.idx.len() as u64);
    if work > MAX_EXACT_ROBUST_STEPS_WORK {
        return Err(unsupported(format!(
            "exact robust checking of {k} steps is limited to {MAX_EXACT_ROBUST_STEPS_WORK} \
             row evaluations (steps × transitions; here {work}); the default method answers it"
        )));
    }
    let mut dist = Vec::new();
    let mut next = x.clone();
    for step in 0..k {
        opts.interrupt.check(step)?;
        for s in active.ones() {
            next[s] = rows.best(s, &x, None, maximise, &mut dist);
        }
        std::mem::swap(&mut x, &mut next);
        next.clone_from(&x);
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_dtmc::DtmcBuilder;
    use num_bigint::BigInt;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    /// The exact rows of an interval model from `(src, dst, lo, hi)` (dyadic bounds: their
    /// decimals are exact).
    fn exact_rows(n: usize, edges: &[(u32, u32, f64, f64)]) -> ExactRows {
        let mut b = DtmcBuilder::new(n);
        for &(s, t, _, _) in edges {
            let k = edges.iter().filter(|e| e.0 == s).count();
            b.add_transition(s, t, 1.0 / k as f64).unwrap();
        }
        b.add_initial(0).unwrap();
        let (d, _) = b.build().unwrap();
        ExactRows::of(&Dtmc::from_interval_entries(d, edges.iter().copied()).unwrap()).unwrap()
    }

    fn set(n: usize, members: &[usize]) -> StateSet {
        let mut s = StateSet::with_capacity(n);
        s.extend(members.iter().copied());
        s
    }

    /// From 0: `[0,1/2]` to itself, `[1/4,1/2]` to the goal 1, `[1/4,1/2]` to the failure 2.
    /// x0 = p1 / (p1 + p2): Pmax = (1/2)/(3/4) = 2/3 (self-loop 1/4), Pmin = 1/3. A hint that
    /// orders the successors the wrong way round makes the first policy the opposite extreme:
    /// one improvement step is needed.
    #[test]
    fn policy_iteration_improves_a_wrong_first_policy() {
        let rows = exact_rows(
            3,
            &[
                (0, 0, 0.0, 0.5),
                (0, 1, 0.25, 0.5),
                (0, 2, 0.25, 0.5),
                (1, 1, 1.0, 1.0),
                (2, 2, 1.0, 1.0),
            ],
        );
        let (all, goal) = (set(3, &[0, 1, 2]), set(3, &[1]));
        let opts = SolveOptions::default();
        // The hint calls the failure best and the goal worst: max's first policy favours the
        // failure, min's the goal.
        let wrong = [0.5, 0.0, 1.0];
        let max = until(&rows, &all, &goal, true, Some(&wrong), &opts).unwrap();
        assert_eq!(max.values, vec![q(2, 3), q(1, 1), q(0, 1)]);
        assert!(max.iterations >= 2, "{}", max.iterations);
        let min = until(&rows, &all, &goal, false, Some(&wrong), &opts).unwrap();
        assert_eq!(min.values[0], q(1, 3));
        assert!(min.iterations >= 2, "{}", min.iterations);
    }

    /// 0 ⇄ 1 is an end component: 0 sends `[0,1]` to 1 and `[0,1/2]` to the goal 2, 1 sends
    /// `[0,1]` to 0 and `[0,1/2]` to the failure 3. Pmax(0) = 1 (0 gives 1/2 to the goal and
    /// 1/2 to 1, which returns everything), and the hint "all 1" ties 1 with the goal, so its
    /// policy stays in {0, 1} forever: the first policy must be the distance-based one.
    #[test]
    fn an_improper_first_policy_is_replaced() {
        let rows = exact_rows(
            4,
            &[
                (0, 1, 0.0, 1.0),
                (0, 2, 0.0, 0.5),
                (1, 0, 0.0, 1.0),
                (1, 3, 0.0, 0.5),
                (2, 2, 1.0, 1.0),
                (3, 3, 1.0, 1.0),
            ],
        );
        let (all, goal) = (set(4, &[0, 1, 2, 3]), set(4, &[2]));
        let opts = SolveOptions::default();
        let max = until(&rows, &all, &goal, true, Some(&[1.0, 1.0, 1.0, 0.0]), &opts).unwrap();
        assert_eq!(max.values, vec![q(1, 1), q(1, 1), q(1, 1), q(0, 1)]);
        // Pmin: nature keeps the chain in {0, 1} (lo = 0 on the way out): 0 everywhere there.
        let min = until(&rows, &all, &goal, false, None, &opts).unwrap();
        assert_eq!(min.values[0], q(0, 1));
        assert_eq!(min.iterations, 0);
    }

    fn rewards(v: &[i64]) -> Vec<BigRational> {
        v.iter().map(|&k| q(k, 1)).collect()
    }

    /// A retry loop: from 0, `[0.2,0.5]` to 1, `[0.1,0.3]` to 2 (both the target), `[0.3,0.6]`
    /// back to 0, reward 1 per step at 0: the expected steps are `1/(1 − c)`, Rmax at c = 0.6:
    /// 5/2, Rmin at c = 0.3: 10/7. A hint calling the exits best makes max's first policy leave
    /// as fast as it can (10/7): one improvement step at least. `C≤2 = 1 + c`, `I=1 = c`.
    #[test]
    fn reward_policy_iteration_improves_a_wrong_first_policy() {
        let rows = exact_rows(
            3,
            &[
                (0, 0, 0.3, 0.6),
                (0, 1, 0.2, 0.5),
                (0, 2, 0.1, 0.3),
                (1, 1, 1.0, 1.0),
                (2, 2, 1.0, 1.0),
            ],
        );
        let target = set(3, &[1, 2]);
        let r = rewards(&[1, 0, 0]);
        let opts = SolveOptions::default();
        let wrong = [0.0, 10.0, 10.0];
        let max = reach_rewards(&rows, &target, &r, None, true, Some(&wrong), &opts).unwrap();
        assert_eq!(max.values[0], Some(q(5, 2)));
        assert!(max.iterations >= 2, "{}", max.iterations);
        let min = reach_rewards(&rows, &target, &r, None, false, None, &opts).unwrap();
        assert_eq!(min.values[0], Some(q(10, 7)));
        let c = step_rewards(&rows, &r, None, 2, false, true, &opts).unwrap();
        assert_eq!(c[0], q(8, 5));
        let c = step_rewards(&rows, &r, None, 2, false, false, &opts).unwrap();
        assert_eq!(c[0], q(13, 10));
        let i = step_rewards(&rows, &r, None, 1, true, false, &opts).unwrap();
        assert_eq!(i[0], q(3, 10));
    }

    /// A zero-reward end component: 0 may idle on itself (`[0,1]`) or move to 1 (reward 1) or
    /// 2 (reward 3), which go to the target 3. Idling forever never reaches the target (worth
    /// ∞ to a minimising nature): Rmin(0) = 1, through 1. The first policy without a hint idles
    /// (improper: replaced by the distance-based one); a hint that ranks 2 first gives the
    /// proper policy worth 3, improved to 1 without idling. A transition reward 2 on every move
    /// out of 0 (the idle loop included) makes it 3. Rmax: nature idles: ∞ at 0, finite at 1.
    #[test]
    fn rmin_leaves_zero_reward_end_components_exactly() {
        let rows = exact_rows(
            4,
            &[
                (0, 0, 0.0, 1.0),
                (0, 1, 0.0, 1.0),
                (0, 2, 0.0, 1.0),
                (1, 3, 1.0, 1.0),
                (2, 3, 1.0, 1.0),
                (3, 3, 1.0, 1.0),
            ],
        );
        let target = set(4, &[3]);
        let r = rewards(&[0, 1, 3, 0]);
        let opts = SolveOptions::default();
        let min = reach_rewards(&rows, &target, &r, None, false, None, &opts).unwrap();
        assert_eq!(
            min.values,
            vec![Some(q(1, 1)), Some(q(1, 1)), Some(q(3, 1)), Some(q(0, 1))]
        );
        let hint = [5.0, 9.0, 1.0, 0.0];
        let min = reach_rewards(&rows, &target, &r, None, false, Some(&hint), &opts).unwrap();
        assert_eq!(min.values[0], Some(q(1, 1)));
        assert!(min.iterations >= 2, "{}", min.iterations);
        let trans = rewards(&[2, 2, 2, 0, 0, 0]);
        let min = reach_rewards(&rows, &target, &r, Some(&trans), false, None, &opts).unwrap();
        assert_eq!(min.values[0], Some(q(3, 1)));
        let max = reach_rewards(&rows, &target, &r, None, true, None, &opts).unwrap();
        assert_eq!(
            max.values,
            vec![None, Some(q(1, 1)), Some(q(3, 1)), Some(q(0, 1))]
        );
        // C≤2 with the transition rewards: the move out of 0 earns 2, then the state reached
        // earns its reward (idling: 0 + 2 again): min 2 + 1 (to 1), max 2 + 3 (to 2).
        let c = step_rewards(&rows, &r, Some(&trans), 2, false, true, &opts).unwrap();
        assert_eq!(c[0], q(5, 1));
        let c = step_rewards(&rows, &r, Some(&trans), 2, false, false, &opts).unwrap();
        assert_eq!(c[0], q(3, 1));
    }

    /// Bounds as decimals (0.1 is 1/10), tightened: `[0, 0.9]` beside a `[0.3, 1]` whose row
    /// forces at most 0.7 on the first.
    #[test]
    fn bounds_are_decimals_and_tightened() {
        let rows = exact_rows(
            3,
            &[
                (0, 1, 0.1, 0.9),
                (0, 2, 0.3, 1.0),
                (1, 1, 1.0, 1.0),
                (2, 2, 1.0, 1.0),
            ],
        );
        let (all, goal) = (set(3, &[0, 1, 2]), set(3, &[1]));
        let x = bounded_sweeps(
            &rows,
            &set(3, &[0]),
            vec![q(0, 1), q(1, 1), q(0, 1)],
            1,
            true,
            &SolveOptions::default(),
        )
        .unwrap();
        assert_eq!(x[0], q(7, 10));
        let min = until(&rows, &all, &goal, false, None, &SolveOptions::default()).unwrap();
        assert_eq!(min.values[0], q(1, 10));
    }
}
