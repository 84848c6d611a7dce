//! What a store says of a value to a person: its text, the tool and step of a sighting,
//! the reason an argument is untrusted or the user's.

use super::*;

impl Provenance {
    /// A stored value's normalised text, for a person: cut at [`DISPLAY_MAX`] bytes (`…`
    /// after a longer value), invalid UTF-8 replaced.
    pub fn value_text(&self, id: u32) -> Option<String> {
        let e = self.entries.get(id as usize)?;
        let start = e.text_start as usize;
        let t = self.texts.get(start..start + e.text_len as usize)?;
        let mut s = String::from_utf8_lossy(&t[..t.len().min(DISPLAY_MAX)]).into_owned();
        if t.len() > DISPLAY_MAX {
            s.push('…');
        }
        Some(s)
    }

    /// The tool of a sighting (`None` for the user and system prompt).
    pub fn tool_name(&self, s: &Sighting) -> Option<&str> {
        match s.origin {
            OriginKind::User | OriginKind::System => None,
            _ => Some(
                self.tools
                    .get(s.tool as usize)
                    .map_or("(another tool)", |t| &**t),
            ),
        }
    }

    /// Where a sighting was, for a person: "the user's request", "the result of `read_file`
    /// at step 2".
    pub fn describe(&self, s: &Sighting) -> String {
        match s.origin {
            OriginKind::User => "the user's request".into(),
            OriginKind::System => "the system prompt".into(),
            OriginKind::TrustedTool | OriginKind::Tool => format!(
                "the result of `{}` at step {}",
                self.tool_name(s).unwrap_or_default(),
                s.step
            ),
            OriginKind::Agent => format!(
                "the agent's own arguments to `{}` at step {}",
                self.tool_name(s).unwrap_or_default(),
                s.step
            ),
        }
    }

    /// A reason for an argument's provenance, e.g. "recipient us13… first appeared in the
    /// result of `read_file` at step 2; the user's request does not contain it".
    pub fn explain(&self, arg: &str, p: &ArgProvenance) -> String {
        self.explain_with(arg, p, false)
    }

    /// [`Provenance::explain`] with the value masked ([`mask_value`]) when `mask` is set: what
    /// an audit log writes.
    pub fn explain_with(&self, arg: &str, p: &ArgProvenance, mask: bool) -> String {
        let text = |e: &Evidence| {
            e.id.and_then(|i| self.value_text(i))
                .map(|t| if mask { mask_value(&t) } else { t })
                .unwrap_or_else(|| "(a value not stored)".to_string())
        };
        match p {
            ArgProvenance::None => format!("{arg}: no value of it was seen before (written by the model)"),
            ArgProvenance::User(e) => {
                let s = e.trusted.map(|s| self.describe(&s)).unwrap_or_default();
                format!("{arg} {} occurs in {s}", text(e))
            }
            ArgProvenance::Agent(e) => {
                let s = e.agent.map(|s| self.describe(&s)).unwrap_or_default();
                format!(
                    "{arg} {} is the agent's own value: it first appeared in {s}, before any tool result held it",
                    text(e)
                )
            }
            ArgProvenance::Untrusted(e) => match e.untrusted {
                Some(s) => format!(
                    "{arg} {} first appeared in {}; the user's request does not contain it",
                    text(e),
                    self.describe(&s)
                ),
                None => format!(
                    "{arg} holds a {} value not stored: the provenance store is at its limit (fails closed)",
                    e.kind.as_str()
                ),
            },
        }
    }
}
