//! Certified direct solving of one SCC block of `x = A·x + b`.
//!
//! The topological solver ([`crate::linear`]) meets the blocks in reverse topological order, so
//! when a block `B` is solved every state it can leave to already has bounds `[lo, hi]`. The
//! block's lower problem is `x = A_BB·x + b_B + A_BO·lo_O` and its upper problem the same with
//! `hi_O`; their fixed points bracket the true values of `B`.
//!
//! Here both are solved directly, in floating point, with one LU factorisation of
//! `M = I − A_BB` (dense with partial pivoting for small blocks, `faer`'s sparse LU with a
//! fill-reducing column order for large ones). The computed solutions are then turned into
//! *certified* bounds: with `x` a computed solution and `ρ ≥ |G(x) − x|` its residual (plus
//! the rounding-error allowance of each row), `z = M⁻¹·ρ ≥ 0` (solved with the same factors)
//! makes `l = x − 2z` satisfy `l ≤ G(l)` and `u = x + 2z` satisfy `G(u) ≤ u` (`G` the block's
//! map), since `G(x − 2z) − (x − 2z) = r + 2·M·z = r + 2ρ ≥ ρ`. The residual is componentwise,
//! so states with tiny values get tiny margins (relative precision holds for them too). One
//! verification pass checks exactly these inequalities, with a bound on the floating-point
//! error of each row's sum, so whatever happened in the factorisation the bounds that pass are
//! sound: `G` is monotone and its iterates from any start converge to the fixed point, so
//! `l ≤ G(l)` gives `l ≤ x*` and `G(u) ≤ u` gives `x* ≤ u`. A badly conditioned block
//! (Haddad–Monmege's) passes with bounds too wide for ε, or not at all, and the caller goes on
//! with exact elimination or iteration.

use crate::exact::{self, ExactFailure, ExactSystem};
use crate::linear::System;
use crate::multifrontal;
use crate::numeric::{Interrupt, Result};
use num_rational::BigRational;
use num_traits::Zero;

/// Blocks of at most this many states are factorised dense.
pub(crate) const DENSE_MAX: usize = 64;
/// Blocks above this size are not factorised.
pub(crate) const SPARSE_MAX: usize = 4_000_000;
/// Sparse blocks are factorised only when the predicted fill is affordable: twice the
/// entries of the Cholesky factor of the pattern of `M + Mᵀ` under AMD (the factors of an LU
/// whose pivots stay on the diagonal; partial pivoting can add more); above this size the
/// block must also pass [`long_enough`] first ...
const PREDICT_ABOVE: usize = 2_000;
/// ... at most this many times the entries of `M` ...
const FILL_PER_ENTRY: usize = 40;
/// ... and at most this many in all (8 bytes each).
const FILL_MAX: usize = 120_000_000;

/// Sparse blocks of at least this many states try the multifrontal LU before faer's.
const MF_MIN: usize = DENSE_MAX + 1;
/// The multifrontal LU is tried only when its factors have at most this many entries (4 bytes
/// each: 400 MB) ...
const MF_ENTRIES_MAX: usize = 100_000_000;
/// ... and its numeric factorisation at most this many floating-point operations (walk2d's
/// 701×701 grid needs 9·10⁹, about a second).
const MF_FLOPS_MAX: f64 = 5e10;
/// Refinement steps for `z = M⁻¹·ρ` with the multifrontal factors: `z` need only be accurate to
/// a small factor (the certificate tries `x ∓ f·z` for `f` up to 1024), which one step gives
/// to `f32` factors of any block whose `x` refinement converges.
const Z_REFINE: usize = 1;

/// Unit roundoff of `f64` (2⁻⁵³).
const UNIT: f64 = f64::EPSILON / 2.0;

/// What a direct attempt gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Certified bounds within the tolerance were stored.
    Tight,
    /// Certified bounds were stored, but they are wider than the tolerance.
    Loose,
    /// Nothing was stored (singular or failed factorisation, or no certificate).
    Failed,
}

/// Which factorisation served a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Dense,
    Sparse,
    /// [`crate::multifrontal`]: nested dissection, no pivoting, `f32` factors, refinement.
    Multifrontal,
}

/// Buffers reused from block to block (no allocation per block on the dense path).
pub(crate) struct Scratch {
    /// Position of every unknown in the current block (`u32::MAX` outside it).
    pos: Vec<u32>,
    dense: Vec<f64>,
    piv: Vec<usize>,
    /// Columns of the pivot row's nonzeros and rows of the pivot column's (see [`dense_lu`]).
    nz: Vec<usize>,
    rows: Vec<usize>,
    /// The dense factors, compressed.
    factors: Factors,
    /// Right-hand sides and solutions, three columns of `m`: lower, upper, steps.
    rhs: Vec<f64>,
    cand: Vec<f64>,
    /// Scratch of the multifrontal solves (right-hand sides, residuals, permuted columns).
    mf_b: Vec<f64>,
    mf_r: Vec<f64>,
    mf_work: Vec<f64>,
}

impl Scratch {
    pub fn new(n: usize) -> Self {
        Scratch {
            pos: vec![u32::MAX; n],
            dense: Vec::new(),
            piv: Vec::new(),
            nz: Vec::new(),
            rows: Vec::new(),
            factors: Factors::default(),
            rhs: Vec::new(),
            cand: Vec::new(),
            mf_b: Vec::new(),
            mf_r: Vec::new(),
            mf_work: Vec::new(),
        }
    }
}

/// A bound on the rounding error of a row sum `b + Σ a·y` of `terms` products: `γ` such that
/// `|fl(s) − s| ≤ γ·(|b| + Σ|a·y|) + terms·2⁻¹⁰⁷⁴`; doubled to cover the evaluation of the
/// bound itself.
fn gamma(terms: usize) -> f64 {
    let k = 2.0 * (terms as f64 + 2.0);
    k * UNIT / (1.0 - k * UNIT)
}

/// `b_i + Σ_j A[i][j]·y_j` over the row of `i` (diagonal included), reading `y` for block
/// members (by position) and `out` for the others; also returns `|b_i| + Σ|A[i][j]·y_j|`.
#[inline]
fn row_eval(sys: &System, i: usize, pos: &[u32], y: &[f64], out: &[f64]) -> (f64, f64) {
    let mut s = sys.b[i];
    let mut a = sys.b[i].abs();
    let yi = y[pos[i] as usize];
    let d = sys.diag[i] * yi;
    s += d;
    a += d.abs();
    for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
        let j = sys.col[e] as usize;
        let v = match pos[j] {
            u32::MAX => out[j],
            p => y[p as usize],
        };
        let t = sys.val[e] * v;
        s += t;
        a += t.abs();
    }
    (s, a)
}

/// A pivot on the diagonal is kept when it is at least this fraction of the largest entry of
/// its column (threshold partial pivoting, as sparse LU codes do: UMFPACK's default is 0.1).
/// `M = I − A_BB` is row diagonally dominant, so its diagonal pivots are rarely refused, and
/// rows are seldom swapped; the certificate checks the result whatever the pivots were.
const PIVOT_THRESHOLD: f64 = 0.1;

/// Dense LU with threshold partial pivoting of the row-major `m×m` matrix in `a`; `false` when
/// singular. The blocks are sparse (a few successors per state) and fill in little, so only
/// the rows with a nonzero in the pivot column (`rows`) are updated, each over the pivot row's
/// nonzeros (`nz`), unless the pivot row is mostly nonzero, when the contiguous update is
/// faster.
fn dense_lu(
    a: &mut [f64],
    piv: &mut [usize],
    nz: &mut Vec<usize>,
    rows: &mut Vec<usize>,
    m: usize,
) -> bool {
    for k in 0..m {
        let diag = a[k * m + k].abs();
        let mut p = k;
        let mut best = diag;
        rows.clear();
        for r in k + 1..m {
            let v = a[r * m + k].abs();
            if v != 0.0 {
                rows.push(r);
                if v > best {
                    best = v;
                    p = r;
                }
            }
        }
        if best == 0.0 || !best.is_finite() {
            return false;
        }
        if diag >= PIVOT_THRESHOLD * best {
            p = k;
        }
        piv[k] = p;
        if p != k {
            for c in 0..m {
                a.swap(k * m + c, p * m + c);
            }
            rows.clear();
            rows.extend((k + 1..m).filter(|&r| a[r * m + k] != 0.0));
        }
        nz.clear();
        nz.extend((k + 1..m).filter(|&c| a[k * m + c] != 0.0));
        let sparse = 2 * nz.len() < m - k;
        let inv = 1.0 / a[k * m + k];
        for &r in rows.iter() {
            let f = a[r * m + k] * inv;
            a[r * m + k] = f;
            let (top, bottom) = a.split_at_mut(r * m);
            let pivot_row = &top[k * m..k * m + m];
            let row = &mut bottom[..m];
            if sparse {
                for &c in nz.iter() {
                    row[c] -= f * pivot_row[c];
                }
            } else {
                for (x, &u) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                    *x -= f * u;
                }
            }
        }
    }
    true
}

/// The factors of [`dense_lu`] with their zeros dropped, for the triangular solves: the
/// strictly lower rows of `L` (rows `0..m` of `ptr`), then the strictly upper rows of `U`
/// (rows `m..2m`), and `U`'s diagonal.
#[derive(Default)]
pub(crate) struct Factors {
    ptr: Vec<u32>,
    col: Vec<u32>,
    val: Vec<f64>,
    diag: Vec<f64>,
}

impl Factors {
    /// Compresses the factors of [`dense_lu`] held in `a`.
    fn compress(&mut self, a: &[f64], m: usize) {
        self.ptr.clear();
        self.col.clear();
        self.val.clear();
        self.diag.clear();
        self.ptr.push(0);
        for upper in [false, true] {
            for r in 0..m {
                let cols = if upper { r + 1..m } else { 0..r };
                for c in cols {
                    let v = a[r * m + c];
                    if v != 0.0 {
                        self.col.push(c as u32);
                        self.val.push(v);
                    }
                }
                self.ptr.push(self.col.len() as u32);
                if upper {
                    self.diag.push(a[r * m + r]);
                }
            }
        }
    }

    /// Solves `M·x = b` in place for one right-hand side, with the row interchanges `piv`.
    fn solve(&self, piv: &[usize], x: &mut [f64]) {
        let m = self.diag.len();
        for (k, &p) in piv.iter().enumerate().take(m) {
            x.swap(k, p);
        }
        for r in 0..m {
            let mut s = x[r];
            for e in self.ptr[r] as usize..self.ptr[r + 1] as usize {
                s -= self.val[e] * x[self.col[e] as usize];
            }
            x[r] = s;
        }
        for r in (0..m).rev() {
            let mut s = x[r];
            for e in self.ptr[m + r] as usize..self.ptr[m + r + 1] as usize {
                s -= self.val[e] * x[self.col[e] as usize];
            }
            x[r] = s / self.diag[r];
        }
    }
}

/// Which factorisation to compute.
enum Plan {
    Dense,
    Sparse,
    Multifrontal(Box<multifrontal::Symbolic>),
}

/// A factorisation of `M = I − A_BB`.
enum Factor {
    /// Dense LU (the factors live in the scratch's `dense` and `piv`).
    Dense,
    /// faer's sparse LU of `Mᵀ` (solved transposed).
    Sparse(Box<faer::sparse::linalg::solvers::Lu<u32, f64>>),
    /// The multifrontal LU (solved with iterative refinement).
    Multifrontal(Box<multifrontal::Factor>),
}

/// faer's sparse LU of `Mᵀ`: the rows of `M`, sorted by column, are the columns of `Mᵀ`.
fn sparse_factor(
    sys: &System,
    block: &[u32],
    pos: &[u32],
) -> Option<faer::sparse::linalg::solvers::Lu<u32, f64>> {
    use faer::sparse::linalg::solvers::{Lu, SymbolicLu};
    use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
    let m = block.len();
    let mut col_ptr: Vec<u32> = Vec::with_capacity(m + 1);
    let mut row_idx: Vec<u32> = Vec::new();
    let mut vals: Vec<f64> = Vec::new();
    let mut row: Vec<(u32, f64)> = Vec::new();
    col_ptr.push(0);
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        row.clear();
        row.push((k as u32, 1.0 - sys.diag[i]));
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let p = pos[sys.col[e] as usize];
            if p != u32::MAX {
                row.push((p, -sys.val[e]));
            }
        }
        row.sort_unstable_by_key(|&(c, _)| c);
        let mut last = u32::MAX;
        for &(c, v) in row.iter() {
            if c == last {
                if let Some(x) = vals.last_mut() {
                    *x += v;
                }
            } else {
                row_idx.push(c);
                vals.push(v);
                last = c;
            }
        }
        col_ptr.push(u32::try_from(row_idx.len()).ok()?);
    }
    let sym = SymbolicSparseColMatRef::new_checked(m, m, &col_ptr, None, &row_idx);
    let symbolic = SymbolicLu::try_new(sym).ok()?;
    Lu::try_new_with_symbolic(symbolic, SparseColMatRef::new(sym, &vals)).ok()
}

/// A cheap test that rules out blocks whose fill is hopeless before the (costlier) symbolic
/// analysis: the eccentricity `d` of a far state (two breadth-first searches over the block's
/// edges) must satisfy `d² ≥ m/4`. Grids in the plane pass (`d ~ √m`), while expander-like
/// blocks (random jumps, `d ~ log m`), whose every ordering fills in most of the matrix, and
/// meshes of higher dimension do not.
fn long_enough(sys: &System, block: &[u32], pos: &[u32]) -> bool {
    let m = block.len();
    let mut level = vec![u32::MAX; m];
    let mut queue: Vec<u32> = Vec::with_capacity(m);
    let mut bfs = |start: u32, level: &mut [u32]| -> (u32, u32) {
        level.iter_mut().for_each(|l| *l = u32::MAX);
        queue.clear();
        queue.push(start);
        level[start as usize] = 0;
        let mut head = 0;
        let mut last = start;
        while head < queue.len() {
            let k = queue[head];
            head += 1;
            last = k;
            let i = block[k as usize] as usize;
            for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
                let p = pos[sys.col[e] as usize];
                if p != u32::MAX && level[p as usize] == u32::MAX {
                    level[p as usize] = level[k as usize] + 1;
                    queue.push(p);
                }
            }
        }
        (last, level[last as usize])
    };
    let (far, _) = bfs(0, &mut level);
    let (_, d) = bfs(far, &mut level);
    (d as u64) * (d as u64) >= m as u64 / 4
}

/// The predicted number of entries of the LU factors of `M` (see [`PREDICT_ABOVE`]), and the
/// entries of `M`; `None` when the prediction fails.
fn predicted_fill(sys: &System, block: &[u32], pos: &[u32]) -> Option<(usize, usize)> {
    use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, SymmetricOrdering};
    use faer::sparse::SymbolicSparseColMatRef;
    use faer::Side;
    let m = block.len();
    // The lower triangle of the pattern of M + Mᵀ, column by column: (column, row) pairs.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (k, &i) in block.iter().enumerate() {
        let k = k as u32;
        pairs.push((k, k));
        let i = i as usize;
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let p = pos[sys.col[e] as usize];
            if p != u32::MAX && p != k {
                pairs.push((k.min(p), k.max(p)));
            }
        }
    }
    let entries = pairs.len();
    pairs.sort_unstable();
    pairs.dedup();
    let mut col_ptr: Vec<u32> = Vec::with_capacity(m + 1);
    let mut row_idx: Vec<u32> = Vec::with_capacity(pairs.len());
    col_ptr.push(0);
    let mut c = 0u32;
    for &(col, row) in &pairs {
        while c < col {
            col_ptr.push(row_idx.len() as u32);
            c += 1;
        }
        row_idx.push(row);
    }
    while (c as usize) < m {
        col_ptr.push(row_idx.len() as u32);
        c += 1;
    }
    drop(pairs);
    let sym = SymbolicSparseColMatRef::new_checked(m, m, &col_ptr, None, &row_idx);
    let chol =
        factorize_symbolic_cholesky(sym, Side::Lower, SymmetricOrdering::Amd, Default::default())
            .ok()?;
    Some((2 * chol.len_val(), entries))
}

/// Scratch of a multifrontal solve (see [`multifrontal::refine`]).
type MfScratch<'a> = (&'a mut Vec<f64>, &'a mut Vec<f64>, &'a mut Vec<f64>);

/// Solves `M·X = R` in place for the columns of `rhs` (each of length `m`). The multifrontal
/// factors are refined against the rows of `M` (at most `steps` corrections when given).
#[allow(clippy::too_many_arguments)]
fn solve_with(
    f: &Factor,
    sys: &System,
    block: &[u32],
    pos: &[u32],
    dense: &Factors,
    piv: &[usize],
    mf: MfScratch<'_>,
    rhs: &mut [f64],
    steps: Option<usize>,
) -> bool {
    let m = block.len();
    let cols = rhs.len() / m.max(1);
    match f {
        Factor::Dense => {
            for c in 0..cols {
                dense.solve(piv, &mut rhs[c * m..(c + 1) * m]);
            }
        }
        Factor::Sparse(lu) => {
            use faer::linalg::solvers::Solve;
            let mut x = faer::Mat::<f64>::from_fn(m, cols, |r, c| rhs[c * m + r]);
            lu.solve_transpose_in_place(x.as_mut());
            for c in 0..cols {
                for r in 0..m {
                    rhs[c * m + r] = x[(r, c)];
                }
            }
        }
        Factor::Multifrontal(lu) => {
            let (b, r, work) = mf;
            return multifrontal::refine(lu, sys, block, pos, rhs, steps, b, r, work);
        }
    }
    rhs.iter().all(|v| v.is_finite())
}

/// The residual size of one side: for every row, `|G(x)_k − x_k|` plus a multiple of the
/// rounding-error bound of the row (the right-hand side whose solution `z` makes `x ∓ 2z` a
/// certificate candidate). Returns `(rows length bound, ok)`.
fn residual_rhs(
    sys: &System,
    block: &[u32],
    pos: &[u32],
    x: &[f64],
    out: &[f64],
    rho: &mut [f64],
) -> Option<usize> {
    let mut terms = 0usize;
    for &i in block {
        let i = i as usize;
        terms = terms.max(sys.ptr[i + 1] as usize - sys.ptr[i] as usize + 1);
    }
    let gam = gamma(terms);
    let tiny = (terms as f64 + 2.0) * f64::from_bits(1);
    for (k, &i) in block.iter().enumerate() {
        let (g, a) = row_eval(sys, i as usize, pos, x, out);
        let r = (g - x[k]).abs() + 4.0 * gam * a + tiny;
        if !r.is_finite() {
            return None;
        }
        rho[k] = r;
    }
    Some(terms)
}

/// Verifies one side's candidate: `G(cand) ≥ cand` (lower side) or `G(cand) ≤ cand` (upper),
/// every row's sum evaluated with its rounding-error bound against the claim.
fn verify(
    sys: &System,
    block: &[u32],
    pos: &[u32],
    cand: &[f64],
    out: &[f64],
    upper_side: bool,
    terms: usize,
) -> bool {
    let gam = gamma(terms);
    let tiny = (terms as f64 + 2.0) * f64::from_bits(1);
    block.iter().enumerate().all(|(k, &i)| {
        let (g, a) = row_eval(sys, i as usize, pos, cand, out);
        let err = gam * a + tiny;
        if upper_side {
            g + err <= cand[k]
        } else {
            g - err >= cand[k]
        }
    })
}

/// Tries to solve `block` directly; on success its bounds in `lo`/`hi` are tightened to the
/// certified ones. `bounds` are the a priori bounds of every value (`lower`, `upper`), and
/// `tight` says whether an interval is narrow enough.
///
/// Blocks of at most [`DENSE_MAX`] states are factorised dense. Larger ones try the
/// multifrontal LU first (from [`MF_MIN`] states, when its fill and flops are affordable), then,
/// when that fails or its certificate is too wide, faer's sparse LU with partial pivoting (when
/// its predicted fill is affordable). The kind returned is the one that stored the bounds.
/// With `only` (tests), only that factorisation is used, whatever the block's size.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_block(
    sys: &System,
    block: &[u32],
    lo: &mut [f64],
    hi: &mut [f64],
    bounds: (f64, f64),
    tight: &dyn Fn(f64, f64) -> bool,
    s: &mut Scratch,
    only: Option<Kind>,
) -> (Outcome, Kind) {
    let (outcome, kind) = attempt(sys, block, lo, hi, bounds, tight, s, only);
    if outcome != Outcome::Failed {
        apply(block, s.bounds(block.len()), lo, hi);
    }
    (outcome, kind)
}

impl Scratch {
    /// The bounds a successful [`attempt`] found for its block of `m` states: the new lower
    /// bounds, then the new upper bounds, in the block's order.
    pub fn bounds(&self, m: usize) -> &[f64] {
        &self.cand[..2 * m]
    }
}

/// Stores bounds found by [`attempt`] (see [`Scratch::bounds`]) for `block`.
pub(crate) fn apply(block: &[u32], found: &[f64], lo: &mut [f64], hi: &mut [f64]) {
    let m = block.len();
    for (k, &i) in block.iter().enumerate() {
        lo[i as usize] = found[k];
        hi[i as usize] = found[m + k];
    }
}

/// [`solve_block`] without storing: on success ([`Outcome::Tight`] or [`Outcome::Loose`]) the
/// block's new bounds are in [`Scratch::bounds`], and `lo`, `hi` are only read (blocks that do
/// not depend on each other can be attempted at the same time). `only` as for
/// [`solve_block`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn attempt(
    sys: &System,
    block: &[u32],
    lo: &[f64],
    hi: &[f64],
    bounds: (f64, f64),
    tight: &dyn Fn(f64, f64) -> bool,
    s: &mut Scratch,
    only: Option<Kind>,
) -> (Outcome, Kind) {
    let m = block.len();
    let dense = match only {
        Some(k) => k == Kind::Dense,
        None => m <= DENSE_MAX,
    };
    if m > SPARSE_MAX {
        return (
            Outcome::Failed,
            if dense { Kind::Dense } else { Kind::Sparse },
        );
    }
    for (k, &i) in block.iter().enumerate() {
        s.pos[i as usize] = k as u32;
    }
    let job = Job {
        sys,
        block,
        lo,
        hi,
        bounds,
        tight,
    };
    let res = if dense {
        (solve_marked(&job, s, Plan::Dense), Kind::Dense)
    } else {
        solve_sparse(&job, s, only)
    };
    for &i in block {
        s.pos[i as usize] = u32::MAX;
    }
    res
}

/// What [`attempt`] was asked: the system, the block, the current bounds of every value,
/// the a priori bounds and the narrowness test.
#[derive(Clone, Copy)]
struct Job<'a> {
    sys: &'a System,
    block: &'a [u32],
    lo: &'a [f64],
    hi: &'a [f64],
    bounds: (f64, f64),
    tight: &'a dyn Fn(f64, f64) -> bool,
}

/// The sparse paths of [`attempt`] (the block's positions are marked).
fn solve_sparse(job: &Job<'_>, s: &mut Scratch, only: Option<Kind>) -> (Outcome, Kind) {
    let &Job {
        sys, block, tight, ..
    } = job;
    let m = block.len();
    let forced = only.is_some();
    let long = forced || m <= PREDICT_ABOVE || long_enough(sys, block, &s.pos);
    let mut res = (Outcome::Failed, Kind::Sparse);
    if only != Some(Kind::Sparse) && long && (forced || m >= MF_MIN) {
        let outcome = match multifrontal_plan(sys, block, &s.pos, forced) {
            Some(sym) => solve_marked(job, s, Plan::Multifrontal(Box::new(sym))),
            None => Outcome::Failed,
        };
        res = (outcome, Kind::Multifrontal);
        if outcome == Outcome::Tight || forced {
            return res;
        }
    }
    let affordable = long
        && match predicted_fill(sys, block, &s.pos) {
            Some((fill, entries)) => fill <= FILL_MAX.min(FILL_PER_ENTRY * entries),
            None => false,
        };
    if affordable || only == Some(Kind::Sparse) {
        // The multifrontal path's loose bounds, if any, kept to combine with faer's.
        let earlier = (res.0 == Outcome::Loose).then(|| s.bounds(m).to_vec());
        let mut outcome = solve_marked(job, s, Plan::Sparse);
        match earlier {
            Some(e) if outcome == Outcome::Failed => s.cand[..2 * m].copy_from_slice(&e),
            Some(e) => {
                // Both stored bounds: the better of each, as if stored one after the other.
                let (cl, ch) = s.cand[..2 * m].split_at_mut(m);
                let mut all_tight = true;
                for k in 0..m {
                    cl[k] = cl[k].max(e[k]);
                    ch[k] = ch[k].min(e[m + k]);
                    all_tight &= tight(cl[k], ch[k]);
                }
                outcome = if all_tight {
                    Outcome::Tight
                } else {
                    Outcome::Loose
                };
            }
            None => {}
        }
        // A failed attempt keeps the multifrontal kind when that found (loose) bounds.
        if outcome != Outcome::Failed || res.0 == Outcome::Failed {
            res = (outcome, Kind::Sparse);
        }
    }
    res
}

/// The symbolic multifrontal factorisation of the block (nested-dissection order), when its
/// factors and flops are affordable (always when `forced`, for the tests).
fn multifrontal_plan(
    sys: &System,
    block: &[u32],
    pos: &[u32],
    forced: bool,
) -> Option<multifrontal::Symbolic> {
    let m = block.len();
    let (ptr, adj, entries) = multifrontal::block_graph(sys, block, pos);
    let order = multifrontal::nested_dissection(&ptr, &adj);
    let sym = multifrontal::analyse(&ptr, &adj, order)?;
    let affordable = sym.entries() <= MF_ENTRIES_MAX.min(FILL_PER_ENTRY * (entries + m))
        && sym.flops <= MF_FLOPS_MAX;
    (forced || affordable).then_some(sym)
}

/// The certificate of one side, from the computed solution `x` (first `m` of `xz`) and the
/// solution `z` of `M·z = ρ` (second `m`): `x ∓ f·z` for growing `f`, verified, clamped to the
/// a priori bounds afterwards (the true values lie within them whatever the certificate says).
#[allow(clippy::too_many_arguments)]
fn certify(
    sys: &System,
    block: &[u32],
    pos: &[u32],
    x: &[f64],
    z: &[f64],
    out: &[f64],
    upper_side: bool,
    terms: usize,
    clamp: (f64, f64),
    cand: &mut [f64],
) -> bool {
    if z.iter().any(|&v| v.is_nan() || v < 0.0) {
        return false;
    }
    let mut f = 2.0;
    for _ in 0..4 {
        for k in 0..block.len() {
            cand[k] = if upper_side {
                x[k] + f * z[k]
            } else {
                x[k] - f * z[k]
            };
        }
        if verify(sys, block, pos, cand, out, upper_side, terms) {
            for v in cand.iter_mut() {
                *v = v.clamp(clamp.0, clamp.1);
            }
            return true;
        }
        f *= 8.0;
    }
    false
}

fn solve_marked(job: &Job<'_>, s: &mut Scratch, plan: Plan) -> Outcome {
    let (sys, block, lo, hi) = (job.sys, job.block, job.lo, job.hi);
    let (bounds, tight) = (job.bounds, job.tight);
    let m = block.len();
    let pos = &s.pos;
    // Right-hand sides: b + A_BO·lo_O (lower side) and b + A_BO·hi_O (upper side).
    s.rhs.clear();
    s.rhs.resize(4 * m, 0.0);
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        let (mut bl, mut bh) = (sys.b[i], sys.b[i]);
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let j = sys.col[e] as usize;
            if pos[j] == u32::MAX {
                bl += sys.val[e] * lo[j];
                bh += sys.val[e] * hi[j];
            }
        }
        if !bl.is_finite() || !bh.is_finite() {
            return Outcome::Failed;
        }
        s.rhs[k] = bl;
        s.rhs[m + k] = bh;
    }
    let factor = match plan {
        Plan::Dense => {
            s.dense.clear();
            s.dense.resize(m * m, 0.0);
            s.piv.clear();
            s.piv.resize(m, 0);
            for (k, &i) in block.iter().enumerate() {
                let i = i as usize;
                s.dense[k * m + k] = 1.0 - sys.diag[i];
                for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
                    let p = pos[sys.col[e] as usize];
                    if p != u32::MAX {
                        s.dense[k * m + p as usize] -= sys.val[e];
                    }
                }
            }
            if !dense_lu(&mut s.dense, &mut s.piv, &mut s.nz, &mut s.rows, m) {
                return Outcome::Failed;
            }
            s.factors.compress(&s.dense, m);
            Factor::Dense
        }
        Plan::Sparse => match sparse_factor(sys, block, pos) {
            Some(lu) => Factor::Sparse(Box::new(lu)),
            None => return Outcome::Failed,
        },
        Plan::Multifrontal(sym) => match multifrontal::factorize(sys, block, pos, *sym) {
            Some(lu) => Factor::Multifrontal(Box::new(lu)),
            None => return Outcome::Failed,
        },
    };
    // Solves in place on the right-hand sides `s.rhs[range]` (`refine` as for `solve_with`).
    let solve = |s: &mut Scratch, range: std::ops::Range<usize>, refine| {
        solve_with(
            &factor,
            sys,
            block,
            &s.pos,
            &s.factors,
            &s.piv,
            (&mut s.mf_b, &mut s.mf_r, &mut s.mf_work),
            &mut s.rhs[range],
            refine,
        )
    };
    // Solutions of both sides.
    if !solve(s, 0..2 * m, None) {
        return Outcome::Failed;
    }
    let pos = &s.pos;
    // Their residuals (with the rounding-error allowance) as the next right-hand sides.
    let (xs, rho) = s.rhs.split_at_mut(2 * m);
    let (xl, xh) = xs.split_at(m);
    let (rl, rh) = rho.split_at_mut(m);
    let (Some(tl), Some(th)) = (
        residual_rhs(sys, block, pos, xl, lo, rl),
        residual_rhs(sys, block, pos, xh, hi, rh),
    ) else {
        return Outcome::Failed;
    };
    // `z` need not be accurate (the certificate tries growing multiples of it): one
    // refinement step for the multifrontal factors.
    if !solve(s, 2 * m..4 * m, Some(Z_REFINE)) {
        return Outcome::Failed;
    }
    let pos = &s.pos;
    drop(factor);
    let (xs, zs) = s.rhs.split_at(2 * m);
    let (xl, xh) = xs.split_at(m);
    let (zl, zh) = zs.split_at(m);
    s.cand.clear();
    s.cand.resize(2 * m, 0.0);
    let (cl, ch) = s.cand.split_at_mut(m);
    let ok_lo = certify(sys, block, pos, xl, zl, lo, false, tl, bounds, cl);
    let ok_hi = certify(sys, block, pos, xh, zh, hi, true, th, bounds, ch);
    if !ok_lo && !ok_hi {
        return Outcome::Failed;
    }
    // The new bounds: the certified ones where they improve on the old.
    let mut all_tight = ok_lo && ok_hi;
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        cl[k] = if ok_lo { lo[i].max(cl[k]) } else { lo[i] };
        ch[k] = if ok_hi { hi[i].min(ch[k]) } else { hi[i] };
        all_tight &= tight(cl[k], ch[k]);
    }
    if all_tight {
        Outcome::Tight
    } else {
        Outcome::Loose
    }
}

/// Solves `block` exactly (rational elimination of the block with `lo_O` and with `hi_O` for
/// the states outside), within `budget`; on success the block's bounds become the outward
/// roundings of the two exact solutions. `false` when over budget or singular.
#[allow(clippy::too_many_arguments)]
pub(crate) fn exact_block(
    sys: &System,
    block: &[u32],
    block_of: &[u32],
    lo: &mut [f64],
    hi: &mut [f64],
    budget: u64,
    stop: &Interrupt,
    s: &mut Scratch,
) -> Result<bool> {
    for (k, &i) in block.iter().enumerate() {
        s.pos[i as usize] = k as u32;
    }
    let me = block_of[block[0] as usize];
    let res = exact_sides(sys, block, me, block_of, lo, hi, budget, stop, &s.pos);
    for &i in block {
        s.pos[i as usize] = u32::MAX;
    }
    let Some((xl, xh)) = res? else {
        return Ok(false);
    };
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        lo[i] = lo[i].max(exact::to_f64_bounds(&xl[k]).0);
        hi[i] = hi[i].min(exact::to_f64_bounds(&xh[k]).1);
    }
    Ok(true)
}

#[allow(clippy::too_many_arguments)]
fn exact_sides(
    sys: &System,
    block: &[u32],
    me: u32,
    block_of: &[u32],
    lo: &[f64],
    hi: &[f64],
    budget: u64,
    stop: &Interrupt,
    pos: &[u32],
) -> Result<Option<(Vec<BigRational>, Vec<BigRational>)>> {
    // The block's rows in rationals (`None` when a number is not finite).
    let build = || {
        let m = block.len();
        let mut rows = Vec::with_capacity(m);
        let mut diag = Vec::with_capacity(m);
        let mut bl = Vec::with_capacity(m);
        let mut bh = Vec::with_capacity(m);
        let mut same = true;
        for &i in block {
            let i = i as usize;
            let mut row = Vec::new();
            let b0 = exact::to_rational(sys.b[i])?;
            let (mut l, mut h) = (b0.clone(), b0);
            for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
                let j = sys.col[e] as usize;
                let a = exact::to_rational(sys.val[e])?;
                if block_of[j] == me {
                    row.push((pos[j], a));
                } else {
                    if lo[j] != hi[j] {
                        same = false;
                    }
                    if !lo[j].is_zero() {
                        l += &a * exact::to_rational(lo[j])?;
                    }
                    if !hi[j].is_zero() {
                        h += a * exact::to_rational(hi[j])?;
                    }
                }
            }
            rows.push(row);
            diag.push(exact::to_rational(sys.diag[i])?);
            bl.push(l);
            bh.push(h);
        }
        Some((rows, diag, bl, bh, same))
    };
    let Some((rows, diag, bl, bh, same)) = build() else {
        return Ok(None);
    };
    let lower = ExactSystem {
        rows: rows.clone(),
        diag: diag.clone(),
        b: bl,
    };
    let solve = |sys: ExactSystem| match exact::solve(sys, Some(budget), stop) {
        Ok(x) => Ok(Some(x)),
        Err(ExactFailure::Budget | ExactFailure::Singular) => Ok(None),
        Err(ExactFailure::Interrupted(e)) => Err(e),
    };
    let Some(xl) = solve(lower)? else {
        return Ok(None);
    };
    if same {
        return Ok(Some((xl.clone(), xl)));
    }
    let upper = ExactSystem { rows, diag, b: bh };
    Ok(solve(upper)?.map(|xh| (xl, xh)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A random block of `m` states (chained `i → i+1`, 0–2 more successors inside, a
    /// self-loop, an exit to two outside states and a constant), followed by the two outside
    /// states (no rows of their own). Returns the system and the outside bounds.
    fn random_block(seed: u64, m: usize, stiff: bool) -> (System, Vec<f64>, Vec<f64>) {
        let mut r = seed | 1;
        let mut next = move || {
            r ^= r >> 12;
            r ^= r << 25;
            r ^= r >> 27;
            (r.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        };
        let n = m + 2;
        let mut sys = System::empty(n);
        for i in 0..m {
            let mut w: Vec<(u32, f64)> = Vec::new();
            w.push(((i + 1) as u32, 0.2 + next()));
            for _ in 0..(next() * 2.5) as usize {
                w.push(((next() * m as f64) as u32, 0.05 + next()));
            }
            // Exits: rare in a stiff block (long stays, wide conditioning).
            let exit = if stiff { 1e-4 * next() } else { 0.3 * next() };
            if i + 1 == m || next() < 0.5 {
                w.push((m as u32 + (next() < 0.5) as u32, exit + 1e-6));
            }
            let self_loop = next() * 0.5;
            let total: f64 = w.iter().map(|x| x.1).sum::<f64>() + self_loop;
            let scale = (1.0 - next() * 0.1 * (!stiff) as u8 as f64) / total;
            sys.diag[i] = self_loop * scale;
            for (j, v) in w {
                if j as usize == i {
                    sys.diag[i] += v * scale;
                } else {
                    sys.col.push(j);
                    sys.val.push(v * scale);
                }
            }
            sys.b[i] = next() * 0.01;
            sys.ptr.push(sys.col.len() as u32);
            sys.inv[i] = 1.0 / (1.0 - sys.diag[i]);
        }
        sys.ptr.push(sys.col.len() as u32);
        sys.ptr.push(sys.col.len() as u32);
        let a = next();
        let mut lo = vec![0.0; n];
        let mut hi = vec![f64::INFINITY; n];
        lo[m] = a;
        hi[m] = a + next() * 1e-3;
        lo[m + 1] = 2.0 * a;
        hi[m + 1] = 2.0 * a;
        (sys, lo, hi)
    }

    /// The exact solutions of the block with the outside states at `lo` and at `hi`, in one
    /// elimination: each row of `I − A` and its two right-hand sides scaled to integers, then
    /// fraction-free (Bareiss) Gaussian elimination with both sides carried along, and
    /// integer back-substitution (`det · x` is an integer vector by Cramer's rule). Dense and
    /// independent of the paths under test and of [`exact::solve`].
    fn exact_solutions(
        sys: &System,
        m: usize,
        lo: &[f64],
        hi: &[f64],
    ) -> (Vec<BigRational>, Vec<BigRational>) {
        use num_bigint::BigInt;
        use num_traits::One;
        let q = |x: f64| exact::to_rational(x).unwrap();
        // Row i: the m coefficients of I − A, then the two right-hand sides.
        let mut a: Vec<Vec<BigInt>> = Vec::with_capacity(m);
        for i in 0..m {
            let mut row = vec![BigRational::zero(); m + 2];
            row[i] = BigRational::one() - q(sys.diag[i]);
            row[m] = q(sys.b[i]);
            row[m + 1] = q(sys.b[i]);
            for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
                let (j, v) = (sys.col[e] as usize, q(sys.val[e]));
                if j < m {
                    row[j] -= v;
                } else {
                    row[m] += &v * q(lo[j]);
                    row[m + 1] += v * q(hi[j]);
                }
            }
            // The least common multiple of the row's denominators.
            let mut scale = BigInt::one();
            for v in &row {
                scale *= (v * BigRational::from_integer(scale.clone())).denom();
            }
            a.push(
                row.into_iter()
                    .map(|v| (v * BigRational::from_integer(scale.clone())).to_integer())
                    .collect(),
            );
        }
        let mut prev = BigInt::one();
        for k in 0..m {
            let p = (k..m)
                .find(|&i| !a[i][k].is_zero())
                .expect("a singular block");
            a.swap(k, p);
            let (top, rest) = a.split_at_mut(k + 1);
            let pivot = &top[k];
            for row in rest.iter_mut() {
                let f = std::mem::take(&mut row[k]);
                for j in k + 1..m + 2 {
                    if f.is_zero() {
                        if !row[j].is_zero() {
                            row[j] = &pivot[k] * &row[j] / &prev;
                        }
                    } else {
                        row[j] = (&pivot[k] * &row[j] - &f * &pivot[j]) / &prev;
                    }
                }
            }
            prev = a[k][k].clone();
        }
        // `prev` is the determinant (up to the sign of the row swaps, which cancels).
        let det = BigRational::from_integer(prev.clone());
        let mut y = vec![vec![BigInt::zero(); m]; 2];
        for (side, y) in y.iter_mut().enumerate() {
            for i in (0..m).rev() {
                let mut v = &prev * &a[i][m + side];
                for j in i + 1..m {
                    v -= &a[i][j] * &y[j];
                }
                y[i] = v / &a[i][i];
            }
        }
        let mut x = y
            .into_iter()
            .map(|y| y.into_iter().map(|v| BigRational::from_integer(v) / &det));
        (x.next().unwrap().collect(), x.next().unwrap().collect())
    }

    /// Solves the random block with the given path (`None`: the default routing) and checks
    /// that stored bounds contain the exact rational solutions of both sides. Returns the
    /// outcome and kind.
    fn check_block(
        seed: u64,
        m: usize,
        stiff: bool,
        only: Option<Kind>,
    ) -> std::result::Result<(Outcome, Kind), TestCaseError> {
        let (sys, mut lo, mut hi) = random_block(seed, m, stiff);
        let block: Vec<u32> = (0..m as u32).collect();
        let mut scratch = Scratch::new(m + 2);
        let (outcome, kind) = solve_block(
            &sys,
            &block,
            &mut lo,
            &mut hi,
            (0.0, f64::INFINITY),
            &|l, h| h - l <= 1e-6 * l.abs(),
            &mut scratch,
            only,
        );
        let (xl, xh) = exact_solutions(&sys, m, &lo, &hi);
        for k in 0..m {
            let (l, h) = (
                exact::to_rational(lo[k]).unwrap(),
                exact::to_rational(hi[k]).unwrap(),
            );
            prop_assert!(
                l <= xl[k],
                "lower bound {} above the exact {} at {k}",
                lo[k],
                exact::to_f64(&xl[k])
            );
            prop_assert!(
                xh[k] <= h,
                "upper bound {} below the exact {} at {k}",
                hi[k],
                exact::to_f64(&xh[k])
            );
        }
        prop_assert!(scratch.pos.iter().all(|&p| p == u32::MAX));
        Ok((outcome, kind))
    }

    /// [`check_block`] with the path `kind` alone: it is the one used, and it certifies.
    fn certifies_alone(
        seed: u64,
        m: usize,
        stiff: bool,
        kind: Kind,
    ) -> std::result::Result<(), TestCaseError> {
        let (outcome, used) = check_block(seed, m, stiff, Some(kind))?;
        prop_assert_eq!(used, kind);
        prop_assert!(
            outcome != Outcome::Failed,
            "no certificate for a regular block"
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The certified direct path (dense LU up to 64 states, the multifrontal LU above,
        /// faer's sparse LU when that fails) gives bounds that contain the exact rational
        /// solution, for the lower and the upper outside values, on random blocks,
        /// well-conditioned and stiff.
        #[test]
        fn certified_bounds_contain_the_exact_solution(
            seed in any::<u64>(), m in 2usize..96, stiff in any::<bool>()
        ) {
            let (outcome, kind) = check_block(seed, m, stiff, None)?;
            if m <= DENSE_MAX {
                prop_assert_eq!(kind, Kind::Dense);
            } else {
                prop_assert!(kind == Kind::Multifrontal || kind == Kind::Sparse);
            }
            prop_assert!(outcome != Outcome::Failed, "no certificate for a regular block");
        }

        /// faer's sparse LU alone (the fallback of the multifrontal path), on the same blocks.
        #[test]
        fn faer_lu_bounds_contain_the_exact_solution(
            seed in any::<u64>(), m in 2usize..96, stiff in any::<bool>()
        ) {
            certifies_alone(seed, m, stiff, Kind::Sparse)?;
        }

        /// The multifrontal LU alone (nested dissection, `f32` factors, refinement), forced
        /// onto small blocks, well-conditioned and stiff: whatever it stores contains the exact
        /// solution, and it certifies every block. Up to 111 states (the path's own range
        /// starts at 65): the exact rational oracle's cost grows with about the fourth power
        /// of the block, and blocks up to 159 made this one test a minute of the suite.
        #[test]
        fn multifrontal_bounds_contain_the_exact_solution(
            seed in any::<u64>(), m in 2usize..112, stiff in any::<bool>()
        ) {
            certifies_alone(seed, m, stiff, Kind::Multifrontal)?;
        }
    }

    #[test]
    fn a_singular_block_gives_no_bounds() {
        // Two states that only swap: I − A is singular.
        let sys = System {
            ptr: vec![0, 1, 2],
            col: vec![1, 0],
            val: vec![1.0, 1.0],
            inv: vec![1.0, 1.0],
            diag: vec![0.0, 0.0],
            b: vec![0.0, 0.0],
        };
        let (mut lo, mut hi) = (vec![0.0; 2], vec![1.0; 2]);
        let mut scratch = Scratch::new(2);
        let (outcome, _) = solve_block(
            &sys,
            &[0, 1],
            &mut lo,
            &mut hi,
            (0.0, 1.0),
            &|_, _| true,
            &mut scratch,
            None,
        );
        assert_eq!(outcome, Outcome::Failed);
        assert_eq!((lo, hi), (vec![0.0; 2], vec![1.0; 2]));
    }
}
