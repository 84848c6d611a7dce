//! The most probable paths of `φ U ψ` / `φ U≤k ψ` from one state, in order: a k-shortest-walks
//! search in `−ln p` (A* over path prefixes, guided by the exact distance to ψ).
//!
//! A path of `φ U ψ` is finite: it starts at the start state, stays in φ-states that are not
//! ψ-states, and stops at its first ψ-state; its probability is the product of its
//! transitions' probabilities, and distinct paths are disjoint events (cylinder sets), so the
//! mass of any set of them is at most `P(φ U ψ)`. With `−ln P(s,t)` as edge lengths, the most
//! probable path is the shortest, and the k most probable are the k shortest walks (cycles
//! allowed: a walk may revisit a state).
//!
//! The search keeps a tree of path prefixes (each a state, its parent prefix, its length and
//! probability) and a priority queue ordered by `g + h`, where `g = −ln(prefix probability)`
//! and `h(s)` is the exact `−ln` of the most probable completion from `s` to ψ through
//! φ-states (one backward Dijkstra from ψ over the transposed matrix). Because `h` is exact
//! and consistent, prefixes are expanded in order of the best full path they extend to, a
//! ψ-state is popped in order of its path's probability, and only prefixes of the paths that
//! are reported (or tie with them) are ever expanded: about `K · L` expansions for `K` paths
//! of length up to `L`, never the set of all paths. For a step bound `k` the search state is
//! (state, steps): a prefix that cannot reach ψ in the steps left (by the breadth-first hop
//! distance to ψ) is not pushed, and `h` (the unbounded distance) stays admissible and
//! consistent, so the order is still exact.

use crate::error::{ExplainError, Result};
use crate::stop::Clock;
use augur_check::Limits;
use augur_dtmc::{Dtmc, StateSet};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The default budget of path prefixes a search keeps (32 bytes each).
pub const DEFAULT_MAX_PREFIXES: usize = 8_000_000;

/// What a path must satisfy: `φ U ψ` (`phi = None` for `F ψ`), within `bound` steps when given.
#[derive(Clone, Copy, Debug)]
pub struct PathGoal<'a> {
    /// The states a path may pass through before its last state (`None`: every state).
    pub phi: Option<&'a StateSet>,
    /// The target states; a path stops at its first one.
    pub psi: &'a StateSet,
    /// The largest number of steps (`U≤k`), `None` for unbounded.
    pub bound: Option<u32>,
}

impl PathGoal<'_> {
    /// Whether a path may pass through `s` (a φ-state that is no ψ-state).
    pub fn continues(&self, s: usize) -> bool {
        !self.psi.contains(s) && self.phi.is_none_or(|p| p.contains(s))
    }
}

/// One path: its states from the start to its ψ-state, and its probability.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// The states, the start first, the ψ-state last.
    pub states: Vec<u32>,
    /// The product of its transitions' probabilities (0 when that is below the smallest
    /// positive `f64`, about 5e-324: see `ln_probability`).
    pub probability: f64,
    /// The natural logarithm of the probability: the sum of its transitions' logarithms,
    /// finite for every path (a path has only transitions of positive probability).
    pub ln_probability: f64,
}

/// A path found by [`PathSearch::next_found`], without its states: the leaf of the search's
/// tree of prefixes that ends it ([`PathSearch::states`] lists them). Paths share their
/// common prefixes in that tree, so K paths of up to L steps take memory linear in the
/// prefixes expanded, not K · L.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    /// The prefix that ends the path (an index into the search's tree).
    pub prefix: u32,
    /// The product of its transitions' probabilities (0 below the smallest positive `f64`).
    pub probability: f64,
    /// The natural logarithm of the probability (finite).
    pub ln_probability: f64,
    /// Its steps: one less than its states.
    pub steps: u32,
}

/// A path prefix in the search tree.
#[derive(Clone, Copy)]
struct Prefix {
    state: u32,
    parent: u32,
    steps: u32,
    /// `−ln` of the probability.
    cost: f64,
    probability: f64,
}

/// A queue entry: a prefix and its priority `cost + h(state)`.
#[derive(Clone, Copy, PartialEq)]
struct Entry {
    priority: f64,
    prefix: u32,
}

impl Eq for Entry {}

impl Ord for Entry {
    /// Reversed (the heap is a max-heap): the smallest priority first, then the earliest prefix.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .priority
            .total_cmp(&self.priority)
            .then_with(|| other.prefix.cmp(&self.prefix))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `−ln` of the most probable completion from every state to ψ through states where the
/// formula continues (`+∞` where there is none; 0 on ψ): Dijkstra from ψ over `transpose`.
pub fn distances_to_target(transpose: &augur_dtmc::Matrix, f: &PathGoal<'_>) -> Vec<f64> {
    let n = transpose.rows();
    let mut h = vec![f64::INFINITY; n];
    let mut heap = BinaryHeap::new();
    for s in f.psi.ones().filter(|&s| s < n) {
        h[s] = 0.0;
        heap.push(Entry {
            priority: 0.0,
            prefix: s as u32,
        });
    }
    let ptr = transpose.indptr();
    let ptr = ptr.raw_storage();
    let (idx, data) = (transpose.indices(), transpose.data());
    while let Some(Entry {
        priority: d,
        prefix,
    }) = heap.pop()
    {
        let v = prefix as usize;
        if d > h[v] {
            continue;
        }
        for k in ptr[v] as usize..ptr[v + 1] as usize {
            let (u, p) = (idx[k] as usize, data[k]);
            if p <= 0.0 || !f.continues(u) {
                continue;
            }
            let nd = d - p.ln();
            if nd < h[u] {
                h[u] = nd;
                heap.push(Entry {
                    priority: nd,
                    prefix: u as u32,
                });
            }
        }
    }
    h
}

/// The fewest steps from every state to ψ through states where the formula continues
/// (`u32::MAX` where ψ cannot be reached): breadth-first from ψ over `transpose`.
fn hops_to_target(transpose: &augur_dtmc::Matrix, f: &PathGoal<'_>) -> Vec<u32> {
    let n = transpose.rows();
    let mut hops = vec![u32::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for s in f.psi.ones().filter(|&s| s < n) {
        hops[s] = 0;
        queue.push_back(s);
    }
    let ptr = transpose.indptr();
    let ptr = ptr.raw_storage();
    let (idx, data) = (transpose.indices(), transpose.data());
    while let Some(v) = queue.pop_front() {
        for k in ptr[v] as usize..ptr[v + 1] as usize {
            let u = idx[k] as usize;
            if data[k] > 0.0 && hops[u] == u32::MAX && f.continues(u) {
                hops[u] = hops[v] + 1;
                queue.push_back(u);
            }
        }
    }
    hops
}

/// The most probable paths of a path formula from one state, one at a time, most probable
/// first ([`PathSearch::next_path`]); see the module documentation for the algorithm.
///
/// ```
/// use augur_dtmc::DtmcBuilder;
/// use augur_explain::paths::{PathGoal, PathSearch};
/// // 0 → 1 (0.6) | 2 (0.4); 1 → 2 (0.5) | 3 (0.5); 2 and 3 absorbing; target {2}.
/// let mut b = DtmcBuilder::new(4);
/// for (s, t, p) in [(0, 1, 0.6), (0, 2, 0.4), (1, 2, 0.5), (1, 3, 0.5), (2, 2, 1.0), (3, 3, 1.0)] {
///     b.add_transition(s, t, p).unwrap();
/// }
/// b.add_initial(0).unwrap();
/// let (dtmc, _) = b.build().unwrap();
/// let mut psi = augur_dtmc::StateSet::with_capacity(4);
/// psi.insert(2);
/// let f = PathGoal { phi: None, psi: &psi, bound: None };
/// let mut search = PathSearch::new(&dtmc, &dtmc.transpose(), f, 0);
/// let first = search.next_path().unwrap().unwrap();
/// assert_eq!((first.states, first.probability), (vec![0, 2], 0.4));
/// let second = search.next_path().unwrap().unwrap();
/// assert_eq!(second.states, vec![0, 1, 2]);
/// assert!((second.probability - 0.3).abs() < 1e-15);
/// assert_eq!(search.next_path().unwrap(), None);
/// ```
pub struct PathSearch<'a> {
    dtmc: &'a Dtmc,
    formula: PathGoal<'a>,
    h: Vec<f64>,
    hops: Option<Vec<u32>>,
    prefixes: Vec<Prefix>,
    heap: BinaryHeap<Entry>,
    max_prefixes: usize,
    clock: Clock,
}

impl<'a> PathSearch<'a> {
    /// A search from `start` (`transpose` is the transpose of `dtmc.matrix`).
    pub fn new(
        dtmc: &'a Dtmc,
        transpose: &augur_dtmc::Matrix,
        formula: PathGoal<'a>,
        start: usize,
    ) -> PathSearch<'a> {
        let h = distances_to_target(transpose, &formula);
        let hops = formula.bound.map(|_| hops_to_target(transpose, &formula));
        let mut search = PathSearch {
            dtmc,
            formula,
            h,
            hops,
            prefixes: Vec::new(),
            heap: BinaryHeap::new(),
            max_prefixes: DEFAULT_MAX_PREFIXES,
            clock: Clock::unlimited(),
        };
        if start < dtmc.num_states() && search.feasible(start, 0) {
            search.push(start as u32, u32::MAX, 0, 0.0, 1.0);
        }
        search
    }

    /// The same search with another budget of path prefixes (the search fails with
    /// [`ExplainError::Budget`] when it would keep more).
    pub fn with_max_prefixes(mut self, max: usize) -> Self {
        self.max_prefixes = max;
        self
    }

    /// The same search under `limits`: it stops with the checker's limit error
    /// ([`augur_check::CheckError::Stopped`]) when cancelled or past the time limit (checked
    /// every 1,024 prefixes expanded).
    pub fn with_limits(mut self, limits: &Limits) -> Self {
        self.clock = Clock::new(limits);
        self
    }

    /// `−ln` of the most probable completion from `s` to ψ (`+∞` when there is none).
    pub fn distance_to_target(&self, s: usize) -> f64 {
        self.h[s]
    }

    /// How many path prefixes the search has kept so far.
    pub fn prefixes(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether a prefix at `s` after `steps` steps can still become a path.
    fn feasible(&self, s: usize, steps: u32) -> bool {
        if self.h[s].is_infinite() {
            return false;
        }
        match (&self.hops, self.formula.bound) {
            (Some(hops), Some(k)) => u64::from(steps) + u64::from(hops[s]) <= u64::from(k),
            _ => true,
        }
    }

    fn push(&mut self, state: u32, parent: u32, steps: u32, cost: f64, probability: f64) {
        let index = self.prefixes.len() as u32;
        self.prefixes.push(Prefix {
            state,
            parent,
            steps,
            cost,
            probability,
        });
        self.heap.push(Entry {
            priority: cost + self.h[state as usize],
            prefix: index,
        });
    }

    /// The next most probable path, `None` when every path has been returned.
    pub fn next_path(&mut self) -> Result<Option<Path>> {
        Ok(self.next_found()?.map(|f| Path {
            states: self.states(f.prefix),
            probability: f.probability,
            ln_probability: f.ln_probability,
        }))
    }

    /// The next most probable path as a leaf of the tree of prefixes (its states are not
    /// copied), `None` when every path has been returned.
    pub fn next_found(&mut self) -> Result<Option<Found>> {
        let ptr = self.dtmc.row_ptr();
        let (idx, data) = (self.dtmc.matrix.indices(), self.dtmc.matrix.data());
        while let Some(Entry { prefix, .. }) = self.heap.pop() {
            self.clock.tick()?;
            let node = self.prefixes[prefix as usize];
            let s = node.state as usize;
            if self.formula.psi.contains(s) {
                return Ok(Some(Found {
                    prefix,
                    probability: node.probability,
                    ln_probability: -node.cost,
                    steps: node.steps,
                }));
            }
            let needed = self.prefixes.len() + (ptr[s + 1] - ptr[s]) as usize;
            if needed > self.max_prefixes {
                return Err(ExplainError::Budget {
                    what: "the most probable paths",
                    limit: self.max_prefixes,
                    unit: "path prefixes",
                    hint: String::new(),
                });
            }
            for k in ptr[s] as usize..ptr[s + 1] as usize {
                let (t, p) = (idx[k], data[k]);
                if p <= 0.0 || !self.feasible(t as usize, node.steps + 1) {
                    continue;
                }
                self.push(
                    t,
                    prefix,
                    node.steps + 1,
                    node.cost - p.ln(),
                    node.probability * p,
                );
            }
        }
        Ok(None)
    }

    /// The state of a prefix and its parent prefix (`u32::MAX` for the start).
    pub fn node(&self, prefix: u32) -> (u32, u32) {
        let p = &self.prefixes[prefix as usize];
        (p.state, p.parent)
    }

    /// The states of the path ending at `prefix`, the start first.
    pub fn states(&self, prefix: u32) -> Vec<u32> {
        let mut states = Vec::new();
        let mut at = prefix;
        while at != u32::MAX {
            let p = &self.prefixes[at as usize];
            states.push(p.state);
            at = p.parent;
        }
        states.reverse();
        states
    }
}
