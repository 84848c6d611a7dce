//! Decoding the columns of a step table: interned trace ids and states, order values,
//! and finding the columns in a schema.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
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

impl<'a> Role<'a> {
    /// The trace id column of `columns`.
    pub(crate) fn trace_id(file: &'a str, columns: &'a Columns) -> Role<'a> {
        Role {
            file,
            column: &columns.trace_id,
            role: "trace id",
        }
    }

    /// The order column of `columns`.
    pub(crate) fn order(file: &'a str, columns: &'a Columns) -> Role<'a> {
        Role {
            file,
            column: &columns.order,
            role: "order",
        }
    }

    /// The `k`-th state column of `columns`.
    pub(crate) fn state(file: &'a str, columns: &'a Columns, k: usize) -> Role<'a> {
        Role {
            file,
            column: &columns.state[k],
            role: "state",
        }
    }

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

/// Dispatches on the type of the key column `$col` (trace ids and states: [`KEY_TYPES`]): a
/// dictionary to `$dict`, the string arrays to `$strs!(array)`, the binary ones to
/// `$bins!(array)`, the integer types to `$ints!(arrow type)`; any other type returns the
/// [`Role::mistyped`] error of `$role` from the function.
macro_rules! match_key_type {
    ($col:ident, $role:expr, $dict:block, $strs:ident, $bins:ident, $ints:ident) => {
        match $col.data_type() {
            DataType::Dictionary(_, _) => $dict,
            DataType::Utf8 => $strs!($col.as_string::<i32>()),
            DataType::LargeUtf8 => $strs!($col.as_string::<i64>()),
            DataType::Utf8View => $strs!($col.as_string_view()),
            DataType::Binary => $bins!($col.as_binary::<i32>()),
            DataType::LargeBinary => $bins!($col.as_binary::<i64>()),
            DataType::BinaryView => $bins!($col.as_binary_view()),
            DataType::FixedSizeBinary(_) => $bins!($col.as_fixed_size_binary()),
            DataType::Int8 => $ints!(arrow_array::types::Int8Type),
            DataType::Int16 => $ints!(arrow_array::types::Int16Type),
            DataType::Int32 => $ints!(arrow_array::types::Int32Type),
            DataType::Int64 => $ints!(arrow_array::types::Int64Type),
            DataType::UInt8 => $ints!(arrow_array::types::UInt8Type),
            DataType::UInt16 => $ints!(arrow_array::types::UInt16Type),
            DataType::UInt32 => $ints!(arrow_array::types::UInt32Type),
            DataType::UInt64 => $ints!(arrow_array::types::UInt64Type),
            other => return Err($role.mistyped(other, KEY_TYPES)),
        }
    };
}
pub(crate) use match_key_type;

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
    macro_rules! strs {
        ($arr:expr) => {
            $arr.value(i).to_string()
        };
    }
    macro_rules! bins {
        ($arr:expr) => {
            hex($arr.value(i))
        };
    }
    macro_rules! ints {
        ($t:ty) => {
            col.as_primitive::<$t>().value(i).to_string()
        };
    }
    Ok(Some(match_key_type!(
        col,
        role,
        {
            let dict = col.as_any_dictionary();
            let k = dict.normalized_keys()[i];
            return value_string(dict.values().as_ref(), k, role);
        },
        strs,
        bins,
        ints
    )))
}

/// The states of a step table's rows as ids: one state column's values as they are, several
/// columns' values joined with `|` (each column's values interned on their own first).
#[derive(Default)]
pub(crate) struct StateIds {
    /// The states, by first appearance.
    pub(crate) interner: Interner,
    /// With several state columns: each column's values, their ids and the joined name.
    parts: Vec<Interner>,
    part_ids: Vec<Vec<u32>>,
    name: String,
}

impl StateIds {
    /// Appends the state id of each row of `batch`, whose state columns are at
    /// `positions[2..]` (`first_row`: the 1-based row of the batch's first).
    pub(crate) fn intern(
        &mut self,
        file: &str,
        columns: &Columns,
        positions: &[usize],
        batch: &RecordBatch,
        first_row: u64,
        state_of: &mut Vec<u32>,
    ) -> Result<()> {
        let role = |k: usize| Role::state(file, columns, k);
        if columns.state.len() == 1 {
            let col = batch.column(positions[2]).as_ref();
            return intern_column(col, &mut self.interner, state_of, &role(0), first_row);
        }
        if self.parts.is_empty() {
            self.parts = (0..columns.state.len())
                .map(|_| Interner::default())
                .collect();
            self.part_ids = vec![Vec::new(); columns.state.len()];
        }
        for k in 0..columns.state.len() {
            self.part_ids[k].clear();
            intern_column(
                batch.column(positions[2 + k]).as_ref(),
                &mut self.parts[k],
                &mut self.part_ids[k],
                &role(k),
                first_row,
            )?;
        }
        for i in 0..batch.num_rows() {
            self.name.clear();
            for (k, ids) in self.part_ids.iter().enumerate() {
                if k > 0 {
                    self.name.push('|');
                }
                self.name.push_str(&self.parts[k].names[ids[i] as usize]);
            }
            state_of.push(self.interner.id(&self.name));
        }
        Ok(())
    }
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
    macro_rules! strs {
        ($arr:expr) => {
            each!($arr, |v| v)
        };
    }
    macro_rules! bins {
        ($arr:expr) => {
            each!($arr, |v| &hex(v))
        };
    }
    macro_rules! ints {
        ($t:ty) => {
            each!(col.as_primitive::<$t>(), |v| &v.to_string())
        };
    }
    match_key_type!(
        col,
        role,
        {
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
        },
        strs,
        bins,
        ints
    );
    Ok(())
}

/// The order values of a batch of `file` whose columns `positions` are (trace id, order,
/// states...), its rows numbered from `first_row`: 64-bit integers without nulls read in
/// place, other types converted into `buf` (cleared first).
pub(crate) fn order_values<'a>(
    batch: &'a RecordBatch,
    positions: &[usize],
    buf: &'a mut Vec<i64>,
    file: &str,
    columns: &Columns,
    first_row: u64,
) -> Result<&'a [i64]> {
    let col = batch.column(positions[1]).as_ref();
    match col.as_primitive_opt::<Int64Type>() {
        Some(a) if a.null_count() == 0 => Ok(a.values()),
        _ => {
            buf.clear();
            order_column(col, buf, &Role::order(file, columns), first_row)?;
            Ok(buf)
        }
    }
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

/// The names of a schema's columns, for a message naming those available.
pub(crate) fn field_names(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Finds the columns in a schema, checking their types; gives their indices.
pub(crate) fn locate(file: &str, schema: &Schema, columns: &Columns) -> Result<Vec<usize>> {
    let available = || field_names(schema);
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
