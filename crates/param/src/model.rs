//! [`ParametricModel`]: a parametric DTMC loaded from a PRISM model or an explicit file, with
//! the chain at a reference point (labels, valuations, reward structures, the graph) beside
//! the exact function of every transition and reward.

use crate::error::{ParamError, Result};
use crate::space::{reference_point, Parameter};
use augur_check::{Constants, Format, LoadOptions, Model};
use augur_expr::Value;
use augur_prism::{BuildOptions, ParametricValues};
use augur_ratfun::{rational_f64, RatFunc};
use num_rational::BigRational;
use std::path::Path;

/// A parametric DTMC.
#[derive(Clone, Debug)]
pub struct ParametricModel {
    /// The chain at the reference point: its graph is the parametric chain's; its labels,
    /// valuations, constants and formulas are what properties read.
    pub model: Model,
    /// The parameters, in the order of the functions' variables.
    pub params: Vec<Parameter>,
    /// The reference point (one value per parameter).
    pub reference: Vec<BigRational>,
    /// The function of every matrix entry of `model.dtmc()`, in CSR order.
    pub transitions: Vec<RatFunc>,
    /// Per reward structure: its state rewards as functions (`None`: none).
    pub state_rewards: Vec<Option<Vec<RatFunc>>>,
    /// Per reward structure: its transition rewards as functions, one per matrix entry.
    pub transition_rewards: Vec<Option<Vec<RatFunc>>>,
    /// Warnings for the user (a transition leaving (0, 1] inside default bounds, ...).
    pub warnings: Vec<String>,
}

impl ParametricModel {
    /// The parameters' names.
    pub fn names(&self) -> Vec<String> {
        self.params.iter().map(|p| p.name.clone()).collect()
    }

    /// The number of parameters.
    pub fn n_params(&self) -> usize {
        self.params.len()
    }

    /// Loads the model at `path` with `params` as parameters; `opts.constants` gives the other
    /// undefined constants (PRISM models). Explicit files (`.tra`, `.drn`, `.json`) name their
    /// parameters themselves (DRN's `@parameters`); `params` gives their bounds.
    pub fn load(
        path: &Path,
        params: Vec<Parameter>,
        opts: &LoadOptions,
    ) -> Result<ParametricModel> {
        match Format::from_path(path) {
            Some(Format::Prism) => {
                let text = augur_check::read_text(path)?;
                ParametricModel::from_prism_text(&path.display().to_string(), &text, params, opts)
            }
            Some(Format::Tra | Format::Drn | Format::Json) => {
                crate::explicit::load_explicit(path, params, opts)
            }
            _ => Err(ParamError::input(format!(
                "{}: unknown model format (expected .pm, .prism, .tra, .drn or .json)",
                path.display()
            ))),
        }
    }

    /// A PRISM-language model from its text.
    pub fn from_prism_text(
        name: &str,
        text: &str,
        params: Vec<Parameter>,
        opts: &LoadOptions,
    ) -> Result<ParametricModel> {
        for p in &params {
            if opts.constants.get(&p.name).is_some() {
                return Err(ParamError::input(format!(
                    "`{}` is given both as a parameter (--param) and a constant (--const)",
                    p.name
                )));
            }
        }
        let prism = augur_prism::parse_model(text, name).map_err(|e| {
            ParamError::Check(augur_check::CheckError::Input(Box::new(e.diagnostic())))
        })?;
        let reference = reference_point(&params);
        let ref_f64: Vec<(String, f64)> = params
            .iter()
            .zip(&reference)
            .map(|(p, r)| (p.name.clone(), rational_f64(r)))
            .collect();
        let exact: Vec<(String, BigRational)> = opts
            .constants
            .exact()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let build_opts = BuildOptions {
            fix_deadlocks: opts.fix_deadlocks,
            exact_constants: &exact,
            max_states: opts.limits.max_states,
            ..BuildOptions::default()
        };
        let (dtmc, _report, values) = prism
            .build_parametric(opts.constants.as_slice(), &ref_f64, &build_opts)
            .map_err(|e| {
                ParamError::Check(augur_check::CheckError::Input(Box::new(e.diagnostic())))
            })?;
        // The same model at the reference point, through the point checker's loader: its
        // formulas, constants and labels are what properties resolve against.
        let mut point = opts.constants.clone();
        for (name, v) in &ref_f64 {
            point.set(name.clone(), Value::Double(*v));
        }
        let point_opts = LoadOptions {
            constants: point,
            exact: false,
            ..opts.clone()
        };
        let model = Model::from_text(name, text, Format::Prism, &point_opts)?;
        let d = model.dtmc();
        if d.matrix.indptr().raw_storage() != dtmc.matrix.indptr().raw_storage()
            || d.matrix.indices() != dtmc.matrix.indices()
        {
            return Err(ParamError::Unsupported(
                "internal error: the parametric build and the chain at the reference point differ"
                    .into(),
            ));
        }
        ParametricModel::assemble(model, params, reference, values)
    }

    /// A model from its chain at the reference point and its functions.
    pub(crate) fn assemble(
        model: Model,
        params: Vec<Parameter>,
        reference: Vec<BigRational>,
        values: ParametricValues,
    ) -> Result<ParametricModel> {
        let mut m = ParametricModel {
            model,
            params,
            reference,
            transitions: values.transitions,
            state_rewards: values.state_rewards,
            transition_rewards: values.transition_rewards,
            warnings: Vec::new(),
        };
        crate::wellformed::check(&mut m)?;
        Ok(m)
    }

    /// The chain at the rational point `x` (one value per parameter): the probabilities as
    /// exact rationals (`Dtmc::exact`) and their doubles, rewards likewise. `None` when a
    /// function has a pole at `x`.
    pub fn instantiate(&self, x: &[BigRational]) -> Option<augur_dtmc::Dtmc> {
        let mut d = self.model.dtmc().clone();
        let mut exact = Vec::with_capacity(self.transitions.len());
        for f in &self.transitions {
            exact.push(f.eval(x)?);
        }
        let data: Vec<f64> = exact.iter().map(rational_f64).collect();
        let (n, _) = d.matrix.shape();
        let m = augur_dtmc::Matrix::try_new(
            (n, n),
            d.matrix.indptr().raw_storage().to_vec(),
            d.matrix.indices().to_vec(),
            data,
        )
        .ok()?;
        d.matrix = m;
        d.exact = Some(exact);
        for (k, r) in d.rewards.iter_mut().enumerate() {
            let mut ex = augur_dtmc::ExactRewards {
                state: None,
                transition: None,
            };
            if let Some(Some(sr)) = self.state_rewards.get(k) {
                let q: Option<Vec<BigRational>> = sr.iter().map(|f| f.eval(x)).collect();
                let q = q?;
                r.state = Some(q.iter().map(rational_f64).collect());
                ex.state = Some(q);
            }
            if let Some(Some(tr)) = self.transition_rewards.get(k) {
                let q: Option<Vec<BigRational>> = tr.iter().map(|f| f.eval(x)).collect();
                let q = q?;
                r.transition = Some(q.iter().map(rational_f64).collect());
                ex.transition = Some(q);
            }
            r.exact = Some(Box::new(ex));
        }
        Some(d)
    }

    /// The constants given for the model (for properties).
    pub fn constants(&self, given: &Constants) -> Constants {
        given.clone()
    }
}
