//! The tools' names, descriptions and argument schemas, and reading their arguments.

use super::*;

/// A tool: name, description, input schema, and whether only the harness may call it.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// The name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// The JSON schema of its arguments.
    pub schema: Value,
    /// Harness-only.
    pub harness: bool,
}

pub(super) fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

pub(super) fn session_prop() -> Value {
    json!({"type": "string", "description": "The session id the harness gave you (or that open_session returned)."})
}

pub(super) fn model_props(extra: Value) -> Value {
    let mut m = json!({
        "model_text": {"type": "string", "description": "The text of the model (default: the PRISM language; see format). Exactly one of model_text and model_path."},
        "model_path": {"type": "string", "description": "A model file under the server's --root folder (.pm/.prism, .tra with its .lab, .drn, .json). Exactly one of model_text and model_path."},
        "format": {"type": "string", "enum": ["prism", "drn", "json", "tra"], "description": "The format of model_text (default prism)."},
        "constants": {"description": "Values of constants: \"N=3,p=0.5\" or {\"N\": 3, \"p\": 0.5}.", "type": ["string", "object"]},
    });
    if let (Some(m), Value::Object(e)) = (m.as_object_mut(), extra) {
        m.extend(e);
    }
    m
}

pub(super) fn tool_specs() -> Vec<ToolSpec> {
    let action_props = json!({
        "session": session_prop(),
        "tool": {"type": "string", "description": "The name of the tool you are about to call."},
        "args": {"description": "The arguments you are about to pass to it (an object, or a JSON string holding one).", "type": ["object", "string"]},
        "state": {"type": "object", "description": "For monitors compiled over an abstraction spec: the concrete state the action leads to (variable -> value), instead of tool arguments."},
    });
    let mut record_props = action_props.clone();
    record_props["executed"] = json!({"type": "boolean", "description": "Whether the action was executed (default true). false (the action did not happen) is harness-only."});
    vec![
        ToolSpec {
            name: "gate",
            description: "Call this BEFORE every other tool call, with the tool's name and the exact arguments you intend to use. Returns the runtime monitor's decision: verdict allow (go ahead), warn (go ahead with care; the reason says why), pause (stop and wait: a person must approve; do not call the tool) or block (do not call the tool; choose another way or stop), with the probability of reaching an unsafe state within the horizon and the reason. An unknown or expired session is always blocked.",
            schema: obj(action_props.clone(), &["session"]),
            harness: false,
        },
        ToolSpec {
            name: "record",
            description: "Tell the monitor what happened to an action: executed=true when a tool call ran (e.g. one that was not gated, or one a person approved). The monitor's state moves as if the action was allowed.",
            schema: obj(record_props, &["session", "tool"]),
            harness: false,
        },
        ToolSpec {
            name: "session_state",
            description: "The session's current monitor state: the model state, (d, t, r) and risk level for classifier monitors, the step count, a pending pause.",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: false,
        },
        ToolSpec {
            name: "summary",
            description: "The session's counts: actions gated, decisions per verdict (allow, warn, pause, block), the peak probability and risk, actions executed despite a pause or block.",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: false,
        },
        ToolSpec {
            name: "check",
            description: "Model-check PCTL properties on a discrete-time Markov chain (the PRISM language, or explicit formats). Returns the results as `augur check --json` prints them: per property the value, sound bounds, the method and time. A model or property error is returned as a tool error with the file, line, column and a caret.",
            schema: obj(
                model_props(json!({
                    "properties": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "PCTL properties, e.g. [\"P=? [ F<=5 \\\"unsafe\\\" ]\"]."},
                    "method": {"type": "string", "description": "auto (default, sound), exact, interval, topological, power, jacobi, gauss-seidel, closed-form."},
                    "all_states": {"type": "boolean", "description": "Also report every state's value."},
                })),
                &["properties"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "horizon",
            description: "The curve P(F<=h target) for h = 1..max from the initial state (and with all_states every state's), for a label or boolean state formula `target`.",
            schema: obj(
                model_props(json!({
                    "target": {"type": "string", "description": "A label (e.g. \"unsafe\") or a boolean state formula."},
                    "max": {"type": "integer", "minimum": 1, "description": "The largest horizon."},
                    "all_states": {"type": "boolean"},
                })),
                &["target", "max"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "explain",
            description: "Why is a probability or expected reward so large? For `P<=θ [ φ U ψ ]` (or `F ψ`, `U<=k`, `F<=k`, `P=?`): the most probable paths that satisfy the path formula (states by name, probability, cumulative probability) and how many of them already exceed θ (a counterexample); with `subsystem` a small set of states whose sub-chain alone exceeds θ (`heuristic`, or `minimal` for small models), as DOT (`dot`) or a PRISM model (`prism`) that `check` confirms. For `R{\"r\"}<=r [ F ψ ]`: the paths and states carrying most of the expected reward.",
            schema: obj(
                model_props(json!({
                    "property": {"type": "string", "description": "One property, e.g. \"P<=0.1 [ F \\\"unsafe\\\" ]\"."},
                    "paths": {"type": "integer", "minimum": 0, "maximum": ops::MAX_EXPLAIN_PATHS, "description": "How many paths to list (default 10)."},
                    "from": {"type": "string", "description": "The start state: an index, or a boolean state formula that holds in one state (default: the initial state)."},
                    "subsystem": {"type": "string", "enum": ["heuristic", "minimal"], "description": "Find a critical subsystem: grown from the states ranked by their share of the probability (then pruned), or a minimum one exactly (small models)."},
                    "dot": {"type": "boolean", "description": "Include the subsystem in DOT, the paths highlighted (`dot`)."},
                    "prism": {"type": "boolean", "description": "Include the subsystem as a PRISM model (`subsystem_model`), its leaving transitions to a sink."},
                })),
                &["property"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "pac",
            description: "PAC sample-size bounds: for a learned model (Augur JSON with transition counts, as `augur learn` writes it), whether every state has enough observations for accuracy epsilon with confidence 1-delta and how many more are needed; or the calculator form with `states` (and p_hat, observations).",
            schema: obj(
                json!({
                    "model_text": {"type": "string", "description": "The learned model's JSON text."},
                    "model_path": {"type": "string", "description": "The learned model's file under --root."},
                    "epsilon": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "delta": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "hoeffding": {"type": "boolean", "description": "Use the Hoeffding bound instead of Pro2Guard's (Chen et al.)."},
                    "states": {"type": "integer", "minimum": 1, "description": "Calculator: the number of states."},
                    "p_hat": {"type": "number", "description": "Calculator: the binding successor's empirical probability (default: the worst case 1/2)."},
                    "observations": {"type": "integer", "minimum": 0, "description": "Calculator: observations out of the state."},
                }),
                &["epsilon", "delta"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "open_session",
            description: "Harness only: open a monitor session (at the start state). Returns its id.",
            schema: obj(
                json!({
                    "session": {"type": "string", "description": "The id to use (default: a fresh one)."},
                    "category": {"type": "string", "description": "The run's category (selects the monitor's table and the policy's overrides)."},
                }),
                &[],
            ),
            harness: true,
        },
        ToolSpec {
            name: "end_session",
            description: "Harness only: close a session (its id is refused afterwards).",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: true,
        },
        ToolSpec {
            name: "reset",
            description: "Harness only: put a session back at the start state with fresh counts.",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: true,
        },
        ToolSpec {
            name: "approve",
            description: "Harness only: a person approved the paused action `pause_id`; it is executed, and the session moves to the state it leads to.",
            schema: obj(json!({"session": session_prop(), "pause_id": {"type": "string"}}), &["session", "pause_id"]),
            harness: true,
        },
        ToolSpec {
            name: "deny",
            description: "Harness only: a person denied the paused action `pause_id`; it is not executed and the session stays where it is.",
            schema: obj(json!({"session": session_prop(), "pause_id": {"type": "string"}}), &["session", "pause_id"]),
            harness: true,
        },
    ]
}

// Argument accessors: a missing or mistyped argument is a tool error naming it.
pub(super) fn opt_str<'a>(a: &'a Map<String, Value>, k: &str) -> Result<Option<&'a str>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::param(format!("`{k}` must be a string"))),
    }
}

pub(super) fn req_str<'a>(a: &'a Map<String, Value>, k: &str) -> Result<&'a str> {
    opt_str(a, k)?.ok_or_else(|| ToolError::param(format!("`{k}` is required")))
}

pub(super) fn opt_bool(a: &Map<String, Value>, k: &str) -> Result<Option<bool>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ToolError::param(format!("`{k}` must be true or false"))),
    }
}

pub(super) fn opt_f64(a: &Map<String, Value>, k: &str) -> Result<Option<f64>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(ToolError::param(format!("`{k}` must be a number"))),
    }
}

pub(super) fn opt_u64(a: &Map<String, Value>, k: &str) -> Result<Option<u64>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| ToolError::param(format!("`{k}` must be a non-negative integer"))),
        Some(_) => Err(ToolError::param(format!(
            "`{k}` must be a non-negative integer"
        ))),
    }
}

pub(super) fn check_keys(a: &Map<String, Value>, spec: &ToolSpec) -> Result<()> {
    let known = spec.schema["properties"].as_object();
    for k in a.keys() {
        if !known.is_some_and(|m| m.contains_key(k)) {
            return Err(ToolError::param(format!(
                "`{}` has no argument `{k}`",
                spec.name
            )));
        }
    }
    Ok(())
}
