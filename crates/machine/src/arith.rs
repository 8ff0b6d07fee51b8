//! Scalar semantics of the arithmetic instructions, one lane at a time (PTX
//! ISA, "Integer Arithmetic", "Floating-Point" and "Data Movement and
//! Conversion" instructions). Values travel in the low bits of a 64-bit
//! lane with the upper bits zero; every function here keeps that form (a
//! 32-bit register stores only the low half: `warp::RegisterFile`).
//!
//! Where PTX leaves a result unspecified (integer division by zero), the
//! result is what NVIDIA hardware returns: all ones for the quotient and for
//! the remainder, signed or unsigned, 32 or 64 bits (measured on an H100 with
//! `div`/`rem` in inline PTX and a zero divisor read at run time).

use warpsim_ir::{CmpOp, Rounding};

use crate::program::{Bf16Source, FloatType, HalfFormat, IntType, NumberType};

/// The mask of the low `bits` bits.
#[inline(always)]
pub fn width_mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Sign-extends the low `bits` bits of `value`.
#[inline(always)]
pub fn sign_extend(value: u64, bits: u8) -> i64 {
    let shift = 64 - u32::from(bits);
    ((value << shift) as i64) >> shift
}

/// Reads an integer register as a signed or unsigned 128-bit value.
#[inline(always)]
fn as_wide(value: u64, ty: IntType) -> i128 {
    if ty.signed {
        i128::from(sign_extend(value, ty.bits))
    } else {
        i128::from(value & width_mask(ty.bits))
    }
}

#[inline(always)]
pub fn int_add(a: u64, b: u64, ty: IntType) -> u64 {
    a.wrapping_add(b) & width_mask(ty.bits)
}

#[inline(always)]
pub fn int_sub(a: u64, b: u64, ty: IntType) -> u64 {
    a.wrapping_sub(b) & width_mask(ty.bits)
}

#[inline(always)]
pub fn int_mul_lo(a: u64, b: u64, ty: IntType) -> u64 {
    a.wrapping_mul(b) & width_mask(ty.bits)
}

/// The high half of the double-width product.
#[inline(always)]
pub fn int_mul_hi(a: u64, b: u64, ty: IntType) -> u64 {
    let product = as_wide(a, ty).wrapping_mul(as_wide(b, ty));
    ((product >> ty.bits) as u64) & width_mask(ty.bits)
}

/// The whole double-width product (`mul.wide`): the destination is twice as wide.
#[inline(always)]
pub fn int_mul_wide(a: u64, b: u64, ty: IntType) -> u64 {
    let product = as_wide(a, ty).wrapping_mul(as_wide(b, ty));
    (product as u64) & width_mask(ty.bits.saturating_mul(2))
}

pub fn int_div(a: u64, b: u64, ty: IntType) -> u64 {
    let mask = width_mask(ty.bits);
    if b & mask == 0 {
        return mask;
    }
    let quotient = if ty.signed {
        let (a, b) = (sign_extend(a, ty.bits), sign_extend(b, ty.bits));
        a.wrapping_div(b) as u64
    } else {
        (a & mask) / (b & mask)
    };
    quotient & mask
}

pub fn int_rem(a: u64, b: u64, ty: IntType) -> u64 {
    let mask = width_mask(ty.bits);
    if b & mask == 0 {
        return mask;
    }
    let remainder = if ty.signed {
        let (a, b) = (sign_extend(a, ty.bits), sign_extend(b, ty.bits));
        a.wrapping_rem(b) as u64
    } else {
        (a & mask) % (b & mask)
    };
    remainder & mask
}

/// Orders two integers of type `ty` without widening to 128 bits: signed
/// values compare sign-extended, unsigned ones masked.
#[inline(always)]
fn int_order(a: u64, b: u64, ty: IntType) -> std::cmp::Ordering {
    if ty.signed {
        sign_extend(a, ty.bits).cmp(&sign_extend(b, ty.bits))
    } else {
        let mask = width_mask(ty.bits);
        (a & mask).cmp(&(b & mask))
    }
}

#[inline(always)]
pub fn int_min(a: u64, b: u64, ty: IntType) -> u64 {
    if int_order(a, b, ty).is_le() {
        a
    } else {
        b
    }
}

#[inline(always)]
pub fn int_max(a: u64, b: u64, ty: IntType) -> u64 {
    if int_order(a, b, ty).is_ge() {
        a
    } else {
        b
    }
}

/// Shift amounts at or beyond the width give 0 (PTX clamps them).
#[inline(always)]
pub fn int_shl(a: u64, amount: u64, ty: IntType) -> u64 {
    let amount = amount & 0xffff_ffff;
    if amount >= u64::from(ty.bits) {
        0
    } else {
        (a << amount) & width_mask(ty.bits)
    }
}

/// Arithmetic for signed types, logical otherwise; clamped like `shl`.
#[inline(always)]
pub fn int_shr(a: u64, amount: u64, ty: IntType) -> u64 {
    let amount = amount & 0xffff_ffff;
    if ty.signed {
        let amount = amount.min(u64::from(ty.bits) - 1);
        ((sign_extend(a, ty.bits) >> amount) as u64) & width_mask(ty.bits)
    } else if amount >= u64::from(ty.bits) {
        0
    } else {
        (a & width_mask(ty.bits)) >> amount
    }
}

pub fn int_neg(a: u64, ty: IntType) -> u64 {
    a.wrapping_neg() & width_mask(ty.bits)
}

pub fn int_abs(a: u64, ty: IntType) -> u64 {
    (sign_extend(a, ty.bits).wrapping_abs() as u64) & width_mask(ty.bits)
}

pub fn int_popc(a: u64, ty: IntType) -> u64 {
    u64::from((a & width_mask(ty.bits)).count_ones())
}

pub fn int_clz(a: u64, ty: IntType) -> u64 {
    let value = a & width_mask(ty.bits);
    u64::from(value.leading_zeros() - (64 - u32::from(ty.bits)))
}

pub fn int_brev(a: u64, ty: IntType) -> u64 {
    (a & width_mask(ty.bits)).reverse_bits() >> (64 - u32::from(ty.bits))
}

/// `bfind` (PTX ISA): the position of the most significant bit that differs
/// from the sign (for unsigned types, the most significant one bit), or all
/// ones (`0xffffffff`) when there is none; with `.shiftamt`, the left shift
/// that brings it to the top instead.
pub fn int_bfind(a: u64, ty: IntType, shift_amount: bool) -> u64 {
    let value = a & width_mask(ty.bits);
    let negative = ty.signed && (value >> (ty.bits - 1)) & 1 != 0;
    let significant = if negative {
        !value & width_mask(ty.bits)
    } else {
        value
    };
    if significant == 0 {
        return 0xffff_ffff;
    }
    let position = 63 - u64::from(significant.leading_zeros());
    if shift_amount {
        u64::from(ty.bits) - 1 - position
    } else {
        position
    }
}

/// `mad.lo/hi/wide`: the product's low half, high half or whole double-width
/// value, plus `c`.
pub fn int_mad(mode: warpsim_ir::MulAddMode, a: u64, b: u64, c: u64, ty: IntType) -> u64 {
    match mode {
        warpsim_ir::MulAddMode::Hi => int_add(int_mul_hi(a, b, ty), c, ty),
        warpsim_ir::MulAddMode::Wide => {
            let wide = IntType {
                bits: ty.bits.saturating_mul(2).min(64),
                signed: ty.signed,
            };
            int_add(int_mul_wide(a, b, ty), c, wide)
        }
        _ => int_add(int_mul_lo(a, b, ty), c, ty),
    }
}

#[inline(always)]
pub fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

#[inline(always)]
pub fn f32_bits(value: f32) -> u64 {
    u64::from(value.to_bits())
}

/// The value of a float register of type `ty`, widened exactly to `f64`.
#[inline(always)]
fn float_value(bits: u64, ty: FloatType) -> f64 {
    match ty {
        FloatType::F32 => f64::from(f32_of(bits)),
        FloatType::F64 => f64::from_bits(bits),
    }
}

/// `fma.rn.f32` with a single rounding. The product of two floats is exact in
/// `f64`, so `a*b + c` in `f64` differs from the exact sum by one rounding; a
/// second rounding to `f32` is then correct unless the `f64` result sits
/// exactly halfway between two `f32` values, or is an `f32` subnormal (which
/// rounds at a coarser bit). [`fma_f32_needs_fallback`] detects both (the
/// approach of musl's `fmaf`); those rare lanes use the library's `fmaf`.
#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    let wide = fma_f32_wide(a, b, c);
    if fma_f32_needs_fallback(wide) {
        a.mul_add(b, c)
    } else {
        wide as f32
    }
}

/// The `f64` value of `a*b + c`, rounded once.
#[inline(always)]
pub fn fma_f32_wide(a: f32, b: f32, c: f32) -> f64 {
    f64::from(a) * f64::from(b) + f64::from(c)
}

/// Whether rounding `wide` to `f32` could differ from rounding `a*b + c` once.
#[inline(always)]
pub fn fma_f32_needs_fallback(wide: f64) -> bool {
    // The 29 bits below an f32 mantissa: exactly 1000...0 marks a halfway case.
    let halfway = wide.to_bits() & 0x1fff_ffff == 0x1000_0000;
    let subnormal = wide != 0.0 && wide.abs() < f64::from(f32::MIN_POSITIVE);
    halfway || subnormal
}

/// The register bits of an `f32` arithmetic result: NVIDIA GPUs return one
/// canonical NaN, `0x7fffffff`, whatever NaN the operands held (measured on an H100).
#[inline(always)]
pub fn f32_result(value: f32) -> u64 {
    if value.is_nan() {
        0x7fff_ffff
    } else {
        f32_bits(value)
    }
}

/// `fma.rz/.rm/.rp.f32`: `a*b + c` rounded once toward zero, down or up. The
/// product is exact in `f64` and TwoSum gives the exact sum as `sum + error`;
/// the nearest `f32` is then moved one step if it lies on the wrong side.
pub fn fma_f32_directed(a: f32, b: f32, c: f32, rounding: Rounding) -> f32 {
    let product = f64::from(a) * f64::from(b);
    let addend = f64::from(c);
    let sum = product + addend;
    if !sum.is_finite() {
        return sum as f32;
    }
    let virtual_addend = sum - product;
    let error = (product - (sum - virtual_addend)) + (addend - virtual_addend);
    let nearest = sum as f32;
    // Sign of nearest - (sum + error): (nearest - sum) is exact (they are
    // within one f32 step), and a rounded difference keeps its sign.
    to_f32_directed(
        nearest,
        |x| {
            let difference = (f64::from(x) - sum) - error;
            difference
                .partial_cmp(&0.0)
                .unwrap_or(std::cmp::Ordering::Equal)
        },
        rounding,
    )
}

/// PTX `min`/`max` return the other operand when one is NaN, and order -0
/// below +0 whatever the operand order (measured on an H100); Rust's `min`
/// and `max` may return either zero.
#[inline(always)]
pub fn f32_min(a: f32, b: f32) -> f32 {
    if a == b {
        // Equal values have equal bits, except +0 and -0: -0 wins.
        f32::from_bits(a.to_bits() | b.to_bits())
    } else {
        a.min(b)
    }
}

#[inline(always)]
pub fn f32_max(a: f32, b: f32) -> f32 {
    if a == b {
        f32::from_bits(a.to_bits() & b.to_bits())
    } else {
        a.max(b)
    }
}

/// [`f32_min`] for `f64`: the other operand when one is NaN, -0 below +0.
#[inline(always)]
pub fn f64_min(a: f64, b: f64) -> f64 {
    if a == b {
        f64::from_bits(a.to_bits() | b.to_bits())
    } else {
        a.min(b)
    }
}

/// [`f32_max`] for `f64`.
#[inline(always)]
pub fn f64_max(a: f64, b: f64) -> f64 {
    if a == b {
        f64::from_bits(a.to_bits() & b.to_bits())
    } else {
        a.max(b)
    }
}

/// Compares two values of type `ty`.
#[inline(always)]
pub fn compare(cmp: CmpOp, ty: NumberType, a: u64, b: u64) -> bool {
    match ty {
        NumberType::Int(int) => {
            let order = int_order(a, b, int);
            let mask = width_mask(int.bits);
            let unsigned = (a & mask).cmp(&(b & mask));
            match cmp {
                CmpOp::Eq | CmpOp::Equ => order.is_eq(),
                CmpOp::Ne | CmpOp::Neu => order.is_ne(),
                CmpOp::Lt | CmpOp::Ltu => order.is_lt(),
                CmpOp::Le | CmpOp::Leu => order.is_le(),
                CmpOp::Gt | CmpOp::Gtu => order.is_gt(),
                CmpOp::Ge | CmpOp::Geu => order.is_ge(),
                CmpOp::Lo => unsigned.is_lt(),
                CmpOp::Ls => unsigned.is_le(),
                CmpOp::Hi => unsigned.is_gt(),
                CmpOp::Hs => unsigned.is_ge(),
                CmpOp::Num => true,
                CmpOp::Nan => false,
            }
        }
        NumberType::Float(float) => {
            let (x, y) = (float_value(a, float), float_value(b, float));
            let unordered = x.is_nan() || y.is_nan();
            match cmp {
                CmpOp::Eq => x == y,
                CmpOp::Ne => !unordered && x != y,
                CmpOp::Lt | CmpOp::Lo => x < y,
                CmpOp::Le | CmpOp::Ls => x <= y,
                CmpOp::Gt | CmpOp::Hi => x > y,
                CmpOp::Ge | CmpOp::Hs => x >= y,
                CmpOp::Equ => unordered || x == y,
                CmpOp::Neu => unordered || x != y,
                CmpOp::Ltu => unordered || x < y,
                CmpOp::Leu => unordered || x <= y,
                CmpOp::Gtu => unordered || x > y,
                CmpOp::Geu => unordered || x >= y,
                CmpOp::Num => !unordered,
                CmpOp::Nan => unordered,
            }
        }
    }
}

/// Rounds `value` to an integral value with an integer rounding mode.
fn round_integral(value: f64, rounding: Option<Rounding>) -> f64 {
    match rounding {
        Some(Rounding::Rni) | Some(Rounding::Rn) => value.round_ties_even(),
        Some(Rounding::Rmi) | Some(Rounding::Rm) => value.floor(),
        Some(Rounding::Rpi) | Some(Rounding::Rp) => value.ceil(),
        Some(Rounding::Rzi) | Some(Rounding::Rz) | None => value.trunc(),
    }
}

/// Rounds an exactly known value to `f32` with a directed mode: start from the
/// nearest `f32` and step one unit toward the mode if it landed on the wrong side.
fn to_f32_directed(
    nearest: f32,
    exact_cmp: impl Fn(f32) -> std::cmp::Ordering,
    rounding: Rounding,
) -> f32 {
    use std::cmp::Ordering;
    let step_down = |x: f32| {
        if x == 0.0 {
            -f32::from_bits(1)
        } else if x > 0.0 {
            f32::from_bits(x.to_bits() - 1)
        } else {
            f32::from_bits(x.to_bits() + 1)
        }
    };
    let step_up = |x: f32| -step_down(-x);
    match (rounding, exact_cmp(nearest)) {
        (_, Ordering::Equal) => nearest,
        (Rounding::Rm, Ordering::Greater) => step_down(nearest),
        (Rounding::Rp, Ordering::Less) => step_up(nearest),
        (Rounding::Rz, Ordering::Greater) if nearest > 0.0 => step_down(nearest),
        (Rounding::Rz, Ordering::Less) if nearest < 0.0 => step_up(nearest),
        _ => nearest,
    }
}

/// The same for `f64` results from 64-bit integers.
fn i128_to_f64_directed(value: i128, rounding: Rounding) -> f64 {
    // Finite: the operand is a 64-bit integer.
    let nearest = value as f64;
    let exact = nearest as i128;
    let next_down = |x: f64| {
        if x > 0.0 {
            f64::from_bits(x.to_bits() - 1)
        } else if x < 0.0 {
            f64::from_bits(x.to_bits() + 1)
        } else {
            -f64::from_bits(1)
        }
    };
    let next_up = |x: f64| -next_down(-x);
    match rounding {
        Rounding::Rm if exact > value => next_down(nearest),
        Rounding::Rp if exact < value => next_up(nearest),
        Rounding::Rz if exact > value && nearest > 0.0 => next_down(nearest),
        Rounding::Rz if exact < value && nearest < 0.0 => next_up(nearest),
        _ => nearest,
    }
}

/// `bfe` (PTX ISA, "Integer Arithmetic Instructions: bfe"): `length` bits of
/// `value` from bit `position`; for signed types the bits past the field
/// copy its top bit (or bit `msb` when the field runs past it).
pub fn bit_field_extract(value: u64, position: u64, length: u64, ty: IntType) -> u64 {
    let msb = u64::from(ty.bits) - 1;
    let (position, length) = (position & 0xff, length & 0xff);
    let bit = |index: u64| (value >> index) & 1;
    let sign = if ty.signed && length != 0 {
        bit((position + length - 1).min(msb))
    } else {
        0
    };
    let mut result = 0u64;
    for index in 0..=msb {
        let from_field = index < length && position + index <= msb;
        let value = if from_field {
            bit(position + index)
        } else {
            sign
        };
        result |= value << index;
    }
    result
}

/// `bfi`: `base` with `length` bits from bit `position` replaced by the low
/// bits of `field` (bits past the width are dropped).
pub fn bit_field_insert(field: u64, base: u64, position: u64, length: u64, bits: u8) -> u64 {
    let msb = u64::from(bits) - 1;
    let (position, length) = (position & 0xff, length & 0xff);
    let mut result = base & width_mask(bits);
    for index in 0..length {
        if position + index > msb {
            break;
        }
        let value = (field >> index) & 1;
        result = (result & !(1 << (position + index))) | (value << (position + index));
    }
    result
}

/// `prmt.b32` in its default mode: output byte `k` is the byte of the
/// eight-byte value `b:a` named by selector nibble `k`; a nibble with bit 3
/// set replicates that byte's sign bit instead.
pub fn permute(a: u64, b: u64, selector: u64) -> u64 {
    let bytes = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
    let mut result = 0u64;
    for output in 0..4 {
        let nibble = (selector >> (4 * output)) & 0xf;
        let byte = (bytes >> (8 * (nibble & 7))) & 0xff;
        let byte = if nibble & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        result |= byte << (8 * output);
    }
    result
}

/// An IEEE half (`.f16`) as `f32`: exact, every half is an `f32`.
pub fn f16_to_f32(half: u16) -> f32 {
    let sign = u32::from(half >> 15) << 31;
    let exponent = u32::from((half >> 10) & 0x1f);
    let mantissa = u32::from(half & 0x3ff);
    match exponent {
        0 => {
            // Zero or subnormal: mantissa * 2^-24, exact in f32.
            let magnitude = mantissa as f32 * 2f32.powi(-24);
            f32::from_bits(sign | magnitude.to_bits())
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (mantissa << 13)),
        _ => f32::from_bits(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13)),
    }
}

/// `f32` to an IEEE half, rounding to nearest even (`cvt.rn.f16.f32`); NaN
/// becomes the canonical half NaN `0x7fff`. Every `f32` is exactly an `f64`,
/// so rounding the `f64` once gives the same half (checked on all 2^32 bit
/// patterns).
pub fn f32_to_f16(value: f32) -> u16 {
    f64_to_f16(f64::from(value))
}

/// An integer `cvt` without saturation: sign- or zero-extends from `from`,
/// then truncates to `to`. The most common conversion, kept branch-free.
#[inline(always)]
pub fn resize_int(src: u64, from: IntType, to: IntType) -> u64 {
    let value = if from.signed {
        sign_extend(src, from.bits) as u64
    } else {
        src & width_mask(from.bits)
    };
    value & width_mask(to.bits)
}

/// `cvt`: converts `src` of type `from` to type `to`.
pub fn convert(
    src: u64,
    from: NumberType,
    to: NumberType,
    rounding: Option<Rounding>,
    saturate: bool,
) -> u64 {
    match (from, to) {
        (NumberType::Int(from), NumberType::Int(to)) if !saturate => resize_int(src, from, to),
        (NumberType::Int(from), NumberType::Int(to)) => {
            let (min, max) = int_range(to);
            (as_wide(src, from).clamp(min, max) as u64) & width_mask(to.bits)
        }
        (NumberType::Float(from), NumberType::Int(to)) => {
            let value = float_value(src, from);
            if value.is_nan() {
                return 0;
            }
            // PTX saturates float-to-integer conversions to the destination range.
            let (min, max) = int_range(to);
            let rounded = round_integral(value, rounding);
            let clamped = if rounded <= min as f64 {
                min
            } else if rounded >= max as f64 {
                max
            } else {
                rounded as i128
            };
            (clamped as u64) & width_mask(to.bits)
        }
        (NumberType::Int(from), NumberType::Float(to)) => {
            let value = as_wide(src, from);
            let result = match (to, rounding) {
                (FloatType::F32, Some(mode @ (Rounding::Rz | Rounding::Rm | Rounding::Rp))) => {
                    // Below 2^24 the conversion is exact; above, every f32 is an
                    // integer, so comparing as integers is exact either way.
                    let nearest = value as f32;
                    f32_bits(to_f32_directed(nearest, |x| (x as i128).cmp(&value), mode))
                }
                (FloatType::F32, _) => f32_bits(value as f32),
                (FloatType::F64, Some(mode @ (Rounding::Rz | Rounding::Rm | Rounding::Rp))) => {
                    i128_to_f64_directed(value, mode).to_bits()
                }
                (FloatType::F64, _) => (value as f64).to_bits(),
            };
            saturate_float(result, to, saturate)
        }
        (NumberType::Float(from), NumberType::Float(to)) => {
            let value = float_value(src, from);
            let result = match (to, rounding) {
                (_, Some(mode)) if mode.is_integer_rounding() => {
                    let rounded = if value.is_finite() {
                        round_integral(value, Some(mode))
                    } else {
                        value
                    };
                    match to {
                        FloatType::F32 => f32_bits(rounded as f32),
                        FloatType::F64 => rounded.to_bits(),
                    }
                }
                (FloatType::F32, Some(mode @ (Rounding::Rz | Rounding::Rm | Rounding::Rp))) => {
                    let nearest = value as f32;
                    f32_bits(to_f32_directed(
                        nearest,
                        |x| {
                            f64::from(x)
                                .partial_cmp(&value)
                                .unwrap_or(std::cmp::Ordering::Equal)
                        },
                        mode,
                    ))
                }
                (FloatType::F32, _) => f32_bits(value as f32),
                (FloatType::F64, _) => value.to_bits(),
            };
            saturate_float(result, to, saturate)
        }
    }
}

/// `.sat` on a float result clamps it to [0, 1], NaN to 0.
fn saturate_float(bits: u64, ty: FloatType, saturate: bool) -> u64 {
    if !saturate {
        return bits;
    }
    match ty {
        FloatType::F32 => {
            let value = f32_of(bits);
            f32_bits(if value.is_nan() {
                0.0
            } else {
                value.clamp(0.0, 1.0)
            })
        }
        FloatType::F64 => {
            let value = f64::from_bits(bits);
            (if value.is_nan() {
                0.0
            } else {
                value.clamp(0.0, 1.0)
            })
            .to_bits()
        }
    }
}

fn int_range(ty: IntType) -> (i128, i128) {
    if ty.signed {
        let half = 1i128 << (ty.bits - 1);
        (-half, half - 1)
    } else {
        (0, (1i128 << ty.bits) - 1)
    }
}

/// `f64` to an IEEE half, rounding to nearest even; NaN becomes the
/// canonical half NaN `0x7fff`, as the GPU's half arithmetic returns it.
pub fn f64_to_f16(value: f64) -> u16 {
    if value.is_nan() {
        return 0x7fff;
    }
    let bits = value.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let magnitude = value.abs();
    if magnitude >= 65520.0 {
        // Past the largest half (65504) by half a step or more: infinity.
        return sign | 0x7c00;
    }
    if magnitude < 2f64.powi(-14) {
        // Subnormal halves are multiples of 2^-24; the scaling is exact, and
        // 1024 units (a carry into the exponent) is the smallest normal half.
        let units = (magnitude * 2f64.powi(24)).round_ties_even() as u16;
        return sign | units;
    }
    // At least 2^-14 here, so the biased f64 exponent is at least 1009.
    let exponent = ((bits >> 52) & 0x7ff) as u16 + 15 - 1023;
    let mantissa = bits & 0xf_ffff_ffff_ffff;
    let mut half = (exponent << 10) | (mantissa >> 42) as u16;
    let rest = mantissa & ((1 << 42) - 1);
    let halfway = 1 << 41;
    if rest > halfway || (rest == halfway && half & 1 == 1) {
        // A carry out of the mantissa correctly bumps the exponent.
        half += 1;
    }
    sign | half
}

/// `f64` to a bfloat16 (1 sign bit, the 8 exponent bits of an `f32`, 7
/// mantissa bits), rounding to nearest even in one step: going through `f32`
/// would round twice and can land on the wrong side of a tie. NaN becomes
/// `0x7fff`, the NaN CUDA's `__float2bfloat16` gives.
pub fn f64_to_bf16(value: f64) -> u16 {
    if value.is_nan() {
        return 0x7fff;
    }
    let bits = value.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let magnitude = value.abs();
    // The largest bfloat16 is (2 - 2^-7) * 2^127; half a step past it, the
    // tie goes to the even neighbour, 2^128, which is infinity.
    if magnitude >= (2.0 - 2f64.powi(-8)) * 2f64.powi(127) {
        return sign | 0x7f80;
    }
    if magnitude < 2f64.powi(-126) {
        // Subnormals are multiples of 2^-133; the scaling is exact, and 128
        // units (a carry into the exponent) is the smallest normal.
        let units = (magnitude * 2f64.powi(133)).round_ties_even() as u16;
        return sign | units;
    }
    // At least 2^-126 here, so the biased f64 exponent is at least 897.
    let exponent = ((bits >> 52) & 0x7ff) as u16 + 127 - 1023;
    let mantissa = bits & 0xf_ffff_ffff_ffff;
    let mut bfloat = (exponent << 7) | (mantissa >> 45) as u16;
    let rest = mantissa & ((1 << 45) - 1);
    let halfway = 1 << 44;
    if rest > halfway || (rest == halfway && bfloat & 1 == 1) {
        // A carry out of the mantissa correctly bumps the exponent.
        bfloat += 1;
    }
    sign | bfloat
}

/// A bfloat16's value: its bits are the high half of an `f32`'s.
pub fn bf16_to_f32(bfloat: u16) -> f32 {
    f32::from_bits(u32::from(bfloat) << 16)
}

fn f16_value(half: u64) -> f64 {
    f64::from(f16_to_f32(half as u16))
}

/// `add.f16` (round to nearest even): two halves are multiples of 2^-24
/// below 2^16, so their sum needs at most 41 bits and is exact in `f64`;
/// rounding it to a half is the one rounding the GPU does.
pub fn f16_add(a: u64, b: u64) -> u64 {
    u64::from(f64_to_f16(f16_value(a) + f16_value(b)))
}

/// `sub.f16`: exact in `f64` as for [`f16_add`], then one rounding.
pub fn f16_sub(a: u64, b: u64) -> u64 {
    u64::from(f64_to_f16(f16_value(a) - f16_value(b)))
}

/// `mul.f16`: the product of two 11-bit significands has 22 bits, exact in
/// `f64`, so rounding it to a half is the only rounding.
pub fn f16_mul(a: u64, b: u64) -> u64 {
    u64::from(f64_to_f16(f16_value(a) * f16_value(b)))
}

/// `fma.rn.f16`: `a * b` is exact in `f64` (22 bits); adding `c` rounds once
/// in `f64`, then the result rounds to a half. The two roundings give the
/// correctly rounded fused result. Where the `f64` sum is exact there is one
/// rounding. It is inexact only when the two terms are more than 31 bits of
/// magnitude apart (53 bits of `f64` less the 22 of the product). If `c` is
/// the larger term, the result is within 2^-31 of `c`, a half, relative to
/// it, while the nearest rounding boundary (a midpoint between halves) is at
/// least 2^-12 of it away; the `f64` error (2^-53 relative) cannot cross or
/// reach a boundary, so both roundings agree. If the product is the larger,
/// `c` (a nonzero half is at least 2^-24) lies 31 bits below it only when
/// the product is at least 2^28, and then the result overflows to infinity
/// either way. The tests check this against exact integer arithmetic.
pub fn f16_fma(a: u64, b: u64, c: u64) -> u64 {
    u64::from(f64_to_f16(f16_value(a) * f16_value(b) + f16_value(c)))
}

/// Whether the low 16 bits of a lane are a half NaN.
#[inline(always)]
fn f16_is_nan(a: u64) -> bool {
    a & 0x7fff > 0x7c00
}

/// `neg.f16`: flips the sign bit; a NaN becomes the canonical NaN `0x7fff`,
/// as an H100 does (measured with programs/corpus/half-arith.cu: `neg.f16`
/// and `neg.f16x2` of 0x7e00, 0xfe00, 0x7c01 and 0xffff all give 0x7fff,
/// unlike `neg.f32`, which keeps the NaN's bits).
pub fn f16_neg(a: u64) -> u64 {
    if f16_is_nan(a) {
        0x7fff
    } else {
        (a ^ 0x8000) & 0xffff
    }
}

/// `abs.f16`: clears the sign bit; a NaN becomes the canonical NaN `0x7fff`
/// (measured on an H100, as for [`f16_neg`]).
pub fn f16_abs(a: u64) -> u64 {
    if f16_is_nan(a) {
        0x7fff
    } else {
        a & 0x7fff
    }
}

/// `min.f16`, as [`f32_min`] on the exact `f32` values (a NaN operand gives
/// the other; two NaNs give the canonical NaN).
pub fn f16_min(a: u64, b: u64) -> u64 {
    // Two NaNs give a NaN, which `f32_to_f16` makes the canonical one.
    u64::from(f32_to_f16(f32_min(
        f16_to_f32(a as u16),
        f16_to_f32(b as u16),
    )))
}

/// `max.f16`, as [`f32_max`] on the exact `f32` values.
pub fn f16_max(a: u64, b: u64) -> u64 {
    // Two NaNs give a NaN, which `f32_to_f16` makes the canonical one.
    u64::from(f32_to_f16(f32_max(
        f16_to_f32(a as u16),
        f16_to_f32(b as u16),
    )))
}

/// `setp.cmp.f16`: every half is exactly an `f32` and the conversion keeps
/// order, zeros and NaNs, so the `f32` comparison is the half one.
pub fn f16_compare(cmp: CmpOp, a: u64, b: u64) -> bool {
    let widen = |half: u64| u64::from(f16_to_f32(half as u16).to_bits());
    compare(cmp, NumberType::Float(FloatType::F32), widen(a), widen(b))
}

/// `.f16x2` (two halves in 32 bits, element 0 in the low 16): `f` on each
/// element pair of `a` and `b`; the bits above the pair are zero. The
/// elements are only split and joined here, so `.bf16x2` uses it too.
#[inline(always)]
pub fn f16x2_binary(a: u64, b: u64, f: impl Fn(u64, u64) -> u64) -> u64 {
    f16x2_ternary(a, b, 0, |x, y, _| f(x, y))
}

/// [`f16x2_binary`] for one operand (`neg.f16x2`, `abs.f16x2`).
#[inline(always)]
pub fn f16x2_unary(a: u64, f: impl Fn(u64) -> u64) -> u64 {
    f16x2_binary(a, 0, |x, _| f(x))
}

/// [`f16x2_binary`] for three operands (`fma.rn.f16x2`), on which the
/// one- and two-operand forms are built.
#[inline(always)]
pub fn f16x2_ternary(a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    let low = f(a & 0xffff, b & 0xffff, c & 0xffff);
    let high = f((a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff);
    (low & 0xffff) | (high & 0xffff) << 16
}

/// `min.NaN.f16`: as [`f16_min`], except that a NaN operand gives the
/// canonical NaN (`__hmin_nan`).
pub fn f16_min_nan(a: u64, b: u64) -> u64 {
    if f16_is_nan(a) || f16_is_nan(b) {
        0x7fff
    } else {
        f16_min(a, b)
    }
}

/// `max.NaN.f16`: as [`f16_max`], except that a NaN operand gives the
/// canonical NaN (`__hmax_nan`).
pub fn f16_max_nan(a: u64, b: u64) -> u64 {
    if f16_is_nan(a) || f16_is_nan(b) {
        0x7fff
    } else {
        f16_max(a, b)
    }
}

/// The `.relu` of `fma.rn.relu` on a 16-bit result: a negative result,
/// -0 included, becomes +0. A NaN result is already the canonical NaN
/// `0x7fff`, whose sign bit is clear, so it stays the canonical NaN, as PTX
/// says it must.
#[inline(always)]
fn relu_16(bits: u64) -> u64 {
    if bits & 0x8000 != 0 {
        0
    } else {
        bits
    }
}

/// `fma.rn.relu.f16`: [`f16_fma`], then negative results become +0.
pub fn f16_fma_relu(a: u64, b: u64, c: u64) -> u64 {
    relu_16(f16_fma(a, b, c))
}

// ---------------------------------------------------------------------------
// bfloat16 arithmetic (`.bf16`, `.bf16x2`), and rounding to either 16-bit
// format with any of the float roundings.

/// A bfloat16 register's value: every bfloat16 is exactly an `f32`, and so
/// an `f64`.
#[inline(always)]
fn bf16_value(bfloat: u64) -> f64 {
    f64::from(bf16_to_f32(bfloat as u16))
}

/// Whether the low 16 bits of a lane are a bfloat16 NaN.
#[inline(always)]
fn bf16_is_nan(a: u64) -> bool {
    a & 0x7fff > 0x7f80
}

/// `x + y` rounded to odd: the exact sum where `f64` holds it, otherwise
/// the one of its two `f64` neighbours whose last mantissa bit is 1.
/// Rounding that to a format at least two bits narrower than `f64` gives
/// what rounding the exact sum would, with any rounding mode (Boldo and
/// Melquiond, "Emulation of FMA and correctly rounded sums: proved
/// algorithms using rounding to odd", IEEE Transactions on Computers,
/// 2008): an odd `f64` is never a rounding boundary of the narrow format,
/// so it lies on the same side of every boundary as the exact sum. The sum
/// rounded to nearest would not do: a value just past a bfloat16 midpoint
/// can round to the midpoint itself and then go the wrong way, as the
/// product 1 + 2^-3 + 2^-8 (a midpoint) plus 2^-100 does. Infinite and NaN
/// sums are returned as they are.
pub fn f64_add_to_odd(x: f64, y: f64) -> f64 {
    let sum = x + y;
    if !sum.is_finite() {
        return sum;
    }
    // TwoSum (Knuth): `error` is exactly `x + y - sum`. No step overflows
    // for bfloat16 values and their products, which stay below 2^257.
    let y_part = sum - x;
    let x_part = sum - y_part;
    let error = (x - x_part) + (y - y_part);
    if error == 0.0 || sum.to_bits() & 1 == 1 {
        return sum;
    }
    // The exact sum lies strictly between `sum`, whose last bit is 0, and
    // its neighbour toward `error`, whose last bit is 1. A sum of two
    // floats that rounds to zero is exactly zero, so `sum` is not zero here.
    if (error > 0.0) == (sum > 0.0) {
        f64::from_bits(sum.to_bits() + 1)
    } else {
        f64::from_bits(sum.to_bits() - 1)
    }
}

/// `add.rn.bf16`: the sum rounded once to nearest even. Two bfloat16
/// values can be 2^260 apart, too far for their sum to be exact in `f64`,
/// so the sum is rounded to odd first ([`f64_add_to_odd`]).
pub fn bf16_add(a: u64, b: u64) -> u64 {
    u64::from(f64_to_bf16(f64_add_to_odd(bf16_value(a), bf16_value(b))))
}

/// `sub.rn.bf16`: [`bf16_add`] of `a` and `-b`.
pub fn bf16_sub(a: u64, b: u64) -> u64 {
    u64::from(f64_to_bf16(f64_add_to_odd(bf16_value(a), -bf16_value(b))))
}

/// `mul.rn.bf16`: the product of two 8-bit significands has at most 16
/// bits and lies between 2^-266 and 2^256, so it is exact in `f64`, and
/// rounding it to a bfloat16 is the only rounding.
pub fn bf16_mul(a: u64, b: u64) -> u64 {
    u64::from(f64_to_bf16(bf16_value(a) * bf16_value(b)))
}

/// `fma.rn.bf16`: `a * b` is exact in `f64` (as in [`bf16_mul`]); adding
/// `c` is rounded to odd and then to nearest even, which is one rounding of
/// the exact `a * b + c`.
pub fn bf16_fma(a: u64, b: u64, c: u64) -> u64 {
    let product = bf16_value(a) * bf16_value(b);
    u64::from(f64_to_bf16(f64_add_to_odd(product, bf16_value(c))))
}

/// `fma.rn.relu.bf16`: [`bf16_fma`], then negative results become +0.
pub fn bf16_fma_relu(a: u64, b: u64, c: u64) -> u64 {
    relu_16(bf16_fma(a, b, c))
}

/// `neg.bf16`: flips the sign bit; a NaN becomes the canonical NaN
/// `0x7fff`, as `neg.f16` does on an H100 (see [`f16_neg`]; the bfloat16
/// form has not been measured).
pub fn bf16_neg(a: u64) -> u64 {
    if bf16_is_nan(a) {
        0x7fff
    } else {
        (a ^ 0x8000) & 0xffff
    }
}

/// `abs.bf16`: clears the sign bit; a NaN becomes the canonical NaN, as
/// for [`bf16_neg`].
pub fn bf16_abs(a: u64) -> u64 {
    if bf16_is_nan(a) {
        0x7fff
    } else {
        a & 0x7fff
    }
}

/// The bfloat16 that is exactly the `f32` `value` (its upper half), or
/// the canonical NaN.
#[inline(always)]
fn bf16_of_exact_f32(value: f32) -> u64 {
    if value.is_nan() {
        0x7fff
    } else {
        u64::from(value.to_bits() >> 16)
    }
}

/// `min.bf16`, as [`f32_min`] on the exact `f32` values: a NaN operand
/// gives the other, two NaNs the canonical NaN, and -0 is below +0.
pub fn bf16_min(a: u64, b: u64) -> u64 {
    bf16_of_exact_f32(f32_min(bf16_to_f32(a as u16), bf16_to_f32(b as u16)))
}

/// `max.bf16`, as [`f32_max`] on the exact `f32` values.
pub fn bf16_max(a: u64, b: u64) -> u64 {
    bf16_of_exact_f32(f32_max(bf16_to_f32(a as u16), bf16_to_f32(b as u16)))
}

/// `min.NaN.bf16`: as [`bf16_min`], except that a NaN operand gives the
/// canonical NaN.
pub fn bf16_min_nan(a: u64, b: u64) -> u64 {
    if bf16_is_nan(a) || bf16_is_nan(b) {
        0x7fff
    } else {
        bf16_min(a, b)
    }
}

/// `max.NaN.bf16`: as [`bf16_max`], except that a NaN operand gives the
/// canonical NaN.
pub fn bf16_max_nan(a: u64, b: u64) -> u64 {
    if bf16_is_nan(a) || bf16_is_nan(b) {
        0x7fff
    } else {
        bf16_max(a, b)
    }
}

/// `setp.cmp.bf16`: every bfloat16 is exactly an `f32` (its upper half),
/// so the `f32` comparison is the bfloat16 one.
pub fn bf16_compare(cmp: CmpOp, a: u64, b: u64) -> bool {
    let widen = |bfloat: u64| (bfloat & 0xffff) << 16;
    compare(cmp, NumberType::Float(FloatType::F32), widen(a), widen(b))
}

/// `value` rounded to the 16-bit float `format` with the float rounding
/// `rounding` (`.rn` to nearest even, `.rz` toward zero, `.rm` down, `.rp`
/// up; the integer roundings are read as their float counterparts). `value`
/// must be the exact value, or the exact value rounded to odd in `f64`
/// ([`f64_add_to_odd`], [`int_to_f64_odd`]), which rounds the same. NaN
/// becomes the canonical NaN `0x7fff`. Past the largest finite value, `.rn`
/// gives infinity, and the directed roundings give infinity or the largest
/// finite value, whichever lies in their direction. For `.rn` this is
/// [`f64_to_f16`] and [`f64_to_bf16`], written for any rounding.
pub fn f64_to_half_rounded(value: f64, format: HalfFormat, rounding: Rounding) -> u16 {
    let (exponent_bits, mantissa_bits): (i32, i32) = match format {
        HalfFormat::F16 => (5, 10),
        HalfFormat::Bf16 => (8, 7),
    };
    if value.is_nan() {
        return 0x7fff;
    }
    let negative = value.is_sign_negative();
    let sign: u32 = if negative { 0x8000 } else { 0 };
    let infinity: u32 = ((1 << exponent_bits) - 1) << mantissa_bits;
    let overflow = match rounding {
        Rounding::Rz | Rounding::Rzi => infinity - 1,
        Rounding::Rm | Rounding::Rmi if !negative => infinity - 1,
        Rounding::Rp | Rounding::Rpi if negative => infinity - 1,
        _ => infinity,
    };
    let magnitude = value.abs();
    if magnitude.is_infinite() {
        return (sign | infinity) as u16;
    }
    if magnitude == 0.0 {
        return sign as u16;
    }
    let bias = (1 << (exponent_bits - 1)) - 1;
    // The exponent of the leading bit. An `f64` subnormal reads as -1023
    // here, far below every 16-bit subnormal, and so rounds as it should.
    let exponent = ((magnitude.to_bits() >> 52) as i32) - 1023;
    if exponent > bias {
        return (sign | overflow) as u16;
    }
    // Subnormals are multiples of the smallest normal's last bit.
    let exponent = exponent.max(1 - bias);
    let last_bit = exponent - mantissa_bits;
    // Scaling by a power of two is exact, and so are the whole units and
    // the fraction left over: `scaled` is below 2^(mantissa_bits + 1).
    let scaled = magnitude * 2f64.powi(-last_bit);
    let units = scaled.trunc();
    let rest = scaled - units;
    let round_up = match rounding {
        Rounding::Rn | Rounding::Rni => rest > 0.5 || (rest == 0.5 && units % 2.0 == 1.0),
        Rounding::Rz | Rounding::Rzi => false,
        Rounding::Rm | Rounding::Rmi => negative && rest > 0.0,
        Rounding::Rp | Rounding::Rpi => !negative && rest > 0.0,
    };
    let units = units as u32 + u32::from(round_up);
    // A normal value's units include its leading bit, which adds one to the
    // exponent field written below it; a carry out of the mantissa adds one
    // more, correctly. Subnormals have exponent field 0 and no leading bit.
    let bits = (((exponent + bias - 1) as u32) << mantissa_bits) + units;
    if bits >= infinity {
        (sign | overflow) as u16
    } else {
        (sign | bits) as u16
    }
}

/// An integer as an `f64` rounded to odd: exact below 2^53; above, the
/// leading 53 bits with the last one set if any bit below them was, so
/// that rounding the result to a 16-bit float (with any rounding) rounds
/// the integer once (see [`f64_add_to_odd`]).
pub fn int_to_f64_odd(value: i128) -> f64 {
    let magnitude = value.unsigned_abs();
    let width = 128 - magnitude.leading_zeros();
    let result = if width <= 53 {
        magnitude as f64
    } else {
        let dropped = width - 53;
        let mut kept = magnitude >> dropped;
        if magnitude & ((1u128 << dropped) - 1) != 0 {
            kept |= 1;
        }
        // `kept` has 53 bits, exact in `f64`, and the scaling is exact.
        kept as f64 * 2f64.powi(dropped as i32)
    };
    if value < 0 {
        -result
    } else {
        result
    }
}

/// `cvt` to `.bf16`: from an integer (`cvt.rn.bf16.s32`), an `.f32` or
/// `.f64` (`cvt.rz.bf16.f32`), or a bfloat16 rounded to an integral value
/// (`cvt.rzi.bf16.bf16`, `htrunc`), with one rounding. `.sat` clamps to
/// [0.0, 1.0], a NaN to 0.0, as on the other float conversions.
pub fn convert_to_bf16(src: u64, from: Bf16Source, rounding: Rounding, saturate: bool) -> u64 {
    let value = match from {
        Bf16Source::Int(ty) => int_to_f64_odd(as_wide(src, ty)),
        Bf16Source::Float(ty) => float_value(src, ty),
        // An integral value of a bfloat16 is a bfloat16 (below 2^8 it fits
        // in 8 bits; above, every bfloat16 is an integer): exact.
        Bf16Source::Bf16 => round_integral(bf16_value(src), Some(rounding)),
    };
    let value = if !saturate {
        value
    } else if value.is_nan() {
        0.0
    } else {
        value.clamp(0.0, 1.0)
    };
    u64::from(f64_to_half_rounded(value, HalfFormat::Bf16, rounding))
}

/// `cvt` from `.bf16` to an integer, `.f32` or `.f64`: through `f32`, which
/// holds every bfloat16, so the one rounding is the `f32` conversion's.
pub fn convert_from_bf16(
    src: u64,
    to: NumberType,
    rounding: Option<Rounding>,
    saturate: bool,
) -> u64 {
    let single = NumberType::Float(FloatType::F32);
    convert(
        f32_bits(bf16_to_f32(src as u16)),
        single,
        to,
        rounding,
        saturate,
    )
}

/// `cvt.rn.bf16x2.f32 d, a, b` (or `.f16x2`, or `.rz`): `a` rounded into
/// the upper 16 bits and `b` into the lower, PTX's order.
pub fn convert_pair(a: u64, b: u64, format: HalfFormat, rounding: Rounding) -> u64 {
    let round = |x: u64| u64::from(f64_to_half_rounded(f64::from(f32_of(x)), format, rounding));
    round(a) << 16 | round(b)
}

/// Clamps an exact integer result to the `.s32` range (`.sat`).
#[inline(always)]
fn s32_clamp(value: i64) -> u64 {
    u64::from(value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32)
}

/// `add.sat.s32`: the exact sum clamped to the `.s32` range.
#[inline(always)]
pub fn s32_add_sat(a: u64, b: u64) -> u64 {
    s32_clamp(i64::from(a as u32 as i32) + i64::from(b as u32 as i32))
}

/// `sub.sat.s32`: the exact difference clamped to the `.s32` range.
#[inline(always)]
pub fn s32_sub_sat(a: u64, b: u64) -> u64 {
    s32_clamp(i64::from(a as u32 as i32) - i64::from(b as u32 as i32))
}

/// `mad.hi.sat.s32`: the high 32 bits of the 64-bit product plus `c`,
/// clamped to the `.s32` range (PTX ISA: `d = sat(t<63..32> + c)`).
#[inline(always)]
pub fn s32_mad_hi_sat(a: u64, b: u64, c: u64) -> u64 {
    let product = i64::from(a as u32 as i32) * i64::from(b as u32 as i32);
    s32_clamp((product >> 32) + i64::from(c as u32 as i32))
}

/// `.sat` on an `.f32` arithmetic result: clamped to [+0.0, 1.0], a NaN
/// result and -0.0 becoming +0.0 (PTX ISA: "clamps the result to [0.0,
/// 1.0]. NaN results are flushed to +0.0f").
#[inline(always)]
pub fn f32_saturate(value: f32) -> u64 {
    if value > 0.0 {
        f32_bits(value.min(1.0))
    } else {
        // Zeros of both signs, negative values and NaN.
        0
    }
}

/// `mov.bN d, {a, b, ...}`: the elements side by side, element 0 in the
/// low bits, each cut to `element_bits`.
#[inline(always)]
pub fn pack(elements: &[u64], element_bits: u8) -> u64 {
    let mask = width_mask(element_bits);
    elements
        .iter()
        .enumerate()
        .fold(0, |packed, (index, &element)| {
            packed | (element & mask) << (index as u32 * u32::from(element_bits))
        })
}

/// `mov.bN {a, b, ...}, s`: element `index` of `value`.
#[inline(always)]
pub fn unpack(value: u64, index: u32, element_bits: u8) -> u64 {
    (value >> (index * u32::from(element_bits))) & width_mask(element_bits)
}

/// `shf.l/.r.b32 d, a, b, c`: the 64 bits `b:a` shifted by `c` (modulo
/// 32 with `.wrap`, at most 32 with `.clamp`); `.l` keeps the high word of
/// the left shift, `.r` the low word of the right shift.
#[inline(always)]
pub fn funnel_shift(a: u64, b: u64, amount: u64, left: bool, clamp: bool) -> u64 {
    let amount = amount as u32;
    let n = if clamp { amount.min(32) } else { amount & 31 };
    let joined = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    if left {
        (joined << n) >> 32
    } else {
        (joined >> n) & 0xffff_ffff
    }
}

/// `lop3.b32 d, a, b, c, lut`: bit `i` of `d` is bit `4a_i + 2b_i + c_i` of `lut`.
#[inline(always)]
pub fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut result = 0u64;
    for minterm in 0..8u8 {
        if lut >> minterm & 1 == 0 {
            continue;
        }
        let pick = |value: u64, bit: u8| if minterm & bit != 0 { value } else { !value };
        result |= pick(a, 4) & pick(b, 2) & pick(c, 1);
    }
    result & 0xffff_ffff
}

/// `mul24.lo/.hi`: the 48-bit product of the low 24 bits of `a` and `b`
/// (sign-extended when `signed`); bits 0-31 for `.lo`, 16-47 for `.hi`.
#[inline(always)]
pub fn mul24(a: u64, b: u64, hi: bool, signed: bool) -> u64 {
    let operand = |value: u64| {
        if signed {
            sign_extend(value, 24)
        } else {
            (value & 0xff_ffff) as i64
        }
    };
    // |a|, |b| < 2^24: the product fits in 48 bits of an i64.
    let product = operand(a) * operand(b);
    let shift = if hi { 16 } else { 0 };
    (product >> shift) as u64 & 0xffff_ffff
}

/// `sad`: `c + |a - b|`, the difference taken exactly in the type's
/// signedness, the sum wrapping at the type's width.
#[inline(always)]
pub fn sad(a: u64, b: u64, c: u64, ty: IntType) -> u64 {
    let difference = (as_wide(a, ty) - as_wide(b, ty)).unsigned_abs() as u64;
    c.wrapping_add(difference) & width_mask(ty.bits)
}

/// `testp.class`: whether the float in `bits` is of `class`; PTX counts
/// both zeros as normal.
#[inline(always)]
pub fn float_class(bits: u64, ty: FloatType, class: warpsim_ir::FloatClass) -> bool {
    use warpsim_ir::FloatClass;
    let (nan, infinite, subnormal) = match ty {
        FloatType::F32 => {
            let value = f32_of(bits);
            (value.is_nan(), value.is_infinite(), value.is_subnormal())
        }
        FloatType::F64 => {
            let value = f64::from_bits(bits);
            (value.is_nan(), value.is_infinite(), value.is_subnormal())
        }
    };
    match class {
        FloatClass::Finite => !nan && !infinite,
        FloatClass::Infinite => infinite,
        FloatClass::Number => !nan,
        FloatClass::NotANumber => nan,
        FloatClass::Normal => !nan && !infinite && !subnormal,
        FloatClass::Subnormal => subnormal,
    }
}

/// `copysign d, a, b`: `b` with the sign bit of `a` (NaNs keep their other bits).
#[inline(always)]
pub fn copysign(a: u64, b: u64, ty: FloatType) -> u64 {
    let sign = match ty {
        FloatType::F32 => 1u64 << 31,
        FloatType::F64 => 1u64 << 63,
    };
    (a & sign) | (b & !sign & width_mask(if ty == FloatType::F32 { 32 } else { 64 }))
}

/// The integer types and the signed-value helper that the unit tests below share.
#[cfg(test)]
mod test_values {
    use super::IntType;

    pub(super) const U32: IntType = IntType {
        bits: 32,
        signed: false,
    };
    pub(super) const S32: IntType = IntType {
        bits: 32,
        signed: true,
    };
    pub(super) const U64: IntType = IntType {
        bits: 64,
        signed: false,
    };
    pub(super) const S64: IntType = IntType {
        bits: 64,
        signed: true,
    };

    /// An `.s32` value as the machine holds it: its 32 bits, zero-extended.
    pub(super) fn s32(value: i32) -> u64 {
        u64::from(value as u32)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn bfloat16_rounds_to_nearest_even() {
        assert_eq!(f64_to_bf16(1.0), 0x3f80);
        assert_eq!(f64_to_bf16(-2.5), 0xc020);
        assert_eq!(f64_to_bf16(0.0), 0x0000);
        assert_eq!(f64_to_bf16(-0.0), 0x8000);
        // 0.1 is 0x3dcd (0.10009765625), the nearest bfloat16.
        assert_eq!(f64_to_bf16(0.1), 0x3dcd);
        // Ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7, and even (1.0)
        // wins; 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6.
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(f64_to_bf16(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
        // Just above a tie rounds up, where rounding through f32 first
        // would make it a tie and round down.
        let above_tie = 1.0 + 2f64.powi(-8) + 2f64.powi(-30);
        assert_eq!(f64_to_bf16(above_tie), 0x3f81);
        assert_eq!((above_tie as f32).to_bits() >> 16, 0x3f80);
        // A carry out of the mantissa bumps the exponent: just under 2
        // rounds to 2.
        assert_eq!(f64_to_bf16(2.0 - 2f64.powi(-9)), 0x4000);
    }

    #[test]
    fn bfloat16_overflows_to_infinity_and_keeps_nan_and_subnormals() {
        let largest = (2.0 - 2f64.powi(-7)) * 2f64.powi(127);
        assert_eq!(f64_to_bf16(largest), 0x7f7f);
        assert_eq!(f64::from(bf16_to_f32(0x7f7f)), largest);
        // Halfway to 2^128 ties to even: infinity; just below stays finite.
        let halfway = (2.0 - 2f64.powi(-8)) * 2f64.powi(127);
        assert_eq!(f64_to_bf16(halfway), 0x7f80);
        assert_eq!(f64_to_bf16(halfway * (1.0 - 2f64.powi(-40))), 0x7f7f);
        assert_eq!(f64_to_bf16(-1e300), 0xff80);
        assert_eq!(f64_to_bf16(f64::INFINITY), 0x7f80);
        assert_eq!(f64_to_bf16(f64::NEG_INFINITY), 0xff80);
        assert_eq!(f64_to_bf16(f64::NAN), 0x7fff);
        assert!(bf16_to_f32(0x7fff).is_nan());
        // The smallest subnormal is 2^-133; half of it ties to zero, three
        // halves tie to two units (even), and the top of the subnormals
        // carries into the smallest normal, 2^-126.
        assert_eq!(f64_to_bf16(2f64.powi(-133)), 0x0001);
        assert_eq!(f64_to_bf16(2f64.powi(-134)), 0x0000);
        assert_eq!(f64_to_bf16(3.0 * 2f64.powi(-134)), 0x0002);
        assert_eq!(f64_to_bf16(-2f64.powi(-133)), 0x8001);
        assert_eq!(f64_to_bf16(2f64.powi(-126) - 2f64.powi(-135)), 0x0080);
        assert_eq!(f64_to_bf16(2f64.powi(-126)), 0x0080);
        assert_eq!(f64::from(bf16_to_f32(0x0001)), 2f64.powi(-133));
        // Below every subnormal, and an f64 subnormal: zero.
        assert_eq!(f64_to_bf16(1e-300), 0x0000);
        assert_eq!(f64_to_bf16(-5e-324), 0x8000);
    }

    #[test]
    fn bfloat16_agrees_with_f32_where_f32_is_exact() {
        // Every f32 whose low 16 bits are zero is a bfloat16 and converts to
        // itself; this walks every such value's exponent and some mantissas.
        for high in (0u32..0x7f80).step_by(37).chain([0x7f7f, 0x0080, 0x0001]) {
            let value = f64::from(f32::from_bits(high << 16));
            assert_eq!(u32::from(f64_to_bf16(value)), high, "{value:e}");
            assert_eq!(u32::from(f64_to_bf16(-value)), high | 0x8000, "{value:e}");
        }
    }
    use super::test_values::{S32, U32};
    use super::*;

    #[test]
    fn integer_operations_wrap_and_extend_like_ptx() {
        assert_eq!(int_add(0xffff_ffff, 1, U32), 0);
        assert_eq!(int_sub(0, 1, S32), 0xffff_ffff);
        assert_eq!(int_mul_hi(0xffff_ffff, 2, U32), 1);
        assert_eq!(int_mul_hi(0xffff_ffff, 2, S32), 0xffff_ffff);
        assert_eq!(
            int_mul_wide(0xffff_ffff, 0xffff_ffff, U32),
            0xffff_fffe_0000_0001
        );
        assert_eq!(int_mul_wide(0xffff_ffff, 3, S32), (-3i64) as u64);
        assert_eq!(int_div(7, 0, U32), 0xffff_ffff);
        assert_eq!(
            int_div((-7i32) as u32 as u64, 2, S32),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            int_rem((-7i32) as u32 as u64, 2, S32),
            (-1i32) as u32 as u64
        );
        assert_eq!(int_shr(0x8000_0000, 31, S32), 0xffff_ffff);
        assert_eq!(int_shr(0x8000_0000, 40, S32), 0xffff_ffff);
        assert_eq!(int_shr(0x8000_0000, 40, U32), 0);
        assert_eq!(int_shl(1, 32, U32), 0);
        assert_eq!(int_min(0xffff_ffff, 1, S32), 0xffff_ffff);
        assert_eq!(int_min(0xffff_ffff, 1, U32), 1);
        assert_eq!(int_clz(1, U32), 31);
        assert_eq!(int_brev(1, U32), 0x8000_0000);
    }

    #[test]
    fn bit_field_extract_and_insert_follow_the_ptx_definition() {
        assert_eq!(bit_field_extract(0xf0, 4, 4, U32), 0xf);
        // Signed: the field's top bit fills the rest.
        assert_eq!(bit_field_extract(0xf0, 4, 4, S32), 0xffff_ffff);
        assert_eq!(bit_field_extract(0x70, 4, 4, S32), 0x7);
        assert_eq!(bit_field_extract(0xf0, 4, 0, S32), 0);
        // A field past bit 31 takes bit 31 as its sign.
        assert_eq!(bit_field_extract(0x8000_0000, 28, 8, S32), 0xffff_fff8);
        assert_eq!(bit_field_extract(0x8000_0000, 28, 8, U32), 0x8);
        // Position and length use their low 8 bits only.
        assert_eq!(bit_field_extract(0xf0, 0x104, 0x204, U32), 0xf);
        assert_eq!(bit_field_insert(0xf, 0, 4, 4, 32), 0xf0);
        assert_eq!(bit_field_insert(0xff, 0, 28, 8, 32), 0xf000_0000);
        assert_eq!(bit_field_insert(0, 0xffff_ffff, 8, 8, 32), 0xffff_00ff);
    }

    /// `x` times 2^`shift`, which the test's magnitudes keep an exact integer.
    fn scaled(x: f32, shift: i32) -> i128 {
        let value = f64::from(x) * 2f64.powi(shift);
        assert_eq!(value.fract(), 0.0, "{x} is not a multiple of 2^-{shift}");
        value as i128
    }

    #[test]
    fn directed_fma_brackets_the_exact_value() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // A float in ±[2^-10, 2^10) with a random 24-bit mantissa: a
            // multiple of 2^-33, so products are multiples of 2^-66.
            let mantissa = (state & 0xff_ffff) as f32 / (1 << 23) as f32 + 1.0;
            let exponent = ((state >> 24) % 20) as i32 - 10;
            let sign = if (state >> 40) & 1 == 1 { -1.0 } else { 1.0 };
            sign * mantissa * 2f32.powi(exponent)
        };
        let step_up = |x: f32| {
            f32::from_bits(if x >= 0.0 {
                x.to_bits() + 1
            } else {
                x.to_bits() - 1
            })
        };
        for _ in 0..20_000 {
            let (a, b, c) = (next(), next(), next());
            // Everything in units of 2^-100: exact, and fine enough for any
            // f32 result of these inputs (the smallest nonzero is 2^-66).
            let exact = scaled(a, 33) * scaled(b, 33) * (1 << 34) + scaled(c, 100);
            let down = fma_f32_directed(a, b, c, Rounding::Rm);
            let up = fma_f32_directed(a, b, c, Rounding::Rp);
            let zero = fma_f32_directed(a, b, c, Rounding::Rz);
            let (down_scaled, up_scaled) = (scaled(down, 100), scaled(up, 100));
            assert!(down_scaled <= exact && exact <= up_scaled, "{a} {b} {c}");
            if down_scaled == exact || up_scaled == exact {
                assert_eq!(down, up, "{a} {b} {c}: an exact result needs no rounding");
            } else {
                assert_eq!(step_up(down), up, "{a} {b} {c}: adjacent floats");
            }
            assert_eq!(zero, if exact >= 0 { down } else { up }, "{a} {b} {c}");
            let nearest = a.mul_add(b, c);
            assert!(nearest == down || nearest == up, "{a} {b} {c}");
        }
    }

    #[test]
    fn every_half_survives_a_round_trip_through_f32() {
        for half in 0..=u16::MAX {
            let value = f16_to_f32(half);
            if value.is_nan() {
                assert_eq!(f32_to_f16(value), 0x7fff);
            } else {
                assert_eq!(f32_to_f16(value), half, "{half:#06x} = {value}");
            }
        }
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        // Halfway cases round to even; beyond the range is infinity.
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(-2f32.powi(-25)), 0x8000);
    }

    #[test]
    fn bfind_finds_the_most_significant_non_sign_bit() {
        assert_eq!(int_bfind(1, U32, false), 0);
        assert_eq!(int_bfind(0x8000_0000, U32, false), 31);
        assert_eq!(int_bfind(0, U32, false), 0xffff_ffff);
        assert_eq!(int_bfind(0x10, U32, true), 27);
        // Signed: -1 has no bit that differs from the sign; -2's is bit 0.
        assert_eq!(int_bfind(0xffff_ffff, S32, false), 0xffff_ffff);
        assert_eq!(int_bfind(0xffff_fffe, S32, false), 0);
        assert_eq!(int_bfind(0x7fff_ffff, S32, false), 30);
    }

    #[test]
    fn permute_picks_and_sign_replicates_bytes() {
        let (a, b) = (0x3322_1100, 0x7766_5544);
        assert_eq!(permute(a, b, 0x3210), 0x3322_1100);
        assert_eq!(permute(a, b, 0x7654), 0x7766_5544);
        assert_eq!(permute(a, b, 0x0123), 0x0011_2233);
        assert_eq!(permute(0x80, 0, 0x8888), 0xffff_ffff);
        assert_eq!(permute(0x7f, 0, 0x8880), 0x0000_007f);
    }

    #[test]
    fn fma_is_correctly_rounded_where_double_rounding_would_fail() {
        // a*b + c is exactly halfway between two f32 values after one f64 rounding
        // in this case; the library fallback gives the correctly rounded result.
        let cases = [
            (1.0f32 + f32::EPSILON, 1.0 - f32::EPSILON / 2.0, 1e-8),
            (0.1, 0.2, 0.3),
            (1.0001, 1.0001, -1.0002),
            (3.0e38, 2.0, -3.0e38),
            (1.0e-20, 1.0e-20, 1.0e-39),
            (f32::MIN_POSITIVE, 0.5, f32::from_bits(1)),
        ];
        for (a, b, c) in cases {
            assert_eq!(
                fma_f32(a, b, c).to_bits(),
                a.mul_add(b, c).to_bits(),
                "{a} {b} {c}"
            );
        }
    }

    #[test]
    fn conversions_round_and_saturate() {
        let f32_type = NumberType::Float(FloatType::F32);
        let s32 = NumberType::Int(S32);
        let u8_type = NumberType::Int(IntType {
            bits: 8,
            signed: false,
        });
        assert_eq!(
            convert(f32_bits(2.5), f32_type, s32, Some(Rounding::Rni), false),
            2
        );
        assert_eq!(
            convert(f32_bits(-2.5), f32_type, s32, Some(Rounding::Rmi), false),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            convert(f32_bits(3e10), f32_type, s32, Some(Rounding::Rzi), false),
            0x7fff_ffff
        );
        assert_eq!(
            convert(
                f32_bits(f32::NAN),
                f32_type,
                s32,
                Some(Rounding::Rzi),
                false
            ),
            0
        );
        assert_eq!(convert(300, NumberType::Int(U32), u8_type, None, true), 255);
        assert_eq!(convert(300, NumberType::Int(U32), u8_type, None, false), 44);
        // 2^24 + 1 is not an f32: nearest-even gives 2^24, toward +inf 2^24 + 2.
        let big = (1u64 << 24) + 1;
        assert_eq!(
            f32_of(convert(
                big,
                NumberType::Int(U32),
                f32_type,
                Some(Rounding::Rn),
                false
            )),
            16_777_216.0
        );
        assert_eq!(
            f32_of(convert(
                big,
                NumberType::Int(U32),
                f32_type,
                Some(Rounding::Rp),
                false
            )),
            16_777_218.0
        );
        assert_eq!(
            f32_of(convert(
                big,
                NumberType::Int(U32),
                f32_type,
                Some(Rounding::Rz),
                false
            )),
            16_777_216.0
        );
    }
}

/// Half-precision arithmetic against an exact reference: every finite half
/// is an integer number of 2^-24, so sums, products and fused products are
/// exact integers (in units of 2^-24 or 2^-48), rounded to the nearest half
/// by a search over the ordered halves.
#[cfg(test)]
mod half_tests {
    use super::*;

    /// A finite half in units of 2^-24 (sign included).
    fn units(half: u16) -> i128 {
        let exponent = (half >> 10) & 0x1f;
        let mantissa = i128::from(half & 0x3ff);
        let magnitude = if exponent == 0 {
            mantissa
        } else {
            (mantissa | 0x400) << (exponent - 1)
        };
        if half & 0x8000 != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The half nearest `value * 2^-scale` (ties to even), with `zero` as
    /// the result when `value` is 0.
    fn round_reference(value: i128, scale: u32, zero: u16) -> u16 {
        if value == 0 {
            return zero;
        }
        let sign = if value < 0 { 0x8000 } else { 0 };
        let target = value.abs();
        let at = |half: u16| units(half) << (scale - 24);
        // Positive finite halves 0x0000..=0x7bff increase with their bits.
        let (mut low, mut high) = (0u16, 0x7bffu16);
        if at(high) <= target {
            // 65520 is halfway from 65504 to 2^16, where the next would be.
            let overflow = 65520i128 << 24 << (scale - 24);
            return sign | if target >= overflow { 0x7c00 } else { 0x7bff };
        }
        while high - low > 1 {
            let middle = (low + high) / 2;
            if at(middle) <= target {
                low = middle;
            } else {
                high = middle;
            }
        }
        let (below, above) = (at(low), at(high));
        let nearest = match (2 * target).cmp(&(below + above)) {
            std::cmp::Ordering::Less => low,
            std::cmp::Ordering::Greater => high,
            std::cmp::Ordering::Equal if low & 1 == 0 => low,
            std::cmp::Ordering::Equal => high,
        };
        if target == below {
            sign | low
        } else {
            sign | nearest
        }
    }

    /// Deterministic finite halves: xorshift bits, NaN and infinity skipped.
    fn halves(seed: u64, count: usize) -> Vec<u16> {
        let mut state = seed;
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let half = state as u16;
            if half & 0x7c00 != 0x7c00 {
                out.push(half);
            }
        }
        out
    }

    /// Interesting halves: zeros, the smallest subnormals, the normal
    /// boundary, one and its neighbours, the largest finite.
    const EDGES: [u16; 14] = [
        0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3bff, 0x3c00, 0x3c01, 0xbc00, 0x7bff,
        0xfbff, 0x5bff, 0x0002,
    ];

    fn sum_zero(a: u16, b: u16) -> u16 {
        if a == 0x8000 && b == 0x8000 {
            0x8000
        } else {
            0
        }
    }

    #[test]
    fn f64_to_f16_rounds_every_midpoint_to_even() {
        // Every half, the value halfway to its neighbour away from zero, and
        // a value a third of the way there.
        for half in 0..0x7c00u16 {
            for bits in [half, half | 0x8000] {
                let value = f64::from(f16_to_f32(bits));
                assert_eq!(f64_to_f16(value), bits);
                let next = f64::from(f16_to_f32(bits + 1));
                let midpoint = (value + next) / 2.0;
                let even = if bits & 1 == 0 { bits } else { bits + 1 };
                assert_eq!(f64_to_f16(midpoint), even, "{midpoint}");
                assert_eq!(f32_to_f16(midpoint as f32), even, "{midpoint}");
                if next.is_finite() {
                    let nearer = value + (next - value) / 3.0;
                    assert_eq!(f64_to_f16(nearer), bits, "{nearer}");
                }
            }
        }
        assert_eq!(f64_to_f16(f64::NAN), 0x7fff);
        assert_eq!(f64_to_f16(f64::INFINITY), 0x7c00);
        assert_eq!(f64_to_f16(-65520.0), 0xfc00);
        assert_eq!(f64_to_f16(65519.99), 0x7bff);
    }

    #[test]
    fn add_sub_and_mul_are_correctly_rounded() {
        let mut pairs: Vec<(u16, u16)> = Vec::new();
        let left = halves(1, 1500);
        let right = halves(2, 1500);
        pairs.extend(left.iter().copied().zip(right.iter().copied()));
        for &a in EDGES.iter().chain(&left[..300]) {
            for &b in EDGES.iter().chain(&right[..300]) {
                pairs.push((a, b));
            }
        }
        for (a, b) in pairs {
            let (x, y) = (units(a), units(b));
            let add = round_reference(x + y, 24, sum_zero(a, b));
            assert_eq!(
                f16_add(a.into(), b.into()),
                u64::from(add),
                "{a:#06x} + {b:#06x}"
            );
            let sub = round_reference(x - y, 24, sum_zero(a, b ^ 0x8000));
            assert_eq!(
                f16_sub(a.into(), b.into()),
                u64::from(sub),
                "{a:#06x} - {b:#06x}"
            );
            let mul = round_reference(x * y, 48, (a ^ b) & 0x8000);
            assert_eq!(
                f16_mul(a.into(), b.into()),
                u64::from(mul),
                "{a:#06x} * {b:#06x}"
            );
        }
    }

    #[test]
    fn fma_is_correctly_rounded() {
        let (a_list, b_list, c_list) = (halves(3, 20_000), halves(4, 20_000), halves(5, 20_000));
        let mut triples: Vec<(u16, u16, u16)> = a_list
            .iter()
            .zip(&b_list)
            .zip(&c_list)
            .map(|((&a, &b), &c)| (a, b, c))
            .collect();
        // Products at or near a midpoint between halves, plus a tiny `c`:
        // where a double rounding would show.
        for &a in &a_list[..200] {
            for &b in &b_list[..50] {
                for c in [0x0001, 0x8001, 0x0000, 0x03ff, 0x8400] {
                    triples.push((a, b, c));
                }
            }
        }
        for (a, b, c) in triples {
            let exact = units(a) * units(b) + (units(c) << 24);
            let product_sign = (a ^ b) & 0x8000;
            let zero = if product_sign == 0x8000 && c == 0x8000 {
                0x8000
            } else {
                0
            };
            let expected = round_reference(exact, 48, zero);
            assert_eq!(
                f16_fma(a.into(), b.into(), c.into()),
                u64::from(expected),
                "fma({a:#06x}, {b:#06x}, {c:#06x})"
            );
        }
    }

    #[test]
    fn special_values_follow_ieee() {
        let (inf, ninf, nan, one) = (0x7c00, 0xfc00, 0x7e00, 0x3c00);
        assert_eq!(f16_add(inf, ninf), 0x7fff);
        assert_eq!(f16_add(inf, one), inf);
        assert_eq!(f16_mul(0, inf), 0x7fff);
        assert_eq!(f16_fma(0x7bff, 0x7bff, ninf), ninf);
        assert_eq!(f16_sub(nan, one), 0x7fff);
        assert_eq!(f16_neg(one), 0xbc00);
        assert_eq!(f16_abs(0xbc00), one);
        assert_eq!(f16_neg(0), 0x8000);
        assert_eq!(f16_abs(0x8000), 0);
        assert_eq!(f16_neg(inf), ninf);
        assert_eq!(f16_abs(ninf), inf);
        for nan in [0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff, 0xffff] {
            assert_eq!(f16_neg(nan), 0x7fff, "neg {nan:#06x}");
            assert_eq!(f16_abs(nan), 0x7fff, "abs {nan:#06x}");
        }
        assert_eq!(f16_min(nan, one), one);
        assert_eq!(f16_max(one, nan), one);
        assert_eq!(f16_min(nan, nan), 0x7fff);
        assert_eq!(f16_max(0x3c00, 0x4000), 0x4000);
        assert_eq!(f16_min(0x3c00, 0xc000), 0xc000);
        assert!(f16_compare(CmpOp::Lt, 0xc000, 0x3c00));
        assert!(f16_compare(CmpOp::Eq, 0x8000, 0x0000));
        assert!(!f16_compare(CmpOp::Eq, nan, nan));
        assert!(f16_compare(CmpOp::Nan, nan, one));
        assert!(f16_compare(CmpOp::Geu, nan, one));
        assert!(f16_compare(CmpOp::Gt, 0x0001, 0x0000));
    }

    #[test]
    fn min_max_and_compare_agree_with_the_values_on_every_pair_of_a_sample() {
        let sample: Vec<u16> = EDGES.iter().copied().chain(halves(6, 400)).collect();
        for &a in &sample {
            for &b in &sample {
                let (x, y) = (f16_to_f32(a), f16_to_f32(b));
                let min = f16_min(a.into(), b.into()) as u16;
                let max = f16_max(a.into(), b.into()) as u16;
                assert_eq!(f16_to_f32(min), x.min(y), "min({a:#06x}, {b:#06x})");
                assert_eq!(f16_to_f32(max), x.max(y), "max({a:#06x}, {b:#06x})");
                assert_eq!(f16_compare(CmpOp::Lt, a.into(), b.into()), x < y);
                assert_eq!(f16_compare(CmpOp::Ge, a.into(), b.into()), x >= y);
            }
        }
    }

    #[test]
    fn packed_halves_are_two_independent_elements() {
        // Element 0 in the low 16 bits: (1, -2) + (2, 65504) = (3, 65504).
        assert_eq!(f16x2_binary(0xc000_3c00, 0x7bff_4000, f16_add), 0x7bff_4200);
        // Bits above the pair are ignored and come back zero.
        assert_eq!(
            f16x2_binary(0xffff_ffff_c000_3c00, 0x7bff_4000, f16_add),
            0x7bff_4200
        );
        // A NaN in one element leaves the other alone.
        assert_eq!(f16x2_binary(0x7e00_3c00, 0x3c00_3c00, f16_mul), 0x7fff_3c00);
        assert_eq!(f16x2_unary(0x7e00_3c00, f16_neg), 0x7fff_bc00);
        assert_eq!(f16x2_unary(0x8000_bc00, f16_abs), 0x0000_3c00);
        // (1 + 2^-10)^2 - (1 + 2^-9) keeps 2^-20 = 0x0010 in each element.
        assert_eq!(
            f16x2_ternary(0x3c01_3c01, 0x3c01_3c01, 0xbc02_bc02, f16_fma),
            0x0010_0010
        );
        for a in halves(7, 200) {
            for b in halves(8, 20) {
                let (a, b) = (u64::from(a), u64::from(b));
                let packed = f16x2_binary(a | b << 16, b | a << 16, f16_min);
                assert_eq!(packed, f16_min(a, b) | f16_min(b, a) << 16);
            }
        }
    }
}

#[cfg(test)]
mod ptx_gap_tests {
    use super::test_values::s32;
    use super::*;

    #[test]
    fn saturating_s32_arithmetic_clamps_the_exact_result() {
        assert_eq!(s32_add_sat(s32(i32::MAX), s32(1)), s32(i32::MAX));
        assert_eq!(s32_add_sat(s32(i32::MIN), s32(-1)), s32(i32::MIN));
        assert_eq!(s32_add_sat(s32(-5), s32(3)), s32(-2));
        assert_eq!(s32_sub_sat(s32(i32::MIN), s32(1)), s32(i32::MIN));
        assert_eq!(s32_sub_sat(s32(0), s32(i32::MIN)), s32(i32::MAX));
        assert_eq!(s32_sub_sat(s32(7), s32(9)), s32(-2));
        // 2^30 * 2^30 = 2^60: high half 2^28, plus 2^31 - 1 saturates.
        assert_eq!(
            s32_mad_hi_sat(s32(1 << 30), s32(1 << 30), s32(i32::MAX)),
            s32(i32::MAX)
        );
        // -2^31 * 2^31 - 1 ... high half of (-2^31)(2^31 - 1) is -2^30 + ... : floor.
        let product = i64::from(i32::MIN) * i64::from(i32::MAX);
        assert_eq!(
            s32_mad_hi_sat(s32(i32::MIN), s32(i32::MAX), s32(-(1 << 30))),
            s32(((product >> 32) - (1 << 30)).max(i64::from(i32::MIN)) as i32)
        );
        assert_eq!(
            s32_mad_hi_sat(s32(i32::MIN), s32(i32::MAX), s32(i32::MIN)),
            s32(i32::MIN)
        );
        // Upper register bits are ignored and come back zero.
        assert_eq!(s32_add_sat(0xffff_ffff_0000_0001, 1), 2);
    }

    #[test]
    fn saturating_f32_clamps_to_the_unit_interval() {
        assert_eq!(f32_saturate(0.25), f32_bits(0.25));
        assert_eq!(f32_saturate(1.5), f32_bits(1.0));
        assert_eq!(f32_saturate(f32::INFINITY), f32_bits(1.0));
        assert_eq!(f32_saturate(-3.0), 0);
        assert_eq!(f32_saturate(f32::NEG_INFINITY), 0);
        assert_eq!(f32_saturate(f32::NAN), 0);
        assert_eq!(f32_saturate(-0.0), 0);
        assert_eq!(f32_saturate(1e-45), f32_bits(1e-45));
        assert_eq!(
            f32_saturate(1.0 - f32::EPSILON / 2.0),
            f32_bits(1.0 - f32::EPSILON / 2.0)
        );
    }

    #[test]
    fn packing_puts_element_zero_in_the_low_bits() {
        assert_eq!(pack(&[0x1111_2222, 0x3333_4444], 32), 0x3333_4444_1111_2222);
        assert_eq!(pack(&[0xabcd, 0x1234], 16), 0x1234_abcd);
        // Bits above an element are not the element's.
        assert_eq!(pack(&[0xffff_abcd, 0x1234], 16), 0x1234_abcd);
        assert_eq!(pack(&[0x01, 0x02, 0x03, 0x04], 8), 0x0403_0201);
        assert_eq!(pack(&[1, 2, 3, 4], 16), 0x0004_0003_0002_0001);
        assert_eq!(unpack(0x3333_4444_1111_2222, 0, 32), 0x1111_2222);
        assert_eq!(unpack(0x3333_4444_1111_2222, 1, 32), 0x3333_4444);
        assert_eq!(unpack(0x1234_abcd, 1, 16), 0x1234);
        assert_eq!(unpack(0x0403_0201, 2, 8), 0x03);
        for value in [0u64, u64::MAX, 0x0123_4567_89ab_cdef] {
            let halves = [unpack(value, 0, 32), unpack(value, 1, 32)];
            assert_eq!(pack(&halves, 32), value);
        }
    }

    #[test]
    fn funnel_shifts_wrap_or_clamp_the_amount() {
        let (a, b) = (0x89ab_cdef, 0x0123_4567);
        assert_eq!(funnel_shift(a, b, 0, true, false), 0x0123_4567);
        assert_eq!(funnel_shift(a, b, 4, true, false), 0x1234_5678);
        assert_eq!(funnel_shift(a, b, 4, false, false), 0x789a_bcde);
        // .wrap takes the amount modulo 32; .clamp stops at 32.
        assert_eq!(funnel_shift(a, b, 36, true, false), 0x1234_5678);
        assert_eq!(funnel_shift(a, b, 36, true, true), 0x89ab_cdef);
        assert_eq!(funnel_shift(a, b, 32, false, true), 0x0123_4567);
        assert_eq!(
            funnel_shift(a, b, u64::from(u32::MAX), false, true),
            0x0123_4567
        );
        assert_eq!(funnel_shift(a, b, 31, false, false), 0x0246_8acf);
        // A rotate: both words the same.
        assert_eq!(
            funnel_shift(0x8000_0001, 0x8000_0001, 1, true, false),
            0x0000_0003
        );
    }

    #[test]
    fn lop3_reads_its_truth_table() {
        let (a, b, c) = (0xf0f0_f0f0u64, 0xcccc_ccccu64, 0xaaaa_aaaau64);
        // With the canonical inputs, the result is the table repeated.
        for lut in 0..=255u8 {
            assert_eq!(lop3(a, b, c, lut), u64::from(lut) * 0x0101_0101);
        }
        let (x, y, z) = (0x1234_5678u64, 0x9abc_def0u64, 0x0ff0_f00fu64);
        assert_eq!(lop3(x, y, z, 0x96), x ^ y ^ z);
        assert_eq!(lop3(x, y, z, 0xe8), (x & y) | (x & z) | (y & z));
        assert_eq!(lop3(x, y, z, 0xca), (x & y) | (!x & z & 0xffff_ffff));
        assert_eq!(lop3(x, y, z, 0x00), 0);
        assert_eq!(lop3(x, y, z, 0xff), 0xffff_ffff);
    }
}

#[cfg(test)]
mod small_intrinsic_tests {
    use super::test_values::{s32, S32, S64, U32, U64};
    use super::*;
    use warpsim_ir::FloatClass;

    #[test]
    fn mul24_uses_the_low_24_bits() {
        // 0x01_000003 * 0x02_000005: the top bytes are ignored, 3 * 5.
        assert_eq!(mul24(0x0100_0003, 0x0200_0005, false, false), 15);
        // (2^24 - 1)^2 = 2^48 - 2^25 + 1: low word 0xfe000001, bits 16-47 0xfffffe00.
        assert_eq!(mul24(0xff_ffff, 0xff_ffff, false, false), 0xfe00_0001);
        assert_eq!(mul24(0xff_ffff, 0xff_ffff, true, false), 0xffff_fe00);
        // Signed: 0xffffff is -1, so -1 * -1 = 1 and -1 * 7 = -7.
        assert_eq!(mul24(0xff_ffff, 0xff_ffff, false, true), 1);
        assert_eq!(mul24(0xff_ffff, 7, false, true), s32(-7));
        // -7 over 48 bits, bits 16-47: all ones.
        assert_eq!(mul24(0xff_ffff, 7, true, true), s32(-1));
        // 2^23 (as signed, -2^23) squared is 2^46: bits 16-47 give 2^30.
        assert_eq!(mul24(0x80_0000, 0x80_0000, true, true), 1 << 30);
        assert_eq!(mul24(0x80_0000, 0x80_0000, true, false), 1 << 30);
        assert_eq!(
            mul24(0x80_0000, 0x7f_ffff, true, true),
            s32(-(1 << 30) + (1 << 7))
        );
    }

    #[test]
    fn sad_adds_the_absolute_difference() {
        assert_eq!(sad(s32(3), s32(10), 100, S32), 107);
        assert_eq!(sad(s32(-5), s32(7), 0, S32), 12);
        // As unsigned, -5 is 2^32 - 5: the difference to 7 is 2^32 - 12.
        assert_eq!(sad(s32(-5), 7, 0, U32), 0xffff_fff4);
        // |i32::MIN - i32::MAX| = 2^32 - 1, plus 1 wraps to 0.
        assert_eq!(sad(s32(i32::MIN), s32(i32::MAX), 1, S32), 0);
        assert_eq!(sad(u64::MAX, 0, 1, U64), 0);
        assert_eq!(sad(u64::MAX, 1, 0, S64), 2);
    }

    #[test]
    fn float_classes() {
        let f32_cases: [(f32, [bool; 6]); 8] = [
            // finite, infinite, number, notanumber, normal, subnormal
            (1.5, [true, false, true, false, true, false]),
            (0.0, [true, false, true, false, true, false]),
            (-0.0, [true, false, true, false, true, false]),
            (
                f32::MIN_POSITIVE / 2.0,
                [true, false, true, false, false, true],
            ),
            (-f32::MIN_POSITIVE, [true, false, true, false, true, false]),
            (f32::INFINITY, [false, true, true, false, false, false]),
            (f32::NEG_INFINITY, [false, true, true, false, false, false]),
            (f32::NAN, [false, false, false, true, false, false]),
        ];
        for (value, expected) in f32_cases {
            for (class, want) in FloatClass::ALL.into_iter().zip(expected) {
                let bits = u64::from(value.to_bits());
                assert_eq!(
                    float_class(bits, FloatType::F32, class),
                    want,
                    "{value} {class:?}"
                );
                let wide = f64::from(value).to_bits();
                // Every class but subnormal survives the widening (an f32
                // subnormal is a normal f64).
                if value.is_subnormal() {
                    continue;
                }
                assert_eq!(
                    float_class(wide, FloatType::F64, class),
                    want,
                    "{value} {class:?}"
                );
            }
        }
        let tiny = f64::MIN_POSITIVE / 4.0;
        assert!(float_class(
            tiny.to_bits(),
            FloatType::F64,
            FloatClass::Subnormal
        ));
        assert!(!float_class(
            tiny.to_bits(),
            FloatType::F64,
            FloatClass::Normal
        ));
    }

    #[test]
    fn copysign_takes_the_sign_of_the_first_operand() {
        let f = |x: f32| u64::from(x.to_bits());
        assert_eq!(copysign(f(-1.0), f(2.5), FloatType::F32), f(-2.5));
        assert_eq!(copysign(f(1.0), f(-2.5), FloatType::F32), f(2.5));
        assert_eq!(copysign(f(-0.0), f(0.0), FloatType::F32), f(-0.0));
        assert_eq!(
            copysign(f(-3.0), f(f32::INFINITY), FloatType::F32),
            f(f32::NEG_INFINITY)
        );
        // A NaN keeps its payload and takes the sign.
        assert_eq!(copysign(f(-1.0), 0x7fc0_1234, FloatType::F32), 0xffc0_1234);
        let d = |x: f64| x.to_bits();
        assert_eq!(copysign(d(-1e300), d(7.0), FloatType::F64), d(-7.0));
        assert_eq!(copysign(d(0.0), d(-7.0), FloatType::F64), d(7.0));
    }
}

/// bfloat16 arithmetic bit for bit (ties to even, overflow, subnormals,
/// signed zeros, NaN), the rounding of either 16-bit format with every
/// rounding, and the conversions to and from `.bf16`.
#[cfg(test)]
mod bfloat16_tests {
    use super::test_values::{S32, S64, U64};
    use super::*;

    const ONE: u64 = 0x3f80;
    const NAN: u64 = 0x7fff;
    const INFINITY: u64 = 0x7f80;

    #[test]
    fn sums_round_once_to_nearest_even() {
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1.0) wins.
        assert_eq!(bf16_add(ONE, 0x3b80), ONE);
        // 1 + 2^-7 + 2^-8 is halfway to 1 + 2^-6: the even 0x3f82 wins.
        assert_eq!(bf16_add(0x3f81, 0x3b80), 0x3f82);
        assert_eq!(bf16_sub(0x3f81, 0xbb80), 0x3f82);
        // 256 + 1: the step is 2 there, a tie, to 256 (even).
        assert_eq!(bf16_add(0x4380, ONE), 0x4380);
        // Far apart: 1 + 2^-133 is 1.
        assert_eq!(bf16_add(ONE, 0x0001), ONE);
        assert_eq!(bf16_sub(ONE, 0x0001), ONE);
        // The largest finite value plus half its step ties to infinity
        // (0x7f7f is odd); a quarter step less stays finite.
        assert_eq!(bf16_add(0x7f7f, 0x7b00), INFINITY);
        assert_eq!(bf16_add(0x7f7f, 0x7a80), 0x7f7f);
        assert_eq!(bf16_sub(0xff7f, 0x7b00), 0xff80);
        // Subnormals are multiples of 2^-133: exact sums, and the largest
        // subnormal plus the smallest is the smallest normal.
        assert_eq!(bf16_add(0x0001, 0x0001), 0x0002);
        assert_eq!(bf16_add(0x007f, 0x0001), 0x0080);
        assert_eq!(bf16_sub(0x0080, 0x0001), 0x007f);
        // Signed zeros: -0 + -0 = -0, every other exact zero sum is +0.
        assert_eq!(bf16_add(0x8000, 0x8000), 0x8000);
        assert_eq!(bf16_add(0x8000, 0x0000), 0x0000);
        assert_eq!(bf16_add(ONE, 0xbf80), 0x0000);
        assert_eq!(bf16_sub(0x8000, 0x0000), 0x8000);
        assert_eq!(bf16_sub(0x0000, 0x0000), 0x0000);
        // Infinities and NaNs: the canonical NaN 0x7fff.
        assert_eq!(bf16_add(INFINITY, 0xff80), NAN);
        assert_eq!(bf16_sub(INFINITY, INFINITY), NAN);
        assert_eq!(bf16_add(INFINITY, 0xff7f), INFINITY);
        assert_eq!(bf16_add(0x7fc0, ONE), NAN);
        assert_eq!(bf16_add(ONE, 0x7f81), NAN);
        assert_eq!(bf16_sub(0xffc0, ONE), NAN);
    }

    #[test]
    fn products_round_once_to_nearest_even() {
        // (1 + 2^-4)^2 = 1 + 2^-3 + 2^-8, a tie between 0x3f90 and 0x3f91.
        assert_eq!(bf16_mul(0x3f88, 0x3f88), 0x3f90);
        // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 rounds down to 1 + 2^-6.
        assert_eq!(bf16_mul(0x3f81, 0x3f81), 0x3f82);
        // Into the subnormals: 2^-133 * 0.5 ties to +0 (even), and to -0
        // with a sign; 2^-133 * 0.75 rounds up; 3 * 2^-134 ties to 2 units.
        assert_eq!(bf16_mul(0x0001, 0x3f00), 0x0000);
        assert_eq!(bf16_mul(0x8001, 0x3f00), 0x8000);
        assert_eq!(bf16_mul(0x0001, 0x3f40), 0x0001);
        assert_eq!(bf16_mul(0x0003, 0x3f00), 0x0002);
        // 2^-100 * 2^-100 is far below every subnormal.
        assert_eq!(bf16_mul(0x0d80, 0x0d80), 0x0000);
        assert_eq!(bf16_mul(0x0d80, 0x8d80), 0x8000);
        // Overflow, and the products of infinity.
        assert_eq!(bf16_mul(0x7f7f, 0x4000), INFINITY);
        assert_eq!(bf16_mul(0x7f7f, 0xc000), 0xff80);
        assert_eq!(bf16_mul(INFINITY, 0x8001), 0xff80);
        assert_eq!(bf16_mul(INFINITY, 0x0000), NAN);
        assert_eq!(bf16_mul(0x8000, ONE), 0x8000);
        assert_eq!(bf16_mul(0x7f81, ONE), NAN);
    }

    #[test]
    fn fused_multiply_add_rounds_once() {
        // The product 1 + 2^-3 + 2^-8 is a tie; 2^-100 (0x0d80) added breaks
        // it upward and -2^-100 downward. Rounding a*b + c to f64 first
        // loses the 2^-100 and then rounds the tie to even: wrong.
        assert_eq!(bf16_fma(0x3f88, 0x3f88, 0x0d80), 0x3f91);
        assert_eq!(bf16_fma(0x3f88, 0x3f88, 0x8d80), 0x3f90);
        assert_eq!(bf16_fma(0x3f88, 0x3f88, 0x0000), 0x3f90);
        let naive = 1.0625f64.mul_add(1.0625, 2f64.powi(-100));
        assert_eq!(f64_to_bf16(naive), 0x3f90);
        // 1.75 * (37 / 64) = 1 + 3 * 2^-8, the tie between 0x3f81 (odd) and
        // 0x3f82 (even): alone it goes up, and -2^-100 added keeps it down.
        assert_eq!(bf16_mul(0x3fe0, 0x3f14), 0x3f82);
        assert_eq!(bf16_fma(0x3fe0, 0x3f14, 0x8d80), 0x3f81);
        assert_eq!(bf16_fma(0x3fe0, 0x3f14, 0x0d80), 0x3f82);
        // fma keeps what mul rounds away: (1 + 2^-7)^2 - (1 + 2^-6) = 2^-14.
        assert_eq!(bf16_fma(0x3f81, 0x3f81, 0xbf82), 0x3880);
        // A tiny product beside a large addend, and the reverse.
        assert_eq!(bf16_fma(0x0001, 0x0001, ONE), ONE);
        assert_eq!(bf16_fma(0x7f7f, 0x7f7f, 0xff7f), INFINITY);
        // Signed zeros and special values.
        assert_eq!(bf16_fma(0x8000, ONE, 0x8000), 0x8000);
        assert_eq!(bf16_fma(0x8000, ONE, 0x0000), 0x0000);
        assert_eq!(bf16_fma(INFINITY, 0x0000, ONE), NAN);
        assert_eq!(bf16_fma(0x7f7f, 0x7f7f, 0xff80), 0xff80);
        assert_eq!(bf16_fma(INFINITY, ONE, 0xff80), NAN);
        assert_eq!(bf16_fma(ONE, ONE, 0x7fc0), NAN);
    }

    #[test]
    fn relu_makes_negative_results_positive_zero() {
        assert_eq!(bf16_fma_relu(0xbf80, ONE, 0x0000), 0x0000);
        assert_eq!(bf16_fma_relu(0x8000, ONE, 0x8000), 0x0000);
        assert_eq!(bf16_fma_relu(ONE, ONE, ONE), 0x4000);
        assert_eq!(bf16_fma_relu(INFINITY, 0x0000, ONE), NAN);
        assert_eq!(bf16_fma_relu(0xff80, ONE, ONE), 0x0000);
        assert_eq!(f16_fma_relu(0xbc00, 0x3c00, 0x0000), 0x0000);
        assert_eq!(f16_fma_relu(0x3c00, 0x3c00, 0x3c00), 0x4000);
        assert_eq!(f16_fma_relu(0x7c00, 0x0000, 0x3c00), 0x7fff);
    }

    #[test]
    fn signs_minimum_maximum_and_comparisons() {
        assert_eq!(bf16_neg(ONE), 0xbf80);
        assert_eq!(bf16_neg(0x0000), 0x8000);
        assert_eq!(bf16_neg(0xff80), INFINITY);
        assert_eq!(bf16_neg(0x7fc1), NAN);
        assert_eq!(bf16_abs(0xbf80), ONE);
        assert_eq!(bf16_abs(0x8000), 0x0000);
        assert_eq!(bf16_abs(0xffc0), NAN);
        // A NaN operand gives the other; -0 is below +0.
        assert_eq!(bf16_min(0x7fc0, ONE), ONE);
        assert_eq!(bf16_max(ONE, 0xff81), ONE);
        assert_eq!(bf16_min(0x7fc0, 0xffc0), NAN);
        assert_eq!(bf16_min(0x0000, 0x8000), 0x8000);
        assert_eq!(bf16_max(0x8000, 0x0000), 0x0000);
        assert_eq!(bf16_min(0x0001, 0x8001), 0x8001);
        assert_eq!(bf16_max(0xff80, 0x7f7f), 0x7f7f);
        // The `.NaN` forms give the canonical NaN instead.
        assert_eq!(bf16_min_nan(0x7fc0, ONE), NAN);
        assert_eq!(bf16_max_nan(ONE, 0xff81), NAN);
        assert_eq!(bf16_max_nan(ONE, 0x4000), 0x4000);
        assert_eq!(bf16_min_nan(0x0000, 0x8000), 0x8000);
        assert_eq!(f16_min_nan(0x7e00, 0x3c00), 0x7fff);
        assert_eq!(f16_max_nan(0x3c00, 0x4000), 0x4000);
        assert_eq!(f16_min_nan(0x3c00, 0x4000), 0x3c00);
        // Comparisons: -0 == +0, NaN unordered.
        assert!(bf16_compare(CmpOp::Lt, ONE, 0x4000));
        assert!(bf16_compare(CmpOp::Lt, 0xff80, 0x8001));
        assert!(bf16_compare(CmpOp::Eq, 0x0000, 0x8000));
        assert!(!bf16_compare(CmpOp::Ne, 0x7fc0, 0x7fc0));
        assert!(bf16_compare(CmpOp::Nan, 0x7fc0, ONE));
        assert!(bf16_compare(CmpOp::Ltu, 0x7fc0, ONE));
        assert!(!bf16_compare(CmpOp::Ge, 0x7fc0, ONE));
    }

    /// Every positive finite value of a format with `bits` patterns, and
    /// the points a quarter, a half and three quarters of the way to the
    /// next: each rounding lands where it must. Checks the general rounding
    /// against the nearest-even functions too.
    fn check_every_step(format: HalfFormat, largest: u16, value: impl Fn(u16) -> f64) {
        let nearest_even = |x: f64| match format {
            HalfFormat::F16 => f64_to_f16(x),
            HalfFormat::Bf16 => f64_to_bf16(x),
        };
        for bits in 0..largest {
            let (low, high) = (value(bits), value(bits + 1));
            for (quarters, nearest) in [(0, bits), (1, bits), (2, bits + (bits & 1)), (3, bits + 1)]
            {
                let point = low + (high - low) * f64::from(quarters) / 4.0;
                let up = if quarters == 0 { bits } else { bits + 1 };
                for (sign, x) in [(0, point), (0x8000, -point)] {
                    let round = |rounding| f64_to_half_rounded(x, format, rounding);
                    assert_eq!(round(Rounding::Rn), nearest | sign, "{x:e}");
                    assert_eq!(nearest_even(x), nearest | sign, "{x:e}");
                    assert_eq!(round(Rounding::Rz), bits | sign, "{x:e}");
                    let (down, upward) = if sign == 0 { (bits, up) } else { (up, bits) };
                    assert_eq!(round(Rounding::Rm), down | sign, "{x:e}");
                    assert_eq!(round(Rounding::Rp), upward | sign, "{x:e}");
                }
            }
        }
    }

    #[test]
    fn every_bfloat16_step_rounds_each_way() {
        check_every_step(HalfFormat::Bf16, 0x7f7f, |bits| {
            f64::from(bf16_to_f32(bits))
        });
    }

    #[test]
    fn every_half_step_rounds_each_way() {
        check_every_step(HalfFormat::F16, 0x7bff, |bits| f64::from(f16_to_f32(bits)));
    }

    #[test]
    fn directed_roundings_overflow_toward_their_direction() {
        let bf16 = |x: f64, rounding| f64_to_half_rounded(x, HalfFormat::Bf16, rounding);
        assert_eq!(bf16(1e39, Rounding::Rn), 0x7f80);
        assert_eq!(bf16(1e39, Rounding::Rz), 0x7f7f);
        assert_eq!(bf16(1e39, Rounding::Rm), 0x7f7f);
        assert_eq!(bf16(1e39, Rounding::Rp), 0x7f80);
        assert_eq!(bf16(-1e39, Rounding::Rz), 0xff7f);
        assert_eq!(bf16(-1e39, Rounding::Rm), 0xff80);
        assert_eq!(bf16(-1e39, Rounding::Rp), 0xff7f);
        // Infinity is exact: every rounding keeps it.
        assert_eq!(bf16(f64::INFINITY, Rounding::Rz), 0x7f80);
        assert_eq!(bf16(f64::NEG_INFINITY, Rounding::Rp), 0xff80);
        assert_eq!(bf16(f64::NAN, Rounding::Rz), 0x7fff);
        // Below the smallest subnormal: zero or the smallest subnormal.
        assert_eq!(bf16(1e-300, Rounding::Rp), 0x0001);
        assert_eq!(bf16(-1e-300, Rounding::Rm), 0x8001);
        assert_eq!(bf16(-1e-300, Rounding::Rz), 0x8000);
        assert_eq!(bf16(5e-324, Rounding::Rn), 0x0000);
        let f16 = |x: f64, rounding| f64_to_half_rounded(x, HalfFormat::F16, rounding);
        assert_eq!(f16(65519.0, Rounding::Rz), 0x7bff);
        assert_eq!(f16(65536.0, Rounding::Rz), 0x7bff);
        assert_eq!(f16(65536.0, Rounding::Rn), 0x7c00);
        assert_eq!(f16(-65536.0, Rounding::Rp), 0xfbff);
    }

    #[test]
    fn sums_rounded_to_odd_keep_the_side_of_the_exact_sum() {
        // Exact sums come back unchanged.
        assert_eq!(f64_add_to_odd(1.0, 2.0), 3.0);
        assert_eq!(f64_add_to_odd(-0.0, -0.0).to_bits(), (-0.0f64).to_bits());
        // 1 + 2^-60 is not an f64: the odd neighbour above 1 stands for it,
        // and 1 - 2^-60 the odd neighbour below.
        assert_eq!(f64_add_to_odd(1.0, 2f64.powi(-60)), 1.0 + f64::EPSILON);
        assert_eq!(
            f64_add_to_odd(1.0, -2f64.powi(-60)),
            1.0 - f64::EPSILON / 2.0
        );
        assert_eq!(f64_add_to_odd(-1.0, -2f64.powi(-60)), -1.0 - f64::EPSILON);
        // An odd nearest sum is already the rounding to odd.
        let odd = 1.0 + f64::EPSILON;
        assert_eq!(f64_add_to_odd(odd, 2f64.powi(-60)), odd);
        assert!(f64_add_to_odd(f64::INFINITY, f64::NEG_INFINITY).is_nan());
    }

    #[test]
    fn integers_round_to_odd_above_53_bits() {
        assert_eq!(int_to_f64_odd(0), 0.0);
        assert_eq!(int_to_f64_odd(-7), -7.0);
        assert_eq!(int_to_f64_odd(1 << 53), 2f64.powi(53));
        // 2^53 + 1 lies between 2^53 and 2^53 + 2; the odd one is 2^53 + 2.
        assert_eq!(int_to_f64_odd((1 << 53) + 1), 2f64.powi(53) + 2.0);
        assert_eq!(int_to_f64_odd(-(1 << 53) - 1), -(2f64.powi(53) + 2.0));
        assert_eq!(int_to_f64_odd(i128::from(u64::MAX)), 2f64.powi(64) - 2048.0);
    }

    #[test]
    fn conversions_to_bfloat16() {
        let from_int = |value: i64, ty: IntType, rounding| {
            convert_to_bf16(value as u64, Bf16Source::Int(ty), rounding, false)
        };
        assert_eq!(from_int(3, S32, Rounding::Rn), 0x4040);
        assert_eq!(from_int(-1, S32, Rounding::Rn), 0xbf80);
        // 257 is a tie between 256 and 258: even; toward zero 256, up 258.
        assert_eq!(from_int(257, S32, Rounding::Rn), 0x4380);
        assert_eq!(from_int(257, S32, Rounding::Rp), 0x4381);
        assert_eq!(from_int(-257, S32, Rounding::Rm), 0xc381);
        assert_eq!(from_int(-257, S32, Rounding::Rz), 0xc380);
        // 2^60 + 2^52 + 1 is just past the tie between 2^60 and 2^60 + 2^53:
        // up. As an f64 it would be the tie itself, and go down.
        let past_tie = (1i64 << 60) + (1 << 52) + 1;
        assert_eq!(from_int(past_tie, S64, Rounding::Rn), 0x5d81);
        assert_eq!(f64_to_bf16(past_tie as f64), 0x5d80);
        assert_eq!(from_int(i64::MIN, S64, Rounding::Rn), 0xdf00);
        assert_eq!(from_int(-1, U64, Rounding::Rn), 0x5f80);
        assert_eq!(from_int(-1, U64, Rounding::Rz), 0x5f7f);
        // Floats, rounded once in every mode; .sat clamps to [0, 1].
        let f32_bits_of = |x: f32| u64::from(x.to_bits());
        let from_f32 = |x: f32, rounding, saturate| {
            convert_to_bf16(
                f32_bits_of(x),
                Bf16Source::Float(FloatType::F32),
                rounding,
                saturate,
            )
        };
        let between = 1.0 + 2f32.powi(-8) + 2f32.powi(-20);
        assert_eq!(from_f32(between, Rounding::Rn, false), 0x3f81);
        assert_eq!(from_f32(between, Rounding::Rz, false), 0x3f80);
        assert_eq!(from_f32(-between, Rounding::Rm, false), 0xbf81);
        assert_eq!(from_f32(-between, Rounding::Rp, false), 0xbf80);
        assert_eq!(from_f32(1.5, Rounding::Rn, true), ONE);
        assert_eq!(from_f32(-3.0, Rounding::Rn, true), 0x0000);
        assert_eq!(from_f32(f32::NAN, Rounding::Rn, true), 0x0000);
        assert_eq!(from_f32(f32::NAN, Rounding::Rn, false), NAN);
        // From f64, one rounding: just past a tie goes up, where rounding
        // through f32 would make it the tie and go down.
        let past = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        let from_f64 = convert_to_bf16(
            past.to_bits(),
            Bf16Source::Float(FloatType::F64),
            Rounding::Rn,
            false,
        );
        assert_eq!(from_f64, 0x3f81);
        // A bfloat16 to an integral bfloat16 (`htrunc`, `hfloor`, ...).
        let integral =
            |bits: u64, rounding| convert_to_bf16(bits, Bf16Source::Bf16, rounding, false);
        assert_eq!(integral(0x4020, Rounding::Rni), 0x4000); // 2.5 to 2 (even)
        assert_eq!(integral(0x4060, Rounding::Rni), 0x4080); // 3.5 to 4 (even)
        assert_eq!(integral(0x4020, Rounding::Rpi), 0x4040);
        assert_eq!(integral(0xc020, Rounding::Rzi), 0xc000);
        assert_eq!(integral(0xc020, Rounding::Rmi), 0xc040);
        assert_eq!(integral(0xbf00, Rounding::Rzi), 0x8000); // -0.5 to -0
        assert_eq!(integral(0x7f7f, Rounding::Rni), 0x7f7f);
        assert_eq!(integral(0xff80, Rounding::Rzi), 0xff80);
        assert_eq!(integral(0x7fc0, Rounding::Rzi), NAN);
    }

    #[test]
    fn conversions_from_bfloat16_and_into_pairs() {
        let to_s32 = |bits: u64, rounding| {
            convert_from_bf16(bits, NumberType::Int(S32), Some(rounding), false)
        };
        assert_eq!(to_s32(0x4020, Rounding::Rni), 2);
        assert_eq!(to_s32(0x4020, Rounding::Rpi), 3);
        assert_eq!(to_s32(0xc020, Rounding::Rzi), (-2i32) as u32 as u64);
        assert_eq!(to_s32(0x7fc0, Rounding::Rni), 0);
        assert_eq!(to_s32(INFINITY, Rounding::Rzi), 0x7fff_ffff);
        assert_eq!(to_s32(0xff80, Rounding::Rzi), 0x8000_0000);
        let to_f32 = convert_from_bf16(0x3f81, NumberType::Float(FloatType::F32), None, false);
        assert_eq!(to_f32, u64::from((1.0f32 + 2f32.powi(-7)).to_bits()));
        let to_f64 = convert_from_bf16(0x0001, NumberType::Float(FloatType::F64), None, false);
        assert_eq!(f64::from_bits(to_f64), 2f64.powi(-133));
        // `a` goes to the upper half, `b` to the lower.
        let f32_bits_of = |x: f32| u64::from(x.to_bits());
        let (one, two) = (f32_bits_of(1.0), f32_bits_of(2.0));
        assert_eq!(
            convert_pair(one, two, HalfFormat::Bf16, Rounding::Rn),
            0x3f80_4000
        );
        assert_eq!(
            convert_pair(one, two, HalfFormat::F16, Rounding::Rn),
            0x3c00_4000
        );
        let between = f32_bits_of(1.0 + 2f32.powi(-8) + 2f32.powi(-20));
        let nan = f32_bits_of(f32::NAN);
        assert_eq!(
            convert_pair(between, nan, HalfFormat::Bf16, Rounding::Rz),
            0x3f80_7fff
        );
        assert_eq!(
            convert_pair(nan, between, HalfFormat::Bf16, Rounding::Rn),
            0x7fff_3f81
        );
        let big = f32_bits_of(1e5);
        assert_eq!(
            convert_pair(big, big, HalfFormat::F16, Rounding::Rz),
            0x7bff_7bff
        );
    }
}
