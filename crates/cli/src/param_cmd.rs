//! `augur check MODEL ... --param p,q` (PRISM's `-param` too): parametric DTMCs through
//! `augur-param`: each property's value as a rational function of the parameters; with
//! `--region BOX` the box decided by parameter lifting (`--refine COVERAGE` splits it), with
//! `--optimize min|max` the extremal value over the box.

use crate::check_cmd::CheckArgs;
use crate::error::CliError;
use augur_param::space::{parse_params, parse_region, Region};
use augur_param::{PValue, ParamChecker, ParamError, ParametricModel};
use augur_ratfun::IntPoly;
use clap::{Args, ValueEnum};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::time::Instant;

/// `--optimize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Direction {
    /// The least value over the region.
    Min,
    /// The greatest value over the region.
    Max,
}

/// The parametric options of `augur check`.
#[derive(Args, Debug, Clone, Default)]
pub struct ParamArgs {
    /// Parameters: undefined `const double`s of the model kept symbolic, `p,q`, with bounds
    /// `p=0.1:0.9` (default (0, 1)); repeatable. PRISM's `-param` is accepted too. Results are
    /// rational functions of them (docs/parametric.md).
    #[arg(long = "param", value_name = "P[=LO:HI],...")]
    pub param: Vec<String>,
    /// A box of the parameter space, `0.1<=p<=0.4,0.2<=q<=0.5`: a property with a bound
    /// (`P<=0.01 [ F "bad" ]`) is decided for all of it by parameter lifting (all satisfy /
    /// all violate / unknown).
    #[arg(long, value_name = "BOX", requires = "param")]
    pub region: Option<String>,
    /// With --region: split the box until this share of its volume (0 < C <= 1) is decided,
    /// listing the safe, unsafe and unknown boxes.
    #[arg(long, value_name = "COVERAGE", requires = "region")]
    pub refine: Option<f64>,
    /// With --refine and two parameters: write an SVG of the plane with the boxes.
    #[arg(long, value_name = "FILE", requires = "refine")]
    pub region_svg: Option<std::path::PathBuf>,
    /// The least or greatest value of each property over the region (or the parameters'
    /// bounds), a point attaining it and a sound bound to --param-epsilon.
    #[arg(long, value_enum, value_name = "DIRECTION", requires = "param")]
    pub optimize: Option<Direction>,
    /// Relative precision of --optimize's bound on the optimum.
    #[arg(long, value_name = "E", default_value_t = 1e-6)]
    pub param_epsilon: f64,
}

impl ParamArgs {
    /// Whether the parametric engine is asked for.
    pub fn active(&self) -> bool {
        !self.param.is_empty()
    }
}

fn param_error(e: ParamError) -> CliError {
    match e {
        ParamError::Check(e) => e.into(),
        e => e.diagnostic().into(),
    }
}

/// Runs `augur check` with the parametric engine.
pub fn run(args: &CheckArgs, p: &ParamArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (constants, load, _) = args.opts.resolve()?;
    let params = parse_params(&p.param).map_err(param_error)?;
    let start = Instant::now();
    let model = ParametricModel::load(&args.model, params, &load).map_err(param_error)?;
    let build_seconds = start.elapsed().as_secs_f64();
    for w in &model.warnings {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let names = model.names();
    let props = crate::check_cmd::properties(args)?;
    for prop in props.properties() {
        if let Some(n) = prop
            .formula
            .idents()
            .into_iter()
            .find(|i| names.contains(i))
        {
            return Err(CliError::user(format!(
                "error: property `{}` names parameter `{n}`: a parameter may appear in the model's probabilities and rewards only (the answer is a function of it; compare it with --region)",
                prop.formula
            )));
        }
    }
    let compiled = props.compile(&model.model, &constants)?;
    let region = match &p.region {
        Some(text) => Some(parse_region(text, &model.params).map_err(param_error)?),
        None => None,
    };
    let mut checker = ParamChecker::new(&model, args.all_states);
    let mut results: Vec<Json> = Vec::new();
    let mut failed = false;
    let init = model.model.dtmc().initial.first().copied().unwrap_or(0) as usize;
    for item in &compiled.items {
        let t0 = Instant::now();
        let resolved = match &item.resolved {
            Ok(r) => r,
            Err(d) => {
                failed = true;
                crate::error::diag(format_args!("{}", d.render().trim_end()));
                results.push(json!({"name": item.name, "property": item.text, "error": d.message}));
                continue;
            }
        };
        // A region alone (no --optimize, no --all-states): decided first, so that the function
        // is computed only when a box needs it (augur_param::regions::analyse).
        let region_only = !args.all_states && p.optimize.is_none();
        let mut analysis = None;
        let first = match (&region, augur_param::regions::threshold_of(resolved)) {
            (Some(reg), Some(th)) if region_only => augur_param::regions::analyse(
                &model,
                &mut checker,
                resolved,
                &th,
                reg,
                p.refine,
                None,
            )
            .map(|a| {
                let mut values = vec![None; model.model.dtmc().num_states()];
                values[init] = a.function.clone();
                analysis = Some(a);
                augur_param::ParamOutcome {
                    values,
                    threshold: Some(th),
                    is_probability: matches!(
                        resolved.formula,
                        augur_pctl::resolve::ResolvedFormula::Prob { .. }
                    ),
                }
            }),
            _ => checker.check(resolved),
        };
        let outcome = match first {
            Ok(o) => o,
            Err(e) => {
                failed = true;
                let d = e.diagnostic();
                crate::error::diag(format_args!("{}", d.render().trim_end()));
                results.push(json!({"name": item.name, "property": item.text, "error": d.message}));
                continue;
            }
        };
        let seconds = t0.elapsed().as_secs_f64();
        let value = outcome.values.get(init).cloned().flatten();
        let mut entry = json!({
            "name": item.name,
            "property": item.text,
            "method": "state elimination (parametric)",
            "seconds": seconds,
        });
        match &value {
            Some(PValue::Func(f)) => {
                let (n, d) = f.integer_form();
                entry["function"] = json!(f.display(&names).to_string());
                entry["numerator"] = coefficients(&n);
                entry["denominator"] = coefficients(&d);
                entry["value"] = f
                    .as_constant()
                    .map_or(Json::Null, |q| json!(augur_ratfun::rational_f64(&q)));
            }
            Some(PValue::Infinity) => {
                entry["function"] = json!("Infinity");
                entry["value"] = json!("inf");
            }
            None => {}
        }
        if args.all_states {
            entry["states"] = Json::Array(
                outcome
                    .values
                    .iter()
                    .map(|v| match v {
                        Some(PValue::Func(f)) => json!(f.display(&names).to_string()),
                        Some(PValue::Infinity) => json!("Infinity"),
                        None => Json::Null,
                    })
                    .collect(),
            );
        }
        let mut text = match &value {
            None if analysis.is_some() => format!(
                "{} (its function was not needed: parameter lifting decided the region)",
                item.text
            ),
            _ => format!("{} = {}", item.text, show(&value, &names)),
        };
        if let Some(dir) = p.optimize {
            let reg = region.clone().unwrap_or_else(|| Region::of(&model.params));
            match &value {
                Some(PValue::Func(f)) => {
                    let o = augur_param::optimize::optimize(
                        f,
                        &reg,
                        dir == Direction::Max,
                        p.param_epsilon,
                    );
                    text.push_str(&format!(
                        "\n  {} over {} = {} at {} (the optimum is within [{}, {}])",
                        if dir == Direction::Max { "max" } else { "min" },
                        reg.text(&names),
                        augur_source::number::exact(o.value),
                        augur_param::space::point_text(&o.point, &names),
                        augur_source::number::exact(o.bound.0),
                        augur_source::number::exact(o.bound.1),
                    ));
                    entry["optimum"] = json!({
                        "direction": if dir == Direction::Max { "max" } else { "min" },
                        "value": o.value,
                        "point": o.point.iter().zip(&names).map(|(v, n)| (n.clone(), json!(augur_ratfun::rational_text(v)))).collect::<serde_json::Map<_, _>>(),
                        "bounds": [o.bound.0, o.bound.1],
                    });
                }
                _ => text.push_str("\n  (no optimum: the value is infinite)"),
            }
        }
        if let (Some(reg), Some(th)) = (&region, &outcome.threshold) {
            let analysis = match analysis.take() {
                Some(a) => a,
                None => augur_param::regions::analyse(
                    &model,
                    &mut checker,
                    resolved,
                    th,
                    reg,
                    p.refine,
                    value.clone(),
                )
                .map_err(param_error)?,
            };
            text.push_str(&analysis.text(&names));
            entry["region"] = analysis.json(&names);
            if let Some(svg) = &p.region_svg {
                let doc = analysis.svg(&names, reg).map_err(param_error)?;
                std::fs::write(svg, doc).map_err(|e| {
                    CliError::user(format!("error: cannot write {}: {e}", svg.display()))
                })?;
            }
        } else if region.is_some() {
            text.push_str("\n  (--region decides properties with a bound, e.g. P<=0.01 [ ... ])");
        }
        if args.all_states && !args.opts.load.json {
            for (s, v) in outcome.values.iter().enumerate() {
                let st = model
                    .model
                    .dtmc()
                    .describe_state(s)
                    .unwrap_or_else(|| s.to_string());
                text.push_str(&format!("\n  {st}: {}", show(v, &names)));
            }
        }
        if !args.opts.load.json {
            writeln!(out, "{text}")?;
        }
        results.push(entry);
    }
    if args.opts.load.json {
        let d = model.model.dtmc();
        let doc = json!({
            "schema_version": 1,
            "model": {
                "states": d.num_states(),
                "transitions": d.num_transitions(),
                "initial": d.initial,
                "build_seconds": build_seconds,
                "parameters": model.params.iter().map(|p| json!({
                    "name": p.name,
                    "lo": augur_ratfun::rational_text(&p.lo),
                    "hi": augur_ratfun::rational_text(&p.hi),
                })).collect::<Vec<_>>(),
            },
            "results": results,
        });
        writeln!(out, "{}", serde_json::to_string(&doc)?)?;
    }
    if failed {
        return Err(CliError::User(String::new()));
    }
    Ok(())
}

fn show(v: &Option<PValue>, names: &[String]) -> String {
    match v {
        Some(PValue::Func(f)) => f.display(names).to_string(),
        Some(PValue::Infinity) => "Infinity".into(),
        None => "-".into(),
    }
}

/// A polynomial as a list of `{"coefficient": "-2", "exponents": [1, 0]}`.
fn coefficients(p: &IntPoly) -> Json {
    Json::Array(
        p.terms
            .iter()
            .map(|(e, c)| json!({"coefficient": c.to_string(), "exponents": e}))
            .collect(),
    )
}

/// `augur export MODEL --param p,q --to drn`: the parametric chain as DRN, its transitions'
/// functions written out (`@parameters`).
pub fn export(args: &crate::export_cmd::ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.to != "drn" {
        return Err(CliError::user(format!(
            "error: --to {}: a parametric model is written as DRN (--to drn), the format with parameters",
            args.to
        )));
    }
    let (_, load) = args.opts.resolve(false)?;
    let params = parse_params(&args.param).map_err(param_error)?;
    let model = ParametricModel::load(&args.model, params, &load).map_err(param_error)?;
    for w in &model.warnings {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let values = augur_ratfun::ParametricValues {
        params: model.names(),
        transitions: model.transitions.clone(),
        state_rewards: model.state_rewards.clone(),
        transition_rewards: model.transition_rewards.clone(),
    };
    let mut text = Vec::new();
    augur_formats::param::write_drn(model.model.dtmc(), &values, &mut text)
        .map_err(|e| CliError::user(format!("error: {e}")))?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| {
                CliError::user(format!("error: cannot write {}: {e}", path.display()))
            })?;
            writeln!(out, "wrote {}", path.display())?;
        }
        None => out.write_all(&text)?,
    }
    Ok(())
}
