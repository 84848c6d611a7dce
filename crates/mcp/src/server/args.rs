//! The tools' arguments, written once: each tool's argument struct is what its handler parses
//! (serde) and what its input schema is generated from (schemars: names, types, required
//! arguments, bounds and the descriptions below, which the model reads).

use super::*;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// `{"type": ["object", "string"]}`: a JSON object, or a string holding one.
fn object_or_string(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": ["object", "string"]})
}

/// `{"type": ["string", "object"]}`: constants as `N=3,p=0.5` or `{"N": 3, "p": 0.5}`.
fn string_or_object(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": ["string", "object"]})
}

/// A list of strings (one string is read as a list of one).
fn strings(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": "array", "items": {"type": "string"}, "minItems": 1})
}

/// The session argument's description, shared by every session tool.
const SESSION: &str = "The session id the harness gave you (or that open_session returned).";

/// Arguments of `gate`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct GateArgs {
    #[schemars(description = SESSION)]
    pub session: String,
    /// The name of the tool you are about to call.
    #[serde(default)]
    pub tool: Option<String>,
    /// The arguments you are about to pass to it (an object, or a JSON string holding one).
    #[serde(default)]
    #[schemars(schema_with = "object_or_string")]
    pub args: Option<Value>,
    /// For monitors compiled over an abstraction spec: the concrete state the action leads to
    /// (variable -> value), instead of tool arguments.
    #[serde(default)]
    pub state: Option<Map<String, Value>>,
}

/// Arguments of `record`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct RecordArgs {
    #[schemars(description = SESSION)]
    pub session: String,
    /// The name of the tool that was called.
    pub tool: String,
    /// The arguments it was called with (an object, or a JSON string holding one).
    #[serde(default)]
    #[schemars(schema_with = "object_or_string")]
    pub args: Option<Value>,
    /// For monitors compiled over an abstraction spec: the concrete state the action led to
    /// (variable -> value), instead of tool arguments.
    #[serde(default)]
    pub state: Option<Map<String, Value>>,
    /// Whether the action was executed (default true). false (the action did not happen) is
    /// harness-only.
    #[serde(default)]
    pub executed: Option<bool>,
}

/// Arguments of the tools that name only a session (`session_state`, `summary`,
/// `end_session`, `reset`).
#[derive(Deserialize, JsonSchema)]
pub(super) struct SessionArgs {
    #[schemars(description = SESSION)]
    pub session: String,
}

/// Arguments of `open_session`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct OpenArgs {
    /// The id to use (default: a fresh one).
    #[serde(default)]
    pub session: Option<String>,
    /// The run's category (selects the monitor's table and the policy's overrides).
    #[serde(default)]
    pub category: Option<String>,
}

/// Arguments of `approve` and `deny`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct PauseArgs {
    #[schemars(description = SESSION)]
    pub session: String,
    /// The paused action's id (`pause_id` of the gate's answer).
    pub pause_id: String,
}

// The format of `model_text` (no doc comments: the schema is then a plain `enum` of names).
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum TextFormat {
    Prism,
    Drn,
    Json,
    Tra,
}

impl TextFormat {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            TextFormat::Prism => "prism",
            TextFormat::Drn => "drn",
            TextFormat::Json => "json",
            TextFormat::Tra => "tra",
        }
    }
}

/// The model a checking tool reads, and its constants.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ModelArgs {
    /// The text of the model (default: the PRISM language; see format). Exactly one of
    /// model_text and model_path.
    #[serde(default)]
    pub model_text: Option<String>,
    /// A model file under the server's --root folder (.pm/.prism, .tra with its .lab, .drn,
    /// .json). Exactly one of model_text and model_path.
    #[serde(default)]
    pub model_path: Option<String>,
    /// The format of model_text (default prism).
    #[serde(default)]
    pub format: Option<TextFormat>,
    /// Values of constants: "N=3,p=0.5" or {"N": 3, "p": 0.5}.
    #[serde(default)]
    #[schemars(schema_with = "string_or_object")]
    pub constants: Option<Value>,
}

/// Arguments of `check`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct CheckArgs {
    #[serde(flatten)]
    pub model: ModelArgs,
    /// PCTL properties, e.g. ["P=? [ F<=5 \"unsafe\" ]"].
    #[schemars(schema_with = "strings")]
    pub properties: Value,
    /// auto (default, sound), exact, interval, topological, power, jacobi, gauss-seidel,
    /// closed-form.
    #[serde(default)]
    pub method: Option<String>,
    /// Also report every state's value.
    #[serde(default)]
    pub all_states: Option<bool>,
}

/// Arguments of `horizon`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct HorizonArgs {
    #[serde(flatten)]
    pub model: ModelArgs,
    /// A label (e.g. "unsafe") or a boolean state formula.
    pub target: String,
    /// The largest horizon.
    #[schemars(range(min = 1))]
    pub max: u64,
    /// Also report every state's curve.
    #[serde(default)]
    pub all_states: Option<bool>,
}

// How `explain` finds a critical subsystem (described at `ExplainArgs::subsystem`).
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum SubsystemArg {
    Heuristic,
    Minimal,
}

/// Arguments of `explain`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ExplainArgs {
    #[serde(flatten)]
    pub model: ModelArgs,
    /// One property, e.g. "P<=0.1 [ F \"unsafe\" ]".
    pub property: String,
    /// How many paths to list (default 10).
    #[serde(default)]
    #[schemars(range(max = ops::MAX_EXPLAIN_PATHS))]
    pub paths: Option<u64>,
    /// The start state: an index, or a boolean state formula that holds in one state (default:
    /// the initial state).
    #[serde(default)]
    pub from: Option<String>,
    /// Find a critical subsystem: grown from the states ranked by their share of the
    /// probability (then pruned), or a minimum one exactly (small models).
    #[serde(default)]
    pub subsystem: Option<SubsystemArg>,
    /// Include the subsystem in DOT, the paths highlighted (`dot`).
    #[serde(default)]
    pub dot: Option<bool>,
    /// Include the subsystem as a PRISM model (`subsystem_model`), its leaving transitions to
    /// a sink.
    #[serde(default)]
    pub prism: Option<bool>,
}

/// Arguments of `pac`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct PacArgs {
    /// The learned model's JSON text.
    #[serde(default)]
    pub model_text: Option<String>,
    /// The learned model's file under --root.
    #[serde(default)]
    pub model_path: Option<String>,
    /// The accuracy ε, in (0, 1).
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub epsilon: f64,
    /// The confidence 1 − δ's δ, in (0, 1).
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub delta: f64,
    /// Use the Hoeffding bound instead of Pro2Guard's (Chen et al.).
    #[serde(default)]
    pub hoeffding: Option<bool>,
    /// Calculator: the number of states.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub states: Option<u64>,
    /// Calculator: the binding successor's empirical probability (default: the worst case 1/2).
    #[serde(default)]
    pub p_hat: Option<f64>,
    /// Calculator: observations out of the state.
    #[serde(default)]
    pub observations: Option<u64>,
}

/// The input schema of argument struct `T`: an object of its properties, no others.
pub(super) fn schema_of<T: JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut v = schema.to_value();
    tidy(&mut v);
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.remove("description");
        o.insert("additionalProperties".into(), Value::Bool(false));
        if !o.contains_key("required") {
            o.insert("required".into(), Value::Array(Vec::new()));
        }
    }
    v
}

/// Descriptions as one paragraph each (doc comments wrap lines), no `"default": null`.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("default") == Some(&Value::Null) {
                o.remove("default");
            }
            if let Some(Value::String(d)) = o.get_mut("description") {
                *d = d
                    .split("\n\n")
                    .map(|p| p.replace('\n', " "))
                    .collect::<Vec<_>>()
                    .join("\n\n");
            }
            o.values_mut().for_each(tidy);
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// `args` read as `T`; a missing or mistyped argument is a tool error naming it (unknown
/// arguments were refused before, against the schema).
pub(super) fn parse<T: DeserializeOwned>(args: &Map<String, Value>) -> Result<T> {
    let v = Value::Object(args.clone());
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let message = match inner.strip_prefix("missing field `") {
            Some(rest) => format!("`{}` is required", rest.trim_end_matches('`')),
            None if path.is_empty() || path == "." => inner,
            None => format!("`{path}`: {inner}"),
        };
        ToolError::param(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tool's schema: an object of described arguments, no others, the required ones
    /// as the handler needs them; and what the handler parses agrees with it.
    #[test]
    fn schemas_come_from_the_argument_types() {
        let specs = tool_specs();
        let required = |name: &str| -> Vec<String> {
            let s = &specs.iter().find(|t| t.name == name).unwrap().schema;
            let mut r: Vec<String> = s["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            r.sort();
            r
        };
        assert_eq!(required("gate"), ["session"]);
        assert_eq!(required("record"), ["session", "tool"]);
        assert_eq!(required("check"), ["properties"]);
        assert_eq!(required("horizon"), ["max", "target"]);
        assert_eq!(required("explain"), ["property"]);
        assert_eq!(required("pac"), ["delta", "epsilon"]);
        assert_eq!(required("approve"), ["pause_id", "session"]);
        assert!(required("open_session").is_empty());
        for t in &specs {
            let s = &t.schema;
            assert_eq!(s["type"], "object", "{}", t.name);
            assert_eq!(s["additionalProperties"], false, "{}", t.name);
            for (k, p) in s["properties"].as_object().unwrap() {
                assert!(
                    p["description"].as_str().is_some_and(|d| d.len() > 10),
                    "{}.{k} has no description: {p}",
                    t.name
                );
            }
        }
        // The flattened model arguments are in the checking tools' schemas.
        let check = &specs.iter().find(|t| t.name == "check").unwrap().schema;
        for k in [
            "model_text",
            "model_path",
            "format",
            "constants",
            "method",
            "all_states",
        ] {
            assert!(check["properties"].get(k).is_some(), "check.{k}: {check}");
        }
        assert_eq!(
            check["properties"]["format"]["enum"],
            json!(["prism", "drn", "json", "tra", null])
        );
        let explain = &specs.iter().find(|t| t.name == "explain").unwrap().schema;
        assert_eq!(
            explain["properties"]["paths"]["maximum"],
            json!(ops::MAX_EXPLAIN_PATHS)
        );
    }

    #[test]
    fn a_missing_or_mistyped_argument_is_named() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let e = parse::<HorizonArgs>(&m(json!({"max": 3}))).err().unwrap();
        assert_eq!(e.message, "`target` is required");
        let e = parse::<HorizonArgs>(&m(json!({"target": "u", "max": "three"})))
            .err()
            .unwrap();
        assert!(
            e.message.starts_with("`max`: invalid type"),
            "{}",
            e.message
        );
        let e = parse::<GateArgs>(&m(json!({"session": 7}))).err().unwrap();
        assert!(
            e.message.starts_with("`session`: invalid type"),
            "{}",
            e.message
        );
        let e = parse::<CheckArgs>(&m(
            json!({"properties": ["P=? [F \"a\"]"], "format": "xml"}),
        ))
        .err()
        .unwrap();
        assert!(e.message.contains("xml"), "{}", e.message);
        let ok = parse::<CheckArgs>(&m(
            json!({"properties": "P=? [F \"a\"]", "model_text": "dtmc"}),
        ));
        assert!(ok.is_ok());
    }
}
