//! End-to-end tests of bad input found by QA: each case must end with a clear message and exit
//! code 1 (or, for a closed output pipe, a quiet exit 0), never a panic (exit code 101) or a
//! silently wrong answer.

use crate::util;
use std::io::Write;
use std::process::{Output, Stdio};

fn augur_in(dir: &std::path::Path, args: &[&str]) -> Output {
    util::cmd()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run augur")
}

/// Runs augur with stdout and stderr closed before it writes anything, and returns its exit
/// code. Writing to a closed pipe must stop the command quietly (exit 0), not report an error
/// (exit 1) and certainly not panic while reporting it on a closed stderr (exit 101).
fn with_closed_pipes(args: &[&str]) -> Option<i32> {
    let mut child = util::cmd()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run augur");
    drop(child.stdout.take());
    drop(child.stderr.take());
    child.wait().expect("wait for augur").code()
}

#[test]
fn closed_stdout_is_not_an_error() {
    // Enough output that the writes cannot all fit before the pipe is seen closed.
    let code = with_closed_pipes(&[
        "simulate",
        "models/safetydrift.tra",
        "-n",
        "2000",
        "--max-steps",
        "20",
        "--seed",
        "3",
    ]);
    assert_eq!(code, Some(0), "simulate into a closed pipe");
    let code = with_closed_pipes(&[
        "pac",
        "--states",
        "10",
        "--observations",
        "400",
        "--p-hat",
        "0.2",
        "--epsilon",
        "0.05",
        "--delta",
        "0.01",
    ]);
    assert_eq!(code, Some(0), "pac into a closed pipe");
}

#[test]
fn json_model_with_a_label_or_reward_defined_twice_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    // Two labels "one": before the fix their states were merged silently, so `F "one"` was
    // answered for {1, 2} instead of being rejected.
    let model = r#"{"states": 3, "initial": [0],
        "rows": [[[1, 0.5], [2, 0.5]], [[1, 1]], [[2, 1]]],
        "labels": [{"name": "one", "states": [1]}, {"name": "one", "states": [2]}]}"#;
    std::fs::File::create(dir.path().join("m.json"))
        .unwrap()
        .write_all(model.as_bytes())
        .unwrap();
    let out = augur_in(
        dir.path(),
        &["check", "m.json", "--prop", "P=? [F \"one\"]"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("m.json"), "{err}");
    assert!(err.contains("label \"one\" defined twice"), "{err}");

    let model = r#"{"states": 1, "initial": [0], "rows": [[[0, 1]]],
        "rewards": [{"name": "r", "state": [1]}, {"name": "r", "state": [5]}]}"#;
    std::fs::write(dir.path().join("r.json"), model).unwrap();
    let out = augur_in(
        dir.path(),
        &["check", "r.json", "--prop", "R{\"r\"}=? [C<=1]"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reward structure \"r\" defined twice"),
        "{err}"
    );
}

#[test]
fn missing_abstraction_spec_names_the_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"id\":\"a\",\"steps\":[{\"state\":\"A\"},{\"state\":\"B\"}]}\n",
    )
    .unwrap();
    let out = augur_in(
        dir.path(),
        &[
            "learn",
            "t.jsonl",
            "--abstraction",
            "nospec.toml",
            "-o",
            "m.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nospec.toml: cannot read"), "{err}");
    // The OS reason was printed twice ("...: No such file ... : No such file ...").
    assert_eq!(err.matches("os error").count(), 1, "{err}");
}

#[test]
fn export_to_prism_on_stdout_with_a_non_identifier_label_is_a_user_error() {
    let dir = tempfile::tempdir().unwrap();
    // A state named like `augur simulate` names states of a model with valuations.
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"id\":\"a\",\"steps\":[{\"state\":\"x=0\"},{\"state\":\"x=1\"}]}\n",
    )
    .unwrap();
    let out = augur_in(dir.path(), &["learn", "t.jsonl", "-o", "m.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // With -o this was already exit 1; on stdout it was "internal error", exit 2.
    let out = augur_in(dir.path(), &["export", "m.json", "--to", "prism"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("\"x=0\" is not an identifier"), "{err}");
    assert!(!err.contains("internal error"), "{err}");
}

#[test]
fn a_properties_file_with_a_byte_order_mark_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.json"),
        r#"{"states": 2, "initial": [0], "rows": [[[0, 0.5], [1, 0.5]], [[1, 1]]], "labels": {"goal": [1]}}"#,
    )
    .unwrap();
    // Before: "expected `(`, `;`, properties file or operator" at 1:1, pointing at nothing.
    std::fs::write(
        dir.path().join("p.props"),
        "\u{feff}P=? [ F<=1 \"goal\" ];\n",
    )
    .unwrap();
    let out = augur_in(dir.path(), &["check", "m.json", "p.props"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One step from state 0 reaches the goal with probability 1/2.
    assert!(stdout.contains("= 0.5"), "{stdout}");
}

#[test]
fn by_category_refuses_two_categories_that_map_to_one_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"id\":\"a\",\"category\":\"a/b\",\"steps\":[{\"state\":\"A\"},{\"state\":\"B\"}]}\n\
         {\"id\":\"b\",\"category\":\"a_b\",\"steps\":[{\"state\":\"A\"}]}\n",
    )
    .unwrap();
    // Before: both were written to m.a_b.json, the second overwriting the first.
    let out = augur_in(
        dir.path(),
        &["learn", "t.jsonl", "--by-category", "-o", "m.json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("categories `a/b` and `a_b`"), "{err}");
    assert!(!dir.path().join("m.a_b.json").exists());
}

#[test]
fn a_const_that_nothing_declares_or_uses_is_a_typo_error() {
    let root = util::root();
    // `q` is neither a constant of sync3.pm / sync3.props nor used by a property.
    let out = augur_in(
        root,
        &[
            "check",
            "models/sync3.pm",
            "models/sync3.props",
            "--const",
            "p=0.2,q=3",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--const q"), "{err}");
    // A name declared nowhere but used by a --prop is still a constant for it: F<=T with T=3
    // from SAFE is [P^3]_{0,4} = 0.121966 (models/README.md, the horizon table).
    let out = augur_in(
        root,
        &[
            "check",
            "models/safetydrift.tra",
            "--prop",
            "P=? [ F<=T \"violated\" ]",
            "--const",
            "T=3",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0.121966"));
}

#[test]
fn a_warning_on_a_closed_stderr_does_not_panic() {
    // sync3.pm has deadlock states: the build warns on stderr before anything is printed.
    // With both pipes closed the warning is lost and the output stops quietly (exit 0);
    // `eprintln!` would have panicked (exit 101).
    let code = with_closed_pipes(&[
        "check",
        "models/sync3.pm",
        "models/sync3.props",
        "--const",
        "p=0.2",
    ]);
    assert_eq!(code, Some(0));
}

/// A PRISM model with `n` states in a line, and a 2-cycle earning 1 per step (`C<=k` sweeps
/// k times: it never reaches a fixed point).
fn limit_models(dir: &std::path::Path) {
    std::fs::write(
        dir.join("line.pm"),
        "dtmc\nmodule m\n  x : [0..100000] init 0;\n  [] x<100000 -> (x'=x+1);\n  [] x=100000 -> true;\nendmodule\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("cycle.pm"),
        "dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> (x'=1);\n  [] x=1 -> (x'=0);\nendmodule\nrewards \"r\"\n  true : 1;\nendrewards\n",
    )
    .unwrap();
}

#[test]
fn a_model_larger_than_max_states_is_a_user_error_with_the_count_so_far() {
    let dir = tempfile::tempdir().unwrap();
    limit_models(dir.path());
    let out = augur_in(
        dir.path(),
        &[
            "check",
            "line.pm",
            "--prop",
            "P=? [ F x=5 ]",
            "--max-states",
            "1000",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "error: state limit exceeded: the model has more than 1000 states (1001 found, 999 explored so far)\n  = note: raise the limit with --max-states N\n"
    );
    // The same for the other commands that load a model.
    for args in [
        &[
            "horizon",
            "line.pm",
            "--target",
            "x=5",
            "--max",
            "2",
            "--max-states",
            "10",
        ][..],
        &["export", "line.pm", "--to", "drn", "--max-states", "10"][..],
        &[
            "simulate",
            "line.pm",
            "-n",
            "1",
            "--max-steps",
            "2",
            "--max-states",
            "10",
        ][..],
    ] {
        let out = augur_in(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("more than 10 states"), "{args:?}: {err}");
    }
    // The default limit does not stand in the way.
    let out = augur_in(dir.path(), &["check", "line.pm", "--prop", "P=? [ F x=5 ]"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_timeout_in_an_experiment_names_the_property_file_line_and_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // The cycle of the test below with its length N a constant: C<=10^12 never settles.
    std::fs::write(
        dir.path().join("cycle.pm"),
        "dtmc\nconst int N;\nmodule m\n  x : [0..N-1] init 0;\n  [] true -> (x'=mod(x+1, N));\nendmodule\nrewards \"r\"\n  x=0 : 1;\nendrewards\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cycle.props"),
        "// the first holds in every run\nR=? [ C<=3 ]\n\nR=? [ C<=1000000000000 ]\n",
    )
    .unwrap();
    let out = augur_in(
        dir.path(),
        &[
            "check",
            "cycle.pm",
            "cycle.props",
            "--const",
            "N=300:100:500",
            "--timeout",
            "0.5",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("time limit of 0.5 s (--timeout) reached while checking property 2 (experiment run N=300)"),
        "{err}"
    );
    assert!(err.contains(" --> cycle.props:4:1"), "{err}");
    assert!(err.contains('^'), "{err}");
    // A model too large to build within the limit: the run is named too.
    let out = augur_in(
        dir.path(),
        &[
            "check",
            "cycle.pm",
            "cycle.props",
            "--const",
            "N=300:100:500",
            "--timeout",
            "0.000001",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("(experiment run N=300)"), "{err}");
}

#[test]
fn a_timeout_is_a_user_error_and_stops_the_remaining_properties() {
    let dir = tempfile::tempdir().unwrap();
    // A 300-state cycle (above the size where huge step bounds are taken by repeated
    // squaring) with a reward in one state only: the expected reward per step never settles,
    // so C<=10^12 sweeps until the time limit. From x=0 the reward is collected at step 0
    // only within 3 steps: C<=3 = C<=2 = 1.
    std::fs::write(
        dir.path().join("cycle.pm"),
        "dtmc\nmodule m\n  x : [0..299] init 0;\n  [] true -> (x'=mod(x+1, 300));\nendmodule\nrewards \"r\"\n  x=0 : 1;\nendrewards\n",
    )
    .unwrap();
    let out = augur_in(
        dir.path(),
        &[
            "check",
            "cycle.pm",
            "--prop",
            "R=? [ C<=3 ]",
            "--prop",
            "R=? [ C<=1000000000000 ]",
            "--prop",
            "R=? [ C<=2 ]",
            "--timeout",
            "0.5",
            "--json",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("time limit of 0.5 s (--timeout) reached while checking property 2"),
        "{err}"
    );
    assert!(err.contains(" --> --prop:1:1"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &j["results"];
    assert_eq!(r[0]["value"], 1.0);
    assert_eq!(r[1]["error"], "time limit exceeded (after 0.5 s)");
    assert_eq!(r[2]["error"], "time limit exceeded (after 0.5 s)");
    // Bad values of the options are user errors too.
    for bad in ["0", "-1", "abc"] {
        let out = augur_in(
            dir.path(),
            &[
                "check",
                "cycle.pm",
                "--prop",
                "R=? [ C<=2 ]",
                "--timeout",
                bad,
            ],
        );
        assert_eq!(out.status.code(), Some(1), "--timeout {bad}");
    }
}

/// Issue 9: bounds were validated by the parser, `instantiate` and the checker with different
/// rules. Now a bound written with a constant gets exactly the message of the same bound
/// written literally, located at the bound with a caret.
#[test]
fn a_bound_from_a_constant_fails_like_the_literal() {
    let root = util::root();
    let message = |prop: &str, consts: Option<&str>| {
        let mut args = vec!["check", "models/safetydrift.tra", "--prop", prop];
        if let Some(c) = consts {
            args.extend(["--const", c]);
        }
        let out = augur_in(root, &args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{prop}: {err}");
        assert!(err.contains("--> --prop:1:"), "{prop}: {err}");
        assert!(err.contains('^'), "{prop}: {err}");
        err.lines().next().unwrap_or_default().to_string()
    };
    for (literal, named, value) in [
        // A step bound must be an integer (as PRISM): the checker used to accept k = 3.0.
        (
            "P=? [ F<=3.0 \"violated\" ]",
            "P=? [ F<=k \"violated\" ]",
            "k=3.0",
        ),
        // One message for a threshold out of range.
        (
            "P>=1.5 [ F \"violated\" ]",
            "P>=p [ F \"violated\" ]",
            "p=1.5",
        ),
        // Negative, empty and `<0` step bounds: the checker had its own words for these.
        (
            "P=? [ F<=-2 \"violated\" ]",
            "P=? [ F<=k \"violated\" ]",
            "k=-2",
        ),
        (
            "P=? [ F<0 \"violated\" ]",
            "P=? [ F<k \"violated\" ]",
            "k=0",
        ),
        (
            "P=? [ F[5,2] \"violated\" ]",
            "P=? [ F[k,2] \"violated\" ]",
            "k=5",
        ),
        ("R=? [ C{discount=1.5} ]", "R=? [ C{discount=d} ]", "d=1.5"),
    ] {
        let lit = message(literal, None);
        assert_eq!(message(named, Some(value)), lit, "{named} with {value}");
    }
    assert_eq!(
        message("P=? [ F<=k \"violated\" ]", Some("k=3.0")),
        "error: step bound must be an integer, found 3.0"
    );
}
