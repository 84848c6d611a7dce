//! The LTL formula over atomic propositions, with step-bounded operators expanded by
//! [`Ltl::until_bounded`] and friends.

use std::fmt;

/// An LTL formula over atomic propositions `p0, p1, …` (indices into the proposition sets the
/// product is given).
///
/// Every connective is kept as written; [`crate::Automaton`] turns the formula into negation
/// normal form itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ltl {
    /// `true`
    True,
    /// `false`
    False,
    /// Atomic proposition number `i`.
    Ap(u32),
    /// `!φ`
    Not(Box<Ltl>),
    /// `φ & ψ`
    And(Box<Ltl>, Box<Ltl>),
    /// `φ | ψ`
    Or(Box<Ltl>, Box<Ltl>),
    /// `φ => ψ`
    Implies(Box<Ltl>, Box<Ltl>),
    /// `φ <=> ψ`
    Iff(Box<Ltl>, Box<Ltl>),
    /// `X φ`
    Next(Box<Ltl>),
    /// `φ U ψ`
    Until(Box<Ltl>, Box<Ltl>),
    /// `φ W ψ` (weak until: `φ U ψ | G φ`)
    WeakUntil(Box<Ltl>, Box<Ltl>),
    /// `φ R ψ` (release: `!(!φ U !ψ)`)
    Release(Box<Ltl>, Box<Ltl>),
    /// `F φ`
    Eventually(Box<Ltl>),
    /// `G φ`
    Globally(Box<Ltl>),
}

/// A step interval `[lower, upper]` of a bounded temporal operator (`upper = None` is ∞).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepInterval {
    /// The first step at which the goal counts.
    pub lower: u64,
    /// The last step at which the goal counts (`None`: unbounded).
    pub upper: Option<u64>,
}

impl Ltl {
    /// `!f`
    #[allow(clippy::should_implement_trait)]
    pub fn not(f: Ltl) -> Ltl {
        Ltl::Not(Box::new(f))
    }
    /// `a & b`
    pub fn and(a: Ltl, b: Ltl) -> Ltl {
        Ltl::And(Box::new(a), Box::new(b))
    }
    /// `a | b`
    pub fn or(a: Ltl, b: Ltl) -> Ltl {
        Ltl::Or(Box::new(a), Box::new(b))
    }
    /// `X f`
    pub fn next(f: Ltl) -> Ltl {
        Ltl::Next(Box::new(f))
    }
    /// `a U b`
    pub fn until(a: Ltl, b: Ltl) -> Ltl {
        Ltl::Until(Box::new(a), Box::new(b))
    }
    /// `F f`
    pub fn eventually(f: Ltl) -> Ltl {
        Ltl::Eventually(Box::new(f))
    }
    /// `G f`
    pub fn globally(f: Ltl) -> Ltl {
        Ltl::Globally(Box::new(f))
    }

    /// `a U[lower, upper] b`: `b` holds at some step `i` with `lower ≤ i ≤ upper` and `a` holds
    /// at every step before `i` (PRISM's semantics of bounded until), expanded into `X`,
    /// `&`, `|` and an unbounded `U` (when `upper` is ∞). The result has `O(upper)` nodes; the
    /// caller bounds `upper` (see [`crate::LtlOptions::max_step_bound`]).
    pub fn until_bounded(a: Ltl, b: Ltl, steps: StepInterval) -> Ltl {
        // Innermost part first: the formula that must hold at step `lower`.
        let mut f = match steps.upper {
            None => Ltl::until(a.clone(), b),
            Some(u) => {
                let width = u.saturating_sub(steps.lower);
                if u < steps.lower {
                    Ltl::False
                } else {
                    // b | (a & X (b | (a & X ( … b))))
                    let mut g = b.clone();
                    for _ in 0..width {
                        g = Ltl::or(b.clone(), Ltl::and(a.clone(), Ltl::next(g)));
                    }
                    g
                }
            }
        };
        for _ in 0..steps.lower {
            f = Ltl::and(a.clone(), Ltl::next(f));
        }
        f
    }

    /// `F[lower, upper] f` = `true U[lower, upper] f`.
    pub fn eventually_bounded(f: Ltl, steps: StepInterval) -> Ltl {
        Ltl::until_bounded(Ltl::True, f, steps)
    }

    /// `G[lower, upper] f` = `!F[lower, upper] !f`.
    pub fn globally_bounded(f: Ltl, steps: StepInterval) -> Ltl {
        Ltl::not(Ltl::eventually_bounded(Ltl::not(f), steps))
    }

    /// `a R[lower, upper] b` = `!(!a U[lower, upper] !b)`.
    pub fn release_bounded(a: Ltl, b: Ltl, steps: StepInterval) -> Ltl {
        Ltl::not(Ltl::until_bounded(Ltl::not(a), Ltl::not(b), steps))
    }

    /// `a W[lower, upper] b` = `!((a & !b) U[lower, upper] (!a & !b))`.
    pub fn weak_until_bounded(a: Ltl, b: Ltl, steps: StepInterval) -> Ltl {
        let (na, nb) = (Ltl::not(a.clone()), Ltl::not(b.clone()));
        Ltl::not(Ltl::until_bounded(
            Ltl::and(a, nb.clone()),
            Ltl::and(na, nb),
            steps,
        ))
    }

    /// The operands of the top operator: none, one or two.
    fn operands(&self) -> [Option<&Ltl>; 2] {
        match self {
            Ltl::True | Ltl::False | Ltl::Ap(_) => [None, None],
            Ltl::Not(a) | Ltl::Next(a) | Ltl::Eventually(a) | Ltl::Globally(a) => [Some(a), None],
            Ltl::And(a, b)
            | Ltl::Or(a, b)
            | Ltl::Implies(a, b)
            | Ltl::Iff(a, b)
            | Ltl::Until(a, b)
            | Ltl::WeakUntil(a, b)
            | Ltl::Release(a, b) => [Some(a), Some(b)],
        }
    }

    /// The number of nodes of the formula tree.
    pub fn size(&self) -> usize {
        1 + self
            .operands()
            .into_iter()
            .flatten()
            .map(Ltl::size)
            .sum::<usize>()
    }

    /// The largest atomic proposition index used, if any.
    pub fn max_ap(&self) -> Option<u32> {
        match self {
            Ltl::Ap(i) => Some(*i),
            _ => self
                .operands()
                .into_iter()
                .flatten()
                .filter_map(Ltl::max_ap)
                .max(),
        }
    }

    /// Evaluates the formula on an ultimately periodic word `prefix · cycle^ω` (each letter a
    /// bitmask of the propositions that hold), directly from LTL's semantics — a reference
    /// implementation for tests, independent of the automaton. `cycle` must not be empty.
    pub fn holds_on_lasso(&self, prefix: &[u64], cycle: &[u64]) -> bool {
        assert!(!cycle.is_empty(), "the cycle of a lasso must not be empty");
        let n = prefix.len() + cycle.len();
        let letter = |i: usize| {
            if i < prefix.len() {
                prefix[i]
            } else {
                cycle[i - prefix.len()]
            }
        };
        let succ = |i: usize| if i + 1 < n { i + 1 } else { prefix.len() };
        self.eval_positions(n, &letter, &succ)[0]
    }

    /// The truth value at every position of a lasso with `n` positions (see
    /// [`Ltl::holds_on_lasso`]).
    fn eval_positions(
        &self,
        n: usize,
        letter: &dyn Fn(usize) -> u64,
        succ: &dyn Fn(usize) -> usize,
    ) -> Vec<bool> {
        let un = |f: &Ltl| f.eval_positions(n, letter, succ);
        match self {
            Ltl::True => vec![true; n],
            Ltl::False => vec![false; n],
            Ltl::Ap(i) => (0..n).map(|p| letter(p) >> i & 1 == 1).collect(),
            Ltl::Not(a) => un(a).into_iter().map(|v| !v).collect(),
            Ltl::And(a, b) => zip(un(a), un(b), |x, y| x && y),
            Ltl::Or(a, b) => zip(un(a), un(b), |x, y| x || y),
            Ltl::Implies(a, b) => zip(un(a), un(b), |x, y| !x || y),
            Ltl::Iff(a, b) => zip(un(a), un(b), |x, y| x == y),
            Ltl::Next(a) => {
                let va = un(a);
                (0..n).map(|p| va[succ(p)]).collect()
            }
            Ltl::Eventually(a) => {
                Ltl::until(Ltl::True, (**a).clone()).eval_positions(n, letter, succ)
            }
            Ltl::Globally(a) => {
                Ltl::not(Ltl::eventually(Ltl::not((**a).clone()))).eval_positions(n, letter, succ)
            }
            Ltl::Release(a, b) => {
                Ltl::not(Ltl::until(Ltl::not((**a).clone()), Ltl::not((**b).clone())))
                    .eval_positions(n, letter, succ)
            }
            Ltl::WeakUntil(a, b) => Ltl::or(
                Ltl::until((**a).clone(), (**b).clone()),
                Ltl::globally((**a).clone()),
            )
            .eval_positions(n, letter, succ),
            Ltl::Until(a, b) => {
                // Least fixpoint of x = b | (a & X x): iterate from all-false; n rounds suffice.
                let (va, vb) = (un(a), un(b));
                let mut x = vec![false; n];
                loop {
                    let next: Vec<bool> = (0..n).map(|p| vb[p] || (va[p] && x[succ(p)])).collect();
                    if next == x {
                        return x;
                    }
                    x = next;
                }
            }
        }
    }
}

fn zip(a: Vec<bool>, b: Vec<bool>, f: impl Fn(bool, bool) -> bool) -> Vec<bool> {
    a.into_iter().zip(b).map(|(x, y)| f(x, y)).collect()
}

impl fmt::Display for Ltl {
    /// Fully parenthesised text with propositions written `p0`, `p1`, …
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ltl::True => write!(f, "true"),
            Ltl::False => write!(f, "false"),
            Ltl::Ap(i) => write!(f, "p{i}"),
            Ltl::Not(a) => write!(f, "!({a})"),
            Ltl::And(a, b) => write!(f, "({a}) & ({b})"),
            Ltl::Or(a, b) => write!(f, "({a}) | ({b})"),
            Ltl::Implies(a, b) => write!(f, "({a}) => ({b})"),
            Ltl::Iff(a, b) => write!(f, "({a}) <=> ({b})"),
            Ltl::Next(a) => write!(f, "X ({a})"),
            Ltl::Until(a, b) => write!(f, "({a}) U ({b})"),
            Ltl::WeakUntil(a, b) => write!(f, "({a}) W ({b})"),
            Ltl::Release(a, b) => write!(f, "({a}) R ({b})"),
            Ltl::Eventually(a) => write!(f, "F ({a})"),
            Ltl::Globally(a) => write!(f, "G ({a})"),
        }
    }
}
