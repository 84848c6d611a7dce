//! Any LTL formula on an *interval* chain: `Pmax` as the maximal probability of reaching the
//! accepting end components of the chain's product with a limit-deterministic automaton of the
//! formula (`Pmin φ = 1 − Pmax ¬φ`, by the caller).
//!
//! Nature resolves every row's intervals at every step, knowing the history: an interval MDP.
//! For such a model the product with the deterministic `af` automaton alone is not enough:
//! nature may need memory that the automaton's states forget (in `F G (a → X X X b) & G F a &
//! G F c` a fresh `G` branch absorbs an older one's pending `b`, so the product cannot tell
//! whether a `b` is due, while a nature that remembers can satisfy the formula surely; see
//! `crates/check/tests/robust_omega.rs`). So the product is taken with the limit-deterministic
//! Büchi automaton of the Master Theorem (Esparza, Křetínský, Sickert, LICS 2018): `w ⊨ φ` iff
//! for some `X ⊆ μ(φ)`, `Y ⊆ ν(φ)`: (1) `wᵢ ⊨ af(φ, w₀ᵢ)[X]ν` for some `i`, (2) `w ⊨ G F
//! ψ[Y]μ` for every `ψ ∈ X`, (3) `w ⊨ F G ψ[X]ν` for every `ψ ∈ Y`.
//!
//! * **Initial part**: the product `(s, q) → (t, δ(q, L(s)))` with the `af` automaton, decided
//!   states (`true`, `false`) absorbing, as in [`crate::PrefixProduct`].
//! * **Guesses**: every undecided `(s, q)` is a *choice* node whose row gives `[0, 1]` to each
//!   of: staying in the initial part (a node with `s`'s intervals), and jumping, for each
//!   `(X, Y)`, to the accepting part's `(s, q[X]ν, ⋀_{ψ∈Y} G ψ[X]ν, F ψ₁[Y]μ, …)`. Nature
//!   picks the guess (for `Pmax` nature maximises, and the automaton's nondeterminism is
//!   resolved by the maximiser, as in model checking an MDP with a limit-deterministic
//!   automaton). The choice costs one step, which no ω-regular property sees.
//! * **Accepting part**, deterministic: the two safety formulas progress with `af` (a state in
//!   which either is `false` goes to a rejecting sink: a safety formula is violated exactly on a
//!   prefix that progresses to `false`); each `F ψ[Y]μ` progresses too, and when it reaches
//!   `true` (a *success*: `ψ[Y]μ` held at some position since the last restart) it restarts.
//!   Successes of every monitor infinitely often and no `false` give (1)–(3), so φ.
//! * **Values**: `Pmax φ` is the robust maximal probability of reaching the union of the
//!   `true` states of the initial part and the *accepting* maximal end components of the
//!   accepting part: those with a success state of every monitor. An end component is a set of
//!   states nature can keep the chain in with every edge inside used with positive probability
//!   (edges leaving have `lo = 0`, edges inside `Σ hi ≥ 1`; the bounds are tight); maximal ones
//!   by the usual refinement (SCCs, drop the states that cannot stay, repeat;
//!   `augur_solver::graph::scc_pattern`, iterative). In an accepting one, nature playing every
//!   edge with positive probability visits every state infinitely often almost surely; a
//!   maximal end component without a success state of some monitor contains no end component
//!   with one.
//!
//! **Why it is `Pmax`.** From below: a run of the product that is accepted satisfies (1)–(3)
//! from its guess on, hence φ (the Master Theorem's "if" direction); staying in an accepting
//! end component with every edge used is accepted almost surely. From above: nature's choices
//! are the distributions of the rows' polytopes, mixtures of their vertices, so `Pmax φ` is the
//! maximum of an ω-regular objective in the finite MDP whose actions are the vertices, attained
//! by a finite-memory nature `σ` (memoryless on the product with a deterministic Rabin
//! automaton). Under `σ` the chain × memory × `af` automaton is a finite Markov chain; a run
//! ends in one of its bottom SCCs almost surely, and φ holds almost surely or almost never there
//! (the DTMC argument of [`crate::product`]). In an accepting bottom SCC the Master-Theorem
//! judge's `X`, `Y` satisfy, from the moment the run enters it, (1) and `G ψ[X]ν` for `ψ ∈ Y`
//! on every path, and each `ψ[Y]μ` for `ψ ∈ X` infinitely often almost surely. So nature
//! playing `σ` and guessing that `(X, Y)` on entering (it knows its memory, the chain state and
//! the automaton state) is accepted with probability `P^σ(φ)`, and the accepted runs end, almost
//! surely, in an end component with a success of every monitor and no sink: within an
//! accepting maximal one.
//!
//! **Cost**: `2^(|μ|+|ν|)` guesses (the temporal subformulas of the two kinds; at most
//! [`MAX_GUESS_SUBFORMULAS`] of them), each a copy of the chain times the reachable monitor
//! states; the product counts against `LtlOptions::max_product_states`. One maximal end
//! component decomposition, linear per refinement round.

use crate::automaton::{FALSE_STATE, TRUE_STATE};
use crate::error::{LtlError, Result};
use crate::formula::Ltl;
use crate::product::{automaton_of, explore, LtlOptions, ProductRows, NO_ENTRY};
use augur_dtmc::{Matrix, StateSet};
use augur_solver::graph::scc_pattern;
use augur_solver::Interrupt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;

/// The mark of a product entry that is a guess of the automaton: interval `[0, 1]` (its other
/// entries: [`NO_ENTRY`], probability 1, or the chain entry it copies).
pub const CHOICE_ENTRY: u32 = u32::MAX - 1;

/// The most temporal subformulas (`F`/`U`/`M` and `G`/`W`/`R` together) a formula may have
/// here: the automaton guesses among `2^k` sets of them.
pub const MAX_GUESS_SUBFORMULAS: usize = 10;

/// The product of an interval chain's pattern with the limit-deterministic automaton of any LTL
/// formula, and its accepting states: `Pmax` of the formula is the robust maximal probability
/// of reaching [`OmegaProduct::good`] from [`OmegaProduct::initial`] (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct OmegaProduct {
    /// The transitions: copied entries, [`NO_ENTRY`] (probability 1) and [`CHOICE_ENTRY`]
    /// (`[0, 1]`); for every chain state `s`, the product node where checking from `s` starts.
    pub rows: ProductRows,
    /// The accepting states: `true` states of the initial part and accepting end components.
    pub good: StateSet,
    /// Automaton states built (the `af` automaton and its monitors share one table).
    pub automaton_states: usize,
    /// Guesses `(X, Y)` of the automaton that can accept.
    pub guesses: usize,
    /// Accepting maximal end components.
    pub accepting_components: usize,
}

/// An end component: its sorted product states.
#[derive(Clone, Debug)]
struct Component {
    states: Vec<u32>,
}

/// The interval bounds of a chain's stored transitions, aligned with `matrix.data()`.
#[derive(Clone, Copy, Debug)]
pub struct RowBounds<'a> {
    /// Lower bounds.
    pub lo: &'a [f64],
    /// Upper bounds.
    pub hi: &'a [f64],
    /// The same bounds in rationals (`--method exact`): they then decide which states can
    /// stay in an end component, as the exact solver decides it, instead of the float bounds
    /// with the rounding slack [`augur_dtmc::interval::INTERVAL_ROUNDING`] (1e-12; the two
    /// could disagree on rows within it of full; rows within the load tolerance of full are
    /// normalised on reading, see there).
    pub exact: Option<(&'a [BigRational], &'a [BigRational])>,
}

/// The product's rows and scratch space for the end-component refinement.
struct Space<'a> {
    ptr: &'a [u32],
    idx: &'a [u32],
    lo: &'a [f64],
    hi: &'a [f64],
    /// The model's exact bounds per stored transition and the model entry of every product
    /// entry (`--method exact`): whether a state can stay is then decided in rationals, as the
    /// exact solver decides it, not with the float tolerance.
    exact: Option<(&'a [BigRational], &'a [BigRational], &'a [u32])>,
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
                let row = self.ptr[p as usize] as usize..self.ptr[p as usize + 1] as usize;
                let stays = match self.exact {
                    Some((elo, ehi, source)) => {
                        let mut hi_in = BigRational::zero();
                        let mut lo_out_zero = true;
                        for e in row {
                            let (l, h) = match source[e] {
                                NO_ENTRY => (BigRational::one(), BigRational::one()),
                                CHOICE_ENTRY => (BigRational::zero(), BigRational::one()),
                                k => (elo[k as usize].clone(), ehi[k as usize].clone()),
                            };
                            if self.on[e] {
                                hi_in += h;
                            } else if !l.is_zero() {
                                lo_out_zero = false;
                            }
                        }
                        lo_out_zero && hi_in >= BigRational::one()
                    }
                    None => {
                        let (mut lo_out, mut hi_in) = (0.0, 0.0);
                        for e in row {
                            if self.on[e] {
                                hi_in += self.hi[e];
                            } else {
                                lo_out += self.lo[e];
                            }
                        }
                        lo_out <= 0.0 && hi_in >= 1.0 - augur_dtmc::interval::INTERVAL_ROUNDING
                    }
                };
                if !stays {
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
                            by_comp.push(Component { states: Vec::new() });
                        }
                        by_comp[slot[c] as usize].states.push(p);
                    }
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

/// One guess `(X, Y)`: its safety formula for (3) and its monitors for (2).
struct Guess {
    x: Vec<u32>,
    /// The automaton state of `⋀_{ψ∈Y} G ψ[X]ν` (`true` when `Y` is empty).
    safety: u32,
    /// The automaton state of `F ψ[Y]μ` for each `ψ ∈ X`.
    monitors: Vec<u32>,
}

impl OmegaProduct {
    /// Builds the product of `matrix`'s pattern with the limit-deterministic automaton of
    /// `formula` (proposition `i` holds in the states of `aps[i]`) from every chain state, and
    /// its accepting states; `bounds` are the (tight) bounds of the chain's entries, aligned
    /// with `matrix.data()`. Limits: `options` and `interrupt`.
    pub fn build(
        matrix: &Matrix,
        bounds: RowBounds<'_>,
        aps: &[StateSet],
        formula: &Ltl,
        options: &LtlOptions,
        interrupt: &Interrupt,
    ) -> Result<OmegaProduct> {
        let RowBounds { lo, hi, exact } = bounds;
        let (letter, mut aut, root) = automaton_of(matrix, aps, formula, options, interrupt)?;
        if lo.len() != matrix.nnz() || hi.len() != matrix.nnz() {
            return Err(LtlError::Dimensions(format!(
                "{} lower and {} upper bounds for {} transitions",
                lo.len(),
                hi.len(),
                matrix.nnz()
            )));
        }
        let e = explore(matrix, &letter, &mut aut, root, options, interrupt, true)?;
        let n0 = e.model_state.len();
        let subs = aut.subformulas(root);
        let mu: Vec<u32> = subs
            .iter()
            .copied()
            .filter(|&f| aut.node(f).is_mu())
            .collect();
        let nu: Vec<u32> = subs
            .iter()
            .copied()
            .filter(|&f| aut.node(f).is_nu())
            .collect();
        if mu.len() + nu.len() > MAX_GUESS_SUBFORMULAS {
            return Err(LtlError::TooManyGuesses {
                subformulas: mu.len() + nu.len(),
                limit: MAX_GUESS_SUBFORMULAS,
            });
        }
        let mut guesses: Vec<Guess> = Vec::new();
        for xm in 0u32..1 << mu.len() {
            let x: Vec<u32> = (0..mu.len())
                .filter(|&i| xm >> i & 1 == 1)
                .map(|i| mu[i])
                .collect();
            for ym in 0u32..1 << nu.len() {
                let y: Vec<u32> = (0..nu.len())
                    .filter(|&i| ym >> i & 1 == 1)
                    .map(|i| nu[i])
                    .collect();
                let in_x = |id: u32| x.contains(&id);
                let in_y = |id: u32| y.contains(&id);
                let parts: Vec<u32> = y
                    .iter()
                    .map(|&psi| {
                        let f = aut.subst_nu(psi, &in_x);
                        aut.globally(f)
                    })
                    .collect();
                let conj = aut.mk_and(parts);
                let safety = aut.state_of(conj)?;
                if safety == FALSE_STATE {
                    continue;
                }
                let mut monitors = Vec::with_capacity(x.len());
                for &psi in &x {
                    let f = aut.subst_mu(psi, &in_y);
                    let f = aut.eventually(f);
                    monitors.push(aut.state_of(f)?);
                }
                if monitors.contains(&FALSE_STATE) {
                    continue;
                }
                guesses.push(Guess {
                    x: x.clone(),
                    safety,
                    monitors,
                });
            }
        }

        // Nodes: the initial part's decided states keep one node; an undecided one gets a
        // choice node and a stay node; then the accepting part; then the rejecting sink.
        let undecided = |q: u32| q != TRUE_STATE && q != FALSE_STATE;
        let mut entry = vec![0u32; n0];
        let mut stay = vec![NONE; n0];
        let mut count = 0u32;
        for p in 0..n0 {
            entry[p] = count;
            count += 1;
            if undecided(e.automaton_state[p]) {
                stay[p] = count;
                count += 1;
            }
        }
        let base = count as usize;
        let limit = options.max_product_states;
        if base > limit {
            return Err(LtlError::ProductTooLarge { limit });
        }
        // Accepting part: key = [s, guess, S1, S2, monitors…].
        let mut index: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
        let mut keys: Vec<Vec<u32>> = Vec::new();
        let intern = |key: &[u32],
                      index: &mut FxHashMap<Vec<u32>, u32>,
                      keys: &mut Vec<Vec<u32>>|
         -> Result<u32> {
            if let Some(&i) = index.get(key) {
                return Ok(i);
            }
            // The new state, and the rejecting sink that may follow.
            if base + keys.len() + 2 > limit {
                return Err(LtlError::ProductTooLarge { limit });
            }
            let i = keys.len() as u32;
            index.insert(key.to_vec(), i);
            keys.push(key.to_vec());
            Ok(i)
        };
        // Rows of the initial part.
        let mut rows: Vec<Vec<(u32, u32)>> = Vec::with_capacity(base);
        for p in 0..n0 {
            if p.is_multiple_of(4096) {
                interrupt.check(p as u64)?;
            }
            let q = e.automaton_state[p];
            if !undecided(q) {
                rows.push(vec![(entry[p], NO_ENTRY)]);
                continue;
            }
            let s = e.model_state[p];
            let mut choice = vec![(stay[p], CHOICE_ENTRY)];
            for (g, guess) in guesses.iter().enumerate() {
                let x = &guess.x;
                let s1 = aut.state_subst_nu(q, &|id| x.contains(&id))?;
                if s1 == FALSE_STATE {
                    continue;
                }
                let mut key = vec![s, g as u32, s1, guess.safety];
                key.extend_from_slice(&guess.monitors);
                let k = intern(&key, &mut index, &mut keys)?;
                choice.push((base as u32 + k, CHOICE_ENTRY));
            }
            rows.push(choice);
            let row = (e.rows.ptr[p] as usize..e.rows.ptr[p + 1] as usize)
                .map(|k| (entry[e.rows.idx[k] as usize], e.rows.source_entry[k]))
                .collect();
            rows.push(row);
        }
        // Rows of the accepting part, explored breadth-first.
        let (ptr, idx) = (matrix.indptr().into_raw_storage(), matrix.indices());
        let mut i = 0usize;
        let mut sink_used = false;
        let sink_mark = u32::MAX;
        let mut part_rows: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut next: Vec<u32> = Vec::new();
        while i < keys.len() {
            if i.is_multiple_of(4096) {
                interrupt.check(i as u64)?;
            }
            let (s, g) = (keys[i][0] as usize, keys[i][1] as usize);
            let l = letter[s];
            let s1 = aut.step(keys[i][2], l)?;
            let s2 = aut.step(keys[i][3], l)?;
            let mut row = Vec::new();
            if s1 == FALSE_STATE || s2 == FALSE_STATE {
                sink_used = true;
                row.push((sink_mark, NO_ENTRY));
            } else {
                next.clear();
                next.extend([0, g as u32, s1, s2]);
                for k in 0..keys[i].len() - 4 {
                    // A success restarts the monitor at the next position.
                    let m = keys[i][4 + k];
                    let from = if m == TRUE_STATE {
                        guesses[g].monitors[k]
                    } else {
                        m
                    };
                    next.push(aut.step(from, l)?);
                }
                let first = ptr[s] as usize;
                for (off, &target) in idx[first..ptr[s + 1] as usize].iter().enumerate() {
                    next[0] = target;
                    let t = intern(&next, &mut index, &mut keys)?;
                    row.push((base as u32 + t, (first + off) as u32));
                }
            }
            part_rows.push(row);
            i += 1;
        }
        let sink = (base + keys.len()) as u32;
        let total = base + keys.len() + usize::from(sink_used);
        let (mut out_ptr, mut out_idx, mut source) = (vec![0u32], Vec::new(), Vec::new());
        for mut row in rows.into_iter().chain(part_rows) {
            for t in &mut row {
                if t.0 == sink_mark {
                    t.0 = sink;
                }
            }
            row.sort_unstable();
            for (t, k) in row {
                out_idx.push(t);
                source.push(k);
            }
            out_ptr.push(out_idx.len() as u32);
        }
        if sink_used {
            out_idx.push(sink);
            source.push(NO_ENTRY);
            out_ptr.push(out_idx.len() as u32);
        }

        // Accepting maximal end components of the accepting part.
        let plo: Vec<f64> = source
            .iter()
            .map(|&k| match k {
                NO_ENTRY => 1.0,
                CHOICE_ENTRY => 0.0,
                k => lo[k as usize],
            })
            .collect();
        let phi: Vec<f64> = source
            .iter()
            .map(|&k| match k {
                NO_ENTRY | CHOICE_ENTRY => 1.0,
                k => hi[k as usize],
            })
            .collect();
        let mut row_of = vec![0u32; out_idx.len()];
        for p in 0..total {
            for r in &mut row_of[out_ptr[p] as usize..out_ptr[p + 1] as usize] {
                *r = p as u32;
            }
        }
        let mut space = Space {
            ptr: &out_ptr,
            idx: &out_idx,
            lo: &plo,
            hi: &phi,
            exact: exact.map(|(l, h)| (l, h, source.as_slice())),
            row_of: &row_of,
            local: vec![NONE; total],
            on: vec![false; out_idx.len()],
        };
        let part: Vec<u32> = (base as u32..(base + keys.len()) as u32).collect();
        let part_edges: Vec<u32> = (out_ptr[base]..out_ptr[base + keys.len()])
            .filter(|&k| {
                let t = out_idx[k as usize] as usize;
                phi[k as usize] > 0.0 && t >= base && t < base + keys.len()
            })
            .collect();
        let mut good = StateSet::with_capacity(total);
        for (&q, &node) in e.automaton_state.iter().zip(&entry) {
            if q == TRUE_STATE {
                good.insert(node as usize);
            }
        }
        let mut accepting_components = 0;
        for c in space.maximal(&part, &part_edges) {
            let key0 = &keys[c.states[0] as usize - base];
            let monitors = key0.len() - 4;
            let accepting = (0..monitors).all(|k| {
                c.states
                    .iter()
                    .any(|&p| keys[p as usize - base][4 + k] == TRUE_STATE)
            });
            if accepting {
                accepting_components += 1;
                for &p in &c.states {
                    good.insert(p as usize);
                }
            }
        }
        let initial = e.rows.initial.iter().map(|&p| entry[p as usize]).collect();
        Ok(OmegaProduct {
            rows: ProductRows {
                ptr: out_ptr,
                idx: out_idx,
                source_entry: source,
                initial,
            },
            good,
            automaton_states: aut.num_states(),
            guesses: guesses.len(),
            accepting_components,
        })
    }

    /// Number of product states.
    pub fn num_states(&self) -> usize {
        self.rows.num_states()
    }
}
