//! Regions: a box of the parameter space decided for a property with a bound
//! (`P<=0.01 [ F "unsafe" ]`): *all satisfy*, *all violate* or *unknown*.
//!
//! A box is decided in two ways, both sound (a box is never reported all-satisfy when one of
//! its points violates):
//! - **monotonicity**: when the property's function is monotone in every parameter over the
//!   box (the sign of each partial derivative bounded soundly, [`crate::wellformed::bounds`]),
//!   its least and greatest values are at corners, evaluated exactly;
//! - **parameter lifting**: each transition function bounded separately over the box gives an
//!   interval DTMC containing every chain of the box; its Pmin/Pmax (the robust checker of
//!   `augur-check`, sound bounds) bound the property over the box.
//!
//! `--refine COVERAGE` splits undecided boxes (widest side first, largest box first) until
//! that share of the volume is decided.

use crate::check::ParamChecker;
use crate::error::{ParamError, Result};
use crate::model::ParametricModel;
use crate::space::Region;
use crate::wellformed::bounds;
use crate::PValue;
use augur_check::{CheckOptions, CheckSession, Model};
use augur_pctl::resolve::{ResolvedFormula, ResolvedPath, ResolvedRewardPath, Threshold};
use augur_pctl::{Comparison, ResolvedProperty};
use augur_ratfun::{rational_f64, rational_text, RatFunc};
use num_rational::BigRational;
use num_traits::ToPrimitive;
use serde_json::{json, Value as Json};

/// What is known of a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionVerdict {
    /// Every point satisfies the bound.
    Safe,
    /// Every point violates it.
    Unsafe,
    /// Neither could be shown.
    Unknown,
}

impl RegionVerdict {
    fn word(self) -> &'static str {
        match self {
            RegionVerdict::Safe => "all satisfy",
            RegionVerdict::Unsafe => "all violate",
            RegionVerdict::Unknown => "unknown",
        }
    }
}

/// The boxes of an analysis with their verdicts.
#[derive(Clone, Debug)]
pub struct RegionAnalysis {
    /// The boxes (they partition the region analysed).
    pub boxes: Vec<(Region, RegionVerdict, &'static str)>,
    /// The share of the volume decided.
    pub coverage: f64,
    /// Whether refinement was asked for.
    pub refined: bool,
    /// The boxes examined (decided or split).
    pub examined: usize,
    /// The property's value at the initial state, when it was known or needed (a region
    /// decided by parameter lifting alone does not compute it).
    pub function: Option<PValue>,
}

/// The most boxes a refinement examines.
const MAX_BOXES: usize = 20_000;

/// The function at the initial state, with its partial derivatives (`None` where it does not
/// read a parameter), for monotonicity.
struct Known {
    f: RatFunc,
    derivs: Vec<Option<RatFunc>>,
}

impl Known {
    fn new(f: RatFunc) -> Known {
        let derivs = (0..f.nvars())
            .map(|i| f.occurring()[i].then(|| f.derivative(i)))
            .collect();
        Known { f, derivs }
    }
}

/// The threshold of a property with a bound (`P<=0.01 [ ... ]`), `None` for `=?`.
pub fn threshold_of(p: &ResolvedProperty) -> Option<Threshold> {
    match &p.formula {
        ResolvedFormula::Prob { threshold, .. }
        | ResolvedFormula::Reward { threshold, .. }
        | ResolvedFormula::Steady { threshold, .. } => threshold.clone(),
        _ => None,
    }
}

/// Decides `region` (and, with `refine`, its parts) for `p`'s threshold. `known` is the
/// property's value at the initial state when the caller has it; otherwise it is computed
/// (state elimination) only when a box needs it: a box is tried by parameter lifting first
/// until one is left undecided, then by monotonicity first (so a region that parameter
/// lifting decides at once never pays for the function, as Storm's region checker does not).
/// [`RegionAnalysis::function`] is the value, when known.
pub fn analyse(
    m: &ParametricModel,
    checker: &mut ParamChecker<'_>,
    p: &ResolvedProperty,
    threshold: &Threshold,
    region: &Region,
    refine: Option<f64>,
    known: Option<PValue>,
) -> Result<RegionAnalysis> {
    if let Some(c) = refine {
        if !(c > 0.0 && c <= 1.0) {
            return Err(ParamError::input(format!(
                "--refine must be in (0, 1], got {c}"
            )));
        }
    }
    crate::wellformed::check_region(m, region)?;
    let init = m.model.dtmc().initial.first().copied().unwrap_or(0) as usize;
    // Refused only when a box needs it (monotonicity may decide every box by itself).
    let mut lifter = Some(Lifter::new(m, checker, p));
    let mut function = known;
    let infinite = |function: Option<PValue>| {
        // Infinite everywhere the graph is the model's: decided by the comparison.
        let v = compare(threshold.cmp, f64::INFINITY, threshold.value.value);
        let verdict = if v {
            RegionVerdict::Safe
        } else {
            RegionVerdict::Unsafe
        };
        RegionAnalysis {
            boxes: vec![(region.clone(), verdict, "infinite")],
            coverage: 1.0,
            refined: refine.is_some(),
            examined: 1,
            function,
        }
    };
    let mut f: Option<Known> = match &function {
        Some(PValue::Func(g)) => Some(Known::new(g.clone())),
        Some(PValue::Infinity) => return Ok(infinite(function)),
        None => None,
    };
    let total = rational_f64(&region.volume()).max(f64::MIN_POSITIVE);
    let target = refine.unwrap_or(0.0);
    let mut done: Vec<(Region, RegionVerdict, &'static str)> = Vec::new();
    let mut todo = vec![region.clone()];
    let mut decided = 0.0;
    let mut examined = 0;
    while let Some(b) = pick_largest(&mut todo) {
        examined += 1;
        let mut verdict = None;
        let mut tried = None;
        if f.is_none() {
            if let Some(Ok(l)) = &lifter {
                let v = lifted(None, &b, threshold, l)?;
                if v.0 != RegionVerdict::Unknown {
                    verdict = Some(v);
                } else {
                    tried = Some(v);
                }
            }
            if verdict.is_none() {
                // The function is needed from now on.
                let outcome = checker.check(p)?;
                function = outcome.values.get(init).cloned().flatten();
                match &function {
                    Some(PValue::Func(g)) => f = Some(Known::new(g.clone())),
                    Some(PValue::Infinity) => return Ok(infinite(function)),
                    None => {
                        return Err(ParamError::Unsupported(
                            "no value at the initial state".into(),
                        ))
                    }
                }
            }
        }
        let (v, how) = match (verdict, &f) {
            (Some(v), _) => v,
            (None, Some(k)) => match monotone(&k.f, &k.derivs, &b, threshold) {
                Some(v) => v,
                None => match (&lifter, tried) {
                    (Some(Ok(_)), Some(v)) => v,
                    (Some(Ok(l)), None) => lifted(Some(&k.f), &b, threshold, l)?,
                    _ => match lifter.take() {
                        Some(Err(e)) => return Err(e),
                        _ => (RegionVerdict::Unknown, "parameter lifting"),
                    },
                },
            },
            (None, None) => (RegionVerdict::Unknown, "parameter lifting"),
        };
        if v != RegionVerdict::Unknown {
            decided += rational_f64(&b.volume());
            done.push((b, v, how));
        } else if refine.is_some() && decided / total < target && examined < MAX_BOXES {
            let (a, c) = b.split();
            todo.push(a);
            todo.push(c);
        } else {
            done.push((b, v, how));
        }
        if refine.is_none() {
            break;
        }
        if decided / total >= target {
            for r in todo.drain(..) {
                done.push((r, RegionVerdict::Unknown, "not examined"));
            }
            break;
        }
    }
    for r in todo.drain(..) {
        done.push((r, RegionVerdict::Unknown, "not examined"));
    }
    Ok(RegionAnalysis {
        boxes: done,
        coverage: decided / total,
        refined: refine.is_some(),
        examined,
        function,
    })
}

/// Parameter lifting's bounds of `p`'s value over the box `b` (for tests: every point's value
/// lies in them), or its refusal located at the operator.
pub fn lifted_bounds(
    m: &ParametricModel,
    checker: &mut ParamChecker<'_>,
    p: &ResolvedProperty,
    b: &Region,
) -> Result<(f64, f64)> {
    Lifter::new(m, checker, p)?.bounds(b)
}

fn pick_largest(todo: &mut Vec<Region>) -> Option<Region> {
    if todo.is_empty() {
        return None;
    }
    let mut best = 0;
    for i in 1..todo.len() {
        if todo[i].volume() > todo[best].volume() {
            best = i;
        }
    }
    Some(todo.swap_remove(best))
}

fn compare(cmp: Comparison, x: f64, bound: f64) -> bool {
    match cmp {
        Comparison::Lt => x < bound,
        Comparison::Le => x <= bound,
        Comparison::Gt => x > bound,
        Comparison::Ge => x >= bound,
    }
}

/// Whether `x ⋈ bound`.
pub fn holds(cmp: Comparison, x: &BigRational, bound: &BigRational) -> bool {
    compare_q(cmp, x, bound)
}

fn compare_q(cmp: Comparison, x: &BigRational, bound: &BigRational) -> bool {
    match cmp {
        Comparison::Lt => x < bound,
        Comparison::Le => x <= bound,
        Comparison::Gt => x > bound,
        Comparison::Ge => x >= bound,
    }
}

/// The verdict for a range `[lo, hi]` known to contain every value over the box.
fn verdict_of(cmp: Comparison, lo: f64, hi: f64, bound: f64) -> RegionVerdict {
    let holds_all = match cmp {
        Comparison::Lt => hi < bound,
        Comparison::Le => hi <= bound,
        Comparison::Gt => lo > bound,
        Comparison::Ge => lo >= bound,
    };
    let fails_all = match cmp {
        Comparison::Lt => lo >= bound,
        Comparison::Le => lo > bound,
        Comparison::Gt => hi <= bound,
        Comparison::Ge => hi < bound,
    };
    if holds_all {
        RegionVerdict::Safe
    } else if fails_all {
        RegionVerdict::Unsafe
    } else {
        RegionVerdict::Unknown
    }
}

/// Decides one box by monotonicity, when the function is monotone in every parameter over it.
/// `derivs[i]` is the partial derivative in parameter `i` (`None` where `f` does not read it).
fn monotone(
    f: &RatFunc,
    derivs: &[Option<RatFunc>],
    b: &Region,
    th: &Threshold,
) -> Option<(RegionVerdict, &'static str)> {
    let bound = &th.value.exact;
    // Monotonicity: the sign of every partial derivative over the box.
    let n = f.nvars();
    let mut corner_lo = Vec::with_capacity(n);
    let mut corner_hi = Vec::with_capacity(n);
    let mut monotone = true;
    for ((l, h), d) in b.bounds.iter().zip(derivs) {
        let Some(d) = d else {
            corner_lo.push(l.clone());
            corner_hi.push(l.clone());
            continue;
        };
        let (dl, dh) = bounds(&d.compiled(), d, b);
        if dl >= 0.0 {
            corner_lo.push(l.clone());
            corner_hi.push(h.clone());
        } else if dh <= 0.0 {
            corner_lo.push(h.clone());
            corner_hi.push(l.clone());
        } else {
            monotone = false;
            break;
        }
    }
    if monotone {
        if let (Some(lo), Some(hi)) = (f.eval(&corner_lo), f.eval(&corner_hi)) {
            let all = compare_q(th.cmp, &lo, bound) && compare_q(th.cmp, &hi, bound);
            let none = !compare_q(th.cmp, &lo, bound) && !compare_q(th.cmp, &hi, bound);
            if all {
                return Some((RegionVerdict::Safe, "monotone"));
            }
            if none {
                return Some((RegionVerdict::Unsafe, "monotone"));
            }
            return Some((RegionVerdict::Unknown, "monotone"));
        }
    }
    None
}

/// Decides one box by parameter lifting (`f`, when known, checks the verdict at the centre).
fn lifted(
    f: Option<&RatFunc>,
    b: &Region,
    th: &Threshold,
    lifter: &Lifter<'_>,
) -> Result<(RegionVerdict, &'static str)> {
    let bound = &th.value.exact;
    let at_centre = f.and_then(|f| f.eval(&b.centre()));
    let (lo, hi) = lifter.bounds(b)?;
    let v = verdict_of(th.cmp, lo, hi, th.value.value);
    // The exact value at the centre refutes a verdict that it contradicts (never expected:
    // both are sound) and decides nothing by itself.
    if let Some(c) = at_centre {
        let ok = compare_q(th.cmp, &c, bound);
        if (v == RegionVerdict::Safe && !ok) || (v == RegionVerdict::Unsafe && ok) {
            return Err(ParamError::Unsupported(format!(
                "internal error: parameter lifting decided a box that its centre contradicts (value {})",
                rational_text(&c)
            )));
        }
    }
    Ok((v, "parameter lifting"))
}

/// Parameter lifting for one property: the interval chain of a box and its robust bounds.
///
/// Lifted: `P` with `X`, `U`, `F`, `G`, `W`, `R` (every step bound: `<=k`, `>=k`, `[a,b]`)
/// and `R` with `F φ`, `C<=k` and `I=k` (state and transition rewards that are functions are
/// bounded over the box too: the least rewards for `Rmin`, the greatest for `Rmax`, as an
/// expected reward grows with every reward). Refused, at the operator: `S`, `R [ S ]`, total
/// and discounted `C`, LTL paths (the robust checker has no sound bound for them yet).
struct Lifter<'m> {
    m: &'m ParametricModel,
    /// The queries of the lower and upper bound (`Pmin=? [ ... ]`, `Pmax=? [ ... ]`) over the
    /// labels `__a`, `__b` (the sets of the path's operands) and the reward structures
    /// `__rlo`, `__rhi`.
    queries: [String; 2],
    labels: Vec<(String, augur_dtmc::StateSet)>,
    /// The reward structure a reward property reads.
    reward: Option<usize>,
    /// Each non-constant transition's function, compiled once.
    compiled: Vec<Option<augur_ratfun::CompiledFunc>>,
}

/// `<=k`, `>=k`, `[a,b]` or nothing, for a path's step bound.
fn steps_text(s: &augur_pctl::resolve::Steps) -> String {
    match (s.lower, s.upper) {
        (0, None) => String::new(),
        (0, Some(k)) => format!("<={k}"),
        (a, None) => format!(">={a}"),
        (a, Some(b)) => format!("[{a},{b}]"),
    }
}

impl<'m> Lifter<'m> {
    fn new(
        m: &'m ParametricModel,
        checker: &mut ParamChecker<'_>,
        p: &ResolvedProperty,
    ) -> Result<Lifter<'m>> {
        let source = std::sync::Arc::clone(&p.source);
        let refuse = |span: augur_source::Span, what: &str| {
            ParamError::Input(Box::new(
                augur_source::Diagnostic::error(format!(
                    "--region: parameter lifting does not handle {what}; it handles P with X, U, F, G, W, R (step bounds too) and R with F, C<=k and I=k"
                ))
                .at(source.location(span)),
            ))
        };
        let mut labels = Vec::new();
        let mut set = |name: &str, f: &ResolvedFormula, labels: &mut Vec<_>| -> Result<String> {
            labels.push((name.to_string(), checker.state_set(f, &source)?));
            Ok(format!("\"{name}\""))
        };
        let (body, reward) = match &p.formula {
            ResolvedFormula::Prob { path, span, .. } => {
                let body = match &**path {
                    ResolvedPath::Next(a) => format!("X {}", set("__a", a, &mut labels)?),
                    ResolvedPath::Until(a, b, st) => format!(
                        "{} U{} {}",
                        set("__a", a, &mut labels)?,
                        steps_text(st),
                        set("__b", b, &mut labels)?
                    ),
                    ResolvedPath::WeakUntil(a, b, st) => format!(
                        "{} W{} {}",
                        set("__a", a, &mut labels)?,
                        steps_text(st),
                        set("__b", b, &mut labels)?
                    ),
                    ResolvedPath::Release(a, b, st) => format!(
                        "{} R{} {}",
                        set("__a", a, &mut labels)?,
                        steps_text(st),
                        set("__b", b, &mut labels)?
                    ),
                    ResolvedPath::Eventually(b, st) => {
                        format!("F{} {}", steps_text(st), set("__b", b, &mut labels)?)
                    }
                    ResolvedPath::Globally(a, st) => {
                        format!("G{} {}", steps_text(st), set("__a", a, &mut labels)?)
                    }
                    ResolvedPath::Ltl(_) => return Err(refuse(*span, "LTL path formulas")),
                };
                (body, None)
            }
            ResolvedFormula::Reward {
                structure,
                path,
                span,
                ..
            } => {
                let body = match &**path {
                    ResolvedRewardPath::Reachability(b) => {
                        format!("F {}", set("__b", b, &mut labels)?)
                    }
                    ResolvedRewardPath::Cumulative {
                        steps: Some(k),
                        discount: None,
                    } => format!("C<={k}"),
                    ResolvedRewardPath::Instantaneous(k) => format!("I={k}"),
                    ResolvedRewardPath::Cumulative { .. } => {
                        return Err(refuse(*span, "total or discounted cumulative rewards"))
                    }
                    ResolvedRewardPath::LongRun => {
                        return Err(refuse(*span, "long-run rewards (R [ S ])"))
                    }
                    ResolvedRewardPath::Ltl(_) => {
                        return Err(refuse(*span, "rewards of LTL formulas"))
                    }
                };
                (body, Some(*structure))
            }
            ResolvedFormula::Steady { span, .. } => {
                return Err(refuse(*span, "the long-run operator S"))
            }
            _ => return Err(refuse(p.span, "this operator")),
        };
        let queries = match reward {
            None => [format!("Pmin=? [ {body} ]"), format!("Pmax=? [ {body} ]")],
            Some(_) => [
                format!("R{{\"__rlo\"}}min=? [ {body} ]"),
                format!("R{{\"__rhi\"}}max=? [ {body} ]"),
            ],
        };
        let compiled = m
            .transitions
            .iter()
            .map(|f| f.as_constant().is_none().then(|| f.compiled()))
            .collect();
        Ok(Lifter {
            m,
            queries,
            labels,
            reward,
            compiled,
        })
    }

    /// The least and greatest values of reward functions over the box (`None` when one may be
    /// negative there: no sound lifted bound).
    fn reward_bounds(fs: &[RatFunc], b: &Region) -> Option<(Vec<f64>, Vec<f64>)> {
        let mut lo = Vec::with_capacity(fs.len());
        let mut hi = Vec::with_capacity(fs.len());
        for f in fs {
            let (l, h) = match f.as_constant() {
                Some(q) => {
                    let x = rational_f64(&q);
                    (x, x)
                }
                None => bounds(&f.compiled(), f, b),
            };
            if l < 0.0 || !h.is_finite() {
                return None;
            }
            lo.push(l);
            hi.push(h);
        }
        Some((lo, hi))
    }

    /// Sound bounds `[lo, hi]` of the property over the box: the robust minimum and maximum of
    /// the lifted interval chain.
    fn bounds(&self, b: &Region) -> Result<(f64, f64)> {
        let mut lo = Vec::with_capacity(self.m.transitions.len());
        let mut hi = Vec::with_capacity(self.m.transitions.len());
        for (f, c) in self.m.transitions.iter().zip(&self.compiled) {
            match c {
                None => {
                    let x = f.as_constant().map_or(0.0, |q| rational_f64(&q));
                    lo.push(x);
                    hi.push(x);
                }
                Some(c) => {
                    let (l, h) = bounds(c, f, b);
                    lo.push(l.clamp(0.0, 1.0));
                    hi.push(h.clamp(0.0, 1.0));
                }
            }
        }
        let mut skeleton = self.m.model.dtmc().clone();
        skeleton.exact = None;
        for (name, set) in &self.labels {
            skeleton.labels.push((name.clone(), set.clone()));
        }
        if let Some(k) = self.reward {
            let unbounded = (f64::NEG_INFINITY, f64::INFINITY);
            let mut low = augur_dtmc::RewardStructure {
                name: Some("__rlo".into()),
                state: None,
                transition: None,
                exact: None,
            };
            let mut high = augur_dtmc::RewardStructure {
                name: Some("__rhi".into()),
                ..low.clone()
            };
            if let Some(Some(sr)) = self.m.state_rewards.get(k) {
                let Some((l, h)) = Lifter::reward_bounds(sr, b) else {
                    return Ok(unbounded);
                };
                low.state = Some(l);
                high.state = Some(h);
            }
            if let Some(Some(tr)) = self.m.transition_rewards.get(k) {
                let Some((l, h)) = Lifter::reward_bounds(tr, b) else {
                    return Ok(unbounded);
                };
                low.transition = Some(l);
                high.transition = Some(h);
            }
            skeleton.rewards = vec![low, high];
        }
        let d = augur_dtmc::Dtmc::from_interval_bounds(skeleton, lo, hi).map_err(|e| {
            ParamError::Unsupported(format!(
                "parameter lifting: the interval chain of the box is not valid ({})",
                e.message(&|s| s.to_string())
            ))
        })?;
        let model = Model::from_dtmc(d);
        let mut session = CheckSession::new(&model, CheckOptions::default());
        let mut value = |q: &str| -> Result<(f64, f64)> {
            let r = session.check_str(q)?;
            let v = match r.value {
                augur_check::Scalar::Num(x) => x,
                _ => f64::NAN,
            };
            if v.is_nan() {
                return Ok((f64::NEG_INFINITY, f64::INFINITY));
            }
            Ok(match r.bounds {
                Some(bd) => (bd.lo, bd.hi),
                // A value without bounds (finite iteration): its rounding.
                None => {
                    let pad = v.abs() * 1e-9 + 1e-9;
                    (v - pad, v + pad)
                }
            })
        };
        let (min_lo, _) = value(&self.queries[0])?;
        let (_, max_hi) = value(&self.queries[1])?;
        Ok((min_lo, max_hi))
    }
}

impl RegionAnalysis {
    /// The analysis as text lines (each box with its verdict).
    pub fn text(&self, names: &[String]) -> String {
        let mut out = String::new();
        if !self.refined {
            if let Some((r, v, how)) = self.boxes.first() {
                out.push_str(&format!(
                    "\n  region {}: {} ({how})",
                    r.text(names),
                    v.word()
                ));
            }
            return out;
        }
        let vol = |v: RegionVerdict| -> f64 {
            self.boxes
                .iter()
                .filter(|b| b.1 == v)
                .map(|b| rational_f64(&b.0.volume()))
                .sum()
        };
        let total: f64 = self.boxes.iter().map(|b| rational_f64(&b.0.volume())).sum();
        out.push_str(&format!(
            "\n  refined into {} boxes, {:.1}% decided: {:.1}% all satisfy, {:.1}% all violate, {:.1}% unknown",
            self.boxes.len(),
            100.0 * self.coverage,
            100.0 * vol(RegionVerdict::Safe) / total,
            100.0 * vol(RegionVerdict::Unsafe) / total,
            100.0 * vol(RegionVerdict::Unknown) / total,
        ));
        for v in [
            RegionVerdict::Safe,
            RegionVerdict::Unsafe,
            RegionVerdict::Unknown,
        ] {
            for (r, w, how) in self.boxes.iter().filter(|b| b.1 == v) {
                out.push_str(&format!("\n  {}: {} ({how})", r.text(names), w.word()));
            }
        }
        out
    }

    /// The analysis as JSON.
    pub fn json(&self, names: &[String]) -> Json {
        json!({
            "coverage": self.coverage,
            "examined": self.examined,
            "boxes": self.boxes.iter().map(|(r, v, how)| json!({
                "box": r.bounds.iter().zip(names).map(|((lo, hi), n)| (n.clone(), json!([rational_text(lo), rational_text(hi)]))).collect::<serde_json::Map<_, _>>(),
                "verdict": match v { RegionVerdict::Safe => "safe", RegionVerdict::Unsafe => "unsafe", RegionVerdict::Unknown => "unknown" },
                "by": how,
            })).collect::<Vec<_>>(),
        })
    }

    /// An SVG of the plane of two parameters: safe boxes green, unsafe red, unknown grey.
    pub fn svg(&self, names: &[String], region: &Region) -> Result<String> {
        if names.len() != 2 {
            return Err(ParamError::input(format!(
                "--region-svg draws the plane of two parameters; the model has {}",
                names.len()
            )));
        }
        let (w, h, m) = (400.0, 400.0, 50.0);
        let f = |q: &BigRational| q.to_f64().unwrap_or(0.0);
        let (x0, x1) = (f(&region.bounds[0].0), f(&region.bounds[0].1));
        let (y0, y1) = (f(&region.bounds[1].0), f(&region.bounds[1].1));
        let sx = |x: f64| m + (x - x0) / (x1 - x0) * w;
        let sy = |y: f64| m + h - (y - y0) / (y1 - y0) * h;
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n",
            w + 2.0 * m,
            h + 2.0 * m
        );
        for (r, v, _) in &self.boxes {
            let color = match v {
                RegionVerdict::Safe => "#4caf50",
                RegionVerdict::Unsafe => "#e53935",
                RegionVerdict::Unknown => "#bdbdbd",
            };
            let (a, b) = (f(&r.bounds[0].0), f(&r.bounds[0].1));
            let (c, d) = (f(&r.bounds[1].0), f(&r.bounds[1].1));
            s.push_str(&format!(
                "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{color}\" stroke=\"white\" stroke-width=\"0.5\"/>\n",
                sx(a),
                sy(d),
                sx(b) - sx(a),
                sy(c) - sy(d)
            ));
        }
        s.push_str(&format!(
            "<rect x=\"{m}\" y=\"{m}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"black\"/>\n"
        ));
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            m + w / 2.0,
            m + h + 35.0,
            names[0]
        ));
        s.push_str(&format!(
            "<text x=\"15\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 15 {})\">{}</text>\n",
            m + h / 2.0,
            m + h / 2.0,
            names[1]
        ));
        for (x, anchor) in [(x0, "start"), (x1, "end")] {
            s.push_str(&format!(
                "<text x=\"{:.2}\" y=\"{}\" text-anchor=\"{anchor}\">{x}</text>\n",
                sx(x),
                m + h + 15.0
            ));
        }
        for y in [y0, y1] {
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{:.2}\" text-anchor=\"end\">{y}</text>\n",
                m - 5.0,
                sy(y) + 4.0
            ));
        }
        s.push_str("</svg>\n");
        Ok(s)
    }
}
