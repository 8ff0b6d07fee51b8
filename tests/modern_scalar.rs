//! The kernels of `programs/corpus/modern-scalar.cu`, which reach the
//! dot products, carry chains and narrow-float conversions through CUDA itself (`__dp4a`,
//! `__dp2a_lo/_hi`, `unsigned __int128` lowered to `add.cc`/`addc` and
//! `sub.cc`/`subc`, the `mad.lo.cc`/`madc.hi` limbs of multi-precision
//! code, `cuda_fp8.h`'s conversions and tf32 rounding), checked on the host:
//! integers exactly against Rust's own wide arithmetic, and the narrow
//! floats against rounding written here from the formats' definitions (PTX
//! ISA 5.2.5.1 and 9.7.9.21), in `f64`, where every value involved is exact.

mod support;

use support::{f32s, run_program, u32s, ProgramRun};

fn u16s(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect()
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|word| u64::from_le_bytes(word.try_into().unwrap()))
        .collect()
}

fn run(name: &str, host_threads: usize) -> ProgramRun {
    let run = run_program(&format!("corpus/{name}"), None, host_threads);
    assert!(run.failure.is_none(), "{name}: {:?}", run.failure);
    run
}

/// Byte `index` of `word`, sign-extended when `signed`.
fn byte(word: u32, index: u32, signed: bool) -> i64 {
    let value = (word >> (8 * index)) & 0xff;
    if signed {
        i64::from(value as u8 as i8)
    } else {
        i64::from(value)
    }
}

/// Halfword `index` of `word`, sign-extended when `signed`.
fn halfword(word: u32, index: u32, signed: bool) -> i64 {
    let value = (word >> (16 * index)) & 0xffff;
    if signed {
        i64::from(value as u16 as i16)
    } else {
        i64::from(value)
    }
}

#[test]
fn dot_products_of_bytes_and_halfwords() {
    let run = run("dot_products", 2);
    let (a, b, c) = (
        u32s(&run.initial("a")),
        u32s(&run.initial("b")),
        u32s(&run.initial("c")),
    );
    let out = u32s(&run.buffer("out"));
    for i in 0..a.len() {
        let mut want = Vec::new();
        // The sums are at most 4 * 255 * 255 plus a 32-bit `c` in
        // magnitude, kept in 64 bits and truncated to 32 as the ISA says.
        for signed in [true, false] {
            let four: i64 = (0..4)
                .map(|k| byte(a[i], k, signed) * byte(b[i], k, signed))
                .sum();
            want.push((four + i64::from(c[i])) as u32);
        }
        for first_byte in [0, 2] {
            for signed in [true, false] {
                let two: i64 = (0..2)
                    .map(|k| halfword(a[i], k, signed) * byte(b[i], first_byte + k, signed))
                    .sum();
                want.push((two + i64::from(c[i])) as u32);
            }
        }
        // The order in the kernel: dp4a s, u, dp2a.lo s, u, dp2a.hi s, u.
        assert_eq!(out[6 * i..6 * i + 6], want[..], "element {i}");
    }
}

#[test]
fn wide_integer_arithmetic_through_carry_chains() {
    let run = run("wide_arithmetic", 2);
    let (a, b) = (u64s(&run.initial("a")), u64s(&run.initial("b")));
    let out = u32s(&run.buffer("out"));
    let words = |value: u128| (0..4).map(move |k| (value >> (32 * k)) as u32);
    let mut carries_across_the_middle = 0;
    for i in 0..a.len() {
        let (x, y) = (u128::from(a[i]), u128::from(b[i]));
        let product = x * y;
        let product_sum = product.wrapping_add(y << 64 | x);
        let difference = (x << 64 | y).wrapping_sub(y << 64 | x);
        let want: Vec<u32> = words(product_sum)
            .chain(words(difference))
            .chain(words(product))
            .collect();
        assert_eq!(
            out[12 * i..12 * i + 12],
            want[..],
            "element {i}: x {x:#x}, y {y:#x}"
        );
        // The low 64-bit halves of the addition carry into the high ones.
        carries_across_the_middle += usize::from((product as u64).checked_add(x as u64).is_none());
    }
    // Random operands carry about half the time: the carry is exercised.
    assert!(
        carries_across_the_middle > a.len() / 4,
        "{carries_across_the_middle} carries"
    );
}

/// The shaping of `shaped_input` in the CUDA source, for checking the
/// inputs the kernel wrote.
fn shaped_input(random: u32, index: u32) -> u32 {
    const SPECIALS: [u32; 16] = [
        0x7fc0_0000,
        0xffc0_0000,
        0x7f80_0000,
        0xff80_0000,
        0x8000_0000,
        0x43e0_0000,
        0x43e8_0000,
        0x4760_0000,
        0x4770_0000,
        0x0000_0001,
        0x3a80_0000,
        0xba80_0000,
        0x477f_f000,
        0x43f0_0000,
        0x3a80_0001,
        0x0000_0000,
    ];
    let sign = random & 0x8000_0000;
    let exponent = 107 + ((random >> 23) & 0xff) % 40;
    let mut mantissa = random & 0x7f_ffff;
    match index % 8 {
        1 => mantissa = (mantissa & !0xf_ffff) | 0x8_0000,
        2 => mantissa = (mantissa & !0x1f_ffff) | 0x10_0000,
        3 => mantissa = (mantissa & !0x1fff) | 0x1000,
        4 => return SPECIALS[((random >> 8) % 16) as usize],
        _ => {}
    }
    sign | exponent << 23 | mantissa
}

/// The exponent of the power of two at or below a finite nonzero `f64`
/// (every value here is a normal `f64`).
fn exponent_of(value: f64) -> i32 {
    ((value.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// A binary floating-point format: `mantissa_bits` stored fraction bits,
/// the exponent of its smallest normal number, and its exponent bias.
#[derive(Clone, Copy)]
struct Format {
    mantissa_bits: i32,
    smallest_normal_exponent: i32,
    bias: i32,
}

const E4M3: Format = Format {
    mantissa_bits: 3,
    smallest_normal_exponent: -6,
    bias: 7,
};
const E5M2: Format = Format {
    mantissa_bits: 2,
    smallest_normal_exponent: -14,
    bias: 15,
};
const HALF: Format = Format {
    mantissa_bits: 10,
    smallest_normal_exponent: -14,
    bias: 15,
};
/// tf32 keeps f32's exponent and ten fraction bits.
const TF32: Format = Format {
    mantissa_bits: 10,
    smallest_normal_exponent: -126,
    bias: 127,
};

/// `value` rounded to the nearest number of `format` (ignoring its largest
/// exponent), ties to even or away from zero: the magnitude divided by the
/// spacing of the format's numbers at its binade (or of its subnormals), an
/// exact power-of-two scaling, is rounded to an integer.
fn round_to(format: Format, value: f64, ties_away: bool) -> f64 {
    if value == 0.0 {
        return value;
    }
    let binade = exponent_of(value).max(format.smallest_normal_exponent);
    let spacing = 2f64.powi(binade - format.mantissa_bits);
    let units = value.abs() / spacing;
    let below = units.floor();
    let rounded = match (units - below).partial_cmp(&0.5) {
        Some(std::cmp::Ordering::Greater) => below + 1.0,
        Some(std::cmp::Ordering::Equal) if ties_away || below % 2.0 == 1.0 => below + 1.0,
        _ => below,
    };
    (rounded * spacing).copysign(value)
}

/// The bits of `value`, a finite number of `format` (sign, biased exponent,
/// fraction; exponent field 0 for zero and subnormals).
fn encode(format: Format, value: f64) -> u32 {
    let sign =
        u32::from(value.is_sign_negative()) << (format.mantissa_bits + exponent_bits(format));
    let magnitude = value.abs();
    if magnitude == 0.0 {
        return sign;
    }
    let exponent = exponent_of(magnitude);
    let fraction_scale = 2f64.powi(format.mantissa_bits);
    if exponent < format.smallest_normal_exponent {
        let units = magnitude / 2f64.powi(format.smallest_normal_exponent) * fraction_scale;
        assert_eq!(
            units.fract(),
            0.0,
            "{value} is not a subnormal of the format"
        );
        return sign | units as u32;
    }
    let fraction = (magnitude / 2f64.powi(exponent) - 1.0) * fraction_scale;
    assert_eq!(
        fraction.fract(),
        0.0,
        "{value} is not a number of the format"
    );
    sign | ((exponent + format.bias) as u32) << format.mantissa_bits | fraction as u32
}

fn exponent_bits(format: Format) -> i32 {
    match format.bias {
        7 => 4,
        15 => 5,
        _ => 8,
    }
}

/// The value of 8-bit float `bits` (`None` for NaN; neither format reaches
/// infinity under saturation).
fn decode_fp8(format: Format, bits: u8) -> Option<f64> {
    let exponent_width = exponent_bits(format);
    let fraction = i32::from(bits) & ((1 << format.mantissa_bits) - 1);
    let exponent_field = (i32::from(bits) >> format.mantissa_bits) & ((1 << exponent_width) - 1);
    let all_ones = (1 << exponent_width) - 1;
    let is_nan = match format.bias {
        // e4m3 has one NaN per sign, S.1111.111, and no infinity.
        7 => exponent_field == all_ones && fraction == (1 << format.mantissa_bits) - 1,
        _ => exponent_field == all_ones && fraction != 0,
    };
    if is_nan {
        return None;
    }
    let fraction_scale = 2f64.powi(format.mantissa_bits);
    let magnitude = if exponent_field == 0 {
        f64::from(fraction) / fraction_scale * 2f64.powi(format.smallest_normal_exponent)
    } else {
        (1.0 + f64::from(fraction) / fraction_scale) * 2f64.powi(exponent_field - format.bias)
    };
    Some(if bits & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    })
}

/// `cvt.rn.satfinite` of `value` to an 8-bit format whose largest finite
/// number is `largest`: to nearest even, then anything beyond the largest
/// finite number (infinities included) clamped to it; a NaN gives `0x7f`,
/// the NaN both formats' conversions produce (PTX ISA 9.7.9.21; the H100's
/// outputs in `programs/corpus/hardware/scalar/` agree).
fn to_fp8(format: Format, largest: f64, value: f32) -> u8 {
    if value.is_nan() {
        return 0x7f;
    }
    let rounded = round_to(format, f64::from(value), false);
    let clamped = if rounded.abs() > largest {
        largest.copysign(rounded)
    } else {
        rounded
    };
    encode(format, clamped) as u8
}

/// `cvt.rn.f16x2.e4m3x2/.e5m2x2` of one byte: exact, as every 8-bit float
/// is a half; the NaNs give the canonical half NaN `0x7fff` (as the H100
/// does, `programs/corpus/hardware/scalar/h100-f16x2-from-fp8.bin`).
fn fp8_to_half(format: Format, bits: u8) -> u16 {
    match decode_fp8(format, bits) {
        Some(value) => encode(HALF, value) as u16,
        None => 0x7fff,
    }
}

/// `cvt.rna.tf32.f32`: to nearest, ties away from zero, to ten fraction
/// bits in the upper 19 bits of the word; a result beyond the largest
/// finite f32 is infinite, infinities stay; a NaN keeps its upper bits
/// (the quiet NaNs here have none below, as on the H100).
fn to_tf32(value: f32) -> u32 {
    if !value.is_finite() {
        return value.to_bits() & 0xffff_e000;
    }
    let rounded = round_to(TF32, f64::from(value), true);
    let single = rounded as f32;
    assert!(
        single.is_infinite() || f64::from(single) == rounded,
        "the tf32 value {rounded} is a float"
    );
    single.to_bits()
}

#[test]
fn fp8_and_tf32_conversions_of_cuda_headers() {
    let run = run("narrow_floats", 2);
    let random = u32s(&run.initial("random"));
    let inputs = f32s(&run.buffer("inputs"));
    let fp8 = u16s(&run.buffer("fp8"));
    let halves = u32s(&run.buffer("halves"));
    let tf32 = u32s(&run.buffer("tf32"));
    for (index, (&word, &input)) in random.iter().zip(&inputs).enumerate() {
        assert_eq!(
            input.to_bits(),
            shaped_input(word, index as u32),
            "input {index}"
        );
    }
    let (largest_e4m3, largest_e5m2) = (448.0, 57344.0);
    let mut ties_decided = 0;
    let mut saturated = 0;
    let mut subnormal = 0;
    for pair in 0..inputs.len() / 2 {
        let (x, y) = (inputs[2 * pair], inputs[2 * pair + 1]);
        let e4m3 = [to_fp8(E4M3, largest_e4m3, x), to_fp8(E4M3, largest_e4m3, y)];
        let e5m2 = [to_fp8(E5M2, largest_e5m2, x), to_fp8(E5M2, largest_e5m2, y)];
        let packed = |bytes: [u8; 2]| u16::from(bytes[0]) | u16::from(bytes[1]) << 8;
        assert_eq!(fp8[2 * pair], packed(e4m3), "e4m3x2 of ({x:e}, {y:e})");
        assert_eq!(fp8[2 * pair + 1], packed(e5m2), "e5m2x2 of ({x:e}, {y:e})");
        let widened = |format, bytes: [u8; 2]| {
            u32::from(fp8_to_half(format, bytes[0]))
                | u32::from(fp8_to_half(format, bytes[1])) << 16
        };
        assert_eq!(
            halves[2 * pair],
            widened(E4M3, e4m3),
            "half2 of e4m3 {e4m3:02x?}"
        );
        assert_eq!(
            halves[2 * pair + 1],
            widened(E5M2, e5m2),
            "half2 of e5m2 {e5m2:02x?}"
        );
        for (position, value) in [x, y].into_iter().enumerate() {
            assert_eq!(
                tf32[2 * pair + position],
                to_tf32(value),
                "tf32 of {value:e}"
            );
            // What the inputs exercise.
            let exact = f64::from(value);
            if value.is_finite() {
                let units = exact.abs() / 2f64.powi(exponent_of(exact) - E4M3.mantissa_bits);
                ties_decided += usize::from(exact != 0.0 && units.fract() == 0.5);
                saturated += usize::from(exact.abs() > largest_e4m3);
                subnormal += usize::from(exact != 0.0 && exact.abs() < 2f64.powi(-6));
            }
        }
    }
    assert!(ties_decided > 100, "{ties_decided} e4m3 ties");
    assert!(saturated > 1000, "{saturated} saturated e4m3 conversions");
    assert!(
        subnormal > 1000,
        "{subnormal} e4m3 subnormal or zero results"
    );
}

/// The rounding written here against values worked out by hand, so that it
/// cannot agree with the machine by sharing its mistakes.
#[test]
fn the_reference_rounding_on_hand_worked_values() {
    // 464 is halfway between 448 (1.110b * 2^8) and 480 (1.111b * 2^8, the
    // e4m3 NaN pattern): even is 448; 480 itself saturates to 448 = 0x7e.
    assert_eq!(to_fp8(E4M3, 448.0, 464.0), 0x7e);
    assert_eq!(to_fp8(E4M3, 448.0, 480.0), 0x7e);
    assert_eq!(to_fp8(E4M3, 448.0, f32::NEG_INFINITY), 0xfe);
    // 2^-10 is half the smallest e4m3 subnormal 2^-9: a tie to even zero;
    // just above it rounds up to 0x01; -2^-10 keeps its sign.
    assert_eq!(to_fp8(E4M3, 448.0, 2f32.powi(-10)), 0x00);
    assert_eq!(to_fp8(E4M3, 448.0, f32::from_bits(0x3a80_0001)), 0x01);
    assert_eq!(to_fp8(E4M3, 448.0, -(2f32.powi(-10))), 0x80);
    // 1.0625 = 1 + 2^-4 is halfway between 1 and 1.125 in e4m3: even is 1.
    assert_eq!(to_fp8(E4M3, 448.0, 1.0625), 0x38);
    assert_eq!(to_fp8(E4M3, 448.0, 1.1875), 0x3a);
    // 61440 is halfway between 57344 (0x7b) and 65536 (infinity in e5m2):
    // saturated to 57344.
    assert_eq!(to_fp8(E5M2, 57344.0, 61440.0), 0x7b);
    assert_eq!(to_fp8(E5M2, 57344.0, 1.5), 0x3e);
    assert_eq!(to_fp8(E5M2, 57344.0, f32::NAN), 0x7f);
    // Widening: e4m3 0x01 is 2^-9, a normal half (exponent field 6); -448
    // is -1.75 * 2^8; an e5m2 byte is the upper byte of its half.
    assert_eq!(fp8_to_half(E4M3, 0x01), 0x1800);
    assert_eq!(fp8_to_half(E4M3, 0xfe), 0xdf00);
    assert_eq!(fp8_to_half(E5M2, 0x7b), 0x7b00);
    assert_eq!(fp8_to_half(E5M2, 0x83), 0x8300);
    assert_eq!(fp8_to_half(E4M3, 0x7f), 0x7fff);
    // tf32: 1 + 2^-11 is a tie that goes away from zero to 1 + 2^-10.
    assert_eq!(to_tf32(1.0 + 2f32.powi(-11)), 0x3f80_2000);
    assert_eq!(to_tf32(-(1.0 + 2f32.powi(-11))), 0xbf80_2000);
    assert_eq!(to_tf32(f32::MAX), 0x7f80_0000);
}

#[test]
fn the_same_outputs_at_one_and_three_host_threads() {
    for (name, buffers) in [
        ("dot_products", &["out"][..]),
        ("wide_arithmetic", &["out"][..]),
        ("narrow_floats", &["fp8", "halves", "tf32"][..]),
    ] {
        let (one, three) = (run(name, 1), run(name, 3));
        for buffer in buffers {
            assert_eq!(one.buffer(buffer), three.buffer(buffer), "{name}: {buffer}");
        }
    }
}
