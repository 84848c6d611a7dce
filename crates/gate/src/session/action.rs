//! The actions a session gates: tool calls and concrete states, with names kept inline.

use crate::classifier::ToolProfile;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// A short string kept inline (tool names in decisions), so decisions never allocate.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InlineName {
    len: u8,
    bytes: [u8; 47],
}

impl InlineName {
    /// The empty name.
    pub const EMPTY: InlineName = InlineName {
        len: 0,
        bytes: [0; 47],
    };

    /// `s`, cut at 47 bytes (on a character boundary).
    pub fn new(s: &str) -> InlineName {
        let mut end = s.len().min(47);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; 47];
        bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        InlineName {
            len: end as u8,
            bytes,
        }
    }

    /// Overwrite in place with `s` (cut at 47 bytes).
    pub fn set(&mut self, s: &str) {
        let mut end = s.len().min(47);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        self.len = end as u8;
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl fmt::Debug for InlineName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for InlineName {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A tool call: its name and arguments (a JSON object; see [`ToolCall::parse_args`] for
/// arguments sent as a JSON string), and what the tool's declaration says of it when its
/// server declared it (the gateway's `tools/list`).
#[derive(Clone, Copy, Debug)]
pub struct ToolCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its arguments.
    pub args: &'a Value,
    /// The tool's profile ([`crate::classifier::Classifier::profile`], computed once per
    /// tool): it may only raise the call's classification.
    pub profile: Option<&'a ToolProfile>,
}

impl<'a> ToolCall<'a> {
    /// A tool call.
    pub fn new(name: &'a str, args: &'a Value) -> ToolCall<'a> {
        ToolCall {
            name,
            args,
            profile: None,
        }
    }

    /// The same call of a tool whose declaration gave `profile`.
    pub fn with_profile(self, profile: Option<&'a ToolProfile>) -> ToolCall<'a> {
        ToolCall { profile, ..self }
    }

    /// Arguments as real OpenAI logs send them: a JSON string holding an object is parsed;
    /// an object (or anything else) is kept. An empty string is no arguments.
    pub fn parse_args(args: Value) -> std::result::Result<Value, String> {
        match args {
            Value::String(s) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(_) => Err("arguments given as a string must hold a JSON object".into()),
                Err(e) => Err(format!("arguments given as a string are not JSON: {e}")),
            },
            v => Ok(v),
        }
    }
}

/// What the agent proposes.
#[derive(Clone, Copy, Debug)]
pub enum Action<'a> {
    /// A tool call (`dtr` and `risk-level` monitors).
    Tool(ToolCall<'a>),
    /// The concrete state the action leads to (`abstraction` monitors), optionally with the
    /// tool's name (for `always_block` / `always_allow`).
    State {
        /// The tool, if known.
        tool: Option<&'a str>,
        /// Variable → value.
        state: &'a Map<String, Value>,
    },
}

impl Action<'_> {
    pub(crate) fn tool(&self) -> Option<&str> {
        match self {
            Action::Tool(t) => Some(t.name),
            Action::State { tool, .. } => *tool,
        }
    }
}
