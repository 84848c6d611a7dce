//! Properties to check: a properties file (constants, labels, properties) and single properties,
//! parsed once, then compiled (resolved) against a model and its constants.

use crate::constants::Constants;
use crate::error::{CheckError, Result};
use crate::model::Model;
use augur_expr::{evaluate_constants, ConstDecl, Expr, Type, Value};
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

    /// Parses a properties file named `name` (shown in messages).
    pub fn parse_file(name: &str, text: &str) -> Result<Properties> {
        let source = Arc::new(SourceFile::new(name, text));
        let file = augur_pctl::parse_properties(text).map_err(|e| parse_error(e, &source))?;
        Ok(Properties {
            constants: file.constants,
            labels: file.labels,
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

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is no property.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The properties, in order (the file's first).
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
        decls.extend(self.constants.iter().cloned());
        for (name, _) in given.as_slice() {
            let declared = decls.iter().any(|d| d.name == *name);
            let used = || {
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
            };
            if !declared && !used() {
                return Err(CheckError::UnusedConstant { name: name.clone() });
            }
        }
        let values =
            evaluate_constants(&decls, given.as_slice()).map_err(|e| match &self.file {
                Some(f) => CheckError::input(format!("{}: {e}", f.name())),
                None => CheckError::input(e.to_string()),
            })?;
        let mut all: BTreeMap<String, Value> = values.into_iter().collect();
        for (n, v) in given.as_slice() {
            all.entry(n.clone()).or_insert(*v);
        }
        Ok(all)
    }

    /// Resolves every property against `model` with the given constant values: the form the
    /// checker takes. A property that does not resolve (a bound out of range, an unknown
    /// name, ...) keeps its located error, and the others are still compiled; an error that
    /// concerns every property (constants) fails the whole compilation.
    pub fn compile(&self, model: &Model, given: &Constants) -> Result<CompiledProperties> {
        let constants = self.constant_values(model, given)?;
        let names = model.names();
        let expand = |e: &Expr| model.expand_formulas(e);
        let mut resolver = Resolver::new(&names, &constants).with_formulas(&expand);
        if let Some(file) = &self.file {
            resolver = resolver.with_labels(&self.labels, Arc::clone(file));
        }
        let items = self
            .items
            .iter()
            .map(|i| CompiledProperty {
                name: i.property.name.clone(),
                text: i.property.formula.to_string(),
                resolved: resolver.resolve(&i.property, &i.source).map_err(|e| {
                    match parse_error(e, &i.source) {
                        CheckError::Input(d) => *d,
                        other => Diagnostic::error(other.to_string()),
                    }
                }),
            })
            .collect();
        Ok(CompiledProperties { constants, items })
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
