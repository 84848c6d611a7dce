//! Reading a classifier: the TOML rule file, located errors.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClassifier {
    pub(super) version: Option<Spanned<i64>>,
    pub(super) default: Option<Spanned<RawImplies>>,
    pub(super) extends: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) patterns: BTreeMap<String, Spanned<RawPattern>>,
    #[serde(default, rename = "rule")]
    pub(super) rules: Vec<Spanned<RawRule>>,
    pub(super) destinations: Option<Vec<String>>,
    pub(super) payloads: Option<Vec<String>>,
    pub(super) default_destinations: Option<Vec<String>>,
    pub(super) default_payloads: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawImplies {
    pub(super) d: Spanned<String>,
    pub(super) t: Spanned<String>,
    pub(super) r: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPattern {
    pub(super) contains: Option<Vec<Spanned<String>>>,
    pub(super) email: Option<bool>,
    pub(super) url: Option<bool>,
    pub(super) regex: Option<Vec<Spanned<String>>>,
    pub(super) names: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub(super) except: Vec<String>,
    #[serde(default)]
    pub(super) keys: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    pub(super) id: Option<String>,
    pub(super) description: Option<String>,
    pub(super) tools: Option<Vec<Spanned<String>>>,
    pub(super) unless: Option<Vec<Spanned<String>>>,
    pub(super) args: Option<Vec<Spanned<String>>>,
    pub(super) implies: Spanned<RawImplies>,
    pub(super) destinations: Option<Vec<String>>,
    pub(super) payloads: Option<Vec<String>>,
    pub(super) when: Option<Vec<Spanned<String>>>,
}

pub(super) fn level<T>(
    file: &str,
    src: &str,
    s: &Spanned<String>,
    parse: fn(&str) -> Option<T>,
    what: &str,
    names: String,
) -> Result<T> {
    parse(s.get_ref()).ok_or_else(|| {
        GateError::at(
            file,
            src,
            Span::from(s.span()),
            format!("unknown {what} `{}` (expected one of {names})", s.get_ref()),
        )
    })
}

pub(super) fn implies(file: &str, src: &str, raw: &RawImplies) -> Result<Implication> {
    Ok(Implication {
        d: level(
            file,
            src,
            &raw.d,
            DataExposure::parse,
            "data exposure",
            DataExposure::names(),
        )?,
        t: level(
            file,
            src,
            &raw.t,
            ToolEscalation::parse,
            "tool escalation",
            ToolEscalation::names(),
        )?,
        r: level(
            file,
            src,
            &raw.r,
            Reversibility::parse,
            "reversibility",
            Reversibility::names(),
        )?,
    })
}

impl Classifier {
    /// The built-in default rule set.
    pub fn default_rules() -> Classifier {
        Classifier::built_in(true)
    }

    /// The built-in set; `indexed: false` leaves out the name index and the argument
    /// automaton, for a file that extends it (which builds its own over both).
    fn built_in(indexed: bool) -> Classifier {
        // The default file is part of the crate and is tested; failing here is a build bug.
        // Its regular expressions are compiled when first searched (a hook's process gates
        // one call, which needs few of them): `default_regexes_compile_and_match_no_empty_text`
        // checks them all.
        Classifier::parse_in(
            DEFAULT_RULES,
            "<default classifier>",
            Compile::WhenSearched,
            indexed,
        )
        .unwrap_or_else(|e| panic!("the built-in classifier does not parse: {}", e.render()))
    }

    /// Read a rule set from a file.
    pub fn from_file(path: &std::path::Path) -> Result<Classifier> {
        let text = crate::read_text(path)?;
        Classifier::parse(&text, &path.display().to_string())
    }

    /// Parse a rule set; every error is located in `file`.
    pub fn parse(src: &str, file: &str) -> Result<Classifier> {
        Classifier::parse_in(src, file, Compile::Now, true)
    }

    fn parse_in(src: &str, file: &str, compile: Compile, indexed: bool) -> Result<Classifier> {
        let raw: RawClassifier = toml::from_str(src).map_err(|e| GateError::toml(file, src, &e))?;
        if let Some(v) = &raw.version {
            if *v.get_ref() != 1 {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(v.span()),
                    format!(
                        "unsupported classifier version {} (this Augur reads version 1)",
                        v.get_ref()
                    ),
                ));
            }
        }
        let base = match &raw.extends {
            None => None,
            Some(e) if e.get_ref() == "default" => Some(Classifier::built_in(false)),
            Some(e) => {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(e.span()),
                    format!(
                    "`extends = \"{}\"`: only \"default\" (the built-in rule set) can be extended",
                    e.get_ref()
                ),
                ))
            }
        };
        let mut patterns: Vec<ArgPattern> = Vec::new();
        for (name, p) in &raw.patterns {
            patterns.push(parse_pattern(file, src, name, p, compile)?);
        }
        // Patterns of the default set that this file does not redefine.
        if let Some(b) = &base {
            for p in &b.patterns {
                if !patterns.iter().any(|q| q.name == p.name) {
                    patterns.push(p.clone());
                }
            }
        }
        let mut rules = Vec::new();
        for (i, r) in raw.rules.iter().enumerate() {
            rules.push(parse_rule(file, src, i, r, &patterns)?);
        }
        let mut default = match &raw.default {
            Some(d) => Some(implies(file, src, d.get_ref())?),
            None => None,
        };
        let base_words = base.as_ref().map(|b| {
            (
                b.destinations.clone(),
                b.payloads.clone(),
                b.default_destinations.clone(),
                b.default_payloads.clone(),
            )
        });
        if let Some(b) = base {
            // The default set's rules refer to its patterns by index: re-point them.
            for r in b.rules {
                let args = r
                    .args
                    .iter()
                    .map(|&k| {
                        let name = &b.patterns[k as usize].name;
                        patterns
                            .iter()
                            .position(|p| &p.name == name)
                            .unwrap_or(k as usize) as u16
                    })
                    .collect();
                rules.push(Rule { args, ..r });
            }
            if raw.default.is_none() {
                default = b.default;
            }
        }
        if rules.len() > u16::MAX as usize || patterns.len() > u16::MAX as usize {
            return Err(GateError::at(
                file,
                src,
                Span::point(0),
                "too many rules or patterns",
            ));
        }
        let words = |w: &Option<Vec<String>>, base: Option<&Vec<String>>| -> Vec<String> {
            match w {
                Some(w) => w.iter().map(|x| x.trim().to_ascii_lowercase()).collect(),
                None => base.cloned().unwrap_or_default(),
            }
        };
        let destinations = words(&raw.destinations, base_words.as_ref().map(|b| &b.0));
        let payloads = words(&raw.payloads, base_words.as_ref().map(|b| &b.1));
        // Unknown tools' roles: the file's, else the base's, else the file's lists.
        let default_destinations = match (&raw.default_destinations, &base_words) {
            (None, None) => destinations.clone(),
            (w, b) => words(w, b.as_ref().map(|b| &b.2)),
        };
        let default_payloads = match (&raw.default_payloads, &base_words) {
            (None, None) => payloads.clone(),
            (w, b) => words(w, b.as_ref().map(|b| &b.3)),
        };
        let (index, scan) = if indexed {
            (NameIndex::build(&rules), ArgScan::build(&patterns))
        } else {
            Default::default()
        };
        Ok(Classifier {
            source: src.to_string(),
            file: file.to_string(),
            rules,
            patterns,
            default,
            index,
            scan,
            destinations,
            payloads,
            default_destinations,
            default_payloads,
            all: vec!["*".to_string()],
        })
    }
}

/// Parse a `when` condition: `args.NAME LEVEL` or `args.* LEVEL`.
pub(super) fn parse_cond(text: &str) -> std::result::Result<ProvCond, String> {
    let mut parts = text.split_whitespace();
    let (Some(target), Some(level), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!(
            "`{text}`: a condition is `args.NAME LEVEL` or `args.* LEVEL` (LEVEL: none, user, untrusted)"
        ));
    };
    let Some(name) = target.strip_prefix("args.").filter(|n| !n.is_empty()) else {
        return Err(format!(
            "`{target}`: a condition tests an argument, `args.NAME` or `args.*`"
        ));
    };
    let level = Prov::parse(level).ok_or_else(|| {
        format!("unknown provenance `{level}` (expected one of none, user, untrusted)")
    })?;
    Ok(ProvCond {
        arg: (name != "*").then(|| name.to_ascii_lowercase()),
        level,
    })
}

/// When a rule file's regular expressions are compiled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Compile {
    /// While the file is read: an error is located in it (a user's file).
    Now,
    /// When first searched (the built-in rule set, whose expressions its tests compile).
    WhenSearched,
}

/// Compiles argument pattern `name` of a rule file (`file`, text `src`).
pub(super) fn parse_pattern(
    file: &str,
    src: &str,
    name: &str,
    p: &Spanned<RawPattern>,
    compile: Compile,
) -> Result<ArgPattern> {
    let span = Span::from(p.span());
    let p = p.get_ref();
    let kinds = usize::from(p.contains.is_some())
        + usize::from(p.regex.is_some())
        + usize::from(p.names.is_some())
        + usize::from(p.email == Some(true))
        + usize::from(p.url == Some(true));
    if kinds != 1 {
        return Err(GateError::at(
            file,
            src,
            span,
            format!("pattern `{name}` needs exactly one of `contains = [...]`, `regex = [...]`, `names = [...]`, `email = true`, `url = true`"),
        ));
    }
    let matcher = if let Some(names) = &p.names {
        let mut words = Vec::new();
        for n in names {
            let w = n.get_ref().trim().to_ascii_lowercase();
            if w.is_empty() || !w.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(n.span()),
                    "an argument-name word is one word of letters and digits (`amount`, `recipient`)",
                ));
            }
            words.push(w);
        }
        if words.is_empty() {
            return Err(GateError::at(
                file,
                src,
                span,
                format!("pattern `{name}`: `names` is empty"),
            ));
        }
        ArgMatcher::Names { words }
    } else if let Some(res) = &p.regex {
        if res.is_empty() {
            return Err(GateError::at(
                file,
                src,
                span,
                format!("pattern `{name}`: `regex` is empty"),
            ));
        }
        let mut set = Vec::new();
        for r in res {
            if compile == Compile::WhenSearched {
                set.push(PatternRegex::deferred(r.get_ref()));
                continue;
            }
            let re = build_regex(r.get_ref()).map_err(|e| {
                let msg = e.to_string();
                let last = msg.lines().last().unwrap_or("").trim().to_string();
                GateError::at(
                    file,
                    src,
                    Span::from(r.span()),
                    format!("pattern `{name}`: not a regular expression: {last}"),
                )
            })?;
            if re.is_match("") {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(r.span()),
                    "a regular expression that matches empty text matches everything",
                ));
            }
            set.push(PatternRegex::compiled(r.get_ref(), re));
        }
        ArgMatcher::Regex { set }
    } else if let Some(needles) = &p.contains {
        if needles.is_empty() {
            return Err(GateError::at(
                file,
                src,
                span,
                format!("pattern `{name}`: `contains` is empty"),
            ));
        }
        for n in needles {
            if n.get_ref().trim().is_empty() {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(n.span()),
                    "an empty needle matches everything",
                ));
            }
        }
        let list: Vec<String> = needles.iter().map(|n| n.get_ref().to_string()).collect();
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&list)
            .map_err(|e| GateError::at(file, src, span, format!("pattern `{name}`: {e}")))?;
        ArgMatcher::Contains {
            automaton,
            needles: list,
        }
    } else {
        let except = p
            .except
            .iter()
            .map(|d| d.trim().trim_start_matches('@').to_ascii_lowercase())
            .collect();
        if p.email == Some(true) {
            ArgMatcher::Email { except }
        } else {
            let markers = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostFirst)
                .kind(Some(AhoCorasickKind::DFA))
                // Arguments are short: a prefilter's set-up costs more than it saves.
                .prefilter(false)
                .build(["https://", "http://", "www."])
                .map_err(|e| GateError::at(file, src, span, format!("pattern `{name}`: {e}")))?;
            ArgMatcher::Url { except, markers }
        }
    };
    Ok(ArgPattern {
        name: name.to_string(),
        matcher,
        keys: p.keys.iter().map(|k| k.to_ascii_lowercase()).collect(),
    })
}

/// Compiles rule `i` (0-based) of a rule file (`file`, text `src`), whose argument patterns
/// refer to `patterns`.
pub(super) fn parse_rule(
    file: &str,
    src: &str,
    i: usize,
    r: &Spanned<RawRule>,
    patterns: &[ArgPattern],
) -> Result<Rule> {
    let span = Span::from(r.span());
    let r = r.get_ref();
    let id = r.id.clone().unwrap_or_else(|| format!("rule {}", i + 1));
    let mut tools = Vec::new();
    for t in r.tools.iter().flatten() {
        tools.push(NamePattern::new(t.get_ref()).map_err(|m| {
            GateError::at(file, src, Span::from(t.span()), format!("name pattern {m}"))
        })?);
    }
    let mut unless = Vec::new();
    for t in r.unless.iter().flatten() {
        unless.push(NamePattern::new(t.get_ref()).map_err(|m| {
            GateError::at(file, src, Span::from(t.span()), format!("name pattern {m}"))
        })?);
    }
    let mut args = Vec::new();
    for a in r.args.iter().flatten() {
        let k = patterns
            .iter()
            .position(|p| &p.name == a.get_ref())
            .ok_or_else(|| {
                let known: Vec<&str> = patterns.iter().map(|p| p.name.as_str()).collect();
                GateError::at(
                    file,
                    src,
                    Span::from(a.span()),
                    format!(
                        "unknown argument pattern `{}` (defined: {})",
                        a.get_ref(),
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
            })?;
        args.push(k as u16);
    }
    if tools.is_empty() && args.is_empty() {
        return Err(GateError::at(
            file,
            src,
            span,
            format!("{id}: a rule needs `tools` or `args` (a rule matching every call would hide all later rules)"),
        ));
    }
    let mut when = Vec::new();
    for c in r.when.iter().flatten() {
        when.push(
            parse_cond(c.get_ref())
                .map_err(|m| GateError::at(file, src, Span::from(c.span()), m))?,
        );
    }
    let lower = |w: &Option<Vec<String>>| {
        w.as_ref()
            .map(|w| w.iter().map(|x| x.trim().to_ascii_lowercase()).collect())
    };
    Ok(Rule {
        id,
        description: r.description.clone(),
        tools,
        unless,
        args,
        implies: implies(file, src, r.implies.get_ref())?,
        destinations: lower(&r.destinations),
        payloads: lower(&r.payloads),
        when,
    })
}
