//! The kernel IR of warpsim: typed virtual registers, PTX-like instructions
//! that each carry a source location, a textual form (`.kir`) that a person can
//! write and that round-trips (`parse(print(m)) == m`), a verifier, and the
//! control-flow analyses the machine needs (post-dominators).
//!
//! This crate knows nothing about timing, memory contents or files on disk.
//!
//! # The `.kir` text form
//!
//! ```text
//! // comments run to the end of the line; /* block comments */ too
//! .file 1 "transpose.cu"            // optional: files named by `.loc`
//!
//! .kernel transposePadF(.param .u64 A, .param .u64 B, .param .s32 N)
//! {
//!     .shared .align 4 .f32 tile[1056];     // [.extern] .shared|.local [.align N] .type name[len]
//!     .extern .shared .align 16 .b8 dyn[];   // dynamic shared memory (launch's shared_bytes)
//!     .reg .u32 %tx, %ty;                    // typed virtual registers
//!     .reg .pred %p<2>;                      // %p0, %p1
//!
//!     mov.u32 %tx, %tid.x;                  // special registers: %tid %ntid %ctaid %nctaid (.x .y .z),
//!                                            // %laneid %warpid %nwarpid %clock %clock64 %lanemask_*
//!     .loc 1 42                              // later items are located at line 42 of file 1
//!     setp.ge.u32 %p0, %tx, 32;
//! @%p0 bra DONE;                             // any instruction may be guarded: @%p or @!%p
//!     ld.shared.f32 %f1, [tile+4];           // [reg], [reg+imm], [var], [var+imm], [imm]
//! DONE:
//!     exit;
//! }
//! ```
//!
//! Every statement ends with `;`. Without a `.loc`, an item's location is its
//! own line in the `.kir` file. The instruction spellings follow the PTX ISA;
//! see [`instr::Op`] for the set and the README for a table.

pub mod cfg;
pub mod error;
pub mod instr;
pub mod kernel;
pub mod known_bits;
mod lexer;
pub mod merge;
pub mod parameter_placement;
pub mod parser;
pub mod printer;
pub mod register_sharing;
pub mod schedule;
pub mod types;
pub mod uniformity;
pub mod verify;

pub use error::{ParseError, VerifyError, VerifyProblem};
pub use instr::*;
pub use kernel::*;
pub use parser::{parse_module, parse_ptx};
pub use printer::{instruction_text, print_module};
pub use types::*;
pub use verify::verify_module;

/// Parses and verifies: what a front end hands to the machine.
pub fn parse_and_verify(file_name: &str, text: &str) -> Result<Module, IrError> {
    let module = parse_module(file_name, text)?;
    verify_module(&module)?;
    Ok(module)
}

/// Either kind of IR error.
#[derive(Debug, thiserror::Error)]
pub enum IrError {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Verify(#[from] VerifyError),
}
