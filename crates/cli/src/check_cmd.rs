//! `augur check MODEL [PROPS_FILE] [--prop TEXT]... [--const N=3,p=0.5] [--method M]
//! [--epsilon E] [--all-states] [--json] [--timeout S] [--max-states N]`: glue over
//! `augur-check` (loading, constants, properties, checking, the JSON report).

use crate::error::CliError;
use augur_check::{
    format_exact, Bounds, CheckResult, CheckSession, Constants, ExactFormat, Format, InitialFilter,
    Method, MethodUsed, Model, Properties, Report, Scalar, StateValues,
};
use augur_source::number;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

/// The solution methods, as named on the command line ([`Method::name`], [`Method::summary`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodArg(pub Method);

impl MethodArg {
    const VARIANTS: [MethodArg; Method::ALL.len()] = {
        let mut v = [MethodArg(Method::Auto); Method::ALL.len()];
        let mut i = 0;
        while i < v.len() {
            v[i] = MethodArg(Method::ALL[i]);
            i += 1;
        }
        v
    };
}

impl ValueEnum for MethodArg {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.summary()))
    }
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Method {
        m.0
    }
}

/// `--exact-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExactFormatArg {
    /// `p/q` in lowest terms.
    Fraction,
    /// The decimal expansion (30 significant digits and `...` when it does not terminate).
    Decimal,
}

impl From<ExactFormatArg> for ExactFormat {
    fn from(f: ExactFormatArg) -> ExactFormat {
        match f {
            ExactFormatArg::Fraction => ExactFormat::Fraction,
            ExactFormatArg::Decimal => ExactFormat::Decimal,
        }
    }
}

/// Arguments of `augur check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The model: .tra (+ .lab/.srew/.trew/.sta), .drn, .json, .pm/.prism.
    pub model: PathBuf,
    /// A properties file (PRISM syntax: constants, labels, properties).
    pub props_file: Option<PathBuf>,
    /// A property to check (repeatable), checked after those of the file.
    #[arg(long = "prop", value_name = "PCTL")]
    pub props: Vec<String>,
    /// Also report the value of every state.
    #[arg(long)]
    pub all_states: bool,
    /// How exact results (`--method exact`) are printed: `fraction` (`1/3`, as Storm prints
    /// them) or `decimal` (complete when it terminates, else 30 significant digits and `...`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ExactFormatArg::Fraction)]
    pub exact_format: ExactFormatArg,
    /// Exit with code 3 when a boolean property (`P>=0.9 [ ... ]`, a filter's `forall`, ...)
    /// is false, so that a script or a CI job can gate on it (0: all hold).
    #[arg(long)]
    pub assert: bool,
    #[command(flatten)]
    pub opts: crate::options::ModelOptions,
    #[command(flatten)]
    pub param: crate::param_cmd::ParamArgs,
}

/// Parses the `--const` arguments (a later value of a name replaces an earlier one); an error
/// is located in the offending argument, with a caret.
pub fn constants(args: &[String]) -> Result<Constants, augur_check::CheckError> {
    let mut c = Constants::new();
    for text in args {
        c.add_from("--const", text)?;
    }
    Ok(c)
}

/// Whether `p` names a model file `Model::load` reads.
fn is_model_file(p: &std::path::Path) -> bool {
    matches!(
        Format::from_path(p),
        Some(Format::Tra | Format::Drn | Format::Json | Format::Prism)
    )
}

/// Whether `p` looks like a properties file (`.props`, `.pctl`, `.csl`, `.prop`).
fn is_props_file(p: &std::path::Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("props" | "pctl" | "csl" | "prop")
    )
}

/// The model and the properties file given the wrong way round, or a properties file given as
/// the model: said so, with the command that works.
/// The properties to check: the file's, then the `--prop` ones; none is an error.
pub(crate) fn properties(args: &CheckArgs) -> Result<Properties, CliError> {
    let mut props = match &args.props_file {
        Some(path) => Properties::read_file(path)?,
        None => Properties::new(),
    };
    for text in &args.props {
        props.add("--prop", text)?;
    }
    if props.is_empty() {
        return Err(CliError::user(
            "error: no property to check: give a properties file or --prop 'PCTL'",
        ));
    }
    Ok(props)
}

fn wrong_files(args: &CheckArgs) -> Result<(), CliError> {
    let (model, props) = (&args.model, args.props_file.as_deref());
    if is_model_file(model) {
        return Ok(());
    }
    match props {
        Some(p) if is_model_file(p) => Err(CliError::User(format!(
            "error: the model comes first: {} is a model and {} is not (augur check MODEL \
             [PROPS_FILE]); swapped:\n  augur check {} {}",
            p.display(),
            model.display(),
            p.display(),
            model.display()
        ))),
        None if is_props_file(model) => Err(CliError::User(format!(
            "error: {} is a properties file; the model comes first (.tra, .drn, .json, .pm or \
             .prism):\n  augur check MODEL {}",
            model.display(),
            model.display()
        ))),
        _ => Ok(()),
    }
}

/// Run `augur check`.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.param.active() {
        return crate::param_cmd::run(args, &args.param, out);
    }
    let (experiments, load, options) = args.opts.resolve_experiments()?;
    let constants = experiments.fixed.clone();
    wrong_files(args)?;

    let props = properties(args)?;

    if experiments.has_ranges() {
        return crate::experiment_cmd::run(args, &experiments, &load, options, &props, out);
    }
    let model = Model::load(&args.model, &load)?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    warn_overrides(
        &constants,
        &props,
        args.props_file.as_deref(),
        &model,
        &args.model,
    );
    let compiled = props.compile(&model, &constants)?;
    for w in &compiled.warnings {
        crate::error::diag(format_args!("warning: {w}"));
    }

    if !args.opts.load.json {
        for note in model.notes() {
            writeln!(out, "note: {note}")?;
        }
    }
    let mut report = Report::new(&model);
    report.warnings.extend(compiled.warnings.iter().cloned());
    let mut failures = 0usize;
    let mut internal = false;
    // `--assert`: the boolean properties checked, and the text of those that are false.
    let mut asserted = 0usize;
    let mut violated: Vec<String> = Vec::new();
    let mut io = Ok(());
    // State names of a learned model (`metadata.state_names` of its JSON), read only when a
    // state is printed by name.
    let wants_names = !args.opts.load.json
        && (args.all_states
            || compiled
                .items
                .iter()
                .any(|p| p.text.starts_with("filter(print")));
    let names = if wants_names {
        learned_state_names(&args.model, model.dtmc().num_states())
    } else {
        None
    };
    // A learned interval model's confidence (`metadata.learned.intervals.confidence`).
    let confidence = if model.dtmc().is_interval() {
        learned_confidence(&args.model)
    } else {
        None
    };
    let exact = options.method == Method::Exact;
    // Unbounded queries whose value is 1: checked again on a learned model's observed chain.
    let mut ones: Vec<usize> = Vec::new();
    let mut session = CheckSession::new(&model, options.clone());
    // With --json on a learned interval model: each result's confidence bound.
    let mut outcomes: Vec<Option<ConfidenceBound>> = Vec::new();
    // The property the time limit stopped (the following ones are not attempted).
    let mut timed_out: Option<usize> = None;
    session.check_each(&compiled, |index, p, outcome| {
        if let Err(e) = &outcome {
            // Keep going (as PRISM does): report this property, check the others.
            failures += 1;
            internal |= e.is_internal();
            let d = e.diagnostic();
            if let Some(d) = timeout_diagnostic(e, index, p, &mut timed_out) {
                crate::error::diag(format_args!("{}", d.render().trim_end()));
            } else if d.location.is_some() {
                crate::error::diag(format_args!("{}", d.to_string().trim_end()));
            } else {
                crate::error::diag(format_args!("error: {}: {e}", p.text));
            }
            if exact && matches!(e, augur_check::CheckError::Stopped(_)) {
                crate::error::diag(format_args!(
                    "note: exact elimination did not finish: the sound default (--method auto) \
                     answers with guaranteed bounds [lo, hi], usually in milliseconds"
                ));
            }
        }
        if let Ok(r) = &outcome {
            if crate::smoothing::is_one(&r.value) && crate::smoothing::is_unbounded_query(p) {
                ones.push(index);
            }
            if let Scalar::Bool(b) = r.value {
                asserted += 1;
                if !b {
                    violated.push(match &r.name {
                        Some(n) => format!("\"{n}\": {}", r.property),
                        None => r.property.clone(),
                    });
                }
            }
        }
        if args.opts.load.json {
            report.push(p.name.as_deref(), &p.text, &outcome, args.all_states);
            outcomes.push(
                outcome
                    .as_ref()
                    .ok()
                    .and_then(|r| confidence.and_then(|c| confidence_bound(r, c))),
            );
        } else if io.is_ok() {
            io = match &outcome {
                Ok(r) => print_result(
                    out,
                    &model,
                    names.as_deref(),
                    r,
                    args.all_states,
                    args.exact_format.into(),
                )
                .and_then(|()| {
                    match confidence.and_then(|c| confidence_bound(r, c)) {
                        Some(b) => writeln!(out, "  {}", b.statement()),
                        None => Ok(()),
                    }
                }),
                // Named as a result is (`name: P=? [ ... ] = ...`).
                Err(e) => match &p.name {
                    Some(name) => writeln!(out, "{name}: {} = error ({e})", p.text),
                    None => writeln!(out, "{} = error ({e})", p.text),
                },
            };
        }
    });
    io?;
    if !ones.is_empty() {
        if let Some(observed) = crate::smoothing::observed_model(&args.model, &model) {
            for &i in &ones {
                let warn = if model.dtmc().is_interval() {
                    crate::smoothing::interval_warning
                } else {
                    crate::smoothing::warning
                };
                if let Some(w) = warn(&observed, &options, &compiled.items[i]) {
                    crate::error::diag(format_args!("warning: {w}"));
                }
            }
        }
    }
    if args.opts.load.json {
        match confidence {
            Some(c) => writeln!(out, "{}", with_confidence(&report, &outcomes, c))?,
            None => writeln!(out, "{}", report.to_json())?,
        }
    }
    if failures == 0 {
        return assertion(args.assert, asserted, &violated);
    }
    let summary = format!(
        "{failures} of {} properties could not be checked (see above)",
        compiled.len()
    );
    if internal {
        Err(CliError::Internal(anyhow::anyhow!(summary)))
    } else {
        Err(CliError::User(format!("error: {summary}")))
    }
}

/// The error of the time limit (`--timeout`) for the property it stopped, located at the
/// property (its file, line and column, a caret under it): `time limit of 2 s (--timeout)
/// reached while checking property 3`; for the properties after it, which are not attempted,
/// `not checked: ...`. `None` for other errors.
pub(crate) fn timeout_diagnostic(
    e: &augur_check::CheckError,
    index: usize,
    p: &augur_check::CompiledProperty,
    timed_out: &mut Option<usize>,
) -> Option<augur_source::Diagnostic> {
    let augur_check::CheckError::Stopped(augur_check::Stop::Timeout { after }) = e else {
        return None;
    };
    let limit = after.map_or_else(String::new, |d| format!(" of {} s", d.as_secs_f64()));
    let first = *timed_out.get_or_insert(index);
    let message = if first == index {
        format!(
            "time limit{limit} (--timeout) reached while checking property {}",
            index + 1
        )
    } else {
        format!(
            "property {} not checked: the time limit{limit} (--timeout) was reached while \
             checking property {}",
            index + 1,
            first + 1
        )
    };
    let d = augur_source::Diagnostic::error(message);
    Some(match &p.resolved {
        Ok(r) => d.at(r.source.location(r.span)),
        Err(_) => d,
    })
}

/// The outcome of `--assert`: exit code 3 when a boolean property is false; a user error when
/// nothing boolean was checked (`P=?` queries have no truth value to assert).
pub(crate) fn assertion(
    assert: bool,
    asserted: usize,
    violated: &[String],
) -> Result<(), CliError> {
    if !assert {
        return Ok(());
    }
    if asserted == 0 {
        return Err(CliError::user(
            "error: --assert: no boolean property was checked (a query such as `P=? [ ... ]` \
             has no truth value; write a bound: `P<=0.01 [ ... ]`)",
        ));
    }
    if violated.is_empty() {
        return Ok(());
    }
    Err(CliError::AssertionFailed(format!(
        "assertion failed: {} of {asserted} boolean properties do not hold (--assert):\n{}",
        violated.len(),
        violated
            .iter()
            .map(|v| format!("  {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    )))
}

/// The `metadata.state_names` of an Augur JSON model (as `augur learn` writes them), when the
/// model is one and has a name for every state.
pub(crate) fn learned_state_names(path: &std::path::Path, states: usize) -> Option<Vec<String>> {
    if Format::from_path(path) != Some(Format::Json) {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let doc = augur_formats::json::read_json_document(std::io::BufReader::new(file), path).ok()?;
    let names: Vec<String> =
        serde_json::from_value(doc.metadata?.get("state_names")?.clone()).ok()?;
    (names.len() == states).then_some(names)
}

/// The confidence a learned interval model's intervals hold with
/// (`metadata.learned.intervals.confidence`, as `augur learn --intervals` writes it).
pub(crate) fn learned_confidence(path: &std::path::Path) -> Option<f64> {
    if Format::from_path(path) != Some(Format::Json) {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let doc = augur_formats::json::read_json_document(std::io::BufReader::new(file), path).ok()?;
    let c = doc
        .metadata?
        .get("learned")?
        .get("intervals")?
        .get("confidence")?
        .as_f64()?;
    (c > 0.0 && c < 1.0).then_some(c)
}

/// What a `Pmax=?`/`Pmin=?` result on a learned interval model says of the true chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ConfidenceBound {
    /// The confidence level.
    pub level: f64,
    /// `true`: the true probability is at most `value` (Pmax); `false`: at least (Pmin).
    pub upper: bool,
    /// The bound.
    pub value: f64,
}

impl ConfidenceBound {
    /// `the true probability is ≤ 0.0612 with 95% confidence`.
    pub fn statement(&self) -> String {
        format!(
            "the true probability is {} {} with {} confidence (the learned intervals hold \
             simultaneously with that probability)",
            if self.upper { "≤" } else { "≥" },
            Scalar::Num(self.value),
            crate::learn_cmd::percent(self.level)
        )
    }
}

/// The confidence statement of a top-level `Pmax=?` or `Pmin=?` query (the sound side of its
/// bounds; with several initial states, the largest or smallest value over them).
pub(crate) fn confidence_bound(r: &CheckResult, level: f64) -> Option<ConfidenceBound> {
    let upper = if r.property.starts_with("Pmax=?") {
        true
    } else if r.property.starts_with("Pmin=?") {
        false
    } else {
        return None;
    };
    let Scalar::Num(v) = r.value else {
        return None;
    };
    let value = match (&r.initial_filter, r.bounds) {
        (Some(InitialFilter::Range { min, max, .. }), _) => {
            if upper {
                *max
            } else {
                *min
            }
        }
        (_, Some(b)) => {
            if upper {
                b.hi
            } else {
                b.lo
            }
        }
        _ => v,
    };
    Some(ConfidenceBound {
        level,
        upper,
        value: value.clamp(0.0, 1.0),
    })
}

/// The `--json` report with `confidence` on each result that has a confidence statement:
/// `{"level": 0.95, "upper": x}` (Pmax) or `{"level": 0.95, "lower": x}` (Pmin).
fn with_confidence(report: &Report, bounds: &[Option<ConfidenceBound>], level: f64) -> String {
    let Ok(mut v) = serde_json::to_value(report) else {
        return report.to_json();
    };
    if let Some(results) = v.get_mut("results").and_then(|r| r.as_array_mut()) {
        for (r, b) in results.iter_mut().zip(bounds) {
            if let (Some(b), Some(obj)) = (b, r.as_object_mut()) {
                let side = if b.upper { "upper" } else { "lower" };
                obj.insert(
                    "confidence".into(),
                    serde_json::json!({ "level": level, side: b.value }),
                );
            }
        }
    }
    v.to_string()
}

/// How a state is printed, the one way for every listing: its name (a learned model), else
/// `state S (x=..,y=..)` with its valuation (PRISM models, `.sta` files), else `state S`.
pub(crate) fn state_label(model: &Model, names: Option<&[String]>, s: usize) -> String {
    if let Some(n) = names.and_then(|n| n.get(s)) {
        return n.clone();
    }
    match model.dtmc().describe_state(s) {
        Some(val) => format!("state {s} {val}"),
        None => format!("state {s}"),
    }
}

/// A value as humans read it (`number`'s rule): with sound bounds `lo < hi`, the shortest
/// decimal inside them; otherwise (no bounds, or a floating-point value whose "bounds" are
/// itself) the shortest decimal within 8 ulps of it.
pub(crate) fn shown(v: Scalar, bounds: Option<Bounds>) -> String {
    match (v, bounds) {
        (Scalar::Num(x), Some(b)) if b.lo < b.hi => number::within(x, b.lo, b.hi),
        _ => v.to_string(),
    }
}

fn print_result(
    out: &mut dyn Write,
    model: &Model,
    names: Option<&[String]>,
    r: &CheckResult,
    all_states: bool,
    exact_format: ExactFormat,
) -> std::io::Result<()> {
    let mut line = String::new();
    if let Some(name) = &r.name {
        line.push_str(&format!("{name}: "));
    }
    match &r.exact {
        // Exact: the rational itself, no rounded bounds.
        Some(q) => line.push_str(&format!(
            "{} = {}",
            r.property,
            format_exact(q, exact_format)
        )),
        // A filter's range: the range itself, each end as a floating-point value.
        None if matches!(r.method, MethodUsed::Range { .. }) => match r.bounds {
            Some(b) => line.push_str(&format!(
                "{} = [{}, {}]",
                r.property,
                number::approx(b.lo),
                number::approx(b.hi)
            )),
            None => line.push_str(&format!("{} = {}", r.property, r.value)),
        },
        None => {
            line.push_str(&format!("{} = {}", r.property, shown(r.value, r.bounds)));
            if let Some(b) = r.bounds.filter(|b| b.lo < b.hi) {
                // The bounds themselves are sound: each read back exactly.
                line.push_str(&format!(
                    " [{}, {}]",
                    number::exact(b.lo),
                    number::exact(b.hi)
                ));
            }
        }
    }
    match &r.initial_filter {
        Some(InitialFilter::Range { count, min, max }) => line.push_str(&format!(
            " (range over {count} initial states: [{}, {}]; the minimum is shown)",
            Scalar::Num(*min),
            Scalar::Num(*max)
        )),
        Some(InitialFilter::Forall { count }) => {
            line.push_str(&format!(" (holds in all {count} initial states?)"))
        }
        None => {}
    }
    line.push_str(&format!(" ({}, {:.3} s)", r.method, r.seconds));
    writeln!(out, "{line}")?;
    for note in &r.notes {
        writeln!(out, "  note: {note}")?;
    }
    let bounds_at = |s: usize| match &r.states {
        StateValues::Num(n) => n.bounds_at(s),
        StateValues::Bool(_) => None,
    };
    if let Some(p) = &r.printed {
        for (s, v) in p {
            let s = *s as usize;
            writeln!(
                out,
                "  {}: {}",
                state_label(model, names, s),
                shown(*v, bounds_at(s))
            )?;
        }
    }
    if all_states {
        let dtmc = model.dtmc();
        for (s, v) in r.states.to_vec(dtmc.num_states()).into_iter().enumerate() {
            let exact = match &r.states {
                StateValues::Num(n) if r.exact.is_some() => n.exact_at(s),
                _ => None,
            };
            match exact {
                Some(q) => writeln!(
                    out,
                    "  {}: {}",
                    state_label(model, names, s),
                    format_exact(q, exact_format)
                )?,
                None => writeln!(
                    out,
                    "  {}: {}",
                    state_label(model, names, s),
                    shown(v, bounds_at(s))
                )?,
            }
        }
    }
    Ok(())
}

/// A `--const` value for a constant that the properties file or the model defines replaces
/// the definition: say so, naming both values and where the constant is defined.
pub(crate) fn warn_overrides(
    given: &Constants,
    props: &Properties,
    props_file: Option<&std::path::Path>,
    model: &Model,
    model_file: &std::path::Path,
) {
    for (name, value) in given.as_slice() {
        let defined = |decls: &[augur_expr::ConstDecl]| {
            decls
                .iter()
                .find(|d| d.name == *name)
                .and_then(|d| d.value.as_ref().map(|e| e.to_string()))
        };
        let in_props = defined(props.constants());
        let in_model = model.prism().and_then(|m| defined(&m.constants()));
        for (def, file) in [
            (in_props, props_file.map(|p| p.display().to_string())),
            (in_model, Some(model_file.display().to_string())),
        ] {
            if let Some(def) = def {
                crate::error::diag(format_args!(
                    "warning: --const {name}={value} overrides the value {def} defined for `{name}` in {}",
                    file.unwrap_or_else(|| "the properties".into())
                ));
            }
        }
    }
}
