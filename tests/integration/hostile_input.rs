//! The reproducers of issue 15 (hostile input): each input once aborted the process, ate
//! gigabytes, never stopped, or gave a silently wrong answer. Each now ends with an answer or
//! a located error and exit code 1. Every run has a generous watchdog (it fails the test
//! instead of hanging CI, it asserts no timing) and a cap on the process's address space
//! (so "asks for 16 GB" shows up as a failed test, not as a machine in trouble).

use std::path::Path;
use std::time::Duration;

/// The watchdog: far beyond what any of these inputs takes now (well under a second in a
/// debug build), far below "never".
const WATCHDOG: Duration = Duration::from_secs(240);

/// Address-space cap for each run, in KiB (3 GiB).
const MEMORY_KIB: u64 = 3 << 20;

pub(crate) use crate::util::Capped as Run;

/// Runs `augur args` in `dir` under the memory cap and the watchdog.
pub(crate) fn augur(dir: &Path, args: &[&str]) -> Run {
    crate::util::capped(dir, args, MEMORY_KIB, WATCHDOG)
}

/// Asserts a user error (exit 1) whose message contains `needle` and is located (`--> `).
fn located_error(run: &Run, needle: &str) {
    assert_eq!(
        run.code,
        Some(1),
        "exit code (None: killed by a signal)\n{}",
        run.stderr
    );
    assert!(run.stderr.contains(needle), "{}", run.stderr);
    assert!(run.stderr.contains("--> "), "no location:\n{}", run.stderr);
    assert!(run.stderr.contains('^'), "no caret:\n{}", run.stderr);
    no_debug_text(&run.stderr);
}

/// User-facing text must not carry Rust Debug output or grammar rule names.
fn no_debug_text(text: &str) {
    for bad in ["Some(", "None", "Prob {", "Bool(", "kw_", "Int(", "Double("] {
        assert!(!text.contains(bad), "Debug text `{bad}` in:\n{text}");
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn ok(run: &Run) -> &str {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    &run.stdout
}

// ---- 1. Sizes declared in headers are not allocated up front ----

#[test]
fn tra_header_with_four_billion_states_is_refused_at_the_header() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.tra", "4000000000 1\n0 0 1\n");
    let run = augur(dir.path(), &["check", "m.tra", "--prop", "P=? [ X true ]"]);
    located_error(&run, "declares 4000000000 states");
    assert!(run.stderr.contains("m.tra:1:1"), "{}", run.stderr);
}

#[test]
fn storm_tra_with_a_huge_state_index_is_refused_at_that_index() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.tra", "dtmc\n0 4294967294 1\n");
    let run = augur(dir.path(), &["check", "m.tra", "--prop", "P=? [ X true ]"]);
    located_error(&run, "declares 4294967295 states");
    assert!(run.stderr.contains("m.tra:2:3"), "{}", run.stderr);
}

#[test]
fn drn_with_four_billion_states_is_refused_at_nr_states() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.drn",
        "@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n4000000000\n@nr_choices\n1\n@model\nstate 0 [0] init\n\taction 0 [0]\n\t\t0 : 1\n",
    );
    let run = augur(dir.path(), &["check", "m.drn", "--prop", "P=? [ X true ]"]);
    located_error(&run, "declares 4000000000 states");
    assert!(run.stderr.contains("m.drn:7:1"), "{}", run.stderr);
}

#[test]
fn drn_with_a_million_states_and_twenty_thousand_reward_models_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..20_000).map(|i| format!("r{i}")).collect();
    write(
        dir.path(),
        "m.drn",
        &format!(
            "@type: DTMC\n@parameters\n\n@reward_models\n{}\n@nr_states\n1000000\n@nr_choices\n1\n@model\nstate 0 [0] init\n\taction 0\n\t\t0 : 1\n",
            names.join(" ")
        ),
    );
    let run = augur(dir.path(), &["check", "m.drn", "--prop", "P=? [ X true ]"]);
    located_error(&run, "reward values");
}

#[test]
fn json_with_four_billion_states_is_refused_at_the_field() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.json",
        "{\"states\": 4000000000, \"initial\": [0], \"rows\": [[[0, 1]]]}",
    );
    let run = augur(dir.path(), &["check", "m.json", "--prop", "P=? [ X true ]"]);
    located_error(&run, "declares 4000000000 states");
}

#[test]
fn pac_counts_with_four_billion_states_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "c.json",
        "{\"num_states\": 4000000000, \"transitions\": []}",
    );
    let run = augur(
        dir.path(),
        &[
            "pac",
            "--counts",
            "c.json",
            "--epsilon",
            "0.1",
            "--delta",
            "0.05",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("4000000000"), "{}", run.stderr);
    no_debug_text(&run.stderr);
}

#[test]
fn lab_with_a_huge_label_index_beside_a_large_model_is_read() {
    // One label at index 1,000,000 used to allocate a million state sets of 100,000 bits.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.tra", "100000 1\n0 0 1\n");
    write(
        dir.path(),
        "m.lab",
        "0=\"init\" 1000000=\"a\"\n0: 0 1000000\n",
    );
    let run = augur(dir.path(), &["check", "m.tra", "--prop", "P=? [ F \"a\" ]"]);
    assert!(ok(&run).contains("= 1"), "{}", run.stdout);
}

// ---- 2, 3. Formulas: no stack overflow, no exponential expansion ----

fn chain(n: usize, body: &str) -> String {
    let mut s = String::from("dtmc\nformula f0 = 1;\n");
    for i in 1..n {
        s.push_str(&format!(
            "formula f{i} = {};\n",
            body.replace("PREV", &format!("f{}", i - 1))
        ));
    }
    s.push_str(&format!(
        "module m\n  x : [0..1] init 0;\n  [] x=0 & f{}>0 -> (x'=1);\n  [] x=1 -> true;\nendmodule\n",
        n - 1
    ));
    s
}

#[test]
fn thousands_of_chained_formulas_give_a_located_limit_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &chain(4400, "PREV + 1"));
    let run = augur(dir.path(), &["check", "m.pm", "--prop", "P=? [ F x=1 ]"]);
    located_error(&run, "nested");
    assert!(run.stderr.contains("at most 2000"), "{}", run.stderr);
}

/// Thirty formulas `f{i} = f{i-1} + f{i-1}` over `x`: f30 = 2^30·x, 2^30 copies of `x`
/// written out. Used in a guard, an update, a label, a reward and `init ... endinit`.
fn thirty_doublings() -> String {
    let mut s = String::from("dtmc\nformula f0 = x;\n");
    for i in 1..=30 {
        s.push_str(&format!("formula f{i} = f{} + f{};\n", i - 1, i - 1));
    }
    s.push_str(
        "module m\n  x : [0..3];\n  \
         [] f30 < 10 -> 0.5:(x'=min(3, x + 1 + mod(f30, 2))) + 0.5:true;\n\
         endmodule\n\
         init f30 < 1 endinit\n\
         label \"big\" = f30 > 5;\n\
         rewards \"r\" true : f30 / 1073741824; endrewards\n",
    );
    s
}

#[test]
fn doubling_formulas_are_computed_once_per_state() {
    // Once 4 GB and an abort, then a limit error: each formula is now computed once per state.
    // From x = 0 (the only initial state: 2^30·x < 1), x moves to 1 with probability 1/2 and
    // stays there (f30 = 2^30 is not < 10: a deadlock, given a self-loop). "big" (2^30·x > 5)
    // is x >= 1: reached with probability 1, next step with 1/2. The reward f30 / 2^30 is x:
    // from x = 0, reaching x = 1 takes 2 steps on average, earning 0 on the way.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dbl.pm", &thirty_doublings());
    for method in ["default", "exact"] {
        let mut args = vec!["check", "dbl.pm", "--prop", "P=? [ F \"big\" ]"];
        if method == "exact" {
            args.extend(["--method", "exact"]);
        }
        let run = augur(dir.path(), &args);
        assert_eq!(value(ok(&run)), 1.0, "{method}: {}", run.stdout);
    }
    assert_eq!(check_value(dir.path(), "dbl.pm", "P=? [ X \"big\" ]"), 0.5);
    let run = augur(
        dir.path(),
        &["check", "dbl.pm", "--prop", "R{\"r\"}=? [ C<=3 ]"],
    );
    // E[x_0 + x_1 + x_2] = 0 + 1/2 + 3/4.
    assert_eq!(value(ok(&run)), 1.25, "{}", run.stdout);
    // The constant chain (f0 = 1) folds to 2^30 > 0: x reaches 1.
    write(dir.path(), "m.pm", &chain(31, "PREV + PREV"));
    assert_eq!(check_value(dir.path(), "m.pm", "P=? [ F x=1 ]"), 1.0);
}

#[test]
fn thirty_levels_of_property_references_are_computed_once_each() {
    // "p0" = P(F x=1) = 1 on the model below; "pk" uses "p(k-1)" twice, so "p30" at every
    // use would be 2^30 computations of "p0" (minutes); once each, it is immediate, and far
    // inside --timeout (the count itself is tested in augur-check: 31 computations).
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &chain(1, "PREV"));
    let mut props = String::from("\"p0\": P=? [ F x=1 ];\n");
    for k in 1..=30 {
        props.push_str(&format!("\"p{k}\": \"p{j}\" * \"p{j}\";\n", j = k - 1));
    }
    props.push_str("\"p30\" > 0 & \"p30\" >= 1;\n");
    write(dir.path(), "m.props", &props);
    let run = augur(dir.path(), &["check", "m.pm", "m.props", "--timeout", "20"]);
    let out = ok(&run);
    assert!(out.lines().last().unwrap().contains("= true ("), "{out}");
    assert!(out.contains("p30: \"p29\" * \"p29\" = 1 ("), "{out}");
}

#[test]
fn a_property_naming_a_huge_formula_is_answered() {
    // Written out in the property, f30 would be 2^30 nodes (it grew to 23 GB before a limit
    // stopped it): it is left there by name and computed once per state, as in the model.
    // The reachable states are x = 0 and x = 1 (see above), f30 = 2^30·x.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dbl.pm", &thirty_doublings());
    for method in ["default", "exact"] {
        let mut args = vec!["check", "dbl.pm", "--prop", "P=? [ F f30 > 5 ]"];
        if method == "exact" {
            args.extend(["--method", "exact"]);
        }
        let run = augur(dir.path(), &args);
        assert_eq!(value(ok(&run)), 1.0, "{method}: {}", run.stdout);
    }
    // Next step: x = 1 with probability 1/2, where f29 + f30 = 3·2^29 > 2^30.
    let run = augur(
        dir.path(),
        &[
            "check",
            "dbl.pm",
            "--prop",
            "P=? [ X f29 + f30 > 1073741824 ]",
        ],
    );
    assert_eq!(value(ok(&run)), 0.5, "{}", run.stdout);
    // A numeric use: the sum over both states, 0 + 2^30.
    assert_eq!(
        check_value(dir.path(), "dbl.pm", "filter(sum, f30)"),
        1073741824.0
    );
    // Smaller formulas are written out as before: f10 = 1024·x > 5 iff x >= 1.
    assert_eq!(check_value(dir.path(), "dbl.pm", "P=? [ F f10 > 5 ]"), 1.0);
}

#[test]
fn a_renamed_module_copying_a_huge_formula_gets_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let model =
        thirty_doublings().replace("init f30 < 1 endinit\n", "module m2 = m [x=y] endmodule\n");
    write(dir.path(), "dbl.pm", &model);
    let run = augur(
        dir.path(),
        &["check", "dbl.pm", "--prop", "P=? [ F \"big\" ]"],
    );
    located_error(&run, "module `m2` copies formula `f30`");
}

#[test]
fn a_renamed_module_renames_through_a_long_chain_of_formulas() {
    // m2 = m [x=y] copies guards that read x through 150 chained formulas: every level must
    // read y in the copy (an old cutoff at 100 levels left the deepest reading x, a silently
    // different model). m moves x from 0 to 1 with probability 1/2 per step and then stays;
    // m2 does the same with y, so y reaches 1 with probability 1. Were m2's guards still
    // reading x, y could move only while x = 0, and by symmetry (each module is chosen with
    // probability 1/2, and moves with 1/2) y would reach 1 first with probability 1/2.
    let dir = tempfile::tempdir().unwrap();
    let mut model = String::from("dtmc\nformula f0 = x;\n");
    for i in 1..=150 {
        model.push_str(&format!("formula f{i} = f{};\n", i - 1));
    }
    model.push_str(
        "module m\n  x : [0..1] init 0;\n  [] f150=0 -> 0.5:(x'=1) + 0.5:(x'=0);\n  \
         [] f150=1 -> true;\nendmodule\nmodule m2 = m [x=y] endmodule\n",
    );
    write(dir.path(), "m.pm", &model);
    let run = augur(dir.path(), &["check", "m.pm", "--prop", "P=? [ F y=1 ]"]);
    assert!((value(ok(&run)) - 1.0).abs() < 1e-6, "{}", run.stdout);
}

#[test]
fn a_thousand_chained_formulas_in_a_property_are_expanded() {
    // The chain's value is 1001 (f0 = 1, each adds 1); within the limits, so the property
    // that uses the last formula is answered.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &chain(1001, "PREV + 1"));
    let run = augur(
        dir.path(),
        &["check", "m.pm", "--prop", "P=? [ F x=1 & f1000=1001 ]"],
    );
    assert!(ok(&run).contains("= 1"), "{}", run.stdout);
}

// ---- 5. Limits on sizes ----

#[test]
fn a_horizon_table_too_large_to_hold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = "11 11\n".to_string()
        + &(0..11)
            .map(|s| format!("{s} {} 1\n", (s + 1) % 11))
            .collect::<String>();
    write(dir.path(), "m.tra", &model);
    let run = augur(
        dir.path(),
        &["horizon", "m.tra", "--target", "true", "--max", "18181818"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("entries"), "{}", run.stderr);
}

#[test]
fn a_huge_variable_range_stops_at_the_state_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.pm",
        "dtmc\nmodule m\n  x : [0..2147483647] init 0;\n  [] true -> (x'=x+1);\nendmodule\n",
    );
    let run = augur(
        dir.path(),
        &[
            "check",
            "m.pm",
            "--prop",
            "P=? [ F x=5 ]",
            "--max-states",
            "20000",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("more than 20000 states"),
        "{}",
        run.stderr
    );
}

// ---- 6. Bounded operators with huge bounds end ----

fn two_cycle(dir: &Path) {
    write(
        dir,
        "c.pm",
        "dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> (x'=1);\n  [] x=1 -> (x'=0);\nendmodule\nrewards \"r\"\n  true : 1;\nendrewards\nlabel \"a\" = x=1;\n",
    );
}

/// The value printed for the property (the first number after `= `).
fn value(stdout: &str) -> f64 {
    let v = stdout.split("= ").nth(1).expect("a value");
    v.split_whitespace()
        .next()
        .unwrap()
        .parse()
        .expect("a number")
}

/// The value `augur check FILE --prop PROP` prints in `dir` (it must succeed).
fn check_value(dir: &Path, file: &str, prop: &str) -> f64 {
    value(ok(&augur(dir, &["check", file, "--prop", prop])))
}

#[test]
fn cumulative_reward_over_a_billion_steps_is_answered() {
    // One unit of reward per step: C<=k = k (by hand); discounted: Σ_{i<k} d^i = 1/(1−d)
    // for huge k, 2 for d = 0.5.
    let dir = tempfile::tempdir().unwrap();
    two_cycle(dir.path());
    assert_eq!(
        check_value(dir.path(), "c.pm", "R=? [ C<=1000000000 ]"),
        1e9
    );
    let run = augur(
        dir.path(),
        &[
            "check",
            "c.pm",
            "--prop",
            "R=? [ C{discount=0.5}<=1000000000 ]",
        ],
    );
    assert!((value(ok(&run)) - 2.0).abs() < 1e-12, "{}", run.stdout);
}

#[test]
fn step_bounds_of_a_hundred_billion_on_a_periodic_chain_are_answered() {
    // From x=0 the chain is in x=1 ("a") exactly at odd steps: F=k "a" is 1 for odd k and 0
    // for even k; G=k "a" (from x=0) is never true at step k when k is even; I=k is 1.
    let dir = tempfile::tempdir().unwrap();
    two_cycle(dir.path());
    assert_eq!(
        check_value(dir.path(), "c.pm", "P=? [ F=99999999999 \"a\" ]"),
        1.0
    );
    assert_eq!(
        check_value(dir.path(), "c.pm", "P=? [ F=99999999998 \"a\" ]"),
        0.0
    );
    assert_eq!(
        check_value(dir.path(), "c.pm", "P=? [ G=99999999998 \"a\" ]"),
        0.0
    );
    assert_eq!(
        check_value(dir.path(), "c.pm", "R=? [ I=99999999999 ]"),
        1.0
    );
}

// ---- 7. Duplicate checks are not quadratic ----

#[test]
fn a_hundred_thousand_names_are_read_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    write(dir.path(), "m.tra", "1 1\n0 0 1\n");
    let names: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    write(
        dir.path(),
        "m.sta",
        &format!("({})\n0:({})\n", names.join(","), vec!["0"; n].join(",")),
    );
    let labels: Vec<String> = (0..n).map(|i| format!("{i}=\"l{i}\"")).collect();
    write(
        dir.path(),
        "m.lab",
        &format!("{}\n0: 0\n", labels.join(" ")),
    );
    let run = augur(
        dir.path(),
        &["check", "m.tra", "--prop", "P=? [ F \"l0\" ]"],
    );
    assert!(ok(&run).contains("= 1"), "{}", run.stdout);
    // JSON labels.
    let labels: Vec<String> = (0..n).map(|i| format!("\"l{i}\": [0]")).collect();
    write(
        dir.path(),
        "m.json",
        &format!(
            "{{\"states\": 1, \"initial\": [0], \"rows\": [[[0, 1]]], \"labels\": {{{}}}}}",
            labels.join(",")
        ),
    );
    let run = augur(
        dir.path(),
        &["check", "m.json", "--prop", "P=? [ F \"l7\" ]"],
    );
    assert!(ok(&run).contains("= 1"), "{}", run.stdout);
    // DRN reward models.
    let names: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    write(
        dir.path(),
        "m.drn",
        &format!(
            "@type: DTMC\n@parameters\n\n@reward_models\n{}\n@nr_states\n1\n@nr_choices\n1\n@model\nstate 0 init\n\taction 0\n\t\t0 : 1\n",
            names.join(" ")
        ),
    );
    let run = augur(dir.path(), &["check", "m.drn", "--prop", "P=? [ X true ]"]);
    assert!(ok(&run).contains("= 1"), "{}", run.stdout);
}

// ---- 10. Formats agree ----

#[test]
fn duplicate_reward_entries_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.tra", "2 2\n0 1 1\n1 1 1\n");
    write(dir.path(), "m.srew", "2 2\n0 1.5\n0 2\n");
    let run = augur(dir.path(), &["check", "m.tra", "--prop", "R=? [ C<=1 ]"]);
    located_error(&run, "state 0 listed twice");
    assert!(run.stderr.contains("m.srew:3:1"), "{}", run.stderr);
    std::fs::remove_file(dir.path().join("m.srew")).unwrap();
    write(dir.path(), "m.trew", "2 2\n0 1 1.5\n0 1 2\n");
    let run = augur(dir.path(), &["check", "m.tra", "--prop", "R=? [ C<=1 ]"]);
    located_error(&run, "0 -> 1 listed twice");
}

#[test]
fn json_valuations_with_a_variable_listed_twice_are_refused_as_sta_does() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.json",
        r#"{"states": 1, "initial": [0], "rows": [[[0, 1]]],
            "valuations": {"names": ["x", "x"], "types": ["int", "int"], "states": [[0, 0]]}}"#,
    );
    let run = augur(dir.path(), &["check", "m.json", "--prop", "P=? [ X true ]"]);
    located_error(&run, "variable `x` listed twice");
}

#[test]
fn a_quoted_drn_label_with_a_space_is_one_label() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.drn",
        "@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n2\n@nr_choices\n2\n@model\nstate 0 init\n\taction 0\n\t\t1 : 1\nstate 1 \"a b\"\n\taction 0\n\t\t1 : 1\n",
    );
    assert_eq!(check_value(dir.path(), "m.drn", "P=? [ F \"a b\" ]"), 1.0);
}

#[test]
fn a_prism_model_with_a_byte_order_mark_is_read() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.pm",
        "\u{feff}dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> (x'=1);\n  [] x=1 -> true;\nendmodule\n",
    );
    assert_eq!(check_value(dir.path(), "m.pm", "P=? [ F x=1 ]"), 1.0);
}

// ---- 9. Parameters validated against the range where the result is valid ----

#[test]
fn learn_with_an_alpha_that_overflows_a_row_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.jsonl",
        "{\"id\": \"t\", \"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}, {\"state\": \"a\"}]}\n",
    );
    let run = augur(
        dir.path(),
        &["learn", "t.jsonl", "--alpha", "1e308", "-o", "m.json"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("alpha = 1e308"), "{}", run.stderr);
    assert!(!dir.path().join("m.json").exists());
}

#[test]
fn pac_counts_near_the_u64_limit_do_not_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let big = u64::MAX / 2 + 1;
    // Two entries of 2^63 from state 0: the row total is 2^64, one past u64::MAX.
    write(
        dir.path(),
        "c.json",
        &format!("{{\"num_states\": 2, \"initial\": [[0, 1]], \"transitions\": [[0, 0, {big}], [0, 1, {big}]]}}"),
    );
    let run = augur(
        dir.path(),
        &[
            "pac",
            "--counts",
            "c.json",
            "--epsilon",
            "0.1",
            "--delta",
            "0.05",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("2^64"), "{}", run.stderr);
}

// ---- 4. Learning: a model beyond the limit is a clear error, not gigabytes ----

/// A spec of `k` unconstrained boolean predicates and a trace file of one trace that stays
/// in the state where all are false for one step.
fn unconstrained_predicates(dir: &Path, k: usize) {
    let vars: String = (0..k)
        .map(|i| format!("v{i} = {{ type = \"bool\" }}\n"))
        .collect();
    let preds: String = (0..k).map(|i| format!("p{i} = \"v{i}\"\n")).collect();
    write(
        dir,
        "spec.toml",
        &format!("[variables]\n{vars}\n[predicates]\n{preds}"),
    );
    let step: Vec<String> = (0..k).map(|i| format!("\"v{i}\": false")).collect();
    let step = format!("{{{}}}", step.join(", "));
    write(
        dir,
        "t.jsonl",
        &format!("{{\"id\": \"t\", \"steps\": [{step}, {step}]}}\n"),
    );
}

#[test]
fn learning_with_many_unconstrained_predicates_writes_a_small_file() {
    // 13 and 14 boolean predicates without validity constraints: 8,192 (16,384) states, each
    // smoothed over every state — 67 (268) million transitions, once written out as 1.8 GB of
    // JSON. The rows are kept implicit: a small file, written at once.
    for (k, alpha) in [(13, "0"), (13, "0.1"), (14, "0.1")] {
        let dir = tempfile::tempdir().unwrap();
        unconstrained_predicates(dir.path(), k);
        let run = augur(
            dir.path(),
            &[
                "learn",
                "t.jsonl",
                "--abstraction",
                "spec.toml",
                "--alpha",
                alpha,
                "-o",
                "m.json",
            ],
        );
        let n: u64 = 1 << k;
        // The summary counts the smoothed chain's transitions: with α > 0 every row has n
        // entries; with α = 0 the one observed row has one, the n - 1 others n each.
        let transitions = if alpha == "0" { 1 + (n - 1) * n } else { n * n };
        assert!(
            ok(&run).contains(&format!("{n} states (1 seen), {transitions} transitions")),
            "{}",
            run.stdout
        );
        // Labels and valuations (n states × k predicates) are most of it.
        let size = std::fs::metadata(dir.path().join("m.json")).unwrap().len();
        assert!(size < 4_000_000, "{size} bytes");
        // Reading it: the smoothed model is past the default limit of 2^24 transitions, a
        // located error saying how large it is and how to raise the limit.
        let run = augur(
            dir.path(),
            &["check", "m.json", "--prop", "P=? [ X \"p0\" ]"],
        );
        located_error(
            &run,
            &format!(
                "smoothing: the smoothed model has {n} states and {transitions} transitions, \
                 more than the limit of 16777216 transitions"
            ),
        );
        assert!(
            run.stderr.contains("--max-smoothed-transitions"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("m.json:1:"), "{}", run.stderr);
    }
}

#[test]
fn a_learned_model_kept_implicitly_is_checked_within_the_limit() {
    // 9 predicates: 512 states, 262,144 transitions with α = 1 (written implicitly). From the
    // initial state (all false), one observed move to itself: P(X p0) is the α-mass of the
    // 256 states where p0 holds, 256 · 1 / (1 + 512).
    let dir = tempfile::tempdir().unwrap();
    unconstrained_predicates(dir.path(), 9);
    let run = augur(
        dir.path(),
        &[
            "learn",
            "t.jsonl",
            "--abstraction",
            "spec.toml",
            "--alpha",
            "1",
            "-o",
            "m.json",
        ],
    );
    ok(&run);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    assert!(doc.get("transitions").is_none() && doc.get("smoothing").is_some());
    assert_eq!(
        doc["smoothing"]["successor_sets"],
        serde_json::json!(["all"])
    );
    let run = augur(
        dir.path(),
        &["check", "m.json", "--prop", "P=? [ X \"p0\" ]"],
    );
    let v = value(ok(&run));
    assert!((v - 256.0 / 513.0).abs() < 1e-12, "{v}");
    // Under a lower limit: refused.
    let run = augur(
        dir.path(),
        &[
            "check",
            "m.json",
            "--prop",
            "P=? [ X \"p0\" ]",
            "--max-smoothed-transitions",
            "262143",
        ],
    );
    located_error(
        &run,
        "512 states and 262144 transitions, more than the limit of 262143",
    );
}

#[test]
fn a_json_label_map_with_a_name_given_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.json",
        r#"{"states": 2, "initial": [0], "rows": [[[1, 1]], [[1, 1]]],
            "labels": {"a": [0], "a": [1]}}"#,
    );
    let run = augur(
        dir.path(),
        &["check", "m.json", "--prop", "P=? [ F \"a\" ]"],
    );
    located_error(&run, "label \"a\" defined twice");
}

// ---- 8. Overflow is never a NaN or a silently wrong verdict ----

#[test]
fn rewards_near_the_largest_double_are_never_nan() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.pm",
        "dtmc\nmodule m\n  x : [0..2] init 0;\n  [] x=0 -> 0.5 : (x'=1) + 0.5 : (x'=2);\n  [] x=1 -> (x'=2);\n  [] x=2 -> true;\nendmodule\nrewards \"r\"\n  x<2 : 1e308;\nendrewards\nlabel \"goal\" = x=2;\n",
    );
    for method in ["interval", "auto", "exact"] {
        let run = augur(
            dir.path(),
            &[
                "check",
                "m.pm",
                "--method",
                method,
                "--prop",
                "R=? [ F \"goal\" ]",
            ],
        );
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(!all.contains("NaN"), "{method}: {all}");
        assert!(matches!(run.code, Some(0) | Some(1)), "{method}: {all}");
    }
}

/// The value and the bounds printed for the property: `= v [lo, hi]` (bounds `None` when the
/// method printed none).
fn value_and_bounds(stdout: &str) -> (f64, Option<(f64, f64)>) {
    let after = stdout.split("= ").nth(1).expect("a value");
    let v = after
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .expect("a number");
    let bounds = after
        .split_once('[')
        .and_then(|(_, b)| b.split_once(']'))
        .and_then(|(b, _)| b.split_once(", "))
        .map(|(l, h)| (l.parse().expect("lo"), h.parse().expect("hi")));
    (v, bounds)
}

const METHODS: [&str; 4] = ["interval", "topological", "auto", "exact"];

#[test]
fn rewards_near_the_largest_double_give_the_exact_value_and_verdict() {
    // From x=0: 1e308 + 0.5·1e308 = 1.5e308 (by hand; below f64::MAX ≈ 1.798e308), so every
    // method must give 1.5e308 within ε, bounds that contain it, and `R>=1e308` true.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.pm",
        "dtmc\nmodule m\n  x : [0..2] init 0;\n  [] x=0 -> 0.5 : (x'=1) + 0.5 : (x'=2);\n  [] x=1 -> (x'=2);\n  [] x=2 -> true;\nendmodule\nrewards \"r\"\n  x<2 : 1e308;\nendrewards\nlabel \"goal\" = x=2;\n",
    );
    for method in METHODS {
        let run = augur(
            dir.path(),
            &[
                "check",
                "m.pm",
                "--method",
                method,
                "--prop",
                "R=? [ F \"goal\" ]",
            ],
        );
        let (v, bounds) = value_and_bounds(ok(&run));
        assert!(
            (v / 1.5e308 - 1.0).abs() <= 1e-6,
            "{method}: {}",
            run.stdout
        );
        if let Some((lo, hi)) = bounds {
            assert!(lo <= 1.5e308 && 1.5e308 <= hi, "{method}: {}", run.stdout);
        }
        let run = augur(
            dir.path(),
            &[
                "check",
                "m.pm",
                "--method",
                method,
                "--prop",
                "R>=1e308 [ F \"goal\" ]",
            ],
        );
        assert!(ok(&run).contains("= true"), "{method}: {}", run.stdout);
    }
}

#[test]
fn rewards_that_overflow_a_double_give_inf_with_sound_bounds() {
    // x=0 -> x=1 -> x=2 (goal), 1e308 in each of the first two: the value 2e308 is beyond
    // f64::MAX, so the answer is inf (its lower bound at least f64::MAX), never NaN, and
    // `R>=1e308` is true, as exact arithmetic says.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.pm",
        "dtmc\nmodule m\n  x : [0..2] init 0;\n  [] x<2 -> (x'=x+1);\n  [] x=2 -> true;\nendmodule\nrewards \"r\"\n  x<2 : 1e308;\nendrewards\nlabel \"goal\" = x=2;\n",
    );
    for method in METHODS {
        let run = augur(
            dir.path(),
            &[
                "check",
                "m.pm",
                "--method",
                method,
                "--prop",
                "R=? [ F \"goal\" ]",
            ],
        );
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(!all.contains("NaN"), "{method}: {all}");
        let (v, bounds) = value_and_bounds(ok(&run));
        assert_eq!(v, f64::INFINITY, "{method}: {all}");
        if let Some((lo, hi)) = bounds {
            assert!(lo >= f64::MAX && hi == f64::INFINITY, "{method}: {all}");
        }
        let run = augur(
            dir.path(),
            &[
                "check",
                "m.pm",
                "--method",
                method,
                "--prop",
                "R>=1e308 [ F \"goal\" ]",
            ],
        );
        assert!(ok(&run).contains("= true"), "{method}: {}", run.stdout);
    }
}

#[test]
fn a_discount_close_to_one_on_a_periodic_chain_is_answered() {
    // The two-state cycle earns 1 per step: Σ_i d^i = 1/(1−d) = 1e6 for d = 0.999999 (by
    // hand); with 1e308 per step the value 1e314 is beyond f64::MAX: inf.
    let dir = tempfile::tempdir().unwrap();
    two_cycle(dir.path());
    let run = augur(
        dir.path(),
        &["check", "c.pm", "--prop", "R=? [ C{discount=0.999999} ]"],
    );
    let (v, bounds) = value_and_bounds(ok(&run));
    let exact = 1.0 / (1.0 - 0.999999);
    assert!((v / exact - 1.0).abs() <= 1e-6, "{}", run.stdout);
    if let Some((lo, hi)) = bounds {
        assert!(
            lo <= exact * (1.0 + 1e-12) && exact * (1.0 - 1e-12) <= hi,
            "{}",
            run.stdout
        );
    }
    write(
        dir.path(),
        "big.pm",
        "dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> (x'=1);\n  [] x=1 -> (x'=0);\nendmodule\nrewards \"r\"\n  true : 1e308;\nendrewards\n",
    );
    let run = augur(
        dir.path(),
        &["check", "big.pm", "--prop", "R=? [ C{discount=0.999999} ]"],
    );
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(!all.contains("NaN"), "{all}");
    assert_eq!(value_and_bounds(ok(&run)).0, f64::INFINITY, "{all}");
}

#[test]
fn a_properties_file_label_that_redefines_a_model_label_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gambler = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/gambler.drn");
    std::fs::copy(gambler, dir.path().join("g.drn")).unwrap();
    for (text, name) in [
        ("label \"win\" = \"ruin\";\nP=? [ F \"win\" ]\n", "win"),
        ("label \"init\" = false;\nP=? [ F \"init\" ]\n", "init"),
    ] {
        write(dir.path(), "p.props", text);
        let run = augur(dir.path(), &["check", "g.drn", "p.props"]);
        located_error(
            &run,
            &format!("label \"{name}\" is already a label of the model"),
        );
        assert!(run.stderr.contains("p.props:1:7"), "{}", run.stderr);
    }
}

// ---- 11. Every user error is located ----

#[test]
fn errors_of_properties_file_constants_point_at_the_declaration() {
    let dir = tempfile::tempdir().unwrap();
    let gambler = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/gambler.drn");
    std::fs::copy(gambler, dir.path().join("g.drn")).unwrap();
    for (text, needle, at) in [
        (
            "const double p;\nP>=p [ F \"win\" ]\n",
            "undefined constant p",
            "p.props:1:14",
        ),
        (
            "const int a = b;\nconst int b = a;\nP>=a [ F \"win\" ]\n",
            "cyclic constant definitions",
            "p.props:1:11",
        ),
        (
            "const int T = 3;\nconst int a = T / (T - 3);\nP=? [ F<=a \"win\" ]\n",
            "constant `a`",
            "p.props:2:11",
        ),
        (
            "const double x = zz;\nP=? [ F \"win\" ]\n",
            "zz",
            "p.props:1:14",
        ),
    ] {
        write(dir.path(), "p.props", text);
        let run = augur(dir.path(), &["check", "g.drn", "p.props"]);
        located_error(&run, needle);
        assert!(run.stderr.contains(at), "{text}\n{}", run.stderr);
    }
}

#[test]
fn an_undefined_model_constant_points_at_its_declaration() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.pm",
        "dtmc\nconst double p;\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> p : (x'=1) + 1-p : true;\n  [] x=1 -> true;\nendmodule\n",
    );
    let run = augur(dir.path(), &["check", "m.pm", "--prop", "P=? [ F x=1 ]"]);
    located_error(&run, "undefined constant p");
    assert!(run.stderr.contains("m.pm:2:14"), "{}", run.stderr);
}

#[test]
fn an_empty_init_label_is_refused_by_lab_as_by_json() {
    // Both formats: an "init" label with no state and nothing else saying where to start.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.tra", "2 2\n0 1 1\n1 1 1\n");
    write(dir.path(), "m.lab", "0=\"init\" 1=\"goal\"\n1: 1\n");
    let run = augur(
        dir.path(),
        &["check", "m.tra", "--prop", "P=? [ F \"goal\" ]"],
    );
    located_error(&run, "\"init\" label has no state");
    assert!(run.stderr.contains("m.lab:1:1"), "{}", run.stderr);
    write(
        dir.path(),
        "m.json",
        r#"{"states": 2, "rows": [[[1, 1]], [[1, 1]]], "labels": {"init": [], "goal": [1]}}"#,
    );
    let run = augur(
        dir.path(),
        &["check", "m.json", "--prop", "P=? [ F \"goal\" ]"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("initial"), "{}", run.stderr);
    assert!(run.stderr.contains("--> "), "{}", run.stderr);
}

#[test]
fn twenty_five_levels_of_doubling_labels_are_answered() {
    // label "l{i}" = "l{i-1}" & "l{i-1}": written out, 2^25 copies of "l0"; each label is
    // evaluated once per state, so the answer (l0 holds in state 1 only: P(F l25) = 1 from
    // state 0 of the two-state chain) comes at once.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.tra", "2 2\n0 1 1\n1 1 1\n");
    let mut props = String::from("label \"l0\" = \"goal\";\n");
    for i in 1..=25 {
        props.push_str(&format!(
            "label \"l{i}\" = \"l{}\" & \"l{}\";\n",
            i - 1,
            i - 1
        ));
    }
    props.push_str("P=? [ F \"l25\" ]\n");
    write(dir.path(), "m.lab", "0=\"init\" 1=\"goal\"\n0: 0\n1: 1\n");
    write(dir.path(), "p.props", &props);
    let run = augur(dir.path(), &["check", "m.tra", "p.props"]);
    assert_eq!(value(ok(&run)), 1.0, "{}", run.stdout);
}

#[test]
fn invalid_utf8_is_located_at_its_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.pm"),
        b"dtmc\nmodule m\n  x : [0..1] init 0; // \xff\n  [] x=0 -> (x'=1);\nendmodule\n",
    )
    .unwrap();
    let run = augur(dir.path(), &["check", "m.pm", "--prop", "P=? [ F x=1 ]"]);
    located_error(&run, "not valid UTF-8: byte 38");
    assert!(run.stderr.contains("m.pm:3:25"), "{}", run.stderr);
    std::fs::write(dir.path().join("m.tra"), b"2 2\n0 1 1\n1 1 \xc31\n").unwrap();
    let run = augur(dir.path(), &["check", "m.tra", "--prop", "P=? [ F true ]"]);
    located_error(&run, "not valid UTF-8: byte 14");
    assert!(run.stderr.contains("m.tra:3:5"), "{}", run.stderr);
    std::fs::write(
        dir.path().join("m.json"),
        b"{\"states\": 1,\n \"initial\": [0], \"rows\": [[[0, 1]]], \"x\": \"\xfe\"}",
    )
    .unwrap();
    let run = augur(dir.path(), &["check", "m.json", "--prop", "P=? [ F true ]"]);
    located_error(&run, "not valid UTF-8");
    assert!(run.stderr.contains("m.json:2:"), "{}", run.stderr);
    write(
        dir.path(),
        "ok.pm",
        "dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> (x'=1);\n  [] x=1 -> true;\nendmodule\n",
    );
    std::fs::write(
        dir.path().join("p.props"),
        b"P=? [ F x=1 ]\n\"\xe2\x82\": P=? [ F x=0 ]\n",
    )
    .unwrap();
    let run = augur(dir.path(), &["check", "ok.pm", "p.props"]);
    located_error(&run, "not valid UTF-8: byte 15");
    assert!(run.stderr.contains("p.props:2:2"), "{}", run.stderr);
}

// ---- Issue 22, class 1: synchronised products of branches and of commands ----

/// Four modules synchronising on `[a]`, each with one command of 200 branches: identical
/// branches (`(x'=1)` 200 times) or distinct ones (`(x'=i)`).
fn sync_branches(distinct: bool) -> String {
    let mut s = String::from("dtmc\n");
    for m in 0..4 {
        let br: Vec<String> = (0..200)
            .map(|i| format!("1/200:(x{m}'={})", if distinct { i } else { 1 }))
            .collect();
        s += &format!(
            "module m{m}\n  x{m} : [0..200] init 0;\n  [a] true -> {};\nendmodule\n",
            br.join(" + ")
        );
    }
    s
}

#[test]
fn two_hundred_identical_synchronised_branches_per_module_are_merged_while_combining() {
    // 200^4 = 1.6e9 combinations, one distinct successor: merged level by level, the build
    // stays small (it once built every combination and aborted at 3 GB).
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &sync_branches(false));
    let run = augur(
        dir.path(),
        &[
            "check",
            "m.pm",
            "--method",
            "exact",
            "--prop",
            "P=? [ X x0=1 ]",
        ],
    );
    // One step: every combination goes to (1,1,1,1): probability 200^4 * (1/200)^4 = 1.
    assert!(ok(&run).contains("= 1 "), "{}", run.stdout);
}

#[test]
fn two_hundred_distinct_synchronised_branches_per_module_stop_at_the_state_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &sync_branches(true));
    let run = augur(
        dir.path(),
        &[
            "check",
            "m.pm",
            "--prop",
            "P=? [ F x0=1 ]",
            "--max-states",
            "100000",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("state limit exceeded: the model has more than 100000 states"),
        "{}",
        run.stderr
    );
}

/// Four modules, each with 200 `[a]` commands enabled at once: 200^4 choices in the first state.
fn sync_commands() -> String {
    let mut s = String::from("dtmc\n");
    for m in 0..4 {
        s += &format!("module m{m}\n  x{m} : [0..200] init 0;\n");
        for _ in 0..200 {
            s += &format!("  [a] x{m}<200 -> (x{m}'=x{m}+1);\n");
        }
        s += "endmodule\n";
    }
    s
}

#[test]
fn a_product_of_synchronised_commands_counts_against_the_state_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &sync_commands());
    let run = augur(
        dir.path(),
        &[
            "check",
            "m.pm",
            "--prop",
            "P=? [ F x0=1 ]",
            "--max-states",
            "1000",
        ],
    );
    located_error(
        &run,
        "more than 1000 transitions over 1001 choices from one state",
    );
    assert!(run.stderr.contains("m.pm:4:3"), "{}", run.stderr);
}

#[test]
fn a_product_of_synchronised_commands_counts_against_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &sync_commands());
    let run = augur(
        dir.path(),
        &[
            "check",
            "m.pm",
            "--prop",
            "P=? [ F x0=1 ]",
            "--max-states",
            "100000000000",
            "--timeout",
            "1",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("time limit exceeded"), "{}", run.stderr);
}

/// A chain of `n` states whose last is labelled "violated" (small text, many states).
fn long_chain(n: u32) -> String {
    format!(
        "dtmc\nmodule m\n  x : [0..{last}] init 0;\n  [] x<{last} -> 1/2:(x'=x+1) + 1/2:(x'=0);\n  [] x={last} -> true;\nendmodule\nlabel \"violated\" = x={last};\n",
        last = n - 1
    )
}

#[test]
fn monitor_compile_bounds_states_times_horizon_before_allocating() {
    // 5,000 states × H = 10,000 (the cap on H) = 5e7 curve entries, over the budget of 2^25:
    // refused before the curve is made, naming --horizon and the state count (n × H doubles
    // once aborted the process with 262,144 states).
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", &long_chain(5000));
    let run = augur(
        dir.path(),
        &[
            "monitor",
            "compile",
            "m.pm",
            "--prop",
            "P=? [ F \"violated\" ]",
            "--horizon",
            "10000",
            "-o",
            "m.json",
        ],
    );
    located_error(&run, "5000 states × 10000 horizons");
    assert!(run.stderr.contains("--horizon"), "{}", run.stderr);
    assert!(!dir.path().join("m.json").exists());
    // The horizon taken from the property's step bound is located at the bound.
    let run = augur(
        dir.path(),
        &[
            "monitor",
            "compile",
            "m.pm",
            "--prop",
            "P=? [ F<=9000 \"violated\" ]",
            "-o",
            "m.json",
        ],
    );
    located_error(&run, "5000 states × 9000 horizons");
    assert!(run.stderr.contains("--prop"), "{}", run.stderr);
}

/// A 21-state chain: `x` counts from 0 to 20 and stays there.
const CHAIN21: &str = "dtmc\nmodule m\n  x : [0..20] init 0;\n  [] x<20 -> (x'=x+1);\n  [] x=20 -> true;\nendmodule\n";

/// Issue 22: the LTL automaton and the product count against `--max-states`, as a model
/// does. On the 21-state chain, `F<=3 x=5` tracks its step count (the automaton has 5 states:
/// F<=3, F<=2, F<=1, F<=0 and true), so the product has more states than the chain: 21 fit
/// the limit 25, the product does not. With the default limit it is answered: x=5 is 5 steps
/// away, so P(F<=3 x=5 & F x=20) = 0, and P(F<=7 ...) = 1.
#[test]
fn the_ltl_product_counts_against_the_state_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", CHAIN21);
    let prop = "P=? [ (F<=3 x=5) & F x=20 ]";
    let run = augur(
        dir.path(),
        &["check", "m.pm", "--prop", prop, "--max-states", "25"],
    );
    located_error(
        &run,
        "the product of the model and the LTL automaton is too large",
    );
    assert!(run.stderr.contains("more than 25 states"), "{}", run.stderr);
    assert!(run.stderr.contains("--max-states"), "{}", run.stderr);
    assert!(run.stderr.contains("--prop:1:1"), "{}", run.stderr);
    assert_eq!(check_value(dir.path(), "m.pm", prop), 0.0);
    let prop = "P=? [ (F<=7 x=5) & F x=20 ]";
    assert_eq!(check_value(dir.path(), "m.pm", prop), 1.0);
}

/// Issue 22: three nested bounded LTL operators once unrolled to ~10^9 formula nodes and
/// aborted at 4 GB under `--timeout 5`; the unrolled size is now bounded before it is built.
#[test]
fn three_nested_bounded_ltl_operators_stop_at_the_formula_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", CHAIN21);
    let prop = "P=? [ F<=1000 (F<=1000 (F<=1000 x=5)) ]";
    for limit in [["--timeout", "5"], ["--max-states", "1000"]] {
        let run = augur(
            dir.path(),
            &["check", "m.pm", "--prop", prop, limit[0], limit[1]],
        );
        located_error(
            &run,
            "the LTL formula is too large once this step bound is unrolled",
        );
        assert!(run.stderr.contains("--prop:1:8"), "{}", run.stderr);
    }
}

/// Issue 22: two nested bounded LTL operators overran `--timeout` by seconds (the automaton
/// construction did not poll the deadline); it now stops with the time limit.
#[test]
fn two_nested_bounded_ltl_operators_respect_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.pm", CHAIN21);
    let prop = "P=? [ F<=1000 (F<=1000 x=5) ]";
    let run = augur(
        dir.path(),
        &["check", "m.pm", "--prop", prop, "--timeout", "5"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("time limit of 5 s (--timeout) reached while checking property 1"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("time limit exceeded"), "{}", run.stdout);
}
