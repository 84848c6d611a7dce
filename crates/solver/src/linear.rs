//! The linear-system core shared by every unbounded problem.
//!
//! Every problem is reduced to a fixed point `x = A·x + b` over the *unknown* states, where `A`
//! is the (strictly substochastic in the limit) restriction of a non-negative matrix to the
//! unknowns and `b ≥ 0` collects constants and the values of already-known states:
//! `x_s = c_s + Σ_t M(s,t)·y_t` with `y_t = x_t` for unknowns and `y_t = known_t` otherwise.
//! The callers guarantee `I − A` is non-singular (every unknown leaves the unknowns with
//! positive probability eventually), so every method below converges to the unique solution.

use crate::direct;
use crate::exact::{self, ExactFailure, ExactSystem};
use crate::graph;
use crate::numeric::{Method, Result, SolveOptions, SolverError};
use augur_dtmc::Matrix;
use num_rational::BigRational;
use num_traits::Zero;

/// Auto: try exact elimination when there are at most this many unknowns...
const AUTO_EXACT_MAX_UNKNOWNS: usize = 1_000;
/// ... within this work budget (sum of operand bit sizes over all rational multiply-adds).
const AUTO_EXACT_BUDGET: u64 = 1_000_000;
/// Closed form (dense LU) refuses systems larger than this.
pub(crate) const CLOSED_FORM_MAX_UNKNOWNS: usize = 5_000;

/// The description of a problem `x_s = c_s + Σ_t M(s,t)·y_t` over a CSR matrix `M`.
pub(crate) struct Problem<'a> {
    /// The matrix `M` (the transition matrix, or its transpose for stationary distributions).
    pub matrix: &'a Matrix,
    /// Exact entries of `M`, aligned with `matrix.data()`.
    pub exact: Option<&'a [BigRational]>,
    /// Global ids of the unknowns.
    pub unknowns: Vec<u32>,
    /// The constant `c_s` of every unknown (aligned with `unknowns`), `≥ 0`.
    pub constant: Vec<f64>,
    /// The exact constants (aligned with `unknowns`), when the caller has them (exact mode:
    /// an expected one-step reward with transition rewards is not the decimal of its double);
    /// else the exact method reads each `constant` as described in `build_exact`.
    pub constant_exact: Option<Vec<BigRational>>,
    /// The value of every known state (indexed by global id; entries of unknowns are ignored).
    pub known: &'a [f64],
    /// Exact values of known states, when available (else `known` is converted exactly).
    pub known_exact: Option<&'a [BigRational]>,
    /// A priori bounds on every solution entry: `lower` always, `upper` when known.
    pub lower: f64,
    /// See `lower`.
    pub upper: Option<f64>,
}

/// The solution of a [`Problem`] on its unknowns (aligned with `Problem::unknowns`).
pub(crate) struct Solved {
    pub values: Vec<f64>,
    pub bounds: Option<(Vec<f64>, Vec<f64>)>,
    pub method: String,
    pub exact: Option<Vec<BigRational>>,
}

/// The float system over local indices.
pub(crate) struct System {
    pub ptr: Vec<u32>,
    pub col: Vec<u32>,
    pub val: Vec<f64>,
    /// `1 / (1 − A[i][i])`.
    pub inv: Vec<f64>,
    pub diag: Vec<f64>,
    pub b: Vec<f64>,
}

impl System {
    /// `n` states without transitions or constants (rows are pushed after `ptr`'s 0).
    #[cfg(test)]
    pub(crate) fn empty(n: usize) -> System {
        System {
            ptr: vec![0],
            col: Vec::new(),
            val: Vec::new(),
            inv: vec![1.0; n],
            diag: vec![0.0; n],
            b: vec![0.0; n],
        }
    }

    pub fn n(&self) -> usize {
        self.b.len()
    }

    /// `b_i + Σ_{j≠i} A[i][j]·x_j`.
    #[inline]
    fn row_sum(&self, i: usize, x: &[f64]) -> f64 {
        let mut s = self.b[i];
        for e in self.ptr[i] as usize..self.ptr[i + 1] as usize {
            s += self.val[e] * x[self.col[e] as usize];
        }
        s
    }
}

/// Local index of every global state (`u32::MAX` for known states).
fn local_index(n: usize, unknowns: &[u32]) -> Vec<u32> {
    let mut local = vec![u32::MAX; n];
    for (i, &s) in unknowns.iter().enumerate() {
        local[s as usize] = i as u32;
    }
    local
}

pub(crate) fn build_system(p: &Problem<'_>) -> System {
    let (ptr, idx, val) = graph::raw(p.matrix);
    let local = local_index(p.matrix.rows(), &p.unknowns);
    let n = p.unknowns.len();
    let mut sys = System {
        ptr: Vec::with_capacity(n + 1),
        col: Vec::new(),
        val: Vec::new(),
        inv: vec![1.0; n],
        diag: vec![0.0; n],
        b: p.constant.clone(),
    };
    sys.ptr.push(0);
    for (i, &s) in p.unknowns.iter().enumerate() {
        let s = s as usize;
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            let t = idx[e] as usize;
            let v = val[e];
            if v == 0.0 {
                continue;
            }
            let l = local[t];
            if l == u32::MAX {
                sys.b[i] += v * p.known[t];
            } else if l as usize == i {
                sys.diag[i] += v;
            } else {
                sys.col.push(l);
                sys.val.push(v);
            }
        }
        sys.ptr.push(sys.col.len() as u32);
        sys.inv[i] = 1.0 / (1.0 - sys.diag[i]);
    }
    sys
}

fn build_exact(p: &Problem<'_>) -> Result<ExactSystem> {
    let (ptr, idx, val) = graph::raw(p.matrix);
    let local = local_index(p.matrix.rows(), &p.unknowns);
    let n = p.unknowns.len();
    let prob = |e: usize| -> Result<BigRational> {
        match p.exact {
            Some(ex) => ex
                .get(e)
                .cloned()
                .ok_or_else(|| SolverError::Unsupported("exact probabilities misaligned".into())),
            None => exact::to_rational(val[e]).ok_or_else(|| {
                SolverError::Unsupported(format!("non-finite probability {}", val[e]))
            }),
        }
    };
    let mut sys = ExactSystem {
        rows: Vec::with_capacity(n),
        diag: vec![BigRational::zero(); n],
        b: Vec::with_capacity(n),
    };
    for (i, &s) in p.unknowns.iter().enumerate() {
        let c = p.constant[i];
        // With exact probabilities (exact mode), a reward is the decimal it prints as
        // (`0.1` is 1/10), like the probabilities; otherwise the f64's own rational.
        let mut bi = match &p.constant_exact {
            Some(q) => Some(q[i].clone()),
            None if p.exact.is_some() => exact::from_decimal(c),
            None => exact::to_rational(c),
        }
        .ok_or_else(|| SolverError::Unsupported(format!("non-finite value {c}")))?;
        let mut row = Vec::new();
        let s = s as usize;
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            if val[e] == 0.0 && p.exact.is_none() {
                continue;
            }
            let t = idx[e] as usize;
            let l = local[t];
            if l == u32::MAX {
                let kv = match &p.known_exact {
                    Some(k) => k[t].clone(),
                    None => {
                        if p.known[t] == 0.0 {
                            continue;
                        }
                        exact::to_rational(p.known[t]).ok_or_else(|| {
                            SolverError::Unsupported(format!("non-finite value {}", p.known[t]))
                        })?
                    }
                };
                if !kv.is_zero() {
                    bi += prob(e)? * kv;
                }
            } else if l as usize == i {
                sys.diag[i] += prob(e)?;
            } else {
                row.push((l, prob(e)?));
            }
        }
        sys.rows.push(row);
        sys.b.push(bi);
    }
    Ok(sys)
}

/// Solves a problem with the selected method.
pub(crate) fn solve(p: &Problem<'_>, opts: &SolveOptions) -> Result<Solved> {
    let n = p.unknowns.len();
    if n == 0 {
        return Ok(Solved {
            values: vec![],
            bounds: Some((vec![], vec![])),
            method: "graph analysis (no unknowns)".into(),
            exact: Some(vec![]),
        });
    }
    match opts.method {
        Method::Exact => solve_exact(p, None, opts),
        Method::ClosedForm => closed_form(p),
        Method::GaussSeidel | Method::Jacobi | Method::Power => {
            let sys = build_system(p);
            unsound(&sys, p.lower, opts)
        }
        Method::Interval => {
            let sys = build_system(p);
            sound_iteration(&sys, p.lower, p.upper, opts, Blocks::Global)
        }
        Method::Topological => {
            let sys = build_system(p);
            sound_iteration(&sys, p.lower, p.upper, opts, Blocks::Iterate)
        }
        Method::Auto => {
            if n <= AUTO_EXACT_MAX_UNKNOWNS {
                let sys = build_system(p);
                // An acyclic system (every SCC one state; self-loops are kept apart in `diag`)
                // is solved in one topological pass, in closed form per state: exact
                // elimination would only cost time there (brp: 0.15 s instead of 1 ms).
                if graph::tarjan(n, &sys.ptr, &sys.col, None, None).count == n {
                    let mut s = sound_iteration(&sys, p.lower, p.upper, opts, Blocks::Direct)?;
                    // Say what ran: no iteration and no elimination, one pass in doubles.
                    s.method = format!(
                        "acyclic: one topological pass ({n} unknowns, each in closed form, sound bounds)"
                    );
                    return Ok(s);
                }
                match solve_exact(p, Some(AUTO_EXACT_BUDGET), opts) {
                    Ok(s) => return Ok(s),
                    Err(SolverError::Unsupported(_)) => {}
                    Err(e) => return Err(e),
                }
                let mut s = sound_iteration(&sys, p.lower, p.upper, opts, Blocks::Direct)?;
                s.method
                    .push_str("; exact elimination abandoned: over its work budget");
                return Ok(s);
            }
            let sys = build_system(p);
            sound_iteration(&sys, p.lower, p.upper, opts, Blocks::Direct)
        }
    }
}

fn solve_exact(p: &Problem<'_>, budget: Option<u64>, opts: &SolveOptions) -> Result<Solved> {
    let n = p.unknowns.len();
    let sys = build_exact(p)?;
    let x = match exact::solve(sys, budget, &opts.interrupt) {
        Ok(x) => x,
        Err(ExactFailure::Interrupted(e)) => return Err(e),
        Err(ExactFailure::Budget) => {
            return Err(SolverError::Unsupported(
                "exact elimination exceeded its work budget".into(),
            ))
        }
        Err(ExactFailure::Singular) => {
            return Err(SolverError::Unsupported(
                "the linear system is singular".into(),
            ))
        }
    };
    let mut values = Vec::with_capacity(n);
    let mut lo = Vec::with_capacity(n);
    let mut hi = Vec::with_capacity(n);
    for q in &x {
        values.push(exact::to_f64(q));
        let (l, h) = exact::to_f64_bounds(q);
        lo.push(l);
        hi.push(h);
    }
    Ok(Solved {
        values,
        bounds: Some((lo, hi)),
        method: format!("exact ({n} unknowns)"),
        exact: Some(x),
    })
}

fn closed_form(p: &Problem<'_>) -> Result<Solved> {
    let n = p.unknowns.len();
    if n > CLOSED_FORM_MAX_UNKNOWNS {
        return Err(SolverError::Unsupported(format!(
            "closed form (dense LU) supports at most {CLOSED_FORM_MAX_UNKNOWNS} unknowns, this system has {n}"
        )));
    }
    let sys = build_system(p);
    let x = lu_solve(&sys).ok_or_else(|| {
        SolverError::Unsupported("closed form: the linear system is singular".into())
    })?;
    Ok(Solved {
        values: x,
        bounds: None,
        method: format!("closed form (LU, {n} unknowns)"),
        exact: None,
    })
}

/// Dense LU solve of `(I − A)·x = b`.
pub(crate) fn lu_solve(sys: &System) -> Option<Vec<f64>> {
    let n = sys.n();
    let mut m = nalgebra::DMatrix::<f64>::identity(n, n);
    for i in 0..n {
        m[(i, i)] -= sys.diag[i];
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            m[(i, sys.col[e] as usize)] -= sys.val[e];
        }
    }
    let b = nalgebra::DVector::from_column_slice(&sys.b);
    let x = m.lu().solve(&b)?;
    Some(x.iter().copied().collect())
}

/// Relative (or absolute) change between two iterates.
#[inline]
fn change(old: f64, new: f64, relative: bool) -> f64 {
    if old == new {
        return 0.0; // also inf = inf, where the difference would be NaN
    }
    let d = (new - old).abs();
    if relative && new != 0.0 {
        d / new.abs()
    } else {
        d
    }
}

/// Gauss-Seidel, Jacobi or power iteration from `lower`, stopping when the largest change of a
/// sweep is at most ε (relative or absolute). Not sound.
fn unsound(sys: &System, lower: f64, opts: &SolveOptions) -> Result<Solved> {
    let n = sys.n();
    let mut x = vec![lower; n];
    let mut y = vec![lower; n];
    let name = match opts.method {
        Method::GaussSeidel | Method::Jacobi => opts.method.name(),
        _ => Method::Power.name(),
    };
    let mut it: u64 = 0;
    loop {
        it += 1;
        opts.interrupt.check(it)?;
        let mut diff: f64 = 0.0;
        match opts.method {
            Method::GaussSeidel => {
                for i in 0..n {
                    let new = sys.row_sum(i, &x) * sys.inv[i];
                    diff = diff.max(change(x[i], new, opts.relative));
                    x[i] = new;
                }
            }
            Method::Jacobi => {
                for i in 0..n {
                    let new = sys.row_sum(i, &x) * sys.inv[i];
                    diff = diff.max(change(x[i], new, opts.relative));
                    y[i] = new;
                }
                std::mem::swap(&mut x, &mut y);
            }
            _ => {
                for i in 0..n {
                    let new = sys.row_sum(i, &x) + sys.diag[i] * x[i];
                    diff = diff.max(change(x[i], new, opts.relative));
                    y[i] = new;
                }
                std::mem::swap(&mut x, &mut y);
            }
        }
        if diff <= opts.epsilon {
            break;
        }
        if it >= opts.max_iterations {
            return Err(SolverError::NotConverged {
                method: name.into(),
                iterations: it,
                difference: diff,
            });
        }
    }
    Ok(Solved {
        values: x,
        bounds: None,
        method: format!("{name} ({n} unknowns, {it} iterations)"),
        exact: None,
    })
}

/// Whether the interval `[lo, hi]` is within `tol` (relative to `|lo|`, or absolute).
#[inline]
fn tight(lo: f64, hi: f64, tol: f64, relative: bool) -> bool {
    if lo >= hi {
        return true; // also [inf, inf], where the gap would be NaN
    }
    let gap = hi - lo;
    if relative {
        gap <= tol * lo.abs()
    } else {
        gap <= tol
    }
}

/// Relative or absolute gap of an interval (infinite when a relative gap is undefined).
#[inline]
fn gap_of(lo: f64, hi: f64, relative: bool) -> f64 {
    let gap = hi - lo;
    if lo >= hi || gap <= 0.0 {
        0.0
    } else if relative {
        if lo.abs() > 0.0 {
            gap / lo.abs()
        } else {
            f64::INFINITY
        }
    } else {
        gap
    }
}

struct Counter {
    iterations: u64,
    max: u64,
    sweeps_lower: u64,
    guesses: u64,
    stagnated: bool,
    /// Blocks of one state, solved in closed form.
    single: u64,
    /// Blocks solved by a certified dense / sparse LU.
    dense: u64,
    sparse: u64,
    /// Blocks solved by a certified multifrontal LU.
    multifrontal: u64,
    /// Blocks solved by exact elimination.
    exact: u64,
    /// Blocks (of more than one state) finished by interval iteration.
    iterated: u64,
}

impl Counter {
    /// Nothing counted yet; at most `max` iterations.
    fn new(max: u64) -> Counter {
        Counter {
            iterations: 0,
            max,
            sweeps_lower: 0,
            guesses: 0,
            stagnated: false,
            single: 0,
            dense: 0,
            sparse: 0,
            multifrontal: 0,
            exact: 0,
            iterated: 0,
        }
    }

    /// Counts a block the direct solver of `kind` finished.
    fn solved_directly(&mut self, kind: direct::Kind) {
        match kind {
            direct::Kind::Dense => self.dense += 1,
            direct::Kind::Sparse => self.sparse += 1,
            direct::Kind::Multifrontal => self.multifrontal += 1,
        }
    }
}

/// The indices grouped by component: `(order, starts)` with the indices `i` of component
/// `k` (`component[i] = k < count`, increasing) at `order[starts[k]..starts[k + 1]]`.
fn group_by_component(component: &[u32], count: usize) -> (Vec<u32>, Vec<u32>) {
    let mut starts = vec![0u32; count + 1];
    for &c in component {
        starts[c as usize + 1] += 1;
    }
    for k in 0..count {
        starts[k + 1] += starts[k];
    }
    let mut fill = starts.clone();
    let mut order = vec![0u32; component.len()];
    for (i, &c) in component.iter().enumerate() {
        order[fill[c as usize] as usize] = i as u32;
        fill[c as usize] += 1;
    }
    (order, starts)
}

/// How the blocks of [`sound_iteration`] are formed and solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocks {
    /// One block with every unknown, interval iteration (`--method interval`).
    Global,
    /// SCC by SCC, interval iteration (`--method topological`).
    Iterate,
    /// SCC by SCC: certified direct LU, then exact elimination when the certificate is too
    /// wide for ε, then interval iteration (the default).
    Direct,
}

/// Exact elimination of one block: at most this many states...
const EXACT_BLOCK_MAX: usize = 5_000;
/// ... within this work budget (sum of operand bit sizes, as [`AUTO_EXACT_BUDGET`]).
const EXACT_BLOCK_BUDGET: u64 = 100_000_000;

/// Relative change per sweep below which both sequences count as stuck at floating-point fixed
/// points (a few ulps).
const STAGNATION: f64 = 1e-15;

/// Sound interval iteration, globally (`topological == false`: one block with every unknown) or
/// SCC by SCC in reverse topological order.
///
/// Lower sequence from `lower`; upper sequence from `upper` when known, else by optimistic value
/// iteration (guess an upper bound from the converged lower sequence and verify it with one
/// Gauss-Seidel step: `G(u) ≤ u` proves `u ≥ x*`, since `G` is monotone and its iterates from
/// any start converge to `x*`). Stops when every unknown's interval is within ε. Reports
/// `(lo + hi) / 2` and the bounds.
pub(crate) fn sound_iteration(
    sys: &System,
    lower: f64,
    upper: Option<f64>,
    opts: &SolveOptions,
    blocks_kind: Blocks,
) -> Result<Solved> {
    let n = sys.n();
    let topological = blocks_kind != Blocks::Global;
    let mut scratch = direct::Scratch::new(if blocks_kind == Blocks::Direct { n } else { 0 });
    let bounds = (lower, upper.unwrap_or(f64::INFINITY));
    let mut lo = vec![lower; n];
    let mut hi = vec![upper.unwrap_or(f64::INFINITY); n];
    // Blocks: a permutation of the unknowns grouped by SCC, in reverse topological order.
    let (order, starts, block_of) = if topological {
        let sccs = graph::tarjan(n, &sys.ptr, &sys.col, None, None);
        let (order, starts) = group_by_component(&sccs.component, sccs.count);
        (order, starts, sccs.component)
    } else {
        (
            (0..n as u32).collect::<Vec<_>>(),
            vec![0, n as u32],
            vec![0u32; n],
        )
    };
    let blocks = starts.len() - 1;
    let mut counter = Counter::new(opts.max_iterations);
    let mut eps_b = opts.epsilon / 2.0;
    let mut passes = 0;
    let mut limited: Option<f64> = None;
    loop {
        passes += 1;
        if blocks_kind == Blocks::Direct && passes == 1 && blocks >= PARALLEL_MIN_BLOCKS {
            first_pass_in_levels(
                sys,
                (&order, &starts, &block_of),
                (&mut lo, &mut hi),
                eps_b,
                opts,
                &mut counter,
                &mut scratch,
                bounds,
            )?;
        }
        for k in 0..blocks {
            if blocks_kind == Blocks::Direct && passes == 1 && blocks >= PARALLEL_MIN_BLOCKS {
                break;
            }
            let block = &order[starts[k] as usize..starts[k + 1] as usize];
            // Direct and exact solving are tried once per block (on the first pass): a block
            // they could not finish is left to iteration on the later, finer passes.
            let direct =
                (blocks_kind == Blocks::Direct && passes == 1).then_some((&mut scratch, bounds));
            solve_block(
                sys,
                block,
                &block_of,
                &mut lo,
                &mut hi,
                eps_b,
                opts,
                &mut counter,
                direct,
                None,
            )?;
        }
        let done = (0..n).all(|i| tight(lo[i], hi[i], opts.epsilon, opts.relative));
        if done {
            break;
        }
        let worst = (0..n)
            .map(|i| gap_of(lo[i], hi[i], opts.relative))
            .fold(0.0, f64::max);
        if counter.stagnated {
            // Floating point cannot do better: report the (honest, wider) bounds.
            limited = Some(worst);
            break;
        }
        if passes >= 12 {
            return Err(SolverError::NotConverged {
                method: "interval iteration".into(),
                iterations: counter.iterations,
                difference: worst,
            });
        }
        eps_b /= 4.0;
    }
    let values = lo
        .iter()
        .zip(&hi)
        .map(|(&l, &h)| if l == h { l } else { l + (h - l) / 2.0 })
        .collect();
    // Guard against accumulated rounding: each sweep can misplace a value by a few ulps, so widen
    // the bounds by 4 ulps (relative) per iteration performed, within the a priori bounds.
    let slack = (counter.iterations as f64 + 1.0) * 4.0 * f64::EPSILON;
    let top = upper.unwrap_or(f64::INFINITY);
    for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
        // Every unknown's true value is finite (graph analysis gave the infinite ones): a lower
        // bound that overflowed to inf only shows the value is beyond f64::MAX, which is the
        // sound lower bound; the upper bound stays inf.
        if *l == f64::INFINITY {
            *l = f64::MAX;
        } else {
            *l = (*l - l.abs() * slack).max(lower);
        }
        if h.is_finite() {
            *h = (*h + h.abs() * slack).min(top);
        }
    }
    let mut method = if blocks_kind == Blocks::Direct {
        let mut parts = Vec::new();
        let c = &counter;
        for (k, what) in [
            (c.single, "closed form"),
            (c.dense, "direct (dense LU, certified)"),
            (c.sparse, "direct (faer sparse LU, certified)"),
            (
                c.multifrontal,
                "direct (multifrontal LU in nested-dissection order, refined, certified)",
            ),
            (c.exact, "exact"),
            (c.iterated, "interval iteration"),
        ] {
            if k > 0 {
                parts.push(format!("{k} {what}"));
            }
        }
        format!(
            "topological ({n} unknowns, {blocks} SCCs: {}; {} iterations",
            parts.join(", "),
            counter.iterations
        )
    } else if topological {
        format!(
            "topological interval iteration ({n} unknowns, {blocks} SCCs, {} iterations",
            counter.iterations
        )
    } else {
        format!(
            "interval iteration ({n} unknowns, {} iterations",
            counter.iterations
        )
    };
    if upper.is_none() && counter.guesses > 0 {
        method.push_str(&format!(
            ", optimistic upper bounds: {} guesses",
            counter.guesses
        ));
    }
    if let Some(w) = limited {
        method.push_str(&format!(
            ", stopped at the floating-point limit with a bound gap of {w:e}{}",
            if opts.relative { " relative" } else { "" }
        ));
    }
    method.push(')');
    Ok(Solved {
        values,
        bounds: Some((lo, hi)),
        method,
        exact: None,
    })
}

/// The first pass of the default method goes level by level (below) when there are at least
/// this many blocks.
const PARALLEL_MIN_BLOCKS: usize = 64;
/// A level's dense blocks are attempted on two threads when they hold at least this many
/// states in all (below, one thread: starting a second one costs more than it saves).
const PARALLEL_MIN_STATES: usize = 1_024;

/// The first pass of the default method over the blocks, level by level: a block's level is
/// one more than the highest level of the blocks it leads to, so the blocks of one level do not
/// depend on each other. A level's dense blocks (at most [`direct::DENSE_MAX`] states) are
/// attempted by the certified direct solver on two threads, reading the bounds of lower levels
/// and storing nothing; their bounds are then stored in order, and the blocks the direct solver
/// did not finish go on to exact elimination and iteration as in [`solve_block`]. Every block
/// sees the same bounds of its successors as in the sequential order, so the results are the
/// same. (crowds.6-10: 2,002 blocks of 30 states on 6 levels.) Sparse blocks stay on one
/// thread: two sparse factorisations at once would double the peak memory.
#[allow(clippy::too_many_arguments)]
fn first_pass_in_levels(
    sys: &System,
    (order, starts, block_of): (&[u32], &[u32], &[u32]),
    (lo, hi): (&mut Vec<f64>, &mut Vec<f64>),
    eps_b: f64,
    opts: &SolveOptions,
    c: &mut Counter,
    scratch: &mut direct::Scratch,
    bounds: (f64, f64),
) -> Result<()> {
    let blocks = starts.len() - 1;
    let block = |k: usize| &order[starts[k] as usize..starts[k + 1] as usize];
    // A block finished as in [`solve_block`] (after the direct solver's attempt `tried`).
    let solve = |b: &[u32],
                 lo: &mut [f64],
                 hi: &mut [f64],
                 c: &mut Counter,
                 scratch: &mut direct::Scratch,
                 tried: Option<(direct::Outcome, direct::Kind)>| {
        solve_block(
            sys,
            b,
            block_of,
            lo,
            hi,
            eps_b,
            opts,
            c,
            Some((scratch, bounds)),
            tried,
        )
    };
    let mut level = vec![0u32; blocks];
    for k in 0..blocks {
        let mut l = 0;
        for &i in block(k) {
            let i = i as usize;
            for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
                let kb = block_of[sys.col[e] as usize] as usize;
                if kb != k {
                    l = l.max(level[kb] + 1);
                }
            }
        }
        level[k] = l;
    }
    let levels = level.iter().max().map_or(0, |&l| l as usize + 1);
    let (by_level, level_starts) = group_by_component(&level, levels);
    drop(level);
    let mut second: Option<direct::Scratch> = None;
    let mut dense: Vec<u32> = Vec::new();
    for l in 0..levels {
        let ks = &by_level[level_starts[l] as usize..level_starts[l + 1] as usize];
        dense.clear();
        let mut states = 0;
        for &k in ks {
            let m = block(k as usize).len();
            if m > 1 && m <= direct::DENSE_MAX {
                dense.push(k);
                states += m;
            }
        }
        if dense.len() < 2 || states < PARALLEL_MIN_STATES {
            dense.clear();
        }
        // The dense blocks on two threads, split in halves by states.
        opts.interrupt.check(c.iterations)?;
        let mut half = 0;
        let mut acc = 0;
        while half < dense.len() && 2 * acc < states {
            acc += block(dense[half] as usize).len();
            half += 1;
        }
        let (first, rest) = dense.split_at(half);
        let (lo_r, hi_r) = (&lo[..], &hi[..]);
        let attempt_all = |ks: &[u32], s: &mut direct::Scratch| {
            let mut tried = Vec::with_capacity(ks.len());
            let mut found = Vec::new();
            for &k in ks {
                let b = block(k as usize);
                let tol = eps_b + inherited_gap(sys, b, block_of, lo_r, hi_r, opts.relative);
                if block_done(b, lo_r, hi_r, tol, opts.relative) {
                    tried.push(None);
                    continue;
                }
                let is_tight = |l: f64, h: f64| tight(l, h, tol, opts.relative);
                let t = direct::attempt(sys, b, lo_r, hi_r, bounds, &is_tight, s, None);
                if t.0 != direct::Outcome::Failed {
                    found.extend_from_slice(s.bounds(b.len()));
                }
                tried.push(Some(t));
            }
            (tried, found)
        };
        let (a, b) = if rest.is_empty() {
            (attempt_all(first, scratch), (Vec::new(), Vec::new()))
        } else {
            let other = second.get_or_insert_with(|| direct::Scratch::new(sys.n()));
            std::thread::scope(|sc| {
                let h = sc.spawn(|| attempt_all(rest, other));
                let a = attempt_all(first, scratch);
                let b = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (a, b)
            })
        };
        opts.interrupt.check(c.iterations)?;
        // Store the found bounds, and finish the blocks the direct solver did not.
        let mut attempted = 0;
        for (ks, (tried, found)) in [(first, a), (rest, b)] {
            let mut at = 0;
            for (&k, t) in ks.iter().zip(tried) {
                attempted += 1;
                let b = block(k as usize);
                let Some((outcome, kind)) = t else { continue };
                if outcome != direct::Outcome::Failed {
                    direct::apply(b, &found[at..at + 2 * b.len()], lo, hi);
                    at += 2 * b.len();
                }
                if outcome == direct::Outcome::Tight {
                    c.solved_directly(kind);
                    continue;
                }
                solve(b, lo, hi, c, scratch, Some((outcome, kind)))?;
            }
        }
        debug_assert_eq!(attempted, dense.len());
        // The level's other blocks (one state, or sparse), one at a time.
        for &k in ks {
            let m = block(k as usize).len();
            if !dense.is_empty() && m > 1 && m <= direct::DENSE_MAX {
                continue;
            }
            solve(block(k as usize), lo, hi, c, scratch, None)?;
        }
    }
    Ok(())
}

/// One Gauss-Seidel sweep over `block` (backwards when `rev`) on `x`, keeping the better of old
/// and new values (`raise`: lower bounds only rise; else upper bounds only fall). Returns the
/// largest change.
#[inline]
fn sweep(
    sys: &System,
    block: &[u32],
    x: &mut [f64],
    raise: bool,
    relative: bool,
    rev: bool,
) -> f64 {
    let mut diff: f64 = 0.0;
    let mut step = |i: u32| {
        let i = i as usize;
        let new = sys.row_sum(i, x) * sys.inv[i];
        let old = x[i];
        let v = if raise { new.max(old) } else { new.min(old) };
        diff = diff.max(change(old, v, relative));
        x[i] = v;
    };
    if rev {
        block.iter().rev().copied().for_each(&mut step);
    } else {
        block.iter().copied().for_each(&mut step);
    }
    diff
}

fn not_converged(c: &Counter, block: &[u32], lo: &[f64], hi: &[f64], rel: bool) -> SolverError {
    let worst = block
        .iter()
        .map(|&i| gap_of(lo[i as usize], hi[i as usize], rel))
        .fold(0.0, f64::max);
    SolverError::NotConverged {
        method: "interval iteration".into(),
        iterations: c.iterations,
        difference: worst,
    }
}

/// The largest gap (relative or absolute) of a state outside `block` that it leads to.
fn inherited_gap(
    sys: &System,
    block: &[u32],
    block_of: &[u32],
    lo: &[f64],
    hi: &[f64],
    rel: bool,
) -> f64 {
    let mut inherited: f64 = 0.0;
    let me = block_of[block[0] as usize];
    for &i in block {
        let i = i as usize;
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let j = sys.col[e] as usize;
            if block_of[j] == me {
                continue;
            }
            inherited = inherited.max(gap_of(lo[j], hi[j], rel));
        }
    }
    inherited
}

/// Whether every interval of `block` is within `tol`.
fn block_done(block: &[u32], lo: &[f64], hi: &[f64], tol: f64, rel: bool) -> bool {
    block
        .iter()
        .all(|&i| tight(lo[i as usize], hi[i as usize], tol, rel))
}

#[allow(clippy::too_many_arguments)]
fn solve_block(
    sys: &System,
    block: &[u32],
    block_of: &[u32],
    lo: &mut [f64],
    hi: &mut [f64],
    eps_b: f64,
    opts: &SolveOptions,
    c: &mut Counter,
    direct: Option<(&mut direct::Scratch, (f64, f64))>,
    tried: Option<(direct::Outcome, direct::Kind)>,
) -> Result<()> {
    let rel = opts.relative;
    if let [i] = *block {
        c.single += 1;
        let i = i as usize;
        // Closed form for a single state (its self-loop is in `inv`): the successors are final.
        let l = sys.row_sum(i, lo) * sys.inv[i];
        let h = sys.row_sum(i, hi) * sys.inv[i];
        lo[i] = lo[i].max(l);
        hi[i] = hi[i].min(h);
        return Ok(());
    }
    let tol = eps_b + inherited_gap(sys, block, block_of, lo, hi, rel);
    let block_done = |lo: &[f64], hi: &[f64]| block_done(block, lo, hi, tol, rel);
    if block_done(lo, hi) {
        return Ok(());
    }
    if let Some((scratch, bounds)) = direct {
        // A factorisation cannot be stopped midway: the interrupt is checked before and after
        // each block's direct solve (every block of more than one state).
        let (outcome, kind) = match tried {
            // Attempted already (see `first_pass_in_levels`), its bounds stored.
            Some(t) => t,
            None => {
                opts.interrupt.check(c.iterations)?;
                let is_tight = |l: f64, h: f64| tight(l, h, tol, rel);
                let t = direct::solve_block(sys, block, lo, hi, bounds, &is_tight, scratch, None);
                opts.interrupt.check(c.iterations)?;
                t
            }
        };
        if outcome == direct::Outcome::Tight {
            c.solved_directly(kind);
            return Ok(());
        }
        // Too wide (badly conditioned, e.g. Haddad–Monmege) or no certificate: exact
        // elimination of the block, when small enough.
        // Only sparse blocks (at most 4 entries a row on average): elimination of a dense
        // block grows the numbers too fast to finish within the budget anyway.
        let entries: usize = block
            .iter()
            .map(|&i| (sys.ptr[i as usize + 1] - sys.ptr[i as usize]) as usize)
            .sum();
        if block.len() <= EXACT_BLOCK_MAX
            && entries <= 4 * block.len()
            && direct::exact_block(
                sys,
                block,
                block_of,
                lo,
                hi,
                EXACT_BLOCK_BUDGET,
                &opts.interrupt,
                scratch,
            )?
        {
            c.exact += 1;
            if block_done(lo, hi) {
                return Ok(());
            }
        }
        c.iterated += 1;
    }
    let upper_known = block.iter().all(|&i| hi[i as usize].is_finite());
    if !upper_known {
        optimistic_upper(sys, block, lo, hi, eps_b, opts, c)?;
    }
    if block_done(lo, hi) {
        return Ok(());
    }
    loop {
        if c.iterations >= c.max {
            return Err(not_converged(c, block, lo, hi, rel));
        }
        c.iterations += 1;
        opts.interrupt.check(c.iterations)?;
        // Alternate the sweep direction so that information travels both ways along chains.
        let rev = c.iterations.is_multiple_of(2);
        let (dl, dh, done) = sweep_both(sys, block, lo, hi, tol, rel, rev);
        if done {
            return Ok(());
        }
        if dl <= STAGNATION && dh <= STAGNATION {
            // Floating-point fixed points reached: the bounds cannot get tighter.
            c.stagnated = true;
            return Ok(());
        }
    }
}

/// One Gauss-Seidel sweep of both sequences at once (each row is read once): `lo` only rises,
/// `hi` only falls. Returns the largest changes and whether every interval of the block is now
/// within `tol`.
#[inline]
fn sweep_both(
    sys: &System,
    block: &[u32],
    lo: &mut [f64],
    hi: &mut [f64],
    tol: f64,
    rel: bool,
    rev: bool,
) -> (f64, f64, bool) {
    let mut dl: f64 = 0.0;
    let mut dh: f64 = 0.0;
    let mut done = true;
    let mut step = |i: u32| {
        let i = i as usize;
        let (mut sl, mut sh) = (sys.b[i], sys.b[i]);
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let j = sys.col[e] as usize;
            let v = sys.val[e];
            sl += v * lo[j];
            sh += v * hi[j];
        }
        let (ol, oh) = (lo[i], hi[i]);
        let nl = (sl * sys.inv[i]).max(ol);
        let nh = (sh * sys.inv[i]).min(oh);
        dl = dl.max(change(ol, nl, rel));
        dh = dh.max(change(oh, nh, rel));
        lo[i] = nl;
        hi[i] = nh;
        done &= tight(nl, nh, tol, rel);
    };
    if rev {
        block.iter().rev().copied().for_each(&mut step);
    } else {
        block.iter().copied().for_each(&mut step);
    }
    (dl, dh, done)
}

/// Optimistic value iteration: finds a verified finite upper bound for every state of `block`
/// (stored in `hi`), iterating `lo` meanwhile.
fn optimistic_upper(
    sys: &System,
    block: &[u32],
    lo: &mut [f64],
    hi: &mut [f64],
    eps_b: f64,
    opts: &SolveOptions,
    c: &mut Counter,
) -> Result<()> {
    let rel = opts.relative;
    let mut guess_eps = eps_b;
    let mut slack = eps_b;
    loop {
        // Iterate the lower sequence until its change is below the guessing precision.
        loop {
            if c.iterations >= c.max {
                return Err(not_converged(c, block, lo, hi, rel));
            }
            c.iterations += 1;
            opts.interrupt.check(c.iterations)?;
            c.sweeps_lower += 1;
            let d = sweep(sys, block, lo, true, rel, c.sweeps_lower.is_multiple_of(2));
            if d <= guess_eps {
                break;
            }
        }
        // Guess.
        c.guesses += 1;
        for &i in block {
            let i = i as usize;
            hi[i] = if rel {
                lo[i] + (lo[i].abs() * slack).max(f64::MIN_POSITIVE)
            } else {
                lo[i] + slack
            };
        }
        // Verify: G(u) ≤ u for the whole block, with a few attempts (iterating u meanwhile).
        let attempts = c.sweeps_lower.clamp(10, 100_000);
        for _ in 0..attempts {
            if c.iterations >= c.max {
                return Err(not_converged(c, block, lo, hi, rel));
            }
            c.iterations += 1;
            opts.interrupt.check(c.iterations)?;
            let mut all_below = true;
            let mut all_above = true;
            for &i in block {
                let i = i as usize;
                let new = sys.row_sum(i, hi) * sys.inv[i];
                if new > hi[i] {
                    all_below = false;
                }
                if new < hi[i] {
                    all_above = false;
                }
                hi[i] = new;
            }
            if all_below {
                // Verified: hi = G(u) ≤ u and u ≥ x*, hence G(u) ≥ x* too.
                return Ok(());
            }
            sweep(sys, block, lo, true, rel, false);
            if all_above {
                // The guess was below the fixed point: guess again, more precisely.
                break;
            }
        }
        for &i in block {
            hi[i as usize] = f64::INFINITY;
        }
        // Next time: a more precise lower sequence and a more generous guess.
        guess_eps = (guess_eps / 2.0).max(f64::MIN_POSITIVE);
        slack = (slack * 2.0).min(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cycles of 5–12 states on four levels (cycle `c` leads to cycle `c − 150`, the first 150
    /// to the target) and a losing absorbing state: the first pass level by level, with each
    /// level's ~1,300 states of dense blocks on two threads, gives bit for bit the bounds and
    /// counts of the first pass block by block.
    #[test]
    fn first_pass_in_levels_equals_the_sequential_first_pass() {
        let (cycles, stride) = (600usize, 150usize);
        let mut base = Vec::new();
        let mut n = 0usize;
        let mut r: u64 = 11;
        let mut next = || {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (r >> 33) as usize
        };
        let mut sizes = Vec::new();
        for _ in 0..cycles {
            let m = 5 + next() % 8;
            base.push(n);
            sizes.push(m);
            n += m;
        }
        let (win, lose) = (n, n + 1);
        let mut t = sprs::TriMatI::<f64, u32>::new((n + 2, n + 2));
        for c in 0..cycles {
            for k in 0..sizes[c] {
                let s = base[c] + k;
                let down = if c < stride {
                    win
                } else {
                    base[c - stride] + k % sizes[c - stride]
                };
                let stay = [0.5, 0.6, 0.7][next() % 3];
                t.add_triplet(s, base[c] + (k + 1) % sizes[c], stay);
                t.add_triplet(s, down, (1.0 - stay) * 0.75);
                t.add_triplet(s, lose, (1.0 - stay) * 0.25);
            }
        }
        t.add_triplet(win, win, 1.0);
        t.add_triplet(lose, lose, 1.0);
        let matrix: Matrix = t.to_csr();
        let mut known = vec![0.0; n + 2];
        known[win] = 1.0;
        let problem = Problem {
            matrix: &matrix,
            exact: None,
            unknowns: (0..n as u32).collect(),
            constant: vec![0.0; n],
            constant_exact: None,
            known: &known,
            known_exact: None,
            lower: 0.0,
            upper: Some(1.0),
        };
        let sys = build_system(&problem);
        let sccs = graph::tarjan(n, &sys.ptr, &sys.col, None, None);
        let (order, starts) = group_by_component(&sccs.component, sccs.count);
        let opts = SolveOptions::default();
        let eps_b = opts.epsilon / 2.0;
        let run = |levels: bool| {
            let (mut lo, mut hi) = (vec![0.0; n], vec![1.0; n]);
            let mut c = Counter::new(opts.max_iterations);
            let mut scratch = direct::Scratch::new(n);
            let blocks = (&order[..], &starts[..], &sccs.component[..]);
            if levels {
                first_pass_in_levels(
                    &sys,
                    blocks,
                    (&mut lo, &mut hi),
                    eps_b,
                    &opts,
                    &mut c,
                    &mut scratch,
                    (0.0, 1.0),
                )
                .unwrap();
            } else {
                for k in 0..starts.len() - 1 {
                    let block = &order[starts[k] as usize..starts[k + 1] as usize];
                    let direct = Some((&mut scratch, (0.0, 1.0)));
                    let comp = &sccs.component;
                    solve_block(
                        &sys, block, comp, &mut lo, &mut hi, eps_b, &opts, &mut c, direct, None,
                    )
                    .unwrap();
                }
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            (bits(&lo), bits(&hi), c.dense, c.single, c.iterations)
        };
        let sequential = run(false);
        assert_eq!(
            sequential.2, cycles as u64,
            "every cycle solved by the dense LU"
        );
        assert_eq!(run(true), sequential);
    }
}
