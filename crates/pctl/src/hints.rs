//! Hints for parse errors: a near-miss of an operator's name (`Pr=? [`, `Prob>=0.5 [`,
//! `Rew{"time"}=? [`) reported at the name, saying which operator to write.

use augur_expr::SyntaxError;

/// The operators that users of other tools (or of a paper's notation) write differently:
/// `(misspelling, operator)`, misspellings in lower case.
const OPERATOR_MISSPELLINGS: &[(&str, &str)] = &[
    ("p", "P"),
    ("pr", "P"),
    ("prob", "P"),
    ("proba", "P"),
    ("probability", "P"),
    ("pmin", "Pmin"),
    ("pmax", "Pmax"),
    ("prmin", "Pmin"),
    ("prmax", "Pmax"),
    ("r", "R"),
    ("rew", "R"),
    ("reward", "R"),
    ("rewards", "R"),
    ("exp", "R"),
    ("rmin", "Rmin"),
    ("rmax", "Rmax"),
    ("s", "S"),
    ("ss", "S"),
    ("steady", "S"),
    ("lra", "S"),
    ("t", "T"),
];

/// A parse error at byte `at` of `text` caused by a near-miss of an operator's name (`Pr=? [`,
/// `Prob>=0.5 [`, `p=? [`, `Rew{"time"}=? [`): the error located at the name, saying which
/// operator to write. `None` when the text at the error is not such a near-miss.
pub(crate) fn operator_hint(text: &str, at: usize) -> Option<SyntaxError> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // The identifiers that start before the error, last first.
    let mut starts: Vec<usize> = text
        .char_indices()
        .filter(|&(i, c)| {
            i <= at
                && c.is_ascii_alphabetic()
                && !text[..i].ends_with(|p: char| is_ident(p) || p == '"' || p == '.')
        })
        .map(|(i, _)| i)
        .collect();
    starts.reverse();
    for start in starts.into_iter().take(3) {
        let end = text[start..]
            .find(|c: char| !is_ident(c))
            .map_or(text.len(), |n| start + n);
        let word = &text[start..end];
        let Some(&(_, right)) = OPERATOR_MISSPELLINGS
            .iter()
            .find(|(wrong, _)| word.eq_ignore_ascii_case(wrong))
        else {
            continue;
        };
        if word == right {
            continue;
        }
        // What follows the name must be an operator's: `=?`, a comparison and then `[`, or a
        // reward structure `{...}`.
        let rest = text[end..].trim_start();
        let bounded = |rest: &str| {
            let Some(rest) = ["<=", ">=", "<", ">"]
                .iter()
                .find_map(|c| rest.strip_prefix(c))
            else {
                return false;
            };
            rest.split_once('[').is_some_and(|(bound, _)| {
                !bound.trim().is_empty() && !bound.contains(|c| "&|()=<>!?:\"]".contains(c))
            })
        };
        let operator_like = rest.starts_with("=?") || rest.starts_with('{') || bounded(rest);
        if !operator_like {
            continue;
        }
        let forms = if right.len() > 1 {
            format!("`{right}=? [ ... ]`")
        } else {
            format!("`{right}=? [ ... ]` or `{right}>=0.5 [ ... ]`")
        };
        let what = match right {
            "P" | "Pmin" | "Pmax" => "a probability",
            "R" | "Rmin" | "Rmax" => "an expected reward",
            "S" => "a long-run (steady-state) probability",
            _ => "an expected time",
        };
        return Some(SyntaxError::at(
            text,
            start,
            end,
            format!(
                "unknown operator `{word}`: did you mean `{right}`? ({what} is written {forms})"
            ),
        ));
    }
    None
}
