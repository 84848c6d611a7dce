//! Graph algorithms on the CSR transition structure: strongly connected components (iterative
//! Tarjan, safe on chains of millions of states), bottom SCCs, forward/backward reachability and
//! the qualitative precomputations Prob0 / Prob1 for `φ U ψ`.
//!
//! Only entries with a strictly positive probability count as edges.

use augur_dtmc::{Matrix, StateSet};

/// The transpose of a CSR matrix, again in CSR form (row `t` lists the predecessors of `t`,
/// with the probability of the transition `s → t`).
///
/// Entries keep their values; rows of the result are sorted by column. (The same as
/// `Dtmc::transpose`, i.e. [`augur_dtmc::transpose_csr`].)
pub fn transpose(matrix: &Matrix) -> Matrix {
    augur_dtmc::transpose_csr(matrix)
}

/// The rows of a CSR matrix as raw slices: `(row pointers, column indices, values)`.
pub(crate) fn raw(matrix: &Matrix) -> (&[u32], &[u32], &[f64]) {
    (
        matrix.indptr().into_raw_storage(),
        matrix.indices(),
        matrix.data(),
    )
}

/// A strongly connected component decomposition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sccs {
    /// The SCC id of every state. Ids are in reverse topological order: if some edge leads from
    /// SCC `a` to a different SCC `b`, then `a > b` (so id 0 is a bottom SCC, and processing
    /// ids in increasing order visits successors before predecessors).
    /// States outside the considered subset (see [`scc_restricted`]) get `u32::MAX`.
    pub component: Vec<u32>,
    /// The number of SCCs.
    pub count: usize,
}

impl Sccs {
    /// The members of every SCC, indexed by SCC id, each sorted increasingly.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.count];
        for (s, &c) in self.component.iter().enumerate() {
            if c != u32::MAX {
                out[c as usize].push(s as u32);
            }
        }
        out
    }
}

/// SCC decomposition of the whole graph of `matrix` (iterative Tarjan, no recursion).
pub fn scc(matrix: &Matrix) -> Sccs {
    let (ptr, idx, val) = raw(matrix);
    tarjan(matrix.rows(), ptr, idx, Some(val), None)
}

/// SCC decomposition of the subgraph induced by `subset` (edges leaving the subset are ignored).
pub fn scc_restricted(matrix: &Matrix, subset: &StateSet) -> Sccs {
    let (ptr, idx, val) = raw(matrix);
    tarjan(matrix.rows(), ptr, idx, Some(val), Some(subset))
}

/// SCC decomposition of a graph given by its CSR pattern alone (`ptr` of `n + 1` row pointers,
/// every stored successor in `idx` an edge, whatever its value): iterative Tarjan, no
/// recursion.
pub fn scc_pattern(ptr: &[u32], idx: &[u32]) -> Sccs {
    tarjan(ptr.len().saturating_sub(1), ptr, idx, None, None)
}

/// Iterative Tarjan over raw CSR arrays. `val`, when given, filters out zero entries; `subset`,
/// when given, restricts the graph to those vertices.
pub(crate) fn tarjan(
    n: usize,
    ptr: &[u32],
    idx: &[u32],
    val: Option<&[f64]>,
    subset: Option<&StateSet>,
) -> Sccs {
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut component = vec![u32::MAX; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // Call stack of (vertex, position of the next edge to explore).
    let mut call: Vec<(u32, u32)> = Vec::new();
    let mut next_index = 0u32;
    let mut count = 0u32;
    let inside = |v: usize| subset.is_none_or(|s| s.contains(v));
    let is_edge = |e: usize| val.is_none_or(|d| d[e] > 0.0);

    for root in 0..n {
        if index[root] != UNVISITED || !inside(root) {
            continue;
        }
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        call.push((root as u32, ptr[root]));
        while let Some(&(v, pos0)) = call.last() {
            let vu = v as usize;
            let end = ptr[vu + 1];
            let mut pos = pos0;
            let mut descended = false;
            while pos < end {
                let e = pos as usize;
                pos += 1;
                if !is_edge(e) {
                    continue;
                }
                let w = idx[e] as usize;
                if !inside(w) {
                    continue;
                }
                if index[w] == UNVISITED {
                    if let Some(top) = call.last_mut() {
                        top.1 = pos;
                    }
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    call.push((w as u32, ptr[w]));
                    descended = true;
                    break;
                } else if on_stack[w] && index[w] < low[vu] {
                    low[vu] = index[w];
                }
            }
            if descended {
                continue;
            }
            // All edges of v explored.
            call.pop();
            if low[vu] == index[vu] {
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component[w as usize] = count;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
            if let Some(&(parent, _)) = call.last() {
                let p = parent as usize;
                if low[vu] < low[p] {
                    low[p] = low[vu];
                }
            }
        }
    }
    Sccs {
        component,
        count: count as usize,
    }
}

/// The bottom SCCs (closed classes) of the chain, each sorted increasingly, in increasing SCC id
/// order.
pub fn bsccs(matrix: &Matrix) -> Vec<Vec<u32>> {
    let sccs = scc(matrix);
    bsccs_of(matrix, &sccs)
}

/// Bottom SCCs given an SCC decomposition of the whole matrix.
pub(crate) fn bsccs_of(matrix: &Matrix, sccs: &Sccs) -> Vec<Vec<u32>> {
    let (ptr, idx, val) = raw(matrix);
    let mut bottom = vec![true; sccs.count];
    for s in 0..matrix.rows() {
        let c = sccs.component[s];
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            if val[e] > 0.0 && sccs.component[idx[e] as usize] != c {
                bottom[c as usize] = false;
                break;
            }
        }
    }
    sccs.members()
        .into_iter()
        .enumerate()
        .filter(|(c, _)| bottom[*c])
        .map(|(_, m)| m)
        .collect()
}

/// The states reachable from `from` (including `from` itself) by edges of `matrix`.
pub fn reachable(matrix: &Matrix, from: &StateSet) -> StateSet {
    search(matrix, from, None)
}

/// States reachable from `from` in `matrix` moving only through states of `through`
/// (the start states are always included; a state outside `through` is reached but not left).
pub(crate) fn search(matrix: &Matrix, from: &StateSet, through: Option<&StateSet>) -> StateSet {
    let (ptr, idx, val) = raw(matrix);
    let n = matrix.rows();
    let mut seen = StateSet::with_capacity(n);
    let mut queue: Vec<u32> = Vec::new();
    for s in from.ones().filter(|&s| s < n) {
        seen.insert(s);
        queue.push(s as u32);
    }
    while let Some(s) = queue.pop() {
        let s = s as usize;
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            if val[e] <= 0.0 {
                continue;
            }
            let t = idx[e] as usize;
            if seen.contains(t) {
                continue;
            }
            seen.insert(t);
            if through.is_none_or(|th| th.contains(t)) {
                queue.push(t as u32);
            }
        }
    }
    seen
}

/// States with `P(φ U ψ) = 0`: those that cannot reach ψ through φ-states. `matrix_t` is the
/// transpose of the transition matrix (see [`transpose`]).
pub fn prob0(matrix_t: &Matrix, phi: &StateSet, psi: &StateSet) -> StateSet {
    let n = matrix_t.rows();
    // Backward search from ψ, entering only φ-states (ψ-states are not expanded further unless
    // they are reached as start states, which is what we want: they are the roots).
    let mut can = backward_through(matrix_t, psi, phi);
    can.grow(n);
    let mut zero = StateSet::with_capacity(n);
    zero.insert_range(..);
    zero.difference_with(&can);
    zero
}

/// Backward search on the transpose from `from`, adding predecessors that lie in `through`.
///
/// The states still to be found are kept in one set (`open`, `through` minus what was found):
/// an edge costs one bit test when it leads to a state already found (most edges), and its
/// probability is read only when it leads to a new one.
pub(crate) fn backward_through(matrix_t: &Matrix, from: &StateSet, through: &StateSet) -> StateSet {
    let (ptr, idx, val) = raw(matrix_t);
    let n = matrix_t.rows();
    let mut open = through.clone();
    open.grow(n);
    let mut queue: Vec<u32> = Vec::new();
    for s in from.ones().filter(|&s| s < n) {
        open.set(s, false);
        queue.push(s as u32);
    }
    while let Some(s) = queue.pop() {
        let s = s as usize;
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            let p = idx[e] as usize;
            if open.contains(p) && val[e] > 0.0 {
                open.set(p, false);
                queue.push(p as u32);
            }
        }
    }
    // Found: the start states, and the states of `through` no longer open.
    let mut seen = through.clone();
    seen.grow(n);
    seen.difference_with(&open);
    for s in from.ones().filter(|&s| s < n) {
        seen.insert(s);
    }
    seen
}

/// States with `P(φ U ψ) = 1`, given `prob0` = the result of [`prob0`]: the states that cannot
/// reach a Prob0-state through `φ ∧ ¬ψ` states. (In a finite DTMC, a path staying forever in
/// `φ ∧ ¬ψ` ends in a bottom SCC inside `φ ∧ ¬ψ`, whose states are in Prob0.)
///
/// `matrix` is the transition matrix and `matrix_t` its transpose.
pub fn prob1(
    matrix: &Matrix,
    matrix_t: &Matrix,
    phi: &StateSet,
    psi: &StateSet,
    prob0: &StateSet,
) -> StateSet {
    let n = matrix.rows();
    debug_assert_eq!(matrix_t.rows(), n);
    let mut through = phi.clone();
    through.grow(n);
    through.difference_with(psi);
    let mut bad = backward_through(matrix_t, prob0, &through);
    bad.grow(n);
    let mut one = StateSet::with_capacity(n);
    one.insert_range(..);
    one.difference_with(&bad);
    one
}

#[cfg(test)]
mod tests {
    use super::*;
    use sprs::TriMatI;

    pub(crate) fn mat(n: usize, edges: &[(usize, usize, f64)]) -> Matrix {
        let mut t = TriMatI::<f64, u32>::new((n, n));
        for &(s, d, p) in edges {
            t.add_triplet(s, d, p);
        }
        t.to_csr()
    }

    fn set(n: usize, xs: &[usize]) -> StateSet {
        let mut s = StateSet::with_capacity(n);
        for &x in xs {
            s.insert(x);
        }
        s
    }

    #[test]
    fn scc_reverse_topological() {
        // 0 -> 1 <-> 2 -> 3 (absorbing), 4 -> 4
        let m = mat(
            5,
            &[
                (0, 1, 1.0),
                (1, 2, 1.0),
                (2, 1, 0.5),
                (2, 3, 0.5),
                (3, 3, 1.0),
                (4, 4, 1.0),
            ],
        );
        let s = scc(&m);
        assert_eq!(s.count, 4);
        let c = &s.component;
        assert_eq!(c[1], c[2]);
        assert!(c[0] > c[1]);
        assert!(c[1] > c[3]);
        let b = bsccs(&m);
        assert_eq!(b, vec![vec![3], vec![4]]);
    }

    #[test]
    fn long_chain_no_stack_overflow() {
        // 0 -> 1 -> ... -> n-1 -> 0: one big SCC of 100k states, plus a tail.
        let n = 100_000;
        let mut e: Vec<(usize, usize, f64)> = (0..n - 1).map(|i| (i, i + 1, 1.0)).collect();
        e.push((n - 1, 0, 1.0));
        let m = mat(n, &e);
        let s = scc(&m);
        assert_eq!(s.count, 1);
        // A pure chain: every state its own SCC, ids increasing towards the start.
        let mut e: Vec<(usize, usize, f64)> = (0..n - 1).map(|i| (i, i + 1, 1.0)).collect();
        e.push((n - 1, n - 1, 1.0));
        let m = mat(n, &e);
        let s = scc(&m);
        assert_eq!(s.count, n);
        assert_eq!(s.component[n - 1], 0);
        assert_eq!(s.component[0], (n - 1) as u32);
    }

    #[test]
    fn prob0_prob1_small() {
        // 0 -> {1: .5, 2: .5}; 1 absorbing (ψ); 2 absorbing (not ψ); 3 -> 1
        let m = mat(
            4,
            &[
                (0, 1, 0.5),
                (0, 2, 0.5),
                (1, 1, 1.0),
                (2, 2, 1.0),
                (3, 1, 1.0),
            ],
        );
        let mt = transpose(&m);
        let all = set(4, &[0, 1, 2, 3]);
        let psi = set(4, &[1]);
        let p0 = prob0(&mt, &all, &psi);
        assert_eq!(p0.ones().collect::<Vec<_>>(), vec![2]);
        let p1 = prob1(&m, &mt, &all, &psi, &p0);
        assert_eq!(p1.ones().collect::<Vec<_>>(), vec![1, 3]);
        // With φ excluding 0, state 0 cannot even start.
        let phi = set(4, &[1, 2, 3]);
        let p0 = prob0(&mt, &phi, &psi);
        assert_eq!(p0.ones().collect::<Vec<_>>(), vec![0, 2]);
        let r = reachable(&m, &set(4, &[0]));
        assert_eq!(r.ones().collect::<Vec<_>>(), vec![0, 1, 2]);
    }
}
