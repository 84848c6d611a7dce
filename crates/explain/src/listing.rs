//! The listed paths, sharing their prefixes: [`PathTree`] keeps one node per distinct prefix
//! of the paths listed (a state and its parent), so K paths of up to L states take memory
//! linear in those prefixes, not K · L (on a cycle, path k is path k − 1 with one more turn:
//! K nodes, not K²/2 states). A path is a leaf of the tree ([`PathStates`]); its states are
//! walked from the tree when they are written, one path at a time.

use crate::paths::PathSearch;
use crate::StateRef;
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// The distinct prefixes of the listed paths and the names of their states.
#[derive(Debug, Default)]
pub struct PathTree {
    /// `(state, parent)`; the parent `u32::MAX` for the start. A parent comes before its
    /// children.
    nodes: Vec<(u32, u32)>,
    /// The name of every state in the tree.
    names: HashMap<u32, String>,
}

impl PathTree {
    /// The number of prefixes kept.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no path is kept.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The name of a state of the tree (empty for another).
    pub fn name(&self, s: u32) -> &str {
        self.names.get(&s).map_or("", String::as_str)
    }

    /// The transitions `(from, to)` taken by the listed paths.
    pub fn transitions(&self) -> HashSet<(u32, u32)> {
        self.nodes
            .iter()
            .filter(|&&(_, parent)| parent != u32::MAX)
            .map(|&(s, parent)| (self.nodes[parent as usize].0, s))
            .collect()
    }
}

/// Builds a [`PathTree`] from leaves of a search's tree of prefixes, keeping only their
/// ancestors (each once).
pub(crate) struct TreeBuilder {
    tree: PathTree,
    /// Search prefix → tree node.
    index: HashMap<u32, u32>,
}

impl TreeBuilder {
    pub(crate) fn new() -> TreeBuilder {
        TreeBuilder {
            tree: PathTree::default(),
            index: HashMap::new(),
        }
    }

    /// Adds the path ending at the search's prefix `leaf`; returns its tree node.
    pub(crate) fn add(
        &mut self,
        search: &PathSearch<'_>,
        leaf: u32,
        name: &dyn Fn(u32) -> String,
    ) -> u32 {
        // The prefixes not yet in the tree, from the leaf up.
        let mut missing = Vec::new();
        let mut at = leaf;
        let mut parent = u32::MAX;
        while at != u32::MAX {
            if let Some(&node) = self.index.get(&at) {
                parent = node;
                break;
            }
            missing.push(at);
            at = search.node(at).1;
        }
        for &p in missing.iter().rev() {
            let state = search.node(p).0;
            let node = self.tree.nodes.len() as u32;
            self.tree.nodes.push((state, parent));
            self.index.insert(p, node);
            self.tree.names.entry(state).or_insert_with(|| name(state));
            parent = node;
        }
        parent
    }

    pub(crate) fn finish(self) -> Arc<PathTree> {
        Arc::new(self.tree)
    }
}

/// The states of one listed path: a leaf of the shared [`PathTree`]. Serialised as the list of
/// its states (`{"index", "name"}`), the start first.
#[derive(Clone)]
pub struct PathStates {
    tree: Arc<PathTree>,
    leaf: u32,
    len: u32,
}

impl PathStates {
    pub(crate) fn new(tree: Arc<PathTree>, leaf: u32, len: u32) -> PathStates {
        PathStates { tree, leaf, len }
    }

    /// The number of states (one more than the steps).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the path has no state (never: a path has at least its start).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The states' indices into `buf` (cleared first), the start first.
    pub fn indices_into(&self, buf: &mut Vec<u32>) {
        buf.clear();
        let mut at = self.leaf;
        while at != u32::MAX {
            let (s, parent) = self.tree.nodes[at as usize];
            buf.push(s);
            at = parent;
        }
        buf.reverse();
    }

    /// The states' indices, the start first.
    pub fn indices(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.len());
        self.indices_into(&mut v);
        v
    }

    /// The states as reported (index and name), the start first.
    pub fn refs(&self) -> Vec<StateRef> {
        self.indices()
            .into_iter()
            .map(|s| self.state_ref(s))
            .collect()
    }

    /// The name of a state of the path.
    pub fn name(&self, s: u32) -> &str {
        self.tree.name(s)
    }

    fn state_ref(&self, s: u32) -> StateRef {
        StateRef {
            index: s,
            name: self.tree.name(s).to_string(),
        }
    }

    /// The shared tree the path is a leaf of.
    pub fn tree(&self) -> &Arc<PathTree> {
        &self.tree
    }
}

impl PartialEq for PathStates {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.indices() == other.indices()
    }
}

impl fmt::Debug for PathStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.indices()).finish()
    }
}

impl Serialize for PathStates {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for s in self.indices() {
            #[derive(Serialize)]
            struct Ref<'a> {
                index: u32,
                name: &'a str,
            }
            seq.serialize_element(&Ref {
                index: s,
                name: self.tree.name(s),
            })?;
        }
        seq.end()
    }
}

/// A path's states as text for people: the names joined by `→`, a stretch that repeats a
/// cycle of states (the same block of up to [`MAX_FOLDED_CYCLE`] states three or more times
/// in a row) folded as `(a → b) ×n` so that a path around a loop reads in one line.
pub fn folded<'n>(states: &[u32], name: &dyn Fn(u32) -> &'n str, out: &mut String) {
    let mut i = 0;
    let mut first = true;
    let sep = |out: &mut String, first: &mut bool| {
        if !*first {
            out.push_str(" → ");
        }
        *first = false;
    };
    while i < states.len() {
        let mut folded_here = false;
        for c in 1..=MAX_FOLDED_CYCLE.min((states.len() - i) / 3) {
            let block = &states[i..i + c];
            let mut times = 1;
            while i + (times + 1) * c <= states.len()
                && &states[i + times * c..i + (times + 1) * c] == block
            {
                times += 1;
            }
            if times >= 3 {
                sep(out, &mut first);
                out.push('(');
                for (k, &s) in block.iter().enumerate() {
                    if k > 0 {
                        out.push_str(" → ");
                    }
                    out.push_str(name(s));
                }
                out.push_str(&format!(") ×{times}"));
                i += times * c;
                folded_here = true;
                break;
            }
        }
        if !folded_here {
            sep(out, &mut first);
            out.push_str(name(states[i]));
            i += 1;
        }
    }
}

/// The longest cycle [`folded`] folds.
pub const MAX_FOLDED_CYCLE: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    fn text(states: &[u32]) -> String {
        let names = ["a", "b", "c", "d"];
        let mut out = String::new();
        folded(states, &|s| names[s as usize], &mut out);
        out
    }

    #[test]
    fn cycles_repeated_three_times_or_more_are_folded() {
        assert_eq!(text(&[0, 1, 2]), "a → b → c");
        assert_eq!(text(&[0, 1, 0, 1, 2]), "a → b → a → b → c");
        assert_eq!(text(&[0, 1, 0, 1, 0, 1, 0, 2]), "(a → b) ×3 → a → c");
        assert_eq!(text(&[3, 0, 0, 0, 0, 2]), "d → (a) ×4 → c");
        assert_eq!(text(&[0, 0, 0]), "(a) ×3");
        assert_eq!(text(&[]), "");
    }
}
