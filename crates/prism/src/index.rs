//! [`CommandIndex`]: the commands that may be enabled in a state, found without testing every
//! command. A model with one command per state (`[] s=17 -> ...`, as `augur explain --output`
//! and `augur export --to prism` write them) would otherwise test all of its commands in every
//! state: quadratic in the model's size.
//!
//! The index picks the variable whose equality tests in the commands' guards' leading
//! conjuncts (their [`Prefilter`]) name the most distinct values and files each such command under the value it requires;
//! the others are always candidates. A state's candidates are the commands filed under its
//! value of that variable and the others, in command order (so exploration, and the numbering
//! of states, is the same as when every command is tested).

use crate::eval::Cmp;
use crate::program::Prefilter;
use rustc_hash::FxHashMap;

/// Fewer commands than this are tested one by one.
const MIN_INDEXED: usize = 16;

/// The commands of one list (unlabelled commands, or one module's commands of an action),
/// filed by the value one variable must have.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommandIndex {
    /// The variable's slot (`None`: no index, every command is a candidate).
    slot: Option<u16>,
    /// The commands requiring each value of the variable, in command order.
    by_value: FxHashMap<i64, Vec<u32>>,
    /// The commands requiring no particular value (all of them without an index).
    rest: Vec<u32>,
}

impl CommandIndex {
    /// The index of `commands` (ids, in order) given every command's prefilter.
    pub(crate) fn new(commands: &[u32], prefilters: &[Prefilter]) -> CommandIndex {
        let eq_slot = |c: u32| -> Vec<(u16, i64)> {
            let p = &prefilters[c as usize];
            p.tests[..p.len as usize]
                .iter()
                .filter(|(_, op, _)| *op == Cmp::Eq)
                .map(|&(s, _, k)| (s, k))
                .collect()
        };
        if commands.len() < MIN_INDEXED {
            return CommandIndex {
                rest: commands.to_vec(),
                ..CommandIndex::default()
            };
        }
        // The variable whose tests tell the most commands apart: the most distinct values.
        let mut values: FxHashMap<u16, rustc_hash::FxHashSet<i64>> = FxHashMap::default();
        for &c in commands {
            for (s, k) in eq_slot(c) {
                values.entry(s).or_default().insert(k);
            }
        }
        let Some((slot, n)) = values
            .iter()
            .map(|(s, v)| (*s, v.len()))
            .max_by_key(|&(s, n)| (n, std::cmp::Reverse(s)))
        else {
            return CommandIndex {
                rest: commands.to_vec(),
                ..CommandIndex::default()
            };
        };
        if n < MIN_INDEXED {
            return CommandIndex {
                rest: commands.to_vec(),
                ..CommandIndex::default()
            };
        }
        let mut index = CommandIndex {
            slot: Some(slot),
            ..CommandIndex::default()
        };
        for &c in commands {
            match eq_slot(c).into_iter().find(|(s, _)| *s == slot) {
                Some((_, k)) => index.by_value.entry(k).or_default().push(c),
                None => index.rest.push(c),
            }
        }
        index
    }

    /// The candidates in the state `values` (ascending), into `out` (cleared first).
    #[inline]
    pub(crate) fn candidates(&self, values: &[i64], out: &mut Vec<u32>) {
        out.clear();
        let filed: &[u32] = match self.slot {
            Some(s) => self
                .by_value
                .get(&values[s as usize])
                .map_or(&[], Vec::as_slice),
            None => &[],
        };
        // Merge two ascending lists.
        let (a, b) = (&self.rest, filed);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i] < b[j] {
                out.push(a[i]);
                i += 1;
            } else {
                out.push(b[j]);
                j += 1;
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pf(tests: &[(u16, Cmp, i64)]) -> Prefilter {
        let mut p = Prefilter {
            len: tests.len() as u8,
            tests: [(0, Cmp::Eq, 0); 3],
        };
        p.tests[..tests.len()].copy_from_slice(tests);
        p
    }

    #[test]
    fn candidates_are_the_commands_whose_prefilter_can_pass_in_order() {
        // 40 commands `s=i`, one without a test, one testing another variable.
        let mut prefilters: Vec<Prefilter> = (0..40).map(|i| pf(&[(0, Cmp::Eq, i)])).collect();
        prefilters.push(pf(&[]));
        prefilters.push(pf(&[(1, Cmp::Eq, 3)]));
        prefilters.push(pf(&[(0, Cmp::Eq, 7)]));
        let ids: Vec<u32> = (0..prefilters.len() as u32).collect();
        let index = CommandIndex::new(&ids, &prefilters);
        let mut out = Vec::new();
        index.candidates(&[7, 0], &mut out);
        assert_eq!(out, [7, 40, 41, 42]);
        index.candidates(&[99, 0], &mut out);
        assert_eq!(out, [40, 41]);
        // Every command that passes its prefilter is a candidate.
        for v in 0..45 {
            let state = [v, 3];
            index.candidates(&state, &mut out);
            for &c in &ids {
                if prefilters[c as usize].passes(&state) {
                    assert!(out.contains(&c), "{c} at {v}");
                }
            }
        }
    }
}
