//! The deterministic automaton of a formula, built on the fly by the "after" function `af`
//! (formula progression), and the substitutions `φ[X]ν` and `φ[Y]μ` of Esparza, Křetínský and
//! Sickert's Master Theorem, which decide the accepting BSCCs of the product.
//!
//! Formulas are hash-consed in negation normal form (`Node`, ids `u32`). An automaton state
//! is a positive Boolean combination of *atoms* — literals and temporal subformulas — kept as
//! a minimal disjunctive normal form (`Dnf`: sorted clauses of sorted atom ids, no clause
//! containing another), interned as a state id. `TRUE` is the DNF with one empty clause,
//! `FALSE` the DNF with no clause.

use crate::error::{LtlError, Result};
use crate::formula::Ltl;
use augur_solver::Interrupt;
use rustc_hash::FxHashMap;
use std::cell::Cell;

/// A formula node in negation normal form; children are node ids.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    True,
    False,
    Ap(u32),
    NotAp(u32),
    And(Vec<u32>),
    Or(Vec<u32>),
    Next(u32),
    /// `F a` (μ)
    Eventually(u32),
    /// `G a` (ν)
    Globally(u32),
    /// `a U b` (μ)
    Until(u32, u32),
    /// `a M b` = `b U (a & b)` (μ, strong release)
    StrongRelease(u32, u32),
    /// `a W b` (ν)
    WeakUntil(u32, u32),
    /// `a R b` (ν)
    Release(u32, u32),
}

impl Node {
    /// Least-fixpoint operators (`F`, `U`, `M`).
    pub(crate) fn is_mu(&self) -> bool {
        matches!(
            self,
            Node::Eventually(_) | Node::Until(..) | Node::StrongRelease(..)
        )
    }
    /// Greatest-fixpoint operators (`G`, `W`, `R`).
    pub(crate) fn is_nu(&self) -> bool {
        matches!(
            self,
            Node::Globally(_) | Node::WeakUntil(..) | Node::Release(..)
        )
    }
}

/// A minimal DNF over atom ids.
pub(crate) type Dnf = Vec<Vec<u32>>;

/// The automaton state `true` (always id 0).
pub(crate) const TRUE_STATE: u32 = 0;
/// The automaton state `false` (always id 1).
pub(crate) const FALSE_STATE: u32 = 1;

/// The formula arena and the automaton states and transitions discovered so far.
pub(crate) struct Automaton {
    nodes: Vec<Node>,
    node_ids: FxHashMap<Node, u32>,
    /// The DNF of every automaton state.
    states: Vec<Dnf>,
    state_ids: FxHashMap<Dnf, u32>,
    /// `af(atom, letter)`.
    af_atom_cache: FxHashMap<(u32, u64), Dnf>,
    /// `af(state, letter)` as a state id.
    step_cache: FxHashMap<(u32, u64), u32>,
    /// The largest number of automaton states allowed.
    max_states: usize,
    /// Atoms and clauses held by the stored DNFs (states and the `af` cache): the memory of
    /// the automaton, bounded by `max_cells`.
    cells: usize,
    /// The most cells allowed.
    max_cells: usize,
    /// Polled while DNFs are combined (the construction honours the time limit and
    /// cancellation, however large one step is).
    interrupt: Interrupt,
    /// Work done since the last poll of `interrupt` (clauses and atoms handled).
    work: Cell<u64>,
}

impl Automaton {
    pub(crate) fn new(max_states: usize, max_cells: usize, interrupt: Interrupt) -> Automaton {
        let mut a = Automaton {
            nodes: Vec::new(),
            node_ids: FxHashMap::default(),
            states: Vec::new(),
            state_ids: FxHashMap::default(),
            af_atom_cache: FxHashMap::default(),
            step_cache: FxHashMap::default(),
            max_states: max_states.max(2),
            cells: 0,
            max_cells: max_cells.max(2),
            interrupt,
            work: Cell::new(0),
        };
        let t = a.intern_state(vec![Vec::new()]);
        let f = a.intern_state(Vec::new());
        debug_assert!(matches!((t, f), (Ok(TRUE_STATE), Ok(FALSE_STATE))));
        a
    }

    pub(crate) fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    /// The number of automaton states discovered so far (including `true` and `false`).
    pub(crate) fn num_states(&self) -> usize {
        self.states.len()
    }

    fn mk(&mut self, node: Node) -> u32 {
        if let Some(&id) = self.node_ids.get(&node) {
            return id;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(node.clone());
        self.node_ids.insert(node, id);
        id
    }

    fn mk_true(&mut self) -> u32 {
        self.mk(Node::True)
    }
    fn mk_false(&mut self) -> u32 {
        self.mk(Node::False)
    }

    /// A conjunction (flattened, sorted, without duplicates, constants folded).
    pub(crate) fn mk_and(&mut self, parts: Vec<u32>) -> u32 {
        let mut out = Vec::new();
        for p in parts {
            match self.node(p) {
                Node::True => {}
                Node::False => return self.mk_false(),
                Node::And(inner) => out.extend(inner.iter().copied()),
                _ => out.push(p),
            }
        }
        out.sort_unstable();
        out.dedup();
        match out.len() {
            0 => self.mk_true(),
            1 => out[0],
            _ => self.mk(Node::And(out)),
        }
    }

    /// A disjunction (flattened, sorted, without duplicates, constants folded).
    fn mk_or(&mut self, parts: Vec<u32>) -> u32 {
        let mut out = Vec::new();
        for p in parts {
            match self.node(p) {
                Node::False => {}
                Node::True => return self.mk_true(),
                Node::Or(inner) => out.extend(inner.iter().copied()),
                _ => out.push(p),
            }
        }
        out.sort_unstable();
        out.dedup();
        match out.len() {
            0 => self.mk_false(),
            1 => out[0],
            _ => self.mk(Node::Or(out)),
        }
    }

    /// The negation normal form of `f` (negated when `negate`), interned.
    pub(crate) fn nnf(&mut self, f: &Ltl, negate: bool) -> u32 {
        match (f, negate) {
            (Ltl::True, false) | (Ltl::False, true) => self.mk_true(),
            (Ltl::True, true) | (Ltl::False, false) => self.mk_false(),
            (Ltl::Ap(i), false) => self.mk(Node::Ap(*i)),
            (Ltl::Ap(i), true) => self.mk(Node::NotAp(*i)),
            (Ltl::Not(a), n) => self.nnf(a, !n),
            (Ltl::And(a, b), false) | (Ltl::Or(a, b), true) => {
                let (a, b) = (self.nnf(a, negate), self.nnf(b, negate));
                self.mk_and(vec![a, b])
            }
            (Ltl::Or(a, b), false) | (Ltl::And(a, b), true) => {
                let (a, b) = (self.nnf(a, negate), self.nnf(b, negate));
                self.mk_or(vec![a, b])
            }
            (Ltl::Implies(a, b), false) => {
                let (a, b) = (self.nnf(a, true), self.nnf(b, false));
                self.mk_or(vec![a, b])
            }
            (Ltl::Implies(a, b), true) => {
                let (a, b) = (self.nnf(a, false), self.nnf(b, true));
                self.mk_and(vec![a, b])
            }
            (Ltl::Iff(a, b), n) => {
                // (a & b) | (!a & !b), negated: (a & !b) | (!a & b)
                let (pa, na) = (self.nnf(a, false), self.nnf(a, true));
                let (pb, nb) = (self.nnf(b, false), self.nnf(b, true));
                let (l, r) = if n {
                    (self.mk_and(vec![pa, nb]), self.mk_and(vec![na, pb]))
                } else {
                    (self.mk_and(vec![pa, pb]), self.mk_and(vec![na, nb]))
                };
                self.mk_or(vec![l, r])
            }
            (Ltl::Next(a), n) => {
                let a = self.nnf(a, n);
                self.next(a)
            }
            (Ltl::Eventually(a), false) | (Ltl::Globally(a), true) => {
                let a = self.nnf(a, negate);
                self.eventually(a)
            }
            (Ltl::Globally(a), false) | (Ltl::Eventually(a), true) => {
                let a = self.nnf(a, negate);
                self.globally(a)
            }
            // !(a U b) = !a R !b
            (Ltl::Until(a, b), false) | (Ltl::Release(a, b), true) => {
                let (a, b) = (self.nnf(a, negate), self.nnf(b, negate));
                self.until(a, b)
            }
            (Ltl::Release(a, b), false) | (Ltl::Until(a, b), true) => {
                let (a, b) = (self.nnf(a, negate), self.nnf(b, negate));
                self.release(a, b)
            }
            (Ltl::WeakUntil(a, b), false) => {
                let (a, b) = (self.nnf(a, false), self.nnf(b, false));
                self.weak_until(a, b)
            }
            // !(a W b) = !b U (!a & !b) = !b M !a  (a M b = b U (a & b))
            (Ltl::WeakUntil(a, b), true) => {
                let (na, nb) = (self.nnf(a, true), self.nnf(b, true));
                self.strong_release(na, nb)
            }
        }
    }

    fn next(&mut self, a: u32) -> u32 {
        match self.node(a) {
            Node::True | Node::False => a,
            _ => self.mk(Node::Next(a)),
        }
    }
    pub(crate) fn eventually(&mut self, a: u32) -> u32 {
        match self.node(a) {
            Node::True | Node::False => a,
            _ => self.mk(Node::Eventually(a)),
        }
    }
    pub(crate) fn globally(&mut self, a: u32) -> u32 {
        match self.node(a) {
            Node::True | Node::False => a,
            _ => self.mk(Node::Globally(a)),
        }
    }
    fn until(&mut self, a: u32, b: u32) -> u32 {
        match (self.node(a), self.node(b)) {
            (_, Node::True | Node::False) | (Node::False, _) => b,
            (Node::True, _) => self.eventually(b),
            _ => self.mk(Node::Until(a, b)),
        }
    }
    fn weak_until(&mut self, a: u32, b: u32) -> u32 {
        match (self.node(a), self.node(b)) {
            (_, Node::True) | (Node::True, _) => self.mk_true(),
            (Node::False, _) => b,
            (_, Node::False) => self.globally(a),
            _ => self.mk(Node::WeakUntil(a, b)),
        }
    }
    fn release(&mut self, a: u32, b: u32) -> u32 {
        match (self.node(a), self.node(b)) {
            (_, Node::True | Node::False) | (Node::True, _) => b,
            (Node::False, _) => self.globally(b),
            _ => self.mk(Node::Release(a, b)),
        }
    }
    /// `a M b` = `b U (a & b)`.
    fn strong_release(&mut self, a: u32, b: u32) -> u32 {
        match (self.node(a), self.node(b)) {
            (_, Node::False) | (Node::False, _) => self.mk_false(),
            (Node::True, _) => b,
            (_, Node::True) => self.eventually(a),
            _ => self.mk(Node::StrongRelease(a, b)),
        }
    }

    /// Every subformula of `root` (including itself), each once.
    pub(crate) fn subformulas(&self, root: u32) -> Vec<u32> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![root];
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            out.push(id);
            match self.node(id) {
                Node::True | Node::False | Node::Ap(_) | Node::NotAp(_) => {}
                Node::And(v) | Node::Or(v) => stack.extend(v.iter().copied()),
                Node::Next(a) | Node::Eventually(a) | Node::Globally(a) => stack.push(*a),
                Node::Until(a, b)
                | Node::StrongRelease(a, b)
                | Node::WeakUntil(a, b)
                | Node::Release(a, b) => {
                    stack.push(*a);
                    stack.push(*b);
                }
            }
        }
        out.sort_unstable();
        out
    }

    // ----- DNFs -----

    fn dnf_true() -> Dnf {
        vec![Vec::new()]
    }

    /// Counts `amount` units of work and polls the interrupt every [`POLL_WORK`] units.
    fn tick(&self, amount: usize) -> Result<()> {
        let w = self.work.get() + amount as u64;
        if w >= POLL_WORK {
            self.work.set(0);
            self.interrupt.check(0)?;
        } else {
            self.work.set(w);
        }
        Ok(())
    }

    /// The memory a DNF takes, in cells (one per clause and per atom).
    fn cells_of(d: &Dnf) -> usize {
        d.len() + d.iter().map(Vec::len).sum::<usize>()
    }

    /// Counts `d` against the memory budget of the automaton.
    fn store(&mut self, d: &Dnf) -> Result<()> {
        self.cells += Self::cells_of(d);
        if self.cells > self.max_cells {
            return Err(LtlError::AutomatonTooLarge {
                limit: self.max_states,
            });
        }
        Ok(())
    }

    /// [`Self::minimise`], counting its quadratic work and polling the interrupt.
    fn minimise_polled(&self, d: Dnf) -> Result<Dnf> {
        let n = d.len();
        self.tick(n.saturating_mul(n).max(1))?;
        Ok(Self::minimise(d))
    }

    /// Sorts, deduplicates and removes every clause that contains another one.
    fn minimise(mut d: Dnf) -> Dnf {
        d.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        d.dedup();
        let mut out: Dnf = Vec::with_capacity(d.len());
        for c in d {
            if !out.iter().any(|o| is_subset(o, &c)) {
                out.push(c);
            }
        }
        out.sort_unstable();
        out
    }

    fn dnf_or(&self, a: Dnf, b: Dnf) -> Result<Dnf> {
        let mut a = a;
        a.extend(b);
        if Self::cells_of(&a) > MAX_CELLS_PER_DNF {
            return Err(LtlError::AutomatonTooLarge {
                limit: self.max_states,
            });
        }
        self.minimise_polled(a)
    }

    fn dnf_and(&self, a: &Dnf, b: &Dnf) -> Result<Dnf> {
        if a.is_empty() || b.is_empty() {
            return Ok(Vec::new());
        }
        if a.len().saturating_mul(b.len()) > MAX_CLAUSES {
            return Err(LtlError::AutomatonTooLarge {
                limit: self.max_states,
            });
        }
        let mut out = Vec::with_capacity(a.len() * b.len());
        let mut cells = 0usize;
        for x in a {
            self.tick(b.len())?;
            for y in b {
                let c = merge(x, y);
                cells += c.len() + 1;
                out.push(c);
            }
            if cells > MAX_CELLS_PER_DNF {
                return Err(LtlError::AutomatonTooLarge {
                    limit: self.max_states,
                });
            }
        }
        self.minimise_polled(out)
    }

    /// The DNF of a formula node over its atoms.
    pub(crate) fn dnf_of(&self, id: u32) -> Result<Dnf> {
        match self.node(id) {
            Node::True => Ok(Self::dnf_true()),
            Node::False => Ok(Vec::new()),
            Node::And(v) => {
                let mut acc = Self::dnf_true();
                for &c in v {
                    acc = self.dnf_and(&acc, &self.dnf_of(c)?)?;
                }
                Ok(acc)
            }
            Node::Or(v) => {
                let mut acc = Vec::new();
                for &c in v {
                    acc = self.dnf_or(acc, self.dnf_of(c)?)?;
                }
                Ok(acc)
            }
            _ => Ok(vec![vec![id]]),
        }
    }

    /// The formula node of a DNF (an `Or` of `And`s of atoms).
    fn formula_of(&mut self, d: &Dnf) -> u32 {
        let clauses: Vec<u32> = d.iter().map(|c| self.mk_and(c.clone())).collect();
        self.mk_or(clauses)
    }

    pub(crate) fn intern_state(&mut self, d: Dnf) -> Result<u32> {
        if let Some(&id) = self.state_ids.get(&d) {
            return Ok(id);
        }
        if self.states.len() >= self.max_states {
            return Err(LtlError::AutomatonTooLarge {
                limit: self.max_states,
            });
        }
        self.store(&d)?;
        let id = self.states.len() as u32;
        self.states.push(d.clone());
        self.state_ids.insert(d, id);
        Ok(id)
    }

    /// The automaton state of a formula node.
    pub(crate) fn state_of(&mut self, id: u32) -> Result<u32> {
        let d = self.dnf_of(id)?;
        self.intern_state(d)
    }

    // ----- the after function -----

    /// `af(f, letter)` for a formula node (any node, not only atoms).
    fn af_formula(&mut self, id: u32, letter: u64) -> Result<Dnf> {
        match self.node(id).clone() {
            Node::True => Ok(Self::dnf_true()),
            Node::False => Ok(Vec::new()),
            Node::And(v) => {
                let mut acc = Self::dnf_true();
                for c in v {
                    let d = self.af_formula(c, letter)?;
                    acc = self.dnf_and(&acc, &d)?;
                }
                Ok(acc)
            }
            Node::Or(v) => {
                let mut acc = Vec::new();
                for c in v {
                    let d = self.af_formula(c, letter)?;
                    acc = self.dnf_or(acc, d)?;
                }
                Ok(acc)
            }
            _ => self.af_atom(id, letter),
        }
    }

    /// `af(atom, letter)`: what the rest of the word must satisfy after reading `letter` for
    /// the atom to hold.
    fn af_atom(&mut self, id: u32, letter: u64) -> Result<Dnf> {
        if let Some(d) = self.af_atom_cache.get(&(id, letter)) {
            return Ok(d.clone());
        }
        let me = vec![vec![id]];
        let d = match self.node(id).clone() {
            Node::Ap(i) => bool_dnf(letter >> i & 1 == 1),
            Node::NotAp(i) => bool_dnf(letter >> i & 1 == 0),
            Node::Next(a) => self.dnf_of(a)?,
            // F a = a | X F a
            Node::Eventually(a) => {
                let d = self.af_formula(a, letter)?;
                self.dnf_or(d, me)?
            }
            // G a = a & X G a
            Node::Globally(a) => {
                let d = self.af_formula(a, letter)?;
                self.dnf_and(&d, &me)?
            }
            // a U b = b | (a & X(a U b)); a W b likewise
            Node::Until(a, b) | Node::WeakUntil(a, b) => {
                let da = self.af_formula(a, letter)?;
                let db = self.af_formula(b, letter)?;
                let step = self.dnf_and(&da, &me)?;
                self.dnf_or(db, step)?
            }
            // a R b = b & (a | X(a R b)); a M b likewise
            Node::Release(a, b) | Node::StrongRelease(a, b) => {
                let da = self.af_formula(a, letter)?;
                let db = self.af_formula(b, letter)?;
                let step = self.dnf_or(da, me)?;
                self.dnf_and(&db, &step)?
            }
            Node::True | Node::False | Node::And(_) | Node::Or(_) => {
                return self.af_formula(id, letter)
            }
        };
        self.store(&d)?;
        self.af_atom_cache.insert((id, letter), d.clone());
        Ok(d)
    }

    /// The successor of automaton state `q` on `letter`.
    pub(crate) fn step(&mut self, q: u32, letter: u64) -> Result<u32> {
        if q == TRUE_STATE || q == FALSE_STATE {
            return Ok(q);
        }
        if let Some(&s) = self.step_cache.get(&(q, letter)) {
            return Ok(s);
        }
        let clauses = self.states[q as usize].clone();
        let mut acc = Vec::new();
        for clause in clauses {
            let mut c = Self::dnf_true();
            for atom in clause {
                let d = self.af_atom(atom, letter)?;
                c = self.dnf_and(&c, &d)?;
                if c.is_empty() {
                    break;
                }
            }
            acc = self.dnf_or(acc, c)?;
            if acc.len() == 1 && acc[0].is_empty() {
                break;
            }
        }
        let s = self.intern_state(acc)?;
        self.step_cache.insert((q, letter), s);
        Ok(s)
    }

    // ----- the Master Theorem's substitutions -----

    /// `f[X]ν` for a set `x` of μ-subformulas: a μ-subformula in `x` is replaced by its ν
    /// counterpart (`F a` by `true`, `a U b` by `a W b`, `a M b` by `a R b`), one not in `x` by
    /// `false`; everything else is kept (recursively substituted).
    pub(crate) fn subst_nu(&mut self, id: u32, x: &dyn Fn(u32) -> bool) -> u32 {
        match self.node(id).clone() {
            Node::True | Node::False | Node::Ap(_) | Node::NotAp(_) => id,
            Node::And(v) => {
                let v = v.into_iter().map(|c| self.subst_nu(c, x)).collect();
                self.mk_and(v)
            }
            Node::Or(v) => {
                let v = v.into_iter().map(|c| self.subst_nu(c, x)).collect();
                self.mk_or(v)
            }
            Node::Next(a) => {
                let a = self.subst_nu(a, x);
                self.next(a)
            }
            Node::Globally(a) => {
                let a = self.subst_nu(a, x);
                self.globally(a)
            }
            Node::WeakUntil(a, b) => {
                let (a, b) = (self.subst_nu(a, x), self.subst_nu(b, x));
                self.weak_until(a, b)
            }
            Node::Release(a, b) => {
                let (a, b) = (self.subst_nu(a, x), self.subst_nu(b, x));
                self.release(a, b)
            }
            Node::Eventually(_) if x(id) => self.mk_true(),
            Node::Until(a, b) if x(id) => {
                let (a, b) = (self.subst_nu(a, x), self.subst_nu(b, x));
                self.weak_until(a, b)
            }
            Node::StrongRelease(a, b) if x(id) => {
                let (a, b) = (self.subst_nu(a, x), self.subst_nu(b, x));
                self.release(a, b)
            }
            Node::Eventually(_) | Node::Until(..) | Node::StrongRelease(..) => self.mk_false(),
        }
    }

    /// `f[Y]μ` for a set `y` of ν-subformulas: a ν-subformula in `y` is replaced by `true`, one
    /// not in `y` by its μ counterpart (`G a` by `false`, `a W b` by `a U b`, `a R b` by
    /// `a M b`); everything else is kept (recursively substituted).
    pub(crate) fn subst_mu(&mut self, id: u32, y: &dyn Fn(u32) -> bool) -> u32 {
        match self.node(id).clone() {
            Node::True | Node::False | Node::Ap(_) | Node::NotAp(_) => id,
            Node::And(v) => {
                let v = v.into_iter().map(|c| self.subst_mu(c, y)).collect();
                self.mk_and(v)
            }
            Node::Or(v) => {
                let v = v.into_iter().map(|c| self.subst_mu(c, y)).collect();
                self.mk_or(v)
            }
            Node::Next(a) => {
                let a = self.subst_mu(a, y);
                self.next(a)
            }
            Node::Eventually(a) => {
                let a = self.subst_mu(a, y);
                self.eventually(a)
            }
            Node::Until(a, b) => {
                let (a, b) = (self.subst_mu(a, y), self.subst_mu(b, y));
                self.until(a, b)
            }
            Node::StrongRelease(a, b) => {
                let (a, b) = (self.subst_mu(a, y), self.subst_mu(b, y));
                self.strong_release(a, b)
            }
            Node::Globally(_) | Node::WeakUntil(..) | Node::Release(..) if y(id) => self.mk_true(),
            Node::Globally(_) => self.mk_false(),
            Node::WeakUntil(a, b) => {
                let (a, b) = (self.subst_mu(a, y), self.subst_mu(b, y));
                self.until(a, b)
            }
            Node::Release(a, b) => {
                let (a, b) = (self.subst_mu(a, y), self.subst_mu(b, y));
                self.strong_release(a, b)
            }
        }
    }

    /// `q[X]ν` for an automaton state `q`, as an automaton state.
    pub(crate) fn state_subst_nu(&mut self, q: u32, x: &dyn Fn(u32) -> bool) -> Result<u32> {
        let d = self.states[q as usize].clone();
        let f = self.formula_of(&d);
        let g = self.subst_nu(f, x);
        self.state_of(g)
    }
}

/// Conjunctions with more clauses than this are refused (the automaton is too large).
const MAX_CLAUSES: usize = 1 << 20;

/// A single DNF with more cells (clauses plus atoms) than this is refused (about 64 MB).
const MAX_CELLS_PER_DNF: usize = 1 << 24;

/// Units of work (clauses and atoms handled) between two polls of the interrupt.
const POLL_WORK: u64 = 1 << 16;

fn bool_dnf(b: bool) -> Dnf {
    if b {
        vec![Vec::new()]
    } else {
        Vec::new()
    }
}

/// Whether sorted `a` ⊆ sorted `b`.
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

/// The sorted union of two sorted clauses.
fn merge(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] < b[j]) {
            out.push(a[i]);
            i += 1;
        } else if i == a.len() || b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
            j += 1;
        }
    }
    out
}
