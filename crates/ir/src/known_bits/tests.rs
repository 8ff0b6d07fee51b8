//! Tests of the known-bits analysis.
