//! Known low bits of register values: how many of the lowest bits of each
//! register are known to be zero, and which registers hold a known constant.
//! It is the alignment proof that `merge` needs before it may turn adjacent
//! shared-memory accesses into one vector access, and it follows what ptxas
//! proves rather than everything that could be proved: the rules below were
//! measured with ptxas 12.9 on small PTX kernels (docs/access-merging.md,
//! "Alignment proofs").
//!
//! The analysis is flow-insensitive: a register's known bits are the meet
//! over every instruction that writes it, computed to a fixed point. That is
//! sound for any program order (a loop-carried register that starts at 0 and
//! steps by 4 ends with its two low bits known zero) and exact for the
//! single-assignment registers NVRTC writes almost everywhere.
//!
//! # What is known
//!
//! - A literal, and the address of a `.shared` variable, are constants. A
//!   shared variable lies where the machine lays it out (declaration order,
//!   each at its alignment, dynamic shared memory after the static variables
//!   at 16 bytes or more), which is also how ptxas lays them out; ptxas's
//!   window starts at byte 0x400, so only the low ten bits of these constants
//!   are meaningful, which is more than an alignment proof ever needs.
//! - Parameters, loaded values, special registers (`%tid` and the like) and
//!   results of other instructions are unknown.
//! - `add`, `or`, `xor`, `selp`: the fewest known-zero bits of the operands.
//!   `and`: the most. `mul` (`.lo` and `.wide`): the sum. `mad.lo`/`.wide`:
//!   the fewer of the product's and the addend's. `shl` by a constant: plus
//!   the shift; `shr` by a constant: minus it. `cvt` between integers and
//!   `cvta`: unchanged (no more bits than the destination has). `bfi` at a
//!   constant position: the base's bits below the position, and the field's
//!   shifted up.
//! - `sub` is known only when one operand is a constant (ptxas proves
//!   `2t - 2` even but not `8t - 2p`); `neg`, `min`, `max`, `div`, `rem`,
//!   `bfe`, `prmt` and the rest give unknown bits, as they do for ptxas.
//! - Operations whose operands are all constants fold to a constant (ptxas
//!   propagates constants), so `mov.u32 %r, 1; red.shared.add.u32 [a], %r`
//!   is seen to add the constant 1.

use crate::instr::{AddressBase, BinaryOp, MulAddMode, Op, Operand, UnaryOp};
use crate::kernel::{Kernel, RegId, SymbolId};
use crate::types::{ScalarType, StateSpace};

/// The byte at which ptxas places the first static shared variable of a
/// CTA's window on sm_90 (`UMOV UR4, 0x400` in every kernel's SASS). Only its
/// alignment matters: 1024 bytes, far beyond the 16 an access needs.
pub const SHARED_WINDOW_BASE: u64 = 0x400;

/// What is known about the low bits of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownBits {
    /// How many of the lowest bits are known to be zero, from 0 (nothing
    /// known) to the value's width.
    pub low_zero_bits: u32,
    /// The whole value, when it is a known constant (then `low_zero_bits`
    /// counts its trailing zeros).
    pub constant: Option<u64>,
}

impl KnownBits {
    /// Nothing is known.
    pub const UNKNOWN: KnownBits = KnownBits {
        low_zero_bits: 0,
        constant: None,
    };

    /// A constant of `width` bits (the bits above the width are dropped).
    pub fn constant(value: u64, width: u32) -> KnownBits {
        let value = value & width_mask(width);
        KnownBits {
            low_zero_bits: value.trailing_zeros().min(width),
            constant: Some(value),
        }
    }

    /// A value whose `bits` lowest bits are zero, and nothing more, in a
    /// register of `width` bits.
    pub fn aligned(bits: u32, width: u32) -> KnownBits {
        KnownBits {
            low_zero_bits: bits.min(width),
            constant: None,
        }
    }

    /// The largest power of two the value is known to be a multiple of,
    /// capped at 2^32 (no shared-memory alignment is larger).
    pub fn alignment(self) -> u64 {
        1u64 << self.low_zero_bits.min(32)
    }

    /// What holds for a value that may be either `self` or `other`.
    pub fn meet(self, other: KnownBits) -> KnownBits {
        KnownBits {
            low_zero_bits: self.low_zero_bits.min(other.low_zero_bits),
            constant: match (self.constant, other.constant) {
                (Some(a), Some(b)) if a == b => Some(a),
                _ => None,
            },
        }
    }

    /// The known bits of `self + offset` for a byte offset that may be
    /// negative, in a value of `width` bits.
    pub fn plus(self, offset: i64, width: u32) -> KnownBits {
        add(self, KnownBits::constant(offset as u64, width), width)
    }
}

/// The known bits of every register of a kernel.
#[derive(Clone, Debug)]
pub struct KernelKnownBits {
    /// Indexed by [`RegId`].
    registers: Vec<KnownBits>,
    /// The byte offset of every `.shared` variable in the kernel's shared
    /// window, indexed by [`SymbolId`]; `None` for other symbols.
    shared_offsets: Vec<Option<u64>>,
}

impl KernelKnownBits {
    /// What is known about a register's value (unknown for a register the
    /// kernel does not have).
    pub fn register(&self, reg: RegId) -> KnownBits {
        self.registers
            .get(reg.index())
            .copied()
            .unwrap_or(KnownBits::UNKNOWN)
    }

    /// The byte offset of a `.shared` variable in the shared window, as the
    /// machine lays it out.
    pub fn shared_offset(&self, symbol: SymbolId) -> Option<u64> {
        self.shared_offsets.get(symbol.index()).copied().flatten()
    }

    /// What is known about the address of a `.shared` variable as ptxas sees
    /// it: its offset past the window's start at [`SHARED_WINDOW_BASE`].
    pub fn symbol_address(&self, symbol: SymbolId) -> KnownBits {
        match self.shared_offset(symbol) {
            Some(offset) => KnownBits::constant(SHARED_WINDOW_BASE + offset, 64),
            None => KnownBits::UNKNOWN,
        }
    }

    /// What is known about an operand read as `ty`.
    pub fn operand(&self, operand: &Operand, ty: ScalarType) -> KnownBits {
        let width = ty.bits();
        match *operand {
            Operand::Reg(reg) => truncate(self.register(reg), width),
            Operand::Imm { bits, .. } => KnownBits::constant(bits, width),
            Operand::Special(_) => KnownBits::UNKNOWN,
            Operand::Symbol(symbol) => truncate(self.symbol_address(symbol), width),
        }
    }

    /// What is known about the address `[base + offset]` of an access.
    pub fn address(&self, base: AddressBase, offset: i64) -> KnownBits {
        let base = match base {
            AddressBase::Reg(reg) => self.register(reg),
            AddressBase::Symbol(symbol) => self.symbol_address(symbol),
            AddressBase::Absolute => KnownBits::constant(0, 64),
        };
        base.plus(offset, 64)
    }
}

/// Lays out the `.shared` variables of a kernel as the machine does: static
/// variables in declaration order, each at its alignment; every dynamically
/// sized (`.extern`) array at the end of the static ones, aligned to 16 bytes
/// or to the largest alignment an extern array asks for.
pub fn shared_layout(kernel: &Kernel) -> Vec<Option<u64>> {
    let mut offsets = vec![None; kernel.symbols.len()];
    let mut end = 0u64;
    let mut dynamic_align = 16u64;
    for (index, symbol) in kernel.symbols.iter().enumerate() {
        if symbol.space != StateSpace::Shared {
            continue;
        }
        let align = u64::from(symbol.align.max(1));
        match symbol.size_bytes() {
            Some(size) => {
                let offset = end.div_ceil(align).saturating_mul(align);
                offsets[index] = Some(offset);
                end = offset.saturating_add(size);
            }
            None => dynamic_align = dynamic_align.max(align),
        }
    }
    let dynamic = end.div_ceil(dynamic_align).saturating_mul(dynamic_align);
    for (index, symbol) in kernel.symbols.iter().enumerate() {
        if symbol.space == StateSpace::Shared && symbol.len.is_none() {
            offsets[index] = Some(dynamic);
        }
    }
    offsets
}

/// Computes the known bits of every register of `kernel`.
pub fn analyze(kernel: &Kernel) -> KernelKnownBits {
    let mut analysis = KernelKnownBits {
        // `None` marks a register no instruction has been seen to write yet:
        // the optimistic start of the fixed point.
        registers: Vec::new(),
        shared_offsets: shared_layout(kernel),
    };
    let mut state: Vec<Option<KnownBits>> = vec![None; kernel.regs.len()];
    // Two rounds: the first is optimistic and skips writes whose operands are
    // not known yet; in the second, registers still unwritten (read before
    // any write, or written only from themselves) read as unknown, which
    // settles everything that depended on them. Every change lowers a
    // register's state, so each round ends.
    for pessimistic in [false, true] {
        loop {
            let mut changed = false;
            for instr in &kernel.instrs {
                for (dst, value) in transfer(kernel, &analysis, &state, &instr.op, pessimistic) {
                    let Some(slot) = state.get_mut(dst.index()) else {
                        continue;
                    };
                    let merged = match *slot {
                        Some(old) => old.meet(value),
                        None => value,
                    };
                    if *slot != Some(merged) {
                        *slot = Some(merged);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    analysis.registers = state
        .into_iter()
        .map(|slot| slot.unwrap_or(KnownBits::UNKNOWN))
        .collect();
    analysis
}

/// The registers an instruction writes and what is known about the values it
/// writes, given the current state. Writes whose operands are not written
/// yet are left out, unless `pessimistic`, when such operands are unknown.
fn transfer(
    kernel: &Kernel,
    analysis: &KernelKnownBits,
    state: &[Option<KnownBits>],
    op: &Op,
    pessimistic: bool,
) -> Vec<(RegId, KnownBits)> {
    // An operand's known bits, or `None` while its register is unwritten.
    let read = |operand: &Operand, ty: ScalarType| -> Option<KnownBits> {
        match operand {
            Operand::Reg(reg) => {
                let known = match state.get(reg.index()).copied().flatten() {
                    Some(known) => known,
                    None if pessimistic => KnownBits::UNKNOWN,
                    None => return None,
                };
                Some(truncate(known, ty.bits()))
            }
            other => Some(analysis.operand(other, ty)),
        }
    };
    let width_of = |reg: RegId| {
        kernel
            .regs
            .get(reg.index())
            .map_or(64, |decl| decl.ty.bits())
    };
    let known = match op {
        Op::Unary {
            op: unary,
            ty,
            dst,
            a,
        } if ty.is_integer() => {
            let a = read(a, *ty);
            let width = ty.bits();
            let value = a.map(|a| match unary {
                UnaryOp::Mov => a,
                UnaryOp::Not => fold(a, a, width, |x, _| !x),
                UnaryOp::Neg => fold(a, a, width, |x, _| x.wrapping_neg()),
                _ => KnownBits::UNKNOWN,
            });
            value.map(|value| vec![(*dst, value)])
        }
        Op::Binary {
            op: binary,
            ty,
            saturate: false,
            dst,
            a,
            b,
        } if ty.is_integer() => {
            // `mul.wide` reads its operands at half the destination's width.
            let source_ty = *ty;
            let width = if *binary == BinaryOp::MulWide {
                ty.bits() * 2
            } else {
                ty.bits()
            };
            match (read(a, source_ty), read(b, source_ty)) {
                (Some(a), Some(b)) => Some(vec![(
                    *dst,
                    binary_known(*binary, a, b, width, ty.is_signed(), source_ty.bits()),
                )]),
                _ => None,
            }
        }
        Op::MulAdd {
            mode: mode @ (MulAddMode::Lo | MulAddMode::Wide),
            ty,
            saturate: false,
            dst,
            a,
            b,
            c,
        } if ty.is_integer() => {
            let wide = *mode == MulAddMode::Wide;
            let width = if wide { ty.bits() * 2 } else { ty.bits() };
            let c_ty = if wide { wider(*ty) } else { *ty };
            match (read(a, *ty), read(b, *ty), read(c, c_ty)) {
                (Some(a), Some(b), Some(c)) => {
                    let a = extend(a, ty.bits(), width, ty.is_signed());
                    let b = extend(b, ty.bits(), width, ty.is_signed());
                    let product = multiply(a, b, width);
                    Some(vec![(*dst, add(product, c, width))])
                }
                _ => None,
            }
        }
        Op::Selp { ty, dst, a, b, .. } if ty.is_integer() => match (read(a, *ty), read(b, *ty)) {
            (Some(a), Some(b)) => Some(vec![(*dst, a.meet(b))]),
            _ => None,
        },
        Op::Cvt {
            dst_ty,
            src_ty,
            dst,
            src,
            ..
        } if dst_ty.is_integer() && src_ty.is_integer() => read(src, *src_ty).map(|value| {
            let converted = match value.constant {
                Some(bits) => KnownBits::constant(
                    extend_bits(bits, src_ty.bits(), src_ty.is_signed()),
                    dst_ty.bits(),
                ),
                None => KnownBits::aligned(value.low_zero_bits, dst_ty.bits()),
            };
            vec![(*dst, converted)]
        }),
        Op::Cvta { ty, dst, src, .. } => read(src, *ty).map(|value| {
            // The windows of the state spaces start at aligned addresses, so
            // a conversion keeps the low bits but not the value.
            vec![(*dst, KnownBits::aligned(value.low_zero_bits, ty.bits()))]
        }),
        Op::BitFieldInsert {
            ty,
            dst,
            field,
            base,
            position,
            ..
        } if ty.is_integer() => {
            match (
                read(field, *ty),
                read(base, *ty),
                read(position, ScalarType::U32),
            ) {
                (Some(field), Some(base), Some(position)) => {
                    let value = match position.constant {
                        // The bits below the position are the base's; the
                        // field's own zero bits start at the position.
                        Some(position) if position < u64::from(ty.bits()) => KnownBits::aligned(
                            base.low_zero_bits
                                .min(position as u32 + field.low_zero_bits),
                            ty.bits(),
                        ),
                        _ => KnownBits::UNKNOWN,
                    };
                    Some(vec![(*dst, value)])
                }
                _ => None,
            }
        }
        // Everything else writes values this analysis does not follow.
        other => Some(
            other
                .destinations()
                .into_iter()
                .map(|dst| (dst, KnownBits::aligned(0, width_of(dst))))
                .collect(),
        ),
    };
    known.unwrap_or_default()
}

/// The known bits of a two-operand integer operation (`width`: the result's
/// bits; `source_width`: the operands' bits).
fn binary_known(
    op: BinaryOp,
    a: KnownBits,
    b: KnownBits,
    width: u32,
    signed: bool,
    source_width: u32,
) -> KnownBits {
    match op {
        BinaryOp::Add => add(a, b, width),
        BinaryOp::Sub => match (a.constant, b.constant) {
            (Some(x), Some(y)) => KnownBits::constant(x.wrapping_sub(y), width),
            // With one constant operand ptxas sees an addition, and a negation keeps a
            // value's zero bits.
            (Some(_), None) | (None, Some(_)) => {
                KnownBits::aligned(a.low_zero_bits.min(b.low_zero_bits), width)
            }
            (None, None) => KnownBits::UNKNOWN,
        },
        BinaryOp::Mul => multiply(a, b, width),
        BinaryOp::MulWide => multiply(
            extend(a, source_width, width, signed),
            extend(b, source_width, width, signed),
            width,
        ),
        BinaryOp::And => match (a.constant, b.constant) {
            (Some(x), Some(y)) => KnownBits::constant(x & y, width),
            _ => KnownBits::aligned(a.low_zero_bits.max(b.low_zero_bits), width),
        },
        BinaryOp::Or => match (a.constant, b.constant) {
            (Some(x), Some(y)) => KnownBits::constant(x | y, width),
            _ => KnownBits::aligned(a.low_zero_bits.min(b.low_zero_bits), width),
        },
        BinaryOp::Xor => match (a.constant, b.constant) {
            (Some(x), Some(y)) => KnownBits::constant(x ^ y, width),
            _ => KnownBits::aligned(a.low_zero_bits.min(b.low_zero_bits), width),
        },
        BinaryOp::Shl => match b.constant {
            Some(shift) if shift < u64::from(width) => match a.constant {
                Some(x) => KnownBits::constant(x << shift, width),
                None => KnownBits::aligned(a.low_zero_bits + shift as u32, width),
            },
            Some(_) => KnownBits::constant(0, width),
            // An unknown shift still keeps the zero bits the value had.
            None => KnownBits::aligned(a.low_zero_bits, width),
        },
        BinaryOp::Shr => match b.constant {
            Some(shift) if shift < u64::from(width) => match a.constant {
                Some(x) => {
                    let shifted = if signed {
                        (extend_bits(x, width, true) as i64 >> shift) as u64
                    } else {
                        x >> shift
                    };
                    KnownBits::constant(shifted, width)
                }
                None => KnownBits::aligned(a.low_zero_bits.saturating_sub(shift as u32), width),
            },
            _ => KnownBits::UNKNOWN,
        },
        BinaryOp::Min
        | BinaryOp::Max
        | BinaryOp::MinNan
        | BinaryOp::MaxNan
        | BinaryOp::Div
        | BinaryOp::Rem
        | BinaryOp::MulHi => KnownBits::UNKNOWN,
    }
}

/// Known bits of a sum: its low zero bits are those both operands share.
fn add(a: KnownBits, b: KnownBits, width: u32) -> KnownBits {
    match (a.constant, b.constant) {
        (Some(x), Some(y)) => KnownBits::constant(x.wrapping_add(y), width),
        _ => KnownBits::aligned(a.low_zero_bits.min(b.low_zero_bits), width),
    }
}

/// Known bits of a product: the zero bits of the factors add up.
fn multiply(a: KnownBits, b: KnownBits, width: u32) -> KnownBits {
    match (a.constant, b.constant) {
        (Some(x), Some(y)) => KnownBits::constant(x.wrapping_mul(y), width),
        _ => KnownBits::aligned(a.low_zero_bits + b.low_zero_bits, width),
    }
}

/// Folds a constant operation; anything else is unknown.
fn fold(a: KnownBits, b: KnownBits, width: u32, f: impl Fn(u64, u64) -> u64) -> KnownBits {
    match (a.constant, b.constant) {
        (Some(x), Some(y)) => KnownBits::constant(f(x, y), width),
        _ => KnownBits::UNKNOWN,
    }
}

/// Reads a value at `width` bits: a constant is cut to the width, and no
/// more bits can be known zero than the width has.
fn truncate(value: KnownBits, width: u32) -> KnownBits {
    match value.constant {
        Some(bits) => KnownBits::constant(bits, width),
        None => KnownBits::aligned(value.low_zero_bits, width),
    }
}

/// Widens a value of `from` bits to `to` bits, sign-extending constants of
/// signed types. Zero bits stay zero bits either way.
fn extend(value: KnownBits, from: u32, to: u32, signed: bool) -> KnownBits {
    match value.constant {
        Some(bits) => KnownBits::constant(extend_bits(bits, from, signed), to),
        None => KnownBits::aligned(value.low_zero_bits, to),
    }
}

fn extend_bits(bits: u64, from: u32, signed: bool) -> u64 {
    let bits = bits & width_mask(from);
    if signed && from < 64 && bits >> (from - 1) & 1 == 1 {
        bits | !width_mask(from)
    } else {
        bits
    }
}

fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// The integer type twice as wide (`mad.wide.u32` adds a `.u64`).
fn wider(ty: ScalarType) -> ScalarType {
    match ty {
        ScalarType::U16 => ScalarType::U32,
        ScalarType::S16 => ScalarType::S32,
        ScalarType::U32 => ScalarType::U64,
        ScalarType::S32 => ScalarType::S64,
        ScalarType::B16 => ScalarType::B32,
        ScalarType::B32 => ScalarType::B64,
        other => other,
    }
}

#[cfg(test)]
mod tests;
