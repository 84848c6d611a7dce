//! Whether any rule matches from an offset on, answered by two walks of one lazy DFA at once.
//!
//! [`super::detect`]'s time on a text without cues is the lazy DFA's walk over every byte, and
//! that walk is a chain of dependent table lookups: each byte's transition waits for the one
//! before. Two walks over the two halves of the text have no dependency on each other, so the
//! processor runs them side by side in about the time of one. The walk of the first half goes
//! on into the second until its state equals the state the second walk had at the same byte
//! (a DFA's walks that meet stay together): from there on the second walk *is* the walk of the
//! whole text. So the answer is exactly that of one walk over the whole text — "no match" only
//! when no state of the whole walk is a match state — and [`super::detect`] uses it only to
//! skip searches that would find nothing; every match it reports still comes from the rules'
//! own search.
//!
//! The automaton is the rules' forward lazy DFA, built from the same patterns and syntax as
//! the search's. `None` (cannot tell) when its cache is cleared during the walks (state ids
//! change) or a walk quits; the caller then searches as before.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::regex::{Cache as RegexCache, Regex};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson;
use regex_automata::util::pool::Pool;
use regex_automata::{Anchored, Input, Match, MatchKind};
use std::sync::OnceLock;

/// Below this many bytes one walk is used (the second walk's set-up is not worth it).
const SPLIT_MIN: usize = 256;

/// How many of the second walk's first states are kept for the first walk to meet.
const SYNC: usize = 192;

type CachePool = Pool<RegexCache, fn() -> RegexCache>;

/// The rules' lazy DFAs: the forward one the walks use, and the reverse one that finds where a
/// match starts (as the search does).
fn regex() -> &'static Regex {
    static D: OnceLock<Regex> = OnceLock::new();
    D.get_or_init(|| {
        Regex::builder()
            .syntax(super::syntax_config())
            .thompson(
                thompson::Config::new()
                    .utf8(false)
                    .which_captures(thompson::WhichCaptures::None),
            )
            .dfa(
                DFA::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .unicode_word_boundary(true),
            )
            .build_many(&super::patterns())
            .expect("the injection rules compile to a lazy DFA")
    })
}

fn new_cache() -> RegexCache {
    regex().create_cache()
}

fn pool() -> &'static CachePool {
    static P: OnceLock<CachePool> = OnceLock::new();
    P.get_or_init(|| Pool::new(new_cache as fn() -> RegexCache))
}

/// Why a walk stopped early.
enum Stop {
    /// The transition entered this match state.
    Match(LazyStateID),
    /// The cache was cleared or the walk quit: no answer.
    Unsure,
}

/// The transition from `s` on `b`, computing it when it is not in the cache yet.
#[inline(always)]
fn step(
    dfa: &DFA,
    cache: &mut Cache,
    clears: usize,
    s: LazyStateID,
    b: u8,
) -> Result<LazyStateID, Stop> {
    let t = dfa.next_state_untagged(cache, s, b);
    if t.is_tagged() {
        return slow(dfa, cache, clears, s, t, b);
    }
    Ok(t)
}

/// A tagged transition `t` from `s` on `b`: an unknown one computed, then a match or a stop.
#[cold]
fn slow(
    dfa: &DFA,
    cache: &mut Cache,
    clears: usize,
    s: LazyStateID,
    mut t: LazyStateID,
    b: u8,
) -> Result<LazyStateID, Stop> {
    if t.is_unknown() {
        t = dfa.next_state(cache, s, b).map_err(|_| Stop::Unsure)?;
        if cache.clear_count() != clears {
            return Err(Stop::Unsure);
        }
    }
    if t.is_match() {
        Err(Stop::Match(t))
    } else if t.is_dead() || t.is_quit() {
        // Dead only follows a match; quit means the DFA cannot tell.
        Err(Stop::Unsure)
    } else {
        Ok(t)
    }
}

/// One walk from `s` over `hay[from..to]`: its state at `to`, or where and why it stopped.
fn walk(
    dfa: &DFA,
    cache: &mut Cache,
    clears: usize,
    mut s: LazyStateID,
    hay: &[u8],
    from: usize,
    to: usize,
) -> Result<LazyStateID, (usize, Stop)> {
    let mut i = from;
    while i < to {
        // Untagged transitions with the cache only read (its table stays in registers).
        let c: &Cache = cache;
        for &x in &hay[i..to] {
            let t = dfa.next_state_untagged(c, s, x);
            if t.is_tagged() {
                break;
            }
            s = t;
            i += 1;
        }
        if i < to {
            s = step(dfa, cache, clears, s, hay[i]).map_err(|e| (i, e))?;
            i += 1;
        }
    }
    Ok(s)
}

/// How two walks side by side stopped.
enum Halt {
    /// The first stopped at this byte.
    First(usize, Stop),
    /// The second entered this match state at byte `at`; the first had read the same number
    /// of bytes and is in state `s1`.
    Second {
        s1: LazyStateID,
        at: usize,
        t2: LazyStateID,
    },
    /// The second could not tell.
    Unsure,
}

/// Two walks side by side, from `s1` over `hay[p1..p1 + len]` and from `s2` over
/// `hay[p2..p2 + len]`.
fn walk2(
    dfa: &DFA,
    cache: &mut Cache,
    clears: usize,
    (mut s1, mut s2): (LazyStateID, LazyStateID),
    hay: &[u8],
    (p1, p2): (usize, usize),
    len: usize,
) -> Result<(LazyStateID, LazyStateID), Halt> {
    let (a, b) = (&hay[p1..p1 + len], &hay[p2..p2 + len]);
    let mut i = 0;
    while i < len {
        let c: &Cache = cache;
        for (&x, &y) in a[i..].iter().zip(&b[i..]) {
            let t1 = dfa.next_state_untagged(c, s1, x);
            let t2 = dfa.next_state_untagged(c, s2, y);
            if t1.is_tagged() | t2.is_tagged() {
                break;
            }
            (s1, s2) = (t1, t2);
            i += 1;
        }
        if i < len {
            s1 = step(dfa, cache, clears, s1, a[i]).map_err(|e| Halt::First(p1 + i, e))?;
            s2 = match step(dfa, cache, clears, s2, b[i]) {
                Ok(t) => t,
                Err(Stop::Match(t2)) => return Err(Halt::Second { s1, at: p2 + i, t2 }),
                Err(Stop::Unsure) => return Err(Halt::Unsure),
            };
            i += 1;
        }
    }
    Ok((s1, s2))
}

/// The first match state of the walk over `hay[from..]`: the byte whose transition entered
/// it (the text's length for the end-of-text transition) and the state; `None` when the walk
/// enters none.
fn first_match(
    dfa: &DFA,
    cache: &mut Cache,
    hay: &[u8],
    from: usize,
) -> Result<Option<(usize, LazyStateID)>, ()> {
    let n = hay.len();
    let clears = cache.clear_count();
    let start = |cache: &mut Cache, at: usize| -> Result<LazyStateID, ()> {
        let s = dfa
            .start_state_forward(cache, &Input::new(hay).span(at..n))
            .map_err(|_| ())?;
        if cache.clear_count() != clears || s.is_tagged() {
            return Err(());
        }
        Ok(s)
    };
    // The rest of one walk from `s` at `at`, then the end of the text.
    let alone = |cache: &mut Cache, s: LazyStateID, at: usize| match walk(
        dfa, cache, clears, s, hay, at, n,
    ) {
        Ok(s) => {
            let t = dfa.next_eoi_state(cache, s).map_err(|_| ())?;
            if cache.clear_count() != clears || t.is_quit() {
                return Err(());
            }
            Ok(t.is_match().then_some((n, t)))
        }
        Err((at, Stop::Match(t))) => Ok(Some((at, t))),
        Err((_, Stop::Unsure)) => Err(()),
    };
    let s1 = start(cache, from)?;
    if n - from < SPLIT_MIN {
        return alone(cache, s1, from);
    }
    let mid = from + (n - from) / 2;
    let half = mid - from;
    let s2 = start(cache, mid)?;
    // The two walks side by side, the second's first states kept; then the first walk, at
    // `mid`, goes on until it meets the second (or, when the second entered a match state,
    // up to that byte).
    let mut seen = [s2; SYNC];
    let keep = SYNC.min(half);
    let mut pair = (s1, s2);
    let mut halt = None;
    for (i, slot) in seen[..keep].iter_mut().enumerate() {
        *slot = pair.1;
        match walk2(dfa, cache, clears, pair, hay, (from + i, mid + i), 1) {
            Ok(p) => pair = p,
            Err(h) => {
                halt = Some(h);
                break;
            }
        }
    }
    if halt.is_none() {
        match walk2(
            dfa,
            cache,
            clears,
            pair,
            hay,
            (from + keep, mid + keep),
            half - keep,
        ) {
            Ok(p) => pair = p,
            Err(h) => halt = Some(h),
        }
    }
    let (s1, s2, second) = match halt {
        None => (pair.0, pair.1, None),
        Some(Halt::First(at, Stop::Match(t))) => return Ok(Some((at, t))),
        Some(Halt::First(_, Stop::Unsure) | Halt::Unsure) => return Err(()),
        Some(Halt::Second { s1, at, t2 }) => {
            // The first walk has read as many bytes; it goes on alone to `mid`.
            let s1 = match walk(dfa, cache, clears, s1, hay, from + (at - mid) + 1, mid) {
                Ok(s) => s,
                Err((at, Stop::Match(t))) => return Ok(Some((at, t))),
                Err((_, Stop::Unsure)) => return Err(()),
            };
            (s1, t2, Some(at))
        }
    };
    // Meet: the first walk's state at `mid + j` against the second's.
    let reach = second.map_or(keep, |at| (at - mid + 1).min(keep));
    let mut s1 = s1;
    for j in 0..reach {
        if s1 == seen[j] {
            return match second {
                Some(at) => Ok(Some((at, s2))),
                None => alone(cache, s2, mid + half),
            };
        }
        s1 = match step(dfa, cache, clears, s1, hay[mid + j]) {
            Ok(s) => s,
            Err(Stop::Match(t)) => return Ok(Some((mid + j, t))),
            Err(Stop::Unsure) => return Err(()),
        };
    }
    // They did not meet: the first walk is the walk of the text; it goes on alone.
    alone(cache, s1, mid + reach)
}

/// The rules' leftmost-first match in `hay[from..]` (look-behind reading the bytes before
/// `from`), as the search finds it: `Ok(None)` when there is none, `Err` when the walks could
/// not tell (the caller then searches as before).
pub(super) fn find(hay: &[u8], from: usize) -> Result<Option<Match>, ()> {
    let re = regex();
    let mut guard = pool().get();
    let (fcache, rcache) = guard.as_parts_mut();
    let dfa = re.forward();
    let Some((at, mut s)) = first_match(dfa, fcache, hay, from)? else {
        return Ok(None);
    };
    // As the search does: the last match state before the walk dies (leftmost-first).
    let n = hay.len();
    let mut end = (dfa.match_pattern(fcache, s, 0), at);
    if at < n {
        let mut dead = false;
        for (j, &b) in hay.iter().enumerate().skip(at + 1) {
            s = dfa.next_state(fcache, s, b).map_err(|_| ())?;
            if s.is_match() {
                end = (dfa.match_pattern(fcache, s, 0), j);
            } else if s.is_dead() {
                dead = true;
                break;
            } else if s.is_quit() {
                return Err(());
            }
        }
        if !dead {
            s = dfa.next_eoi_state(fcache, s).map_err(|_| ())?;
            if s.is_match() {
                end = (dfa.match_pattern(fcache, s, 0), n);
            }
        }
    }
    let (pattern, end) = end;
    if end == from {
        // An empty match (no rule has one): the search decides.
        return Err(());
    }
    let rev = Input::new(hay)
        .span(from..end)
        .anchored(Anchored::Yes)
        .earliest(false);
    let start = re
        .reverse()
        .try_search_rev(rcache, &rev)
        .map_err(|_| ())?
        .ok_or(())?;
    if start.pattern() != pattern {
        return Err(());
    }
    Ok(Some(Match::new(pattern, start.offset()..end)))
}
