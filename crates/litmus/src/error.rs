//! The errors of this crate: what is wrong with a `.litmus` file (always naming `file:line`), and
//! why the model checker declined a test.

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

/// Something wrong in a `.litmus` file, at a line of it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}:{line}: {kind}", path.display())]
pub struct LitmusError {
    pub path: PathBuf,
    /// 1-based line of the file.
    pub line: u32,
    pub kind: LitmusErrorKind,
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LitmusErrorKind {
    /// The text is not valid TOML, or a table has a field of the wrong type or an unknown field.
    #[error("{message}")]
    Toml { message: String },
    /// The mnemonic is not one this crate knows.
    #[error(
        "unknown instruction `{text}`: supported are ld, st, atom, red, fence, membar and bar.sync"
    )]
    UnknownInstruction { text: String },
    /// A known mnemonic with qualifiers or operands outside the supported subset.
    #[error("unsupported or malformed instruction `{text}`: {reason}")]
    MalformedInstruction { text: String, reason: String },
    /// A body uses `{name}` that a variant does not define.
    #[error("placeholder `{{{name}}}` is not defined {context}")]
    UndefinedPlaceholder {
        name: String,
        context: PlaceholderContext,
    },
    /// A `{` without a matching `}`, a stray `}`, or something other than a name between them.
    #[error("malformed placeholder in `{text}`: {reason}")]
    MalformedPlaceholder { text: String, reason: String },
    /// An address names a location that `[locations]` does not declare.
    #[error("unknown location `{name}`; [locations] declares {declared}")]
    UnknownLocation { name: String, declared: String },
    /// An operand that should be a register is not one of `r0` to `r15`.
    #[error("bad register `{text}`: registers are r0 to r15")]
    BadRegister { text: String },
    /// A register is read before its thread writes it.
    #[error("register {register} is read before thread {thread} writes it")]
    RegisterReadBeforeWritten { thread: u32, register: String },
    /// The `[exists]` clause is malformed or names something the test does not have.
    #[error("bad [exists] entry `{key}`: {reason}")]
    BadExists { key: String, reason: String },
    /// A placement list, an explicit placement, or two threads in one place.
    #[error("bad placement: {reason}")]
    BadPlacement { reason: String },
    /// A `[[variant]]` table is malformed.
    #[error("bad variant: {reason}")]
    BadVariant { reason: String },
    /// An `expect` value is malformed.
    #[error("bad expect: {reason}")]
    BadExpectation { reason: String },
    /// The threads of one block do not execute the same number of `bar.sync`.
    #[error("barrier mismatch: {reason}")]
    BarrierMismatch { reason: String },
    /// Any other structural problem of the file (no threads, bad names, ...).
    #[error("{reason}")]
    BadStructure { reason: String },
}

/// Which part of a file a placeholder should have been defined in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaceholderContext {
    /// The file has `[[variant]]`s and this one does not define the placeholder.
    Variant(String),
    /// The file has no `[[variant]]` at all, so nothing defines placeholders.
    NoVariants,
}

impl fmt::Display for PlaceholderContext {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlaceholderContext::Variant(name) => write!(formatter, "by variant `{name}`"),
            PlaceholderContext::NoVariants => {
                formatter.write_str("(the file has no [[variant]] to define placeholders)")
            }
        }
    }
}

/// Why [`crate::allowed_outcomes`] could not decide a test.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ModelError {
    /// The test has more candidate executions than the caller allowed.
    #[error("the test has {candidates} candidate executions, more than the bound of {bound}")]
    TooLarge { candidates: u64, bound: u64 },
    /// The test has more memory-model events than the checker's bit sets hold.
    #[error("the test has {events} memory-model events; the checker handles at most {limit}")]
    TooManyEvents { events: usize, limit: usize },
    /// The test is not well formed (possible only for a test built by hand, not by the parser).
    #[error("the test is malformed: {reason}")]
    MalformedTest { reason: String },
}
