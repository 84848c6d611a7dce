//! The gateway's upstream servers as the user names them: `--upstream NAME=COMMAND` (the
//! command split the way a POSIX shell would, with `shlex`) and `--upstream-config FILE`, the
//! `{"mcpServers": {name: {"command", "args", "env"}}}` JSON that Claude Code, Cursor and
//! Claude Desktop read. A bad file is an error located at the offending value (file, line,
//! column, caret); and [`exposed_names`]: the names the gateway serves the upstreams' tools
//! under (their own, `NAME__tool` only on a clash).

use crate::error::{ErrorKind, Result, ToolError};
use augur_source::json::JsonPath;
use augur_source::{Diagnostic, Location, SourceFile};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One upstream MCP server: a child process speaking MCP over its stdin/stdout, or (with
/// [`UpstreamSpec::url`]) a streamable-HTTP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamSpec {
    /// The name (the `mcpServers` key, or `NAME` of `--upstream NAME=COMMAND`).
    pub name: String,
    /// The program (empty for an HTTP upstream).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables set for it (on top of the gateway's own environment).
    pub env: Vec<(String, String)>,
    /// The URL of a streamable-HTTP upstream (`http://...`): no process is started.
    pub url: Option<String>,
    /// HTTP headers sent with every request to [`UpstreamSpec::url`] (e.g. `Authorization`).
    pub headers: Vec<(String, String)>,
    /// The PEM file of the CA that signs an `https://` upstream's certificate (`--upstream-ca`,
    /// a server's `"ca"`): its certificates are then the only trusted roots of this upstream;
    /// `None`: the platform's roots.
    pub ca: Option<PathBuf>,
}

/// Checks the URL of an HTTP upstream: `http://` or `https://` with a host, and only when
/// the HTTP client is built in.
pub fn check_url(url: &str) -> std::result::Result<(), String> {
    if !cfg!(feature = "http-upstream") {
        return Err(format!(
            "`{url}`: this build of Augur has no HTTP upstreams; build it with the cargo feature \
             `http-upstream` (`cargo build --release --features http-upstream`)"
        ));
    }
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or("");
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!(
            "`{url}`: expected http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH"
        ));
    }
    Ok(())
}

/// Sets `ca` (`--upstream-ca FILE`) on every `https://` upstream that has no `"ca"` of its
/// own; an error when no upstream is an `https://` one (the option would do nothing).
pub fn apply_default_ca(specs: &mut [UpstreamSpec], ca: &Path) -> std::result::Result<(), String> {
    let mut used = false;
    for s in specs.iter_mut() {
        if s.url.as_deref().is_some_and(|u| u.starts_with("https://")) {
            used = true;
            if s.ca.is_none() {
                s.ca = Some(ca.to_path_buf());
            }
        }
    }
    if !used {
        return Err(format!(
            "error: --upstream-ca {}: no upstream is an https:// URL (the CA file is for https upstreams)",
            ca.display()
        ));
    }
    Ok(())
}

impl UpstreamSpec {
    /// How messages to the agent and the audit name this upstream: its program (never its
    /// arguments or environment), or its URL without userinfo, query or fragment.
    pub fn shown(&self) -> String {
        match &self.url {
            Some(u) => redact_url(u),
            None => self.command.clone(),
        }
    }

    /// `text` with every secret this upstream's configuration could hold replaced by `…`: its
    /// arguments, environment values, header values (and their words), and its URL's
    /// userinfo, password and query (and each query value). Errors of the process, the HTTP
    /// client or the TLS layer may quote any of them; a message that reaches the agent or the
    /// audit goes through here.
    pub fn scrub(&self, text: &str) -> String {
        // Words of the configuration: a flag (`--api-key`) names a secret but is none, and a
        // short word (`mail`, `-y`, a port) would mangle the message (the upstream's own name
        // and program are never replaced: they are how messages name it).
        let mut secrets: Vec<&str> = Vec::new();
        let word = |w: &&str| w.chars().count() >= 6 && !w.starts_with('-');
        secrets.extend(self.args.iter().map(String::as_str).filter(word));
        secrets.extend(self.env.iter().map(|(_, v)| v.as_str()).filter(word));
        for (_, v) in &self.headers {
            secrets.push(v);
            secrets.extend(v.split_whitespace().filter(word));
        }
        let line = self.command_line();
        if let Some(u) = &self.url {
            let after = u.split_once("://").map_or(u.as_str(), |(_, r)| r);
            let authority = after.split(['/', '?', '#']).next().unwrap_or("");
            if let Some((info, _)) = authority.rsplit_once('@') {
                secrets.push(info);
                secrets.extend(info.split(':'));
            }
            if let Some((_, q)) = u.split_once('?') {
                let q = q.split('#').next().unwrap_or(q);
                secrets.push(q);
                for kv in q.split('&') {
                    secrets.push(kv);
                    secrets.extend(kv.split_once('=').map(|(_, v)| v));
                }
            }
        }
        if !self.args.is_empty() {
            secrets.push(&line);
        }
        // Longest first, so that a whole secret goes before a word of it.
        secrets.retain(|s| s.chars().count() >= 3 && *s != self.name && *s != self.command);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        // The whole URL becomes its shown form (scheme, host, port, path).
        let mut out = match &self.url {
            Some(u) => text.replace(u.as_str(), &redact_url(u)),
            None => text.to_string(),
        };
        for s in secrets {
            if out.contains(s) {
                out = out.replace(s, "…");
            }
        }
        out
    }

    /// The command line, quoted the way a shell would read it back; the URL of an HTTP
    /// upstream. For the user's own messages at start only (it may hold secrets: messages to
    /// the agent use [`UpstreamSpec::shown`]).
    pub fn command_line(&self) -> String {
        if let Some(u) = &self.url {
            return u.clone();
        }
        let words =
            std::iter::once(self.command.as_str()).chain(self.args.iter().map(String::as_str));
        shlex::try_join(words).unwrap_or_else(|_| self.command.clone())
    }
}

/// A URL without its userinfo, query and fragment: `https://user:pw@host:8443/mcp?key=k` is
/// `https://host:8443/mcp`.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s, r),
        None => ("", url),
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    }
}

fn param(message: String) -> ToolError {
    ToolError::new(ErrorKind::Param, message)
}

/// A valid upstream name: 1 to 64 letters, digits, `_` or `-` (it can prefix a tool name).
fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "the upstream name `{name}` must be 1 to 64 letters, digits, `_` or `-`"
        ));
    }
    Ok(())
}

/// Parses `--upstream NAME=COMMAND`: the command is split like a POSIX shell's words
/// (quotes and backslashes; no variables, globs or pipes).
pub fn parse_upstream_arg(arg: &str) -> Result<UpstreamSpec> {
    let Some((name, command)) = arg.split_once('=') else {
        return Err(param(format!(
            "error: --upstream `{arg}`: expected NAME=COMMAND, e.g. --upstream 'files=npx -y @modelcontextprotocol/server-filesystem /tmp'"
        )));
    };
    check_name(name).map_err(|m| param(format!("error: --upstream `{arg}`: {m}")))?;
    let trimmed = command.trim();
    if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
        check_url(trimmed).map_err(|m| param(format!("error: --upstream `{arg}`: {m}")))?;
        return Ok(UpstreamSpec {
            name: name.to_string(),
            command: String::new(),
            args: Vec::new(),
            env: Vec::new(),
            url: Some(trimmed.to_string()),
            headers: Vec::new(),
            ca: None,
        });
    }
    let Some(mut words) = shlex::split(command) else {
        return Err(param(format!(
            "error: --upstream `{arg}`: the command has an unclosed quote or a trailing backslash"
        )));
    };
    if words.is_empty() {
        return Err(param(format!(
            "error: --upstream `{arg}`: the command is empty"
        )));
    }
    let command = words.remove(0);
    Ok(UpstreamSpec {
        name: name.to_string(),
        command,
        args: words,
        env: Vec::new(),
        url: None,
        headers: Vec::new(),
        ca: None,
    })
}

/// Parses the text of an `mcpServers` configuration file (`file` names it in messages).
/// Servers come in the file's order. Unknown members of a server (`type`, `cwd`, `disabled`,
/// ...) are errors rather than ignored, except `"type": "stdio"`: a server the gateway would
/// start differently from the client is refused, never half-started.
pub fn parse_config(file: &str, text: &str) -> Result<Vec<UpstreamSpec>> {
    let src = SourceFile::new(file, text);
    let root: Value = serde_json::from_str(text).map_err(|e| {
        let loc = if e.line() == 0 {
            Location::file(file)
        } else {
            let line = src.line_text(e.line()).unwrap_or("");
            Location::in_line(file, e.line(), e.column().max(1), 1, line)
        };
        located(Diagnostic::error(format!("not valid JSON: {}", strip_position(&e))).at(loc))
    })?;
    let at = |path: &JsonPath, message: String| -> ToolError {
        let loc = path
            .span_in(text)
            .map(|s| src.location(s))
            .unwrap_or_else(|| Location::file(file));
        located(Diagnostic::error(message).at(loc))
    };
    let Some(servers) = root.get("mcpServers") else {
        return Err(at(
            &JsonPath::root(),
            "expected an object with `mcpServers` (the format of Claude Code's and Cursor's MCP configuration)".into(),
        ));
    };
    let sp = JsonPath::root().key("mcpServers");
    let Some(servers) = servers.as_object() else {
        return Err(at(
            &sp,
            "`mcpServers` must be an object: server name -> {\"command\", \"args\", \"env\"}"
                .into(),
        ));
    };
    if servers.is_empty() {
        return Err(at(&sp, "`mcpServers` names no server".into()));
    }
    let mut out = Vec::new();
    for (name, server) in servers {
        let p = sp.clone().key(name.as_str());
        check_name(name).map_err(|m| at(&p, m))?;
        let Some(obj) = server.as_object() else {
            return Err(at(
                &p,
                format!("server `{name}` must be an object with `command`"),
            ));
        };
        for (k, v) in obj {
            match k.as_str() {
                "command" | "args" | "env" | "url" | "headers" | "ca" => {}
                "type" if v == "stdio" || v == "http" || v == "streamable-http" => {}
                "type" => {
                    return Err(at(
                        &p.clone().key(k.as_str()),
                        format!("server `{name}`: the gateway starts stdio servers (`command`) and streamable-HTTP servers (`url`, `\"type\": \"http\"`), not {v}"),
                    ))
                }
                _ => {
                    return Err(at(
                        &p.clone().key(k.as_str()),
                        format!("server `{name}`: unknown member `{k}` (the gateway reads `command`, `args`, `env`; or `url`, `headers`, `ca`)"),
                    ))
                }
            }
        }
        let kind = obj.get("type").and_then(Value::as_str);
        if let Some(url) = obj.get("url") {
            if let Some(k) = ["command", "args", "env"]
                .into_iter()
                .find(|k| obj.contains_key(*k))
            {
                return Err(at(
                    &p.clone().key(k),
                    format!("server `{name}` has both `url` and `{k}`: an upstream is either a command (stdio) or a URL (HTTP)"),
                ));
            }
            if kind == Some("stdio") {
                return Err(at(
                    &p.clone().key("type"),
                    format!("server `{name}`: `\"type\": \"stdio\"` with a `url`"),
                ));
            }
            let Value::String(url) = url else {
                return Err(at(
                    &p.clone().key("url"),
                    format!("server `{name}`: `url` must be a string"),
                ));
            };
            check_url(url)
                .map_err(|m| at(&p.clone().key("url"), format!("server `{name}`: {m}")))?;
            let headers = string_map(obj.get("headers"), "headers", name, &p, &at)?;
            let ca = match obj.get("ca") {
                None | Some(Value::Null) => None,
                Some(Value::String(c)) if !c.is_empty() && url.starts_with("https://") => {
                    // Relative to the configuration file's folder.
                    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
                    Some(dir.join(c))
                }
                Some(Value::String(c)) if !c.is_empty() => {
                    return Err(at(
                        &p.clone().key("ca"),
                        format!("server `{name}`: `ca` is for https:// URLs (the certificate authority of the server's TLS certificate)"),
                    ))
                }
                Some(_) => {
                    return Err(at(
                        &p.clone().key("ca"),
                        format!("server `{name}`: `ca` must be the path of a PEM file"),
                    ))
                }
            };
            out.push(UpstreamSpec {
                name: name.clone(),
                command: String::new(),
                args: Vec::new(),
                env: Vec::new(),
                url: Some(url.clone()),
                headers,
                ca,
            });
            continue;
        }
        if obj.contains_key("headers")
            || obj.contains_key("ca")
            || matches!(kind, Some("http" | "streamable-http"))
        {
            let k = ["headers", "ca"]
                .into_iter()
                .find(|k| obj.contains_key(*k))
                .unwrap_or("type");
            return Err(at(
                &p.clone().key(k),
                format!("server `{name}`: `{k}` is for HTTP servers, which need a `url`"),
            ));
        }
        let command = match obj.get("command") {
            Some(Value::String(c)) if !c.is_empty() => c.clone(),
            Some(_) => {
                return Err(at(
                    &p.clone().key("command"),
                    format!("server `{name}`: `command` must be a non-empty string"),
                ))
            }
            None => return Err(at(&p, format!("server `{name}` has no `command`"))),
        };
        let args = match obj.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => {
                let mut v = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    match x {
                        Value::String(s) => v.push(s.clone()),
                        _ => {
                            return Err(at(
                                &p.clone().key("args").index(i),
                                format!("server `{name}`: every argument must be a string"),
                            ))
                        }
                    }
                }
                v
            }
            Some(_) => {
                return Err(at(
                    &p.clone().key("args"),
                    format!("server `{name}`: `args` must be a list of strings"),
                ))
            }
        };
        let env = string_map(obj.get("env"), "env", name, &p, &at)?;
        out.push(UpstreamSpec {
            name: name.clone(),
            command,
            args,
            env,
            url: None,
            headers: Vec::new(),
            ca: None,
        });
    }
    Ok(out)
}

/// An object of strings (`env`, `headers`), in the file's order; `None` or `null`: empty.
fn string_map(
    v: Option<&Value>,
    member: &str,
    name: &str,
    p: &JsonPath,
    at: &dyn Fn(&JsonPath, String) -> ToolError,
) -> Result<Vec<(String, String)>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => {
            let mut out = Vec::with_capacity(m.len());
            for (k, x) in m {
                match x {
                    Value::String(s) => out.push((k.clone(), s.clone())),
                    _ => {
                        return Err(at(
                            &p.clone().key(member).key(k.as_str()),
                            format!("server `{name}`: the value of `{k}` must be a string"),
                        ))
                    }
                }
            }
            Ok(out)
        }
        Some(_) => Err(at(
            &p.clone().key(member),
            format!("server `{name}`: `{member}` must be an object of strings"),
        )),
    }
}

/// serde_json's message without its " at line L column C" (the location says it).
fn strip_position(e: &serde_json::Error) -> String {
    let m = e.to_string();
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m,
    }
}

fn located(d: Diagnostic) -> ToolError {
    ToolError {
        kind: ErrorKind::Parse,
        message: d.render().trim_end().to_string(),
        location: d.location.clone(),
    }
}

/// Checks that upstream names are distinct (`--upstream` and `--upstream-config` together).
pub fn check_distinct(specs: &[UpstreamSpec]) -> Result<()> {
    let mut seen = HashMap::new();
    for s in specs {
        if seen.insert(s.name.as_str(), ()).is_some() {
            return Err(param(format!(
                "error: two upstreams are named `{}`; give each a distinct name",
                s.name
            )));
        }
    }
    Ok(())
}

/// The names under which the gateway serves the upstreams' tools: `tools[i]` lists upstream
/// `i`'s tool names; the answer has the same shape. A tool keeps its own name unless another
/// upstream has a tool of that name or `reserved` (the gateway's own tools) holds it; then
/// it is `UPSTREAM__tool` (every tool of that name, so no upstream wins by order).
pub fn exposed_names(
    upstreams: &[&str],
    tools: &[Vec<String>],
    reserved: &[&str],
) -> Vec<Vec<String>> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for list in tools {
        let mut own: Vec<&str> = list.iter().map(String::as_str).collect();
        own.sort_unstable();
        own.dedup();
        for t in own {
            *count.entry(t).or_default() += 1;
        }
    }
    tools
        .iter()
        .zip(upstreams)
        .map(|(list, up)| {
            list.iter()
                .map(|t| {
                    if count[t.as_str()] > 1 || reserved.contains(&t.as_str()) {
                        format!("{up}__{t}")
                    } else {
                        t.clone()
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages to the agent and the audit name an upstream by its name and program only:
    /// no arguments, URL userinfo or query, header or environment values.
    #[test]
    fn upstreams_are_shown_without_their_secrets() {
        let s = parse_upstream_arg("mail=python3 server.py --api-key sk-live-0123456789").unwrap();
        assert_eq!(s.shown(), "python3");
        let msg = format!(
            "spawning `{}` failed; --api-key sk-live-0123456789 refused",
            s.command_line()
        );
        let scrubbed = s.scrub(&msg);
        assert!(
            !scrubbed.contains("sk-live") && !scrubbed.contains("server.py"),
            "{scrubbed}"
        );
        // The name and program stay (how the message names the upstream), as do flags.
        let s = parse_upstream_arg("mail=python3 server.py --role mail").unwrap();
        assert_eq!(
            s.scrub("upstream `mail` (`python3`) failed"),
            "upstream `mail` (`python3`) failed"
        );
        let mut h =
            parse_upstream_arg("web=http://user:PASS1234@host.example:8080/mcp?token=t0k3n5&x=1#f")
                .unwrap();
        h.headers
            .push(("Authorization".into(), "Bearer abcd-efgh-ijkl".into()));
        h.env.push(("API_KEY".into(), "envsecret".into()));
        assert_eq!(h.shown(), "http://host.example:8080/mcp");
        let msg = "error sending request for url (http://user:PASS1234@host.example:8080/mcp?token=t0k3n5&x=1#f): header Bearer abcd-efgh-ijkl, PASS1234, t0k3n5, envsecret";
        let scrubbed = h.scrub(msg);
        for secret in ["PASS1234", "user:", "t0k3n5", "abcd-efgh-ijkl", "envsecret"] {
            assert!(!scrubbed.contains(secret), "{secret}: {scrubbed}");
        }
        assert!(scrubbed.contains("host.example"), "{scrubbed}");
        assert_eq!(redact_url("https://a@b/c"), "https://b/c");
        assert_eq!(redact_url("http://h"), "http://h");
    }

    #[test]
    fn upstream_args_are_split_like_a_shell() {
        let s = parse_upstream_arg("mail=python3 'my server.py' --flag \"a b\" c\\ d").unwrap();
        assert_eq!(s.name, "mail");
        assert_eq!(s.command, "python3");
        assert_eq!(s.args, ["my server.py", "--flag", "a b", "c d"]);
        assert_eq!(
            s.command_line(),
            "python3 'my server.py' --flag 'a b' 'c d'"
        );
        // `=` in the command stays in the command.
        let s = parse_upstream_arg("x=env A=1 prog").unwrap();
        assert_eq!(
            (s.command.as_str(), s.args.clone()),
            ("env", vec!["A=1".to_string(), "prog".to_string()])
        );
        for (bad, why) in [
            ("python3 server.py", "expected NAME=COMMAND"),
            ("=python3", "must be 1 to 64"),
            ("a b=python3", "must be 1 to 64"),
            ("mail=", "the command is empty"),
            ("mail=  ", "the command is empty"),
            ("mail=python3 'unclosed", "unclosed quote"),
        ] {
            let e = parse_upstream_arg(bad).unwrap_err();
            assert!(e.message.contains(why), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn mcp_servers_files_are_read_in_order_with_env() {
        let text = r#"{"mcpServers": {
  "zeta": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
  "alpha": {"type": "stdio", "command": "python3", "env": {"TOKEN": "x"}}
}}"#;
        let v = parse_config("mcp.json", text).unwrap();
        assert_eq!(v.len(), 2);
        // serde_json's map may sort keys: order is by name then.
        let zeta = v.iter().find(|s| s.name == "zeta").unwrap();
        assert_eq!(
            zeta.args,
            ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
        );
        let alpha = v.iter().find(|s| s.name == "alpha").unwrap();
        assert_eq!(alpha.env, [("TOKEN".to_string(), "x".to_string())]);
        assert!(alpha.args.is_empty());
    }

    #[test]
    fn http_upstreams_are_read_from_files_and_the_command_line() {
        let text = r#"{"mcpServers": {
  "remote": {"type": "http", "url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer t"}},
  "cursor": {"url": "http://localhost:9000/mcp"}
}}"#;
        let v = parse_config("mcp.json", text).unwrap();
        let remote = v.iter().find(|s| s.name == "remote").unwrap();
        assert_eq!(remote.url.as_deref(), Some("http://127.0.0.1:8000/mcp"));
        assert_eq!(
            remote.headers,
            [("Authorization".to_string(), "Bearer t".to_string())]
        );
        assert_eq!(remote.command_line(), "http://127.0.0.1:8000/mcp");
        let cursor = v.iter().find(|s| s.name == "cursor").unwrap();
        assert_eq!(cursor.url.as_deref(), Some("http://localhost:9000/mcp"));
        let s = parse_upstream_arg("web=http://127.0.0.1:8000/mcp").unwrap();
        assert_eq!(
            (s.url.as_deref(), s.command.as_str()),
            (Some("http://127.0.0.1:8000/mcp"), "")
        );
        let s = parse_upstream_arg("web=https://example.com/mcp").unwrap();
        assert_eq!(
            (s.url.as_deref(), s.ca.as_deref()),
            (Some("https://example.com/mcp"), None)
        );
        for (bad, why) in [
            ("web=http://", "expected http://HOST"),
            ("web=https:///mcp", "or https://HOST"),
        ] {
            let e = parse_upstream_arg(bad).unwrap_err();
            assert!(e.message.contains(why), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn a_ca_file_is_relative_to_the_configuration_and_upstream_ca_fills_the_others() {
        let text = r#"{"mcpServers": {
  "own": {"url": "https://a.example/mcp", "ca": "certs/a.pem"},
  "other": {"url": "https://b.example/mcp"},
  "plain": {"url": "http://127.0.0.1:1/mcp"},
  "proc": {"command": "x"}
}}"#;
        let mut v = parse_config("/etc/augur/mcp.json", text).unwrap();
        let ca = |v: &[UpstreamSpec], n: &str| v.iter().find(|s| s.name == n).unwrap().ca.clone();
        assert_eq!(ca(&v, "own"), Some(PathBuf::from("/etc/augur/certs/a.pem")));
        assert_eq!(ca(&v, "other"), None);
        apply_default_ca(&mut v, Path::new("/tmp/corp.pem")).unwrap();
        assert_eq!(ca(&v, "own"), Some(PathBuf::from("/etc/augur/certs/a.pem")));
        assert_eq!(ca(&v, "other"), Some(PathBuf::from("/tmp/corp.pem")));
        assert_eq!((ca(&v, "plain"), ca(&v, "proc")), (None, None));
        let mut plain = vec![parse_upstream_arg("p=http://127.0.0.1:1/mcp").unwrap()];
        let e = apply_default_ca(&mut plain, Path::new("ca.pem")).unwrap_err();
        assert!(e.contains("no upstream is an https:// URL"), "{e}");
    }

    #[test]
    fn bad_files_are_located() {
        for (text, line, col, why) in [
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": 7}\n}}",
                2,
                20,
                "`command` must be a non-empty string",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"args\": [\"ok\", 3]}\n}}",
                2,
                40,
                "every argument must be a string",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"url\": \"https://\"}\n}}",
                2,
                16,
                "expected http://HOST",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"url\": \"http://x\", \"ca\": \"ca.pem\"}\n}}",
                2,
                34,
                "`ca` is for https:// URLs",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"url\": \"https://x\", \"ca\": [\"ca.pem\"]}\n}}",
                2,
                35,
                "`ca` must be the path of a PEM file",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"ca\": \"ca.pem\"}\n}}",
                2,
                31,
                "`ca` is for HTTP servers",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"type\": \"sse\", \"url\": \"http://x\"}\n}}",
                2,
                17,
                "not \"sse\"",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"url\": \"http://x\", \"command\": \"y\"}\n}}",
                2,
                39,
                "both `url` and `command`",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": \"y\", \"headers\": {}}\n}}",
                2,
                36,
                "need a `url`",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"url\": \"http://x\", \"headers\": {\"X\": 1}}\n}}",
                2,
                45,
                "the value of `X` must be a string",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"cwd\": \"/\"}\n}}",
                2,
                32,
                "unknown member `cwd`",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {}\n}}",
                2,
                8,
                "has no `command`",
            ),
            (
                "{\"mcpServers\": {\n  \"a b\": {\"command\": \"x\"}\n}}",
                2,
                10,
                "must be 1 to 64",
            ),
            ("{\"mcpServers\": []}", 1, 16, "must be an object"),
            ("{\"mcpServers\": {}}", 1, 16, "names no server"),
            (
                "{\"servers\": {}}",
                1,
                1,
                "expected an object with `mcpServers`",
            ),
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}",
                2,
                24,
                "not valid JSON",
            ),
        ] {
            let e = parse_config("mcp.json", text).unwrap_err();
            let loc = e
                .location
                .clone()
                .unwrap_or_else(|| panic!("{text}: {}", e.message));
            assert_eq!((loc.line, loc.column), (line, col), "{text}: {}", e.message);
            assert!(e.message.contains(why), "{text}: {}", e.message);
            assert!(e.message.contains("mcp.json:"), "{}", e.message);
        }
    }

    #[test]
    fn names_are_prefixed_only_on_a_clash() {
        let ups = ["mail", "files", "web"];
        let tools = vec![
            vec!["send".to_string(), "read_inbox".to_string()],
            vec!["read".to_string(), "send".to_string(), "gate".to_string()],
            vec!["fetch".to_string()],
        ];
        let got = exposed_names(&ups, &tools, &["gate", "record", "begin_task"]);
        assert_eq!(
            got,
            vec![
                vec!["mail__send", "read_inbox"],
                vec!["read", "files__send", "files__gate"],
                vec!["fetch"],
            ]
        );
        // No clash: every name is kept.
        let got = exposed_names(&["a"], &[vec!["x".to_string()]], &[]);
        assert_eq!(got, vec![vec!["x"]]);
    }

    #[test]
    fn duplicate_upstream_names_are_refused() {
        let a = parse_upstream_arg("m=a").unwrap();
        let b = parse_upstream_arg("m=b").unwrap();
        assert!(check_distinct(&[a.clone(), b])
            .unwrap_err()
            .message
            .contains("two upstreams are named `m`"));
        assert!(check_distinct(&[a]).is_ok());
    }
}
