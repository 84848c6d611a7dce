//! One set of shared options on every command that loads a model (issue 14, item 6).

use crate::util::{augur as run, ok, stdout_json};

#[test]
fn check_horizon_and_export_share_their_model_options() {
    for cmd in ["check", "horizon", "export"] {
        let help = ok(&[cmd, "--help"]);
        for opt in [
            "--const",
            "--method",
            "--epsilon",
            "--json",
            "--timeout",
            "--max-states",
            "--no-fix-deadlocks",
        ] {
            assert!(
                help.contains(opt),
                "`augur {cmd} --help` lacks {opt}:\n{help}"
            );
        }
    }
}

#[test]
fn horizon_takes_the_constants_it_asks_for() {
    // sync3.pm has an undefined constant p: `horizon` accepts --const like `check`.
    // P(F<=2 "both") = (1 - 0.8^2)(1 - 0.5^2) = 0.27 (models/sync3.props).
    let out = run(&[
        "horizon",
        "models/sync3.pm",
        "--const",
        "p=0.2",
        "--target",
        "\"both\"",
        "--max",
        "2",
        "--json",
    ]);
    let j = stdout_json(&out);
    let init = j["initial"][0].as_u64().unwrap() as usize;
    let v = j["table"][init][1].as_f64().unwrap();
    assert!((v - 0.27).abs() < 1e-9, "{v}");
}

#[test]
fn export_has_json() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("die.drn");
    let o = o.to_str().unwrap();
    let j = stdout_json(&run(&[
        "export",
        "models/die.json",
        "--to",
        "drn",
        "-o",
        o,
        "--json",
    ]));
    assert_eq!(j["states"], 13);
    assert_eq!(j["outputs"][0], o);
    let j = stdout_json(&run(&[
        "export",
        "models/die.json",
        "--to",
        "prism",
        "--json",
    ]));
    assert_eq!(j["format"], "prism");
    assert!(j["text"].as_str().unwrap().contains("module augur_model"));
    // A bad epsilon is a user error on every command.
    let out = run(&["export", "models/die.json", "--to", "drn", "--epsilon", "2"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn const_overriding_a_definition_warns_with_both_values_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let props = dir.path().join("t.props");
    std::fs::write(&props, "const int T = 2;\nP=? [ F<=T \"violated\" ]\n").unwrap();
    let props = props.to_str().unwrap();
    let out = run(&[
        "check",
        "models/safetydrift.tra",
        props,
        "--const",
        "T=5",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "warning: --const T=5 overrides the value 2 defined for `T` in {props}"
        )),
        "{err}"
    );
    // The given value is the one used: P(F<=5 violated) from SAFE (models/safetydrift.props).
    let v = stdout_json(&out)["results"][0]["value"].as_f64().unwrap();
    assert!((v - 0.2671295398).abs() < 1e-9, "{v}");
    // A model's defined constant: the model file is named.
    let pm = dir.path().join("m.pm");
    std::fs::write(
        &pm,
        "dtmc\nconst int N = 2;\nmodule m\n x : [0..N] init 0;\n [] x<N -> (x'=x+1);\n [] x=N -> true;\nendmodule\n",
    )
    .unwrap();
    let out = run(&[
        "check",
        pm.to_str().unwrap(),
        "--prop",
        "P=? [ F x=3 ]",
        "--const",
        "N=3",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("overrides the value 2 defined for `N` in"),
        "{err}"
    );
    // An undefined constant given a value: no warning.
    let err = String::from_utf8_lossy(
        &run(&[
            "check",
            "models/sync3.pm",
            "--prop",
            "P=? [ F \"both\" ]",
            "--const",
            "p=0.2",
        ])
        .stderr,
    )
    .into_owned();
    assert!(!err.contains("overrides"), "{err}");
}

/// Herman's protocol with `n` processes (2^n states), as in the QVBS `herman` family.
fn herman(n: usize) -> String {
    let mut s = format!(
        "dtmc\nconst double p = 0.5;\nmodule process1\n  x1 : [0..1];\n  \
         [step]  (x1=x{n}) -> p : (x1'=0) + 1-p : (x1'=1);\n  \
         [step] !(x1=x{n}) -> (x1'=x{n});\nendmodule\n"
    );
    for i in 2..=n {
        s.push_str(&format!(
            "module process{i} = process1 [ x1=x{i}, x{n}=x{} ] endmodule\n",
            i - 1
        ));
    }
    let tokens: Vec<String> = (1..=n)
        .map(|i| format!("(x{i}=x{}?1:0)", i % n + 1))
        .collect();
    s.push_str(&format!(
        "rewards \"steps\"\n  true : 1;\nendrewards\ninit\n  true\nendinit\n\
         formula num_tokens = {};\nlabel \"stable\" = num_tokens=1;\n",
        tokens.join("+")
    ));
    s
}

#[test]
fn a_long_computation_shows_its_progress_on_a_terminal_and_stops_at_the_timeout() {
    // Exact elimination on herman with 2,048 states runs for minutes (issue 13, item 9): on
    // a terminal a progress line appears after two seconds (it once never did: the line of
    // the first property was finished before it started), the time limit stops it with exit
    // code 1, and the message points to the sound default. The terminal is a pseudo-terminal
    // made by Python's `pty` module (Python 3 is a requirement of the test command).
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("herman11.pm");
    std::fs::write(&model, herman(11)).unwrap();
    let script = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
end = time.time() + 60
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.5)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_augur"))
        .args(["check", model.to_str().unwrap()])
        .args(["--prop", "R=? [ F \"stable\" ]", "--method", "exact"])
        .args(["--timeout", "4"])
        .output()
        .expect("python3 runs (a requirement of the test command)");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("solving") && text.contains("eliminated unknowns"),
        "{text}"
    );
    assert!(text.contains("time limit exceeded (after 4.0 s)"), "{text}");
    assert!(text.contains("--method auto"), "{text}");
}
