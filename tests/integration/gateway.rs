//! `augur mcp` at its edges (issue 27, the gateway; issue 28 item 3): the user errors of the
//! gateway's options (snapshots: a bad `--upstream`, a located error in an `mcpServers` file,
//! a gateway option without an upstream, an upstream that cannot be started), the warning when
//! no session can ever be opened, and end of input before or after the initialisation as a
//! normal end (exit 0). The gateway's protocol behaviour is tested with the official MCP
//! Python SDK (`crates/mcp/tests/python/test_gateway.py`).

use crate::util;
use std::io::Write;
use std::process::Stdio;

const DIR: &str = "tests/fixtures/errors";

fn user_error(args: &[&str]) -> String {
    let out = util::cmd()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    stderr
}

#[test]
fn an_upstream_without_a_name_is_a_user_error() {
    insta::assert_snapshot!(user_error(&["mcp", "--upstream", "python3 server.py"]));
}

#[test]
fn an_upstream_command_with_an_unclosed_quote_is_a_user_error() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream",
        "mail=python3 'server.py"
    ]));
}

#[test]
fn a_bad_mcp_servers_file_is_located() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream-config",
        &format!("{DIR}/mcp_servers_bad.json")
    ]));
}

#[test]
fn a_mcp_servers_file_that_is_not_json_is_located() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream-config",
        &format!("{DIR}/mcp_servers_syntax.json")
    ]));
}

#[test]
fn a_gateway_option_without_an_upstream_is_a_user_error() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--session",
        "a",
        "--audit",
        "audit.jsonl"
    ]));
}

#[test]
fn an_upstream_that_cannot_be_started_is_a_user_error() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream",
        "mail=/nonexistent/mail-server --port 1"
    ]));
}

#[test]
fn two_upstreams_of_one_name_are_a_user_error() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream",
        "mail=/bin/true",
        "--upstream",
        "mail=/bin/false"
    ]));
}

#[test]
fn an_upstream_ca_without_an_https_upstream_is_a_user_error() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream",
        "mail=/bin/true",
        "--upstream-ca",
        "ca.pem"
    ]));
    insta::assert_snapshot!(
        "upstream_ca_without_an_upstream",
        user_error(&["mcp", "--session", "a", "--upstream-ca", "ca.pem"])
    );
}

#[test]
fn a_missing_upstream_ca_file_is_a_user_error_before_any_connection() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream",
        "web=https://127.0.0.1:1/mcp",
        "--upstream-ca",
        "/nonexistent/ca.pem"
    ]));
}

#[test]
fn a_ca_file_for_a_plain_http_upstream_is_located() {
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--upstream-config",
        &format!("{DIR}/mcp_servers_ca_http.json")
    ]));
}

/// Runs `augur mcp ARGS` with `input` on stdin; returns (exit code, stdout, stderr).
fn mcp_with_input(args: &[&str], input: &[u8]) -> (Option<i32>, String, String) {
    let mut child = util::cmd()
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn end_of_input_before_initialisation_is_a_normal_end() {
    let (code, stdout, stderr) = mcp_with_input(&["--session", "a"], b"");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "");
    assert!(!stderr.contains("internal error"), "{stderr}");
}

#[test]
fn end_of_input_after_the_initialise_request_is_a_normal_end() {
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#;
    let (code, stdout, stderr) = mcp_with_input(&["--session", "a"], init);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"id\":1"), "{stdout}");
    // And after the initialised notification and a call.
    let mut more = init.to_vec();
    more.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
"#,
    );
    let (code, stdout, stderr) = mcp_with_input(&["--session", "a"], &more);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"id\":2"), "{stdout}");
}

#[test]
fn a_server_where_no_session_can_be_opened_warns_at_start() {
    let (code, _, stderr) = mcp_with_input(&[], b"");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: augur mcp: no --session and no --harness"),
        "{stderr}"
    );
    for args in [&["--session", "a"][..], &["--harness"]] {
        let (code, _, stderr) = mcp_with_input(args, b"");
        assert_eq!(code, Some(0), "{stderr}");
        assert!(!stderr.contains("warning"), "{args:?}: {stderr}");
    }
}

/// A monitor compiled with an older built-in classifier (this fixture embeds the default
/// rules' first version, before the classifier fixes) is refused by the gateway with the
/// command that recompiles it (issue 39); `--strict-classifier=false` serves with it, saying
/// so, and says that its provenance is off (it has no provenance section). A monitor
/// compiled from a classifier the user wrote is never stale.
#[test]
fn a_stale_monitor_is_refused_by_the_gateway() {
    let stale = format!("{DIR}/monitor/risk.json");
    let upstream = format!("self={} mcp --session u", env!("CARGO_BIN_EXE_augur"));
    insta::assert_snapshot!(user_error(&[
        "mcp",
        "--monitor",
        &stale,
        "--upstream",
        &upstream
    ]));
    // Served until its input ends (exit 0); its start-up messages.
    let served = |args: &[&str]| {
        let out = util::cmd()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        stderr
    };
    let stderr = served(&[
        "mcp",
        "--monitor",
        &stale,
        "--strict-classifier=false",
        "--upstream",
        &upstream,
    ]);
    assert!(
        stderr.contains("warning: augur mcp: --monitor") && stderr.contains("version 1, older"),
        "{stderr}"
    );
    assert!(stderr.contains("provenance is off"), "{stderr}");
    // The user's own classifier (a copy of the built-in rules with one rule more) is theirs.
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("mine.toml");
    std::fs::write(
        &own,
        "version = 1\nextends = \"default\"\n[[rule]]\nid = \"mine\"\ntools = [\"frobnicate\"]\nimplies = { d = \"NONE\", t = \"READ_ONLY\", r = \"FULLY_REVERSIBLE\" }\n",
    )
    .unwrap();
    let m = dir.path().join("m.json");
    let o = util::augur(&[
        "monitor",
        "compile",
        "models/safetydrift.tra",
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "--classifier",
        own.to_str().unwrap(),
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", util::stderr(&o));
    let stderr = served(&[
        "mcp",
        "--monitor",
        m.to_str().unwrap(),
        "--upstream",
        &upstream,
    ]);
    assert!(!stderr.contains("older than"), "{stderr}");
}
