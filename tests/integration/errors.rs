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
snapshot!(
    sta_too_many_values,
    ["check", f("bad_sta_arity.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    sta_unparsable_value,
    ["check", f("bad_sta_value.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    sta_state_twice,
    ["check", f("bad_sta_twice.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    sta_state_out_of_range,
    ["check", f("bad_sta_range.tra"), "--prop", "P=? [ F true ]"]
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
    pctl_file_two_on_one_line,
    ["parse", f("two_on_one_line.props")]
);
// Co-safe LTL rewards: `R[...]` refuses what is not co-safe and a step-bounded `F`, as PRISM
// does; on an interval model it wants `Rmin`/`Rmax`.
snapshot!(
    pctl_reward_not_co_safe,
    [
        "check",
        "tests/fixtures/ltl_reward/cycle.pm",
        "--prop",
        "R{\"r\"}=? [ (F \"one\") & (G s!=2) ]"
    ]
);
snapshot!(
    pctl_reward_not_co_safe_in_file,
    [
        "check",
        "tests/fixtures/ltl_reward/cycle.pm",
        f("reward_not_co_safe.props")
    ]
);
snapshot!(
    pctl_reward_bounded_eventually,
    ["parse", "--prop", "R=? [ F<=3 \"goal\" ]"]
);
snapshot!(
    pctl_reward_ltl_interval_needs_min_or_max,
    [
        "check",
        "tests/fixtures/ltl_reward/cycle-intervals.pm",
        "--prop",
        "R=? [ X F s=0 ]"
    ]
);
snapshot!(
    pctl_storm_cumulative_lt0,
    ["parse", "--prop", "R=? [ C<0 ]"]
);
snapshot!(
    pctl_operator_type,
    [
        "check",
        "tests/fixtures/dtmc_pctl.json",
        "--prop",
        "P=? [ F s=2 ] + true"
    ]
);
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
// The same through the sequential reader (`--threads 1`; the parallel one is the default on
// a machine of several cores): the same message.
snapshot!(
    jsonl_invalid_one_thread,
    [
        "learn",
        f("invalid.jsonl"),
        "-o",
        "target/never-written.json",
        "--threads",
        "1"
    ]
);
snapshot!(
    jsonl_value_out_of_range_one_thread,
    [
        "learn",
        f("out_of_range.jsonl"),
        "--abstraction",
        f("spec.toml"),
        "-o",
        "target/never-written.json",
        "--threads",
        "1"
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

// Exact mode: a rational past the size budget, in a model constant and in a property.
snapshot!(
    exact_constant_too_large,
    [
        "check",
        f("exact_constant_too_large.pm"),
        "--prop",
        "P=? [ F s=1 ]",
        "--method",
        "exact"
    ]
);
snapshot!(
    exact_property_too_large,
    [
        "check",
        f("needs_p.pm"),
        "--const",
        "p=0.5",
        "--prop",
        "P>=pow(1/3, 50000) [ F x=2 ]",
        "--method",
        "exact"
    ]
);

// The time limit names the property it stopped (file, line, caret) and the option; the
// properties after it are not attempted.
snapshot!(
    check_timeout_in_props_file,
    [
        "check",
        f("cycle300.pm"),
        f("timeout.props"),
        "--timeout",
        "0.5"
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

// Hostile input (issue 15): a declared size refused at the header before any allocation, a
// formula expansion beyond the limit, an undefined constant at its declaration, a
// properties-file label that would silently lose to the model's.
snapshot!(
    tra_declared_states_over_the_limit,
    ["check", f("huge_header.tra"), "--prop", "P=? [ F true ]"]
);
snapshot!(
    prism_undefined_constant,
    ["check", f("needs_p.pm"), "--prop", "P=? [ F x=2 ]"]
);
snapshot!(
    pctl_label_redefines_a_model_label,
    ["check", "models/gambler.drn", f("label_redefined.props")]
);

// The runtime monitor. `monitor compile --prop` resolves its property as `check --prop` does
// (same words, the caret under the cause, source `--prop`), then its own restrictions are
// located on the property; models load under the same options (`--const`, `--max-states`).
// The output is never written: every one of these fails before.
const NEVER_WRITTEN: &str = "target/tmp/never-written-monitor.json";

fn monitor_compile(model: &str, prop: &str, more: &[&str]) -> Vec<String> {
    let mut v = vec!["monitor", "compile", model, "--prop", prop];
    v.extend_from_slice(more);
    v.extend_from_slice(&["-o", NEVER_WRITTEN]);
    v.into_iter().map(str::to_string).collect()
}

macro_rules! monitor_snapshot {
    ($name:ident, $args:expr) => {
        #[test]
        fn $name() {
            let args: Vec<String> = $args;
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            insta::assert_snapshot!(user_error(&args));
        }
    };
}

monitor_snapshot!(
    monitor_prop_unknown_constant_in_bound,
    monitor_compile("models/safetydrift.tra", "P=? [ F<=k \"violated\" ]", &[])
);
monitor_snapshot!(
    monitor_prop_bound_zero,
    monitor_compile("models/safetydrift.tra", "P=? [ F<=0 \"violated\" ]", &[])
);
monitor_snapshot!(
    monitor_prop_bound_beyond_the_largest_horizon,
    monitor_compile(
        "models/safetydrift.tra",
        "P=? [ F<=10001 \"violated\" ]",
        &[]
    )
);
monitor_snapshot!(
    monitor_prop_unknown_label,
    monitor_compile("models/safetydrift.tra", "P=? [ F<=5 \"nosuch\" ]", &[])
);
monitor_snapshot!(
    monitor_prop_threshold,
    monitor_compile(
        "models/safetydrift.tra",
        "P>=0.5 [ F<=5 \"violated\" ]",
        &[]
    )
);
monitor_snapshot!(
    monitor_prop_lower_step_bound,
    monitor_compile("models/safetydrift.tra", "P=? [ F>=2 \"violated\" ]", &[])
);
monitor_snapshot!(
    monitor_prop_not_a_path_query,
    monitor_compile("models/safetydrift.tra", "R=? [ F \"violated\" ]", &[])
);
monitor_snapshot!(
    monitor_prop_syntax,
    monitor_compile("models/safetydrift.tra", "P=? [ F<=5 \"violated\" ", &[])
);
monitor_snapshot!(
    monitor_model_needs_a_constant,
    monitor_compile(
        &f("monitor/risk_const.pm"),
        "P=? [ F<=5 \"violated\" ]",
        &[]
    )
);
monitor_snapshot!(
    monitor_model_over_the_state_limit,
    monitor_compile(
        &f("monitor/risk_const.pm"),
        "P=? [ F<=5 \"violated\" ]",
        &["--const", "p=0.5", "--max-states", "3"]
    )
);
monitor_snapshot!(
    monitor_eval_matrix_over_the_state_limit,
    [
        "monitor",
        "eval",
        "models/monitor/runs.jsonl",
        "--max-states",
        "3"
    ]
    .map(str::to_string)
    .to_vec()
);
// Runs files: an observation from an unknown source; an attempt step beyond the run; a
// hold-out protocol on runs without the field it holds out.
monitor_snapshot!(
    monitor_runs_bad_observation_source,
    ["monitor", "eval", &f("monitor/runs_bad_observation.jsonl")]
        .map(str::to_string)
        .to_vec()
);
monitor_snapshot!(
    monitor_runs_attempt_step_beyond_the_run,
    ["monitor", "eval", &f("monitor/runs_attempt_beyond.jsonl")]
        .map(str::to_string)
        .to_vec()
);
monitor_snapshot!(
    monitor_eval_hold_out_model_without_models,
    [
        "monitor",
        "eval",
        "models/monitor/runs.jsonl",
        "--hold-out-model"
    ]
    .map(str::to_string)
    .to_vec()
);
// `monitor learn`: a runs file that does not exist, a malformed run (line and column), runs of
// one label only.
monitor_snapshot!(
    monitor_learn_missing_runs_file,
    [
        "monitor",
        "learn",
        &f("monitor/no_such_runs.jsonl"),
        "-o",
        "m.json"
    ]
    .map(str::to_string)
    .to_vec()
);
monitor_snapshot!(
    monitor_learn_malformed_run,
    [
        "monitor",
        "learn",
        &f("monitor/learn_malformed.jsonl"),
        "-o",
        "m.json"
    ]
    .map(str::to_string)
    .to_vec()
);
monitor_snapshot!(
    monitor_learn_only_safe_runs,
    [
        "monitor",
        "learn",
        &f("monitor/learn_only_safe.jsonl"),
        "-o",
        "m.json"
    ]
    .map(str::to_string)
    .to_vec()
);
// Monitor files: a value of the wrong type, a table of the wrong length, each at the value.
monitor_snapshot!(
    monitor_file_wrong_type,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/wrong_type.json")
    ]
);
monitor_snapshot!(
    monitor_file_table_length,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/table_length.json")
    ]
);
// Issue 25: monitor file version 2: an optional section this Augur does not know is refused
// (never ignored); a version-1 file has no sections; the provenance section has the three levels.
monitor_snapshot!(
    monitor_file_unknown_section,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/unknown_section.json")
    ]
);
monitor_snapshot!(
    monitor_file_sections_in_version_1,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/sections_in_version_1.json")
    ]
);
monitor_snapshot!(
    monitor_file_provenance_levels,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/provenance_levels.json")
    ]
);
// Issue 22: a value outside its own sound bounds; an embedded classifier edited after
// compiling (its hash no longer matches); thresholds whose verdicts get milder as P grows; an
// empty threshold list (it would allow everything): each at the offending value.
monitor_snapshot!(
    monitor_file_value_outside_its_bounds,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/value_outside_bounds.json")
    ]
);
monitor_snapshot!(
    monitor_file_classifier_edited_after_compiling,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/classifier_edited.json")
    ]
);
monitor_snapshot!(
    monitor_policy_thresholds_inverted,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/risk.json"),
        "--policy".into(),
        f("monitor/thresholds_inverted.toml")
    ]
);
monitor_snapshot!(
    monitor_policy_thresholds_empty,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/risk.json"),
        "--policy".into(),
        f("monitor/thresholds_empty.toml")
    ]
);
// A policy's horizon beyond the monitor's curve, at the policy's `horizon`.
monitor_snapshot!(
    monitor_policy_horizon_beyond_the_curve,
    vec![
        "monitor".into(),
        "gate".into(),
        "--monitor".into(),
        f("monitor/risk.json"),
        "--policy".into(),
        f("monitor/horizon.toml")
    ]
);
// A time limit that has passed before the first table is checked (loading and checking share
// one deadline).
monitor_snapshot!(
    monitor_compile_time_limit,
    monitor_compile(
        "models/safetydrift.tra",
        "P=? [ F<=5 \"violated\" ]",
        &["--timeout", "0.000000001"]
    )
);
monitor_snapshot!(
    monitor_eval_time_limit,
    [
        "monitor",
        "eval",
        "models/monitor/runs.jsonl",
        "--timeout",
        "0.000000001"
    ]
    .map(str::to_string)
    .to_vec()
);

// Interval DTMCs (issue 23): a bad interval at its place, a row whose intervals cannot hold a
// distribution naming its state, `P` without min/max at the operator.
snapshot!(
    interval_tra_lo_above_hi,
    [
        "check",
        f("interval_lo_above_hi.tra"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_tra_out_of_range,
    [
        "check",
        f("interval_out_of_range.tra"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_tra_row_short,
    [
        "check",
        f("interval_row_short.tra"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_drn_row_over,
    [
        "check",
        f("interval_row_over.drn"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_json_lo_above_hi,
    [
        "check",
        f("interval_lo_above_hi.json"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_prism_lo_above_hi,
    [
        "check",
        f("interval_lo_above_hi.pm"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_prism_row_short,
    [
        "check",
        f("interval_row_short.pm"),
        "--prop",
        "Pmax=? [ F true ]"
    ]
);
snapshot!(
    interval_p_without_direction,
    [
        "check",
        "tests/fixtures/idtmc/tiny-01.drn",
        "--prop",
        "P=? [ F \"target\" ]"
    ]
);
snapshot!(
    interval_export_drn_refused,
    [
        "export",
        "tests/fixtures/idtmc/tiny-01.drn",
        "--to",
        "drn",
        "-o",
        "target/interval.drn"
    ]
);
snapshot!(
    interval_simulate_refused,
    [
        "simulate",
        "tests/fixtures/idtmc/tiny-01.drn",
        "--traces",
        "1",
        "--max-steps",
        "2"
    ]
);

// Property traps (issue 42): an unquoted label suggests the quoted label; a near-miss of an
// operator's name (`Pr`, `Prob`, `p`, `Rew`, ...) says which operator to write, with a caret
// under the name; a comparison that no value of a variable's declared range satisfies warns
// (exit code 0); a property that fails keeps its name in its output line.
const CYCLE: &str = "tests/fixtures/ltl_reward/cycle.pm";
snapshot!(
    pctl_unquoted_label,
    ["check", CYCLE, "--prop", "P=? [ F one ]"]
);
snapshot!(
    pctl_operator_near_miss_pr,
    ["parse", "--prop", "Pr=? [ F \"goal\" ]"]
);
snapshot!(
    pctl_operator_near_miss_rew,
    ["check", CYCLE, "--prop", "Rew{\"r\"}=? [ F \"one\" ]"]
);
snapshot!(
    pctl_operator_near_miss_bounded,
    ["check", CYCLE, "--prop", "Prob >= 0.5 [ F \"one\" ]"]
);

#[test]
fn pctl_comparison_outside_a_range_warns() {
    let out = util::augur(&["check", CYCLE, "--prop", "P=? [ F s=5 | s>2 ]"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.starts_with("P=? [ F s=5 | s>2 ] = 0 "), "{stdout}");
    insta::assert_snapshot!(stderr);
    // A comparison that can hold does not warn.
    let out = util::augur(&[
        "check",
        CYCLE,
        "--prop",
        "P=? [ F s=2 | s>=2 | s<1 | s!=5 ]",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn pctl_failed_property_keeps_its_name() {
    let out = util::augur(&["check", CYCLE, &f("traps.props")]);
    assert_eq!(out.status.code(), Some(1));
    // The time of the property that checks varies: `(method, TIME)`.
    let stdout: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| match (l.rfind(", "), l.ends_with(" s)")) {
            (Some(i), true) => format!("{}, TIME)", &l[..i]),
            _ => l.to_string(),
        })
        .collect();
    let stderr = String::from_utf8_lossy(&out.stderr);
    insta::assert_snapshot!(format!("stdout:\n{}\nstderr:\n{stderr}", stdout.join("\n")));
}
