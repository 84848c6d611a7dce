//! Times the parametric checker on one model and property without the command line's other
//! dependencies (a quicker build for profiling the rational-function engine):
//!
//! `cargo run --profile profiling -p augur-param --example param_time -- \
//!   benches/param/nand.pm N=10,K=2 perr,prob1 'P=? [ F s=4 & z/N<0.1 ]'`
//!
//! Prints the build and check times and the size of the function at the initial state.
use augur_check::{Constants, LoadOptions, Properties};
use augur_param::space::parse_params;
use augur_param::{PValue, ParamChecker, ParametricModel};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, consts, params, prop] = args.as_slice() else {
        eprintln!("usage: param_time MODEL CONSTS PARAMS PROPERTY");
        std::process::exit(2);
    };
    let opts = LoadOptions {
        constants: Constants::parse(consts).expect("constants"),
        ..LoadOptions::default()
    };
    let t = Instant::now();
    let params = parse_params(std::slice::from_ref(params)).expect("parameters");
    let m = ParametricModel::load(std::path::Path::new(model), params, &opts).expect("model");
    let build = t.elapsed().as_secs_f64();
    let mut props = Properties::new();
    props.add("--prop", prop).expect("property");
    let compiled = props
        .compile(&m.model, &Constants::new())
        .expect("property");
    let t = Instant::now();
    let mut checker = ParamChecker::new(&m, false);
    let out = checker
        .check(compiled.items[0].resolved.as_ref().expect("resolved"))
        .expect("check");
    let check = t.elapsed().as_secs_f64();
    let init = m.model.dtmc().initial[0] as usize;
    let size = match &out.values[init] {
        Some(PValue::Func(f)) => {
            let (n, d) = f.integer_form();
            format!("{} / {} terms", n.terms.len(), d.terms.len())
        }
        other => format!("{other:?}"),
    };
    println!(
        "states {}  build {build:.3} s  check {check:.3} s  function {size}",
        m.model.dtmc().num_states()
    );
}
