//! The float instructions of machine-learning kernels on half types (PTX
//! ISA 9.7.4.9-11, 9.7.4.6, 9.7.3.8, 9.7.9.21): `tanh.approx` of `.f32`,
//! `.f16`, `.bf16` and their pairs and `ex2.approx.f16`/`.ftz.bf16` over
//! every 16-bit pattern, against a reference computed here in `f64` and
//! rounded once by this file's own rounding (warpsim computes these
//! approximations correctly rounded; the test checks that every input is far
//! enough from a rounding tie for the `f64` value to decide it);
//! `min/max{.NaN}.xorsign.abs` and `cvt.rn/.rz{.relu}{.satfinite}` to the
//! half types on values worked out by hand.

mod common;
use common::*;

/// Thread `i` reads the word `IN[i]` (two 16-bit patterns) and writes four
/// words: `tanh.approx.f16x2`, `tanh.approx.bf16x2`, `ex2.approx.f16x2`
/// and `ex2.approx.ftz.bf16x2` of it; then the single forms of its low half
/// (four halfwords in two words).
const TRANSCENDENTALS: &str = r#"
.kernel transcendentals(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %c;
    .reg .b32 %v, %r;
    .reg .b16 %low, %h;
    .reg .u64 %pi, %po, %off;
    mov.u32 %t, %ntid.x;
    mov.u32 %c, %ctaid.x;
    mul.lo.u32 %t, %t, %c;
    mov.u32 %c, %tid.x;
    add.u32 %t, %t, %c;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 24;
    add.u64 %po, %po, %off;
    tanh.approx.f16x2 %r, %v;          st.global.u32 [%po], %r;
    tanh.approx.bf16x2 %r, %v;         st.global.u32 [%po+4], %r;
    ex2.approx.f16x2 %r, %v;           st.global.u32 [%po+8], %r;
    ex2.approx.ftz.bf16x2 %r, %v;      st.global.u32 [%po+12], %r;
    cvt.u16.u32 %low, %v;
    tanh.approx.f16 %h, %low;          st.global.u16 [%po+16], %h;
    tanh.approx.bf16 %h, %low;         st.global.u16 [%po+18], %h;
    ex2.approx.f16 %h, %low;           st.global.u16 [%po+20], %h;
    ex2.approx.ftz.bf16 %h, %low;      st.global.u16 [%po+22], %h;
}
"#;

/// A binary format: stored fraction bits, exponent bits.
#[derive(Clone, Copy, Debug)]
struct Format {
    fraction_bits: i32,
    exponent_bits: i32,
}

const HALF: Format = Format {
    fraction_bits: 10,
    exponent_bits: 5,
};
const BFLOAT: Format = Format {
    fraction_bits: 7,
    exponent_bits: 8,
};
const SINGLE: Format = Format {
    fraction_bits: 23,
    exponent_bits: 8,
};

impl Format {
    fn bias(self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }

    fn sign_bit(self) -> u32 {
        1 << (self.fraction_bits + self.exponent_bits)
    }

    fn canonical_nan(self) -> u32 {
        self.sign_bit() - 1
    }

    fn infinity(self) -> u32 {
        ((1 << self.exponent_bits) - 1) << self.fraction_bits
    }

    /// The value of `bits`, exactly (every value of these formats is an `f64`).
    fn decode(self, bits: u32) -> f64 {
        let fraction = bits & ((1 << self.fraction_bits) - 1);
        let exponent = (bits >> self.fraction_bits) & ((1 << self.exponent_bits) - 1);
        let magnitude = if exponent == (1 << self.exponent_bits) - 1 {
            if fraction == 0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else if exponent == 0 {
            f64::from(fraction) * 2f64.powi(1 - self.bias() - self.fraction_bits)
        } else {
            (1.0 + f64::from(fraction) * 2f64.powi(-self.fraction_bits))
                * 2f64.powi(exponent as i32 - self.bias())
        };
        if bits & self.sign_bit() != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// `value` rounded to nearest even, with the distance of its scaled
    /// magnitude from the nearest tie (in units of the result's last place)
    /// so that the caller can tell a decided rounding from a doubtful one.
    fn round(self, value: f64) -> (u32, f64) {
        if value.is_nan() {
            return (self.canonical_nan(), 1.0);
        }
        let sign = if value.is_sign_negative() {
            self.sign_bit()
        } else {
            0
        };
        let magnitude = value.abs();
        if magnitude == 0.0 {
            return (sign, 1.0);
        }
        if magnitude.is_infinite() {
            return (sign | self.infinity(), 1.0);
        }
        let exponent = (((magnitude.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(1 - self.bias());
        let spacing = 2f64.powi(exponent - self.fraction_bits);
        let units = magnitude / spacing;
        let below = units.floor();
        let fraction = units - below;
        let up = fraction > 0.5 || (fraction == 0.5 && below % 2.0 == 1.0);
        let rounded = if up { below + 1.0 } else { below } * spacing;
        let margin = (fraction - 0.5).abs();
        let largest = (2.0 - 2f64.powi(-self.fraction_bits)) * 2f64.powi(self.bias());
        if rounded > largest {
            return (sign | self.infinity(), margin);
        }
        // Encode the rounded magnitude.
        let rounded_exponent = ((rounded.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let bits = if rounded_exponent < 1 - self.bias() {
            (rounded / 2f64.powi(1 - self.bias() - self.fraction_bits)) as u32
        } else {
            let fraction =
                (rounded / 2f64.powi(rounded_exponent) - 1.0) * 2f64.powi(self.fraction_bits);
            ((rounded_exponent + self.bias()) as u32) << self.fraction_bits | fraction as u32
        };
        (sign | bits, margin)
    }
}

/// The functions approximated.
#[derive(Clone, Copy, PartialEq)]
enum Function {
    Tanh,
    Exp2,
}

/// The reference of one transcendental: the rounded `f64` value, and
/// whether the rounding was decided (the `f64` value, accurate to a few
/// units in 2^-52, is at least 2^-30 of a last place away from a tie, or
/// the value is exact: an exact tie, such as 2^-25 halfway between 0 and
/// the smallest half subnormal, goes to even as any rounding does).
fn reference(format: Format, bits: u32, function: Function, flush: bool) -> (u32, bool) {
    let exponent_mask = format.infinity();
    let input = if flush && bits & exponent_mask == 0 {
        0.0
    } else {
        format.decode(bits)
    };
    let exact = match function {
        Function::Tanh => input.tanh(),
        Function::Exp2 => input.exp2(),
    };
    let (result, margin) = format.round(exact);
    // 2 to an integer power is exact in `f64`, ties included.
    let exact_power = function == Function::Exp2 && input.fract() == 0.0;
    let decided = margin > 2f64.powi(-30) || margin == 0.5 || exact_power;
    // `.ftz`: a subnormal result is +0.0.
    let result = if flush && result & exponent_mask == 0 {
        0
    } else {
        result
    };
    (result, decided)
}

#[test]
fn tanh_and_ex2_on_every_half_and_bfloat16() {
    let words: Vec<u32> = (0..32768u32).map(|i| i | (i + 32768) << 16).collect();
    let out = run_kernel(
        TRANSCENDENTALS,
        128,
        256,
        &[Arg::u32s(&words), Arg::zeros(words.len() * 6)],
    )
    .ok()
    .u32s(1);
    let (tanh, exp2) = (Function::Tanh, Function::Exp2);
    let cases: [(Format, Function, bool, &str); 4] = [
        (HALF, tanh, false, "tanh.approx.f16x2"),
        (BFLOAT, tanh, false, "tanh.approx.bf16x2"),
        (HALF, exp2, false, "ex2.approx.f16x2"),
        (BFLOAT, exp2, true, "ex2.approx.ftz.bf16x2"),
    ];
    let mut undecided = 0;
    for (index, &word) in words.iter().enumerate() {
        let row = &out[6 * index..6 * index + 6];
        for (position, &(format, function, flush, name)) in cases.iter().enumerate() {
            let mut want = 0;
            for half in 0..2 {
                let bits = word >> (16 * half) & 0xffff;
                let (result, decided) = reference(format, bits, function, flush);
                undecided += usize::from(!decided);
                want |= result << (16 * half);
            }
            assert_eq!(row[position], want, "{name} of {word:#010x}");
            let single = (row[4 + position / 2] >> (16 * (position % 2))) & 0xffff;
            assert_eq!(
                single,
                want & 0xffff,
                "the single form of {name} of {word:#06x}"
            );
        }
    }
    assert_eq!(
        undecided, 0,
        "inputs whose rounding the f64 value does not decide"
    );
    // Hand-worked values, against a reference that erred the machine's way.
    let at = |pattern: u32| &out[6 * (pattern as usize % 32768)..][..6];
    // ex2(1.0) = 2.0 in both formats; ex2(-126) = 2^-126 is the smallest
    // normal bfloat16 (0x0080), ex2(-127) a subnormal that .ftz makes +0.
    assert_eq!(at(0x3c00)[2] & 0xffff, 0x4000);
    assert_eq!(reference(BFLOAT, 0xc2fc, exp2, true).0, 0x0080);
    assert_eq!(reference(BFLOAT, 0xc2fe, exp2, true).0, 0x0000);
    // tanh(-0) = -0; tanh(+inf) = 1.0; tanh of a NaN is the canonical NaN.
    assert_eq!(at(0x0000)[0] >> 16, 0x8000);
    assert_eq!(at(0x7c00)[0] & 0xffff, 0x3c00);
    assert_eq!(at(0x7e00)[0] & 0xffff, 0x7fff);
}

#[test]
fn tanh_approx_of_floats() {
    const SOURCE: &str = r#"
.kernel tanh_f32(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %c;
    .reg .f32 %x, %y;
    .reg .u64 %pi, %po, %off;
    mov.u32 %t, %ntid.x;
    mov.u32 %c, %ctaid.x;
    mul.lo.u32 %t, %t, %c;
    mov.u32 %c, %tid.x;
    add.u32 %t, %t, %c;
    ld.param.u64 %pi, [IN];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    add.u64 %po, %po, %off;
    ld.global.f32 %x, [%pi];
    tanh.approx.f32 %y, %x;
    st.global.f32 [%po], %y;
}
"#;
    // Every exponent field with three mantissas, both signs, and a few
    // more values: the f32 subnormals, 1, 10 and a NaN.
    let mut inputs: Vec<u32> = (0..256u32)
        .flat_map(|exponent| [0u32, 0x2a_aaab, 0x7f_ffff].map(|m| exponent << 23 | m))
        .flat_map(|bits| [bits, bits | 0x8000_0000])
        .collect();
    inputs.extend([
        0x0000_0001,
        0x8000_0001,
        0x3f80_0000,
        0x4120_0000,
        0x7fc0_0000,
    ]);
    inputs.resize(inputs.len().div_ceil(64) * 64, 0);
    let out = run_kernel(
        SOURCE,
        (inputs.len() / 64) as u32,
        64,
        &[Arg::u32s(&inputs), Arg::zeros(inputs.len())],
    )
    .ok()
    .u32s(1);
    for (&input, &got) in inputs.iter().zip(&out) {
        let (want, decided) = reference(SINGLE, input, Function::Tanh, false);
        assert!(decided, "tanh of {input:#010x} is too near a tie");
        assert_eq!(got, want, "tanh.approx.f32 of {input:#010x}");
    }
    // tanh(1) = 0.76159415595576..., nearest f32 0x3f42f7d6.
    assert_eq!(
        out[inputs.iter().position(|&x| x == 0x3f80_0000).unwrap()],
        0x3f42_f7d6
    );
    // A NaN gives the canonical NaN; -inf gives -1.
    assert_eq!(
        out[inputs.iter().position(|&x| x == 0x7fc0_0000).unwrap()],
        0x7fff_ffff
    );
    assert_eq!(
        out[inputs.iter().position(|&x| x == 0xff80_0000).unwrap()],
        0xbf80_0000
    );
}

/// `min/max{.NaN}.xorsign.abs` and `cvt{.relu}{.satfinite}` on one lane
/// per case: `OUT[i] = op(A[i], B[i])`, the instruction chosen by the
/// block (each block runs one instruction over 32 cases).
fn run_binary(instruction: &str, a: &[u32], b: &[u32], ty: &str) -> Vec<u32> {
    let source = format!(
        r#"
.kernel binary(.param .u64 A, .param .u64 B, .param .u64 OUT)
{{
    .reg .u32 %t;
    .reg .b32 %x, %y, %r;
    .reg .{ty} %xs, %ys, %rs;
    .reg .u64 %pa, %pb, %po, %off;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    ld.param.u64 %pb, [B];
    ld.param.u64 %po, [OUT];
    add.u64 %pa, %pa, %off;
    add.u64 %pb, %pb, %off;
    add.u64 %po, %po, %off;
    ld.global.b32 %x, [%pa];
    ld.global.b32 %y, [%pb];
    {instruction}
    st.global.b32 [%po], %r;
}}
"#
    );
    run_kernel(
        &source,
        1,
        a.len() as u32,
        &[Arg::u32s(a), Arg::u32s(b), Arg::zeros(a.len())],
    )
    .ok()
    .u32s(2)
}

#[test]
fn xorsign_abs_minimum_and_maximum() {
    // (a, b, min.xorsign.abs, max.xorsign.abs, min.NaN.xorsign.abs) in f16:
    // the magnitudes' minimum or maximum with the sign sign(a) ^ sign(b);
    // a NaN is left out (the other magnitude keeps the xor sign) unless
    // .NaN, and two NaNs give the canonical NaN.
    let half_cases: [[u32; 5]; 6] = [
        // -2 and 3: magnitudes 2 and 3, signs differ: -2 and -3.
        [0xc000, 0x4200, 0xc000, 0xc200, 0xc000],
        // -2 and -3: signs agree: +2 and +3.
        [0xc000, 0xc200, 0x4000, 0x4200, 0x4000],
        // -0 and 1: magnitudes 0 and 1, sign 1: -0 and -1.
        [0x8000, 0x3c00, 0x8000, 0xbc00, 0x8000],
        // NaN and -1: the magnitude 1, sign 0 ^ 1: -1; .NaN: canonical.
        [0x7e00, 0xbc00, 0xbc00, 0xbc00, 0x7fff],
        // Two NaNs: canonical NaN.
        [0x7e00, 0xfe01, 0x7fff, 0x7fff, 0x7fff],
        // -inf and a subnormal: the subnormal and infinity, both negative.
        [0xfc00, 0x0001, 0x8001, 0xfc00, 0x8001],
    ];
    let a: Vec<u32> = half_cases.iter().map(|case| case[0]).collect();
    let b: Vec<u32> = half_cases.iter().map(|case| case[1]).collect();
    for (column, instruction) in [
        (2, "min.xorsign.abs.f16"),
        (3, "max.xorsign.abs.f16"),
        (4, "min.NaN.xorsign.abs.f16"),
    ] {
        let got = run_binary(
            &format!(
                "cvt.u16.u32 %xs, %x; cvt.u16.u32 %ys, %y; {instruction} %rs, %xs, %ys; cvt.u32.u16 %r, %rs;"
            ),
            &a,
            &b,
            "b16",
        );
        let want: Vec<u32> = half_cases.iter().map(|case| case[column]).collect();
        assert_eq!(got, want, "{instruction}");
    }
    // The same rules on pairs of bfloat16 (the f16 cases' values: -2 is
    // 0xc000, 3 is 0x4040, 1 is 0x3f80, a NaN 0x7fc0) and on f32.
    let pair_a = [0xc000_8000u32, 0x7fc0_c000];
    let pair_b = [0x4040_3f80u32, 0xbf80_c040];
    let got = run_binary(
        "max.xorsign.abs.bf16x2 %r, %x, %y;",
        &pair_a,
        &pair_b,
        "b32",
    );
    // max(|-2|, |3|) with sign 1 is -3 (0xc040) high; max(|-0|, |1|) with
    // sign 1 is -1 (0xbf80) low. NaN and -1: -1 high; -2 and -3: +3 low.
    assert_eq!(got, [0xc040_bf80, 0xbf80_4040]);
    let got = run_binary(
        "min.xorsign.abs.f32 %r, %x, %y;",
        &[0x8000_0000, 0xc0a0_0000],
        &[0x40a0_0000, 0xbf80_0000],
        "b32",
    );
    // min(|-0|, |5|) with sign 1 is -0; min(|-5|, |-1|) with sign 0 is +1.
    assert_eq!(got, [0x8000_0000, 0x3f80_0000]);
}

#[test]
fn conversions_with_relu_and_satfinite() {
    let floats = [
        70000.0f32,
        f32::NEG_INFINITY,
        f32::NAN,
        65519.0,
        -1.0,
        -0.0,
        1.0,
        1e10,
        f32::MAX,
        1.0 + 2f32.powi(-11),
    ];
    let a: Vec<u32> = floats.iter().map(|x| x.to_bits()).collect();
    let single = |instruction: &str, ty: &str| {
        run_binary(
            &format!("mov.b32 %x, %x; {instruction} %rs, %x; cvt.u32.u16 %r, %rs;"),
            &a,
            &a,
            ty,
        )
    };
    // f16, .rn.satfinite: 70000 and -inf clamp to +-65504; the NaN is
    // canonical; 65519 rounds to 65504 (below the halfway 65520); -1, -0, 1
    // as they are; 1e10 and f32::MAX clamp; 1 + 2^-11 is a tie to 1.0.
    assert_eq!(
        single("cvt.rn.satfinite.f16.f32", "b16"),
        [0x7bff, 0xfbff, 0x7fff, 0x7bff, 0xbc00, 0x8000, 0x3c00, 0x7bff, 0x7bff, 0x3c00]
    );
    // .relu: negative values and -0 become +0, the NaN canonical, the rest
    // round to nearest (70000 and up overflow to infinity without .satfinite).
    assert_eq!(
        single("cvt.rn.relu.f16.f32", "b16"),
        [0x7c00, 0x0000, 0x7fff, 0x7bff, 0x0000, 0x0000, 0x3c00, 0x7c00, 0x7c00, 0x3c00]
    );
    // bfloat16, .rz.relu.satfinite: toward zero, so nothing overflows but
    // the infinity, which relu makes +0; 70000 truncates to 69632 (0x4788).
    assert_eq!(
        single("cvt.rz.relu.satfinite.bf16.f32", "b16"),
        [0x4788, 0x0000, 0x7fff, 0x477f, 0x0000, 0x0000, 0x3f80, 0x5015, 0x7f7f, 0x3f80]
    );
    // bfloat16 .rn.satfinite: f32::MAX rounds up to infinity, clamped to
    // the largest bfloat16 0x7f7f; -inf to 0xff7f.
    assert_eq!(
        single("cvt.rn.satfinite.bf16.f32", "b16"),
        [0x4789, 0xff7f, 0x7fff, 0x4780, 0xbf80, 0x8000, 0x3f80, 0x5015, 0x7f7f, 0x3f80]
    );
    // Pairs: `a` into the upper half, `b` into the lower.
    let got = run_binary(
        "cvt.rn.relu.satfinite.f16x2.f32 %r, %x, %y;",
        &[(-3.0f32).to_bits(), 70000f32.to_bits()],
        &[2.0f32.to_bits(), (-0.5f32).to_bits()],
        "b32",
    );
    assert_eq!(got, [0x0000_4000, 0x7bff_0000]);
    let got = run_binary(
        "cvt.rz.relu.bf16x2.f32 %r, %x, %y;",
        &[1.0f32.to_bits()],
        &[(-2.0f32).to_bits()],
        "b32",
    );
    assert_eq!(got, [0x3f80_0000]);
}
