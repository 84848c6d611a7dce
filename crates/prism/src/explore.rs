//! The explorer of [`crate::build`]: one state at a time, its enabled commands combined into
//! choices (synchronised actions as products of the modules' distributions), its successors
//! discovered and numbered, and its row merged (see the semantics in [`crate::build`]).

use crate::build::{
    add_warnings, label_sets, nonzero_beside, probability_f64, reward_structures, BuildOptions,
    BuildProgress, ExplorationReport, Side, CHECK_EVERY, PROGRESS_EVERY, SUM_TOLERANCE,
};
use crate::error::{PrismError, Result, StopReason};
use crate::eval::EvalError;
use crate::model::PrismModel;
use crate::param::{eval_rf, reads_state, ParametricValues};
use crate::program::{ActionMatch, AssignedValue, Program};
use augur_dtmc::{Dtmc, Matrix};
use augur_dtmc::{PackedColumn, Valuations};
use augur_expr::Type;
use augur_ratfun::RatFunc;
use num_rational::BigRational;
use num_traits::{One, Zero};
use rustc_hash::FxHashMap;
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::time::Instant;

mod choices;

/// A packed state usable as a hash-map key.
pub(crate) trait StateKey: Eq + Hash {
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

pub(crate) struct Explorer<'a, K> {
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
    /// A parametric build's functions (see [`crate::param`]).
    param: Option<ParamState>,
    /// The commands that may be enabled in the state being explored ([`crate::index`]).
    candidates: Vec<u32>,
}

/// The rational functions a parametric build computes beside the `f64`s, laid out as the
/// explorer's exact-mode vectors.
pub(crate) struct ParamState {
    /// The number of parameters.
    n: usize,
    /// Their names (for messages).
    names: Vec<String>,
    /// The functions of updates whose probability reads no state: `(command, update)`.
    cache: FxHashMap<(u32, u32), RatFunc>,
    /// The function of each of `prepared_updates`.
    prepared: Vec<RatFunc>,
    /// The function of each of `level_states`.
    level: Vec<RatFunc>,
    /// The function of each of `next_states`.
    next: Vec<RatFunc>,
    /// The function of each of `row_entries` (by `exact_index`).
    row_entries: Vec<RatFunc>,
    /// The transition rewards of each choice, laid out as `choice_rewards`.
    choice_rewards: Vec<RatFunc>,
}

/// What a parametric exploration collects beside [`ExploredRows`].
pub(crate) struct ParamRows {
    transitions: Vec<RatFunc>,
    trans_rew: Vec<Vec<RatFunc>>,
    state_rew: Vec<Vec<RatFunc>>,
}

/// What exploration collects state by state, in state order: the matrix rows (CSR), their
/// exact probabilities, the rewards, the label members and the deadlocks.
pub(crate) struct ExploredRows {
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
    /// A parametric build's functions.
    param: Option<ParamRows>,
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
            param: None,
        }
    }
}

pub(crate) fn explore<K: StateKey>(
    model: &PrismModel,
    prog: &Program,
    opts: &BuildOptions<'_>,
    report: &mut ExplorationReport,
    side: Side,
    param: Option<(&[String], &mut Option<ParametricValues>)>,
) -> Result<Dtmc> {
    let w = prog.words;
    let mut ex: Explorer<'_, K> = Explorer::new(model, prog, opts);
    ex.side = side;
    let n_initial = ex.add_initial_states()?;
    let mut rows = ExploredRows::new(prog, ex.transition_reward_structs.len());
    let (names, param_out) = match param {
        Some((names, out)) => (Some(names), Some(out)),
        None => (None, None),
    };
    if let Some(names) = names {
        ex.param = Some(ParamState {
            n: names.len(),
            names: names.to_vec(),
            cache: FxHashMap::default(),
            prepared: Vec::new(),
            level: Vec::new(),
            next: Vec::new(),
            row_entries: Vec::new(),
            choice_rewards: Vec::new(),
        });
        rows.param = Some(ParamRows {
            transitions: Vec::new(),
            trans_rew: vec![Vec::new(); ex.transition_reward_structs.len()],
            state_rew: vec![Vec::new(); prog.rewards.len()],
        });
    }

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
        param: param_rows,
    } = rows;
    if let (Some(out), Some(pr)) = (param_out, param_rows) {
        let mut trans_iter = pr.trans_rew.into_iter();
        let mut state_rewards = Vec::new();
        let mut transition_rewards = Vec::new();
        for (r, sr) in prog.rewards.iter().zip(pr.state_rew) {
            state_rewards.push((!r.state.is_empty()).then_some(sr));
            transition_rewards.push(if r.trans.is_empty() {
                None
            } else {
                trans_iter.next()
            });
        }
        *out = Some(ParametricValues {
            params: Vec::new(),
            transitions: pr.transitions,
            state_rewards,
            transition_rewards,
        });
    }
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
            param: None,
            candidates: Vec::new(),
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
            if let (Some(pr), Some(ps)) = (rows.param.as_mut(), self.param.as_ref()) {
                pr.transitions.push(RatFunc::one(ps.n));
                for tr in pr.trans_rew.iter_mut() {
                    tr.push(RatFunc::zero(ps.n));
                }
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
            if let Some(pr) = rows.param.as_mut() {
                self.finish_row_param(n_choices, pr);
            }
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
            let mut total_f = self.param.as_ref().map(|ps| RatFunc::zero(ps.n));
            for (g, v, span) in &r.state {
                let ctx = || format!("state reward at {}", self.model_location(*span));
                if g.eval(&self.state_values)
                    .map_err(|e| self.state_error(e, &ctx(), *span))?
                {
                    total += v
                        .eval(&self.state_values)
                        .map_err(|e| self.state_error(e, &ctx(), *span))?;
                    if let Some(f) = total_f.as_mut() {
                        let n = f.nvars();
                        let x = eval_rf(v, &self.state_values, n)
                            .map_err(|e| self.state_error(e, &ctx(), *span))?;
                        *f = &*f + &x;
                    }
                    if self.opts.exact {
                        total_q += v
                            .eval_q(&self.state_values)
                            .map_err(|e| self.state_error(e, &ctx(), *span))?;
                    }
                }
            }
            if let (Some(f), Some(pr)) = (total_f, rows.param.as_mut()) {
                pr.state_rew[ri].push(f);
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

    /// The function of update `u` of command `cmd` in the current state (parametric builds),
    /// computed once for a probability that reads no state.
    fn update_function(&mut self, cmd: u32, u: &crate::program::CompiledUpdate) -> Result<RatFunc> {
        let c = &self.prog.commands[cmd as usize];
        let k = c
            .updates
            .iter()
            .position(|x| std::ptr::eq(x, u))
            .unwrap_or(0) as u32;
        let Some(ps) = self.param.as_ref() else {
            return Err(self.cmd_error(cmd, "internal error: not a parametric build".into()));
        };
        if let Some(f) = ps.cache.get(&(cmd, k)) {
            return Ok(f.clone());
        }
        let f = eval_rf(&u.prob, &self.state_values, ps.n)
            .map_err(|e| self.cmd_error(cmd, e.to_string()))?;
        if !reads_state(&u.prob) {
            if let Some(ps) = self.param.as_mut() {
                ps.cache.insert((cmd, k), f.clone());
            }
        }
        Ok(f)
    }

    /// Evaluates command `cmd`'s probabilities and assignments in the current state.
    fn prepare(&mut self, cmd: u32) -> Result<PreparedCommand> {
        let prog = self.prog;
        let c = &prog.commands[cmd as usize];
        let update_start = self.prepared_updates.len() as u32;
        let mut sum = 0.0;
        let mut qsum = BigRational::zero();
        let mut fsum = self.param.as_ref().map(|ps| RatFunc::zero(ps.n));
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
            if self.param.is_some() {
                let f = self.update_function(cmd, u)?;
                if f.is_zero() {
                    continue;
                }
                if !(p > 0.0 && p <= 1.0 + SUM_TOLERANCE) {
                    let ps = self.param.as_ref().map_or(&[][..], |ps| &ps.names[..]);
                    return Err(self.cmd_error(
                        cmd,
                        format!(
                            "probability {} is {p} at the reference point, not in (0, 1]",
                            f.display(ps)
                        ),
                    ));
                }
                fsum = fsum.map(|s| &s + &f);
                sum += p;
                let delta_start = self.update_deltas.len() as u32;
                self.push_deltas(cmd, u)?;
                self.prepared_updates.push(PreparedUpdate {
                    p: p.min(1.0),
                    delta_start,
                    delta_end: self.update_deltas.len() as u32,
                });
                if let Some(ps) = self.param.as_mut() {
                    ps.prepared.push(f);
                }
                continue;
            }
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
        } else if let Some(f) = fsum {
            if !f.is_one() {
                let ps = self.param.as_ref().map_or(&[][..], |ps| &ps.names[..]);
                return Err(self.cmd_error(
                    cmd,
                    format!(
                        "probabilities sum to {}, not 1 (as a function of the parameters)",
                        f.display(ps)
                    ),
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

    /// The functions of the row [`Explorer::finish_row`] merged (entries already sorted by
    /// target): the sum of each target's entries (over `n_choices` choices taken uniformly),
    /// and each transition reward as the probability-weighted mean of its choices'.
    fn finish_row_param(&self, n_choices: usize, pr: &mut ParamRows) {
        let Some(ps) = self.param.as_ref() else {
            return;
        };
        let scale = RatFunc::constant(BigRational::new(1.into(), (n_choices as u64).into()), ps.n);
        let nt = self.transition_reward_structs.len();
        let mut i = 0;
        while i < self.row_entries.len() {
            let target = self.row_entries[i].target;
            let mut f = RatFunc::zero(ps.n);
            let mut rew = vec![RatFunc::zero(ps.n); nt];
            let mut j = i;
            while j < self.row_entries.len() && self.row_entries[j].target == target {
                let e = self.row_entries[j];
                let fe = &ps.row_entries[e.exact_index as usize];
                f = &f + fe;
                for (k, r) in rew.iter_mut().enumerate() {
                    let c = &ps.choice_rewards[e.choice as usize * nt + k];
                    if !c.is_zero() {
                        *r = &*r + &(fe * c);
                    }
                }
                j += 1;
            }
            for (tr, r) in pr.trans_rew.iter_mut().zip(rew) {
                tr.push(if r.is_zero() || f.is_zero() {
                    r
                } else {
                    &r / &f
                });
            }
            if n_choices > 1 {
                f = &f * &scale;
            }
            pr.transitions.push(f);
            i = j;
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
        // Only exact mode needs it (a gcd per row otherwise).
        let qscale = match self.opts.exact {
            true => BigRational::new(1.into(), (n_choices as u64).into()),
            false => BigRational::zero(),
        };
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
