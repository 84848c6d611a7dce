//! Any LTL formula on an *interval* chain: the product with the formula's automaton, its end
//! components, and which of them are accepting (used for `Pmax`; `Pmin φ = 1 − Pmax ¬φ`).
//!
//! Nature resolves every row's intervals at every step, knowing the history: an interval MDP.
//! The product `(s, q) → (t, δ(q, L(s)))` copies the chain's rows entry by entry (as
//! [`crate::PrefixProduct`] does), so it is an interval MDP over product states, and a product
//! state `(s, q)` stands for "the path from `s` must satisfy `q`".
//!
//! **End components.** A pair `(E, F)` of product states and edges between them is an end
//! component when `(E, F)` is strongly connected and every state of `E` can put all its mass on
//! its `F`-successors with positive mass on each: its other successors have `lo = 0` and its
//! `F`-successors `Σ hi ≥ 1` (the bounds are tight, so every stored edge, `hi > 0`, can get
//! positive mass, and averaging the greedy distributions that favour each `F`-edge gives one
//! distribution with support exactly `F`). The maximal end components within a set are found by
//! the usual refinement: SCCs of the kept edges (`augur_solver::graph::scc_pattern`, iterative),
//! drop the edges between SCCs and the states that cannot stay, repeat.
//!
//! **Accepting end components.** Nature playing a fixed distribution with support `F` in every
//! state of `E` makes `(E, F)` a bottom SCC of a Markov chain whose states are product states,
//! each with its chain state's letter; the probability of the formula is then 1 in every state
//! of `E` or 0 in every state, and the Master-Theorem judge of [`crate::product`] decides which,
//! by graph searches over `(E, F)` × automaton (the judge is the DTMC one, run on that chain:
//! `{((s, q), q)}` is a bottom SCC of its product with the automaton). `(E, F)` is *good* when
//! accepted.
//!
//! **Sub-components.** Acceptance may depend on the edges nature keeps, not only on the states:
//! for `F G (a → X X b)` the product may reach a state `(s, q)` both by an edge that leaves an
//! obligation `b` pending for the step after `s` and by one that does not (the automaton
//! state is the same once the obligation is met or dropped), so one edge, not a state, decides
//! (`crates/check/tests/robust_omega.rs` has such a chain). So a rejected `(E, F)` is searched
//! for good sub-components. The judge's rejection comes with a *witness*: finite paths of
//! `(E, F)` (each from a start node to the node whose letter drives a safety formula of the
//! fixpoint to `false`) such that every end component `(E', F') ⊆ (E, F)` that contains all
//! their nodes and edges is rejected too. Proof: the judge computes `X₀ = μ(φ) ⊇ X₁ ⊇ … ⊇ X*`
//! with `Yᵢ = {ψ ∈ ν: no path from a node reaches false for ψ[Xᵢ]ν}` and `Xᵢ₊₁ = {ψ ∈ Xᵢ: some
//! path reaches true for ψ[Yᵢ]μ}`, then rejects because a path from a member `(p, q_p[X*]ν)`
//! reaches false. The substitutions are monotone (a larger `X` or `Y` replaces more
//! subformulas by `true`). On `(E', F')` the judge's sequences satisfy `X'ᵢ ⊆ Xᵢ` and
//! `Y'ᵢ ⊆ Yᵢ` by induction: `Y'ᵢ = Y'(X'ᵢ) ⊆ Y'(Xᵢ) ⊆ Yᵢ`, since every `ψ ∉ Yᵢ` has its
//! witness path inside `(E', F')`; and `X'ᵢ₊₁ ⊆ Xᵢ₊₁` since `(E', F')` has fewer paths and
//! `ψ[Y'ᵢ]μ` is stronger than `ψ[Yᵢ]μ`. So `X'* ⊆ X*`, and the final witness path, present in
//! `(E', F')` and extendable forever there, violates `q_p[X*]ν` and so the stronger
//! `q_p[X'*]ν`. Hence every good sub-component misses a node or an edge of the witness: the
//! search removes each in turn, re-decomposes into maximal end components and recurses
//! (memoised on the edge set; components whose states are all known good are skipped, as only
//! the union of good states matters). Each good end component is contained in one found, so
//! the union is exact.
//!
//! **Values.** `Pmax φ` is the robust maximal probability of reaching the good states
//! (`augur_solver::robust::until`, by the caller). From below: after reaching a good `(E, F)`,
//! nature plays its distribution with support `F` and φ holds almost surely. From above: under
//! any nature (a randomised strategy of the MDP whose actions are the vertices of the rows'
//! polytopes), almost every path eventually stays in an end component `(E, F)` and uses
//! exactly its edges infinitely often (de Alfaro); the product state's value
//! `P(q | history) → 1_φ` (Lévy), so a path satisfying φ ends in product states whose
//! `Pmax` is 1. The bound from above is therefore exact when the maximal probability inside
//! an end component is attained by memoryless natures over product states (whose
//! runs are the chains judged above) — the automaton's states record the pending obligations
//! (`af` keeps `F b` pending after an `a`), which is the memory the formulas need; the tests
//! compare with PRISM's values and with random memoryless resolutions.
//!
//! **Cost.** The product as for co-safe formulas; one maximal-end-component refinement
//! (`O(iterations · (V + E))`) per judged component; one judge (a few graph searches over the
//! component × automaton) per judged component. The number of judged components is at most
//! `LtlOptions::max_end_components` ([`LtlError::EndComponentsTooMany`] beyond it; never a
//! partial answer). Components accepted at once (the common case: `G F a` with an `a`-state
//! inside, `F G a` with only `a`-states) cost one judge each; a rejected one costs one child
//! per node and edge of its witness.

use crate::automaton::Automaton;
use crate::error::{LtlError, Result};
use crate::formula::Ltl;
use crate::product::{check_inputs, explore, letters, Graph, Judge, LtlOptions, NO_ENTRY};
use augur_dtmc::{Matrix, StateSet};
use augur_solver::graph::scc_pattern;
use augur_solver::Interrupt;
use rustc_hash::FxHashSet;

const NONE: u32 = u32::MAX;

/// The product of an interval chain's pattern with the automaton of any LTL formula, and the
/// union of its good (accepting) end components: `Pmax` of the formula is the robust maximal
/// probability of reaching [`OmegaProduct::good`] (see the module documentation). Decided
/// product states (automaton state `true` or `false`) are absorbing, as in
/// [`crate::PrefixProduct`].
#[derive(Clone, Debug)]
pub struct OmegaProduct {
    /// Row pointers of the product (CSR).
    pub ptr: Vec<u32>,
    /// Successors (rows sorted).
    pub idx: Vec<u32>,
    /// For every entry, the chain entry it copies, or [`NO_ENTRY`] (a decided state's
    /// probability-1 self-loop).
    pub source_entry: Vec<u32>,
    /// The chain state of every product state.
    pub model_state: Vec<u32>,
    /// For every chain state `s`, the product state `(s, φ)`.
    pub initial: Vec<u32>,
    /// The union of the good end components' states.
    pub good: StateSet,
    /// Automaton states built.
    pub automaton_states: usize,
    /// End components judged.
    pub judged: usize,
    /// Good end components found (not counting those inside the good states found earlier).
    pub good_components: usize,
}

/// An end component: sorted product states, sorted product entries.
#[derive(Clone, Debug)]
struct Component {
    states: Vec<u32>,
    edges: Vec<u32>,
}

/// The product's rows and scratch space for the end-component refinement.
struct Space<'a> {
    ptr: &'a [u32],
    idx: &'a [u32],
    lo: &'a [f64],
    hi: &'a [f64],
    /// The row of every entry.
    row_of: &'a [u32],
    /// Local index of every product state in the set being refined ([`NONE`] outside).
    local: Vec<u32>,
    /// Whether each entry is kept (cleared after use).
    on: Vec<bool>,
}

impl Space<'_> {
    /// The maximal end components within `states` using only `edges` (both sorted; every
    /// edge between two of `states`).
    fn maximal(&mut self, states: &[u32], edges: &[u32]) -> Vec<Component> {
        let k = states.len();
        for (i, &p) in states.iter().enumerate() {
            self.local[p as usize] = i as u32;
        }
        let loc = |local: &[u32], p: u32| local[p as usize];
        let mut alive = vec![true; k];
        let mut live: Vec<u32> = edges
            .iter()
            .copied()
            .filter(|&e| {
                loc(&self.local, self.row_of[e as usize]) != NONE
                    && loc(&self.local, self.idx[e as usize]) != NONE
            })
            .collect();
        let mut lptr = vec![0u32; k + 1];
        let mut lidx: Vec<u32> = Vec::with_capacity(live.len());
        let out = loop {
            // Local CSR of the live edges: entries are sorted, so rows come in product-state
            // order, which is the local order.
            lptr.iter_mut().for_each(|x| *x = 0);
            lidx.clear();
            for &e in &live {
                lptr[loc(&self.local, self.row_of[e as usize]) as usize + 1] += 1;
                lidx.push(loc(&self.local, self.idx[e as usize]));
            }
            for i in 0..k {
                lptr[i + 1] += lptr[i];
            }
            let scc = scc_pattern(&lptr, &lidx);
            let comp = &scc.component;
            live.retain(|&e| {
                comp[loc(&self.local, self.row_of[e as usize]) as usize]
                    == comp[loc(&self.local, self.idx[e as usize]) as usize]
            });
            for &e in &live {
                self.on[e as usize] = true;
            }
            let mut changed = false;
            for (i, &p) in states.iter().enumerate() {
                if !alive[i] {
                    continue;
                }
                let (mut lo_out, mut hi_in) = (0.0, 0.0);
                for e in self.ptr[p as usize] as usize..self.ptr[p as usize + 1] as usize {
                    if self.on[e] {
                        hi_in += self.hi[e];
                    } else {
                        lo_out += self.lo[e];
                    }
                }
                if !(lo_out <= 0.0 && hi_in >= 1.0 - 1e-12) {
                    alive[i] = false;
                    changed = true;
                }
            }
            for &e in &live {
                self.on[e as usize] = false;
            }
            if !changed {
                let mut by_comp: Vec<Component> = Vec::new();
                let mut slot = vec![NONE; scc.count];
                for (i, &p) in states.iter().enumerate() {
                    if alive[i] {
                        let c = comp[i] as usize;
                        if slot[c] == NONE {
                            slot[c] = by_comp.len() as u32;
                            by_comp.push(Component {
                                states: Vec::new(),
                                edges: Vec::new(),
                            });
                        }
                        by_comp[slot[c] as usize].states.push(p);
                    }
                }
                for &e in &live {
                    let c = comp[loc(&self.local, self.row_of[e as usize]) as usize] as usize;
                    by_comp[slot[c] as usize].edges.push(e);
                }
                break by_comp;
            }
            live.retain(|&e| {
                alive[loc(&self.local, self.row_of[e as usize]) as usize]
                    && alive[loc(&self.local, self.idx[e as usize]) as usize]
            });
        };
        for &p in states {
            self.local[p as usize] = NONE;
        }
        out
    }
}

/// Whether the sorted list `a` is a subset of the sorted list `b`.
fn is_subset(a: &[u32], b: &[u32]) -> bool {
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            return false;
        }
        j += 1;
    }
    true
}

/// An end component as the graph of a [`Judge`]: local nodes `0..|E|`.
struct LocalGraph {
    ptr: Vec<u32>,
    idx: Vec<u32>,
}

impl Graph for LocalGraph {
    fn successors(&self, v: u32, f: &mut dyn FnMut(u32)) {
        for &t in &self.idx[self.ptr[v as usize] as usize..self.ptr[v as usize + 1] as usize] {
            f(t);
        }
    }
}

impl OmegaProduct {
    /// Builds the product of `matrix`'s pattern with the automaton of `formula` (proposition
    /// `i` holds in the states of `aps[i]`) from every chain state, and finds its good end
    /// components; `lo` and `hi` are the (tight) bounds of the chain's entries, aligned with
    /// `matrix.data()`. Limits: `options` (product and automaton size, judged end
    /// components) and `interrupt`.
    pub fn build(
        matrix: &Matrix,
        lo: &[f64],
        hi: &[f64],
        aps: &[StateSet],
        formula: &Ltl,
        options: &LtlOptions,
        interrupt: &Interrupt,
    ) -> Result<OmegaProduct> {
        let n = check_inputs(matrix, aps, formula)?;
        if lo.len() != matrix.nnz() || hi.len() != matrix.nnz() {
            return Err(LtlError::Dimensions(format!(
                "{} lower and {} upper bounds for {} transitions",
                lo.len(),
                hi.len(),
                matrix.nnz()
            )));
        }
        let letter = letters(n, aps);
        let mut aut = Automaton::new(
            options.max_automaton_states,
            options.max_automaton_cells,
            interrupt.clone(),
        );
        let root = aut.nnf(formula, false);
        let e = explore(matrix, &letter, &mut aut, root, options, interrupt, true)?;
        let np = e.model_state.len();
        let bound = |v: &[f64], k: u32| if k == NO_ENTRY { 1.0 } else { v[k as usize] };
        let plo: Vec<f64> = e.source_entry.iter().map(|&k| bound(lo, k)).collect();
        let phi: Vec<f64> = e.source_entry.iter().map(|&k| bound(hi, k)).collect();
        let mut row_of = vec![0u32; e.idx.len()];
        for p in 0..np {
            for r in &mut row_of[e.ptr[p] as usize..e.ptr[p + 1] as usize] {
                *r = p as u32;
            }
        }
        let mut space = Space {
            ptr: &e.ptr,
            idx: &e.idx,
            lo: &plo,
            hi: &phi,
            row_of: &row_of,
            local: vec![NONE; np],
            on: vec![false; e.idx.len()],
        };
        let node_letter: Vec<u64> = e.model_state.iter().map(|&s| letter[s as usize]).collect();
        let all_states: Vec<u32> = (0..np as u32).collect();
        // An edge nature cannot give mass to (`hi = 0`) is never kept.
        let all_edges: Vec<u32> = (0..e.idx.len() as u32)
            .filter(|&k| phi[k as usize] > 0.0)
            .collect();
        let mut stack = space.maximal(&all_states, &all_edges);
        let mut good = StateSet::with_capacity(np);
        let mut judged_sets: FxHashSet<Vec<u32>> = FxHashSet::default();
        let (mut judged, mut good_components) = (0usize, 0usize);
        let mut lletter: Vec<u64> = Vec::new();
        let mut members: Vec<(u32, u32)> = Vec::new();
        while let Some(c) = stack.pop() {
            if c.states.iter().all(|&p| good.contains(p as usize)) {
                continue;
            }
            if !judged_sets.insert(c.edges.clone()) {
                continue;
            }
            if judged >= options.max_end_components {
                return Err(LtlError::EndComponentsTooMany {
                    limit: options.max_end_components,
                });
            }
            judged += 1;
            interrupt.check(judged as u64)?;
            // The component as a chain over local nodes.
            for (i, &p) in c.states.iter().enumerate() {
                space.local[p as usize] = i as u32;
            }
            let mut g = LocalGraph {
                ptr: vec![0; c.states.len() + 1],
                idx: Vec::with_capacity(c.edges.len()),
            };
            for &k in &c.edges {
                g.ptr[space.local[row_of[k as usize] as usize] as usize + 1] += 1;
                g.idx.push(space.local[e.idx[k as usize] as usize]);
            }
            for i in 0..c.states.len() {
                g.ptr[i + 1] += g.ptr[i];
            }
            for &p in &c.states {
                space.local[p as usize] = NONE;
            }
            lletter.clear();
            lletter.extend(c.states.iter().map(|&p| node_letter[p as usize]));
            members.clear();
            members.extend(
                c.states
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (i as u32, e.automaton_state[p as usize])),
            );
            let mut judge = Judge {
                aut: &mut aut,
                graph: &g,
                letter: &lletter,
                root,
            };
            let Some(witness) = judge.verdict(&members, true)? else {
                good_components += 1;
                for &p in &c.states {
                    good.insert(p as usize);
                }
                continue;
            };
            // Every good sub-component misses a node or an edge of the witness.
            let mut nodes: Vec<u32> = Vec::new();
            let mut arcs: Vec<u32> = Vec::new();
            for path in &witness {
                nodes.extend(path.iter().map(|&v| c.states[v as usize]));
                for w in path.windows(2) {
                    let (u, v) = (c.states[w[0] as usize], c.states[w[1] as usize]);
                    let row = &e.idx[e.ptr[u as usize] as usize..e.ptr[u as usize + 1] as usize];
                    let k = row
                        .binary_search(&v)
                        .expect("a witness edge is a product entry");
                    arcs.push(e.ptr[u as usize] + k as u32);
                }
            }
            nodes.sort_unstable();
            nodes.dedup();
            arcs.sort_unstable();
            arcs.dedup();
            let mut children: Vec<Component> = Vec::new();
            for &v in &nodes {
                let states: Vec<u32> = c.states.iter().copied().filter(|&p| p != v).collect();
                let edges: Vec<u32> = c
                    .edges
                    .iter()
                    .copied()
                    .filter(|&k| row_of[k as usize] != v && e.idx[k as usize] != v)
                    .collect();
                children.extend(space.maximal(&states, &edges));
            }
            for &a in &arcs {
                let edges: Vec<u32> = c.edges.iter().copied().filter(|&k| k != a).collect();
                children.extend(space.maximal(&c.states, &edges));
            }
            // A child inside another child adds nothing: the good components within it are
            // within the other, whose search finds them (or whose states are all good).
            children.sort_by(|x, y| {
                y.edges
                    .len()
                    .cmp(&x.edges.len())
                    .then(x.edges.cmp(&y.edges))
            });
            let mut kept: Vec<Component> = Vec::with_capacity(children.len());
            for ch in children {
                if !kept.iter().any(|k| is_subset(&ch.edges, &k.edges)) {
                    kept.push(ch);
                }
            }
            stack.extend(kept);
        }
        Ok(OmegaProduct {
            ptr: e.ptr,
            idx: e.idx,
            source_entry: e.source_entry,
            model_state: e.model_state,
            initial: e.initial,
            good,
            automaton_states: aut.num_states(),
            judged,
            good_components,
        })
    }

    /// Number of product states.
    pub fn num_states(&self) -> usize {
        self.model_state.len()
    }
}
