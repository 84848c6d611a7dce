//! A fast path for a module's commands: a hand-written recursive-descent reader of exactly the
//! PEG rules `command`, `updates`, ... and the expression rules of `grammar/prism.pest` and
//! `grammar/expr.pest` (ordered choice, backtracking, implicit `WHITESPACE` and `COMMENT`
//! between the tokens of non-atomic rules), building the same [`Command`] that
//! [`augur_expr::syntax`]'s builder makes of pest's parse tree.
//!
//! pest stays the definition of the language: this reader answers only when it reads a whole
//! command and the builder would accept it; anything else (a syntax error, an out-of-range
//! number, a wrong number of function arguments, deep nesting) is `None`, and the caller
//! parses the same text with pest, which gives the located error. A model with one command per
//! state (`augur explain --output`) spends its time here: pest's parse of one command, with
//! its twelve rule levels per literal and error tracking, cost about 30–80 µs; this reader
//! about 1 µs. Both paths are compared on every model of the repository and of `../shared`
//! and on generated commands (`crate::tests`'s `fast_path_*` tests).

use crate::ast::{Assignment, Command, Update};
use augur_expr::syntax::MAX_DEPTH;
use augur_expr::{BinaryOp, Cmp, Expr, Func, UnaryOp};

/// Brackets nested deeper than this are left to pest (the reader recurses once per level).
const MAX_PARENS: usize = 32;

/// PRISM keywords, in the order of `keyword` in `grammar/expr.pest` (the order matters: an
/// ordered choice commits to the first alternative that matches a prefix).
const KEYWORDS: [&str; 55] = [
    "A",
    "bool",
    "clock",
    "const",
    "ctmc",
    "C",
    "double",
    "dtmc",
    "E",
    "endinit",
    "endinvariant",
    "endmodule",
    "endobservables",
    "endrewards",
    "endsystem",
    "false",
    "formula",
    "filter",
    "func",
    "F",
    "global",
    "G",
    "init",
    "invariant",
    "I",
    "int",
    "label",
    "max",
    "mdp",
    "min",
    "module",
    "X",
    "nondeterministic",
    "observable",
    "observables",
    "of",
    "Pmax",
    "Pmin",
    "P",
    "pomdp",
    "popta",
    "probabilistic",
    "prob",
    "pta",
    "rate",
    "rewards",
    "Rmax",
    "Rmin",
    "R",
    "S",
    "stochastic",
    "system",
    "true",
    "U",
    "W",
];

/// A command read from the start of `text` (after blanks and comments, as `module_part`
/// reads it): the command, its span's start and end (byte offsets in `text`). `None` when the
/// text does not start with a command this reader accepts (pest then decides).
pub(crate) fn command(text: &str) -> Option<(Command, usize, usize)> {
    let mut r = Reader {
        s: text.as_bytes(),
        text,
        pos: 0,
        parens: 0,
        bail: false,
    };
    r.skip();
    let start = r.pos;
    let c = r.command()?;
    if r.bail {
        return None;
    }
    Some((c, start, r.pos))
}

struct Reader<'t> {
    s: &'t [u8],
    text: &'t str,
    pos: usize,
    /// Brackets open around the current expression.
    parens: usize,
    /// Set when the text needs what this reader leaves to pest: every result is then ignored.
    bail: bool,
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.s.get(self.pos + i).copied()
    }

    /// `(WHITESPACE | COMMENT)*`: blanks, and `//` up to (not including) the line's end.
    fn skip(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.pos += 1,
                Some(b'/') if self.at(1) == Some(b'/') => {
                    self.pos += 2;
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// A literal string (after blanks): consumed when present.
    fn lit(&mut self, t: &str) -> bool {
        self.skip();
        if self.s[self.pos..].starts_with(t.as_bytes()) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    /// Whether `t` followed by no identifier character starts at the position.
    fn word_at(&self, t: &str) -> bool {
        self.s[self.pos..].starts_with(t.as_bytes())
            && !self
                .s
                .get(self.pos + t.len())
                .is_some_and(|&b| is_ident_char(b))
    }

    /// `keyword`: the first alternative that is a prefix, then `!ident_char`.
    fn keyword_at(&self) -> bool {
        let rest = &self.s[self.pos..];
        let Some(&first) = rest.first() else {
            return false;
        };
        let hit = KEYWORDS
            .iter()
            .find(|k| k.as_bytes()[0] == first && rest.starts_with(k.as_bytes()));
        match hit {
            Some(k) => !rest.get(k.len()).is_some_and(|&b| is_ident_char(b)),
            None => false,
        }
    }

    /// `ident` (after blanks).
    fn ident(&mut self) -> Option<&str> {
        self.skip();
        if self.keyword_at() {
            return None;
        }
        let start = self.pos;
        match self.peek() {
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => self.pos += 1,
            _ => return None,
        }
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        Some(&self.text[start..self.pos])
    }

    /// `command = { "[" ~ ident? ~ "]" ~ expr ~ "->" ~ updates ~ ";" }`
    fn command(&mut self) -> Option<Command> {
        if !self.lit("[") {
            return None;
        }
        let save = self.pos;
        let action = match self.ident() {
            Some(a) => Some(a.to_string()),
            None => {
                self.pos = save;
                None
            }
        };
        if !self.lit("]") {
            return None;
        }
        let (guard, _) = self.expr()?;
        if !self.lit("->") {
            return None;
        }
        let updates = self.updates()?;
        if !self.lit(";") {
            return None;
        }
        Some(Command {
            action,
            guard,
            updates,
            span: Default::default(),
        })
    }

    /// `updates = { prob_update ~ ("+" ~ prob_update)* | update }`
    fn updates(&mut self) -> Option<Vec<Update>> {
        let save = self.pos;
        if let Some(first) = self.prob_update() {
            return Some(self.repeat(first, "+", Self::prob_update));
        }
        self.pos = save;
        let assignments = self.update()?;
        Some(vec![Update {
            prob: Expr::Int(1),
            upper: None,
            assignments,
        }])
    }

    /// `prob_update = { (interval_prob | expr) ~ ":" ~ update }`, with
    /// `interval_prob = { "[" ~ expr ~ "," ~ expr ~ "]" }`.
    fn prob_update(&mut self) -> Option<Update> {
        let save = self.pos;
        let interval = (|| {
            if !self.lit("[") {
                return None;
            }
            let (lo, _) = self.expr()?;
            if !self.lit(",") {
                return None;
            }
            let (hi, _) = self.expr()?;
            if !self.lit("]") {
                return None;
            }
            Some((lo, hi))
        })();
        let (prob, upper) = match interval {
            Some((lo, hi)) => (lo, Some(hi)),
            None => {
                self.pos = save;
                (self.expr()?.0, None)
            }
        };
        if !self.lit(":") {
            return None;
        }
        let assignments = self.update()?;
        Some(Update {
            prob,
            upper,
            assignments,
        })
    }

    /// `update = { kw_true | assignment ~ ("&" ~ assignment)* }`
    fn update(&mut self) -> Option<Vec<Assignment>> {
        self.skip();
        if self.word_at("true") {
            self.pos += 4;
            return Some(Vec::new());
        }
        let first = self.assignment()?;
        Some(self.repeat(first, "&", Self::assignment))
    }

    /// `first ~ (sep ~ item)*`: `first` and the items after it (a repetition that fails is
    /// undone, blanks before it included).
    fn repeat<T>(&mut self, first: T, sep: &str, item: fn(&mut Self) -> Option<T>) -> Vec<T> {
        let mut out = vec![first];
        loop {
            let back = self.pos;
            match self.lit(sep).then(|| item(self)).flatten() {
                Some(x) => out.push(x),
                None => {
                    self.pos = back;
                    return out;
                }
            }
        }
    }

    /// `assignment = { "(" ~ ident ~ "'" ~ "=" ~ expr ~ ")" }`
    fn assignment(&mut self) -> Option<Assignment> {
        let save = self.pos;
        let a = (|| {
            if !self.lit("(") {
                return None;
            }
            let var = self.ident()?.to_string();
            if !(self.lit("'") && self.lit("=")) {
                return None;
            }
            let (value, _) = self.expr()?;
            if !self.lit(")") {
                return None;
            }
            Some(Assignment { var, value })
        })();
        if a.is_none() {
            self.pos = save;
        }
        a
    }

    /// A node of depth `d` (the builder's measure: a leaf has depth 1); deeper than the
    /// builder allows is left to pest.
    fn node(&mut self, d: usize) -> usize {
        if d > MAX_DEPTH {
            self.bail = true;
        }
        d
    }

    /// `expr = { implies_expr ~ ("?" ~ implies_expr ~ ":" ~ expr)? }`, with its depth.
    fn expr(&mut self) -> Option<(Expr, usize)> {
        if self.bail {
            return None;
        }
        let (cond, dc) = self.binary(0)?;
        let save = self.pos;
        let rest = (|| {
            if !self.lit("?") {
                return None;
            }
            let a = self.binary(0)?;
            if !self.lit(":") {
                return None;
            }
            let b = self.expr()?;
            Some((a, b))
        })();
        match rest {
            Some(((a, da), (b, db))) => {
                let d = self.node(1 + dc.max(da).max(db));
                Some((Expr::Ite(Box::new(cond), Box::new(a), Box::new(b)), d))
            }
            None => {
                self.pos = save;
                Some((cond, dc))
            }
        }
    }

    /// The operator of binary level `level` (0 `implies_op` ... 7 `mul_op`) at the position
    /// (blanks skipped), consumed.
    fn binary_op(&mut self, level: u8) -> Option<BinaryOp> {
        self.skip();
        let (a, b) = (self.peek(), self.at(1));
        let (op, len) = match (level, a, b) {
            (0, Some(b'='), Some(b'>')) => (BinaryOp::Implies, 2),
            (1, Some(b'<'), Some(b'=')) if self.at(2) == Some(b'>') => (BinaryOp::Iff, 3),
            (2, Some(b'|'), _) => (BinaryOp::Or, 1),
            (3, Some(b'&'), _) => (BinaryOp::And, 1),
            // eq_op = @{ "!=" | "=" ~ !">" }
            (4, Some(b'!'), Some(b'=')) => (BinaryOp::Cmp(Cmp::Ne), 2),
            (4, Some(b'='), next) if next != Some(b'>') => (BinaryOp::Cmp(Cmp::Eq), 1),
            // rel_op = @{ "<=" ~ !">" | ">=" | "<" ~ !"=" | ">" }
            (5, Some(b'<'), Some(b'=')) if self.at(2) != Some(b'>') => (BinaryOp::Cmp(Cmp::Le), 2),
            (5, Some(b'>'), Some(b'=')) => (BinaryOp::Cmp(Cmp::Ge), 2),
            (5, Some(b'<'), next) if next != Some(b'=') => (BinaryOp::Cmp(Cmp::Lt), 1),
            (5, Some(b'>'), _) => (BinaryOp::Cmp(Cmp::Gt), 1),
            (6, Some(b'+'), _) => (BinaryOp::Add, 1),
            (6, Some(b'-'), _) => (BinaryOp::Sub, 1),
            (7, Some(b'*'), _) => (BinaryOp::Mul, 1),
            (7, Some(b'/'), _) => (BinaryOp::Div, 1),
            _ => return None,
        };
        self.pos += len;
        Some(op)
    }

    /// Binary level `level` (0 `implies_expr` ... 7 `mul_expr`, left associative); level 4
    /// (`eq_expr`) sits below `not_expr`, level 8 is `unary_expr`.
    fn binary(&mut self, level: u8) -> Option<(Expr, usize)> {
        let operand = |r: &mut Self| match level {
            3 => r.prefixed(true),
            7 => r.prefixed(false),
            _ => r.binary(level + 1),
        };
        let (mut acc, mut depth) = operand(self)?;
        loop {
            let back = self.pos;
            let Some(op) = self.binary_op(level) else {
                self.pos = back;
                break;
            };
            match operand(self) {
                Some((rhs, dr)) => {
                    depth = self.node(1 + depth.max(dr));
                    acc = Expr::Binary(op, Box::new(acc), Box::new(rhs));
                }
                None => {
                    self.pos = back;
                    break;
                }
            }
        }
        Some((acc, depth))
    }

    /// `not_expr = { not_op* ~ eq_expr }` (`not`) or `unary_expr = { neg_op* ~ pow_expr }`.
    fn prefixed(&mut self, not: bool) -> Option<(Expr, usize)> {
        let mut prefixes = 0usize;
        loop {
            self.skip();
            let hit = match not {
                // not_op = @{ "!" ~ !"=" }
                true => self.peek() == Some(b'!') && self.at(1) != Some(b'='),
                false => self.peek() == Some(b'-'),
            };
            if !hit {
                break;
            }
            self.pos += 1;
            prefixes += 1;
        }
        let (mut e, d) = if not { self.binary(4)? } else { self.pow()? };
        if prefixes > MAX_DEPTH {
            self.bail = true;
        }
        let d = self.node(d + prefixes);
        let op = if not { UnaryOp::Not } else { UnaryOp::Neg };
        for _ in 0..prefixes {
            e = Expr::Unary(op, Box::new(e));
        }
        Some((e, d))
    }

    /// `pow_expr = { primary ~ (pow_op ~ unary_expr)? }`, built as `pow(a, b)`.
    fn pow(&mut self) -> Option<(Expr, usize)> {
        let (base, db) = self.primary()?;
        let back = self.pos;
        if self.lit("^") {
            if let Some((exp, de)) = self.prefixed(false) {
                let d = self.node(1 + db.max(de));
                return Some((Expr::Call(Func::Pow, vec![base, exp]), d));
            }
        }
        self.pos = back;
        Some((base, db))
    }

    /// `primary = _{ double_lit | int_lit | bool_lit | call | ident | "(" ~ expr ~ ")" }`
    fn primary(&mut self) -> Option<(Expr, usize)> {
        self.skip();
        if let Some(e) = self.number() {
            return Some((e, 1));
        }
        for (word, value) in [("true", true), ("false", false)] {
            if self.word_at(word) {
                self.pos += word.len();
                return Some((Expr::Bool(value), 1));
            }
        }
        let save = self.pos;
        if let Some(c) = self.call() {
            return Some(c);
        }
        self.pos = save;
        if let Some(name) = self.ident() {
            return Some((Expr::Ident(name.to_string()), 1));
        }
        self.pos = save;
        if self.peek() == Some(b'(') {
            if self.parens >= MAX_PARENS {
                self.bail = true;
                return None;
            }
            self.pos += 1;
            self.parens += 1;
            let e = self.expr();
            self.parens -= 1;
            if let Some(e) = e {
                if self.lit(")") {
                    return Some(e);
                }
            }
        }
        self.pos = save;
        None
    }

    /// `double_lit` or `int_lit` at the position (consumed), as the builder reads them.
    fn number(&mut self) -> Option<Expr> {
        let start = self.pos;
        let digits = |r: &Self, mut i: usize| {
            while r.s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        // exponent = _{ ("e" | "E") ~ ("+" | "-")? ~ ASCII_DIGIT+ }: its end, if any.
        let exponent = |r: &Self, i: usize| -> Option<usize> {
            if !matches!(r.s.get(i), Some(b'e' | b'E')) {
                return None;
            }
            let mut j = i + 1;
            if matches!(r.s.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let k = digits(r, j);
            (k > j).then_some(k)
        };
        let int_end = digits(self, start);
        // double_lit = @{ ASCII_DIGIT* ~ "." ~ ASCII_DIGIT+ ~ exponent? | ASCII_DIGIT+ ~ exponent }
        let double_end = if self.s.get(int_end) == Some(&b'.') {
            let frac_end = digits(self, int_end + 1);
            (frac_end > int_end + 1).then(|| exponent(self, frac_end).unwrap_or(frac_end))
        } else {
            None
        }
        .or_else(|| (int_end > start).then(|| exponent(self, int_end)).flatten());
        if let Some(end) = double_end {
            let text = &self.text[start..end];
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => {
                    self.pos = end;
                    return Some(augur_expr::double_literal(v, text));
                }
                _ => {
                    self.bail = true;
                    return None;
                }
            }
        }
        // int_lit = @{ ASCII_DIGIT+ ~ !ident_char }
        if int_end > start && !self.s.get(int_end).is_some_and(|&b| is_ident_char(b)) {
            match self.text[start..int_end].parse::<i64>() {
                Ok(i) => {
                    self.pos = int_end;
                    return Some(Expr::Int(i));
                }
                Err(_) => self.bail = true,
            }
        }
        None
    }

    /// `call = { func_name ~ "(" ~ expr ~ ("," ~ expr)* ~ ")" | "func" ~ "(" ~ func_name ~
    /// ("," ~ expr)* ~ ")" }`, with the builder's check of the number of arguments.
    fn call(&mut self) -> Option<(Expr, usize)> {
        let func_name = |r: &mut Self| -> Option<Func> {
            r.skip();
            // `func_name` of `grammar/expr.pest`: `Func::ALL` is in its order.
            let f = Func::ALL.into_iter().find(|f| r.word_at(f.name()))?;
            r.pos += f.name().len();
            Some(f)
        };
        let save = self.pos;
        let mut args = Vec::new();
        let mut depth = 0;
        let func = 'alt: {
            if let Some(f) = func_name(self) {
                if self.lit("(") {
                    if let Some((a, d)) = self.expr() {
                        args.push((a, d));
                        if self.args(&mut args) {
                            break 'alt Some(f);
                        }
                    }
                }
            }
            self.pos = save;
            args.clear();
            if self.lit("func") && self.lit("(") {
                if let Some(f) = func_name(self) {
                    if self.args(&mut args) {
                        break 'alt Some(f);
                    }
                }
            }
            None
        }?;
        let args: Vec<Expr> = args
            .into_iter()
            .map(|(a, d)| {
                depth = depth.max(d);
                a
            })
            .collect();
        let depth = self.node(depth + 1);
        let (lo, hi) = augur_expr::syntax::arity(func);
        if args.len() < lo || hi.is_some_and(|h| args.len() > h) {
            self.bail = true;
            return None;
        }
        Some((Expr::Call(func, args), depth))
    }

    /// `("," ~ expr)* ~ ")"`, the arguments appended to `args`.
    fn args(&mut self, args: &mut Vec<(Expr, usize)>) -> bool {
        loop {
            let back = self.pos;
            if self.lit(",") {
                if let Some(a) = self.expr() {
                    args.push(a);
                    continue;
                }
            }
            self.pos = back;
            return self.lit(")");
        }
    }
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
