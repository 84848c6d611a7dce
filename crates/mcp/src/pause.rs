//! Human approval of an escalated action: a `pause` decision carries an id, and the harness
//! answers it with `approve` (a person let the action run: the session moves to the state it
//! leads to) or `deny` (it did not run: the session stays). One pending pause per session;
//! a later `gate` or `record` supersedes it. The MCP server and the Python package both keep
//! their sessions' pauses with [`PendingPause`] and answer them with [`answer`].

use crate::error::{Result, ToolError};
use augur_gate::{Action, Session, ToolCall, Verdict};
use serde_json::{Map, Value};

/// A paused action waiting for a person's answer (saved in a state journal as
/// `{"id", "tool", "args", "state"}`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PendingPause {
    /// The id the `pause` decision carried (`pause-N`).
    pub id: String,
    /// The tool the action called.
    pub tool: String,
    /// Its arguments (an object).
    pub args: Value,
    /// The concrete state, for an abstraction monitor.
    pub state: Option<Map<String, Value>>,
}

impl PendingPause {
    /// After a `gate`: the pending pause of the session is this action when its verdict was
    /// `pause` (`id` names it), and none otherwise. Returns the id when it is one.
    pub fn after_gate(
        pending: &mut Option<PendingPause>,
        verdict: Verdict,
        id: impl FnOnce() -> String,
        tool: Option<&str>,
        args: &Value,
        state: Option<&Map<String, Value>>,
    ) -> Option<String> {
        if verdict != Verdict::Pause {
            *pending = None;
            return None;
        }
        let id = id();
        *pending = Some(PendingPause {
            id: id.clone(),
            tool: tool.unwrap_or("").to_string(),
            args: args.clone(),
            state: state.cloned(),
        });
        Some(id)
    }

    fn action(&self) -> Action<'_> {
        match &self.state {
            Some(st) => Action::State {
                tool: Some(&self.tool),
                state: st,
            },
            None => Action::Tool(ToolCall::new(&self.tool, &self.args)),
        }
    }
}

/// Answers the session's pending pause `pause_id`: approved, the action is recorded as
/// executed (the session moves to the state it leads to); denied, nothing moves. Returns
/// whether the session's state changed. Any other id (superseded, answered, made up) is
/// refused and the pending pause stays.
pub fn answer(
    session: &mut Session,
    pending: &mut Option<PendingPause>,
    pause_id: &str,
    approve: bool,
) -> Result<bool> {
    let Some(p) = pending.take_if(|p| p.id == pause_id) else {
        return Err(ToolError::refused(format!(
            "`{pause_id}` is not the session's pending pause (a later action superseded it, or it was answered)"
        )));
    };
    Ok(approve && session.record(&p.action(), true))
}
