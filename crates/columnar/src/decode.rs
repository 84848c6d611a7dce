//! Decoding the columns of a step table: interned trace ids and states, order values,
//! and finding the columns in a schema.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::Array;
use arrow_schema::{DataType, Schema, TimeUnit};
use rustc_hash::FxHashMap;

use crate::{ColumnarError, Columns, Result};

/// Strings to dense ids, by first appearance.
#[derive(Default)]
pub(crate) struct Interner {
    pub(crate) ids: FxHashMap<String, u32>,
    pub(crate) names: Vec<String>,
}

impl Interner {
    pub(crate) fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }
}

/// One column being read: its name, role and the option naming it, for messages.
pub(crate) struct Role<'a> {
    pub(crate) file: &'a str,
    pub(crate) column: &'a str,
    pub(crate) role: &'static str,
}

impl Role<'_> {
    pub(crate) fn null(&self, row: u64) -> ColumnarError {
        ColumnarError::Null {
            file: self.file.to_string(),
            column: self.column.to_string(),
            role: self.role,
            row,
        }
    }
    pub(crate) fn mistyped(&self, found: &DataType, expected: &'static str) -> ColumnarError {
        ColumnarError::ColumnType {
            file: self.file.to_string(),
            column: self.column.to_string(),
            role: self.role,
            found: found.to_string(),
            expected,
        }
    }
}

pub(crate) const KEY_TYPES: &str =
    "a string, integer or binary column (or a dictionary of strings)";
pub(crate) const ORDER_TYPES: &str = "an integer or timestamp column";

/// Whether a type can be interned (trace ids and states).
pub(crate) fn internable(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(k, v) => k.is_integer() && internable(v),
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::FixedSizeBinary(_)
        | DataType::BinaryView => true,
        t => t.is_integer(),
    }
}

pub(crate) fn orderable(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Timestamp(..))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The value at `i` of a column of an internable type, as a name (`None` for a null).
pub(crate) fn value_string(col: &dyn Array, i: usize, role: &Role<'_>) -> Result<Option<String>> {
    if col.is_null(i) {
        return Ok(None);
    }
    macro_rules! ints {
        ($t:ty) => {
            col.as_primitive::<$t>().value(i).to_string()
        };
    }
    Ok(Some(match col.data_type() {
        DataType::Dictionary(_, _) => {
            let dict = col.as_any_dictionary();
            let k = dict.normalized_keys()[i];
            return value_string(dict.values().as_ref(), k, role);
        }
        DataType::Utf8 => col.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => col.as_string::<i64>().value(i).to_string(),
        DataType::Utf8View => col.as_string_view().value(i).to_string(),
        DataType::Binary => hex(col.as_binary::<i32>().value(i)),
        DataType::LargeBinary => hex(col.as_binary::<i64>().value(i)),
        DataType::BinaryView => hex(col.as_binary_view().value(i)),
        DataType::FixedSizeBinary(_) => hex(col.as_fixed_size_binary().value(i)),
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        other => return Err(role.mistyped(other, KEY_TYPES)),
    }))
}

/// The keys of a dictionary column as indices into its values: 32-bit keys (what string
/// columns are read as) in place, others converted.
pub(crate) enum Keys<'a> {
    I32(&'a [i32]),
    Other(Vec<usize>),
}

impl<'a> Keys<'a> {
    pub(crate) fn of(col: &'a dyn Array) -> Keys<'a> {
        match col.as_dictionary_opt::<Int32Type>() {
            Some(d) => Keys::I32(d.keys().values()),
            None => Keys::Other(col.as_any_dictionary().normalized_keys()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Keys::I32(k) => k.len(),
            Keys::Other(k) => k.len(),
        }
    }

    /// The key of row `i` (a negative one as an index past any dictionary).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> usize {
        match self {
            Keys::I32(k) => usize::try_from(k[i]).unwrap_or(usize::MAX),
            Keys::Other(k) => k[i],
        }
    }
}

/// The first null of a column, as an error.
pub(crate) fn first_null(col: &dyn Array, role: &Role<'_>, first_row: u64) -> Result<()> {
    if col.null_count() > 0 {
        if let Some(i) = (0..col.len()).find(|&i| col.is_null(i)) {
            return Err(role.null(first_row + i as u64));
        }
    }
    Ok(())
}

/// Appends, for each row of `col`, the id of its value in `interner` (`first_row`: the
/// 1-based row of the column's first value, for messages). Values get ids in the order they
/// first appear; a dictionary-encoded column's values are named once per dictionary, not
/// once per row.
pub(crate) fn intern_column(
    col: &dyn Array,
    interner: &mut Interner,
    out: &mut Vec<u32>,
    role: &Role<'_>,
    first_row: u64,
) -> Result<()> {
    first_null(col, role, first_row)?;
    macro_rules! each {
        ($arr:expr, |$v:ident| $name:expr) => {{
            let arr = $arr;
            out.reserve(arr.len());
            for i in 0..arr.len() {
                let $v = arr.value(i);
                out.push(interner.id($name));
            }
        }};
    }
    macro_rules! ints {
        ($t:ty) => {
            each!(col.as_primitive::<$t>(), |v| &v.to_string())
        };
    }
    match col.data_type() {
        DataType::Dictionary(_, _) => {
            // Each dictionary value is named (and interned) when a row first uses it.
            let dict = col.as_any_dictionary();
            let values = dict.values().as_ref();
            let mut slot = vec![u32::MAX; values.len()];
            let keys = Keys::of(col);
            out.reserve(keys.len());
            for i in 0..keys.len() {
                let k = keys.get(i);
                let id = match slot.get(k) {
                    Some(&id) if id != u32::MAX => id,
                    Some(_) => match value_string(values, k, role)? {
                        Some(name) => {
                            let id = interner.id(&name);
                            slot[k] = id;
                            id
                        }
                        None => return Err(role.null(first_row + i as u64)),
                    },
                    None => return Err(role.null(first_row + i as u64)),
                };
                out.push(id);
            }
        }
        DataType::Utf8 => each!(col.as_string::<i32>(), |v| v),
        DataType::LargeUtf8 => each!(col.as_string::<i64>(), |v| v),
        DataType::Utf8View => each!(col.as_string_view(), |v| v),
        DataType::Binary => each!(col.as_binary::<i32>(), |v| &hex(v)),
        DataType::LargeBinary => each!(col.as_binary::<i64>(), |v| &hex(v)),
        DataType::BinaryView => each!(col.as_binary_view(), |v| &hex(v)),
        DataType::FixedSizeBinary(_) => each!(col.as_fixed_size_binary(), |v| &hex(v)),
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        other => return Err(role.mistyped(other, KEY_TYPES)),
    }
    Ok(())
}

/// Appends each row's order value.
pub(crate) fn order_column(
    col: &dyn Array,
    out: &mut Vec<i64>,
    role: &Role<'_>,
    first_row: u64,
) -> Result<()> {
    macro_rules! each {
        ($arr:expr) => {{
            let arr = $arr;
            for i in 0..arr.len() {
                if arr.is_null(i) {
                    return Err(role.null(first_row + i as u64));
                }
                out.push(i64::try_from(arr.value(i)).map_err(|_| {
                    role.mistyped(col.data_type(), "order values that fit in a 64-bit integer")
                })?);
            }
        }};
    }
    if col.null_count() == 0 {
        // 64-bit values without nulls: copied as they are.
        let values = match col.data_type() {
            DataType::Int64 => Some(col.as_primitive::<Int64Type>().values()),
            DataType::Timestamp(TimeUnit::Second, _) => {
                Some(col.as_primitive::<TimestampSecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                Some(col.as_primitive::<TimestampMillisecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Some(col.as_primitive::<TimestampMicrosecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Some(col.as_primitive::<TimestampNanosecondType>().values())
            }
            _ => None,
        };
        if let Some(v) = values {
            out.extend_from_slice(v);
            return Ok(());
        }
    }
    match col.data_type() {
        DataType::Int8 => each!(col.as_primitive::<Int8Type>()),
        DataType::Int16 => each!(col.as_primitive::<Int16Type>()),
        DataType::Int32 => each!(col.as_primitive::<Int32Type>()),
        DataType::Int64 => each!(col.as_primitive::<Int64Type>()),
        DataType::UInt8 => each!(col.as_primitive::<UInt8Type>()),
        DataType::UInt16 => each!(col.as_primitive::<UInt16Type>()),
        DataType::UInt32 => each!(col.as_primitive::<UInt32Type>()),
        DataType::UInt64 => each!(col.as_primitive::<UInt64Type>()),
        DataType::Timestamp(unit, _) => match unit {
            TimeUnit::Second => each!(col.as_primitive::<TimestampSecondType>()),
            TimeUnit::Millisecond => each!(col.as_primitive::<TimestampMillisecondType>()),
            TimeUnit::Microsecond => each!(col.as_primitive::<TimestampMicrosecondType>()),
            TimeUnit::Nanosecond => each!(col.as_primitive::<TimestampNanosecondType>()),
        },
        other => return Err(role.mistyped(other, ORDER_TYPES)),
    }
    Ok(())
}

/// Finds the columns in a schema, checking their types; gives their indices.
pub(crate) fn locate(file: &str, schema: &Schema, columns: &Columns) -> Result<Vec<usize>> {
    let available = || {
        schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut wanted: Vec<(&str, &'static str, &'static str)> = vec![
        (&columns.trace_id, "trace id", "--trace-id-column"),
        (&columns.order, "order", "--order-column"),
    ];
    for s in &columns.state {
        wanted.push((s, "state", "--state-column"));
    }
    let mut idx = Vec::new();
    for (column, role, option) in wanted {
        let Ok(i) = schema.index_of(column) else {
            return Err(ColumnarError::MissingColumn {
                file: file.to_string(),
                column: column.to_string(),
                role,
                option,
                available: available(),
            });
        };
        let t = schema.field(i).data_type();
        let r = Role { file, column, role };
        if role == "order" {
            if !orderable(t) {
                return Err(r.mistyped(t, ORDER_TYPES));
            }
        } else if !internable(t) {
            return Err(r.mistyped(t, KEY_TYPES));
        }
        idx.push(i);
    }
    Ok(idx)
}
