//! State elimination: the solution of `x = A x + b` over rational functions, Storm's default
//! for unbounded properties of parametric DTMCs.
//!
//! Eliminating a state `s` removes its self-loop (its row scaled by `1 / (1 - A[s][s])`) and
//! bypasses it: every predecessor `u` gets `A[u][s] · A[s][t]` added to `A[u][t]` and
//! `A[u][s] · b[s]` to `b[u]`. States are eliminated farthest from the initial states first
//! (the reverse of a breadth-first order, Storm's `fwrev`), the states whose values are wanted
//! last; their values, and on request every state's, come from back-substitution in reverse
//! order of elimination (a row eliminated at step `i` reads only states eliminated later).

use augur_ratfun::RatFunc;

/// A linear system `x = A x + b` over rational functions, on local state indices.
pub struct System {
    n_vars: usize,
    rows: Vec<Vec<(u32, RatFunc)>>,
    b: Vec<RatFunc>,
    preds: Vec<Vec<u32>>,
}

impl System {
    /// An empty system of `n` states and functions of `n_vars` parameters.
    pub fn new(n: usize, n_vars: usize) -> System {
        System {
            n_vars,
            rows: vec![Vec::new(); n],
            b: vec![RatFunc::zero(n_vars); n],
            preds: vec![Vec::new(); n],
        }
    }

    /// Adds `a` to `A[s][t]`.
    pub fn add(&mut self, s: u32, t: u32, a: RatFunc) {
        add_entry(&mut self.rows[s as usize], t, a);
        self.preds[t as usize].push(s);
    }

    /// Adds `v` to `b[s]`.
    pub fn add_b(&mut self, s: u32, v: &RatFunc) {
        let b = &mut self.b[s as usize];
        *b = &*b + v;
    }

    /// Solves by elimination in `order` (every state once); the values of the states of the
    /// last `keep` positions of `order`, or of every state when `all`.
    pub fn solve(mut self, order: &[u32], keep: usize, all: bool) -> Vec<Option<RatFunc>> {
        let n = self.rows.len();
        let mut eliminated = vec![false; n];
        let one = RatFunc::one(self.n_vars);
        for &s in order {
            let su = s as usize;
            let mut row = std::mem::take(&mut self.rows[su]);
            let mut bs = std::mem::replace(&mut self.b[su], RatFunc::zero(self.n_vars));
            if let Some(k) = row.iter().position(|(t, _)| *t == s) {
                let (_, l) = row.swap_remove(k);
                let scale = (&one - &l)
                    .recip()
                    .expect("a self-loop of probability 1 among the states solved for");
                for (_, a) in row.iter_mut() {
                    *a = &*a * &scale;
                }
                bs = &bs * &scale;
            }
            let mut preds = std::mem::take(&mut self.preds[su]);
            preds.sort_unstable();
            preds.dedup();
            for u in preds {
                let uu = u as usize;
                if u == s || eliminated[uu] {
                    continue;
                }
                let Some(k) = self.rows[uu].iter().position(|(t, _)| *t == s) else {
                    continue;
                };
                let (_, w) = self.rows[uu].swap_remove(k);
                for (t, a) in &row {
                    let f = &w * a;
                    if add_entry(&mut self.rows[uu], *t, f) {
                        self.preds[*t as usize].push(u);
                    }
                }
                if !bs.is_zero() {
                    let f = &w * &bs;
                    self.b[uu] = &self.b[uu] + &f;
                }
            }
            eliminated[su] = true;
            self.rows[su] = row;
            self.b[su] = bs;
        }
        // Back-substitution.
        let mut x: Vec<Option<RatFunc>> = vec![None; n];
        let from = if all {
            0
        } else {
            order.len().saturating_sub(keep)
        };
        for &s in order[from..].iter().rev() {
            let su = s as usize;
            let mut v = self.b[su].clone();
            for (t, a) in &self.rows[su] {
                if let Some(xt) = &x[*t as usize] {
                    if !xt.is_zero() {
                        v = &v + &(a * xt);
                    }
                }
            }
            x[su] = Some(v);
        }
        x
    }
}

/// Adds `a` to the entry of `t` in `row`; whether the entry is new.
fn add_entry(row: &mut Vec<(u32, RatFunc)>, t: u32, a: RatFunc) -> bool {
    if let Some(e) = row.iter_mut().find(|(x, _)| *x == t) {
        e.1 = &e.1 + &a;
        false
    } else {
        row.push((t, a));
        true
    }
}

/// The elimination order of `n` local states: farthest from `first` (breadth-first over
/// `succ`) first, the states of `last` at the end in their given order.
pub fn order(n: usize, succ: &dyn Fn(u32) -> Vec<u32>, first: &[u32], last: &[u32]) -> Vec<u32> {
    let mut seen = vec![false; n];
    let mut bfs: Vec<u32> = Vec::with_capacity(n);
    for &s in first.iter().chain(last) {
        if !seen[s as usize] {
            seen[s as usize] = true;
            bfs.push(s);
        }
    }
    let mut i = 0;
    while i < bfs.len() {
        for t in succ(bfs[i]) {
            if !seen[t as usize] {
                seen[t as usize] = true;
                bfs.push(t);
            }
        }
        i += 1;
    }
    for s in 0..n as u32 {
        if !seen[s as usize] {
            bfs.push(s);
        }
    }
    let mut is_last = vec![false; n];
    for &s in last {
        is_last[s as usize] = true;
    }
    let mut out: Vec<u32> = bfs
        .into_iter()
        .rev()
        .filter(|&s| !is_last[s as usize])
        .collect();
    out.extend_from_slice(last);
    out
}
