//! `augur horizon MODEL --target LABEL --max H [--json]`: the all-horizon table
//! P(F≤h target) for h = 1..H and every state.

use crate::check_cmd::scalar_json;
use crate::failure::Failure;
use crate::model::load_model;
use augur_solver::check::{horizon_table, Scalar};
use clap::Args;
use serde_json::{json, Value as Json};
use std::path::PathBuf;

/// Arguments of `augur horizon`.
#[derive(Args, Debug)]
pub struct HorizonArgs {
    /// The model (.tra, .drn, .json, .pm/.prism).
    pub model: PathBuf,
    /// The target label (with or without quotes).
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
pub fn run(args: &HorizonArgs) -> Result<(), Failure> {
    let loaded = load_model(&args.model, &[])?;
    let dtmc = &loaded.dtmc;
    let name = args.target.trim().trim_matches('"');
    let target = dtmc.label(name).ok_or_else(|| {
        let known: Vec<String> = dtmc
            .labels
            .iter()
            .map(|(n, _)| format!("\"{n}\""))
            .collect();
        Failure::User(format!(
            "{}: unknown label \"{name}\" (the model has: {})",
            args.model.display(),
            if known.is_empty() {
                "no labels".to_string()
            } else {
                known.join(", ")
            }
        ))
    })?;
    let n = dtmc.num_states();
    if args.max_h == 0 {
        return Err(Failure::User("--max must be at least 1".into()));
    }
    if n.checked_mul(args.max_h).is_none_or(|c| c > 200_000_000) {
        return Err(Failure::User(format!(
            "the table would have {n} × {} entries; choose a smaller --max",
            args.max_h
        )));
    }
    let table = horizon_table(&dtmc.matrix, target, args.max_h);
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
        let out = json!({
            "target": name,
            "max": args.max_h,
            "states": n,
            "initial": dtmc.initial,
            "table": rows,
        });
        println!("{out}");
    } else {
        let mut header = String::from("state");
        for h in 1..=args.max_h {
            header.push_str(&format!("\th={h}"));
        }
        println!("{header}");
        for s in 0..n {
            let mut line = s.to_string();
            for h in 1..=args.max_h {
                line.push_str(&format!("\t{}", at(s, h)));
            }
            println!("{line}");
        }
    }
    Ok(())
}
