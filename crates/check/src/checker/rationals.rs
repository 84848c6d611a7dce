//! Exact arithmetic (`--method exact`): until, bounded operators and rewards in rationals, and the checks that keep exact values exact.

use super::*;

impl<'a> Checker<'a> {
    /// [`Checker::until`] with a step bound in exact mode: the bounded part by rational
    /// sweeps with the model's exact probabilities, within the budget of
    /// [`exact_steps::MAX_RATIONAL_OPS`] multiply-adds (past it, an error at the bound).
    pub(super) fn until_exact(
        &mut self,
        phi: &StateSet,
        psi: &StateSet,
        steps: &Steps,
    ) -> Result<NumValues> {
        let n = self.n();
        let (rest, rest_method) = match steps.upper {
            Some(u) => {
                let window = u.saturating_sub(steps.lower);
                let rows: Vec<StepRow> = (0..n)
                    .map(|s| {
                        if psi.contains(s) {
                            StepRow::Keep
                        } else if phi.contains(s) {
                            StepRow::Sweep
                        } else {
                            StepRow::Zero
                        }
                    })
                    .collect();
                let x = self.iterate_exact(
                    rational_indicator(psi, n),
                    window,
                    &rows,
                    Some(steps.span),
                    "the step bound",
                )?;
                (x, MethodUsed::Bounded { steps: window })
            }
            None => {
                let opts = self.options.clone();
                let matrix = self.matrix();
                let exact = self.dtmc.exact.as_deref();
                let t = self.transpose();
                let sol: NumValues =
                    augur_solver::until_probabilities(matrix, t, exact, phi, psi, &opts)?.into();
                let x = sol
                    .exact
                    .and_then(|x| x.into_iter().collect::<Option<Vec<_>>>());
                match x {
                    Some(x) => (x, sol.method),
                    None => {
                        return Err(CheckError::Internal(
                            "exact mode: the unbounded until has no exact result".into(),
                        ))
                    }
                }
            }
        };
        if steps.lower == 0 {
            return Ok(NumValues::rational(
                rest.into_iter().map(Some).collect(),
                rest_method,
            ));
        }
        let k = steps.lower;
        let rows: Vec<StepRow> = (0..n)
            .map(|s| {
                if phi.contains(s) {
                    StepRow::Sweep
                } else {
                    StepRow::Zero
                }
            })
            .collect();
        let x = self.iterate_exact(rest, k, &rows, Some(steps.span), "the step bound")?;
        Ok(NumValues::rational(
            x.into_iter().map(Some).collect(),
            MethodUsed::RestrictedSteps {
                inner: Box::new(rest_method),
                steps: k,
            },
        ))
    }

    /// `k` exact sweeps of `v` with the row rules `rows`, within the exact budget (past it,
    /// [`Checker::steps_error`] located at `span`, naming `what`).
    pub(super) fn iterate_exact(
        &self,
        v: Vec<BigRational>,
        k: u64,
        rows: &[StepRow],
        span: Option<Span>,
        what: &str,
    ) -> Result<Vec<BigRational>> {
        let stop = self.options.interrupt.clone();
        let mut st = self.stepper(&stop)?;
        st.iterate(v, k, rows)
            .map_err(|e| self.steps_error(e, span, what))
    }

    /// The exact expected one-step reward `state(s) + Σ_t P(s,t)·trans(s,t)` of exact mode:
    /// the model's exact probabilities and exact rewards (a PRISM model's `1/3` is 1/3), or,
    /// for a model read from numbers, each reward the decimal it prints as (`0.1` is 1/10),
    /// as the exact solvers read them.
    pub(super) fn one_step_exact(&self, rs: &RewardStructure) -> Result<Vec<BigRational>> {
        self.one_step(rs)?; // checks the lengths
        let n = self.n();
        let dec = |x: f64| {
            exact::from_decimal(x)
                .ok_or_else(|| CheckError::input(format!("model: a reward is not finite ({x})")))
        };
        let exact_state = rs.exact.as_ref().and_then(|e| e.state.as_ref());
        let exact_trans = rs.exact.as_ref().and_then(|e| e.transition.as_ref());
        let mut out = match (&rs.state, exact_state) {
            (Some(v), Some(q)) if q.len() == v.len() => q.clone(),
            (Some(v), _) => v.iter().map(|&x| dec(x)).collect::<Result<Vec<_>>>()?,
            (None, _) => vec![BigRational::zero(); n],
        };
        if let Some(tr) = &rs.transition {
            let exact_trans = exact_trans.filter(|q| q.len() == tr.len());
            let ptr = self.dtmc.row_ptr();
            let data = self.matrix().data();
            let probs = self.dtmc.exact.as_deref();
            for (s, o) in out.iter_mut().enumerate() {
                for e in ptr[s] as usize..ptr[s + 1] as usize {
                    let r = match exact_trans {
                        Some(q) if q[e].is_zero() => continue,
                        Some(q) => q[e].clone(),
                        None if tr[e] == 0.0 => continue,
                        None => dec(tr[e])?,
                    };
                    let p = match probs {
                        Some(p) => p[e].clone(),
                        None => exact::to_rational(data[e]).unwrap_or_else(BigRational::zero),
                    };
                    *o += p * r;
                }
            }
        }
        Ok(out)
    }

    /// `expr` evaluated in rationals in every state (exact mode), from the states' valuations:
    /// `None` when it reads a name the valuations lack (a model formula computed per state),
    /// so the caller keeps its double evaluation; an error when it has no rational value
    /// (`log`, a non-integer `pow`).
    pub(super) fn exact_state_values(
        &self,
        expr: &augur_expr::Expr,
        constants: &[(String, exact_expr::Q)],
        span: Span,
    ) -> Result<Option<StateValues>> {
        let n = self.n();
        let mut idents = expr.idents();
        idents.retain(|name| !constants.iter().any(|(c, _)| c == name));
        let vals = match &self.dtmc.valuations {
            Some(v) => Some(v),
            None if idents.is_empty() => None,
            None => return Ok(None),
        };
        let mut used: Vec<(String, usize)> = Vec::new();
        for name in idents {
            match vals.and_then(|v| v.index_of(&name)) {
                Some(i) => used.push((name.to_string(), i)),
                None => return Ok(None),
            }
        }
        let mut out = Vec::with_capacity(n);
        for s in 0..n {
            let env = |name: &str| -> Option<exact_expr::Q> {
                if let Some((_, q)) = constants.iter().find(|(c, _)| c == name) {
                    return Some(q.clone());
                }
                let &(_, i) = used.iter().find(|(u, _)| u == name)?;
                Some(match vals?.get(s, i)? {
                    augur_expr::Value::Int(k) => {
                        exact_expr::Q::Num(BigRational::from_integer(k.into()))
                    }
                    augur_expr::Value::Bool(b) => exact_expr::Q::Bool(b),
                    augur_expr::Value::Double(x) => {
                        exact_expr::Q::Num(augur_expr::decimal_rational(x)?)
                    }
                })
            };
            let v = exact_expr::eval(expr, &env)
                .map_err(|e| self.error_at(span, exact_expr::no_exact_value(&e, Some(s))))?;
            out.push(v);
        }
        if out.iter().all(|v| matches!(v, exact_expr::Q::Bool(_))) {
            let mut set = StateSet::with_capacity(n);
            for (s, v) in out.iter().enumerate() {
                if *v == exact_expr::Q::Bool(true) {
                    set.insert(s);
                }
            }
            return Ok(Some(StateValues::Bool(set)));
        }
        let q = out
            .into_iter()
            .map(|v| match v {
                exact_expr::Q::Num(q) => Some(Some(q)),
                exact_expr::Q::Bool(_) => None,
            })
            .collect::<Option<Vec<_>>>();
        Ok(q.map(|q| StateValues::Num(NumValues::rational(q, MethodUsed::Expression))))
    }

    /// Exact mode: a threshold or discount without an exact rational (past the size budget,
    /// `log`) is a located error, never its double.
    pub(super) fn exact_number(&self, number: &augur_pctl::resolve::Number) -> Result<()> {
        match &number.exact_error {
            Some(e) => Err(self.error_at(number.span, exact_expr::no_exact_value(e, None))),
            None => Ok(()),
        }
    }

    /// Whether results are reported as exact rationals (`Method::Exact`: the model's
    /// probabilities are the rationals written).
    pub(super) fn exact_mode(&self) -> bool {
        self.options.method == augur_solver::Method::Exact
    }

    /// Whether the solvers get exact inputs: in exact mode, and in the default mode for a model
    /// that carries its exact probabilities (a small PRISM model, see `Model::load`), so that
    /// the default method's exact elimination gives the exact value of the model as written
    /// (bounds one ulp wide must contain it: `0.7`'s double is not 7/10).
    pub(super) fn exact_inputs(&self) -> bool {
        self.exact_mode() || self.dtmc.exact.is_some()
    }

    /// Drops the exact rationals of a solver's result outside exact mode (there they would
    /// be exact for the `f64` model only, not for the numbers written).
    pub(super) fn keep_exact(&self, mut num: NumValues) -> NumValues {
        if !self.exact_mode() {
            num.exact = None;
        }
        num
    }
}

pub(super) fn rational_indicator(set: &StateSet, n: usize) -> Vec<BigRational> {
    (0..n)
        .map(|s| {
            if set.contains(s) {
                BigRational::one()
            } else {
                BigRational::zero()
            }
        })
        .collect()
}

pub(super) fn compare_exact(v: &BigRational, c: Comparison, t: &BigRational) -> bool {
    match c {
        Comparison::Lt => v < t,
        Comparison::Le => v <= t,
        Comparison::Gt => v > t,
        Comparison::Ge => v >= t,
    }
}

/// Exact mode: the one-step rewards' doubles `r` beside their rationals `q`, with a reward
/// whose double underflowed to 0 (`3^-5000 · 1/2`) made the smallest double of its sign, so
/// that the graph analyses reading `r` (states of zero reward) see what the rationals say.
pub(super) fn nonzero_where_exact(r: &mut [f64], q: &[BigRational]) {
    for (x, q) in r.iter_mut().zip(q) {
        if *x == 0.0 && !q.is_zero() {
            *x = if q.is_negative() {
                -f64::from_bits(1)
            } else {
                f64::from_bits(1)
            };
        }
    }
}
