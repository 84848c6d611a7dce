//! `augur check MODEL [PROPS_FILE] [--prop TEXT]... [--const N=3,p=0.5] [--method M]
//! [--epsilon E] [--all-states] [--json] [--timeout S] [--max-states N]`: glue over
//! `augur-check` (loading, constants, properties, checking, the JSON report).

use crate::error::CliError;
use crate::limits::LimitArgs;
use augur_check::{
    CheckOptions, CheckResult, Constants, InitialFilter, LoadOptions, Method, Model, Properties,
    Report, Scalar, Session,
};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

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
    /// Print one JSON object instead of text (schema: docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// PRISM models: fail on a deadlock state instead of giving it a self-loop.
    #[arg(long)]
    pub no_fix_deadlocks: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
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

/// Run `augur check`.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let constants = constants(&args.consts)?;
    if !(args.epsilon > 0.0 && args.epsilon < 1.0) {
        return Err(CliError::User(format!(
            "error: --epsilon must be in (0, 1), got {}",
            args.epsilon
        )));
    }
    let limits = args.limits.limits()?;

    // Properties: the file's, then the --prop ones.
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

    let load = LoadOptions {
        constants: constants.clone(),
        exact: args.method == MethodArg::Exact,
        fix_deadlocks: !args.no_fix_deadlocks,
        limits: limits.clone(),
    };
    let model = Model::load(&args.model, &load)?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let compiled = props.compile(&model, &constants)?;
    let options = CheckOptions {
        method: args.method.into(),
        epsilon: args.epsilon,
        limits,
        ..CheckOptions::default()
    };

    if !args.json {
        for note in model.notes() {
            writeln!(out, "note: {note}")?;
        }
    }
    let mut report = Report::new(&model);
    let mut failures = 0usize;
    let mut internal = false;
    let mut io = Ok(());
    let mut session = Session::new(&model, options);
    session.check_each(&compiled, |_, p, outcome| {
        if let Err(e) = &outcome {
            // Keep going (as PRISM does): report this property, check the others.
            failures += 1;
            internal |= e.is_internal();
            let d = e.diagnostic();
            if d.location.is_some() {
                crate::error::diag(format_args!("{}", d.to_string().trim_end()));
            } else {
                crate::error::diag(format_args!("error: {}: {e}", p.text));
            }
        }
        if args.json {
            report.push(p.name.as_deref(), &p.text, &outcome, args.all_states);
        } else if io.is_ok() {
            io = match &outcome {
                Ok(r) => print_result(out, &model, r, args.all_states),
                Err(e) => writeln!(out, "{} = error ({e})", p.text),
            };
        }
    });
    io?;
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    }
    if failures == 0 {
        return Ok(());
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

fn print_result(
    out: &mut dyn Write,
    model: &Model,
    r: &CheckResult,
    all_states: bool,
) -> std::io::Result<()> {
    let mut line = String::new();
    if let Some(name) = &r.name {
        line.push_str(&format!("{name}: "));
    }
    line.push_str(&format!("{} = {}", r.property, r.value));
    if let Some(b) = r.bounds {
        if Scalar::Num(b.lo) != r.value || Scalar::Num(b.hi) != r.value {
            line.push_str(&format!(" [{}, {}]", Scalar::Num(b.lo), Scalar::Num(b.hi)));
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
    if let Some(p) = &r.printed {
        for (s, v) in p {
            writeln!(out, "  state {s}: {v}")?;
        }
    }
    if all_states {
        let dtmc = model.dtmc();
        for (s, v) in r.states.to_vec(dtmc.num_states()).into_iter().enumerate() {
            match dtmc.describe_state(s) {
                Some(val) => writeln!(out, "  state {s} {val}: {v}")?,
                None => writeln!(out, "  state {s}: {v}")?,
            }
        }
    }
    Ok(())
}
