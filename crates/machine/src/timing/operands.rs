//! Placeholder until branch `operands` lands: which pipe an instruction
//! issues to and which registers it reads and writes.
use crate::program::{Instruction, Kind, Program};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pipe {
    Fp32,
    Integer,
    IntegerMultiply,
    Fp64,
    Half,
    Sfu,
    Conversion,
    Division,
    WarpShuffle,
    Control,
    Memory(MemoryPipe),
    Barrier,
    Fence,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemoryPipe {
    Shared,
    Global,
    Local,
    Param,
    Const,
    Generic,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Operands {
    pub reads: [u32; 8],
    pub read_count: u8,
    pub writes: [u32; 4],
    pub write_count: u8,
}
impl Operands {
    pub fn reads(&self) -> &[u32] {
        &self.reads[..self.read_count as usize]
    }
    pub fn writes(&self) -> &[u32] {
        &self.writes[..self.write_count as usize]
    }
}
pub(crate) struct InstructionTiming {
    pub pipe: Pipe,
    pub operands: Operands,
}
pub(crate) fn pipe(kind: &Kind) -> Pipe {
    match kind {
        Kind::Fma { .. } | Kind::FloatBinary { .. } => Pipe::Fp32,
        Kind::Load { .. } | Kind::Store { .. } | Kind::Atom { .. } => {
            Pipe::Memory(MemoryPipe::Generic)
        }
        Kind::Barrier { .. } => Pipe::Barrier,
        Kind::Fence => Pipe::Fence,
        _ => Pipe::Integer,
    }
}
pub(crate) fn operands(_instruction: &Instruction, _value_regs: u32) -> Operands {
    Operands {
        reads: [0; 8],
        read_count: 0,
        writes: [0; 4],
        write_count: 0,
    }
}
pub(crate) fn instruction_timings(program: &Program) -> Vec<InstructionTiming> {
    program
        .code
        .iter()
        .map(|instruction| InstructionTiming {
            pipe: pipe(&instruction.kind),
            operands: operands(instruction, program.value_regs),
        })
        .collect()
}
