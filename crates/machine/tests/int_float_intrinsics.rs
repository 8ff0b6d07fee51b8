//! `mul24`, `sad`, `testp` and `copysign` on the machine, lane by lane,
//! against host formulas of their own (i64 products, i128 differences,
//! Rust's float classification and `f32::copysign`) and a few values worked
//! out by hand.

mod common;
use common::*;

/// Each lane loads `a`, `b`, `c` (words) and `x`, `y` (f32), `u`, `w` (f64)
/// and writes 12 words: mul24.lo/.hi .u32/.s32 of a, b; sad .u32/.s32 of
/// a, b, c; the six testp classes of x as bits 0-5 and of u as bits 8-13;
/// copysign.f32 x, y; and the low and high words of copysign.f64 u, w;
/// sad.u64 and sad.s64 of the widened a, b, c (low words).
const INTRINSICS: &str = r#"
.kernel intrinsics(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 X, .param .u64 Y,
                   .param .u64 U, .param .u64 W, .param .u64 OUT)
{
    .reg .u32 %t, %a, %b, %c, %r, %bits, %one;
    .reg .s32 %sa, %sb, %sc, %sr;
    .reg .f32 %x, %y, %f;
    .reg .f64 %u, %w, %d;
    .reg .u64 %ptr, %off, %po, %la, %lb, %lc, %lr;
    .reg .s64 %qa, %qb, %qc, %qr;
    .reg .b64 %raw;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %ptr, [A]; add.u64 %ptr, %ptr, %off; ld.global.u32 %a, [%ptr];
    ld.param.u64 %ptr, [B]; add.u64 %ptr, %ptr, %off; ld.global.u32 %b, [%ptr];
    ld.param.u64 %ptr, [C]; add.u64 %ptr, %ptr, %off; ld.global.u32 %c, [%ptr];
    ld.param.u64 %ptr, [X]; add.u64 %ptr, %ptr, %off; ld.global.f32 %x, [%ptr];
    ld.param.u64 %ptr, [Y]; add.u64 %ptr, %ptr, %off; ld.global.f32 %y, [%ptr];
    mul.wide.u32 %off, %t, 8;
    ld.param.u64 %ptr, [U]; add.u64 %ptr, %ptr, %off; ld.global.f64 %u, [%ptr];
    ld.param.u64 %ptr, [W]; add.u64 %ptr, %ptr, %off; ld.global.f64 %w, [%ptr];
    mul.wide.u32 %off, %t, 48;
    ld.param.u64 %po, [OUT]; add.u64 %po, %po, %off;
    mov.b32 %sa, %a; mov.b32 %sb, %b; mov.b32 %sc, %c;
    mul24.lo.u32 %r, %a, %b;        st.global.u32 [%po], %r;
    mul24.hi.u32 %r, %a, %b;        st.global.u32 [%po+4], %r;
    mul24.lo.s32 %sr, %sa, %sb;     st.global.s32 [%po+8], %sr;
    mul24.hi.s32 %sr, %sa, %sb;     st.global.s32 [%po+12], %sr;
    sad.u32 %r, %a, %b, %c;         st.global.u32 [%po+16], %r;
    sad.s32 %sr, %sa, %sb, %sc;     st.global.s32 [%po+20], %sr;
    mov.u32 %bits, 0;
    testp.finite.f32 %p, %x;        selp.u32 %one, 1, 0, %p;  or.b32 %bits, %bits, %one;
    testp.infinite.f32 %p, %x;      selp.u32 %one, 2, 0, %p;  or.b32 %bits, %bits, %one;
    testp.number.f32 %p, %x;        selp.u32 %one, 4, 0, %p;  or.b32 %bits, %bits, %one;
    testp.notanumber.f32 %p, %x;    selp.u32 %one, 8, 0, %p;  or.b32 %bits, %bits, %one;
    testp.normal.f32 %p, %x;        selp.u32 %one, 16, 0, %p; or.b32 %bits, %bits, %one;
    testp.subnormal.f32 %p, %x;     selp.u32 %one, 32, 0, %p; or.b32 %bits, %bits, %one;
    testp.finite.f64 %p, %u;        selp.u32 %one, 256, 0, %p;   or.b32 %bits, %bits, %one;
    testp.infinite.f64 %p, %u;      selp.u32 %one, 512, 0, %p;   or.b32 %bits, %bits, %one;
    testp.number.f64 %p, %u;        selp.u32 %one, 1024, 0, %p;  or.b32 %bits, %bits, %one;
    testp.notanumber.f64 %p, %u;    selp.u32 %one, 2048, 0, %p;  or.b32 %bits, %bits, %one;
    testp.normal.f64 %p, %u;        selp.u32 %one, 4096, 0, %p;  or.b32 %bits, %bits, %one;
    testp.subnormal.f64 %p, %u;     selp.u32 %one, 8192, 0, %p;  or.b32 %bits, %bits, %one;
    st.global.u32 [%po+24], %bits;
    copysign.f32 %f, %x, %y;        st.global.f32 [%po+28], %f;
    copysign.f64 %d, %u, %w;        mov.b64 %raw, %d;  st.global.b64 [%po+32], %raw;
    cvt.u64.u32 %la, %a; cvt.u64.u32 %lb, %b; cvt.u64.u32 %lc, %c;
    sad.u64 %lr, %lb, %la, %lc;     cvt.u32.u64 %r, %lr;  st.global.u32 [%po+40], %r;
    cvt.s64.s32 %qa, %sa; cvt.s64.s32 %qb, %sb; shl.b64 %qc, %qa, 33;
    sad.s64 %qr, %qc, %qb, %qa;     cvt.u32.s64 %r, %qr;  st.global.u32 [%po+44], %r;
}
"#;

/// The classes in `testp` order: finite, infinite, number, notanumber,
/// normal (zeros included), subnormal.
fn classes(finite: bool, infinite: bool, nan: bool, zero: bool, subnormal: bool) -> u32 {
    [
        finite,
        infinite,
        !nan,
        nan,
        finite && !subnormal || zero,
        subnormal,
    ]
    .iter()
    .enumerate()
    .fold(0, |bits, (index, &set)| bits | u32::from(set) << index)
}

#[test]
fn small_intrinsics_match_host_formulas() {
    let words: [u32; 8] = [
        0,
        7,
        0x00ff_ffff,
        0x0080_0000,
        0xff00_0123,
        0x7fff_ffff,
        0x8000_0000,
        0xdead_beef,
    ];
    let floats: [f32; 8] = [
        1.5,
        -0.0,
        0.0,
        f32::MIN_POSITIVE / 8.0,
        -f32::INFINITY,
        f32::NAN,
        -3.25e-41,
        f32::MAX,
    ];
    let doubles: [f64; 8] = [
        -2.0,
        0.0,
        -0.0,
        f64::MIN_POSITIVE / 3.0,
        f64::INFINITY,
        -f64::NAN,
        1e-310,
        -f64::MAX,
    ];
    let lanes = 32;
    let a: Vec<u32> = (0..lanes).map(|l| words[l % 8]).collect();
    let b: Vec<u32> = (0..lanes).map(|l| words[(l / 8 + 3 * l) % 8]).collect();
    let c: Vec<u32> = (0..lanes).map(|l| words[(l + 5) % 8] ^ l as u32).collect();
    let x: Vec<f32> = (0..lanes).map(|l| floats[l % 8]).collect();
    let y: Vec<f32> = (0..lanes).map(|l| floats[(l / 8 + 1) % 8]).collect();
    let u: Vec<f64> = (0..lanes).map(|l| doubles[l % 8]).collect();
    let w: Vec<f64> = (0..lanes).map(|l| doubles[(l / 4 + l) % 8]).collect();
    let f64s = |values: &[f64]| Arg::u64s(&values.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    let out = run_kernel(
        INTRINSICS,
        1,
        lanes as u32,
        &[
            Arg::u32s(&a),
            Arg::u32s(&b),
            Arg::u32s(&c),
            Arg::f32s(&x),
            Arg::f32s(&y),
            f64s(&u),
            f64s(&w),
            Arg::zeros(lanes * 12),
        ],
    )
    .ok();
    let got = out.u32s(7);
    for l in 0..lanes {
        let (ua, ub) = (i64::from(a[l] & 0xff_ffff), i64::from(b[l] & 0xff_ffff));
        let signed24 = |v: u32| i64::from(((v << 8) as i32) >> 8);
        let (sa, sb) = (signed24(a[l]), signed24(b[l]));
        let sad = |p: i128, q: i128, r: i128| (r + (p - q).abs()) as u32;
        let f = x[l];
        let d = u[l];
        let expected_classes = classes(
            f.is_finite(),
            f.is_infinite(),
            f.is_nan(),
            f == 0.0,
            f.is_subnormal(),
        ) | classes(
            d.is_finite(),
            d.is_infinite(),
            d.is_nan(),
            d == 0.0,
            d.is_subnormal(),
        ) << 8;
        let copied = w[l].copysign(d).to_bits();
        let expected = [
            (ua * ub) as u32,
            ((ua * ub) >> 16) as u32,
            (sa * sb) as u32,
            ((sa * sb) >> 16) as u32,
            sad(a[l].into(), b[l].into(), c[l].into()),
            sad(
                (a[l] as i32).into(),
                (b[l] as i32).into(),
                (c[l] as i32).into(),
            ),
            expected_classes,
            y[l].copysign(f).to_bits(),
            copied as u32,
            (copied >> 32) as u32,
            // sad.u64 of b, a, c: unsigned 64-bit, low word.
            sad(b[l].into(), a[l].into(), c[l].into()),
            // sad.s64 of a * 2^33, b, a (signed), low word.
            sad(
                // shl.b64 wraps at 64 bits, as `<<` on i64 does.
                i128::from(i64::from(a[l] as i32) << 33),
                (b[l] as i32).into(),
                (a[l] as i32).into(),
            ),
        ];
        assert_eq!(&got[12 * l..12 * l + 12], &expected, "lane {l}");
    }
    // By hand: lane 2 has a = 0xffffff, b = words[6] = 0x80000000 (low 24
    // bits zero), so every product is 0; lane 9 has a = 7, b = 0xff000123:
    // 7 * 0x123 = 0x7f5, and signed 0x000123 is positive too.
    assert_eq!(got[24..28], [0, 0, 0, 0]);
    assert_eq!(b[9], 0xff00_0123);
    assert_eq!(got[108..112], [0x7f5, 0, 0x7f5, 0]);
    // Lane 1: x = -0.0 is finite, a number and normal: 1 + 4 + 16.
    assert_eq!(got[12 + 6] & 0xff, 21);
    // Lane 3: x is subnormal (finite, number, subnormal: 1 + 4 + 32).
    assert_eq!(got[36 + 6] & 0xff, 37);
}
