//! bfloat16 (`cuda_bf16.h`) in real kernels: programs/corpus/bf16-arith.cu,
//! compiled by NVRTC, run on the simulator, and every output bit checked
//! against exact arithmetic written here on the host. Values are decoded to
//! `±magnitude × 2^exponent` with integer magnitudes; sums of terms too far
//! apart for 128 bits keep the smaller one as a sticky bit; each result is
//! rounded once, by integer comparisons. Nothing here calls the simulator's
//! own arithmetic.

mod support;

use std::cmp::Ordering;

use support::{f32s, i32s, run_program, u32s, ProgramRun};

// ---------------------------------------------------------------------------
// Exact values and rounding to a 16-bit float format.

/// A 16-bit float format: the mantissa bits below the leading one and the
/// exponents of the smallest and largest normal values.
#[derive(Clone, Copy)]
struct Format {
    mantissa_bits: u32,
    min_exponent: i32,
    max_exponent: i32,
}

const BF16: Format = Format {
    mantissa_bits: 7,
    min_exponent: -126,
    max_exponent: 127,
};

const F16: Format = Format {
    mantissa_bits: 10,
    min_exponent: -14,
    max_exponent: 15,
};

/// The canonical NaN of both formats, which the GPU's 16-bit arithmetic and
/// conversions return for every NaN result.
const NAN: u16 = 0x7fff;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Nearest,
    Zero,
    Down,
    Up,
}

/// `±(magnitude + s) × 2^exponent`, where `s` is 0, or with `sticky` some
/// amount strictly between 0 and 1: the trace of a term too small to keep.
#[derive(Clone, Copy, Debug)]
struct Exact {
    negative: bool,
    magnitude: u128,
    exponent: i32,
    sticky: bool,
}

impl Exact {
    fn new(negative: bool, magnitude: u128, exponent: i32) -> Exact {
        Exact {
            negative,
            magnitude,
            exponent,
            sticky: false,
        }
    }
}

/// A decoded float: NaN, an infinity, or `±magnitude × 2^exponent` (a zero
/// has magnitude 0).
#[derive(Clone, Copy, Debug)]
enum Value {
    Nan,
    Inf(bool),
    Finite(bool, u128, i32),
}

/// Rounds a nonzero exact value to `format` in `mode`: past the largest
/// finite value, infinity or the largest finite value, by the mode's
/// direction.
fn round(format: Format, x: Exact, mode: Mode) -> u16 {
    let mantissa_bits = format.mantissa_bits as i32;
    let sign: u32 = if x.negative { 0x8000 } else { 0 };
    let infinity: u32 = ((1 << (15 - format.mantissa_bits)) - 1) << format.mantissa_bits;
    let toward_infinity = match mode {
        Mode::Nearest => true,
        Mode::Zero => false,
        Mode::Down => x.negative,
        Mode::Up => !x.negative,
    };
    let overflow = (sign
        | if toward_infinity {
            infinity
        } else {
            infinity - 1
        }) as u16;
    assert!(x.magnitude != 0, "round is for nonzero values");
    let leading = 127 - x.magnitude.leading_zeros() as i32 + x.exponent;
    if leading > format.max_exponent {
        return overflow;
    }
    let leading = leading.max(format.min_exponent);
    let shift = leading - mantissa_bits - x.exponent;
    let (units, against_half, inexact) = if shift <= 0 {
        assert!(
            !x.sticky,
            "a sticky value is rounded well above its last bit"
        );
        (x.magnitude << -shift, Ordering::Less, false)
    } else if shift > 128 {
        // Below a quarter of the smallest subnormal.
        (0, Ordering::Less, true)
    } else {
        let units = x.magnitude.checked_shr(shift as u32).unwrap_or(0);
        let rest = if shift == 128 {
            x.magnitude
        } else {
            x.magnitude & ((1 << shift) - 1)
        };
        let against_half = match rest.cmp(&(1 << (shift - 1))) {
            Ordering::Equal if x.sticky => Ordering::Greater,
            other => other,
        };
        (units, against_half, rest != 0 || x.sticky)
    };
    let round_up = match mode {
        Mode::Nearest => {
            against_half == Ordering::Greater || (against_half == Ordering::Equal && units & 1 == 1)
        }
        Mode::Zero => false,
        Mode::Down => x.negative && inexact,
        Mode::Up => !x.negative && inexact,
    };
    // A normal value's units hold its leading one, which adds one to the
    // exponent field below it; a subnormal's exponent field is 0.
    let bits =
        (((leading - format.min_exponent) as u128) << mantissa_bits) + units + u128::from(round_up);
    if bits >= u128::from(infinity) {
        overflow
    } else {
        (sign as u128 | bits) as u16
    }
}

fn bf16(bits: u16) -> Value {
    let negative = bits & 0x8000 != 0;
    let mantissa = u128::from(bits & 0x7f);
    match (bits >> 7) & 0xff {
        0xff if mantissa != 0 => Value::Nan,
        0xff => Value::Inf(negative),
        0 => Value::Finite(negative, mantissa, -133),
        e => Value::Finite(negative, 0x80 + mantissa, i32::from(e) - 134),
    }
}

fn f32_value(bits: u32) -> Value {
    let negative = bits >> 31 != 0;
    let mantissa = u128::from(bits & 0x7f_ffff);
    match (bits >> 23) & 0xff {
        0xff if mantissa != 0 => Value::Nan,
        0xff => Value::Inf(negative),
        0 => Value::Finite(negative, mantissa, -149),
        e => Value::Finite(negative, (1 << 23) + mantissa, e as i32 - 150),
    }
}

fn f64_value(bits: u64) -> Value {
    let negative = bits >> 63 != 0;
    let mantissa = u128::from(bits & ((1 << 52) - 1));
    match (bits >> 52) & 0x7ff {
        0x7ff if mantissa != 0 => Value::Nan,
        0x7ff => Value::Inf(negative),
        0 => Value::Finite(negative, mantissa, -1074),
        e => Value::Finite(negative, (1 << 52) + mantissa, e as i32 - 1075),
    }
}

/// A value as an `f64`, exactly (bfloat16 values and products of two fit).
fn to_f64(negative: bool, magnitude: u128, exponent: i32) -> f64 {
    let value = magnitude as f64 * 2f64.powi(exponent);
    if negative {
        -value
    } else {
        value
    }
}

fn infinity(format: Format, negative: bool) -> u16 {
    let bits = ((1u16 << (15 - format.mantissa_bits)) - 1) << format.mantissa_bits;
    if negative {
        bits | 0x8000
    } else {
        bits
    }
}

/// A float (`value`) converted to `format` in `mode`; NaN is the canonical
/// NaN, zeros keep their sign.
fn convert(format: Format, value: Value, mode: Mode) -> u16 {
    match value {
        Value::Nan => NAN,
        Value::Inf(negative) => infinity(format, negative),
        Value::Finite(negative, 0, _) => u16::from(negative) << 15,
        Value::Finite(negative, magnitude, exponent) => {
            round(format, Exact::new(negative, magnitude, exponent), mode)
        }
    }
}

// ---------------------------------------------------------------------------
// bfloat16 arithmetic on the host.

/// A finite term of a sum: sign, magnitude (below 2^17) and exponent.
type Term = (bool, u128, i32);

/// `x + y` exactly, or `None` when it is exactly zero. Terms more than 100
/// bits apart are kept as the larger, shifted up 80 bits, with the smaller
/// (now less than one unit) as a sticky amount added or taken away.
fn exact_sum(x: Term, y: Term) -> Option<Exact> {
    let (big, small) = if x.2 >= y.2 { (x, y) } else { (y, x) };
    if small.1 == 0 || big.1 == 0 {
        let only = if small.1 == 0 { big } else { small };
        return (only.1 != 0).then(|| Exact::new(only.0, only.1, only.2));
    }
    let gap = big.2 - small.2;
    if gap <= 100 {
        let signed = |(negative, magnitude, _): Term, shift: i32| {
            let value = (magnitude << shift) as i128;
            if negative {
                -value
            } else {
                value
            }
        };
        let total = signed(big, gap) + signed(small, 0);
        (total != 0).then(|| Exact::new(total < 0, total.unsigned_abs(), small.2))
    } else {
        // The smaller term is below 2^(small.2 + 17) < 2^(big.2 - 80).
        let units = big.1 << 80;
        let magnitude = if big.0 == small.0 { units } else { units - 1 };
        Some(Exact {
            negative: big.0,
            magnitude,
            exponent: big.2 - 80,
            sticky: true,
        })
    }
}

/// The bfloat16 of `x + y` (finite terms) rounded to nearest even; an exact
/// zero is -0 only when both terms are negative zeros or negative.
fn rounded_sum(x: Term, y: Term) -> u16 {
    match exact_sum(x, y) {
        Some(exact) => round(BF16, exact, Mode::Nearest),
        None => u16::from(x.0 && y.0) << 15,
    }
}

fn host_add(a: u16, b: u16) -> u16 {
    match (bf16(a), bf16(b)) {
        (Value::Nan, _) | (_, Value::Nan) => NAN,
        (Value::Inf(x), Value::Inf(y)) if x != y => NAN,
        (Value::Inf(x), _) | (_, Value::Inf(x)) => infinity(BF16, x),
        (Value::Finite(x, p, e), Value::Finite(y, q, f)) => rounded_sum((x, p, e), (y, q, f)),
    }
}

fn host_sub(a: u16, b: u16) -> u16 {
    host_add(a, b ^ 0x8000)
}

/// The exact product of two bfloat16 values.
fn product(a: u16, b: u16) -> Value {
    match (bf16(a), bf16(b)) {
        (Value::Nan, _) | (_, Value::Nan) => Value::Nan,
        (Value::Inf(_), Value::Finite(_, 0, _)) | (Value::Finite(_, 0, _), Value::Inf(_)) => {
            Value::Nan
        }
        (Value::Inf(x), Value::Inf(y) | Value::Finite(y, _, _))
        | (Value::Finite(x, _, _), Value::Inf(y)) => Value::Inf(x != y),
        (Value::Finite(x, p, e), Value::Finite(y, q, f)) => Value::Finite(x != y, p * q, e + f),
    }
}

fn host_mul(a: u16, b: u16) -> u16 {
    convert(BF16, product(a, b), Mode::Nearest)
}

/// `a * b + c` rounded once.
fn host_fma(a: u16, b: u16, c: u16) -> u16 {
    match (product(a, b), bf16(c)) {
        (Value::Nan, _) | (_, Value::Nan) => NAN,
        (Value::Inf(x), Value::Inf(y)) if x != y => NAN,
        (Value::Inf(x), _) | (_, Value::Inf(x)) => infinity(BF16, x),
        (Value::Finite(x, p, e), Value::Finite(y, q, f)) => rounded_sum((x, p, e), (y, q, f)),
    }
}

fn host_neg_abs(a: u16, negate: bool) -> u16 {
    match bf16(a) {
        Value::Nan => NAN,
        _ if negate => a ^ 0x8000,
        _ => a & 0x7fff,
    }
}

/// `min` (`max` with `larger`): a NaN operand gives the other, two NaNs the
/// canonical NaN, and -0 is below +0. With `nan`, any NaN operand gives the
/// canonical NaN (`min.NaN`).
fn host_min_max(a: u16, b: u16, larger: bool, nan: bool) -> u16 {
    match (bf16(a), bf16(b)) {
        (Value::Nan, Value::Nan) => NAN,
        (Value::Nan, _) | (_, Value::Nan) if nan => NAN,
        (Value::Nan, _) => b,
        (_, Value::Nan) => a,
        _ => {
            let (x, y) = (value_of(a), value_of(b));
            // Equal values: +0 and -0, or the same bits.
            let a_first = match x.partial_cmp(&y) {
                Some(Ordering::Less) => true,
                Some(Ordering::Greater) => false,
                _ => a & 0x8000 != 0,
            };
            if a_first != larger {
                a
            } else {
                b
            }
        }
    }
}

/// A non-NaN bfloat16's value.
fn value_of(bits: u16) -> f64 {
    match bf16(bits) {
        Value::Finite(negative, magnitude, exponent) => to_f64(negative, magnitude, exponent),
        Value::Inf(negative) => {
            if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        Value::Nan => f64::NAN,
    }
}

/// `fma.rn.relu`: negative results (and -0) become +0.
fn host_fma_relu(a: u16, b: u16, c: u16) -> u16 {
    let result = host_fma(a, b, c);
    if result & 0x8000 != 0 {
        0
    } else {
        result
    }
}

/// `__hfma_sat`: fma, then `max` with +0 and `min` with 1 (its inline PTX).
fn host_fma_sat(a: u16, b: u16, c: u16) -> u16 {
    let at_least_zero = host_min_max(host_fma(a, b, c), 0x0000, true, false);
    host_min_max(at_least_zero, 0x3f80, false, false)
}

/// The twelve comparisons of bf16_arith as its bits: eq ne lt le gt ge,
/// their unordered forms (true when either is NaN), and bit 12, a is NaN.
fn host_compare(a: u16, b: u16) -> u16 {
    let is_nan = |bits: u16| matches!(bf16(bits), Value::Nan);
    let nan_bit = u16::from(is_nan(a)) << 12;
    if is_nan(a) || is_nan(b) {
        return 0b1111_1100_0000 | nan_bit;
    }
    let (x, y) = (value_of(a), value_of(b));
    let ordered = [x == y, x != y, x < y, x <= y, x > y, x >= y];
    let bits = ordered
        .iter()
        .enumerate()
        .fold(0, |bits, (k, &holds)| bits | u16::from(holds) << k);
    bits | bits << 6 | nan_bit
}

/// The twelve results of bf16_arith for one (a, b, c), in its order.
fn host_ops(a: u16, b: u16, c: u16) -> [u16; 12] {
    [
        host_add(a, b),
        host_sub(a, b),
        host_mul(a, b),
        host_fma(a, b, c),
        host_neg_abs(a, true),
        host_neg_abs(a, false),
        host_min_max(a, b, false, false),
        host_min_max(a, b, true, false),
        host_min_max(a, b, false, true),
        host_min_max(a, b, true, true),
        host_fma_relu(a, b, c),
        host_fma_sat(a, b, c),
    ]
}

const NAMES: [&str; 12] = [
    "add", "sub", "mul", "fma", "neg", "abs", "min", "max", "min.NaN", "max.NaN", "fma.relu",
    "fma.sat",
];

/// The rounding itself, on values worked out by hand.
#[test]
fn host_bfloat16_arithmetic_rounds_to_nearest_even() {
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1.0) wins; and
    // 1 + 2^-7 + 2^-8 goes to the even 1 + 2^-6.
    assert_eq!(host_add(0x3f80, 0x3b80), 0x3f80);
    assert_eq!(host_add(0x3f81, 0x3b80), 0x3f82);
    // 1 + 2^-133 is 1; 1 - 2^-133 too.
    assert_eq!(host_add(0x3f80, 0x0001), 0x3f80);
    assert_eq!(host_sub(0x3f80, 0x0001), 0x3f80);
    // The largest finite value plus half its step is a tie to infinity.
    assert_eq!(host_add(0x7f7f, 0x7b00), 0x7f80);
    assert_eq!(host_add(0x7f7f, 0x7a80), 0x7f7f);
    // Subnormals: exact sums; 2^-133 * 0.5 ties to +0; 3 * 2^-134 to 2 units.
    assert_eq!(host_add(0x007f, 0x0001), 0x0080);
    assert_eq!(host_mul(0x0001, 0x3f00), 0x0000);
    assert_eq!(host_mul(0x8001, 0x3f00), 0x8000);
    assert_eq!(host_fma(0x0001, 0x3f00, 0x0001), 0x0002);
    // Products that are midpoints, and fma with a tiny addend moving them
    // off it: 1.0625^2 = 1 + 2^-3 + 2^-8; 1.75 * 37/64 = 1 + 3 * 2^-8.
    assert_eq!(host_mul(0x3f88, 0x3f88), 0x3f90);
    assert_eq!(host_fma(0x3f88, 0x3f88, 0x0d80), 0x3f91);
    assert_eq!(host_mul(0x3fe0, 0x3f14), 0x3f82);
    assert_eq!(host_fma(0x3fe0, 0x3f14, 0x8d80), 0x3f81);
    // fma keeps what mul rounds away: (1 + 2^-7)^2 - (1 + 2^-6) = 2^-14.
    assert_eq!(host_fma(0x3f81, 0x3f81, 0xbf82), 0x3880);
    // Signed zeros.
    assert_eq!(host_add(0x8000, 0x8000), 0x8000);
    assert_eq!(host_add(0x8000, 0x0000), 0x0000);
    assert_eq!(host_add(0x3f80, 0xbf80), 0x0000);
    assert_eq!(host_fma(0x8000, 0x3f80, 0x8000), 0x8000);
    assert_eq!(host_fma(0x8000, 0x3f80, 0x0000), 0x0000);
    // Infinities and NaNs.
    assert_eq!(host_add(0x7f80, 0xff80), NAN);
    assert_eq!(host_mul(0x7f80, 0x8000), NAN);
    assert_eq!(host_fma(0x7f7f, 0x7f7f, 0xff80), 0xff80);
    assert_eq!(host_min_max(0x7fc0, 0x3f80, false, false), 0x3f80);
    assert_eq!(host_min_max(0x7fc0, 0x3f80, false, true), NAN);
    assert_eq!(host_min_max(0x0000, 0x8000, false, false), 0x8000);
    assert_eq!(host_min_max(0x8000, 0x0000, true, false), 0x0000);
    assert_eq!(host_fma_relu(0xbf80, 0x3f80, 0x8000), 0x0000);
    assert_eq!(host_fma_sat(0x4000, 0x4000, 0x0000), 0x3f80);
    assert_eq!(host_fma_sat(0x7f80, 0x0000, 0x0000), 0x0000);
    assert_eq!(host_compare(0x0000, 0x8000), 0b1010_0110_1001);
    assert_eq!(host_compare(0x7fc0, 0x3f80), 0b1_1111_1100_0000);
    // Conversions: ties to even from float; one rounding from double.
    assert_eq!(convert(BF16, f32_value(0x3f80_8000), Mode::Nearest), 0x3f80);
    assert_eq!(convert(BF16, f32_value(0x3f81_8000), Mode::Nearest), 0x3f82);
    assert_eq!(convert(BF16, f32_value(0x7f7f_ffff), Mode::Zero), 0x7f7f);
    assert_eq!(convert(BF16, f32_value(0x7f7f_ffff), Mode::Nearest), 0x7f80);
    assert_eq!(convert(BF16, f32_value(0x0000_8000), Mode::Up), 0x0001);
    let past_tie = (1.0f64 + 2f64.powi(-8) + 2f64.powi(-40)).to_bits();
    assert_eq!(convert(BF16, f64_value(past_tie), Mode::Nearest), 0x3f81);
    assert_eq!(convert(F16, f32_value(0x477f_f000), Mode::Nearest), 0x7c00);
    assert_eq!(convert(F16, f32_value(0x477f_efff), Mode::Nearest), 0x7bff);
}

// ---------------------------------------------------------------------------
// bf16_arith: 4096 operand pairs.

fn u16s(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn run(name: &str) -> ProgramRun {
    let run = run_program(&format!("corpus/{name}"), None, 2);
    assert!(run.failure.is_none(), "{name}: {:?}", run.failure);
    assert_eq!(run.report.status, "ok", "{name}");
    run
}

#[test]
fn bf16_arith() {
    let run = run("bf16_arith");
    let input = u16s(&run.initial("in"));
    let (a, rest) = input.split_at(4096);
    let (b, c) = rest.split_at(4096);
    let out = u16s(&run.buffer("out"));
    let cmp = u16s(&run.buffer("cmp"));
    let out2 = u32s(&run.buffer("out2"));
    for i in 0..4096 {
        let expected = host_ops(a[i], b[i], c[i]);
        for (k, name) in NAMES.iter().enumerate() {
            assert_eq!(
                out[12 * i + k],
                expected[k],
                "{name} of a={:#06x} b={:#06x} c={:#06x}: {:#06x}, expected {:#06x}",
                a[i],
                b[i],
                c[i],
                out[12 * i + k],
                expected[k]
            );
        }
        assert_eq!(
            cmp[i],
            host_compare(a[i], b[i]),
            "comparisons of {:#06x}, {:#06x}",
            a[i],
            b[i]
        );
    }
    // __nv_bfloat162: element 0 (low 16 bits) from element i, element 1
    // from i + 1; the last result is __hlt2, 1.0 or 0.0 per element.
    for j in 0..2048 {
        let pair = |k: usize| {
            let (low, high) = (2 * j, 2 * j + 1);
            if k == 11 {
                let lt = |i: usize| -> u16 {
                    if host_compare(a[i], b[i]) & 4 != 0 {
                        0x3f80
                    } else {
                        0
                    }
                };
                u32::from(lt(low)) | u32::from(lt(high)) << 16
            } else {
                let op = |i: usize| host_ops(a[i], b[i], c[i])[k];
                u32::from(op(low)) | u32::from(op(high)) << 16
            }
        };
        for k in 0..12 {
            let name = if k == 11 { "lt" } else { NAMES[k] };
            assert_eq!(
                out2[12 * j + k],
                pair(k),
                "{name}.bf16x2 of pair {j}: {:#010x}, expected {:#010x}",
                out2[12 * j + k],
                pair(k)
            );
        }
    }
}

/// bf16-arith.bin has what bf16_arith.toml says: a and b every pair of 64
/// values with both zeros, subnormals, infinities and NaNs; sums and
/// products that round, overflow and underflow; fma results that a sum
/// rounded to f64 before bfloat16 would get wrong.
#[test]
fn bf16_arith_inputs_cover_the_special_cases() {
    let bytes = std::fs::read(support::repo_root().join("programs/corpus/bf16-arith.bin")).unwrap();
    let input = u16s(&bytes);
    assert_eq!(input.len(), 3 * 4096);
    let (a, rest) = input.split_at(4096);
    let (b, c) = rest.split_at(4096);
    let values: Vec<u16> = (0..64).map(|k| a[64 * k]).collect();
    for i in 0..4096 {
        assert_eq!((a[i], b[i]), (values[i / 64], values[i % 64]));
    }
    let has = |test: &dyn Fn(u16) -> bool| values.iter().any(|&v| test(v));
    for bits in [
        0x0000, 0x8000, 0x7f80, 0xff80, 0x7f7f, 0xff7f, 0x0001, 0x8001, 0x0080,
    ] {
        assert!(has(&|v| v == bits), "{bits:#06x}");
    }
    assert!(has(&|v| v & 0x7fc0 == 0x7f80 && v & 0x3f != 0)); // signalling NaN
    assert!(has(&|v| v & 0xffc0 == 0xffc0)); // negative NaN
    let inexact = |op: fn(u16, u16) -> u16, exact: fn(f64, f64) -> f64| {
        (0..4096)
            .filter(|&i| {
                let result = op(a[i], b[i]);
                let (x, y) = (value_of(a[i]), value_of(b[i]));
                x.is_finite() && y.is_finite() && value_of(result) != exact(x, y)
            })
            .count()
    };
    let sums = inexact(host_add, |x, y| x + y);
    let products = inexact(host_mul, |x, y| x * y);
    assert!(
        sums > 100 && products > 100,
        "{sums} sums, {products} products inexact"
    );
    let fma_differs = (0..4096)
        .filter(|&i| {
            let fused = host_fma(a[i], b[i], c[i]);
            fused != host_add(host_mul(a[i], b[i]), c[i]) && fused & 0x7f80 != 0x7f80
        })
        .count();
    assert!(
        fma_differs > 100,
        "{fma_differs} fma results differ from mul then add"
    );
    // Rounding a*b + c to f64 and then to bfloat16 goes wrong here.
    let naive = |i: usize| {
        let wide = value_of(a[i]).mul_add(value_of(b[i]), value_of(c[i]));
        convert(BF16, f64_value(wide.to_bits()), Mode::Nearest)
    };
    let double_rounded = (0..4096)
        .filter(|&i| host_fma(a[i], b[i], c[i]) != naive(i))
        .count();
    assert!(
        double_rounded >= 2,
        "{double_rounded} fma results that double rounding breaks"
    );
    let underflow = (0..4096)
        .filter(|&i| value_of(a[i]) != 0.0 && value_of(b[i]) != 0.0)
        .filter(|&i| host_mul(a[i], b[i]) & 0x7fff == 0)
        .count();
    assert!(
        underflow > 10,
        "{underflow} products that underflow to zero"
    );
    let overflow = (0..4096)
        .filter(|&i| a[i] & 0x7f80 != 0x7f80 && b[i] & 0x7f80 != 0x7f80)
        .filter(|&i| host_add(a[i], b[i]) & 0x7fff == 0x7f80)
        .count();
    assert!(overflow > 0, "no sum overflows");
}

// ---------------------------------------------------------------------------
// bf16_convert: 1024 values of each type.

/// An integer rounded to an integral value in `mode`, from a bfloat16:
/// `None` for NaN, the sign and the whole magnitude otherwise (infinity as
/// a magnitude beyond every integer type).
fn integral(bits: u16, mode: Mode) -> Option<(bool, u128)> {
    let (negative, magnitude, exponent) = match bf16(bits) {
        Value::Nan => return None,
        Value::Inf(negative) => return Some((negative, 1 << 127)),
        Value::Finite(negative, magnitude, exponent) => (negative, magnitude, exponent),
    };
    if exponent >= 0 {
        return Some((negative, magnitude << exponent));
    }
    let shift = -exponent as u32;
    let whole = magnitude.checked_shr(shift).unwrap_or(0);
    let rest = if shift >= 128 {
        magnitude
    } else {
        magnitude & ((1 << shift) - 1)
    };
    let half = 1u128.checked_shl(shift - 1).unwrap_or(u128::MAX);
    let round_up = match mode {
        Mode::Nearest => rest > half || (rest == half && whole & 1 == 1),
        Mode::Zero => false,
        Mode::Down => negative && rest != 0,
        Mode::Up => !negative && rest != 0,
    };
    Some((negative, whole + u128::from(round_up)))
}

/// A bfloat16 converted to an integer in `mode`, clamped to [min, max]; NaN
/// converts to 0.
fn to_integer(bits: u16, mode: Mode, min: i128, max: i128) -> i128 {
    match integral(bits, mode) {
        None => 0,
        Some((negative, magnitude)) => {
            let magnitude = magnitude.min(1 << 100) as i128;
            let value = if negative { -magnitude } else { magnitude };
            value.clamp(min, max)
        }
    }
}

/// A bfloat16 rounded to an integral bfloat16 (`htrunc`, `hceil`, `hfloor`,
/// `hrint`): infinities stay, NaN is the canonical NaN, zero keeps the sign.
fn to_integral_bf16(bits: u16, mode: Mode) -> u16 {
    match (bf16(bits), integral(bits, mode)) {
        (Value::Nan, _) | (_, None) => NAN,
        (Value::Inf(_), _) => bits,
        (_, Some((negative, 0))) => u16::from(negative) << 15,
        (_, Some((negative, magnitude))) => {
            round(BF16, Exact::new(negative, magnitude, 0), Mode::Nearest)
        }
    }
}

/// An integer converted to bfloat16 in `mode`.
fn from_integer(value: i128, mode: Mode) -> u16 {
    if value == 0 {
        return 0;
    }
    round(BF16, Exact::new(value < 0, value.unsigned_abs(), 0), mode)
}

#[test]
fn bf16_convert() {
    let run = run("bf16_convert");
    let f = u32s(&run.initial("f"));
    let d = u64s(&run.initial("d"));
    let n: Vec<i64> = u64s(&run.initial("n"))
        .into_iter()
        .map(|v| v as i64)
        .collect();
    let h = u16s(&run.initial("h"));
    let out = u16s(&run.buffer("out"));
    let ints = i32s(&run.buffer("ints"));
    let longs: Vec<i64> = u64s(&run.buffer("longs"))
        .into_iter()
        .map(|v| v as i64)
        .collect();
    let words = u32s(&run.buffer("words"));
    let floats = f32s(&run.buffer("floats"));
    let pairs = u32s(&run.buffer("pairs"));
    let half_pairs = u32s(&run.buffer("half_pairs"));
    for i in 0..1024 {
        let (x, k, v) = (f32_value(f[i]), n[i], h[i]);
        let expected: [u16; 16] = [
            convert(BF16, x, Mode::Nearest),
            convert(BF16, x, Mode::Zero),
            convert(BF16, x, Mode::Down),
            convert(BF16, x, Mode::Up),
            convert(BF16, f64_value(d[i]), Mode::Nearest),
            from_integer(i128::from(k as i32), Mode::Nearest),
            from_integer(i128::from(k as i32), Mode::Zero),
            from_integer(i128::from(k), Mode::Nearest),
            from_integer(i128::from(k as u64), Mode::Down),
            from_integer(i128::from(k as u32), Mode::Up),
            from_integer(i128::from(k as i16), Mode::Nearest),
            from_integer(i128::from(k as u16), Mode::Zero),
            to_integral_bf16(v, Mode::Zero),
            to_integral_bf16(v, Mode::Up),
            to_integral_bf16(v, Mode::Down),
            to_integral_bf16(v, Mode::Nearest),
        ];
        let names = [
            "rn(f)",
            "rz(f)",
            "rd(f)",
            "ru(f)",
            "rn(d)",
            "int rn",
            "int rz",
            "ll rn",
            "ull rd",
            "uint ru",
            "short rn",
            "ushort rz",
            "trunc",
            "ceil",
            "floor",
            "rint",
        ];
        for (slot, name) in names.iter().enumerate() {
            assert_eq!(
                out[16 * i + slot],
                expected[slot],
                "{name} of f={:#010x} d={:#018x} n={k} h={v:#06x}: {:#06x}, expected {:#06x}",
                f[i],
                d[i],
                out[16 * i + slot],
                expected[slot]
            );
        }
        let (int_min, int_max) = (i128::from(i32::MIN), i128::from(i32::MAX));
        for (slot, mode) in [Mode::Nearest, Mode::Zero, Mode::Down, Mode::Up]
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                i128::from(ints[4 * i + slot]),
                to_integer(v, mode, int_min, int_max),
                "int {mode:?} of {v:#06x}"
            );
        }
        let ll = to_integer(v, Mode::Zero, i128::from(i64::MIN), i128::from(i64::MAX));
        assert_eq!(i128::from(longs[2 * i]), ll, "ll rz of {v:#06x}");
        let ull = to_integer(v, Mode::Nearest, 0, i128::from(u64::MAX));
        assert_eq!(
            i128::from(longs[2 * i + 1] as u64),
            ull,
            "ull rn of {v:#06x}"
        );
        let uint = to_integer(v, Mode::Nearest, 0, i128::from(u32::MAX));
        assert_eq!(i128::from(words[2 * i]), uint, "uint rn of {v:#06x}");
        let ushort = to_integer(v, Mode::Zero, 0, i128::from(u16::MAX));
        assert_eq!(
            i128::from(words[2 * i + 1]),
            ushort,
            "ushort rz of {v:#06x}"
        );
        // To float, exactly; a NaN stays a NaN (its payload is not checked).
        match bf16(v) {
            Value::Nan => assert!(floats[i].is_nan(), "float of {v:#06x}"),
            _ => assert_eq!(floats[i], value_of(v) as f32, "float of {v:#06x}"),
        }
        // The element of f[i] is the low one, of f[i ^ 1] the high one.
        let neighbour = f32_value(f[i ^ 1]);
        let bf16_pair = u32::from(convert(BF16, x, Mode::Nearest))
            | u32::from(convert(BF16, neighbour, Mode::Nearest)) << 16;
        assert_eq!(
            pairs[i],
            bf16_pair,
            "bfloat162 of {:#010x}, {:#010x}",
            f[i],
            f[i ^ 1]
        );
        let half_pair = u32::from(convert(F16, x, Mode::Nearest))
            | u32::from(convert(F16, neighbour, Mode::Nearest)) << 16;
        assert_eq!(
            half_pairs[i],
            half_pair,
            "half2 of {:#010x}, {:#010x}",
            f[i],
            f[i ^ 1]
        );
    }
}

/// The conversion inputs have the cases bf16_convert.toml names: float
/// ties both ways, a double that a float in between would round twice, and
/// integers at midpoints beyond 2^53.
#[test]
fn bf16_convert_inputs_cover_the_special_cases() {
    let read = |name: &str| {
        std::fs::read(support::repo_root().join("programs/corpus").join(name)).unwrap()
    };
    let f = u32s(&read("bf16-convert-f32.bin"));
    let d = u64s(&read("bf16-convert-f64.bin"));
    let n: Vec<i64> = u64s(&read("bf16-convert-s64.bin"))
        .into_iter()
        .map(|v| v as i64)
        .collect();
    let h = u16s(&read("bf16-convert-bf16.bin"));
    assert_eq!(
        (f.len(), d.len(), n.len(), h.len()),
        (1024, 1024, 1024, 1024)
    );
    // Float ties that go down and up, and one to infinity.
    for bits in [0x3f80_8000, 0x3f81_8000, 0x7f7f_8000, 0x0000_8000] {
        assert!(f.contains(&bits), "{bits:#010x}");
    }
    // A double whose rounding through float first would differ.
    let twice = d
        .iter()
        .filter(|&&bits| {
            let through_float = f64::from(f64::from_bits(bits) as f32);
            let once = convert(BF16, f64_value(bits), Mode::Nearest);
            once != convert(BF16, f64_value(through_float.to_bits()), Mode::Nearest)
        })
        .count();
    assert!(twice >= 2, "{twice} doubles that double rounding breaks");
    // An integer that an f64 in between would round twice.
    let past_midpoint = n
        .iter()
        .filter(|&&k| {
            let once = from_integer(i128::from(k), Mode::Nearest);
            once != convert(BF16, f64_value((k as f64).to_bits()), Mode::Nearest)
        })
        .count();
    assert!(
        past_midpoint >= 2,
        "{past_midpoint} integers that double rounding breaks"
    );
    // bfloat16 halves (ties of the integer roundings), both signs, and
    // values past the ends of the int and long long ranges.
    for bits in [
        0x3f00, 0xbf00, 0x4020, 0xc020, 0x4f00, 0xcf01, 0x5f00, 0x7fc0,
    ] {
        assert!(h.contains(&bits), "{bits:#06x}");
    }
}
