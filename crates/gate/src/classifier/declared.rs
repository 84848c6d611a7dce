//! Tools the rules have never seen: what a tool's own declaration says about it (issue 40,
//! item 3).
//!
//! An MCP server lists each tool with a description, a JSON Schema of its input and
//! annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). All of
//! it is written by the tool's server, which the monitor does not trust: a declaration may
//! only **raise** what the rules say of a tool, never lower it. A tool annotated
//! `readOnlyHint: true` whose name or schema say it sends is still a send; a tool annotated
//! `destructiveHint: true` is irreversible whatever its name.
//!
//! [`Classifier::profile`] reads a declaration once (when `tools/list` arrives) into a
//! [`ToolProfile`]: the least implication `(d', t', r')` the declaration implies and why.
//! [`Classifier::classify_declared`] then takes, per call, the rules' classification and
//! raises it to that floor (component by component). A call raised by its declaration treats
//! **every** argument as a destination and a payload: the server said the tool changes
//! something, so whatever the call carries can be where data goes or what it sends.
//!
//! What is read (each a behaviour, never a tool name):
//! - annotations, only where given explicitly (absent hints say nothing): `destructiveHint:
//!   true` → a write that cannot be undone; `readOnlyHint: false` → a write;
//!   `idempotentHint: false` (on a tool not declared read-only) → a write that repeats its
//!   effect; `openWorldHint: true` (on a tool not declared read-only) → it writes to the world
//!   outside (network);
//! - the input schema's top-level properties: a property of format `email`, `uri`,
//!   `hostname`, `ipv4`, ... is a destination; an amount (`amount`, `price`, `total`, ...)
//!   and a payee (`recipient`, `payee`, `iban`, `account`, ...) on a tool whose name is not a
//!   read is a **money movement**; a destination of such a format and a payload (`body`,
//!   `message`, ...) on a tool whose name is not a read is a **send**;
//! - the description: its leading verb (after `Use this tool to`, ...) classified as a tool
//!   name would be (`Sends an e-mail` is a send, `Stars a repository` a state change), and
//!   words that say the effect is permanent (`permanently`, `irreversible`, `cannot be
//!   undone`).

use super::*;

/// A tool as its server declares it (MCP `tools/list`): every part but the name optional.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolDeclaration<'a> {
    /// The tool's name (the upstream's own).
    pub name: &'a str,
    /// Its description.
    pub description: Option<&'a str>,
    /// Its input's JSON Schema (`inputSchema`).
    pub input_schema: Option<&'a Value>,
    /// Its MCP annotations (`annotations`: `readOnlyHint`, `destructiveHint`, ...).
    pub annotations: Option<&'a Value>,
}

/// Why a declaration raised a tool: a set of reasons.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Declared(u16);

impl Declared {
    /// `destructiveHint: true`.
    pub const DESTRUCTIVE: Declared = Declared(1);
    /// `readOnlyHint: false`.
    pub const NOT_READ_ONLY: Declared = Declared(1 << 1);
    /// `openWorldHint: true` on a tool not declared read-only.
    pub const OPEN_WORLD: Declared = Declared(1 << 2);
    /// `idempotentHint: false` on a tool not declared read-only.
    pub const NOT_IDEMPOTENT: Declared = Declared(1 << 3);
    /// The schema has an amount and a payee (a money movement).
    pub const SCHEMA_MONEY: Declared = Declared(1 << 4);
    /// The schema has an address or URL destination and a payload (a send).
    pub const SCHEMA_SEND: Declared = Declared(1 << 5);
    /// The schema has a property of an address, URL or host format on a tool that writes.
    pub const SCHEMA_DESTINATION: Declared = Declared(1 << 6);
    /// The description's leading verb is a write or a send.
    pub const DESCRIPTION_VERB: Declared = Declared(1 << 7);
    /// The description says the effect is permanent.
    pub const DESCRIPTION_PERMANENT: Declared = Declared(1 << 8);

    const NAMES: [&str; 9] = [
        "destructiveHint",
        "readOnlyHint false",
        "openWorldHint",
        "idempotentHint false",
        "an amount and a payee in its input schema",
        "an address and a payload in its input schema",
        "an address or URL argument in its input schema",
        "the verb of its description",
        "its description says the effect is permanent",
    ];

    /// No reason.
    pub const fn empty() -> Declared {
        Declared(0)
    }

    /// Whether there is no reason.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every reason of `other` is one of these.
    pub fn contains(self, other: Declared) -> bool {
        self.0 & other.0 == other.0
    }

    /// The reasons, in words: `destructiveHint, the verb of its description`.
    pub fn describe(self) -> String {
        Self::NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 >> i & 1 == 1)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::ops::BitOr for Declared {
    type Output = Declared;
    fn bitor(self, o: Declared) -> Declared {
        Declared(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for Declared {
    fn bitor_assign(&mut self, o: Declared) {
        self.0 |= o.0;
    }
}

/// What a tool's declaration implies, computed once per tool ([`Classifier::profile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolProfile {
    /// The least implication of a call: each component of a call's classification is raised
    /// to this one's.
    pub floor: Implication,
    /// Why (empty: the declaration says nothing the rules do not).
    pub by: Declared,
}

impl ToolProfile {
    /// A profile that raises nothing.
    pub const NOTHING: ToolProfile = ToolProfile {
        floor: LEAST,
        by: Declared::empty(),
    };

    /// Raise the floor to `to` (component by component), for `why`.
    fn raise(&mut self, to: Implication, why: Declared) {
        let j = join(self.floor, to);
        self.floor = j;
        self.by |= why;
    }
}

/// The least implication: no data, read-only, fully reversible.
const LEAST: Implication = Implication {
    d: DataExposure::None,
    t: ToolEscalation::ReadOnly,
    r: Reversibility::FullyReversible,
};

/// The component-wise maximum of two implications.
pub fn join(a: Implication, b: Implication) -> Implication {
    Implication {
        d: a.d.max(b.d),
        t: a.t.max(b.t),
        r: a.r.max(b.r),
    }
}

/// JSON Schema formats of an address, a URL or a host: where data goes.
const DESTINATION_FORMATS: &[&str] = &[
    "email",
    "idn-email",
    "uri",
    "iri",
    "uri-reference",
    "iri-reference",
    "uri-template",
    "url",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
];

/// Argument-name words of an amount of money.
pub(crate) const AMOUNT_WORDS: &[&str] = &[
    "amount", "amounts", "sum", "total", "price", "cost", "fee", "fare",
];

/// Argument-name words of who receives money.
pub(crate) const PAYEE_WORDS: &[&str] = &[
    "recipient",
    "recipients",
    "payee",
    "beneficiary",
    "receiver",
    "creditor",
    "iban",
    "account",
    "destination",
    "wallet",
    "to",
];

/// Words that open a description before its verb (`Use this tool to send ...`).
const LEAD_IN: &[&str] = &[
    "use", "used", "this", "tool", "function", "to", "can", "be", "allows", "allow", "lets", "let",
    "you", "the", "a", "an", "will", "it", "that", "which", "call", "api", "endpoint", "helps",
    "help", "for", "in", "order", "we", "i",
];

/// Words of a description that say an effect is permanent.
const PERMANENT: &[&str] = &[
    "permanently",
    "irreversible",
    "irreversibly",
    "unrecoverable",
];

impl Classifier {
    /// What `decl` says about its tool (see the module documentation): computed once per
    /// tool, when its server lists it; [`Classifier::classify_declared`] applies it per call.
    pub fn profile(&self, decl: &ToolDeclaration<'_>) -> ToolProfile {
        let mut p = ToolProfile::NOTHING;
        let by_name = self.classify(decl.name, &Value::Null);
        // A read by its name: a rule matched it and says it reads.
        let name_reads = by_name.is_some_and(|c| {
            c.matched != Matched::Default
                && c.implication.t == ToolEscalation::ReadOnly
                && c.implication.r == Reversibility::FullyReversible
        });
        let write = Implication {
            t: ToolEscalation::FileWrite,
            ..LEAST
        };
        // Annotations: only explicit hints count, and only upwards.
        let hint = |k: &str| {
            decl.annotations
                .and_then(|a| a.get(k))
                .and_then(Value::as_bool)
        };
        let read_only = hint("readOnlyHint") == Some(true);
        if hint("destructiveHint") == Some(true) {
            p.raise(
                Implication {
                    r: Reversibility::Irreversible,
                    ..write
                },
                Declared::DESTRUCTIVE,
            );
        }
        if hint("readOnlyHint") == Some(false) {
            p.raise(write, Declared::NOT_READ_ONLY);
        }
        if !read_only && hint("idempotentHint") == Some(false) {
            p.raise(
                Implication {
                    r: Reversibility::Partially,
                    ..write
                },
                Declared::NOT_IDEMPOTENT,
            );
        }
        if !read_only && hint("openWorldHint") == Some(true) {
            p.raise(
                Implication {
                    t: ToolEscalation::Network,
                    ..LEAST
                },
                Declared::OPEN_WORLD,
            );
        }
        // The input schema's top-level properties.
        let props = decl
            .input_schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        let (mut amount, mut payee, mut dest_format, mut payload) = (false, false, false, false);
        for (name, schema) in props.into_iter().flatten() {
            let words = |list: &[&str]| name_has_any(name, list);
            amount |= words(AMOUNT_WORDS) && !is_type(schema, &["boolean", "array", "object"]);
            payee |= words(PAYEE_WORDS);
            let format = schema
                .get("format")
                .and_then(Value::as_str)
                .or_else(|| {
                    schema
                        .get("items")
                        .and_then(|i| i.get("format"))
                        .and_then(Value::as_str)
                })
                .unwrap_or("");
            let formatted = DESTINATION_FORMATS
                .iter()
                .any(|f| f.eq_ignore_ascii_case(format));
            dest_format |= formatted;
            payload |= name_has_word(name, &self.payloads);
        }
        if !name_reads && amount && payee {
            p.raise(
                Implication {
                    d: DataExposure::Sensitive,
                    t: ToolEscalation::Network,
                    r: Reversibility::Irreversible,
                },
                Declared::SCHEMA_MONEY,
            );
        }
        if !name_reads && dest_format && payload {
            p.raise(
                Implication {
                    d: DataExposure::Internal,
                    t: ToolEscalation::Network,
                    r: Reversibility::Irreversible,
                },
                Declared::SCHEMA_SEND,
            );
        }
        // The description: its leading verb, and words of a permanent effect.
        if let Some(text) = decl.description {
            let folded = crate::words::fold(text);
            let first = first_sentence(&folded);
            if let Some(c) = self.classify_phrase(first) {
                let i = c.implication;
                if i.t >= ToolEscalation::FileWrite || i.r != Reversibility::FullyReversible {
                    p.raise(i, Declared::DESCRIPTION_VERB);
                }
            }
            let permanent = first
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
                .any(|w| PERMANENT.iter().any(|x| x.eq_ignore_ascii_case(w)))
                || contains_ci(first, "cannot be undone")
                || contains_ci(first, "can't be undone")
                || contains_ci(first, "can not be undone");
            if permanent {
                p.raise(
                    Implication {
                        r: Reversibility::Irreversible,
                        ..write
                    },
                    Declared::DESCRIPTION_PERMANENT,
                );
            }
        }
        // A destination of an address or URL format on a tool that writes (by its rules or
        // its declaration): every argument counts as a destination and a payload.
        let writes = by_name.is_none_or(|c| {
            c.implication.t >= ToolEscalation::FileWrite
                || c.implication.r == Reversibility::Irreversible
        }) || p.floor.t >= ToolEscalation::FileWrite;
        if dest_format && writes {
            p.by |= Declared::SCHEMA_DESTINATION;
        }
        p
    }

    /// [`Classifier::classify_with`], raised by the tool's declaration (`profile`, from
    /// [`Classifier::profile`]; `None`: no declaration, the rules alone). A raised call's
    /// [`Classification::declared`] says why; every argument of it is a destination and a
    /// payload. A declaration that raises nothing — it says what the rules already say, as
    /// a filesystem server's `write_file` ("Create a new file ...") does of a local file
    /// write — leaves the call as the rules classified it, their destinations and payloads
    /// included, unless it declares a destination of an address or URL format. Allocates
    /// nothing for ASCII calls.
    pub fn classify_declared(
        &self,
        tool: &str,
        args: &Value,
        prov: Option<&Provenance>,
        profile: Option<&ToolProfile>,
    ) -> Option<Classification> {
        let mut c = self.classify_with(tool, args, prov)?;
        if let Some(p) = profile.filter(|p| !p.by.is_empty()) {
            let raised = join(c.implication, p.floor);
            if raised != c.implication || p.by.contains(Declared::SCHEMA_DESTINATION) {
                c.implication = raised;
                c.declared = Some(p.by);
            }
        }
        Some(c)
    }

    /// A description's verb phrase classified as a tool name: the first word that is not a
    /// lead-in (`Use this tool to`), without its inflection (`sends` → `send`), with the
    /// three words after it. `None` when no rule matches it (the default does not count), and
    /// when no rule matches that first word by itself: a description that opens with a noun
    /// (`The user's address book; ...`) has no leading verb, and a noun after it (`book`) is
    /// not one.
    fn classify_phrase(&self, sentence: &str) -> Option<Classification> {
        let mut words = sentence
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .skip_while(|w| LEAD_IN.iter().any(|x| x.eq_ignore_ascii_case(w)));
        let verb = words.next()?.to_ascii_lowercase();
        let rest: Vec<&str> = words.take(3).collect();
        let mut best: Option<Classification> = None;
        for base in base_forms(&verb) {
            let is_verb = self
                .classify(&base, &Value::Null)
                .is_some_and(|c| c.matched != Matched::Default);
            if !is_verb {
                continue;
            }
            let mut name = base.clone();
            for w in &rest {
                name.push('_');
                name.push_str(w);
            }
            if let Some(c) = self.classify(&name, &Value::Null) {
                if c.matched != Matched::Default
                    && best.is_none_or(|b| join(b.implication, c.implication) != b.implication)
                {
                    best = Some(match best {
                        Some(b) => Classification {
                            implication: join(b.implication, c.implication),
                            ..c
                        },
                        None => c,
                    });
                }
            }
        }
        best
    }
}

/// The first sentence of a description (up to `. `, a new line, or 300 bytes).
fn first_sentence(text: &str) -> &str {
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let t = &text[..end];
    let cut = [t.find(". "), t.find('\n')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(t.len());
    &t[..cut]
}

/// A verb and its base forms: `sends` → `sends`, `send`; `pushes` → `pushes`, `push`;
/// `copies` → `copies`, `copy`.
fn base_forms(verb: &str) -> Vec<String> {
    let mut out = vec![verb.to_string()];
    if let Some(s) = verb.strip_suffix("ies").filter(|s| s.len() >= 2) {
        out.push(format!("{s}y"));
    } else if let Some(s) = verb
        .strip_suffix("es")
        .filter(|s| s.ends_with("sh") || s.ends_with("ch") || s.ends_with('x') || s.ends_with("ss"))
    {
        out.push(s.to_string());
    } else if let Some(s) = verb
        .strip_suffix('s')
        .filter(|s| s.len() >= 2 && !s.ends_with('s'))
    {
        out.push(s.to_string());
    }
    out
}

fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.to_ascii_lowercase().contains(needle)
}

/// Whether a JSON Schema's `type` is one of `types` (and only those).
fn is_type(schema: &Value, types: &[&str]) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => types.contains(&t.as_str()),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .all(|t| types.contains(&t)),
        _ => false,
    }
}

/// Does an argument name have one of `words` among its words?
fn name_has_any(name: &str, words: &[&str]) -> bool {
    let mut buf = [(0u16, 0u16); MAX_WORDS];
    let n = split_words(name, &mut buf);
    buf[..n].iter().any(|&(a, b)| {
        let w = &name[a as usize..b as usize];
        words.iter().any(|x| x.eq_ignore_ascii_case(w))
    })
}
