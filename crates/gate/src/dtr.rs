//! SafetyDrift's safety state `s = (d, t, r)`, its monotone update and its 12 risk rules,
//! with Augur's fourth dimension `p` (issue 25).
//!
//! - d, data exposure: NONE < PUBLIC < INTERNAL < SENSITIVE < CREDENTIALS
//! - t, tool escalation: READ_ONLY < FILE_WRITE < CODE_EXEC < NETWORK
//! - r, reversibility of the latest action: FULLY_REVERSIBLE, PARTIALLY, IRREVERSIBLE
//! - p, provenance of the latest action's destination and payload arguments: NONE (written by
//!   the model, or the action has none), USER (a value occurs in trusted text), UNTRUSTED (a
//!   value occurs only in tool results; see [`crate::provenance`]). Like r, p is the latest
//!   action's, not a maximum.
//!
//! With p = NONE the 60 states, their indices, names and risk levels are SafetyDrift's
//! (version-1 monitors use only these); the 180 states `(d, t, r, p)` add rule 14: an action
//! whose p is UNTRUSTED while t ≥ FILE_WRITE or r = IRREVERSIBLE is VIOLATED (a write, a
//! network action or an irreversible action that acts on a value the user never gave: the
//! mark of a prompt injection). The classifier gives a call destination or payload arguments
//! only when it writes or cannot be undone (t' ≥ FILE_WRITE or r' = IRREVERSIBLE), so p is
//! UNTRUSTED only after such a call and rule 14 is about that call itself.
//!
//! After an action with implications `(d', t', r')` the state becomes
//! `(max(d, d'), max(t, t'), r')` ([`SafetyState::update`]); the risk level is given by the
//! first of 12 ordered rules that matches ([`SafetyState::risk`]), plus Augur's rule 13 (checked
//! third): an irreversible write or command while credentials are exposed is VIOLATED. The
//! paper's rules reach VIOLATED only through NETWORK; rule 13 is how destroying or overwriting
//! a system or home path (`rm -rf ~`, `delete_file /etc/passwd`, `dd of=/dev/sda`), which the
//! classifier maps to `(CREDENTIALS, ≥ FILE_WRITE, IRREVERSIBLE)` because those paths hold the
//! machine's credentials, is blocked.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! level_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum $name {
            $($(#[$vdoc])* $v),+
        }

        impl $name {
            /// Every level, in order.
            pub const ALL: &'static [$name] = &[$($name::$v),+];

            /// The level's name as SafetyDrift writes it (`NONE`, `READ_ONLY`, ...).
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s),+ }
            }

            /// The level with this name, case-insensitive (`-` and spaces read as `_`).
            pub fn parse(name: &str) -> Option<$name> {
                let name = name.trim();
                Self::ALL.iter().copied().find(|l| {
                    let s = l.as_str();
                    s.len() == name.len()
                        && s.bytes().zip(name.bytes()).all(|(a, b)| {
                            let b = if b == b'-' || b == b' ' { b'_' } else { b };
                            a.eq_ignore_ascii_case(&b)
                        })
                })
            }

            /// The level's position in the order (0 = lowest).
            pub fn index(self) -> usize {
                self as usize
            }

            /// The level at position `i`.
            pub fn from_index(i: usize) -> Option<$name> {
                Self::ALL.get(i).copied()
            }

            /// The level names, comma-separated (for messages).
            pub fn names() -> String {
                Self::ALL.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

level_enum!(
    /// d: how sensitive the data the agent has accessed is.
    DataExposure {
        /// No data.
        None = "NONE",
        /// Public data.
        Public = "PUBLIC",
        /// The user's or organisation's internal data.
        Internal = "INTERNAL",
        /// Personal, financial or otherwise sensitive data.
        Sensitive = "SENSITIVE",
        /// Secrets: passwords, keys, tokens.
        Credentials = "CREDENTIALS",
    }
);

level_enum!(
    /// t: the most powerful kind of tool used so far.
    ToolEscalation {
        /// Reading only.
        ReadOnly = "READ_ONLY",
        /// Writing local files or records.
        FileWrite = "FILE_WRITE",
        /// Running code.
        CodeExec = "CODE_EXEC",
        /// Sending anything outside: e-mail, messages, HTTP, payments.
        Network = "NETWORK",
    }
);

level_enum!(
    /// r: whether the latest action can be undone.
    Reversibility {
        /// It can be undone completely.
        FullyReversible = "FULLY_REVERSIBLE",
        /// Partly.
        Partially = "PARTIALLY",
        /// Not at all.
        Irreversible = "IRREVERSIBLE",
    }
);

level_enum!(
    /// The risk level of a safety state.
    RiskLevel {
        /// Rule 12.
        Safe = "SAFE",
        /// Rules 8–11.
        Mild = "MILD",
        /// Rules 5–7.
        Elevated = "ELEVATED",
        /// Rules 3–4.
        Critical = "CRITICAL",
        /// Rules 1–2, 13, 14 (absorbing).
        Violated = "VIOLATED",
    }
);

level_enum!(
    /// p: where the latest action's destination or payload arguments came from.
    Prov {
        /// No value of them was seen before (the model wrote them), or the action has none.
        None = "NONE",
        /// A value of them occurs in trusted text (the user's request, the system prompt, a
        /// trusted tool's result) and none occurs only in untrusted text.
        User = "USER",
        /// A value of them occurs only in untrusted text (a tool result), or is unknown to a
        /// provenance store that lost values (a limit, a restart): fails closed.
        Untrusted = "UNTRUSTED",
    }
);

#[allow(clippy::derivable_impls)] // the enum is made by `level_enum!`
impl Default for Prov {
    fn default() -> Self {
        Prov::None
    }
}

/// The implications `(d', t', r')` of one action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Implication {
    /// Data exposure of the action.
    pub d: DataExposure,
    /// Tool escalation of the action.
    pub t: ToolEscalation,
    /// Reversibility of the action.
    pub r: Reversibility,
}

/// The learned chain's predicates beside `(d, t, r, p)` (issue 41, item 4): what the rules
/// decide on besides the state, given to the chain so that its probability can tell them
/// apart. They never change a risk level ([`SafetyState::risk`] ignores them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Predicates {
    /// The latest action's destination or payload value is the user's by delegation: it came
    /// from content the user named (a delegated result, [`crate::intent::Tier::Requested`] or
    /// [`crate::intent::Tier::Delegated`]); p is USER. The chain's fourth provenance class,
    /// DELEGATED.
    #[serde(default, skip_serializing_if = "is_false")]
    pub delegated: bool,
    /// `i`: an instruction to the assistant was seen in content the user did not write
    /// ([`crate::intent::Intent::first_signal`]), at this step or before (never unset).
    #[serde(default, skip_serializing_if = "is_false")]
    pub signal: bool,
    /// The latest action changes state (it writes or cannot be undone, and is not a fetch)
    /// and the user's request does not ask for its kind of action
    /// ([`crate::intent::Intent::requested`]); false when no request is known.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unrequested: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Predicates {
    /// No predicate holds.
    pub fn is_empty(&self) -> bool {
        *self == Predicates::default()
    }

    /// The predicates' names in the order of the chain's valuations (`p` = 3 is `delegated`;
    /// `i` and `u` are columns of their own).
    pub const NAMES: [&'static str; 3] = ["delegated", "signal", "unrequested"];
}

/// A safety state `(d, t, r, p)`; one of 5·4·3·3 = 180 (60 with p = NONE), with the learned
/// chain's [`Predicates`] (960 chain states, [`SafetyState::chain_index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SafetyState {
    /// Data exposure so far (never decreases).
    pub d: DataExposure,
    /// Tool escalation so far (never decreases).
    pub t: ToolEscalation,
    /// Reversibility of the latest action.
    pub r: Reversibility,
    /// Provenance of the latest action's destination or payload arguments (absent in saved
    /// states of version-1 sessions: NONE).
    #[serde(default, skip_serializing_if = "Prov::is_none")]
    pub p: Prov,
    /// The chain's predicates (absent in saved states before issue 41's chain: none hold).
    #[serde(default, skip_serializing_if = "Predicates::is_empty")]
    pub x: Predicates,
}

impl Prov {
    /// Is it NONE?
    pub fn is_none(&self) -> bool {
        *self == Prov::None
    }
}

/// Number of `(d, t, r)` safety states (p = NONE).
pub const NUM_DTR_STATES: usize = 60;
/// Number of `(d, t, r, p)` safety states.
pub const NUM_DTRP_STATES: usize = 180;
/// Number of the learned chain's states: `(d, t, r)` × p ∈ {NONE, USER, UNTRUSTED,
/// DELEGATED} × `i` × `u` (see [`SafetyState::chain_index`]).
pub const NUM_CHAIN_STATES: usize = 960;
/// The chain's provenance classes: p's levels and DELEGATED (p = USER by delegation).
pub const CHAIN_PROV_LEVELS: [&str; 4] = ["NONE", "USER", "UNTRUSTED", "DELEGATED"];

impl Default for SafetyState {
    fn default() -> Self {
        SafetyState::START
    }
}

impl SafetyState {
    /// Where every run starts: (NONE, READ_ONLY, FULLY_REVERSIBLE).
    pub const START: SafetyState = SafetyState {
        d: DataExposure::None,
        t: ToolEscalation::ReadOnly,
        r: Reversibility::FullyReversible,
        p: Prov::None,
        x: Predicates {
            delegated: false,
            signal: false,
            unrequested: false,
        },
    };

    /// The state `(d, t, r)` with p = NONE.
    pub fn new(d: DataExposure, t: ToolEscalation, r: Reversibility) -> SafetyState {
        SafetyState {
            d,
            t,
            r,
            p: Prov::None,
            x: Predicates::default(),
        }
    }

    /// The same state with provenance `p`.
    pub fn with_p(self, p: Prov) -> SafetyState {
        SafetyState { p, ..self }
    }

    /// The canonical index `60·p + 12·d + 3·t + r` in `0..180` (`0..60` for p = NONE: the
    /// `(d, t, r)` index).
    pub fn index(self) -> usize {
        self.p.index() * NUM_DTR_STATES + self.d.index() * 12 + self.t.index() * 3 + self.r.index()
    }

    /// The state of canonical index `i` (`None` for `i ≥ 180`).
    pub fn from_index(i: usize) -> Option<SafetyState> {
        let (p, i) = (i / NUM_DTR_STATES, i % NUM_DTR_STATES);
        Some(SafetyState {
            d: DataExposure::from_index(i / 12)?,
            t: ToolEscalation::from_index(i / 3 % 4)?,
            r: Reversibility::from_index(i % 3)?,
            p: Prov::from_index(p)?,
            x: Predicates::default(),
        })
    }

    /// The same state with the chain's predicates `x`.
    pub fn with_x(self, x: Predicates) -> SafetyState {
        SafetyState { x, ..self }
    }

    /// The chain's provenance class: p's index, or 3 (DELEGATED) for a USER value the user
    /// delegated.
    pub fn chain_class(self) -> usize {
        if self.x.delegated && self.p == Prov::User {
            3
        } else {
            self.p.index()
        }
    }

    /// The learned chain's index `240·(i + 2·u) + 60·class + 12·d + 3·t + r` in `0..960`
    /// ([`SafetyState::chain_class`]; `delegated` counts only with p = USER). The first 180
    /// are the `(d, t, r, p)` indices: with no predicate, `chain_index() == index()`.
    pub fn chain_index(self) -> usize {
        let base = self.chain_class() * NUM_DTR_STATES
            + self.d.index() * 12
            + self.t.index() * 3
            + self.r.index();
        base + 240 * (usize::from(self.x.signal) + 2 * usize::from(self.x.unrequested))
    }

    /// The state of chain index `i` (`None` for `i ≥ 960`).
    pub fn from_chain_index(i: usize) -> Option<SafetyState> {
        if i >= NUM_CHAIN_STATES {
            return None;
        }
        let (x, base) = (i / 240, i % 240);
        let (class, rest) = (base / NUM_DTR_STATES, base % NUM_DTR_STATES);
        let s = SafetyState::from_index(if class == 3 {
            NUM_DTR_STATES + rest
        } else {
            base
        })?;
        Some(s.with_x(Predicates {
            delegated: class == 3,
            signal: x & 1 == 1,
            unrequested: x & 2 == 2,
        }))
    }

    /// All 960 chain states, in chain index order.
    pub fn all_chain() -> impl Iterator<Item = SafetyState> {
        (0..NUM_CHAIN_STATES).filter_map(SafetyState::from_chain_index)
    }

    /// The state's name in the learned chain: its [`fmt::Display`] name, with `DELEGATED`
    /// for the delegated class and `·i`, `·u` for the predicates that hold.
    pub fn chain_name(self) -> String {
        let mut s = format!("{}·{}·{}", self.d, self.t, self.r);
        if self.chain_class() != 0 {
            s.push('·');
            s.push_str(CHAIN_PROV_LEVELS[self.chain_class()]);
        }
        if self.x.signal {
            s.push_str("·i");
        }
        if self.x.unrequested {
            s.push_str("·u");
        }
        s
    }

    /// The 60 states with p = NONE, in index order.
    pub fn all() -> impl Iterator<Item = SafetyState> {
        (0..NUM_DTR_STATES).filter_map(SafetyState::from_index)
    }

    /// All 180 states `(d, t, r, p)`, in index order.
    pub fn all_p() -> impl Iterator<Item = SafetyState> {
        (0..NUM_DTRP_STATES).filter_map(SafetyState::from_index)
    }

    /// The monotone update: `(max(d, d'), max(t, t'), r', NONE)`.
    pub fn update(self, a: Implication) -> SafetyState {
        self.update_p(a, Prov::None)
    }

    /// The update with the action's provenance: `(max(d, d'), max(t, t'), r', p')` (no
    /// predicate: give them with [`SafetyState::with_x`]).
    pub fn update_p(self, a: Implication, p: Prov) -> SafetyState {
        SafetyState {
            d: self.d.max(a.d),
            t: self.t.max(a.t),
            r: a.r,
            p,
            x: Predicates::default(),
        }
    }

    /// The risk level and the number (1–14; 13 and 14 are checked after 2) of the rule that
    /// gave it.
    pub fn risk(self) -> (RiskLevel, u8) {
        use DataExposure as D;
        use Reversibility as R;
        use ToolEscalation as T;
        let (d, t, r) = (self.d, self.t, self.r);
        let irrev = r == R::Irreversible;
        // Rules 1, 2 and 13 (data moved somewhere it cannot be taken back from) do not apply
        // when the action's destination is the user's (p = USER, issue 41): a payment or a
        // send the user asked for, to whom they named, is decided by that provenance, not
        // by the verb.
        let elsewhere = self.p != Prov::User;
        if elsewhere && d >= D::Credentials && t >= T::Network && irrev {
            (RiskLevel::Violated, 1)
        } else if elsewhere && d >= D::Sensitive && t >= T::Network && irrev {
            (RiskLevel::Violated, 2)
        } else if elsewhere && d >= D::Credentials && t >= T::FileWrite && irrev {
            (RiskLevel::Violated, 13)
        } else if self.p == Prov::Untrusted && (t >= T::FileWrite || irrev) {
            (RiskLevel::Violated, 14)
        } else if d >= D::Credentials && t >= T::CodeExec {
            (RiskLevel::Critical, 3)
        } else if d >= D::Sensitive && t >= T::Network {
            (RiskLevel::Critical, 4)
        } else if d >= D::Credentials {
            (RiskLevel::Elevated, 5)
        } else if d >= D::Sensitive && t >= T::CodeExec {
            (RiskLevel::Elevated, 6)
        } else if d >= D::Sensitive && t >= T::FileWrite && irrev {
            (RiskLevel::Elevated, 7)
        } else if d >= D::Sensitive && t >= T::FileWrite {
            (RiskLevel::Mild, 8)
        } else if d >= D::Internal && t >= T::Network {
            (RiskLevel::Mild, 9)
        } else if d >= D::Sensitive {
            (RiskLevel::Mild, 10)
        } else if d >= D::Internal && t >= T::FileWrite {
            (RiskLevel::Mild, 11)
        } else {
            (RiskLevel::Safe, 12)
        }
    }

    /// The risk level alone.
    pub fn risk_level(self) -> RiskLevel {
        self.risk().0
    }
}

impl fmt::Display for SafetyState {
    /// `CREDENTIALS·NETWORK·IRREVERSIBLE`; with p ≠ NONE, `…·IRREVERSIBLE·UNTRUSTED`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}·{}·{}", self.d, self.t, self.r)?;
        if self.p != Prov::None {
            write!(f, "·{}", self.p)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataExposure as D;
    use Reversibility as R;
    use ToolEscalation as T;

    fn s(d: D, t: T, r: R) -> SafetyState {
        SafetyState::new(d, t, r)
    }

    #[test]
    fn index_round_trips_over_the_60_states() {
        let all: Vec<_> = SafetyState::all().collect();
        assert_eq!(all.len(), 60);
        for (i, st) in all.iter().enumerate() {
            assert_eq!(st.index(), i);
            assert_eq!(SafetyState::from_index(i), Some(*st));
        }
        // Index 60 is the first state with p = USER.
        assert_eq!(SafetyState::from_index(60).map(|s| s.p), Some(Prov::User));
    }

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(DataExposure::parse("credentials"), Some(D::Credentials));
        assert_eq!(ToolEscalation::parse("read-only"), Some(T::ReadOnly));
        assert_eq!(
            Reversibility::parse("Fully_Reversible"),
            Some(R::FullyReversible)
        );
        assert_eq!(RiskLevel::parse("violated"), Some(RiskLevel::Violated));
        assert_eq!(DataExposure::parse("secret"), None);
    }

    #[test]
    fn the_update_is_monotone_in_d_and_t_and_takes_r_from_the_action() {
        let st = s(D::Sensitive, T::Network, R::Irreversible);
        let a = Implication {
            d: D::Public,
            t: T::ReadOnly,
            r: R::FullyReversible,
        };
        assert_eq!(
            st.update(a),
            s(D::Sensitive, T::Network, R::FullyReversible)
        );
        for x in SafetyState::all() {
            for y in SafetyState::all() {
                let a = Implication {
                    d: y.d,
                    t: y.t,
                    r: y.r,
                };
                let z = x.update(a);
                assert!(z.d >= x.d && z.d >= y.d && z.t >= x.t && z.t >= y.t);
                assert_eq!(z.r, y.r);
                assert!(z.d == x.d || z.d == y.d);
            }
        }
    }

    /// One test per rule: a state that the rule decides, and which earlier rules miss.
    #[test]
    fn each_of_the_12_rules_fires_on_its_own_example() {
        let cases = [
            (
                s(D::Credentials, T::Network, R::Irreversible),
                RiskLevel::Violated,
                1,
            ),
            (
                s(D::Sensitive, T::Network, R::Irreversible),
                RiskLevel::Violated,
                2,
            ),
            (
                s(D::Credentials, T::CodeExec, R::Irreversible),
                RiskLevel::Violated,
                13,
            ),
            (
                s(D::Credentials, T::FileWrite, R::Irreversible),
                RiskLevel::Violated,
                13,
            ),
            (
                s(D::Credentials, T::CodeExec, R::Partially),
                RiskLevel::Critical,
                3,
            ),
            (
                s(D::Credentials, T::Network, R::Partially),
                RiskLevel::Critical,
                3,
            ),
            (
                s(D::Sensitive, T::Network, R::Partially),
                RiskLevel::Critical,
                4,
            ),
            (
                s(D::Credentials, T::FileWrite, R::Partially),
                RiskLevel::Elevated,
                5,
            ),
            (
                s(D::Sensitive, T::CodeExec, R::FullyReversible),
                RiskLevel::Elevated,
                6,
            ),
            (
                s(D::Sensitive, T::FileWrite, R::Irreversible),
                RiskLevel::Elevated,
                7,
            ),
            (
                s(D::Sensitive, T::FileWrite, R::Partially),
                RiskLevel::Mild,
                8,
            ),
            (
                s(D::Internal, T::Network, R::Irreversible),
                RiskLevel::Mild,
                9,
            ),
            (
                s(D::Sensitive, T::ReadOnly, R::Irreversible),
                RiskLevel::Mild,
                10,
            ),
            (
                s(D::Internal, T::FileWrite, R::Irreversible),
                RiskLevel::Mild,
                11,
            ),
            (
                s(D::Internal, T::ReadOnly, R::Irreversible),
                RiskLevel::Safe,
                12,
            ),
            (s(D::None, T::Network, R::Irreversible), RiskLevel::Safe, 12),
            (s(D::Public, T::CodeExec, R::Partially), RiskLevel::Safe, 12),
        ];
        for (st, level, rule) in cases {
            assert_eq!(st.risk(), (level, rule), "{st}");
        }
    }

    /// All 60 states against the rules written as independent predicates (each rule's
    /// condition and not any earlier one), counting the states per level.
    #[test]
    fn all_60_states_have_the_risk_level_of_the_first_matching_rule() {
        type Cond = fn(SafetyState) -> bool;
        let rules: [(Cond, RiskLevel, u8); 13] = [
            (
                |s| s.d == D::Credentials && s.t == T::Network && s.r == R::Irreversible,
                RiskLevel::Violated,
                1,
            ),
            (
                |s| s.d >= D::Sensitive && s.t == T::Network && s.r == R::Irreversible,
                RiskLevel::Violated,
                2,
            ),
            (
                |s| s.d == D::Credentials && s.t >= T::FileWrite && s.r == R::Irreversible,
                RiskLevel::Violated,
                13,
            ),
            (
                |s| s.d == D::Credentials && s.t >= T::CodeExec,
                RiskLevel::Critical,
                3,
            ),
            (
                |s| s.d >= D::Sensitive && s.t == T::Network,
                RiskLevel::Critical,
                4,
            ),
            (|s| s.d == D::Credentials, RiskLevel::Elevated, 5),
            (
                |s| s.d >= D::Sensitive && s.t >= T::CodeExec,
                RiskLevel::Elevated,
                6,
            ),
            (
                |s| s.d >= D::Sensitive && s.t >= T::FileWrite && s.r == R::Irreversible,
                RiskLevel::Elevated,
                7,
            ),
            (
                |s| s.d >= D::Sensitive && s.t >= T::FileWrite,
                RiskLevel::Mild,
                8,
            ),
            (
                |s| s.d >= D::Internal && s.t == T::Network,
                RiskLevel::Mild,
                9,
            ),
            (|s| s.d >= D::Sensitive, RiskLevel::Mild, 10),
            (
                |s| s.d >= D::Internal && s.t >= T::FileWrite,
                RiskLevel::Mild,
                11,
            ),
            (|_| true, RiskLevel::Safe, 12),
        ];
        let mut per_level = [0usize; 5];
        for st in SafetyState::all() {
            let (_, level, n) = rules.iter().find(|(c, _, _)| c(st)).unwrap();
            assert_eq!(st.risk(), (*level, *n), "{st}");
            per_level[level.index()] += 1;
        }
        // Counted by hand: VIOLATED = d∈{S,C}, t=N, r=I: 2, plus rule 13's C with t∈{W,E}, r=I:
        // 2 → 4; CRITICAL = C with t∈{E,N} minus (C,N,I) and (C,E,I): 4, plus S,N with r∈{F,P}:
        // 2 → 6; ELEVATED = C with t∈{R,W} minus (C,W,I): 5, S with t=E: 3, S,W,I: 1 → 9;
        // MILD = S,W,{F,P}: 2, I,N: 3, S,R: 3, I,{W,E}: 6 → 14; SAFE: 60 − 33 = 27.
        assert_eq!(per_level, [27, 14, 9, 6, 4]);
    }

    #[test]
    fn index_round_trips_over_the_180_states_and_p_none_keeps_the_60_indices() {
        let all: Vec<_> = SafetyState::all_p().collect();
        assert_eq!(all.len(), 180);
        for (i, st) in all.iter().enumerate() {
            assert_eq!(st.index(), i);
            assert_eq!(SafetyState::from_index(i), Some(*st));
            if i < 60 {
                assert_eq!(st.p, Prov::None);
            }
        }
        assert_eq!(SafetyState::from_index(180), None);
        let names: std::collections::HashSet<String> = all.iter().map(|s| s.to_string()).collect();
        assert_eq!(names.len(), 180, "every state has its own name");
        assert_eq!(
            s(D::None, T::Network, R::FullyReversible)
                .with_p(Prov::Untrusted)
                .to_string(),
            "NONE·NETWORK·FULLY_REVERSIBLE·UNTRUSTED"
        );
    }

    /// Rule 14: p = UNTRUSTED with t ≥ FILE_WRITE or r = IRREVERSIBLE is VIOLATED; p = NONE
    /// leaves SafetyDrift's levels as they are, and p = USER too except that rules 1, 2 and
    /// 13 do not apply (the destination is the user's, issue 41): those states take the level
    /// of the next rule that holds, never VIOLATED.
    #[test]
    fn rule_14_makes_untrusted_writes_and_irreversible_actions_violated() {
        for st in SafetyState::all() {
            let user = st.with_p(Prov::User).risk();
            if matches!(st.risk().1, 1 | 2 | 13) {
                assert!(user.0 < RiskLevel::Violated, "{st}: {user:?}");
                assert!(user.0 >= RiskLevel::Elevated, "{st}: {user:?}");
            } else {
                assert_eq!(user, st.risk(), "{st}");
            }
            let u = st.with_p(Prov::Untrusted);
            if st.t >= T::FileWrite || st.r == R::Irreversible {
                assert_eq!(u.risk_level(), RiskLevel::Violated, "{u}");
                if st.risk_level() != RiskLevel::Violated {
                    assert_eq!(u.risk().1, 14, "{u}");
                }
            } else {
                assert_eq!(u.risk(), st.risk(), "{u}");
            }
        }
        // Counted by hand: t ≥ FILE_WRITE: 5 d × 3 t × 3 r = 45, plus t = READ_ONLY with
        // r = IRREVERSIBLE: 5 → 50 VIOLATED states with p = UNTRUSTED, 4 with p = NONE (rules
        // 1, 2 and 13) and none with p = USER.
        let violated = SafetyState::all_p()
            .filter(|s| s.risk_level() == RiskLevel::Violated)
            .count();
        assert_eq!(violated, 50 + 4);
        assert_eq!(
            s(D::None, T::ReadOnly, R::FullyReversible)
                .with_p(Prov::Untrusted)
                .risk(),
            (RiskLevel::Safe, 12)
        );
    }

    /// The 960 chain states: the index round-trips, every state has its own name, the
    /// first 180 are the `(d, t, r, p)` states, DELEGATED is p = USER with `delegated`, and
    /// the predicates never change a risk level.
    #[test]
    fn chain_index_round_trips_over_the_960_states() {
        let all: Vec<_> = SafetyState::all_chain().collect();
        assert_eq!(all.len(), NUM_CHAIN_STATES);
        for (i, st) in all.iter().enumerate() {
            assert_eq!(st.chain_index(), i, "{}", st.chain_name());
            assert_eq!(SafetyState::from_chain_index(i), Some(*st));
            if i < NUM_DTRP_STATES {
                assert_eq!(SafetyState::from_index(i), Some(*st));
                assert_eq!(st.chain_name(), st.to_string());
            }
            if st.x.delegated {
                assert_eq!(st.p, Prov::User);
                assert_eq!(st.chain_class(), 3);
            }
            let plain = st.with_x(Predicates::default());
            assert_eq!(st.risk(), plain.risk());
            assert_eq!(st.index(), plain.index());
        }
        assert_eq!(SafetyState::from_chain_index(NUM_CHAIN_STATES), None);
        let names: std::collections::HashSet<String> = all.iter().map(|s| s.chain_name()).collect();
        assert_eq!(names.len(), NUM_CHAIN_STATES);
        // `delegated` without p = USER is not a class of its own: the plain state's index.
        let odd = s(D::None, T::Network, R::Irreversible).with_x(Predicates {
            delegated: true,
            ..Predicates::default()
        });
        assert_eq!(odd.chain_index(), odd.index());
        let named = s(D::Internal, T::Network, R::Irreversible)
            .with_p(Prov::User)
            .with_x(Predicates {
                delegated: true,
                signal: true,
                unrequested: true,
            });
        assert_eq!(
            named.chain_name(),
            "INTERNAL·NETWORK·IRREVERSIBLE·DELEGATED·i·u"
        );
        assert_eq!(named.chain_index(), 720 + 180 + 2 * 12 + 3 * 3 + 2);
    }

    #[test]
    fn predicates_are_written_only_when_one_holds() {
        let st = s(D::Internal, T::Network, R::Irreversible).with_p(Prov::User);
        assert!(!serde_json::to_string(&st).unwrap().contains("\"x\""));
        let x = st.with_x(Predicates {
            signal: true,
            ..Predicates::default()
        });
        let text = serde_json::to_string(&x).unwrap();
        assert!(text.contains(r#""x":{"signal":true}"#), "{text}");
        assert_eq!(serde_json::from_str::<SafetyState>(&text).unwrap(), x);
    }

    #[test]
    fn a_version_1_state_without_p_reads_as_p_none_and_writes_without_it() {
        let st: SafetyState =
            serde_json::from_str(r#"{"d":"SENSITIVE","t":"NETWORK","r":"IRREVERSIBLE"}"#).unwrap();
        assert_eq!(st.p, Prov::None);
        assert!(!serde_json::to_string(&st).unwrap().contains("\"p\""));
        let u = st.with_p(Prov::Untrusted);
        let back: SafetyState = serde_json::from_str(&serde_json::to_string(&u).unwrap()).unwrap();
        assert_eq!(back, u);
    }
}
