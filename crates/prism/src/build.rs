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

use crate::compile::CValue;
use crate::error::{PrismError, Result, StopReason};
use crate::eval::{rational_to_f64, EvalError};
use crate::model::Model;
use crate::program::{AValue, ActionMatch, Program};
use augur_dtmc::{Dtmc, Matrix, PackedColumn, RewardStructure, Valuations};
use augur_expr::{Type, Value};
use fixedbitset::FixedBitSet;
use num_rational::BigRational;
use num_traits::{One, Zero};
use rustc_hash::FxHashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Options of [`Model::build`].
#[derive(Clone, Copy)]
pub struct BuildOptions<'a> {
    /// Give deadlock states a self-loop (with a warning) instead of failing. Default `true`.
    pub fix_deadlocks: bool,
    /// Read numeric literals as exact rationals and compute every probability exactly,
    /// filling [`Dtmc::exact`]. Default `false`.
    pub exact: bool,
    /// Record the variable valuation of every state ([`Dtmc::valuations`]). Default `true`
    /// (properties over variables need it).
    pub valuations: bool,
    /// Called every few thousand states and at the end with the progress so far.
    pub progress: Option<&'a (dyn Fn(BuildProgress) + Sync)>,
    /// Stop with [`PrismError::Stopped`] when more states than this are reachable (checked as
    /// each state is discovered). Default `None`.
    pub max_states: Option<usize>,
    /// Stop with [`PrismError::Stopped`] once this instant has passed (checked every 1024
    /// explored states). Default `None`.
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
pub struct BuildReport {
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
    /// Human-readable warnings (deadlocks, several enabled choices), for the CLI to print.
    pub warnings: Vec<String>,
}

/// Probability sums must be within this of 1.
const SUM_TOLERANCE: f64 = 1e-6;
/// How often (in explored states) the progress callback is called.
const PROGRESS_EVERY: usize = 1 << 14;

impl Model {
    /// Builds the reachable state space as a DTMC.
    ///
    /// `consts` gives values to constants (at least the undefined ones; see
    /// [`Model::constant_values`]).
    pub fn build(
        &self,
        consts: &[(String, Value)],
        opts: &BuildOptions<'_>,
    ) -> Result<(Dtmc, BuildReport)> {
        let cvals = self.eval_constants(consts, opts.exact)?;
        let map: FxHashMap<String, CValue> = cvals.iter().cloned().collect();
        let program = Program::compile(self, &map, opts.exact)?;
        let mut report = BuildReport {
            constants: cvals
                .iter()
                .map(|(n, v)| (n.clone(), v.to_value()))
                .collect(),
            ..BuildReport::default()
        };
        let dtmc = match program.words {
            1 => explore::<[u64; 1]>(self, &program, opts, &mut report),
            2 => explore::<[u64; 2]>(self, &program, opts, &mut report),
            3 => explore::<[u64; 3]>(self, &program, opts, &mut report),
            4 => explore::<[u64; 4]>(self, &program, opts, &mut report),
            5 => explore::<[u64; 5]>(self, &program, opts, &mut report),
            6 => explore::<[u64; 6]>(self, &program, opts, &mut report),
            7 => explore::<[u64; 7]>(self, &program, opts, &mut report),
            8 => explore::<[u64; 8]>(self, &program, opts, &mut report),
            _ => explore::<Box<[u64]>>(self, &program, opts, &mut report),
        }?;
        Ok((dtmc, report))
    }
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
struct Prep {
    cmd: u32,
    upd_start: u32,
    upd_end: u32,
}

/// One non-zero update of a prepared command.
#[derive(Clone, Copy)]
struct UpdPrep {
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
struct Entry {
    target: u32,
    p: f64,
    choice: u32,
    /// Index into the exact-probability scratch (exact mode).
    qi: u32,
}

struct Explorer<'a, K> {
    model: &'a Model,
    prog: &'a Program,
    opts: &'a BuildOptions<'a>,
    w: usize,
    store: Vec<u64>,
    index: FxHashMap<K, u32>,
    vals: Vec<i64>,
    /// States whose successors are computed (the index of the state being explored).
    explored: usize,
    // Per-state scratch.
    upds: Vec<UpdPrep>,
    upd_q: Vec<BigRational>,
    deltas: Vec<Delta>,
    preps: Vec<Prep>,
    en_off: Vec<usize>,
    combo: Vec<usize>,
    combo_preps: Vec<Prep>,
    digits: Vec<usize>,
    level_words: Vec<u64>,
    level_p: Vec<f64>,
    level_q: Vec<BigRational>,
    entries: Vec<Entry>,
    entry_q: Vec<BigRational>,
    choice_action: Vec<ActionMatch>,
    choice_rew: Vec<f64>,
    trans_rew_structs: Vec<usize>,
}

fn explore<K: StateKey>(
    model: &Model,
    prog: &Program,
    opts: &BuildOptions<'_>,
    report: &mut BuildReport,
) -> Result<Dtmc> {
    let w = prog.words;
    let nvars = prog.vars.len();
    let mut ex: Explorer<'_, K> = Explorer {
        model,
        prog,
        opts,
        w,
        store: Vec::new(),
        index: FxHashMap::default(),
        vals: vec![0; nvars],
        explored: 0,
        upds: Vec::new(),
        upd_q: Vec::new(),
        deltas: Vec::new(),
        preps: Vec::new(),
        en_off: Vec::new(),
        combo: Vec::new(),
        combo_preps: Vec::new(),
        digits: Vec::new(),
        level_words: Vec::new(),
        level_p: Vec::new(),
        level_q: Vec::new(),
        entries: Vec::new(),
        entry_q: Vec::new(),
        choice_action: Vec::new(),
        choice_rew: Vec::new(),
        trans_rew_structs: prog
            .rewards
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.trans.is_empty())
            .map(|(i, _)| i)
            .collect(),
    };

    // Initial states.
    let mut words = vec![0u64; w];
    for init in &prog.initial {
        words.iter_mut().for_each(|x| *x = 0);
        for (v, &x) in prog.vars.iter().zip(init) {
            words[v.word as usize] |= ((x - v.lo) as u64 & v.mask) << v.shift;
        }
        let next = (ex.store.len() / w) as u32;
        let key = K::from_words(&words);
        if let std::collections::hash_map::Entry::Vacant(e) = ex.index.entry(key) {
            if opts.max_states.is_some_and(|m| next as usize >= m) {
                return Err(ex.stopped_by_states(0));
            }
            e.insert(next);
            ex.store.extend_from_slice(&words);
        }
    }
    let n_initial = ex.store.len() / w;

    let n_rew = prog.rewards.len();
    let n_trans_rew = ex.trans_rew_structs.len();
    let mut indptr: Vec<u32> = vec![0];
    let mut indices: Vec<u32> = Vec::new();
    let mut data: Vec<f64> = Vec::new();
    let mut exact: Vec<BigRational> = Vec::new();
    let mut trans_rew: Vec<Vec<f64>> = vec![Vec::new(); n_trans_rew];
    let mut state_rew: Vec<Vec<f64>> = vec![Vec::new(); n_rew];
    let mut label_states: Vec<Vec<u32>> = vec![Vec::new(); prog.labels.len()];
    let mut deadlocks: Vec<u32> = Vec::new();
    let mut first_deadlock: Option<String> = None;
    let mut first_multi: Option<(String, usize)> = None;

    let mut cur = 0usize;
    while cur * w < ex.store.len() {
        ex.explored = cur;
        ex.unpack(cur);
        // Labels and state rewards.
        for (li, (name, b, span)) in prog.labels.iter().enumerate() {
            if b.eval(&ex.vals)
                .map_err(|e| ex.state_error(e, &format!("label \"{name}\""), *span))?
            {
                label_states[li].push(cur as u32);
            }
        }
        for (ri, r) in prog.rewards.iter().enumerate() {
            if r.state.is_empty() {
                continue;
            }
            let mut total = 0.0;
            for (g, v, span) in &r.state {
                let ctx = || format!("state reward at {}", ex.model_location(*span));
                if g.eval(&ex.vals)
                    .map_err(|e| ex.state_error(e, &ctx(), *span))?
                {
                    total += v
                        .eval(&ex.vals)
                        .map_err(|e| ex.state_error(e, &ctx(), *span))?;
                }
            }
            state_rew[ri].push(total);
        }

        let n_choices = ex.successors()?;
        let row_start = indices.len();
        if n_choices == 0 {
            if !opts.fix_deadlocks {
                return Err(PrismError::Build {
                    message: "deadlock (no command is enabled)".into(),
                    state: prog.describe(&ex.vals),
                    context: "and --no-fix-deadlocks was given".into(),
                    location: None,
                });
            }
            if first_deadlock.is_none() {
                first_deadlock = Some(prog.describe(&ex.vals));
            }
            deadlocks.push(cur as u32);
            indices.push(cur as u32);
            data.push(1.0);
            if opts.exact {
                exact.push(BigRational::one());
            }
            for tr in trans_rew.iter_mut() {
                tr.push(0.0);
            }
        } else {
            if n_choices > 1 {
                report.multi_choice_states += 1;
                if first_multi.is_none() {
                    first_multi = Some((prog.describe(&ex.vals), n_choices));
                }
            }
            ex.finish_row(
                n_choices,
                &mut indices,
                &mut data,
                &mut exact,
                &mut trans_rew,
            );
        }
        if indices.len() > u32::MAX as usize {
            return Err(PrismError::Limit {
                message: "more than 2^32 transitions".into(),
            });
        }
        indptr.push(indices.len() as u32);
        debug_assert!(indices.len() > row_start);
        cur += 1;
        if cur.is_multiple_of(CHECK_EVERY) {
            let reason = if opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                Some(StopReason::Cancelled)
            } else if opts.deadline.is_some_and(|d| Instant::now() >= d) {
                Some(StopReason::Deadline)
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(PrismError::Stopped {
                    reason,
                    states: ex.store.len() / w,
                    explored: cur,
                });
            }
        }
        if cur.is_multiple_of(PROGRESS_EVERY) {
            if let Some(cb) = opts.progress {
                cb(BuildProgress {
                    states: ex.store.len() / w,
                    explored: cur,
                    transitions: indices.len(),
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
            transitions: indices.len(),
            done: true,
        });
    }

    let matrix = Matrix::try_new((n, n), indptr, indices, data).map_err(|e| PrismError::Limit {
        message: format!("internal error assembling the matrix: {}", e.3),
    })?;

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

    let mut rewards = Vec::new();
    let mut tr_iter = trans_rew.into_iter();
    for (r, sr) in prog.rewards.iter().zip(state_rew) {
        rewards.push(RewardStructure {
            name: r.name.clone(),
            state: if r.state.is_empty() { None } else { Some(sr) },
            transition: if r.trans.is_empty() {
                None
            } else {
                tr_iter.next()
            },
        });
    }

    // The exploration index is done with: free it before anything else is allocated.
    ex.index = FxHashMap::default();
    // The packed state store becomes the valuation store as it is (no second copy).
    let valuations = if opts.valuations {
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
        let mut store = std::mem::take(&mut ex.store);
        store.truncate(n * w);
        store.shrink_to_fit();
        Some(
            Valuations::from_packed(names, types, &columns, w, store).ok_or_else(|| {
                PrismError::Limit {
                    message: "internal error: the state layout does not fit the valuation store"
                        .into(),
                }
            })?,
        )
    } else {
        ex.store = Vec::new();
        None
    };

    report.states = n;
    report.transitions = matrix.nnz();
    report.initial_states = n_initial;
    report.deadlocks = deadlocks.len();
    if let Some(s) = first_deadlock {
        report.warnings.push(format!(
            "{} deadlock state{} given a self-loop, e.g. {s}",
            deadlocks.len(),
            if deadlocks.len() == 1 { "" } else { "s" }
        ));
    }
    if let Some((s, k)) = first_multi {
        report.warnings.push(format!(
            "{} state{} with several enabled choices, each taken with equal probability (PRISM's DTMC rule), e.g. {s} has {k}",
            report.multi_choice_states,
            if report.multi_choice_states == 1 { "" } else { "s" }
        ));
    }

    Ok(Dtmc {
        matrix,
        initial: (0..n_initial as u32).collect(),
        labels,
        rewards,
        valuations,
        exact: if opts.exact { Some(exact) } else { None },
    })
}

impl<K: StateKey> Explorer<'_, K> {
    /// The error for a state beyond [`BuildOptions::max_states`].
    fn stopped_by_states(&self, explored: usize) -> PrismError {
        PrismError::Stopped {
            reason: StopReason::MaxStates(self.opts.max_states.unwrap_or(0)),
            states: self.store.len() / self.w + 1,
            explored,
        }
    }

    #[inline]
    fn unpack(&mut self, s: usize) {
        let words = &self.store[s * self.w..(s + 1) * self.w];
        for (v, out) in self.prog.vars.iter().zip(self.vals.iter_mut()) {
            *out = ((words[v.word as usize] >> v.shift) & v.mask) as i64 + v.lo;
        }
    }

    fn model_location(&self, span: crate::ast::Span) -> String {
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
    fn source_location(&self, span: crate::ast::Span) -> augur_source::Location {
        augur_source::Location::at(
            &self.model.file,
            &self.model.source,
            augur_source::Span::point(span.start),
        )
    }

    fn state_error(&self, e: EvalError, context: &str, span: crate::ast::Span) -> PrismError {
        PrismError::Build {
            message: e.to_string(),
            state: self.prog.describe(&self.vals),
            context: context.to_string(),
            location: Some(Box::new(self.source_location(span))),
        }
    }

    fn cmd_error(&self, cmd: u32, message: String) -> PrismError {
        PrismError::Build {
            message,
            state: self.prog.describe(&self.vals),
            context: self.command_context(cmd),
            location: Some(Box::new(
                self.source_location(self.prog.commands[cmd as usize].span),
            )),
        }
    }

    /// Evaluates command `cmd`'s probabilities and assignments in the current state.
    fn prepare(&mut self, cmd: u32) -> Result<Prep> {
        let prog = self.prog;
        let c = &prog.commands[cmd as usize];
        let upd_start = self.upds.len() as u32;
        let mut sum = 0.0;
        let mut qsum = BigRational::zero();
        for u in &c.updates {
            let p = u
                .prob
                .eval(&self.vals)
                .map_err(|e| self.cmd_error(cmd, e.to_string()))?;
            if !(-SUM_TOLERANCE..=1.0 + SUM_TOLERANCE).contains(&p) {
                return Err(self.cmd_error(cmd, format!("probability {p} is not in [0, 1]")));
            }
            let (p, q) = if self.opts.exact {
                let q = u
                    .prob
                    .eval_q(&self.vals)
                    .map_err(|e| self.cmd_error(cmd, e.to_string()))?;
                if q < BigRational::zero() || q > BigRational::one() {
                    return Err(self.cmd_error(cmd, format!("probability {q} is not in [0, 1]")));
                }
                qsum += &q;
                (rational_to_f64(&q), Some(q))
            } else {
                (p.max(0.0), None)
            };
            sum += p;
            if p == 0.0 && q.as_ref().is_none_or(|q| q.is_zero()) {
                continue;
            }
            let delta_start = self.deltas.len() as u32;
            for a in &u.assigns {
                let v = &prog.vars[a.slot as usize];
                let x = match &a.value {
                    AValue::I(e) => e.eval(&self.vals).map_err(|e| {
                        self.cmd_error(cmd, format!("{e} in the update of `{}`", v.name))
                    })?,
                    AValue::B(e) => e.eval(&self.vals).map_err(|e| {
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
                self.deltas.push(Delta {
                    word: v.word,
                    clear: v.mask << v.shift,
                    set: ((x - v.lo) as u64 & v.mask) << v.shift,
                });
            }
            self.upds.push(UpdPrep {
                p,
                delta_start,
                delta_end: self.deltas.len() as u32,
            });
            if let Some(q) = q {
                self.upd_q.push(q);
            }
        }
        if self.opts.exact {
            if qsum != BigRational::one() {
                return Err(self.cmd_error(
                    cmd,
                    format!("probabilities sum to {qsum}, not exactly 1 (exact mode)"),
                ));
            }
        } else if (sum - 1.0).abs() > SUM_TOLERANCE {
            return Err(self.cmd_error(cmd, format!("probabilities sum to {sum}, not 1")));
        }
        Ok(Prep {
            cmd,
            upd_start,
            upd_end: self.upds.len() as u32,
        })
    }

    /// Computes all choices of the current state, registering successors; returns the
    /// number of choices (entries are left in `self.entries`).
    fn successors(&mut self) -> Result<usize> {
        let prog = self.prog;
        self.upds.clear();
        self.upd_q.clear();
        self.deltas.clear();
        self.entries.clear();
        self.entry_q.clear();
        self.choice_action.clear();
        self.choice_rew.clear();
        let mut n_choices = 0usize;

        for &cmd in &prog.unlabelled {
            if !prog.prefilters[cmd as usize].passes(&self.vals) {
                continue;
            }
            let c = &prog.commands[cmd as usize];
            let enabled = c
                .guard
                .eval(&self.vals)
                .map_err(|e| self.cmd_error(cmd, format!("{e} in the guard")))?;
            if !enabled {
                continue;
            }
            let prep = self.prepare(cmd)?;
            self.combo_preps.clear();
            self.combo_preps.push(prep);
            self.emit_choice(ActionMatch::Unlabelled, n_choices as u32)?;
            n_choices += 1;
        }

        for (a, action) in prog.actions.iter().enumerate() {
            self.preps.clear();
            self.en_off.clear();
            self.en_off.push(0);
            let mut blocked = false;
            for cmds in &action.modules {
                for &cmd in cmds {
                    if !prog.prefilters[cmd as usize].passes(&self.vals) {
                        continue;
                    }
                    let c = &prog.commands[cmd as usize];
                    let enabled = c
                        .guard
                        .eval(&self.vals)
                        .map_err(|e| self.cmd_error(cmd, format!("{e} in the guard")))?;
                    if enabled {
                        let p = self.prepare(cmd)?;
                        self.preps.push(p);
                    }
                }
                if self.preps.len() == *self.en_off.last().unwrap_or(&0) {
                    blocked = true;
                    break;
                }
                self.en_off.push(self.preps.len());
            }
            if blocked {
                continue;
            }
            let k = action.modules.len();
            self.combo.clear();
            self.combo.resize(k, 0);
            loop {
                self.combo_preps.clear();
                for m in 0..k {
                    let p = self.preps[self.en_off[m] + self.combo[m]];
                    self.combo_preps.push(p);
                }
                self.check_global_conflicts()?;
                self.emit_choice(ActionMatch::Action(a as u32), n_choices as u32)?;
                n_choices += 1;
                // Next combination (last module fastest).
                let mut m = k;
                let mut more = false;
                while m > 0 {
                    m -= 1;
                    self.combo[m] += 1;
                    if self.en_off[m] + self.combo[m] < self.en_off[m + 1] {
                        more = true;
                        break;
                    }
                    self.combo[m] = 0;
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
        for (i, a) in self.combo_preps.iter().enumerate() {
            let wa = &cmds[a.cmd as usize].global_writes;
            if wa.is_empty() {
                continue;
            }
            for b in &self.combo_preps[i + 1..] {
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

    /// Emits the product distribution of `combo_preps` as one choice.
    fn emit_choice(&mut self, action: ActionMatch, choice: u32) -> Result<()> {
        // Transition rewards of this choice.
        self.choice_action.push(action);
        for &ri in &self.trans_rew_structs {
            let mut total = 0.0;
            for (m, g, v, span) in &self.prog.rewards[ri].trans {
                if *m != action {
                    continue;
                }
                let ctx = || format!("transition reward at {}", self.model_location(*span));
                if g.eval(&self.vals)
                    .map_err(|e| self.state_error(e, &ctx(), *span))?
                {
                    total += v
                        .eval(&self.vals)
                        .map_err(|e| self.state_error(e, &ctx(), *span))?;
                }
            }
            self.choice_rew.push(total);
        }

        let w = self.w;
        let k = self.combo_preps.len();
        let exact = self.opts.exact;
        self.digits.clear();
        self.digits.resize(k, 0);
        self.level_words.resize((k + 1) * w, 0);
        self.level_p.resize(k + 1, 1.0);
        // Level 0 = the current state (re-packed from the store of the state being explored).
        self.level_p[0] = 1.0;
        if exact {
            self.level_q.resize(k + 1, BigRational::one());
            self.level_q[0] = BigRational::one();
        }
        let mut from_level = 0usize;
        self.init_level0();
        loop {
            for j in from_level..k {
                let prep = self.combo_preps[j];
                let ui = prep.upd_start as usize + self.digits[j];
                let u = self.upds[ui];
                let (lo, hi) = self.level_words.split_at_mut((j + 1) * w);
                let dst = &mut hi[..w];
                dst.copy_from_slice(&lo[j * w..(j + 1) * w]);
                for d in &self.deltas[u.delta_start as usize..u.delta_end as usize] {
                    let x = &mut dst[d.word as usize];
                    *x = (*x & !d.clear) | d.set;
                }
                self.level_p[j + 1] = self.level_p[j] * u.p;
                if exact {
                    let q = &self.level_q[j] * &self.upd_q[ui];
                    self.level_q[j + 1] = q;
                }
            }
            // Register the successor.
            let succ = &self.level_words[k * w..(k + 1) * w];
            let next = (self.store.len() / w) as u32;
            let key = K::from_words(succ);
            let target = match self.index.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => *e.get(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    if next == u32::MAX {
                        return Err(PrismError::Limit {
                            message: "more than 2^32 - 1 states".into(),
                        });
                    }
                    if self.opts.max_states.is_some_and(|m| next as usize >= m) {
                        return Err(self.stopped_by_states(self.explored));
                    }
                    e.insert(next);
                    self.store.extend_from_slice(succ);
                    next
                }
            };
            let qi = self.entry_q.len() as u32;
            if exact {
                self.entry_q.push(self.level_q[k].clone());
            }
            self.entries.push(Entry {
                target,
                p: self.level_p[k],
                choice,
                qi,
            });
            // Next outcome (last level fastest).
            let mut j = k;
            let mut more = false;
            while j > 0 {
                j -= 1;
                self.digits[j] += 1;
                let prep = self.combo_preps[j];
                if prep.upd_start as usize + self.digits[j] < prep.upd_end as usize {
                    more = true;
                    break;
                }
                self.digits[j] = 0;
            }
            if !more {
                return Ok(());
            }
            from_level = j;
        }
    }

    /// Copies the packed current state into level 0 of `level_words`.
    fn init_level0(&mut self) {
        let w = self.w;
        // The state being explored is the one whose values are in `vals`; re-pack it (the
        // store may have grown, but packing from `vals` is independent of that).
        let dst = &mut self.level_words[..w];
        dst.iter_mut().for_each(|x| *x = 0);
        for (v, &x) in self.prog.vars.iter().zip(&self.vals) {
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
    ) {
        let scale = 1.0 / n_choices as f64;
        let qscale = BigRational::new(1.into(), (n_choices as u64).into());
        self.entries.sort_unstable_by_key(|e| (e.target, e.choice));
        let nt = self.trans_rew_structs.len();
        let mut i = 0;
        while i < self.entries.len() {
            let target = self.entries[i].target;
            let mut j = i;
            let mut p = 0.0;
            let mut q = BigRational::zero();
            let start_rew = trans_rew.first().map_or(0, |v| v.len());
            for tr in trans_rew.iter_mut() {
                tr.push(0.0);
            }
            while j < self.entries.len() && self.entries[j].target == target {
                let e = self.entries[j];
                let pe = if n_choices == 1 { e.p } else { e.p * scale };
                p += pe;
                if self.opts.exact {
                    q += &self.entry_q[e.qi as usize];
                }
                for (k, tr) in trans_rew.iter_mut().enumerate() {
                    tr[start_rew] += pe * self.choice_rew[e.choice as usize * nt + k];
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
                if n_choices > 1 {
                    q *= &qscale;
                }
                data.push(rational_to_f64(&q));
                exact.push(q);
            } else {
                data.push(p);
            }
            i = j;
        }
    }
}
