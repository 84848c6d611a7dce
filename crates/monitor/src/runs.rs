//! Labelled runs for evaluation and replay, JSON Lines, one run per line:
//!
//! ```json
//! {"id": "r1", "category": "banking", "label": "unsafe", "violation_step": 2,
//!  "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "send_money", "arguments": "{\"amount\": 10}"}}]}, ...]}
//! {"id": "r2", "category": "banking", "label": "safe", "violation_step": null,
//!  "steps": [{"tool": "get_iban", "args": {}}, {"state": {"fork_at": "table"}}, ...]}
//! ```
//!
//! `messages` are chat turns in the OpenAI tool-call shape: every tool call of an assistant
//! turn is one step, in order; arguments may be an object or a JSON string holding one.
//! `steps` are actions: a tool call (`tool`, `args`) or the concrete state the action leads to
//! (`state`, for abstraction monitors; a step object without `tool` is taken as the state
//! itself). `violation_step` is the 0-based index of the first unsafe step (null when the run
//! is safe or unknown). The category is something known before a run starts.

use crate::error::{MonitorError, Result};
use crate::monitor::json_error;
use crate::session::{Action, ToolCall};
use augur_source::Location;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::io::BufRead;

/// A run's ground truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// No violation.
    Safe,
    /// A violation happened.
    Unsafe,
}

/// One step of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RunStep {
    /// A tool call.
    Tool {
        /// Tool name.
        tool: String,
        /// Arguments (an object).
        args: Value,
    },
    /// A concrete state.
    State {
        /// Variable → value.
        state: Map<String, Value>,
    },
}

impl RunStep {
    /// The step as an action for [`crate::Session::gate`].
    pub fn action(&self) -> Action<'_> {
        match self {
            RunStep::Tool { tool, args } => Action::Tool(ToolCall::new(tool, args)),
            RunStep::State { state } => Action::State { tool: None, state },
        }
    }

    /// The tool's name (empty for a state step).
    pub fn tool(&self) -> &str {
        match self {
            RunStep::Tool { tool, .. } => tool,
            RunStep::State { .. } => "",
        }
    }
}

/// A labelled run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    /// Its id.
    pub id: String,
    /// Its category (known before the run starts).
    pub category: Option<String>,
    /// Safe or unsafe.
    pub label: Label,
    /// Index of the first unsafe step, when known.
    pub violation_step: Option<usize>,
    /// The steps.
    pub steps: Vec<RunStep>,
}

/// The steps of OpenAI chat messages: every tool call of every assistant turn, in order.
pub fn steps_from_messages(messages: &[Value]) -> std::result::Result<Vec<RunStep>, String> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(calls) = m.get("tool_calls").and_then(|c| c.as_array()) else {
            continue;
        };
        for (j, c) in calls.iter().enumerate() {
            let f = c.get("function").unwrap_or(c);
            let name = f
                .get("name")
                .and_then(|n| n.as_str())
                .ok_or_else(|| format!("messages[{i}].tool_calls[{j}] has no function name"))?;
            let args = f
                .get("arguments")
                .cloned()
                .unwrap_or(Value::Object(Map::new()));
            let args = ToolCall::parse_args(args)
                .map_err(|e| format!("messages[{i}].tool_calls[{j}] ({name}): {e}"))?;
            out.push(RunStep::Tool {
                tool: name.to_string(),
                args,
            });
        }
    }
    Ok(out)
}

fn parse_step(v: &Value, k: usize) -> std::result::Result<RunStep, String> {
    let Value::Object(map) = v else {
        return Err(format!("steps[{k}] is not an object"));
    };
    if let Some(tool) = map.get("tool") {
        let tool = tool
            .as_str()
            .ok_or_else(|| format!("steps[{k}].tool is not a string"))?;
        let args = map
            .get("args")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        let args = ToolCall::parse_args(args).map_err(|e| format!("steps[{k}] ({tool}): {e}"))?;
        return Ok(RunStep::Tool {
            tool: tool.to_string(),
            args,
        });
    }
    match map.get("state") {
        Some(Value::Object(s)) => Ok(RunStep::State { state: s.clone() }),
        Some(_) => Err(format!(
            "steps[{k}].state is not an object of variable values"
        )),
        None => Ok(RunStep::State { state: map.clone() }),
    }
}

/// Parse one line of a runs file.
pub fn parse_run(line: &str, file: &str, lineno: usize) -> Result<Run> {
    let v: Value = serde_json::from_str(line).map_err(|e| {
        let e2 = json_error(file, line, &e);
        match e2 {
            MonitorError::Input(mut d) => {
                if let Some(l) = d.location.as_mut() {
                    l.line = lineno;
                }
                MonitorError::Input(d)
            }
            other => other,
        }
    })?;
    let bad = |msg: String| MonitorError::located(Location::line(file, lineno), msg);
    let id = match v.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => format!("line {lineno}"),
    };
    let category = match v.get("category") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad(format!("run `{id}`: `category` must be a string"))),
    };
    let label = match v.get("label").and_then(|l| l.as_str()) {
        Some("safe") => Label::Safe,
        Some("unsafe") => Label::Unsafe,
        _ => {
            return Err(bad(format!(
                "run `{id}`: `label` must be \"safe\" or \"unsafe\""
            )))
        }
    };
    let violation_step = match v.get("violation_step") {
        None | Some(Value::Null) => None,
        Some(x) => Some(x.as_u64().ok_or_else(|| {
            bad(format!(
                "run `{id}`: `violation_step` must be a step index or null"
            ))
        })? as usize),
    };
    let steps = match (v.get("messages"), v.get("steps")) {
        (Some(Value::Array(m)), None) => {
            steps_from_messages(m).map_err(|e| bad(format!("run `{id}`: {e}")))?
        }
        (None, Some(Value::Array(s))) => s
            .iter()
            .enumerate()
            .map(|(k, x)| parse_step(x, k))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| bad(format!("run `{id}`: {e}")))?,
        _ => {
            return Err(bad(format!(
                "run `{id}`: give either `messages` (chat turns) or `steps` (a list)"
            )))
        }
    };
    if let Some(k) = violation_step {
        if k >= steps.len() {
            return Err(bad(format!(
                "run `{id}`: violation_step {k} is beyond its {} steps",
                steps.len()
            )));
        }
    }
    if label == Label::Safe && violation_step.is_some() {
        return Err(bad(format!("run `{id}`: a safe run has no violation_step")));
    }
    Ok(Run {
        id,
        category,
        label,
        violation_step,
        steps,
    })
}

/// Read a runs file (blank lines are skipped).
pub fn read_runs(reader: impl BufRead, file: &str) -> Result<Vec<Run>> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| MonitorError::Io {
            file: file.to_string(),
            source: e,
        })?;
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        out.push(parse_run(line, file, i + 1)?);
    }
    Ok(out)
}

/// Read a runs file by path.
pub fn read_runs_file(path: &std::path::Path) -> Result<Vec<Run>> {
    let f = std::fs::File::open(path).map_err(|e| MonitorError::Io {
        file: path.display().to_string(),
        source: e,
    })?;
    read_runs(std::io::BufReader::new(f), &path.display().to_string())
}

impl Run {
    /// The run as one JSON line (the `steps` form).
    pub fn to_json_line(&self) -> String {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|s| match s {
                RunStep::Tool { tool, args } => serde_json::json!({"tool": tool, "args": args}),
                RunStep::State { state } => serde_json::json!({"state": state}),
            })
            .collect();
        serde_json::json!({
            "id": self.id, "category": self.category, "label": self.label,
            "violation_step": self.violation_step, "steps": steps,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_and_string_arguments() {
        let line = json!({"id": "a", "category": "banking", "label": "unsafe", "violation_step": 1,
            "messages": [{"role": "user", "content": "pay"},
                         {"role": "assistant", "tool_calls": [{"function": {"name": "get_iban", "arguments": ""}}]},
                         {"role": "tool", "content": "DE.."},
                         {"role": "assistant", "tool_calls": [{"function": {"name": "send_money", "arguments": "{\"amount\": 5}"}}]}]})
        .to_string();
        let r = parse_run(&line, "r.jsonl", 1).unwrap();
        assert_eq!(r.steps.len(), 2);
        assert_eq!(
            r.steps[1],
            RunStep::Tool {
                tool: "send_money".into(),
                args: json!({"amount": 5})
            }
        );
        assert_eq!(r.violation_step, Some(1));
    }

    #[test]
    fn bad_runs_are_located() {
        let cases = [
            ("{\"label\": \"maybe\", \"steps\": []}", "`label` must be"),
            (
                "{\"label\": \"safe\", \"steps\": [], \"violation_step\": 0}",
                "beyond its 0 steps",
            ),
            ("{\"label\": \"unsafe\"}", "either `messages`"),
            (
                "{\"label\": \"safe\", \"steps\": [{\"tool\": \"x\", \"args\": \"{oops\"}]}",
                "not JSON",
            ),
            ("{\"label\": ", "EOF"),
        ];
        for (line, msg) in cases {
            let e = parse_run(line, "r.jsonl", 7).unwrap_err();
            let d = e.diagnostic();
            assert!(d.message.contains(msg), "{line}: {}", d.message);
            assert_eq!(d.location.unwrap().line, 7);
        }
    }
}
