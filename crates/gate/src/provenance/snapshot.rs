//! A store as plain data: what a process that keeps a session between runs saves and reads
//! back, and a value as an audit log shows it.

use super::hash::key_of_bytes;
use super::*;

/// A value as an audit log shows it: its first two characters and a digest of the whole,
/// `ma…#5f1e09c2` (the first 8 hex digits of the SHA-256 of the text given), so that lines can
/// be matched with each other and with the person's answer without the log holding the value.
pub fn mask_value(text: &str) -> String {
    let head: String = text.chars().take(2).collect();
    let digest = crate::sha256_hex([text.as_bytes()]);
    format!("{head}…#{}", &digest[..8])
}

/// A sighting as plain data ([`ProvenanceSnapshot`]): the origin's kind, the index of its
/// tool in [`ProvenanceSnapshot::tools`] (absent for the user, the system prompt and tools
/// beyond [`MAX_TOOLS`]) and the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSighting {
    /// The origin's kind.
    pub origin: OriginKind,
    /// The tool's index in the snapshot's `tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<u32>,
    /// The step.
    pub step: u32,
}

/// One stored value as plain data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedValue {
    /// Its kind.
    pub kind: ValueKind,
    /// Its whole normalised text (what a lookup compares; the hash key is not saved: it
    /// depends on the store's secret, drawn anew by the store that reads the snapshot).
    pub text: String,
    /// Its first trusted sighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted: Option<SavedSighting>,
    /// Its first untrusted sighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<SavedSighting>,
    /// Its first sighting in the agent's own arguments (the value is the agent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<SavedSighting>,
    /// Its normalised bytes, when they are not UTF-8 (raw bytes observed, a percent-encoded
    /// byte decoded): `text` then shows them lossily, and these are what the store compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<u8>>,
    /// It was seen as a host (always for a domain; for another kind, when a text also held
    /// it as a host: an e-mail address's domain then counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host: bool,
}

impl SavedValue {
    /// The normalised bytes the store compares.
    pub fn value_bytes(&self) -> &[u8] {
        self.bytes.as_deref().unwrap_or(self.text.as_bytes())
    }
}

/// Everything a [`Provenance`] store holds, as plain data: what a process that keeps a
/// session between runs (`augur hook claude-code --state FILE`) saves and reads back with
/// [`Provenance::from_snapshot`]. Values are in the order of their texts, so equal stores
/// save equally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvenanceSnapshot {
    /// The store's limits.
    pub limits: ProvenanceLimits,
    /// Why it is incomplete, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// Untrusted text was observed ([`Provenance::seen_untrusted`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrusted_seen: bool,
    /// The tool names sightings refer to, in order of first sighting.
    pub tools: Vec<String>,
    /// The stored values.
    pub values: Vec<SavedValue>,
}

impl Provenance {
    /// The store as plain data (see [`ProvenanceSnapshot`]).
    pub fn snapshot(&self) -> ProvenanceSnapshot {
        let saved = |s: Option<Sighting>| {
            s.map(|s| SavedSighting {
                origin: s.origin,
                tool: (s.tool != OTHER_TOOL).then_some(s.tool),
                step: s.step,
            })
        };
        let mut values: Vec<SavedValue> = self
            .entries
            .iter()
            .map(|e| {
                let start = e.text_start as usize;
                let text = &self.texts[start..start + e.text_len as usize];
                SavedValue {
                    kind: e.kind,
                    text: String::from_utf8_lossy(text).into_owned(),
                    trusted: saved(e.trusted),
                    untrusted: saved(e.untrusted()),
                    agent: saved(e.agent()),
                    bytes: std::str::from_utf8(text).is_err().then(|| text.to_vec()),
                    host: e.host && e.kind != ValueKind::Domain,
                }
            })
            .collect();
        values.sort_by(|a, b| {
            (&a.text, a.kind as u8, &a.bytes).cmp(&(&b.text, b.kind as u8, &b.bytes))
        });
        ProvenanceSnapshot {
            limits: self.limits,
            incomplete: self.incomplete,
            untrusted_seen: self.untrusted_seen,
            tools: self.tools.iter().map(|t| t.to_string()).collect(),
            values,
        }
    }

    /// The store a snapshot holds, under a fresh secret. Errors, with the reason, for a
    /// snapshot that no store could have written: more values, text or tools than its limits
    /// allow, a value twice, a sighting of a tool not in `tools` (or a tool on a user or system
    /// sighting), a trusted sighting of an untrusted origin or the reverse.
    pub fn from_snapshot(snap: &ProvenanceSnapshot) -> std::result::Result<Provenance, String> {
        if snap.values.len() > snap.limits.max_values {
            return Err(format!(
                "{} values stored, beyond the limit of {}",
                snap.values.len(),
                snap.limits.max_values
            ));
        }
        let text_bytes: usize = snap.values.iter().map(|v| v.value_bytes().len()).sum();
        if text_bytes > snap.limits.max_text_bytes {
            return Err(format!(
                "{text_bytes} bytes of value text, beyond the limit of {}",
                snap.limits.max_text_bytes
            ));
        }
        if snap.tools.len() > MAX_TOOLS {
            return Err(format!(
                "{} tool names, beyond the limit of {MAX_TOOLS}",
                snap.tools.len()
            ));
        }
        let mut p = Provenance::with_limits(snap.limits);
        p.incomplete = snap.incomplete;
        p.untrusted_seen = snap.untrusted_seen || snap.values.iter().any(|v| v.untrusted.is_some());
        for t in &snap.tools {
            let t = &t[..floor_char_boundary(t, TOOL_NAME_MAX)];
            if p.tool_ids.contains_key(t) {
                return Err(format!("the tool name `{t}` is listed twice"));
            }
            let i = p.tools.len() as u32;
            p.tools.push(t.into());
            p.tool_ids.insert(t.into(), i);
        }
        let tools = p.tools.len();
        let sighting = |s: Option<SavedSighting>, trusted: bool, which: usize| {
            let Some(s) = s else { return Ok(None) };
            let ok_origin = match s.origin {
                OriginKind::User | OriginKind::System => trusted && s.tool.is_none(),
                OriginKind::TrustedTool => trusted,
                OriginKind::Tool | OriginKind::Agent => !trusted,
            };
            if !ok_origin {
                return Err(format!(
                    "value {which}: a {} sighting cannot come from {:?}{}",
                    if trusted { "trusted" } else { "untrusted" },
                    s.origin,
                    if s.tool.is_some() { " with a tool" } else { "" }
                ));
            }
            let tool = match s.tool {
                None => OTHER_TOOL,
                Some(i) if (i as usize) < tools => i,
                Some(i) => {
                    return Err(format!(
                        "value {which}: tool {i} is not one of the {tools} tool names"
                    ))
                }
            };
            Ok(Some(Sighting {
                origin: s.origin,
                tool,
                step: s.step,
            }))
        };
        for (which, v) in snap.values.iter().enumerate() {
            let trusted = sighting(v.trusted, true, which)?;
            let untrusted = sighting(v.untrusted, false, which)?;
            let agent = sighting(v.agent, false, which)?;
            if untrusted.is_some_and(|s| s.origin == OriginKind::Agent)
                || agent.is_some_and(|s| s.origin != OriginKind::Agent)
            {
                return Err(format!(
                    "value {which}: an agent sighting belongs in `agent`, and only there"
                ));
            }
            if trusted.is_none() && untrusted.is_none() && agent.is_none() {
                return Err(format!("value {which}: no sighting"));
            }
            if untrusted.is_some() && agent.is_some() {
                return Err(format!(
                    "value {which}: an untrusted and an agent sighting (the first one stays)"
                ));
            }
            let untrusted = untrusted.or(agent);
            let bytes = v.value_bytes();
            let Some(key) = key_of_bytes(bytes, p.keys) else {
                return Err(format!("value {which}: an empty text"));
            };
            // The chain of values with this key: the same text twice is refused.
            let mut i = p.index.get(key).unwrap_or(NO_ENTRY);
            while i != NO_ENTRY {
                let e = &p.entries[i as usize];
                let start = e.text_start as usize;
                if &p.texts[start..start + e.text_len as usize] == bytes {
                    return Err(format!("value {which} is stored twice"));
                }
                i = e.next;
            }
            let text_start = p.texts.len() as u32;
            p.texts.extend_from_slice(bytes);
            let id = p.entries.len() as u32;
            let next = p.index.insert(key, id).unwrap_or(NO_ENTRY);
            p.entries.push(Entry {
                kind: v.kind,
                text_start,
                text_len: bytes.len() as u32,
                next,
                trusted,
                untrusted,
                host: v.host || v.kind == ValueKind::Domain,
            });
        }
        Ok(p)
    }
}
