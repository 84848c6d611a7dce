//! Counting JSON Lines traces fast: the file is read in large blocks, each block cut at line
//! breaks into one part per thread, the parts counted in parallel and their counts added in
//! file order (a later part's new states numbered after the earlier parts', so that the
//! states are numbered in the order they are first seen in the file, as the sequential
//! reader numbers them). Memory holds one block and the counts, whatever the number of
//! traces.
//!
//! A line whose steps all name their states (`{"state": NAME}`) is read by a fast path:
//! serde_json deserializing straight into the names of its steps, borrowed from the line (no
//! allocation per step), a name mapped to its state through a hash map. Every other line
//! (concrete values, a malformed line, a name the spec rejects, anything unusual such as a
//! repeated key) goes through the sequential reader's own code
//! ([`augur_abstraction::parse_jsonl_line`] and [`Counter::add`]), so that the two readers
//! accept and reject the same lines, with the same messages and locations, and count the
//! same.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use augur_abstraction::{jsonl_content, parse_jsonl_line, Abstraction, RawValue, Step, StepKind};
use augur_source::Location;
use rustc_hash::FxHashMap;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

use crate::error::{LearnError, Result};
use crate::pipeline::{check_options, Counted, Counter, LearnOptions};

/// The bytes read per block (cut at the last line break; a longer line grows the block).
const BLOCK: usize = 16 << 20;

/// How far reading has got, for a progress line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadProgress {
    /// Bytes read so far.
    pub bytes: u64,
    /// Trace steps counted so far.
    pub steps: u64,
}

/// Counts the JSON Lines traces of `input` (named `file` in messages) on `threads` threads
/// (at least 1), as [`Counter`] counts them one at a time, calling `progress` after each
/// block.
pub(crate) fn count_jsonl(
    mut input: impl Read,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
    threads: usize,
    progress: &mut dyn FnMut(ReadProgress),
) -> Result<Counted> {
    count_jsonl_in_blocks(&mut input, file, spec, opts, threads, BLOCK, progress)
}

/// [`count_jsonl`], reading blocks of `block` bytes. Not generic: it is compiled once, here
/// (optimised), whatever reader the binary hands over, rather than in each caller.
fn count_jsonl_in_blocks(
    input: &mut dyn Read,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
    threads: usize,
    block: usize,
    progress: &mut dyn FnMut(ReadProgress),
) -> Result<Counted> {
    check_options(opts)?;
    let threads = threads.max(1);
    let mut total = Counter::new(spec, opts);
    // Two buffers (zeroed once, by the allocator): while the threads count the lines of one,
    // this thread reads the next block into the other. `cur[..filled]` holds what has been
    // read and not yet counted, a line carried over from the last block first.
    let size = block.max(2);
    let (mut cur, mut next): (Vec<u8>, Vec<u8>) = (vec![0; size], Vec::new());
    let mut filled = 0usize;
    // The first line of `cur`, and the bytes read so far.
    let mut line = 1usize;
    let mut read = 0u64;
    let read_error = |e: std::io::Error, line: usize, pending: &[u8]| {
        LearnError::Abstraction(augur_abstraction::AbstractionError::Trace {
            location: Location::line(file, line + memchr::memchr_iter(b'\n', pending).count()),
            message: format!("cannot read: {e}"),
        })
    };
    let mut eof = match fill(input, &mut cur, &mut filled) {
        Ok(eof) => eof,
        Err(e) => return Err(read_error(e, line, &cur[..filled])),
    };
    read += filled as u64;
    loop {
        // Count whole lines only (all of them at the end of the file).
        let end = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', &cur[..filled]) {
                Some(i) => i + 1,
                None => {
                    // A line longer than the buffer: make room for more of it.
                    cur.resize(cur.len() * 2, 0);
                    let before = filled;
                    eof = match fill(input, &mut cur, &mut filled) {
                        Ok(eof) => eof,
                        Err(e) => return Err(read_error(e, line, &cur[..filled])),
                    };
                    read += (filled - before) as u64;
                    continue;
                }
            }
        };
        // The part line after the last break goes first into the next buffer.
        let carry = filled - end;
        if next.len() < size.max(carry * 2) {
            // (A fresh zeroed allocation: pages the system zeroes as they are first written,
            // not a pass of zeros over them here.)
            next = vec![0; size.max(carry * 2)];
        }
        next[..carry].copy_from_slice(&cur[end..filled]);
        let mut next_filled = carry;
        let parts = split_lines(&cur[..end], threads);
        // Only the first part's first line is known before counting (the others' would take
        // a pass over the block): the others are counted from `UNKNOWN_LINE` on, and counted
        // again from their first line, once known, if a line number matters (an error or a
        // skipped line).
        let (counted, more) = std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .enumerate()
                .map(|(i, &p)| {
                    let first = if i == 0 { line } else { UNKNOWN_LINE };
                    s.spawn(move || count_part(p, first, file, spec, opts))
                })
                .collect();
            let more = if eof {
                Ok(true)
            } else {
                fill(input, &mut next, &mut next_filled)
            };
            // A panic in a counting thread is a bug: pass it on rather than lose a part.
            let counted: Vec<Result<(Counter<'_>, usize)>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            (counted, more)
        });
        // The first error in file order: the parts' before a read error after them.
        for (i, (c, &p)) in counted.into_iter().zip(&parts).enumerate() {
            let (c, lines) = match c {
                Ok((c, lines)) if i == 0 || !c.has_skipped() => (c, lines),
                _ => count_part(p, line, file, spec, opts)?,
            };
            // (Lines counted, less the last one if it has no line break: at the end.)
            line += lines - usize::from(!p.ends_with(b"\n"));
            total.absorb(c)?;
        }
        progress(ReadProgress {
            bytes: read,
            steps: total.steps(),
        });
        if eof {
            break;
        }
        eof = match more {
            Ok(eof) => eof,
            Err(e) => return Err(read_error(e, line, &next[..next_filled])),
        };
        read += (next_filled - carry) as u64;
        std::mem::swap(&mut cur, &mut next);
        filled = next_filled;
    }
    total.finish(file)
}

/// Reads from `input` into `buf[*filled..]` until the buffer is full or the input ends
/// (`true`), retrying interrupted reads.
fn fill(input: &mut dyn Read, buf: &mut [u8], filled: &mut usize) -> std::io::Result<bool> {
    while *filled < buf.len() {
        match input.read(&mut buf[*filled..]) {
            Ok(0) => return Ok(true),
            Ok(n) => *filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// `text` (whole lines) cut into at most `n` parts of about equal size, at line breaks.
fn split_lines(text: &[u8], n: usize) -> Vec<&[u8]> {
    let mut parts = Vec::with_capacity(n);
    let mut rest = text;
    for i in (1..=n).rev() {
        if rest.is_empty() {
            break;
        }
        if i == 1 {
            parts.push(rest);
            break;
        }
        let target = rest.len() / i;
        let cut = match memchr::memchr(b'\n', &rest[target..]) {
            Some(j) => target + j + 1,
            None => rest.len(),
        };
        let (part, tail) = rest.split_at(cut);
        parts.push(part);
        rest = tail;
    }
    parts
}

/// The first line a part is counted from while its real first line is unknown: far from line
/// 1 (whose byte-order mark is skipped), so that only the numbers of its error and skipped
/// lines are wrong, and those are counted again.
const UNKNOWN_LINE: usize = usize::MAX / 4;

/// The most distinct step texts a part remembers the state of (with a spec); past it, new
/// ones are mapped each time they are met.
const MAX_KNOWN_STEPS: usize = 1 << 16;

/// Counts the lines of `part` (whole lines, the first being line `line` of `file`); also gives
/// the number of lines.
fn count_part<'s>(
    part: &[u8],
    mut line: usize,
    file: &str,
    spec: Option<&'s Abstraction>,
    opts: &'s LearnOptions,
) -> Result<(Counter<'s>, usize)> {
    let first = line;
    let mut counter = Counter::new(spec, opts);
    // Reused from line to line: the steps' names (without a spec), or their texts and
    // states (with one), and the state of each step text met (with one).
    let mut names: Vec<Cow<'_, str>> = Vec::new();
    let mut raws: Vec<&str> = Vec::new();
    let mut states: Vec<u32> = Vec::new();
    let mut known: FxHashMap<&str, u32> = FxHashMap::default();
    let (mut fast_names, mut fast_texts): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let mut rest = part;
    while !rest.is_empty() {
        let (bytes, tail) = match memchr::memchr(b'\n', rest) {
            Some(i) => rest.split_at(i + 1),
            None => (rest, &rest[rest.len()..]),
        };
        rest = tail;
        let this = line;
        line += 1;
        if let Ok(text) = std::str::from_utf8(bytes) {
            let Some(content) = jsonl_content(text, this) else {
                continue;
            };
            // The common shape first, without a JSON parser.
            fast_names.clear();
            fast_texts.clear();
            let scanned = scan_trace(content, &mut fast_names, &mut fast_texts);
            if let (Some(category), None) = (scanned, spec) {
                counter.add_named(category, &fast_names)?;
                continue;
            }
            match spec {
                None => {
                    names.clear();
                    if let Some(category) = read_trace(content, Sink::Names(&mut names)) {
                        counter.add_named(category.as_deref(), &names)?;
                        continue;
                    }
                }
                Some(a) => {
                    raws.clear();
                    let category = match scanned {
                        Some(c) => {
                            raws.append(&mut fast_texts);
                            Some(c.map(Cow::Borrowed))
                        }
                        None => read_trace(content, Sink::Texts(&mut raws)),
                    };
                    if let Some(category) = category {
                        states.clear();
                        for &raw in &raws {
                            let s = match known.get(raw) {
                                Some(&s) => s,
                                None => {
                                    let Some(s) = step_state(a, raw) else { break };
                                    if known.len() < MAX_KNOWN_STEPS {
                                        known.insert(raw, s);
                                    }
                                    s
                                }
                            };
                            states.push(s);
                        }
                        if states.len() == raws.len() {
                            counter.add_mapped(category.as_deref(), &states)?;
                            continue;
                        }
                    }
                }
            }
        }
        // Anything else: the sequential reader's way, errors and all.
        if let Some(item) = parse_jsonl_line(bytes, this, file) {
            counter.add(item, file)?;
        }
    }
    Ok((counter, line - first))
}

/// Reads a trace line of the common shape without a JSON parser: an object whose keys are
/// `"id"` (a string, null or a short integer), `"category"` (a string or null) and
/// `"steps"` (an array of `{"state": NAME}` objects), each at most once, strings without
/// escapes or control characters, separated by JSON whitespace. Gives the category
/// (`Some(None)` when it has none) and pushes each step's name onto `names` and its text onto
/// `texts`; `None` (with `names` and `texts` in any state) for every other line, which then goes a slower way. Accepts
/// only lines that [`parse_jsonl_line`] reads as the same trace: anything it is not sure of
/// (an escape, another key, a repeated key, a long number, ...) is declined, not guessed.
fn scan_trace<'a>(
    line: &'a str,
    names: &mut Vec<&'a str>,
    texts: &mut Vec<&'a str>,
) -> Option<Option<&'a str>> {
    let mut s = Scanner {
        b: line.as_bytes(),
        i: 0,
    };
    let (mut id, mut category, mut seen_steps) = (false, None, false);
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if !s.peek_is(b'}') {
        loop {
            let key = s.string()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            match key {
                b"steps" => {
                    if std::mem::replace(&mut seen_steps, true) {
                        return None;
                    }
                    s.steps(line, names, texts)?;
                }
                b"id" => {
                    if std::mem::replace(&mut id, true) {
                        return None;
                    }
                    s.id()?;
                }
                b"category" => {
                    if category.is_some() {
                        return None;
                    }
                    category = Some(s.opt_string(line)?);
                }
                _ => return None,
            }
            s.ws();
            if s.eat(b',').is_none() {
                break;
            }
            s.ws();
        }
    }
    s.eat(b'}')?;
    s.ws();
    (seen_steps && s.i == s.b.len()).then_some(category.flatten())
}

/// A cursor over a line, for [`scan_trace`].
struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    /// Skips JSON whitespace.
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek_is(&self, c: u8) -> bool {
        self.b.get(self.i) == Some(&c)
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek_is(c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// A string without escapes or control characters: its bytes, without the quotes.
    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        // (Names and keys are short: a plain loop beats a vectorised search.)
        let mut end = start;
        loop {
            match *self.b.get(end)? {
                b'"' => break,
                b'\\' => return None,
                c if c < 0x20 => return None,
                _ => end += 1,
            }
        }
        self.i = end + 1;
        Some(&self.b[start..end])
    }

    /// [`Self::string`] as text (the line is UTF-8, and a string ends at an ASCII quote).
    #[inline]
    fn str(&mut self, line: &'a str) -> Option<&'a str> {
        let end = self.i;
        let text = self.string()?;
        let start = end + 1;
        line.get(start..start + text.len())
    }

    /// A string or null.
    fn opt_string(&mut self, line: &'a str) -> Option<Option<&'a str>> {
        if self.b[self.i..].starts_with(b"null") {
            self.i += 4;
            return Some(None);
        }
        self.str(line).map(Some)
    }

    /// An id: a string, null, or an integer of at most 18 digits (which every JSON reader
    /// reads exactly).
    fn id(&mut self) -> Option<()> {
        match self.b.get(self.i)? {
            b'"' => self.string().map(|_| ()),
            b'n' => {
                if !self.b[self.i..].starts_with(b"null") {
                    return None;
                }
                self.i += 4;
                Some(())
            }
            _ => {
                self.eat(b'-');
                let start = self.i;
                while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                let digits = &self.b[start..self.i];
                let ok = !digits.is_empty()
                    && digits.len() <= 18
                    && (digits[0] != b'0' || digits.len() == 1)
                    && !matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E'));
                ok.then_some(())
            }
        }
    }

    /// `[{"state": NAME}, ...]`: each step's text and name pushed onto `steps`.
    fn steps(
        &mut self,
        line: &'a str,
        names: &mut Vec<&'a str>,
        texts: &mut Vec<&'a str>,
    ) -> Option<()> {
        self.eat(b'[')?;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            let start = self.i;
            if self.b[start..].starts_with(b"{\"state\":\"") {
                // The usual spelling, without spaces: straight to the name.
                self.i += 9;
            } else {
                self.eat(b'{')?;
                self.ws();
                if self.string()? != b"state" {
                    return None;
                }
                self.ws();
                self.eat(b':')?;
                self.ws();
            }
            let name = self.str(line)?;
            self.ws();
            self.eat(b'}')?;
            names.push(name);
            texts.push(line.get(start..self.i)?);
            self.ws();
            if self.eat(b',').is_none() {
                break;
            }
            self.ws();
        }
        self.eat(b']')
    }
}

/// The state `spec` gives the step written `text` (a JSON object), as the sequential reader
/// maps it; `None` when it does not map (the line then goes the sequential reader's way, which
/// locates the error).
fn step_state(spec: &Abstraction, text: &str) -> Option<u32> {
    // Read alone, a step is two levels less deep than in its line: leave deeply nested ones
    // to the sequential reader, which applies serde_json's depth limit to the whole line.
    if text.bytes().filter(|&b| b == b'[' || b == b'{').count() > 64 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let step = v.as_object()?;
    let kind = match step.get("state") {
        Some(serde_json::Value::String(name)) => StepKind::Named(name.clone()),
        Some(_) => return None,
        None => StepKind::Values(
            step.iter()
                .map(|(k, v)| (k.clone(), RawValue::Json(v.clone())))
                .collect(),
        ),
    };
    let step = Step {
        line: 0,
        kind,
        source: None,
    };
    spec.step_state(&step, "").ok()
}

/// Reads a trace line into `sink`: its category (`Some(None)` when it has none), or `None`
/// when the line is anything else than a trace of named steps ([`Sink::Names`]) or of steps
/// that are objects ([`Sink::Texts`]), or has a key given twice (then read it the sequential
/// reader's way). Accepts only lines that [`parse_jsonl_line`] reads as a trace.
fn read_trace<'a>(content: &'a str, sink: Sink<'_, 'a>) -> Option<Option<Cow<'a, str>>> {
    let mut de = serde_json::Deserializer::from_str(content);
    let category = TraceSeed { sink }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(category)
}

/// Where the steps of a trace go.
enum Sink<'n, 'a> {
    /// The names of named steps, `{"state": NAME}` (other keys ignored).
    Names(&'n mut Vec<Cow<'a, str>>),
    /// The text of each step (an object).
    Texts(&'n mut Vec<&'a str>),
}

impl<'a> Sink<'_, 'a> {
    fn reborrow(&mut self) -> Sink<'_, 'a> {
        match self {
            Sink::Names(n) => Sink::Names(n),
            Sink::Texts(t) => Sink::Texts(t),
        }
    }
}

/// A key of a trace or of a step.
enum Key {
    Id,
    Category,
    Steps,
    State,
    Other,
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Key, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Key, E> {
        Ok(match v {
            "id" => Key::Id,
            "category" => Key::Category,
            "steps" => Key::Steps,
            "state" => Key::State,
            _ => Key::Other,
        })
    }
}

/// A whole trace: its steps into `sink`, its category returned.
struct TraceSeed<'n, 'a> {
    sink: Sink<'n, 'a>,
}

impl<'a> DeserializeSeed<'a> for TraceSeed<'_, 'a> {
    type Value = Option<Cow<'a, str>>;
    fn deserialize<D: Deserializer<'a>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for TraceSeed<'_, 'a> {
    type Value = Option<Cow<'a, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace")
    }
    fn visit_map<M: MapAccess<'a>>(
        mut self,
        mut map: M,
    ) -> std::result::Result<Self::Value, M::Error> {
        let (mut id, mut category, mut steps) = (false, None, false);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::Id => {
                    if std::mem::replace(&mut id, true) {
                        return Err(M::Error::custom("repeated key"));
                    }
                    map.next_value_seed(IdSeed)?;
                }
                Key::Category => {
                    if category.is_some() {
                        return Err(M::Error::custom("repeated key"));
                    }
                    category = Some(map.next_value_seed(OptStrSeed)?);
                }
                Key::Steps => {
                    if std::mem::replace(&mut steps, true) {
                        return Err(M::Error::custom("repeated key"));
                    }
                    map.next_value_seed(StepsSeed {
                        sink: self.sink.reborrow(),
                    })?;
                }
                Key::State | Key::Other => map.next_value_seed(AnySeed)?,
            }
        }
        if !steps {
            return Err(M::Error::custom("missing steps"));
        }
        Ok(category.flatten())
    }
}

/// `"id"`: null, a string or a number.
struct IdSeed;

impl<'de> DeserializeSeed<'de> for IdSeed {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for IdSeed {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a number")
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
}

/// `"category"`: null or a string.
struct OptStrSeed;

impl<'a> DeserializeSeed<'a> for OptStrSeed {
    type Value = Option<Cow<'a, str>>;
    fn deserialize<D: Deserializer<'a>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'a> Visitor<'a> for OptStrSeed {
    type Value = Option<Cow<'a, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("null or a string")
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_borrowed_str<E>(self, v: &'a str) -> std::result::Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_string())))
    }
}

/// `"steps"`: an array of steps.
struct StepsSeed<'n, 'a> {
    sink: Sink<'n, 'a>,
}

impl<'a> DeserializeSeed<'a> for StepsSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'a>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'a> Visitor<'a> for StepsSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of steps")
    }
    fn visit_seq<S: SeqAccess<'a>>(self, mut seq: S) -> std::result::Result<(), S::Error> {
        match self.sink {
            Sink::Names(names) => {
                while seq
                    .next_element_seed(StepSeed { names: &mut *names })?
                    .is_some()
                {}
            }
            Sink::Texts(texts) => {
                while let Some(step) = seq.next_element::<&'a serde_json::value::RawValue>()? {
                    let text = step.get();
                    // A step is an object (anything else goes the sequential reader's way).
                    if !text.starts_with('{') {
                        return Err(S::Error::custom("a step must be an object"));
                    }
                    texts.push(text);
                }
            }
        }
        Ok(())
    }
}

/// One step, `{"state": NAME, ...}` (other keys ignored), its name pushed onto `names`.
struct StepSeed<'n, 'a> {
    names: &'n mut Vec<Cow<'a, str>>,
}

impl<'a> DeserializeSeed<'a> for StepSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'a>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for StepSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a step")
    }
    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> std::result::Result<(), M::Error> {
        let mut state = false;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::State => {
                    if std::mem::replace(&mut state, true) {
                        return Err(M::Error::custom("repeated key"));
                    }
                    let name = map.next_value_seed(StrSeed)?;
                    self.names.push(name);
                }
                _ => map.next_value_seed(AnySeed)?,
            }
        }
        if !state {
            return Err(M::Error::custom("a step of concrete values"));
        }
        Ok(())
    }
}

/// A string, borrowed from the line unless it has escapes.
struct StrSeed;

impl<'a> DeserializeSeed<'a> for StrSeed {
    type Value = Cow<'a, str>;
    fn deserialize<D: Deserializer<'a>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'a> Visitor<'a> for StrSeed {
    type Value = Cow<'a, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'a str) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

/// Any JSON value, read (and so checked) as [`serde_json::Value`] reads it, and dropped.
/// (Not [`serde::de::IgnoredAny`]: serde_json skips such a value without checking its
/// numbers, and would accept a line the sequential reader rejects.)
struct AnySeed;

impl<'de> DeserializeSeed<'de> for AnySeed {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnySeed {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> std::result::Result<(), S::Error> {
        while seq.next_element_seed(AnySeed)?.is_some() {}
        Ok(())
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> std::result::Result<(), M::Error> {
        while map.next_key_seed(AnySeed)?.is_some() {
            map.next_value_seed(AnySeed)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::Unobserved;
    use crate::pipeline::{keyed_outcome, learn_counted, learned_document, LearnOutcome};
    use crate::simulate::{state_names, Simulator};
    use augur_abstraction::{TraceFormat, TraceReader};
    use std::path::{Path, PathBuf};

    fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path)
    }

    /// Everything a learn gives, as text: each model's JSON document, the traces read, the
    /// skipped lines (line and message), or the error's rendering.
    fn learned_text(r: Result<LearnOutcome>) -> String {
        match r {
            Err(e) => format!("error: {}", e.diagnostic()),
            Ok(out) => {
                let mut s = format!("traces_read {}\n", out.traces_read);
                for k in &out.skipped {
                    s += &format!("skipped {}: {}\n", k.line, k.error.diagnostic());
                }
                for m in &out.models {
                    let doc = learned_document(m, serde_json::Value::Null);
                    let mut w = Vec::new();
                    augur_formats::json::write_json_document(&doc, &mut w).unwrap();
                    s += &String::from_utf8(w).unwrap();
                }
                s
            }
        }
    }

    fn sequential(text: &[u8], spec: Option<&Abstraction>, opts: &LearnOptions) -> String {
        let reader = TraceReader::new(text, TraceFormat::JsonLines, "t.jsonl");
        learned_text(crate::pipeline::learn_from_traces(
            reader, "t.jsonl", spec, opts,
        ))
    }

    fn parallel(
        text: &[u8],
        spec: Option<&Abstraction>,
        opts: &LearnOptions,
        threads: usize,
        block: usize,
    ) -> String {
        let counted = count_jsonl_in_blocks(
            &mut &text[..],
            "t.jsonl",
            spec,
            opts,
            threads,
            block,
            &mut |_| {},
        );
        learned_text(counted.and_then(|c| learn_counted(c, spec, opts)))
    }

    /// The option combinations that change how traces are read and counted.
    fn option_sets() -> Vec<LearnOptions> {
        let mut out = Vec::new();
        for order in [1, 2, 3] {
            for by_category in [false, true] {
                for end_state in [None, Some("END".to_string())] {
                    for skip_invalid in [false, true] {
                        out.push(LearnOptions {
                            alpha: if order == 2 { 0.5 } else { 0.0 },
                            by_category,
                            skip_invalid,
                            unobserved: if by_category {
                                Unobserved::Absorbing
                            } else {
                                Unobserved::Uniform
                            },
                            order,
                            end_state: end_state.clone(),
                        });
                    }
                }
            }
        }
        out
    }

    /// The parallel reader gives what the sequential one gives, on `threads` threads and
    /// blocks of various sizes (down to blocks shorter than a line).
    fn assert_same(text: &[u8], spec: Option<&Abstraction>, what: &str) {
        for opts in option_sets() {
            let want = sequential(text, spec, &opts);
            for (threads, block) in [(1, 1 << 20), (2, 1 << 20), (3, 4096), (2, 64), (5, 7)] {
                let got = parallel(text, spec, &opts, threads, block);
                assert!(
                    got == want,
                    "{what}, {opts:?}, {threads} threads, blocks of {block}:\n\
                     parallel:\n{}\nsequential:\n{}",
                    &got[..got.len().min(2000)],
                    &want[..want.len().min(2000)],
                );
            }
        }
    }

    #[test]
    fn the_example_traces_learn_the_same() {
        let spec = |p: &str| Abstraction::from_file(&repo(p)).unwrap();
        let cases: [(&str, Option<Abstraction>); 5] = [
            ("models/end-state/traces.jsonl", None),
            (
                "models/microwave/traces.jsonl",
                Some(spec("models/microwave/spec.toml")),
            ),
            (
                "models/safetydrift/traces.jsonl",
                Some(spec("models/safetydrift/spec.toml")),
            ),
            // Concrete values without a spec: an error (or every trace skipped).
            ("models/safetydrift/traces.jsonl", None),
            ("models/monitor/runs.jsonl", None),
        ];
        for (file, spec) in &cases {
            let text = std::fs::read(repo(file)).unwrap();
            assert_same(&text, spec.as_ref(), file);
        }
    }

    /// 5 000 simulated traces of SafetyDrift's chain, named states, with categories, a few
    /// bad lines and odd but valid ones among them.
    fn simulated(names: &dyn Fn(usize) -> String, bad: bool) -> Vec<u8> {
        let model = augur_formats::explicit::read_prism_explicit(
            &repo("models/safetydrift.tra"),
            &Default::default(),
        )
        .unwrap()
        .0;
        let sim = Simulator::new(&model, 7, 12).unwrap();
        let mut text = Vec::new();
        for (i, trace) in sim.take(5_000).enumerate() {
            let steps: Vec<_> = trace
                .iter()
                .map(|&s| serde_json::json!({"state": names(s as usize)}))
                .collect();
            let mut t = serde_json::json!({"id": format!("sim-{i}"), "steps": steps});
            if i % 3 > 0 {
                t["category"] = serde_json::json!(["a", "b"][i % 3 - 1]);
            }
            text.extend(serde_json::to_vec(&t).unwrap());
            text.push(b'\n');
            if bad && i % 1249 == 17 {
                text.extend(b"{\"steps\": [{\"state\": \"s0\"}, {\"x\": 1}]}\n");
                text.extend(b"{\"steps\": [{\"state\": 3}]}\n");
                text.extend(b"not json\n\n \t\n");
            }
        }
        text
    }

    #[test]
    fn simulated_traces_learn_the_same() {
        let model = augur_formats::explicit::read_prism_explicit(
            &repo("models/safetydrift.tra"),
            &Default::default(),
        )
        .unwrap()
        .0;
        let names = state_names(&model);
        let text = simulated(&|s| names[s].clone(), false);
        // Several blocks of a few parts each (a quarter of the text it once was, with blocks
        // a quarter of the size: as many blocks, a quarter of the time).
        assert!(text.len() > 4 << 18, "{} bytes", text.len());
        for opts in option_sets() {
            let want = sequential(&text, None, &opts);
            for (threads, block) in [(2, 1 << 18), (3, 75_000)] {
                assert_eq!(
                    parallel(&text, None, &opts, threads, block),
                    want,
                    "{opts:?}"
                );
            }
        }
        // With bad lines: skipped (in order) or the first one the error.
        let text = simulated(&|s| names[s].clone(), true);
        for opts in option_sets() {
            let want = sequential(&text, None, &opts);
            assert!(want.contains("skipped") || want.starts_with("error"));
            assert_eq!(parallel(&text, None, &opts, 2, 75_000), want, "{opts:?}");
        }
    }

    /// Named states of a spec (`{a,b}`): parsed once, the same states; a name the spec
    /// rejects goes the sequential way (located error or skipped).
    #[test]
    fn spec_state_names_learn_the_same() {
        let spec = Abstraction::from_file(&repo("models/microwave/spec.toml")).unwrap();
        let valid: Vec<String> = spec
            .valid_states()
            .iter()
            .map(|&c| spec.state_name(c))
            .collect();
        let mut text = simulated(&|s| valid[(s * 7) % valid.len()].clone(), false);
        for opts in option_sets().into_iter().step_by(3) {
            let want = sequential(&text, Some(&spec), &opts);
            assert!(!want.starts_with("error"), "{want}");
            assert_eq!(parallel(&text, Some(&spec), &opts, 2, 1 << 16), want);
        }
        text.extend(b"{\"steps\": [{\"state\": \"{open,toggled}\"}]}\n");
        for opts in option_sets().into_iter().step_by(3) {
            let want = sequential(&text, Some(&spec), &opts);
            assert!(want.contains("not a valid abstract state"), "{want}");
            assert_eq!(parallel(&text, Some(&spec), &opts, 2, 1 << 16), want);
        }
    }

    /// Lines the fast path does not take, or takes with care: the same results as the
    /// sequential reader.
    #[test]
    fn unusual_lines_are_read_as_the_sequential_reader_reads_them() {
        let lines: &[&[u8]] = &[
            // A byte-order mark, CRLF, escapes, a repeated key (the last one counts), extra
            // keys, ids of every kind, blank lines (one of Unicode spaces).
            "\u{feff}{\"id\": 1, \"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}]}\r\n".as_bytes(),
            b"{\"id\": \"x\", \"steps\": [{\"state\": \"\\u0061\"}, {\"st\\u0061te\": \"c\"}]}\n",
            b"{\"steps\": [{\"state\": \"z\"}], \"steps\": [{\"state\": \"b\"}, {\"state\": \"a\"}]}\n",
            b"{\"steps\": [{\"state\": \"a\", \"state\": \"d\"}], \"extra\": {\"k\": [1, 2.5, null]}}\n",
            b"{\"id\": 1.5e3, \"category\": null, \"steps\": [{\"state\": \"b\", \"t\": -0}]}\n",
            "\u{a0}\u{2003}\n".as_bytes(),
            b"\n",
            b"{\"id\": null, \"category\": \"k\\n\", \"steps\": []}\n",
            // Bad: a number out of range in an ignored value, an id of the wrong type, a
            // BOM after line 1, invalid UTF-8, trailing text, a step of values, not an
            // object, an unterminated line.
            b"{\"steps\": [{\"state\": \"a\", \"x\": 1e400}]}\n",
            b"{\"id\": true, \"steps\": [{\"state\": \"a\"}]}\n",
            "\u{feff}{\"steps\": [{\"state\": \"a\"}]}\n".as_bytes(),
            b"{\"steps\": [{\"state\": \"\xff\"}]}\n",
            b"{\"id\": \"\xc3\", \"steps\": [{\"state\": \"a\"}]}\n",
            b"{\"category\": \"\xfe\", \"steps\": [{\"state\": \"a\"}]}\n",
            b"{\"st\xffps\": [{\"state\": \"a\"}]}\n",
            b"{\"steps\": [{\"state\": \"a\"}]} x\n",
            b"{\"steps\": [{\"v\": 1}]}\n",
            b"[1, 2]\n",
            b"{\"steps\": [{\"state\": \"b\"}, {\"state\": \"a\"}]",
        ];
        // Every prefix of the file, so that each bad line is once the first error.
        for n in 1..=lines.len() {
            let text: Vec<u8> = lines[..n].concat();
            assert_same(&text, None, &format!("{n} lines"));
        }
    }

    /// The same with a spec, on steps of concrete values.
    #[test]
    fn unusual_lines_with_a_spec_are_read_as_the_sequential_reader_reads_them() {
        let spec = Abstraction::from_file(&repo("models/safetydrift/spec.toml")).unwrap();
        let ok = r#"{"d": "NONE", "t": "READ_ONLY", "r": "FULLY_REVERSIBLE"}"#;
        let deep = format!("{}1{}", "[".repeat(126), "]".repeat(126));
        let lines: Vec<String> = vec![
            format!("{{\"id\": \"a\", \"steps\": [{ok}, {ok}]}}\n"),
            // The same step written otherwise, a repeated key (the last counts), extra keys.
            "{\"steps\": [{\"r\": \"PARTIALLY\", \"t\": \"NETWORK\", \"d\": \"PUBLIC\"},              {\"d\": \"NONE\", \"d\": \"PUBLIC\", \"t\": \"NETWORK\", \"r\": \"PARTIALLY\", \"x\": [1]}]}\n"
                .into(),
            "{\"steps\": [{\"state\": \"{d_public,t_file_write}\"}, {\"state\": \"{}\"}]}\n".into(),
            // Bad: a value out of range, a number out of range, an invalid abstract state, a
            // step nested too deep for serde_json, a step that is not an object, a
            // non-string state, a missing variable.
            "{\"steps\": [{\"d\": \"NONE\", \"t\": \"ROOT\", \"r\": \"PARTIALLY\"}]}\n".into(),
            format!("{{\"steps\": [{{\"d\": \"NONE\", \"t\": \"READ_ONLY\", \"r\": \"PARTIALLY\", \"n\": 1e999}}]}}\n"),
            "{\"steps\": [{\"state\": \"{d_internal}\"}]}\n".into(),
            format!("{{\"steps\": [{{\"d\": \"NONE\", \"t\": \"READ_ONLY\", \"r\": \"PARTIALLY\", \"n\": {deep}}}]}}\n"),
            format!("{{\"steps\": [{ok}, [1]]}}\n"),
            "{\"steps\": [{\"state\": 1}]}\n".into(),
            "{\"steps\": [{\"d\": \"NONE\", \"t\": \"READ_ONLY\"}]}\n".into(),
        ];
        for n in 1..=lines.len() {
            let text: Vec<u8> = lines[..n].concat().into_bytes();
            assert_same(&text, Some(&spec), &format!("{n} lines"));
        }
    }

    /// An error on the last line of a big file names that line (and its column).
    #[test]
    fn an_error_on_the_last_line_names_it() {
        let mut text = Vec::new();
        for i in 0..50_000 {
            text.extend(format!("{{\"steps\": [{{\"state\": \"s{}\"}}]}}\n", i % 5).bytes());
        }
        text.extend(b"{\"steps\": [{\"state\": \"s1\"} {\"state\": \"s2\"}]}\n");
        let opts = LearnOptions::default();
        let got = parallel(&text, None, &opts, 2, 1 << 16);
        assert!(got.contains(" --> t.jsonl:50001:28\n"), "{got}");
        assert_eq!(got, sequential(&text, None, &opts));
    }

    #[test]
    fn counts_are_the_same() {
        let text = std::fs::read(repo("models/end-state/traces.jsonl")).unwrap();
        let opts = LearnOptions {
            order: 2,
            ..LearnOptions::default()
        };
        let reader = TraceReader::new(&text[..], TraceFormat::JsonLines, "t.jsonl");
        let want = crate::pipeline::count_from_traces(reader, "t.jsonl", None, &opts).unwrap();
        let c = count_jsonl_in_blocks(&mut &text[..], "t.jsonl", None, &opts, 2, 40, &mut |_| {});
        let got = keyed_outcome(c.unwrap(), None, &opts);
        assert_eq!(
            serde_json::to_string(&got.counts).unwrap(),
            serde_json::to_string(&want.counts).unwrap()
        );
    }

    /// A reader that fails after `ok` bytes.
    struct Failing<'a> {
        text: &'a [u8],
        ok: usize,
    }

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.ok == 0 {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = buf.len().min(self.ok).min(self.text.len()).min(10);
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            self.ok -= n;
            Ok(n)
        }
    }

    /// A read error while the threads count the block before: their first error first, else
    /// the read error, on the line the sequential reader names.
    #[test]
    fn a_read_error_is_located_after_the_lines_read() {
        let good = b"{\"steps\": [{\"state\": \"a\"}]}\n".repeat(40);
        let mut bad = good.clone();
        bad.splice(200..200, b"x\n".iter().copied());
        for text in [&good, &bad] {
            for ok in [0, 95, 333, 700] {
                let opts = LearnOptions::default();
                let reader = TraceReader::new(
                    std::io::BufReader::with_capacity(16, Failing { text, ok }),
                    TraceFormat::JsonLines,
                    "t.jsonl",
                );
                let want = learned_text(crate::pipeline::learn_from_traces(
                    reader, "t.jsonl", None, &opts,
                ));
                assert!(want.starts_with("error"), "{want}");
                for (threads, block) in [(2, 64), (3, 100)] {
                    let c = count_jsonl_in_blocks(
                        &mut Failing { text, ok },
                        "t.jsonl",
                        None,
                        &opts,
                        threads,
                        block,
                        &mut |_| {},
                    );
                    let got = learned_text(c.and_then(|c| learn_counted(c, None, &opts)));
                    assert_eq!(
                        got, want,
                        "{ok} bytes, {threads} threads, blocks of {block}"
                    );
                }
            }
        }
    }

    #[test]
    fn progress_counts_bytes_and_steps() {
        let text = b"{\"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}]}\n".repeat(100);
        let mut seen = Vec::new();
        let opts = LearnOptions::default();
        count_jsonl_in_blocks(&mut &text[..], "t", None, &opts, 2, 1000, &mut |p| {
            seen.push(p)
        })
        .unwrap();
        assert!(seen.len() > 3);
        assert_eq!(
            seen.last().copied(),
            Some(ReadProgress {
                bytes: text.len() as u64,
                steps: 200
            })
        );
    }

    /// A JSON string spelling `s`: `"` and `\` escaped (and control characters, as `\n` or
    /// `\u00XX`), other characters escaped as `\uXXXX` where `escape(i)` says so.
    fn spell(s: &str, escape: &mut dyn FnMut() -> bool) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c if escape() => {
                    let mut buf = [0u16; 2];
                    for u in c.encode_utf16(&mut buf) {
                        out.push_str(&format!("\\u{u:04X}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// A JSON Lines file of random traces spelled in random ways: whitespace, key order,
    /// escapes (in names and keys), ids of every kind, categories, extra keys, blank lines,
    /// and (with `bad`) numbers as states and malformed lines.
    fn random_traces(seed: u64, traces: usize, bad: bool) -> Vec<u8> {
        let state = std::cell::Cell::new(seed | 1);
        let next = |n: u64| -> u64 {
            let mut x = state.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            state.set(x);
            x % n.max(1)
        };
        let names = [
            "a",
            "b",
            "s 1",
            "\u{fc}",
            "q\"x",
            "back\\slash",
            "t\tx",
            "{x}",
            "",
            "risk=4",
        ];
        let mut text = Vec::new();
        for t in 0..traces {
            let ws = || -> &'static str {
                [" ", "", "", "\t", "  ", "\r", "\n"][next(if bad { 7 } else { 5 }) as usize]
            };
            let mut members: Vec<String> = Vec::new();
            let mut steps = Vec::new();
            for _ in 0..next(7) {
                let mut esc = || next(6) == 0;
                let name = names[next(names.len() as u64) as usize];
                let key = if next(8) == 0 {
                    "\"st\\u0061te\"".to_string()
                } else {
                    "\"state\"".into()
                };
                let value = match next(if bad { 30 } else { 1 }) {
                    1 => "17".to_string(),
                    2 => "\"raw\u{1}control\"".to_string(),
                    _ => spell(name, &mut esc),
                };
                let (a, b, c) = (ws(), ws(), ws());
                let mut step = format!("{{{a}{key}{b}:{c}{value}");
                match next(12) {
                    0 => step += &format!(", \"t\": {}", next(1000)),
                    1 => step += ", \"state\": \"b\"",
                    _ => {}
                }
                step += "}";
                steps.push(step);
            }
            let sep = format!("{},{}", ws(), ws());
            members.push(format!("\"steps\":{}[{}]", ws(), steps.join(&sep)));
            match next(5) {
                0 => {}
                1 => members.push(format!("\"id\": \"t-{t}\"")),
                2 => members.push(format!("\"id\":{t}")),
                3 => members.push("\"id\": null".into()),
                _ => members.push(format!("\"id\": -{t}.5e1")),
            }
            match next(4) {
                0 => members.push("\"category\": \"c1\"".into()),
                1 => members.push("\"category\":null".into()),
                2 => members.push(format!("\"category\": {}", spell("c\u{e9}", &mut || true))),
                _ => {}
            }
            if next(8) == 0 {
                members.push("\"meta\": {\"k\": [1, 2.5, null, true]}".into());
            }
            // A key given twice (the last one counts).
            match next(12) {
                0 => members.push("\"steps\": [{\"state\": \"a\"}]".into()),
                1 => members.push("\"category\": \"c2\"".into()),
                2 => members.push("\"id\": 0".into()),
                _ => {}
            }
            // Key order.
            let r = next(members.len() as u64) as usize;
            members.rotate_left(r);
            let line = format!(
                "{}{{{}{}{}}}{}",
                ws(),
                ws(),
                members.join(&format!("{},{}", ws(), ws())),
                ws(),
                [" ", "", "", "\r"][next(4) as usize]
            );
            text.extend(line.replace('\n', " ").bytes());
            text.push(b'\n');
            if next(20) == 0 {
                text.extend(b" \t\n");
            }
            if bad && next(40) == 0 {
                text.extend(b"{\"steps\": [{\"state\": \"a\"} {\"state\": \"b\"}]}\n");
            }
        }
        text
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Random traces in random JSON spellings: the parallel reader (its scanner, its serde
        /// path and its fallback) learns what the sequential reader learns, or fails alike.
        #[test]
        fn random_spellings_learn_the_same(seed in proptest::prelude::any::<u64>(), n in 1usize..60, bad in proptest::prelude::any::<bool>()) {
            let text = random_traces(seed, n, bad);
            for opts in option_sets().into_iter().step_by(5) {
                let want = sequential(&text, None, &opts);
                for (threads, block) in [(2, 1 << 16), (3, 97)] {
                    let got = parallel(&text, None, &opts, threads, block);
                    proptest::prop_assert_eq!(&got, &want, "{:?}", opts);
                }
            }
        }
    }

    /// Valid trace lines the scanner declines (escapes, other keys, repeated keys, numbers it
    /// is not sure of, ...): each still learns what the sequential reader learns.
    #[test]
    fn lines_the_scanner_declines_still_parse() {
        let lines: &[&str] = &[
            r#"{"steps": [{"state": "a\"b"}]}"#,
            r#"{"steps": [{"st\u0061te": "a"}]}"#,
            r#"{"steps": [{"state": "a", "t": 1}]}"#,
            r#"{"steps": [{"t": 1, "state": "a"}]}"#,
            r#"{"steps": [{"state": "a"}], "steps": [{"state": "b"}]}"#,
            r#"{"id": 1, "id": 2, "steps": []}"#,
            r#"{"category": "x", "category": null, "steps": [{"state": "a"}]}"#,
            r#"{"id": 1.5, "steps": [{"state": "a"}]}"#,
            r#"{"id": 12345678901234567890, "steps": [{"state": "a"}]}"#,
            r#"{"id": 1e3, "steps": [{"state": "a"}]}"#,
            r#"{"id": -0, "steps": [{"state": "a"}]}"#,
            r#"{"extra": [1, {"x": null}], "steps": [{"state": "a"}]}"#,
            r#"{"steps": [{"state": "a", "state": "b"}]}"#,
            r#"{"category": "caf\u00e9", "steps": [{"state": "a"}]}"#,
            r#"{"steps": [{"state": "a\u0000"}]}"#,
        ];
        let mut text = String::new();
        for l in lines {
            let (mut names, mut texts) = (Vec::new(), Vec::new());
            // (`-0` is read by the scanner: an integer both ways.)
            if !l.contains("-0,") {
                assert_eq!(scan_trace(l, &mut names, &mut texts), None, "{l}");
            }
            text += l;
            text += "\n";
        }
        for opts in option_sets() {
            let want = sequential(text.as_bytes(), None, &opts);
            assert!(!want.starts_with("error"), "{want}");
            assert!(
                want.contains(&format!("traces_read {}", lines.len())),
                "{want}"
            );
            assert_eq!(parallel(text.as_bytes(), None, &opts, 2, 64), want);
        }
        // And the lines it reads: as the sequential reader reads them.
        let read: &[&str] = &[
            r#"{"id":"x","steps":[{"state":"a"},{"state":"b"}]}"#,
            " { \"steps\" : [ { \"state\" : \"\u{fc}\" } ] , \"category\" : \"c\" , \"id\" : -12 } \r",
            r#"{"category":null,"id":null,"steps":[]}"#,
            "{\"steps\":\t[{\"state\":\"\"}]}",
        ];
        for l in read {
            let (mut names, mut texts) = (Vec::new(), Vec::new());
            assert!(scan_trace(l, &mut names, &mut texts).is_some(), "{l}");
            assert_eq!(names.len(), texts.len());
        }
    }
}
