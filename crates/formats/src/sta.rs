//! Reading and writing `.sta` files (PRISM's state valuations): a first line `(x,y,z)`, then
//! `state:(1,2,true)` lines.
//!
//! A `.sta` of millions of states is read into one narrow column per variable (a byte per
//! state while its values fit one, widening to 16, 32 or 64 bits, or to doubles, when a value
//! needs it), then packed into [`Valuations`]' bit fields; no value is kept as text or as a
//! row of [`Value`]s.

use crate::error::{FormatError, Result};
use crate::explicit::parse_state;
use crate::text::{end_location, for_each_line, Lines};
use augur_dtmc::{format_value, PackedColumn, Valuations};
use augur_expr::{Type, Value};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// One variable's values by state, as narrow as the values read so far allow. Booleans are
/// stored as 0 and 1.
enum Column {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Column {
    fn new(n: usize) -> Self {
        Column::I8(vec![0; n])
    }

    fn set_int(&mut self, s: usize, x: i64) {
        loop {
            match self {
                Column::I8(v) => match i8::try_from(x) {
                    Ok(y) => return v[s] = y,
                    Err(_) => *self = Column::I16(v.iter().map(|&y| y.into()).collect()),
                },
                Column::I16(v) => match i16::try_from(x) {
                    Ok(y) => return v[s] = y,
                    Err(_) => *self = Column::I32(v.iter().map(|&y| y.into()).collect()),
                },
                Column::I32(v) => match i32::try_from(x) {
                    Ok(y) => return v[s] = y,
                    Err(_) => *self = Column::I64(v.iter().map(|&y| y.into()).collect()),
                },
                Column::I64(v) => return v[s] = x,
                Column::F64(v) => return v[s] = x as f64,
            }
        }
    }

    fn set_double(&mut self, s: usize, x: f64) {
        let v = match self {
            Column::F64(v) => v,
            _ => {
                let n = self.len();
                *self = Column::F64((0..n).map(|t| self.int(t) as f64).collect());
                let Column::F64(v) = self else { unreachable!() };
                v
            }
        };
        v[s] = x;
    }

    /// The smallest and largest value of an integer column (`(0, 0)` when empty).
    fn range(&self) -> (i64, i64) {
        fn mm<T: Copy + Ord + Into<i64>>(v: &[T]) -> (i64, i64) {
            let lo = v.iter().copied().min().map_or(0, Into::into);
            let hi = v.iter().copied().max().map_or(0, Into::into);
            (lo, hi)
        }
        match self {
            Column::I8(v) => mm(v),
            Column::I16(v) => mm(v),
            Column::I32(v) => mm(v),
            Column::I64(v) => mm(v),
            Column::F64(_) => (0, 0),
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::I8(v) => v.len(),
            Column::I16(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }

    /// The value of state `s` as an integer (a double column's truncated; not asked for).
    fn int(&self, s: usize) -> i64 {
        match self {
            Column::I8(v) => v[s].into(),
            Column::I16(v) => v[s].into(),
            Column::I32(v) => v[s].into(),
            Column::I64(v) => v[s],
            Column::F64(v) => v[s] as i64,
        }
    }

    fn value(&self, s: usize, ty: Type) -> Value {
        match (self, ty) {
            (Column::F64(v), _) => Value::Double(v[s]),
            (_, Type::Bool) => Value::Bool(self.int(s) != 0),
            (_, Type::Double) => Value::Double(self.int(s) as f64),
            (_, Type::Int) => Value::Int(self.int(s)),
        }
    }
}

/// A value token: `true`, `false`, an integer, or a finite number.
fn parse_value(tok: &str) -> Option<Value> {
    let b = tok.as_bytes();
    // The common case, a short decimal integer, without the general parsers.
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let x = digits
            .iter()
            .fold(0i64, |a, &d| a * 10 + i64::from(d - b'0'));
        return Some(Value::Int(if digits.len() < b.len() { -x } else { x }));
    }
    match tok {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        _ => {
            if let Ok(i) = tok.parse::<i64>() {
                Some(Value::Int(i))
            } else {
                tok.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Value::Double)
            }
        }
    }
}

/// The state of a `.sta` read after its first line.
struct StaBody<'a> {
    /// One column per variable.
    columns: Vec<Column>,
    /// Which states have had their line, one bit each.
    seen: Vec<u64>,
    /// The line where each variable's type was first seen.
    first_line: Vec<usize>,
    types: Vec<Option<Type>>,
    names: &'a [String],
    n: usize,
}

impl StaBody<'_> {
    /// Reads line `line` (its bytes `text`, at `offset` in the file): a plain
    /// `state:(v1,...)` line of integers and booleans straight from its bytes, anything
    /// else (a comment, a blank line, a double, an error) through [`StaBody::parse`].
    fn line(&mut self, text: &[u8], path: &Path, line: usize, offset: usize) -> Result<()> {
        if self.plain(text, line) {
            return Ok(());
        }
        let mut lines = Lines::resume(text, path, line - 1, offset);
        if lines.advance_content("#", |_| {})? {
            self.parse(&lines)?;
        }
        Ok(())
    }

    fn is_seen(&self, s: usize) -> bool {
        self.seen[s / 64] & (1 << (s % 64)) != 0
    }

    /// Reads a line written plainly (`state:(v1,v2,...)` with a decimal state not yet seen,
    /// exactly one integer or boolean per variable, no blanks); `false`, with nothing but
    /// values that [`StaBody::parse`] then sets again, for anything else.
    fn plain(&mut self, text: &[u8], line: usize) -> bool {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let digits = text.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 10 {
            return false;
        }
        let s = text[..digits]
            .iter()
            .fold(0usize, |a, &d| a * 10 + usize::from(d - b'0'));
        if s >= self.n || self.is_seen(s) {
            return false;
        }
        let Some(inner) = text[digits..]
            .strip_prefix(b":(")
            .and_then(|t| t.strip_suffix(b")"))
        else {
            return false;
        };
        let k = self.names.len();
        let mut count = 0;
        for (j, tok) in inner.split(|&c| c == b',').enumerate() {
            if j >= k {
                return false;
            }
            let v = match tok {
                b"true" => Value::Bool(true),
                b"false" => Value::Bool(false),
                _ => {
                    let d = tok.strip_prefix(b"-").unwrap_or(tok);
                    if d.is_empty() || d.len() > 18 || !d.iter().all(u8::is_ascii_digit) {
                        return false;
                    }
                    let x = d.iter().fold(0i64, |a, &c| a * 10 + i64::from(c - b'0'));
                    Value::Int(if d.len() < tok.len() { -x } else { x })
                }
            };
            if self.set(j, s, v, line).is_err() {
                return false;
            }
            count += 1;
        }
        if count != k {
            return false;
        }
        self.seen[s / 64] |= 1 << (s % 64);
        true
    }

    /// Sets variable `j` of state `s` to `v` (read on line `line`), or the type the variable
    /// had (and the type of `v`) when they do not go together.
    fn set(
        &mut self,
        j: usize,
        s: usize,
        v: Value,
        line: usize,
    ) -> std::result::Result<(), (Type, Type)> {
        let ty = match v {
            Value::Bool(_) => Type::Bool,
            Value::Int(_) => Type::Int,
            Value::Double(_) => Type::Double,
        };
        self.types[j] = match (self.types[j], ty) {
            (None, t) => {
                self.first_line[j] = line;
                Some(t)
            }
            (Some(a), b) if a == b => Some(a),
            (Some(Type::Int), Type::Double) | (Some(Type::Double), Type::Int) => Some(Type::Double),
            (Some(a), b) => return Err((a, b)),
        };
        match v {
            Value::Int(x) => self.columns[j].set_int(s, x),
            Value::Bool(b) => self.columns[j].set_int(s, b.into()),
            Value::Double(x) => self.columns[j].set_double(s, x),
        }
        Ok(())
    }

    /// Reads the current line of `lines`, a line with content.
    fn parse(&mut self, lines: &Lines<'_, &[u8]>) -> Result<()> {
        let k = self.names.len();
        let (s, rest) = lines
            .buf
            .split_once(':')
            .ok_or_else(|| lines.err(None, "expected `state:(v1,v2,...)`"))?;
        let s_tok = s.trim();
        let s = parse_state(lines, s_tok, self.n)? as usize;
        if self.is_seen(s) {
            return Err(lines.err(Some(s_tok), format!("state {s} listed twice")));
        }
        self.seen[s / 64] |= 1 << (s % 64);
        let rest = rest.trim();
        let inner = rest
            .strip_prefix('(')
            .and_then(|x| x.strip_suffix(')'))
            .ok_or_else(|| lines.err(Some(rest), "expected `(v1,v2,...)`"))?;
        let mut count = 0;
        for (j, tok) in inner.split(',').enumerate() {
            let tok = tok.trim();
            if j >= k {
                return Err(lines.err(Some(tok), format!("more than {k} values")));
            }
            let v = parse_value(tok)
                .ok_or_else(|| lines.err(Some(tok), format!("expected a value, found `{tok}`")))?;
            self.set(j, s, v, lines.line).map_err(|(a, b)| {
                lines.err(
                    Some(tok),
                    format!(
                        "variable {} is {a} on line {} but {b} here",
                        self.names[j], self.first_line[j]
                    ),
                )
            })?;
            count += 1;
        }
        if count != k {
            return Err(lines.err(Some(rest), format!("expected {k} values, found {count}")));
        }
        Ok(())
    }
}

/// Reads a `.sta` file for `n` states. Column types are inferred: `true`/`false` → bool,
/// integers → int, any non-integer number in a numeric column → double. Every state needs
/// exactly one line, with one value per variable.
pub fn read_sta(reader: impl BufRead, path: &Path, n: usize) -> Result<Valuations> {
    StaHead::read(reader, path, n)?.body(&AtomicBool::new(false))
}

/// A `.sta` file read up to its first line, with the columns for its values allocated.
pub(crate) struct StaHead<'p, R> {
    lines: Lines<'p, R>,
    names: Vec<String>,
    columns: Vec<Column>,
    seen: Vec<u64>,
    n: usize,
}

impl<'p, R: BufRead> StaHead<'p, R> {
    /// Reads the variable list and allocates the columns (on the calling thread: a thread
    /// that then reads the values frees nothing large into an allocator arena of its own,
    /// which the process would keep).
    pub(crate) fn read(reader: R, path: &'p Path, n: usize) -> Result<Self> {
        let mut lines = Lines::new(reader, path);
        if !lines.advance_content("#", |_| {})? {
            return Err(FormatError::syntax(
                lines.end_location(1),
                "empty file: expected `(x,y,...)`",
            ));
        }
        let head = lines.buf.trim();
        let inner = head
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .ok_or_else(|| lines.err(Some(head), "expected the variable list `(x,y,...)`"))?;
        let names: Vec<String> = inner.split(',').map(|s| s.trim().to_string()).collect();
        if names.iter().any(|s| s.is_empty()) {
            return Err(lines.err(Some(head), "empty variable name in `(x,y,...)`"));
        }
        let mut distinct = std::collections::HashSet::new();
        if let Some(j) = (0..names.len()).find(|&j| !distinct.insert(names[j].as_str())) {
            return Err(lines.err(
                Some(head),
                format!("variable `{}` listed twice in `(x,y,...)`", names[j]),
            ));
        }
        Ok(StaHead {
            lines,
            columns: (0..names.len()).map(|_| Column::new(n)).collect(),
            seen: vec![0u64; n.div_ceil(64)],
            names,
            n,
        })
    }

    /// Reads the values, giving up (with an error saying so) once `stop` is set: a `.sta`
    /// read beside a `.tra` is not wanted after an error in the `.tra`.
    pub(crate) fn body(self, stop: &AtomicBool) -> Result<Valuations> {
        let StaHead {
            lines,
            names,
            columns,
            seen,
            n,
        } = self;
        let (path, k) = (lines.path, names.len());
        let mut body = StaBody {
            columns,
            seen,
            first_line: vec![0usize; k],
            types: vec![None; k],
            names: &names,
            n,
        };
        let (rest, line, offset) = lines.into_rest();
        let last = for_each_line(rest, path, line, offset, |text, line, offset| {
            if stop.load(Ordering::Relaxed) {
                return Err(FormatError::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "not read further",
                    ),
                });
            }
            body.line(text, path, line, offset)
        })?;
        let StaBody {
            columns,
            seen,
            types,
            ..
        } = body;
        if let Some(s) = (0..n).find(|&s| seen[s / 64] & (1 << (s % 64)) == 0) {
            return Err(FormatError::syntax(
                end_location(path, last + 1),
                format!("state {s} has no valuation"),
            ));
        }
        drop(seen);
        let types: Vec<Type> = types.into_iter().map(|t| t.unwrap_or(Type::Int)).collect();
        Ok(pack(names, types, &columns, n))
    }
}

/// Packs the columns: integer and boolean ones straight into [`Valuations`]' bit fields, one
/// column at a time; with a double column through [`Valuations::from_fn`].
fn pack(names: Vec<String>, types: Vec<Type>, columns: &[Column], n: usize) -> Valuations {
    if n == 0 || columns.iter().any(|c| matches!(c, Column::F64(_))) {
        return Valuations::from_fn(names, types.clone(), n, |s, j| {
            columns[j].value(s, types[j])
        });
    }
    let ranges: Vec<(i64, i64)> = columns
        .iter()
        .zip(&types)
        .map(|(c, ty)| match ty {
            // A boolean column's field is its value, from 0.
            Type::Bool => (0, 1),
            _ => c.range(),
        })
        .collect();
    let (cols, words) = PackedColumn::layout(&ranges);
    let mut store = vec![0u64; n * words];
    for (c, p) in columns.iter().zip(&cols) {
        match c {
            Column::I8(v) => fill(v, p, words, &mut store),
            Column::I16(v) => fill(v, p, words, &mut store),
            Column::I32(v) => fill(v, p, words, &mut store),
            Column::I64(v) => fill(v, p, words, &mut store),
            Column::F64(_) => unreachable!("double columns are packed by from_fn"),
        }
    }
    Valuations::from_packed(names, types, &cols, words, store)
        .expect("a layout made for these columns fits them")
}

/// Writes a column's values into its field of every state's words.
fn fill<T: Copy + Into<i64>>(v: &[T], p: &PackedColumn, words: usize, store: &mut [u64]) {
    if p.bits == 0 {
        return;
    }
    let lo = i128::from(p.lo);
    for (row, &x) in store.chunks_exact_mut(words).zip(v) {
        row[p.word as usize] |= ((i128::from(x.into()) - lo) as u64) << p.shift;
    }
}

/// Writes valuations as a `.sta` file.
pub fn write_sta(v: &Valuations, w: &mut dyn Write) -> Result<()> {
    writeln!(w, "({})", v.names.join(","))?;
    for s in 0..v.num_states() {
        write!(w, "{s}:(")?;
        for (j, x) in (0..v.names.len()).filter_map(|j| v.get(s, j)).enumerate() {
            let sep = if j == 0 { "" } else { "," };
            write!(w, "{sep}{}", format_value(&x))?;
        }
        writeln!(w, ")")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read(text: &str, n: usize) -> Result<Valuations> {
        read_sta(text.as_bytes(), Path::new("m.sta"), n)
    }

    fn written(v: &Valuations) -> String {
        let mut out = Vec::new();
        write_sta(v, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn plain_and_other_lines_read_the_same_through_any_buffer() {
        // Plain lines, and lines read by the general parser: blanks, `+`, a double after
        // integers, a comment, CRLF, a last line without `\n`.
        let text = "(a,b,c)\n0:(1,true,-2)\n# c\n2: ( +3 , false , 2.5 )\r\n\n1:(-7,true,4)";
        let v = read(text, 3).unwrap();
        assert_eq!(v.types, [Type::Int, Type::Bool, Type::Double]);
        use Value::{Bool, Double, Int};
        assert_eq!(v.row(1).unwrap(), [Int(-7), Bool(true), Double(4.0)]);
        assert_eq!(v.row(2).unwrap(), [Int(3), Bool(false), Double(2.5)]);
        for capacity in 1..9 {
            let r = std::io::BufReader::with_capacity(capacity, text.as_bytes());
            assert_eq!(read_sta(r, Path::new("m.sta"), 3).unwrap(), v);
        }
        // A plain-looking line whose third value does not go with its column: the message
        // of the general parser, with the line where the column's type was first seen.
        let e = read("(a,b)\n0:(1,true)\n1:(2,3)\n", 2).unwrap_err();
        assert_eq!(e.line(), Some(3));
        assert!(
            e.to_string()
                .contains("variable b is bool on line 2 but int here"),
            "{e}"
        );
    }

    #[test]
    fn columns_widen_as_values_need() {
        // Each column's first values fit a byte; a later one needs 16, 32, 64 bits or a double.
        let text = "(a,b,c,d,e)\n\
                    0:(1,-1,0,true,2)\n\
                    2:(-128,70000,-9000000000,false,2.5)\n\
                    1:(300,5,127,true,-3)\n";
        let v = read(text, 3).unwrap();
        assert_eq!(
            v.types,
            [Type::Int, Type::Int, Type::Int, Type::Bool, Type::Double]
        );
        let row = |s: usize| v.row(s).unwrap();
        use Value::{Bool, Double, Int};
        assert_eq!(row(0), [Int(1), Int(-1), Int(0), Bool(true), Double(2.0)]);
        assert_eq!(
            row(1),
            [Int(300), Int(5), Int(127), Bool(true), Double(-3.0)]
        );
        assert_eq!(
            row(2),
            [
                Int(-128),
                Int(70000),
                Int(-9000000000),
                Bool(false),
                Double(2.5)
            ]
        );
    }

    #[test]
    fn integers_at_the_ends_of_i64_are_kept() {
        let text = format!("(x)\n0:({})\n1:({})\n", i64::MIN, i64::MAX);
        let v = read(&text, 2).unwrap();
        assert_eq!(v.get(0, 0), Some(Value::Int(i64::MIN)));
        assert_eq!(v.get(1, 0), Some(Value::Int(i64::MAX)));
    }

    #[test]
    fn crowds_like_rows_pack_into_two_words() {
        // Ten booleans, a counter in 0..=6, one in 0..=20 and twenty in 0..=6: 78 bits.
        let names: Vec<String> = (0..32).map(|j| format!("v{j}")).collect();
        let mut text = format!("({})\n", names.join(","));
        for s in 0..100 {
            let mut row: Vec<String> = (0..10).map(|j| ((s + j) % 2 == 0).to_string()).collect();
            row.push((s % 7).to_string());
            row.push((s % 21).to_string());
            row.extend((0..20).map(|j| ((s + j) % 7).to_string()));
            text.push_str(&format!("{s}:({})\n", row.join(",")));
        }
        let v = read(&text, 100).unwrap();
        assert_eq!(v.heap_bytes(), 100 * 2 * 8);
        assert_eq!(written(&v), text);
    }

    #[test]
    fn value_tokens() {
        assert_eq!(parse_value("-0"), Some(Value::Int(0)));
        assert_eq!(parse_value("-"), None);
        assert_eq!(parse_value("+3"), Some(Value::Int(3)));
        assert_eq!(parse_value("1e3"), Some(Value::Double(1000.0)));
        assert_eq!(parse_value("inf"), None);
        assert_eq!(parse_value("2x"), None);
        assert_eq!(parse_value("True"), None);
        // Nineteen digits and more go through the general parser.
        assert_eq!(
            parse_value("1234567890123456789"),
            Some(Value::Int(1234567890123456789))
        );
        assert_eq!(
            parse_value("12345678901234567890"),
            Some(Value::Double(12345678901234567890.0))
        );
    }

    #[test]
    fn errors_name_the_line_and_the_token() {
        let cases = [
            ("(x,y)\n0:(1,2,3)\n1:(1,2)\n", 2, 8, "more than 2 values"),
            (
                "(x,y)\n0:(1,2)\n1:(1)\n",
                3,
                3,
                "expected 2 values, found 1",
            ),
            (
                "(x,y)\n0:(1,2)\n1:(1,z)\n",
                3,
                6,
                "expected a value, found `z`",
            ),
            ("(x,y)\n0:(1,2)\n0:(1,2)\n", 3, 1, "state 0 listed twice"),
            (
                "(x,y)\n0:(1,2)\n2:(1,2)\n",
                3,
                1,
                "state 2 out of range (2 states)",
            ),
            (
                "(x,y)\n0:(1,2)\n 1 (1,2)\n",
                3,
                2,
                "expected `state:(v1,v2,...)`",
            ),
            (
                "(x,y)\n0:(1,2)\n1:(true,2)\n",
                3,
                4,
                "variable x is int on line 2",
            ),
        ];
        for (text, line, column, msg) in cases {
            let e = read(text, 2).unwrap_err();
            let m = e.to_string();
            assert!(
                m.starts_with(&format!("m.sta:{line}:{column}: ")),
                "{text:?}: {m}"
            );
            assert!(m.contains(msg), "{text:?}: {m}");
        }
    }

    /// A column of values of one type: ints in a range (narrow or wide), booleans, doubles.
    fn column(n: usize) -> impl Strategy<Value = (Type, Vec<Value>)> {
        prop_oneof![
            prop::collection::vec(0i64..7, n)
                .prop_map(|v| (Type::Int, v.into_iter().map(Value::Int).collect())),
            prop::collection::vec(any::<i64>(), n)
                .prop_map(|v| (Type::Int, v.into_iter().map(Value::Int).collect())),
            prop::collection::vec(-40000i64..40000, n)
                .prop_map(|v| (Type::Int, v.into_iter().map(Value::Int).collect())),
            prop::collection::vec(any::<bool>(), n)
                .prop_map(|v| (Type::Bool, v.into_iter().map(Value::Bool).collect())),
            prop::collection::vec(-1e9f64..1e9, n)
                .prop_map(|v| (Type::Double, v.into_iter().map(Value::Double).collect())),
        ]
    }

    fn valuations() -> impl Strategy<Value = Valuations> {
        (1usize..30, 1usize..6).prop_flat_map(|(n, k)| {
            prop::collection::vec(column(n), k).prop_map(move |cols| {
                let names = (0..k).map(|j| format!("v{j}")).collect();
                let types = cols.iter().map(|c| c.0).collect();
                let values = (0..n)
                    .flat_map(|s| cols.iter().map(move |c| c.1[s]))
                    .collect();
                Valuations::new(names, types, values)
            })
        })
    }

    proptest! {
        /// A `.sta` written by export reads back to the same valuations, in any line order.
        #[test]
        fn written_sta_reads_back(v in valuations(), reverse in any::<bool>()) {
            let mut text = written(&v);
            if reverse {
                let mut lines: Vec<&str> = text.lines().collect();
                lines[1..].reverse();
                text = lines.join("\n");
            }
            let back = read(&text, v.num_states()).unwrap();
            prop_assert_eq!(&back.types, &v.types);
            prop_assert_eq!(back, v);
        }
    }
}
