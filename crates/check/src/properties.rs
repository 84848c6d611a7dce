//! Properties to check: a properties file (constants, labels, properties) and single properties,
//! parsed once, then compiled (resolved) against a model and its constants.

use crate::constants::Constants;
use crate::error::{CheckError, Result};
use crate::model::Model;
use augur_expr::{evaluate_constants_at, ConstDecl, Expr, ExprError, Type, Value};
use augur_pctl::{LabelDef, PctlError, Property, ResolvedProperty, Resolver};
use augur_source::{Diagnostic, SourceFile};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A parse or resolution error of a text in `source`, as a located diagnostic.
pub(crate) fn parse_error(e: PctlError, source: &SourceFile) -> CheckError {
    CheckError::Input(Box::new(e.diagnostic(source)))
}

/// One property with the text it is written in.
#[derive(Clone, Debug)]
struct Item {
    property: Property,
    source: Arc<SourceFile>,
}

/// Properties to check, as parsed (independent of any model): the constants and labels of a
/// properties file, and its properties followed by single properties (`--prop`).
///
/// ```
/// use augur_check::Properties;
/// let mut props = Properties::parse_file("p.props", "const int T = 5;\nlabel \"far\" = s>2;\nP=? [ F<=T \"far\" ]").unwrap();
/// props.add("--prop", "P=? [ F \"far\" ]").unwrap();
/// assert_eq!(props.len(), 2);
/// let err = props.add("--prop", "P=? [ F<0 \"far\" ]").unwrap_err();
/// assert_eq!(err.location().map(|l| (l.line, l.column)), Some((1, 8)));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Properties {
    constants: Vec<ConstDecl>,
    labels: Vec<LabelDef>,
    file: Option<Arc<SourceFile>>,
    items: Vec<Item>,
    /// Properties of the file that the parser rejected (a parse-time check failed): each fails
    /// alone, with its located error, and the others are still checked.
    rejected: Vec<augur_pctl::RejectedProperty>,
}

impl Properties {
    /// No properties.
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Reads and parses a properties file.
    pub fn read_file(path: &Path) -> Result<Properties> {
        let text = crate::read_text(path)?;
        Properties::parse_file(&path.display().to_string(), &text)
    }

    /// Parses a properties file named `name` (shown in messages). A syntax error fails the
    /// whole file; a property that breaks a parse-time check (a bound out of range, ...) is
    /// kept with its error and fails alone when compiled ([`Properties::first_rejected`]).
    pub fn parse_file(name: &str, text: &str) -> Result<Properties> {
        let source = Arc::new(SourceFile::new(name, text));
        let file = augur_pctl::parse_properties(text).map_err(|e| parse_error(e, &source))?;
        Ok(Properties {
            constants: file.constants,
            labels: file.labels,
            rejected: file.rejected,
            items: file
                .properties
                .into_iter()
                .map(|property| Item {
                    property,
                    source: Arc::clone(&source),
                })
                .collect(),
            file: Some(source),
        })
    }

    /// Parses one property written in `source_name` (`--prop`) and adds it after the others.
    pub fn add(&mut self, source_name: &str, text: &str) -> Result<()> {
        let source = Arc::new(SourceFile::new(source_name, text));
        let property = augur_pctl::parse_property(text).map_err(|e| parse_error(e, &source))?;
        self.items.push(Item { property, source });
        Ok(())
    }

    /// Number of properties (the rejected ones included).
    pub fn len(&self) -> usize {
        self.items.len() + self.rejected.len()
    }

    /// Whether there is no property.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first property of the file that the parser rejected, as a located error (see
    /// [`Properties::parse_file`]); `None` when every property parsed.
    pub fn first_rejected(&self) -> Option<CheckError> {
        let r = self.rejected.first()?;
        let file = self.file.as_ref()?;
        Some(parse_error(r.error.clone(), file))
    }

    /// The properties, in order (the file's first; without the rejected ones).
    pub fn properties(&self) -> impl Iterator<Item = &Property> {
        self.items.iter().map(|i| &i.property)
    }

    /// The properties file's constant declarations.
    pub fn constants(&self) -> &[ConstDecl] {
        &self.constants
    }

    /// The properties file's label definitions.
    pub fn labels(&self) -> &[LabelDef] {
        &self.labels
    }

    /// The values of every constant the properties may use: the model's, then the properties
    /// file's (which may use the model's and the given values), then given values for names
    /// declared nowhere (usable directly in a property). A given value that nothing declares
    /// or uses is [`CheckError::UnusedConstant`] (a typo).
    pub fn constant_values(
        &self,
        model: &Model,
        given: &Constants,
    ) -> Result<BTreeMap<String, Value>> {
        let mut decls: Vec<ConstDecl> = model
            .constants()
            .iter()
            .map(|(n, v)| {
                let (ty, e) = match *v {
                    Value::Int(i) => (Type::Int, Expr::Int(i)),
                    Value::Double(d) => (Type::Double, Expr::Double(d)),
                    Value::Bool(b) => (Type::Bool, Expr::Bool(b)),
                };
                ConstDecl {
                    name: n.clone(),
                    ty,
                    value: Some(e),
                }
            })
            .collect();
        let skipped = self.unused_undefined(model, given);
        decls.extend(
            self.constants
                .iter()
                .filter(|c| !skipped.contains(&c.name))
                .cloned(),
        );
        for (name, _) in given.as_slice() {
            let declared = decls.iter().any(|d| d.name == *name);
            if !declared && !self.formulas_use(model, name) {
                return Err(CheckError::UnusedConstant { name: name.clone() });
            }
        }
        let values = evaluate_constants_at(&decls, given.as_slice())
            .map_err(|(i, e)| self.constant_error(&decls[i].name, e))?;
        let mut all: BTreeMap<String, Value> = values.into_iter().collect();
        for (n, v) in given.as_slice() {
            all.entry(n.clone()).or_insert(*v);
        }
        Ok(all)
    }

    /// An error of the constants, located at the declaration of `name` in the properties
    /// file (the constant without a value, the first of a cycle, the one whose definition
    /// fails).
    fn constant_error(&self, name: &str, e: ExprError) -> CheckError {
        let message = match &e {
            ExprError::UndefinedConstants(names) => format!(
                "undefined constant{} {} (give {} a value with --const {name}=VALUE)",
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                if names.len() == 1 { "it" } else { "them" },
            ),
            ExprError::DuplicateConstant(_) => format!(
                "constant `{name}` is declared both in the model and in the properties file"
            ),
            _ => format!("constant `{name}`: {e}"),
        };
        let Some(file) = &self.file else {
            return CheckError::input(message);
        };
        match crate::constants::declaration_span(file.text(), name) {
            Some(span) => CheckError::at(message, file.location(span)),
            None => CheckError::input(format!("{}: {message}", file.name())),
        }
    }

    /// Whether `name` is used by a property, a label or another constant's definition (the
    /// model's formulas expanded).
    fn uses(&self, model: &Model, name: &str) -> bool {
        self.formulas_use(model, name)
            || self.constants.iter().any(|c| {
                c.name != name
                    && c.value
                        .as_ref()
                        .is_some_and(|e| model.expand_formulas(e).idents().contains(name))
            })
    }

    /// Whether `name` is used by a property or a label (the model's formulas expanded).
    fn formulas_use(&self, model: &Model, name: &str) -> bool {
        let expand = |e: &Expr| model.expand_formulas(e);
        self.items.iter().any(|i| {
            i.property
                .formula
                .map_exprs(&mut |e| expand(e))
                .idents()
                .contains(name)
        }) || self.labels.iter().any(|l| {
            l.formula
                .map_exprs(&mut |e| expand(e))
                .idents()
                .contains(name)
        })
    }

    /// The properties file's constants that have no value (neither defined nor given) and that
    /// nothing uses: PRISM asks only for the constants the checked properties need, so these
    /// are ignored with a warning ([`CompiledProperties::warnings`]).
    fn unused_undefined(&self, model: &Model, given: &Constants) -> Vec<String> {
        self.constants
            .iter()
            .filter(|c| c.value.is_none() && given.get(&c.name).is_none())
            .filter(|c| !self.uses(model, &c.name))
            .map(|c| c.name.clone())
            .collect()
    }

    /// Exact values of the constants that have one: given as numbers (`--const p=1/3`), then
    /// the properties file's constants defined by rational arithmetic over those.
    fn exact_constants(
        &self,
        model: &Model,
        values: &BTreeMap<String, Value>,
        given: &Constants,
    ) -> BTreeMap<String, augur_pctl::BigRational> {
        let mut exact = given.exact().clone();
        // The model's real constants, as the exact build computed them.
        for (name, q) in model.exact_constants() {
            exact.entry(name.clone()).or_insert_with(|| q.clone());
        }
        // Definitions may refer to each other in any order: repeat until nothing changes.
        for _ in 0..=self.constants.len() {
            let mut changed = false;
            for c in &self.constants {
                if exact.contains_key(&c.name) || c.ty == Type::Bool {
                    continue;
                }
                if let Some(q) = c
                    .value
                    .as_ref()
                    .and_then(|e| augur_pctl::resolve::exact_value(e, values, &exact))
                {
                    exact.insert(c.name.clone(), q);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        exact
    }

    /// Resolves every property against `model` with the given constant values: the form the
    /// checker takes. A property that does not resolve (a bound out of range, an unknown
    /// name, ...) keeps its located error, and the others are still compiled; an error that
    /// concerns every property (constants) fails the whole compilation.
    pub fn compile(&self, model: &Model, given: &Constants) -> Result<CompiledProperties> {
        let constants = self.constant_values(model, given)?;
        let mut warnings: Vec<String> = self
            .unused_undefined(model, given)
            .into_iter()
            .map(|name| {
                let file = self.file.as_ref().map_or("", |f| f.name());
                format!("constant `{name}` of {file} has no value but no property uses it: ignored")
            })
            .collect();
        let exact = self.exact_constants(model, &constants, given);
        let names = model.property_names();
        let expand = |e: &Expr| model.expand_formulas(e);
        if let Some(file) = &self.file {
            check_file_labels(&self.labels, &names.labels, file)?;
        }
        let why = |name: &str| model.unexpanded_formula_message(name);
        let mut resolver = Resolver::new(&names, &constants)
            .with_formulas(&expand)
            .with_unexpanded_formulas(&why)
            .with_exact_constants(&exact);
        if let Some(file) = &self.file {
            resolver = resolver.with_labels(&self.labels, Arc::clone(file));
        }
        resolver = resolver.with_properties(
            self.items
                .iter()
                .map(|i| (&i.property, Arc::clone(&i.source))),
        );
        let mut items: Vec<CompiledProperty> = Vec::with_capacity(self.items.len());
        for i in &self.items {
            let resolved = resolver.resolve(&i.property, &i.source).map_err(|e| {
                let d = match parse_error(e, &i.source) {
                    CheckError::Input(d) => *d,
                    other => Diagnostic::error(other.to_string()),
                };
                match model.missing_lab() {
                    Some(lab) if d.message.starts_with("unknown label") => d.with_note(format!(
                        "{} was read without its labels: there is no {lab}",
                        model.name()
                    )),
                    _ => d,
                }
            });
            // A comparison that never holds: the rendered warning, located, without its
            // `warning: ` (the caller prints it as it prints the others); once, though a
            // property referred to by name is resolved again where it is referred to.
            for d in resolver.take_warnings() {
                let shown = d.to_string();
                let shown = shown.trim_end();
                let shown = shown.strip_prefix("warning: ").unwrap_or(shown).to_string();
                if !warnings.contains(&shown) {
                    warnings.push(shown);
                }
            }
            items.push(CompiledProperty {
                name: i.property.name.clone(),
                text: i.property.formula.to_string(),
                resolved,
            });
        }
        for r in &self.rejected {
            let diagnostic = match &self.file {
                Some(file) => r.error.diagnostic(file),
                None => Diagnostic::error(r.error.to_string()),
            };
            items.insert(
                r.index.min(items.len()),
                CompiledProperty {
                    name: r.name.clone(),
                    text: r.text.clone(),
                    resolved: Err(diagnostic),
                },
            );
        }
        Ok(CompiledProperties {
            constants,
            items,
            warnings,
        })
    }
}

/// One property compiled for a model: resolved, or the located reason why it could not be.
#[derive(Clone, Debug)]
pub struct CompiledProperty {
    /// The property's name, if any.
    pub name: Option<String>,
    /// The property as written (canonical text).
    pub text: String,
    /// The resolved property, or why it does not resolve.
    pub resolved: std::result::Result<ResolvedProperty, Diagnostic>,
}

/// Properties compiled for one model ([`Properties::compile`]). `Send + Sync`.
#[derive(Clone, Debug)]
pub struct CompiledProperties {
    /// The value of every constant the properties may use.
    pub constants: BTreeMap<String, Value>,
    /// The properties, in order.
    pub items: Vec<CompiledProperty>,
    /// Warnings for the user (a properties-file constant without a value that no property
    /// uses, ignored as PRISM does; a comparison that no value of a variable's declared range
    /// satisfies, `s=5` with `s : [0..3]`, rendered with its location and caret on the lines
    /// after the first).
    pub warnings: Vec<String>,
}

impl CompiledProperties {
    /// Number of properties.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is no property.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A properties-file label may not redefine one of the model's labels (or `"init"`): the
/// model's would silently win. Located at the label's name.
fn check_file_labels(
    labels: &[LabelDef],
    model_labels: &[String],
    file: &SourceFile,
) -> Result<()> {
    for l in labels {
        let name = l.name.node.as_str();
        if name == "init" || model_labels.iter().any(|m| m == name) {
            return Err(CheckError::at(
                format!("label \"{name}\" is already a label of the model; a properties file cannot redefine it"),
                file.location(l.name.span),
            ));
        }
    }
    Ok(())
}
