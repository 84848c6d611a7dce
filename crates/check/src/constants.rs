//! [`Constants`]: values given by the user for constants (`--const N=3,p=0.5`).

use crate::error::{CheckError, Result};
use augur_expr::Value;

/// Values of constants given by the user (the CLI's `--const N=3,p=0.5`, an MCP request's
/// constants): the undefined constants of a PRISM model or a properties file, or names used
/// directly in a property. A later value of the same name replaces the earlier one.
///
/// ```
/// use augur_check::Constants;
/// use augur_expr::Value;
/// let mut c = Constants::parse("N=3,p=0.5").unwrap();
/// c.add("N=4").unwrap();
/// assert_eq!(c.get("N"), Some(Value::Int(4)));
/// assert_eq!(c.get("p"), Some(Value::Double(0.5)));
/// assert!(Constants::parse("N=").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Constants {
    values: Vec<(String, Value)>,
}

impl Constants {
    /// No values.
    pub fn new() -> Constants {
        Constants::default()
    }

    /// Parses assignments `N=3,p=0.5,b=true`.
    pub fn parse(text: &str) -> Result<Constants> {
        let mut c = Constants::new();
        c.add(text)?;
        Ok(c)
    }

    /// Adds the assignments of `text` (`N=3,p=0.5`); errors are located in a text named
    /// `constants` (see [`Constants::add_from`]).
    pub fn add(&mut self, text: &str) -> Result<()> {
        self.add_from("constants", text)
    }

    /// Adds the assignments of `text`, locating errors (with a caret) in a text named
    /// `source_name` (the CLI's `--const`).
    pub fn add_from(&mut self, source_name: &str, text: &str) -> Result<()> {
        let parsed = augur_expr::parse_const_assignments(text).map_err(|e| {
            CheckError::Input(Box::new(
                e.diagnostic(&augur_source::SourceFile::new(source_name, text)),
            ))
        })?;
        for (name, value) in parsed {
            self.set(name, value);
        }
        Ok(())
    }

    /// Sets one value.
    pub fn set(&mut self, name: impl Into<String>, value: Value) {
        let name = name.into();
        self.values.retain(|(n, _)| *n != name);
        self.values.push((name, value));
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// The values, in the order given.
    pub fn as_slice(&self) -> &[(String, Value)] {
        &self.values
    }

    /// Whether no value is given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl FromIterator<(String, Value)> for Constants {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Constants {
        let mut c = Constants::new();
        for (n, v) in iter {
            c.set(n, v);
        }
        c
    }
}
