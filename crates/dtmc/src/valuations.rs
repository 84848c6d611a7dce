//! State valuations, bit-packed.
//!
//! A model of millions of states with dozens of variables would need gigabytes as one
//! [`Value`] (16 bytes) per variable and state; here every state is a fixed number of `u64`
//! words, and every variable a bit field of it: an integer column stores `value − lo` in
//! `⌈log2(hi − lo + 1)⌉` bits, a boolean one bit, a double 64 bits. Fields never straddle two
//! words. The PRISM explorer hands its own packed state store over as is
//! ([`Valuations::from_packed`]), so building keeps no second copy.

use augur_expr::{Type, Value};
use serde::{Deserialize, Serialize};

/// How a column's bit field is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `Value::Bool`, one bit.
    Bool,
    /// `Value::Int(lo + field)`.
    Int { lo: i64 },
    /// `Value::Double(f64::from_bits(field))`, 64 bits.
    Double,
    /// Values of several kinds: a 64-bit payload and a 2-bit tag (0 int, 1 double, 2 bool)
    /// in the field `tag`.
    Mixed { tag_word: u32, tag_shift: u32 },
}

/// One column's place in a state's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    kind: Kind,
    word: u32,
    shift: u32,
    bits: u32,
}

/// A column laid out by [`Valuations::from_packed`]: an integer (or boolean, with `lo = 0`)
/// stored as `value − lo` in bits `shift .. shift + bits` of word `word` of each state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedColumn {
    /// The word of the state holding the field.
    pub word: u32,
    /// The field's lowest bit.
    pub shift: u32,
    /// The field's width in bits (0 to 64; a field never straddles two words).
    pub bits: u32,
    /// The value a field of 0 stands for.
    pub lo: i64,
}

/// Variable valuations of the states (from a PRISM model, a `.sta` file or a JSON model),
/// stored packed: see the module documentation.
///
/// ```
/// use augur_dtmc::Valuations;
/// use augur_expr::{Type, Value};
/// let v = Valuations::new(
///     vec!["x".into(), "b".into()],
///     vec![Type::Int, Type::Bool],
///     vec![Value::Int(3), Value::Bool(true), Value::Int(-2), Value::Bool(false)],
/// );
/// assert_eq!(v.num_states(), 2);
/// assert_eq!(v.get(1, 0), Some(Value::Int(-2)));
/// assert_eq!(v.describe(0).unwrap(), "(x=3,b=true)");
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "ValuationsRepr", from = "ValuationsRepr")]
pub struct Valuations {
    /// Variable names, in column order.
    pub names: Vec<String>,
    /// Variable types, in column order.
    pub types: Vec<Type>,
    fields: Vec<Field>,
    /// Words per state.
    words: usize,
    store: Vec<u64>,
    /// Number of values given (states × columns when consistent; see [`Self::num_values`]).
    num_values: usize,
}

/// The serialised form: row-major values, as before packing.
#[derive(Clone, Serialize, Deserialize)]
struct ValuationsRepr {
    names: Vec<String>,
    types: Vec<Type>,
    values: Vec<Value>,
}

impl From<Valuations> for ValuationsRepr {
    fn from(v: Valuations) -> Self {
        let values = (0..v.num_states())
            .flat_map(|s| v.row(s).unwrap_or_default())
            .collect();
        ValuationsRepr {
            names: v.names,
            types: v.types,
            values,
        }
    }
}

impl From<ValuationsRepr> for Valuations {
    fn from(r: ValuationsRepr) -> Self {
        Valuations::new(r.names, r.types, r.values)
    }
}

impl PartialEq for Valuations {
    fn eq(&self, other: &Self) -> bool {
        self.names == other.names
            && self.types == other.types
            && self.num_values == other.num_values
            && (0..self.num_states()).all(|s| self.row(s) == other.row(s))
    }
}

/// Places fields of the given widths into words, first fit, never straddling a word; returns
/// `(word, shift)` per field and the number of words.
fn layout(widths: &[u32]) -> (Vec<(u32, u32)>, usize) {
    let mut used: Vec<u32> = Vec::new();
    let mut out = Vec::with_capacity(widths.len());
    for &w in widths {
        let slot = used.iter().position(|&u| u + w <= 64);
        let word = match slot {
            Some(i) => i,
            None => {
                used.push(0);
                used.len() - 1
            }
        };
        out.push((word as u32, used[word]));
        used[word] += w;
    }
    (out, used.len())
}

fn bits_for(range: u64) -> u32 {
    64 - range.leading_zeros()
}

impl PackedColumn {
    /// Lays out integer (or boolean: `(0, 1)`) columns whose values range over `lo..=hi`
    /// (`ranges[j] = (lo, hi)`, `lo <= hi`) as [`Valuations::new`] would: the narrowest field
    /// each, first fit, never straddling a word. Returns the columns and the words per state,
    /// for a caller that fills the store itself and hands it to [`Valuations::from_packed`].
    ///
    /// ```
    /// use augur_dtmc::PackedColumn;
    /// let (cols, words) = PackedColumn::layout(&[(0, 1), (-3, 4), (0, 1 << 62)]);
    /// assert_eq!(words, 2);
    /// assert_eq!((cols[1].shift, cols[1].bits, cols[1].lo), (1, 3, -3));
    /// assert_eq!((cols[2].word, cols[2].bits), (1, 63));
    /// ```
    pub fn layout(ranges: &[(i64, i64)]) -> (Vec<PackedColumn>, usize) {
        let widths: Vec<u32> = ranges
            .iter()
            .map(|&(lo, hi)| bits_for((hi as i128 - lo as i128).max(0) as u64))
            .collect();
        let (places, words) = layout(&widths);
        let cols = ranges
            .iter()
            .zip(places)
            .zip(widths)
            .map(|((&(lo, _), (word, shift)), bits)| PackedColumn {
                word,
                shift,
                bits,
                lo,
            })
            .collect();
        (cols, words)
    }
}

impl Valuations {
    /// Checks that there are as many types as names and one valuation per state of `n`.
    pub(crate) fn check_shape(&self, n: usize) -> Result<(), crate::DtmcError> {
        if self.types.len() != self.names.len() || self.num_values() != self.names.len() * n {
            return Err(crate::DtmcError::Invalid(format!(
                "valuations: {} names, {} types, {} values for {n} states",
                self.names.len(),
                self.types.len(),
                self.num_values()
            )));
        }
        Ok(())
    }

    /// Packs row-major values: state `s`'s valuation is `values[s·k .. (s+1)·k]` with
    /// `k = names.len()`. Each column gets the narrowest field its values need. A trailing
    /// incomplete row is not stored, but counts in [`Self::num_values`] (so that a
    /// [`crate::Dtmc`]'s validation reports the mismatch).
    pub fn new(names: Vec<String>, types: Vec<Type>, values: Vec<Value>) -> Self {
        let k = names.len();
        let n = values.len().checked_div(k).unwrap_or(0);
        let mut v = Self::from_fn(names, types, n, |s, j| values[s * k + j]);
        v.num_values = values.len();
        v
    }

    /// Packs the valuations of `n` states given by `value(state, column)` (called twice per
    /// state and column: once to size the fields, once to fill them), without a row-major copy
    /// of the values: a reader that keeps its columns narrow (a `.sta` file's) packs them
    /// directly. Each column gets the narrowest field its values need, as with [`Self::new`].
    ///
    /// ```
    /// use augur_dtmc::Valuations;
    /// use augur_expr::{Type, Value};
    /// let xs: Vec<i8> = vec![3, -2, 7];
    /// let v = Valuations::from_fn(vec!["x".into()], vec![Type::Int], 3, |s, _| {
    ///     Value::Int(xs[s].into())
    /// });
    /// assert_eq!(v.get(2, 0), Some(Value::Int(7)));
    /// assert_eq!(v.heap_bytes(), 3 * 8);
    /// ```
    pub fn from_fn(
        names: Vec<String>,
        types: Vec<Type>,
        n: usize,
        value: impl Fn(usize, usize) -> Value,
    ) -> Self {
        let k = names.len();
        let n = if k == 0 { 0 } else { n };
        let mut kinds = Vec::with_capacity(k);
        let mut widths = Vec::with_capacity(k);
        for j in 0..k {
            let col = (0..n).map(|s| value(s, j));
            let (mut ints, mut doubles, mut bools) = (0usize, 0usize, 0usize);
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for v in col {
                match v {
                    Value::Int(i) => {
                        ints += 1;
                        lo = lo.min(i);
                        hi = hi.max(i);
                    }
                    Value::Double(_) => doubles += 1,
                    Value::Bool(_) => bools += 1,
                }
            }
            let (kind, bits) = if n == 0 || bools == n {
                (Kind::Bool, 1)
            } else if ints == n {
                let range = (hi as i128 - lo as i128) as u64;
                (Kind::Int { lo }, bits_for(range))
            } else if doubles == n {
                (Kind::Double, 64)
            } else {
                (
                    Kind::Mixed {
                        tag_word: 0,
                        tag_shift: 0,
                    },
                    64,
                )
            };
            kinds.push(kind);
            widths.push(bits);
        }
        // Tags of mixed columns get their own 2-bit fields after the payloads.
        let mixed: Vec<usize> = (0..k)
            .filter(|&j| matches!(kinds[j], Kind::Mixed { .. }))
            .collect();
        let mut all_widths = widths.clone();
        all_widths.extend(mixed.iter().map(|_| 2));
        let (places, words) = layout(&all_widths);
        let mut fields: Vec<Field> = (0..k)
            .map(|j| Field {
                kind: kinds[j],
                word: places[j].0,
                shift: places[j].1,
                bits: widths[j],
            })
            .collect();
        for (t, &j) in mixed.iter().enumerate() {
            let (tw, ts) = places[k + t];
            fields[j].kind = Kind::Mixed {
                tag_word: tw,
                tag_shift: ts,
            };
        }
        let mut store = vec![0u64; n * words];
        for s in 0..n {
            let row = &mut store[s * words..(s + 1) * words];
            for (j, f) in fields.iter().enumerate() {
                let v = value(s, j);
                let (payload, tag) = match v {
                    Value::Int(i) => (i as u64, 0u64),
                    Value::Double(d) => (d.to_bits(), 1),
                    Value::Bool(b) => (b as u64, 2),
                };
                let field = match f.kind {
                    Kind::Int { lo } => (v.as_int_unchecked() as i128 - lo as i128) as u64,
                    Kind::Bool | Kind::Double => payload,
                    Kind::Mixed {
                        tag_word,
                        tag_shift,
                    } => {
                        row[tag_word as usize] |= tag << tag_shift;
                        payload
                    }
                };
                if f.bits > 0 {
                    row[f.word as usize] |= field << f.shift;
                }
            }
        }
        Valuations {
            names,
            types,
            fields,
            words,
            store,
            num_values: n * k,
        }
    }

    /// Takes over a packed store of integer and boolean columns as the PRISM explorer keeps
    /// it: `store` holds `words` words per state, column `j` in `columns[j]`. Columns whose
    /// type is [`Type::Bool`] read as booleans (field 0 or 1, `lo` 0).
    ///
    /// Returns `None` when the layout does not fit (a field past its state's words or past
    /// bit 64, a double column, or a store that is not a whole number of states).
    pub fn from_packed(
        names: Vec<String>,
        types: Vec<Type>,
        columns: &[PackedColumn],
        words: usize,
        store: Vec<u64>,
    ) -> Option<Self> {
        if names.len() != types.len() || columns.len() != names.len() {
            return None;
        }
        if words == 0 && !store.is_empty() || words > 0 && !store.len().is_multiple_of(words) {
            return None;
        }
        let n = store.len().checked_div(words).unwrap_or(0);
        let mut fields = Vec::with_capacity(columns.len());
        for (c, ty) in columns.iter().zip(&types) {
            if c.word as usize >= words.max(1) || c.bits > 64 || c.shift + c.bits > 64 {
                return None;
            }
            let kind = match ty {
                Type::Bool => Kind::Bool,
                Type::Int => Kind::Int { lo: c.lo },
                Type::Double => return None,
            };
            fields.push(Field {
                kind,
                word: c.word,
                shift: c.shift,
                bits: c.bits,
            });
        }
        let k = names.len();
        Some(Valuations {
            names,
            types,
            fields,
            words,
            store,
            num_values: n * k,
        })
    }

    /// The value of column `col` in state `s`, if both are in range.
    pub fn get(&self, s: usize, col: usize) -> Option<Value> {
        if s >= self.num_states() {
            return None;
        }
        let f = self.fields.get(col)?;
        let row = &self.store[s * self.words..(s + 1) * self.words];
        let raw = match f.bits {
            0 => 0,
            64 => row[f.word as usize],
            b => (row[f.word as usize] >> f.shift) & ((1u64 << b) - 1),
        };
        Some(match f.kind {
            Kind::Bool => Value::Bool(raw != 0),
            Kind::Int { lo } => Value::Int((lo as i128 + raw as i128) as i64),
            Kind::Double => Value::Double(f64::from_bits(raw)),
            Kind::Mixed {
                tag_word,
                tag_shift,
            } => match (row[tag_word as usize] >> tag_shift) & 3 {
                0 => Value::Int(raw as i64),
                1 => Value::Double(f64::from_bits(raw)),
                _ => Value::Bool(raw != 0),
            },
        })
    }

    /// Column `col`'s bit field as a key: `(word, shift, bits)` when the column is an integer
    /// or boolean one (one value per field value, [`Self::value_of_field`] decodes it); `None`
    /// for doubles and mixed columns, or `col` out of range. With [`Self::field`], a caller
    /// that evaluates something of a few columns per state can key on the fields instead of
    /// decoding values (an expression over `x` is evaluated once per distinct `x`).
    pub fn field_key(&self, col: usize) -> Option<(u32, u32, u32)> {
        let f = self.fields.get(col)?;
        match f.kind {
            Kind::Bool | Kind::Int { .. } => Some((f.word, f.shift, f.bits)),
            Kind::Double | Kind::Mixed { .. } => None,
        }
    }

    /// The raw bits `shift .. shift + bits` of word `word` of state `s` (0 past the end).
    #[inline]
    pub fn field(&self, s: usize, (word, shift, bits): (u32, u32, u32)) -> u64 {
        let Some(&w) = self.store.get(s * self.words + word as usize) else {
            return 0;
        };
        match bits {
            0 => 0,
            64 => w,
            b => (w >> shift) & ((1u64 << b) - 1),
        }
    }

    /// The value a raw field of column `col` stands for (see [`Self::field_key`]); `None` for
    /// doubles and mixed columns.
    pub fn value_of_field(&self, col: usize, raw: u64) -> Option<Value> {
        match self.fields.get(col)?.kind {
            Kind::Bool => Some(Value::Bool(raw != 0)),
            Kind::Int { lo } => Some(Value::Int((lo as i128 + raw as i128) as i64)),
            Kind::Double | Kind::Mixed { .. } => None,
        }
    }

    /// The values of state `s` (one per column), if `s` is in range.
    pub fn row(&self, s: usize) -> Option<Vec<Value>> {
        (0..self.names.len()).map(|j| self.get(s, j)).collect()
    }

    /// The values of state `s`, if `s` is in range (the same as [`Self::row`]).
    pub fn of_state(&self, s: usize) -> Option<Vec<Value>> {
        self.row(s)
    }

    /// Number of states the valuations cover.
    pub fn num_states(&self) -> usize {
        self.num_values
            .checked_div(self.names.len())
            .unwrap_or(0)
            .min(self.store.len().checked_div(self.words).unwrap_or(0))
    }

    /// Number of values given when the valuations were made (`num_states × names.len()`
    /// for consistent input).
    pub fn num_values(&self) -> usize {
        self.num_values
    }

    /// Bytes held by the packed store.
    pub fn heap_bytes(&self) -> usize {
        self.store.len() * 8
    }

    /// The column of a variable.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// `(x=1,y=true)` for state `s`, or `None` if out of range.
    pub fn describe(&self, s: usize) -> Option<String> {
        let vals = self.row(s)?;
        let parts: Vec<String> = self
            .names
            .iter()
            .zip(&vals)
            .map(|(n, v)| format!("{n}={}", crate::model::format_value(v)))
            .collect();
        Some(format!("({})", parts.join(",")))
    }
}

trait AsIntUnchecked {
    fn as_int_unchecked(&self) -> i64;
}

impl AsIntUnchecked for Value {
    fn as_int_unchecked(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            Value::Bool(b) => *b as i64,
            Value::Double(d) => d.to_bits() as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(Value::Int),
            (-5i64..5).prop_map(Value::Int),
            any::<bool>().prop_map(Value::Bool),
            any::<f64>()
                .prop_filter("NaN compares unequal", |d| !d.is_nan())
                .prop_map(Value::Double),
        ]
    }

    proptest! {
        /// Packing keeps every value, whatever the mix of kinds and ranges per column.
        #[test]
        fn packing_round_trips(k in 0usize..6, rows in prop::collection::vec(prop::collection::vec(value(), 6), 0..20)) {
            let names: Vec<String> = (0..k).map(|j| format!("v{j}")).collect();
            let types = vec![Type::Int; k];
            let values: Vec<Value> = rows.iter().flat_map(|r| r[..k].to_vec()).collect();
            let v = Valuations::new(names, types, values.clone());
            let n = if k == 0 { 0 } else { rows.len() };
            prop_assert_eq!(v.num_states(), n);
            for s in 0..n {
                prop_assert_eq!(v.row(s).unwrap(), values[s * k..(s + 1) * k].to_vec());
            }
            prop_assert!(v.get(n, 0).is_none());
        }
    }

    #[test]
    fn narrow_columns_share_a_word() {
        // 32 booleans and an int in 0..=1000 fit one word (32 + 10 bits).
        let k = 33;
        let mut values = Vec::new();
        for s in 0..100i64 {
            for j in 0..32 {
                values.push(Value::Bool((s + j) % 3 == 0));
            }
            values.push(Value::Int(s * 10));
        }
        let mut types = vec![Type::Bool; 32];
        types.push(Type::Int);
        let v = Valuations::new((0..k).map(|j| format!("v{j}")).collect(), types, values);
        assert_eq!(v.heap_bytes(), 100 * 8);
        assert_eq!(v.get(7, 32), Some(Value::Int(70)));
        assert_eq!(v.get(7, 2), Some(Value::Bool(true)));
        assert_eq!(v.get(7, 0), Some(Value::Bool(false)));
    }

    #[test]
    fn from_packed_reads_the_explorers_layout() {
        // x in [-3..4] (3 bits at 0), b (1 bit at 3); two states.
        let cols = [
            PackedColumn {
                word: 0,
                shift: 0,
                bits: 3,
                lo: -3,
            },
            PackedColumn {
                word: 0,
                shift: 3,
                bits: 1,
                lo: 0,
            },
        ];
        let store = vec![0b1_101, 0b0_000];
        let v = Valuations::from_packed(
            vec!["x".into(), "b".into()],
            vec![Type::Int, Type::Bool],
            &cols,
            1,
            store,
        )
        .unwrap();
        assert_eq!(v.row(0).unwrap(), vec![Value::Int(2), Value::Bool(true)]);
        assert_eq!(v.row(1).unwrap(), vec![Value::Int(-3), Value::Bool(false)]);
        let same = Valuations::new(
            v.names.clone(),
            v.types.clone(),
            vec![
                Value::Int(2),
                Value::Bool(true),
                Value::Int(-3),
                Value::Bool(false),
            ],
        );
        assert_eq!(v, same);
        let bad = PackedColumn { word: 1, ..cols[0] };
        assert!(
            Valuations::from_packed(vec!["x".into()], vec![Type::Int], &[bad], 1, vec![0])
                .is_none()
        );
    }
}
