//! `augur check MODEL [PROPS_FILE] [--prop TEXT]... [--const N=3,p=0.5] [--method M]
//! [--epsilon E] [--all-states] [--json]`.

use crate::error::{located, parse_consts, read_input, CliError};
use crate::model::{load_model_with, LoadOptions};
use augur_dtmc::Dtmc;
use augur_expr::{evaluate_constants, ConstDecl, Expr, Type, Value};
use augur_pctl::{parse_properties, parse_property, Property};
use augur_solver::check::{
    CheckContext, CheckError, CheckSession, InitialFilter, PropertyResult, Scalar, Values,
};
use augur_solver::numeric::{Method, SolveOptions, SolverError};
use clap::{Args, ValueEnum};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The solution methods, as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Sound; picks exact/direct or interval iteration by problem size.
    Auto,
    /// Gauss-Seidel (not sound).
    GaussSeidel,
    /// Jacobi (not sound).
    Jacobi,
    /// Power iteration (not sound).
    Power,
    /// Interval iteration (sound).
    Interval,
    /// SCC by SCC, each block sound.
    Topological,
    /// Direct LU solve.
    ClosedForm,
    /// Exact rational elimination.
    Exact,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Method {
        match m {
            MethodArg::Auto => Method::Auto,
            MethodArg::GaussSeidel => Method::GaussSeidel,
            MethodArg::Jacobi => Method::Jacobi,
            MethodArg::Power => Method::Power,
            MethodArg::Interval => Method::Interval,
            MethodArg::Topological => Method::Topological,
            MethodArg::ClosedForm => Method::ClosedForm,
            MethodArg::Exact => Method::Exact,
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
    /// Values of constants, e.g. `N=3,p=0.5` (repeatable).
    #[arg(long = "const", value_name = "N=V,...")]
    pub consts: Vec<String>,
    /// Solution method for linear equation systems.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Requested precision (relative).
    #[arg(long, default_value_t = 1e-6)]
    pub epsilon: f64,
    /// Also report the value of every state.
    #[arg(long)]
    pub all_states: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// PRISM models: fail on a deadlock state instead of giving it a self-loop.
    #[arg(long)]
    pub no_fix_deadlocks: bool,
}

/// One property to check, with where it came from (for messages).
struct Job {
    name: Option<String>,
    property: Property,
    /// The property as the user wrote it (canonical form), before formulas were expanded.
    text: String,
    origin: String,
}

fn value_expr(v: Value) -> (Type, Expr) {
    match v {
        Value::Int(i) => (Type::Int, Expr::Int(i)),
        Value::Double(d) => (Type::Double, Expr::Double(d)),
        Value::Bool(b) => (Type::Bool, Expr::Bool(b)),
    }
}

/// Whether a checking error is the user's (bad name, bad bound) or a numerical failure.
fn is_internal(e: &CheckError) -> bool {
    matches!(e, CheckError::Solver(SolverError::NotConverged { .. }))
}

/// JSON for one value: a number, `true`/`false`, `"inf"`/`"-inf"`, or null for NaN.
pub fn scalar_json(v: Scalar) -> Json {
    match v {
        Scalar::Bool(b) => Json::Bool(b),
        Scalar::Num(x) if x == f64::INFINITY => json!("inf"),
        Scalar::Num(x) if x == f64::NEG_INFINITY => json!("-inf"),
        Scalar::Num(x) => serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number),
    }
}

fn num_json(x: f64) -> Json {
    scalar_json(Scalar::Num(x))
}

/// Text for one value.
pub fn scalar_text(v: Scalar) -> String {
    match v {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Num(x) if x == f64::INFINITY => "inf".into(),
        Scalar::Num(x) if x == f64::NEG_INFINITY => "-inf".into(),
        Scalar::Num(x) => format!("{x}"),
    }
}

fn state_values(v: &Values, n: usize) -> Vec<Scalar> {
    (0..n)
        .map(|s| match v {
            Values::Bool(set) => Scalar::Bool(set.contains(s)),
            Values::Num { values, .. } => Scalar::Num(values[s]),
        })
        .collect()
}

/// Run `augur check`.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let cmdline: Vec<(String, Value)> = parse_consts(&args.consts)?;
    if !(args.epsilon > 0.0 && args.epsilon < 1.0) {
        return Err(CliError::User(format!(
            "error: --epsilon must be in (0, 1), got {}",
            args.epsilon
        )));
    }

    // Properties: the file's, then the --prop ones.
    let mut jobs: Vec<Job> = Vec::new();
    let mut file_consts: Vec<ConstDecl> = Vec::new();
    let mut labels = HashMap::new();
    if let Some(path) = &args.props_file {
        let text = read_input(path)?;
        let name = path.display().to_string();
        let pf = parse_properties(&text).map_err(|e| located(&name, &text, &e))?;
        file_consts = pf.constants;
        for l in pf.labels {
            labels.insert(l.name, l.formula);
        }
        for (i, p) in pf.properties.into_iter().enumerate() {
            jobs.push(Job {
                name: p.name.clone(),
                origin: format!("{name}: property {}", i + 1),
                text: p.formula.to_string(),
                property: p,
            });
        }
    }
    for text in &args.props {
        let p = parse_property(text).map_err(|e| located("--prop", text, &e))?;
        jobs.push(Job {
            name: p.name.clone(),
            origin: "--prop".into(),
            text: p.formula.to_string(),
            property: p,
        });
    }
    if jobs.is_empty() {
        return Err(CliError::user(
            "error: no property to check: give a properties file or --prop 'PCTL'",
        ));
    }

    let load_opts = LoadOptions {
        exact: args.method == MethodArg::Exact,
        fix_deadlocks: !args.no_fix_deadlocks,
    };
    let loaded = load_model_with(&args.model, &cmdline, &load_opts)?;
    // Properties (and properties-file labels) may use the PRISM model's formulas.
    if let Some(model) = &loaded.prism {
        for job in &mut jobs {
            job.property.formula = model.expand_formulas_in(&job.property.formula);
        }
        for formula in labels.values_mut() {
            *formula = model.expand_formulas_in(formula);
        }
    }
    let dtmc = &loaded.dtmc;

    // Constants: the model's, then the properties file's (which may use the model's), then
    // command-line values for names declared nowhere (usable directly in --prop).
    let mut decls: Vec<ConstDecl> = loaded
        .constants
        .iter()
        .map(|(n, v)| {
            let (ty, e) = value_expr(*v);
            ConstDecl {
                name: n.clone(),
                ty,
                value: Some(e),
            }
        })
        .collect();
    decls.extend(file_consts);
    // A --const name that nothing declares or uses is a typo, not a value to ignore silently.
    for (name, _) in &cmdline {
        let declared = decls.iter().any(|d| d.name == *name);
        let used = jobs
            .iter()
            .any(|j| j.property.formula.idents().contains(name))
            || labels.values().any(|f| f.idents().contains(name));
        if !declared && !used {
            return Err(CliError::User(format!(
                "error: --const {name}: no constant `{name}` is declared in the model or the \
                 properties file, and no property uses it"
            )));
        }
    }
    let values = evaluate_constants(&decls, &cmdline).map_err(|e| {
        CliError::User(match &args.props_file {
            Some(p) => format!("error: {}: {e}", p.display()),
            None => format!("error: {e}"),
        })
    })?;
    let mut constants: HashMap<String, Value> = values.into_iter().collect();
    for (n, v) in &cmdline {
        constants.entry(n.clone()).or_insert(*v);
    }

    let ctx = CheckContext {
        constants,
        labels,
        options: SolveOptions {
            method: args.method.into(),
            epsilon: args.epsilon,
            ..SolveOptions::default()
        },
    };

    let n = dtmc.num_states();
    let mut results_json = Vec::new();
    let mut failures = 0usize;
    let mut internal = false;
    if !args.json {
        for note in &loaded.notes {
            writeln!(out, "note: {note}")?;
        }
    }
    let mut session = CheckSession::new(dtmc, &ctx);
    for job in &jobs {
        let text = job.text.clone();
        let start = Instant::now();
        let res = session.check_property(&job.property.formula);
        let seconds = start.elapsed().as_secs_f64();
        match res {
            Ok(r) => {
                if args.json {
                    results_json.push(result_json(job, &text, &r, seconds, args.all_states, n));
                } else {
                    print_result(out, dtmc, job, &text, &r, seconds, args.all_states, n)?;
                }
            }
            Err(e) => {
                // Keep going (as PRISM does): report this property, check the others.
                failures += 1;
                internal |= is_internal(&e);
                crate::error::diag(format_args!("error: {}: {text}: {e}", job.origin));
                if args.json {
                    results_json.push(json!({
                        "name": job.name, "property": text, "value": null, "bounds": null,
                        "method": null, "seconds": seconds, "error": e.to_string(),
                    }));
                } else {
                    writeln!(out, "{text} = error ({e})")?;
                }
            }
        }
    }
    if args.json {
        let doc = json!({
            "model": {
                "states": n,
                "transitions": dtmc.num_transitions(),
                "initial": dtmc.initial,
                "build_seconds": loaded.build_seconds,
            },
            "results": results_json,
        });
        writeln!(out, "{doc}")?;
    }
    if failures == 0 {
        return Ok(());
    }
    let summary = format!(
        "{failures} of {} properties could not be checked (see above)",
        jobs.len()
    );
    if internal {
        Err(CliError::Internal(anyhow::anyhow!(summary)))
    } else {
        Err(CliError::User(format!("error: {summary}")))
    }
}

fn result_json(
    job: &Job,
    text: &str,
    r: &PropertyResult,
    seconds: f64,
    all_states: bool,
    n: usize,
) -> Json {
    let mut o = json!({
        "name": job.name,
        "property": text,
        "value": scalar_json(r.value),
        "bounds": r.bounds.map(|(lo, hi)| json!([num_json(lo), num_json(hi)])),
        "method": r.method,
        "seconds": seconds,
    });
    if let Some(map) = o.as_object_mut() {
        match &r.initial_filter {
            Some(InitialFilter::Range { count, min, max }) => {
                map.insert(
                    "filter".into(),
                    json!({"op": "range", "initial_states": count, "min": num_json(*min), "max": num_json(*max)}),
                );
            }
            Some(InitialFilter::Forall { count }) => {
                map.insert(
                    "filter".into(),
                    json!({"op": "forall", "initial_states": count}),
                );
            }
            None => {}
        }
        if !r.notes.is_empty() {
            map.insert("notes".into(), json!(r.notes));
        }
        if let Some(p) = &r.printed {
            map.insert(
                "printed".into(),
                Json::Array(p.iter().map(|(s, v)| json!([s, scalar_json(*v)])).collect()),
            );
        }
        if all_states {
            map.insert(
                "states".into(),
                Json::Array(
                    state_values(&r.values, n)
                        .into_iter()
                        .map(scalar_json)
                        .collect(),
                ),
            );
        }
    }
    o
}

#[allow(clippy::too_many_arguments)]
fn print_result(
    out: &mut dyn Write,
    dtmc: &Dtmc,
    job: &Job,
    text: &str,
    r: &PropertyResult,
    seconds: f64,
    all_states: bool,
    n: usize,
) -> std::io::Result<()> {
    let mut line = String::new();
    if let Some(name) = &job.name {
        line.push_str(&format!("{name}: "));
    }
    line.push_str(&format!("{text} = {}", scalar_text(r.value)));
    if let Some((lo, hi)) = r.bounds {
        if Scalar::Num(lo) != r.value || Scalar::Num(hi) != r.value {
            line.push_str(&format!(
                " [{}, {}]",
                scalar_text(Scalar::Num(lo)),
                scalar_text(Scalar::Num(hi))
            ));
        }
    }
    match &r.initial_filter {
        Some(InitialFilter::Range { count, min, max }) => line.push_str(&format!(
            " (range over {count} initial states: [{}, {}]; the minimum is shown)",
            scalar_text(Scalar::Num(*min)),
            scalar_text(Scalar::Num(*max))
        )),
        Some(InitialFilter::Forall { count }) => {
            line.push_str(&format!(" (holds in all {count} initial states?)"))
        }
        None => {}
    }
    line.push_str(&format!(" ({}, {:.3} s)", r.method, seconds));
    writeln!(out, "{line}")?;
    for note in &r.notes {
        writeln!(out, "  note: {note}")?;
    }
    if let Some(p) = &r.printed {
        for (s, v) in p {
            writeln!(out, "  state {s}: {}", scalar_text(*v))?;
        }
    }
    if all_states {
        for (s, v) in state_values(&r.values, n).into_iter().enumerate() {
            match dtmc.describe_state(s) {
                Some(val) => writeln!(out, "  state {s} {val}: {}", scalar_text(v))?,
                None => writeln!(out, "  state {s}: {}", scalar_text(v))?,
            }
        }
    }
    Ok(())
}
