//! Breadth-first state-space construction into an [`augur_dtmc::Dtmc`].
//!
//! States are bit-packed into `W` 64-bit words (each variable stores `value - lo` in a field
//! of `ceil(log2(hi - lo + 1))` bits that never straddles two words) and indexed by a
//! `FxHashMap` from the packed words to the state number. States are numbered in
//! breadth-first order of discovery, initial states first, so rows of the matrix are produced
//! in order and written directly as CSR.
//!
//! Semantics (PRISM's, for DTMCs):
//! - a *choice* is an enabled unlabelled command, or, for an action `a`, one enabled
//!   `[a]` command from every module whose alphabet contains `a` (all combinations; `a` is
//!   blocked when one of those modules has no enabled `[a]` command). The probability of a
//!   combined outcome is the product of the modules' probabilities;
//! - when `n > 1` choices are enabled in a state, each is taken with probability `1/n`
//!   (reported as a warning naming the first such state);
//! - a state without choices (deadlock) gets a self-loop, or is an error with
//!   `fix_deadlocks = false`;
//! - outcomes leading to the same successor are merged (probabilities added). A
//!   transition reward `r(c)` of choice `c` (sum of the matching items `[a] g : r` whose guard
//!   holds in the source state) is stored on the merged entry `s -> t` as the
//!   probability-weighted mean `Σ p(c,o)·r(c) / Σ p(c,o)` over the outcomes `o` of choices `c`
//!   leading to `t`, so that the expected one-step reward `Σ_t P(s,t)·R(s,t)` equals
//!   `Σ_c P(c)·r(c)` exactly as before merging.

use crate::compile::{ConstValue, DEFAULT_INLINE_LIMIT};
use crate::error::{PrismError, Result};
use crate::eval::rational_to_f64;

/// The `f64` beside an exact probability (exact mode): the nearest double, except that a
/// positive rational too small for a double (`pow(1/3, 5000)`) is the smallest positive
/// double, not 0, so that the graph analyses (Prob0/Prob1), which read the doubles, keep its
/// transition; the values themselves come from the rationals.
pub(crate) fn probability_f64(q: &BigRational) -> f64 {
    nonzero_beside(rational_to_f64(q), q)
}

/// The double `x` computed beside the rational `q` (exact mode), except that a non-zero `q`
/// whose double underflowed is the smallest double of its sign: the graph analyses that read
/// the doubles (Prob0, zero-reward states) then see what the rationals say.
pub(crate) fn nonzero_beside(x: f64, q: &BigRational) -> f64 {
    if x != 0.0 || q.is_zero() {
        x
    } else if q.is_positive() {
        f64::from_bits(1)
    } else {
        -f64::from_bits(1)
    }
}
use crate::model::PrismModel;
use crate::program::Program;
use augur_dtmc::{Dtmc, ExactRewards, RewardStructure};
use augur_expr::Value;
use fixedbitset::FixedBitSet;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use rustc_hash::FxHashMap;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Options of [`PrismModel::build`].
#[derive(Clone, Copy)]
pub struct BuildOptions<'a> {
    /// Give deadlock states a self-loop (with a warning) instead of failing. Default `true`.
    pub fix_deadlocks: bool,
    /// Read numeric literals as exact rationals and compute every probability exactly,
    /// filling [`Dtmc::exact`]. Default `false`.
    pub exact: bool,
    /// With `exact`: the exact rationals of given constant values (`--const p=1/3` is 1/3,
    /// not the decimal of its `f64`). Default empty.
    pub exact_constants: &'a [(String, BigRational)],
    /// Record the variable valuation of every state ([`Dtmc::valuations`]). Default `true`
    /// (properties over variables need it).
    pub valuations: bool,
    /// Called every few thousand states and at the end with the progress so far.
    pub progress: Option<&'a (dyn Fn(BuildProgress) + Sync)>,
    /// Stop with [`PrismError::Stopped`] when more states than this are reachable (checked as
    /// each state is discovered, and as the distinct outcomes of a synchronised choice are
    /// combined). It also bounds the transitions of one state before they are merged into its
    /// row (a located [`PrismError::Build`] beyond it), so that the memory of one state's
    /// exploration stays proportional to it. Default `None`.
    pub max_states: Option<usize>,
    /// Stop with [`PrismError::Stopped`] once this instant has passed (checked every 1024
    /// explored states, and every 1024 combinations of commands or updates within a state).
    /// Default `None`.
    pub deadline: Option<Instant>,
    /// Stop with [`PrismError::Stopped`] once this flag is set, from any thread (checked with
    /// the deadline). Default `None`.
    pub cancel: Option<&'a AtomicBool>,
}

/// How often (in explored states) the build checks [`BuildOptions::deadline`] and
/// [`BuildOptions::cancel`].
pub(crate) const CHECK_EVERY: usize = 1 << 10;

impl Default for BuildOptions<'_> {
    fn default() -> Self {
        BuildOptions {
            fix_deadlocks: true,
            exact: false,
            exact_constants: &[],
            valuations: true,
            progress: None,
            max_states: None,
            deadline: None,
            cancel: None,
        }
    }
}

impl std::fmt::Debug for BuildOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("fix_deadlocks", &self.fix_deadlocks)
            .field("exact", &self.exact)
            .field("exact_constants", &self.exact_constants)
            .field("valuations", &self.valuations)
            .field("progress", &self.progress.is_some())
            .field("max_states", &self.max_states)
            .field("deadline", &self.deadline)
            .field("cancel", &self.cancel)
            .finish()
    }
}

/// Progress of a build, passed to [`BuildOptions::progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildProgress {
    /// States discovered so far.
    pub states: usize,
    /// States whose successors have been computed.
    pub explored: usize,
    /// Transitions (matrix entries) so far.
    pub transitions: usize,
    /// Whether the build is finished.
    pub done: bool,
}

/// What a build did, besides the DTMC.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExplorationReport {
    /// Reachable states.
    pub states: usize,
    /// Transitions (stored matrix entries, after merging).
    pub transitions: usize,
    /// Initial states.
    pub initial_states: usize,
    /// Deadlock states that were given a self-loop.
    pub deadlocks: usize,
    /// States where several choices were enabled (resolved uniformly).
    pub multi_choice_states: usize,
    /// The value of every model constant used.
    pub constants: Vec<(String, Value)>,
    /// In exact mode, the exact rational of every real constant (`const double q = 1/3;` is
    /// 1/3), for properties that name it; empty otherwise.
    pub exact_constants: Vec<(String, BigRational)>,
    /// Human-readable warnings (deadlocks, several enabled choices), for the CLI to print.
    pub warnings: Vec<String>,
}

/// Probability sums must be within this of 1.
pub(crate) const SUM_TOLERANCE: f64 = 1e-6;
/// How often (in explored states) the progress callback is called.
pub(crate) const PROGRESS_EVERY: usize = 1 << 14;

impl PrismModel {
    /// Builds the reachable state space as a DTMC.
    ///
    /// `consts` gives values to constants (at least the undefined ones; see
    /// [`PrismModel::constant_values`]).
    pub fn build(
        &self,
        consts: &[(String, Value)],
        opts: &BuildOptions<'_>,
    ) -> Result<(Dtmc, ExplorationReport)> {
        self.build_with_inline_limit(consts, opts, DEFAULT_INLINE_LIMIT)
    }

    /// [`PrismModel::build`] with formulas of more than `inline_limit` nodes computed once per
    /// state into derived slots (`0`: every formula that is not constant; `u64::MAX`: none),
    /// for tests that compare the two ways.
    pub(crate) fn build_with_inline_limit(
        &self,
        consts: &[(String, Value)],
        opts: &BuildOptions<'_>,
        inline_limit: u64,
    ) -> Result<(Dtmc, ExplorationReport)> {
        let exact_given = if opts.exact {
            opts.exact_constants
        } else {
            &[]
        };
        let cvals = self.eval_constants(consts, exact_given, opts.exact)?;
        let map: FxHashMap<String, ConstValue> = cvals.iter().cloned().collect();
        let program = Program::compile(self, &map, opts.exact, inline_limit)?;
        let mut report = ExplorationReport {
            constants: cvals
                .iter()
                .map(|(n, v)| (n.clone(), v.to_value()))
                .collect(),
            exact_constants: cvals
                .iter()
                .filter_map(|(n, v)| match v {
                    ConstValue::Real(_, Some(q)) if opts.exact => Some((n.clone(), q.clone())),
                    _ => None,
                })
                .collect(),
            ..ExplorationReport::default()
        };
        let has_intervals = program
            .commands
            .iter()
            .any(|c| c.updates.iter().any(|u| u.upper.is_some()));
        if !has_intervals {
            let dtmc = self.explore_side(&program, opts, &mut report, Side::Point)?;
            return Ok((dtmc, report));
        }
        // An interval DTMC: explored twice, with every interval update's lower and then its
        // upper bound (an update is kept when its upper bound is positive, so both explorations
        // find the same states in the same order and the same transitions).
        let lo = self.explore_side(&program, opts, &mut report, Side::Lo)?;
        let mut hi_report = report.clone();
        let hi = self.explore_side(&program, opts, &mut hi_report, Side::Hi)?;
        if lo.matrix.indptr().raw_storage() != hi.matrix.indptr().raw_storage()
            || lo.matrix.indices() != hi.matrix.indices()
        {
            return Err(PrismError::Limit {
                message: "internal error: the lower and upper explorations of the interval \
                          model differ"
                    .into(),
            });
        }
        let (l, h) = (lo.matrix.data().to_vec(), hi.matrix.data().to_vec());
        let describe = |s: u32| {
            lo.describe_state(s as usize)
                .unwrap_or_else(|| s.to_string())
        };
        // Transition rewards are merged across a state's choices weighted by their
        // probabilities: the lower exploration's weights are 0 on an interval `[0, h]` (its
        // transition rewards came out 0), the upper one's are positive on every kept
        // transition. Take them from the upper exploration (the same transitions, checked
        // above).
        let mut skeleton = lo.clone();
        for (a, b) in skeleton.rewards.iter_mut().zip(&hi.rewards) {
            a.transition.clone_from(&b.transition);
            if let (Some(ea), Some(eb)) = (a.exact.as_mut(), b.exact.as_ref()) {
                ea.transition.clone_from(&eb.transition);
            }
        }
        match Dtmc::from_interval_bounds(skeleton, l, h) {
            Ok(mut d) => {
                // Exact mode: the bounds as rationals (each exploration computed its side's
                // probabilities exactly), aligned with the kept transitions.
                if let (Some(ql), Some(qh)) = (lo.exact.as_ref(), hi.exact.as_ref()) {
                    let (mut el, mut eh) = (Vec::new(), Vec::new());
                    for s in 0..d.num_states() {
                        for k in d.row_range(s) {
                            let t = d.matrix.indices()[k];
                            let i = lo
                                .transition_index(s as u32, t)
                                .expect("a kept transition of the lower exploration");
                            el.push(ql[i].clone());
                            eh.push(qh[i].clone());
                        }
                    }
                    if el == eh {
                        // Every interval a point: a DTMC with these exact probabilities.
                        d.exact = Some(el.clone());
                    }
                    if let Some(iv) = d.intervals.as_mut() {
                        iv.exact = Some(Box::new(augur_dtmc::ExactIntervals { lo: el, hi: eh }));
                    }
                }
                Ok((d, report))
            }
            Err(problem) => Err(PrismError::Build {
                message: problem.message(&describe),
                state: match &problem {
                    augur_dtmc::IntervalProblem::Bound { state, .. }
                    | augur_dtmc::IntervalProblem::Row { state, .. } => describe(*state),
                },
                context: "the interval DTMC's rows".into(),
                location: None,
            }),
        }
    }

    /// Explores a parametric model (see [`crate::param`]): `n_params` parameters, the
    /// functions into `values`.
    pub(crate) fn explore_param(
        &self,
        program: &Program,
        opts: &BuildOptions<'_>,
        report: &mut ExplorationReport,
        names: &[String],
        values: &mut Option<crate::param::ParametricValues>,
    ) -> Result<Dtmc> {
        let side = Side::Point;
        let p = Some((names, values));
        match program.words {
            1 => crate::explore::explore::<[u64; 1]>(self, program, opts, report, side, p),
            2 => crate::explore::explore::<[u64; 2]>(self, program, opts, report, side, p),
            3 => crate::explore::explore::<[u64; 3]>(self, program, opts, report, side, p),
            4 => crate::explore::explore::<[u64; 4]>(self, program, opts, report, side, p),
            _ => crate::explore::explore::<Box<[u64]>>(self, program, opts, report, side, p),
        }
    }

    /// Explores the model with the interval bounds of `side`.
    fn explore_side(
        &self,
        program: &Program,
        opts: &BuildOptions<'_>,
        report: &mut ExplorationReport,
        side: Side,
    ) -> Result<Dtmc> {
        match program.words {
            1 => crate::explore::explore::<[u64; 1]>(self, program, opts, report, side, None),
            2 => crate::explore::explore::<[u64; 2]>(self, program, opts, report, side, None),
            3 => crate::explore::explore::<[u64; 3]>(self, program, opts, report, side, None),
            4 => crate::explore::explore::<[u64; 4]>(self, program, opts, report, side, None),
            5 => crate::explore::explore::<[u64; 5]>(self, program, opts, report, side, None),
            6 => crate::explore::explore::<[u64; 6]>(self, program, opts, report, side, None),
            7 => crate::explore::explore::<[u64; 7]>(self, program, opts, report, side, None),
            8 => crate::explore::explore::<[u64; 8]>(self, program, opts, report, side, None),
            _ => crate::explore::explore::<Box<[u64]>>(self, program, opts, report, side, None),
        }
    }
}

/// Which probability an update contributes to an exploration: its value (a DTMC), or, for an
/// interval DTMC's two explorations, the lower or the upper bound of its interval (a plain
/// probability `p` is the interval `[p, p]`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Side {
    Point,
    Lo,
    Hi,
}

/// The labels of the DTMC: `"init"`, `"deadlock"`, then the model's.
pub(crate) fn label_sets(
    prog: &Program,
    n: usize,
    n_initial: usize,
    deadlocks: &[u32],
    label_states: Vec<Vec<u32>>,
) -> Vec<(String, FixedBitSet)> {
    let mut labels: Vec<(String, FixedBitSet)> = Vec::new();
    let mut init_set = FixedBitSet::with_capacity(n);
    (0..n_initial).for_each(|i| init_set.insert(i));
    labels.push(("init".to_string(), init_set));
    let mut dl = FixedBitSet::with_capacity(n);
    deadlocks.iter().for_each(|&s| dl.insert(s as usize));
    labels.push(("deadlock".to_string(), dl));
    for ((name, _, _), states) in prog.labels.iter().zip(label_states) {
        let mut set = FixedBitSet::with_capacity(n);
        states.iter().for_each(|&s| set.insert(s as usize));
        labels.push((name.clone(), set));
    }
    labels
}

/// The reward structures of the DTMC, from the collected state and transition rewards.
/// Exact rewards per reward structure (one column of states or matrix entries each).
type RewardColumns = Vec<Vec<BigRational>>;

/// `exact`: the exact state and transition rewards (exact mode), laid out as the doubles.
pub(crate) fn reward_structures(
    prog: &Program,
    state_rew: Vec<Vec<f64>>,
    trans_rew: Vec<Vec<f64>>,
    exact: Option<(RewardColumns, RewardColumns)>,
) -> Vec<RewardStructure> {
    let mut rewards = Vec::new();
    let mut tr_iter = trans_rew.into_iter();
    let (mut sq_iter, mut tq_iter) = match exact {
        Some((sq, tq)) => (Some(sq.into_iter()), Some(tq.into_iter())),
        None => (None, None),
    };
    for (r, sr) in prog.rewards.iter().zip(state_rew) {
        let sq = sq_iter.as_mut().and_then(Iterator::next);
        let has_trans = !r.trans.is_empty();
        let tq = if has_trans {
            tq_iter.as_mut().and_then(Iterator::next)
        } else {
            None
        };
        let exact = sq.map(|sq| {
            Box::new(ExactRewards {
                state: (!r.state.is_empty()).then_some(sq),
                transition: tq,
            })
        });
        rewards.push(RewardStructure {
            name: r.name.clone(),
            state: if r.state.is_empty() { None } else { Some(sr) },
            transition: if has_trans { tr_iter.next() } else { None },
            exact,
        });
    }
    rewards
}

/// The warnings of a build: deadlocks given a self-loop, states with several choices.
pub(crate) fn add_warnings(
    report: &mut ExplorationReport,
    n_deadlocks: usize,
    first_deadlock: Option<String>,
    first_multi: Option<(String, usize)>,
) {
    if let Some(s) = first_deadlock {
        report.warnings.push(format!(
            "{} deadlock state{} given a self-loop, e.g. {s}",
            n_deadlocks,
            if n_deadlocks == 1 { "" } else { "s" }
        ));
    }
    if let Some((s, k)) = first_multi {
        report.warnings.push(format!(
            "{} state{} with several enabled choices, each taken with equal probability (PRISM's DTMC rule), e.g. {s} has {k}",
            report.multi_choice_states,
            if report.multi_choice_states == 1 { "" } else { "s" }
        ));
    }
}
