//! `augur check` with ranged constants (`--const N=1:2:9`, PRISM's `-const` experiments): the
//! model is built and the properties checked for every combination of the ranges' values, and
//! the results printed as one table (or `--json`, documented in docs/json.md).

use crate::check_cmd::CheckArgs;
use crate::error::CliError;
use augur_check::{
    format_exact, CheckError, CheckOptions, CheckResult, CheckSession, Experiments, LoadOptions,
    Model, Properties, Report, Scalar, Stop,
};
use std::collections::HashSet;
use std::io::Write;

/// One run of an experiment: the ranged values, then the report or why the run failed as a
/// whole (the model could not be built, a property could not be compiled).
struct Run {
    values: Vec<augur_expr::Value>,
    outcome: Result<Vec<Result<CheckResult, CheckError>>, CheckError>,
    report: Option<Report>,
}

/// Runs the experiment and prints its table (or JSON).
pub fn run(
    args: &CheckArgs,
    experiments: &Experiments,
    load: &LoadOptions,
    options: CheckOptions,
    props: &Properties,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut warned: HashSet<String> = HashSet::new();
    let mut warn = |w: String| {
        if warned.insert(w.clone()) {
            crate::error::diag(format_args!("warning: {w}"));
        }
    };
    let mut runs = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    for (values, constants) in experiments.runs() {
        let load = LoadOptions {
            constants: constants.clone(),
            ..load.clone()
        };
        let one = run_once(args, &load, &constants, &options, props);
        let names: Vec<&str> = experiments.ranges.iter().map(|r| r.name.as_str()).collect();
        let (outcome, report) = match one {
            Ok((results, report, warnings, names_of_props, timed_out)) => {
                for w in warnings {
                    warn(w);
                }
                // The time limit stopped a property: located at it, with the run's values.
                if let Some(d) = timed_out {
                    let at = describe(&names, &values);
                    let d = augur_source::Diagnostic {
                        message: format!("{} (experiment run {at})", d.message),
                        ..d
                    };
                    return Err(CliError::from(d));
                }
                if texts.is_empty() {
                    texts = names_of_props;
                }
                (Ok(results), Some(report))
            }
            Err(e) => (Err(e), None),
        };
        stop_if_limit(&outcome, &describe(&names, &values))?;
        runs.push(Run {
            values,
            outcome,
            report,
        });
    }
    let names: Vec<&str> = experiments.ranges.iter().map(|r| r.name.as_str()).collect();
    let (mut failures, mut internal) = (0usize, false);
    let (mut asserted, mut violated) = (0usize, Vec::new());
    for r in &runs {
        let at = describe(&names, &r.values);
        match &r.outcome {
            Err(e) => {
                failures += 1;
                internal |= e.is_internal();
                let d = crate::error::check_diagnostic(e);
                crate::error::diag(format_args!("error ({at}): {}", d.render().trim_end()));
            }
            Ok(results) => {
                for res in results {
                    match res {
                        Err(e) => {
                            failures += 1;
                            internal |= e.is_internal();
                            crate::error::diag(format_args!("error ({at}): {e}"));
                        }
                        Ok(c) => {
                            if let Scalar::Bool(b) = c.value {
                                asserted += 1;
                                if !b {
                                    violated.push(format!("{} ({at})", c.property));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if args.opts.load.json {
        writeln!(out, "{}", json(&names, &runs))?;
    } else {
        let mut header: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        header.extend(texts.iter().cloned());
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let right: Vec<usize> = (0..header.len()).collect();
        let mut table = crate::table::new(&header_refs, &right);
        for r in &runs {
            let mut row: Vec<String> = r.values.iter().map(|v| v.to_string()).collect();
            match &r.outcome {
                Err(_) => row.extend(texts.iter().map(|_| "error".to_string())),
                Ok(results) => row.extend(results.iter().map(|res| match res {
                    Ok(c) => match &c.exact {
                        Some(q) => format_exact(q, args.exact_format.into()),
                        None => crate::check_cmd::shown(c.value, c.bounds),
                    },
                    Err(_) => "error".into(),
                })),
            }
            table.add_row(row);
        }
        write!(out, "{}", crate::table::render(&table, ""))?;
    }
    if failures == 0 {
        return crate::check_cmd::assertion(args.assert, asserted, &violated);
    }
    let summary = format!(
        "{failures} checks of the experiment's {} runs failed (see above)",
        runs.len()
    );
    if internal {
        Err(CliError::Internal(anyhow::anyhow!(summary)))
    } else {
        Err(CliError::User(format!("error: {summary}")))
    }
}

/// The results of one run (the report, the warnings, the column name of every property and,
/// when the time limit stopped a property, the located error), or why the model could not be
/// built or the properties compiled.
#[allow(clippy::type_complexity)]
fn run_once(
    args: &CheckArgs,
    load: &LoadOptions,
    constants: &augur_check::Constants,
    options: &CheckOptions,
    props: &Properties,
) -> Result<
    (
        Vec<Result<CheckResult, CheckError>>,
        Report,
        Vec<String>,
        Vec<String>,
        Option<augur_source::Diagnostic>,
    ),
    CheckError,
> {
    let model = Model::load(&args.model, load)?;
    let mut warnings: Vec<String> = model.warnings().to_vec();
    let compiled = props.compile(&model, constants)?;
    warnings.extend(compiled.warnings.iter().cloned());
    let mut report = Report::new(&model);
    report.warnings.extend(compiled.warnings.iter().cloned());
    let mut results = Vec::new();
    let mut names = Vec::new();
    let mut session = CheckSession::new(&model, options.clone());
    let mut timed_out: Option<usize> = None;
    let mut stopped: Option<augur_source::Diagnostic> = None;
    session.check_each(&compiled, |index, p, outcome| {
        if let Err(e) = &outcome {
            if stopped.is_none() {
                stopped = crate::check_cmd::timeout_diagnostic(e, index, p, &mut timed_out);
            }
        }
        report.push(p.name.as_deref(), &p.text, &outcome, false);
        names.push(match &p.name {
            Some(n) => n.clone(),
            None => p.text.clone(),
        });
        results.push(outcome);
    });
    Ok((results, report, warnings, names, stopped))
}

/// A time limit or a cancellation stops the whole experiment, not only its run (the
/// `--timeout` covers the command).
fn stop_if_limit(
    outcome: &Result<Vec<Result<CheckResult, CheckError>>, CheckError>,
    at: &str,
) -> Result<(), CliError> {
    let stopped = |e: &CheckError| {
        matches!(
            e,
            CheckError::Stopped(Stop::Timeout { .. } | Stop::Cancelled)
        )
    };
    let first = match outcome {
        Err(e) => stopped(e).then_some(e),
        Ok(results) => results
            .iter()
            .find_map(|r| r.as_ref().err().filter(|e| stopped(e))),
    };
    match first {
        Some(e) => {
            let d = crate::error::check_diagnostic(&clone_stop(e));
            Err(CliError::from(augur_source::Diagnostic {
                message: format!("{} (experiment run {at})", d.message),
                ..d
            }))
        }
        None => Ok(()),
    }
}

fn clone_stop(e: &CheckError) -> CheckError {
    match e {
        CheckError::Stopped(s) => CheckError::Stopped(s.clone()),
        e => CheckError::input(e.to_string()),
    }
}

/// `N=3, p=0.5`.
fn describe(names: &[&str], values: &[augur_expr::Value]) -> String {
    names
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `{"schema_version", "constants", "runs": [{"constants": {..}, "model", "results"} |
/// {"constants", "error"}]}`.
fn json(names: &[&str], runs: &[Run]) -> String {
    use serde_json::{json, Map, Value};
    let runs: Vec<Value> = runs
        .iter()
        .map(|r| {
            let mut constants = Map::new();
            for (n, v) in names.iter().zip(&r.values) {
                constants.insert(n.to_string(), value_json(v));
            }
            let mut obj = Map::new();
            obj.insert("constants".into(), Value::Object(constants));
            match (&r.report, &r.outcome) {
                (Some(rep), _) => {
                    obj.insert("model".into(), json!(rep.model));
                    obj.insert("results".into(), json!(rep.results));
                }
                (None, Err(e)) => {
                    obj.insert("error".into(), json!(e.to_string().trim_end()));
                }
                (None, Ok(_)) => {}
            }
            Value::Object(obj)
        })
        .collect();
    json!({
        "schema_version": augur_check::SCHEMA_VERSION,
        "constants": names,
        "runs": runs,
    })
    .to_string()
}

fn value_json(v: &augur_expr::Value) -> serde_json::Value {
    match *v {
        augur_expr::Value::Int(i) => i.into(),
        augur_expr::Value::Double(x) => x.into(),
        augur_expr::Value::Bool(b) => b.into(),
    }
}
