//! `augur explain MODEL --prop 'P<=θ [ φ U ψ ]' [--paths K] [--from STATE] [--subsystem |
//! --minimal] [--output FILE.pm] [--dot FILE.dot] [--json]`: counterexamples and explanations
//! (glue over `augur-explain`; docs/explain.md).

use crate::error::CliError;
use augur_check::Model;
use augur_explain::{explain, ExplainError, Explanation, Request, SubsystemKind};
use augur_source::number::{approx, exact, within, Approx};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `augur explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The model: .tra (+ .lab/.srew/.trew/.sta), .drn, .json, .pm/.prism.
    pub model: PathBuf,
    /// The property: `P<=θ [ φ U ψ ]`, `P<θ [ F ψ ]` (also `U<=k`, `F<=k`, `P=?`) or
    /// `R{"r"}<=r [ F ψ ]` (or `R=?`).
    #[arg(long = "prop", value_name = "PCTL")]
    pub prop: String,
    /// How many of the most probable paths to list (at most 10,000; with --json at most
    /// 1,000,000 states in all the paths listed, as in Python and MCP).
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub paths: usize,
    /// The start state: an index, or a boolean state formula that holds in one state
    /// (default: the initial state).
    #[arg(long, value_name = "STATE")]
    pub from: Option<String>,
    /// Find a critical subsystem (heuristic: the states ranked by their share of the
    /// probability, added in doubling batches until the sub-chain exceeds, then pruned).
    #[arg(long)]
    pub subsystem: bool,
    /// Find a minimum critical subsystem exactly (small models: branch and bound).
    #[arg(long)]
    pub minimal: bool,
    /// Write the subsystem as a PRISM model to FILE (transitions leaving it go to a sink).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write the subsystem in DOT to FILE, the listed paths highlighted.
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,
    /// At most this many paths are enumerated (to count those needed to exceed the threshold).
    #[arg(long, value_name = "N", default_value_t = augur_explain::DEFAULT_MAX_PATHS)]
    pub max_paths: usize,
    #[command(flatten)]
    pub opts: crate::options::ModelOptions,
}

fn explain_error(e: ExplainError) -> CliError {
    match e {
        ExplainError::Check(c) => c.into(),
        e if e.is_internal() => CliError::Internal(anyhow::anyhow!("{e}")),
        e => e.diagnostic().into(),
    }
}

fn write_file(
    path: &std::path::Path,
    f: impl FnOnce(&mut dyn Write) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let file = std::fs::File::create(path)
        .map_err(|e| CliError::user(format!("error: cannot write {}: {e}", path.display())))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w)?;
    w.flush()
        .map_err(|e| CliError::user(format!("error: cannot write {}: {e}", path.display())))
}

/// Run `augur explain`.
pub fn run(args: &ExplainArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (constants, load, options) = args.opts.resolve()?;
    if args.paths == 0 && !args.subsystem && !args.minimal {
        return Err(CliError::user(
            "error: --paths must be at least 1 (or ask for --subsystem)",
        ));
    }
    let model = Model::load(&args.model, &load)?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let names = crate::check_cmd::learned_state_names(&args.model, model.dtmc().num_states());
    let subsystem = if args.minimal {
        Some(SubsystemKind::Minimal)
    } else if args.subsystem || args.output.is_some() || args.dot.is_some() {
        Some(SubsystemKind::Heuristic)
    } else {
        None
    };
    let request = Request {
        property: args.prop.clone(),
        source_name: "--prop".into(),
        constants,
        paths: args.paths,
        from: args.from.clone(),
        subsystem,
        max_paths: args.max_paths.max(args.paths),
        names: names.clone(),
        options,
        // The text output writes one path at a time, loops folded: only a document (--json)
        // holds every listed state.
        max_listed_states: args
            .opts
            .load
            .json
            .then_some(augur_explain::MAX_LISTED_STATES),
    };
    let explained = explain(&model, &request).map_err(explain_error)?;
    let e = &explained.explanation;
    if let Some(path) = &args.output {
        match explained.write_prism(&model, &mut Vec::new()) {
            None => {
                return Err(CliError::user(format!(
                    "error: --output {}: there is no subsystem to write ({})",
                    path.display(),
                    e.notes.join("; ")
                )))
            }
            Some(_) => write_file(path, |w| {
                explained
                    .write_prism(&model, w)
                    .unwrap_or(Ok(()))
                    .map_err(explain_error)
            })?,
        }
    }
    if let Some(path) = &args.dot {
        match explained.dot(&model, names.as_deref()) {
            None => {
                return Err(CliError::user(format!(
                    "error: --dot {}: there is no subsystem to draw ({})",
                    path.display(),
                    e.notes.join("; ")
                )))
            }
            Some(text) => write_file(path, |w| Ok(w.write_all(text.as_bytes())?))?,
        }
    }
    if args.opts.load.json {
        // Written as it is serialised (the paths' states walked from their shared tree).
        serde_json::to_writer(&mut *out, e)?;
        writeln!(out)?;
        return Ok(());
    }
    print_human(out, e, args)
}

/// A path's probability as text: from its logarithm when it is below the smallest normal
/// double (a product of many transitions underflows; its logarithm does not).
fn probability(p: &augur_explain::PathReport) -> String {
    if p.probability >= f64::MIN_POSITIVE || !p.log10_probability.is_finite() {
        return approx(p.probability);
    }
    let e = p.log10_probability.floor();
    let m = 10f64.powf(p.log10_probability - e);
    // (Rounding may give 10.0: then one more in the exponent.)
    let (m, e) = if format!("{m:.3}").starts_with("10") {
        (1.0, e + 1.0)
    } else {
        (m, e)
    };
    format!("{m:.3}e{e}")
}

fn print_human(out: &mut dyn Write, e: &Explanation, args: &ExplainArgs) -> Result<(), CliError> {
    let what = if e.kind == "reward" { "R" } else { "P" };
    write!(
        out,
        "{} from {}: {what} = {}",
        e.property,
        e.start.name,
        Approx(e.value)
    )?;
    match (&e.threshold, e.violated) {
        (Some(t), Some(true)) => writeln!(out, ", violated (not {} {})", t.op, exact(t.value))?,
        (Some(t), _) => writeln!(out, ", holds ({} {})", t.op, exact(t.value))?,
        _ => writeln!(out)?,
    }
    if !e.paths.is_empty() {
        let title = if e.kind == "reward" {
            format!(
                "The {} paths carrying most of the expected reward (probability × reward, among the {} most probable):",
                e.paths.len(),
                e.rewards.as_ref().map_or(0, |r| r.ranked_paths)
            )
        } else {
            format!("The {} most probable paths:", e.paths.len())
        };
        writeln!(out, "{title}")?;
        let reward = e.kind == "reward";
        let header: Vec<&str> = if reward {
            vec!["#", "probability", "reward", "prob × reward", "path"]
        } else {
            vec!["#", "probability", "cumulative", "path"]
        };
        // The numbers first (to align them), then one row at a time: a path's text is made
        // when its row is written (long paths are walked from the shared tree, loops folded).
        let numbers: Vec<Vec<String>> = e
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut row = vec![(i + 1).to_string(), probability(p)];
                if reward {
                    row.push(approx(p.reward.unwrap_or(0.0)));
                    row.push(approx(p.weight.unwrap_or(0.0)));
                } else {
                    row.push(approx(p.cumulative));
                }
                row
            })
            .collect();
        let columns = header.len() - 1;
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                numbers
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut line = String::new();
        let mut write_row = |cells: &[String], path: &str| -> std::io::Result<()> {
            line.clear();
            line.push_str("  ");
            for (c, cell) in cells.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let pad = widths[c].saturating_sub(cell.chars().count());
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
            line.push_str("  ");
            line.push_str(path);
            writeln!(out, "{}", line.trim_end())
        };
        let head: Vec<String> = header[..columns].iter().map(|h| h.to_string()).collect();
        write_row(&head, header[columns])?;
        let mut states = Vec::new();
        let mut text = String::new();
        for (p, cells) in e.paths.iter().zip(&numbers) {
            p.states.indices_into(&mut states);
            text.clear();
            augur_explain::listing::folded(&states, &|s| p.states.name(s), &mut text);
            write_row(cells, &text)?;
        }
    } else if e.kind == "probability" && args.paths > 0 {
        writeln!(out, "No path satisfies the path formula from this state.")?;
    }
    if let (Some(t), Some(n)) = (&e.threshold, e.paths_to_exceed) {
        let noun = if e.kind == "reward" {
            "paths of largest probability × reward"
        } else {
            "most probable paths"
        };
        writeln!(
            out,
            "Counterexample: the {n} {noun} already exceed {} ({}).",
            exact(t.value),
            if e.kind == "reward" {
                "the fewest of the paths ranked"
            } else {
                "the smallest such set of paths"
            }
        )?;
    }
    if e.kind == "probability" {
        writeln!(
            out,
            "Paths enumerated: {} (probability {}{}).",
            e.paths_enumerated,
            Approx(e.mass_enumerated),
            if e.all_paths { ", all of them" } else { "" }
        )?;
    }
    if let Some(r) = &e.rewards {
        writeln!(
            out,
            "States contributing most of the expected reward \"{}\" (expected visits before the target × one-step reward; total {}):",
            r.structure,
            Approx(r.total)
        )?;
        let mut t = crate::table::new(
            &["state", "reward", "visits", "contribution", "share"],
            &[1, 2, 3, 4],
        );
        for c in &r.states {
            t.add_row(vec![
                c.state.name.clone(),
                approx(c.reward),
                approx(c.visits),
                approx(c.contribution),
                c.share
                    .map_or_else(|| "-".to_string(), |x| format!("{:.1}%", 100.0 * x)),
            ]);
        }
        write!(out, "{}", crate::table::render(&t, "  "))?;
    }
    if let Some(s) = &e.subsystem {
        let how = match s.method {
            "minimal" => format!("a minimum one, exactly, {} subsets evaluated", s.searched),
            _ => format!(
                "grown by each state's share of the probability, {} sub-chains checked",
                s.searched
            ),
        };
        writeln!(
            out,
            "Critical subsystem ({how}): {} states, {} transitions; its probability alone is {} (sound bounds [{}, {}]){}.",
            s.size,
            s.transitions,
            within(s.probability.value, s.probability.lo, s.probability.hi),
            exact(s.probability.lo),
            exact(s.probability.hi),
            match &e.threshold {
                Some(t) if s.exceeds => format!(", above {}", exact(t.value)),
                _ => String::new(),
            }
        )?;
        let list = s.states.iter().map(|x| x.name.as_str()).collect::<Vec<_>>();
        const SHOWN: usize = 20;
        if list.len() <= SHOWN {
            writeln!(out, "  {}", list.join(", "))?;
        } else {
            writeln!(
                out,
                "  {}, ... ({} more)",
                list[..SHOWN].join(", "),
                list.len() - SHOWN
            )?;
        }
        if let Some(p) = &args.output {
            writeln!(
                out,
                "Written as a PRISM model to {} (check it with: augur check {} --prop '...').",
                p.display(),
                p.display()
            )?;
        }
        if let Some(p) = &args.dot {
            writeln!(out, "Drawn in DOT to {}.", p.display())?;
        }
    }
    for n in &e.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}
