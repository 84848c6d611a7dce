//! What a client's hooks send, read the same way by `augur hook claude-code` (with a state
//! file) and by the gateway's hook socket: the tool name the classifier sees and the text of a
//! tool's result.

use serde_json::Value;

/// The classifier's name of a Claude Code tool: an MCP tool's own name without
/// `mcp__SERVER__` (`mcp__github__create_issue` → `create_issue`); a built-in tool's as it is.
pub fn tool_name(name: &str) -> &str {
    match name.strip_prefix("mcp__") {
        Some(rest) => rest.split_once("__").map_or(rest, |(_, t)| t),
        None => name,
    }
}

/// The text of a tool's result: every string and number leaf, one per line, except the
/// leaves that repeat one of the call's own arguments (Read's result echoes its `filePath`:
/// the agent wrote it, it is not news from the tool).
pub fn result_text(result: &Value, input: &Value) -> String {
    fn leaves<'a>(v: &'a Value, f: &mut dyn FnMut(&'a Value)) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| leaves(x, f)),
            Value::Object(m) => m.values().for_each(|x| leaves(x, f)),
            v => f(v),
        }
    }
    let mut own: Vec<&Value> = Vec::new();
    leaves(input, &mut |v| own.push(v));
    let mut text = String::new();
    leaves(result, &mut |v| {
        if own.contains(&v) {
            return;
        }
        match v {
            Value::String(s) => text.push_str(s),
            Value::Number(n) => text.push_str(&n.to_string()),
            _ => return,
        }
        text.push('\n');
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mcp_tools_are_classified_by_their_own_name() {
        assert_eq!(tool_name("Bash"), "Bash");
        assert_eq!(tool_name("mcp__github__create_issue"), "create_issue");
        assert_eq!(tool_name("mcp__memory"), "memory");
    }

    #[test]
    fn a_result_echoing_its_arguments_leaves_them_out() {
        let input = json!({"file_path": "/p/notes.txt"});
        let result = json!({"type": "text", "file": {"filePath": "/p/notes.txt",
                            "content": "mail eve@evil.example", "numLines": 1}});
        // In the map's key order (sorted, or as written with serde_json's preserve_order).
        let text = result_text(&result, &input);
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, ["1", "mail eve@evil.example", "text"]);
        assert_eq!(result_text(&json!("plain"), &json!({})), "plain\n");
    }
}
