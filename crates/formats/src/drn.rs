//! Storm's explicit DRN format, for DTMCs.
//!
//! ```text
//! // comment
//! @type: DTMC
//! @parameters
//!
//! @reward_models
//! steps
//! @nr_states
//! 2
//! @nr_choices
//! 2
//! @model
//! state 0 [1] init
//!     action 0 [0]
//!         0 : 0.5
//!         1 : 0.5
//! state 1 [0] done
//!     action 0 [0]
//!         1 : 1
//! ```
//!
//! (Storm indents `action` lines with one tab and transitions with two; any indentation is
//! accepted.) `state N [r1, r2] labels...` gives the state rewards (one per reward model) and labels;
//! `action A [r1, r2]` the action rewards (read as a transition reward on every successor, so
//! the expected one-step reward is the same); `dst : prob` the transitions. Initial states are
//! the states labelled `init`. Valuations are not part of DRN and are not written.
//!
//! The writer adds a comment `// @augur-labels: a b c` listing every label in order (Storm
//! ignores it) so that label order and empty labels survive a round trip.

use crate::error::{FormatError, Place, Result};
use crate::io::{check_declared_states, try_filled, ReadOptions};
use crate::text::{fmt_num, interval_bounds, parse_real, reread_location, Lines, Num};
use augur_dtmc::DtmcError;
use augur_dtmc::{BuildReport, DtmcBuilder};
use augur_dtmc::{Dtmc, RewardStructure};
use augur_source::Location;
use std::io::{BufRead, Write};
use std::path::Path;

const LABELS_COMMENT: &str = "// @augur-labels:";

fn strip_quotes(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(s)
}

/// The label names of a `state` line: blank-separated, a quoted one (`"a b"`) taken whole
/// without its quotes.
fn label_tokens(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        rest = rest.trim_start();
        if rest.is_empty() {
            return None;
        }
        if let Some(inner) = rest.strip_prefix('"') {
            if let Some(end) = inner.find('"') {
                let tok = &inner[..end];
                rest = &inner[end + 1..];
                return Some(tok);
            }
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..end];
        rest = &rest[end..];
        Some(tok)
    })
}

/// Parses `[1, 2.5]` into `out` (cleared first); `None` if malformed.
fn parse_bracket(s: &str, out: &mut Vec<f64>) -> Option<()> {
    out.clear();
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(());
    }
    for part in inner.split(',') {
        let v = parse_real(part.trim())?;
        if !v.is_finite() {
            return None;
        }
        out.push(v);
    }
    Some(())
}

/// Parses a `[r1, ...]` group of `nr` rewards (one per reward model) into `vals`; the error
/// message names `what` ("state rewards", "action rewards").
fn parse_rewards(br: &str, nr: usize, what: &str, vals: &mut Vec<f64>) -> Result<(), String> {
    parse_bracket(br, vals).ok_or_else(|| format!("expected {what} `[r1, ...]`, found `{br}`"))?;
    if vals.len() != nr {
        return Err(format!("{} {what} for {nr} reward models", vals.len()));
    }
    Ok(())
}

/// Splits off a leading `[...]` group from `rest` (after trimming), if any.
fn take_bracket(rest: &str) -> (Option<&str>, &str) {
    let rest = rest.trim_start();
    if rest.starts_with('[') {
        if let Some(end) = rest.find(']') {
            return (Some(&rest[..=end]), &rest[end + 1..]);
        }
        return (Some(rest), "");
    }
    (None, rest)
}

/// What the header (everything before `@model`) declares.
struct Header {
    /// Label order from the writer's `// @augur-labels:` comment (empty without one).
    label_order: Vec<String>,
    reward_names: Vec<String>,
    /// `@nr_states`, with the location of its value.
    n: usize,
    nr_states_location: Location,
    /// The location of the `@model` line.
    model_location: Location,
    /// `@value_type: double-interval` (Storm's interval DTMCs).
    interval: bool,
}

/// Reads the header up to and including `@model`.
fn read_header<R: BufRead>(lines: &mut Lines<'_, R>, opts: &ReadOptions) -> Result<Header> {
    let mut label_order: Vec<String> = Vec::new();
    let mut ty: Option<String> = None;
    let mut reward_names: Vec<String> = Vec::new();
    let mut nr_states: Option<(usize, Location)> = None;
    let mut interval = false;
    let model_location;
    let on_comment = |c: &str, order: &mut Vec<String>| {
        if let Some(rest) = c.strip_prefix(LABELS_COMMENT) {
            *order = label_tokens(rest).map(str::to_string).collect();
        }
    };
    loop {
        let mut order = std::mem::take(&mut label_order);
        let more = lines.advance_content("//", |c| on_comment(c, &mut order))?;
        label_order = order;
        if !more {
            return Err(FormatError::syntax(
                lines.end_location(lines.line + 1),
                "unexpected end of file: no `@model` section",
            ));
        }
        let t = lines.buf.trim().to_string();
        let (key, val) = match t.split_once(':') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (t.clone(), None),
        };
        match key.as_str() {
            "@type" => {
                let v = val.unwrap_or_default();
                if v != "DTMC" {
                    return Err(lines.err(
                        lines.buf.split_once(':').map(|(_, v)| v.trim()),
                        format!("model type `{v}`: Augur reads DTMCs only (`@type: DTMC`)"),
                    ));
                }
                ty = Some(v);
            }
            "@value_type" => {
                let v = val.unwrap_or_default();
                interval = v == "double-interval";
                if v != "double" && v != "rational" && !interval {
                    return Err(lines.err(
                        lines.buf.split_once(':').map(|(_, v)| v.trim()),
                        format!("value type `{v}` not supported"),
                    ));
                }
            }
            "@parameters" | "@reward_models" | "@nr_states" | "@nr_choices" => {
                // The value is on the next line (possibly empty).
                if !lines.advance()? {
                    return Err(FormatError::syntax(
                        lines.end_location(lines.line + 1),
                        format!("expected a line after `{key}`"),
                    ));
                }
                match key.as_str() {
                    "@parameters" => no_parameters(lines)?,
                    "@reward_models" => reward_names = read_reward_models(lines)?,
                    "@nr_states" => nr_states = Some(read_nr_states(lines, opts)?),
                    _ => {
                        let v = lines.buf.trim();
                        let _: usize = v.parse().map_err(|_| {
                            lines.err(Some(v), format!("expected the number of choices, found `{v}`"))
                        })?;
                    }
                }
            }
            "@model" => {
                model_location = lines.location(None);
                break;
            }
            _ => {
                return Err(lines.err(
                    Some(lines.buf.trim()),
                    format!("unknown header `{key}` (expected @type, @parameters, @reward_models, @nr_states, @nr_choices or @model)"),
                ))
            }
        }
    }
    if ty.is_none() {
        return Err(lines.err(None, "missing `@type: DTMC` before `@model`"));
    }
    let (n, nr_states_location) =
        nr_states.ok_or_else(|| lines.err(None, "missing `@nr_states` before `@model`"))?;
    Ok(Header {
        label_order,
        reward_names,
        n,
        nr_states_location,
        model_location,
        interval,
    })
}

/// The line after `@parameters`: must be empty (no parametric models).
fn no_parameters<R: BufRead>(lines: &Lines<'_, R>) -> Result<()> {
    let v = lines.buf.trim();
    if !v.is_empty() {
        return Err(lines.err(
            Some(v),
            "parametric models are not supported (non-empty @parameters)",
        ));
    }
    Ok(())
}

/// The line after `@reward_models`: blank-separated names, each at most once.
fn read_reward_models<R: BufRead>(lines: &Lines<'_, R>) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tok in lines.buf.split_whitespace() {
        let name = strip_quotes(tok).to_string();
        if !seen.insert(name.clone()) {
            return Err(lines.err(Some(tok), format!("reward model `{name}` declared twice")));
        }
        names.push(name);
    }
    Ok(names)
}

/// The line after `@nr_states`: the number of states, checked against the limits before
/// anything is allocated for them.
fn read_nr_states<R: BufRead>(
    lines: &Lines<'_, R>,
    opts: &ReadOptions,
) -> Result<(usize, Location)> {
    let v = lines.buf.trim();
    let n: usize = v.parse().map_err(|_| {
        lines.err(
            Some(v),
            format!("expected the number of states, found `{v}`"),
        )
    })?;
    if n == 0 || n > u32::MAX as usize {
        return Err(lines.err(Some(v), format!("{n} states: need 1 to 2^32-1")));
    }
    check_declared_states(n, opts, || lines.location(Some(v)))?;
    Ok((n, lines.location(Some(v))))
}

/// The `@model` section as read so far.
struct Body<'p> {
    path: &'p Path,
    n: usize,
    /// Reward models.
    nr: usize,
    /// `n * nr`, checked against [`MAX_REWARD_VALUES`].
    reward_values: usize,
    b: DtmcBuilder,
    state_rewards: Option<Vec<f64>>, // n * nr, row-major by state
    action_rewards: Option<Vec<f64>>,
    /// The line of each state's `state` line, growing with the states read (in order).
    row_lines: Vec<usize>,
    current: Option<u32>,
    has_action: bool,
    next_state: usize,
    vals: Vec<f64>,
    has_init: bool,
    /// Whether the transitions are intervals (`None` until the header or the first transition
    /// says).
    interval: Option<bool>,
    /// An interval model's transitions `(src, dst, lo, hi)` (a plain `p` is `[p, p]`).
    ivals: Vec<(u32, u32, f64, f64)>,
}

impl<'p> Body<'p> {
    /// The error of a state left without an `action` line, at its `state` line.
    fn check_has_action(&self) -> Result<()> {
        if let Some(prev) = self.current {
            if !self.has_action {
                return Err(FormatError::syntax(
                    reread_location(self.path, self.row_lines[prev as usize], 1),
                    format!("state {prev} has no `action` line"),
                ));
            }
        }
        Ok(())
    }

    /// `state N [rewards] labels...` (`rest` follows `state`).
    fn state_line<R: BufRead>(&mut self, lines: &Lines<'_, R>, rest: &str) -> Result<()> {
        let n = self.n;
        let mut parts = rest.trim_start().splitn(2, char::is_whitespace);
        let tok = parts.next().unwrap_or("");
        let rest = parts.next().unwrap_or("");
        let s: usize = tok
            .parse()
            .map_err(|_| lines.err(Some(tok), format!("expected a state index, found `{tok}`")))?;
        if s >= n {
            return Err(lines.err(Some(tok), format!("state {s} out of range ({n} states)")));
        }
        if s != self.next_state {
            return Err(lines.err(
                Some(tok),
                format!("expected state {}, found state {s}", self.next_state),
            ));
        }
        self.check_has_action()?;
        self.next_state += 1;
        self.current = Some(s as u32);
        self.has_action = false;
        self.row_lines.push(lines.line);
        // Optional valuation `{...}` (skipped), rewards `[...]`, then labels.
        let mut rest = rest.trim_start();
        if rest.starts_with('{') {
            rest = rest.find('}').map(|i| &rest[i + 1..]).unwrap_or("");
        }
        let (br, labels) = take_bracket(rest);
        if let Some(br) = br {
            let nr = self.nr;
            parse_rewards(br, nr, "state rewards", &mut self.vals)
                .map_err(|m| lines.err(Some(br), m))?;
            if self.state_rewards.is_none() {
                self.state_rewards = Some(try_filled(
                    self.reward_values,
                    0.0,
                    "reward values",
                    || lines.location(Some(br)),
                )?);
            }
            let v = self.state_rewards.as_mut().expect("just set");
            v[s * nr..(s + 1) * nr].copy_from_slice(&self.vals);
        }
        // A `//` starts a comment (Storm may append e.g. a valuation there).
        let labels = labels.split("//").next().unwrap_or("");
        for l in label_tokens(labels) {
            if l == "init" {
                self.has_init = true;
                self.b.add_initial(s as u32)?;
            }
            self.b.add_label_state(l, s as u32)?;
        }
        Ok(())
    }

    /// `action A [rewards]` (`rest` follows `action`).
    fn action_line<R: BufRead>(&mut self, lines: &Lines<'_, R>, rest: &str) -> Result<()> {
        let Some(s) = self.current else {
            return Err(lines.err(None, "`action` before any `state`"));
        };
        if self.has_action {
            return Err(lines.err(
                None,
                format!("state {s} has a second action: a DTMC has one action per state"),
            ));
        }
        self.has_action = true;
        let mut parts = rest.trim_start().splitn(2, char::is_whitespace);
        let _name = parts.next().unwrap_or("");
        let (br, tail) = take_bracket(parts.next().unwrap_or(""));
        if let Some(br) = br {
            let nr = self.nr;
            parse_rewards(br, nr, "action rewards", &mut self.vals)
                .map_err(|m| lines.err(Some(br), m))?;
            if self.action_rewards.is_none() {
                self.action_rewards = Some(try_filled(
                    self.reward_values,
                    0.0,
                    "reward values",
                    || lines.location(Some(br)),
                )?);
            }
            let v = self.action_rewards.as_mut().expect("just set");
            v[s as usize * nr..(s as usize + 1) * nr].copy_from_slice(&self.vals);
        }
        if let Some(x) = tail.split_whitespace().next() {
            return Err(lines.err(Some(x), format!("unexpected `{x}` after the action")));
        }
        Ok(())
    }

    /// `dst : prob` (the trimmed line `t`).
    fn transition_line<R: BufRead>(&mut self, lines: &Lines<'_, R>, t: &str) -> Result<()> {
        let n = self.n;
        let Some(s) = self.current else {
            return Err(lines.err(None, "expected `state N`"));
        };
        if !self.has_action {
            return Err(lines.err(None, "expected `action` before the transitions"));
        }
        let (a, c) = t
            .split_once(':')
            .ok_or_else(|| lines.err(None, "expected `dst : prob`"))?;
        let a = a.trim();
        let c = c.trim();
        let dst: usize = a
            .parse()
            .map_err(|_| lines.err(Some(a), format!("expected a target state, found `{a}`")))?;
        if dst >= n {
            return Err(lines.err(Some(a), format!("state {dst} out of range ({n} states)")));
        }
        if let Some(inner) = c.strip_prefix('[') {
            if self.interval == Some(false) {
                return Err(lines.err(
                    Some(c),
                    "an interval in a model with point probabilities (an interval DTMC has \
                     `@value_type: double-interval` and intervals throughout)",
                ));
            }
            let bad = || {
                lines.err(
                    Some(c),
                    format!("expected an interval `[lo, hi]`, found `{c}`"),
                )
            };
            let inner = inner.strip_suffix(']').ok_or_else(bad)?;
            let (lo, hi) = interval_bounds(lines, c, inner, c, bad)?;
            self.interval = Some(true);
            self.ivals.push((s, dst as u32, lo, hi));
            return Ok(());
        }
        let p = parse_real(c)
            .ok_or_else(|| lines.err(Some(c), format!("expected a probability, found `{c}`")))?;
        if self.interval == Some(true) && (0.0..=1.0).contains(&p) {
            self.ivals.push((s, dst as u32, p, p));
            return Ok(());
        }
        self.interval = Some(false);
        if !(0.0..=1.0).contains(&p) {
            return Err(lines.err(Some(c), format!("probability {c} not in [0,1]")));
        }
        self.b
            .add_transition(s, dst as u32, p)
            .map_err(|e| lines.err(Some(a), e.to_string()))?;
        Ok(())
    }

    /// Builds the chain (a row error located at its `state` line) and attaches the rewards.
    fn finish(self, header: Header, opts: &ReadOptions) -> Result<(Dtmc, BuildReport)> {
        let Body {
            path,
            n,
            nr,
            mut b,
            state_rewards,
            action_rewards,
            row_lines,
            interval,
            ivals,
            ..
        } = self;
        b.fix_deadlocks(opts.fix_deadlocks);
        let interval = interval == Some(true);
        let row_error = |state: u32, message: String| {
            let location = match row_lines.get(state as usize).copied().filter(|&l| l > 0) {
                Some(l) => reread_location(path, l, 1),
                None => Location::file(path.display().to_string()),
            };
            FormatError::syntax(location, message)
        };
        if interval {
            // One resolution of each row (`lo + t·(hi − lo)`) as the chain's probabilities; the
            // bounds are attached below.
            let mut start = 0;
            while start < ivals.len() {
                let s = ivals[start].0;
                let end = start + ivals[start..].iter().take_while(|e| e.0 == s).count();
                let row = &ivals[start..end];
                let (sl, sh) = row.iter().fold((0.0, 0.0), |(a, b), e| (a + e.2, b + e.3));
                let t = augur_dtmc::interval::row_resolution(s, sl, sh)
                    .map_err(|p| row_error(s, p.message(&|x| x.to_string())))?;
                for &(_, d, l, h) in row {
                    let p = l + t * (h - l);
                    if p > 0.0 {
                        b.add_transition(s, d, p)
                            .map_err(|e| row_error(s, e.to_string()))?;
                    }
                }
                start = end;
            }
        }
        let (mut dtmc, report) = b.build().map_err(|e| {
            // A row error is located at the number of its `state` line, read again from the file.
            let line = match &e {
                DtmcError::RowSum { state, .. } => row_lines.get(*state as usize).copied(),
                DtmcError::BadProbability { src, .. } => row_lines.get(*src as usize).copied(),
                _ => None,
            };
            let location = match line.filter(|&l| l > 0) {
                Some(l) => reread_location(path, l, 1),
                None => Location::file(path.display().to_string()),
            };
            e.in_file(location)
        })?;
        for (i, name) in header.reward_names.into_iter().enumerate() {
            let state = state_rewards
                .as_ref()
                .map(|v| (0..n).map(|s| v[s * nr + i]).collect());
            let transition = action_rewards.as_ref().map(|v| {
                let mut t = vec![0.0; dtmc.num_transitions()];
                for s in 0..n {
                    for k in dtmc.row_range(s) {
                        t[k] = v[s * nr + i];
                    }
                }
                t
            });
            dtmc.rewards.push(RewardStructure {
                name: Some(name),
                state,
                transition,
                exact: None,
            });
        }
        if interval {
            dtmc = Dtmc::from_interval_entries(dtmc, ivals.iter().copied())
                .map_err(|p| row_error(p.state(), p.message(&|x| x.to_string())))?;
        }
        Ok((dtmc, report))
    }
}

/// Reads a DRN file describing a DTMC: the header, then the `@model` section line by line.
pub fn read_drn(
    reader: impl BufRead,
    path: &Path,
    opts: &ReadOptions,
) -> Result<(Dtmc, BuildReport)> {
    let mut lines = Lines::new(reader, path);
    let header = read_header(&mut lines, opts)?;
    let n = header.n;
    let nr = header.reward_names.len();
    // Reward values are held densely (one vector of `n` per reward model): refuse a header
    // whose product cannot be held before reading on.
    let reward_values = n.checked_mul(nr).filter(|&v| v <= MAX_REWARD_VALUES);
    let Some(reward_values) = reward_values else {
        return Err(FormatError::syntax(
            header.nr_states_location,
            format!("{n} states × {nr} reward models: more than {MAX_REWARD_VALUES} reward values"),
        ));
    };
    let mut b = DtmcBuilder::new(n);
    for l in &header.label_order {
        b.label_index(l);
    }
    let mut body = Body {
        path,
        n,
        nr,
        reward_values,
        b,
        state_rewards: None,
        action_rewards: None,
        row_lines: Vec::new(),
        current: None,
        has_action: false,
        next_state: 0,
        vals: Vec::new(),
        has_init: false,
        interval: header.interval.then_some(true),
        ivals: Vec::new(),
    };
    while lines.advance_content("//", |_| {})? {
        let t = lines.buf.trim_start();
        if let Some(rest) = t
            .strip_prefix("state ")
            .or_else(|| (t == "state").then_some(""))
        {
            body.state_line(&lines, rest)?;
        } else if let Some(rest) = t.strip_prefix("action") {
            body.action_line(&lines, rest)?;
        } else {
            body.transition_line(&lines, t)?;
        }
    }
    body.check_has_action()?;
    if body.next_state != n {
        return Err(FormatError::syntax(
            header.nr_states_location,
            format!(
                "@nr_states is {n} but the file describes {} states",
                body.next_state
            ),
        ));
    }
    if !body.has_init {
        return Err(FormatError::syntax(
            header.model_location,
            "no state is labelled `init`",
        ));
    }
    body.finish(header, opts)
}

/// The most reward values (states × reward models) a DRN file may declare: 2^28 (2 GiB of
/// `f64`), far above any benchmark model's and far below what would exhaust memory.
pub const MAX_REWARD_VALUES: usize = 1 << 28;

fn is_token(s: &str) -> bool {
    !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == '"' || c == '[' || c == ']')
}

/// Writes a DTMC in DRN. Unnamed reward structures are called `r1`, `r2`, … (by position);
/// transition rewards are written as action rewards `Σ_t P(s,t)·r(s,t)` (same expected
/// one-step reward, so the same value for every cumulative, reachability and long-run reward
/// property). Valuations are not written.
pub fn write_drn(dtmc: &Dtmc, w: &mut dyn Write) -> Result<()> {
    let unsupported = |m: String| FormatError::Unsupported {
        format: "drn".into(),
        message: m,
    };
    for (l, _) in &dtmc.labels {
        if !is_token(l) {
            return Err(unsupported(format!(
                "label name {l:?} contains whitespace, a quote or a bracket"
            )));
        }
    }
    let names: Vec<String> = dtmc
        .rewards
        .iter()
        .enumerate()
        .map(|(i, r)| r.name.clone().unwrap_or_else(|| format!("r{}", i + 1)))
        .collect();
    if let Some(bad) = names.iter().find(|s| !is_token(s)) {
        return Err(unsupported(format!(
            "reward structure name {bad:?} is not a single token"
        )));
    }
    let any_state = dtmc.rewards.iter().any(|r| r.state.is_some());
    let any_trans = dtmc.rewards.iter().any(|r| r.transition.is_some());
    let expected: Vec<Option<Vec<f64>>> = dtmc
        .rewards
        .iter()
        .map(|r| {
            r.transition.as_ref().map(|_| {
                let only = RewardStructure {
                    name: None,
                    state: None,
                    transition: r.transition.clone(),
                    exact: None,
                };
                dtmc.expected_one_step_rewards(&only)
            })
        })
        .collect();
    let n = dtmc.num_states();
    writeln!(w, "// Exported by augur")?;
    writeln!(
        w,
        "{LABELS_COMMENT} {}",
        dtmc.label_names().collect::<Vec<_>>().join(" ")
    )?;
    writeln!(w, "@type: DTMC")?;
    writeln!(w, "@parameters")?;
    writeln!(w)?;
    writeln!(w, "@reward_models")?;
    writeln!(w, "{}", names.join(" "))?;
    writeln!(w, "@nr_states")?;
    writeln!(w, "{n}")?;
    writeln!(w, "@nr_choices")?;
    writeln!(w, "{n}")?;
    writeln!(w, "@model")?;
    let mut vals: Vec<String> = Vec::with_capacity(names.len());
    for s in 0..n {
        write!(w, "state {s}")?;
        if any_state {
            vals.clear();
            vals.extend(dtmc.rewards.iter().map(|r| {
                fmt_num(
                    r.state
                        .as_ref()
                        .and_then(|v| v.get(s))
                        .copied()
                        .unwrap_or(0.0),
                )
            }));
            write!(w, " [{}]", vals.join(", "))?;
        }
        for (l, set) in &dtmc.labels {
            if set.contains(s) {
                write!(w, " {l}")?;
            }
        }
        writeln!(w)?;
        write!(w, "\taction 0")?;
        if any_trans {
            vals.clear();
            vals.extend(
                expected
                    .iter()
                    .map(|e| fmt_num(e.as_ref().and_then(|v| v.get(s)).copied().unwrap_or(0.0))),
            );
            write!(w, " [{}]", vals.join(", "))?;
        }
        writeln!(w)?;
        for (t, p) in dtmc.successors(s) {
            writeln!(w, "\t\t{t} : {}", Num(p))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read(text: &str) -> Result<(Dtmc, BuildReport)> {
        read_drn(
            Cursor::new(text.as_bytes()),
            Path::new("m.drn"),
            &ReadOptions::default(),
        )
    }

    const STORM_STYLE: &str = "// Exported by storm\n// Original model type: DTMC\n@type: DTMC\n@parameters\n\n@reward_models\ncoins steps \n@nr_states\n3\n@nr_choices\n3\n@model\nstate 0 [0, 1] init\n\taction 0 [1, 0]\n\t\t1 : 0.5\n\t\t2 : 0.5\nstate 1 [0, 1] done\n\taction 0 [0, 0]\n\t\t1 : 1\nstate 2 [2.5, 1] done \"other\" // x=2\n\taction 0 [0, 0]\n\t\t2 : 1\n";

    #[test]
    fn reads_storm_style() {
        let (d, _) = read(STORM_STYLE).unwrap();
        assert_eq!(d.num_states(), 3);
        assert_eq!(d.initial, vec![0]);
        assert_eq!(
            d.label("done").unwrap().ones().collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert!(d.label("other").unwrap().contains(2));
        assert_eq!(d.rewards.len(), 2);
        assert_eq!(d.rewards[0].name.as_deref(), Some("coins"));
        assert_eq!(d.rewards[0].state, Some(vec![0.0, 0.0, 2.5]));
        // action reward 1 on state 0 -> transition rewards on both successors.
        assert_eq!(d.rewards[0].transition, Some(vec![1.0, 1.0, 0.0, 0.0]));
        assert_eq!(
            d.expected_one_step_rewards(&d.rewards[0]),
            vec![1.0, 0.0, 2.5]
        );
        assert_eq!(d.rewards[1].state, Some(vec![1.0, 1.0, 1.0]));
    }

    #[test]
    fn round_trip() {
        let d = crate::explicit::tests::sample();
        let mut out = Vec::new();
        write_drn(&d, &mut out).unwrap();
        let (back, _) = read(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(back.matrix, d.matrix);
        assert_eq!(back.initial, d.initial);
        assert_eq!(back.labels, d.labels);
        assert_eq!(back.rewards.len(), 1);
        assert_eq!(back.rewards[0].state, d.rewards[0].state);
        assert_eq!(
            back.expected_one_step_rewards(&back.rewards[0]),
            d.expected_one_step_rewards(&d.rewards[0])
        );
    }

    #[test]
    fn malformed() {
        let base =
            "@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n2\n@nr_choices\n2\n@model\n";
        let ok_tail = "state 0 init\n\taction 0\n\t\t1 : 1\nstate 1\n\taction 0\n\t\t1 : 1\n";
        assert!(read(&format!("{base}{ok_tail}")).is_ok());
        let cases: Vec<(String, usize, &str)> = vec![
            ("@type: MDP\n".into(), 1, "DTMCs only"),
            ("@type: DTMC\n@foo\n".into(), 2, "unknown header `@foo`"),
            (
                "@type: DTMC\n@nr_states\nx\n".into(),
                3,
                "expected the number of states",
            ),
            ("@type: DTMC\n@parameters\np q\n".into(), 3, "parametric"),
            (
                "@type: DTMC\n@reward_models\nr \"r\"\n".into(),
                3,
                "reward model `r` declared twice",
            ),
            (
                format!("{base}state 0 init\n\taction 0\n\t\t1 : 1.5\n"),
                13,
                "probability 1.5 not in [0,1]",
            ),
            (
                format!("{base}state 0 init\n\taction 0\n\t\t5 : 1\n"),
                13,
                "state 5 out of range (2 states)",
            ),
            (
                format!("{base}state 0 init\n\taction 0\n\t\t1 - 1\n"),
                13,
                "expected `dst : prob`",
            ),
            (
                format!("{base}state 1 init\n"),
                11,
                "expected state 0, found state 1",
            ),
            (
                format!("{base}state 0 init\n\taction 0\n\t\t1 : 1\n\taction 1\n"),
                14,
                "second action",
            ),
            (
                format!("{base}state 0 [1] init\n"),
                11,
                "1 state rewards for 0 reward models",
            ),
            (
                format!("{base}state 0 init\nstate 1\n"),
                11,
                "state 0 has no `action` line",
            ),
            (
                format!(
                    "{base}state 0 init\n\taction 0\n\t\t1 : 0.5\nstate 1\n\taction 0\n\t\t1 : 1\n"
                ),
                11,
                "row of state 0 sums to 0.5",
            ),
            (
                format!("{base}state 0\n\taction 0\n\t\t1 : 1\nstate 1\n\taction 0\n\t\t1 : 1\n"),
                10,
                "no state is labelled `init`",
            ),
            (
                format!("{base}state 0 init\n\taction 0\n\t\t1 : 1\n"),
                7, // the value of @nr_states
                "@nr_states is 2 but the file describes 1 states",
            ),
            ("@type: DTMC\n".into(), 2, "no `@model` section"), // the end of the file
        ];
        for (text, line, msg) in cases {
            let e = read(&text).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.line(), Some(line), "{text:?}: {m}");
            assert!(m.contains(msg), "{text:?}: {m}");
            assert!(m.starts_with("m.drn:"), "{m}");
        }
    }
}
