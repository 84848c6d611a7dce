//! The fast path against pest: the same syntax tree, or the same error, on every model of the
//! repository and of `../shared`, on those models cut and spliced, and on generated commands.

use super::*;
use crate::parser::parse_model_with;
use crate::{PrismModel, Result};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// One reader's answer on `text`: the syntax tree (or the error message) it gives.
fn show(read: &Result<PrismModel>) -> String {
    match read {
        Ok(m) => format!("{:?}", m.ast),
        Err(e) => format!("error: {e}"),
    }
}

/// Both readers give the same answer on `text`; returns pest's model.
fn assert_same(text: &str) -> Result<PrismModel> {
    let (fast, pest) = (
        parse_model_with(text, "m.pm", true),
        parse_model_with(text, "m.pm", false),
    );
    let (fast_shown, pest_shown) = (show(&fast), show(&pest));
    assert!(
        fast_shown == pest_shown,
        "fast path and pest differ on\n{text}\nfast: {fast_shown}\npest: {pest_shown}"
    );
    pest
}

/// The words of the alternatives of `rule` in a pest grammar (`"word"` literals, in order).
fn grammar_words(grammar: &str, rule: &str) -> Vec<String> {
    let start = grammar
        .find(&format!("\n{rule} "))
        .unwrap_or_else(|| panic!("rule {rule}"));
    let body = &grammar[start..];
    let body = &body[..body.find('}').unwrap()];
    body.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn keyword_and_function_lists_are_the_grammars() {
    let grammar = include_str!("../../../grammar/expr.pest");
    assert_eq!(grammar_words(grammar, "keyword"), KEYWORDS.to_vec());
    let funcs: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(grammar_words(grammar, "func_name"), funcs);
}

/// The PRISM models under `dir` (recursively).
fn models_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            models_under(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("pm" | "prism" | "nm" | "sm")
        ) {
            out.push(p);
        }
    }
}

#[test]
fn fast_path_and_pest_agree_on_every_model_and_its_mutations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = root.join("../shared");
    if !shared.is_dir() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{} is missing (required under CI=true)", shared.display());
    }
    let mut files = Vec::new();
    for dir in [
        root.join("models"),
        root.join("tests"),
        root.join("benches"),
        shared.join("prism-tests"),
        shared.join("prism-tests-idtmc"),
        shared.join("prism-tests-param"),
        shared.join("qvbs"),
    ] {
        models_under(&dir, &mut files);
    }
    assert!(files.len() >= 20, "{} models", files.len());
    let (mut commands, mut fast) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // pest's model of the file, read once for the comparison and the commands.
        if let Ok(m) = assert_same(&text) {
            for c in m.ast.modules.iter().flat_map(|m| &m.commands) {
                commands += 1;
                fast += usize::from(command(&text[c.span.start..]).is_some());
            }
        }
        // Cut and spliced: the same error (or tree) both ways. Deterministic positions; not in
        // the large generated models (oscillators: 3 MB), whose errors take pest seconds.
        if text.len() > 100_000 {
            continue;
        }
        let mut x = 0x9e3779b97f4a7c15u64 ^ text.len() as u64;
        for _ in 0..24 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x % (text.len() as u64 + 1)) as usize;
            if !text.is_char_boundary(at) {
                continue;
            }
            let pieces = [
                "", ";", "(", ")", "->", "'", "[", "]", " + ", ":", "true", "1e400", "x",
            ];
            let piece = pieces[(x >> 40) as usize % pieces.len()];
            let cut = (x >> 20) as usize % 3;
            let end = (at + cut).min(text.len());
            if !text.is_char_boundary(end) {
                continue;
            }
            let _ = assert_same(&format!("{}{piece}{}", &text[..at], &text[end..]));
        }
    }
    // The fast path reads (nearly) every command of the real models.
    assert!(fast * 10 >= commands * 9, "{fast} of {commands} commands");
}

/// An expression of the language, as text.
fn expr_text() -> impl Strategy<Value = String> {
    // Mostly well-formed: a wrong leaf makes the whole model an error, read by pest alone.
    let leaf = prop_oneof![
        16 => "[a-z_][a-z0-9_]{0,3}",
        16 => "[0-9]{1,3}",
        8 => "[0-9]{0,2}\\.[0-9]{1,3}([eE][+-]?[0-9]{1,2})?",
        4 => Just("true".to_string()),
        4 => Just("false".to_string()),
        1 => Just("99999999999999999999".to_string()),
        8 => Just("N".to_string()),
        1 => Just("init".to_string()),
        4 => Just("Pmaxi".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        let ops = prop_oneof![
            Just("=>"),
            Just("<=>"),
            Just("|"),
            Just("&"),
            Just("="),
            Just("!="),
            Just("<"),
            Just("<="),
            Just(">"),
            Just(">="),
            Just("+"),
            Just("-"),
            Just("*"),
            Just("/"),
            Just("^"),
        ];
        prop_oneof![
            8 => (inner.clone(), ops, inner.clone(), "[ ]{0,1}")
                .prop_map(|(a, o, b, w)| format!("{a}{w}{o}{w}{b}")),
            2 => inner.clone().prop_map(|a| format!("({a})")),
            1 => inner.clone().prop_map(|a| format!("-{a}")),
            1 => inner.clone().prop_map(|a| format!("(!{a})")),
            1 => inner.clone().prop_map(|a| format!("!{a}")),
            2 => (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
            1 => (
                prop_oneof![Just("min"), Just("max"), Just("pow"), Just("floor"), Just("func(mod")],
                prop::collection::vec(inner, 1..3)
            )
                .prop_map(|(f, args)| if f.starts_with("func") {
                    format!("{f}, {})", args.join(", "))
                } else {
                    format!("{f}({})", args.join(","))
                }),
        ]
    })
}

/// A command of the language, as text (sometimes slightly wrong).
fn command_text() -> impl Strategy<Value = String> {
    let assignment = ("[a-z]{1,2}", expr_text(), "[ ]{0,2}")
        .prop_map(|(v, e, w)| format!("({v}{w}'{w}={w}{e})"));
    let update = prop_oneof![
        Just("true".to_string()),
        prop::collection::vec(assignment, 1..3).prop_map(|a| a.join(" & ")),
    ];
    let branch = (0..9u8, expr_text(), expr_text(), update).prop_map(|(k, p, hi, u)| match k {
        0 => u,
        1 | 2 => format!("[{p}, {hi}] : {u}"),
        _ => format!("{p}:{u}"),
    });
    (
        prop::option::of("[a-z]{1,3}|tru"),
        expr_text(),
        prop::collection::vec(branch, 1..4),
        "( // c\n)?",
    )
        .prop_map(|(a, g, b, c)| {
            format!("[{}] {g} ->{c} {};", a.unwrap_or_default(), b.join(" + "))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fast_path_and_pest_agree_on_generated_commands(
        cmds in prop::collection::vec(command_text(), 1..4),
        cut in 0usize..200,
        insert in "[\\[\\]();:+&'=<>!x0-9 .e-]{0,3}",
    ) {
        let body = cmds.join("\n  ");
        let text = format!("dtmc\nconst int N = 2;\nmodule m\n  x : [0..N];\n  {body}\nendmodule\n");
        let _ = assert_same(&text);
        let at = (text.len() - 10).min(cut + 30);
        let _ = assert_same(&format!("{}{insert}{}", &text[..at], &text[at..]));
    }
}

#[test]
fn a_command_per_state_is_read_by_the_fast_path() {
    let text = "  [] s=17 -> 0.5:(s'=18) + 0.5:(s'=0);\n  [] s=18";
    let (c, start, end) = command(text).unwrap();
    assert_eq!((start, end), (2, 38));
    assert_eq!(
        format!("{:?} {:?}", c.guard, c.updates[1].assignments[0]),
        "Binary(Cmp(Eq), Ident(\"s\"), Int(17)) Assignment { var: \"s\", value: Int(0) }"
    );
    // Left to pest: an integer out of range, a wrong number of arguments, a syntax error.
    assert!(command("[] s=99999999999999999999 -> true;").is_none());
    assert!(command("[] s=floor(1,2) -> true;").is_none());
    assert!(command("[] s=1 -> 0.5:(s'=1) +;").is_none());
}

#[test]
fn generated_commands_often_parse() {
    // The generator's commands parse often (so the comparison above covers
    // trees, not only errors): 300 deterministic samples.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = command_text();
    let mut ok = 0;
    for _ in 0..300 {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        let text = format!("dtmc\nconst int N = 2;\nmodule m\n  x : [0..N];\n  {c}\nendmodule\n");
        ok += usize::from(assert_same(&text).is_ok());
    }
    assert!(ok >= 100, "{ok} of 300 parse");
}
