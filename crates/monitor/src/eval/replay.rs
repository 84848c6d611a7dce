//! Replaying runs through sessions: each run's probabilities, and its flags under a policy.

use super::*;

/// Per-step probabilities of a run under a monitor (and whether a step failed closed).
#[derive(Clone, Debug, PartialEq)]
pub struct RunProbabilities {
    /// The probability at each step (1 for a step that failed closed).
    pub probabilities: Vec<f64>,
}

/// The first step whose probability reaches `threshold`.
pub fn first_at(t: &RunProbabilities, threshold: f64) -> Option<usize> {
    t.probabilities.iter().position(|&p| p >= threshold)
}

/// Replay runs through a monitor, recording every action as executed; per run the
/// probability of every step. `horizon` uses the curve at that horizon.
pub fn replay_probabilities(
    monitor: &Arc<Monitor>,
    runs: &[&Run],
    horizon: Option<u32>,
) -> Result<Vec<RunProbabilities>> {
    replay_probabilities_with(
        monitor,
        runs,
        horizon,
        &augur_gate::policy::default_trusted_tools(),
    )
}

/// Feed a run's observations made before step `k` (from `*next` on) to a session.
pub fn observe_before(s: &mut Session, run: &Run, next: &mut usize, k: usize) {
    while let Some(o) = run.observations.get(*next).filter(|o| o.before_step <= k) {
        *next += 1;
        let step = o.step.unwrap_or(o.before_step.saturating_sub(1));
        // A tool's result vouches for nothing its own call carried (no laundering).
        match (o.source, o.tool.as_deref(), run.steps.get(step)) {
            (
                augur_gate::provenance::ObservationSource::Tool,
                Some(tool),
                Some(crate::runs::RunStep::Tool { args, .. }),
            ) => {
                s.observe_result(tool, Some(step as u32), args, o.text.as_bytes());
            }
            _ => {
                s.observe_at(
                    o.source,
                    o.tool.as_deref(),
                    Some(step as u32),
                    o.text.as_bytes(),
                );
            }
        }
    }
}

/// [`replay_probabilities`] with these trusted tools; each run's observations are fed to its
/// session before each call.
pub fn replay_probabilities_with(
    monitor: &Arc<Monitor>,
    runs: &[&Run],
    horizon: Option<u32>,
    trusted: &[NamePattern],
) -> Result<Vec<RunProbabilities>> {
    let policy = Arc::new(Policy {
        base: augur_gate::policy::Rules {
            thresholds: Vec::new(),
            horizon,
            trusted_tools: trusted.to_vec(),
            ..Default::default()
        },
        categories: Vec::new(),
    });
    let mut out = Vec::with_capacity(runs.len());
    for r in runs {
        let mut s = Session::new(monitor, &policy, r.category.as_deref())?;
        let mut ps = Vec::with_capacity(r.steps.len());
        let mut next = 0;
        for (k, step) in r.steps.iter().enumerate() {
            observe_before(&mut s, r, &mut next, k);
            let a = step.action();
            let d = s.gate(&a);
            ps.push(d.probability);
            if !d.advanced && !matches!(d.fired, Fired::FailClosed(_)) {
                s.record(&a, true);
            }
        }
        out.push(RunProbabilities { probabilities: ps });
    }
    Ok(out)
}

/// The verdict-based flag step of every run under a policy: its first call whose verdict is
/// at least `flag_at`.
pub fn replay_flags(
    monitor: &Arc<Monitor>,
    policy: &Arc<Policy>,
    runs: &[&Run],
    flag_at: Verdict,
) -> Result<Vec<Option<usize>>> {
    Ok(replay_verdicts(monitor, policy, runs)?
        .iter()
        .map(|v| first_at_least(v, flag_at))
        .collect())
}

/// The verdict of every call of every run under a policy. The replay goes on after a call
/// that was not allowed as if the person approved it (the call is recorded as executed), so
/// that every call has a verdict.
pub fn replay_verdicts(
    monitor: &Arc<Monitor>,
    policy: &Arc<Policy>,
    runs: &[&Run],
) -> Result<Vec<RunVerdicts>> {
    replay_decisions(monitor, policy, runs, |d| d.verdict)
}

/// The verdicts of the rules alone, without the chain (issue 41, item 4's comparison): `block`
/// where the classifier's rules reach VIOLATED, `pause` where the rules' fallbacks pause (a
/// destination no text held after untrusted content, unread content), `allow` elsewhere,
/// whatever the chain's probability.
pub fn replay_rule_verdicts(
    monitor: &Arc<Monitor>,
    trusted: &[NamePattern],
    runs: &[&Run],
) -> Result<Vec<RunVerdicts>> {
    let policy = threshold_policy(f64::INFINITY, trusted);
    replay_decisions(monitor, &policy, runs, |d| {
        let violated = d
            .risk_after
            .is_some_and(|(level, _)| level == RiskLevel::Violated);
        if violated {
            Verdict::Block
        } else {
            d.verdict
        }
    })
}

/// Every run replayed through a session under `policy`, its observations fed before each
/// call, each call's decision mapped by `of`; a call not allowed is recorded as executed
/// (approved) and the replay goes on.
fn replay_decisions<T>(
    monitor: &Arc<Monitor>,
    policy: &Arc<Policy>,
    runs: &[&Run],
    of: impl Fn(&augur_gate::session::Decision) -> T,
) -> Result<Vec<Vec<T>>> {
    let mut out = Vec::with_capacity(runs.len());
    for r in runs {
        let mut s = Session::new(monitor, policy, r.category.as_deref())?;
        let mut per_call = Vec::with_capacity(r.steps.len());
        let mut next = 0;
        for (k, step) in r.steps.iter().enumerate() {
            observe_before(&mut s, r, &mut next, k);
            let a = step.action();
            let d = s.gate(&a);
            per_call.push(of(&d));
            if !d.advanced {
                s.record(&a, true);
            }
        }
        out.push(per_call);
    }
    Ok(out)
}

/// The share of benign (and of injected non-violating) training runs the pause tier may
/// pause (issue 41, item 4): the 10% less two points, because a held-out round's
/// share differs from its training share (at a 10% target the `--hold-out-model` rounds
/// paused 10.1% of the injected non-violating test runs; at 9%, 9.9%, and 10.01% once the
/// records of a sender the request names were delegated, 2026-11-30).
pub const ASK_SHARE: f64 = 0.08;

/// The policy's `ask_at` chosen on training runs (issue 41, item 4): the lowest chain
/// probability from which the pause tier's two rules (a value from delegated content, an
/// unrequested change after an injection) ask, such that at most `max_share` of the benign
/// runs (safe, not injected, no attempt) are paused, and at most `max_share` of the injected
/// runs with no attempted violation (the issue bounds both classes' pauses alike) — counting
/// the pauses that are always asked (the fail-closed fallbacks) and leaving out runs blocked
/// anyway. `None`: asking every
/// such call stays within the share (or there is none); `Some(1.0)`: no threshold below 1
/// does, so only a call whose probability is 1 would be asked. The runs are replayed once
/// under `policy` (its `ask_at` unset).
pub fn choose_ask_at(
    monitor: &Arc<Monitor>,
    policy: &Arc<Policy>,
    runs: &[&Run],
    max_share: f64,
) -> Result<Option<f64>> {
    let calls = replay_decisions(monitor, policy, runs, |d| {
        let asked = d.verdict == Verdict::Pause
            && matches!(d.fired, Fired::Delegated | Fired::AfterInjection);
        (d.verdict, asked.then(|| d.bound.unwrap_or(d.probability)))
    })?;
    // [benign, injected without an attempt]: (blocked, always paused, top asked value).
    let mut classes: [Vec<(bool, bool, Option<f64>)>; 2] = [Vec::new(), Vec::new()];
    let mut values = Vec::new();
    for (r, c) in runs.iter().zip(&calls) {
        values.extend(c.iter().filter_map(|x| x.1));
        if r.label != Label::Safe || r.attempt_step.is_some() {
            continue;
        }
        let blocked = c.iter().any(|x| x.0 == Verdict::Block);
        let always = c.iter().any(|x| x.0 == Verdict::Pause && x.1.is_none());
        let top = c.iter().filter_map(|x| x.1).reduce(f64::max);
        classes[usize::from(r.injected == Some(true))].push((blocked, always, top));
    }
    if classes[0].is_empty() || values.is_empty() {
        return Ok(None);
    }
    values.sort_by(f64::total_cmp);
    values.dedup();
    let share = |a: f64| {
        classes
            .iter()
            .filter(|runs| !runs.is_empty())
            .map(|runs| {
                let paused = runs
                    .iter()
                    .filter(|(b, always, top)| !b && (*always || top.is_some_and(|t| t >= a)))
                    .count();
                paused as f64 / runs.len() as f64
            })
            .fold(0.0, f64::max)
    };
    if share(values[0]) <= max_share {
        return Ok(None);
    }
    Ok(Some(
        values
            .iter()
            .copied()
            .find(|&a| share(a) <= max_share)
            .unwrap_or(1.0),
    ))
}

/// [`threshold_policy`] whose pause tier asks from `ask_at` on ([`choose_ask_at`]).
pub fn threshold_policy_asking(
    threshold: f64,
    ask_at: Option<f64>,
    trusted: &[NamePattern],
) -> Arc<Policy> {
    let mut p = (*threshold_policy(threshold, trusted)).clone();
    p.base.ask_at = ask_at;
    Arc::new(p)
}

/// The policy of a threshold chosen on training: `block` at `threshold` (no threshold when it
/// is not finite), with these trusted tools and the rules' fallbacks (a destination without
/// provenance, unread content: `pause`).
pub fn threshold_policy(threshold: f64, trusted: &[NamePattern]) -> Arc<Policy> {
    let thresholds = if threshold.is_finite() {
        vec![augur_gate::policy::PolicyThreshold {
            at: threshold.clamp(0.0, 1.0),
            verdict: Verdict::Block,
            message: None,
        }]
    } else {
        Vec::new()
    };
    Arc::new(Policy {
        base: augur_gate::policy::Rules {
            thresholds,
            trusted_tools: trusted.to_vec(),
            ..Default::default()
        },
        categories: Vec::new(),
    })
}
