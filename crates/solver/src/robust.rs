//! Robust checking of interval DTMCs: nature resolves every row's intervals anew at every step,
//! to minimise or to maximise (an interval MDP with one action per state).
//!
//! * The inner problem of a row, `opt_P Σ_t P(t)·w(t)` over the distributions within the
//!   intervals, is solved exactly by the greedy algorithm ([`augur_dtmc::robust_row_value`]):
//!   every successor gets its `lo`, the rest of the mass goes to the best (max) or worst (min)
//!   successors first, up to their `hi`: O(k log k) per row, with scratch buffers reused
//!   across rows.
//! * Graph precomputation respects the intervals: the bounds are tight
//!   ([`augur_dtmc::Intervals`]), so a stored transition (`hi > 0`) can be given positive mass,
//!   and nature can keep all the mass of a row inside a set `C` exactly when the transitions
//!   leaving `C` have `lo = 0` and those inside have `Σhi ≥ 1`. `Pmax = 0` is plain backward
//!   reachability; `Pmin = 0` is the greatest set nature can keep the chain in without meeting
//!   ψ; `Pmin = 1` is the complement of the states that can reach `Pmin = 0` (nature's
//!   optimal resolution is memoryless, and a run that avoids ψ forever ends in a set nature
//!   can keep it in); `Pmax = 1` is the nested fixed point of MDPs (`νX. μY.`).
//! * Values come from interval iteration: from below (from the indicator of the `= 1` states)
//!   and from above (1 on every state not in the `= 0` set). For `Pmin` the fixed point on
//!   the remaining states is unique (every set nature could stay in without meeting ψ is in
//!   `Pmin = 0`), so the upper sequence converges to it. For `Pmax` it is not (nature may keep
//!   the chain inside an end component forever, where the value is 0, and the upper sequence
//!   can stall above the value): after each sweep, every maximal end component `C` of the
//!   remaining states is *deflated*: the upper value of its states is capped by the best value
//!   with which the chain can leave `C`, `max over s ∈ C, P with P(out) > 0 of
//!   Σ_{t∉C} P(t)·U(t) / P(out)` (a linear-fractional problem solved greedily as well). The
//!   cap is sound for any set of states without ψ: a run either stays in `C` forever (value
//!   0) or leaves it, and where it lands, conditioned on leaving, is one of those weighted
//!   averages. Iteration stops when the two sequences are within `2ε` (relative or absolute),
//!   and the value reported is their midpoint: a guaranteed stopping criterion.
//! * Expected rewards `Rmin`/`Rmax [F ψ]` (infinite where nature can miss ψ, see
//!   [`reach_rewards`]) are the least fixed point of the robust Bellman operator `B`, reached by
//!   value iteration from 0 (lower bounds), **except** for `Rmin` when nature can keep the chain
//!   in a set of zero-reward states forever: staying there is worth ∞ (ψ is never reached), yet
//!   the iteration from 0 stays at 0 there. So after each sweep, every end component `C` of the
//!   zero-state-reward states is *lifted*: the lower value of its states is raised to the least
//!   value with which a run can leave `C`, `min over s ∈ C, P with P(out) > 0 of
//!   Σ_{t∉C} P(t)·(r(s,t) + L(t)) / P(out)` (sound for any set without ψ, as rewards are ≥ 0:
//!   every run that reaches ψ leaves `C`, and earns at least its exit's value). Upper bounds
//!   come from optimistic value iteration: once the lower sequence settles, a guess `U` a
//!   little above it is checked to be inductive, `B(U) ≤ U`, which by Park induction bounds
//!   the least fixed point from above; a failed guess is retried from a more precise lower
//!   sequence. This is sound for `Rmax` (where values are finite nature cannot stay in any end
//!   component) and for `Rmin` without zero-reward end components; with them, `Rmin` reports
//!   its (lifted) lower values without an upper bound.

use crate::numeric::{Result, SolveOptions, SolverError};
use augur_dtmc::{Dtmc, Intervals, StateSet};

/// An interval DTMC's rows: CSR pattern and the `[lo, hi]` of every stored transition.
#[derive(Clone, Copy, Debug)]
pub struct IntervalRows<'a> {
    /// Row pointers (`n + 1`).
    pub ptr: &'a [u32],
    /// Successors.
    pub idx: &'a [u32],
    /// Lower bounds, aligned with `idx`.
    pub lo: &'a [f64],
    /// Upper bounds, aligned with `idx`.
    pub hi: &'a [f64],
}

impl<'a> IntervalRows<'a> {
    /// The rows of an interval model (`None` for a DTMC).
    pub fn of(dtmc: &'a Dtmc) -> Option<IntervalRows<'a>> {
        let iv: &Intervals = dtmc.intervals.as_deref()?;
        Some(IntervalRows {
            ptr: dtmc.row_ptr(),
            idx: dtmc.matrix.indices(),
            lo: &iv.lo,
            hi: &iv.hi,
        })
    }

    /// Number of states.
    pub fn n(&self) -> usize {
        self.ptr.len() - 1
    }

    fn range(&self, s: usize) -> std::ops::Range<usize> {
        self.ptr[s] as usize..self.ptr[s + 1] as usize
    }

    /// Predecessor lists (CSR): `(pred_ptr, pred_src)`.
    fn predecessors(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.n();
        let mut count = vec![0u32; n + 1];
        for &t in self.idx {
            count[t as usize + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut src = vec![0u32; self.idx.len()];
        for s in 0..n {
            for e in self.range(s) {
                let t = self.idx[e] as usize;
                src[fill[t] as usize] = s as u32;
                fill[t] += 1;
            }
        }
        (count, src)
    }

    /// Whether nature can keep all of row `s`'s mass inside `set`.
    fn can_stay(&self, s: usize, set: &StateSet) -> bool {
        let (mut lo_out, mut hi_in) = (0.0, 0.0);
        for e in self.range(s) {
            if set.contains(self.idx[e] as usize) {
                hi_in += self.hi[e];
            } else {
                lo_out += self.lo[e];
            }
        }
        lo_out <= 0.0 && hi_in >= 1.0 - augur_dtmc::interval::INTERVAL_ROUNDING
    }
}

/// Scratch buffers of the row problems (grown to the widest row once).
#[derive(Default)]
pub struct RowScratch {
    order: Vec<u32>,
    w: Vec<f64>,
}

impl RowScratch {
    /// `opt_P Σ_e P(e)·(add(e) + x[idx[e]])` over row `s`'s distributions.
    #[inline]
    pub fn row_value(
        &mut self,
        rows: &IntervalRows<'_>,
        s: usize,
        x: &[f64],
        add: Option<&[f64]>,
        maximise: bool,
    ) -> f64 {
        let r = rows.range(s);
        let w_at = |e: usize| add.map_or(0.0, |a| a[e]) + x[rows.idx[e] as usize];
        // The common short rows without gathering or sorting.
        match r.len() {
            1 => return w_at(r.start),
            2 => {
                let (a, b) = (r.start, r.start + 1);
                let (wa, wb) = (w_at(a), w_at(b));
                let (lo, hi) = (rows.lo, rows.hi);
                let mut v = augur_dtmc::weighted(lo[a], wa) + augur_dtmc::weighted(lo[b], wb);
                let mut rest = 1.0 - lo[a] - lo[b];
                if rest <= 0.0 {
                    return v;
                }
                let (first, second) = if (wa >= wb) == maximise {
                    (a, b)
                } else {
                    (b, a)
                };
                for (e, we) in [
                    (first, if first == a { wa } else { wb }),
                    (second, if second == a { wa } else { wb }),
                ] {
                    let give = (hi[e] - lo[e]).min(rest);
                    if give > 0.0 {
                        v += give * we;
                        rest -= give;
                    }
                }
                return v;
            }
            _ => {}
        }
        self.w.clear();
        match add {
            Some(a) => self
                .w
                .extend(r.clone().map(|e| a[e] + x[rows.idx[e] as usize])),
            None => self.w.extend(r.clone().map(|e| x[rows.idx[e] as usize])),
        }
        augur_dtmc::robust_row_value(
            &rows.lo[r.clone()],
            &rows.hi[r],
            &self.w,
            maximise,
            &mut self.order,
        )
    }
}

/// `opt_P Σ_e P(e)·x[idx[e]]` over row `s`'s distributions, keeping the order of the row's
/// successors by value in `order` (local indices, aligned with the row's entries) from one
/// call to the next: the values change little between sweeps, so an insertion sort from the
/// previous order costs O(k) once the order settles. `w` is scratch space.
#[inline]
fn row_value_ordered(
    rows: &IntervalRows<'_>,
    s: usize,
    x: &[f64],
    maximise: bool,
    order: &mut [u32],
    w: &mut Vec<f64>,
) -> f64 {
    let r = rows.range(s);
    let k = r.len();
    if k == 1 {
        return x[rows.idx[r.start] as usize];
    }
    let (lo, hi) = (&rows.lo[r.clone()], &rows.hi[r.clone()]);
    w.clear();
    w.extend(rows.idx[r.clone()].iter().map(|&t| x[t as usize]));
    let mut value = 0.0;
    let mut rest = 1.0;
    for j in 0..k {
        value += augur_dtmc::weighted(lo[j], w[j]);
        rest -= lo[j];
    }
    if rest <= 0.0 {
        return value;
    }
    let order = &mut order[r];
    // Insertion sort from the previous order: best first (max) or worst first (min).
    let before = |a: u32, b: u32| {
        let (wa, wb) = (w[a as usize], w[b as usize]);
        if maximise {
            wa > wb
        } else {
            wa < wb
        }
    };
    for i in 1..k {
        let cur = order[i];
        let mut j = i;
        while j > 0 && before(cur, order[j - 1]) {
            order[j] = order[j - 1];
            j -= 1;
        }
        order[j] = cur;
    }
    augur_dtmc::distribute_rest(lo, hi, w, order, value, rest)
}

/// The identity order of every row's successors (local indices), for [`row_value_ordered`].
fn initial_orders(rows: &IntervalRows<'_>) -> Vec<u32> {
    let mut out = Vec::with_capacity(rows.idx.len());
    for s in 0..rows.n() {
        out.extend(0..rows.range(s).len() as u32);
    }
    out
}

/// Backward reachability of `target` through the states of `through` (target states count
/// as reached whatever `through` says).
fn backward_reach(
    rows: &IntervalRows<'_>,
    pred: &(Vec<u32>, Vec<u32>),
    target: &StateSet,
    through: &StateSet,
) -> StateSet {
    let mut reached = target.clone();
    let mut stack: Vec<usize> = target.ones().collect();
    while let Some(t) = stack.pop() {
        for &s in &pred.1[pred.0[t] as usize..pred.0[t + 1] as usize] {
            let s = s as usize;
            if !reached.contains(s) && through.contains(s) {
                reached.insert(s);
                stack.push(s);
            }
        }
    }
    let _ = rows;
    reached
}

/// The states where the minimal probability of `φ U ψ` is 0: the greatest set `Z` of states
/// outside ψ such that every φ-state of `Z` can keep its mass inside `Z`.
fn prob0_min(rows: &IntervalRows<'_>, phi: &StateSet, psi: &StateSet) -> StateSet {
    let n = rows.n();
    let mut z = StateSet::with_capacity(n);
    z.insert_range(..);
    z.difference_with(psi);
    loop {
        let mut changed = false;
        for s in 0..n {
            if z.contains(s) && phi.contains(s) && !rows.can_stay(s, &z) {
                z.set(s, false);
                changed = true;
            }
        }
        if !changed {
            return z;
        }
    }
}

/// The states where the maximal probability of `φ U ψ` is 1 (`νX. μY. ψ ∪ {s ∈ φ ∩ X: nature
/// can keep s's mass in X and reach Y}`), given the states where it is positive.
fn prob1_max(
    rows: &IntervalRows<'_>,
    pred: &(Vec<u32>, Vec<u32>),
    phi: &StateSet,
    psi: &StateSet,
    positive: &StateSet,
) -> StateSet {
    let n = rows.n();
    let mut x = positive.clone();
    loop {
        let mut through = StateSet::with_capacity(n);
        for s in x.ones() {
            if phi.contains(s) && !psi.contains(s) && rows.can_stay(s, &x) {
                through.insert(s);
            }
        }
        let mut target = psi.clone();
        target.intersect_with(&x);
        let y = backward_reach(rows, pred, &target, &through);
        if y == x {
            return x;
        }
        x = y;
    }
}

/// The maximal end components nature can keep the chain in, among `states`: each a list of
/// states, strongly connected through stored transitions, every state able to keep its mass
/// inside.
fn end_components(rows: &IntervalRows<'_>, states: &StateSet) -> Vec<Vec<u32>> {
    let n = rows.n();
    let mut cand = states.clone();
    loop {
        let comps = sccs(rows, &cand);
        let mut changed = false;
        let mut out = Vec::new();
        for c in comps {
            let mut set = StateSet::with_capacity(n);
            set.extend(c.iter().map(|&s| s as usize));
            let bad: Vec<u32> = c
                .iter()
                .copied()
                .filter(|&s| !rows.can_stay(s as usize, &set))
                .collect();
            if bad.is_empty() {
                out.push(c);
            } else {
                changed = true;
                for s in bad {
                    cand.set(s as usize, false);
                }
            }
        }
        if !changed {
            return out;
        }
    }
}

/// Strongly connected components of the graph restricted to `set` (iterative Tarjan).
fn sccs(rows: &IntervalRows<'_>, set: &StateSet) -> Vec<Vec<u32>> {
    let n = rows.n();
    const NONE: u32 = u32::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = StateSet::with_capacity(n);
    let mut stack: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0u32;
    let mut call: Vec<(u32, usize)> = Vec::new();
    for root in set.ones() {
        if index[root] != NONE {
            continue;
        }
        call.push((root as u32, rows.ptr[root] as usize));
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root as u32);
        on_stack.insert(root);
        while let Some(&mut (v, ref mut e)) = call.last_mut() {
            let v = v as usize;
            let end = rows.ptr[v + 1] as usize;
            let mut pushed = false;
            while *e < end {
                let w = rows.idx[*e] as usize;
                *e += 1;
                if !set.contains(w) {
                    continue;
                }
                if index[w] == NONE {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w as u32);
                    on_stack.insert(w);
                    call.push((w as u32, rows.ptr[w] as usize));
                    pushed = true;
                    break;
                } else if on_stack.contains(w) {
                    low[v] = low[v].min(index[w]);
                }
            }
            if pushed {
                continue;
            }
            call.pop();
            if let Some(&(u, _)) = call.last() {
                low[u as usize] = low[u as usize].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.set(w as usize, false);
                    comp.push(w);
                    if w as usize == v {
                        break;
                    }
                }
                out.push(comp);
            }
        }
    }
    out
}

/// The best (`maximise`) or least value with which a run can leave `inside` from row `s`:
/// `opt over P with P(out) > 0 of Σ_{e out} P(e)·(add(e) + u(e)) / P(out)` (see the module
/// documentation), or `None` when the row cannot leave. Greedy: every exit gets its `lo`, then
/// mass goes to the exits in order of value while it improves the ratio (or is needed to
/// reach the least exit mass the row allows).
fn extreme_exit(
    rows: &IntervalRows<'_>,
    s: usize,
    inside: &StateSet,
    u: &[f64],
    add: Option<&[f64]>,
    maximise: bool,
    order: &mut Vec<u32>,
) -> Option<f64> {
    let r = rows.range(s);
    let (mut lo_in, mut hi_in, mut lo_out, mut hi_out) = (0.0, 0.0, 0.0, 0.0);
    order.clear();
    for e in r.clone() {
        if inside.contains(rows.idx[e] as usize) {
            lo_in += rows.lo[e];
            hi_in += rows.hi[e];
        } else {
            lo_out += rows.lo[e];
            hi_out += rows.hi[e];
            order.push(e as u32);
        }
    }
    let m_max = f64::min(hi_out, 1.0 - lo_in);
    if order.is_empty() || m_max <= 0.0 {
        return None;
    }
    let m_min = f64::max(lo_out, 1.0 - hi_in);
    let val = |e: u32| add.map_or(0.0, |a| a[e as usize]) + u[rows.idx[e as usize] as usize];
    if maximise {
        order.sort_unstable_by(|&a, &b| val(b).total_cmp(&val(a)));
    } else {
        order.sort_unstable_by(|&a, &b| val(a).total_cmp(&val(b)));
    }
    let (mut num, mut mass) = (0.0, 0.0);
    for &e in order.iter() {
        num += rows.lo[e as usize] * val(e);
        mass += rows.lo[e as usize];
    }
    for &e in order.iter() {
        let cap = (rows.hi[e as usize] - rows.lo[e as usize]).min(m_max - mass);
        if cap <= 0.0 {
            continue;
        }
        let v = val(e);
        let improves = mass <= 0.0
            || if maximise {
                v * mass > num
            } else {
                v * mass < num
            };
        let add = if improves {
            cap
        } else if mass < m_min {
            (m_min - mass).min(cap)
        } else {
            break;
        };
        num += add * v;
        mass += add;
    }
    (mass > 0.0).then(|| num / mass)
}

/// A robust result: per-state values with (when sound) guaranteed bounds.
#[derive(Clone, Debug)]
pub struct RobustSolution {
    /// The values (midpoints of the bounds when they are known).
    pub values: Vec<f64>,
    /// Guaranteed `[lower, upper]` per state, when known.
    pub bounds: Option<(Vec<f64>, Vec<f64>)>,
    /// Sweeps performed.
    pub sweeps: u64,
}

fn indicator(set: &StateSet, n: usize) -> Vec<f64> {
    (0..n)
        .map(|s| if set.contains(s) { 1.0 } else { 0.0 })
        .collect()
}

/// The states where `Pmin` / `Pmax` (by `maximise`) of `φ U ψ` is 0 and where it is 1, by
/// graph analysis (see the module documentation).
pub fn prob01(
    rows: &IntervalRows<'_>,
    phi: &StateSet,
    psi: &StateSet,
    maximise: bool,
) -> (StateSet, StateSet) {
    let pred = rows.predecessors();
    if maximise {
        let positive = backward_reach(rows, &pred, psi, phi);
        let one = prob1_max(rows, &pred, phi, psi, &positive);
        let mut zero = positive;
        zero.toggle_range(..);
        (zero, one)
    } else {
        let zero = prob0_min(rows, phi, psi);
        let mut maybe = phi.clone();
        maybe.difference_with(psi);
        let below_one = backward_reach(rows, &pred, &zero, &maybe);
        let mut one = below_one;
        one.toggle_range(..);
        (zero, one)
    }
}

/// `Pmin` / `Pmax` of `φ U ψ` in every state (unbounded), with guaranteed bounds (see the
/// module documentation).
pub fn until(
    rows: &IntervalRows<'_>,
    phi: &StateSet,
    psi: &StateSet,
    maximise: bool,
    opts: &SolveOptions,
) -> Result<RobustSolution> {
    let n = rows.n();
    let (zero, one) = prob01(rows, phi, psi, maximise);
    let mut unknown: Vec<u32> = Vec::new();
    for s in 0..n {
        if !zero.contains(s) && !one.contains(s) {
            unknown.push(s as u32);
        }
    }
    // Gauss-Seidel from the highest state down: models explored breadth-first number successors
    // after their predecessors, so values flow back towards the initial state within a sweep.
    unknown.reverse();
    let mut lo = indicator(&one, n);
    let mut hi = lo.clone();
    for &s in &unknown {
        hi[s as usize] = 1.0;
    }
    let mecs = if maximise && !unknown.is_empty() {
        let mut set = StateSet::with_capacity(n);
        set.extend(unknown.iter().map(|&s| s as usize));
        end_components(rows, &set)
    } else {
        Vec::new()
    };
    let mut mec_sets: Vec<StateSet> = Vec::with_capacity(mecs.len());
    for c in &mecs {
        let mut set = StateSet::with_capacity(n);
        set.extend(c.iter().map(|&s| s as usize));
        mec_sets.push(set);
    }
    let mut order = Vec::new();
    let (mut order_lo, mut order_hi) = (initial_orders(rows), initial_orders(rows));
    let mut w = Vec::new();
    let mut sweeps = 0u64;
    loop {
        if unknown.is_empty() {
            break;
        }
        opts.interrupt.check(sweeps)?;
        let mut gap: f64 = 0.0;
        for &s in &unknown {
            let s = s as usize;
            let l = row_value_ordered(rows, s, &lo, maximise, &mut order_lo, &mut w);
            let h = row_value_ordered(rows, s, &hi, maximise, &mut order_hi, &mut w);
            lo[s] = l.max(lo[s]);
            hi[s] = h.min(hi[s]);
        }
        for (c, set) in mecs.iter().zip(&mec_sets) {
            let mut cap = f64::NEG_INFINITY;
            for &s in c {
                if let Some(v) = extreme_exit(rows, s as usize, set, &hi, None, true, &mut order) {
                    cap = cap.max(v);
                }
            }
            let cap = cap.max(0.0);
            for &s in c {
                let s = s as usize;
                hi[s] = hi[s].min(cap).max(lo[s]);
            }
        }
        for &s in &unknown {
            let s = s as usize;
            let d = hi[s] - lo[s];
            let d = if opts.relative && lo[s] > 0.0 {
                d / lo[s]
            } else {
                d
            };
            gap = gap.max(d);
        }
        sweeps += 1;
        if gap <= 2.0 * opts.epsilon {
            break;
        }
        if sweeps >= opts.max_iterations {
            return Err(SolverError::NotConverged {
                method: "robust interval iteration".into(),
                iterations: sweeps,
                difference: gap,
            });
        }
    }
    // Outward by a few units in the last place: the sweeps round to nearest, so bounds that
    // met at one double (the exact value a rational between two doubles) could exclude the
    // value by rounding; 0 and 1 come from the graph analysis and stay exact.
    for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
        if *l > 0.0 && *l < 1.0 {
            *l *= 1.0 - 4.0 * f64::EPSILON;
        }
        if *h > 0.0 && *h < 1.0 {
            *h = (*h * (1.0 + 4.0 * f64::EPSILON)).min(1.0);
        }
    }
    let values = lo.iter().zip(&hi).map(|(a, b)| 0.5 * (a + b)).collect();
    Ok(RobustSolution {
        values,
        bounds: Some((lo, hi)),
        sweeps,
    })
}

/// `Pmin` / `Pmax` of `φ U≤k ψ` in every state, starting from `init` (the indicator of ψ for
/// a plain bounded until): `k` robust sweeps over the φ∧¬ψ states. Exact up to rounding.
pub fn bounded_sweeps(
    rows: &IntervalRows<'_>,
    active: &StateSet,
    init: Vec<f64>,
    k: u64,
    maximise: bool,
    opts: &SolveOptions,
) -> Result<Vec<f64>> {
    let mut x = init;
    let mut y = x.clone();
    let mut scratch = RowScratch::default();
    let states: Vec<usize> = active.ones().collect();
    for i in 0..k {
        opts.interrupt.check(i)?;
        let mut changed = false;
        for &s in &states {
            let v = scratch.row_value(rows, s, &x, None, maximise);
            changed |= v != x[s];
            y[s] = v;
        }
        std::mem::swap(&mut x, &mut y);
        y.copy_from_slice(&x);
        if !changed {
            break;
        }
    }
    Ok(x)
}

/// `k` steps of robust cumulative reward: `x ← r + opt_P Σ P·(trans + x)` (`C≤k`), or, with
/// `instantaneous`, `x ← opt_P Σ P·x` from `x = r` (`I=k`).
pub fn step_rewards(
    rows: &IntervalRows<'_>,
    state: &[f64],
    trans: Option<&[f64]>,
    k: u64,
    instantaneous: bool,
    maximise: bool,
    opts: &SolveOptions,
) -> Result<Vec<f64>> {
    let n = rows.n();
    let mut x = if instantaneous {
        state.to_vec()
    } else {
        vec![0.0; n]
    };
    let mut y = x.clone();
    let mut scratch = RowScratch::default();
    for i in 0..k {
        opts.interrupt.check(i)?;
        for s in 0..n {
            y[s] = if instantaneous {
                scratch.row_value(rows, s, &x, None, maximise)
            } else {
                state[s] + scratch.row_value(rows, s, &x, trans, maximise)
            };
        }
        std::mem::swap(&mut x, &mut y);
    }
    Ok(x)
}

/// `Rmin` / `Rmax` of `F target` (the reward accumulated until `target`): infinite where the
/// target is missed with positive probability under nature's choice (`Pmin < 1` for max,
/// `Pmax < 1` for min); elsewhere value iteration from below (Gauss-Seidel, with the
/// zero-reward end components of `Rmin` lifted), stopped when a sweep changes no value by more
/// than ε (relative or absolute), then guaranteed upper bounds by optimistic value iteration
/// (see the module documentation; `Rmin` with zero-reward end components has none).
pub fn reach_rewards(
    rows: &IntervalRows<'_>,
    target: &StateSet,
    state: &[f64],
    trans: Option<&[f64]>,
    maximise: bool,
    opts: &SolveOptions,
) -> Result<RobustSolution> {
    let n = rows.n();
    let mut all = StateSet::with_capacity(n);
    all.insert_range(..);
    // Max: nature may avoid the target → infinite. Min: nature cannot reach it a.s. → infinite.
    let (_, one) = prob01(rows, &all, target, !maximise);
    let mut x = vec![0.0; n];
    let mut active = Vec::new();
    let mut zero_reward = StateSet::with_capacity(n);
    for (s, xs) in x.iter_mut().enumerate() {
        if target.contains(s) {
            continue;
        }
        if !one.contains(s) {
            *xs = f64::INFINITY;
        } else {
            active.push(s);
            if state[s] == 0.0 {
                zero_reward.insert(s);
            }
        }
    }
    // Rmin only: where nature can stay among zero-reward states (for Rmax, values are finite
    // only where nature cannot stay in any end component).
    let lifted: Vec<(Vec<u32>, StateSet)> = if maximise {
        Vec::new()
    } else {
        end_components(rows, &zero_reward)
            .into_iter()
            .map(|c| {
                let mut set = StateSet::with_capacity(n);
                set.extend(c.iter().map(|&s| s as usize));
                (c, set)
            })
            .collect()
    };
    let mut scratch = RowScratch::default();
    let mut order = Vec::new();
    let mut sweeps = 0u64;
    let relative = opts.relative;
    let change = |old: f64, new: f64| {
        let d = (new - old).abs();
        if relative && new != 0.0 {
            d / new.abs()
        } else {
            d
        }
    };
    // One Gauss-Seidel sweep from below (with the lifts); the largest change.
    let mut sweep_lower = |x: &mut [f64], scratch: &mut RowScratch| {
        let mut diff: f64 = 0.0;
        for &s in &active {
            let v = state[s] + scratch.row_value(rows, s, x, trans, maximise);
            diff = diff.max(change(x[s], v));
            x[s] = v;
        }
        for (c, set) in &lifted {
            let exit = c
                .iter()
                .filter_map(|&s| extreme_exit(rows, s as usize, set, x, trans, false, &mut order))
                .fold(f64::INFINITY, f64::min);
            for &s in c {
                let s = s as usize;
                if exit > x[s] {
                    diff = diff.max(change(x[s], exit));
                    x[s] = exit;
                }
            }
        }
        diff
    };
    let iterations_left = |sweeps: u64, diff: f64| {
        if sweeps >= opts.max_iterations {
            Err(SolverError::NotConverged {
                method: "robust value iteration".into(),
                iterations: sweeps,
                difference: diff,
            })
        } else {
            Ok(())
        }
    };
    if active.is_empty() {
        return Ok(RobustSolution {
            values: x,
            bounds: None,
            sweeps,
        });
    }
    // The lower sequence, to PRISM's stopping criterion.
    loop {
        opts.interrupt.check(sweeps)?;
        let diff = sweep_lower(&mut x, &mut scratch);
        sweeps += 1;
        if diff <= opts.epsilon {
            break;
        }
        iterations_left(sweeps, diff)?;
    }
    if !lifted.is_empty() {
        // Rmin with zero-reward end components: lower values only.
        return Ok(RobustSolution {
            values: x,
            bounds: None,
            sweeps,
        });
    }
    // Optimistic upper bounds: guess u above the lower values, check B(u) ≤ u (in place: each
    // new value is computed from values that are ≥ the final ones, so the final vector is
    // inductive too), retry from a more precise lower sequence when the guess fails.
    let mut u = x.clone();
    let mut guess_eps = opts.epsilon;
    let mut slack = opts.epsilon.max(f64::EPSILON);
    loop {
        for &s in &active {
            u[s] = if relative {
                x[s] + (x[s].abs() * slack).max(slack * f64::MIN_POSITIVE.sqrt())
            } else {
                x[s] + slack
            };
        }
        let attempts = sweeps.clamp(10, 100_000);
        let mut verified = false;
        for _ in 0..attempts {
            opts.interrupt.check(sweeps)?;
            let (mut all_below, mut all_above) = (true, true);
            for &s in &active {
                let new = state[s] + scratch.row_value(rows, s, &u, trans, maximise);
                all_below &= new <= u[s];
                all_above &= new >= u[s];
                u[s] = new;
            }
            sweeps += 1;
            if all_below {
                verified = true;
                break;
            }
            let diff = sweep_lower(&mut x, &mut scratch);
            iterations_left(sweeps, diff)?;
            if all_above {
                break;
            }
        }
        if verified {
            break;
        }
        if slack >= 1.0 {
            // Even a guess twice the lower values was not verified: rounding keeps some
            // sweep a few ulps above its input (a row's greedy masses summing to 1 + ulp on a
            // cycle). No guaranteed upper bound then, as for `Rmin` with zero-reward end
            // components: the lower values, reported without bounds.
            return Ok(RobustSolution {
                values: x,
                bounds: None,
                sweeps,
            });
        }
        guess_eps = (guess_eps / 2.0).max(f64::MIN_POSITIVE);
        slack = (slack * 2.0).min(1.0);
        loop {
            opts.interrupt.check(sweeps)?;
            let diff = sweep_lower(&mut x, &mut scratch);
            sweeps += 1;
            iterations_left(sweeps, diff)?;
            if diff <= guess_eps {
                break;
            }
        }
    }
    let mut values = x.clone();
    for &s in &active {
        // The lower sequence may have passed the verified upper one by rounding only.
        u[s] = u[s].max(x[s]);
        values[s] = x[s] + (u[s] - x[s]) / 2.0;
        // Outward by a few units in the last place: the sweeps round to nearest, so the lower
        // sequence can settle one double above the exact value (Rmin 32/11 reported with the
        // lower bound 2.909090909090909, a random case of the exact-vs-float proptest).
        x[s] -= 4.0 * f64::EPSILON * x[s].abs();
        u[s] += 4.0 * f64::EPSILON * u[s].abs();
    }
    Ok(RobustSolution {
        values,
        bounds: Some((x, u)),
        sweeps,
    })
}
