//! The arithmetic of the integer dot products, carry chains and narrow-float conversions, lane by
//! lane: `dp4a`/`dp2a` (PTX ISA 9.7.1.23/24), `mad24` (9.7.1.9), the
//! extended-precision arithmetic with the carry flag (9.7.2), `redux.sync`
//! on `.f32` (9.7.13.11) and `cvt` to `.tf32` and to and from the 8-bit
//! floats `.e4m3` and `.e5m2` (9.7.9.21), and the narrow-float forms of
//! [`narrow_float`]: `tanh.approx` (9.7.4.10/11), `ex2.approx` of the half
//! types (9.7.4.9), `min/max.xorsign.abs` (9.7.4.6, 9.7.3.8) and
//! `cvt.relu/.satfinite` to the half types (9.7.9.21). Where PTX leaves a result to the
//! implementation, it is what an H100 gives
//! (`programs/corpus/hardware/scalar/`, checked bit for bit by
//! `tests/scalar_hardware.rs`).

use warpsim_ir::{
    CarryOp, DotProductShape, Fp8Format, NarrowFloatFunction, Rounding, ScalarType, Tf32Rounding,
};

use crate::arith::{bf16_to_f32, f16_to_f32, f64_to_half_rounded, mul24, sign_extend};
use crate::program::HalfFormat;

/// `dp4a` and `dp2a`: `c` plus the products of the bytes (or of the
/// halfwords of `a` and two bytes of `b`), each sign-extended when its side
/// is signed, wrapping in 32 bits.
pub fn dot_product(
    shape: DotProductShape,
    a_signed: bool,
    b_signed: bool,
    a: u64,
    b: u64,
    c: u64,
) -> u64 {
    let element = |value: u64, index: u32, bits: u32, signed: bool| -> i64 {
        let field = (value >> (index * bits)) & ((1 << bits) - 1);
        if signed {
            sign_extend(field, bits as u8)
        } else {
            field as i64
        }
    };
    // At most four products of 16 by 8 bits: no i64 overflow.
    let sum: i64 = match shape {
        DotProductShape::FourBytes => (0..4)
            .map(|index| element(a, index, 8, a_signed) * element(b, index, 8, b_signed))
            .sum(),
        DotProductShape::TwoHalvesLow | DotProductShape::TwoHalvesHigh => {
            let first_byte = if shape == DotProductShape::TwoHalvesHigh {
                2
            } else {
                0
            };
            (0..2)
                .map(|index| {
                    element(a, index, 16, a_signed) * element(b, first_byte + index, 8, b_signed)
                })
                .sum()
        }
    };
    (c as i64).wrapping_add(sum) as u64 & 0xffff_ffff
}

/// `mad24.lo/.hi{.sat}`: the bits of `mul24` plus `c` in 32 bits; `.sat`
/// (only `.hi.s32`) clamps the exact sum to the `.s32` range.
pub fn mad24(a: u64, b: u64, c: u64, hi: bool, signed: bool, saturate: bool) -> u64 {
    let product = mul24(a, b, hi, signed);
    if saturate {
        let sum = i64::from(product as u32 as i32) + i64::from(c as u32 as i32);
        return sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u64 & 0xffff_ffff;
    }
    product.wrapping_add(c) & 0xffff_ffff
}

/// An extended-precision instruction: the result and the carry out (0 or
/// 1). The carry of a subtraction is that of `a + !b + carry_in` with the
/// carry in 1 for `sub.cc` (the flag is set when nothing is borrowed, as on
/// an H100: `subc` computes `a - b - (1 - CF)`).
#[allow(clippy::too_many_arguments)]
pub fn carry_arith(
    op: CarryOp,
    carry_in: Option<u64>,
    wide: bool,
    signed: bool,
    a: u64,
    b: u64,
    c: u64,
) -> (u64, u64) {
    let bits = if wide { 64 } else { 32 };
    let mask = if wide { u64::MAX } else { 0xffff_ffff };
    let (a, b, c) = (
        u128::from(a & mask),
        u128::from(b & mask),
        u128::from(c & mask),
    );
    let flag = u128::from(carry_in.unwrap_or(0) & 1);
    let sum = match op {
        CarryOp::Add => a + b + flag,
        CarryOp::Sub => {
            a + (!b & u128::from(mask)) + carry_in.map_or(1, |flag| u128::from(flag & 1))
        }
        CarryOp::MulAddLow | CarryOp::MulAddHigh => {
            let product = if signed {
                let extend = |value: u128| i128::from(sign_extend(value as u64, bits as u8));
                (extend(a) * extend(b)) as u128
            } else {
                a * b
            };
            let half = if op == CarryOp::MulAddHigh {
                (product >> bits) & u128::from(mask)
            } else {
                product & u128::from(mask)
            };
            half + c + flag
        }
    };
    ((sum & u128::from(mask)) as u64, (sum >> bits) as u64 & 1)
}

/// The canonical NaN of `.f32` results.
const F32_NAN: u32 = 0x7fff_ffff;

/// `redux.sync.min/.max{.abs}{.NaN}.f32` over the `values` of the lanes in
/// `members`: NaNs are skipped (the result is NaN only when every value is)
/// unless `nan`, when any NaN gives the canonical NaN; -0.0 orders below
/// +0.0.
pub fn redux_float(max: bool, abs: bool, nan: bool, members: u32, values: &[u64; 32]) -> u64 {
    let mut best: Option<u32> = None;
    let mut saw_nan = false;
    for (lane, &value) in values.iter().enumerate() {
        if members >> lane & 1 == 0 {
            continue;
        }
        let mut bits = value as u32;
        if abs {
            bits &= 0x7fff_ffff;
        }
        if f32::from_bits(bits).is_nan() {
            saw_nan = true;
            continue;
        }
        // Floats ordered as integers: flip the magnitude of the negatives.
        let key = |bits: u32| {
            if bits >> 31 != 0 {
                !bits
            } else {
                bits | 0x8000_0000
            }
        };
        best = Some(match best {
            Some(current) if (key(bits) > key(current)) == max => bits,
            Some(current) => current,
            None => bits,
        });
    }
    match best {
        Some(bits) if !(nan && saw_nan) => u64::from(bits),
        _ => u64::from(F32_NAN),
    }
}

/// `cvt` of the `.f32` in `bits` to `.tf32`: the upper 19 bits of a word,
/// the low 13 zero. What the H100 does beyond PTX's text: `.rna` adds half
/// a unit and truncates (a NaN is truncated, keeping its payload's upper
/// bits; a value that rounds past the largest finite one becomes infinite);
/// `.rna.satfinite` then takes one unit off an infinite or NaN result's
/// magnitude, giving the largest finite value for infinities and values
/// beyond it; `.rn` and `.rz` give the canonical NaN `0x7fffe000` for NaNs;
/// `.relu` gives +0.0 for negative values, -0.0 included. The `.satfinite`
/// forms of `.rn` and `.rz` (sm_100) clamp infinite results to the largest
/// finite value as PTX says, and keep the canonical NaN.
pub fn cvt_tf32(bits: u64, rounding: Tf32Rounding, satfinite: bool, relu: bool) -> u64 {
    const UNIT: u32 = 0x2000;
    const LOW: u32 = UNIT - 1;
    let x = bits as u32;
    let is_nan = f32::from_bits(x).is_nan();
    let result = match rounding {
        Tf32Rounding::NearestAway => {
            let rounded = if is_nan { x } else { x.wrapping_add(UNIT / 2) } & !LOW;
            if satfinite && rounded & 0x7f80_0000 == 0x7f80_0000 {
                rounded - UNIT
            } else {
                rounded
            }
        }
        Tf32Rounding::NearestEven | Tf32Rounding::Zero => {
            if is_nan {
                return 0x7fff_e000;
            }
            if relu && x >> 31 != 0 {
                return 0;
            }
            let truncated = x & !LOW;
            let low = x & LOW;
            let infinite = x & 0x7f80_0000 == 0x7f80_0000;
            let up = rounding == Tf32Rounding::NearestEven
                && !infinite
                && (low > UNIT / 2 || (low == UNIT / 2 && truncated & UNIT != 0));
            let rounded = if up { truncated + UNIT } else { truncated };
            if satfinite && rounded & 0x7fff_ffff == 0x7f80_0000 {
                rounded - UNIT
            } else {
                rounded
            }
        }
    };
    u64::from(result)
}

/// The shape of an 8-bit float format.
struct Fp8Shape {
    mantissa_bits: u32,
    /// The exponent of the smallest normal value.
    min_exponent: i32,
    /// The largest finite value's bits (without sign).
    max_finite: u8,
}

fn fp8_shape(format: Fp8Format) -> Fp8Shape {
    match format {
        // 1.75 * 2^8 = 448; S.1111.111 is NaN and there is no infinity.
        Fp8Format::E4m3 => Fp8Shape {
            mantissa_bits: 3,
            min_exponent: -6,
            max_finite: 0x7e,
        },
        // 1.75 * 2^15 = 57344.
        Fp8Format::E5m2 => Fp8Shape {
            mantissa_bits: 2,
            min_exponent: -14,
            max_finite: 0x7b,
        },
    }
}

/// The NaN that conversions to both 8-bit formats give.
const FP8_NAN: u8 = 0x7f;

/// `cvt.rn.satfinite{.relu}` of one value to an 8-bit float: `negative`,
/// `magnitude * 2^exponent` (or infinite, or NaN). Rounded once to nearest
/// even; beyond the largest finite value (infinities included) it is that
/// value; with `.relu` negative values (and -0.0) are +0.0; NaN is `0x7f`.
fn to_fp8(
    format: Fp8Format,
    relu: bool,
    negative: bool,
    value: Option<(u64, i32)>,
    infinite: bool,
) -> u8 {
    let shape = fp8_shape(format);
    let Some((magnitude, exponent)) = value.or(if infinite { Some((1, 1000)) } else { None })
    else {
        return FP8_NAN;
    };
    if relu && negative {
        return 0;
    }
    let sign = if negative { 0x80 } else { 0 };
    if magnitude == 0 {
        return sign;
    }
    // The value's leading bit is at 2^top.
    let top = exponent + 63 - magnitude.leading_zeros() as i32;
    let max_finite = sign | shape.max_finite;
    if top > 20 {
        return max_finite;
    }
    // The quantum of the format at this magnitude.
    let quantum = top.max(shape.min_exponent) - shape.mantissa_bits as i32;
    let shift = quantum - exponent;
    let units = if shift <= 0 {
        magnitude << (-shift)
    } else if shift >= 64 {
        0
    } else {
        let kept = magnitude >> shift;
        let rest = magnitude & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    // Encode units * 2^quantum: subnormal while below the implicit bit.
    let implicit = 1u64 << shape.mantissa_bits;
    let (biased, mantissa) = if units < implicit {
        (0, units)
    } else {
        let mut units = units;
        let mut quantum = quantum;
        if units >= 2 * implicit {
            units >>= 1;
            quantum += 1;
        }
        let biased = quantum + shape.mantissa_bits as i32 - shape.min_exponent + 1;
        (biased as u64, units - implicit)
    };
    let bits = (biased << shape.mantissa_bits) | mantissa;
    if bits > u64::from(shape.max_finite) {
        return max_finite;
    }
    sign | bits as u8
}

/// An `.f32` as sign, `magnitude * 2^exponent` (`None` for infinities and
/// NaNs) and whether it is infinite.
fn f32_parts(bits: u32) -> (bool, Option<(u64, i32)>, bool) {
    let negative = bits >> 31 != 0;
    let field = (bits >> 23) & 0xff;
    let fraction = u64::from(bits & 0x7f_ffff);
    match field {
        0xff => (negative, None, fraction == 0),
        0 => (negative, Some((fraction, -149)), false),
        _ => (
            negative,
            Some((fraction | 1 << 23, field as i32 - 150)),
            false,
        ),
    }
}

/// An `.f16` as [`f32_parts`] does.
fn f16_parts(bits: u16) -> (bool, Option<(u64, i32)>, bool) {
    let negative = bits >> 15 != 0;
    let field = (bits >> 10) & 0x1f;
    let fraction = u64::from(bits & 0x3ff);
    match field {
        0x1f => (negative, None, fraction == 0),
        0 => (negative, Some((fraction, -24)), false),
        _ => (
            negative,
            Some((fraction | 1 << 10, i32::from(field) - 25)),
            false,
        ),
    }
}

/// `cvt.rn.satfinite{.relu}.fmt.f32 d, a, b`: `a` to the upper byte.
pub fn fp8_pair_from_f32(format: Fp8Format, relu: bool, a: u64, b: u64) -> u64 {
    let convert = |bits: u64| {
        let (negative, value, infinite) = f32_parts(bits as u32);
        u64::from(to_fp8(format, relu, negative, value, infinite))
    };
    convert(a) << 8 | convert(b)
}

/// `cvt.rn.satfinite{.relu}.fmt.f16x2 d, a`: the upper half to the upper byte.
pub fn fp8_pair_from_f16x2(format: Fp8Format, relu: bool, a: u64) -> u64 {
    let convert = |bits: u64| {
        let (negative, value, infinite) = f16_parts(bits as u16);
        u64::from(to_fp8(format, relu, negative, value, infinite))
    };
    convert(a >> 16) << 8 | convert(a & 0xffff)
}

/// `cvt.rn{.relu}.f16x2.fmt d, a`: each byte to the half of the same
/// position, exactly (every 8-bit float is a half); NaN is the canonical
/// half NaN `0x7fff`, and with `.relu` negative values and -0.0 are +0.0.
pub fn f16x2_from_fp8_pair(format: Fp8Format, relu: bool, a: u64) -> u64 {
    let shape = fp8_shape(format);
    let convert = |byte: u64| -> u64 {
        let byte = byte as u8;
        let negative = byte >> 7 != 0;
        let magnitude = byte & 0x7f;
        let is_nan = match format {
            Fp8Format::E4m3 => magnitude == 0x7f,
            Fp8Format::E5m2 => magnitude > 0x7c,
        };
        if is_nan {
            return 0x7fff;
        }
        if relu && negative {
            return 0;
        }
        let sign = if negative { 0x8000 } else { 0 };
        let half = match format {
            // e5m2 is the upper byte of an f16.
            Fp8Format::E5m2 => u64::from(magnitude) << 8,
            Fp8Format::E4m3 => {
                let field = u64::from(magnitude >> shape.mantissa_bits);
                let fraction = u64::from(magnitude) & 7;
                if field == 0 {
                    // fraction * 2^-9, exactly an f16 (normal when >= 2^-14).
                    if fraction == 0 {
                        0
                    } else {
                        let top = 63 - fraction.leading_zeros() as u64; // 0..=2
                        let exponent = top + 15 - 9; // biased f16 exponent
                        let rest = fraction - (1 << top);
                        exponent << 10 | rest << (10 - top)
                    }
                } else {
                    // (1.fff) * 2^(field - 7): f16 field field - 7 + 15.
                    (field + 8) << 10 | fraction << 7
                }
            }
        };
        sign | half
    };
    convert(a >> 8 & 0xff) << 16 | convert(a & 0xff)
}

/// `cvt.rn/.rz.relu.bf16.f32`: the float rounded to bfloat16 (to nearest
/// even, or toward zero), then a negative result (-0.0 included) is +0.0
/// and a NaN the canonical `0x7fff`.
pub fn bf16_relu_from_f32(bits: u64, toward_zero: bool) -> u64 {
    let x = bits as u32;
    if f32::from_bits(x).is_nan() {
        return 0x7fff;
    }
    if x >> 31 != 0 {
        return 0;
    }
    let upper = x >> 16;
    let lower = x & 0xffff;
    let up = !toward_zero
        && x & 0x7f80_0000 != 0x7f80_0000
        && (lower > 0x8000 || (lower == 0x8000 && upper & 1 == 1));
    u64::from(if up { upper + 1 } else { upper })
}

/// The element type of [`narrow_float`]: one `.f32`, one half or bfloat16
/// in the low 16 bits, or a pair of them (element 0 in the low 16 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NarrowElement {
    Single,
    Half { pair: bool },
    Bfloat { pair: bool },
}

impl NarrowElement {
    /// The element type of an instruction of type `ty`; the verifier lets
    /// only `.f32` and the four half types through.
    pub fn of(ty: ScalarType) -> NarrowElement {
        match ty {
            ScalarType::F16 => NarrowElement::Half { pair: false },
            ScalarType::F16x2 => NarrowElement::Half { pair: true },
            ScalarType::Bf16 => NarrowElement::Bfloat { pair: false },
            ScalarType::Bf16x2 => NarrowElement::Bfloat { pair: true },
            _ => NarrowElement::Single,
        }
    }
}

/// One 16-bit or 32-bit float of a [`NarrowElement`]: its format (`None`
/// for `.f32`) and how to read it.
#[derive(Clone, Copy)]
struct Scalar {
    half: Option<HalfFormat>,
}

impl Scalar {
    fn value(self, bits: u64) -> f64 {
        match self.half {
            Some(HalfFormat::F16) => f64::from(f16_to_f32(bits as u16)),
            Some(HalfFormat::Bf16) => f64::from(bf16_to_f32(bits as u16)),
            None => f64::from(f32::from_bits(bits as u32)),
        }
    }

    fn sign_bit(self) -> u64 {
        if self.half.is_some() {
            0x8000
        } else {
            0x8000_0000
        }
    }

    fn canonical_nan(self) -> u64 {
        if self.half.is_some() {
            0x7fff
        } else {
            0x7fff_ffff
        }
    }

    /// The exponent field's mask and the largest finite magnitude's bits.
    fn exponent_mask_and_largest(self) -> (u64, u64) {
        match self.half {
            Some(HalfFormat::F16) => (0x7c00, 0x7bff),
            Some(HalfFormat::Bf16) => (0x7f80, 0x7f7f),
            None => (0x7f80_0000, 0x7f7f_ffff),
        }
    }

    /// `value` rounded once to this format; a NaN is the canonical NaN.
    fn round(self, value: f64, rounding: Rounding) -> u64 {
        match self.half {
            Some(format) => u64::from(f64_to_half_rounded(value, format, rounding)),
            None if value.is_nan() => self.canonical_nan(),
            // Only the `.rn` forms reach here (`tanh.approx.f32`): `as`
            // rounds to nearest even.
            None => u64::from((value as f32).to_bits()),
        }
    }
}

/// `tanh.approx`, `ex2.approx{.ftz}`, `min/max{.NaN}.xorsign.abs` and
/// `cvt.rn/.rz{.relu}{.satfinite}` from `.f32` on one lane, elementwise on
/// pairs. `b` is the second source (for `cvt` to a pair, `a` goes to the
/// upper half and `b` to the lower, as in `cvt.rn.f16x2.f32`).
///
/// The approximations are computed correctly rounded: the `f64` value of
/// the function, whose error is far below half a unit of these formats,
/// rounded once to nearest. The hardware's `MUFU` approximations may be a
/// unit off in places (PTX documents only a maximum error); warpsim gives
/// the value the approximation approximates.
pub fn narrow_float(function: NarrowFloatFunction, element: NarrowElement, a: u64, b: u64) -> u64 {
    let (scalar, pair) = match element {
        NarrowElement::Single => (Scalar { half: None }, false),
        NarrowElement::Half { pair } => (
            Scalar {
                half: Some(HalfFormat::F16),
            },
            pair,
        ),
        NarrowElement::Bfloat { pair } => (
            Scalar {
                half: Some(HalfFormat::Bf16),
            },
            pair,
        ),
    };
    if let NarrowFloatFunction::FromF32 {
        toward_zero,
        relu,
        satfinite,
    } = function
    {
        let convert = |bits: u64| from_f32(scalar, bits, toward_zero, relu, satfinite);
        return if pair {
            convert(a) << 16 | convert(b)
        } else {
            convert(a)
        };
    }
    let apply = |x: u64, y: u64| match function {
        NarrowFloatFunction::Tanh => scalar.round(scalar.value(x).tanh(), Rounding::Rn),
        NarrowFloatFunction::Ex2 => ex2(scalar, x),
        NarrowFloatFunction::MinXorSignAbs { nan } => xorsign_abs(scalar, false, nan, x, y),
        NarrowFloatFunction::MaxXorSignAbs { nan } => xorsign_abs(scalar, true, nan, x, y),
        NarrowFloatFunction::FromF32 { .. } => unreachable!("converted above"),
    };
    if pair {
        apply(a & 0xffff, b & 0xffff) | apply(a >> 16 & 0xffff, b >> 16 & 0xffff) << 16
    } else {
        apply(a, b)
    }
}

/// `ex2.approx.f16` and `ex2.approx.ftz.bf16`: the bfloat16 form reads a
/// subnormal operand as zero and gives +0.0 for a subnormal result.
fn ex2(scalar: Scalar, x: u64) -> u64 {
    let flush = scalar.half == Some(HalfFormat::Bf16);
    let (exponent_mask, _) = scalar.exponent_mask_and_largest();
    let value = if flush && x & exponent_mask == 0 {
        0.0
    } else {
        scalar.value(x)
    };
    let result = scalar.round(value.exp2(), Rounding::Rn);
    if flush && result & exponent_mask == 0 {
        0
    } else {
        result
    }
}

/// `min/max{.NaN}.xorsign.abs`: the operand of the smaller (larger)
/// magnitude, with the sign bit `sign(a) ^ sign(b)`. A NaN operand is left
/// out as in `min`/`max` (the other one's magnitude is the result, still
/// signed by the exclusive or) unless `.NaN` is given or both are NaN: then
/// the result is the canonical NaN.
fn xorsign_abs(scalar: Scalar, max: bool, nan: bool, a: u64, b: u64) -> u64 {
    let sign_bit = scalar.sign_bit();
    let sign = (a ^ b) & sign_bit;
    let (a_magnitude, b_magnitude) = (a & !sign_bit, b & !sign_bit);
    let (a_value, b_value) = (scalar.value(a_magnitude), scalar.value(b_magnitude));
    let chosen = match (a_value.is_nan(), b_value.is_nan()) {
        (true, true) => return scalar.canonical_nan(),
        (true, false) | (false, true) if nan => return scalar.canonical_nan(),
        (true, false) => b_magnitude,
        (false, true) => a_magnitude,
        // Both magnitudes are non-negative, so the zeros are both +0.0.
        (false, false) if (b_value > a_value) == max => b_magnitude,
        (false, false) => a_magnitude,
    };
    chosen | sign
}

/// `cvt.rn/.rz{.relu}{.satfinite}.ty.f32` of one `.f32` to a half type.
fn from_f32(scalar: Scalar, bits: u64, toward_zero: bool, relu: bool, satfinite: bool) -> u64 {
    let value = f64::from(f32::from_bits(bits as u32));
    if value.is_nan() {
        return scalar.canonical_nan();
    }
    if relu && value.is_sign_negative() {
        return 0;
    }
    let rounding = if toward_zero {
        Rounding::Rz
    } else {
        Rounding::Rn
    };
    let result = scalar.round(value, rounding);
    let (exponent_mask, largest) = scalar.exponent_mask_and_largest();
    let sign = result & scalar.sign_bit();
    if satfinite && result & !scalar.sign_bit() == exponent_mask {
        // Infinite: the largest finite value of the same sign.
        sign | largest
    } else {
        result
    }
}
