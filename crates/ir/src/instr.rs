//! The instruction set of the kernel IR: one [`Instr`] is one line of `.kir`
//! text and one warp-level instruction of the machine. The operations follow
//! the PTX ISA (chapter "Instruction Set") closely so that the PTX front end
//! lowers one PTX instruction to one IR instruction wherever it can.

use crate::kernel::{FileId, InlineSiteId, LabelId, RegId, SymbolId};
use crate::types::{ScalarType, Scope, SpecialReg, StateSpace};

/// A source position: the file (an index into [`crate::Module::files`]) and
/// the 1-based line. For `.kir` files it is the line of the instruction itself
/// unless a `.loc` directive says otherwise; for PTX it is the CUDA line.
/// Code the compiler inlined also says where it was inlined (PTX's
/// `.loc ..., inlined_at FILE LINE COLUMN`): a call site of
/// [`crate::Module::inline_sites`], which may itself be inlined elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLoc {
    pub file: FileId,
    pub line: u32,
    pub inlined_at: Option<InlineSiteId>,
}

impl SourceLoc {
    /// A location in code that was not inlined.
    pub fn new(file: FileId, line: u32) -> SourceLoc {
        SourceLoc {
            file,
            line,
            inlined_at: None,
        }
    }
}

/// One instruction with its optional guard predicate (`@%p` or `@!%p`).
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub guard: Option<Guard>,
    pub op: Op,
    pub loc: SourceLoc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

/// An input operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    Reg(RegId),
    /// A literal, stored as the bits it has in the type named by `ty`
    /// (the type the instruction reads this operand as).
    Imm {
        bits: u64,
        ty: ScalarType,
    },
    Special(SpecialReg),
    /// The address of a variable in its own state space (`mov.u32 %r, tile`).
    Symbol(SymbolId),
}

/// A memory address `[base + offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address {
    pub base: AddressBase,
    pub offset: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressBase {
    Reg(RegId),
    Symbol(SymbolId),
    /// No base: the offset is the whole address.
    Absolute,
}

/// Two-input arithmetic and logic (`dst = a op b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    /// Float multiply, or integer multiply keeping the low half (`mul.lo`).
    Mul,
    /// Integer multiply keeping the high half (`mul.hi`).
    MulHi,
    /// Integer multiply into a destination twice as wide (`mul.wide`).
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    /// `min.NaN`, `max.NaN` (half types): as `min` and `max`, except that
    /// a NaN operand makes the result the canonical NaN rather than giving
    /// the other operand (`__hmin_nan`, `__hmax_nan`).
    MinNan,
    MaxNan,
    And,
    Or,
    Xor,
    Shl,
    /// Arithmetic for signed types, logical otherwise.
    Shr,
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 16] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::MulHi,
        BinaryOp::MulWide,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::MinNan,
        BinaryOp::MaxNan,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Xor,
        BinaryOp::Shl,
        BinaryOp::Shr,
    ];
}

/// One-input operations (`dst = op a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Mov,
    Neg,
    Abs,
    Not,
    Popc,
    Clz,
    Brev,
    Sqrt,
    Rcp,
    Rsqrt,
    /// `ex2.approx`: 2 to the power of the operand.
    Ex2,
    /// `lg2.approx`: base-2 logarithm.
    Lg2,
    /// `sin.approx`, `cos.approx`: radians.
    Sin,
    Cos,
    /// `bfind`: the position of the most significant non-sign bit, or all
    /// ones when there is none.
    Bfind,
    /// `bfind.shiftamt`: the left shift that would bring that bit to the top.
    BfindShiftAmount,
}

/// `mad` and `fma`: `dst = a * b + c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulAddMode {
    /// Integer, low half of the product (`mad.lo`).
    Lo,
    /// Integer, high half of the product (`mad.hi`).
    Hi,
    /// Integer, double-width product and accumulator (`mad.wide`).
    Wide,
    /// Float, one rounding to nearest (`fma.rn`).
    Fused,
    /// Half types, one rounding to nearest, then a negative result becomes
    /// +0 and a NaN the canonical NaN (`fma.rn.relu`, `__hfma_relu`).
    FusedRelu,
    /// Float, one rounding toward zero, down or up (`fma.rz`, `.rm`, `.rp`).
    FusedDirected(Rounding),
}

/// Comparison operators of `setp` (PTX ISA, "Comparison and Selection").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned forms, also accepted on unsigned and bit types.
    Lo,
    Ls,
    Hi,
    Hs,
    /// Unordered float forms: true when either input is NaN.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// Both inputs are numbers / either is NaN.
    Num,
    Nan,
}

impl CmpOp {
    pub const ALL: [CmpOp; 18] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Lo,
        CmpOp::Ls,
        CmpOp::Hi,
        CmpOp::Hs,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Lo => "lo",
            CmpOp::Ls => "ls",
            CmpOp::Hi => "hi",
            CmpOp::Hs => "hs",
            CmpOp::Equ => "equ",
            CmpOp::Neu => "neu",
            CmpOp::Ltu => "ltu",
            CmpOp::Leu => "leu",
            CmpOp::Gtu => "gtu",
            CmpOp::Geu => "geu",
            CmpOp::Num => "num",
            CmpOp::Nan => "nan",
        }
    }

    /// Whether the comparison is only meaningful for floats.
    pub fn is_float_only(self) -> bool {
        matches!(
            self,
            CmpOp::Equ
                | CmpOp::Neu
                | CmpOp::Ltu
                | CmpOp::Leu
                | CmpOp::Gtu
                | CmpOp::Geu
                | CmpOp::Num
                | CmpOp::Nan
        )
    }

    /// Whether the comparison is only meaningful for integers.
    pub fn is_unsigned_only(self) -> bool {
        matches!(self, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs)
    }
}

/// Predicate combination (`setp...and`, `bar.red.and`, `vote`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

impl BoolOp {
    pub fn name(self) -> &'static str {
        match self {
            BoolOp::And => "and",
            BoolOp::Or => "or",
            BoolOp::Xor => "xor",
        }
    }
}

/// A predicate operand with optional negation (`!%p`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredOperand {
    pub value: Operand,
    pub negated: bool,
}

/// Float-to-integer and float-to-float rounding of `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Float results: nearest even, toward zero, down, up.
    Rn,
    Rz,
    Rm,
    Rp,
    /// Integer results from floats: nearest even, toward zero, down, up.
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

impl Rounding {
    pub const ALL: [Rounding; 8] = [
        Rounding::Rn,
        Rounding::Rz,
        Rounding::Rm,
        Rounding::Rp,
        Rounding::Rni,
        Rounding::Rzi,
        Rounding::Rmi,
        Rounding::Rpi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rounding::Rn => "rn",
            Rounding::Rz => "rz",
            Rounding::Rm => "rm",
            Rounding::Rp => "rp",
            Rounding::Rni => "rni",
            Rounding::Rzi => "rzi",
            Rounding::Rmi => "rmi",
            Rounding::Rpi => "rpi",
        }
    }

    pub fn is_integer_rounding(self) -> bool {
        matches!(
            self,
            Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi
        )
    }
}

/// Read-modify-write operations of `atom` and `red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    /// `red.shared.popc_inc.u32 [a], 1`: adds 1 for every lane, as ptxas's
    /// ATOMS.POPC.INC does for `atomicAdd(p, 1)` on shared memory with the
    /// result unused. The hardware adds the population count of the lanes
    /// that name one word in a single operation, so those lanes share a
    /// wavefront, as in a load (see `crate::merge`). Not a PTX spelling: the
    /// merge pass writes it, and the IR text round-trips it.
    PopcIncrement,
}

impl AtomOp {
    pub const ALL: [AtomOp; 11] = [
        AtomOp::Add,
        AtomOp::Min,
        AtomOp::Max,
        AtomOp::Exch,
        AtomOp::Cas,
        AtomOp::And,
        AtomOp::Or,
        AtomOp::Xor,
        AtomOp::Inc,
        AtomOp::Dec,
        AtomOp::PopcIncrement,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::PopcIncrement => "popc_inc",
        }
    }
}

/// What a block-level barrier instruction does (PTX ISA, `bar`/`barrier`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// Arrive and wait (`bar.sync`; `__syncthreads` is `bar.sync 0`).
    Sync,
    /// Arrive without waiting (`bar.arrive`).
    Arrive,
    /// Arrive, wait, and reduce a predicate over the arriving threads (`bar.red`).
    Reduce(BarrierReduction),
}

/// The reduction of `bar.red` (`__syncthreads_count/and/or`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierReduction {
    /// Count of threads whose predicate is true, into a `.u32` register.
    Popc,
    /// All true, into a predicate.
    And,
    /// Any true, into a predicate.
    Or,
}

/// Memory-ordering instruction (PTX ISA, `membar`/`fence`). On sm_70 and later
/// `membar.X` behaves as `fence.sc.X`; the IR keeps the spelling for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// `membar.cta|gl|sys`.
    Membar,
    /// `fence.sc.<scope>`.
    SequentiallyConsistent,
    /// `fence.acq_rel.<scope>` (also plain `fence.<scope>`).
    AcquireRelease,
}

/// Shuffle source-lane selection (`shfl.sync.up|down|bfly|idx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    Up,
    Down,
    Butterfly,
    Index,
}

impl ShuffleMode {
    pub fn name(self) -> &'static str {
        match self {
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Butterfly => "bfly",
            ShuffleMode::Index => "idx",
        }
    }
}

/// Warp vote (`vote.sync.all|any|uni|ballot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uniform,
    Ballot,
}

impl VoteMode {
    pub fn name(self) -> &'static str {
        match self {
            VoteMode::All => "all",
            VoteMode::Any => "any",
            VoteMode::Uniform => "uni",
            VoteMode::Ballot => "ballot",
        }
    }
}

/// The reduction of `redux.sync` (`__reduce_add_sync` and the like).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    /// Sum truncated to 32 bits.
    Add,
    /// Signed or unsigned by the instruction's type.
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl ReduxOp {
    pub const ALL: [ReduxOp; 6] = [
        ReduxOp::Add,
        ReduxOp::Min,
        ReduxOp::Max,
        ReduxOp::And,
        ReduxOp::Or,
        ReduxOp::Xor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduxOp::Add => "add",
            ReduxOp::Min => "min",
            ReduxOp::Max => "max",
            ReduxOp::And => "and",
            ReduxOp::Or => "or",
            ReduxOp::Xor => "xor",
        }
    }

    /// Whether the operation is bitwise (`.b32`) rather than arithmetic
    /// (`.u32`/`.s32`).
    pub fn is_bitwise(self) -> bool {
        matches!(self, ReduxOp::And | ReduxOp::Or | ReduxOp::Xor)
    }
}

/// The classes `testp` tests a float for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatClass {
    /// Not infinite and not NaN.
    Finite,
    Infinite,
    /// Not NaN.
    Number,
    NotANumber,
    /// Normal, or zero (PTX counts both zeros as normal).
    Normal,
    /// Subnormal, not zero.
    Subnormal,
}

impl FloatClass {
    pub const ALL: [FloatClass; 6] = [
        FloatClass::Finite,
        FloatClass::Infinite,
        FloatClass::Number,
        FloatClass::NotANumber,
        FloatClass::Normal,
        FloatClass::Subnormal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FloatClass::Finite => "finite",
            FloatClass::Infinite => "infinite",
            FloatClass::Number => "number",
            FloatClass::NotANumber => "notanumber",
            FloatClass::Normal => "normal",
            FloatClass::Subnormal => "subnormal",
        }
    }
}

/// Memory-ordering qualifiers of a load or store (`.volatile`, `.relaxed.gpu`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemoryOrder {
    /// A plain (weak) access.
    #[default]
    Weak,
    Volatile,
    Relaxed(Scope),
    Acquire(Scope),
    Release(Scope),
}

/// The memory semantics of an atomic (PTX ISA, "atom": `.relaxed`,
/// `.acquire`, `.release`, `.acq_rel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AtomicSemantics {
    /// PTX's default when an atomic names no semantics.
    #[default]
    Relaxed,
    Acquire,
    Release,
    AcquireRelease,
}

impl AtomicSemantics {
    pub fn name(self) -> &'static str {
        match self {
            AtomicSemantics::Relaxed => "relaxed",
            AtomicSemantics::Acquire => "acquire",
            AtomicSemantics::Release => "release",
            AtomicSemantics::AcquireRelease => "acq_rel",
        }
    }
}

/// The ordering of an atomic: its semantics and its scope, `.relaxed.gpu`
/// when the instruction names neither (PTX ISA, "atom").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AtomicOrder {
    pub semantics: AtomicSemantics,
    pub scope: Scope,
}

impl Default for AtomicOrder {
    fn default() -> Self {
        AtomicOrder {
            semantics: AtomicSemantics::Relaxed,
            scope: Scope::Gpu,
        }
    }
}

// ---------------------------------------------------------------------------
// The dot products, carry chains and narrow-float conversions: the vocabulary of their operations.

/// The shape of an integer dot product (PTX ISA 9.7.1.23 `dp4a`, 9.7.1.24 `dp2a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DotProductShape {
    /// `dp4a`: the four bytes of `a` times the four bytes of `b`.
    FourBytes,
    /// `dp2a.lo`: the two halfwords of `a` times bytes 0 and 1 of `b`.
    TwoHalvesLow,
    /// `dp2a.hi`: the two halfwords of `a` times bytes 2 and 3 of `b`.
    TwoHalvesHigh,
}

/// The operation of an extended-precision instruction (PTX ISA 9.7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CarryOp {
    /// `add.cc`, `addc`: `a + b (+ CC.CF)`.
    Add,
    /// `sub.cc`, `subc`: `a - (b + borrow)`; the flag holds the carry of
    /// `a + !b + 1`, so it is set when nothing was borrowed.
    Sub,
    /// `mad.lo.cc`, `madc.lo`: the low half of `a * b`, plus `c (+ CC.CF)`.
    MulAddLow,
    /// `mad.hi.cc`, `madc.hi`: the high half of `a * b`, plus `c (+ CC.CF)`.
    MulAddHigh,
}

/// Rounding of `cvt` to `.tf32` (PTX ISA 9.7.9.21): to nearest with ties
/// away from zero (`.rna`), to nearest even (`.rn`), toward zero (`.rz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tf32Rounding {
    NearestAway,
    NearestEven,
    Zero,
}

impl Tf32Rounding {
    pub fn name(self) -> &'static str {
        match self {
            Tf32Rounding::NearestAway => "rna",
            Tf32Rounding::NearestEven => "rn",
            Tf32Rounding::Zero => "rz",
        }
    }
}

/// An 8-bit float format of `cvt` (PTX ISA 5.2.5.1, "Alternate Floating
/// Point Data Formats"): `.e4m3` (4 exponent bits, 3 mantissa bits, no
/// infinity, NaN `S.1111.111`) and `.e5m2` (IEEE-like, 5 and 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    E4m3,
    E5m2,
}

impl Fp8Format {
    /// The name of a pair of them, as `cvt` spells it (`e4m3x2`).
    pub fn pair_name(self) -> &'static str {
        match self {
            Fp8Format::E4m3 => "e4m3x2",
            Fp8Format::E5m2 => "e5m2x2",
        }
    }
}

/// The float operations of [`Op::NarrowFloat`]: the sm_75-sm_90 forms
/// that machine-learning kernels use on half types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NarrowFloatFunction {
    /// `tanh.approx.ty` (PTX ISA 9.7.4.11 for `.f32`, 9.7.4.10 for the half
    /// types): the hyperbolic tangent.
    Tanh,
    /// `ex2.approx.f16/.f16x2` and `ex2.approx.ftz.bf16/.bf16x2` (PTX ISA
    /// 9.7.4.9): 2 to the power of the operand; `.ftz` (required for the
    /// bfloat16 types) flushes subnormal results to +0.
    Ex2,
    /// `min{.NaN}.xorsign.abs.ty` (PTX ISA 9.7.4.6/9.7.3.8): the smaller
    /// magnitude of `a` and `b` with the sign `sign(a) ^ sign(b)`.
    MinXorSignAbs { nan: bool },
    /// `max{.NaN}.xorsign.abs.ty`: the larger magnitude, signed the same way.
    MaxXorSignAbs { nan: bool },
    /// `cvt.rn/.rz{.relu}{.satfinite}.ty.f32` (PTX ISA 9.7.9.21) to `.f16`,
    /// `.f16x2`, `.bf16` or `.bf16x2` (`b` into the low half, `a` into the
    /// high one): `.relu` makes negative results (-0.0 included) +0.0,
    /// `.satfinite` clamps results beyond the largest finite value (and
    /// infinities) to it; a NaN gives the canonical NaN either way.
    FromF32 {
        toward_zero: bool,
        relu: bool,
        satfinite: bool,
    },
}

/// The operation of an instruction, with its operands.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `op[.sat].ty dst, a, b`. `saturate` (`.sat`): `add`/`sub` of `.s32`
    /// clamp to the `.s32` range; `add`/`sub`/`mul` of `.f32` clamp to
    /// [0.0, 1.0], a NaN result becoming +0.0.
    Binary {
        op: BinaryOp,
        ty: ScalarType,
        saturate: bool,
        dst: RegId,
        a: Operand,
        b: Operand,
    },
    Unary {
        op: UnaryOp,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
    },
    /// `mad`/`fma`; `saturate` (`.sat`) as for [`Op::Binary`]: `mad.hi.sat.s32`
    /// and `fma.rn.sat.f32`/`mad.rn.sat.f32`.
    MulAdd {
        mode: MulAddMode,
        ty: ScalarType,
        saturate: bool,
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `setp.cmp[.boolop].ty dst[|dst_not], a, b[, c]`: `dst = (a cmp b)
    /// boolop c`, and `dst_not = !(a cmp b) boolop c`.
    Setp {
        cmp: CmpOp,
        ty: ScalarType,
        dst: RegId,
        dst_not: Option<RegId>,
        a: Operand,
        b: Operand,
        combine: Option<(BoolOp, PredOperand)>,
    },
    /// `set.cmp[.boolop].dst_ty.src_ty dst, a, b[, c]`: `(a cmp b) boolop c`
    /// as a number: all ones or zero for `.u32`/`.s32`, 1.0 or 0.0 for `.f32`.
    Set {
        cmp: CmpOp,
        dst_ty: ScalarType,
        src_ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
        combine: Option<(BoolOp, PredOperand)>,
    },
    /// `selp.ty dst, a, b, c`: `dst = c ? a : b`.
    Selp {
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
        cond: PredOperand,
    },
    Cvt {
        dst_ty: ScalarType,
        src_ty: ScalarType,
        rounding: Option<Rounding>,
        saturate: bool,
        dst: RegId,
        src: Operand,
    },
    /// `cvt.rounding.dst_ty.f32 dst, a, b` with `dst_ty` a pair (`.f16x2`,
    /// `.bf16x2`): two `.f32` values rounded into one register, `a` into
    /// the upper 16 bits (element 1) and `b` into the lower (element 0),
    /// PTX's order (`__floats2bfloat162_rn(x, y)` passes `y, x`).
    CvtPair {
        dst_ty: ScalarType,
        rounding: Rounding,
        dst: RegId,
        a: Operand,
        b: Operand,
    },
    /// `ld.space[.order][.vN].ty`: one register per vector element.
    Load {
        space: StateSpace,
        order: MemoryOrder,
        ty: ScalarType,
        dst: Vec<RegId>,
        addr: Address,
    },
    Store {
        space: StateSpace,
        order: MemoryOrder,
        ty: ScalarType,
        addr: Address,
        src: Vec<Operand>,
    },
    /// `atom.space.op.ty dst, [addr], a[, b]`, or `red` when `dst` is `None`.
    Atom {
        space: StateSpace,
        order: AtomicOrder,
        op: AtomOp,
        ty: ScalarType,
        dst: Option<RegId>,
        addr: Address,
        a: Operand,
        b: Option<Operand>,
    },
    /// `bar.sync id[, count]`, `bar.arrive id, count`,
    /// `bar.red.op.ty dst, id[, count], [!]pred`.
    Barrier {
        kind: BarrierKind,
        id: Operand,
        count: Option<Operand>,
        reduction: Option<(RegId, PredOperand)>,
    },
    /// `bar.warp.sync mask` (`__syncwarp`).
    WarpSync {
        mask: Operand,
    },
    Fence {
        kind: FenceKind,
        scope: Scope,
    },
    /// `shfl.sync.mode.b32 dst[|pred], a, b, c, mask`.
    Shuffle {
        mode: ShuffleMode,
        dst: RegId,
        dst_pred: Option<RegId>,
        a: Operand,
        b: Operand,
        c: Operand,
        mask: Operand,
    },
    /// `vote.sync.mode.pred dst, [!]pred, mask` (`.b32` for ballot).
    Vote {
        mode: VoteMode,
        dst: RegId,
        pred: PredOperand,
        mask: Operand,
    },
    /// `redux.sync.op.ty dst, a, mask`: the reduction of `a` over the lanes
    /// of the mask, in every one of them (`.u32`/`.s32` for `add min max`,
    /// `.b32` for `and or xor`).
    Redux {
        op: ReduxOp,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        mask: Operand,
    },
    /// `match.any.sync.ty dst, a, mask`: the lanes of the mask whose `a`
    /// equals this lane's; `match.all.sync.ty dst[|pred], a, mask`: the
    /// lanes of the mask if all their `a` are equal, else 0 (and `pred`
    /// whether they are). `ty` is `.b32` or `.b64`.
    Match {
        all: bool,
        ty: ScalarType,
        dst: RegId,
        dst_pred: Option<RegId>,
        a: Operand,
        mask: Operand,
    },
    /// `mul24.lo/.hi.ty dst, a, b` (`.u32`/`.s32`): the 48-bit product of
    /// the low 24 bits of `a` and `b` (sign-extended for `.s32`); bits 0-31
    /// (`.lo`) or 16-47 (`.hi`).
    Mul24 {
        hi: bool,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
    },
    /// `sad.ty dst, a, b, c`: `c + |a - b|`.
    Sad {
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `testp.class.ty dst, a`: whether the float `a` is of `class`.
    Testp {
        class: FloatClass,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
    },
    /// `copysign.ty dst, a, b`: `b` with the sign of `a` (PTX's order).
    CopySign {
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
    },
    Branch {
        target: LabelId,
    },
    /// Ends the thread (`exit`, and `ret` in a kernel).
    Exit,
    /// `bfe.ty dst, a, pos, len`: extracts `len` bits of `a` from bit `pos`,
    /// sign-extended for signed types.
    BitFieldExtract {
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        position: Operand,
        length: Operand,
    },
    /// `bfi.ty dst, field, base, pos, len`: `base` with `len` bits from bit
    /// `pos` replaced by the low bits of `field`.
    BitFieldInsert {
        ty: ScalarType,
        dst: RegId,
        field: Operand,
        base: Operand,
        position: Operand,
        length: Operand,
    },
    /// `prmt.b32 dst, a, b, selector`: picks four bytes from the eight of
    /// `b:a` (default mode; bit 3 of a selector nibble replicates the sign).
    Permute {
        dst: RegId,
        a: Operand,
        b: Operand,
        selector: Operand,
    },
    /// `shf.l/.r.wrap/.clamp.b32 dst, a, b, c`: the 64 bits `b:a` (`b`
    /// high) shifted left or right by `c` (modulo 32 with `.wrap`, at most 32
    /// with `.clamp`); `shf.l` keeps the high word, `shf.r` the low word.
    FunnelShift {
        left: bool,
        clamp: bool,
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `lop3.b32 dst, a, b, c, lut`: each bit of `dst` is bit
    /// `4a + 2b + c` of the truth table `lut` (`0xF0`, `0xCC`, `0xAA` are
    /// `a`, `b`, `c`).
    Lop3 {
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
        lut: u8,
    },
    /// `mov.ty dst, {a, b[, c, d]}`: packs two or four elements of
    /// `ty.bits() / n` bits each into `dst`, element 0 in the low bits
    /// (`mov.b64 %rd1, {%r1, %r2}`, `mov.b32 %r1, {%rs1, %rs2}`).
    Pack {
        ty: ScalarType,
        dst: RegId,
        src: Vec<Operand>,
    },
    /// `mov.ty {a, b[, c, d]}, src`: unpacks `src` into two or four
    /// elements, element 0 from the low bits; `None` is the sink `_`, whose
    /// element is discarded.
    Unpack {
        ty: ScalarType,
        dst: Vec<Option<RegId>>,
        src: Operand,
    },
    /// `activemask.b32 dst`: the lanes executing this instruction.
    ActiveMask {
        dst: RegId,
    },
    /// CUDA's device-side `printf`, as PTX calls it (`vprintf`): `format`
    /// is the generic address of the NUL-terminated format string and
    /// `arguments` the generic address of the buffer holding the arguments,
    /// each at its natural alignment (CUDA Programming Guide, "Formatted
    /// Output"). `dst` receives the number of arguments the format took, or
    /// -1 when the format cannot be used; `None` when the result is unused.
    Printf {
        dst: Option<RegId>,
        format: Operand,
        arguments: Operand,
    },
    /// A failed `assert` (`__assertfail`): the generic addresses of the
    /// asserted expression's text, the file name and the function name, and
    /// the line. The thread stops the kernel with the message, as CUDA's
    /// device-side assertion does.
    AssertFail {
        message: Operand,
        file: Operand,
        line: Operand,
        function: Operand,
    },
    /// `trap`: stops the kernel with an error (`__trap()`).
    Trap,
    /// `nanosleep.u32 t`: suspends the thread for about `t` nanoseconds
    /// (`__nanosleep`); it changes no state.
    NanoSleep {
        duration: Operand,
    },
    // Asynchronous copies and mbarriers (PTX ISA 9.7.9.25, 9.7.9.25.4.1
    // and 9.7.13.15).
    /// `cp.async.ca/.cg.shared.global [dst], [src], size{, src_size}` (or
    /// `{, ignore_src}`, a predicate): copies `size` bytes (4, 8 or 16;
    /// `.cg` only 16) from global to shared memory asynchronously, the
    /// bytes past `src_size` (all of them when `ignore_src` holds) zero.
    /// `bypass_l1` is `.cg`; `cache_policy` the operand of
    /// `.L2::cache_hint`; `prefetch` the `.L2::64B/128B/256B` size.
    CpAsync {
        bypass_l1: bool,
        size: u32,
        dst: Address,
        src: Address,
        src_size: Option<Operand>,
        ignore_src: Option<PredOperand>,
        cache_policy: Option<Operand>,
        prefetch: Option<u32>,
    },
    /// `cp.async.commit_group`: the thread's copies since the last commit
    /// become a group.
    CpAsyncCommitGroup,
    /// `cp.async.wait_group n` (`Some(n)`): waits until at most `n` of the
    /// thread's groups are pending; `cp.async.wait_all` (`None`): until
    /// every copy, committed or not, is done.
    CpAsyncWait {
        pending: Option<u32>,
    },
    /// `cp.async.mbarrier.arrive{.noinc}.shared.b64 [a]`: an arrival on the
    /// mbarrier once the thread's earlier copies are done (without
    /// `.noinc` the pending count is raised first, so the arrival is not
    /// one of those `init` counted).
    CpAsyncMbarrierArrive {
        noinc: bool,
        addr: Address,
    },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
    /// [dst], [src], size, [mbar]`: the bulk copy engine copies `size`
    /// bytes (a multiple of 16, both addresses 16-byte aligned) and
    /// completes as many transaction bytes on the mbarrier at `mbarrier`.
    CpAsyncBulk {
        dst: Address,
        src: Address,
        size: Operand,
        mbarrier: Address,
    },
    /// `mbarrier.op{.shared}.b64 ..., [addr], ...` (`space` is `.shared`
    /// or generic).
    Mbarrier {
        op: MbarrierOp,
        space: StateSpace,
        addr: Address,
    },
    /// `mbarrier.pending_count.b64 count, state`: the arrivals pending in
    /// the phase `state` (from `arrive`) captured.
    MbarrierPendingCount {
        dst: RegId,
        state: Operand,
    },
    /// Converts an address between a state space and the generic space:
    /// `cvta.space.ty dst, src` (to generic) or `cvta.to.space.ty dst, src`.
    Cvta {
        space: StateSpace,
        to_generic: bool,
        ty: ScalarType,
        dst: RegId,
        src: Operand,
    },
    // -----------------------------------------------------------------------
    // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions.
    /// `dp4a.atype.btype d, a, b, c` and `dp2a.lo/.hi.atype.btype d, a, b,
    /// c` (PTX ISA 9.7.1.23/24): `c` plus the products of the bytes (or
    /// halfwords of `a`) of `a` and `b`, each sign-extended when its type is
    /// `.s32`, in 32 bits; `d` and `c` are `.s32` when either type is.
    DotProduct {
        shape: DotProductShape,
        a_signed: bool,
        b_signed: bool,
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// Extended-precision arithmetic (PTX ISA 9.7.2): `add.cc`, `addc{.cc}`,
    /// `sub.cc`, `subc{.cc}`, `mad.lo/.hi.cc`, `madc.lo/.hi{.cc}` of
    /// `.u32 .s32 .u64 .s64`. `carry_in` adds the thread's carry flag
    /// (CC.CF, state that lives from one instruction to the next, across
    /// branches), `carry_out` sets it; `c` is the addend of the `mad` forms.
    CarryArith {
        op: CarryOp,
        carry_in: bool,
        carry_out: bool,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Option<Operand>,
    },
    /// `mad24.lo/.hi{.sat}.ty d, a, b, c` (`.u32`/`.s32`; `.sat` only for
    /// `.hi.s32`): the 48-bit product of [`Op::Mul24`], bits 0-31 or 16-47,
    /// plus `c`, with `.sat` clamped to the `.s32` range.
    MulAdd24 {
        hi: bool,
        saturate: bool,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `redux.sync.min/.max{.abs}{.NaN}.f32 d, a, mask` (PTX ISA 9.7.13.11,
    /// redux.sync; it needs `sm_100a` or `sm_101a`, PTX 8.6): the minimum or
    /// maximum of `a` over the lanes of the mask, of the absolute values
    /// with `.abs`; a NaN operand is ignored unless `.NaN` is given, then
    /// the result is the canonical NaN; -0.0 is below +0.0.
    ReduxFloat {
        max: bool,
        abs: bool,
        nan: bool,
        dst: RegId,
        a: Operand,
        mask: Operand,
    },
    /// `cvt.rounding{.satfinite}{.relu}.tf32.f32 d, a` (PTX ISA 9.7.9.21):
    /// `a` rounded to 10 mantissa bits, in the upper 19 bits of a `.b32`.
    CvtTf32 {
        rounding: Tf32Rounding,
        satfinite: bool,
        relu: bool,
        dst: RegId,
        src: Operand,
    },
    /// `cvt.rn.satfinite{.relu}.fmt.f32 d, a, b` (`b` is `Some`; `a` into
    /// the upper byte of the `.b16` `d`) or `cvt.rn.satfinite{.relu}.fmt.f16x2
    /// d, a` (`b` is `None`; the upper half of `a` into the upper byte).
    CvtToFp8 {
        format: Fp8Format,
        relu: bool,
        dst: RegId,
        a: Operand,
        b: Option<Operand>,
    },
    /// `cvt.rn/.rz.relu.bf16.f32 d, a` (PTX ISA 9.7.9.21): `a` rounded to
    /// bfloat16 (`toward_zero` for `.rz`), a negative result (-0.0
    /// included) +0.0 and a NaN the canonical NaN.
    CvtBf16Relu {
        toward_zero: bool,
        dst: RegId,
        src: Operand,
    },
    /// `cvt.rn{.relu}.f16x2.fmt d, a`: the two 8-bit floats of the `.b16`
    /// `a` to the two halves of `d`, exactly.
    CvtFromFp8 {
        format: Fp8Format,
        relu: bool,
        dst: RegId,
        src: Operand,
    },
    /// A [`NarrowFloatFunction`] on `ty` (`.f16 .f16x2 .bf16 .bf16x2`, and
    /// `.f32` for `tanh` and the `xorsign` forms), elementwise on the pairs.
    /// `b` is the second operand of the binary functions and of `cvt` to a
    /// pair, `None` otherwise.
    NarrowFloat {
        function: NarrowFloatFunction,
        ty: ScalarType,
        dst: RegId,
        a: Operand,
        b: Option<Operand>,
    },
    // Tensor-core instructions and the matrix loads and stores that feed
    // them (PTX ISA 9.7.14, "Warp Level Matrix Multiply-Accumulate
    // Instructions"). Each is warp-synchronous and `.aligned`: every thread
    // of the warp executes it together.
    /// `ldmatrix.sync.aligned.m8n8.xN[.trans][.shared].b16 {d0, ..}, [addr]`
    /// (PTX ISA 9.7.14.5.15): one, two or four 8x8 matrices of 16-bit
    /// elements, one `.b32` destination per matrix. Lanes `8i .. 8i + 7`
    /// give the 16-byte rows of matrix `i`.
    MatrixLoad {
        space: StateSpace,
        transpose: bool,
        dst: Vec<RegId>,
        addr: Address,
    },
    /// `stmatrix.sync.aligned.m8n8.xN[.trans][.shared].b16 [addr], {s0, ..}`
    /// (PTX ISA 9.7.14.5.16): the inverse of `ldmatrix`.
    MatrixStore {
        space: StateSpace,
        transpose: bool,
        addr: Address,
        src: Vec<RegId>,
    },
    /// `mma.sync.aligned.shape.row.col[.satfinite].dtype.atype.btype.ctype
    /// d, a, b, c` (PTX ISA 9.7.14.5.14): `D = A * B + C` for the warp's
    /// fragments, each a brace list of registers.
    MatrixMultiplyAccumulate {
        shape: MmaShape,
        satfinite: bool,
        d_type: MmaType,
        a_type: MmaType,
        b_type: MmaType,
        c_type: MmaType,
        d: Vec<RegId>,
        a: Vec<RegId>,
        b: Vec<RegId>,
        c: Vec<RegId>,
    },
    /// `wmma.load.{a,b,c}.sync.aligned.{row,col}.m16n16k16[.space].ty
    /// {d..}, [addr][, stride]` (PTX ISA 9.7.14.4.2): a 16x16 fragment,
    /// `stride` elements between rows (`.row`) or columns (`.col`), 16 when
    /// left out.
    WmmaLoad {
        matrix: WmmaMatrix,
        layout: WmmaLayout,
        space: StateSpace,
        ty: MmaType,
        dst: Vec<RegId>,
        addr: Address,
        stride: Option<Operand>,
    },
    /// `wmma.store.d.sync.aligned.{row,col}.m16n16k16[.space].ty [addr],
    /// {s..}[, stride]` (PTX ISA 9.7.14.4.3).
    WmmaStore {
        layout: WmmaLayout,
        space: StateSpace,
        ty: MmaType,
        addr: Address,
        src: Vec<RegId>,
        stride: Option<Operand>,
    },
    /// `wmma.mma.sync.aligned.alayout.blayout.m16n16k16.dtype.ctype d, a, b,
    /// c` for `.f16` inputs, `...m16n16k16.f32.bf16.bf16.f32` for `.bf16`
    /// (PTX ISA 9.7.14.4.4).
    WmmaMma {
        a_layout: WmmaLayout,
        b_layout: WmmaLayout,
        input_type: MmaType,
        d_type: MmaType,
        c_type: MmaType,
        d: Vec<RegId>,
        a: Vec<RegId>,
        b: Vec<RegId>,
        c: Vec<RegId>,
    },
}

/// The most arrivals an mbarrier phase can expect, and the most one
/// arrival can count: 2^20 - 1 (PTX ISA 9.7.13.15.1, "Contents of the
/// mbarrier object").
pub const MBARRIER_MAX_COUNT: u64 = (1 << 20) - 1;

/// What an `mbarrier` instruction does to the barrier object at its
/// address (PTX ISA 9.7.13.15, "Parallel Synchronization and Communication
/// Instructions: mbarrier").
#[derive(Clone, Debug, PartialEq)]
pub enum MbarrierOp {
    /// `mbarrier.init.b64 [a], count`: phase 0, `count` arrivals expected
    /// in every phase, no transactions pending.
    Init { count: Operand },
    /// `mbarrier.arrive{.expect_tx}.b64 state, [a]{, count}` and
    /// `arrive_drop` (which also lowers the arrivals expected in later
    /// phases by `count`): `count` (1 when absent) arrivals; with
    /// `expect_tx`, the transaction bytes expected first. `state` is the
    /// phase before the arrival, for `test_wait` and `pending_count`; `None`
    /// is the sink `_`.
    Arrive {
        drop: bool,
        state: Option<RegId>,
        count: Option<Operand>,
        expect_tx: Option<Operand>,
    },
    /// `mbarrier.expect_tx.b64 [a], bytes`: more transaction bytes expected
    /// in the current phase.
    ExpectTx { bytes: Operand },
    /// `mbarrier.complete_tx.b64 [a], bytes`: transaction bytes done.
    CompleteTx { bytes: Operand },
    /// `mbarrier.test_wait{.parity}.b64 done, [a], phase` and `try_wait`
    /// (with an optional suspend-time hint, in nanoseconds): `done` is
    /// whether the phase `phase` names (a state from `arrive`, or with
    /// `parity` a phase parity) has completed.
    Wait {
        try_wait: bool,
        parity: bool,
        done: RegId,
        phase: Operand,
        suspend_hint: Option<Operand>,
    },
    /// `mbarrier.inval.b64 [a]`: the object is no longer an mbarrier.
    Invalidate,
}

impl MbarrierOp {
    pub fn name(&self) -> &'static str {
        match self {
            MbarrierOp::Init { .. } => "init",
            MbarrierOp::Arrive {
                drop: false,
                expect_tx: None,
                ..
            } => "arrive",
            MbarrierOp::Arrive {
                drop: false,
                expect_tx: Some(_),
                ..
            } => "arrive.expect_tx",
            MbarrierOp::Arrive {
                drop: true,
                expect_tx: None,
                ..
            } => "arrive_drop",
            MbarrierOp::Arrive {
                drop: true,
                expect_tx: Some(_),
                ..
            } => "arrive_drop.expect_tx",
            MbarrierOp::ExpectTx { .. } => "expect_tx",
            MbarrierOp::CompleteTx { .. } => "complete_tx",
            MbarrierOp::Wait {
                try_wait: false,
                parity: false,
                ..
            } => "test_wait",
            MbarrierOp::Wait {
                try_wait: false,
                parity: true,
                ..
            } => "test_wait.parity",
            MbarrierOp::Wait {
                try_wait: true,
                parity: false,
                ..
            } => "try_wait",
            MbarrierOp::Wait {
                try_wait: true,
                parity: true,
                ..
            } => "try_wait.parity",
            MbarrierOp::Invalidate => "inval",
        }
    }
}

/// The operand a `wmma.load` loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WmmaMatrix {
    A,
    B,
    C,
}

impl WmmaMatrix {
    pub fn name(self) -> &'static str {
        match self {
            WmmaMatrix::A => "a",
            WmmaMatrix::B => "b",
            WmmaMatrix::C => "c",
        }
    }
}

/// How a WMMA matrix lies in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WmmaLayout {
    Row,
    Column,
}

impl WmmaLayout {
    pub fn name(self) -> &'static str {
        match self {
            WmmaLayout::Row => "row",
            WmmaLayout::Column => "col",
        }
    }
}

/// The registers of an m16n16k16 WMMA fragment of `ty` (PTX ISA 9.7.14.4.1):
/// `.f16` A and B eight `.f16x2`, `.bf16` A and B four `.b32`, `.f16` C
/// and D four `.f16x2`, `.f32` C and D eight `.f32`; `None` for other types.
pub fn wmma_fragment_registers(matrix: WmmaMatrix, ty: MmaType) -> Option<usize> {
    match (matrix, ty) {
        (WmmaMatrix::A | WmmaMatrix::B, MmaType::F16) => Some(8),
        (WmmaMatrix::A | WmmaMatrix::B, MmaType::Bf16) => Some(4),
        (WmmaMatrix::C, MmaType::F16) => Some(4),
        (WmmaMatrix::C, MmaType::F32) => Some(8),
        _ => None,
    }
}

/// The shapes of `mma.sync` the machine runs: `mMnNkK`, an `M x K` matrix
/// A times a `K x N` matrix B plus an `M x N` matrix C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaShape {
    M16N8K16,
    M16N8K8,
    M8N8K4,
    M16N8K32,
}

impl MmaShape {
    pub const ALL: [MmaShape; 4] = [
        MmaShape::M16N8K16,
        MmaShape::M16N8K8,
        MmaShape::M8N8K4,
        MmaShape::M16N8K32,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MmaShape::M16N8K16 => "m16n8k16",
            MmaShape::M16N8K8 => "m16n8k8",
            MmaShape::M8N8K4 => "m8n8k4",
            MmaShape::M16N8K32 => "m16n8k32",
        }
    }

    /// `(M, N, K)`.
    pub fn dimensions(self) -> (u32, u32, u32) {
        match self {
            MmaShape::M16N8K16 => (16, 8, 16),
            MmaShape::M16N8K8 => (16, 8, 8),
            MmaShape::M8N8K4 => (8, 8, 4),
            MmaShape::M16N8K32 => (16, 8, 32),
        }
    }
}

/// The element types of `mma.sync` fragments. `.tf32` is a type of its own
/// here: the tensor cores read the upper 19 bits of an `.f32` register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaType {
    F16,
    Bf16,
    Tf32,
    F32,
    F64,
    S8,
    U8,
    S32,
}

impl MmaType {
    pub const ALL: [MmaType; 8] = [
        MmaType::F16,
        MmaType::Bf16,
        MmaType::Tf32,
        MmaType::F32,
        MmaType::F64,
        MmaType::S8,
        MmaType::U8,
        MmaType::S32,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MmaType::F16 => "f16",
            MmaType::Bf16 => "bf16",
            MmaType::Tf32 => "tf32",
            MmaType::F32 => "f32",
            MmaType::F64 => "f64",
            MmaType::S8 => "s8",
            MmaType::U8 => "u8",
            MmaType::S32 => "s32",
        }
    }
}

/// The number of registers of each fragment of an `mma.sync` (PTX ISA
/// 9.7.14.5.8 to 9.7.14.5.12, "Matrix Fragments for mma.m..."): every
/// thread holds `M*K/32` elements of A, `K*N/32` of B and `M*N/32` of C
/// and D, packed into 32-bit registers (64-bit for `.f64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaFragments {
    pub a: usize,
    pub b: usize,
    pub c: usize,
    pub d: usize,
}

/// Whether `shape` with these types is an `mma.sync` the machine runs, and
/// if so its fragment register counts. The combinations are those of the
/// PTX ISA's table for `mma` ("Matrix shape and data types") that sm_80 to
/// sm_90 kernels use.
pub fn mma_fragments(
    shape: MmaShape,
    d_type: MmaType,
    a_type: MmaType,
    b_type: MmaType,
    c_type: MmaType,
) -> Option<MmaFragments> {
    use MmaType::*;
    let (m, n, k) = shape.dimensions();
    let a_bits = match a_type {
        F16 | Bf16 => 16,
        Tf32 | F32 => 32,
        F64 => 64,
        S8 | U8 => 8,
        S32 => return None,
    };
    let accumulator_bits = match c_type {
        F16 => 16,
        F32 | S32 => 32,
        F64 => 64,
        _ => return None,
    };
    let valid = match (shape, a_type) {
        (MmaShape::M16N8K16 | MmaShape::M16N8K8, F16) => {
            b_type == F16 && matches!(c_type, F16 | F32) && matches!(d_type, F16 | F32)
        }
        (MmaShape::M16N8K16 | MmaShape::M16N8K8, Bf16) => {
            b_type == Bf16 && c_type == F32 && d_type == F32
        }
        (MmaShape::M16N8K8, Tf32) => b_type == Tf32 && c_type == F32 && d_type == F32,
        (MmaShape::M8N8K4, F64) => b_type == F64 && c_type == F64 && d_type == F64,
        (MmaShape::M16N8K32, S8 | U8) => {
            matches!(b_type, S8 | U8) && c_type == S32 && d_type == S32
        }
        _ => false,
    };
    if !valid {
        return None;
    }
    let register_bits = a_bits.max(32);
    let accumulator_register_bits = accumulator_bits.max(32);
    let d_bits = if d_type == F16 { 16 } else { accumulator_bits };
    let registers = |elements: u32, element_bits: u32, register_bits: u32| {
        (elements / 32 * element_bits).div_ceil(register_bits) as usize
    };
    Some(MmaFragments {
        a: registers(m * k, a_bits, register_bits),
        b: registers(k * n, a_bits, register_bits),
        c: registers(m * n, accumulator_bits, accumulator_register_bits),
        d: registers(m * n, d_bits, d_bits.max(32)),
    })
}

impl Op {
    /// The type of one element of a `Pack`/`Unpack` of `count` elements in
    /// `ty`: the bit type of `ty.bits() / count` bits.
    pub fn vector_element_type(ty: ScalarType, count: usize) -> Option<ScalarType> {
        match ty.bits().checked_div(count as u32)? {
            8 => Some(ScalarType::B8),
            16 => Some(ScalarType::B16),
            32 => Some(ScalarType::B32),
            _ => None,
        }
    }

    /// The state space and kind of memory access, for reports.
    pub fn memory_access(&self) -> Option<(StateSpace, MemoryAccessKind)> {
        match self {
            Op::Load { space, .. } => Some((*space, MemoryAccessKind::Load)),
            Op::Store { space, .. } => Some((*space, MemoryAccessKind::Store)),
            Op::MatrixLoad { space, .. } => Some((*space, MemoryAccessKind::Load)),
            Op::MatrixStore { space, .. } => Some((*space, MemoryAccessKind::Store)),
            Op::WmmaLoad { space, .. } => Some((*space, MemoryAccessKind::Load)),
            Op::WmmaStore { space, .. } => Some((*space, MemoryAccessKind::Store)),
            Op::Atom {
                space,
                dst: Some(_),
                ..
            } => Some((*space, MemoryAccessKind::Atomic)),
            Op::Atom {
                space, dst: None, ..
            } => Some((*space, MemoryAccessKind::Reduction)),
            // An asynchronous copy reads global memory and writes shared
            // memory through the bank arbiter, as Nsight Compute counts
            // `LDGSTS`: its row shows both its wavefronts and its sectors.
            Op::CpAsync { .. } => Some((StateSpace::Shared, MemoryAccessKind::AsyncCopy)),
            _ => None,
        }
    }

    /// The registers the instruction writes.
    pub fn destinations(&self) -> Vec<RegId> {
        match self {
            Op::Binary { dst, .. }
            | Op::Unary { dst, .. }
            | Op::MulAdd { dst, .. }
            | Op::Set { dst, .. }
            | Op::Selp { dst, .. }
            | Op::Cvt { dst, .. }
            | Op::CvtPair { dst, .. }
            | Op::Cvta { dst, .. }
            | Op::BitFieldExtract { dst, .. }
            | Op::BitFieldInsert { dst, .. }
            | Op::Permute { dst, .. }
            | Op::ActiveMask { dst }
            | Op::Vote { dst, .. }
            | Op::Redux { dst, .. }
            | Op::Mul24 { dst, .. }
            | Op::Sad { dst, .. }
            | Op::Testp { dst, .. }
            | Op::CopySign { dst, .. }
            | Op::Pack { dst, .. }
            | Op::FunnelShift { dst, .. }
            | Op::Lop3 { dst, .. } => vec![*dst],
            // The carry flag is not a register of the IR.
            Op::DotProduct { dst, .. }
            | Op::CarryArith { dst, .. }
            | Op::MulAdd24 { dst, .. }
            | Op::ReduxFloat { dst, .. }
            | Op::CvtTf32 { dst, .. }
            | Op::CvtToFp8 { dst, .. }
            | Op::CvtFromFp8 { dst, .. }
            | Op::CvtBf16Relu { dst, .. }
            | Op::NarrowFloat { dst, .. } => vec![*dst],
            Op::Load { dst, .. } => dst.clone(),
            Op::MatrixLoad { dst, .. }
            | Op::MatrixMultiplyAccumulate { d: dst, .. }
            | Op::WmmaLoad { dst, .. }
            | Op::WmmaMma { d: dst, .. } => dst.clone(),
            Op::Setp { dst, dst_not, .. } => std::iter::once(*dst)
                .chain(dst_not.iter().copied())
                .collect(),
            Op::Unpack { dst, .. } => dst.iter().flatten().copied().collect(),
            Op::Atom { dst, .. } | Op::Printf { dst, .. } => dst.iter().copied().collect(),
            Op::Barrier { reduction, .. } => reduction.iter().map(|(dst, _)| *dst).collect(),
            Op::Shuffle { dst, dst_pred, .. } | Op::Match { dst, dst_pred, .. } => {
                std::iter::once(*dst)
                    .chain(dst_pred.iter().copied())
                    .collect()
            }
            Op::Mbarrier { op, .. } => match op {
                MbarrierOp::Arrive { state, .. } => state.iter().copied().collect(),
                MbarrierOp::Wait { done, .. } => vec![*done],
                _ => Vec::new(),
            },
            Op::MbarrierPendingCount { dst, .. } => vec![*dst],
            Op::CpAsync { .. }
            | Op::CpAsyncCommitGroup
            | Op::CpAsyncWait { .. }
            | Op::CpAsyncMbarrierArrive { .. }
            | Op::CpAsyncBulk { .. } => Vec::new(),
            Op::Store { .. }
            | Op::MatrixStore { .. }
            | Op::WmmaStore { .. }
            | Op::WarpSync { .. }
            | Op::Fence { .. }
            | Op::Branch { .. }
            | Op::AssertFail { .. }
            | Op::Trap
            | Op::NanoSleep { .. }
            | Op::Exit => Vec::new(),
        }
    }
}

/// The kind of a memory access, as reports name it (`op` in the JSON report).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryAccessKind {
    #[serde(rename = "ld")]
    Load,
    #[serde(rename = "st")]
    Store,
    #[serde(rename = "atom")]
    Atomic,
    #[serde(rename = "red")]
    Reduction,
    /// `cp.async`: a global read whose bytes are stored into shared memory
    /// (PTX ISA 9.7.9.25).
    #[serde(rename = "cp.async")]
    AsyncCopy,
}
