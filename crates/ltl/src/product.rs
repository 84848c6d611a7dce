//! The product of a DTMC with the deterministic automaton of a formula, its accepting bottom
//! SCCs, and the probabilities of the formula (reachability of the accepting BSCCs, solved by
//! `augur-solver`).
//!
//! Why the BSCCs decide: a product state `(s, q)` stands for "the path from `s` must satisfy
//! `q`" (`q = af(φ, w₀…wᵢ₋₁)`), and `P_s(q)` is a martingale along a path that converges to
//! the indicator of φ (Lévy's 0-1 law). A path ends in a BSCC of the product almost surely and
//! visits each of its states infinitely often, so `P_s(q)` is 0 in every state of a BSCC or 1
//! in every state. Which one is decided by the Master Theorem (Esparza, Křetínský, Sickert,
//! LICS 2018): `w ⊨ φ` iff for some `X ⊆ μ(φ)`, `Y ⊆ ν(φ)`, (1) `wᵢ ⊨ af(φ, w₀ᵢ)[X]ν` for
//! almost all `i`, (2) `w ⊨ G F ψ[Y]μ` for `ψ ∈ X`, (3) `w ⊨ F G ψ[X]ν` for `ψ ∈ Y`. Inside a
//! BSCC `C` of the product (projecting on a BSCC `D` of the chain), with `ψ[Y]μ` co-safety and
//! `ψ[X]ν` safety formulas, each condition holds almost surely or almost never:
//! (1) iff for every `(s, q) ∈ C` every path from `s` satisfies `q[X]ν`; (2) iff some path from
//! some state of `D` satisfies `ψ[Y]μ`; (3) iff every path from every state of `D` satisfies
//! `ψ[X]ν`. These are searches in the graph of `D` times the automaton (a safety formula is
//! violated exactly when `false` is reachable, a co-safety formula satisfied exactly when `true`
//! is). The conditions are monotone in `X` and `Y`, so the largest candidate pair is found by
//! a greatest fixpoint instead of trying all `2^|μ|·2^|ν|` pairs.

use crate::automaton::{Automaton, FALSE_STATE, TRUE_STATE};
use crate::error::{LtlError, Result};
use crate::formula::Ltl;
use augur_dtmc::{Matrix, StateSet};
use augur_solver::{until_probabilities, Interrupt, Solution, SolveOptions};
use num_rational::BigRational;
use rustc_hash::{FxHashMap, FxHashSet};
use sprs::CsMatI;

/// Limits of the construction.
#[derive(Clone, Debug)]
pub struct LtlOptions {
    /// The most automaton states (distinct formulas) allowed.
    pub max_automaton_states: usize,
    /// The most product states allowed.
    pub max_product_states: usize,
    /// The largest step bound a bounded operator may have (it is expanded into that many `X`).
    pub max_step_bound: u64,
    /// The most memory the automaton's formulas may take, in cells (one per clause and per
    /// atom of the stored DNFs, a few bytes each).
    pub max_automaton_cells: usize,
    /// The most nodes a formula may have once its bounded operators are unrolled (nested
    /// bounded operators multiply: `F<=k F<=k a` unrolls to `O(k²)` nodes).
    pub max_formula_size: usize,
}

impl Default for LtlOptions {
    fn default() -> Self {
        LtlOptions {
            max_automaton_states: 100_000,
            max_product_states: 50_000_000,
            max_step_bound: 1_000,
            max_automaton_cells: 1 << 24,
            max_formula_size: 10_000_000,
        }
    }
}

/// The product of a chain with the automaton of a formula.
#[derive(Clone, Debug)]
pub struct Product {
    /// The product chain (CSR, rows sorted by column).
    pub matrix: Matrix,
    /// The chain state of every product state.
    pub model_state: Vec<u32>,
    /// The automaton state of every product state.
    pub automaton_state: Vec<u32>,
    /// For every chain state `s`, the product state `(s, φ)` (where checking from `s` starts).
    pub initial: Vec<u32>,
    /// For every entry of `matrix` (in storage order), the entry of the chain's matrix it copies.
    pub source_entry: Vec<u32>,
    /// The union of the accepting bottom SCCs.
    pub accepting: StateSet,
    /// The number of automaton states built.
    pub automaton_states: usize,
    /// The number of bottom SCCs of the product.
    pub bsccs: usize,
    /// The number of accepting bottom SCCs.
    pub accepting_bsccs: usize,
}

/// The letters (bitmasks of the propositions that hold) of every state.
pub(crate) fn letters(n: usize, aps: &[StateSet]) -> Vec<u64> {
    let mut out = vec![0u64; n];
    for (i, set) in aps.iter().enumerate().take(64) {
        for s in set.ones().filter(|&s| s < n) {
            out[s] |= 1 << i;
        }
    }
    out
}

fn raw(m: &Matrix) -> (&[u32], &[u32], &[f64]) {
    (m.indptr().into_raw_storage(), m.indices(), m.data())
}

/// Checks that `matrix` is square and that every proposition of `formula` has its set in `aps`
/// (at most 64); returns the number of chain states.
pub(crate) fn check_inputs(matrix: &Matrix, aps: &[StateSet], formula: &Ltl) -> Result<usize> {
    let n = matrix.rows();
    if matrix.cols() != n {
        return Err(LtlError::Dimensions(format!(
            "the transition matrix is {}×{}",
            n,
            matrix.cols()
        )));
    }
    if let Some(m) = formula.max_ap() {
        if m as usize >= aps.len() {
            return Err(LtlError::Dimensions(format!(
                "the formula uses proposition {m} but {} are given",
                aps.len()
            )));
        }
        if m >= 64 {
            return Err(LtlError::TooManyPropositions(m as usize + 1));
        }
    }
    Ok(n)
}

/// The transitions of a product of a chain's pattern with an automaton, in CSR form without
/// values (each entry copies a chain entry or is marked), and where checking from each chain
/// state starts.
#[derive(Clone, Debug)]
pub struct ProductRows {
    /// Row pointers of the product (CSR).
    pub ptr: Vec<u32>,
    /// Successors (rows sorted).
    pub idx: Vec<u32>,
    /// For every entry, the chain entry it copies, or a mark: [`NO_ENTRY`] (a decided state's
    /// probability-1 self-loop), [`crate::CHOICE_ENTRY`] (`[0, 1]`, in an
    /// [`crate::OmegaProduct`]).
    pub source_entry: Vec<u32>,
    /// For every chain state `s`, the product state where checking from `s` starts.
    pub initial: Vec<u32>,
}

impl ProductRows {
    /// Number of product states.
    pub fn num_states(&self) -> usize {
        self.ptr.len() - 1
    }
}

/// After [`check_inputs`]: the letters of the chain's states and the automaton of `formula`
/// with its root (the formula in negation normal form).
pub(crate) fn automaton_of(
    matrix: &Matrix,
    aps: &[StateSet],
    formula: &Ltl,
    options: &LtlOptions,
    interrupt: &Interrupt,
) -> Result<(Vec<u64>, Automaton, u32)> {
    let n = check_inputs(matrix, aps, formula)?;
    let letter = letters(n, aps);
    let mut aut = Automaton::new(
        options.max_automaton_states,
        options.max_automaton_cells,
        interrupt.clone(),
    );
    let root = aut.nnf(formula, false);
    Ok((letter, aut, root))
}

/// The states of a product reachable from every `(s, root)`, in CSR form.
pub(crate) struct Explored {
    pub(crate) rows: ProductRows,
    pub(crate) model_state: Vec<u32>,
    pub(crate) automaton_state: Vec<u32>,
}

/// The product state `(s, q)` moves to `(t, δ(q, L(s)))` for every stored transition `s → t`
/// (rows sorted by column). With `absorb_decided`, a product state whose automaton state is
/// `true` or `false` is not explored: its row is a self-loop marked [`NO_ENTRY`].
pub(crate) fn explore(
    matrix: &Matrix,
    letter: &[u64],
    aut: &mut Automaton,
    root: u32,
    options: &LtlOptions,
    interrupt: &Interrupt,
    absorb_decided: bool,
) -> Result<Explored> {
    let n = matrix.rows();
    let q0 = aut.state_of(root)?;
    let (ptr, idx, _) = raw(matrix);
    let mut index: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut model_state = Vec::new();
    let mut automaton_state = Vec::new();
    let mut initial = Vec::with_capacity(n);
    let add = |s: u32,
               q: u32,
               index: &mut FxHashMap<(u32, u32), u32>,
               ms: &mut Vec<u32>,
               qs: &mut Vec<u32>|
     -> Result<u32> {
        if let Some(&i) = index.get(&(s, q)) {
            return Ok(i);
        }
        if ms.len() >= options.max_product_states {
            return Err(LtlError::ProductTooLarge {
                limit: options.max_product_states,
            });
        }
        let i = ms.len() as u32;
        index.insert((s, q), i);
        ms.push(s);
        qs.push(q);
        Ok(i)
    };
    for s in 0..n as u32 {
        initial.push(add(
            s,
            q0,
            &mut index,
            &mut model_state,
            &mut automaton_state,
        )?);
    }
    let mut indptr: Vec<u32> = vec![0];
    let mut indices: Vec<u32> = Vec::new();
    let mut source_entry: Vec<u32> = Vec::new();
    let mut row: Vec<(u32, u32)> = Vec::new();
    let mut i = 0usize;
    while i < model_state.len() {
        if i.is_multiple_of(4096) {
            interrupt.check(i as u64)?;
        }
        let (s, q) = (model_state[i], automaton_state[i]);
        if absorb_decided && (q == TRUE_STATE || q == FALSE_STATE) {
            indices.push(i as u32);
            source_entry.push(NO_ENTRY);
            indptr.push(indices.len() as u32);
            i += 1;
            continue;
        }
        let q2 = aut.step(q, letter[s as usize])?;
        row.clear();
        let first = ptr[s as usize] as usize;
        for (off, &target) in idx[first..ptr[s as usize + 1] as usize].iter().enumerate() {
            let e = first + off;
            let t = add(
                target,
                q2,
                &mut index,
                &mut model_state,
                &mut automaton_state,
            )?;
            row.push((t, e as u32));
        }
        row.sort_unstable();
        for &(t, e) in &row {
            indices.push(t);
            source_entry.push(e);
        }
        indptr.push(indices.len() as u32);
        i += 1;
    }
    Ok(Explored {
        rows: ProductRows {
            ptr: indptr,
            idx: indices,
            source_entry,
            initial,
        },
        model_state,
        automaton_state,
    })
}

/// The mark of a product entry that copies no chain entry: the probability-1 self-loop of a
/// decided state in a [`PrefixProduct`].
pub const NO_ENTRY: u32 = u32::MAX;

/// Which finite prefixes decide a formula: every path satisfying a co-safe formula has a
/// prefix after which the automaton is in `true` (in negation normal form it has no `G`, `W`
/// or `R`, only `X`, `U`, `F`, `M` and Boolean connectives, so bounded operators are
/// fine); every path violating a safe formula has one after which it is in `false` (no `F`,
/// `U` or `M`). A formula without unbounded operators is both (reported as co-safe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fragment {
    /// `P(φ)` = the probability of reaching the automaton state `true`.
    CoSafe,
    /// `P(φ)` = 1 − the probability of reaching the automaton state `false`.
    Safe,
}

/// The product of a chain's *pattern* (its stored transitions, whatever their probabilities)
/// with the automaton of a co-safe or safe formula, with the decided product states (automaton
/// state `true` or `false`) made absorbing: the formula's probability is a reachability
/// probability there ([`Fragment`]), in any resolution of the chain's probabilities. Every row
/// of an undecided product state copies the row of its chain state entry by entry (distinct
/// successors `t` go to distinct product states `(t, q')`), so an interval chain's product is an
/// interval chain with the same interval on each copied entry.
#[derive(Clone, Debug)]
pub struct PrefixProduct {
    /// The transitions (no [`crate::CHOICE_ENTRY`]); checking from `s` starts in `(s, φ)`.
    pub rows: ProductRows,
    /// The chain state of every product state.
    pub model_state: Vec<u32>,
    /// The product states whose automaton state is `true` (the formula holds).
    pub accepting: StateSet,
    /// The product states whose automaton state is `false` (the formula is violated).
    pub rejecting: StateSet,
    /// Which of the two sets decides the formula.
    pub fragment: Fragment,
    /// Automaton states built.
    pub automaton_states: usize,
}

impl PrefixProduct {
    /// Builds the product of `matrix`'s pattern with the automaton of `formula` (proposition
    /// `i` holds in the states of `aps[i]`) from every chain state, within the limits of
    /// `options`; [`LtlError::NotPrefixDecided`] when the formula is neither co-safe nor safe.
    pub fn build(
        matrix: &Matrix,
        aps: &[StateSet],
        formula: &Ltl,
        options: &LtlOptions,
        interrupt: &Interrupt,
    ) -> Result<PrefixProduct> {
        let (letter, mut aut, root) = automaton_of(matrix, aps, formula, options, interrupt)?;
        let subs = aut.subformulas(root);
        let fragment = if !subs.iter().any(|&f| aut.node(f).is_nu()) {
            Fragment::CoSafe
        } else if !subs.iter().any(|&f| aut.node(f).is_mu()) {
            Fragment::Safe
        } else {
            return Err(LtlError::NotPrefixDecided);
        };
        let e = explore(matrix, &letter, &mut aut, root, options, interrupt, true)?;
        let np = e.model_state.len();
        let (mut accepting, mut rejecting) =
            (StateSet::with_capacity(np), StateSet::with_capacity(np));
        for (p, &q) in e.automaton_state.iter().enumerate() {
            if q == TRUE_STATE {
                accepting.insert(p);
            } else if q == FALSE_STATE {
                rejecting.insert(p);
            }
        }
        Ok(PrefixProduct {
            rows: e.rows,
            model_state: e.model_state,
            accepting,
            rejecting,
            fragment,
            automaton_states: aut.num_states(),
        })
    }

    /// Number of product states.
    pub fn num_states(&self) -> usize {
        self.model_state.len()
    }
}

impl Product {
    /// Builds the product of the chain `matrix` (CSR; entry `(s, t)` the probability of
    /// `s → t`) with the automaton of `formula`, whose proposition `i` holds in the states of
    /// `aps[i]`, from every chain state, and finds its accepting BSCCs.
    pub fn build(
        matrix: &Matrix,
        aps: &[StateSet],
        formula: &Ltl,
        options: &LtlOptions,
        interrupt: &Interrupt,
    ) -> Result<Product> {
        let (letter, mut aut, root) = automaton_of(matrix, aps, formula, options, interrupt)?;
        let e = explore(matrix, &letter, &mut aut, root, options, interrupt, false)?;
        let (model_state, automaton_state, initial, source_entry) = (
            e.model_state,
            e.automaton_state,
            e.rows.initial,
            e.rows.source_entry,
        );
        let val = matrix.data();
        let data: Vec<f64> = source_entry.iter().map(|&k| val[k as usize]).collect();
        let (indptr, indices) = (e.rows.ptr, e.rows.idx);
        let np = model_state.len();
        let product = CsMatI::new((np, np), indptr, indices, data);

        // The accepting bottom SCCs.
        let bsccs = augur_solver::graph::bsccs(&product);
        let mut accepting = StateSet::with_capacity(np);
        let mut accepting_bsccs = 0;
        let mut judge = Judge {
            aut: &mut aut,
            matrix,
            letter: &letter,
            root,
        };
        for (k, members) in bsccs.iter().enumerate() {
            if k.is_multiple_of(64) {
                interrupt.check(k as u64)?;
            }
            let pairs: Vec<(u32, u32)> = members
                .iter()
                .map(|&p| (model_state[p as usize], automaton_state[p as usize]))
                .collect();
            if judge.accepting(&pairs)? {
                accepting_bsccs += 1;
                for &p in members {
                    accepting.insert(p as usize);
                }
            }
        }
        Ok(Product {
            matrix: product,
            model_state,
            automaton_state,
            initial,
            source_entry,
            accepting,
            automaton_states: aut.num_states(),
            bsccs: bsccs.len(),
            accepting_bsccs,
        })
    }

    /// The exact probabilities of the product's entries, copied from the chain's (aligned with
    /// its matrix data).
    pub fn exact_entries(&self, exact: &[BigRational]) -> Vec<BigRational> {
        self.source_entry
            .iter()
            .map(|&e| exact[e as usize].clone())
            .collect()
    }
}

/// Decides bottom SCCs of the product.
struct Judge<'a> {
    aut: &'a mut Automaton,
    matrix: &'a Matrix,
    letter: &'a [u64],
    root: u32,
}

impl Judge<'_> {
    /// Whether the automaton state `goal` (`TRUE_STATE` or `FALSE_STATE`) is reachable in the
    /// chain × automaton from one of `starts`.
    fn reaches(&mut self, starts: &[(u32, u32)], goal: u32) -> Result<bool> {
        let (ptr, idx, val) = raw(self.matrix);
        let mut seen: FxHashSet<(u32, u32)> = FxHashSet::default();
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for &p in starts {
            if seen.insert(p) {
                stack.push(p);
            }
        }
        while let Some((s, q)) = stack.pop() {
            if q == goal {
                return Ok(true);
            }
            if q == TRUE_STATE || q == FALSE_STATE {
                continue;
            }
            let q2 = self.aut.step(q, self.letter[s as usize])?;
            for e in ptr[s as usize] as usize..ptr[s as usize + 1] as usize {
                if val[e] > 0.0 && seen.insert((idx[e], q2)) {
                    stack.push((idx[e], q2));
                }
            }
        }
        Ok(false)
    }

    /// Whether the bottom SCC with these (chain state, automaton state) members is accepting.
    fn accepting(&mut self, members: &[(u32, u32)]) -> Result<bool> {
        // The value is the same in every state of the BSCC: a state with `true` or `false`
        // decides at once.
        if members.iter().any(|&(_, q)| q == TRUE_STATE) {
            return Ok(true);
        }
        if members.iter().any(|&(_, q)| q == FALSE_STATE) {
            return Ok(false);
        }
        let mut chain_states: Vec<u32> = members.iter().map(|&(s, _)| s).collect();
        chain_states.sort_unstable();
        chain_states.dedup();

        let subs = self.aut.subformulas(self.root);
        let mu: Vec<u32> = subs
            .iter()
            .copied()
            .filter(|&f| self.aut.node(f).is_mu())
            .collect();
        let nu: Vec<u32> = subs
            .iter()
            .copied()
            .filter(|&f| self.aut.node(f).is_nu())
            .collect();
        // Greatest fixpoint: X ⊆ μ, Y ⊆ ν.
        let mut x: FxHashSet<u32> = mu.iter().copied().collect();
        let mut y: FxHashSet<u32>;
        loop {
            // (3): Y = the ν-subformulas ψ with "every path satisfies ψ[X]ν" from every state.
            y = FxHashSet::default();
            for &psi in &nu {
                let f = self.aut.subst_nu(psi, &|id| x.contains(&id));
                let q = self.aut.state_of(f)?;
                let starts: Vec<(u32, u32)> = chain_states.iter().map(|&s| (s, q)).collect();
                if !self.reaches(&starts, FALSE_STATE)? {
                    y.insert(psi);
                }
            }
            // (2): keep the ψ ∈ X with "some path satisfies ψ[Y]μ" from some state.
            let mut kept = FxHashSet::default();
            for &psi in &mu {
                if !x.contains(&psi) {
                    continue;
                }
                let f = self.aut.subst_mu(psi, &|id| y.contains(&id));
                let q = self.aut.state_of(f)?;
                let starts: Vec<(u32, u32)> = chain_states.iter().map(|&s| (s, q)).collect();
                if self.reaches(&starts, TRUE_STATE)? {
                    kept.insert(psi);
                }
            }
            if kept.len() == x.len() {
                break;
            }
            x = kept;
        }
        // (1): from every member (s, q), every path from s satisfies q[X]ν.
        let mut starts = Vec::with_capacity(members.len());
        for &(s, q) in members {
            let q = self.aut.state_subst_nu(q, &|id| x.contains(&id))?;
            starts.push((s, q));
        }
        Ok(!self.reaches(&starts, FALSE_STATE)?)
    }
}

/// The probability of `formula` from every state of the chain, with the solver's bounds.
#[derive(Clone, Debug)]
pub struct LtlSolution {
    /// Per chain state, the value and bounds (the solver's [`Solution`] mapped back from the
    /// product).
    pub solution: Solution,
    /// The sizes of what was built: product states, automaton states, BSCCs, accepting BSCCs.
    pub product_states: usize,
    /// Automaton states built.
    pub automaton_states: usize,
    /// Bottom SCCs of the product.
    pub bsccs: usize,
    /// Accepting bottom SCCs of the product.
    pub accepting_bsccs: usize,
}

/// `P_s(formula)` for every state `s` of the chain: the product ([`Product::build`]), then the
/// probability of reaching its accepting BSCCs with `augur_solver::until_probabilities` (so the
/// default method gives sound bounds). `exact`, when given, holds the chain's exact transition
/// probabilities aligned with `matrix.data()`.
pub fn probabilities(
    matrix: &Matrix,
    exact: Option<&[BigRational]>,
    aps: &[StateSet],
    formula: &Ltl,
    options: &LtlOptions,
    solve: &SolveOptions,
) -> Result<LtlSolution> {
    let product = Product::build(matrix, aps, formula, options, &solve.interrupt)?;
    let transpose = augur_solver::graph::transpose(&product.matrix);
    let exact_product = exact.map(|e| product.exact_entries(e));
    let np = product.matrix.rows();
    let mut all = StateSet::with_capacity(np);
    all.insert_range(..);
    let sol = until_probabilities(
        &product.matrix,
        &transpose,
        exact_product.as_deref(),
        &all,
        &product.accepting,
        solve,
    )?;
    let pick = |v: &[f64]| -> Vec<f64> { product.initial.iter().map(|&p| v[p as usize]).collect() };
    let solution = Solution {
        values: pick(&sol.values),
        bounds: sol.bounds.as_ref().map(|(lo, hi)| (pick(lo), pick(hi))),
        method: sol.method,
        exact: sol.exact.as_ref().map(|x| {
            product
                .initial
                .iter()
                .map(|&p| x[p as usize].clone())
                .collect()
        }),
    };
    Ok(LtlSolution {
        solution,
        product_states: np,
        automaton_states: product.automaton_states,
        bsccs: product.bsccs,
        accepting_bsccs: product.accepting_bsccs,
    })
}
