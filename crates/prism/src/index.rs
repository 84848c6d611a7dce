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

/// Fewer commands than this are tested one by one.
const MIN_INDEXED: usize = 16;

/// The commands of one list (unlabelled commands, or one module's commands of an action),
/// filed by the value one variable must have.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommandIndex {
    /// The variable's slot (`None`: no index, every command is a candidate).
    slot: Option<u16>,
    /// The values some command requires, ascending (`dense`: every value from the first to
    /// the last, whether or not a command requires it).
    values: Vec<i64>,
    /// Whether `values` is the full range `values[0]..=values[last]` (looked up by
    /// subtraction instead of binary search).
    dense: bool,
    /// The commands requiring `values[i]` are `commands[offsets[i]..offsets[i + 1]]`, in command
    /// order (compressed rows: one allocation, whatever the number of values).
    offsets: Vec<u32>,
    commands: Vec<u32>,
    /// The commands requiring no particular value (all of them without an index).
    rest: Vec<u32>,
}

impl CommandIndex {
    /// The index of `commands` (ids, in order) given every command's prefilter.
    pub(crate) fn new(commands: &[u32], prefilters: &[Prefilter]) -> CommandIndex {
        let unindexed = || CommandIndex {
            rest: commands.to_vec(),
            ..CommandIndex::default()
        };
        if commands.len() < MIN_INDEXED {
            return unindexed();
        }
        let eq_tests = |c: u32| {
            let p = &prefilters[c as usize];
            p.tests[..p.len as usize]
                .iter()
                .filter(|(_, op, _)| *op == Cmp::Eq)
                .map(|&(s, _, k)| (s, k))
        };
        // The variable whose tests tell the most commands apart: the most distinct values
        // (ties: the lowest slot). Sorted (slot, value) pairs, counted once each.
        let mut tests: Vec<(u16, i64)> = commands.iter().flat_map(|&c| eq_tests(c)).collect();
        tests.sort_unstable();
        tests.dedup();
        let mut best: Option<(u16, usize)> = None;
        for run in tests.chunk_by(|a, b| a.0 == b.0) {
            if best.is_none_or(|(_, n)| run.len() > n) {
                best = Some((run[0].0, run.len()));
            }
        }
        let Some((slot, n)) = best else {
            return unindexed();
        };
        if n < MIN_INDEXED {
            return unindexed();
        }
        // (value, command) for the commands that test the slot, in command order per value.
        let mut filed: Vec<(i64, u32)> = Vec::new();
        let mut rest = Vec::new();
        for &c in commands {
            match eq_tests(c).find(|(s, _)| *s == slot) {
                Some((_, k)) => filed.push((k, c)),
                None => rest.push(c),
            }
        }
        filed.sort_by_key(|&(k, _)| k);
        let (lo, hi) = (filed[0].0, filed[filed.len() - 1].0);
        let span = (hi as i128 - lo as i128 + 1) as u128;
        let dense = span <= 2 * n as u128 + 16;
        let values: Vec<i64> = match dense {
            true => (lo..=hi).collect(),
            false => {
                let mut v: Vec<i64> = filed.iter().map(|&(k, _)| k).collect();
                v.dedup();
                v
            }
        };
        let mut offsets = Vec::with_capacity(values.len() + 1);
        offsets.push(0u32);
        let mut i = 0;
        for &v in &values {
            while i < filed.len() && filed[i].0 == v {
                i += 1;
            }
            offsets.push(i as u32);
        }
        CommandIndex {
            slot: Some(slot),
            values,
            dense,
            offsets,
            commands: filed.into_iter().map(|(_, c)| c).collect(),
            rest,
        }
    }

    /// The commands filed under `value`.
    #[inline]
    fn filed(&self, value: i64) -> &[u32] {
        let i = match self.dense {
            true => {
                let Some(&lo) = self.values.first() else {
                    return &[];
                };
                match value.checked_sub(lo).and_then(|d| usize::try_from(d).ok()) {
                    Some(d) if d < self.values.len() => d,
                    _ => return &[],
                }
            }
            false => match self.values.binary_search(&value) {
                Ok(i) => i,
                Err(_) => return &[],
            },
        };
        &self.commands[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The candidates in the state `values` (ascending), into `out` (cleared first).
    #[inline]
    pub(crate) fn candidates(&self, values: &[i64], out: &mut Vec<u32>) {
        out.clear();
        let filed: &[u32] = match self.slot {
            Some(s) => self.filed(values[s as usize]),
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
        for v in -3..45 {
            let state = [v, 3];
            index.candidates(&state, &mut out);
            for &c in &ids {
                if prefilters[c as usize].passes(&state) {
                    assert!(out.contains(&c), "{c} at {v}");
                }
            }
        }
    }

    #[test]
    fn sparse_values_are_found_by_search() {
        // Values 0, 1000, ..., 39000 (too sparse for a table), one twice, and far outliers.
        let mut prefilters: Vec<Prefilter> =
            (0..40).map(|i| pf(&[(1, Cmp::Eq, i * 1000)])).collect();
        prefilters.push(pf(&[(1, Cmp::Eq, 5000)]));
        prefilters.push(pf(&[(1, Cmp::Eq, i64::MIN)]));
        prefilters.push(pf(&[(1, Cmp::Eq, i64::MAX)]));
        let ids: Vec<u32> = (0..prefilters.len() as u32).collect();
        let index = CommandIndex::new(&ids, &prefilters);
        assert!(!index.dense);
        let mut out = Vec::new();
        index.candidates(&[0, 5000], &mut out);
        assert_eq!(out, [5, 40]);
        index.candidates(&[0, 5001], &mut out);
        assert!(out.is_empty());
        index.candidates(&[0, i64::MIN], &mut out);
        assert_eq!(out, [41]);
        index.candidates(&[0, i64::MAX], &mut out);
        assert_eq!(out, [42]);
    }
}
