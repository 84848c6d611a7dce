//! The choices of one state ([`Explorer::successors`]): its enabled unlabelled commands, and
//! for each action the combinations of the synchronising modules' commands, each emitted as
//! the product of their distributions (functions too in a parametric build).

use super::{Explorer, RowEntry, StateKey};
use crate::error::{PrismError, Result};
use crate::param::eval_rf;
use crate::program::ActionMatch;
use augur_ratfun::RatFunc;
use num_rational::BigRational;
use num_traits::{One, Zero};

impl<K: StateKey> Explorer<'_, K> {
    /// Whether command `cmd` is enabled in the current state: its prefilter passes and its
    /// guard holds.
    #[inline]
    fn enabled(&self, cmd: u32) -> Result<bool> {
        let prog = self.prog;
        if !prog.prefilters[cmd as usize].passes(&self.state_values) {
            return Ok(false);
        }
        prog.commands[cmd as usize]
            .guard
            .eval(&self.state_values)
            .map_err(|e| self.cmd_error(cmd, format!("{e} in the guard")))
    }

    /// Computes all choices of the current state, registering successors; returns the
    /// number of choices (entries are left in `self.row_entries`).
    pub(super) fn successors(&mut self) -> Result<usize> {
        let prog = self.prog;
        self.prepared_updates.clear();
        self.prepared_update_exact.clear();
        self.update_deltas.clear();
        self.row_entries.clear();
        self.row_entries_exact.clear();
        self.choice_actions.clear();
        self.choice_rewards.clear();
        self.choice_rewards_exact.clear();
        if let Some(ps) = self.param.as_mut() {
            ps.prepared.clear();
            ps.row_entries.clear();
            ps.choice_rewards.clear();
        }
        // The work of this state only (the exploration checks the limits every `CHECK_EVERY`
        // states; a state with that many combinations checks them itself).
        self.work = 0;
        let mut n_choices = 0usize;

        let mut candidates = std::mem::take(&mut self.candidates);
        prog.unlabelled_index
            .candidates(&self.state_values, &mut candidates);
        for &cmd in &candidates {
            if !self.enabled(cmd)? {
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
            for (m, _) in action.modules.iter().enumerate() {
                prog.action_index[a][m].candidates(&self.state_values, &mut candidates);
                for &cmd in &candidates {
                    if self.enabled(cmd)? {
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
        self.candidates = candidates;
        Ok(n_choices)
    }

    pub(super) fn check_global_conflicts(&self) -> Result<()> {
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
    pub(super) fn emit_choice(&mut self, action: ActionMatch, choice: u32) -> Result<()> {
        // Transition rewards of this choice.
        self.choice_actions.push(action);
        for &ri in &self.transition_reward_structs {
            let mut total = 0.0;
            let mut total_q = BigRational::zero();
            let mut total_f = self.param.as_ref().map(|ps| RatFunc::zero(ps.n));
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
                    if let Some(f) = total_f.as_mut() {
                        let x = eval_rf(v, &self.state_values, f.nvars())
                            .map_err(|e| self.state_error(e, &ctx(), *span))?;
                        *f = &*f + &x;
                    }
                }
            }
            if let (Some(f), Some(ps)) = (total_f, self.param.as_mut()) {
                ps.choice_rewards.push(f);
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
        if let Some(ps) = self.param.as_mut() {
            ps.level.clear();
            ps.level.push(RatFunc::one(ps.n));
        }
        for j in 0..k {
            let prep = self.choice_commands[j];
            let n_cur = self.level_p.len();
            self.next_states.clear();
            self.next_p.clear();
            self.next_q.clear();
            if let Some(ps) = self.param.as_mut() {
                ps.next.clear();
            }
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
                            if let Some(ps) = self.param.as_mut() {
                                let f = &ps.level[e] * &ps.prepared[ui];
                                ps.next[i] = &ps.next[i] + &f;
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
                            if let Some(ps) = self.param.as_mut() {
                                let f = &ps.level[e] * &ps.prepared[ui];
                                ps.next.push(f);
                            }
                        }
                    }
                }
            }
            std::mem::swap(&mut self.level_states, &mut self.next_states);
            std::mem::swap(&mut self.level_p, &mut self.next_p);
            std::mem::swap(&mut self.level_q, &mut self.next_q);
            if let Some(ps) = self.param.as_mut() {
                std::mem::swap(&mut ps.level, &mut ps.next);
            }
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
            let mut exact_index = self.row_entries_exact.len() as u32;
            if exact {
                self.row_entries_exact.push(self.level_q[e].clone());
            }
            if let Some(ps) = self.param.as_mut() {
                exact_index = ps.row_entries.len() as u32;
                ps.row_entries.push(ps.level[e].clone());
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
}
