//! The pest parser of PRISM model files and the static checks that need no constant values.

use crate::ast::*;
use crate::error::{PrismError, Result};
use crate::model::PrismModel;
use augur_expr::syntax::MAX_DEPTH;
use augur_expr::{ConstDecl, Expr, SyntaxError, Type};
use augur_source::SourceFile;
use pest::iterators::Pair;
use pest::Parser;
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(pest_derive::Parser)]
#[grammar = "../../../grammar/expr.pest"]
#[grammar = "../../../grammar/prism.pest"]
struct PrismParser;

augur_expr::expr_builder!();

/// Model types that are recognised but not supported.
const OTHER_MODEL_TYPES: &[&str] = &[
    "mdp",
    "nondeterministic",
    "ctmc",
    "stochastic",
    "pta",
    "pomdp",
    "popta",
    "smg",
    "ctmdp",
];

pub(crate) fn describe(rule: &Rule) -> String {
    match rule {
        Rule::prism_model => "model".into(),
        Rule::model_type => "model type (`dtmc`)".into(),
        Rule::const_decl => "`const`".into(),
        Rule::const_type => "constant type".into(),
        Rule::global_decl => "`global`".into(),
        Rule::var_decl => "variable declaration".into(),
        Rule::var_init => "`init`".into(),
        Rule::var_type | Rule::var_range => "variable type (`[lo..hi]` or `bool`)".into(),
        Rule::module_decl | Rule::renamed_module => "`module`".into(),
        Rule::command => "command".into(),
        Rule::updates | Rule::prob_update | Rule::update => "update".into(),
        Rule::interval_prob => "probability interval `[lo, hi]`".into(),
        Rule::assignment => "assignment `(x'=e)`".into(),
        Rule::renaming => "renaming `old=new`".into(),
        Rule::formula_decl => "`formula`".into(),
        Rule::label_decl => "`label`".into(),
        Rule::quoted_name | Rule::name_text => "name in quotes (`\"name\"`)".into(),
        Rule::rewards_decl => "`rewards`".into(),
        Rule::reward_item => "reward item (`guard : value;`)".into(),
        Rule::reward_action => "`[action]`".into(),
        Rule::init_decl => "`init`".into(),
        Rule::kw_endmodule => "`endmodule`".into(),
        Rule::kw_endrewards => "`endrewards`".into(),
        Rule::kw_endinit => "`endinit`".into(),
        Rule::kw_true => "`true`".into(),
        Rule::kw_bool => "`bool`".into(),
        Rule::kw_init => "`init`".into(),
        Rule::unsupported_block | Rule::unsupported_kw => String::new(),
        Rule::module_open | Rule::module_close => "`module`".into(),
        Rule::module_part => "variable declaration or command".into(),
        Rule::prism_item | Rule::prism_one => {
            "declaration (`const`, `global`, `formula`, `label`, `module`, `rewards`, `init`)"
                .into()
        }
        Rule::unsupported_var_type => "variable type (`[lo..hi]` or `bool`)".into(),
        r => describe_expr_rule(r),
    }
}

/// Line starts of a text, to turn a pest pair's byte offsets into line and column quickly
/// (pest's own `line_col` scans from the start of the input every time): the shared
/// [`SourceFile`] index.
struct LineIndex {
    source: SourceFile,
    /// Where the text being parsed starts in the file (a model is parsed one declaration at a
    /// time, each from its own start).
    base: usize,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        LineIndex {
            source: SourceFile::new("", text),
            base: 0,
        }
    }

    fn span(&self, p: &Pair<'_, Rule>) -> ModelSpan {
        let s = p.as_span();
        let (start, end) = (s.start() + self.base, s.end() + self.base);
        let (line, col) = self.source.line_col(start);
        ModelSpan {
            line,
            col,
            start,
            end,
        }
    }
}

/// `text` after its leading blanks and `//` comments.
fn skip_blanks(text: &str) -> &str {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        match rest.strip_prefix("//") {
            Some(c) => rest = c.split_once('\n').map_or("", |(_, r)| r),
            None => return rest,
        }
    }
}

/// Whether `text` holds only blanks and `//` comments.
fn only_blanks(text: &str) -> bool {
    skip_blanks(text).is_empty()
}

/// Parses a PRISM model file (DTMC) and checks what can be checked without constant values
/// (model type, duplicate names, module renaming, reserved labels).
///
/// ```
/// let m = augur_prism::parse_model("dtmc\nmodule M\n  x : [0..1];\n  [] x=0 -> 0.5:(x'=1) + 0.5:true;\nendmodule\n", "coin.pm").unwrap();
/// let (dtmc, report) = m.build(&[], &augur_prism::BuildOptions::default()).unwrap();
/// assert_eq!((dtmc.num_states(), report.deadlocks), (2, 1));
/// ```
pub fn parse_model(text: &str, file_name: &str) -> Result<PrismModel> {
    parse_model_with(text, file_name, true)
}

/// [`parse_model`], with the fast path for commands ([`crate::fast`]) or pest alone (`fast`
/// false: the reference the fast path is tested against).
pub(crate) fn parse_model_with(text: &str, file_name: &str, fast: bool) -> Result<PrismModel> {
    // pest's error detail is one switch for the whole process, which the expression and
    // property parsers turn on: on here too, so that a model's syntax error reads the same
    // whatever was parsed before it (in a long-lived process, on another thread).
    pest::set_error_detail(true);
    let syntax = |e: SyntaxError| PrismError::at_span(file_name, text, e.span, e.message);
    augur_expr::syntax::check_nesting(text).map_err(syntax)?;
    // The whole model's parse, for its error (the same message whichever declaration fails).
    let whole_error = || -> PrismError {
        match PrismParser::parse(Rule::prism_model, text) {
            Ok(_) => PrismError::at(
                file_name,
                text,
                0,
                "internal error: a declaration does not parse alone",
            ),
            Err(e) => {
                // A model of another type may fail to parse later on; name the real problem.
                if let Some((offset, kw)) = leading_model_type(text) {
                    if OTHER_MODEL_TYPES.contains(&kw.as_str()) {
                        return unsupported_type(file_name, text, offset, &kw);
                    }
                }
                syntax(SyntaxError::from_pest(e, describe))
            }
        }
    };
    let mut b = AstBuilder {
        file: file_name,
        text,
        fast,
        lines: LineIndex::new(text),
        model_type: None,
        constants: Vec::new(),
        globals: Vec::new(),
        modules: Vec::new(),
        renamed: Vec::new(),
        formulas: Vec::new(),
        labels: Vec::new(),
        rewards: Vec::new(),
        init: None,
    };
    // One declaration at a time: the parse tree of one declaration is in memory at once.
    let mut pos = 0;
    loop {
        let rest = &text[pos..];
        if only_blanks(rest) {
            break;
        }
        let open = match skip_blanks(rest).strip_prefix("module") {
            Some(after) if after.starts_with(char::is_whitespace) => {
                PrismParser::parse(Rule::module_open, rest).ok()
            }
            _ => None,
        };
        if let Some(open) = open {
            pos = b.module_by_parts(open, pos).ok_or_else(whole_error)??;
            continue;
        }
        let pairs = PrismParser::parse(Rule::prism_one, rest).map_err(|_| whole_error())?;
        let mut end = pos;
        b.lines.base = pos;
        for top in pairs {
            end = pos + top.as_span().end();
            for item in top.into_inner() {
                b.item(item)?;
            }
        }
        if end <= pos {
            return Err(whole_error());
        }
        pos = end;
    }
    b.lines.base = 0;
    b.finish()
}

fn unsupported_type(file: &str, text: &str, offset: usize, kw: &str) -> PrismError {
    PrismError::at(
        file,
        text,
        offset,
        format!("not supported: `{kw}` models (Augur handles discrete-time Markov chains: `dtmc`)"),
    )
}

/// The first word of the file after comments and whitespace, with its offset.
fn leading_model_type(text: &str) -> Option<(usize, String)> {
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i += text[i..].find('\n').unwrap_or(text.len() - i);
        } else {
            break;
        }
    }
    let word: String = text[i..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if word.is_empty() {
        None
    } else {
        Some((i, word))
    }
}

struct AstBuilder<'a> {
    file: &'a str,
    text: &'a str,
    /// Whether commands are read by the fast path first.
    fast: bool,
    lines: LineIndex,
    model_type: Option<(ModelType, ModelSpan)>,
    constants: Vec<ConstDef>,
    globals: Vec<VarDecl>,
    modules: Vec<Module>,
    renamed: Vec<(usize, RenamedModule)>,
    formulas: Vec<FormulaDef>,
    labels: Vec<ModelLabelDef>,
    rewards: Vec<RewardsDef>,
    init: Option<(Expr, ModelSpan)>,
}

impl AstBuilder<'_> {
    fn err(&self, span: ModelSpan, msg: impl Into<String>) -> PrismError {
        PrismError::at(self.file, self.text, span.start, msg)
    }

    fn expr(&self, p: Pair<'_, Rule>) -> Result<Expr> {
        let base = self.lines.base;
        build_expr(p).map_err(|e| {
            let span = augur_source::Span::new(e.span.start + base, e.span.end + base);
            PrismError::at_span(self.file, self.text, span, e.message)
        })
    }

    fn item(&mut self, p: Pair<'_, Rule>) -> Result<()> {
        let span = self.lines.span(&p);
        match p.as_rule() {
            Rule::EOI => {}
            Rule::model_type => {
                let kw = p.as_str();
                if kw != "dtmc" && kw != "probabilistic" {
                    return Err(unsupported_type(self.file, self.text, span.start, kw));
                }
                if let Some((_, first)) = self.model_type {
                    return Err(self.err(
                        span,
                        format!("second model type (the first is at line {})", first.line),
                    ));
                }
                self.model_type = Some((ModelType::Dtmc, span));
            }
            Rule::const_decl => self.const_decl(p, span)?,
            Rule::global_decl => {
                for q in p.into_inner() {
                    if q.as_rule() == Rule::var_decl {
                        let v = self.var_decl(q)?;
                        self.globals.push(v);
                    }
                }
            }
            Rule::module_decl => self.module_decl(p, span)?,
            Rule::renamed_module => self.renamed_module(p, span)?,
            Rule::formula_decl => {
                let mut name = String::new();
                let mut body = None;
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::ident => name = q.as_str().to_string(),
                        Rule::expr => body = Some(self.expr(q)?),
                        _ => {}
                    }
                }
                let body = body.ok_or_else(|| self.err(span, "formula without a body"))?;
                self.formulas.push(FormulaDef { name, body, span });
            }
            Rule::label_decl => {
                let mut name = String::new();
                let mut body = None;
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::quoted_name => name = quoted(&q),
                        Rule::expr => body = Some(self.expr(q)?),
                        _ => {}
                    }
                }
                let body = body.ok_or_else(|| self.err(span, "label without a definition"))?;
                self.labels.push(ModelLabelDef { name, body, span });
            }
            Rule::rewards_decl => {
                let mut name = None;
                let mut items = Vec::new();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::quoted_name => name = Some(quoted(&q)),
                        Rule::reward_item => items.push(self.reward_item(q)?),
                        _ => {}
                    }
                }
                self.rewards.push(RewardsDef { name, items, span });
            }
            Rule::init_decl => self.init_decl(p, span)?,
            Rule::unsupported_block => {
                let kw = p
                    .into_inner()
                    .next()
                    .map_or(String::new(), |k| k.as_str().to_string());
                let what = match kw.as_str() {
                    "system" => "`system ... endsystem` (process-algebra composition)".to_string(),
                    "rate" => "`rate` (continuous-time models)".to_string(),
                    other => format!("`{other}`"),
                };
                return Err(self.err(span, format!("not supported: {what}")));
            }
            _ => {}
        }
        Ok(())
    }

    /// `const [type] name [= expr];`
    fn const_decl(&mut self, p: Pair<'_, Rule>, span: ModelSpan) -> Result<()> {
        let mut ty = Type::Int;
        let mut name = String::new();
        let mut value = None;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::const_type => {
                    ty = match q.as_str() {
                        "int" => Type::Int,
                        "bool" => Type::Bool,
                        _ => Type::Double,
                    }
                }
                Rule::ident => name = q.as_str().to_string(),
                Rule::expr => value = Some(self.expr(q)?),
                _ => {}
            }
        }
        self.constants.push(ConstDef {
            decl: ConstDecl { name, ty, value },
            span,
        });
        Ok(())
    }

    /// `module name ... endmodule`: its variables and commands.
    /// A module read one variable or command at a time, `open` its `module NAME` parsed at
    /// `pos`: the position after its `endmodule` (`None` when a part does not parse: the
    /// caller reports the whole model's error).
    fn module_by_parts(
        &mut self,
        open: pest::iterators::Pairs<'_, Rule>,
        pos: usize,
    ) -> Option<Result<usize>> {
        let text = self.text;
        let mut name = String::new();
        let (mut start, mut at) = (pos, pos);
        for top in open {
            at = pos + top.as_span().end();
            for q in top.into_inner() {
                match q.as_rule() {
                    Rule::kw_module => start = pos + q.as_span().start(),
                    Rule::ident => name = q.as_str().to_string(),
                    _ => {}
                }
            }
        }
        let (mut vars, mut commands) = (Vec::new(), Vec::new());
        loop {
            let rest = &text[at..];
            let close = match skip_blanks(rest).strip_prefix("endmodule") {
                Some(after)
                    if !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    PrismParser::parse(Rule::module_close, rest).ok()
                }
                _ => None,
            };
            if let Some(close) = close {
                let end = at + close.map(|c| c.as_span().end()).max().unwrap_or(0);
                let (line, col) = self.lines.source.line_col(start);
                self.modules.push(Module {
                    name,
                    vars,
                    commands,
                    span: ModelSpan {
                        line,
                        col,
                        start,
                        end,
                    },
                    renamed_from: None,
                });
                return Some(Ok(end));
            }
            // Most parts are commands, which the fast path reads (pest reads the others, and
            // any command the fast path leaves to it, with pest's messages).
            if let Some((command, s, e)) = self.fast.then(|| crate::fast::command(rest)).flatten() {
                let (line, col) = self.lines.source.line_col(at + s);
                commands.push(Command {
                    span: ModelSpan {
                        line,
                        col,
                        start: at + s,
                        end: at + e,
                    },
                    ..command
                });
                at += e;
                continue;
            }
            let part = PrismParser::parse(Rule::module_part, rest).ok()?;
            self.lines.base = at;
            let mut next = at;
            for top in part {
                next = at + top.as_span().end();
                for q in top.into_inner() {
                    let r = match q.as_rule() {
                        Rule::var_decl => self.var_decl(q).map(|v| vars.push(v)),
                        Rule::command => self.command(q).map(|c| commands.push(c)),
                        _ => Ok(()),
                    };
                    if let Err(e) = r {
                        return Some(Err(e));
                    }
                }
            }
            if next <= at {
                return None;
            }
            at = next;
        }
    }

    fn module_decl(&mut self, p: Pair<'_, Rule>, span: ModelSpan) -> Result<()> {
        let mut name = String::new();
        let mut vars = Vec::new();
        let mut commands = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => name = q.as_str().to_string(),
                Rule::var_decl => vars.push(self.var_decl(q)?),
                Rule::command => commands.push(self.command(q)?),
                _ => {}
            }
        }
        self.modules.push(Module {
            name,
            vars,
            commands,
            span,
            renamed_from: None,
        });
        Ok(())
    }

    /// `module B = A [old=new, ...] endmodule`: a placeholder module, filled in by `finish`.
    fn renamed_module(&mut self, p: Pair<'_, Rule>, span: ModelSpan) -> Result<()> {
        let mut idents = Vec::new();
        let mut renaming = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => idents.push(q.as_str().to_string()),
                Rule::renaming => {
                    let mut it = q.into_inner().map(|x| x.as_str().to_string());
                    if let (Some(a), Some(b)) = (it.next(), it.next()) {
                        renaming.push((a, b));
                    }
                }
                _ => {}
            }
        }
        let mut it = idents.into_iter();
        let (Some(name), Some(base)) = (it.next(), it.next()) else {
            return Err(self.err(span, "malformed module renaming"));
        };
        // Placeholder module, filled in by `finish`.
        self.renamed.push((
            self.modules.len(),
            RenamedModule {
                name: name.clone(),
                base,
                renaming,
                span,
            },
        ));
        self.modules.push(Module {
            name,
            vars: Vec::new(),
            commands: Vec::new(),
            span,
            renamed_from: None,
        });
        Ok(())
    }

    /// `init ... endinit` (at most one).
    fn init_decl(&mut self, p: Pair<'_, Rule>, span: ModelSpan) -> Result<()> {
        if let Some((_, first)) = &self.init {
            return Err(self.err(
                span,
                format!(
                    "second `init ... endinit` block (the first is at line {})",
                    first.line
                ),
            ));
        }
        for q in p.into_inner() {
            if q.as_rule() == Rule::expr {
                self.init = Some((self.expr(q)?, span));
            }
        }
        Ok(())
    }

    fn var_decl(&self, p: Pair<'_, Rule>) -> Result<VarDecl> {
        let span = self.lines.span(&p);
        let mut name = String::new();
        let mut kind = VarType::Bool;
        let mut init = None;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => name = q.as_str().to_string(),
                Rule::var_type => {
                    for t in q.into_inner() {
                        match t.as_rule() {
                            Rule::var_range => {
                                let mut bounds = Vec::new();
                                for b in t.into_inner() {
                                    bounds.push(self.expr(b)?);
                                }
                                let mut it = bounds.into_iter();
                                if let (Some(lo), Some(hi)) = (it.next(), it.next()) {
                                    kind = VarType::Int { lo, hi };
                                }
                            }
                            Rule::kw_bool => kind = VarType::Bool,
                            Rule::unsupported_var_type => {
                                let s = self.lines.span(&t);
                                return Err(self.err(
                                    s,
                                    format!(
                                        "not supported: variables of type `{}` (use a bounded range `[lo..hi]` or `bool`)",
                                        t.as_str()
                                    ),
                                ));
                            }
                            _ => {}
                        }
                    }
                }
                Rule::var_init => {
                    for e in q.into_inner() {
                        if e.as_rule() == Rule::expr {
                            init = Some(self.expr(e)?);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(VarDecl {
            name,
            kind,
            init,
            span,
        })
    }

    fn command(&self, p: Pair<'_, Rule>) -> Result<Command> {
        let span = self.lines.span(&p);
        let mut action = None;
        let mut guard = None;
        let mut updates = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => action = Some(q.as_str().to_string()),
                Rule::expr => guard = Some(self.expr(q)?),
                Rule::updates => {
                    for u in q.into_inner() {
                        match u.as_rule() {
                            Rule::prob_update => {
                                let mut prob = None;
                                let mut upper = None;
                                let mut assignments = Vec::new();
                                for x in u.into_inner() {
                                    match x.as_rule() {
                                        Rule::expr => prob = Some(self.expr(x)?),
                                        Rule::interval_prob => {
                                            let mut b = x.into_inner();
                                            if let (Some(l), Some(h)) = (b.next(), b.next()) {
                                                prob = Some(self.expr(l)?);
                                                upper = Some(self.expr(h)?);
                                            }
                                        }
                                        Rule::update => assignments = self.assignments(x)?,
                                        _ => {}
                                    }
                                }
                                let prob = prob.ok_or_else(|| {
                                    self.err(span, "update without a probability")
                                })?;
                                updates.push(Update {
                                    prob,
                                    upper,
                                    assignments,
                                });
                            }
                            Rule::update => updates.push(Update {
                                prob: Expr::Int(1),
                                upper: None,
                                assignments: self.assignments(u)?,
                            }),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        let guard = guard.ok_or_else(|| self.err(span, "command without a guard"))?;
        Ok(Command {
            action,
            guard,
            updates,
            span,
        })
    }

    fn assignments(&self, p: Pair<'_, Rule>) -> Result<Vec<Assignment>> {
        let mut out = Vec::new();
        for a in p.into_inner() {
            if a.as_rule() != Rule::assignment {
                continue;
            }
            let mut var = String::new();
            let mut value = None;
            for x in a.into_inner() {
                match x.as_rule() {
                    Rule::ident => var = x.as_str().to_string(),
                    Rule::expr => value = Some(self.expr(x)?),
                    _ => {}
                }
            }
            if let Some(value) = value {
                out.push(Assignment { var, value });
            }
        }
        Ok(out)
    }

    fn reward_item(&self, p: Pair<'_, Rule>) -> Result<RewardItem> {
        let span = self.lines.span(&p);
        let mut action = None;
        let mut exprs = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::reward_action => {
                    action = Some(q.into_inner().next().map(|a| a.as_str().to_string()));
                }
                Rule::expr => exprs.push(self.expr(q)?),
                _ => {}
            }
        }
        let mut it = exprs.into_iter();
        let (Some(guard), Some(value)) = (it.next(), it.next()) else {
            return Err(self.err(span, "malformed reward item"));
        };
        Ok(RewardItem {
            action,
            guard,
            value,
            span,
        })
    }

    fn finish(mut self) -> Result<PrismModel> {
        let Some((model_type, _)) = self.model_type else {
            return Err(PrismError::at(
                self.file,
                self.text,
                0,
                "missing model type: add `dtmc` (PRISM would read a file without one as an `mdp`, which Augur does not support)",
            ));
        };
        let sizes = self.check_formula_expansion()?;
        self.expand_renamings(&sizes)?;
        self.check_names()?;
        let ast = ModelAst {
            model_type,
            constants: self.constants,
            globals: self.globals,
            modules: self.modules,
            formulas: self.formulas,
            labels: self.labels,
            rewards: self.rewards,
            init: self.init,
        };
        Ok(PrismModel {
            ast,
            file: self.file.to_string(),
            source: self.text.to_string(),
            formula_sizes: sizes,
        })
    }

    fn expand_renamings(&mut self, sizes: &FxHashMap<String, u64>) -> Result<()> {
        let formulas: FxHashMap<String, Expr> = self
            .formulas
            .iter()
            .map(|f| (f.name.clone(), f.body.clone()))
            .collect();
        // Who uses each formula (formulas using it in their bodies).
        let mut users: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
        for f in &self.formulas {
            visit_idents(&f.body, &mut |n| {
                if formulas.contains_key(n) {
                    users.entry(n).or_default().push(f.name.as_str());
                }
            });
        }
        let mut pending: Vec<(usize, RenamedModule)> = std::mem::take(&mut self.renamed);
        // Resolve in passes so a renamed module may copy another renamed module.
        let mut done: FxHashSet<usize> = (0..self.modules.len())
            .filter(|i| !pending.iter().any(|(j, _)| j == i))
            .collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut still = Vec::new();
            for (slot, r) in pending {
                let base = self.modules.iter().position(|m| m.name == r.base);
                let Some(base) = base else {
                    return Err(self.err(
                        r.span,
                        format!("module `{}` renames unknown module `{}`", r.name, r.base),
                    ));
                };
                if !done.contains(&base) {
                    still.push((slot, r));
                    continue;
                }
                let mut map: FxHashMap<String, String> = FxHashMap::default();
                for (old, new) in &r.renaming {
                    if map.insert(old.clone(), new.clone()).is_some() {
                        return Err(self.err(r.span, format!("`{old}` is renamed twice")));
                    }
                }
                let b = &self.modules[base];
                for v in &b.vars {
                    if !map.contains_key(&v.name) {
                        return Err(self.err(
                            r.span,
                            format!(
                                "module `{}` must rename variable `{}` of module `{}`",
                                r.name, v.name, b.name
                            ),
                        ));
                    }
                }
                // The formulas that (through others) read a renamed name: only these are copied
                // with the renaming applied; the others mean the same in the copy and are kept
                // by name (compiled once, however often they are used).
                let mut affected: FxHashSet<String> = FxHashSet::default();
                let mut todo: Vec<&str> = self
                    .formulas
                    .iter()
                    .filter(|f| {
                        let mut hit = false;
                        visit_idents(&f.body, &mut |n| hit |= map.contains_key(n));
                        hit
                    })
                    .map(|f| f.name.as_str())
                    .collect();
                while let Some(f) = todo.pop() {
                    if affected.insert(f.to_string()) {
                        todo.extend(users.get(f).into_iter().flatten().copied());
                    }
                }
                // A copied formula is written out in full: refuse one too large to copy.
                let mut too_large: Option<String> = None;
                let mut check = |e: &Expr| {
                    visit_idents(e, &mut |n| {
                        if too_large.is_none()
                            && affected.contains(n)
                            && !map.contains_key(n)
                            && sizes.get(n).is_some_and(|&s| s > MAX_FORMULA_EXPANSION)
                        {
                            too_large = Some(n.to_string());
                        }
                    })
                };
                for v in &self.modules[base].vars {
                    if let VarType::Int { lo, hi } = &v.kind {
                        check(lo);
                        check(hi);
                    }
                    if let Some(i) = &v.init {
                        check(i);
                    }
                }
                for c in &self.modules[base].commands {
                    check(&c.guard);
                    for u in &c.updates {
                        check(&u.prob);
                        if let Some(h) = &u.upper {
                            check(h);
                        }
                        u.assignments.iter().for_each(|a| check(&a.value));
                    }
                }
                if let Some(f) = too_large {
                    return Err(self.err(
                        r.span,
                        format!(
                            "module `{}` copies formula `{f}` with names renamed, and its \
                             expansion has more than {MAX_FORMULA_EXPANSION} operators (formulas \
                             used in formulas); write the copy as a module of its own",
                            r.name
                        ),
                    ));
                }
                let rename_expr =
                    |e: &Expr| rename(e, &map, &formulas, &affected, &Default::default());
                let vars = b
                    .vars
                    .iter()
                    .map(|v| VarDecl {
                        name: map.get(&v.name).cloned().unwrap_or_else(|| v.name.clone()),
                        kind: match &v.kind {
                            VarType::Bool => VarType::Bool,
                            VarType::Int { lo, hi } => VarType::Int {
                                lo: rename_expr(lo),
                                hi: rename_expr(hi),
                            },
                        },
                        init: v.init.as_ref().map(rename_expr),
                        span: r.span,
                    })
                    .collect();
                let commands = b
                    .commands
                    .iter()
                    .map(|c| Command {
                        action: c
                            .action
                            .as_ref()
                            .map(|a| map.get(a).cloned().unwrap_or_else(|| a.clone())),
                        guard: rename_expr(&c.guard),
                        updates: c
                            .updates
                            .iter()
                            .map(|u| Update {
                                prob: rename_expr(&u.prob),
                                upper: u.upper.as_ref().map(rename_expr),
                                assignments: u
                                    .assignments
                                    .iter()
                                    .map(|a| Assignment {
                                        var: map
                                            .get(&a.var)
                                            .cloned()
                                            .unwrap_or_else(|| a.var.clone()),
                                        value: rename_expr(&a.value),
                                    })
                                    .collect(),
                            })
                            .collect(),
                        span: c.span,
                    })
                    .collect();
                let base_name = b.name.clone();
                self.modules[slot] = Module {
                    name: r.name.clone(),
                    vars,
                    commands,
                    span: r.span,
                    renamed_from: Some(base_name),
                };
                done.insert(slot);
            }
            if still.len() == before {
                let (_, r) = &still[0];
                return Err(self.err(
                    r.span,
                    format!("module `{}` is defined by a cycle of renamings", r.name),
                ));
            }
            pending = still;
        }
        Ok(())
    }

    /// Refuses formulas whose expansion (every formula name replaced by its body) would nest
    /// deeper than [`MAX_DEPTH`]: thousands of chained formulas overflowed the stack. The error
    /// names the formula and the limit. Returns the size of each formula's expansion
    /// (saturating): large ones are fine (the compiler computes each formula once, and large
    /// ones once per state), but a renamed module that copies one is refused
    /// ([`MAX_FORMULA_EXPANSION`]). The expanded depth and size of each formula are computed
    /// once (iteratively over the formulas, so a long chain does not recurse).
    fn check_formula_expansion(&self) -> Result<FxHashMap<String, u64>> {
        let n = self.formulas.len();
        let mut index: FxHashMap<&str, usize> = FxHashMap::default();
        for (i, f) in self.formulas.iter().enumerate() {
            index.entry(f.name.as_str()).or_insert(i);
        }
        let deps: Vec<Vec<usize>> = self
            .formulas
            .iter()
            .map(|f| {
                let mut d = Vec::new();
                visit_idents(&f.body, &mut |name| {
                    if let Some(&j) = index.get(name) {
                        d.push(j);
                    }
                });
                d
            })
            .collect();
        // (expanded depth, expanded size), saturating; `None` until measured.
        let mut cost: Vec<Option<(u64, u64)>> = vec![None; n];
        let mut visited = vec![false; n];
        for root in 0..n {
            if visited[root] {
                continue;
            }
            visited[root] = true;
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            while let Some(top) = stack.last_mut() {
                let (f, next) = *top;
                if next < deps[f].len() {
                    top.1 += 1;
                    let d = deps[f][next];
                    if !visited[d] {
                        visited[d] = true;
                        stack.push((d, 0));
                    }
                    continue;
                }
                stack.pop();
                // A formula on the stack (a cycle, reported when compiling) counts as a leaf.
                let (depth, size) = expansion_cost(&self.formulas[f].body, &|name| {
                    index.get(name).and_then(|&j| cost[j])
                });
                let def = &self.formulas[f];
                if depth > MAX_DEPTH as u64 {
                    return Err(self.err(
                        def.span,
                        format!(
                            "formula `{}` expands to an expression nested {depth} deep (formulas \
                             used in formulas; at most {MAX_DEPTH})",
                            def.name
                        ),
                    ));
                }
                cost[f] = Some((depth, size));
            }
        }
        Ok(self
            .formulas
            .iter()
            .zip(&cost)
            .map(|(f, c)| (f.name.clone(), c.map_or(0, |c| c.1)))
            .collect())
    }

    fn check_names(&self) -> Result<()> {
        let mut seen: FxHashMap<&str, (&str, ModelSpan)> = FxHashMap::default();
        let mut entries: Vec<(&str, &'static str, ModelSpan)> = Vec::new();
        for c in &self.constants {
            entries.push((&c.decl.name, "a constant", c.span));
        }
        for f in &self.formulas {
            entries.push((&f.name, "a formula", f.span));
        }
        for v in &self.globals {
            entries.push((&v.name, "a global variable", v.span));
        }
        for m in &self.modules {
            for v in &m.vars {
                entries.push((&v.name, "a variable", v.span));
            }
        }
        for (name, what, span) in entries {
            if let Some((prev, pspan)) = seen.get(name) {
                let msg = format!(
                    "`{name}` is already declared as {prev} (line {})",
                    pspan.line
                );
                return Err(self.err(span, msg));
            }
            seen.insert(name, (what, span));
        }
        let mut modules: FxHashMap<&str, ModelSpan> = FxHashMap::default();
        for m in &self.modules {
            if let Some(p) = modules.insert(&m.name, m.span) {
                return Err(self.err(
                    m.span,
                    format!("module `{}` is already declared (line {})", m.name, p.line),
                ));
            }
        }
        let mut labels: FxHashMap<&str, ModelSpan> = FxHashMap::default();
        for l in &self.labels {
            if l.name == "init" || l.name == "deadlock" {
                return Err(self.err(
                    l.span,
                    format!("label \"{}\" is built in and cannot be redefined", l.name),
                ));
            }
            if let Some(p) = labels.insert(&l.name, l.span) {
                return Err(self.err(
                    l.span,
                    format!("label \"{}\" is already defined (line {})", l.name, p.line),
                ));
            }
        }
        let mut rewards: FxHashMap<&str, ModelSpan> = FxHashMap::default();
        for r in &self.rewards {
            if let Some(n) = &r.name {
                if let Some(p) = rewards.insert(n, r.span) {
                    return Err(self.err(
                        r.span,
                        format!(
                            "reward structure \"{n}\" is already defined (line {})",
                            p.line
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn quoted(p: &Pair<'_, Rule>) -> String {
    p.as_str().trim_matches('"').to_string()
}

/// The most operators (and leaves) the expansion of a formula that a renamed module copies
/// (with names renamed) may have: 2^20.
pub const MAX_FORMULA_EXPANSION: u64 = 1 << 20;

/// Calls `f` on every identifier of `e` (the parser bounds its depth by [`MAX_DEPTH`]).
fn visit_idents<'e>(e: &'e Expr, f: &mut impl FnMut(&'e str)) {
    match e {
        Expr::Int(_) | Expr::Double(_) | Expr::Decimal(..) | Expr::Bool(_) => {}
        Expr::Ident(n) => f(n),
        Expr::Unary(_, a) => visit_idents(a, f),
        Expr::Binary(_, a, b) => {
            visit_idents(a, f);
            visit_idents(b, f);
        }
        Expr::Ite(c, a, b) => {
            visit_idents(c, f);
            visit_idents(a, f);
            visit_idents(b, f);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| visit_idents(a, f)),
    }
}

/// The depth and size of `e` once every formula name in it is replaced by its expansion,
/// whose `(depth, size)` `formula` gives (`None`: not a formula, or not measured: a leaf).
fn expansion_cost(e: &Expr, formula: &dyn Fn(&str) -> Option<(u64, u64)>) -> (u64, u64) {
    let children = |es: &[&Expr]| {
        es.iter().fold((0u64, 1u64), |(d, s), c| {
            let (cd, cs) = expansion_cost(c, formula);
            (d.max(cd), s.saturating_add(cs))
        })
    };
    let (d, s) = match e {
        Expr::Int(_) | Expr::Double(_) | Expr::Decimal(..) | Expr::Bool(_) => (0, 1),
        Expr::Ident(n) => return formula(n).unwrap_or((1, 1)),
        Expr::Unary(_, a) => children(&[a]),
        Expr::Binary(_, a, b) => children(&[a, b]),
        Expr::Ite(c, a, b) => children(&[c, a, b]),
        Expr::Call(_, args) => children(&args.iter().collect::<Vec<_>>()),
    };
    (d + 1, s)
}

/// Applies a module renaming to an expression: renamed identifiers are replaced; a formula
/// that (through others) reads a renamed name is expanded, so the renaming reaches the
/// variables it uses. `active` holds the formulas being expanded: one met again is defined in
/// terms of itself and is left by name (compiling reports the cycle). Without cycles the
/// recursion is as deep as the longest chain of formulas, which the parser bounds by
/// [`MAX_DEPTH`], so no copy is ever cut short.
fn rename<'f>(
    e: &Expr,
    map: &FxHashMap<String, String>,
    formulas: &'f FxHashMap<String, Expr>,
    affected: &FxHashSet<String>,
    active: &std::cell::RefCell<Vec<&'f str>>,
) -> Expr {
    e.substitute(|n| {
        if let Some(new) = map.get(n) {
            return Some(Expr::Ident(new.clone()));
        }
        if !affected.contains(n) {
            return None;
        }
        let (name, body) = formulas.get_key_value(n)?;
        if active.borrow().contains(&name.as_str()) {
            return None;
        }
        active.borrow_mut().push(name);
        let x = rename(body, map, formulas, affected, active);
        active.borrow_mut().pop();
        Some(x)
    })
}
