//! The execution pipe and the registers read and written of every lowered
//! instruction: what the cycle model needs so that a warp's scoreboard can
//! hold an instruction until its sources are ready, and send it to its pipe.
//!
//! The pipes follow the units of an H100 SM as the H100 whitepaper counts
//! them (per SM: 128 FP32 lanes, 64 INT32 lanes, 64 FP64 lanes and 16
//! special-function lanes, in four sub-partitions), the per-sub-partition
//! pipes of Huerta et al. ("Dissecting and modeling the architecture of
//! modern GPU cores", MICRO 2023), and Accel-Sim's table of the unit each
//! SASS opcode runs on (Khairy et al., ISCA 2020;
//! `gpu-simulator/ISA_Def/ampere_opcode.h`), which sends `MUFU` to the
//! special-function unit, `DADD`, `DFMA`, `DMUL` and `DSETP` to the FP64
//! unit, and keeps the conversions `F2F`, `I2F`, `I2I` apart from the
//! integer arithmetic; the H200's rates per opcode
//! (`programs/timing/hardware/h200-pipes.txt`) put `F2I` on the XU with
//! `MUFU`, and Hopper's `I2FP` and the logic, shifts, compares and selects
//! on the 16-lane ALU. Integer multiplies (`IMAD`) get a pipe of their
//! own because `[timing]` gives them their own numbers. Where a PTX
//! instruction becomes a sequence of SASS instructions (integer division,
//! IEEE float division and square root, every `f64` division and square
//! root) it gets the `Division` pipe, whose latency and issue interval
//! stand for the whole sequence.
//!
//! The registers come from what `semantics.rs`, `access.rs`,
//! `warp_sync.rs` and `block.rs` read and write at run time, not from the
//! shape of [`Kind`]: an unused slot of a vector, the `c` operand of a
//! saturating add, or a predicate `x or not x` that does not depend on `x`
//! is not a read.

use warpsim_ir::{BarrierReduction, SpecialReg, StateSpace, VoteMode};

use crate::program::{
    FloatBinary, FloatType, FloatUnary, IntBinary, IntUnary, Kind, NumberType, SatOp, ValueReg,
    WarpInit,
};
use crate::program::{Instruction, Program};

/// The execution pipe an instruction issues to (its latency and issue
/// interval come from `[timing]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pipe {
    /// `f32` add, subtract, multiply, fused multiply-add, negate, absolute
    /// value and saturation (`FFMA`, `FADD`, `FMUL`: both halves of the FMA
    /// pipe, a warp instruction a cycle).
    Fp32,
    /// The ALU pipe, 16 lanes a sub-partition (hardware/h200-pipes.txt:
    /// `SHF`, `LOP3`, `PRMT`, `VIMNMX`, `FMNMX`, `ISETP`, `FSETP`, `SEL`
    /// 2.0-2.1 cycles a warp instruction): integer logic, right shifts,
    /// minimum and maximum, `not` and `abs`; `f32` minimum and maximum;
    /// integer and `f32` `setp`, `set` and `testp`, `f32` copysign;
    /// `selp`; predicate logic; `lop3`, `shf`, `prmt`, `bfe`, `bfi`;
    /// `activemask`; `sad`; saturating and carrying adds, and 64-bit adds,
    /// subtracts and left shifts; `cvt` of a 32-bit integer to `f32`
    /// (`I2FP`). A `bfe` of a run-time position is three ALU instructions
    /// (`PRMT`, `SGXT`, `SHF`: 6.25 cycles in h200-pipes.txt), issued here
    /// as one.
    Alu,
    /// Integer add, subtract, move, negate and left shift of 32 bits or
    /// fewer; packing and unpacking; `cvta`. ptxas gives each to the ALU (`IADD3`, `LEA`,
    /// `MOV`, `SHF`) or to the FMA pipe's heavy half (`IMAD.IADD`, `VIADD`,
    /// `IMAD.MOV`, `IMAD.SHL`), balancing the two (h200-pipes.txt: an add
    /// beside ALU work became `VIADD`, beside FP32 work `IADD3`); the
    /// model issues it to whichever of the two is free, the ALU first.
    Integer,
    /// `mul.lo`, `mul.hi`, `mul.wide`, `mad`, `mul24` and `mad.hi.sat`
    /// (`IMAD` on the hardware, the FMA pipe's heavy half).
    IntegerMultiply,
    /// `f64` arithmetic, fused multiply-add, comparisons, negate and
    /// absolute value.
    Fp64,
    /// `f16` and `bf16` arithmetic, single or in pairs: add, multiply,
    /// fused multiply-add, comparisons.
    Half,
    /// The XU pipe (NVIDIA's transcendental and conversion unit), a
    /// quarter of a warp a cycle: the approximate transcendentals of `f32`
    /// (`MUFU`): `rsqrt`, `ex2`, `lg2`, `sin`, `cos`; population count,
    /// bit reversal, and leading zeros and bit find (`POPC`, `BREV`, `FLO`);
    /// `cvt` from a float to an integer (`F2I`). h200-pipes.txt measured
    /// `POPC`, `BREV` and `F2I` at 8.0 cycles a warp instruction, as
    /// `MUFU`; `FLO` is taken to be theirs.
    Sfu,
    /// `cvt` of every other flavour.
    Conversion,
    /// Integer division and remainder, IEEE `f32` division, square root and
    /// reciprocal, and every `f64` division, square root, reciprocal and
    /// transcendental: instruction sequences on real hardware.
    Division,
    /// `shfl`, `vote`, `redux` and `match`.
    WarpShuffle,
    /// Branches, exits, `nanosleep`, `trap`, assertions, `printf`,
    /// `bar.warp.sync` and clock reads: issue cost only.
    Control,
    /// Loads, stores and atomics, by state space.
    Memory(MemoryPipe),
    /// `bar.sync`, `bar.arrive`, `bar.red`.
    Barrier,
    /// `membar` and `fence`.
    Fence,
    /// `mma.sync` on the tensor cores, by rate class.
    Tensor(TensorRate),
}

/// The classes of `mma.sync` that an H100 runs at different latencies and
/// rates (`programs/tensor/hardware/probe/timing.txt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TensorRate {
    /// m16n8k16 `.f16`/`.bf16`, m16n8k8 `.tf32` and m16n8k32 `.s8`/`.u8`:
    /// 24 cycles, one per 6.2 cycles per warp.
    Full,
    /// m16n8k8 `.f16`/`.bf16`: 17 cycles, one per 4.2 cycles per warp.
    Half,
    /// m8n8k4 `.f64`: 26 cycles, one per 17.2 cycles per warp.
    Double,
}

/// The memory path a load, store or atomic takes, named by its state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemoryPipe {
    Shared,
    Global,
    Local,
    Param(ConstantCache),
    Const(ConstantCache),
    /// A read of `%ntid` or `%nctaid`: ptxas reads the block's and grid's
    /// shape from constant bank 0 (`ULDC c[0x0][0x0]`, or `LDC` of it),
    /// in the line below the parameters
    /// (`programs/timing/hardware/h200-constant-reads.txt`).
    LaunchShape,
    /// A generic address, resolved to a space per lane at run time.
    Generic,
}

/// Which of an SM's two first-level constant caches a read of the
/// parameters or constants goes through. They miss apart: on an H200,
/// `storeSpinBarrier` waits for its spin count (`ULDC`) and then for its
/// pointer (`LDC.64`, the same 64-byte line) a first-level miss each
/// (`programs/timing/hardware/h200-tails.txt`, docs/timing.md,
/// "Parameters where ptxas reads them").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ConstantCache {
    /// `LDC`: a load into a register through the indexed constant cache,
    /// as ptxas loads a 64-bit parameter (a pointer, `LDC.64`) and a
    /// constant at an address in a register. A hit takes
    /// `timing.constant_load_latency`.
    Indexed,
    /// An operand of the constant bank (`c[0x0][0x220]`, or `ULDC` into a
    /// uniform register), as ptxas reads other parameters and constants at
    /// fixed addresses: a hit costs what a register operand costs.
    Operand,
}

/// The registers an instruction reads and writes, as one index space: value
/// register `r` is `r`, predicate register `p` is `value_regs + p`.
///
/// No index appears twice in `reads` or twice in `writes`. The arrays are
/// large enough for every kind: at most 25 reads (a guarded `wmma.mma`:
/// guard, eight registers each of A, B and C) and eight writes (a
/// `wmma.load` or `wmma.mma` of eight registers). The compiler checks
/// every kind's count against the arrays (see `gather`) in any build that
/// calls [`operands`], the machine's tests included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Operands {
    pub reads: [u32; 28],
    pub read_count: u8,
    pub writes: [u32; 8],
    pub write_count: u8,
}

impl Operands {
    /// The registers read, guard first, then the sources in operand order.
    pub fn reads(&self) -> &[u32] {
        &self.reads[..usize::from(self.read_count)]
    }

    /// The registers written, in operand order.
    pub fn writes(&self) -> &[u32] {
        &self.writes[..usize::from(self.write_count)]
    }
}

/// What the cycle model needs of one instruction of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InstructionTiming {
    pub pipe: Pipe,
    pub operands: Operands,
}

/// The pipe and operands of every instruction of `program`, by program
/// counter (one per entry of `program.code`, the final implicit exit
/// included).
///
/// The operands are those of [`Program::scoreboard_code`], a register per
/// PTX register, so registers that share storage do not wait on each other.
pub(crate) fn instruction_timings(program: &Program) -> Vec<InstructionTiming> {
    let shape_registers: Vec<ValueReg> = program
        .warp_inits
        .iter()
        .filter(|(_, init)| {
            matches!(
                init,
                WarpInit::Special(SpecialReg::Ntid(_) | SpecialReg::Nctaid(_))
            )
        })
        .map(|&(register, _)| register)
        .collect();
    // The two lowerings hold the same instructions, one for one.
    assert_eq!(program.scoreboard_code.len(), program.code.len());
    program
        .scoreboard_code
        .iter()
        .zip(&program.code)
        .map(|(instruction, executed)| InstructionTiming {
            pipe: match executed.kind {
                // A move of the launch's shape reads the constant bank.
                Kind::IntUnary {
                    op: IntUnary::Mov,
                    a,
                    ..
                } if shape_registers.contains(&a) => Pipe::Memory(MemoryPipe::LaunchShape),
                ref kind => pipe(kind),
            },
            operands: operands(instruction, program.scoreboard_value_regs),
        })
        .collect()
}

/// The memory pipe of an access to `space`; `cache` is the constant cache
/// a read of the parameters or constants goes through.
fn memory_pipe(space: StateSpace, cache: ConstantCache) -> MemoryPipe {
    match space {
        StateSpace::Shared => MemoryPipe::Shared,
        StateSpace::Global => MemoryPipe::Global,
        StateSpace::Local => MemoryPipe::Local,
        StateSpace::Param => MemoryPipe::Param(cache),
        StateSpace::Const => MemoryPipe::Const(cache),
        StateSpace::Generic => MemoryPipe::Generic,
    }
}

/// The constant cache ptxas reads a load of `bytes` a lane at `addr` from
/// (a parameter or a constant): the indexed one for a 64-bit value (a
/// pointer, which ptxas loads with `LDC.64` to compute addresses from) or
/// an address in a register, else the constant-bank operand.
fn constant_cache(bytes: u8, addr: &crate::program::LoweredAddress) -> ConstantCache {
    if bytes >= 8 || addr.base.is_some() {
        ConstantCache::Indexed
    } else {
        ConstantCache::Operand
    }
}

/// The pipe of an operation on a float of type `ty` that runs on the float
/// units (not a sequence): FP32 or FP64.
fn float_pipe(ty: FloatType) -> Pipe {
    match ty {
        FloatType::F32 => Pipe::Fp32,
        FloatType::F64 => Pipe::Fp64,
    }
}

/// The pipe of a comparison of numbers of type `ty`, or of another
/// operation that is an ALU instruction in `f32` (`FSETP`, `FMNMX`, a
/// copysign's `LOP3`) and an FP64 one in `f64` (`DSETP`, `DMNMX`; an `f64`
/// copysign, a `LOP3` of the high word, is taken to be one too).
fn compare_pipe(ty: NumberType) -> Pipe {
    match ty {
        NumberType::Int(_) | NumberType::Float(FloatType::F32) => Pipe::Alu,
        NumberType::Float(FloatType::F64) => Pipe::Fp64,
    }
}

/// The execution pipe `kind` issues to.
///
/// Every match here lists its variants in full, with no catch-all arm, so
/// that a new kind or operation does not compile until someone decides
/// where it runs.
pub(crate) fn pipe(kind: &Kind) -> Pipe {
    match *kind {
        // A 64-bit add or subtract is `IADD3` and `IADD3.X`, which carry
        // through a predicate only the ALU has; a 64-bit shift is `SHF`s.
        Kind::IntBinary {
            op: IntBinary::Add | IntBinary::Sub | IntBinary::Shl,
            ty,
            ..
        } if ty.bits == 64 => Pipe::Alu,
        Kind::IntBinary { op, .. } => match op {
            IntBinary::Add | IntBinary::Sub | IntBinary::Shl => Pipe::Integer,
            IntBinary::Min
            | IntBinary::Max
            | IntBinary::And
            | IntBinary::Or
            | IntBinary::Xor
            | IntBinary::Shr => Pipe::Alu,
            IntBinary::MulLo | IntBinary::MulHi | IntBinary::MulWide => Pipe::IntegerMultiply,
            // No GPU divides integers in one instruction: ptxas emits a
            // reciprocal estimate and a correction of a dozen or more
            // instructions.
            IntBinary::Div | IntBinary::Rem => Pipe::Division,
        },
        Kind::FloatBinary { op, ty, .. } => match op {
            FloatBinary::Add | FloatBinary::Sub | FloatBinary::Mul => float_pipe(ty),
            FloatBinary::Min | FloatBinary::Max => compare_pipe(NumberType::Float(ty)),
            // The parser keeps no trace of `.approx` and `.full`, so every
            // `div.f32` is taken to be the IEEE `div.rn.f32` that CUDA
            // compiles `/` to without `-use_fast_math`, a sequence.
            FloatBinary::Div => Pipe::Division,
        },
        Kind::IntUnary { op, .. } => match op {
            IntUnary::Mov | IntUnary::Neg => Pipe::Integer,
            IntUnary::Abs | IntUnary::Not => Pipe::Alu,
            IntUnary::Popc
            | IntUnary::Clz
            | IntUnary::Brev
            | IntUnary::Bfind
            | IntUnary::BfindShiftAmount => Pipe::Sfu,
        },
        Kind::FloatUnary { op, ty, .. } => match (op, ty) {
            (FloatUnary::Neg | FloatUnary::Abs, _) => float_pipe(ty),
            // `rsqrt`, `ex2`, `lg2`, `sin` and `cos` exist in PTX for `f32`
            // only as `.approx`, which is one `MUFU` instruction.
            (
                FloatUnary::Rsqrt
                | FloatUnary::Ex2
                | FloatUnary::Lg2
                | FloatUnary::Sin
                | FloatUnary::Cos,
                FloatType::F32,
            ) => Pipe::Sfu,
            // `sqrt.f32` and `rcp.f32` may be `.approx` (one `MUFU`) or
            // `.rn` (a sequence around one), but lowering cannot tell them
            // apart: they are taken to be the IEEE forms that CUDA emits by
            // default, as the machine computes them.
            (FloatUnary::Sqrt | FloatUnary::Rcp, FloatType::F32) => Pipe::Division,
            // In `f64` every one of these is a sequence: a `MUFU` estimate
            // of the high word refined by FP64 fused multiply-adds. (The
            // verifier lets only `sqrt`, `rcp` and `rsqrt` through for
            // `f64`.)
            (
                FloatUnary::Sqrt
                | FloatUnary::Rcp
                | FloatUnary::Rsqrt
                | FloatUnary::Ex2
                | FloatUnary::Lg2
                | FloatUnary::Sin
                | FloatUnary::Cos,
                FloatType::F64,
            ) => Pipe::Division,
        },
        Kind::IntMulAdd { .. } | Kind::Mul24 { .. } => Pipe::IntegerMultiply,
        Kind::Fma { ty, .. } => float_pipe(ty),
        // `F2I` on the XU pipe, a 32-bit integer to `f32` (`I2FP` on
        // Hopper) on the ALU; every other conversion (`I2F` of 64 bits or to
        // `f64`, `F2FP`, `F2F`) on the conversion pipe.
        Kind::Cvt {
            dst_ty: NumberType::Int(_),
            src_ty: NumberType::Float(_),
            ..
        } => Pipe::Sfu,
        Kind::Cvt {
            dst_ty: NumberType::Float(FloatType::F32),
            src_ty: NumberType::Int(source),
            ..
        } if source.bits <= 32 => Pipe::Alu,
        Kind::CvtHalf { .. }
        | Kind::CvtToBf16 { .. }
        | Kind::CvtFromBf16 { .. }
        | Kind::CvtPair { .. }
        | Kind::Cvt { .. } => Pipe::Conversion,
        Kind::HalfBinary { .. }
        | Kind::HalfUnary { .. }
        | Kind::HalfFma { .. }
        | Kind::Bf16Binary { .. }
        | Kind::Bf16Unary { .. }
        | Kind::Bf16Fma { .. }
        | Kind::Bf16Setp { .. }
        | Kind::HalfSet { .. }
        | Kind::HalfSetp { .. } => Pipe::Half,
        Kind::SatS32 { op, .. } => match op {
            SatOp::Add | SatOp::Sub => Pipe::Alu,
            // `mad.hi.sat.s32` multiplies (lowering makes no `Mul` for
            // `s32`, but the semantics would run it as `MulAdd`).
            SatOp::Mul | SatOp::MulAdd => Pipe::IntegerMultiply,
        },
        Kind::SatF32 { .. } | Kind::FmaDirected { .. } => Pipe::Fp32,
        Kind::Setp { ty, .. } => compare_pipe(ty),
        Kind::Set { ty, half, .. } => match half {
            Some(_) => Pipe::Half,
            None => compare_pipe(ty),
        },
        Kind::Testp { ty, .. } | Kind::CopySign { ty, .. } => compare_pipe(NumberType::Float(ty)),
        Kind::Selp { .. }
        | Kind::PredBinary { .. }
        | Kind::Sad { .. }
        | Kind::BitFieldExtract { .. }
        | Kind::BitFieldInsert { .. }
        | Kind::Permute { .. }
        | Kind::ActiveMask { .. }
        | Kind::FunnelShift { .. }
        | Kind::Lop3 { .. } => Pipe::Alu,
        Kind::Pack { .. } | Kind::Unpack { .. } | Kind::Cvta { .. } => Pipe::Integer,
        Kind::Load {
            space,
            value,
            ref addr,
            ..
        } => Pipe::Memory(memory_pipe(space, constant_cache(value.size, addr))),
        Kind::Store { space, .. } | Kind::Atom { space, .. } => {
            Pipe::Memory(memory_pipe(space, ConstantCache::Indexed))
        }
        Kind::Barrier { .. } => Pipe::Barrier,
        Kind::Fence { .. } => Pipe::Fence,
        // Asynchronous copies go through the global memory pipe (`LDGSTS`,
        // `UBLKCP`); the rest are `SYNCS` and dependency-barrier
        // instructions, taken to be control instructions.
        Kind::CpAsync { .. } | Kind::CpAsyncBulk { .. } => Pipe::Memory(MemoryPipe::Global),
        Kind::CpAsyncCommitGroup
        | Kind::CpAsyncWait { .. }
        | Kind::CpAsyncMbarrierArrive { .. }
        | Kind::Mbarrier { .. }
        | Kind::MbarrierPendingCount { .. } => Pipe::Control,
        Kind::Shuffle { .. } | Kind::Vote { .. } | Kind::Redux { .. } | Kind::Match { .. } => {
            Pipe::WarpShuffle
        }
        // Tensor-core instructions.
        Kind::MatrixAccess { space, .. } => {
            Pipe::Memory(memory_pipe(space, ConstantCache::Indexed))
        }
        Kind::Mma { ref operation } => Pipe::Tensor(match (operation.shape, operation.a_type) {
            (warpsim_ir::MmaShape::M8N8K4, _) => TensorRate::Double,
            (
                warpsim_ir::MmaShape::M16N8K8,
                warpsim_ir::MmaType::F16 | warpsim_ir::MmaType::Bf16,
            ) => TensorRate::Half,
            _ => TensorRate::Full,
        }),
        Kind::Wmma { ref operation } => match **operation {
            crate::tensor::WmmaOperation::Load { space, .. }
            | crate::tensor::WmmaOperation::Store { space, .. } => {
                Pipe::Memory(memory_pipe(space, ConstantCache::Indexed))
            }
            // Two m16n8k16 `HMMA` on an H100; the pipe's interval is one's.
            crate::tensor::WmmaOperation::Mma { .. } => Pipe::Tensor(TensorRate::Full),
        },
        Kind::ReadClock { .. }
        | Kind::WarpSync { .. }
        | Kind::Branch { .. }
        | Kind::Exit
        | Kind::Printf { .. }
        | Kind::AssertFail { .. }
        | Kind::Trap
        | Kind::Nop => Pipe::Control,
        // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions. ptxas compiles
        // `dp4a`/`dp2a` to `IDP`, and `mad24` (sm_70 and later have no
        // 24-bit multiplier), `mad.cc` and `madc` to `IMAD` forms, all on
        // the multiply pipe; `add.cc`, `addc`, `sub.cc` and `subc` to
        // `IADD3` with a carry predicate, on the ALU.
        Kind::DotProduct { .. } | Kind::MulAdd24 { .. } => Pipe::IntegerMultiply,
        Kind::CarryArith { op, .. } => match op {
            warpsim_ir::CarryOp::Add | warpsim_ir::CarryOp::Sub => Pipe::Alu,
            warpsim_ir::CarryOp::MulAddLow | warpsim_ir::CarryOp::MulAddHigh => {
                Pipe::IntegerMultiply
            }
        },
        Kind::ReduxFloat { .. } => Pipe::WarpShuffle,
        Kind::CvtTf32 { .. }
        | Kind::CvtToFp8 { .. }
        | Kind::CvtFromFp8 { .. }
        | Kind::CvtBf16Relu { .. } => Pipe::Conversion,
        Kind::NarrowFloat {
            function, element, ..
        } => match function {
            warpsim_ir::NarrowFloatFunction::Tanh | warpsim_ir::NarrowFloatFunction::Ex2 => {
                Pipe::Sfu
            }
            warpsim_ir::NarrowFloatFunction::FromF32 { .. } => Pipe::Conversion,
            warpsim_ir::NarrowFloatFunction::MinXorSignAbs { .. }
            | warpsim_ir::NarrowFloatFunction::MaxXorSignAbs { .. } => {
                if element == crate::scalar_ops::NarrowElement::Single {
                    Pipe::Fp32
                } else {
                    Pipe::Half
                }
            }
        },
    }
}

/// The first `count` registers of a vector operand (the slots past it hold
/// 0 and are not used).
fn first(registers: [ValueReg; 4], count: u8) -> [Option<u32>; 4] {
    let mut slots = [None; 4];
    for (index, (slot, register)) in slots.iter_mut().zip(registers).enumerate() {
        if index < usize::from(count) {
            *slot = Some(register);
        }
    }
    slots
}

/// Gathers the guard and the `reads` and `writes` that are present into
/// [`Operands`], leaving out repeated registers.
///
/// The sizes of the arrays are the most registers each kind can name, so
/// the checks below, which the compiler makes for every size `operands`
/// passes, prove that no kind overflows [`Operands`]: the guard and at
/// most 27 other reads, at most eight writes. A kind that named more
/// would not compile.
fn gather<const READS: usize, const WRITES: usize>(
    guard: Option<u32>,
    reads: [Option<u32>; READS],
    writes: [Option<u32>; WRITES],
) -> Operands {
    const {
        assert!(
            READS < 28,
            "a kind reads at most 27 registers besides its guard"
        );
        assert!(WRITES <= 8, "a kind writes at most eight registers");
    }
    let mut operands = Operands {
        reads: [0; 28],
        read_count: 0,
        writes: [0; 8],
        write_count: 0,
    };
    for register in std::iter::once(guard).chain(reads).flatten() {
        if !operands.reads().contains(&register) {
            operands.reads[usize::from(operands.read_count)] = register;
            operands.read_count += 1;
        }
    }
    for register in writes.into_iter().flatten() {
        if !operands.writes().contains(&register) {
            operands.writes[usize::from(operands.write_count)] = register;
            operands.write_count += 1;
        }
    }
    operands
}

/// The registers `instruction` reads and writes, in the index space of
/// [`Operands`] (`value_regs` is the program's number of value registers).
///
/// Hidden registers (literals, special registers, variable addresses) are
/// value registers like any other: they are filled when a warp starts and
/// never written, so they never hold an instruction back.
pub(crate) fn operands(instruction: &Instruction, value_regs: u32) -> Operands {
    let value = Some;
    let predicate = |register: u32| Some(value_regs + register);
    // Every lane's guard bit is read before the instruction does anything.
    let guard = instruction.guard.map(|guard| value_regs + guard.pred);
    match instruction.kind {
        Kind::IntBinary { dst, a, b, .. }
        | Kind::FloatBinary { dst, a, b, .. }
        | Kind::HalfBinary { dst, a, b, .. }
        | Kind::Bf16Binary { dst, a, b, .. }
        | Kind::CvtPair { dst, a, b, .. }
        | Kind::Mul24 { dst, a, b, .. }
        | Kind::CopySign { dst, a, b, .. } => gather(guard, [value(a), value(b)], [value(dst)]),
        Kind::IntUnary { dst, a, .. }
        | Kind::FloatUnary { dst, a, .. }
        | Kind::HalfUnary { dst, a, .. }
        | Kind::Bf16Unary { dst, a, .. } => gather(guard, [value(a)], [value(dst)]),
        Kind::CvtHalf { dst, src, .. }
        | Kind::CvtToBf16 { dst, src, .. }
        | Kind::CvtFromBf16 { dst, src, .. }
        | Kind::Cvt { dst, src, .. }
        | Kind::Cvta { dst, src, .. } => gather(guard, [value(src)], [value(dst)]),
        Kind::IntMulAdd { dst, a, b, c, .. }
        | Kind::Fma { dst, a, b, c, .. }
        | Kind::HalfFma { dst, a, b, c, .. }
        | Kind::Bf16Fma { dst, a, b, c, .. }
        | Kind::FmaDirected { dst, a, b, c, .. }
        | Kind::Sad { dst, a, b, c, .. }
        | Kind::FunnelShift { dst, a, b, c, .. }
        | Kind::Lop3 { dst, a, b, c, .. } => {
            gather(guard, [value(a), value(b), value(c)], [value(dst)])
        }
        Kind::BitFieldExtract {
            dst,
            a,
            position,
            length,
            ..
        } => gather(
            guard,
            [value(a), value(position), value(length)],
            [value(dst)],
        ),
        Kind::BitFieldInsert {
            dst,
            field,
            base,
            position,
            length,
            ..
        } => gather(
            guard,
            [value(field), value(base), value(position), value(length)],
            [value(dst)],
        ),
        Kind::Permute {
            dst,
            a,
            b,
            selector,
        } => gather(guard, [value(a), value(b), value(selector)], [value(dst)]),
        // The `c` of a saturating instruction is read only by the forms
        // whose semantics take three operands; lowering fills it with `a`
        // for the others.
        Kind::SatS32 { op, dst, a, b, c } => {
            let three = matches!(op, SatOp::Mul | SatOp::MulAdd);
            gather(
                guard,
                [value(a), value(b), three.then_some(c)],
                [value(dst)],
            )
        }
        Kind::SatF32 { op, dst, a, b, c } => {
            let three = op == SatOp::MulAdd;
            gather(
                guard,
                [value(a), value(b), three.then_some(c)],
                [value(dst)],
            )
        }
        // Comparisons into predicates: `setp d|q, a, b, op, c` reads the
        // predicate `c` it combines with and writes one or two predicates.
        Kind::Setp {
            dst,
            dst_not,
            a,
            b,
            combine,
            ..
        }
        | Kind::Bf16Setp {
            dst,
            dst_not,
            a,
            b,
            combine,
            ..
        }
        | Kind::HalfSetp {
            dst,
            dst_not,
            a,
            b,
            combine,
            ..
        } => gather(
            guard,
            [
                value(a),
                value(b),
                combine.and_then(|(_, register, _)| predicate(register)),
            ],
            [predicate(dst), dst_not.and_then(predicate)],
        ),
        // Comparisons into value registers, combined with a predicate too.
        Kind::Set {
            dst, a, b, combine, ..
        }
        | Kind::HalfSet {
            dst, a, b, combine, ..
        } => gather(
            guard,
            [
                value(a),
                value(b),
                combine.and_then(|(_, register, _)| predicate(register)),
            ],
            [value(dst)],
        ),
        Kind::Testp { dst, a, .. } => gather(guard, [value(a)], [predicate(dst)]),
        Kind::Selp {
            dst, a, b, cond, ..
        } => gather(guard, [value(a), value(b), predicate(cond)], [value(dst)]),
        Kind::PredBinary {
            dst,
            a,
            a_negated,
            b,
            b_negated,
            ..
        } => {
            // `mov.pred p, 1` and `mov.pred p, 0` are lowered to `p or !p`
            // and `p and !p`: a register combined with its own negation
            // gives the same result whatever it holds, so it is not a
            // dependency.
            let constant = a == b && a_negated != b_negated;
            let sources = if constant {
                [None, None]
            } else {
                [predicate(a), predicate(b)]
            };
            gather(guard, sources, [predicate(dst)])
        }
        Kind::ReadClock { dst, .. } | Kind::ActiveMask { dst } => gather(guard, [], [value(dst)]),
        // A load reads its address register and writes the first `count`
        // registers of its vector; a store reads both.
        Kind::Load {
            dst, count, addr, ..
        } => gather(guard, [addr.base], first(dst, count)),
        Kind::Store {
            src, count, addr, ..
        } => {
            let [first_source, second, third, fourth] = first(src, count);
            gather(guard, [addr.base, first_source, second, third, fourth], [])
        }
        // `atom` reads its address, its operand and the second operand of
        // `cas`; it writes the old value unless it is a `red`.
        Kind::Atom {
            dst, addr, a, b, ..
        } => gather(guard, [addr.base, value(a), b], [dst]),
        // The barrier's number and thread count, and the predicate `bar.red`
        // reduces; `bar.red.popc` writes a count into a value register,
        // `bar.red.and` and `.or` a predicate (warp.rs, where a path leaves
        // the barrier).
        Kind::Barrier {
            id,
            count,
            reduction,
            ..
        } => {
            let reduced = reduction.and_then(|reduction| predicate(reduction.pred));
            let result = reduction.map(|reduction| match reduction.reduction {
                BarrierReduction::Popc => reduction.dst,
                BarrierReduction::And | BarrierReduction::Or => value_regs + reduction.dst,
            });
            gather(guard, [value(id), count, reduced], [result])
        }
        Kind::WarpSync { mask } => gather(guard, [value(mask)], []),
        // Asynchronous copies and mbarriers: their address registers and
        // operands; a wait writes its predicate, `arrive` its state.
        Kind::CpAsync {
            dst, src, src_size, ..
        } => gather(guard, [dst.base, src.base, src_size], []),
        Kind::CpAsyncBulk {
            dst,
            src,
            size,
            mbarrier,
        } => gather(guard, [dst.base, src.base, value(size), mbarrier.base], []),
        Kind::CpAsyncMbarrierArrive { addr, .. } => gather(guard, [addr.base], []),
        Kind::CpAsyncCommitGroup | Kind::CpAsyncWait { .. } => gather(guard, [], []),
        Kind::Mbarrier { action, addr, .. } => match action {
            crate::program::MbarrierAction::Init { count: operand }
            | crate::program::MbarrierAction::ExpectTx { bytes: operand }
            | crate::program::MbarrierAction::CompleteTx { bytes: operand } => {
                gather(guard, [addr.base, value(operand)], [])
            }
            crate::program::MbarrierAction::Arrive {
                state,
                count,
                expect_tx,
                ..
            } => gather(guard, [addr.base, count, expect_tx], [state]),
            crate::program::MbarrierAction::Wait { done, phase, .. } => {
                gather(guard, [addr.base, value(phase)], [predicate(done)])
            }
            crate::program::MbarrierAction::Invalidate => gather(guard, [addr.base], []),
        },
        Kind::MbarrierPendingCount { dst, state } => gather(guard, [value(state)], [value(dst)]),
        Kind::Fence { .. } | Kind::Branch { .. } | Kind::Exit | Kind::Trap | Kind::Nop => {
            gather(guard, [], [])
        }
        // `shfl.sync d|p, a, b, c, mask`: the predicate says whether the
        // source lane was in range.
        Kind::Shuffle {
            dst,
            dst_pred,
            a,
            b,
            c,
            mask,
            ..
        } => gather(
            guard,
            [value(a), value(b), value(c), value(mask)],
            [value(dst), dst_pred.and_then(predicate)],
        ),
        // `vote.ballot` gives a lane mask in a value register; `vote.all`,
        // `.any` and `.uni` a predicate (warp_sync.rs, `vote`).
        Kind::Vote {
            mode,
            dst,
            pred,
            mask,
            ..
        } => {
            let result = match mode {
                VoteMode::Ballot => value(dst),
                VoteMode::All | VoteMode::Any | VoteMode::Uniform => predicate(dst),
            };
            gather(guard, [predicate(pred), value(mask)], [result])
        }
        Kind::Redux { dst, a, mask, .. } => gather(guard, [value(a), value(mask)], [value(dst)]),
        // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions. The carry flag is a
        // register like the others: read by the `c` forms, written by the
        // `.cc` ones, so `addc` waits for the `add.cc` before it.
        Kind::DotProduct { dst, a, b, c, .. } | Kind::MulAdd24 { dst, a, b, c, .. } => {
            gather(guard, [value(a), value(b), value(c)], [value(dst)])
        }
        Kind::CarryArith {
            op,
            carry_in,
            carry_out,
            dst,
            a,
            b,
            c,
            carry,
            ..
        } => {
            let is_mad = matches!(
                op,
                warpsim_ir::CarryOp::MulAddLow | warpsim_ir::CarryOp::MulAddHigh
            );
            gather(
                guard,
                [
                    value(a),
                    value(b),
                    is_mad.then_some(c),
                    carry_in.then_some(carry),
                ],
                [value(dst), carry_out.then_some(carry)],
            )
        }
        Kind::ReduxFloat { dst, a, mask, .. } => {
            gather(guard, [value(a), value(mask)], [value(dst)])
        }
        Kind::CvtTf32 { dst, src, .. }
        | Kind::CvtFromFp8 { dst, src, .. }
        | Kind::CvtBf16Relu { dst, src, .. } => gather(guard, [value(src)], [value(dst)]),
        Kind::CvtToFp8 {
            from_f32,
            dst,
            a,
            b,
            ..
        } => gather(guard, [value(a), from_f32.then_some(b)], [value(dst)]),
        Kind::NarrowFloat {
            has_b, dst, a, b, ..
        } => gather(guard, [value(a), has_b.then_some(b)], [value(dst)]),
        Kind::Match {
            dst,
            dst_pred,
            a,
            mask,
            ..
        } => gather(
            guard,
            [value(a), value(mask)],
            [value(dst), dst_pred.and_then(predicate)],
        ),
        Kind::Pack {
            count, dst, src, ..
        } => gather(guard, first(src, count), [value(dst)]),
        // Only the elements kept (not the sink `_`) are written.
        Kind::Unpack {
            count,
            keep,
            dst,
            src,
            ..
        } => {
            let mut written = first(dst, count);
            for (index, slot) in written.iter_mut().enumerate() {
                if keep >> index & 1 == 0 {
                    *slot = None;
                }
            }
            gather(guard, [value(src)], written)
        }
        // `printf` writes the number of arguments it took, when asked.
        Kind::Printf {
            dst,
            format,
            arguments,
        } => gather(guard, [value(format), value(arguments)], [dst]),
        Kind::AssertFail {
            message,
            file,
            line,
            function,
        } => gather(
            guard,
            [value(message), value(file), value(line), value(function)],
            [],
        ),
        // Tensor-core instructions. `ldmatrix` reads its address and writes
        // one register per matrix; `stmatrix` reads both.
        Kind::MatrixAccess {
            store,
            matrices,
            registers,
            addr,
            ..
        } => {
            let [first_register, second, third, fourth] = first(registers, matrices);
            if store {
                gather(
                    guard,
                    [addr.base, first_register, second, third, fourth],
                    [],
                )
            } else {
                gather(guard, [addr.base], [first_register, second, third, fourth])
            }
        }
        // WMMA: loads read the address and stride and write the fragment,
        // stores read all three, `wmma.mma` reads A, B and C and writes D.
        Kind::Wmma { ref operation } => {
            fn padded<const N: usize>(registers: &[ValueReg]) -> [Option<u32>; N] {
                let mut slots = [None; N];
                for (slot, &register) in slots.iter_mut().zip(registers) {
                    *slot = Some(register);
                }
                slots
            }
            match &**operation {
                crate::tensor::WmmaOperation::Load {
                    registers,
                    addr,
                    stride,
                    ..
                } => gather(guard, [addr.base, *stride], padded::<8>(registers)),
                crate::tensor::WmmaOperation::Store {
                    registers,
                    addr,
                    stride,
                    ..
                } => {
                    let sources: [Option<u32>; 8] = padded(registers);
                    let mut reads = [None; 10];
                    reads[0] = addr.base;
                    reads[1] = *stride;
                    reads[2..].copy_from_slice(&sources);
                    gather(guard, reads, [])
                }
                crate::tensor::WmmaOperation::Mma { d, a, b, c, .. } => {
                    let all: Vec<ValueReg> = a.iter().chain(b).chain(c).copied().collect();
                    gather(guard, padded::<24>(&all), padded::<8>(d))
                }
            }
        }
        // `mma` reads every register of A, B and C and writes D's.
        Kind::Mma { ref operation } => {
            let fragments = operation.fragments;
            let used = |registers: &[ValueReg], count: usize, index: usize| {
                (index < count).then(|| registers[index])
            };
            let (a, b, c) = (&operation.a, &operation.b, &operation.c);
            gather(
                guard,
                [
                    used(a, fragments.a, 0),
                    used(a, fragments.a, 1),
                    used(a, fragments.a, 2),
                    used(a, fragments.a, 3),
                    used(b, fragments.b, 0),
                    used(b, fragments.b, 1),
                    used(c, fragments.c, 0),
                    used(c, fragments.c, 1),
                    used(c, fragments.c, 2),
                    used(c, fragments.c, 3),
                ],
                first(operation.d, fragments.d as u8),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{LoweredAddress, LoweredGuard, MemoryValue};
    use std::path::{Path, PathBuf};

    fn lower(source: &str) -> Program {
        let module = warpsim_ir::parse_and_verify("test.kir", source).expect("it verifies");
        Program::lower(&module, warpsim_ir::KernelId(0)).expect("it lowers")
    }

    /// The timing of the first instruction of `body` in a kernel that
    /// declares the registers of [`KERNEL_HEAD`], with the program's
    /// number of value registers.
    fn first_of(body: &str) -> (Program, InstructionTiming) {
        let program = lower(&format!("{KERNEL_HEAD}{body}\n}}\n"));
        let timing = instruction_timings(&program)[0];
        (program, timing)
    }

    /// Value registers %a %b %c %d (0 to 3), %x %y (4, 5), %w %v (6, 7),
    /// %o (8); predicates %p %q %r (0 to 2).
    const KERNEL_HEAD: &str = ".kernel k(.param .u64 OUT)\n{\n    .reg .f32 %a, %b, %c, %d;\n    .reg .f64 %x, %y;\n    .reg .u32 %w, %v;\n    .reg .u64 %o;\n    .reg .pred %p, %q, %r;\n";

    #[test]
    fn fma_reads_its_three_sources_and_writes_its_destination_on_fp32() {
        let (program, timing) = first_of("fma.rn.f32 %d, %a, %b, %c;");
        assert_eq!(program.scoreboard_value_regs, 9);
        assert_eq!(timing.pipe, Pipe::Fp32);
        assert_eq!(timing.operands.reads(), [0, 1, 2]);
        assert_eq!(timing.operands.writes(), [3]);
    }

    #[test]
    fn a_guarded_instruction_reads_its_guard_predicate_after_the_value_registers() {
        let (program, timing) = first_of("@!%q add.f32 %d, %a, %b;");
        assert_eq!(program.scoreboard_value_regs, 9);
        assert_eq!(timing.pipe, Pipe::Fp32);
        assert_eq!(timing.operands.reads(), [9 + 1, 0, 1]);
        assert_eq!(timing.operands.writes(), [3]);
    }

    #[test]
    fn setp_writes_predicates_and_reads_the_one_it_combines_with() {
        let (_, timing) = first_of("setp.lt.and.f32 %p|%q, %a, %b, %r;");
        assert_eq!(timing.pipe, Pipe::Alu);
        assert_eq!(timing.operands.reads(), [0, 1, 9 + 2]);
        assert_eq!(timing.operands.writes(), [9, 9 + 1]);
        let (_, timing) = first_of("setp.ne.u32 %r, %w, %v;");
        assert_eq!(timing.pipe, Pipe::Alu);
        assert_eq!(timing.operands.reads(), [6, 7]);
        assert_eq!(timing.operands.writes(), [9 + 2]);
    }

    #[test]
    fn a_store_reads_its_address_and_its_sources_and_writes_nothing() {
        let (_, timing) = first_of("st.global.v2.f32 [%o+8], {%c, %a};");
        assert_eq!(timing.pipe, Pipe::Memory(MemoryPipe::Global));
        assert_eq!(timing.operands.reads(), [8, 2, 0]);
        assert_eq!(timing.operands.writes(), []);
        let (_, timing) = first_of("@%p ld.shared.f32 %a, [%w];");
        assert_eq!(timing.pipe, Pipe::Memory(MemoryPipe::Shared));
        assert_eq!(timing.operands.reads(), [9, 6]);
        assert_eq!(timing.operands.writes(), [0]);
    }

    #[test]
    fn constants_go_through_the_cache_ptxas_reads_them_with() {
        // A pointer is an `LDC.64`, a 32-bit parameter a `ULDC` or an
        // operand, a constant at a register's address an `LDC`, and the
        // block's shape a read of constant bank 0 (h200-constant-reads.txt).
        let (_, timing) = first_of("ld.param.u64 %o, [OUT];");
        assert_eq!(
            timing.pipe,
            Pipe::Memory(MemoryPipe::Param(ConstantCache::Indexed))
        );
        let (_, timing) = first_of("ld.param.u32 %w, [OUT];");
        assert_eq!(
            timing.pipe,
            Pipe::Memory(MemoryPipe::Param(ConstantCache::Operand))
        );
        let (_, timing) = first_of("ld.const.u32 %w, [%o];");
        assert_eq!(
            timing.pipe,
            Pipe::Memory(MemoryPipe::Const(ConstantCache::Indexed))
        );
        let (_, timing) = first_of("mov.u32 %w, %ntid.x;");
        assert_eq!(timing.pipe, Pipe::Memory(MemoryPipe::LaunchShape));
        let (_, timing) = first_of("mov.u32 %w, %nctaid.y;");
        assert_eq!(timing.pipe, Pipe::Memory(MemoryPipe::LaunchShape));
        let (_, timing) = first_of("mov.u32 %w, %ctaid.x;");
        assert_eq!(timing.pipe, Pipe::Integer);
    }

    #[test]
    fn the_fullest_store_reads_six_registers() {
        // Built by hand, as a verifier-approved `st.v4` of four different
        // registers through a guard: the most reads any kind can have.
        let instruction = Instruction {
            guard: Some(LoweredGuard {
                pred: 3,
                negated: false,
            }),
            kind: Kind::Store {
                space: StateSpace::Generic,
                order: warpsim_ir::MemoryOrder::Weak,
                value: MemoryValue {
                    size: 4,
                    sign_extend: false,
                    register_bits: 32,
                },
                src: [10, 11, 12, 13],
                count: 4,
                addr: LoweredAddress {
                    base: Some(7),
                    base_bits: 64,
                    offset: 0,
                },
            },
        };
        let operands = operands(&instruction, 20);
        assert_eq!(operands.reads(), [23, 7, 10, 11, 12, 13]);
        assert_eq!(operands.writes(), []);
        assert_eq!(pipe(&instruction.kind), Pipe::Memory(MemoryPipe::Generic));
    }

    #[test]
    fn pipes_of_f64_transcendentals_and_division() {
        let (_, timing) = first_of("add.f64 %x, %x, %y;");
        assert_eq!(timing.pipe, Pipe::Fp64);
        assert_eq!(timing.operands.reads(), [4, 5]);
        assert_eq!(timing.operands.writes(), [4]);
        let (_, timing) = first_of("ex2.approx.f32 %b, %a;");
        assert_eq!(timing.pipe, Pipe::Sfu);
        assert_eq!(timing.operands.reads(), [0]);
        assert_eq!(timing.operands.writes(), [1]);
        let (_, timing) = first_of("div.s32 %w, %w, %v;");
        assert_eq!(timing.pipe, Pipe::Division);
        assert_eq!(timing.operands.reads(), [6, 7]);
        assert_eq!(timing.operands.writes(), [6]);
        let (_, timing) = first_of("sqrt.rn.f64 %x, %y;");
        assert_eq!(timing.pipe, Pipe::Division);
        let (_, timing) = first_of("mul.lo.u32 %w, %w, %v;");
        assert_eq!(timing.pipe, Pipe::IntegerMultiply);
        let (_, timing) = first_of("cvt.rn.f32.f64 %a, %x;");
        assert_eq!(timing.pipe, Pipe::Conversion);
        assert_eq!(timing.operands.reads(), [4]);
        assert_eq!(timing.operands.writes(), [0]);
    }

    #[test]
    fn ballot_writes_a_value_register_and_any_a_predicate() {
        let (_, timing) = first_of("vote.sync.ballot.b32 %w, %p, 0xffffffff;");
        assert_eq!(timing.pipe, Pipe::WarpShuffle);
        // The mask, a literal, is hidden register 9; the predicates start
        // after it.
        assert_eq!(timing.operands.reads(), [10, 9]);
        assert_eq!(timing.operands.writes(), [6]);
        let (program, timing) = first_of("vote.sync.any.pred %q, %p, %v;");
        assert_eq!(program.scoreboard_value_regs, 9);
        assert_eq!(timing.pipe, Pipe::WarpShuffle);
        assert_eq!(timing.operands.reads(), [9, 7]);
        assert_eq!(timing.operands.writes(), [9 + 1]);
    }

    #[test]
    fn a_predicate_set_to_a_constant_reads_nothing() {
        let (_, timing) = first_of("mov.pred %p, 1;");
        assert_eq!(timing.pipe, Pipe::Alu);
        assert_eq!(timing.operands.reads(), []);
        assert_eq!(timing.operands.writes(), [9]);
        let (_, timing) = first_of("not.pred %p, %q;");
        assert_eq!(timing.operands.reads(), [9 + 1]);
        assert_eq!(timing.operands.writes(), [9]);
    }

    /// The pipes of hardware/h200-pipes.txt: logic, shifts, comparisons,
    /// selects and `f32` minimums on the ALU; adds and moves on either the
    /// ALU or the FMA pipe; multiplies on the FMA pipe; bit counts and
    /// float-to-integer conversions on the XU (`Sfu`) pipe.
    #[test]
    fn each_integer_operation_issues_to_the_pipe_the_h200_runs_it_on() {
        let cases = [
            ("shf.l.wrap.b32 %w, %w, %w, %v;", Pipe::Alu),
            ("lop3.b32 %w, %w, %v, %w, 0x28;", Pipe::Alu),
            ("shr.u32 %w, %w, %v;", Pipe::Alu),
            ("xor.b32 %w, %w, %v;", Pipe::Alu),
            ("min.u32 %w, %w, %v;", Pipe::Alu),
            ("prmt.b32 %w, %w, %v, 0x1032;", Pipe::Alu),
            ("selp.b32 %w, %w, %v, %p;", Pipe::Alu),
            ("setp.lt.u32 %p, %w, %v;", Pipe::Alu),
            ("min.f32 %d, %a, %b;", Pipe::Alu),
            ("min.f64 %x, %x, %y;", Pipe::Fp64),
            ("setp.lt.f64 %p, %x, %y;", Pipe::Fp64),
            ("add.u32 %w, %w, %v;", Pipe::Integer),
            ("sub.u32 %w, %w, %v;", Pipe::Integer),
            ("shl.b32 %w, %w, 3;", Pipe::Integer),
            ("mov.u32 %w, %v;", Pipe::Integer),
            ("mad.lo.u32 %w, %w, %v, %w;", Pipe::IntegerMultiply),
            ("mul.lo.u32 %w, %w, %v;", Pipe::IntegerMultiply),
            ("popc.b32 %w, %v;", Pipe::Sfu),
            ("brev.b32 %w, %v;", Pipe::Sfu),
            ("clz.b32 %w, %v;", Pipe::Sfu),
            ("cvt.rzi.u32.f32 %w, %a;", Pipe::Sfu),
            ("cvt.rn.f32.u32 %a, %w;", Pipe::Alu),
            ("cvt.rn.f64.u32 %x, %w;", Pipe::Conversion),
            ("add.u64 %o, %o, %o;", Pipe::Alu),
            ("fma.rn.f32 %d, %a, %b, %c;", Pipe::Fp32),
        ];
        for (text, expected) in cases {
            let (_, timing) = first_of(text);
            assert_eq!(timing.pipe, expected, "{text}");
        }
    }

    #[test]
    fn unpacking_writes_only_the_elements_it_keeps() {
        let (_, timing) = first_of("mov.b64 {%w, _}, %o;");
        assert_eq!(timing.pipe, Pipe::Integer);
        assert_eq!(timing.operands.reads(), [8]);
        assert_eq!(timing.operands.writes(), [6]);
    }

    #[test]
    fn the_implicit_exit_is_control_and_touches_no_register() {
        let (program, _) = first_of("exit;");
        let timings = instruction_timings(&program);
        assert_eq!(timings.len(), program.code.len());
        let last = timings.last().expect("the implicit exit");
        assert_eq!(last.pipe, Pipe::Control);
        assert_eq!(last.operands.reads(), []);
        assert_eq!(last.operands.writes(), []);
    }

    /// Every `.kir` and `.ptx` file under `dir`, recursively.
    fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the programs directory is readable")
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                sources(&path, found);
            } else if matches!(
                path.extension().and_then(|extension| extension.to_str()),
                Some("kir" | "ptx")
            ) {
                found.push(path);
            }
        }
    }

    #[test]
    fn every_kernel_of_the_programs_has_operands_in_range() {
        let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs");
        let mut files = Vec::new();
        sources(&programs, &mut files);
        let (mut kernels, mut instructions, mut memory) = (0, 0, 0);
        for path in &files {
            let text = std::fs::read_to_string(path).expect("a committed program");
            let name = path.display().to_string();
            let module = if name.ends_with(".ptx") {
                warpsim_ir::parse_ptx(&name, &text).map_err(|error| error.to_string())
            } else {
                warpsim_ir::parse_module(&name, &text).map_err(|error| error.to_string())
            }
            .unwrap_or_else(|error| panic!("{name} does not parse: {error}"));
            warpsim_ir::verify_module(&module)
                .unwrap_or_else(|error| panic!("{name} does not verify: {error}"));
            // Both as written and with its shared accesses merged into
            // vectors, as the driver does with code from NVCC.
            let mut merged = module.clone();
            warpsim_ir::merge::merge_accesses(&mut merged);
            for module in [&module, &merged] {
                for index in 0..module.kernels.len() {
                    let program = Program::lower(module, warpsim_ir::KernelId(index as u32))
                        .unwrap_or_else(|error| panic!("{name} does not lower: {error}"));
                    kernels += 1;
                    let registers = program.scoreboard_value_regs + program.pred_regs;
                    let timings = instruction_timings(&program);
                    assert_eq!(timings.len(), program.code.len());
                    for (pc, (timing, instruction)) in timings.iter().zip(&program.code).enumerate()
                    {
                        instructions += 1;
                        let operands = timing.operands;
                        for &register in operands.reads().iter().chain(operands.writes()) {
                            assert!(
                                register < registers,
                                "{name} {} pc {pc}: register {register} of {registers} in {operands:?}",
                                program.kernel_name
                            );
                        }
                        if let Some(guard) = instruction.guard {
                            assert_eq!(
                                operands.reads()[0],
                                program.scoreboard_value_regs + guard.pred
                            );
                        }
                        if matches!(
                            instruction.kind,
                            Kind::Load { .. } | Kind::Store { .. } | Kind::Atom { .. }
                        ) {
                            memory += 1;
                            assert!(
                                matches!(timing.pipe, Pipe::Memory(_)),
                                "{name} pc {pc}: {:?} on {:?}",
                                instruction.kind,
                                timing.pipe
                            );
                        }
                    }
                }
            }
        }
        // The programs directory holds some two hundred kernels (each
        // counted twice here); finding few would mean that the walk went
        // wrong, not that all is well.
        assert!(kernels >= 400, "only {kernels} kernels lowered");
        assert!(instructions > 10_000 && memory > 1_000);
    }
}
