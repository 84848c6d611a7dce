//! The tools' names, descriptions and argument schemas, and reading their arguments.

use super::args::*;
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

pub(super) fn tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "gate",
            description: "Call this BEFORE every other tool call, with the tool's name and the exact arguments you intend to use. Returns the runtime monitor's decision: verdict allow (go ahead), warn (go ahead with care; the reason says why), pause (stop and wait: a person must approve; do not call the tool) or block (do not call the tool; choose another way or stop), with the probability of reaching an unsafe state within the horizon and the reason. An unknown or expired session is always blocked.",
            schema: schema_of::<GateArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "record",
            description: "Tell the monitor what happened to an action: executed=true when a tool call ran (e.g. one that was not gated, or one a person approved). The monitor's state moves as if the action was allowed.",
            schema: schema_of::<RecordArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "session_state",
            description: "The session's current monitor state: the model state, (d, t, r) and risk level for classifier monitors, the step count, a pending pause.",
            schema: schema_of::<SessionArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "summary",
            description: "The session's counts: actions gated, decisions per verdict (allow, warn, pause, block), the peak probability and risk, actions executed despite a pause or block.",
            schema: schema_of::<SessionArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "check",
            description: "Model-check PCTL properties on a discrete-time Markov chain (the PRISM language, or explicit formats). Returns the results as `augur check --json` prints them: per property the value, sound bounds, the method and time. A model or property error is returned as a tool error with the file, line, column and a caret.",
            schema: schema_of::<CheckArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "horizon",
            description: "The curve P(F<=h target) for h = 1..max from the initial state (and with all_states every state's), for a label or boolean state formula `target`.",
            schema: schema_of::<HorizonArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "explain",
            description: "Why is a probability or expected reward so large? For `P<=θ [ φ U ψ ]` (or `F ψ`, `U<=k`, `F<=k`, `P=?`): the most probable paths that satisfy the path formula (states by name, probability, cumulative probability) and how many of them already exceed θ (a counterexample); with `subsystem` a small set of states whose sub-chain alone exceeds θ (`heuristic`, or `minimal` for small models), as DOT (`dot`) or a PRISM model (`prism`) that `check` confirms. For `R{\"r\"}<=r [ F ψ ]`: the paths and states carrying most of the expected reward.",
            schema: schema_of::<ExplainArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "pac",
            description: "PAC sample-size bounds: for a learned model (Augur JSON with transition counts, as `augur learn` writes it), whether every state has enough observations for accuracy epsilon with confidence 1-delta and how many more are needed; or the calculator form with `states` (and p_hat, observations).",
            schema: schema_of::<PacArgs>(),
            harness: false,
        },
        ToolSpec {
            name: "open_session",
            description: "Harness only: open a monitor session (at the start state). Returns its id.",
            schema: schema_of::<OpenArgs>(),
            harness: true,
        },
        ToolSpec {
            name: "end_session",
            description: "Harness only: close a session (its id is refused afterwards).",
            schema: schema_of::<SessionArgs>(),
            harness: true,
        },
        ToolSpec {
            name: "reset",
            description: "Harness only: put a session back at the start state with fresh counts.",
            schema: schema_of::<SessionArgs>(),
            harness: true,
        },
        ToolSpec {
            name: "approve",
            description: "Harness only: a person approved the paused action `pause_id`; it is executed, and the session moves to the state it leads to.",
            schema: schema_of::<PauseArgs>(),
            harness: true,
        },
        ToolSpec {
            name: "deny",
            description: "Harness only: a person denied the paused action `pause_id`; it is not executed and the session stays where it is.",
            schema: schema_of::<PauseArgs>(),
            harness: true,
        },
    ]
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
