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
use crate::error::{PrismError, Result, StopReason};
use crate::eval::{rational_to_f64, EvalError};

/// The `f64` beside an exact probability (exact mode): the nearest double, except that a
/// positive rational too small for a double (`pow(1/3, 5000)`) is the smallest positive
/// double, not 0, so that the graph analyses (Prob0/Prob1), which read the doubles, keep its
/// transition; the values themselves come from the rationals.
fn probability_f64(q: &BigRational) -> f64 {
    nonzero_beside(rational_to_f64(q), q)
}

/// The double `x` computed beside the rational `q` (exact mode), except that a non-zero `q`
/// whose double underflowed is the smallest double of its sign: the graph analyses that read
/// the doubles (Prob0, zero-reward states) then see what the rationals say.
fn nonzero_beside(x: f64, q: &BigRational) -> f64 {
    if x != 0.0 || q.is_zero() {
        x
    } else if q.is_positive() {
        f64::from_bits(1)
    } else {
        -f64::from_bits(1)
    }
}
use crate::model::PrismModel;
use crate::program::{ActionMatch, AssignedValue, Program};
use augur_dtmc::{Dtmc, ExactRewards, Matrix, PackedColumn, RewardStructure, Valuations};
use augur_expr::{Type, Value};
use fixedbitset::FixedBitSet;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
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
const SUM_TOLERANCE: f64 = 1e-6;
/// How often (in explored states) the progress callback is called.
const PROGRESS_EVERY: usize = 1 << 14;

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

    /// Explores the model with the interval bounds of `side`.
    fn explore_side(
        &self,
        program: &Program,
        opts: &BuildOptions<'_>,
        report: &mut ExplorationReport,
        side: Side,
    ) -> Result<Dtmc> {
        match program.words {
            1 => explore::<[u64; 1]>(self, program, opts, report, side),
            2 => explore::<[u64; 2]>(self, program, opts, report, side),
            3 => explore::<[u64; 3]>(self, program, opts, report, side),
            4 => explore::<[u64; 4]>(self, program, opts, report, side),
            5 => explore::<[u64; 5]>(self, program, opts, report, side),
            6 => explore::<[u64; 6]>(self, program, opts, report, side),
            7 => explore::<[u64; 7]>(self, program, opts, report, side),
            8 => explore::<[u64; 8]>(self, program, opts, report, side),
            _ => explore::<Box<[u64]>>(self, program, opts, report, side),
        }
    }
}

/// Which probability an update contributes to an exploration: its value (a DTMC), or, for an
/// interval DTMC's two explorations, the lower or the upper bound of its interval (a plain
/// probability `p` is the interval `[p, p]`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Point,
    Lo,
    Hi,
}

/// A packed state usable as a hash-map key.
trait StateKey: Eq + Hash {
    fn from_words(w: &[u64]) -> Self;
}

impl<const N: usize> StateKey for [u64; N] {
    #[inline]
    fn from_words(w: &[u64]) -> Self {
        let mut a = [0u64; N];
        a.copy_from_slice(w);
        a
    }
}

impl StateKey for Box<[u64]> {
    fn from_words(w: &[u64]) -> Self {
        w.into()
    }
}

/// A command prepared in the current state: its non-zero updates.
#[derive(Clone, Copy)]
struct PreparedCommand {
    cmd: u32,
    update_start: u32,
    update_end: u32,
}

/// One non-zero update of a prepared command.
#[derive(Clone, Copy)]
struct PreparedUpdate {
    p: f64,
    delta_start: u32,
    delta_end: u32,
}

/// `words[word] = (words[word] & !clear) | set`
#[derive(Clone, Copy)]
struct Delta {
    word: u32,
    clear: u64,
    set: u64,
}

#[derive(Clone, Copy)]
struct RowEntry {
    target: u32,
    p: f64,
    choice: u32,
    /// Index of the exact probability in `row_entries_exact` (exact mode).
    exact_index: u32,
}

struct Explorer<'a, K> {
    /// Which probability an interval update contributes (see [`Side`]).
    side: Side,
    model: &'a PrismModel,
    prog: &'a Program,
    opts: &'a BuildOptions<'a>,
    /// Words per packed state (`Program::words`).
    words_per_state: usize,
    /// The packed states in order of discovery, `words_per_state` words each.
    store: Vec<u64>,
    /// The number of every discovered packed state.
    index: FxHashMap<K, u32>,
    /// The variable values of the state being explored, by slot (booleans as 0/1), then its
    /// derived slots (`Program::derived`).
    state_values: Vec<i64>,
    /// States whose successors are computed (the index of the state being explored).
    explored: usize,
    // Scratch buffers for the state being explored, cleared (not freed) between states.
    /// The non-zero updates of the commands prepared in this state (a `PreparedCommand`
    /// owns `update_start..update_end`).
    prepared_updates: Vec<PreparedUpdate>,
    /// The exact probability of each of `prepared_updates` (exact mode).
    prepared_update_exact: Vec<BigRational>,
    /// The word edits of the prepared updates (a `PreparedUpdate` owns
    /// `delta_start..delta_end`).
    update_deltas: Vec<Delta>,
    /// For the action being combined: its enabled commands (prepared), module after module.
    action_enabled: Vec<PreparedCommand>,
    /// Where each module's commands start in `action_enabled`, plus the end.
    action_module_starts: Vec<usize>,
    /// The combination being emitted: per module, the index of its command among the
    /// module's enabled ones (a counter, last module fastest).
    combination: Vec<usize>,
    /// The commands of the choice being emitted: one per synchronising module, or one
    /// unlabelled command.
    choice_commands: Vec<PreparedCommand>,
    /// The distinct partial successors of the choice being emitted, `words_per_state` words
    /// each: the state being explored with the updates of its first commands applied.
    level_states: Vec<u64>,
    /// The probability of each of `level_states`.
    level_p: Vec<f64>,
    /// The same in exact arithmetic (exact mode).
    level_q: Vec<BigRational>,
    /// The next level being computed (`level_states`, `level_p`, `level_q`).
    next_states: Vec<u64>,
    /// See `next_states`.
    next_p: Vec<f64>,
    /// See `next_states`.
    next_q: Vec<BigRational>,
    /// The position of each partial successor in the next level (merging them).
    level_index: FxHashMap<K, u32>,
    /// Units of work done for the state being explored (combinations of commands and of
    /// updates), for the time checks.
    work: u64,
    /// The successors of the state being explored over all its choices, before they are
    /// merged into a matrix row.
    row_entries: Vec<RowEntry>,
    /// The exact probability of each of `row_entries` (exact mode).
    row_entries_exact: Vec<BigRational>,
    /// The action of each choice of the state being explored.
    choice_actions: Vec<ActionMatch>,
    /// The transition rewards of each choice: `choice * transition_reward_structs.len() + k`.
    choice_rewards: Vec<f64>,
    /// Exact mode: the exact transition rewards of each choice, laid out as `choice_rewards`.
    choice_rewards_exact: Vec<BigRational>,
    /// The reward structures that have transition rewards.
    transition_reward_structs: Vec<usize>,
}

/// What exploration collects state by state, in state order: the matrix rows (CSR), their
/// exact probabilities, the rewards, the label members and the deadlocks.
struct ExploredRows {
    indptr: Vec<u32>,
    indices: Vec<u32>,
    data: Vec<f64>,
    /// The exact probability of each matrix entry (exact mode).
    exact: Vec<BigRational>,
    /// Per reward structure with transition rewards: the reward of each matrix entry.
    trans_rew: Vec<Vec<f64>>,
    /// Per reward structure: the reward of each state (empty when it has no state rewards).
    state_rew: Vec<Vec<f64>>,
    /// Exact mode: `trans_rew` in rationals.
    trans_rew_exact: Vec<Vec<BigRational>>,
    /// Exact mode: `state_rew` in rationals.
    state_rew_exact: Vec<Vec<BigRational>>,
    /// Per label of the model: the states where it holds.
    label_states: Vec<Vec<u32>>,
    /// The deadlock states (given a self-loop).
    deadlocks: Vec<u32>,
    /// The first deadlock state, described for the warning.
    first_deadlock: Option<String>,
    /// The first state with several choices, described, and its number of choices.
    first_multi: Option<(String, usize)>,
}

impl ExploredRows {
    fn new(prog: &Program, n_trans_rew: usize) -> Self {
        ExploredRows {
            indptr: vec![0],
            indices: Vec::new(),
            data: Vec::new(),
            exact: Vec::new(),
            trans_rew: vec![Vec::new(); n_trans_rew],
            state_rew: vec![Vec::new(); prog.rewards.len()],
            trans_rew_exact: vec![Vec::new(); n_trans_rew],
            state_rew_exact: vec![Vec::new(); prog.rewards.len()],
            label_states: vec![Vec::new(); prog.labels.len()],
            deadlocks: Vec::new(),
            first_deadlock: None,
            first_multi: None,
        }
    }
}

fn explore<K: StateKey>(
    model: &PrismModel,
    prog: &Program,
    opts: &BuildOptions<'_>,
    report: &mut ExplorationReport,
    side: Side,
) -> Result<Dtmc> {
    let w = prog.words;
    let mut ex: Explorer<'_, K> = Explorer::new(model, prog, opts);
    ex.side = side;
    let n_initial = ex.add_initial_states()?;
    let mut rows = ExploredRows::new(prog, ex.transition_reward_structs.len());

    let mut cur = 0usize;
    while cur * w < ex.store.len() {
        ex.explore_state(cur, &mut rows, report)?;
        cur += 1;
        if cur.is_multiple_of(CHECK_EVERY) {
            ex.check_stop(cur)?;
        }
        if cur.is_multiple_of(PROGRESS_EVERY) {
            if let Some(cb) = opts.progress {
                cb(BuildProgress {
                    states: ex.store.len() / w,
                    explored: cur,
                    transitions: rows.indices.len(),
                    done: false,
                });
            }
        }
    }
    let n = cur;
    if let Some(cb) = opts.progress {
        cb(BuildProgress {
            states: n,
            explored: n,
            transitions: rows.indices.len(),
            done: true,
        });
    }

    let ExploredRows {
        indptr,
        indices,
        data,
        exact,
        trans_rew,
        state_rew,
        trans_rew_exact,
        state_rew_exact,
        label_states,
        deadlocks,
        first_deadlock,
        first_multi,
    } = rows;
    let matrix = Matrix::try_new((n, n), indptr, indices, data).map_err(|e| PrismError::Limit {
        message: format!("internal error assembling the matrix: {}", e.3),
    })?;
    let labels = label_sets(prog, n, n_initial, &deadlocks, label_states);
    let exact_rewards = opts.exact.then_some((state_rew_exact, trans_rew_exact));
    let rewards = reward_structures(prog, state_rew, trans_rew, exact_rewards);

    // The exploration index is done with: free it before anything else is allocated.
    ex.index = FxHashMap::default();
    let valuations = ex.take_valuations(n)?;

    report.states = n;
    report.transitions = matrix.nnz();
    report.initial_states = n_initial;
    report.deadlocks = deadlocks.len();
    add_warnings(report, deadlocks.len(), first_deadlock, first_multi);

    Ok(Dtmc {
        matrix,
        initial: (0..n_initial as u32).collect(),
        labels,
        rewards,
        valuations,
        exact: if opts.exact { Some(exact) } else { None },
        intervals: None,
    })
}

/// The labels of the DTMC: `"init"`, `"deadlock"`, then the model's.
fn label_sets(
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
fn reward_structures(
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
fn add_warnings(
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

impl<'a, K: StateKey> Explorer<'a, K> {
    /// An explorer with no state discovered yet.
    fn new(model: &'a PrismModel, prog: &'a Program, opts: &'a BuildOptions<'a>) -> Self {
        Explorer {
            side: Side::Point,
            model,
            prog,
            opts,
            words_per_state: prog.words,
            store: Vec::new(),
            index: FxHashMap::default(),
            state_values: vec![0; prog.values_len.max(prog.vars.len())],
            explored: 0,
            prepared_updates: Vec::new(),
            prepared_update_exact: Vec::new(),
            update_deltas: Vec::new(),
            action_enabled: Vec::new(),
            action_module_starts: Vec::new(),
            combination: Vec::new(),
            choice_commands: Vec::new(),
            level_states: Vec::new(),
            level_p: Vec::new(),
            level_q: Vec::new(),
            next_states: Vec::new(),
            next_p: Vec::new(),
            next_q: Vec::new(),
            level_index: FxHashMap::default(),
            work: 0,
            row_entries: Vec::new(),
            row_entries_exact: Vec::new(),
            choice_actions: Vec::new(),
            choice_rewards: Vec::new(),
            choice_rewards_exact: Vec::new(),
            transition_reward_structs: prog
                .rewards
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.trans.is_empty())
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// Discovers the initial states (numbered first, in order); returns how many there are.
    fn add_initial_states(&mut self) -> Result<usize> {
        let (prog, w) = (self.prog, self.words_per_state);
        let mut words = vec![0u64; w];
        for init in &prog.initial {
            words.iter_mut().for_each(|x| *x = 0);
            for (v, &x) in prog.vars.iter().zip(init) {
                words[v.word as usize] |= ((x - v.lo) as u64 & v.mask) << v.shift;
            }
            let next = (self.store.len() / w) as u32;
            let key = K::from_words(&words);
            if let std::collections::hash_map::Entry::Vacant(e) = self.index.entry(key) {
                if self.opts.max_states.is_some_and(|m| next as usize >= m) {
                    return Err(self.stopped_by_states(0));
                }
                e.insert(next);
                self.store.extend_from_slice(&words);
            }
        }
        Ok(self.store.len() / w)
    }

    /// Explores state `cur`: its labels and state rewards, its successors (discovering new
    /// states), and its matrix row (a self-loop for a deadlock).
    fn explore_state(
        &mut self,
        cur: usize,
        rows: &mut ExploredRows,
        report: &mut ExplorationReport,
    ) -> Result<()> {
        let (prog, opts) = (self.prog, self.opts);
        self.explored = cur;
        self.unpack(cur);
        // Labels and state rewards.
        self.record_labels_and_state_rewards(cur, rows)?;

        let n_choices = self.successors()?;
        let row_start = rows.indices.len();
        if n_choices == 0 {
            if !opts.fix_deadlocks {
                return Err(PrismError::Build {
                    message: "deadlock (no command is enabled)".into(),
                    state: prog.describe(&self.state_values),
                    context: "and --no-fix-deadlocks was given".into(),
                    location: None,
                });
            }
            if rows.first_deadlock.is_none() {
                rows.first_deadlock = Some(prog.describe(&self.state_values));
            }
            rows.deadlocks.push(cur as u32);
            rows.indices.push(cur as u32);
            rows.data.push(1.0);
            if opts.exact {
                rows.exact.push(BigRational::one());
            }
            for tr in rows.trans_rew.iter_mut() {
                tr.push(0.0);
            }
            if opts.exact {
                for tq in rows.trans_rew_exact.iter_mut() {
                    tq.push(BigRational::zero());
                }
            }
        } else {
            if n_choices > 1 {
                report.multi_choice_states += 1;
                if rows.first_multi.is_none() {
                    rows.first_multi = Some((prog.describe(&self.state_values), n_choices));
                }
            }
            self.finish_row(
                n_choices,
                &mut rows.indices,
                &mut rows.data,
                &mut rows.exact,
                &mut rows.trans_rew,
                &mut rows.trans_rew_exact,
            );
        }
        if rows.indices.len() > u32::MAX as usize {
            return Err(PrismError::Limit {
                message: "more than 2^32 transitions".into(),
            });
        }
        rows.indptr.push(rows.indices.len() as u32);
        debug_assert!(rows.indices.len() > row_start);
        Ok(())
    }

    /// Records which labels hold in state `cur` and its state rewards.
    fn record_labels_and_state_rewards(&self, cur: usize, rows: &mut ExploredRows) -> Result<()> {
        let prog = self.prog;
        for (li, (name, b, span)) in prog.labels.iter().enumerate() {
            if b.eval(&self.state_values)
                .map_err(|e| self.state_error(e, &format!("label \"{name}\""), *span))?
            {
                rows.label_states[li].push(cur as u32);
            }
        }
        for (ri, r) in prog.rewards.iter().enumerate() {
            if r.state.is_empty() {
                continue;
            }
            let mut total = 0.0;
            let mut total_q = BigRational::zero();
            for (g, v, span) in &r.state {
                let ctx = || format!("state reward at {}", self.model_location(*span));
                if g.eval(&self.state_values)
                    .map_err(|e| self.state_error(e, &ctx(), *span))?
                {
                    total += v
                        .eval(&self.state_values)
                        .map_err(|e| self.state_error(e, &ctx(), *span))?;
                    if self.opts.exact {
                        total_q += v
                            .eval_q(&self.state_values)
                            .map_err(|e| self.state_error(e, &ctx(), *span))?;
                    }
                }
            }
            if self.opts.exact {
                rows.state_rew[ri].push(nonzero_beside(total, &total_q));
                rows.state_rew_exact[ri].push(total_q);
            } else {
                rows.state_rew[ri].push(total);
            }
        }
        Ok(())
    }

    /// Stops the build when it was cancelled or its deadline has passed (`explored` states
    /// explored so far).
    fn check_stop(&self, explored: usize) -> Result<()> {
        let opts = self.opts;
        let reason = if opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            Some(StopReason::Cancelled)
        } else if opts.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(StopReason::Deadline)
        } else {
            None
        };
        match reason {
            Some(reason) => Err(PrismError::Stopped {
                reason,
                states: self.store.len() / self.words_per_state,
                explored,
            }),
            None => Ok(()),
        }
    }

    /// The valuations of the `n` states (when [`BuildOptions::valuations`]): the packed state
    /// store becomes the valuation store as it is (no second copy). The store is freed.
    fn take_valuations(&mut self, n: usize) -> Result<Option<Valuations>> {
        let (prog, w) = (self.prog, self.words_per_state);
        if !self.opts.valuations {
            self.store = Vec::new();
            return Ok(None);
        }
        let columns: Vec<PackedColumn> = prog
            .vars
            .iter()
            .map(|v| PackedColumn {
                word: v.word,
                shift: v.shift,
                bits: 64 - v.mask.leading_zeros(),
                lo: v.lo,
            })
            .collect();
        let names = prog.vars.iter().map(|v| v.name.clone()).collect();
        let types = prog
            .vars
            .iter()
            .map(|v| if v.is_bool { Type::Bool } else { Type::Int })
            .collect();
        let mut store = std::mem::take(&mut self.store);
        store.truncate(n * w);
        store.shrink_to_fit();
        Ok(Some(
            Valuations::from_packed(names, types, &columns, w, store).ok_or_else(|| {
                PrismError::Limit {
                    message: "internal error: the state layout does not fit the valuation store"
                        .into(),
                }
            })?,
        ))
    }

    /// The error for a state beyond [`BuildOptions::max_states`].
    fn stopped_by_states(&self, explored: usize) -> PrismError {
        PrismError::Stopped {
            reason: StopReason::MaxStates(self.opts.max_states.unwrap_or(0)),
            states: self.store.len() / self.words_per_state + 1,
            explored,
        }
    }

    #[inline]
    fn unpack(&mut self, s: usize) {
        let words = &self.store[s * self.words_per_state..(s + 1) * self.words_per_state];
        for (v, out) in self.prog.vars.iter().zip(self.state_values.iter_mut()) {
            *out = ((words[v.word as usize] >> v.shift) & v.mask) as i64 + v.lo;
        }
        self.prog.fill_derived(&mut self.state_values);
    }

    fn model_location(&self, span: crate::ast::ModelSpan) -> String {
        format!("{}:{}:{}", self.model.file, span.line, span.col)
    }

    fn command_context(&self, cmd: u32) -> String {
        let c = &self.prog.commands[cmd as usize];
        let action = c.action.map_or(String::new(), |a| {
            self.prog.actions[a as usize].name.clone()
        });
        format!(
            "command [{action}] of module `{}` at {}",
            self.prog.module_names[c.module],
            self.model_location(c.span)
        )
    }

    /// The location of the start of `span` in the model file.
    fn source_location(&self, span: crate::ast::ModelSpan) -> augur_source::Location {
        augur_source::Location::at(
            &self.model.file,
            &self.model.source,
            augur_source::Span::point(span.start),
        )
    }

    fn state_error(&self, e: EvalError, context: &str, span: crate::ast::ModelSpan) -> PrismError {
        PrismError::Build {
            message: e.to_string(),
            state: self.prog.describe(&self.state_values),
            context: context.to_string(),
            location: Some(Box::new(self.source_location(span))),
        }
    }

    fn cmd_error(&self, cmd: u32, message: String) -> PrismError {
        PrismError::Build {
            message,
            state: self.prog.describe(&self.state_values),
            context: self.command_context(cmd),
            location: Some(Box::new(
                self.source_location(self.prog.commands[cmd as usize].span),
            )),
        }
    }

    /// Evaluates command `cmd`'s probabilities and assignments in the current state.
    fn prepare(&mut self, cmd: u32) -> Result<PreparedCommand> {
        let prog = self.prog;
        let c = &prog.commands[cmd as usize];
        let update_start = self.prepared_updates.len() as u32;
        let mut sum = 0.0;
        let mut qsum = BigRational::zero();
        let (mut sum_lo, mut sum_hi) = (0.0, 0.0);
        for u in &c.updates {
            let p = u
                .prob
                .eval(&self.state_values)
                .map_err(|e| self.cmd_error(cmd, e.to_string()))?;
            let p = if self.side == Side::Point {
                p
            } else {
                let hi = match &u.upper {
                    Some(h) => h
                        .eval(&self.state_values)
                        .map_err(|e| self.cmd_error(cmd, e.to_string()))?,
                    None => p,
                };
                if !augur_dtmc::interval::interval_ok(p, hi) {
                    let what = if p > hi {
                        "has lo > hi"
                    } else {
                        "is not within [0, 1]"
                    };
                    return Err(self.cmd_error(cmd, format!("interval [{p}, {hi}] {what}")));
                }
                sum_lo += p;
                sum_hi += hi;
                if hi <= 0.0 {
                    continue;
                }
                // Kept even when the side's bound is 0: both explorations keep the same updates.
                let v = if self.side == Side::Lo { p } else { hi };
                if self.opts.exact {
                    // The side's bound as a rational (`[1/3, 2/3]` is 1/3..2/3).
                    let bound = match (&u.upper, self.side) {
                        (Some(h), Side::Hi) => h,
                        _ => &u.prob,
                    };
                    let q = bound
                        .eval_q(&self.state_values)
                        .map_err(|e| self.cmd_error(cmd, e.to_string()))?;
                    if q < BigRational::zero() || q > BigRational::one() {
                        return Err(
                            self.cmd_error(cmd, format!("interval bound {q} is not in [0, 1]"))
                        );
                    }
                    self.prepared_update_exact.push(q);
                }
                let delta_start = self.update_deltas.len() as u32;
                self.push_deltas(cmd, u)?;
                self.prepared_updates.push(PreparedUpdate {
                    p: v.clamp(0.0, 1.0),
                    delta_start,
                    delta_end: self.update_deltas.len() as u32,
                });
                continue;
            };
            if !(-SUM_TOLERANCE..=1.0 + SUM_TOLERANCE).contains(&p) {
                return Err(self.cmd_error(cmd, format!("probability {p} is not in [0, 1]")));
            }
            let (p, q) = if self.opts.exact {
                let q = u
                    .prob
                    .eval_q(&self.state_values)
                    .map_err(|e| self.cmd_error(cmd, e.to_string()))?;
                if q < BigRational::zero() || q > BigRational::one() {
                    return Err(self.cmd_error(cmd, format!("probability {q} is not in [0, 1]")));
                }
                qsum += &q;
                (probability_f64(&q), Some(q))
            } else {
                (p.max(0.0), None)
            };
            sum += p;
            if p == 0.0 && q.as_ref().is_none_or(|q| q.is_zero()) {
                continue;
            }
            let delta_start = self.update_deltas.len() as u32;
            self.push_deltas(cmd, u)?;
            self.prepared_updates.push(PreparedUpdate {
                p,
                delta_start,
                delta_end: self.update_deltas.len() as u32,
            });
            if let Some(q) = q {
                self.prepared_update_exact.push(q);
            }
        }
        if self.side != Side::Point {
            let tol = augur_dtmc::interval::INTERVAL_TOLERANCE;
            if sum_lo > 1.0 + tol {
                return Err(self.cmd_error(
                    cmd,
                    format!("the intervals cannot hold a distribution: the lower bounds sum to {sum_lo} > 1"),
                ));
            }
            if sum_hi < 1.0 - tol {
                return Err(self.cmd_error(
                    cmd,
                    format!("the intervals cannot hold a distribution: the upper bounds sum to {sum_hi} < 1"),
                ));
            }
        } else if self.opts.exact {
            if qsum != BigRational::one() {
                return Err(self.cmd_error(
                    cmd,
                    format!("probabilities sum to {qsum}, not exactly 1 (exact mode)"),
                ));
            }
        } else if (sum - 1.0).abs() > SUM_TOLERANCE {
            return Err(self.cmd_error(cmd, format!("probabilities sum to {sum}, not 1")));
        }
        Ok(PreparedCommand {
            cmd,
            update_start,
            update_end: self.prepared_updates.len() as u32,
        })
    }

    /// Records the assignments of update `u` of command `cmd` as deltas of the packed state.
    fn push_deltas(&mut self, cmd: u32, u: &crate::program::CompiledUpdate) -> Result<()> {
        let prog = self.prog;
        for a in &u.assigns {
            let v = &prog.vars[a.slot as usize];
            let x = match &a.value {
                AssignedValue::Int(e) => e.eval(&self.state_values).map_err(|e| {
                    self.cmd_error(cmd, format!("{e} in the update of `{}`", v.name))
                })?,
                AssignedValue::Bool(e) => e.eval(&self.state_values).map_err(|e| {
                    self.cmd_error(cmd, format!("{e} in the update of `{}`", v.name))
                })? as i64,
            };
            if x < v.lo || x > v.hi {
                return Err(self.cmd_error(
                    cmd,
                    format!(
                        "update {}'={x} leaves the range [{}..{}] of `{}`",
                        v.name, v.lo, v.hi, v.name
                    ),
                ));
            }
            self.update_deltas.push(Delta {
                word: v.word,
                clear: v.mask << v.shift,
                set: ((x - v.lo) as u64 & v.mask) << v.shift,
            });
        }
        Ok(())
    }

    /// Computes all choices of the current state, registering successors; returns the
    /// number of choices (entries are left in `self.row_entries`).
    fn successors(&mut self) -> Result<usize> {
        let prog = self.prog;
        self.prepared_updates.clear();
        self.prepared_update_exact.clear();
        self.update_deltas.clear();
        self.row_entries.clear();
        self.row_entries_exact.clear();
        self.choice_actions.clear();
        self.choice_rewards.clear();
        self.choice_rewards_exact.clear();
        // The work of this state only (the exploration checks the limits every `CHECK_EVERY`
        // states; a state with that many combinations checks them itself).
        self.work = 0;
        let mut n_choices = 0usize;

        for &cmd in &prog.unlabelled {
            if !prog.prefilters[cmd as usize].passes(&self.state_values) {
                continue;
            }
            let c = &prog.commands[cmd as usize];
            let enabled = c
                .guard
                .eval(&self.state_values)
                .map_err(|e| self.cmd_error(cmd, format!("{e} in the guard")))?;
            if !enabled {
                continue;
            }
            let prep = self.prepare(cmd)?;
            self.choice_commands.clear();
            self.choice_commands.push(prep);
            self.emit_choice(ActionMatch::Unlabelled, n_choices as u32)?;
            n_choices += 1;
        }

        for (a, action) in prog.actions.iter().enumerate() {
            self.action_enabled.clear();
            self.action_module_starts.clear();
            self.action_module_starts.push(0);
            let mut blocked = false;
            for cmds in &action.modules {
                for &cmd in cmds {
                    if !prog.prefilters[cmd as usize].passes(&self.state_values) {
                        continue;
                    }
                    let c = &prog.commands[cmd as usize];
                    let enabled = c
                        .guard
                        .eval(&self.state_values)
                        .map_err(|e| self.cmd_error(cmd, format!("{e} in the guard")))?;
                    if enabled {
                        let p = self.prepare(cmd)?;
                        self.action_enabled.push(p);
                    }
                }
                if self.action_enabled.len() == *self.action_module_starts.last().unwrap_or(&0) {
                    blocked = true;
                    break;
                }
                self.action_module_starts.push(self.action_enabled.len());
            }
            if blocked {
                continue;
            }
            let k = action.modules.len();
            self.combination.clear();
            self.combination.resize(k, 0);
            loop {
                self.choice_commands.clear();
                for m in 0..k {
                    let p = self.action_enabled[self.action_module_starts[m] + self.combination[m]];
                    self.choice_commands.push(p);
                }
                self.tick()?;
                self.check_global_conflicts()?;
                self.emit_choice(ActionMatch::Action(a as u32), n_choices as u32)?;
                n_choices += 1;
                // Next combination (last module fastest).
                let mut m = k;
                let mut more = false;
                while m > 0 {
                    m -= 1;
                    self.combination[m] += 1;
                    if self.action_module_starts[m] + self.combination[m]
                        < self.action_module_starts[m + 1]
                    {
                        more = true;
                        break;
                    }
                    self.combination[m] = 0;
                }
                if !more {
                    break;
                }
            }
        }
        Ok(n_choices)
    }

    fn check_global_conflicts(&self) -> Result<()> {
        let cmds = &self.prog.commands;
        for (i, a) in self.choice_commands.iter().enumerate() {
            let wa = &cmds[a.cmd as usize].global_writes;
            if wa.is_empty() {
                continue;
            }
            for b in &self.choice_commands[i + 1..] {
                let wb = &cmds[b.cmd as usize].global_writes;
                if let Some(&slot) = wa.iter().find(|s| wb.contains(s)) {
                    return Err(self.cmd_error(
                        a.cmd,
                        format!(
                            "global variable `{}` is updated by two synchronising commands (the other: {})",
                            self.prog.vars[slot as usize].name,
                            self.command_context(b.cmd)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Emits the product distribution of `choice_commands` as one choice.
    fn emit_choice(&mut self, action: ActionMatch, choice: u32) -> Result<()> {
        // Transition rewards of this choice.
        self.choice_actions.push(action);
        for &ri in &self.transition_reward_structs {
            let mut total = 0.0;
            let mut total_q = BigRational::zero();
            for (m, g, v, span) in &self.prog.rewards[ri].trans {
                if *m != action {
                    continue;
                }
                let ctx = || format!("transition reward at {}", self.model_location(*span));
                if g.eval(&self.state_values)
                    .map_err(|e| self.state_error(e, &ctx(), *span))?
                {
                    total += v
                        .eval(&self.state_values)
                        .map_err(|e| self.state_error(e, &ctx(), *span))?;
                    if self.opts.exact {
                        total_q += v
                            .eval_q(&self.state_values)
                            .map_err(|e| self.state_error(e, &ctx(), *span))?;
                    }
                }
            }
            self.choice_rewards.push(total);
            if self.opts.exact {
                self.choice_rewards_exact.push(total_q);
            }
        }

        // The product distribution is built level by level, command after command, merging
        // identical partial successors as it goes: a synchronisation of modules with many
        // identical branches stays as small as its distinct outcomes (never the product of the
        // branch counts). Each module writes its own variables (a global variable written by
        // two of the commands is an error, `check_global_conflicts`), so a level has at most as
        // many entries as the next one: a level larger than `max_states` means the model has
        // more states than that. Every combination computed counts as work, with the time and
        // cancellation checked every `CHECK_EVERY` of them.
        let w = self.words_per_state;
        let k = self.choice_commands.len();
        let exact = self.opts.exact;
        self.pack_current_state();
        self.level_p.clear();
        self.level_p.push(1.0);
        self.level_q.clear();
        if exact {
            self.level_q.push(BigRational::one());
        }
        for j in 0..k {
            let prep = self.choice_commands[j];
            let n_cur = self.level_p.len();
            self.next_states.clear();
            self.next_p.clear();
            self.next_q.clear();
            self.level_index.clear();
            for e in 0..n_cur {
                for ui in prep.update_start as usize..prep.update_end as usize {
                    self.tick()?;
                    let u = self.prepared_updates[ui];
                    let at = self.next_states.len();
                    self.next_states
                        .extend_from_slice(&self.level_states[e * w..(e + 1) * w]);
                    for d in &self.update_deltas[u.delta_start as usize..u.delta_end as usize] {
                        let x = &mut self.next_states[at + d.word as usize];
                        *x = (*x & !d.clear) | d.set;
                    }
                    let p = self.level_p[e] * u.p;
                    let key = K::from_words(&self.next_states[at..at + w]);
                    match self.level_index.entry(key) {
                        std::collections::hash_map::Entry::Occupied(o) => {
                            let i = *o.get() as usize;
                            self.next_states.truncate(at);
                            self.next_p[i] += p;
                            if exact {
                                let q = &self.level_q[e] * &self.prepared_update_exact[ui];
                                self.next_q[i] += q;
                            }
                        }
                        std::collections::hash_map::Entry::Vacant(v) => {
                            let i = self.next_p.len();
                            if self.opts.max_states.is_some_and(|m| i >= m) {
                                return Err(self.stopped_by_states(self.explored));
                            }
                            v.insert(i as u32);
                            self.next_p.push(p);
                            if exact {
                                let q = &self.level_q[e] * &self.prepared_update_exact[ui];
                                self.next_q.push(q);
                            }
                        }
                    }
                }
            }
            std::mem::swap(&mut self.level_states, &mut self.next_states);
            std::mem::swap(&mut self.level_p, &mut self.next_p);
            std::mem::swap(&mut self.level_q, &mut self.next_q);
        }
        // Register the successors.
        for e in 0..self.level_p.len() {
            let succ = &self.level_states[e * w..(e + 1) * w];
            let next = (self.store.len() / w) as u32;
            let key = K::from_words(succ);
            let target = match self.index.entry(key) {
                std::collections::hash_map::Entry::Occupied(o) => *o.get(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    if next == u32::MAX {
                        return Err(PrismError::Limit {
                            message: "more than 2^32 - 1 states".into(),
                        });
                    }
                    if self.opts.max_states.is_some_and(|m| next as usize >= m) {
                        return Err(self.stopped_by_states(self.explored));
                    }
                    v.insert(next);
                    self.store.extend_from_slice(succ);
                    next
                }
            };
            let exact_index = self.row_entries_exact.len() as u32;
            if exact {
                self.row_entries_exact.push(self.level_q[e].clone());
            }
            self.row_entries.push(RowEntry {
                target,
                p: self.level_p[e],
                choice,
                exact_index,
            });
        }
        self.check_row_size()
    }

    /// Counts one unit of work of the state being explored (a combination of commands or of
    /// updates), checking the time limit and the cancellation flag every `CHECK_EVERY` units.
    #[inline]
    fn tick(&mut self) -> Result<()> {
        self.work += 1;
        if self.work.is_multiple_of(CHECK_EVERY as u64) {
            self.check_stop(self.explored)?;
        }
        Ok(())
    }

    /// Stops when the successors of the state being explored, over all its choices, are more
    /// than `max_states` entries (before they are merged into a row): the memory of one state's
    /// exploration stays proportional to the state limit.
    fn check_row_size(&self) -> Result<()> {
        match self.opts.max_states {
            Some(m) if self.row_entries.len() > m => Err(PrismError::Build {
                message: format!(
                    "more than {m} transitions over {} choices from one state (the state limit, --max-states, bounds them too)",
                    self.choice_actions.len()
                ),
                state: self.prog.describe(&self.state_values),
                context: self.command_context(self.choice_commands[0].cmd),
                location: Some(Box::new(self.source_location(
                    self.prog.commands[self.choice_commands[0].cmd as usize].span,
                ))),
            }),
            _ => Ok(()),
        }
    }

    /// Packs the state being explored (`state_values`) as the only entry of `level_states`.
    fn pack_current_state(&mut self) {
        let w = self.words_per_state;
        // The state being explored is the one whose values are in `state_values`; re-pack it (the
        // store may have grown, but packing from `state_values` is independent of that).
        self.level_states.clear();
        self.level_states.resize(w, 0);
        let dst = &mut self.level_states[..w];
        for (v, &x) in self.prog.vars.iter().zip(&self.state_values) {
            dst[v.word as usize] |= ((x - v.lo) as u64 & v.mask) << v.shift;
        }
    }

    /// Merges the entries of the current state into one CSR row.
    fn finish_row(
        &mut self,
        n_choices: usize,
        indices: &mut Vec<u32>,
        data: &mut Vec<f64>,
        exact: &mut Vec<BigRational>,
        trans_rew: &mut [Vec<f64>],
        trans_rew_exact: &mut [Vec<BigRational>],
    ) {
        let scale = 1.0 / n_choices as f64;
        let qscale = BigRational::new(1.into(), (n_choices as u64).into());
        self.row_entries
            .sort_unstable_by_key(|e| (e.target, e.choice));
        let nt = self.transition_reward_structs.len();
        let mut i = 0;
        while i < self.row_entries.len() {
            let target = self.row_entries[i].target;
            let mut j = i;
            let mut p = 0.0;
            let mut q = BigRational::zero();
            // Exact mode: Σ q·reward per structure, the rational form of `trans_rew`'s sum.
            let mut rew_q = if self.opts.exact {
                vec![BigRational::zero(); nt]
            } else {
                Vec::new()
            };
            let start_rew = trans_rew.first().map_or(0, |v| v.len());
            for tr in trans_rew.iter_mut() {
                tr.push(0.0);
            }
            while j < self.row_entries.len() && self.row_entries[j].target == target {
                let e = self.row_entries[j];
                let pe = if n_choices == 1 { e.p } else { e.p * scale };
                p += pe;
                if self.opts.exact {
                    let qe = &self.row_entries_exact[e.exact_index as usize];
                    q += qe;
                    for (k, r) in rew_q.iter_mut().enumerate() {
                        *r += qe * &self.choice_rewards_exact[e.choice as usize * nt + k];
                    }
                }
                for (k, tr) in trans_rew.iter_mut().enumerate() {
                    tr[start_rew] += pe * self.choice_rewards[e.choice as usize * nt + k];
                }
                j += 1;
            }
            for tr in trans_rew.iter_mut() {
                if p > 0.0 {
                    tr[start_rew] /= p;
                }
            }
            indices.push(target);
            if self.opts.exact {
                // The reward of the merged entry: the probability-weighted mean of its
                // choices' rewards (the choices' common factor 1/n cancels).
                for (tq, (tr, r)) in trans_rew_exact
                    .iter_mut()
                    .zip(trans_rew.iter_mut().zip(rew_q))
                {
                    let r = if q.is_zero() { r } else { r / &q };
                    tr[start_rew] = nonzero_beside(tr[start_rew], &r);
                    tq.push(r);
                }
                if n_choices > 1 {
                    q *= &qscale;
                }
                data.push(probability_f64(&q));
                exact.push(q);
            } else {
                data.push(p);
            }
            i = j;
        }
    }
}
