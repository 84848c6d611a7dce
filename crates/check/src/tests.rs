//! Tests of the session layer.
