//! The executable form of a kernel: the IR lowered once into dense
//! instructions that the interpreter dispatches on without looking anything
//! up (after wasmi's "translate once, then execute").
//!
//! Lowering does the work that would otherwise be repeated for every warp:
//! every operand becomes a register index (literals, special registers and
//! variable addresses become hidden registers filled when a warp starts),
//! predicates move to a separate file of 32-bit lane masks, each operation is
//! specialised by type, every variable gets its address, and every branch
//! learns its reconvergence point (the immediate post-dominator).

use warpsim_ir as ir;
use warpsim_ir::register_sharing::{share_slots, RegisterUse};
use warpsim_ir::{
    AddressBase, AtomOp, BarrierKind, BarrierReduction, BinaryOp, BoolOp, CmpOp, Kernel, Module,
    MulAddMode, Op, Operand, PredOperand, ReduxOp, Rounding, ScalarType, ShuffleMode, SourceLoc,
    SpecialReg, StateSpace, UnaryOp, VoteMode,
};

/// A register index in the warp's value file (`warp::RegisterFile`: lanes
/// of 32 bits, and of 64 for the registers below `Program::wide_value_regs`).
pub type ValueReg = u32;
/// A register index in the warp's predicate file (one 32-bit lane mask each).
pub type PredReg = u32;

/// No reconvergence point: the paths of this branch only meet at exit.
pub const NO_RECONVERGENCE: u32 = u32::MAX;

/// A lowered kernel, ready to run any number of times.
#[derive(Clone, Debug)]
pub struct Program {
    pub kernel_name: String,
    /// One instruction per IR instruction, same index, plus a final `Exit`.
    /// Its value registers are storage slots: PTX registers never live at
    /// one point of a thread share one (`ir::register_sharing`), so a warp
    /// holds 32 lanes per slot rather than per PTX register.
    pub code: Vec<Instruction>,
    /// The same code with a value register of its own for every PTX
    /// register, which the cycle model's scoreboard follows: a register
    /// sharing a slot with another never waits for the other's writes, so
    /// sharing storage changes no cycle count.
    pub scoreboard_code: Vec<Instruction>,
    /// The IR instruction behind each entry of `code` (the last one, the
    /// implicit exit, reuses the location of the kernel header).
    pub locations: Vec<SourceLoc>,
    /// Value registers of `code`: the storage slots held per lane, then
    /// the warp-uniform hidden registers.
    pub value_regs: u32,
    /// How many of them, numbered first, are slots of 32 lanes of 4 bytes
    /// each per warp. The others, numbered from here, hold a value that is
    /// the same in every lane of a warp from its start on (a literal, a
    /// size, the block's or warp's index, a variable's address: see
    /// [`WarpInit::is_warp_uniform`]), which no instruction writes; a warp
    /// keeps one 64-bit value for each (`warp::RegisterFile`).
    pub lane_value_regs: u32,
    /// How many of the lane slots, numbered first, hold a 64-bit register
    /// and have 4 bytes more per lane (`warp::RegisterFile`).
    pub wide_value_regs: u32,
    /// Value registers of `scoreboard_code`.
    pub scoreboard_value_regs: u32,
    pub pred_regs: u32,
    /// Hidden registers set once per warp.
    pub warp_inits: Vec<(ValueReg, WarpInit)>,
    pub params: Vec<ParamSlot>,
    /// Size of the parameter buffer in bytes.
    pub param_bytes: u32,
    /// Static shared memory of a block.
    pub static_shared_bytes: u32,
    /// Where dynamic (`.extern .shared`) memory starts in the shared window.
    pub dynamic_shared_offset: u32,
    /// Local memory of one thread, exactly as declared (accesses past it fault).
    pub local_bytes: u32,
    /// The kernel's `.shared` variables where lowering placed them, by
    /// offset, so that a shared-memory offset can be named by its variable.
    pub shared_variables: Vec<SharedVariable>,
    /// The `.const` space: every `.const` variable with its initial values.
    pub const_data: Vec<u8>,
    /// The module's `.global` variables that the kernel can use; a launch
    /// gives each an address ([`crate::Launch::global_variable_addresses`]).
    pub global_variables: Vec<GlobalVariable>,
    /// Whether blocks may communicate through global memory: the kernel has
    /// global or generic atomics that return a value, or strong
    /// (`.volatile`, `.relaxed`, `.acquire`, `.release`) global or generic
    /// accesses. In such kernels a spinning block may wait for another
    /// one, so the livelock check at a window's end waits until every
    /// resident block spins (`timing/gpu.rs`). (Their SMs still run side by
    /// side: global stores and atomics wait in the blocks' store buffers
    /// until the window ends, `store_buffer.rs`.)
    pub communicates_across_blocks: bool,
    /// The block barriers that the static uniformity analysis finds
    /// reachable by control flow that can differ between the threads of a
    /// block, by instruction (the barrier checker uses it to tell a barrier
    /// skipped by early-exiting threads, which is allowed, from one skipped
    /// by threads that go on; `warpsim check` reports them).
    pub divergent_barriers: Vec<ir::uniformity::DivergentBarrier>,
}

impl Program {
    /// Whether the instruction at `pc` is one of [`Program::divergent_barriers`].
    pub fn is_divergent_barrier(&self, pc: u32) -> bool {
        // The analysis lists them sorted by instruction.
        self.divergent_barriers
            .binary_search_by_key(&pc, |finding| finding.barrier.0)
            .is_ok()
    }
}

/// What a hidden register holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpInit {
    Constant(u64),
    Special(SpecialReg),
    /// The global address of [`Program::global_variables`]`[index]`, known
    /// once the launch has placed the variables among its buffers.
    GlobalVariable(u32),
}

impl WarpInit {
    /// Whether every lane of a warp starts with the same value: all but the
    /// specials that tell lanes apart (`%tid`, `%laneid`, the lane masks).
    pub fn is_warp_uniform(self) -> bool {
        match self {
            WarpInit::Constant(_) | WarpInit::GlobalVariable(_) => true,
            WarpInit::Special(special) => !matches!(
                special,
                SpecialReg::Tid(_) | SpecialReg::LaneId | SpecialReg::LaneMask(_)
            ),
        }
    }
}

/// A kernel parameter: its name, type and offset in the parameter buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSlot {
    pub name: String,
    pub ty: ScalarType,
    pub offset: u32,
    /// Its size in bytes: the type's, or more for an array passed by value
    /// (a struct: `.param .align 8 .b8 p[24]`).
    pub size: u32,
    /// Whether it is an array (a struct passed by value) rather than a scalar.
    pub is_array: bool,
}

/// A module-level `.global` variable (`__device__` data, and the strings
/// `printf` and `assert` use): global memory that the launch provides as a
/// buffer of the variable's name.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalVariable {
    pub name: String,
    /// The element type it is declared with (`.b8` for most arrays NVRTC
    /// writes).
    pub ty: ScalarType,
    pub size: u64,
    /// Its initial bytes (the declaration's values, zeros after them).
    pub initial: Vec<u8>,
    pub loc: SourceLoc,
}

/// A `.shared` variable laid out in a block's shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedVariable {
    /// The name as declared (NVRTC's mangled name for a CUDA variable).
    pub name: String,
    /// Its first byte in the block's shared memory.
    pub offset: u32,
    /// Its size in bytes; `None` for an `.extern .shared` array, which is
    /// the launch's dynamic shared memory and runs to its end.
    pub size: Option<u32>,
}

impl SharedVariable {
    /// The name a CUDA programmer gave it: `tile` for NVRTC's
    /// `_ZZ9transposePfS_E4tile` (a `__shared__` variable declared in a
    /// function is mangled as a local name of that function, `_ZZ`
    /// encoding `E` length name, with an optional `_N` discriminator);
    /// any other name as it is.
    pub fn source_name(&self) -> &str {
        local_entity_name(&self.name).unwrap_or(&self.name)
    }

    /// Whether byte `offset` of shared memory belongs to this variable.
    pub fn contains(&self, offset: u64) -> bool {
        let start = u64::from(self.offset);
        match self.size {
            Some(size) => (start..start + u64::from(size)).contains(&offset),
            None => offset >= start,
        }
    }
}

/// The entity name of an Itanium-mangled local name (`_ZZ` encoding `E`
/// length name, optionally followed by a `_N` or `__N_` discriminator), if
/// `mangled` is one.
fn local_entity_name(mangled: &str) -> Option<&str> {
    let rest = mangled.strip_prefix("_ZZ")?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    // The discriminator of the second and later variables of one name:
    // `_N` below 10, `__N_` from 10 on. A name that itself ends in `_2`
    // is tried as it is first.
    let short = rest
        .rfind('_')
        .filter(|&at| digits(&rest[at + 1..]))
        .map(|at| &rest[..at]);
    let long = rest.strip_suffix('_').and_then(|body| {
        body.rfind("__")
            .filter(|&at| digits(&body[at + 2..]))
            .map(|at| &body[..at])
    });
    [Some(rest), short, long]
        .into_iter()
        .flatten()
        .find_map(entity_after_encoding)
}

/// In `encoding E <len><name>`, the name: the first `E` followed by a
/// length that runs exactly to the end.
fn entity_after_encoding(rest: &str) -> Option<&str> {
    rest.char_indices()
        .filter(|&(_, c)| c == 'E')
        .find_map(|(at, _)| {
            let after = &rest[at + 1..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let len: usize = after[..digits].parse().ok()?;
            (after.len() == digits.checked_add(len)?).then(|| &after[digits..])
        })
}

/// A guard: run only the lanes whose predicate bit (possibly negated) is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoweredGuard {
    pub pred: PredReg,
    pub negated: bool,
}

/// One executable instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub guard: Option<LoweredGuard>,
    pub kind: Kind,
}

/// Integer operations are parameterised by width and signedness at run time
/// (`bits`), which keeps the set small: the shifts and masks cost little.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntBinary {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatBinary {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// Binary operations of the 16-bit float types (`.f16`, `.f16x2`, `.bf16`,
/// `.bf16x2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfBinary {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    /// `min.NaN`, `max.NaN`: a NaN operand gives the canonical NaN.
    MinNan,
    MaxNan,
}

/// The two 16-bit float formats: IEEE half precision (`.f16`: 5 exponent
/// bits, 10 mantissa bits) and bfloat16 (`.bf16`: 8 and 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfFormat {
    F16,
    Bf16,
}

/// What a `cvt` to `.bf16` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bf16Source {
    Int(IntType),
    Float(FloatType),
    /// A bfloat16, rounded to an integral value by an integer rounding.
    Bf16,
}

/// The operation of a saturating (`.sat`) instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SatOp {
    Add,
    Sub,
    /// `.f32` only.
    Mul,
    /// `mad.hi.sat.s32` (high half of the product plus `c`) or `fma.rn.sat.f32`.
    MulAdd,
}

/// Sign operations of the 16-bit float types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfUnary {
    Neg,
    Abs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntUnary {
    Mov,
    Neg,
    Abs,
    Not,
    Popc,
    Clz,
    Brev,
    Bfind,
    BfindShiftAmount,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatUnary {
    Neg,
    Abs,
    Sqrt,
    Rcp,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
}

/// An integer type's width and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntType {
    pub bits: u8,
    pub signed: bool,
}

/// Float precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatType {
    F32,
    F64,
}

/// The number class a `setp`, `cvt` or atomic works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberType {
    Int(IntType),
    Float(FloatType),
}

/// How a memory access finds its address: a register plus a constant, or a
/// constant alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoweredAddress {
    pub base: Option<ValueReg>,
    /// For a 32-bit base register the sum wraps at 32 bits (shared, local).
    pub base_bits: u8,
    pub offset: i64,
}

/// The width of the value in memory and how it widens into its register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryValue {
    /// Bytes per element: 1, 2, 4 or 8.
    pub size: u8,
    /// Sign-extend sub-word loads (`ld.s8`), else zero-extend.
    pub sign_extend: bool,
    /// Width of the destination registers, to keep their upper bits zero.
    pub register_bits: u8,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    IntBinary {
        op: IntBinary,
        ty: IntType,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    FloatBinary {
        op: FloatBinary,
        ty: FloatType,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    IntUnary {
        op: IntUnary,
        ty: IntType,
        dst: ValueReg,
        a: ValueReg,
    },
    FloatUnary {
        op: FloatUnary,
        ty: FloatType,
        dst: ValueReg,
        a: ValueReg,
    },
    /// `mad.lo/hi/wide`.
    IntMulAdd {
        mode: MulAddMode,
        ty: IntType,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    Fma {
        ty: FloatType,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `cvt` to or from `.f16`: through `f32`, which holds every half.
    CvtHalf {
        to_half: bool,
        /// The other side of the conversion.
        other: NumberType,
        rounding: Option<warpsim_ir::Rounding>,
        saturate: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    /// Half-precision arithmetic on the low 16 bits of each lane (`.f16`),
    /// or with `packed` on two halves in the low 32 bits (`.f16x2`, element
    /// 0 in the low 16): exact, then rounded once to nearest even.
    HalfBinary {
        op: HalfBinary,
        packed: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    /// `neg`/`abs` on `.f16` or `.f16x2` (`packed`): sign bits only.
    HalfUnary {
        op: HalfUnary,
        packed: bool,
        dst: ValueReg,
        a: ValueReg,
    },
    /// `fma.rn.f16` or `fma.rn.f16x2` (`packed`): one rounding; with
    /// `relu` (`fma.rn.relu`) negative results become +0.
    HalfFma {
        packed: bool,
        relu: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// bfloat16 arithmetic on the low 16 bits of each lane (`.bf16`), or
    /// with `packed` on two in the low 32 bits (`.bf16x2`): exact, then
    /// rounded once to nearest even.
    Bf16Binary {
        op: HalfBinary,
        packed: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    /// `neg`/`abs` on `.bf16` or `.bf16x2` (`packed`).
    Bf16Unary {
        op: HalfUnary,
        packed: bool,
        dst: ValueReg,
        a: ValueReg,
    },
    /// `fma.rn[.relu].bf16` or `.bf16x2` (`packed`): one rounding.
    Bf16Fma {
        packed: bool,
        relu: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `setp.cmp.bf16`.
    Bf16Setp {
        cmp: CmpOp,
        dst: PredReg,
        dst_not: Option<PredReg>,
        a: ValueReg,
        b: ValueReg,
        combine: Option<(BoolOp, PredReg, bool)>,
    },
    /// `set.cmp.ty.ty` with a 16-bit float type `ty` of `format` (`packed`
    /// for the pairs): 1.0 or 0.0 in that format, element by element
    /// (`__heq2`, `__hisnan`).
    HalfSet {
        cmp: CmpOp,
        format: HalfFormat,
        packed: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        combine: Option<(BoolOp, PredReg, bool)>,
    },
    /// `cvt` to `.bf16`, rounded once.
    CvtToBf16 {
        from: Bf16Source,
        rounding: warpsim_ir::Rounding,
        saturate: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    /// `cvt` from `.bf16`: through `f32`, which holds every bfloat16.
    CvtFromBf16 {
        to: NumberType,
        rounding: Option<warpsim_ir::Rounding>,
        saturate: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    /// `cvt.rn/.rz.f16x2/.bf16x2.f32 d, a, b`: `a` into the upper half.
    CvtPair {
        format: HalfFormat,
        rounding: warpsim_ir::Rounding,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    /// `setp.cmp.f16`.
    HalfSetp {
        cmp: CmpOp,
        dst: PredReg,
        dst_not: Option<PredReg>,
        a: ValueReg,
        b: ValueReg,
        combine: Option<(BoolOp, PredReg, bool)>,
    },
    /// `add.sat.s32`, `sub.sat.s32`, `mad.hi.sat.s32`: the exact result
    /// clamped to the `.s32` range (`c` is read by `MulAdd` only).
    SatS32 {
        op: SatOp,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `add sub mul fma.rn` `.sat.f32`: the rounded result clamped to
    /// [+0.0, 1.0], NaN to +0.0 (`c` is read by `MulAdd` only).
    SatF32 {
        op: SatOp,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `fma.rz/.rm/.rp.f32`.
    FmaDirected {
        rounding: warpsim_ir::Rounding,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    Setp {
        cmp: CmpOp,
        ty: NumberType,
        dst: PredReg,
        /// The second destination of `setp d|q`: `!(a cmp b) boolop c`.
        dst_not: Option<PredReg>,
        a: ValueReg,
        b: ValueReg,
        combine: Option<(BoolOp, PredReg, bool)>,
    },
    /// `set.cmp.dty.sty`: the comparison (of 16-bit floats of the format
    /// `half` when there is one, else of `ty`) as all ones or 1.0f
    /// (`float_result`), or zero.
    Set {
        cmp: CmpOp,
        ty: NumberType,
        half: Option<HalfFormat>,
        float_result: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        combine: Option<(BoolOp, PredReg, bool)>,
    },
    Selp {
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        cond: PredReg,
        negated: bool,
    },
    /// `and/or/xor.pred`, and `not`/`mov.pred` as `Xor`/`Or` with itself.
    PredBinary {
        op: BoolOp,
        dst: PredReg,
        a: PredReg,
        a_negated: bool,
        b: PredReg,
        b_negated: bool,
    },
    Cvt {
        dst_ty: NumberType,
        src_ty: NumberType,
        rounding: Option<Rounding>,
        saturate: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    ReadClock {
        dst: ValueReg,
        wide: bool,
    },
    Load {
        space: StateSpace,
        order: ir::MemoryOrder,
        value: MemoryValue,
        dst: [ValueReg; 4],
        count: u8,
        addr: LoweredAddress,
    },
    Store {
        space: StateSpace,
        order: ir::MemoryOrder,
        value: MemoryValue,
        src: [ValueReg; 4],
        count: u8,
        addr: LoweredAddress,
    },
    Atom {
        space: StateSpace,
        order: ir::AtomicOrder,
        op: AtomOp,
        ty: NumberType,
        size: u8,
        dst: Option<ValueReg>,
        addr: LoweredAddress,
        a: ValueReg,
        b: Option<ValueReg>,
    },
    Barrier {
        kind: BarrierKind,
        id: ValueReg,
        count: Option<ValueReg>,
        /// `bar.red`: destination (value register for popc, predicate
        /// register for and/or) and the predicate reduced.
        reduction: Option<BarrierReductionOperands>,
    },
    WarpSync {
        mask: ValueReg,
    },
    /// `membar`/`fence`: an ordering point only the explore model's weak
    /// memory looks at.
    Fence {
        kind: ir::FenceKind,
        scope: ir::Scope,
    },
    Shuffle {
        mode: ShuffleMode,
        dst: ValueReg,
        dst_pred: Option<PredReg>,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
        mask: ValueReg,
    },
    Vote {
        mode: VoteMode,
        dst: u32,
        pred: PredReg,
        negated: bool,
        mask: ValueReg,
    },
    /// `mul24.lo/.hi`.
    Mul24 {
        hi: bool,
        signed: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    /// `sad`: `c + |a - b|`.
    Sad {
        ty: IntType,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `testp.class`.
    Testp {
        class: warpsim_ir::FloatClass,
        ty: FloatType,
        dst: PredReg,
        a: ValueReg,
    },
    /// `copysign`: `b` with the sign of `a`.
    CopySign {
        ty: FloatType,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    /// `redux.sync`: `signed` orders `min`/`max` as `.s32`.
    Redux {
        op: ReduxOp,
        signed: bool,
        dst: ValueReg,
        a: ValueReg,
        mask: ValueReg,
    },
    /// `match.any/.all.sync`: `wide` compares 64 bits, else the low 32.
    Match {
        all: bool,
        wide: bool,
        dst: ValueReg,
        dst_pred: Option<PredReg>,
        a: ValueReg,
        mask: ValueReg,
    },
    Branch {
        target: u32,
        reconverge: u32,
    },
    Exit,
    BitFieldExtract {
        ty: IntType,
        dst: ValueReg,
        a: ValueReg,
        position: ValueReg,
        length: ValueReg,
    },
    BitFieldInsert {
        bits: u8,
        dst: ValueReg,
        field: ValueReg,
        base: ValueReg,
        position: ValueReg,
        length: ValueReg,
    },
    Permute {
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        selector: ValueReg,
    },
    ActiveMask {
        dst: ValueReg,
    },
    /// `shf.l/.r.wrap/.clamp.b32`.
    FunnelShift {
        left: bool,
        clamp: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `lop3.b32` with its truth table.
    Lop3 {
        lut: u8,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `mov.bN dst, {a, b[, c, d]}`: `count` elements of `element_bits`
    /// each, element 0 in the low bits.
    Pack {
        element_bits: u8,
        count: u8,
        dst: ValueReg,
        src: [ValueReg; 4],
    },
    /// `mov.bN {a, b[, c, d]}, src`: element `i` of `src` into `dst[i]`
    /// where bit `i` of `keep` is set (clear for the sink `_`).
    Unpack {
        element_bits: u8,
        count: u8,
        keep: u8,
        dst: [ValueReg; 4],
        src: ValueReg,
    },
    /// `vprintf`: formats each active lane's output into the block's printf
    /// log; `dst` receives the number of arguments the format took.
    Printf {
        dst: Option<ValueReg>,
        format: ValueReg,
        arguments: ValueReg,
    },
    /// `__assertfail`: the first active lane stops the kernel.
    AssertFail {
        message: ValueReg,
        file: ValueReg,
        line: ValueReg,
        function: ValueReg,
    },
    /// `trap`: the first active lane stops the kernel.
    Trap,
    /// An instruction with no effect on the machine's state (`nanosleep`).
    Nop,
    // Asynchronous copies and mbarriers (`async_copy.rs`).
    CpAsync {
        size: u8,
        dst: LoweredAddress,
        src: LoweredAddress,
        src_size: Option<ValueReg>,
        ignore_src: Option<(PredReg, bool)>,
    },
    CpAsyncCommitGroup,
    CpAsyncWait {
        pending: Option<u32>,
    },
    CpAsyncMbarrierArrive {
        noinc: bool,
        addr: LoweredAddress,
    },
    CpAsyncBulk {
        dst: LoweredAddress,
        src: LoweredAddress,
        size: ValueReg,
        mbarrier: LoweredAddress,
    },
    Mbarrier {
        action: MbarrierAction,
        space: StateSpace,
        addr: LoweredAddress,
    },
    MbarrierPendingCount {
        dst: ValueReg,
        state: ValueReg,
    },
    /// `cvta`: adds (to generic) or subtracts (to the space) the base of the
    /// space's window in the generic address space; `bits` is the width.
    Cvta {
        window: u64,
        to_generic: bool,
        bits: u8,
        dst: ValueReg,
        src: ValueReg,
    },
    // -----------------------------------------------------------------------
    // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions.
    /// `dp4a`, `dp2a.lo/.hi`: `c` plus the products, in 32 bits.
    DotProduct {
        shape: ir::DotProductShape,
        a_signed: bool,
        b_signed: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc` of 32 or 64
    /// (`wide`) bits. `carry` is the hidden register that holds each
    /// thread's carry flag (0 or 1; 0 when a thread starts), read when
    /// `carry_in`, written when `carry_out`, so that the scoreboard orders
    /// the instructions of a chain. `c` is read by the `mad` forms only
    /// (lowering fills it with `a` for the others).
    CarryArith {
        op: ir::CarryOp,
        carry_in: bool,
        carry_out: bool,
        wide: bool,
        signed: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
        carry: ValueReg,
    },
    /// `mad24.lo/.hi{.sat}`.
    MulAdd24 {
        hi: bool,
        signed: bool,
        saturate: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
        c: ValueReg,
    },
    /// `redux.sync.min/.max{.abs}{.NaN}.f32`.
    ReduxFloat {
        max: bool,
        abs: bool,
        nan: bool,
        dst: ValueReg,
        a: ValueReg,
        mask: ValueReg,
    },
    /// `cvt` to `.tf32`.
    CvtTf32 {
        rounding: ir::Tf32Rounding,
        satfinite: bool,
        relu: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    /// `cvt.rn.satfinite{.relu}` to `.e4m3x2`/`.e5m2x2`: from two `.f32`
    /// (`from_f32`: `a` to the upper byte, `b` to the lower) or from the
    /// `.f16x2` `a` (`b` is `a` then, and not read).
    CvtToFp8 {
        format: ir::Fp8Format,
        relu: bool,
        from_f32: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    /// `cvt.rn/.rz.relu.bf16.f32`.
    CvtBf16Relu {
        toward_zero: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    /// `cvt.rn{.relu}.f16x2` from `.e4m3x2`/`.e5m2x2`.
    CvtFromFp8 {
        format: ir::Fp8Format,
        relu: bool,
        dst: ValueReg,
        src: ValueReg,
    },
    /// `tanh.approx`, `ex2.approx` of the half types, `min/max.xorsign.abs`
    /// and `cvt.relu/.satfinite` to the half types ([`ir::Op::NarrowFloat`]);
    /// `b` is `a` (and not read) when the instruction has one source.
    NarrowFloat {
        function: ir::NarrowFloatFunction,
        element: crate::scalar_ops::NarrowElement,
        has_b: bool,
        dst: ValueReg,
        a: ValueReg,
        b: ValueReg,
    },
    // Tensor-core instructions (`crate::tensor`).
    /// `ldmatrix` (`store` false) or `stmatrix` of `matrices` 8x8 matrices,
    /// one register each.
    MatrixAccess {
        store: bool,
        space: StateSpace,
        transpose: bool,
        matrices: u8,
        registers: [ValueReg; 4],
        addr: LoweredAddress,
    },
    /// `mma.sync`; boxed, as its fragments name up to 14 registers.
    Mma {
        operation: Box<crate::tensor::MmaOperation>,
    },
    /// `wmma.load`, `wmma.store`, `wmma.mma`.
    Wmma {
        operation: Box<crate::tensor::WmmaOperation>,
    },
}

/// What a lowered `mbarrier` instruction does (`ir::MbarrierOp` with its
/// operands as registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarrierAction {
    Init {
        count: ValueReg,
    },
    Arrive {
        drop: bool,
        state: Option<ValueReg>,
        count: Option<ValueReg>,
        expect_tx: Option<ValueReg>,
    },
    ExpectTx {
        bytes: ValueReg,
    },
    CompleteTx {
        bytes: ValueReg,
    },
    Wait {
        /// `try_wait` (which waits a while before it fails) rather than
        /// `test_wait`: only the timing model tells them apart.
        try_wait: bool,
        parity: bool,
        done: PredReg,
        phase: ValueReg,
    },
    Invalidate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierReductionOperands {
    pub reduction: BarrierReduction,
    pub dst: u32,
    pub pred: PredReg,
    pub negated: bool,
}

/// Why a kernel could not be lowered (the verifier catches most problems
/// first; these are limits of the machine rather than errors of the IR).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct LowerError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

struct Lowerer<'a> {
    module: &'a Module,
    kernel: &'a Kernel,
    /// For each IR register: its index in the value or predicate file.
    reg_slot: Vec<u32>,
    /// Value registers numbered so far, one per PTX register then one per
    /// hidden register in the order they are made (the scoreboard's
    /// numbering).
    value_regs: u32,
    /// Where each value register of that numbering is stored, when
    /// registers share slots ([`Program::lower`]).
    value_slot: Option<&'a [u32]>,
    /// For each value register of that numbering: whether it holds 64 bits.
    value_wide: Vec<bool>,
    warp_inits: Vec<(ValueReg, WarpInit)>,
    /// The hidden register of each literal or special register, so each gets one.
    hidden: std::collections::HashMap<WarpInit, ValueReg>,
    /// Symbol addresses in their own spaces.
    symbol_address: Vec<u64>,
    /// The `.global` variables the kernel uses, in order of first use.
    global_variables: Vec<GlobalVariable>,
    global_variable_of: std::collections::HashMap<ir::SymbolId, u32>,
    loc: SourceLoc,
    /// The hidden register of the threads' carry flag (CC.CF), made for
    /// the first extended-precision instruction.
    carry_flag: Option<ValueReg>,
    /// For each IR register: whether an instruction reads it.
    read: Vec<bool>,
}

/// For each register of `kernel`: whether an instruction reads it.
fn read_registers(kernel: &Kernel) -> Vec<bool> {
    let mut read = vec![false; kernel.regs.len()];
    for instr in &kernel.instrs {
        for reg in ir::merge::read_registers(instr) {
            read[reg.index()] = true;
        }
    }
    read
}

impl Program {
    /// Lowers `kernel` of `module` (which must have passed the verifier).
    pub fn lower(module: &Module, kernel: ir::KernelId) -> Result<Program, LowerError> {
        let kernel = &module.kernels[kernel.index()];
        // First with a value register per PTX register and per hidden
        // register: the scoreboard's numbering, and the code whose
        // registers' live ranges decide which can share a slot.
        let (scoreboard, scoreboard_wide) = Self::lower_with_slots(module, kernel, None)?;
        let registers = scoreboard.value_regs;
        let uses: Vec<RegisterUse> = scoreboard
            .code
            .iter()
            .map(|instruction| {
                let operands = crate::timing::operands::operands(instruction, registers);
                let values =
                    |list: &[u32]| list.iter().copied().filter(|&r| r < registers).collect();
                // A global atomic's old value lands when the window ends
                // (`store_buffer.rs`).
                let written_late = matches!(
                    instruction.kind,
                    Kind::Atom {
                        space: StateSpace::Global | StateSpace::Generic,
                        dst: Some(_),
                        ..
                    }
                );
                RegisterUse {
                    reads: values(operands.reads()),
                    writes: values(operands.writes()),
                    unguarded: instruction.guard.is_none(),
                    written_late,
                }
            })
            .collect();
        // The warp-uniform hidden registers need no lanes and share
        // nothing: they are left out of the sharing, and numbered after
        // every slot.
        let mut uniform = vec![false; registers as usize];
        for &(reg, init) in &scoreboard.warp_inits {
            uniform[reg as usize] = init.is_warp_uniform();
        }
        debug_assert!(
            uses.iter()
                .all(|used| used.writes.iter().all(|&r| !uniform[r as usize])),
            "an instruction writes a warp-uniform register"
        );
        let lane_uses: Vec<RegisterUse> = uses
            .into_iter()
            .map(|used| RegisterUse {
                reads: used
                    .reads
                    .into_iter()
                    .filter(|&r| !uniform[r as usize])
                    .collect(),
                ..used
            })
            .collect();
        let set_at_start: Vec<u32> = scoreboard
            .warp_inits
            .iter()
            .filter(|&&(reg, _)| !uniform[reg as usize])
            .map(|&(reg, _)| reg)
            .collect();
        let (slots, slot_count) = share_slots(
            &ir::cfg::Cfg::build(kernel),
            &lane_uses,
            registers as usize,
            &set_at_start,
            &scoreboard_wide,
        );
        // A slot is as wide as the widest register it holds, and the wide
        // slots are numbered first, so that the register file tells a
        // wide one by comparing its number (`warp::RegisterFile`).
        let mut slot_wide = vec![false; slot_count as usize];
        let mut slot_used = vec![false; slot_count as usize];
        for ((&slot, &wide), &uniform) in slots.iter().zip(&scoreboard_wide).zip(&uniform) {
            if !uniform {
                slot_wide[slot as usize] |= wide;
                slot_used[slot as usize] = true;
            }
        }
        let mut renumbered = vec![0u32; slot_count as usize];
        let wide_first = (0..slot_count as usize)
            .filter(|&slot| slot_used[slot] && slot_wide[slot])
            .chain((0..slot_count as usize).filter(|&slot| slot_used[slot] && !slot_wide[slot]));
        let mut lane_slots = 0;
        for (number, slot) in wide_first.enumerate() {
            renumbered[slot] = number as u32;
            lane_slots = number as u32 + 1;
        }
        let mut next_uniform = lane_slots;
        let slots: Vec<u32> = slots
            .iter()
            .zip(&uniform)
            .map(|(&slot, &uniform)| {
                if uniform {
                    next_uniform += 1;
                    next_uniform - 1
                } else {
                    renumbered[slot as usize]
                }
            })
            .collect();
        let (mut program, _) = Self::lower_with_slots(module, kernel, Some(&slots))?;
        program.value_regs = next_uniform;
        program.lane_value_regs = lane_slots;
        program.wide_value_regs = slot_wide
            .iter()
            .zip(&slot_used)
            .filter(|&(&wide, &used)| wide && used)
            .count() as u32;
        program.scoreboard_code = scoreboard.code;
        program.scoreboard_value_regs = scoreboard.value_regs;
        // The uniformity analysis depends on the IR alone: once per kernel.
        program.divergent_barriers = ir::uniformity::divergent_barriers(kernel);
        tracing::debug!(
            kernel = %kernel.name,
            instructions = program.code.len(),
            value_register_slots = program.lane_value_regs,
            warp_uniform_registers = program.value_regs - program.lane_value_regs,
            value_registers = program.scoreboard_value_regs,
            predicate_registers = program.pred_regs,
            hidden_registers = program.warp_inits.len(),
            static_shared_bytes = program.static_shared_bytes,
            local_bytes_per_thread = program.local_bytes,
            "lowered"
        );
        Ok(program)
    }

    /// Lowers `kernel`, value register `r` of the scoreboard's numbering
    /// stored in slot `value_slot[r]` (in its own slot without a map);
    /// `scoreboard_code` and `divergent_barriers` are left empty, and
    /// `value_regs` is the number of registers of the scoreboard's
    /// numbering, and the second result says which of those hold 64 bits.
    fn lower_with_slots(
        module: &Module,
        kernel: &Kernel,
        value_slot: Option<&[u32]>,
    ) -> Result<(Program, Vec<bool>), LowerError> {
        let read = read_registers(kernel);
        let mut lowerer = Lowerer {
            module,
            kernel,
            reg_slot: Vec::with_capacity(kernel.regs.len()),
            value_regs: 0,
            value_slot,
            value_wide: Vec::new(),
            warp_inits: Vec::new(),
            hidden: std::collections::HashMap::new(),
            symbol_address: vec![0; kernel.symbols.len()],
            global_variables: Vec::new(),
            global_variable_of: std::collections::HashMap::new(),
            loc: kernel.loc,
            carry_flag: None,
            read,
        };
        let mut pred_regs = 0;
        for reg in &kernel.regs {
            if reg.ty == ScalarType::Pred {
                lowerer.reg_slot.push(pred_regs);
                pred_regs += 1;
            } else {
                let slot = lowerer.new_value_register(reg.ty.size_bytes() > 4);
                lowerer.reg_slot.push(slot);
            }
        }
        let layout = lowerer.layout_symbols()?;
        let cfg = ir::cfg::Cfg::build(kernel);
        let reconvergence_points = cfg.reconvergence_points(kernel);
        let reconvergence_of = |instr: usize| -> u32 {
            match reconvergence_points[cfg.block_of[instr]] {
                Some(ir::cfg::Successor::Block(block)) => cfg.blocks[block].start.0,
                Some(ir::cfg::Successor::Exit) | None => NO_RECONVERGENCE,
            }
        };
        let mut code = Vec::with_capacity(kernel.instrs.len() + 1);
        let mut locations = Vec::with_capacity(kernel.instrs.len() + 1);
        for (index, instr) in kernel.instrs.iter().enumerate() {
            lowerer.loc = instr.loc;
            let guard = instr.guard.map(|guard| LoweredGuard {
                pred: lowerer.reg_slot[guard.reg.index()],
                negated: guard.negated,
            });
            let kind = match &instr.op {
                Op::Branch { target } => Kind::Branch {
                    target: kernel.label(*target).target.0,
                    reconverge: reconvergence_of(index),
                },
                // The location says the line; the text says which
                // instruction of it (a CUDA line lowers to several).
                op => lowerer.lower_op(op).map_err(|error| LowerError {
                    message: format!(
                        "`{}`: {}",
                        ir::instruction_text(kernel, instr),
                        error.message
                    ),
                    ..error
                })?,
            };
            code.push(Instruction { guard, kind });
            locations.push(instr.loc);
        }
        // Running past the last instruction exits, as a label at the end does.
        code.push(Instruction {
            guard: None,
            kind: Kind::Exit,
        });
        locations.push(kernel.instrs.last().map_or(kernel.loc, |instr| instr.loc));
        let program = Program {
            kernel_name: kernel.name.clone(),
            code,
            scoreboard_code: Vec::new(),
            locations,
            value_regs: lowerer.value_regs,
            lane_value_regs: lowerer.value_regs,
            wide_value_regs: 0,
            scoreboard_value_regs: 0,
            pred_regs,
            warp_inits: lowerer.warp_inits,
            params: layout.params,
            param_bytes: layout.param_bytes,
            static_shared_bytes: layout.static_shared_bytes,
            dynamic_shared_offset: layout.dynamic_shared_offset,
            local_bytes: layout.local_bytes,
            shared_variables: layout.shared_variables,
            const_data: layout.const_data,
            global_variables: lowerer.global_variables,
            communicates_across_blocks: kernel
                .instrs
                .iter()
                .any(|instr| communicates_across_blocks(&instr.op, &lowerer.read)),
            divergent_barriers: Vec::new(),
        };
        Ok((program, lowerer.value_wide))
    }
}

/// Whether `op` is a global atomic that ptxas makes a reduction (`RED`):
/// one whose old value no instruction reads (`read` says which registers
/// the kernel reads), of an operation `red` has (not an exchange or a
/// compare-and-swap).
fn is_reduction(op: &Op, read: &[bool]) -> bool {
    match op {
        Op::Atom {
            space: StateSpace::Global | StateSpace::Generic,
            op,
            dst: Some(dst),
            ..
        } => !read[dst.index()] && !matches!(op, AtomOp::Exch | AtomOp::Cas),
        _ => false,
    }
}

/// Whether an instruction can pass information between blocks; `read`
/// says which registers the kernel reads.
fn communicates_across_blocks(op: &Op, read: &[bool]) -> bool {
    let global = |space: &StateSpace| matches!(space, StateSpace::Global | StateSpace::Generic);
    match op {
        // A reduction returns nothing (nor does an atomic whose result no
        // instruction reads, which ptxas makes a `RED`), so no thread
        // learns from it what another block did: `store_buffer.rs` applies
        // them at the windows' ends.
        Op::Atom { dst: None, .. } => false,
        Op::Atom { .. } if is_reduction(op, read) => false,
        Op::Atom { space, .. } => global(space),
        Op::Load { space, order, .. } | Op::Store { space, order, .. } => {
            global(space) && *order != ir::MemoryOrder::Weak
        }
        _ => false,
    }
}

struct Layout {
    const_data: Vec<u8>,
    params: Vec<ParamSlot>,
    param_bytes: u32,
    static_shared_bytes: u32,
    dynamic_shared_offset: u32,
    local_bytes: u32,
    shared_variables: Vec<SharedVariable>,
}

/// Where a variable is: at an address known when lowering, or at one the
/// launch decides, which a hidden register holds.
enum SymbolAddress {
    Fixed(u64),
    Register(ValueReg),
}

/// The `size` initial bytes of a `.const` or `.global` variable: its values,
/// little-endian, then zeros.
fn initial_bytes(symbol: &ir::Symbol, size: u64) -> Vec<u8> {
    let element = symbol.ty.size_bytes() as usize;
    let mut bytes = vec![0u8; size as usize];
    for (slot, bits) in bytes.chunks_exact_mut(element).zip(&symbol.init) {
        slot.copy_from_slice(&bits.to_le_bytes()[..element]);
    }
    bytes
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align) * align
}

impl Lowerer<'_> {
    #[cold]
    fn error(&self, message: String) -> LowerError {
        LowerError {
            file: self.module.file_name(self.loc.file).to_string(),
            line: self.loc.line,
            message,
        }
    }

    /// Places parameters in the parameter buffer and variables in their
    /// windows, in declaration order with their alignment, as the CUDA
    /// toolchain does; dynamic shared memory follows the static variables.
    fn layout_symbols(&mut self) -> Result<Layout, LowerError> {
        let mut params = Vec::new();
        let mut param_end = 0u64;
        let mut shared_end = 0u64;
        let mut local_end = 0u64;
        let mut const_end = 0u64;
        let mut dynamic_align = 1u64;
        for (index, symbol) in self.kernel.symbols.iter().enumerate() {
            self.loc = symbol.loc;
            let align = u64::from(symbol.align.max(1));
            let end = match symbol.space {
                StateSpace::Param => &mut param_end,
                StateSpace::Shared => &mut shared_end,
                StateSpace::Local => &mut local_end,
                StateSpace::Const => &mut const_end,
                // `.global` variables live in buffers of their own, made
                // for those the kernel uses (see `symbol_address_of`).
                StateSpace::Global => continue,
                other => {
                    return Err(self.error(format!(
                        "variables in the .{} space are not supported",
                        other.name()
                    )))
                }
            };
            match symbol.size_bytes() {
                Some(size) => {
                    let offset = align_up(*end, align);
                    self.symbol_address[index] = offset;
                    *end = offset + size;
                    if *end > u64::from(u32::MAX) {
                        return Err(self.error(format!(
                            "`{}` does not fit in the .{} window",
                            symbol.name,
                            symbol.space.name()
                        )));
                    }
                    if symbol.space == StateSpace::Param {
                        params.push(ParamSlot {
                            name: symbol.name.clone(),
                            ty: symbol.ty,
                            offset: offset as u32,
                            size: size as u32,
                            is_array: symbol.is_array,
                        });
                    }
                }
                None => dynamic_align = dynamic_align.max(align),
            }
        }
        // Dynamic shared memory starts after the static variables, aligned for
        // every extern array (they all alias its start, as in CUDA).
        let dynamic_shared_offset = align_up(shared_end, dynamic_align.max(16));
        for (index, symbol) in self.kernel.symbols.iter().enumerate() {
            if symbol.len.is_none() {
                self.symbol_address[index] = dynamic_shared_offset;
            }
        }
        let mut shared_variables: Vec<SharedVariable> = self
            .kernel
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, symbol)| symbol.space == StateSpace::Shared)
            .map(|(index, symbol)| SharedVariable {
                name: symbol.name.clone(),
                offset: self.symbol_address[index] as u32,
                size: symbol.size_bytes().map(|size| size as u32),
            })
            .collect();
        shared_variables.sort_by_key(|variable| variable.offset);
        if const_end > crate::MAX_CONST_BYTES {
            return Err(self.const_too_large(const_end));
        }
        let mut const_data = vec![0u8; const_end as usize];
        for (index, symbol) in self.kernel.symbols.iter().enumerate() {
            // `.global` variables take initial values too, in their own buffers.
            if symbol.space != StateSpace::Const {
                continue;
            }
            let start = self.symbol_address[index] as usize;
            let bytes = initial_bytes(symbol, symbol.size_bytes().unwrap_or(0));
            const_data[start..start + bytes.len()].copy_from_slice(&bytes);
        }
        Ok(Layout {
            const_data,
            params,
            param_bytes: param_end as u32,
            static_shared_bytes: shared_end as u32,
            dynamic_shared_offset: dynamic_shared_offset as u32,
            local_bytes: local_end as u32,
            shared_variables,
        })
    }

    /// The error of a kernel whose `.const` variables take `const_bytes`,
    /// more than constant memory holds, at its largest `.const` variable
    /// (the one to make smaller). It is found while laying out, before the
    /// constant data would be allocated.
    #[cold]
    fn const_too_large(&mut self, const_bytes: u64) -> LowerError {
        let largest = self
            .kernel
            .symbols
            .iter()
            .filter(|symbol| symbol.space == StateSpace::Const)
            .filter_map(|symbol| Some((symbol, symbol.size_bytes()?)))
            .max_by_key(|&(_, bytes)| bytes);
        let named = match largest {
            Some((symbol, bytes)) => {
                self.loc = symbol.loc;
                format!("; the largest is `{}`, {bytes} bytes", symbol.name)
            }
            None => String::new(),
        };
        self.error(format!(
            "the kernel's .const variables take {const_bytes} bytes, more than the {} bytes (64 KiB) of constant memory{named}",
            crate::MAX_CONST_BYTES
        ))
    }

    /// A variable's address in its own space: a number known now, or the
    /// hidden register of a `.global` variable's address, known at launch.
    fn symbol_address_of(&mut self, symbol: ir::SymbolId) -> SymbolAddress {
        let declared = self.kernel.symbol(symbol);
        if declared.space != StateSpace::Global {
            return SymbolAddress::Fixed(self.symbol_address[symbol.index()]);
        }
        // The first use of a `.global` variable gives it a place among the
        // launch's buffers: the kernel gets the variables it uses, not
        // every constant of every header the module included.
        let index = match self.global_variable_of.get(&symbol) {
            Some(&index) => index,
            None => {
                let index = self.global_variables.len() as u32;
                let size = declared.size_bytes().unwrap_or(0);
                self.global_variables.push(GlobalVariable {
                    name: declared.name.clone(),
                    ty: declared.ty,
                    size,
                    initial: initial_bytes(declared, size),
                    loc: declared.loc,
                });
                self.global_variable_of.insert(symbol, index);
                index
            }
        };
        SymbolAddress::Register(self.hidden_register(WarpInit::GlobalVariable(index)))
    }

    /// The hidden register of the carry flag: a value register no
    /// instruction of the IR names, zero when a warp starts (PTX leaves the
    /// flag's first value undefined).
    fn carry_flag_register(&mut self) -> ValueReg {
        if let Some(reg) = self.carry_flag {
            return reg;
        }
        let reg = self.new_value_register(false);
        self.carry_flag = Some(reg);
        reg
    }

    /// Numbers a new value register, of 64 bits if `wide`; returns its slot.
    fn new_value_register(&mut self, wide: bool) -> ValueReg {
        let reg = self.value_regs;
        self.value_regs += 1;
        self.value_wide.push(wide);
        self.value_slot.map_or(reg, |slots| slots[reg as usize])
    }

    fn hidden_register(&mut self, init: WarpInit) -> ValueReg {
        if let Some(&reg) = self.hidden.get(&init) {
            return reg;
        }
        let wide = match init {
            WarpInit::Constant(bits) => bits > u64::from(u32::MAX),
            WarpInit::Special(special) => special.ty().size_bytes() > 4,
            WarpInit::GlobalVariable(_) => true,
        };
        let reg = self.new_value_register(wide);
        self.warp_inits.push((reg, init));
        self.hidden.insert(init, reg);
        reg
    }

    fn value(&mut self, operand: &Operand) -> Result<ValueReg, LowerError> {
        Ok(match *operand {
            Operand::Reg(reg) => {
                if self.kernel.reg(reg).ty == ScalarType::Pred {
                    return Err(self.error(format!(
                        "predicate `{}` used where a value is read",
                        self.kernel.reg(reg).name
                    )));
                }
                self.reg_slot[reg.index()]
            }
            Operand::Imm { bits, .. } => self.hidden_register(WarpInit::Constant(bits)),
            Operand::Special(SpecialReg::Clock | SpecialReg::Clock64) => {
                return Err(
                    self.error("`%clock` and `%clock64` can only be read by `mov`".to_string())
                )
            }
            Operand::Special(special) => self.hidden_register(WarpInit::Special(special)),
            Operand::Symbol(symbol) => match self.symbol_address_of(symbol) {
                SymbolAddress::Fixed(address) => self.hidden_register(WarpInit::Constant(address)),
                SymbolAddress::Register(register) => register,
            },
        })
    }

    /// The registers of a vector's elements (`st.v4`, `mov.b64 d, {a, b}`),
    /// at most four, in order; the unused slots stay 0.
    fn values(&mut self, operands: &[Operand]) -> Result<[ValueReg; 4], LowerError> {
        let mut registers = [0; 4];
        for (slot, operand) in registers.iter_mut().zip(operands) {
            *slot = self.value(operand)?;
        }
        Ok(registers)
    }

    fn optional_value(
        &mut self,
        operand: &Option<Operand>,
    ) -> Result<Option<ValueReg>, LowerError> {
        operand
            .as_ref()
            .map(|operand| self.value(operand))
            .transpose()
    }

    fn pred(&self, operand: &PredOperand) -> Result<(PredReg, bool), LowerError> {
        match operand.value {
            Operand::Reg(reg) if self.kernel.reg(reg).ty == ScalarType::Pred => {
                Ok((self.reg_slot[reg.index()], operand.negated))
            }
            _ => Err(self.error("a predicate operand must be a `.pred` register".to_string())),
        }
    }

    /// A predicate read as it is, where the IR has a plain operand (the
    /// sources of `and.pred` and `not.pred`).
    fn plain_pred(&self, operand: &Operand) -> Result<PredReg, LowerError> {
        let (reg, _) = self.pred(&PredOperand {
            value: *operand,
            negated: false,
        })?;
        Ok(reg)
    }

    /// The `, c` operand that `setp.cmp.op` and `set.cmp.op` combine their
    /// comparison with: the operation, the predicate and whether it is negated.
    fn combine(
        &self,
        combine: &Option<(BoolOp, PredOperand)>,
    ) -> Result<Option<(BoolOp, PredReg, bool)>, LowerError> {
        combine
            .as_ref()
            .map(|(op, pred)| {
                let (reg, negated) = self.pred(pred)?;
                Ok((*op, reg, negated))
            })
            .transpose()
    }

    fn dst(&self, reg: ir::RegId) -> u32 {
        self.reg_slot[reg.index()]
    }

    fn int_type(ty: ScalarType) -> IntType {
        IntType {
            bits: ty.bits() as u8,
            signed: ty.is_signed(),
        }
    }

    fn number_type(ty: ScalarType) -> NumberType {
        Self::float_type(ty).map_or_else(|| NumberType::Int(Self::int_type(ty)), NumberType::Float)
    }

    fn float_type(ty: ScalarType) -> Option<FloatType> {
        match ty {
            ScalarType::F32 => Some(FloatType::F32),
            ScalarType::F64 => Some(FloatType::F64),
            _ => None,
        }
    }

    /// `.f32` or `.f64`, which `what` needs.
    fn float_or_error(&self, ty: ScalarType, what: &str) -> Result<FloatType, LowerError> {
        Self::float_type(ty)
            .ok_or_else(|| self.error(format!("`{what}` takes `.f32` or `.f64`, not `.{ty}`")))
    }

    /// The element width of a `mov` that packs or unpacks `count` elements.
    fn element_bits(&self, ty: ScalarType, count: usize) -> Result<u8, LowerError> {
        match Op::vector_element_type(ty, count) {
            Some(element) if matches!(count, 2 | 4) => Ok(element.bits() as u8),
            _ => Err(self.error(format!("`mov.{ty}` cannot be split into {count} elements"))),
        }
    }

    fn address(&mut self, addr: &ir::Address) -> Result<LoweredAddress, LowerError> {
        Ok(match addr.base {
            AddressBase::Reg(reg) => LoweredAddress {
                base: Some(self.reg_slot[reg.index()]),
                base_bits: self.kernel.reg(reg).ty.bits() as u8,
                offset: addr.offset,
            },
            AddressBase::Symbol(symbol) => match self.symbol_address_of(symbol) {
                SymbolAddress::Fixed(address) => LoweredAddress {
                    base: None,
                    base_bits: 64,
                    offset: (address as i64)
                        .checked_add(addr.offset)
                        .ok_or_else(|| self.error("the address offset is too large".to_string()))?,
                },
                SymbolAddress::Register(register) => LoweredAddress {
                    base: Some(register),
                    base_bits: 64,
                    offset: addr.offset,
                },
            },
            AddressBase::Absolute => LoweredAddress {
                base: None,
                base_bits: 64,
                offset: addr.offset,
            },
        })
    }

    fn memory_value(&self, ty: ScalarType, register: Option<ir::RegId>) -> MemoryValue {
        let register_bits = register.map_or(ty.bits(), |reg| self.kernel.reg(reg).ty.bits());
        MemoryValue {
            size: ty.size_bytes() as u8,
            sign_extend: ty.is_signed(),
            register_bits: register_bits.max(ty.bits()) as u8,
        }
    }

    /// Arithmetic of the 16-bit float types (`.f16`, `.f16x2`, `.bf16`,
    /// `.bf16x2`): `Some` kind for the operations the machine has, an error
    /// for the other forms of these types, `None` for everything else
    /// (including `mov`, `ld`, `st`, `selp` of them, which move bits, and
    /// `cvt` to and from `.f16`, which `lower_op` handles).
    fn lower_half(&mut self, op: &Op) -> Result<Option<Kind>, LowerError> {
        let bf16 = |ty: &ScalarType| matches!(ty, ScalarType::Bf16 | ScalarType::Bf16x2);
        let unsupported = |lowerer: &Self, what: &str, ty: &ScalarType| {
            Err(lowerer.error(format!(
                "{what} is not supported for `.{ty}`; half-precision arithmetic is `add sub mul fma.rn neg abs min max`, `fma.rn.relu`, `min.NaN` and `max.NaN`, `set` into the same type, `setp` of `.f16` and `.bf16`, and `cvt` of `.f16` and `.bf16` (and `cvt.rn.f16x2.f32 d, a, b` into pairs)"
            )))
        };
        Ok(Some(match op {
            Op::Binary {
                op, ty, dst, a, b, ..
            } if ty.is_half() => {
                let op = match op {
                    BinaryOp::Add => HalfBinary::Add,
                    BinaryOp::Sub => HalfBinary::Sub,
                    BinaryOp::Mul => HalfBinary::Mul,
                    BinaryOp::Min => HalfBinary::Min,
                    BinaryOp::Max => HalfBinary::Max,
                    BinaryOp::MinNan => HalfBinary::MinNan,
                    BinaryOp::MaxNan => HalfBinary::MaxNan,
                    other => return unsupported(self, &format!("`{other:?}`").to_lowercase(), ty),
                };
                let (packed, dst) = (ty.is_half_pair(), self.dst(*dst));
                let (a, b) = (self.value(a)?, self.value(b)?);
                if bf16(ty) {
                    Kind::Bf16Binary {
                        op,
                        packed,
                        dst,
                        a,
                        b,
                    }
                } else {
                    Kind::HalfBinary {
                        op,
                        packed,
                        dst,
                        a,
                        b,
                    }
                }
            }
            Op::Unary {
                op: UnaryOp::Mov, ..
            } => return Ok(None),
            Op::Unary { op, ty, dst, a } if ty.is_half() => {
                let op = match op {
                    UnaryOp::Neg => HalfUnary::Neg,
                    UnaryOp::Abs => HalfUnary::Abs,
                    other => return unsupported(self, &format!("`{other:?}`").to_lowercase(), ty),
                };
                let (packed, dst, a) = (ty.is_half_pair(), self.dst(*dst), self.value(a)?);
                if bf16(ty) {
                    Kind::Bf16Unary { op, packed, dst, a }
                } else {
                    Kind::HalfUnary { op, packed, dst, a }
                }
            }
            Op::MulAdd {
                mode: mode @ (MulAddMode::Fused | MulAddMode::FusedRelu),
                ty,
                dst,
                a,
                b,
                c,
                ..
            } if ty.is_half() => {
                let (packed, relu) = (ty.is_half_pair(), *mode == MulAddMode::FusedRelu);
                let dst = self.dst(*dst);
                let (a, b, c) = (self.value(a)?, self.value(b)?, self.value(c)?);
                if bf16(ty) {
                    Kind::Bf16Fma {
                        packed,
                        relu,
                        dst,
                        a,
                        b,
                        c,
                    }
                } else {
                    Kind::HalfFma {
                        packed,
                        relu,
                        dst,
                        a,
                        b,
                        c,
                    }
                }
            }
            Op::MulAdd { ty, .. } if ty.is_half() => {
                return unsupported(self, "`fma` with a directed rounding", ty)
            }
            Op::MulAdd {
                mode: MulAddMode::FusedRelu,
                ty,
                ..
            } => return unsupported(self, "`fma.rn.relu`", ty),
            Op::Setp {
                cmp,
                ty: ty @ (ScalarType::F16 | ScalarType::Bf16),
                dst,
                dst_not,
                a,
                b,
                combine,
            } => {
                let combine = self.combine(combine)?;
                let (cmp, dst, dst_not) = (*cmp, self.dst(*dst), dst_not.map(|q| self.dst(q)));
                let (a, b) = (self.value(a)?, self.value(b)?);
                if *ty == ScalarType::Bf16 {
                    Kind::Bf16Setp {
                        cmp,
                        dst,
                        dst_not,
                        a,
                        b,
                        combine,
                    }
                } else {
                    Kind::HalfSetp {
                        cmp,
                        dst,
                        dst_not,
                        a,
                        b,
                        combine,
                    }
                }
            }
            Op::Setp { ty, .. } if ty.is_half() => return unsupported(self, "`setp`", ty),
            Op::Set {
                cmp,
                dst_ty,
                src_ty,
                dst,
                a,
                b,
                combine,
            } if dst_ty.is_half() && dst_ty == src_ty => Kind::HalfSet {
                cmp: *cmp,
                format: if bf16(dst_ty) {
                    HalfFormat::Bf16
                } else {
                    HalfFormat::F16
                },
                packed: dst_ty.is_half_pair(),
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                combine: self.combine(combine)?,
            },
            Op::Set { src_ty, .. } if src_ty.is_half_pair() => {
                return unsupported(self, "`set` into other types", src_ty)
            }
            Op::Atom { ty, .. } if ty.is_half() => return unsupported(self, "`atom`/`red`", ty),
            Op::Cvt { dst_ty, src_ty, .. } if dst_ty.is_half_pair() || src_ty.is_half_pair() => {
                let pair = if dst_ty.is_half_pair() {
                    dst_ty
                } else {
                    src_ty
                };
                return unsupported(self, "`cvt`", pair);
            }
            Op::Cvt {
                dst_ty,
                src_ty,
                rounding,
                saturate,
                dst,
                src,
            } if *dst_ty == ScalarType::Bf16 || *src_ty == ScalarType::Bf16 => {
                self.lower_bf16_cvt(*dst_ty, *src_ty, *rounding, *saturate, *dst, src)?
            }
            _ => return Ok(None),
        }))
    }

    /// `cvt` to or from `.bf16`: from integers, `.f32`, `.f64` with any float
    /// rounding and to them as `cvt` from `.f32` converts, and from `.bf16`
    /// to `.bf16` with an integer rounding (`htrunc`, `hfloor`).
    /// Conversions between `.bf16` and `.f16` are refused.
    fn lower_bf16_cvt(
        &mut self,
        dst_ty: ScalarType,
        src_ty: ScalarType,
        rounding: Option<Rounding>,
        saturate: bool,
        dst: ir::RegId,
        src: &Operand,
    ) -> Result<Kind, LowerError> {
        let refuse = |lowerer: &Self| {
            Err(lowerer.error(format!(
                "`cvt{}.{dst_ty}.{src_ty}` is not supported: `.bf16` converts to and from integers, `.f32` and `.f64`, and to itself with an integer rounding (`.rni .rzi .rmi .rpi`)",
                rounding.map_or(String::new(), |r| format!(".{}", r.name()))
            )))
        };
        if dst_ty == ScalarType::Bf16 {
            let integer_rounding = rounding.is_some_and(Rounding::is_integer_rounding);
            let from = match src_ty {
                ScalarType::Bf16 if integer_rounding => Bf16Source::Bf16,
                ScalarType::F32 | ScalarType::F64 if !integer_rounding => {
                    Bf16Source::Float(Self::float_type(src_ty).unwrap_or(FloatType::F32))
                }
                ty if ty.is_integer() && !integer_rounding => Bf16Source::Int(Self::int_type(ty)),
                _ => return refuse(self),
            };
            Ok(Kind::CvtToBf16 {
                from,
                // PTX asks for a rounding on every conversion that may
                // round; one left out is read as to nearest even.
                rounding: rounding.unwrap_or(Rounding::Rn),
                saturate,
                dst: self.dst(dst),
                src: self.value(src)?,
            })
        } else {
            if !(dst_ty.is_integer() || matches!(dst_ty, ScalarType::F32 | ScalarType::F64)) {
                return refuse(self);
            }
            Ok(Kind::CvtFromBf16 {
                to: Self::number_type(dst_ty),
                rounding,
                saturate,
                dst: self.dst(dst),
                src: self.value(src)?,
            })
        }
    }

    /// `.sat` arithmetic: `add`/`sub` and `mad.hi` of `.s32` clamped to the
    /// `.s32` range, `add`/`sub`/`mul`/`fma` of `.f32` clamped to [0, 1].
    fn lower_saturating(&mut self, op: &Op) -> Result<Option<Kind>, LowerError> {
        let (sat_op, ty, dst, a, b, c) = match op {
            Op::Binary {
                op,
                ty,
                saturate: true,
                dst,
                a,
                b,
            } => {
                let sat_op = match op {
                    BinaryOp::Add => SatOp::Add,
                    BinaryOp::Sub => SatOp::Sub,
                    BinaryOp::Mul => SatOp::Mul,
                    other => {
                        return Err(self.error(format!("`.sat` is not defined for `{other:?}`")))
                    }
                };
                (sat_op, *ty, dst, a, b, a)
            }
            Op::MulAdd {
                mode,
                ty,
                saturate: true,
                dst,
                a,
                b,
                c,
            } => {
                let valid = matches!(
                    (mode, ty),
                    (MulAddMode::Hi, ScalarType::S32) | (MulAddMode::Fused, ScalarType::F32)
                );
                if !valid {
                    return Err(self.error(
                        "`.sat` is supported on `mad.hi.s32` and `fma.rn.f32` only".to_string(),
                    ));
                }
                (SatOp::MulAdd, *ty, dst, a, b, c)
            }
            _ => return Ok(None),
        };
        let (dst, a, b, c) = (
            self.dst(*dst),
            self.value(a)?,
            self.value(b)?,
            self.value(c)?,
        );
        Ok(Some(match (ty, sat_op) {
            (ScalarType::S32, SatOp::Add | SatOp::Sub | SatOp::MulAdd) => Kind::SatS32 {
                op: sat_op,
                dst,
                a,
                b,
                c,
            },
            (ScalarType::F32, _) => Kind::SatF32 {
                op: sat_op,
                dst,
                a,
                b,
                c,
            },
            _ => {
                return Err(self.error(format!(
                    "`.sat` is supported on `.s32` and `.f32` only, not `.{ty}`"
                )))
            }
        }))
    }

    fn lower_op(&mut self, op: &Op) -> Result<Kind, LowerError> {
        if let Some(kind) = self.lower_saturating(op)? {
            return Ok(kind);
        }
        if let Some(kind) = self.lower_half(op)? {
            return Ok(kind);
        }
        Ok(match op {
            Op::Binary {
                op, ty, dst, a, b, ..
            } if *ty == ScalarType::Pred => {
                let bool_op = match op {
                    BinaryOp::And => BoolOp::And,
                    BinaryOp::Or => BoolOp::Or,
                    BinaryOp::Xor => BoolOp::Xor,
                    other => {
                        return Err(self.error(format!("`{other:?}` on predicates").to_lowercase()))
                    }
                };
                let a = self.plain_pred(a)?;
                let b = self.plain_pred(b)?;
                Kind::PredBinary {
                    op: bool_op,
                    dst: self.dst(*dst),
                    a,
                    a_negated: false,
                    b,
                    b_negated: false,
                }
            }
            Op::Binary {
                op, ty, dst, a, b, ..
            } => {
                let dst = self.dst(*dst);
                let (a, b) = (self.value(a)?, self.value(b)?);
                match Self::float_type(*ty) {
                    Some(float) => {
                        let op = match op {
                            BinaryOp::Add => FloatBinary::Add,
                            BinaryOp::Sub => FloatBinary::Sub,
                            BinaryOp::Mul => FloatBinary::Mul,
                            BinaryOp::Div => FloatBinary::Div,
                            BinaryOp::Min => FloatBinary::Min,
                            BinaryOp::Max => FloatBinary::Max,
                            BinaryOp::MinNan | BinaryOp::MaxNan => {
                                return Err(self.error(format!(
                                    "`min.NaN` and `max.NaN` are supported for the half types only, not `.{ty}`"
                                )))
                            }
                            other => {
                                return Err(
                                    self.error(format!("`{other:?}` is not defined for floats"))
                                )
                            }
                        };
                        Kind::FloatBinary {
                            op,
                            ty: float,
                            dst,
                            a,
                            b,
                        }
                    }
                    None => {
                        let op = match op {
                            BinaryOp::Add => IntBinary::Add,
                            BinaryOp::Sub => IntBinary::Sub,
                            BinaryOp::Mul => IntBinary::MulLo,
                            BinaryOp::MulHi => IntBinary::MulHi,
                            BinaryOp::MulWide => IntBinary::MulWide,
                            BinaryOp::Div => IntBinary::Div,
                            BinaryOp::Rem => IntBinary::Rem,
                            BinaryOp::Min => IntBinary::Min,
                            BinaryOp::Max => IntBinary::Max,
                            BinaryOp::MinNan | BinaryOp::MaxNan => {
                                return Err(self.error(format!(
                                    "`min.NaN` and `max.NaN` are not defined for `.{ty}`"
                                )))
                            }
                            BinaryOp::And => IntBinary::And,
                            BinaryOp::Or => IntBinary::Or,
                            BinaryOp::Xor => IntBinary::Xor,
                            BinaryOp::Shl => IntBinary::Shl,
                            BinaryOp::Shr => IntBinary::Shr,
                        };
                        Kind::IntBinary {
                            op,
                            ty: Self::int_type(*ty),
                            dst,
                            a,
                            b,
                        }
                    }
                }
            }
            Op::Unary {
                op: UnaryOp::Mov,
                ty: _,
                dst,
                a: Operand::Special(special @ (SpecialReg::Clock | SpecialReg::Clock64)),
            } => Kind::ReadClock {
                dst: self.dst(*dst),
                wide: *special == SpecialReg::Clock64,
            },
            Op::Unary {
                op: UnaryOp::Mov,
                ty: ScalarType::Pred,
                dst,
                a: Operand::Imm { bits, .. },
            } => {
                // `mov.pred %p, 1` is `%p or !%p`, true whatever `%p` held;
                // `mov.pred %p, 0` is `%p and !%p`, false.
                let dst = self.dst(*dst);
                Kind::PredBinary {
                    op: if *bits != 0 { BoolOp::Or } else { BoolOp::And },
                    dst,
                    a: dst,
                    a_negated: false,
                    b: dst,
                    b_negated: true,
                }
            }
            Op::Unary { op, ty, dst, a } if *ty == ScalarType::Pred => {
                let source = self.plain_pred(a)?;
                let negated = match op {
                    UnaryOp::Mov => false,
                    UnaryOp::Not => true,
                    other => {
                        return Err(self.error(format!("`{other:?}` on predicates").to_lowercase()))
                    }
                };
                // `mov` is `a or a`; `not` is `!a or !a`.
                Kind::PredBinary {
                    op: BoolOp::Or,
                    dst: self.dst(*dst),
                    a: source,
                    a_negated: negated,
                    b: source,
                    b_negated: negated,
                }
            }
            Op::Unary { op, ty, dst, a } => {
                let dst = self.dst(*dst);
                let a = self.value(a)?;
                match (Self::float_type(*ty), op) {
                    (_, UnaryOp::Mov) => Kind::IntUnary {
                        op: IntUnary::Mov,
                        ty: Self::int_type(*ty),
                        dst,
                        a,
                    },
                    (Some(float), _) => {
                        let op = match op {
                            UnaryOp::Neg => FloatUnary::Neg,
                            UnaryOp::Abs => FloatUnary::Abs,
                            UnaryOp::Sqrt => FloatUnary::Sqrt,
                            UnaryOp::Rcp => FloatUnary::Rcp,
                            UnaryOp::Rsqrt => FloatUnary::Rsqrt,
                            UnaryOp::Ex2 => FloatUnary::Ex2,
                            UnaryOp::Lg2 => FloatUnary::Lg2,
                            UnaryOp::Sin => FloatUnary::Sin,
                            UnaryOp::Cos => FloatUnary::Cos,
                            other => {
                                return Err(
                                    self.error(format!("`{other:?}` is not defined for floats"))
                                )
                            }
                        };
                        Kind::FloatUnary {
                            op,
                            ty: float,
                            dst,
                            a,
                        }
                    }
                    (None, _) => {
                        let op = match op {
                            UnaryOp::Neg => IntUnary::Neg,
                            UnaryOp::Abs => IntUnary::Abs,
                            UnaryOp::Not => IntUnary::Not,
                            UnaryOp::Popc => IntUnary::Popc,
                            UnaryOp::Clz => IntUnary::Clz,
                            UnaryOp::Brev => IntUnary::Brev,
                            UnaryOp::Bfind => IntUnary::Bfind,
                            UnaryOp::BfindShiftAmount => IntUnary::BfindShiftAmount,
                            other => {
                                return Err(
                                    self.error(format!("`{other:?}` is not defined for integers"))
                                )
                            }
                        };
                        Kind::IntUnary {
                            op,
                            ty: Self::int_type(*ty),
                            dst,
                            a,
                        }
                    }
                }
            }
            Op::MulAdd {
                mode,
                ty,
                dst,
                a,
                b,
                c,
                ..
            } => {
                let dst = self.dst(*dst);
                let (a, b, c) = (self.value(a)?, self.value(b)?, self.value(c)?);
                match (mode, Self::float_type(*ty)) {
                    (MulAddMode::Fused, Some(float)) => Kind::Fma {
                        ty: float,
                        dst,
                        a,
                        b,
                        c,
                    },
                    (MulAddMode::FusedDirected(rounding), Some(FloatType::F32)) => {
                        Kind::FmaDirected {
                            rounding: *rounding,
                            dst,
                            a,
                            b,
                            c,
                        }
                    }
                    (MulAddMode::FusedDirected(_), Some(FloatType::F64)) => {
                        return Err(self.error(
                            "`fma` with a directed rounding is supported for `.f32` only"
                                .to_string(),
                        ))
                    }
                    (MulAddMode::Fused | MulAddMode::FusedDirected(_), None) | (_, Some(_)) => {
                        return Err(self
                            .error("`fma` needs a float type, `mad` an integer type".to_string()))
                    }
                    (mode, None) => Kind::IntMulAdd {
                        mode: *mode,
                        ty: Self::int_type(*ty),
                        dst,
                        a,
                        b,
                        c,
                    },
                }
            }
            Op::Set {
                cmp,
                dst_ty,
                src_ty,
                dst,
                a,
                b,
                combine,
            } => {
                let half = match src_ty {
                    ScalarType::F16 => Some(HalfFormat::F16),
                    ScalarType::Bf16 => Some(HalfFormat::Bf16),
                    _ => None,
                };
                let combine = self.combine(combine)?;
                Kind::Set {
                    cmp: *cmp,
                    ty: Self::number_type(*src_ty),
                    half,
                    float_result: *dst_ty == ScalarType::F32,
                    dst: self.dst(*dst),
                    a: self.value(a)?,
                    b: self.value(b)?,
                    combine,
                }
            }
            Op::Setp {
                cmp,
                ty,
                dst,
                dst_not,
                a,
                b,
                combine,
            } => {
                let combine = self.combine(combine)?;
                Kind::Setp {
                    cmp: *cmp,
                    ty: Self::number_type(*ty),
                    dst: self.dst(*dst),
                    dst_not: dst_not.map(|q| self.dst(q)),
                    a: self.value(a)?,
                    b: self.value(b)?,
                    combine,
                }
            }
            Op::Selp {
                dst, a, b, cond, ..
            } => {
                let (cond, negated) = self.pred(cond)?;
                Kind::Selp {
                    dst: self.dst(*dst),
                    a: self.value(a)?,
                    b: self.value(b)?,
                    cond,
                    negated,
                }
            }
            Op::Cvt {
                dst_ty,
                src_ty,
                rounding,
                saturate,
                dst,
                src,
            } if *dst_ty == ScalarType::F16 || *src_ty == ScalarType::F16 => {
                let to_half = *dst_ty == ScalarType::F16;
                let other = if to_half { *src_ty } else { *dst_ty };
                let exact_path = other == ScalarType::F32 || !to_half;
                let nearest = matches!(rounding, None | Some(warpsim_ir::Rounding::Rn));
                if other == ScalarType::F16 || !exact_path || (to_half && (!nearest || *saturate)) {
                    return Err(self.error(
                        "only `cvt.f32.f16`-style conversions from `.f16` and `cvt.rn.f16.f32` are supported"
                            .to_string(),
                    ));
                }
                Kind::CvtHalf {
                    to_half,
                    other: Self::number_type(other),
                    rounding: *rounding,
                    saturate: *saturate,
                    dst: self.dst(*dst),
                    src: self.value(src)?,
                }
            }
            Op::CvtPair {
                dst_ty,
                rounding,
                dst,
                a,
                b,
            } => Kind::CvtPair {
                format: if *dst_ty == ScalarType::Bf16x2 {
                    HalfFormat::Bf16
                } else {
                    HalfFormat::F16
                },
                rounding: *rounding,
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
            },
            Op::Cvt {
                dst_ty,
                src_ty,
                rounding,
                saturate,
                dst,
                src,
            } => Kind::Cvt {
                dst_ty: Self::number_type(*dst_ty),
                src_ty: Self::number_type(*src_ty),
                rounding: *rounding,
                saturate: *saturate,
                dst: self.dst(*dst),
                src: self.value(src)?,
            },
            Op::Load {
                space,
                order,
                ty,
                dst,
                addr,
                ..
            } => {
                let mut registers = [0; 4];
                for (slot, reg) in registers.iter_mut().zip(dst) {
                    *slot = self.dst(*reg);
                }
                Kind::Load {
                    space: *space,
                    order: *order,
                    value: self.memory_value(*ty, dst.first().copied()),
                    dst: registers,
                    count: dst.len() as u8,
                    addr: self.address(addr)?,
                }
            }
            Op::Store {
                space,
                order,
                ty,
                addr,
                src,
            } => {
                let registers = self.values(src)?;
                Kind::Store {
                    space: *space,
                    order: *order,
                    value: self.memory_value(*ty, None),
                    src: registers,
                    count: src.len() as u8,
                    addr: self.address(addr)?,
                }
            }
            atom @ Op::Atom {
                space,
                order,
                op,
                ty,
                dst,
                addr,
                a,
                b,
            } => Kind::Atom {
                space: *space,
                order: *order,
                op: *op,
                ty: Self::number_type(*ty),
                size: ty.size_bytes() as u8,
                // A reduction in all but name writes no register, as ptxas
                // makes it.
                dst: dst
                    .filter(|_| !is_reduction(atom, &self.read))
                    .map(|reg| self.dst(reg)),
                addr: self.address(addr)?,
                a: self.value(a)?,
                b: self.optional_value(b)?,
            },
            // Asynchronous copies and mbarriers.
            Op::CpAsync {
                size,
                dst,
                src,
                src_size,
                ignore_src,
                ..
            } => Kind::CpAsync {
                size: *size as u8,
                dst: self.address(dst)?,
                src: self.address(src)?,
                src_size: self.optional_value(src_size)?,
                ignore_src: ignore_src
                    .as_ref()
                    .map(|pred| self.pred(pred))
                    .transpose()?,
            },
            Op::CpAsyncCommitGroup => Kind::CpAsyncCommitGroup,
            Op::CpAsyncWait { pending } => Kind::CpAsyncWait { pending: *pending },
            Op::CpAsyncMbarrierArrive { noinc, addr } => Kind::CpAsyncMbarrierArrive {
                noinc: *noinc,
                addr: self.address(addr)?,
            },
            Op::CpAsyncBulk {
                dst,
                src,
                size,
                mbarrier,
            } => Kind::CpAsyncBulk {
                dst: self.address(dst)?,
                src: self.address(src)?,
                size: self.value(size)?,
                mbarrier: self.address(mbarrier)?,
            },
            Op::Mbarrier { op, space, addr } => {
                let action = match op {
                    ir::MbarrierOp::Init { count } => MbarrierAction::Init {
                        count: self.value(count)?,
                    },
                    ir::MbarrierOp::Arrive {
                        drop,
                        state,
                        count,
                        expect_tx,
                    } => MbarrierAction::Arrive {
                        drop: *drop,
                        state: state.map(|reg| self.dst(reg)),
                        count: self.optional_value(count)?,
                        expect_tx: self.optional_value(expect_tx)?,
                    },
                    ir::MbarrierOp::ExpectTx { bytes } => MbarrierAction::ExpectTx {
                        bytes: self.value(bytes)?,
                    },
                    ir::MbarrierOp::CompleteTx { bytes } => MbarrierAction::CompleteTx {
                        bytes: self.value(bytes)?,
                    },
                    ir::MbarrierOp::Wait {
                        try_wait,
                        parity,
                        done,
                        phase,
                        ..
                    } => MbarrierAction::Wait {
                        try_wait: *try_wait,
                        parity: *parity,
                        done: self.dst(*done),
                        phase: self.value(phase)?,
                    },
                    ir::MbarrierOp::Invalidate => MbarrierAction::Invalidate,
                };
                Kind::Mbarrier {
                    action,
                    space: *space,
                    addr: self.address(addr)?,
                }
            }
            Op::MbarrierPendingCount { dst, state } => Kind::MbarrierPendingCount {
                dst: self.dst(*dst),
                state: self.value(state)?,
            },
            Op::Barrier {
                kind,
                id,
                count,
                reduction,
            } => {
                let reduction = match (kind, reduction) {
                    (BarrierKind::Reduce(reduce), Some((dst, pred))) => {
                        let (pred, negated) = self.pred(pred)?;
                        Some(BarrierReductionOperands {
                            reduction: *reduce,
                            dst: self.dst(*dst),
                            pred,
                            negated,
                        })
                    }
                    _ => None,
                };
                Kind::Barrier {
                    kind: *kind,
                    id: self.value(id)?,
                    count: self.optional_value(count)?,
                    reduction,
                }
            }
            Op::WarpSync { mask } => Kind::WarpSync {
                mask: self.value(mask)?,
            },
            Op::Fence { kind, scope } => Kind::Fence {
                kind: *kind,
                scope: *scope,
            },
            Op::Shuffle {
                mode,
                dst,
                dst_pred,
                a,
                b,
                c,
                mask,
            } => Kind::Shuffle {
                mode: *mode,
                dst: self.dst(*dst),
                dst_pred: dst_pred.map(|p| self.dst(p)),
                a: self.value(a)?,
                b: self.value(b)?,
                c: self.value(c)?,
                mask: self.value(mask)?,
            },
            Op::Vote {
                mode,
                dst,
                pred,
                mask,
            } => {
                let (pred, negated) = self.pred(pred)?;
                Kind::Vote {
                    mode: *mode,
                    dst: self.dst(*dst),
                    pred,
                    negated,
                    mask: self.value(mask)?,
                }
            }
            // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions.
            Op::DotProduct {
                shape,
                a_signed,
                b_signed,
                dst,
                a,
                b,
                c,
            } => Kind::DotProduct {
                shape: *shape,
                a_signed: *a_signed,
                b_signed: *b_signed,
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                c: self.value(c)?,
            },
            Op::CarryArith {
                op,
                carry_in,
                carry_out,
                ty,
                dst,
                a,
                b,
                c,
            } => {
                let a = self.value(a)?;
                Kind::CarryArith {
                    op: *op,
                    carry_in: *carry_in,
                    carry_out: *carry_out,
                    wide: ty.bits() == 64,
                    signed: ty.is_signed(),
                    dst: self.dst(*dst),
                    a,
                    b: self.value(b)?,
                    c: self.optional_value(c)?.unwrap_or(a),
                    carry: self.carry_flag_register(),
                }
            }
            Op::MulAdd24 {
                hi,
                saturate,
                ty,
                dst,
                a,
                b,
                c,
            } => Kind::MulAdd24 {
                hi: *hi,
                signed: ty.is_signed(),
                saturate: *saturate,
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                c: self.value(c)?,
            },
            Op::ReduxFloat {
                max,
                abs,
                nan,
                dst,
                a,
                mask,
            } => Kind::ReduxFloat {
                max: *max,
                abs: *abs,
                nan: *nan,
                dst: self.dst(*dst),
                a: self.value(a)?,
                mask: self.value(mask)?,
            },
            Op::CvtTf32 {
                rounding,
                satfinite,
                relu,
                dst,
                src,
            } => Kind::CvtTf32 {
                rounding: *rounding,
                satfinite: *satfinite,
                relu: *relu,
                dst: self.dst(*dst),
                src: self.value(src)?,
            },
            Op::CvtToFp8 {
                format,
                relu,
                dst,
                a,
                b,
            } => {
                let a = self.value(a)?;
                Kind::CvtToFp8 {
                    format: *format,
                    relu: *relu,
                    from_f32: b.is_some(),
                    dst: self.dst(*dst),
                    a,
                    b: self.optional_value(b)?.unwrap_or(a),
                }
            }
            Op::CvtBf16Relu {
                toward_zero,
                dst,
                src,
            } => Kind::CvtBf16Relu {
                toward_zero: *toward_zero,
                dst: self.dst(*dst),
                src: self.value(src)?,
            },
            Op::CvtFromFp8 {
                format,
                relu,
                dst,
                src,
            } => Kind::CvtFromFp8 {
                format: *format,
                relu: *relu,
                dst: self.dst(*dst),
                src: self.value(src)?,
            },
            Op::NarrowFloat {
                function,
                ty,
                dst,
                a,
                b,
            } => {
                let a = self.value(a)?;
                Kind::NarrowFloat {
                    function: *function,
                    element: crate::scalar_ops::NarrowElement::of(*ty),
                    has_b: b.is_some(),
                    dst: self.dst(*dst),
                    a,
                    b: self.optional_value(b)?.unwrap_or(a),
                }
            }
            Op::Mul24 { hi, ty, dst, a, b } => Kind::Mul24 {
                hi: *hi,
                signed: ty.is_signed(),
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
            },
            Op::Sad { ty, dst, a, b, c } => Kind::Sad {
                ty: Self::int_type(*ty),
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                c: self.value(c)?,
            },
            Op::Testp { class, ty, dst, a } => Kind::Testp {
                class: *class,
                ty: self.float_or_error(*ty, "testp")?,
                dst: self.dst(*dst),
                a: self.value(a)?,
            },
            Op::CopySign { ty, dst, a, b } => Kind::CopySign {
                ty: self.float_or_error(*ty, "copysign")?,
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
            },
            Op::Redux {
                op,
                ty,
                dst,
                a,
                mask,
            } => Kind::Redux {
                op: *op,
                signed: ty.is_signed(),
                dst: self.dst(*dst),
                a: self.value(a)?,
                mask: self.value(mask)?,
            },
            Op::Match {
                all,
                ty,
                dst,
                dst_pred,
                a,
                mask,
            } => Kind::Match {
                all: *all,
                wide: ty.bits() == 64,
                dst: self.dst(*dst),
                dst_pred: dst_pred.map(|p| self.dst(p)),
                a: self.value(a)?,
                mask: self.value(mask)?,
            },
            Op::Exit => Kind::Exit,
            Op::BitFieldExtract {
                ty,
                dst,
                a,
                position,
                length,
            } => Kind::BitFieldExtract {
                ty: Self::int_type(*ty),
                dst: self.dst(*dst),
                a: self.value(a)?,
                position: self.value(position)?,
                length: self.value(length)?,
            },
            Op::BitFieldInsert {
                ty,
                dst,
                field,
                base,
                position,
                length,
            } => Kind::BitFieldInsert {
                bits: ty.bits() as u8,
                dst: self.dst(*dst),
                field: self.value(field)?,
                base: self.value(base)?,
                position: self.value(position)?,
                length: self.value(length)?,
            },
            Op::Permute {
                dst,
                a,
                b,
                selector,
            } => Kind::Permute {
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                selector: self.value(selector)?,
            },
            Op::ActiveMask { dst } => Kind::ActiveMask {
                dst: self.dst(*dst),
            },
            Op::FunnelShift {
                left,
                clamp,
                dst,
                a,
                b,
                c,
            } => Kind::FunnelShift {
                left: *left,
                clamp: *clamp,
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                c: self.value(c)?,
            },
            Op::Lop3 { dst, a, b, c, lut } => Kind::Lop3 {
                lut: *lut,
                dst: self.dst(*dst),
                a: self.value(a)?,
                b: self.value(b)?,
                c: self.value(c)?,
            },
            Op::Pack { ty, dst, src } => {
                let registers = self.values(src)?;
                Kind::Pack {
                    element_bits: self.element_bits(*ty, src.len())?,
                    count: src.len() as u8,
                    dst: self.dst(*dst),
                    src: registers,
                }
            }
            Op::Unpack { ty, dst, src } => {
                let mut registers = [0; 4];
                let mut keep = 0u8;
                for (index, (slot, reg)) in registers.iter_mut().zip(dst).enumerate() {
                    if let Some(reg) = reg {
                        *slot = self.dst(*reg);
                        keep |= 1 << index;
                    }
                }
                Kind::Unpack {
                    element_bits: self.element_bits(*ty, dst.len())?,
                    count: dst.len() as u8,
                    keep,
                    dst: registers,
                    src: self.value(src)?,
                }
            }
            Op::Cvta {
                space,
                to_generic,
                ty,
                dst,
                src,
            } => {
                let window = match space {
                    StateSpace::Global => 0,
                    StateSpace::Shared => crate::memory::SHARED_WINDOW,
                    StateSpace::Local => crate::memory::LOCAL_WINDOW,
                    StateSpace::Const => crate::memory::CONST_WINDOW,
                    StateSpace::Param => crate::memory::PARAM_WINDOW,
                    other => {
                        return Err(self.error(format!(
                            "`cvta` of the .{} space is not supported",
                            other.name()
                        )))
                    }
                };
                Kind::Cvta {
                    window,
                    to_generic: *to_generic,
                    bits: ty.bits() as u8,
                    dst: self.dst(*dst),
                    src: self.value(src)?,
                }
            }
            Op::Printf {
                dst,
                format,
                arguments,
            } => Kind::Printf {
                dst: dst.map(|dst| self.dst(dst)),
                format: self.value(format)?,
                arguments: self.value(arguments)?,
            },
            Op::AssertFail {
                message,
                file,
                line,
                function,
            } => Kind::AssertFail {
                message: self.value(message)?,
                file: self.value(file)?,
                line: self.value(line)?,
                function: self.value(function)?,
            },
            Op::Trap => Kind::Trap,
            Op::NanoSleep { .. } => Kind::Nop,
            // Tensor-core instructions.
            Op::MatrixLoad {
                space,
                transpose,
                dst: registers,
                addr,
            }
            | Op::MatrixStore {
                space,
                transpose,
                src: registers,
                addr,
            } => {
                let mut slots = [0; 4];
                for (slot, reg) in slots.iter_mut().zip(registers) {
                    *slot = self.dst(*reg);
                }
                Kind::MatrixAccess {
                    store: matches!(op, Op::MatrixStore { .. }),
                    space: *space,
                    transpose: *transpose,
                    matrices: registers.len() as u8,
                    registers: slots,
                    addr: self.address(addr)?,
                }
            }
            Op::WmmaLoad {
                matrix,
                layout,
                space,
                ty,
                dst,
                addr,
                stride,
            } => Kind::Wmma {
                operation: Box::new(crate::tensor::WmmaOperation::Load {
                    matrix: *matrix,
                    layout: *layout,
                    space: *space,
                    ty: *ty,
                    registers: dst.iter().map(|&reg| self.dst(reg)).collect(),
                    addr: self.address(addr)?,
                    stride: stride
                        .as_ref()
                        .map(|stride| self.value(stride))
                        .transpose()?,
                }),
            },
            Op::WmmaStore {
                layout,
                space,
                ty,
                addr,
                src,
                stride,
            } => Kind::Wmma {
                operation: Box::new(crate::tensor::WmmaOperation::Store {
                    layout: *layout,
                    space: *space,
                    ty: *ty,
                    registers: src.iter().map(|&reg| self.dst(reg)).collect(),
                    addr: self.address(addr)?,
                    stride: stride
                        .as_ref()
                        .map(|stride| self.value(stride))
                        .transpose()?,
                }),
            },
            Op::WmmaMma {
                input_type,
                d_type,
                c_type,
                d,
                a,
                b,
                c,
                ..
            } => {
                let registers =
                    |regs: &[ir::RegId]| regs.iter().map(|&reg| self.dst(reg)).collect::<Vec<_>>();
                Kind::Wmma {
                    operation: Box::new(crate::tensor::WmmaOperation::Mma {
                        input_type: *input_type,
                        d_type: *d_type,
                        c_type: *c_type,
                        d: registers(d),
                        a: registers(a),
                        b: registers(b),
                        c: registers(c),
                    }),
                }
            }
            Op::MatrixMultiplyAccumulate {
                shape,
                satfinite,
                d_type,
                a_type,
                b_type,
                c_type,
                d,
                a,
                b,
                c,
            } => {
                let fragments = ir::mma_fragments(*shape, *d_type, *a_type, *b_type, *c_type)
                    .ok_or_else(|| {
                        self.error("this `mma` shape and types are not supported".to_string())
                    })?;
                fn slots<const N: usize>(
                    lowering: &Lowerer<'_>,
                    regs: &[ir::RegId],
                ) -> [ValueReg; N] {
                    let mut slots = [0; N];
                    for (slot, reg) in slots.iter_mut().zip(regs) {
                        *slot = lowering.dst(*reg);
                    }
                    slots
                }
                Kind::Mma {
                    operation: Box::new(crate::tensor::MmaOperation {
                        shape: *shape,
                        satfinite: *satfinite,
                        d_type: *d_type,
                        a_type: *a_type,
                        b_type: *b_type,
                        c_type: *c_type,
                        fragments,
                        d: slots(self, d),
                        a: slots(self, a),
                        b: slots(self, b),
                        c: slots(self, c),
                    }),
                }
            }
            Op::Branch { .. } => unreachable!("branches are lowered by the caller"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_never_live_together_share_slots_and_the_scoreboard_keeps_one_each() {
        let module = ir::parse_and_verify(
            "sharing.kir",
            ".kernel k(.param .u64 out)
{
    .reg .u32 %t, %a, %b;
    .reg .u64 %o, %offset, %address;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    add.u32 %a, %t, 3;
    mul.lo.u32 %b, %a, 5;
    mul.wide.u32 %offset, %t, 4;
    add.s64 %address, %o, %offset;
    st.global.u32 [%address], %b;
    exit;
}",
        )
        .expect("it verifies");
        let program = Program::lower(&module, ir::KernelId(0)).expect("it lowers");
        // Six PTX registers and four hidden ones (%tid.x and the literals
        // 3, 5 and 4), each its own register for the scoreboard.
        assert_eq!(program.scoreboard_value_regs, 10);
        assert_eq!(program.warp_inits.len(), 4);
        // The literals are the same in every lane: each is held once per
        // warp, numbered after the slots held per lane. Of those, the 32-bit
        // %t, %a and %b are live together (three slots), and %tid.x takes
        // the slot of %a, which it is never live with. A slot holds
        // registers of one width: the 64-bit %o, %offset and %address,
        // each live with the one before it, need three slots of their own.
        assert_eq!(program.lane_value_regs, 6);
        assert_eq!(program.wide_value_regs, 3);
        assert_eq!(program.value_regs, 9);
        for &(reg, init) in &program.warp_inits {
            assert_eq!(
                reg >= program.lane_value_regs,
                matches!(init, WarpInit::Constant(_)),
                "{init:?}"
            );
        }
        let Kind::Store { addr, .. } = program.code[6].kind else {
            panic!(
                "the store is the seventh instruction: {:?}",
                program.code[6]
            );
        };
        let Kind::IntBinary { dst: address, .. } = program.code[5].kind else {
            panic!("the address is added by the sixth: {:?}", program.code[5]);
        };
        assert_eq!(addr.base, Some(address));
        assert!(address < program.lane_value_regs);
        // The slots of the 64-bit registers (%o, %offset, %address) are
        // numbered first and are wide; the 32-bit %b, live with %address,
        // is not in one of them.
        let destination = |pc: usize| match program.code[pc].kind {
            Kind::IntBinary { dst, .. } => dst,
            Kind::Load { dst, .. } => dst[0],
            ref other => panic!("instruction {pc} writes no register: {other:?}"),
        };
        for pc in [0, 4, 5] {
            assert!(
                destination(pc) < program.wide_value_regs,
                "instruction {pc}"
            );
        }
        assert!(destination(3) >= program.wide_value_regs);
        assert!(program.wide_value_regs < program.lane_value_regs);
    }

    #[test]
    fn shared_variables_are_named_as_in_cuda() {
        let name = |mangled: &str| {
            SharedVariable {
                name: mangled.to_string(),
                offset: 0,
                size: None,
            }
            .source_name()
            .to_string()
        };
        assert_eq!(name("_ZZ13transposePadFE1S"), "S");
        assert_eq!(name("_ZZ9transposeIfEvPT_S1_E4tile"), "tile");
        assert_eq!(name("_ZZ6kernelvE4tile_0"), "tile");
        assert_eq!(name("_ZZ6kernelvE4tile__12_"), "tile");
        assert_eq!(name("_ZZ6kernelvE6tile_2"), "tile_2");
        assert_eq!(name("dyn"), "dyn");
        assert_eq!(name("_ZZ"), "_ZZ");
        assert_eq!(
            name("_ZZ6kernelvE99999999999999999999999x"),
            "_ZZ6kernelvE99999999999999999999999x"
        );
    }

    #[test]
    fn initial_values_of_global_variables_stay_out_of_the_const_space() {
        let source = ".kernel k(.param .u64 OUT)\n{\n    .const .u32 c[2] = {1, 2};\n    .global .u32 g = 7;\n    .global .u32 unused = 9;\n    .reg .u64 %o;\n    .reg .u32 %v;\n    ld.param.u64 %o, [OUT];\n    ld.const.u32 %v, [c];\n    st.global.u32 [%o], %v;\n    st.global.u32 [g+0], %v;\n}\n";
        let module = warpsim_ir::parse_and_verify("test.kir", source).expect("it verifies");
        let program = Program::lower(&module, ir::KernelId(0)).expect("it lowers");
        assert_eq!(program.const_data, [1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(
            program.global_variables,
            [GlobalVariable {
                name: "g".to_string(),
                ty: ScalarType::U32,
                size: 4,
                initial: vec![7, 0, 0, 0],
                loc: module.kernels[0].symbols[2].loc,
            }]
        );
    }

    #[test]
    fn lowering_errors_name_the_instruction_and_its_line() {
        let source =
            ".kernel k(.param .u64 OUT)\n{\n    .reg .u32 %v;\n\n    add.u32 %v, %clock, 1;\n}\n";
        let module = warpsim_ir::parse_and_verify("test.kir", source).expect("it verifies");
        let error = Program::lower(&module, ir::KernelId(0)).expect_err("it does not lower");
        assert_eq!((error.file.as_str(), error.line), ("test.kir", 5));
        assert_eq!(
            error.message,
            "`add.u32 %v, %clock, 1`: `%clock` and `%clock64` can only be read by `mov`"
        );
    }
}
