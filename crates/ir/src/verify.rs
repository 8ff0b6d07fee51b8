//! The verifier: checks that every instruction is well typed and well formed
//! (PTX ISA, the "Semantics" and operand rules of each instruction) and lists
//! every problem it finds with its line, rather than stopping at the first.

use crate::error::{VerifyError, VerifyProblem};
use crate::instr::*;
use crate::kernel::{Kernel, Module, RegId};
use crate::parser::widen;
use crate::types::{ScalarType, StateSpace, TypeKind};

/// Checks every kernel of `module`; `Ok` when nothing is wrong.
pub fn verify_module(module: &Module) -> Result<(), VerifyError> {
    let mut problems = Vec::new();
    for kernel in &module.kernels {
        let mut checker = Checker {
            module,
            kernel,
            problems: &mut problems,
            loc: kernel.loc,
        };
        checker.check_kernel();
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(VerifyError { problems })
    }
}

struct Checker<'a> {
    module: &'a Module,
    kernel: &'a Kernel,
    problems: &'a mut Vec<VerifyProblem>,
    loc: SourceLoc,
}

impl Checker<'_> {
    #[cold]
    fn problem(&mut self, message: String) {
        self.problems.push(VerifyProblem {
            file: self.module.file_name(self.loc.file).to_string(),
            line: self.loc.line,
            kernel: self.kernel.name.clone(),
            message,
        });
    }

    fn check_kernel(&mut self) {
        for label in &self.kernel.labels {
            if label.target.index() > self.kernel.instrs.len() {
                self.problem(format!(
                    "label `{}` points past the end of the kernel",
                    label.name
                ));
            }
        }
        for symbol in &self.kernel.symbols {
            if !symbol.align.is_power_of_two() || symbol.align < symbol.ty.size_bytes() {
                self.loc = symbol.loc;
                self.problem(format!(
                    "`{}`: alignment {} is not a power of two at least the element size",
                    symbol.name, symbol.align
                ));
            }
        }
        for instr in &self.kernel.instrs {
            self.loc = instr.loc;
            if let Some(guard) = instr.guard {
                self.expect_register(guard.reg, ScalarType::Pred, "guard");
            }
            self.check_op(&instr.op);
        }
    }

    fn reg_name(&self, reg: RegId) -> &str {
        &self.kernel.reg(reg).name
    }

    fn expect_register(&mut self, reg: RegId, ty: ScalarType, role: &str) {
        let Some(decl) = self.kernel.regs.get(reg.index()) else {
            self.problem(format!("{role}: register {} does not exist", reg.0));
            return;
        };
        if !decl.ty.register_accepts(ty) {
            let message = format!(
                "{role} `{}` is declared `.{}` but the instruction uses it as `.{ty}`",
                decl.name, decl.ty
            );
            self.problem(message);
        }
    }

    /// A destination or source register of a load or store: sub-word integers
    /// may live in wider integer registers (they are zero- or sign-extended).
    fn expect_memory_register(&mut self, reg: RegId, ty: ScalarType, role: &str) {
        // A register that does not exist is left to `expect_register` to report.
        let widened = self.kernel.regs.get(reg.index()).is_some_and(|decl| {
            ty.is_integer() && decl.ty.is_integer() && decl.ty.size_bytes() >= ty.size_bytes()
        });
        if !widened {
            self.expect_register(reg, ty, role);
        }
    }

    fn expect_operand(&mut self, operand: &Operand, ty: ScalarType, role: &str) {
        match *operand {
            Operand::Reg(reg) => self.expect_register(reg, ty, role),
            Operand::Imm { ty: literal_ty, .. } => {
                if literal_ty.size_bytes() != ty.size_bytes()
                    || literal_ty.is_float() != ty.is_float()
                {
                    self.problem(format!(
                        "{role}: a `.{literal_ty}` literal where `.{ty}` is read"
                    ));
                }
            }
            Operand::Special(special) => {
                if !ty.is_integer() || special.ty().size_bytes() != ty.size_bytes() {
                    self.problem(format!(
                        "{role}: special register `{special}` reads as `.{}`, not `.{ty}`",
                        special.ty()
                    ));
                }
            }
            Operand::Symbol(symbol) => {
                if !ty.is_integer() || ty.size_bytes() < 4 {
                    let name = self.kernel.symbol(symbol).name.clone();
                    self.problem(format!(
                        "{role}: the address of `{name}` needs a 32- or 64-bit integer type, not `.{ty}`"
                    ));
                }
            }
        }
    }

    fn expect_pred(&mut self, operand: &PredOperand, role: &str) {
        self.expect_operand(&operand.value, ScalarType::Pred, role);
    }

    fn check_address(&mut self, space: StateSpace, addr: &Address) {
        match addr.base {
            AddressBase::Reg(reg) => {
                let ty = self.kernel.reg(reg).ty;
                let wide_enough = match space {
                    StateSpace::Shared
                    | StateSpace::Local
                    | StateSpace::Param
                    | StateSpace::Const => ty.size_bytes() >= 4,
                    StateSpace::Global | StateSpace::Generic => ty.size_bytes() == 8,
                };
                if !ty.is_integer() || !wide_enough {
                    let name = self.reg_name(reg).to_string();
                    self.problem(format!(
                        "address register `{name}` is `.{ty}`; a {} address needs {}",
                        space.name(),
                        if matches!(space, StateSpace::Global | StateSpace::Generic) {
                            "a 64-bit integer register"
                        } else {
                            "a 32- or 64-bit integer register"
                        }
                    ));
                }
            }
            AddressBase::Symbol(symbol) => {
                let symbol = self.kernel.symbol(symbol);
                if symbol.space != space {
                    let message = format!(
                        "`{}` is a .{} variable, but the access is to .{}",
                        symbol.name,
                        symbol.space.name(),
                        space.name()
                    );
                    self.problem(message);
                }
            }
            AddressBase::Absolute => {}
        }
    }

    fn check_op(&mut self, op: &Op) {
        match op {
            Op::Binary {
                op,
                ty,
                saturate,
                dst,
                a,
                b,
            } => {
                let ty = *ty;
                let saturable = match op {
                    BinaryOp::Add | BinaryOp::Sub => {
                        matches!(ty, ScalarType::S32 | ScalarType::F32)
                    }
                    BinaryOp::Mul => ty == ScalarType::F32,
                    _ => false,
                };
                if *saturate && !saturable {
                    self.problem(format!(
                        "`.sat` is not defined for `{op:?}.{ty}`: it takes `add`/`sub` of `.s32` or `.f32`, and `mul` of `.f32`"
                    ).to_lowercase());
                }
                let valid = match op {
                    BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Min
                    | BinaryOp::Max
                    | BinaryOp::Mul
                    | BinaryOp::Div => ty != ScalarType::Pred && ty.kind() != TypeKind::Bits,
                    BinaryOp::MulHi | BinaryOp::MulWide | BinaryOp::Rem => {
                        matches!(ty.kind(), TypeKind::Unsigned | TypeKind::Signed)
                    }
                    // PTX has `min.NaN` for `.f32` and the half types.
                    BinaryOp::MinNan | BinaryOp::MaxNan => ty.is_half() || ty == ScalarType::F32,
                    BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => !ty.is_float(),
                    BinaryOp::Shl | BinaryOp::Shr => ty.is_integer(),
                };
                if !valid {
                    self.problem(format!("`{op:?}` is not defined for `.{ty}`").to_lowercase());
                }
                if *op == BinaryOp::MulWide {
                    match widen(ty) {
                        Some(wide) => self.expect_register(*dst, wide, "destination"),
                        None => self.problem(format!("`mul.wide` is not defined for `.{ty}`")),
                    }
                } else {
                    self.expect_register(*dst, ty, "destination");
                }
                self.expect_operand(a, ty, "first operand");
                let b_ty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
                    ScalarType::U32
                } else {
                    ty
                };
                self.expect_operand(b, b_ty, "second operand");
            }
            Op::Unary { op, ty, dst, a } => {
                let ty = *ty;
                let valid = match op {
                    UnaryOp::Mov => true,
                    UnaryOp::Neg | UnaryOp::Abs => ty.is_float() || ty.is_signed(),
                    UnaryOp::Not => ty.is_integer() || ty == ScalarType::Pred,
                    UnaryOp::Popc | UnaryOp::Clz | UnaryOp::Brev => {
                        ty.kind() == TypeKind::Bits && ty.size_bytes() >= 4
                    }
                    UnaryOp::Sqrt | UnaryOp::Rcp | UnaryOp::Rsqrt => ty.is_float(),
                    UnaryOp::Ex2 | UnaryOp::Lg2 | UnaryOp::Sin | UnaryOp::Cos => {
                        ty == ScalarType::F32
                    }
                    UnaryOp::Bfind | UnaryOp::BfindShiftAmount => matches!(
                        ty,
                        ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
                    ),
                };
                if !valid {
                    self.problem(format!("`{op:?}` is not defined for `.{ty}`").to_lowercase());
                }
                let dst_ty = if matches!(
                    op,
                    UnaryOp::Popc | UnaryOp::Clz | UnaryOp::Bfind | UnaryOp::BfindShiftAmount
                ) {
                    ScalarType::U32
                } else {
                    ty
                };
                self.expect_register(*dst, dst_ty, "destination");
                self.expect_operand(a, ty, "operand");
            }
            Op::MulAdd {
                mode,
                ty,
                saturate,
                dst,
                a,
                b,
                c,
            } => {
                let ty = *ty;
                let saturable = match mode {
                    MulAddMode::Hi => ty == ScalarType::S32,
                    MulAddMode::Fused | MulAddMode::FusedDirected(_) => ty == ScalarType::F32,
                    MulAddMode::Lo | MulAddMode::Wide | MulAddMode::FusedRelu => false,
                };
                if *saturate && !saturable {
                    self.problem(format!(
                        "`.sat` is not defined here: it takes `mad.hi.s32` and `fma.f32`, not `.{ty}` in this mode"
                    ));
                }
                let wide = widen(ty);
                match mode {
                    MulAddMode::Fused | MulAddMode::FusedDirected(_) if !ty.is_float() => {
                        self.problem(format!("`fma` is not defined for `.{ty}`"))
                    }
                    MulAddMode::FusedRelu if !ty.is_half() => self.problem(format!(
                        "`fma.rn.relu` is defined for `.f16`, `.f16x2`, `.bf16` and `.bf16x2`, not `.{ty}`"
                    )),
                    MulAddMode::Lo | MulAddMode::Hi | MulAddMode::Wide
                        if !matches!(ty.kind(), TypeKind::Unsigned | TypeKind::Signed) =>
                    {
                        self.problem(format!("`mad` is not defined for `.{ty}`"))
                    }
                    MulAddMode::Wide if wide.is_none() => {
                        self.problem(format!("`mad.wide` is not defined for `.{ty}`"))
                    }
                    _ => {}
                }
                let result_ty = if *mode == MulAddMode::Wide {
                    wide.unwrap_or(ty)
                } else {
                    ty
                };
                self.expect_register(*dst, result_ty, "destination");
                self.expect_operand(a, ty, "first operand");
                self.expect_operand(b, ty, "second operand");
                self.expect_operand(c, result_ty, "third operand");
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
                self.check_comparison(*cmp, *src_ty, "set");
                // A half type as the destination is the result of comparing
                // that same type: 1.0 or 0.0 per element (`set.eq.bf16x2.bf16x2`).
                if dst_ty.is_half() {
                    if dst_ty != src_ty {
                        self.problem(format!(
                            "`set` writes `.{dst_ty}` only from a comparison of `.{dst_ty}`, not `.{src_ty}`"
                        ));
                    }
                } else if src_ty.is_half_pair() {
                    self.problem(format!(
                        "`set` compares `.{src_ty}` pairs into `.{src_ty}` only, not `.{dst_ty}`"
                    ));
                } else if !matches!(dst_ty, ScalarType::U32 | ScalarType::S32 | ScalarType::F32) {
                    self.problem(format!(
                        "`set` writes `.u32`, `.s32`, `.f32` or a half type, not `.{dst_ty}`"
                    ));
                }
                self.expect_register(*dst, *dst_ty, "destination");
                self.check_compared_operands(a, b, *src_ty, combine);
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
                if let Some(q) = dst_not {
                    self.expect_register(*q, ScalarType::Pred, "second destination");
                }
                self.check_comparison(*cmp, *ty, "setp");
                self.expect_register(*dst, ScalarType::Pred, "destination");
                self.check_compared_operands(a, b, *ty, combine);
            }
            Op::Selp {
                ty,
                dst,
                a,
                b,
                cond,
            } => {
                if *ty == ScalarType::Pred {
                    self.problem("`selp` selects numbers, not predicates".to_string());
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "first operand");
                self.expect_operand(b, *ty, "second operand");
                self.expect_pred(cond, "condition");
            }
            Op::Cvt {
                dst_ty,
                src_ty,
                rounding,
                dst,
                src,
                ..
            } => {
                if *dst_ty == ScalarType::Pred || *src_ty == ScalarType::Pred {
                    self.problem(
                        "`cvt` does not convert predicates; use `selp` or `setp`".to_string(),
                    );
                }
                match rounding {
                    Some(r) if r.is_integer_rounding() && !src_ty.is_float() => self.problem(format!(
                        "rounding `.{}` rounds a float to an integer value, but the source is `.{src_ty}`",
                        r.name()
                    )),
                    Some(r) if !r.is_integer_rounding() && !dst_ty.is_float() => self.problem(format!(
                        "rounding `.{}` rounds to a float, but the destination is `.{dst_ty}`",
                        r.name()
                    )),
                    None if src_ty.is_float() && !dst_ty.is_float() => self.problem(
                        "a float-to-integer `cvt` needs a rounding: `.rni`, `.rzi`, `.rmi` or `.rpi`".to_string(),
                    ),
                    _ => {}
                }
                self.expect_register(*dst, *dst_ty, "destination");
                self.expect_operand(src, *src_ty, "source");
            }
            Op::CvtPair {
                dst_ty,
                rounding,
                dst,
                a,
                b,
            } => {
                if !dst_ty.is_half_pair() {
                    self.problem(format!(
                        "`cvt` of two values writes `.f16x2` or `.bf16x2`, not `.{dst_ty}`"
                    ));
                }
                if !matches!(rounding, Rounding::Rn | Rounding::Rz) {
                    self.problem(format!(
                        "`cvt` to `.{dst_ty}` rounds with `.rn` or `.rz`, not `.{}`",
                        rounding.name()
                    ));
                }
                self.expect_register(*dst, *dst_ty, "destination");
                self.expect_operand(a, ScalarType::F32, "first source");
                self.expect_operand(b, ScalarType::F32, "second source");
            }
            Op::Load {
                space,
                ty,
                dst,
                addr,
                ..
            } => {
                self.check_vector(*ty, dst.len());
                // Each element widens to its register: they must agree in width.
                if dst
                    .iter()
                    .any(|&reg| self.kernel.reg(reg).ty != self.kernel.reg(dst[0]).ty)
                {
                    self.problem("the registers of a vector load must have one type".to_string());
                }
                for &reg in dst {
                    self.expect_memory_register(reg, *ty, "destination");
                }
                self.check_address(*space, addr);
            }
            Op::Store {
                space,
                ty,
                addr,
                src,
                ..
            } => {
                self.check_vector(*ty, src.len());
                if matches!(space, StateSpace::Param | StateSpace::Const) {
                    self.problem(format!("the .{} space is read-only", space.name()));
                }
                for operand in src {
                    match operand {
                        Operand::Reg(reg) => self.expect_memory_register(*reg, *ty, "stored value"),
                        other => self.expect_operand(other, *ty, "stored value"),
                    }
                }
                self.check_address(*space, addr);
            }
            Op::Atom {
                space,
                op,
                ty,
                dst,
                addr,
                a,
                b,
                ..
            } => {
                let ty = *ty;
                let size = ty.size_bytes();
                let valid = match op {
                    // PTX defines `atom.add.noftz` on the half types too; the
                    // lowering says that the machine does not have it.
                    AtomOp::Add => {
                        matches!(
                            ty,
                            ScalarType::U32
                                | ScalarType::S32
                                | ScalarType::U64
                                | ScalarType::F32
                                | ScalarType::F64
                        ) || ty.is_half()
                    }
                    AtomOp::Min | AtomOp::Max => {
                        matches!(
                            ty,
                            ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
                        )
                    }
                    AtomOp::Inc | AtomOp::Dec => ty == ScalarType::U32,
                    AtomOp::Exch | AtomOp::Cas | AtomOp::And | AtomOp::Or | AtomOp::Xor => {
                        ty.is_integer() && (size == 4 || size == 8)
                    }
                    AtomOp::PopcIncrement => ty == ScalarType::U32,
                };
                if !valid {
                    self.problem(format!("`atom.{}` is not defined for `.{ty}`", op.name()));
                }
                if *op == AtomOp::PopcIncrement {
                    // ATOMS.POPC.INC exists for shared memory only, writes no
                    // result, and adds one per lane.
                    if *space != StateSpace::Shared {
                        self.problem(format!(
                            "`popc_inc` is a shared-memory reduction, not one of the .{} space",
                            space.name()
                        ));
                    }
                    if dst.is_some() {
                        self.problem(
                            "`popc_inc` returns no value: write it as `red`, not `atom`"
                                .to_string(),
                        );
                    }
                    if !matches!(a, Operand::Imm { bits: 1, .. }) {
                        self.problem("`popc_inc` adds the literal 1".to_string());
                    }
                }
                if !matches!(
                    space,
                    StateSpace::Global | StateSpace::Shared | StateSpace::Generic
                ) {
                    self.problem(format!(
                        "atomics are not defined on the .{} space",
                        space.name()
                    ));
                }
                if let Some(dst) = dst {
                    self.expect_register(*dst, ty, "destination");
                }
                self.expect_operand(a, ty, "operand");
                if let Some(b) = b {
                    self.expect_operand(b, ty, "swap value");
                }
                self.check_address(*space, addr);
            }
            Op::Barrier {
                kind,
                id,
                count,
                reduction,
            } => {
                self.expect_operand(id, ScalarType::U32, "barrier id");
                if let Operand::Imm { bits, .. } = id {
                    if *bits > 15 {
                        self.problem(format!(
                            "barrier id {bits} is out of range: a block has barriers 0 to 15"
                        ));
                    }
                }
                if let Some(count) = count {
                    self.expect_operand(count, ScalarType::U32, "thread count");
                    if let Operand::Imm { bits, .. } = count {
                        if *bits == 0 || bits % 32 != 0 {
                            self.problem(format!(
                                "barrier thread count {bits} is not a positive multiple of 32"
                            ));
                        }
                    }
                }
                match (kind, reduction) {
                    (BarrierKind::Reduce(reduce), Some((dst, pred))) => {
                        let dst_ty = if *reduce == BarrierReduction::Popc {
                            ScalarType::U32
                        } else {
                            ScalarType::Pred
                        };
                        self.expect_register(*dst, dst_ty, "destination");
                        self.expect_pred(pred, "predicate");
                    }
                    (BarrierKind::Reduce(_), None) => {
                        self.problem("`bar.red` needs a destination and a predicate".to_string())
                    }
                    (_, Some(_)) => self.problem("only `bar.red` takes a predicate".to_string()),
                    (BarrierKind::Arrive, None) if count.is_none() => {
                        self.problem("`bar.arrive` needs a thread count".to_string())
                    }
                    _ => {}
                }
            }
            Op::WarpSync { mask } => self.expect_operand(mask, ScalarType::B32, "mask"),
            // Tensor-core instructions.
            Op::WmmaLoad {
                matrix,
                space,
                ty,
                dst,
                addr,
                stride,
                ..
            } => self.check_wmma_access(*matrix, *space, *ty, dst, addr, stride.as_ref()),
            Op::WmmaStore {
                space,
                ty,
                src,
                addr,
                stride,
                ..
            } => self.check_wmma_access(WmmaMatrix::C, *space, *ty, src, addr, stride.as_ref()),
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
                for (regs, matrix, ty) in [
                    (d, WmmaMatrix::C, *d_type),
                    (a, WmmaMatrix::A, *input_type),
                    (b, WmmaMatrix::B, *input_type),
                    (c, WmmaMatrix::C, *c_type),
                ] {
                    self.check_wmma_fragment(matrix, ty, regs);
                }
            }
            Op::MatrixLoad {
                space, dst, addr, ..
            } => self.check_matrix_access(*space, dst, addr, "destination"),
            Op::MatrixStore {
                space, src, addr, ..
            } => self.check_matrix_access(*space, src, addr, "source"),
            Op::MatrixMultiplyAccumulate {
                shape,
                d_type,
                a_type,
                b_type,
                c_type,
                d,
                a,
                b,
                c,
                ..
            } => {
                let Some(fragments) = mma_fragments(*shape, *d_type, *a_type, *b_type, *c_type)
                else {
                    self.problem(format!(
                        "`mma.{}` does not take D `.{}`, A `.{}`, B `.{}`, C `.{}`",
                        shape.name(),
                        d_type.name(),
                        a_type.name(),
                        b_type.name(),
                        c_type.name()
                    ));
                    return;
                };
                // Packed elements live in `.b32` registers; `.f32`, `.s32`
                // and `.f64` elements in registers of their own type.
                let register_type = |ty: MmaType| match ty {
                    MmaType::F32 => ScalarType::F32,
                    MmaType::S32 => ScalarType::S32,
                    MmaType::F64 => ScalarType::F64,
                    _ => ScalarType::B32,
                };
                for (role, regs, expected, ty) in [
                    ("D", d, fragments.d, *d_type),
                    ("A", a, fragments.a, *a_type),
                    ("B", b, fragments.b, *b_type),
                    ("C", c, fragments.c, *c_type),
                ] {
                    if regs.len() != expected {
                        self.problem(format!(
                            "this `mma` takes {expected} registers for {role}, not {}",
                            regs.len()
                        ));
                    }
                    for &reg in regs {
                        self.expect_register(reg, register_type(ty), role);
                    }
                }
            }
            Op::Fence { .. } | Op::Exit => {}
            // The dot products, carry chains and narrow-float conversions: the parser
            // checked their types; the registers must hold them.
            Op::DotProduct {
                a_signed,
                b_signed,
                dst,
                a,
                b,
                c,
                ..
            } => {
                let sign = |signed: bool| {
                    if signed {
                        ScalarType::S32
                    } else {
                        ScalarType::U32
                    }
                };
                let result = sign(*a_signed || *b_signed);
                self.expect_register(*dst, result, "destination");
                self.expect_operand(a, sign(*a_signed), "first operand");
                self.expect_operand(b, sign(*b_signed), "second operand");
                self.expect_operand(c, result, "third operand");
            }
            Op::CarryArith {
                op,
                ty,
                dst,
                a,
                b,
                c,
                ..
            } => {
                if !matches!(
                    ty,
                    ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
                ) {
                    self.problem(format!(
                        "extended-precision arithmetic takes `.u32`, `.s32`, `.u64` or `.s64`, not `.{ty}`"
                    ));
                }
                let is_mad = matches!(op, CarryOp::MulAddLow | CarryOp::MulAddHigh);
                if is_mad != c.is_some() {
                    self.problem(
                        "`mad.cc` and `madc` take three operands, `add.cc`, `addc`, `sub.cc` and `subc` two"
                            .to_string(),
                    );
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "first operand");
                self.expect_operand(b, *ty, "second operand");
                if let Some(c) = c {
                    self.expect_operand(c, *ty, "third operand");
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
            } => {
                if !matches!(ty, ScalarType::U32 | ScalarType::S32) {
                    self.problem(format!("`mad24` takes `.u32` or `.s32`, not `.{ty}`"));
                }
                if *saturate && !(*hi && *ty == ScalarType::S32) {
                    self.problem("`mad24` has `.sat` only in `.hi.s32`".to_string());
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "first operand");
                self.expect_operand(b, *ty, "second operand");
                self.expect_operand(c, *ty, "third operand");
            }
            Op::ReduxFloat { dst, a, mask, .. } => {
                self.expect_register(*dst, ScalarType::F32, "destination");
                self.expect_operand(a, ScalarType::F32, "operand");
                self.expect_operand(mask, ScalarType::B32, "mask");
            }
            Op::CvtTf32 {
                rounding,
                relu,
                dst,
                src,
                ..
            } => {
                if *relu && *rounding == Tf32Rounding::NearestAway {
                    self.problem("`cvt.rna` to `.tf32` has no `.relu` form".to_string());
                }
                self.expect_register(*dst, ScalarType::B32, "destination");
                self.expect_operand(src, ScalarType::F32, "source");
            }
            Op::CvtToFp8 { dst, a, b, .. } => {
                self.expect_register(*dst, ScalarType::B16, "destination");
                match b {
                    Some(b) => {
                        self.expect_operand(a, ScalarType::F32, "first source");
                        self.expect_operand(b, ScalarType::F32, "second source");
                    }
                    None => self.expect_operand(a, ScalarType::F16x2, "source"),
                }
            }
            Op::CvtBf16Relu { dst, src, .. } => {
                self.expect_register(*dst, ScalarType::Bf16, "destination");
                self.expect_operand(src, ScalarType::F32, "source");
            }
            Op::CvtFromFp8 { dst, src, .. } => {
                self.expect_register(*dst, ScalarType::F16x2, "destination");
                self.expect_operand(src, ScalarType::B16, "source");
            }
            Op::NarrowFloat {
                function,
                ty,
                dst,
                a,
                b,
            } => {
                self.expect_register(*dst, *ty, "destination");
                let source = match function {
                    NarrowFloatFunction::FromF32 { .. } => ScalarType::F32,
                    _ => *ty,
                };
                self.expect_operand(a, source, "first source");
                if let Some(b) = b {
                    self.expect_operand(b, source, "second source");
                }
            }
            Op::Shuffle {
                dst,
                dst_pred,
                a,
                b,
                c,
                mask,
                ..
            } => {
                self.expect_register(*dst, ScalarType::B32, "destination");
                if let Some(p) = dst_pred {
                    self.expect_register(*p, ScalarType::Pred, "predicate destination");
                }
                self.expect_operand(a, ScalarType::B32, "value");
                self.expect_operand(b, ScalarType::B32, "lane operand");
                self.expect_operand(c, ScalarType::B32, "clamp operand");
                self.expect_operand(mask, ScalarType::B32, "mask");
            }
            Op::Vote {
                mode,
                dst,
                pred,
                mask,
            } => {
                let dst_ty = if *mode == VoteMode::Ballot {
                    ScalarType::B32
                } else {
                    ScalarType::Pred
                };
                self.expect_register(*dst, dst_ty, "destination");
                self.expect_pred(pred, "predicate");
                self.expect_operand(mask, ScalarType::B32, "mask");
            }
            Op::Mul24 { ty, dst, a, b, .. } => {
                if !matches!(ty, ScalarType::U32 | ScalarType::S32) {
                    self.problem(format!("`mul24` takes .u32 or .s32, not `.{ty}`"));
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "first operand");
                self.expect_operand(b, *ty, "second operand");
            }
            Op::Sad { ty, dst, a, b, c } => {
                if !matches!(ty.kind(), TypeKind::Unsigned | TypeKind::Signed) || ty.bits() < 16 {
                    self.problem(format!(
                        "`sad` takes an integer type of 16, 32 or 64 bits, not `.{ty}`"
                    ));
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "first operand");
                self.expect_operand(b, *ty, "second operand");
                self.expect_operand(c, *ty, "addend");
            }
            Op::Testp { ty, dst, a, .. } => {
                if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
                    self.problem(format!("`testp` takes .f32 or .f64, not `.{ty}`"));
                }
                self.expect_register(*dst, ScalarType::Pred, "destination");
                self.expect_operand(a, *ty, "source");
            }
            Op::CopySign { ty, dst, a, b } => {
                if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
                    self.problem(format!("`copysign` takes .f32 or .f64, not `.{ty}`"));
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "sign source");
                self.expect_operand(b, *ty, "magnitude source");
            }
            Op::Redux {
                op,
                ty,
                dst,
                a,
                mask,
            } => {
                let valid = if op.is_bitwise() {
                    *ty == ScalarType::B32
                } else {
                    matches!(ty, ScalarType::U32 | ScalarType::S32)
                };
                if !valid {
                    self.problem(format!(
                        "`redux.sync.{}` is not defined for `.{ty}`",
                        op.name()
                    ));
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "value");
                self.expect_operand(mask, ScalarType::B32, "mask");
            }
            Op::Match {
                all,
                ty,
                dst,
                dst_pred,
                a,
                mask,
            } => {
                if !matches!(ty, ScalarType::B32 | ScalarType::B64) {
                    self.problem(format!("`match.sync` takes .b32 or .b64, not `.{ty}`"));
                }
                if dst_pred.is_some() && !all {
                    self.problem("only `match.all.sync` has a predicate destination".to_string());
                }
                self.expect_register(*dst, ScalarType::B32, "destination");
                if let Some(p) = dst_pred {
                    self.expect_register(*p, ScalarType::Pred, "predicate destination");
                }
                self.expect_operand(a, *ty, "value");
                self.expect_operand(mask, ScalarType::B32, "mask");
            }
            Op::BitFieldExtract {
                ty,
                dst,
                a,
                position,
                length,
            } => {
                if !matches!(
                    ty,
                    ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
                ) {
                    self.problem(format!("`bfe` takes .u32, .s32, .u64 or .s64, not `.{ty}`"));
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(a, *ty, "source");
                self.expect_operand(position, ScalarType::U32, "bit position");
                self.expect_operand(length, ScalarType::U32, "field length");
            }
            Op::BitFieldInsert {
                ty,
                dst,
                field,
                base,
                position,
                length,
            } => {
                if !matches!(ty, ScalarType::B32 | ScalarType::B64) {
                    self.problem(format!("`bfi` takes .b32 or .b64, not `.{ty}`"));
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(field, *ty, "field");
                self.expect_operand(base, *ty, "base");
                self.expect_operand(position, ScalarType::U32, "bit position");
                self.expect_operand(length, ScalarType::U32, "field length");
            }
            Op::Permute {
                dst,
                a,
                b,
                selector,
            } => {
                self.expect_register(*dst, ScalarType::B32, "destination");
                self.expect_operand(a, ScalarType::B32, "first source");
                self.expect_operand(b, ScalarType::B32, "second source");
                self.expect_operand(selector, ScalarType::B32, "selector");
            }
            Op::FunnelShift { dst, a, b, c, .. } => {
                self.expect_register(*dst, ScalarType::B32, "destination");
                self.expect_operand(a, ScalarType::B32, "low word");
                self.expect_operand(b, ScalarType::B32, "high word");
                self.expect_operand(c, ScalarType::U32, "shift amount");
            }
            Op::Lop3 { dst, a, b, c, .. } => {
                self.expect_register(*dst, ScalarType::B32, "destination");
                self.expect_operand(a, ScalarType::B32, "first operand");
                self.expect_operand(b, ScalarType::B32, "second operand");
                self.expect_operand(c, ScalarType::B32, "third operand");
            }
            Op::Pack { ty, dst, src } => {
                match self.check_packing(*ty, src.len()) {
                    Some(element) => {
                        for operand in src {
                            self.expect_operand(operand, element, "element");
                        }
                    }
                    None => return,
                }
                self.expect_register(*dst, *ty, "destination");
            }
            Op::Unpack { ty, dst, src } => {
                if let Some(element) = self.check_packing(*ty, dst.len()) {
                    for reg in dst.iter().flatten() {
                        self.expect_register(*reg, element, "element");
                    }
                }
                self.expect_operand(src, *ty, "source");
            }
            Op::ActiveMask { dst } => self.expect_register(*dst, ScalarType::B32, "destination"),
            Op::Cvta {
                space,
                to_generic,
                ty,
                dst,
                src,
            } => {
                if !matches!(ty, ScalarType::U32 | ScalarType::U64) {
                    self.problem(format!("`cvta` takes `.u32` or `.u64`, not `.{ty}`"));
                }
                if matches!(space, StateSpace::Generic) {
                    self.problem("`cvta` converts from or to a named space".to_string());
                }
                if *to_generic && *ty != ScalarType::U64 && *space != StateSpace::Global {
                    self.problem(
                        "a generic address is 64 bits: `cvta` to generic takes `.u64`".to_string(),
                    );
                }
                self.expect_register(*dst, *ty, "destination");
                self.expect_operand(src, *ty, "address");
            }
            Op::Printf {
                dst,
                format,
                arguments,
            } => {
                if let Some(dst) = dst {
                    self.expect_register(*dst, ScalarType::B32, "destination");
                }
                self.expect_operand(format, ScalarType::U64, "format address");
                self.expect_operand(arguments, ScalarType::U64, "arguments address");
            }
            Op::AssertFail {
                message,
                file,
                line,
                function,
            } => {
                self.expect_operand(message, ScalarType::U64, "message address");
                self.expect_operand(file, ScalarType::U64, "file name address");
                self.expect_operand(line, ScalarType::U32, "line");
                self.expect_operand(function, ScalarType::U64, "function name address");
            }
            Op::NanoSleep { duration } => {
                self.expect_operand(duration, ScalarType::U32, "duration");
            }
            // Asynchronous copies and mbarriers (PTX ISA 9.7.9.25, 9.7.13.15).
            Op::CpAsync {
                bypass_l1,
                size,
                dst,
                src,
                src_size,
                ignore_src,
                cache_policy,
                ..
            } => {
                if ![4, 8, 16].contains(size) {
                    self.problem(format!("`cp.async` copies 4, 8 or 16 bytes, not {size}"));
                } else if *bypass_l1 && *size != 16 {
                    self.problem(format!(
                        "`cp.async.cg` copies 16 bytes, not {size} (`.ca` copies 4 or 8)"
                    ));
                }
                self.check_address(StateSpace::Shared, dst);
                self.check_address(StateSpace::Global, src);
                if let Some(src_size) = src_size {
                    self.expect_operand(src_size, ScalarType::U32, "source size");
                    if let Operand::Imm { bits, .. } = src_size {
                        if *bits > u64::from(*size) {
                            self.problem(format!(
                                "`cp.async` source size {bits} is larger than the copy's {size} bytes"
                            ));
                        }
                    }
                }
                if let Some(ignore_src) = ignore_src {
                    self.expect_pred(ignore_src, "ignore-src predicate");
                }
                if let Some(policy) = cache_policy {
                    self.expect_operand(policy, ScalarType::B64, "cache policy");
                }
            }
            Op::CpAsyncCommitGroup | Op::CpAsyncWait { .. } => {}
            Op::CpAsyncMbarrierArrive { addr, .. } => self.check_address(StateSpace::Shared, addr),
            Op::CpAsyncBulk {
                dst,
                src,
                size,
                mbarrier,
            } => {
                self.check_address(StateSpace::Shared, dst);
                self.check_address(StateSpace::Global, src);
                self.check_address(StateSpace::Shared, mbarrier);
                self.expect_operand(size, ScalarType::U32, "size");
                if let Operand::Imm { bits, .. } = size {
                    if *bits == 0 || bits % 16 != 0 {
                        self.problem(format!(
                            "`cp.async.bulk` copies a multiple of 16 bytes, not {bits}"
                        ));
                    }
                }
            }
            Op::Mbarrier { op, space, addr } => {
                self.check_address(*space, addr);
                match op {
                    MbarrierOp::Init { count } => {
                        self.expect_operand(count, ScalarType::U32, "arrival count");
                        if let Operand::Imm { bits, .. } = count {
                            if *bits == 0 || *bits > MBARRIER_MAX_COUNT {
                                self.problem(format!(
                                    "an mbarrier expects 1 to {MBARRIER_MAX_COUNT} arrivals, not {bits}"
                                ));
                            }
                        }
                    }
                    MbarrierOp::Arrive {
                        state,
                        count,
                        expect_tx,
                        ..
                    } => {
                        if let Some(state) = state {
                            self.expect_register(*state, ScalarType::B64, "state");
                        }
                        if let Some(count) = count {
                            self.expect_operand(count, ScalarType::U32, "arrival count");
                            if let Operand::Imm { bits, .. } = count {
                                if *bits == 0 || *bits > MBARRIER_MAX_COUNT {
                                    self.problem(format!(
                                        "an mbarrier arrival counts 1 to {MBARRIER_MAX_COUNT}, not {bits}"
                                    ));
                                }
                            }
                        }
                        if let Some(bytes) = expect_tx {
                            self.expect_operand(bytes, ScalarType::U32, "transaction bytes");
                        }
                    }
                    MbarrierOp::ExpectTx { bytes } | MbarrierOp::CompleteTx { bytes } => {
                        self.expect_operand(bytes, ScalarType::U32, "transaction bytes");
                    }
                    MbarrierOp::Wait {
                        parity,
                        done,
                        phase,
                        suspend_hint,
                        ..
                    } => {
                        self.expect_register(*done, ScalarType::Pred, "wait result");
                        let phase_ty = if *parity {
                            ScalarType::U32
                        } else {
                            ScalarType::B64
                        };
                        self.expect_operand(phase, phase_ty, "phase");
                        if let Some(hint) = suspend_hint {
                            self.expect_operand(hint, ScalarType::U32, "suspend-time hint");
                        }
                    }
                    MbarrierOp::Invalidate => {}
                }
            }
            Op::MbarrierPendingCount { dst, state } => {
                self.expect_register(*dst, ScalarType::U32, "pending count");
                self.expect_operand(state, ScalarType::B64, "state");
            }
            Op::Trap => {}
            Op::Branch { target } => {
                if target.index() >= self.kernel.labels.len() {
                    self.problem(format!("branch to label {} that does not exist", target.0));
                }
            }
        }
    }

    /// The element type of a `mov` that packs or unpacks `count` elements
    /// of `ty`, or a problem.
    fn check_packing(&mut self, ty: ScalarType, count: usize) -> Option<ScalarType> {
        let element = Op::vector_element_type(ty, count);
        if !matches!(ty, ScalarType::B16 | ScalarType::B32 | ScalarType::B64)
            || !matches!(count, 2 | 4)
            || element.is_none()
        {
            self.problem(format!(
                "`mov.{ty}` with braces packs 2 or 4 elements of at least 8 bits into `.b16`, `.b32` or `.b64`, not {count}"
            ));
            return None;
        }
        element
    }

    /// The rules `setp` states for comparisons, for `set`.
    fn check_comparison(&mut self, cmp: CmpOp, ty: ScalarType, what: &str) {
        if cmp.is_float_only() && !ty.is_float() {
            self.problem(format!("comparison `{}` needs a float type", cmp.name()));
        }
        if cmp.is_unsigned_only() && (ty.is_float() || ty.is_signed()) {
            self.problem(format!(
                "comparison `{}` needs an unsigned or bit type",
                cmp.name()
            ));
        }
        if ty == ScalarType::Pred {
            self.problem(format!("`{what}` compares numbers, not predicates"));
        }
    }

    /// The sources of `setp` and `set`: two numbers of the compared type and
    /// the predicate that the comparison may be combined with.
    fn check_compared_operands(
        &mut self,
        a: &Operand,
        b: &Operand,
        ty: ScalarType,
        combine: &Option<(BoolOp, PredOperand)>,
    ) {
        self.expect_operand(a, ty, "first operand");
        self.expect_operand(b, ty, "second operand");
        if let Some((_, c)) = combine {
            self.expect_pred(c, "combined predicate");
        }
    }

    /// A WMMA fragment: its register count and types.
    fn check_wmma_fragment(&mut self, matrix: WmmaMatrix, ty: MmaType, regs: &[RegId]) {
        match wmma_fragment_registers(matrix, ty) {
            Some(expected) if expected == regs.len() => {}
            _ => self.problem(format!(
                "a `.{}` WMMA fragment of `.{}` cannot have {} registers",
                matrix.name(),
                ty.name(),
                regs.len()
            )),
        }
        let register_type = if ty == MmaType::F32 {
            ScalarType::F32
        } else {
            ScalarType::B32
        };
        for &reg in regs {
            self.expect_register(reg, register_type, "fragment");
        }
    }

    /// `wmma.load`/`wmma.store`: the fragment, the address and the stride.
    fn check_wmma_access(
        &mut self,
        matrix: WmmaMatrix,
        space: StateSpace,
        ty: MmaType,
        regs: &[RegId],
        addr: &Address,
        stride: Option<&Operand>,
    ) {
        self.check_wmma_fragment(matrix, ty, regs);
        if !matches!(
            space,
            StateSpace::Shared | StateSpace::Global | StateSpace::Generic
        ) {
            self.problem(format!(
                "WMMA fragments are loaded from and stored to `.shared`, `.global` or generic memory, not `.{}`",
                space.name()
            ));
        }
        self.check_address(space, addr);
        if let Some(stride) = stride {
            self.expect_operand(stride, ScalarType::U32, "stride");
        }
    }

    /// `ldmatrix`/`stmatrix`: one `.b32` register per matrix (1, 2 or 4) and
    /// a shared or generic address.
    fn check_matrix_access(
        &mut self,
        space: StateSpace,
        regs: &[RegId],
        addr: &Address,
        role: &str,
    ) {
        if !matches!(regs.len(), 1 | 2 | 4) {
            self.problem(format!(
                "a matrix load or store moves 1, 2 or 4 matrices, one {role} register each, not {}",
                regs.len()
            ));
        }
        if !matches!(space, StateSpace::Shared | StateSpace::Generic) {
            self.problem(format!(
                "a matrix load or store accesses shared memory, not `.{}`",
                space.name()
            ));
        }
        for &reg in regs {
            self.expect_register(reg, ScalarType::B32, role);
        }
        self.check_address(space, addr);
    }

    fn check_vector(&mut self, ty: ScalarType, count: usize) {
        if !matches!(count, 1 | 2 | 4) {
            self.problem(format!(
                "a vector access has 1, 2 or 4 elements, not {count}"
            ));
        } else if ty == ScalarType::Pred {
            self.problem("predicates cannot be loaded or stored".to_string());
        } else if ty.size_bytes() as usize * count > 16 {
            self.problem(format!(
                "a vector access moves at most 16 bytes; `.v{count}.{ty}` would move {}",
                ty.size_bytes() as usize * count
            ));
        }
    }
}
