//! Shared by the gate bench and the instruction-count examples (`examples/*_cost.rs`): the
//! 10 kB tool result of the observe and injection benches, and what a pre-screen of the
//! injection rules would search for (docs/monitor.md, "Issue 41: the injection signal", says
//! why none is built).
#![allow(dead_code)]

/// A 10 kB tool result: an inbox listing with addresses, links, amounts, IBANs and prose.
pub fn tool_result_10kb() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 10_000 {
        s.push_str(&format!(
            "- id: '{i}'\n  sender: person{i}@example{m}.com\n  subject: Meeting notes {i}\n  body: Hi, \
             please review the draft at https://www.docs{m}.example.org/d/{i}/edit before Friday. \
             The invoice of $1,{i:03}.50 goes to IBAN DE89370400440532013{i:03}, call +1 555 010 {i:04}. \
             Attached: /shared/reports/q{m}.pdf. Thanks, and see you at the meeting room.\n",
            m = i % 7
        ));
        i += 1;
    }
    s.truncate(10_000);
    s
}

/// The key words a sound pre-screen of `injection`'s rules has to find: for every rule, one
/// word each of its matches contains, within a bounded distance of the match's start (a
/// leading space: at the start of a word). Where a rule's only such words are common ("you",
/// "not", "user"), its key needs a second key of the same rule in the same window (else
/// "you" alone would be a strong key): those second keys are here too. Grouped by the rules
/// that need them (rule numbers as in `RULES`, 0-based); the role markers, headings, pipes and
/// `snake_case(` calls are found by their punctuation (`memchr`), not here.
pub const PRESCREEN_KEYS: &[&str] = &[
    // AI nouns (0-9): the bare noun is rule 9 (weak), with a salutation, "to you" or "any" 1, 6, 7 (strong).
    " ai",
    " a i",
    " llm",
    " gpt",
    " chatgpt",
    " claude",
    " gemini",
    " llama",
    " mistral",
    " copilot",
    " bard",
    " grok",
    " deepseek",
    " qwen",
    " language",
    " virtual",
    " digital",
    " automated",
    " command",
    " ki",
    " ia",
    " bot",
    " assistant",
    " agent",
    " model",
    // 0, 4, 6, 21, 22, 41: "you"; 1, 2: salutations; 7: quantifiers; 4: work verbs; 5: reading verbs.
    " you",
    " dear",
    " hey",
    " hello",
    " hi",
    " attention",
    " attn",
    " note",
    " message",
    " memo",
    " reminder",
    " any",
    " all",
    " every",
    " each",
    " work",
    " act",
    " operat",
    " read",
    " process",
    " pars",
    " summari",
    " handl",
    " analy",
    " brows",
    " view",
    " scan",
    " ingest",
    " sees",
    // 10, 14, 24-26: override verbs (and other languages'); 11, 12, 17, 18, 19, 36: task nouns.
    " ignor",
    " disregard",
    " forget",
    " overr",
    " bypass",
    " discard",
    " abandon",
    " neglect",
    " skip",
    " drop",
    " oubli",
    " olvid",
    " esque",
    " dimentica",
    " vergiss",
    " vergess",
    " missacht",
    " instruction",
    " directive",
    " prompt",
    " order",
    " task",
    " request",
    " assignment",
    " question",
    " objective",
    " goal",
    " summar",
    " answer",
    " respon",
    " repl",
    " user",
    // 13, 23: priority; 14: supersede; 15: mode; 16, 35: system; 20: following; 21, 22: now.
    " precedence",
    " priority",
    " supersed",
    " replac",
    " mode",
    " system",
    " following",
    " these",
    " below",
    " now",
    " forward",
    " rest",
    " developer",
    " human",
    // 37, 39, 41: tools, code, obligations.
    " tool",
    " function",
    " api",
    " plugin",
    " endpoint",
    " code",
    " script",
    " snippet",
    " must",
    " should",
    " need",
    " have",
    " required",
    " instructed",
    " expected",
    " shall",
    " will",
    // 42-45: send verbs, recipient changes, "also"/"instead".
    " send",
    " transfer",
    " wire",
    " email",
    " mail",
    " share",
    " upload",
    " post",
    " pay",
    " invite",
    " grant",
    " copy",
    " leak",
    " exfiltrate",
    " change",
    " update",
    " set",
    " modify",
    " switch",
    " also",
    " additionally",
    " instead",
    " secretly",
    " quietly",
    " silently",
    " covertly",
    " discreetly",
    " well",
    // 46-54: negations, the user, confirmation, secrecy, deletion, other languages' "without".
    " not",
    " don",
    " never",
    " without",
    " avoid",
    " owner",
    " person",
    " customer",
    " requester",
    " principal",
    " confirmation",
    " approval",
    " permission",
    " consent",
    " keep",
    " make",
    " delete",
    " remov",
    " erase",
    " hide",
    " surreptitious",
    " trace",
    " ohne",
    " sans",
    " sin",
    " sem",
    " senza",
    " benutzer",
    " nutzer",
    " utilisateur",
    " usu",
    " utente",
];

/// 32 rare key words (AI names, override and concealment words, other languages'): a floor
/// for one packed searcher, not a sound pre-screen (the rules of common words have no key
/// here).
pub const RARE_KEYS: &[&str] = &[
    " ignor",
    " disregard",
    " supersed",
    " precedence",
    " priority",
    " instruction",
    " directive",
    " prompt",
    " jailbreak",
    " assistant",
    " gpt",
    " llm",
    " claude",
    " gemini",
    " llama",
    " copilot",
    " mistral",
    " deepseek",
    " qwen",
    " chatgpt",
    " secretly",
    " covertly",
    " surreptitious",
    " vergiss",
    " oubli",
    " olvid",
    " dimentica",
    " missacht",
    " exfiltrat",
    " confirmation",
    " permission",
    " consent",
];

/// `src` as the pre-screen reads it: ASCII letters lower-cased, digits and `_` kept, every
/// other byte (and the letter of an escaped `\n`, `\t`, `\r`) a space. One vectorised pass,
/// then the escapes (found with `memchr`).
pub fn prescreen_fold(src: &[u8], dst: &mut [u8]) {
    for (d, &b) in dst.iter_mut().zip(src) {
        let l = b | 0x20;
        let letter = l.wrapping_sub(b'a') < 26;
        let keep = letter || b.wrapping_sub(b'0') < 10 || b == b'_';
        *d = if letter {
            l
        } else if keep {
            b
        } else {
            b' '
        };
    }
    for i in memchr::memchr_iter(b'\\', src) {
        if matches!(
            src.get(i + 1),
            Some(b'n' | b't' | b'r' | b'N' | b'T' | b'R')
        ) {
            dst[i + 1] = b' ';
        }
    }
}

/// Packed searchers (at most 64 keys each) over `keys`, leftmost-longest.
pub fn packed_searchers(keys: &[&str]) -> Vec<aho_corasick::packed::Searcher> {
    use aho_corasick::packed;
    keys.chunks(64)
        .map(|part| {
            let mut config = packed::Config::new();
            config
                .match_kind(packed::MatchKind::LeftmostLongest)
                .heuristic_pattern_limits(false);
            let mut b = config.builder();
            for k in part {
                b.add(k);
            }
            b.build().expect("a packed searcher (x86-64 with SSSE3)")
        })
        .collect()
}

/// The key words `searchers` find in `hay`.
pub fn count_keys(searchers: &[aho_corasick::packed::Searcher], hay: &[u8]) -> usize {
    searchers.iter().map(|s| s.find_iter(hay).count()).sum()
}

/// The `MODE N` arguments of the instruction-count drivers (`examples/*_cost.rs`); exits
/// with `usage` when they are missing or `N` is not a count.
pub fn mode_and_count(usage: &str) -> (String, usize) {
    let args: Vec<String> = std::env::args().collect();
    match (
        args.get(1),
        args.get(2).and_then(|n| n.parse::<usize>().ok()),
    ) {
        (Some(mode), Some(n)) => (mode.clone(), n),
        _ => {
            eprintln!("usage: {usage}");
            std::process::exit(1);
        }
    }
}
