//! Keyed counts from the rows of a counts table: one count per row, `(kind, from_state,
//! to_state, n, category)`, as `docs/sql/counts.sql` produces them on a SQL engine and as a
//! Parquet counts table (`augur learn --counts-only -o counts.parquet`) stores them. Every
//! reader of such rows (the Parquet reader of `augur-columnar`, Python's
//! `augur_mc.counts_from_rows`) builds the counts here, so they agree on what a table means.
//!
//! | kind | from | to | n |
//! |---|---|---|---|
//! | `step` | a state | — | the steps taken in it (the `step` rows list the group's states, in the order of their rows) |
//! | `initial` | a state | — | the traces that started in it (they sum to the group's traces) |
//! | `transition` | the source | the target | the observed valid moves |
//! | `invalid` | the source | the target | the moves an abstraction spec forbids |
//! | `end` | a state | — | the traces that ended in it |
//!
//! Rows come in any order; the rows of one `category` (none: `None`) are one group. In a chain
//! of order k > 1 a state is written as the JSON array of its names (`["ok","bad"]`).
//!
//! ```
//! use augur_learn::counts_table::CountsTable;
//! let mut table = CountsTable::new(1, None);
//! for (kind, from, to, n) in [
//!     ("step", "ok", None, 3),
//!     ("step", "bad", None, 1),
//!     ("initial", "ok", None, 2),
//!     ("transition", "ok", Some("ok"), 1),
//!     ("transition", "ok", Some("bad"), 1),
//!     ("end", "ok", None, 1),
//!     ("end", "bad", None, 1),
//! ] {
//!     table.push(kind, from.into(), to.map(String::from), n, None)?;
//! }
//! let counts = table.finish()?;
//! counts.check()?;
//! assert_eq!((counts.groups[0].traces, counts.groups[0].steps), (2, 4));
//! # Ok::<(), augur_learn::LearnError>(())
//! ```

use std::collections::HashMap;

use crate::counts::{GroupCounts, KeyedCounts, StateKey};
use crate::error::{LearnError, Result};

/// The key of a row: a kind, a state and (for a move) a target; a table counts a key once.
type RowKey = (String, StateKey, Option<StateKey>);

/// Keyed counts being built from the rows of a counts table, one [`push`](Self::push) per
/// row (numbered from 1 in errors), then [`finish`](Self::finish).
#[derive(Debug)]
pub struct CountsTable {
    order: usize,
    end_state: Option<String>,
    groups: Vec<GroupCounts>,
    /// Per group: the row of each key.
    first_rows: Vec<HashMap<RowKey, u64>>,
    /// Per group: the `step` rows `(state, n, row)`, checked once all rows are read.
    step_rows: Vec<Vec<(StateKey, u64, u64)>>,
    row: u64,
}

/// The error of a row: [`LearnError::CountsRow`].
fn at(row: u64, message: String) -> LearnError {
    LearnError::CountsRow { row, message }
}

impl CountsTable {
    /// An empty table of counts of order `order` (`end_state`: the header's, informational).
    pub fn new(order: usize, end_state: Option<String>) -> Self {
        CountsTable {
            order,
            end_state,
            groups: Vec::new(),
            first_rows: Vec::new(),
            step_rows: Vec::new(),
            row: 0,
        }
    }

    /// The rows pushed so far (the number of the last one).
    pub fn rows(&self) -> u64 {
        self.row
    }

    /// A state as written in a cell of `column`: its name, or at order k > 1 a JSON array.
    fn key(&self, text: String, column: &str) -> Result<StateKey> {
        if self.order <= 1 {
            return Ok(StateKey::Name(text));
        }
        serde_json::from_str::<Vec<String>>(&text)
            .map(StateKey::Tuple)
            .map_err(|_| {
                at(
                    self.row,
                    format!(
                        "column `{column}`: `{text}` is not a JSON array of state names (the \
                         counts are of order {})",
                        self.order
                    ),
                )
            })
    }

    /// Adds the next row. `to` is read for `transition` and `invalid` rows only (a null there
    /// is an error); an unknown kind, a key given twice in a group, or a total past
    /// 2^64 − 1 is an error naming the row.
    pub fn push(
        &mut self,
        kind: &str,
        from: String,
        to: Option<String>,
        n: u64,
        category: Option<String>,
    ) -> Result<()> {
        self.row += 1;
        let row = self.row;
        let is_move = matches!(kind, "transition" | "invalid");
        if !is_move && !matches!(kind, "step" | "initial" | "end") {
            return Err(at(
                row,
                format!(
                    "column `kind` is `{kind}`; expected step, initial, transition, invalid or \
                     end"
                ),
            ));
        }
        let from = self.key(from, "from_state")?;
        let to = match (is_move, to) {
            (false, _) => None,
            (true, Some(t)) => Some(self.key(t, "to_state")?),
            (true, None) => {
                return Err(at(
                    row,
                    format!("column `to_state` is null: a `{kind}` row needs the move's target"),
                ))
            }
        };
        let gi = match self.groups.iter().position(|g| g.category == category) {
            Some(g) => g,
            None => {
                self.first_rows.push(HashMap::new());
                self.step_rows.push(Vec::new());
                self.groups.push(GroupCounts {
                    category,
                    traces: 0,
                    steps: 0,
                    states: Vec::new(),
                    initial: Vec::new(),
                    transitions: Vec::new(),
                    invalid: Vec::new(),
                    ends: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        if let Some(first) =
            self.first_rows[gi].insert((kind.to_string(), from.clone(), to.clone()), row)
        {
            let what = match &to {
                Some(t) => format!("{} -> {}", from.display(), t.display()),
                None => from.display(),
            };
            return Err(at(
                row,
                format!(
                    "a `{kind}` row for {what} again (first at row {first}); a counts table \
                     gives each key its total once"
                ),
            ));
        }
        let overflow = || at(row, "the counts add up past 2^64 - 1".to_string());
        let g = &mut self.groups[gi];
        match (kind, to) {
            ("step", _) => {
                g.steps = g.steps.checked_add(n).ok_or_else(overflow)?;
                self.step_rows[gi].push((from.clone(), n, row));
                g.states.push(from);
            }
            ("initial", _) => {
                g.traces = g.traces.checked_add(n).ok_or_else(overflow)?;
                g.initial.push((from, n));
            }
            ("transition", Some(to)) => g.transitions.push((from, to, n)),
            (_, Some(to)) => g.invalid.push((from, to, n)),
            // `end` (the other kinds have no target).
            (_, None) => g.ends.push((from, n)),
        }
        Ok(())
    }

    /// The counts (lists sorted by key, `states` in the order of their `step` rows), once
    /// each `step` row is checked against the moves that leave its state and the traces that
    /// end in it. They are not checked further: [`KeyedCounts::check`] does that.
    pub fn finish(self) -> Result<KeyedCounts> {
        for (g, steps) in self.groups.iter().zip(&self.step_rows) {
            let mut left: HashMap<&StateKey, u128> = HashMap::new();
            for (f, _, n) in g.transitions.iter().chain(&g.invalid) {
                *left.entry(f).or_default() += u128::from(*n);
            }
            for (s, n) in &g.ends {
                *left.entry(s).or_default() += u128::from(*n);
            }
            for (s, n, r) in steps {
                let m = left.get(s).copied().unwrap_or(0);
                if u128::from(*n) != m {
                    return Err(at(
                        *r,
                        format!(
                            "the `step` row of state {} counts {n} steps, but the moves that \
                             leave it and the traces that end in it add up to {m}",
                            s.display()
                        ),
                    ));
                }
            }
        }
        Ok(KeyedCounts::new(self.order, self.end_state, self.groups).sorted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of the traces `ok ok bad`, `ok`, `ok ok` as rows.
    const ROWS: [(&str, &str, Option<&str>, u64); 7] = [
        ("step", "ok", None, 5),
        ("step", "bad", None, 1),
        ("initial", "ok", None, 3),
        ("transition", "ok", Some("ok"), 2),
        ("transition", "ok", Some("bad"), 1),
        ("end", "ok", None, 2),
        ("end", "bad", None, 1),
    ];

    fn table(rows: &[(&str, &str, Option<&str>, u64)], cat: Option<&str>) -> Result<KeyedCounts> {
        let mut t = CountsTable::new(1, None);
        for (kind, from, to, n) in rows {
            t.push(
                kind,
                from.to_string(),
                to.map(String::from),
                *n,
                cat.map(String::from),
            )?;
        }
        t.finish()
    }

    fn name(s: &str) -> StateKey {
        StateKey::Name(s.into())
    }

    #[test]
    fn rows_in_any_order_are_the_counts_of_the_traces() {
        let c = table(&ROWS, None).unwrap();
        c.check().unwrap();
        let g = &c.groups[0];
        assert_eq!((g.traces, g.steps), (3, 6));
        assert_eq!(g.states, [name("ok"), name("bad")]);
        assert_eq!(
            g.transitions,
            [(name("ok"), name("bad"), 1), (name("ok"), name("ok"), 2)]
        );
        assert_eq!(g.ends, [(name("bad"), 1), (name("ok"), 2)]);
        // Reversed: the same counts, the states in the order of their `step` rows.
        let mut rev = ROWS;
        rev.reverse();
        let r = table(&rev, None).unwrap();
        assert_eq!(r.groups[0].states, [name("bad"), name("ok")]);
        let mut same = r.groups[0].clone();
        same.states.reverse();
        assert_eq!(same, *g);
    }

    #[test]
    fn each_category_is_a_group() {
        let mut t = CountsTable::new(1, None);
        for (cat, (kind, from, to, n)) in [Some("a"), None]
            .into_iter()
            .flat_map(|c| ROWS.map(|r| (c, r)))
        {
            t.push(
                kind,
                from.into(),
                to.map(String::from),
                n,
                cat.map(String::from),
            )
            .unwrap();
        }
        let c = t.finish().unwrap();
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[0].category.as_deref(), Some("a"));
        assert_eq!(c.groups[1].category, None);
        assert_eq!(c.groups[0].transitions, c.groups[1].transitions);
    }

    #[test]
    fn bad_rows_are_errors_naming_the_row() {
        let err =
            |rows: &[(&str, &str, Option<&str>, u64)]| table(rows, None).unwrap_err().to_string();
        let mut rows = ROWS.to_vec();
        rows.push(("transition", "ok", Some("ok"), 1));
        assert_eq!(
            err(&rows),
            "row 8: a `transition` row for `ok` -> `ok` again (first at row 4); a counts table \
             gives each key its total once"
        );
        rows[7] = ("begin", "ok", None, 1);
        assert!(err(&rows).starts_with("row 8: column `kind` is `begin`"));
        rows[7] = ("invalid", "ok", None, 1);
        assert_eq!(
            err(&rows),
            "row 8: column `to_state` is null: a `invalid` row needs the move's target"
        );
        let mut rows = ROWS.to_vec();
        rows[0].3 = 4;
        assert_eq!(
            err(&rows),
            "row 1: the `step` row of state `ok` counts 4 steps, but the moves that leave it and \
             the traces that end in it add up to 5"
        );
        let mut t = CountsTable::new(1, None);
        t.push("step", "a".into(), None, u64::MAX, None).unwrap();
        let e = t.push("step", "b".into(), None, 1, None).unwrap_err();
        assert_eq!(e.to_string(), "row 2: the counts add up past 2^64 - 1");
    }

    #[test]
    fn at_order_two_a_state_is_a_json_array() {
        let mut t = CountsTable::new(2, Some("done".into()));
        t.push("step", r#"["a","b"]"#.into(), None, 1, None)
            .unwrap();
        t.push("end", r#"["a","b"]"#.into(), None, 1, None).unwrap();
        let c = t.finish().unwrap();
        assert_eq!(
            c.groups[0].states,
            [StateKey::Tuple(vec!["a".into(), "b".into()])]
        );
        assert_eq!(c.end_state.as_deref(), Some("done"));
        let mut t = CountsTable::new(2, None);
        let e = t.push("step", "a".into(), None, 1, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "row 1: column `from_state`: `a` is not a JSON array of state names (the counts are \
             of order 2)"
        );
    }
}
