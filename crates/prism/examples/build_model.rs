//! Builds a PRISM model and prints its size: `build_model FILE [NAME=VALUE,...] [--exact]`.

use augur_expr::Value;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: build_model FILE [NAME=VALUE,...] [--exact]");
        std::process::exit(2);
    };
    let exact = args.iter().any(|a| a == "--exact");
    let consts: Vec<(String, Value)> = args
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .flat_map(|a| a.split(','))
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let v = if let Ok(i) = v.parse::<i64>() {
                Value::Int(i)
            } else if let Ok(f) = v.parse::<f64>() {
                Value::Double(f)
            } else {
                Value::Bool(v == "true")
            };
            Some((k.to_string(), v))
        })
        .collect();
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(1);
        }
    };
    let t0 = Instant::now();
    let model = match augur_prism::parse_model(&text, file) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let t1 = Instant::now();
    let opts = augur_prism::BuildOptions {
        exact,
        ..Default::default()
    };
    match model.build(&consts, &opts) {
        Ok((dtmc, report)) => {
            let t2 = Instant::now();
            println!(
                "states {} transitions {} initial {} parse {:.3}s build {:.3}s",
                dtmc.num_states(),
                dtmc.num_transitions(),
                report.initial_states,
                (t1 - t0).as_secs_f64(),
                (t2 - t1).as_secs_f64()
            );
            for w in &report.warnings {
                println!("warning: {w}");
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
