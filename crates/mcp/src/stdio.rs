//! The rmcp glue: a [`ServerHandler`] that lists [`Server::tools`] and forwards `tools/call`
//! to [`Server::call`] on a blocking thread, served over stdin/stdout behind a line filter
//! that answers what rmcp would drop ([`serve`]).

use crate::server::{CallError, Server};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

/// What the server tells a client at initialisation (clients show it to the model).
pub const INSTRUCTIONS: &str = "Augur runtime monitor. Before EVERY tool call, call `gate` with your session id, the tool's name and its exact arguments, and obey the verdict: allow -> proceed; warn -> proceed carefully; pause -> do not call the tool, stop and ask the user; block -> do not call the tool. `check`, `horizon` and `pac` run the probabilistic model checker.";

/// The MCP handler over a shared [`Server`].
#[derive(Clone)]
pub struct Handler {
    server: Arc<Server>,
}

impl Handler {
    /// A handler for `server`.
    pub fn new(server: Arc<Server>) -> Handler {
        Handler { server }
    }

    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.server
            .tools()
            .map(|t| {
                let schema = t.schema.as_object().cloned().unwrap_or_default();
                Tool::new(t.name, t.description, Arc::new(schema))
            })
            .collect()
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("augur", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools(),
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = Arc::clone(&self.server);
        let name = request.name.to_string();
        let args = request.arguments.map(serde_json::Value::Object);
        let joined = tokio::task::spawn_blocking(move || server.call(&name, args)).await;
        let outcome = match joined {
            Ok(o) => o,
            // A panic in a tool is a bug; the server keeps serving.
            Err(e) => {
                return Err(ErrorData::internal_error(
                    format!("the tool failed: {e}"),
                    None,
                ))
            }
        };
        match outcome {
            Err(e @ (CallError::UnknownTool(_) | CallError::NotAnObject(_))) => {
                Err(ErrorData::invalid_params(e.to_string(), None))
            }
            Ok(Ok(value)) => Ok(CallToolResult::structured(value).into()),
            Ok(Err(e)) => {
                let mut r = CallToolResult::error(vec![ContentBlock::text(e.message.clone())]);
                r.structured_content = Some(serde_json::json!({
                    "error": {"kind": e.kind, "message": e.message, "location": e.location.as_ref().map(|l| serde_json::json!({
                        "file": l.file, "line": l.line, "column": l.column
                    }))}
                }));
                Ok(r.into())
            }
        }
    }
}

/// Serves `server` over stdin/stdout until the client closes stdin (see [`serve`]).
// Never inlined: the transport's futures (rmcp, tokio) are then compiled here, in this crate's
// profile (unoptimised in the release build, Cargo.toml), not again in every caller's.
#[inline(never)]
pub fn serve_stdio(server: Server) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(8)
        .build()?;
    rt.block_on(serve(server, tokio::io::stdin(), tokio::io::stdout()))
}

/// The longest message line accepted (rmcp's own limit for stdio, 16 MiB).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Serves `server` over newline-delimited JSON-RPC on `input` / `output` until `input` ends.
///
/// A line filter sits between `input` and rmcp's transport, because rmcp drops a line that is
/// not JSON without an answer. Here every line is answered or forwarded:
/// - not JSON (or not UTF-8, or nested deeper than serde_json's limit): JSON-RPC 2.0's
///   `{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: ..."}}`;
/// - longer than [`MAX_LINE`]: `-32600` (Invalid Request), `"id": null`, the line skipped;
/// - blank: skipped;
/// - a request (a `method`, an integer or string `id`) that rmcp cannot read, e.g. `params` not
///   an object: `-32600` with its id (rmcp would answer without the id); a `tools/call` whose
///   `arguments` is not an object: `-32602` (Invalid params) with its id and a message;
/// - other JSON: forwarded to rmcp, which answers a value of the wrong shape (`[]`,
///   `{"foo": 1}`, a request without `method`) with `-32600` (Invalid Request) and otherwise
///   serves it.
///
/// All output goes through one writer task, line by line, so the filter's answers and rmcp's
/// never interleave within a line. rmcp's error answers without an `id` (the form of MCP
/// 2026-07-28) get `"id": null`, which JSON-RPC 2.0 requires and every MCP version accepts.
pub async fn serve<R, W>(server: Server, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_handler(Handler::new(Arc::new(server)), input, output).await
}

/// [`serve`] with any MCP handler (the gateway's, [`crate::gateway`]). An input that ends
/// before or after the initialisation is a normal end (`Ok`).
pub async fn serve_handler<H, R, W>(handler: H, input: R, output: W) -> std::io::Result<()>
where
    H: ServerHandler,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (lines, mut outgoing) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = outgoing.recv().await {
            output.write_all(&line).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let (to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let answers = lines.clone();
    let pump = tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        loop {
            let mut line = Vec::new();
            if from_rmcp.read_until(b'\n', &mut line).await? == 0 {
                return Ok::<(), std::io::Error>(());
            }
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if answers.send(with_null_id(line)).await.is_err() {
                return Ok(());
            }
        }
    });
    let filter = tokio::spawn(filter_input(input, to_rmcp, lines));

    let served = async {
        let running = match handler.serve((rmcp_in, rmcp_out)).await {
            Ok(r) => r,
            // The client went away before initialising (`augur mcp </dev/null`): a normal end.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(std::io::Error::other(e)),
        };
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok::<(), std::io::Error>(())
    }
    .await;
    // rmcp has stopped (normally because the input ended): its output is closed, so the pump
    // ends; the filter is stopped if rmcp ended for another reason; then the writer drains.
    filter.abort();
    let filtered = match filter.await {
        Ok(r) => r,
        Err(e) if e.is_cancelled() => Ok(()),
        Err(e) => Err(std::io::Error::other(e)),
    };
    let pumped = pump.await.map_err(std::io::Error::other)?;
    let written = writer.await.map_err(std::io::Error::other)?;
    served.and(filtered).and(pumped).and(written)
}

/// Reads `input` line by line: JSON lines go on to rmcp, the others are answered on `answers`.
async fn filter_input<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let answer = match read_line(&mut input, &mut line, MAX_LINE).await? {
            Line::Eof => break,
            Line::Oversized => Some(error_line(
                -32600,
                &format!("Invalid Request: a message line longer than {MAX_LINE} bytes"),
            )),
            Line::Complete => match classify(&line) {
                Classified::Blank => None,
                Classified::Json(body) => match request_error(body) {
                    Some(answer) => Some(answer),
                    None => {
                        to_rmcp.write_all(body).await?;
                        to_rmcp.write_all(b"\n").await?;
                        to_rmcp.flush().await?;
                        None
                    }
                },
                Classified::NotJson(why) => {
                    Some(error_line(-32700, &format!("Parse error: {why}")))
                }
            },
        };
        if let Some(answer) = answer {
            if answers.send(answer).await.is_err() {
                break;
            }
        }
    }
    to_rmcp.shutdown().await
}

/// What one input line is.
#[derive(Debug, PartialEq, Eq)]
enum Classified<'a> {
    /// Empty or white space only: skipped.
    Blank,
    /// Well-formed JSON (the line without its end of line and byte-order mark).
    Json(&'a [u8]),
    /// Not JSON, with serde_json's reason.
    NotJson(String),
}

fn classify(line: &[u8]) -> Classified<'_> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Classified::Blank;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => return Classified::NotJson(format!("the line is not UTF-8 ({e})")),
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(_) => Classified::Json(line),
        Err(e) => Classified::NotJson(e.to_string()),
    }
}

/// The answer to a well-formed JSON line that is a request (a `method` and an integer or
/// string `id`) but not one rmcp reads (e.g. `params` not an object): -32600 with the request's
/// id. rmcp would answer it without the id, leaving the client waiting for its answer forever.
/// Everything else goes on to rmcp (`None`): valid messages; notifications (never answered);
/// and values without a usable id, which rmcp answers with -32600.
fn request_error(body: &[u8]) -> Option<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("method")?.as_str()?;
    let id = v.get("id")?;
    if !(id.is_string() || id.is_i64()) {
        return None;
    }
    // A `tools/call` whose `arguments` is there but not an object (nor null): its params are
    // invalid, not its envelope: -32602 naming the tool.
    if v["method"] == "tools/call" {
        if let Some(args) = v["params"]
            .get("arguments")
            .filter(|a| !a.is_object() && !a.is_null())
        {
            let kind = match args {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                _ => "a boolean",
            };
            let tool = v["params"]["name"].as_str().unwrap_or("the tool");
            return Some(error_line_with_id(
                -32602,
                &format!(
                    "Invalid params: the arguments of `{tool}` must be a JSON object, not {kind}"
                ),
                id.clone(),
            ));
        }
    }
    let e = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(body).err()?;
    Some(error_line_with_id(
        -32600,
        &format!("Invalid Request: {e}"),
        id.clone(),
    ))
}

/// A JSON-RPC error response without a request id (`"id": null`), as a line.
fn error_line(code: i64, message: &str) -> Vec<u8> {
    error_line_with_id(code, message, serde_json::Value::Null)
}

/// A JSON-RPC error response, as a line.
fn error_line_with_id(code: i64, message: &str, id: serde_json::Value) -> Vec<u8> {
    let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut line = serde_json::to_vec(&v).expect("a JSON value serialises");
    line.push(b'\n');
    line
}

/// rmcp writes an error it cannot correlate as `{"jsonrpc":"2.0","error":...}` (id omitted,
/// MCP 2026-07-28); JSON-RPC 2.0 requires `"id": null` there.
fn with_null_id(line: Vec<u8>) -> Vec<u8> {
    const NO_ID: &[u8] = b"{\"jsonrpc\":\"2.0\",\"error\":";
    match line.strip_prefix(NO_ID) {
        Some(rest) => {
            let mut out = b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":".to_vec();
            out.extend_from_slice(rest);
            out
        }
        None => line,
    }
}

/// The outcome of reading one line.
pub(crate) enum Line {
    /// A line (with its `\n`, except a last line without one) is in the buffer.
    Complete,
    /// The line was longer than the limit; it has been skipped up to its end.
    Oversized,
    /// The input ended.
    Eof,
}

/// Reads one line into `buf` without letting it grow past `max` bytes.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut oversized = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if oversized {
                Line::Oversized
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !oversized && buf.len() + take > max {
            oversized = true;
            buf.clear();
            buf.shrink_to(64 * 1024);
        }
        if !oversized {
            buf.extend_from_slice(&available[..take]);
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if oversized {
                Line::Oversized
            } else {
                Line::Complete
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        assert_eq!(classify(b"\n"), Classified::Blank);
        assert_eq!(classify(b"  \r\n"), Classified::Blank);
        assert_eq!(classify(b"[]\n"), Classified::Json(b"[]"));
        assert_eq!(
            classify(b"\xEF\xBB\xBF{\"a\":1}\r\n"),
            Classified::Json(b"{\"a\":1}")
        );
        for bad in [
            &b"{this is not json\n"[..],
            b"{\"a\":1} {\"b\":2}\n",
            b"\"\xFF\"\n",
            b"{\"a\":\n",
        ] {
            assert!(matches!(classify(bad), Classified::NotJson(_)), "{bad:?}");
        }
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert!(matches!(classify(deep.as_bytes()), Classified::NotJson(_)));
    }

    #[test]
    fn requests_rmcp_cannot_read_are_answered_with_their_id() {
        let answer = |line: &str| {
            request_error(line.as_bytes())
                .map(|a| serde_json::from_slice::<serde_json::Value>(&a).unwrap())
        };
        for (line, id) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"not an object"}"#,
                serde_json::json!(1),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":7}"#,
                serde_json::json!("x"),
            ),
        ] {
            let a = answer(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(
                (&a["id"], &a["error"]["code"]),
                (&id, &serde_json::json!(-32600)),
                "{a}"
            );
        }
        // `arguments` not an object: -32602 (invalid params) with the id and a message.
        for (args, kind) in [
            ("[1, 2]", "an array"),
            ("\"{}\"", "a string"),
            ("7", "a number"),
            ("true", "a boolean"),
        ] {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"gate","arguments":{args}}}}}"#
            );
            let a = answer(&line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(
                (&a["id"], &a["error"]["code"]),
                (&serde_json::json!(3), &serde_json::json!(-32602)),
                "{a}"
            );
            let msg = a["error"]["message"].as_str().unwrap();
            assert!(
                msg.contains("arguments of `gate` must be a JSON object") && msg.ends_with(kind),
                "{msg}"
            );
        }
        // Valid messages, notifications and values without a usable id go on to rmcp.
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":9}"#,
            "[]",
        ] {
            assert_eq!(answer(line), None, "{line}");
        }
    }

    #[test]
    fn rmcp_errors_without_an_id_get_a_null_id() {
        let line =
            b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n";
        let v: serde_json::Value = serde_json::from_slice(&with_null_id(line.to_vec())).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid request"}})
        );
        let other = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n".to_vec();
        assert_eq!(with_null_id(other.clone()), other);
    }

    #[test]
    fn long_lines_are_skipped_whole() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let input = b"0123456789abc\n[1]\nxyz";
            let mut r = BufReader::with_capacity(4, &input[..]);
            let mut buf = Vec::new();
            assert!(matches!(
                read_line(&mut r, &mut buf, 8).await.unwrap(),
                Line::Oversized
            ));
            buf.clear();
            assert!(matches!(
                read_line(&mut r, &mut buf, 8).await.unwrap(),
                Line::Complete
            ));
            assert_eq!(buf, b"[1]\n");
            buf.clear();
            assert!(matches!(
                read_line(&mut r, &mut buf, 8).await.unwrap(),
                Line::Complete
            ));
            assert_eq!(buf, b"xyz");
            buf.clear();
            assert!(matches!(
                read_line(&mut r, &mut buf, 8).await.unwrap(),
                Line::Eof
            ));
        });
    }
}
