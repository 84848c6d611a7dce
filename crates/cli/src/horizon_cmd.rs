//! `augur horizon MODEL --target LABEL --max H [--json]`: the all-horizon table
//! P(F≤h target) for h = 1..H and every state.

use crate::check_cmd::scalar_json;
use crate::error::CliError;
use crate::model::load_model;
use augur_dtmc::StateSet;
use augur_expr::Expr;
use augur_pctl::{parse_property, StateFormula};
use augur_solver::check::{check, horizon_table, CheckContext, Scalar, Values};
use clap::Args;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `augur horizon`.
#[derive(Args, Debug)]
pub struct HorizonArgs {
    /// The model (.tra, .drn, .json, .pm/.prism).
    pub model: PathBuf,
    /// The target: a label (with or without quotes) or a boolean state formula.
    #[arg(long)]
    pub target: String,
    /// The largest horizon H.
    #[arg(long = "max", value_name = "H")]
    pub max_h: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Run `augur horizon`.
pub fn run(args: &HorizonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let loaded = load_model(&args.model, &[])?;
    let dtmc = &loaded.dtmc;
    let name = args.target.trim().trim_matches('"');
    // A label name (quoted or not), or else any boolean state formula (`s>=3 & !"done"`).
    let target: StateSet = match dtmc.label(name) {
        Some(set) => set.clone(),
        None => {
            let text = args.target.as_str();
            let prop =
                parse_property(text).map_err(|e| crate::error::located("--target", text, &e))?;
            // A bare identifier is meant as a label name.
            let formula = match prop.formula {
                StateFormula::Expr(Expr::Ident(id)) => StateFormula::Label(id),
                f => f,
            };
            let values = check(dtmc, &formula, &CheckContext::default()).map_err(|e| {
                CliError::User(format!(
                    "error: {}: --target {text}: {e}",
                    args.model.display()
                ))
            })?;
            match values {
                Values::Bool(set) => set,
                Values::Num { .. } => {
                    return Err(CliError::User(format!(
                        "error: --target {text}: expected a label or a boolean state formula"
                    )))
                }
            }
        }
    };
    let n = dtmc.num_states();
    if args.max_h == 0 {
        return Err(CliError::user("error: --max must be at least 1"));
    }
    if n.checked_mul(args.max_h).is_none_or(|c| c > 200_000_000) {
        return Err(CliError::User(format!(
            "error: the table would have {n} × {} entries; choose a smaller --max",
            args.max_h
        )));
    }
    let table = horizon_table(&dtmc.matrix, &target, args.max_h);
    let at = |s: usize, h: usize| table.get(s, h).unwrap_or(f64::NAN);
    if args.json {
        let rows: Vec<Json> = (0..n)
            .map(|s| {
                Json::Array(
                    (1..=args.max_h)
                        .map(|h| scalar_json(Scalar::Num(at(s, h))))
                        .collect(),
                )
            })
            .collect();
        let doc = json!({
            "target": name,
            "max": args.max_h,
            "states": n,
            "initial": dtmc.initial,
            "table": rows,
        });
        writeln!(out, "{doc}")?;
    } else {
        let mut header = String::from("state");
        for h in 1..=args.max_h {
            header.push_str(&format!("\th={h}"));
        }
        writeln!(out, "{header}")?;
        for s in 0..n {
            let mut line = s.to_string();
            for h in 1..=args.max_h {
                line.push_str(&format!("\t{}", at(s, h)));
            }
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}
