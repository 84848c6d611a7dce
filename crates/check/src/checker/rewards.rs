//! Reward operators: reachability, cumulative, instantaneous, discounted and long-run rewards of a reward structure.

use super::*;

impl<'a> Checker<'a> {
    /// The reward structure `index` of the model.
    pub(super) fn structure(&self, index: usize, span: Span) -> Result<&'a RewardStructure> {
        self.dtmc.rewards.get(index).ok_or_else(|| {
            self.error_at(
                span,
                format!(
                    "reward structure {} does not exist (the model has {})",
                    index + 1,
                    self.dtmc.rewards.len()
                ),
            )
        })
    }

    /// Expected one-step reward `state(s) + Σ_t P(s,t)·trans(s,t)`.
    pub(super) fn one_step(&self, rs: &RewardStructure) -> Result<Vec<f64>> {
        let n = self.n();
        if let Some(v) = rs.state.as_ref().filter(|v| v.len() != n) {
            return Err(CheckError::input(format!(
                "model: a state reward vector has {} entries for {n} states",
                v.len()
            )));
        }
        let nnz = self.matrix().nnz();
        if let Some(t) = rs.transition.as_ref().filter(|t| t.len() != nnz) {
            return Err(CheckError::input(format!(
                "model: a transition reward vector has {} entries for {nnz} transitions",
                t.len()
            )));
        }
        Ok(self.dtmc.expected_one_step_rewards(rs))
    }

    pub(super) fn reward(
        &mut self,
        structure: usize,
        path: &ResolvedRewardPath,
        span: Span,
    ) -> Result<NumValues> {
        let rs = self.structure(structure, span)?;
        let matrix = self.matrix();
        let stop = self.options.interrupt.clone();
        match path {
            ResolvedRewardPath::Reachability(phi) => {
                let target = self.bool_of(phi)?;
                let (r, q) = self.reach_reward_inputs(rs)?;
                self.reach_rewards(&target, &r, q.as_deref())
            }
            ResolvedRewardPath::Ltl(f) => {
                let (r, q) = self.reach_reward_inputs(rs)?;
                self.ltl_reach_rewards(f, &r, q.as_deref(), span)
            }
            ResolvedRewardPath::Cumulative { steps, discount } if self.exact_mode() => {
                if let Some(d) = discount {
                    self.exact_number(d)?;
                }
                let d = discount
                    .as_ref()
                    .map_or_else(BigRational::one, |d| d.exact.clone());
                match steps {
                    Some(k) => {
                        let r = self.one_step_exact(rs)?;
                        let mut st = self.stepper(&stop)?;
                        let x = st
                            .cumulative(r, &d, *k)
                            .map_err(|e| self.steps_error(e, Some(span), "the step bound"))?;
                        Ok(NumValues::rational(
                            x.into_iter().map(Some).collect(),
                            MethodUsed::Cumulative {
                                steps: *k,
                                discounted: !d.is_one(),
                            },
                        ))
                    }
                    None if !d.is_one() => {
                        let r = self.one_step_exact(rs)?;
                        let x = exact_steps::discounted_total(
                            matrix,
                            self.dtmc.exact.as_deref(),
                            r,
                            &d,
                            &stop,
                        )?;
                        Ok(NumValues::rational(
                            x.into_iter().map(Some).collect(),
                            MethodUsed::Solver(format!("exact ({} unknowns)", self.n())),
                        ))
                    }
                    None => {
                        let mut r = self.one_step(rs)?;
                        // The exact one-step rewards (with transition rewards, not the
                        // decimal of `r`'s doubles).
                        let q = self.one_step_exact(rs)?;
                        nonzero_where_exact(&mut r, &q);
                        self.total_rewards(&r, Some(&q))
                    }
                }
            }
            ResolvedRewardPath::Instantaneous(k) if self.exact_mode() => {
                let mut r = rs.clone();
                r.transition = None;
                let v = self.one_step_exact(&r)?;
                let rows = vec![StepRow::Sweep; self.n()];
                let x = self.iterate_exact(v, *k, &rows, Some(span), "the step bound")?;
                Ok(NumValues::rational(
                    x.into_iter().map(Some).collect(),
                    MethodUsed::Instantaneous { steps: *k },
                ))
            }
            ResolvedRewardPath::Cumulative { steps, discount } => {
                let r = self.one_step(rs)?;
                let d = discount.as_ref().map_or(1.0, |d| d.value);
                match steps {
                    Some(k) => {
                        let x = Horizon::any_k(matrix, *k, &stop).cumulative(&r, d)?;
                        // Every partial sum is at most k·R in magnitude (R the largest
                        // one-step reward), the closed-form finish included; a discount d < 1
                        // shrinks step i's error by d^i, so at most 1/(1 − d) steps count.
                        let steps = if d < 1.0 {
                            (*k).min((1.0 / (1.0 - d)).ceil() as u64)
                        } else {
                            *k
                        };
                        let scale = max_abs(&x) + steps as f64 * max_abs(&r);
                        let error = sweep_error(self.sweep_width(), steps, scale);
                        let nonnegative = r.iter().all(|&v| v >= 0.0);
                        Ok(NumValues::swept(
                            x,
                            MethodUsed::Cumulative {
                                steps: *k,
                                discounted: d < 1.0,
                            },
                            error,
                            nonnegative,
                        ))
                    }
                    None if d < 1.0 => self.discounted_total(&r, d),
                    None => {
                        let q = if self.exact_inputs() {
                            Some(self.one_step_exact(rs)?)
                        } else {
                            None
                        };
                        self.total_rewards(&r, q.as_deref())
                    }
                }
            }
            ResolvedRewardPath::Instantaneous(k) => {
                let v = match &rs.state {
                    Some(v) if v.len() == self.n() => v.clone(),
                    Some(v) => {
                        return Err(CheckError::input(format!(
                            "model: a state reward vector has {} entries for {} states",
                            v.len(),
                            self.n()
                        )))
                    }
                    None => vec![0.0; self.n()],
                };
                let (scale, nonnegative) = (max_abs(&v), v.iter().all(|&r| r >= 0.0));
                let x = Horizon::any_k(matrix, *k, &stop).power_apply(v)?;
                let error = sweep_error(self.sweep_width(), *k, scale);
                Ok(NumValues::swept(
                    x,
                    MethodUsed::Instantaneous { steps: *k },
                    error,
                    nonnegative,
                ))
            }
            ResolvedRewardPath::LongRun => {
                let r = self.one_step(rs)?;
                let q = if self.exact_inputs() {
                    Some(self.one_step_exact(rs)?)
                } else {
                    None
                };
                self.long_run(&r, q.as_deref())
            }
        }
    }

    /// `R=? [ C{discount=d} ]`: value iteration when it needs few sweeps (it contracts by
    /// `d` per sweep) and its values stay finite; otherwise (a discount close to 1, values
    /// beyond the doubles) the linear system of a chain stopping with probability `1 − d`,
    /// solved by the configured sound method. Negative rewards: value iteration only.
    pub(super) fn discounted_total(&self, r: &[f64], d: f64) -> Result<NumValues> {
        let o = self.options.clone();
        let matrix = self.matrix();
        let nonnegative = r.iter().all(|&x| x >= 0.0);
        // Sweeps for the contraction to shrink an error of 1 below ε (1 − d)/d.
        let predicted = ((o.epsilon * (1.0 - d)).ln() / d.ln()).ceil();
        if !nonnegative || predicted <= DISCOUNT_SWEEPS as f64 {
            let budget = if nonnegative {
                o.max_iterations.min(DISCOUNT_SWEEPS)
            } else {
                o.max_iterations
            };
            let dt = bounded::discounted_total(
                matrix,
                r,
                d,
                o.epsilon,
                o.relative,
                budget,
                &o.interrupt,
            )?;
            match dt {
                Some(dt) if dt.values.iter().chain(&dt.hi).all(|v| v.is_finite()) => {
                    return Ok(NumValues {
                        values: dt.values,
                        bounds: Some((dt.lo, dt.hi)),
                        method: MethodUsed::DiscountedIteration { sweeps: dt.sweeps },
                        exact: None,
                    })
                }
                _ if !nonnegative => {
                    return Err(SolverError::NotConverged {
                        method: "discounted value iteration".into(),
                        iterations: budget,
                        difference: f64::INFINITY,
                    }
                    .into())
                }
                _ => {}
            }
        }
        let mut values: NumValues =
            augur_solver::discounted_total_rewards(matrix, r, d, &o)?.into();
        // The stopping chain's probabilities d·p and 1 − d are doubles: an exact elimination
        // of it is exact for that chain, not for the discount as written (0.999999 is not
        // 999999/10⁶ as a double), so no rational is claimed (docs/exact.md).
        values.exact = None;
        Ok(values)
    }

    /// The one-step rewards of `rs` for a reachability reward, and their exact values when the
    /// solver gets exact inputs (a reward exactly 0 is then 0 in the doubles too).
    pub(super) fn reach_reward_inputs(
        &self,
        rs: &RewardStructure,
    ) -> Result<(Vec<f64>, Option<Vec<BigRational>>)> {
        let mut r = self.one_step(rs)?;
        let q = if self.exact_inputs() {
            Some(self.one_step_exact(rs)?)
        } else {
            None
        };
        if let Some(q) = &q {
            nonzero_where_exact(&mut r, q);
        }
        Ok((r, q))
    }

    /// Expected reward until `target`; `q`: the exact one-step rewards (exact mode).
    pub(super) fn reach_rewards(
        &mut self,
        target: &StateSet,
        r: &[f64],
        q: Option<&[BigRational]>,
    ) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol =
            augur_solver::reachability_rewards(matrix, t, exact, target, rewards(r, q), &opts)?;
        Ok(self.keep_exact(sol.into()))
    }

    /// Expected total reward; `q`: the exact one-step rewards (exact mode).
    fn total_rewards(&mut self, r: &[f64], q: Option<&[BigRational]>) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol = augur_solver::total_rewards(matrix, t, exact, rewards(r, q), &opts)?;
        Ok(self.keep_exact(sol.into()))
    }

    /// Long-run average of `v`; `q`: its exact values (exact mode).
    pub(super) fn long_run(&mut self, v: &[f64], q: Option<&[BigRational]>) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol = augur_solver::long_run_average(matrix, t, exact, rewards(v, q), &opts)?;
        Ok(self.keep_exact(sol.into()))
    }
}

/// The solver's one-step rewards: the doubles `r` and, in exact mode, their rationals `q`.
fn rewards<'a>(r: &'a [f64], q: Option<&'a [BigRational]>) -> augur_solver::Rewards<'a> {
    augur_solver::Rewards {
        values: r,
        exact: q,
    }
}

/// Value iteration for a discounted total reward is used up to this many sweeps; beyond, the
/// linear system is solved instead.
pub(super) const DISCOUNT_SWEEPS: u64 = 2_000;
