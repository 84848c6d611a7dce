//! A multifrontal sparse LU of `M = I − A_BB` without pivoting, in a nested-dissection order,
//! with its factors stored in `f32`: the large-block path of [`crate::direct`].
//!
//! Why no pivoting: `A` is non-negative and substochastic (or its transpose is), so `M` is a
//! weakly diagonally dominant M-matrix, non-singular on an SCC with an exit. Elimination in any
//! symmetric order keeps every Schur complement an M-matrix (positive pivots, growth at most
//! 2), so the pivots can be chosen for fill alone, from the pattern of `M + Mᵀ`: its Cholesky
//! structure (faer's supernodal symbolic analysis) is the structure of `L` and of `Uᵀ`. A zero
//! or non-finite pivot (rounding in a nearly singular block) makes the factorisation fail, and
//! the caller falls back to faer's pivoting LU.
//!
//! Why `f32` factors: a 701×701 grid in the best ordering has about 40 M entries in `L` and `U`
//! together (320 MB in `f64`, more than everything else the check holds). The fronts are
//! factorised in `f64` and only rounded when stored, so the factors are those of `M + E` with
//! `|E| ≲ 2⁻²⁴·|L|·|U|`; [`refine`] recovers `f64` accuracy by iterative refinement (residual in
//! `f64` from the exact rows of `M`, correction with the `f32` factors), which converges roughly
//! while `2⁻²⁴·‖M⁻¹‖·‖|L||U|‖ < 1`. Whatever the solutions' accuracy, the certificate of
//! [`crate::direct`] (one verification pass with rounding-error bounds) decides what is sound.
//!
//! The ordering is nested dissection by breadth-first level structures ([`nested_dissection`]):
//! a middle level of a search from a pseudo-peripheral state separates the levels before it
//! from those after. On the walk2d grid (faer's supernodes, relaxed as by default) it gives an
//! eighth less fill and 40 % fewer flops than AMD (40 M entries and 9 GFlop instead of 46 M and
//! 15 GFlop); the caller keeps the ordering only when its fill and flops are affordable.

use crate::linear::System;
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, Par};

/// Regions of at most this many states are not dissected further (ordered as found). Smaller
/// leaves give less fill on grids (walk2d: 39.0 M entries at 1, 39.6 M at 4, 40.3 M at 8,
/// 41.2 M at 16, 60.5 M at 256), at the price of more searches and more, smaller supernodes
/// (153,576 at 1, 112,372 at 8); 8 is within 4 % of the least fill.
const ND_LEAF: usize = 8;
/// The pseudo-peripheral start of a level structure: at most this many searches, each from
/// the farthest state of the previous one, stopping when the depth no longer grows.
const PERIPHERAL_SEARCHES: usize = 4;
/// Columns per panel of the blocked front factorisation: the trailing update of each panel is
/// one matrix product (faer's kernels), large enough to run near their peak.
const PANEL: usize = 32;
/// Refinement steps at most for a solution (each one residual in `f64` and one solve with the
/// factors; the error shrinks by about `2⁻²⁴·κ` per step, so a handful reach `f64` accuracy
/// for any block the `f32` factors can serve at all).
const MAX_REFINE: usize = 12;

/// The nested-dissection order of the graph with symmetric adjacency `ptr`/`adj` (no loops):
/// `order[new] = old`.
pub(crate) fn nested_dissection(ptr: &[u32], adj: &[u32]) -> Vec<u32> {
    let m = ptr.len() - 1;
    let mut order: Vec<u32> = Vec::with_capacity(m);
    // The states of every pending region are a range of `nodes`; a region's members carry its
    // id in `region` (separators carry `SEP`, never a region's id).
    const SEP: u32 = u32::MAX;
    let mut nodes: Vec<u32> = (0..m as u32).collect();
    let mut region = vec![0u32; m];
    let mut level = vec![u32::MAX; m];
    let mut queue: Vec<u32> = Vec::with_capacity(m);
    let mut tmp: Vec<u32> = Vec::with_capacity(m);
    let mut counts: Vec<usize> = Vec::new();
    let mut next_id = 1u32;
    enum Task {
        Split(usize, usize, u32),
        Emit(usize, usize),
    }
    let mut tasks = vec![Task::Split(0, m, 0)];
    // Breadth-first search from `start` within region `id`; levels in `level` (reset by the
    // caller), visit order in `queue`.
    let bfs = |start: u32, id: u32, level: &mut [u32], region: &[u32], queue: &mut Vec<u32>| {
        queue.clear();
        queue.push(start);
        level[start as usize] = 0;
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head] as usize;
            head += 1;
            let next = level[v] + 1;
            for &w in &adj[ptr[v] as usize..ptr[v + 1] as usize] {
                let w = w as usize;
                if region[w] == id && level[w] == u32::MAX {
                    level[w] = next;
                    queue.push(w as u32);
                }
            }
        }
    };
    while let Some(task) = tasks.pop() {
        let (lo, hi, id) = match task {
            Task::Emit(lo, hi) => {
                order.extend_from_slice(&nodes[lo..hi]);
                continue;
            }
            Task::Split(lo, hi, id) => (lo, hi, id),
        };
        let len = hi - lo;
        if len <= ND_LEAF {
            order.extend_from_slice(&nodes[lo..hi]);
            continue;
        }
        let reset = |level: &mut [u32], nodes: &[u32]| {
            for &v in &nodes[lo..hi] {
                level[v as usize] = u32::MAX;
            }
        };
        reset(&mut level, &nodes);
        bfs(nodes[lo], id, &mut level, &region, &mut queue);
        if queue.len() < len {
            // Disconnected: the component found, then the rest, as two regions.
            let (a, b) = (next_id, next_id + 1);
            next_id += 2;
            tmp.clear();
            tmp.extend_from_slice(&queue);
            for &v in &nodes[lo..hi] {
                if level[v as usize] == u32::MAX {
                    tmp.push(v);
                }
            }
            nodes[lo..hi].copy_from_slice(&tmp);
            let mid = lo + queue.len();
            for &v in &nodes[lo..mid] {
                region[v as usize] = a;
            }
            for &v in &nodes[mid..hi] {
                region[v as usize] = b;
            }
            tasks.push(Task::Split(mid, hi, b));
            tasks.push(Task::Split(lo, mid, a));
            continue;
        }
        // A pseudo-peripheral start: search again from the farthest state while the depth grows.
        let mut far = queue[queue.len() - 1];
        let mut depth = level[far as usize];
        for _ in 0..PERIPHERAL_SEARCHES {
            reset(&mut level, &nodes);
            bfs(far, id, &mut level, &region, &mut queue);
            let f = queue[queue.len() - 1];
            let d = level[f as usize];
            if d <= depth {
                break;
            }
            depth = d;
            far = f;
        }
        // The level structure of the last search (from `far`, or the one before it: either is
        // a level structure of the whole region, which is all the split needs).
        let levels = level[queue[queue.len() - 1] as usize] as usize + 1;
        counts.clear();
        counts.resize(levels, 0);
        for &v in &nodes[lo..hi] {
            counts[level[v as usize] as usize] += 1;
        }
        // The separator: the level where half the region is reached.
        let mut acc = 0;
        let mut sep = 0;
        while sep < levels {
            acc += counts[sep];
            if 2 * acc >= len {
                break;
            }
            sep += 1;
        }
        let sep = sep as u32;
        let (a, b) = (next_id, next_id + 1);
        next_id += 2;
        tmp.clear();
        for pass in 0..3 {
            for &v in &nodes[lo..hi] {
                let l = level[v as usize];
                let class = match l.cmp(&sep) {
                    std::cmp::Ordering::Less => 0,
                    std::cmp::Ordering::Greater => 1,
                    std::cmp::Ordering::Equal => 2,
                };
                if class == pass {
                    tmp.push(v);
                }
            }
        }
        nodes[lo..hi].copy_from_slice(&tmp);
        let na = counts[..sep as usize].iter().sum::<usize>();
        let ns = counts[sep as usize];
        let (ma, mb) = (lo + na, hi - ns);
        for &v in &nodes[lo..ma] {
            region[v as usize] = a;
        }
        for &v in &nodes[ma..mb] {
            region[v as usize] = b;
        }
        for &v in &nodes[mb..hi] {
            region[v as usize] = SEP;
        }
        tasks.push(Task::Emit(mb, hi));
        tasks.push(Task::Split(ma, mb, b));
        tasks.push(Task::Split(lo, ma, a));
    }
    order
}

/// The symbolic factorisation: the order and the supernodes.
pub(crate) struct Symbolic {
    /// `perm[new] = old` (block positions) and its inverse.
    perm: Vec<u32>,
    inv: Vec<u32>,
    /// Supernode `s` eliminates the columns `begin[s]..begin[s + 1]`; the rows below them
    /// are `pattern[pat_ptr[s]..pat_ptr[s + 1]]` (sorted, all `≥ begin[s + 1]`).
    begin: Vec<u32>,
    pat_ptr: Vec<usize>,
    pattern: Vec<u32>,
    /// Offsets of each supernode's `L` block (`(p + r) × p`) and `U₁₂` block (`p × r`).
    l_ptr: Vec<usize>,
    u_ptr: Vec<usize>,
    /// The supernodes in a postorder of the assembly tree, and how many children each has.
    post: Vec<u32>,
    children: Vec<u32>,
    /// The largest front (`p + r`).
    max_front: usize,
    /// Floating-point operations of the numeric factorisation.
    pub flops: f64,
}

impl Symbolic {
    /// Entries of the factors `L` and `U` (the storage of the numeric factorisation).
    pub fn entries(&self) -> usize {
        self.l_ptr[self.l_ptr.len() - 1] + self.u_ptr[self.u_ptr.len() - 1]
    }
}

/// The symmetric pattern of `M + Mᵀ` of `block` without the diagonal, as adjacency lists over
/// block positions, and the number of entries of `M` off the diagonal.
pub(crate) fn block_graph(sys: &System, block: &[u32], pos: &[u32]) -> (Vec<u32>, Vec<u32>, usize) {
    let m = block.len();
    let mut deg = vec![0u32; m + 1];
    let mut entries = 0;
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let p = pos[sys.col[e] as usize];
            if p != u32::MAX && p as usize != k {
                deg[k + 1] += 1;
                deg[p as usize + 1] += 1;
                entries += 1;
            }
        }
    }
    for k in 0..m {
        deg[k + 1] += deg[k];
    }
    let mut fill: Vec<u32> = deg[..m].to_vec();
    let mut adj = vec![0u32; deg[m] as usize];
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let p = pos[sys.col[e] as usize];
            if p != u32::MAX && p as usize != k {
                adj[fill[k] as usize] = p;
                fill[k] += 1;
                adj[fill[p as usize] as usize] = k as u32;
                fill[p as usize] += 1;
            }
        }
    }
    drop(fill);
    // Sort and deduplicate every list (in place, compacting).
    let mut out = 0usize;
    let mut start = 0usize;
    for k in 0..m {
        let end = deg[k + 1] as usize;
        let list = &mut adj[start..end];
        list.sort_unstable();
        let mut last = u32::MAX;
        let begin = out;
        for t in start..end {
            let v = adj[t];
            if v != last {
                adj[out] = v;
                out += 1;
                last = v;
            }
        }
        start = end;
        deg[k] = begin as u32;
    }
    deg[m] = out as u32;
    adj.truncate(out);
    adj.shrink_to_fit();
    (deg, adj, entries)
}

/// Symbolic analysis of the pattern `ptr`/`adj` (from [`block_graph`]) in the order `perm`
/// (`perm[new] = old`); `None` when faer's analysis fails.
pub(crate) fn analyse(ptr: &[u32], adj: &[u32], perm: Vec<u32>) -> Option<Symbolic> {
    use faer::perm::PermRef;
    use faer::sparse::linalg::cholesky::{
        factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering,
    };
    use faer::sparse::linalg::SupernodalThreshold;
    use faer::sparse::SymbolicSparseColMatRef;
    let m = ptr.len() - 1;
    let mut inv = vec![0u32; m];
    for (new, &old) in perm.iter().enumerate() {
        inv[old as usize] = new as u32;
    }
    // The lower triangle (with the diagonal), column by column, in the original numbering.
    let mut col_ptr: Vec<u32> = Vec::with_capacity(m + 1);
    let mut row_idx: Vec<u32> = Vec::with_capacity(m + adj.len() / 2);
    col_ptr.push(0);
    for j in 0..m {
        row_idx.push(j as u32);
        for &i in &adj[ptr[j] as usize..ptr[j + 1] as usize] {
            if i as usize > j {
                row_idx.push(i);
            }
        }
        col_ptr.push(u32::try_from(row_idx.len()).ok()?);
    }
    let sym = SymbolicSparseColMatRef::new_checked(m, m, &col_ptr, None, &row_idx);
    let params = CholeskySymbolicParams {
        supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
        ..Default::default()
    };
    let chol = factorize_symbolic_cholesky(
        sym,
        faer::Side::Lower,
        SymmetricOrdering::Custom(PermRef::new_checked(&perm, &inv, m)),
        params,
    )
    .ok()?;
    drop((col_ptr, row_idx));
    let (fwd, back) = chol.perm()?.arrays();
    let (perm, inv) = (fwd.to_vec(), back.to_vec());
    let SymbolicCholeskyRaw::Supernodal(sn) = chol.raw() else {
        return None;
    };
    let ns = sn.n_supernodes();
    let mut begin: Vec<u32> = Vec::with_capacity(ns + 1);
    let mut pat_ptr: Vec<usize> = Vec::with_capacity(ns + 1);
    let mut pattern: Vec<u32> = Vec::new();
    let mut l_ptr: Vec<usize> = Vec::with_capacity(ns + 1);
    let mut u_ptr: Vec<usize> = Vec::with_capacity(ns + 1);
    let (mut lp, mut up) = (0usize, 0usize);
    let mut max_front = 0;
    let mut flops = 0.0;
    pat_ptr.push(0);
    l_ptr.push(0);
    u_ptr.push(0);
    for s in 0..ns {
        let b = sn.supernode_begin()[s] as usize;
        let e = sn.supernode_end()[s] as usize;
        begin.push(b as u32);
        let pat = sn.supernode(s).pattern();
        pattern.extend_from_slice(pat);
        pat_ptr.push(pattern.len());
        let (p, r) = (e - b, pat.len());
        lp += (p + r) * p;
        up += p * r;
        l_ptr.push(lp);
        u_ptr.push(up);
        max_front = max_front.max(p + r);
        let (pf, rf) = (p as f64, r as f64);
        flops += 2.0 / 3.0 * pf * pf * pf + 2.0 * pf * pf * rf + 2.0 * pf * rf * rf;
    }
    begin.push(m as u32);
    drop(chol);
    // The assembly tree: the parent of a supernode owns the first row of its pattern.
    let mut snode_of = vec![0u32; m];
    for s in 0..ns {
        for c in begin[s]..begin[s + 1] {
            snode_of[c as usize] = s as u32;
        }
    }
    let mut first_child = vec![u32::MAX; ns];
    let mut sibling = vec![u32::MAX; ns];
    let mut children = vec![0u32; ns];
    let mut roots: Vec<u32> = Vec::new();
    for s in (0..ns).rev() {
        match pattern
            .get(pat_ptr[s])
            .filter(|_| pat_ptr[s] < pat_ptr[s + 1])
        {
            Some(&row) => {
                let parent = snode_of[row as usize] as usize;
                sibling[s] = first_child[parent];
                first_child[parent] = s as u32;
                children[parent] += 1;
            }
            None => roots.push(s as u32),
        }
    }
    drop(snode_of);
    // Postorder by an explicit depth-first search.
    let mut post: Vec<u32> = Vec::with_capacity(ns);
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for &r in roots.iter().rev() {
        stack.push((r, first_child[r as usize]));
        while let Some(top) = stack.last_mut() {
            let (s, child) = *top;
            if child == u32::MAX {
                post.push(s);
                stack.pop();
            } else {
                top.1 = sibling[child as usize];
                stack.push((child, first_child[child as usize]));
            }
        }
    }
    if post.len() != ns {
        return None;
    }
    Some(Symbolic {
        perm,
        inv,
        begin,
        pat_ptr,
        pattern,
        l_ptr,
        u_ptr,
        post,
        children,
        max_front,
        flops,
    })
}

/// The numeric factors: per supernode, `L` (unit lower, with `U₁₁` above its diagonal) as a
/// column-major `(p + r) × p` block and `U₁₂` as a column-major `p × r` block, in `f32`; the
/// pivots (the diagonal of `U`) in `f64`.
pub(crate) struct Factor {
    sym: Symbolic,
    l: Vec<f32>,
    u: Vec<f32>,
    pivot: Vec<f64>,
}

/// Calls `f(r, c, a)` for every entry `a = A[i][j]` of `block` (positions `pos`) with both
/// ends in the block, in the numbering `r`, `c` of `sym`, row by row in the block's order.
#[inline]
fn for_each_entry(
    sys: &System,
    block: &[u32],
    pos: &[u32],
    sym: &Symbolic,
    mut f: impl FnMut(u32, u32, f64),
) {
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        let r = sym.inv[k];
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let p = pos[sys.col[e] as usize];
            if p != u32::MAX {
                f(r, sym.inv[p as usize], sys.val[e]);
            }
        }
    }
}

/// Factorises `M = I − A_BB` of `block` (positions `pos`) in the order of `sym`; `None` when
/// a pivot is zero or not finite, or an entry falls outside the symbolic structure.
pub(crate) fn factorize(sys: &System, block: &[u32], pos: &[u32], sym: Symbolic) -> Option<Factor> {
    let m = block.len();
    // The entries of M in the new numbering, each filed under the smaller of its row and
    // column (the supernode that assembles it): the other index, with the top bit set for an
    // entry of the row (upper triangle), clear for one of the column (lower triangle).
    const UPPER: u32 = 1 << 31;
    if m >= UPPER as usize {
        return None;
    }
    let mut own_ptr = vec![0u32; m + 1];
    let mut diag = vec![0.0f64; m];
    for (k, &i) in block.iter().enumerate() {
        diag[sym.inv[k] as usize] = 1.0 - sys.diag[i as usize];
    }
    for_each_entry(sys, block, pos, &sym, |r, c, v| {
        if c == r {
            diag[r as usize] -= v;
        } else {
            own_ptr[r.min(c) as usize + 1] += 1;
        }
    });
    for k in 0..m {
        own_ptr[k + 1] += own_ptr[k];
    }
    let total = own_ptr[m] as usize;
    let mut own_idx = vec![0u32; total];
    let mut own_val = vec![0.0f64; total];
    {
        let mut fill: Vec<u32> = own_ptr[..m].to_vec();
        for_each_entry(sys, block, pos, &sym, |r, c, v| {
            if c == r {
                return;
            }
            let (owner, tag) = if r < c { (r, c | UPPER) } else { (c, r) };
            let at = fill[owner as usize] as usize;
            own_idx[at] = tag;
            own_val[at] = -v;
            fill[owner as usize] += 1;
        });
    }
    let mut l = Vec::new();
    let mut u = Vec::new();
    l.try_reserve_exact(sym.l_ptr[sym.l_ptr.len() - 1]).ok()?;
    u.try_reserve_exact(sym.u_ptr[sym.u_ptr.len() - 1]).ok()?;
    l.resize(sym.l_ptr[sym.l_ptr.len() - 1], 0.0f32);
    u.resize(sym.u_ptr[sym.u_ptr.len() - 1], 0.0f32);
    let mut pivot = vec![0.0f64; m];
    // The front, the local position of every global row in the current front (valid where
    // `stamp` is the current supernode), and the update matrices of the supernodes whose
    // parent is not factorised yet (a stack, in postorder: a supernode's children are on top).
    let mut front: Vec<f64> = Vec::new();
    let mut rel = vec![0u32; m];
    let mut stamp = vec![u32::MAX; m];
    let mut updates: Vec<f64> = Vec::new();
    let mut update_of: Vec<(u32, usize)> = Vec::new();
    let mut local: Vec<u32> = Vec::with_capacity(sym.max_front);
    for &s in &sym.post {
        let s = s as usize;
        let b = sym.begin[s] as usize;
        let p = sym.begin[s + 1] as usize - b;
        let pat = &sym.pattern[sym.pat_ptr[s]..sym.pat_ptr[s + 1]];
        let r = pat.len();
        let nf = p + r;
        front.clear();
        front.resize(nf * nf, 0.0);
        for j in 0..p {
            rel[b + j] = j as u32;
            stamp[b + j] = s as u32;
        }
        for (t, &row) in pat.iter().enumerate() {
            rel[row as usize] = (p + t) as u32;
            stamp[row as usize] = s as u32;
        }
        // The original entries.
        for j in 0..p {
            let col = b + j;
            front[j * nf + j] += diag[col];
            for e in own_ptr[col] as usize..own_ptr[col + 1] as usize {
                let tag = own_idx[e];
                let other = (tag & !UPPER) as usize;
                if stamp[other] != s as u32 {
                    return None;
                }
                let o = rel[other] as usize;
                if tag & UPPER != 0 {
                    front[o * nf + j] += own_val[e]; // row `col`, column `other`
                } else {
                    front[j * nf + o] += own_val[e]; // row `other`, column `col`
                }
            }
        }
        // The children's updates (extend-add), from the top of the stack.
        let nc = sym.children[s] as usize;
        let first = update_of.len().checked_sub(nc)?;
        for &(c, at) in &update_of[first..] {
            let c = c as usize;
            let cpat = &sym.pattern[sym.pat_ptr[c]..sym.pat_ptr[c + 1]];
            let rc = cpat.len();
            local.clear();
            for &row in cpat {
                if stamp[row as usize] != s as u32 {
                    return None;
                }
                local.push(rel[row as usize]);
            }
            let upd = &updates[at..at + rc * rc];
            for (cj, &fj) in local.iter().enumerate() {
                let dst = &mut front[fj as usize * nf..(fj as usize + 1) * nf];
                for (&fi, &v) in local.iter().zip(&upd[cj * rc..(cj + 1) * rc]) {
                    dst[fi as usize] += v;
                }
            }
        }
        if let Some(&(_, at)) = update_of.get(first) {
            updates.truncate(at);
        }
        update_of.truncate(first);
        if !partial_lu(&mut front, nf, p) {
            return None;
        }
        // Store the factors, push the update.
        let lb = &mut l[sym.l_ptr[s]..sym.l_ptr[s + 1]];
        for (dst, &src) in lb.iter_mut().zip(&front[..nf * p]) {
            *dst = src as f32;
        }
        for j in 0..p {
            pivot[b + j] = front[j * nf + j];
        }
        let ub = &mut u[sym.u_ptr[s]..sym.u_ptr[s + 1]];
        for t in 0..r {
            for i in 0..p {
                ub[t * p + i] = front[(p + t) * nf + i] as f32;
            }
        }
        if r > 0 {
            let at = updates.len();
            for t in 0..r {
                updates.extend_from_slice(&front[(p + t) * nf + p..(p + t + 1) * nf]);
            }
            update_of.push((s as u32, at));
        }
    }
    Some(Factor { sym, l, u, pivot })
}

/// The first `p` steps of an LU factorisation without pivoting of the column-major `nf × nf`
/// front `f`, in place (multipliers below the diagonal, `U` on and above it, the Schur
/// complement in the trailing block); `false` on a zero or non-finite pivot.
fn partial_lu(f: &mut [f64], nf: usize, p: usize) -> bool {
    let mut k0 = 0;
    while k0 < p {
        let k1 = (k0 + PANEL).min(p);
        for k in k0..k1 {
            let piv = f[k * nf + k];
            if piv == 0.0 || !piv.is_finite() {
                return false;
            }
            let inv = 1.0 / piv;
            let (left, right) = f.split_at_mut((k + 1) * nf);
            let colk = &mut left[k * nf + k + 1..(k + 1) * nf];
            for v in colk.iter_mut() {
                *v *= inv;
            }
            for j in k + 1..k1 {
                let col = &mut right[(j - k - 1) * nf..(j - k) * nf];
                let ukj = col[k];
                if ukj != 0.0 {
                    for (x, &lv) in col[k + 1..].iter_mut().zip(colk.iter()) {
                        *x -= lv * ukj;
                    }
                }
            }
        }
        if k1 < nf {
            let w = k1 - k0;
            let fm = MatMut::from_column_major_slice_mut(f, nf, nf);
            let (tl, tr, bl, br) = fm.split_at_mut(k1, k1);
            let l11 = tl.rb().submatrix(k0, k0, w, w);
            let mut u12 = tr.subrows_mut(k0, w);
            solve_unit_lower_triangular_in_place(l11, u12.rb_mut(), Par::Seq);
            let l21 = bl.rb().subcols(k0, w);
            matmul(br, Accum::Add, l21, u12.rb(), -1.0, Par::Seq);
        }
        k0 = k1;
    }
    f.iter().all(|v| v.is_finite())
}

impl Factor {
    /// Solves `M·X = R` for the `cols` columns of `rhs` (each of length `m`, column after
    /// column), in place; `work` is scratch. `false` when a value is not finite.
    pub fn solve(&self, rhs: &mut [f64], cols: usize, work: &mut Vec<f64>) -> bool {
        let sym = &self.sym;
        let m = sym.perm.len();
        work.clear();
        work.resize(m * cols, 0.0);
        // Permuted, interleaved: work[new * cols + c].
        for (new, &old) in sym.perm.iter().enumerate() {
            for c in 0..cols {
                work[new * cols + c] = rhs[c * m + old as usize];
            }
        }
        let w = &mut work[..];
        let ns = sym.begin.len() - 1;
        // Forward: L·Y = R.
        for s in 0..ns {
            let b = sym.begin[s] as usize;
            let p = sym.begin[s + 1] as usize - b;
            let pat = &sym.pattern[sym.pat_ptr[s]..sym.pat_ptr[s + 1]];
            let nf = p + pat.len();
            let lb = &self.l[sym.l_ptr[s]..sym.l_ptr[s + 1]];
            for j in 0..p {
                let col = &lb[j * nf..(j + 1) * nf];
                for c in 0..cols {
                    let yj = w[(b + j) * cols + c];
                    if yj == 0.0 {
                        continue;
                    }
                    for i in j + 1..p {
                        w[(b + i) * cols + c] -= col[i] as f64 * yj;
                    }
                    for (t, &row) in pat.iter().enumerate() {
                        w[row as usize * cols + c] -= col[p + t] as f64 * yj;
                    }
                }
            }
        }
        // Backward: U·X = Y.
        for s in (0..ns).rev() {
            let b = sym.begin[s] as usize;
            let p = sym.begin[s + 1] as usize - b;
            let pat = &sym.pattern[sym.pat_ptr[s]..sym.pat_ptr[s + 1]];
            let nf = p + pat.len();
            let lb = &self.l[sym.l_ptr[s]..sym.l_ptr[s + 1]];
            let ub = &self.u[sym.u_ptr[s]..sym.u_ptr[s + 1]];
            for (t, &row) in pat.iter().enumerate() {
                let col = &ub[t * p..(t + 1) * p];
                for c in 0..cols {
                    let xr = w[row as usize * cols + c];
                    if xr == 0.0 {
                        continue;
                    }
                    for (i, &v) in col.iter().enumerate() {
                        w[(b + i) * cols + c] -= v as f64 * xr;
                    }
                }
            }
            for j in (0..p).rev() {
                let col = &lb[j * nf..(j + 1) * nf];
                for c in 0..cols {
                    let xj = w[(b + j) * cols + c] / self.pivot[b + j];
                    w[(b + j) * cols + c] = xj;
                    if xj == 0.0 {
                        continue;
                    }
                    for i in 0..j {
                        w[(b + i) * cols + c] -= col[i] as f64 * xj;
                    }
                }
            }
        }
        let mut finite = true;
        for (new, &old) in sym.perm.iter().enumerate() {
            for c in 0..cols {
                let v = w[new * cols + c];
                finite &= v.is_finite();
                rhs[c * m + old as usize] = v;
            }
        }
        finite
    }
}

/// `r = b − M·x` for the rows of `block`.
fn residual(sys: &System, block: &[u32], pos: &[u32], x: &[f64], b: &[f64], r: &mut [f64]) {
    for (k, &i) in block.iter().enumerate() {
        let i = i as usize;
        let mut s = b[k] - (1.0 - sys.diag[i]) * x[k];
        for e in sys.ptr[i] as usize..sys.ptr[i + 1] as usize {
            let p = pos[sys.col[e] as usize];
            if p != u32::MAX {
                s += sys.val[e] * x[p as usize];
            }
        }
        r[k] = s;
    }
}

/// Solves `M·X = B` for the columns of `x` (on entry `B`, each of length `m`) with the factors
/// and iterative refinement in `f64`: corrections from the residuals until they no longer
/// shrink (or are below a few ulps of every entry), at most [`MAX_REFINE`] steps (at most
/// `steps` when given). `b`, `r` and `work` are scratch. `false` when a value is not finite.
#[allow(clippy::too_many_arguments)]
pub(crate) fn refine(
    f: &Factor,
    sys: &System,
    block: &[u32],
    pos: &[u32],
    x: &mut [f64],
    steps: Option<usize>,
    b: &mut Vec<f64>,
    r: &mut Vec<f64>,
    work: &mut Vec<f64>,
) -> bool {
    let m = block.len();
    let cols = x.len() / m.max(1);
    b.clear();
    b.extend_from_slice(x);
    if !f.solve(x, cols, work) {
        return false;
    }
    r.clear();
    r.resize(x.len(), 0.0);
    let mut last = f64::INFINITY;
    for _ in 0..steps.unwrap_or(MAX_REFINE).min(MAX_REFINE) {
        for c in 0..cols {
            let range = c * m..(c + 1) * m;
            residual(
                sys,
                block,
                pos,
                &x[range.clone()],
                &b[range.clone()],
                &mut r[range],
            );
        }
        if !f.solve(r, cols, work) {
            return false;
        }
        // The largest correction relative to its entry (absolute where the entry is zero).
        let mut worst: f64 = 0.0;
        for (xv, &d) in x.iter_mut().zip(r.iter()) {
            let rel = if *xv != 0.0 { (d / *xv).abs() } else { d.abs() };
            worst = worst.max(rel);
            *xv += d;
        }
        if !worst.is_finite() {
            return false;
        }
        if worst <= 4.0 * f64::EPSILON || worst >= 0.5 * last {
            break;
        }
        last = worst;
    }
    x.iter().all(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interior of a `k × k` walk (the walk2d model's probabilities) as a block system:
    /// states `0..k²` inside, one absorbing goal state `k²` (east border) reached with its
    /// probability as the constant.
    fn walk(k: usize) -> System {
        let n = k * k;
        let mut sys = System::empty(n);
        for y in 0..k {
            for x in 0..k {
                for (dx, dy, p) in [(-1, 0, 0.22), (0, -1, 0.22), (0, 1, 0.26), (1, 0, 0.3)] {
                    let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                    if nx == k as i64 {
                        sys.b[y * k + x] += p;
                    } else if nx >= 0 && ny >= 0 && ny < k as i64 {
                        sys.col.push((ny as usize * k + nx as usize) as u32);
                        sys.val.push(p);
                    }
                }
                sys.ptr.push(sys.col.len() as u32);
            }
        }
        sys
    }

    fn is_permutation(order: &[u32], m: usize) -> bool {
        let mut seen = vec![false; m];
        order.len() == m
            && order
                .iter()
                .all(|&v| (v as usize) < m && !std::mem::replace(&mut seen[v as usize], true))
    }

    #[test]
    fn nested_dissection_orders_every_state_once() {
        // A grid, and a graph of three components (a path, a star, isolated states).
        let sys = walk(23);
        let block: Vec<u32> = (0..sys.n() as u32).collect();
        let (ptr, adj, _) = block_graph(&sys, &block, &block);
        assert!(is_permutation(&nested_dissection(&ptr, &adj), sys.n()));
        let mut edges: Vec<(u32, u32)> = (0..40).map(|i| (i, i + 1)).collect();
        edges.extend((42..80).map(|i| (41, i)));
        let m = 90;
        let mut lists = vec![Vec::new(); m];
        for &(a, b) in &edges {
            lists[a as usize].push(b);
            lists[b as usize].push(a);
        }
        let mut ptr = vec![0u32];
        let mut adj = Vec::new();
        for l in &lists {
            adj.extend_from_slice(l);
            ptr.push(adj.len() as u32);
        }
        assert!(is_permutation(&nested_dissection(&ptr, &adj), m));
    }

    #[test]
    fn refined_solution_of_a_grid_matches_dense_lu() {
        let k = 30;
        let sys = walk(k);
        let m = k * k;
        let block: Vec<u32> = (0..m as u32).collect();
        let (ptr, adj, _) = block_graph(&sys, &block, &block);
        let sym = analyse(&ptr, &adj, nested_dissection(&ptr, &adj)).unwrap();
        // Nested dissection on a grid: fewer entries than the dense factors by far.
        assert!(sym.entries() < m * m / 10);
        let f = factorize(&sys, &block, &block, sym).unwrap();
        let mut x = sys.b.clone();
        let (mut b, mut r, mut w) = (Vec::new(), Vec::new(), Vec::new());
        assert!(refine(
            &f, &sys, &block, &block, &mut x, None, &mut b, &mut r, &mut w
        ));
        let exact = crate::linear::lu_solve(&sys).unwrap();
        for (a, e) in x.iter().zip(&exact) {
            assert!((a - e).abs() <= 1e-12 * e.abs(), "{a} against {e}");
        }
    }

    #[test]
    fn a_grid_block_is_certified_by_the_multifrontal_path_by_default() {
        use crate::direct::{self, Kind, Outcome};
        let sys = walk(40);
        let n = sys.n();
        let block: Vec<u32> = (0..n as u32).collect();
        let (mut lo, mut hi) = (vec![0.0; n], vec![1.0; n]);
        let mut scratch = direct::Scratch::new(n);
        let (outcome, kind) = direct::solve_block(
            &sys,
            &block,
            &mut lo,
            &mut hi,
            (0.0, 1.0),
            &|l, h| h - l <= 1e-9 * l.abs(),
            &mut scratch,
            None,
        );
        assert_eq!((outcome, kind), (Outcome::Tight, Kind::Multifrontal));
        let exact = crate::linear::lu_solve(&sys).unwrap();
        for ((l, h), e) in lo.iter().zip(&hi).zip(&exact) {
            assert!(l <= h && (l - e).abs() <= 1e-9 * e && (h - e).abs() <= 1e-9 * e);
        }
    }
}
