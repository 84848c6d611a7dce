//! `augur parse`: parse PCTL properties and print them in canonical form or as JSON.

use crate::error::CliError;
use augur_check::Properties;
use augur_expr::ConstDecl;
use augur_pctl::{LabelDef, Property};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `augur parse`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  augur parse --prop 'P>=0.9 [ F<=5 \"goal\" ]'\n  augur parse model.props --json"
)]
pub struct ParseArgs {
    /// A properties file (PRISM syntax: properties, `const` declarations, `label` definitions).
    pub file: Option<PathBuf>,
    /// A property to parse (repeatable); printed after those of FILE.
    #[arg(long = "prop", value_name = "PCTL")]
    pub props: Vec<String>,
    /// Print the syntax trees as JSON instead of the canonical text.
    #[arg(long)]
    pub json: bool,
}

/// A property in the JSON output: its name, canonical text and syntax tree.
#[derive(Serialize)]
struct JsonProperty<'a> {
    name: Option<&'a str>,
    canonical: String,
    formula: &'a augur_pctl::StateFormula,
}

/// The JSON output of `augur parse --json`.
#[derive(Serialize)]
struct JsonOutput<'a> {
    constants: &'a [ConstDecl],
    labels: &'a [LabelDef],
    properties: Vec<JsonProperty<'a>>,
}

/// Runs `augur parse`, writing to `out`. Everything is parsed before anything is printed.
pub fn run(args: &ParseArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.file.is_none() && args.props.is_empty() {
        return Err(CliError::user(
            "error: nothing to parse: give a properties FILE or --prop 'PCTL'\n(see `augur parse --help`)",
        ));
    }
    let mut props = match &args.file {
        Some(path) => Properties::read_file(path)?,
        None => Properties::new(),
    };
    for (i, text) in args.props.iter().enumerate() {
        let source = if args.props.len() == 1 {
            "--prop".to_string()
        } else {
            format!("--prop #{}", i + 1)
        };
        props.add(&source, text)?;
    }
    let (constants, labels) = (props.constants(), props.labels());
    let properties: Vec<&Property> = props.properties().collect();
    if args.json {
        let output = JsonOutput {
            constants,
            labels,
            properties: properties
                .iter()
                .map(|p| JsonProperty {
                    name: p.name.as_deref(),
                    canonical: p.formula.to_string(),
                    formula: &p.formula,
                })
                .collect(),
        };
        serde_json::to_writer_pretty(&mut *out, &output)?;
        writeln!(out)?;
    } else {
        for p in &properties {
            writeln!(out, "{p}")?;
        }
    }
    Ok(())
}
