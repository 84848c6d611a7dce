//! The parametric checker: a resolved property's value at every state as a rational function.
//!
//! - `P=? [ X φ ]`: one step; `U`, `F`, `G`, `W`, `R` unbounded by state elimination
//!   ([`crate::elim`]) after the graph precomputation (Prob0/Prob1 on the chain's graph);
//!   step-bounded ones (`U<=k`, `F[a,b]`, ...) by `k` products with the matrix of functions.
//! - `R=? [ F φ ]` (∞ where φ is missed with positive probability, as PRISM says `Infinity`),
//!   `C<=k`, `I=k`, `S`; `S=? [ φ ]`: the bottom SCCs' stationary distributions (elimination on
//!   the transposed chain) weighted by the probability of reaching each.
//!
//! The state formulas inside (labels, expressions, boolean combinations) are the point
//! checker's sets on the chain at the reference point: they do not depend on the parameters.
//! A probabilistic operator nested inside another one would, and is refused.

use crate::elim::{order, System};
use crate::error::{ParamError, Result};
use crate::model::ParametricModel;
use augur_check::{CheckOptions, CheckSession, StateValues};
use augur_dtmc::StateSet;
use augur_pctl::resolve::{ResolvedFormula, ResolvedPath, ResolvedRewardPath, Steps, Threshold};
use augur_pctl::ResolvedProperty;
use augur_ratfun::RatFunc;
use augur_source::SourceFile;
use std::sync::Arc;

/// A value of a parametric property at a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PValue {
    /// A rational function of the parameters.
    Func(RatFunc),
    /// An infinite expected reward.
    Infinity,
}

/// The outcome of a parametric check: the quantity the property's operator measures.
#[derive(Clone, Debug)]
pub struct ParamOutcome {
    /// The value at each state (`None` where not computed: only the initial states unless all
    /// were asked for).
    pub values: Vec<Option<PValue>>,
    /// The property's threshold (`P<=0.01`), for regions; `None` for `=?`.
    pub threshold: Option<Threshold>,
    /// Whether the operator computes a minimum (`Pmin`, `Rmin`); all the same on a DTMC.
    pub is_probability: bool,
}

/// Checks properties on one parametric model.
pub struct ParamChecker<'m> {
    m: &'m ParametricModel,
    session: CheckSession<'m>,
    all: bool,
    n: usize,
    transpose: Option<augur_dtmc::Matrix>,
}

impl<'m> ParamChecker<'m> {
    /// A checker of `m`; with `all_states`, every state's function is computed.
    pub fn new(m: &'m ParametricModel, all_states: bool) -> ParamChecker<'m> {
        ParamChecker {
            m,
            session: CheckSession::new(&m.model, CheckOptions::default()),
            all: all_states,
            n: m.n_params(),
            transpose: None,
        }
    }

    /// The value of the property's top-level operator.
    pub fn check(&mut self, p: &ResolvedProperty) -> Result<ParamOutcome> {
        let source = Arc::clone(&p.source);
        match &p.formula {
            ResolvedFormula::Prob {
                threshold, path, ..
            } => {
                let values = self.path(path, &source)?;
                Ok(ParamOutcome {
                    values: values.into_iter().map(|v| v.map(PValue::Func)).collect(),
                    threshold: threshold.clone(),
                    is_probability: true,
                })
            }
            ResolvedFormula::Reward {
                structure,
                threshold,
                path,
                ..
            } => Ok(ParamOutcome {
                values: self.reward(*structure, path, &source)?,
                threshold: threshold.clone(),
                is_probability: false,
            }),
            ResolvedFormula::Steady {
                threshold, formula, ..
            } => {
                let set = self.set(formula, &source)?;
                let n = self.n;
                let values = self.steady(&|s| {
                    if set.contains(s) {
                        RatFunc::one(n)
                    } else {
                        RatFunc::zero(n)
                    }
                })?;
                Ok(ParamOutcome {
                    values: values.into_iter().map(|v| v.map(PValue::Func)).collect(),
                    threshold: threshold.clone(),
                    is_probability: true,
                })
            }
            _ => Err(ParamError::Unsupported(format!(
                "`{}`: the parametric engine answers P, R and S operators (P=? [ ... ], R=? [ ... ], S=? [ ... ]) at the top of a property",
                p.text
            ))),
        }
    }

    fn wanted(&self) -> Vec<u32> {
        if self.all {
            (0..self.m.model.dtmc().num_states() as u32).collect()
        } else {
            self.m.model.dtmc().initial.clone()
        }
    }

    /// The states of a state formula without probabilistic operators (the point checker's,
    /// on the chain at the reference point).
    pub fn state_set(&mut self, f: &ResolvedFormula, source: &Arc<SourceFile>) -> Result<StateSet> {
        self.set(f, source)
    }

    /// The states of a state formula without probabilistic operators.
    fn set(&mut self, f: &ResolvedFormula, source: &Arc<SourceFile>) -> Result<StateSet> {
        if nested(f) {
            return Err(ParamError::Unsupported(
                "a P, R or S operator inside a state formula depends on the parameters: the parametric engine does not nest them".into(),
            ));
        }
        match self.session.values(f, source)? {
            StateValues::Bool(s) => Ok(s),
            StateValues::Num(_) => Err(ParamError::Unsupported(
                "a numeric state formula where a set of states was expected".into(),
            )),
        }
    }

    fn transpose(&mut self) -> &augur_dtmc::Matrix {
        if self.transpose.is_none() {
            self.transpose = Some(augur_solver::graph::transpose(&self.m.model.dtmc().matrix));
        }
        self.transpose.as_ref().expect("set above")
    }

    fn path(
        &mut self,
        path: &ResolvedPath,
        source: &Arc<SourceFile>,
    ) -> Result<Vec<Option<RatFunc>>> {
        let n_states = self.m.model.dtmc().num_states();
        let all = {
            let mut s = StateSet::with_capacity(n_states);
            s.insert_range(..);
            s
        };
        match path {
            ResolvedPath::Next(f) => {
                let set = self.set(f, source)?;
                let d = self.m.model.dtmc();
                let mut out = vec![None; n_states];
                for s in self.wanted() {
                    let mut v = RatFunc::zero(self.n);
                    for k in d.row_range(s as usize) {
                        if set.contains(d.matrix.indices()[k] as usize) {
                            v = &v + &self.m.transitions[k];
                        }
                    }
                    out[s as usize] = Some(v);
                }
                Ok(out)
            }
            ResolvedPath::Until(a, b, steps) => {
                let (a, b) = (self.set(a, source)?, self.set(b, source)?);
                self.until(&a, &b, steps)
            }
            ResolvedPath::Eventually(b, steps) => {
                let b = self.set(b, source)?;
                self.until(&all, &b, steps)
            }
            ResolvedPath::Globally(a, steps) => {
                // G φ = ¬ F ¬φ
                let mut not_a = self.set(a, source)?;
                not_a.toggle_range(..);
                Ok(complement(self.until(&all, &not_a, steps)?, self.n))
            }
            ResolvedPath::WeakUntil(a, b, steps) => {
                // φ W ψ = ¬ (¬ψ U (¬φ ∧ ¬ψ))
                let (a, b) = (self.set(a, source)?, self.set(b, source)?);
                let mut not_b = b.clone();
                not_b.toggle_range(..);
                let mut target = a.clone();
                target.toggle_range(..);
                target.intersect_with(&not_b);
                Ok(complement(self.until(&not_b, &target, steps)?, self.n))
            }
            ResolvedPath::Release(a, b, steps) => {
                // φ R ψ = ¬ (¬φ U ¬ψ)
                let (mut na, mut nb) = (self.set(a, source)?, self.set(b, source)?);
                na.toggle_range(..);
                nb.toggle_range(..);
                Ok(complement(self.until(&na, &nb, steps)?, self.n))
            }
            ResolvedPath::Ltl(_) => Err(ParamError::Unsupported(
                "LTL path formulas are not handled by the parametric engine (use X, U, F, G, W, R)"
                    .into(),
            )),
        }
    }

    /// `P(a U b)` within `steps`.
    fn until(&mut self, a: &StateSet, b: &StateSet, steps: &Steps) -> Result<Vec<Option<RatFunc>>> {
        let n_states = self.m.model.dtmc().num_states();
        let save = self.all;
        self.all = save || steps.lower > 0;
        let base = match steps.upper {
            None => self.unbounded_until(a, b),
            Some(hi) => {
                let k = hi.saturating_sub(steps.lower);
                self.bounded_until(a, b, k)
            }
        };
        self.all = save;
        let base = base?;
        if steps.lower == 0 {
            return Ok(self.keep_wanted(base));
        }
        // `lower` more steps through a-states (the target counts only from step `lower` on).
        let d = self.m.model.dtmc();
        let mut x: Vec<RatFunc> = base
            .into_iter()
            .map(|v| v.unwrap_or_else(|| RatFunc::zero(self.n)))
            .collect();
        for _ in 0..steps.lower {
            let mut y = vec![RatFunc::zero(self.n); n_states];
            for (s, ys) in y.iter_mut().enumerate() {
                if !a.contains(s) {
                    continue;
                }
                for k in d.row_range(s) {
                    let t = d.matrix.indices()[k] as usize;
                    if !x[t].is_zero() {
                        *ys = &*ys + &(&self.m.transitions[k] * &x[t]);
                    }
                }
            }
            x = y;
        }
        Ok(self.keep_wanted(x.into_iter().map(Some).collect()))
    }

    fn keep_wanted(&self, v: Vec<Option<RatFunc>>) -> Vec<Option<RatFunc>> {
        if self.all {
            return v;
        }
        let mut out = vec![None; v.len()];
        for s in self.wanted() {
            out[s as usize] = v[s as usize].clone();
        }
        out
    }

    /// `P(a U<=k b)` at every state: `k` products.
    fn bounded_until(
        &mut self,
        a: &StateSet,
        b: &StateSet,
        k: u64,
    ) -> Result<Vec<Option<RatFunc>>> {
        let d = self.m.model.dtmc();
        let n_states = d.num_states();
        let one = RatFunc::one(self.n);
        let mut x: Vec<RatFunc> = (0..n_states)
            .map(|s| {
                if b.contains(s) {
                    one.clone()
                } else {
                    RatFunc::zero(self.n)
                }
            })
            .collect();
        for _ in 0..k {
            let mut y = x.clone();
            for (s, ys) in y.iter_mut().enumerate() {
                if b.contains(s) || !a.contains(s) {
                    continue;
                }
                let mut v = RatFunc::zero(self.n);
                for e in d.row_range(s) {
                    let t = d.matrix.indices()[e] as usize;
                    if !x[t].is_zero() {
                        v = &v + &(&self.m.transitions[e] * &x[t]);
                    }
                }
                *ys = v;
            }
            x = y;
        }
        Ok(x.into_iter().map(Some).collect())
    }

    /// `P(a U b)` at the wanted states (every state when asked), by elimination.
    fn unbounded_until(&mut self, a: &StateSet, b: &StateSet) -> Result<Vec<Option<RatFunc>>> {
        let d = self.m.model.dtmc();
        let n_states = d.num_states();
        let mt = self.transpose().clone();
        let d = self.m.model.dtmc();
        let zero = augur_solver::graph::prob0(&mt, a, b);
        let one = augur_solver::graph::prob1(&d.matrix, &mt, a, b, &zero);
        let mut out = vec![None; n_states];
        let wanted = self.wanted();
        let maybe: Vec<u32> = (0..n_states as u32)
            .filter(|&s| !zero.contains(s as usize) && !one.contains(s as usize))
            .collect();
        for &s in &wanted {
            if zero.contains(s as usize) {
                out[s as usize] = Some(RatFunc::zero(self.n));
            } else if one.contains(s as usize) {
                out[s as usize] = Some(RatFunc::one(self.n));
            }
        }
        if maybe.is_empty() {
            return Ok(out);
        }
        let mut local = vec![u32::MAX; n_states];
        for (i, &s) in maybe.iter().enumerate() {
            local[s as usize] = i as u32;
        }
        let mut sys = System::new(maybe.len(), self.n);
        for (i, &s) in maybe.iter().enumerate() {
            for k in d.row_range(s as usize) {
                let t = d.matrix.indices()[k] as usize;
                let f = &self.m.transitions[k];
                if one.contains(t) {
                    sys.add_b(i as u32, f);
                } else if local[t] != u32::MAX {
                    sys.add(i as u32, local[t], f.clone());
                }
            }
        }
        let values = self.solve_local(sys, &maybe, &local, &wanted);
        for (i, &s) in maybe.iter().enumerate() {
            if let Some(v) = &values[i] {
                out[s as usize] = Some(v.clone());
            }
        }
        Ok(out)
    }

    /// Solves a system over the local states `states` (`local` maps global to local),
    /// keeping the wanted ones last.
    fn solve_local(
        &self,
        sys: System,
        states: &[u32],
        local: &[u32],
        wanted: &[u32],
    ) -> Vec<Option<RatFunc>> {
        let d = self.m.model.dtmc();
        let last: Vec<u32> = wanted
            .iter()
            .filter(|&&s| local[s as usize] != u32::MAX)
            .map(|&s| local[s as usize])
            .collect();
        let first: Vec<u32> = d
            .initial
            .iter()
            .filter(|&&s| local[s as usize] != u32::MAX)
            .map(|&s| local[s as usize])
            .collect();
        let succ = |i: u32| -> Vec<u32> {
            let s = states[i as usize] as usize;
            d.row_range(s)
                .map(|k| d.matrix.indices()[k] as usize)
                .filter(|&t| local[t] != u32::MAX)
                .map(|t| local[t])
                .collect()
        };
        let ord = order(states.len(), &succ, &first, &last);
        sys.solve(&ord, last.len(), self.all)
    }

    /// Rewards.
    fn reward(
        &mut self,
        structure: usize,
        path: &ResolvedRewardPath,
        source: &Arc<SourceFile>,
    ) -> Result<Vec<Option<PValue>>> {
        let d = self.m.model.dtmc();
        let n_states = d.num_states();
        let n = self.n;
        // The expected reward of one step from each state: r(s) + Σ P(s,t) r(s,t).
        let step: Vec<RatFunc> = (0..n_states)
            .map(|s| {
                let mut v = match self.m.state_rewards.get(structure).and_then(Option::as_ref) {
                    Some(sr) => sr[s].clone(),
                    None => RatFunc::zero(n),
                };
                if let Some(tr) = self
                    .m
                    .transition_rewards
                    .get(structure)
                    .and_then(Option::as_ref)
                {
                    for k in d.row_range(s) {
                        if !tr[k].is_zero() {
                            v = &v + &(&self.m.transitions[k] * &tr[k]);
                        }
                    }
                }
                v
            })
            .collect();
        let state_only: Vec<RatFunc> = (0..n_states)
            .map(
                |s| match self.m.state_rewards.get(structure).and_then(Option::as_ref) {
                    Some(sr) => sr[s].clone(),
                    None => RatFunc::zero(n),
                },
            )
            .collect();
        let func = |v: Vec<Option<RatFunc>>| v.into_iter().map(|x| x.map(PValue::Func)).collect();
        match path {
            ResolvedRewardPath::Reachability(target) => {
                let target = self.set(target, source)?;
                self.reach_reward(&target, &step)
            }
            ResolvedRewardPath::Cumulative { steps: Some(k), discount: None } => {
                let mut x = vec![RatFunc::zero(n); n_states];
                for _ in 0..*k {
                    x = self.step_back(&x, Some(&step));
                }
                Ok(func(self.keep_wanted(x.into_iter().map(Some).collect())))
            }
            ResolvedRewardPath::Instantaneous(k) => {
                let mut x = state_only;
                for _ in 0..*k {
                    x = self.step_back(&x, None);
                }
                Ok(func(self.keep_wanted(x.into_iter().map(Some).collect())))
            }
            ResolvedRewardPath::LongRun => Ok(func(self.steady(&|s| step[s].clone())?)),
            _ => Err(ParamError::Unsupported(
                "the parametric engine answers R=? [ F φ ], [ C<=k ], [ I=k ] and [ S ] (no discounting, no total reward C, no LTL)".into(),
            )),
        }
    }

    /// One step back: `add(s) + Σ_t P(s,t) x(t)` in every state (`add` 0 when `None`).
    fn step_back(&self, x: &[RatFunc], add: Option<&[RatFunc]>) -> Vec<RatFunc> {
        let d = self.m.model.dtmc();
        (0..d.num_states())
            .map(|s| {
                let mut v = add.map_or_else(|| RatFunc::zero(self.n), |a| a[s].clone());
                for e in d.row_range(s) {
                    let t = d.matrix.indices()[e] as usize;
                    if !x[t].is_zero() {
                        v = &v + &(&self.m.transitions[e] * &x[t]);
                    }
                }
                v
            })
            .collect()
    }

    /// `R(F target)`: ∞ where the target is missed with positive probability.
    fn reach_reward(&mut self, target: &StateSet, step: &[RatFunc]) -> Result<Vec<Option<PValue>>> {
        let d = self.m.model.dtmc();
        let n_states = d.num_states();
        let mt = self.transpose().clone();
        let d = self.m.model.dtmc();
        let mut all = StateSet::with_capacity(n_states);
        all.insert_range(..);
        let zero = augur_solver::graph::prob0(&mt, &all, target);
        let one = augur_solver::graph::prob1(&d.matrix, &mt, &all, target, &zero);
        let wanted = self.wanted();
        let mut out = vec![None; n_states];
        for &s in &wanted {
            if target.contains(s as usize) {
                out[s as usize] = Some(PValue::Func(RatFunc::zero(self.n)));
            } else if !one.contains(s as usize) {
                out[s as usize] = Some(PValue::Infinity);
            }
        }
        let states: Vec<u32> = (0..n_states as u32)
            .filter(|&s| one.contains(s as usize) && !target.contains(s as usize))
            .collect();
        if states.is_empty() {
            return Ok(out);
        }
        let mut local = vec![u32::MAX; n_states];
        for (i, &s) in states.iter().enumerate() {
            local[s as usize] = i as u32;
        }
        let mut sys = System::new(states.len(), self.n);
        for (i, &s) in states.iter().enumerate() {
            sys.add_b(i as u32, &step[s as usize]);
            for k in d.row_range(s as usize) {
                let t = d.matrix.indices()[k] as usize;
                if local[t] != u32::MAX {
                    sys.add(i as u32, local[t], self.m.transitions[k].clone());
                }
            }
        }
        let values = self.solve_local(sys, &states, &local, &wanted);
        for (i, &s) in states.iter().enumerate() {
            if let Some(v) = &values[i] {
                out[s as usize] = Some(PValue::Func(v.clone()));
            }
        }
        Ok(out)
    }

    /// The long-run average of `g` (a function per state): Σ over bottom SCCs B of
    /// P(reach B) · Σ_{s∈B} π_B(s) g(s).
    fn steady(&mut self, g: &dyn Fn(usize) -> RatFunc) -> Result<Vec<Option<RatFunc>>> {
        let d = self.m.model.dtmc();
        let n_states = d.num_states();
        let bsccs = augur_solver::graph::bsccs(&d.matrix);
        let mut total: Vec<Option<RatFunc>> = vec![None; n_states];
        for s in self.wanted() {
            total[s as usize] = Some(RatFunc::zero(self.n));
        }
        for b in &bsccs {
            let value = self.bscc_average(b, g);
            if value.is_zero() {
                continue;
            }
            let mut set = StateSet::with_capacity(n_states);
            for &s in b {
                set.insert(s as usize);
            }
            let mut all = StateSet::with_capacity(n_states);
            all.insert_range(..);
            let reach = self.unbounded_until(&all, &set)?;
            for (s, t) in total.iter_mut().enumerate() {
                if let (Some(t), Some(r)) = (t.as_mut(), &reach[s]) {
                    if !r.is_zero() {
                        *t = &*t + &(r * &value);
                    }
                }
            }
        }
        Ok(total)
    }

    /// Σ_{s∈B} π_B(s) g(s) for a bottom SCC `B`: with `r` its first state, π ∝ the expected
    /// visits `v` between two visits to `r`, `v_r = 1`, `v_s = P(r,s) + Σ_{u≠r} v_u P(u,s)`
    /// (elimination on the transposed chain).
    fn bscc_average(&self, b: &[u32], g: &dyn Fn(usize) -> RatFunc) -> RatFunc {
        let d = self.m.model.dtmc();
        if b.len() == 1 {
            return g(b[0] as usize);
        }
        let r = b[0];
        let others: Vec<u32> = b[1..].to_vec();
        let mut local = vec![u32::MAX; d.num_states()];
        for (i, &s) in others.iter().enumerate() {
            local[s as usize] = i as u32;
        }
        let mut sys = System::new(others.len(), self.n);
        // v_t = Σ_u v_u P(u,t): the row of t reads its predecessors u.
        for &u in b {
            for k in d.row_range(u as usize) {
                let t = d.matrix.indices()[k] as usize;
                if local[t] == u32::MAX {
                    continue;
                }
                let f = &self.m.transitions[k];
                if u == r {
                    sys.add_b(local[t], f);
                } else {
                    sys.add(local[t], local[u as usize], f.clone());
                }
            }
        }
        let ord: Vec<u32> = (0..others.len() as u32).collect();
        let v = sys.solve(&ord, 0, true);
        let mut num = g(r as usize);
        let mut den = RatFunc::one(self.n);
        for (i, &s) in others.iter().enumerate() {
            let vi = v[i].clone().unwrap_or_else(|| RatFunc::zero(self.n));
            let gs = g(s as usize);
            if !gs.is_zero() {
                num = &num + &(&vi * &gs);
            }
            den = &den + &vi;
        }
        &num / &den
    }
}

/// `1 - v` where computed.
fn complement(v: Vec<Option<RatFunc>>, _n: usize) -> Vec<Option<RatFunc>> {
    v.into_iter().map(|x| x.map(|f| f.one_minus())).collect()
}

/// Whether a state formula holds a P, R, S or T operator.
fn nested(f: &ResolvedFormula) -> bool {
    use ResolvedFormula as R;
    match f {
        R::Prob { .. } | R::Reward { .. } | R::Steady { .. } | R::Time { .. } => true,
        R::Not(a) => nested(a),
        R::And(a, b) | R::Or(a, b) | R::Implies(a, b) | R::Iff(a, b) => nested(a) || nested(b),
        R::FileLabel { label, .. } => nested(&label.formula),
        R::Reference { property, .. } => nested(&property.formula),
        R::Apply { args, .. } => args.iter().any(nested),
        R::Filter {
            property, states, ..
        } => nested(property) || nested(states),
        R::Expr { .. } | R::Label { .. } | R::Initial { .. } => false,
    }
}
