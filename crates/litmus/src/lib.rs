//! Litmus tests for warpsim: the `*.litmus` file format, and a brute-force checker that decides
//! which outcomes of a tiny test the PTX memory model allows.
//!
//! A litmus test is a handful of straight-line threads that load, store, update atomically and
//! fence a few shared global locations, together with an *outcome to look for* (`[exists]`).
//! The memory model decides whether that outcome may ever be observed. This crate has two parts:
//!
//! - [`parse_file`] reads a `*.litmus` file (TOML: locations, thread bodies written in a small
//!   subset of PTX with `{placeholder}`s, an `[exists]` clause, and `[[variant]]` tables that fill
//!   the placeholders) and [`LitmusFile::expand`] turns it into concrete [`LitmusTest`]s, one per
//!   variant and thread placement (all threads in one warp, in one block, or in separate blocks).
//! - [`allowed_outcomes`] enumerates every candidate execution of a test and keeps those that
//!   satisfy the axioms of the PTX memory consistency model, returning the set of outcomes that
//!   the model allows. A simulator run of the same test may only ever produce outcomes from this
//!   set.
//!
//! # Sources
//!
//! - NVIDIA, *PTX ISA*, chapter "Memory Consistency Model" (sm_70 and later): the definitions of
//!   strong operations, scopes, morally strong pairs, release and acquire patterns, observation
//!   order, base causality order, causality order and the axioms (Coherence, Fence-SC,
//!   Atomicity, No-Thin-Air, Sequential-Consistency-Per-Location, Causality).
//! - D. Lustig, S. Sahasrabuddhe, O. Giroux, *A Formal Analysis of the NVIDIA PTX Memory
//!   Consistency Model*, ASPLOS 2019, and its Alloy model (`ptx.als` in NVlabs/ptxmemorymodel),
//!   which settles the points where the prose of the ISA manual is informal.
//!
//! The module documentation of [`model`] lists exactly which definitions are implemented and
//! where the checker simplifies.
//!
//! # The file format
//!
//! ```toml
//! name = "MP"
//! doc = "T0 writes data then a flag; T1 reads the flag then the data."
//! placements = ["warp", "block", "grid"]   # optional; these three are the default
//! [locations]
//! x = 0
//! y = 0
//! [[thread]]
//! body = """
//! {st} [x], 1;
//! {fence}
//! {st} [y], 1;
//! """
//! [[thread]]
//! body = """
//! {ld} r0, [y];
//! {fence}
//! {ld} r1, [x];
//! """
//! [exists]
//! "1:r0" = 1
//! "1:r1" = 0
//! [[variant]]
//! name = "plain"
//! st = "st.global.u32"
//! ld = "ld.global.u32"
//! fence = ""
//! expect = "allowed"
//! ```
//!
//! See [`mod@file`] for every rule of the format and [`instruction`] for the PTX subset.

pub mod error;
pub mod file;
pub mod instruction;
pub mod litmus_test;
pub mod model;

pub use error::{LitmusError, LitmusErrorKind, ModelError};
pub use file::{parse_file, LitmusFile, PlacementKind};
pub use litmus_test::{
    AccessOrder, Event, Expectation, FenceKind, Instruction, LitmusTest, Location, LocationId,
    Observable, Outcome, Placement, Register, RmwOp, RmwOrder, RmwSemantics, Scope, Thread,
    ThreadId, Value,
};
pub use model::{allowed_outcomes, DEFAULT_BOUND};
