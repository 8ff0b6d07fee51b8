//! The PTX forms beyond the core set, run lane by lane: `.sat` arithmetic,
//! vector packing and unpacking, funnel shifts and `lop3`, `set` and
//! two-destination `setp`, `mul24`, `sad`, `testp` and `copysign`, each
//! against values worked out by hand or by a host formula of its own.

mod common;
use common::*;

fn f32_bits(values: &[u32]) -> Vec<f32> {
    values.iter().map(|&bits| f32::from_bits(bits)).collect()
}

/// Loads three `.s32` and three `.f32` operands per lane, and writes the
/// saturating results: 3 integer and 4 float words a lane.
const SATURATE: &str = r#"
.kernel saturate(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 X, .param .u64 Y,
                 .param .u64 Z, .param .u64 OUT, .param .u64 FOUT)
{
    .reg .u32 %t;
    .reg .s32 %a, %b, %c, %r;
    .reg .f32 %x, %y, %z, %f;
    .reg .u64 %ptr, %off, %po;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %ptr, [A]; add.u64 %ptr, %ptr, %off; ld.global.s32 %a, [%ptr];
    ld.param.u64 %ptr, [B]; add.u64 %ptr, %ptr, %off; ld.global.s32 %b, [%ptr];
    ld.param.u64 %ptr, [C]; add.u64 %ptr, %ptr, %off; ld.global.s32 %c, [%ptr];
    ld.param.u64 %ptr, [X]; add.u64 %ptr, %ptr, %off; ld.global.f32 %x, [%ptr];
    ld.param.u64 %ptr, [Y]; add.u64 %ptr, %ptr, %off; ld.global.f32 %y, [%ptr];
    ld.param.u64 %ptr, [Z]; add.u64 %ptr, %ptr, %off; ld.global.f32 %z, [%ptr];
    mul.wide.u32 %off, %t, 12;
    ld.param.u64 %po, [OUT]; add.u64 %po, %po, %off;
    add.sat.s32 %r, %a, %b;          st.global.s32 [%po], %r;
    sub.sat.s32 %r, %a, %b;          st.global.s32 [%po+4], %r;
    mad.hi.sat.s32 %r, %a, %b, %c;   st.global.s32 [%po+8], %r;
    mul.wide.u32 %off, %t, 16;
    ld.param.u64 %po, [FOUT]; add.u64 %po, %po, %off;
    add.sat.f32 %f, %x, %y;          st.global.f32 [%po], %f;
    sub.sat.f32 %f, %x, %y;          st.global.f32 [%po+4], %f;
    mul.sat.f32 %f, %x, %y;          st.global.f32 [%po+8], %f;
    fma.rn.sat.f32 %x, %x, %y, %z;   st.global.f32 [%po+12], %x;
}
"#;

#[test]
fn saturating_arithmetic_clamps() {
    let ints: [(i32, i32, i32); 8] = [
        (i32::MAX, 1, 0),
        (i32::MIN, 1, -1),
        (-5, 3, 7),
        (i32::MAX, i32::MIN, i32::MAX),
        (1 << 30, 1 << 30, i32::MAX),
        (i32::MIN, i32::MIN, 0),
        (-1, -1, i32::MIN),
        (100_000, -100_000, -3),
    ];
    // x, y, z, then x + y, x - y, x * y, fma(x, y, z) after `.sat`, by hand.
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let floats: [[f32; 7]; 8] = [
        [0.25, 0.5, 0.125, 0.75, 0.0, 0.125, 0.25],
        [0.75, 0.5, 0.0, 1.0, 0.25, 0.375, 0.375],
        [-0.5, 0.25, 2.0, 0.0, 0.0, 0.0, 1.0],
        [nan, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0],
        [inf, 2.0, -inf, 1.0, 1.0, 1.0, 0.0],
        [-0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0],
        [inf, inf, 0.0, 1.0, 0.0, 1.0, 1.0],
        [3.0, 1.0, -2.5, 1.0, 1.0, 1.0, 0.5],
    ];
    let lane = |l: usize| l % 8;
    let column = |k: usize| Arg::f32s(&(0..32).map(|l| floats[lane(l)][k]).collect::<Vec<_>>());
    let a: Vec<i32> = (0..32).map(|l| ints[lane(l)].0).collect();
    let b: Vec<i32> = (0..32).map(|l| ints[lane(l)].1).collect();
    let c: Vec<i32> = (0..32).map(|l| ints[lane(l)].2).collect();
    let outcome = run_kernel(
        SATURATE,
        1,
        32,
        &[
            Arg::i32s(&a),
            Arg::i32s(&b),
            Arg::i32s(&c),
            column(0),
            column(1),
            column(2),
            Arg::zeros(32 * 3),
            Arg::zeros(32 * 4),
        ],
    )
    .ok();
    let out = outcome.i32s(6);
    let fout = outcome.u32s(7);
    let clamp = |value: i128| value.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32;
    for l in 0..32 {
        let (x, y, z) = (i128::from(a[l]), i128::from(b[l]), i128::from(c[l]));
        // The high half of the product by floor division: 2^32 * q <= x * y.
        let high = (x * y).div_euclid(1 << 32);
        assert_eq!(out[3 * l], clamp(x + y), "lane {l}: add.sat");
        assert_eq!(out[3 * l + 1], clamp(x - y), "lane {l}: sub.sat");
        assert_eq!(out[3 * l + 2], clamp(high + z), "lane {l}: mad.hi.sat");
        let expected = &floats[lane(l)][3..];
        let got = &fout[4 * l..4 * l + 4];
        for (k, name) in ["add", "sub", "mul", "fma"].iter().enumerate() {
            // Bits, so that +0.0 and -0.0 differ.
            assert_eq!(
                got[k],
                expected[k].to_bits(),
                "lane {l}: {name}.sat.f32 of {:?} = {:?}",
                &floats[lane(l)][..3],
                f32_bits(got)[k]
            );
        }
    }
}

/// Each lane packs two words into a double register and back, unpacks a
/// 64-bit value (under a guard, into a sink, twice into one register, in
/// place), and packs and unpacks halves of a word and of a 64-bit value.
const PACKING: &str = r#"
.kernel packing(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t;
    .reg .b32 %lo, %hi, %x, %y, %z;
    .reg .b16 %h0, %h1;
    .reg .f64 %fd;
    .reg .b64 %v, %w;
    .reg .u64 %ptr, %off;
    .reg .pred %p0;
    mov.u32 %t, %tid.x;
    setp.lt.u32 %p0, %t, 16;
    mul.wide.u32 %off, %t, 8;
    ld.param.u64 %ptr, [IN]; add.u64 %ptr, %ptr, %off; ld.global.b64 %v, [%ptr];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %ptr, [OUT]; add.u64 %ptr, %ptr, %off;
    mov.b64 {%lo, %hi}, %v;
    st.global.b32 [%ptr], %lo;
    st.global.b32 [%ptr+4], %hi;
    mov.b64 %fd, {%hi, %lo};
    st.global.f64 [%ptr+8], %fd;
    mov.b64 {_, %x}, %fd;
    st.global.b32 [%ptr+16], %x;
    mov.b32 %y, 0x55555555;
    @%p0 mov.b64 {%y, _}, %v;
    st.global.b32 [%ptr+20], %y;
    mov.b32 {%h0, %h1}, %lo;
    mov.b32 %z, {%h1, %h0};
    st.global.b32 [%ptr+24], %z;
    mov.b64 %w, {%h0, %h1, %h1, %h0};
    st.global.b64 [%ptr+32], %w;
    mov.b32 %z, {%h0, 0x1234};
    st.global.b32 [%ptr+40], %z;
    mov.b64 {%x, %x}, %v;
    st.global.b32 [%ptr+44], %x;
    mov.b64 {%lo, %hi}, %w;
    mov.b64 {%hi, %lo}, %w;
    st.global.b32 [%ptr+48], %lo;
    st.global.b32 [%ptr+52], %hi;
}
"#;

#[test]
fn vector_packing_moves_element_zero_to_the_low_bits() {
    let inputs: Vec<u64> = (0..32u64)
        .map(|l| 0x0123_4567_89ab_cdefu64.rotate_left(l as u32 * 5) ^ l)
        .collect();
    let outcome = run_kernel(PACKING, 1, 32, &[Arg::u64s(&inputs), Arg::zeros(32 * 16)]).ok();
    let out = outcome.u32s(1);
    for (l, &v) in inputs.iter().enumerate() {
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        let words = &out[16 * l..16 * l + 16];
        let (h0, h1) = (lo & 0xffff, lo >> 16);
        let expected = [
            lo,
            hi,
            // The double holds hi in its low word, lo in its high word.
            hi,
            lo,
            // `{_, %x}` of that double: its high word.
            lo,
            if l < 16 { lo } else { 0x5555_5555 },
            h0 << 16 | h1,
            // Offset 28 is not written.
            0,
            // {h0, h1, h1, h0}: element 0 lowest.
            h1 << 16 | h0,
            h0 << 16 | h1,
            0x1234 << 16 | h0,
            // `{%x, %x}`: the later element wins.
            hi,
            // Unpacked in place from w, then in the other order: the
            // destinations are written from the source read before.
            h0 << 16 | h1,
            h1 << 16 | h0,
            0,
            0,
        ];
        assert_eq!(words, &expected, "lane {l}: v = {v:#018x}");
    }
}

/// Funnel shifts in all four forms and `lop3` with three tables, one result
/// word each a lane.
const FUNNEL: &str = r#"
.kernel funnel(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %n;
    .reg .b32 %a, %b, %c, %d;
    .reg .u64 %ptr, %off;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 12;
    ld.param.u64 %ptr, [IN]; add.u64 %ptr, %ptr, %off;
    ld.global.b32 %a, [%ptr]; ld.global.b32 %b, [%ptr+4]; ld.global.u32 %n, [%ptr+8];
    mul.wide.u32 %off, %t, 32;
    ld.param.u64 %ptr, [OUT]; add.u64 %ptr, %ptr, %off;
    shf.l.wrap.b32 %d, %a, %b, %n;    st.global.b32 [%ptr], %d;
    shf.r.wrap.b32 %d, %a, %b, %n;    st.global.b32 [%ptr+4], %d;
    shf.l.clamp.b32 %d, %a, %b, %n;   st.global.b32 [%ptr+8], %d;
    shf.r.clamp.b32 %d, %a, %b, %n;   st.global.b32 [%ptr+12], %d;
    mov.b32 %c, %n;
    lop3.b32 %d, %a, %b, %c, 0xe8;    st.global.b32 [%ptr+16], %d;
    lop3.b32 %d, %a, %b, %c, 0x96;    st.global.b32 [%ptr+20], %d;
    lop3.b32 %d, %a, %b, %c, 0x1;     st.global.b32 [%ptr+24], %d;
    shf.l.wrap.b32 %a, %a, %a, 8;     st.global.b32 [%ptr+28], %a;
}
"#;

#[test]
fn funnel_shifts_and_lop3() {
    // Shift amounts 0 to 31, then 32, 33, 63, 64 and huge ones by turns.
    let rows: Vec<[u32; 3]> = (0..32u32)
        .map(|l| {
            let a = 0x9e37_79b9u32.wrapping_mul(l + 1);
            let b = 0x7f4a_7c15u32.rotate_left(l) ^ l;
            let n = [l, 32, 33, 63, 64, u32::MAX, 1 << 31, 31][l as usize % 8]
                .wrapping_add((l / 8) * 3);
            [a, b, n]
        })
        .collect();
    let input: Vec<u32> = rows.iter().flatten().copied().collect();
    let outcome = run_kernel(FUNNEL, 1, 32, &[Arg::u32s(&input), Arg::zeros(32 * 8)]).ok();
    let out = outcome.u32s(1);
    for (l, &[a, b, n]) in rows.iter().enumerate() {
        // Host forms written with 32-bit shifts, not through 64 bits.
        let left = |k: u32| {
            if k == 0 {
                b
            } else if k >= 32 {
                a
            } else {
                b << k | a >> (32 - k)
            }
        };
        let right = |k: u32| {
            if k == 0 {
                a
            } else if k >= 32 {
                b
            } else {
                a >> k | b << (32 - k)
            }
        };
        let expected = [
            left(n % 32),
            right(n % 32),
            left(n.min(32)),
            right(n.min(32)),
            (a & b) | (a & n) | (b & n),
            a ^ b ^ n,
            !(a | b | n),
            a.rotate_left(8),
        ];
        assert_eq!(
            &out[8 * l..8 * l + 8],
            &expected,
            "lane {l}: a {a:#x} b {b:#x} n {n}"
        );
    }
}

/// `set` into integers and floats from integer, float and half operands,
/// with a combining predicate, and `setp` with two destinations.
const SET: &str = r#"
.kernel set(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %r, %flags, %bit;
    .reg .s32 %a, %b;
    .reg .f32 %x, %y, %f;
    .reg .b16 %h, %k;
    .reg .u64 %ptr, %off;
    .reg .pred %c, %p, %q;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 20;
    ld.param.u64 %ptr, [IN]; add.u64 %ptr, %ptr, %off;
    ld.global.s32 %a, [%ptr]; ld.global.s32 %b, [%ptr+4];
    ld.global.f32 %x, [%ptr+8]; ld.global.f32 %y, [%ptr+12];
    ld.global.b16 %h, [%ptr+16]; ld.global.b16 %k, [%ptr+18];
    and.b32 %r, %t, 1;
    setp.eq.u32 %c, %r, 1;
    mul.wide.u32 %off, %t, 32;
    ld.param.u64 %ptr, [OUT]; add.u64 %ptr, %ptr, %off;
    set.lt.u32.s32 %r, %a, %b;              st.global.u32 [%ptr], %r;
    set.lo.u32.u32 %r, %a, %b;              st.global.u32 [%ptr+4], %r;
    set.ltu.f32.f32 %f, %x, %y;             st.global.f32 [%ptr+8], %f;
    set.nan.u32.f32 %r, %x, %y;             st.global.u32 [%ptr+12], %r;
    set.ge.or.s32.f32 %r, %x, %y, %c;       st.global.u32 [%ptr+16], %r;
    set.lt.u32.f16 %r, %h, %k;              st.global.u32 [%ptr+20], %r;
    setp.lt.s32 %p|%q, %a, %b;
    selp.u32 %flags, 1, 0, %p;
    selp.u32 %bit, 2, 0, %q;                or.b32 %flags, %flags, %bit;
    setp.ge.and.f32 %p|%q, %x, %y, %c;
    selp.u32 %bit, 4, 0, %p;                or.b32 %flags, %flags, %bit;
    selp.u32 %bit, 8, 0, %q;                or.b32 %flags, %flags, %bit;
    setp.gtu.xor.f32 %c|%q, %x, %y, !%c;
    selp.u32 %bit, 16, 0, %c;               or.b32 %flags, %flags, %bit;
    selp.u32 %bit, 32, 0, %q;               or.b32 %flags, %flags, %bit;
    setp.ne.f16 %p|%q, %h, %k;
    selp.u32 %bit, 64, 0, %p;               or.b32 %flags, %flags, %bit;
    selp.u32 %bit, 128, 0, %q;              or.b32 %flags, %flags, %bit;
    st.global.u32 [%ptr+24], %flags;
}
"#;

#[test]
fn set_and_two_destination_setp() {
    let nan = f32::NAN;
    // a, b, x, y, h, k (halves: 1.0 0x3c00, 2.0 0x4000, NaN 0x7e00, -0 0x8000).
    let rows: [(i32, i32, f32, f32, u16, u16); 8] = [
        (1, 2, 1.0, 2.0, 0x3c00, 0x4000),
        (2, 1, 2.0, 1.0, 0x4000, 0x3c00),
        (-1, 1, nan, 1.0, 0x7e00, 0x3c00),
        (5, 5, 3.0, 3.0, 0x8000, 0x0000),
        (i32::MIN, 0, 1.0, nan, 0x3c00, 0x7e00),
        (0, -7, -0.0, 0.0, 0x4000, 0x4000),
        (7, -7, f32::INFINITY, 1.0, 0x0000, 0x8000),
        (-3, -2, -1.0, f32::NEG_INFINITY, 0xbc00, 0x3c00),
    ];
    let mut input = Vec::new();
    for l in 0..32 {
        let (a, b, x, y, h, k) = rows[l % 8];
        input.extend(a.to_le_bytes());
        input.extend(b.to_le_bytes());
        input.extend(x.to_le_bytes());
        input.extend(y.to_le_bytes());
        input.extend(h.to_le_bytes());
        input.extend(k.to_le_bytes());
    }
    let outcome = run_kernel(SET, 1, 32, &[Arg::bytes(&input), Arg::zeros(32 * 8)]).ok();
    let out = outcome.u32s(1);
    let half = |bits: u16| -> f32 {
        match bits {
            0x3c00 => 1.0,
            0x4000 => 2.0,
            0xbc00 => -1.0,
            0x0000 => 0.0,
            0x8000 => -0.0,
            _ => f32::NAN,
        }
    };
    for l in 0..32 {
        let (a, b, x, y, h, k) = rows[l % 8];
        let c = l % 2 == 1;
        let all = |t: bool| if t { u32::MAX } else { 0 };
        let unordered = x.is_nan() || y.is_nan();
        let ge = !unordered && x >= y;
        let gtu = unordered || x > y;
        let (hv, kv) = (half(h), half(k));
        let half_ne = !hv.is_nan() && !kv.is_nan() && hv != kv;
        let expected = [
            all(a < b),
            all((a as u32) < (b as u32)),
            if unordered || x < y {
                1.0f32.to_bits()
            } else {
                0
            },
            all(unordered),
            all(ge || c),
            all(hv < kv),
        ];
        assert_eq!(
            &out[8 * l..8 * l + 6],
            &expected,
            "lane {l}: {:?}",
            rows[l % 8]
        );
        // p = cmp op c, q = !cmp op c; the third setp reads c before writing it.
        let flags = u32::from(a < b)
            | u32::from(a >= b) << 1
            | u32::from(ge && c) << 2
            | u32::from(!ge && c) << 3
            | u32::from(gtu ^ !c) << 4
            | u32::from(!gtu ^ !c) << 5
            | u32::from(half_ne) << 6
            | u32::from(!half_ne) << 7;
        assert_eq!(out[8 * l + 6], flags, "lane {l}: flags");
    }
}
