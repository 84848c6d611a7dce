//! The stdio server (`augur_mcp::stdio::serve`, what `augur mcp` runs) over in-memory pipes,
//! line by line as a client sends them: JSON-RPC 2.0's answers to malformed input (a parse
//! error for a line that is not JSON, an invalid request for JSON of the wrong shape, both with
//! `"id": null`), and the server still serving after each. (The same with the official Python
//! MCP client and the real binary: tests/python/test_mcp_stdio.py.)
#![cfg(feature = "stdio")]

use augur_gate::Policy;
use augur_mcp::server::default_monitor;
use augur_mcp::{Config, Server};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Client {
    w: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    r: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl Client {
    async fn send(&mut self, line: &[u8]) {
        self.w.write_all(line).await.unwrap();
        self.w.write_all(b"\n").await.unwrap();
        self.w.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(30), self.r.read_line(&mut line))
            .await
            .expect("an answer within 30 s")
            .unwrap();
        assert!(n > 0, "the server closed its output");
        assert!(line.ends_with('\n'), "a whole line: {line:?}");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    async fn gate(&mut self, id: u64) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "gate", "arguments": {"session": "s", "tool": "read_file", "args": {"path": "a.txt"}}}});
        self.send(call.to_string().as_bytes()).await;
        self.recv().await
    }
}

fn parse_error(v: &Value) -> bool {
    v["jsonrpc"] == "2.0"
        && v.get("id") == Some(&Value::Null)
        && v["error"]["code"] == -32700
        && v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Parse error"))
}

fn invalid_request(v: &Value) -> bool {
    v["jsonrpc"] == "2.0" && v.get("id") == Some(&Value::Null) && v["error"]["code"] == -32600
}

#[test]
fn malformed_lines_are_answered_and_the_server_keeps_serving() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut cfg = Config::new(
            Arc::new(default_monitor().unwrap()),
            Arc::new(Policy::default()),
        );
        cfg.sessions.push(("s".into(), None));
        let server = Server::new(cfg).unwrap();
        let (client, server_io) = tokio::io::duplex(1 << 16);
        let (server_r, server_w) = tokio::io::split(server_io);
        let served = tokio::spawn(augur_mcp::stdio::serve(server, server_r, server_w));
        let (r, w) = tokio::io::split(client);
        let mut c = Client {
            w,
            r: BufReader::new(r),
        };

        // Not JSON before initialisation: answered, and initialisation still works.
        c.send(b"{this is not json").await;
        let v = c.recv().await;
        assert!(parse_error(&v), "{v}");
        c.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
            .to_string().as_bytes()).await;
        let v = c.recv().await;
        assert_eq!(v["id"], 0, "{v}");
        assert!(v["result"]["serverInfo"].is_object(), "{v}");
        c.send(br#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#)
            .await;
        assert_eq!(c.gate(1).await["result"]["structuredContent"]["verdict"], "allow");

        // Lines that are not JSON: -32700 with "id": null, each; then still serving.
        let mut id = 2;
        for bad in [
            &b"{this is not json"[..],
            b"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"tools/list\"",
            b"{\"a\": 1} {\"b\": 2}",
            b"\"\xFF\xFE\"",
            b"not json at all",
        ] {
            c.send(bad).await;
            let v = c.recv().await;
            assert!(parse_error(&v), "{:?}: {v}", String::from_utf8_lossy(bad));
            let v = c.gate(id).await;
            assert_eq!(v["id"], id, "{v}");
            assert!(v["result"]["structuredContent"]["verdict"].is_string(), "{v}");
            id += 1;
        }
        // Blank lines are not messages: nothing is answered (the next answer is the gate's).
        c.send(b"").await;
        c.send(b"   ").await;
        assert_eq!(c.gate(id).await["id"], id);
        id += 1;

        // JSON that is not a JSON-RPC message: -32600, "id": null; then still serving.
        for bad in [
            "[]",
            "{\"foo\": 1}",
            "42",
            "{\"jsonrpc\": \"2.0\", \"id\": 9}",
            "{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"tools/list\"}",
        ] {
            c.send(bad.as_bytes()).await;
            let v = c.recv().await;
            assert!(invalid_request(&v), "{bad}: {v}");
            let v = c.gate(id).await;
            assert_eq!(v["id"], id, "{v}");
            id += 1;
        }

        // A request rmcp cannot read (params not an object): -32600 with the request's id, so
        // the client is not left waiting; then still serving.
        for (bad, bad_id) in [
            (json!({"jsonrpc": "2.0", "id": 1000, "method": "tools/call", "params": "not an object"}), json!(1000)),
            (json!({"jsonrpc": "2.0", "id": "s-1", "method": "tools/list", "params": 7}), json!("s-1")),
        ] {
            c.send(bad.to_string().as_bytes()).await;
            let v = c.recv().await;
            assert_eq!((&v["id"], &v["error"]["code"]), (&bad_id, &json!(-32600)), "{v}");
            assert_eq!(c.gate(id).await["id"], id);
            id += 1;
        }
        // Arguments that are not an object: an error with the request's id.
        c.send(br#"{"jsonrpc": "2.0", "id": "s-2", "method": "tools/call", "params": {"name": "gate", "arguments": [1, 2]}}"#)
            .await;
        let v = c.recv().await;
        assert_eq!((&v["id"], &v["error"]["code"]), (&json!("s-2"), &json!(-32602)), "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("must be a JSON object"), "{v}");
        // An unknown method: -32601 with its id.
        c.send(br#"{"jsonrpc": "2.0", "id": 2000, "method": "no/such/method", "params": {}}"#)
            .await;
        let v = c.recv().await;
        assert_eq!((&v["id"], &v["error"]["code"]), (&json!(2000), &json!(-32601)), "{v}");

        // The input ends: the server stops cleanly.
        drop(c);
        tokio::time::timeout(Duration::from_secs(30), served)
            .await
            .expect("the server stops when its input ends")
            .unwrap()
            .unwrap();
    });
}
