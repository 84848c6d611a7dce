//! Snapshot tests of rendered user errors, end to end through the binary: for each reader and
//! parser (explicit files, DRN, JSON models, the PRISM language, PCTL properties and properties
//! files, `--const` strings, abstraction specs, JSON Lines and CSV traces, transition counts)
//! and each family of errors, the exact stderr (the one renderer of `augur-source`: message,
//! `--> file:line:column`, the offending line, a caret under the cause) and exit code 1.
//!
//! The inputs are in `tests/fixtures/errors/`; the snapshots are committed in
//! `tests/integration/snapshots/` (review changes with `cargo insta review`, or set `INSTA_UPDATE=always`
//! and read the diff; `cargo insta` is not needed to run the tests).

use crate::util;

const DIR: &str = "tests/fixtures/errors";

/// Runs augur from the repository root and returns its exit code and stderr, which must be
/// a user error (exit code 1) with nothing on stdout.
fn user_error(args: &[&str]) -> String {
    let out = util::augur(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    stderr
}

fn f(name: &str) -> String {
    format!("{DIR}/{name}")
}

macro_rules! snapshot {
    ($name:ident, [$($arg:expr),* $(,)?]) => {
        #[test]
        fn $name() {
            let args: Vec<String> = vec![$($arg.to_string()),*];
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            insta::assert_snapshot!(user_error(&args));
        }
    };
}

// Explicit files: the field under the caret; a row error found at build time reads the row's
// line again; a header count that the file does not match points at the count.
snapshot!(
    tra_state_out_of_range,
    [
        "check",
        f("state_out_of_range.tra"),
        "--prop",
        "P=? [ F true ]"
    ]
);
snapshot!(
    tra_row_sum,
    ["check", f("row_sum.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    tra_header_count,
    ["check", f("header_count.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    lab_label_index,
    ["check", f("bad_lab.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    srew_reward,
    ["check", f("bad_srew.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    trew_no_such_transition,
    ["check", f("bad_trew.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    sta_values,
    ["check", f("bad_sta.tra"), "--prop", "P=? [ F true ]"]
);

// Storm's DRN.
snapshot!(
    drn_probability,
    ["check", f("bad_prob.drn"), "--prop", "P=? [ F true ]"]
);
snapshot!(drn_model_type, ["export", f("mdp.drn"), "--to", "json"]);

// Augur JSON models: serde's syntax and shape errors with the JSON path; model errors at the
// value they are about.
snapshot!(
    json_state_out_of_range,
    [
        "check",
        f("state_out_of_range.json"),
        "--prop",
        "P=? [ F true ]"
    ]
);
snapshot!(
    json_wrong_type,
    ["check", f("wrong_type.json"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    json_truncated,
    ["check", f("truncated.json"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    json_row_sum,
    ["check", f("row_sum.json"), "--prop", "P=? [ F true ]"]
);

// The PRISM language: syntax, static and state-space (build) errors.
snapshot!(
    prism_syntax,
    ["check", f("syntax.pm"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    prism_undeclared,
    ["check", f("undeclared.pm"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    prism_build,
    ["check", f("bad_probability.pm"), "--prop", "P=? [ F true ]"]
);

// PCTL properties (`--prop`, properties files) and `--const` strings.
snapshot!(pctl_prop_syntax, ["parse", "--prop", "P=? [ F \"goal\" "]);
snapshot!(
    pctl_prop_step_bound,
    ["parse", "--prop", "P=? [ F<0 \"goal\" ]"]
);
snapshot!(pctl_file_bound, ["parse", f("bad_bound.props")]);
snapshot!(
    const_bad_value,
    [
        "check",
        f("needs_p.pm"),
        "--prop",
        "P=? [ F x=2 ]",
        "--const",
        "p=0.5,q=half"
    ]
);
snapshot!(
    const_bad_name,
    [
        "export",
        f("needs_p.pm"),
        "--to",
        "json",
        "--const",
        "p=0.5, 2p=1"
    ]
);

// Abstraction specs (TOML).
snapshot!(
    spec_undeclared_name,
    [
        "learn",
        f("out_of_range.jsonl"),
        "--abstraction",
        f("undeclared.toml"),
        "-o",
        "target/never-written.json"
    ]
);
snapshot!(
    spec_toml_syntax,
    [
        "learn",
        f("out_of_range.jsonl"),
        "--abstraction",
        f("bad_syntax.toml"),
        "-o",
        "target/never-written.json"
    ]
);
snapshot!(
    spec_variable_type,
    [
        "learn",
        f("out_of_range.jsonl"),
        "--abstraction",
        f("bad_type.toml"),
        "-o",
        "target/never-written.json"
    ]
);

// Traces: JSON Lines and CSV, while reading and when a value is abstracted.
snapshot!(
    jsonl_invalid,
    [
        "learn",
        f("invalid.jsonl"),
        "-o",
        "target/never-written.json"
    ]
);
snapshot!(
    jsonl_value_out_of_range,
    [
        "learn",
        f("out_of_range.jsonl"),
        "--abstraction",
        f("spec.toml"),
        "-o",
        "target/never-written.json"
    ]
);
snapshot!(
    csv_bad_step,
    [
        "learn",
        f("bad_step.csv"),
        "-o",
        "target/never-written.json"
    ]
);
snapshot!(
    csv_value_out_of_range,
    [
        "learn",
        f("out_of_range.csv"),
        "--abstraction",
        f("spec.toml"),
        "-o",
        "target/never-written.json"
    ]
);

// Transition counts for `augur pac`.
snapshot!(
    pac_counts,
    [
        "pac",
        "--counts",
        f("bad_counts.json"),
        "--epsilon",
        "0.1",
        "--delta",
        "0.05"
    ]
);

// Learning: concrete values without a spec (with the CLI's hint).
snapshot!(
    learn_concrete_without_spec,
    [
        "learn",
        f("out_of_range.jsonl"),
        "-o",
        "target/never-written.json"
    ]
);

// Properties resolved against the model and the constants (augur-check): a bound from a
// constant fails like the literal, located at the bound; an unknown label lists the known ones.
snapshot!(
    check_step_bound_from_constant,
    [
        "check",
        f("needs_p.pm"),
        "--prop",
        "P=? [ F<=k x=2 ]",
        "--const",
        "p=0.5,k=3.0"
    ]
);
snapshot!(
    check_unknown_label,
    [
        "check",
        f("needs_p.pm"),
        "--prop",
        "P=? [ F \"nope\" ]",
        "--const",
        "p=0.5"
    ]
);

// Limits: a model larger than --max-states stops with the count so far.
snapshot!(
    check_max_states,
    [
        "check",
        f("needs_p.pm"),
        "--prop",
        "P=? [ F x=2 ]",
        "--const",
        "p=0.5",
        "--max-states",
        "2"
    ]
);
