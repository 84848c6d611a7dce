//! [`Spanned`]: an AST part with the byte range it was parsed from.

use augur_source::Span;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;

/// A part of a formula (an expression, a label, a bound, an operator) with the byte [`Span`] of
/// its text in the source it was parsed from, so that errors found later (when the property is
/// resolved against a model, or checked) point at it with a caret.
///
/// The span is not part of the value: `==` and hashing compare only `node`, and serde reads and
/// writes only `node` (a deserialised or hand-built part has the empty span `0..0`). Two
/// formulas are equal when they say the same thing, wherever they were written.
#[derive(Clone, Copy, Default)]
pub struct Spanned<T> {
    /// The part itself.
    pub node: T,
    /// Where its text is in the source (`0..0` when it was not parsed).
    pub span: Span,
}

impl<T> Spanned<T> {
    /// `node` at `span`.
    pub fn new(node: T, span: Span) -> Spanned<T> {
        Spanned { node, span }
    }

    /// The same span around `f(node)`.
    pub fn map<U>(&self, f: impl FnOnce(&T) -> U) -> Spanned<U> {
        Spanned {
            node: f(&self.node),
            span: self.span,
        }
    }
}

impl<T> From<T> for Spanned<T> {
    /// A part without a source (the empty span).
    fn from(node: T) -> Spanned<T> {
        Spanned {
            node,
            span: Span::default(),
        }
    }
}

impl<T> Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.node
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
    }
}

impl<T: Eq> Eq for Spanned<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Spanned<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.node.hash(state)
    }
}

impl<T: fmt::Debug> fmt::Debug for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} @{}..{}", self.node, self.span.start, self.span.end)
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.node.fmt(f)
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.node.serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Spanned::from)
    }
}
