//! Explicit parametric models: PRISM's `.tra` (with `.lab`, `.srew`, `.trew` beside it) and
//! Storm's `.drn` whose values are rational functions, and Augur's `.json` with functions
//! (see `augur_formats::param`).

use crate::error::{ParamError, Result};
use crate::model::ParametricModel;
use crate::space::{reference_point, Parameter};
use augur_check::{LoadOptions, Model};
use augur_ratfun::rational_f64;
use std::path::Path;

/// Loads an explicit parametric model; `params` gives bounds to the file's parameters (a
/// parameter the file does not name is an error; one not given has bounds (0, 1)).
pub(crate) fn load_explicit(
    path: &Path,
    params: Vec<Parameter>,
    opts: &LoadOptions,
) -> Result<ParametricModel> {
    let read = augur_formats::param::read_parametric(path, &|names: &[String]| {
        let out: Vec<Parameter> = names.iter().map(|n| bounded(n, &params)).collect();
        reference_point(&out).iter().map(rational_f64).collect()
    })
    .map_err(|e| ParamError::Input(Box::new(e.diagnostic())))?;
    let all: Vec<Parameter> = read
        .values
        .params
        .iter()
        .map(|n| bounded(n, &params))
        .collect();
    if let Some(p) = params
        .iter()
        .find(|p| !read.values.params.contains(&p.name))
    {
        return Err(ParamError::input(format!(
            "--param {}: {} has no parameter `{}` (it has: {})",
            p.name,
            path.display(),
            p.name,
            read.values.params.join(", ")
        )));
    }
    let _ = opts;
    let reference = reference_point(&all);
    let model = Model::from_dtmc(read.dtmc).named(path.display().to_string());
    ParametricModel::assemble(model, all, reference, read.values)
}

/// The parameter `name` with the bounds given for it, else the default (0, 1).
fn bounded(name: &str, given: &[Parameter]) -> Parameter {
    match given.iter().find(|p| p.name == name) {
        Some(p) => p.clone(),
        None => Parameter {
            name: name.to_string(),
            lo: num_rational::BigRational::from_integer(0.into()),
            hi: num_rational::BigRational::from_integer(1.into()),
            given: false,
        },
    }
}
