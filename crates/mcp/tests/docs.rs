//! The JSON blocks of docs/mcp.md, which the documents' test (tests/conformance/docs.rs)
//! does not run: every block is JSON, and every `mcpServers` block (the client
//! configurations to paste, the upstreams file) is read without error by the gateway's
//! `--upstream-config` reader, with the servers the block names.
#![cfg(feature = "stdio")]

use augur_mcp::gateway::config::parse_config;

/// The fenced blocks of language `json` in `text`: (line of the fence, body).
fn json_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let is_json = info.split_whitespace().next() == Some("json");
        let mut body = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        if is_json {
            out.push((i + 1, body));
        }
    }
    out
}

#[test]
fn every_json_block_of_docs_mcp_md_is_valid_and_every_mcp_servers_block_is_accepted() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/mcp.md");
    let text = std::fs::read_to_string(path).expect("docs/mcp.md");
    let blocks = json_blocks(&text);
    let mut configs = 0;
    for (line, body) in &blocks {
        let v: serde_json::Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("docs/mcp.md:{line}: not JSON: {e}"));
        let Some(servers) = v.get("mcpServers").and_then(|s| s.as_object()) else {
            continue;
        };
        let specs = parse_config(&format!("docs/mcp.md:{line}"), body)
            .unwrap_or_else(|e| panic!("{}", e.message));
        let mut got: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let mut want: Vec<&str> = servers.keys().map(String::as_str).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "docs/mcp.md:{line}");
        configs += 1;
    }
    // The configuration for a client, the upstreams file, the gateway for a client.
    assert!(
        configs >= 3,
        "only {configs} mcpServers blocks in docs/mcp.md"
    );
}

#[test]
fn the_block_reader_finds_json_blocks_only() {
    let text = "a\n```json\n{\"a\": 1}\n```\n```console\n$ augur\n```\n```json not-run\n[]\n```\n";
    assert_eq!(
        json_blocks(text),
        vec![(2, "{\"a\": 1}\n".to_string()), (8, "[]\n".to_string())]
    );
}
