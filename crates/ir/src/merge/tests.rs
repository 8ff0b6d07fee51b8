//! Tests of the merge pass.
