//! The rmcp glue: a [`ServerHandler`] that lists [`Server::tools`] and forwards `tools/call`
//! to [`Server::call`] on a blocking thread, served over stdin/stdout.

use crate::server::{CallError, Server};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

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

    fn tools(&self) -> Vec<Tool> {
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

/// Serves `server` over stdin/stdout until the client closes stdin.
pub fn serve_stdio(server: Server) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(8)
        .build()?;
    rt.block_on(async move {
        let handler = Handler::new(Arc::new(server));
        let running = handler
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}
