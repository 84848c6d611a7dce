//! Loading a model by file name (format by extension) or from text: the one place where every
//! model format and reader (`augur-formats`, `augur-prism`) is wired.

use crate::constants::Constants;
use crate::error::{CheckError, Result, Stop};
use crate::limits::{Limits, Progress};
use augur_dtmc::{BuildReport, Dtmc};
use augur_expr::{Expr, Value};
use augur_formats::{FormatError, ReadOptions};
use augur_pctl::{BigRational, ModelNames};
use augur_prism::{BuildOptions, BuildProgress, PrismError, StopReason};
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use augur_formats::Format;

/// How to load a model.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Values of the model's undefined constants (PRISM-language models).
    pub constants: Constants,
    /// Read the model's numbers as exact rationals and fill `Dtmc::exact` (for
    /// `Method::Exact`).
    pub exact: bool,
    /// Give deadlock states a self-loop (default, with a warning) instead of failing.
    pub fix_deadlocks: bool,
    /// Time, state and cancellation limits of the load.
    pub limits: Limits,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            constants: Constants::default(),
            exact: false,
            fix_deadlocks: true,
            limits: Limits::default(),
        }
    }
}

/// A model ready to check: the DTMC and what properties may use besides it (the model's
/// constants and, for PRISM-language models, its formulas). `Send + Sync`: a server may hold
/// one and check it from several threads.
#[derive(Clone, Debug)]
pub struct Model {
    dtmc: Dtmc,
    name: String,
    format: Option<Format>,
    constants: Vec<(String, Value)>,
    /// Under `--method exact`, the exact rationals of the model's real constants.
    exact_constants: Vec<(String, BigRational)>,
    prism: Option<augur_prism::PrismModel>,
    build_seconds: f64,
    notes: Vec<String>,
    warnings: Vec<String>,
    /// A `.tra` model read without a `.lab` beside it: the `.lab` path looked for.
    missing_lab: Option<String>,
}

fn report_notes(r: &BuildReport) -> Vec<String> {
    let mut notes = Vec::new();
    if !r.deadlocks_fixed.is_empty() {
        notes.push(format!(
            "{} state(s) without successors got a self-loop (first: {})",
            r.deadlocks_fixed.len(),
            r.deadlocks_fixed[0]
        ));
    }
    if r.duplicates_merged > 0 {
        notes.push(format!(
            "{} duplicate transition(s) merged by summing",
            r.duplicates_merged
        ));
    }
    notes
}

/// The reader's options under `limits`: its state limit, and its limit on the transitions of
/// a learned model's implicit rows (the reader's default unless `limits` sets one).
fn read_options(limits: &crate::Limits) -> ReadOptions {
    let default = ReadOptions::default();
    ReadOptions {
        max_states: limits.max_states,
        max_smoothed_transitions: limits
            .max_smoothed_transitions
            .or(default.max_smoothed_transitions),
        ..default
    }
}

/// The texts of a PRISM explicit model's files ([`Model::from_explicit_texts`]). The `.tra`
/// is required, so there is no `Default`: start from [`ExplicitTexts::new`] and set the
/// companions that exist.
#[derive(Clone, Copy, Debug)]
pub struct ExplicitTexts<'a> {
    /// The `.tra` file: the header line (states, transitions), then `source target
    /// probability` lines. The only one required.
    pub tra: &'a str,
    /// The `.lab` file: the label declarations (`0="init" 1="deadlock" ...`), then
    /// `state: label ...` lines. Without it the initial state is state 0, as in PRISM, and
    /// the model has no labels of its own.
    pub lab: Option<&'a str>,
    /// The `.srew` file: state rewards (`state reward` lines), read with `trew` as one reward
    /// structure (named when a `# Reward structure "name"` comment names it).
    pub srew: Option<&'a str>,
    /// The `.trew` file: transition rewards (`source target reward` lines), in the same
    /// reward structure as `srew`.
    pub trew: Option<&'a str>,
    /// The `.sta` file: the variables' names and each state's values, so that properties
    /// may use expressions over variables and messages name states by them.
    pub sta: Option<&'a str>,
}

impl<'a> ExplicitTexts<'a> {
    /// The texts of a model given by its `.tra` alone (no labels, rewards or variables);
    /// set the companions that exist.
    ///
    /// ```
    /// use augur_check::{CheckOptions, CheckSession, ExplicitTexts, LoadOptions, Model};
    /// // State 0 moves to 1 with 0.3 and to 2 with 0.7; both are absorbing.
    /// let texts = ExplicitTexts {
    ///     lab: Some("0=\"init\" 1=\"goal\"\n0: 0\n1: 1\n"),
    ///     ..ExplicitTexts::new("3 4\n0 1 0.3\n0 2 0.7\n1 1 1\n2 2 1\n")
    /// };
    /// let model = Model::from_explicit_texts("coin.tra", texts, &LoadOptions::default()).unwrap();
    /// let mut session = CheckSession::new(&model, CheckOptions::default());
    /// let result = session.check_str("P=? [ F \"goal\" ]").unwrap();
    /// let augur_check::Scalar::Num(p) = result.value else { panic!("a probability") };
    /// assert!((p - 0.3).abs() < 1e-9);
    /// ```
    pub const fn new(tra: &'a str) -> Self {
        ExplicitTexts {
            tra,
            lab: None,
            srew: None,
            trew: None,
            sta: None,
        }
    }
}

impl Model {
    /// Loads the model at `path`, chosen by extension: `.tra` (with the `.lab/.srew/.trew/.sta`
    /// of the same stem), `.drn`, `.json`; `.pm`/`.prism` (PRISM language, with
    /// `opts.constants` for its undefined constants).
    pub fn load(path: &Path, opts: &LoadOptions) -> Result<Model> {
        let start = Instant::now();
        let name = path.display().to_string();
        let model = match Format::from_path(path) {
            Some(Format::Prism) => {
                let text = crate::read_text(path)?;
                load_prism(&name, &text, opts, start)?
            }
            Some(format @ (Format::Tra | Format::Drn | Format::Json)) => {
                // Explicit files always get their deadlocks fixed (with a note), as before:
                // `fix_deadlocks` concerns PRISM-language models.
                let read_opts = read_options(&opts.limits);
                let (dtmc, report) =
                    augur_formats::read_model(path, &read_opts).map_err(format_error)?;
                let mut model = match opts.exact {
                    true => explicit(dtmc, &report, name, format, start).exact_if(true),
                    false => explicit(dtmc, &report, name, format, start).exact_inputs_if_small(),
                };
                let lab = path.with_extension("lab");
                if format == Format::Tra && !lab.exists() {
                    model.warnings.push(format!(
                        "{}: no {} beside it: the model has only the labels \"init\" and \"deadlock\"",
                        model.name,
                        lab.display()
                    ));
                    model.missing_lab = Some(lab.display().to_string());
                }
                model
            }
            _ => {
                return Err(CheckError::input(format!(
                    "{name}: unknown model format (expected .tra, .drn, .json, .pm or .prism)"
                )))
            }
        };
        model.within(&opts.limits)
    }

    /// Reads a model from its text (e.g. an MCP request's `model_text`) in the given format
    /// (`Prism`, `Drn`, `Json`, or `Tra` without companion files); `name` is shown in
    /// messages.
    pub fn from_text(name: &str, text: &str, format: Format, opts: &LoadOptions) -> Result<Model> {
        let start = Instant::now();
        let read_opts = read_options(&opts.limits);
        let path = Path::new(name);
        let input = format_error;
        let model = match format {
            Format::Prism => load_prism(name, text, opts, start)?,
            _ if opts.exact => {
                let exact = LoadOptions {
                    exact: false,
                    ..opts.clone()
                };
                return Ok(Model::from_text(name, text, format, &exact)?.exact_if(true));
            }
            Format::Drn => {
                let (d, r) = augur_formats::drn::read_drn(Cursor::new(text), path, &read_opts)
                    .map_err(input)?;
                explicit(d, &r, name.into(), format, start).exact_inputs_if_small()
            }
            Format::Json => {
                let (d, r) = augur_formats::json::read_json(Cursor::new(text), path, &read_opts)
                    .map_err(input)?;
                explicit(d, &r, name.into(), format, start).exact_inputs_if_small()
            }
            Format::Tra => {
                let mut tra = Cursor::new(text);
                let inputs = augur_formats::explicit::ExplicitInputs {
                    tra: (path, &mut tra),
                    lab: None,
                    srew: None,
                    trew: None,
                    sta: None,
                };
                let (d, r) = augur_formats::explicit::read_prism_explicit_from(inputs, &read_opts)
                    .map_err(input)?;
                explicit(d, &r, name.into(), format, start).exact_inputs_if_small()
            }
            Format::Dot => {
                return Err(CheckError::input(format!(
                    "{name}: DOT is an output format only"
                )))
            }
        };
        model.within(&opts.limits)
    }

    /// Reads a PRISM explicit model from the texts of its files (a model built into the
    /// binary, say): the `.tra` named `name` and the companions given ([`ExplicitTexts`]),
    /// each named in messages by `name` with its own extension.
    pub fn from_explicit_texts(
        name: &str,
        texts: ExplicitTexts<'_>,
        opts: &LoadOptions,
    ) -> Result<Model> {
        let start = Instant::now();
        let read_opts = read_options(&opts.limits);
        let path = Path::new(name);
        let paths = ["lab", "srew", "trew", "sta"].map(|e| path.with_extension(e));
        let (mut lab, mut srew, mut trew, mut sta) = (
            texts.lab.map(Cursor::new),
            texts.srew.map(Cursor::new),
            texts.trew.map(Cursor::new),
            texts.sta.map(Cursor::new),
        );
        fn dynr<'a>(
            path: &'a Path,
            r: &'a mut Option<Cursor<&str>>,
        ) -> Option<(&'a Path, &'a mut dyn std::io::BufRead)> {
            r.as_mut().map(|r| (path, r as &mut dyn std::io::BufRead))
        }
        let mut tra = Cursor::new(texts.tra);
        let inputs = augur_formats::explicit::ExplicitInputs {
            tra: (path, &mut tra),
            lab: dynr(&paths[0], &mut lab),
            srew: dynr(&paths[1], &mut srew),
            trew: dynr(&paths[2], &mut trew),
            sta: dynr(&paths[3], &mut sta),
        };
        let (d, r) = augur_formats::explicit::read_prism_explicit_from(inputs, &read_opts)
            .map_err(format_error)?;
        let model = explicit(d, &r, name.into(), Format::Tra, start);
        let model = match opts.exact {
            true => model.exact_if(true),
            false => model.exact_inputs_if_small(),
        };
        model.within(&opts.limits)
    }

    /// A model made in code (a learned chain, a test): no constants, no formulas.
    pub fn from_dtmc(dtmc: Dtmc) -> Model {
        Model {
            dtmc,
            name: "<model>".into(),
            format: None,
            constants: Vec::new(),
            exact_constants: Vec::new(),
            prism: None,
            build_seconds: 0.0,
            notes: Vec::new(),
            warnings: Vec::new(),
            missing_lab: None,
        }
    }

    /// A small explicit model in the default mode (see [`EXACT_INPUTS_MAX`]): its probabilities
    /// as written, when every row's decimals sum to exactly 1; otherwise it keeps its doubles
    /// only (a learned model's thirds, say), silently.
    fn exact_inputs_if_small(mut self) -> Model {
        if self.dtmc.exact.is_some() || self.dtmc.matrix.nnz() > EXACT_INPUTS_MAX {
            return self;
        }
        if let Some((q, off)) = decimal_probabilities(&self.dtmc.matrix) {
            if off.is_empty() {
                self.dtmc.exact = Some(q);
            }
        }
        self
    }

    /// An explicit model under exact mode: each probability is the decimal it is written as
    /// (the shortest decimal of its `f64`: `0.1` is 1/10, as the readers read the text), so
    /// that exact results are exact for the numbers in the file. A row whose decimals do not
    /// sum to exactly 1 is solved as written, with a warning.
    fn exact_if(mut self, exact: bool) -> Model {
        if !exact || self.dtmc.exact.is_some() {
            return self;
        }
        let Some((q, off)) = decimal_probabilities(&self.dtmc.matrix) else {
            return self;
        };
        if let Some((s, sum)) = off.first() {
            self.warnings.push(format!(
                "exact mode: the probabilities of {} state(s) do not sum to exactly 1 as written \
                 (first: state {s}, sum {sum}); the exact results are those of the numbers as written",
                off.len()
            ));
        }
        self.dtmc.exact = Some(q);
        self
    }

    /// The same model named `name` (shown in messages).
    pub fn named(mut self, name: impl Into<String>) -> Model {
        self.name = name.into();
        self
    }

    /// Fails when the model has more states than `limits` allow (explicit readers read the
    /// whole file first).
    fn within(self, limits: &Limits) -> Result<Model> {
        match limits.max_states {
            Some(max) if self.dtmc.num_states() > max => {
                Err(CheckError::Stopped(Stop::TooManyStates {
                    limit: max,
                    states: self.dtmc.num_states(),
                    explored: self.dtmc.num_states(),
                }))
            }
            _ => Ok(self),
        }
    }

    /// Fails, naming `what`, when the model is an interval DTMC: simulation, horizon tables and
    /// monitor tables need one chain, and silently taking one resolution of the intervals would
    /// answer for a chain the user did not give.
    pub fn require_point(&self, what: &str) -> Result<()> {
        if self.dtmc.is_interval() {
            return Err(CheckError::input(format!(
                "{}: an interval DTMC (probabilities in [lo, hi]) has no single chain for {what}; \
                 check it with Pmin/Pmax (docs/robust.md)",
                self.name
            )));
        }
        Ok(())
    }

    /// The DTMC.
    pub fn dtmc(&self) -> &Dtmc {
        &self.dtmc
    }

    /// The DTMC, consuming the model.
    pub fn into_dtmc(self) -> Dtmc {
        self.dtmc
    }

    /// The name shown in messages (the file name as given).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The format it was read from (`None` for a model made in code).
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Values of the model's constants (PRISM-language models), usable in properties.
    pub fn constants(&self) -> &[(String, Value)] {
        &self.constants
    }

    /// Under `--method exact`, the exact rational of each of the model's real constants
    /// (`const double q = 1/3;` is 1/3), for properties that name them.
    pub fn exact_constants(&self) -> &[(String, BigRational)] {
        &self.exact_constants
    }

    /// Seconds spent reading and building.
    pub fn build_seconds(&self) -> f64 {
        self.build_seconds
    }

    /// Remarks about the build (deadlocks fixed, entries merged).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Warnings of the PRISM build (deadlocks, several enabled choices).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// For a `.tra` model read without its `.lab`: the `.lab` path that was looked for (an
    /// unknown label is then most likely in that missing file).
    pub fn missing_lab(&self) -> Option<&str> {
        self.missing_lab.as_deref()
    }

    /// The PRISM model, for PRISM-language models.
    pub fn prism(&self) -> Option<&augur_prism::PrismModel> {
        self.prism.as_ref()
    }

    /// Replaces the model's formulas (PRISM `formula` definitions) in `e` by their bodies.
    pub fn expand_formulas(&self, e: &Expr) -> Expr {
        match &self.prism {
            Some(m) if !m.formulas().is_empty() => m.expand_formulas(e),
            _ => e.clone(),
        }
    }

    /// What a property may name: [`Model::names`], and the model's formulas with their types
    /// as if they were variables (a formula too large to write out in a property is left there
    /// by name, and evaluated per state by [`Model::formula_values`]; the others are written
    /// out before the names are looked up). A formula that does not compile is left out.
    pub fn property_names(&self) -> ModelNames {
        let mut names = self.names();
        if let (Some(prism), Some(_)) = (&self.prism, &self.dtmc.valuations) {
            names.variables.extend(prism.formula_types(&self.constants));
            names.ranges = prism.variable_ranges(&self.constants);
        }
        names
    }

    /// The value of the model's formula `name` in every state (`None` when the model has no
    /// such formula, or no valuations); an error is a message.
    pub fn formula_values(&self, name: &str) -> Option<std::result::Result<Vec<Value>, String>> {
        let prism = self.prism.as_ref()?;
        prism.formula_values(name, &self.constants, self.dtmc.valuations.as_ref()?)
    }

    /// Why [`Model::expand_formulas`] left the name `name` in an expression: for a formula of
    /// the model, too large to write out in a property (the message says so and suggests a
    /// label); `None` for other names.
    pub fn unexpanded_formula_message(&self, name: &str) -> Option<String> {
        let prism = self.prism.as_ref()?;
        match prism.formula_type(name, &self.constants)? {
            // Why it is not among the property's names (see `Model::property_names`).
            Err(e) => Some(e),
            Ok(_) => prism.unexpanded_formula_message(name),
        }
    }

    /// Writes the model in `format` to a stream (for [`Format::Tra`] the `.tra` part only; see
    /// [`Model::write_to_path`]). A model that the format cannot express is a user error.
    pub fn write(&self, format: Format, w: &mut dyn Write) -> Result<()> {
        augur_formats::refuse_intervals(&self.dtmc, format).map_err(format_error)?;
        let written = if format == Format::Prism {
            augur_formats::prism_export::write_prism_with(&self.dtmc, &self.prism_source(), w)
        } else {
            augur_formats::write_model(&self.dtmc, format, w)
        };
        written.map_err(|e| match e {
            FormatError::Write(io) => CheckError::Write(io),
            e => format_error(e),
        })
    }

    /// Writes the model in `format` to `path` (for [`Format::Tra`] also the `.lab`, `.srew`,
    /// `.trew` and `.sta` files next to it); returns the files written.
    pub fn write_to_path(&self, format: Format, path: &Path) -> Result<Vec<PathBuf>> {
        augur_formats::refuse_intervals(&self.dtmc, format).map_err(format_error)?;
        if format == Format::Prism {
            let io_err = |e| {
                format_error(FormatError::Io {
                    path: path.to_path_buf(),
                    source: e,
                })
            };
            let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io_err)?);
            augur_formats::prism_export::write_prism_with(&self.dtmc, &self.prism_source(), &mut w)
                .map_err(format_error)?;
            w.flush().map_err(io_err)?;
            return Ok(vec![path.to_path_buf()]);
        }
        augur_formats::write_model_to_path(&self.dtmc, format, path).map_err(format_error)
    }

    /// The constants and formulas a PRISM export keeps (so that the source's properties still
    /// parse on the export).
    /// The constants and formulas a PRISM export of this model (or of a sub-chain of it)
    /// writes beside its states.
    pub fn prism_source(&self) -> augur_formats::prism_export::PrismSource {
        augur_formats::prism_export::PrismSource {
            constants: self.constants.clone(),
            formulas: self
                .prism
                .as_ref()
                .map(|m| {
                    m.formulas()
                        .into_iter()
                        .map(|(n, e)| (n, e.to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// What a property may name in the model: labels, variables and reward structures.
    pub fn names(&self) -> ModelNames {
        names_of(&self.dtmc)
    }
}

/// What a property may name in `dtmc`.
pub(crate) fn names_of(dtmc: &Dtmc) -> ModelNames {
    ModelNames {
        labels: dtmc.labels.iter().map(|(n, _)| n.clone()).collect(),
        variables: dtmc
            .valuations
            .as_ref()
            .map(|v| {
                v.names
                    .iter()
                    .cloned()
                    .zip(v.types.iter().copied())
                    .collect()
            })
            .unwrap_or_default(),
        reward_structures: dtmc
            .rewards
            .iter()
            .map(|r| r.name.clone().unwrap_or_default())
            .collect(),
        ranges: Vec::new(),
    }
}

fn explicit(
    dtmc: Dtmc,
    report: &BuildReport,
    name: String,
    format: Format,
    start: Instant,
) -> Model {
    Model {
        dtmc,
        name,
        format: Some(format),
        constants: Vec::new(),
        exact_constants: Vec::new(),
        prism: None,
        build_seconds: start.elapsed().as_secs_f64(),
        notes: report_notes(report),
        warnings: Vec::new(),
        missing_lab: None,
    }
}

/// A row and the sum of its probabilities.
type RowSum = (usize, BigRational);

/// The probabilities of `m` as the decimals they print as (`0.1` is 1/10), and the rows whose
/// decimals do not sum to exactly 1 (with their sums); `None` when one is not finite.
fn decimal_probabilities(m: &augur_dtmc::Matrix) -> Option<(Vec<BigRational>, Vec<RowSum>)> {
    let q: Vec<_> = m
        .data()
        .iter()
        .map(|&p| augur_prism::eval::decimal_rational(p))
        .collect::<Option<_>>()?;
    let ptr = m.indptr();
    let ptr = ptr.raw_storage();
    let one = BigRational::from_integer(1.into());
    let mut off = Vec::new();
    for s in 0..m.rows() {
        let sum: BigRational = q[ptr[s] as usize..ptr[s + 1] as usize].iter().sum();
        if sum != one {
            off.push((s, sum));
        }
    }
    Some((q, off))
}

/// A model with at most this many transitions also carries its exact probabilities in the
/// default mode (a PRISM model is built a second time, exactly: milliseconds at this size; an
/// explicit one reads its decimals as written when each row sums to exactly 1). The default
/// method solves systems of at most 1,000 unknowns by exact elimination, and its bounds are
/// the outward rounding of the rational it finds, one ulp wide: with the doubles of `0.7` and
/// `0.091` that rational is the value of a slightly different chain, and the bounds missed
/// the model's value (haddad-monmege.20: [0.7, 0.7] for 7/10; crowds.3-5 by 3e-17).
const EXACT_INPUTS_MAX: usize = 50_000;

fn load_prism(name: &str, text: &str, opts: &LoadOptions, start: Instant) -> Result<Model> {
    // A UTF-8 byte-order mark (Windows editors), which every other reader accepts too.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let model = augur_prism::parse_model(text, name).map_err(prism_error)?;
    let limits = &opts.limits;
    let progress = |p: BuildProgress| {
        limits.report(Progress::Building {
            states: p.states,
            explored: p.explored,
            transitions: p.transitions,
            done: p.done,
        })
    };
    let progress: Option<&(dyn Fn(BuildProgress) + Sync)> = match limits.progress {
        Some(_) => Some(&progress),
        None => None,
    };
    let exact_constants: Vec<(String, BigRational)> = opts
        .constants
        .exact()
        .iter()
        .map(|(n, q)| (n.clone(), q.clone()))
        .collect();
    let build_opts = BuildOptions {
        exact: opts.exact,
        exact_constants: &exact_constants,
        fix_deadlocks: opts.fix_deadlocks,
        valuations: true,
        progress,
        max_states: limits.max_states,
        deadline: limits.deadline_from_now(),
        cancel: Some(&limits.cancel_flag),
    };
    let (dtmc, report) = model
        .build(opts.constants.as_slice(), &build_opts)
        .map_err(|e| match e {
            PrismError::Stopped {
                reason,
                states,
                explored,
            } => match reason {
                StopReason::MaxStates(limit) => CheckError::Stopped(Stop::TooManyStates {
                    limit,
                    states,
                    explored,
                }),
                StopReason::Deadline => limits.timeout_error(),
                StopReason::Cancelled => CheckError::Stopped(Stop::Cancelled),
            },
            e => prism_error(e),
        })?;
    let mut dtmc = dtmc;
    if !opts.exact && dtmc.matrix.nnz() <= EXACT_INPUTS_MAX {
        // A small model is built again with exact probabilities, for the default method's
        // exact elimination (see `EXACT_INPUTS_MAX`); kept only if it has the same states and
        // transitions in the same order (a model whose numbers have no exact reading, e.g.
        // `sqrt`, keeps its doubles only).
        let exact_opts = BuildOptions {
            exact: true,
            progress: None,
            ..build_opts
        };
        if let Ok((d, _)) = model.build(opts.constants.as_slice(), &exact_opts) {
            let same = d.matrix.indptr().raw_storage() == dtmc.matrix.indptr().raw_storage()
                && d.matrix.indices() == dtmc.matrix.indices();
            if same {
                dtmc.exact = d.exact;
            }
        }
    }
    Ok(Model {
        dtmc,
        name: name.to_string(),
        format: Some(Format::Prism),
        constants: report.constants.clone(),
        exact_constants: report.exact_constants.clone(),
        prism: Some(model),
        build_seconds: start.elapsed().as_secs_f64(),
        notes: Vec::new(),
        warnings: report
            .warnings
            .iter()
            .map(|w| format!("{name}: {w}"))
            .collect(),
        missing_lab: None,
    })
}

fn prism_error(e: PrismError) -> CheckError {
    match e {
        PrismError::Limit { .. } => CheckError::Internal(e.to_string()),
        e => CheckError::Input(Box::new(e.diagnostic())),
    }
}

/// A reader's or writer's error, located (with its line and caret) when it can be.
fn format_error(e: FormatError) -> CheckError {
    CheckError::Input(Box::new(e.diagnostic()))
}
