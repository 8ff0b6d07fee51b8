//! Arithmetic semantics, lane by lane: integer add/sub/mul/div/rem/min/max,
//! shifts, bit operations, `setp` with every comparison, `selp`, predicate
//! logic, `cvt` between integers and floats with each rounding, and the float
//! operations (`fma.rn.f32` exactness, min/max with NaN). Every lane works on
//! its own inputs, so the lanes of one warp compute different things.

mod common;
use common::*;

/// A small deterministic generator for lane inputs.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    /// A finite float with a moderate exponent.
    fn float(&mut self) -> f32 {
        let bits = self.next();
        let sign = bits & 0x8000_0000;
        let exponent = 100 + (bits >> 23) % 54; // 2^-27 .. 2^26
        f32::from_bits(sign | exponent << 23 | (self.next() & 0x7f_ffff))
    }
}

/// 32 integer operands per side: edge cases first, then pseudo-random values.
fn int_inputs() -> (Vec<u32>, Vec<u32>) {
    let edges: [(u32, u32); 16] = [
        (0, 0),
        (1, 0),
        (7, 2),
        ((-7i32) as u32, 2),
        (7, (-2i32) as u32),
        ((-7i32) as u32, (-2i32) as u32),
        (0x8000_0000, u32::MAX), // INT_MIN / -1
        (0x7fff_ffff, 1),
        (u32::MAX, u32::MAX),
        (u32::MAX, 1),
        (0x8000_0000, 0x8000_0000),
        (0xdead_beef, 0),
        (12345, 0x1_0000),
        (0x00f0_0000, 3),
        (0x8000_0001, 0x7fff_ffff),
        (100, 100),
    ];
    let mut lcg = Lcg(42);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for lane in 0..32 {
        let (x, y) = if lane < edges.len() {
            edges[lane]
        } else {
            (lcg.next(), lcg.next() >> (lane % 31))
        };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

// Loads A[t] and B[t] and writes 32 integer results per lane (stride 128 bytes).
const INT_OPS: &str = r#"
.kernel intops(.param .u64 A, .param .u64 B, .param .u64 OUT)
{
    .reg .u32 %t, %a, %b, %r, %sh;
    .reg .u64 %pa, %pb, %po, %off, %w;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.u32 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.u32 %b, [%pb];
    mul.wide.u32 %off, %t, 128;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    shl.b32 %sh, %t, 1;
    add.u32 %r, %a, %b;        st.global.u32 [%po], %r;
    sub.u32 %r, %a, %b;        st.global.u32 [%po+4], %r;
    mul.lo.u32 %r, %a, %b;     st.global.u32 [%po+8], %r;
    mul.hi.u32 %r, %a, %b;     st.global.u32 [%po+12], %r;
    mul.hi.s32 %r, %a, %b;     st.global.u32 [%po+16], %r;
    div.u32 %r, %a, %b;        st.global.u32 [%po+20], %r;
    div.s32 %r, %a, %b;        st.global.u32 [%po+24], %r;
    rem.u32 %r, %a, %b;        st.global.u32 [%po+28], %r;
    rem.s32 %r, %a, %b;        st.global.u32 [%po+32], %r;
    min.u32 %r, %a, %b;        st.global.u32 [%po+36], %r;
    min.s32 %r, %a, %b;        st.global.u32 [%po+40], %r;
    max.u32 %r, %a, %b;        st.global.u32 [%po+44], %r;
    max.s32 %r, %a, %b;        st.global.u32 [%po+48], %r;
    and.b32 %r, %a, %b;        st.global.u32 [%po+52], %r;
    or.b32 %r, %a, %b;         st.global.u32 [%po+56], %r;
    xor.b32 %r, %a, %b;        st.global.u32 [%po+60], %r;
    not.b32 %r, %a;            st.global.u32 [%po+64], %r;
    shl.b32 %r, %a, %sh;       st.global.u32 [%po+68], %r;
    shr.u32 %r, %a, %sh;       st.global.u32 [%po+72], %r;
    shr.s32 %r, %a, %sh;       st.global.u32 [%po+76], %r;
    popc.b32 %r, %a;           st.global.u32 [%po+80], %r;
    clz.b32 %r, %a;            st.global.u32 [%po+84], %r;
    brev.b32 %r, %a;           st.global.u32 [%po+88], %r;
    neg.s32 %r, %a;            st.global.u32 [%po+92], %r;
    abs.s32 %r, %a;            st.global.u32 [%po+96], %r;
    mad.lo.u32 %r, %a, %b, %t; st.global.u32 [%po+100], %r;
    mad.hi.s32 %r, %a, %b, %t; st.global.u32 [%po+104], %r;
    shl.b32 %r, %a, 32;        st.global.u32 [%po+108], %r;
    mul.wide.u32 %w, %a, %b;   st.global.u64 [%po+112], %w;
    mul.wide.s32 %w, %a, %b;   st.global.u64 [%po+120], %w;
}
"#;

fn int_expected(lane: u32, a: u32, b: u32) -> [u32; 32] {
    let (sa, sb) = (a as i32, b as i32);
    let sh = lane * 2;
    let wide_u = u64::from(a) * u64::from(b);
    let wide_s = (i64::from(sa) * i64::from(sb)) as u64;
    [
        a.wrapping_add(b),
        a.wrapping_sub(b),
        a.wrapping_mul(b),
        (wide_u >> 32) as u32,
        (wide_s >> 32) as u32,
        // Division by zero gives all ones, quotient and remainder alike, as an
        // H100 does for div/rem.{s32,u32,s64,u64} in inline PTX.
        a.checked_div(b).unwrap_or(u32::MAX),
        if b == 0 {
            u32::MAX
        } else {
            sa.wrapping_div(sb) as u32
        },
        a.checked_rem(b).unwrap_or(u32::MAX),
        if b == 0 {
            u32::MAX
        } else {
            sa.wrapping_rem(sb) as u32
        },
        a.min(b),
        sa.min(sb) as u32,
        a.max(b),
        sa.max(sb) as u32,
        a & b,
        a | b,
        a ^ b,
        !a,
        // PTX clamps shift amounts: at or beyond the width, 0 or the sign.
        if sh >= 32 { 0 } else { a << sh },
        if sh >= 32 { 0 } else { a >> sh },
        (sa >> sh.min(31)) as u32,
        a.count_ones(),
        a.leading_zeros(),
        a.reverse_bits(),
        sa.wrapping_neg() as u32,
        sa.wrapping_abs() as u32,
        a.wrapping_mul(b).wrapping_add(lane),
        ((wide_s >> 32) as u32).wrapping_add(lane),
        0,
        wide_u as u32,
        (wide_u >> 32) as u32,
        wide_s as u32,
        (wide_s >> 32) as u32,
    ]
}

#[test]
fn integer_operations_per_lane() {
    let (a, b) = int_inputs();
    let out = run_kernel(
        INT_OPS,
        1,
        32,
        &[Arg::u32s(&a), Arg::u32s(&b), Arg::zeros(32 * 32)],
    )
    .ok();
    let results = out.u32s(2);
    for lane in 0..32u32 {
        let got = &results[lane as usize * 32..lane as usize * 32 + 32];
        let want = int_expected(lane, a[lane as usize], b[lane as usize]);
        for (index, (got, want)) in got.iter().zip(want).enumerate() {
            assert_eq!(
                *got, want,
                "lane {lane}, result {index}: a = {:#x}, b = {:#x}",
                a[lane as usize], b[lane as usize]
            );
        }
    }
}

// 64-bit integer operations on A[t], B[t] (u64): 12 results per lane.
const INT64_OPS: &str = r#"
.kernel intops64(.param .u64 A, .param .u64 B, .param .u64 OUT)
{
    .reg .u32 %t, %sh;
    .reg .u64 %a, %b, %r, %pa, %pb, %po, %off;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 8;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.u64 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.u64 %b, [%pb];
    mul.wide.u32 %off, %t, 96;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    shl.b32 %sh, %t, 2;
    add.u64 %r, %a, %b;        st.global.u64 [%po], %r;
    sub.s64 %r, %a, %b;        st.global.u64 [%po+8], %r;
    mul.lo.u64 %r, %a, %b;     st.global.u64 [%po+16], %r;
    mul.hi.u64 %r, %a, %b;     st.global.u64 [%po+24], %r;
    mul.hi.s64 %r, %a, %b;     st.global.u64 [%po+32], %r;
    div.s64 %r, %a, %b;        st.global.u64 [%po+40], %r;
    rem.u64 %r, %a, %b;        st.global.u64 [%po+48], %r;
    min.s64 %r, %a, %b;        st.global.u64 [%po+56], %r;
    max.u64 %r, %a, %b;        st.global.u64 [%po+64], %r;
    shl.b64 %r, %a, %sh;       st.global.u64 [%po+72], %r;
    shr.s64 %r, %a, %sh;       st.global.u64 [%po+80], %r;
    shr.u64 %r, %a, %sh;       st.global.u64 [%po+88], %r;
}
"#;

#[test]
fn integer_operations_64_bit_per_lane() {
    let mut lcg = Lcg(7);
    let mut a = vec![
        0u64,
        1,
        i64::MIN as u64,
        u64::MAX,
        (-9i64) as u64,
        u64::MAX,
        1 << 63,
        12345678901234,
    ];
    let mut b = vec![0u64, 0, u64::MAX, u64::MAX, 4, 2, 3, (-5i64) as u64];
    while a.len() < 32 {
        a.push(u64::from(lcg.next()) << 32 | u64::from(lcg.next()));
        b.push((u64::from(lcg.next()) << 32 | u64::from(lcg.next())) >> (a.len() % 64));
    }
    let out = run_kernel(
        INT64_OPS,
        1,
        32,
        &[Arg::u64s(&a), Arg::u64s(&b), Arg::Buffer(vec![0; 32 * 96])],
    )
    .ok();
    let results = out.u64s(2);
    for lane in 0..32usize {
        let (x, y) = (a[lane], b[lane]);
        let (sx, sy) = (x as i64, y as i64);
        let sh = lane as u32 * 4;
        let want = [
            x.wrapping_add(y),
            x.wrapping_sub(y),
            x.wrapping_mul(y),
            ((u128::from(x) * u128::from(y)) >> 64) as u64,
            ((i128::from(sx) * i128::from(sy)) >> 64) as u64,
            if y == 0 {
                u64::MAX
            } else {
                sx.wrapping_div(sy) as u64
            },
            x.checked_rem(y).unwrap_or(u64::MAX),
            sx.min(sy) as u64,
            x.max(y),
            if sh >= 64 { 0 } else { x << sh },
            (sx >> sh.min(63)) as u64,
            if sh >= 64 { 0 } else { x >> sh },
        ];
        assert_eq!(
            &results[lane * 12..lane * 12 + 12],
            &want,
            "lane {lane}: a = {x:#x}, b = {y:#x}"
        );
    }
}

// Every integer comparison, signed and unsigned on the same bits, combined
// setp forms, selp (also with a negated condition) and predicate logic.
const SETP: &str = r#"
.kernel setp(.param .u64 A, .param .u64 B, .param .u64 OUT)
{
    .reg .u32 %t, %a, %b, %r, %odd;
    .reg .u64 %pa, %pb, %po, %off;
    .reg .pred %p, %q, %s;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.u32 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.u32 %b, [%pb];
    mul.wide.u32 %off, %t, 128;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    and.b32 %odd, %t, 1;
    setp.ne.u32 %q, %odd, 0;
    setp.eq.s32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po], %r;
    setp.ne.s32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+4], %r;
    setp.lt.s32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+8], %r;
    setp.le.s32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+12], %r;
    setp.gt.s32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+16], %r;
    setp.ge.s32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+20], %r;
    setp.lt.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+24], %r;
    setp.le.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+28], %r;
    setp.gt.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+32], %r;
    setp.ge.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+36], %r;
    setp.lo.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+40], %r;
    setp.ls.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+44], %r;
    setp.hi.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+48], %r;
    setp.hs.u32 %p, %a, %b;            selp.u32 %r, 1, 0, %p; st.global.u32 [%po+52], %r;
    setp.lt.and.s32 %p, %a, %b, %q;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+56], %r;
    setp.lt.or.s32 %p, %a, %b, !%q;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+60], %r;
    setp.lt.xor.u32 %p, %a, %b, %q;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+64], %r;
    setp.lt.s32 %p, %a, %b;
    selp.u32 %r, %a, %b, !%p;          st.global.u32 [%po+68], %r;
    setp.lt.u32 %s, %a, %b;
    and.pred %p, %s, %q;               selp.u32 %r, 1, 0, %p; st.global.u32 [%po+72], %r;
    or.pred %p, %s, %q;                selp.u32 %r, 1, 0, %p; st.global.u32 [%po+76], %r;
    xor.pred %p, %s, %q;               selp.u32 %r, 1, 0, %p; st.global.u32 [%po+80], %r;
    not.pred %p, %s;                   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+84], %r;
    mov.pred %p, %q;                   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+88], %r;
}
"#;

#[test]
fn setp_selp_and_predicate_logic_per_lane() {
    let (a, b) = int_inputs();
    let out = run_kernel(
        SETP,
        1,
        32,
        &[Arg::u32s(&a), Arg::u32s(&b), Arg::zeros(32 * 32)],
    )
    .ok();
    let results = out.u32s(2);
    for lane in 0..32usize {
        let (x, y) = (a[lane], b[lane]);
        let (sx, sy) = (x as i32, y as i32);
        let q = lane % 2 == 1;
        let s = x < y;
        let want: Vec<u32> = [
            sx == sy,
            sx != sy,
            sx < sy,
            sx <= sy,
            sx > sy,
            sx >= sy,
            x < y,
            x <= y,
            x > y,
            x >= y,
            x < y,
            x <= y,
            x > y,
            x >= y,
            sx < sy && q,
            sx < sy || !q,
            (x < y) != q,
        ]
        .iter()
        .map(|&v| u32::from(v))
        .chain([if sx < sy { y } else { x }])
        .chain(
            [s && q, s || q, s != q, !s, q]
                .iter()
                .map(|&v| u32::from(v)),
        )
        .collect();
        assert_eq!(
            &results[lane * 32..lane * 32 + want.len()],
            &want[..],
            "lane {lane}: a = {x:#x}, b = {y:#x}"
        );
    }
}

// Float comparisons, ordered and unordered, with NaN operands.
const SETP_F32: &str = r#"
.kernel setpf(.param .u64 A, .param .u64 B, .param .u64 OUT)
{
    .reg .u32 %t, %r;
    .reg .f32 %a, %b;
    .reg .u64 %pa, %pb, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.f32 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.f32 %b, [%pb];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    setp.eq.f32 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po], %r;
    setp.ne.f32 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+4], %r;
    setp.lt.f32 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+8], %r;
    setp.le.f32 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+12], %r;
    setp.gt.f32 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+16], %r;
    setp.ge.f32 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+20], %r;
    setp.equ.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+24], %r;
    setp.neu.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+28], %r;
    setp.ltu.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+32], %r;
    setp.leu.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+36], %r;
    setp.gtu.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+40], %r;
    setp.geu.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+44], %r;
    setp.num.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+48], %r;
    setp.nan.f32 %p, %a, %b;   selp.u32 %r, 1, 0, %p; st.global.u32 [%po+52], %r;
}
"#;

fn float_pairs() -> (Vec<f32>, Vec<f32>) {
    let nan = f32::NAN;
    let edges = [
        (1.0f32, 2.0f32),
        (2.0, 1.0),
        (1.5, 1.5),
        (nan, 1.0),
        (1.0, nan),
        (nan, nan),
        (0.0, -0.0),
        (f32::INFINITY, f32::MAX),
        (f32::NEG_INFINITY, f32::INFINITY),
        (-3.25, -3.5),
        (f32::MIN_POSITIVE / 4.0, 0.0),
    ];
    let mut lcg = Lcg(99);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for lane in 0..32 {
        let (x, y) = if lane < edges.len() {
            edges[lane]
        } else {
            (lcg.float(), lcg.float())
        };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

#[test]
fn float_comparisons_with_nan() {
    let (a, b) = float_pairs();
    let out = run_kernel(
        SETP_F32,
        1,
        32,
        &[Arg::f32s(&a), Arg::f32s(&b), Arg::zeros(32 * 16)],
    )
    .ok();
    let results = out.u32s(2);
    for lane in 0..32usize {
        let (x, y) = (a[lane], b[lane]);
        let u = x.is_nan() || y.is_nan();
        let want: Vec<u32> = [
            x == y,
            !u && x != y,
            x < y,
            x <= y,
            x > y,
            x >= y,
            u || x == y,
            u || x != y,
            u || x < y,
            u || x <= y,
            u || x > y,
            u || x >= y,
            !u,
            u,
        ]
        .iter()
        .map(|&v| u32::from(v))
        .collect();
        assert_eq!(
            &results[lane * 16..lane * 16 + 14],
            &want[..],
            "lane {lane}: a = {x}, b = {y}"
        );
    }
}

// Integer widening/narrowing/saturating conversions of A[t] (16 words per lane).
const CVT_INT: &str = r#"
.kernel cvtint(.param .u64 A, .param .u64 OUT)
{
    .reg .u32 %t, %a, %r;
    .reg .b8 %c8;
    .reg .b16 %c16;
    .reg .u64 %pa, %po, %off, %w;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.u32 %a, [%pa];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    cvt.u8.u32 %c8, %a;
    cvt.s32.s8 %r, %c8;        st.global.u32 [%po], %r;
    cvt.u32.u8 %r, %c8;        st.global.u32 [%po+4], %r;
    cvt.u16.u32 %c16, %a;
    cvt.s32.s16 %r, %c16;      st.global.u32 [%po+8], %r;
    cvt.u32.u16 %r, %c16;      st.global.u32 [%po+12], %r;
    cvt.sat.s8.s32 %c8, %a;
    cvt.s32.s8 %r, %c8;        st.global.u32 [%po+16], %r;
    cvt.sat.u16.s32 %c16, %a;
    cvt.u32.u16 %r, %c16;      st.global.u32 [%po+20], %r;
    cvt.s64.s32 %w, %a;        st.global.u64 [%po+24], %w;
    cvt.u64.u32 %w, %a;        st.global.u64 [%po+32], %w;
    cvt.u64.s32 %w, %a;        st.global.u64 [%po+40], %w;
    mul.wide.u32 %w, %a, 3;
    cvt.u32.u64 %r, %w;        st.global.u32 [%po+48], %r;
    cvt.sat.s32.u32 %r, %a;    st.global.u32 [%po+52], %r;
}
"#;

#[test]
fn integer_conversions_extend_narrow_and_saturate() {
    let (a, _) = int_inputs();
    let out = run_kernel(CVT_INT, 1, 32, &[Arg::u32s(&a), Arg::zeros(32 * 16)]).ok();
    let words = out.u32s(1);
    let wide = out.u64s(1);
    for lane in 0..32usize {
        let x = a[lane];
        let s = x as i32;
        let w = &words[lane * 16..lane * 16 + 16];
        let d = &wide[lane * 8..lane * 8 + 8];
        assert_eq!(w[0], x as u8 as i8 as i32 as u32, "lane {lane} s8");
        assert_eq!(w[1], x & 0xff, "lane {lane} u8");
        assert_eq!(w[2], x as u16 as i16 as i32 as u32, "lane {lane} s16");
        assert_eq!(w[3], x & 0xffff, "lane {lane} u16");
        assert_eq!(w[4], s.clamp(-128, 127) as u32, "lane {lane} sat s8");
        assert_eq!(w[5], s.clamp(0, 65535) as u32, "lane {lane} sat u16");
        assert_eq!(d[3], s as i64 as u64, "lane {lane} s64.s32");
        assert_eq!(d[4], u64::from(x), "lane {lane} u64.u32");
        assert_eq!(d[5], s as i64 as u64, "lane {lane} u64.s32 sign-extends");
        assert_eq!(w[12], (u64::from(x) * 3) as u32, "lane {lane} u32.u64");
        assert_eq!(w[13], x.min(0x7fff_ffff), "lane {lane} sat s32.u32");
    }
}

// Float <-> integer and float <-> float conversions of F[t] and A[t].
const CVT_FLOAT: &str = r#"
.kernel cvtfloat(.param .u64 F, .param .u64 A, .param .u64 OUT)
{
    .reg .u32 %t, %a, %r;
    .reg .f32 %f, %g;
    .reg .f64 %d;
    .reg .u64 %pf, %pa, %po, %off;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pf, [F];
    add.u64 %pf, %pf, %off;
    ld.global.f32 %f, [%pf];
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.u32 %a, [%pa];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    cvt.rni.s32.f32 %r, %f;    st.global.u32 [%po], %r;
    cvt.rzi.s32.f32 %r, %f;    st.global.u32 [%po+4], %r;
    cvt.rmi.s32.f32 %r, %f;    st.global.u32 [%po+8], %r;
    cvt.rpi.s32.f32 %r, %f;    st.global.u32 [%po+12], %r;
    cvt.rzi.u32.f32 %r, %f;    st.global.u32 [%po+16], %r;
    cvt.rni.f32.f32 %g, %f;    st.global.f32 [%po+20], %g;
    cvt.sat.f32.f32 %g, %f;    st.global.f32 [%po+24], %g;
    cvt.rn.f32.s32 %g, %a;     st.global.f32 [%po+28], %g;
    cvt.rn.f32.u32 %g, %a;     st.global.f32 [%po+32], %g;
    cvt.rz.f32.u32 %g, %a;     st.global.f32 [%po+36], %g;
    cvt.f64.f32 %d, %f;        st.global.f64 [%po+40], %d;
    mul.f64 %d, %d, 0d3FF0000000000001;
    cvt.rn.f32.f64 %g, %d;     st.global.f32 [%po+48], %g;
    cvt.rz.f32.f64 %g, %d;     st.global.f32 [%po+52], %g;
}
"#;

/// `x` rounded toward zero to f32 (x exactly known as f64).
fn f32_toward_zero(x: f64) -> f32 {
    let nearest = x as f32;
    if f64::from(nearest).abs() > x.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    }
}

#[test]
fn float_conversions_round_as_asked() {
    let mut floats = vec![
        2.5f32,
        -2.5,
        3.5,
        -0.5,
        0.5,
        1.4999999,
        -1.5,
        1e10,
        -1e10,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        2147483520.0,  // largest f32 below 2^31
        4294967040.0,  // largest f32 below 2^32
        -2147483648.0, // INT_MIN exactly
        0.75,
    ];
    let mut lcg = Lcg(3);
    while floats.len() < 32 {
        floats.push(lcg.float());
    }
    let ints: Vec<u32> = (0..32u32)
        .map(|lane| match lane {
            0 => 0x0100_0001, // 2^24 + 1: not an f32
            1 => 0xffff_ffff,
            2 => 0x8000_0000,
            3 => 0x7fff_ffff,
            4 => 0x0100_0003,
            _ => lane.wrapping_mul(0x9e37_79b9),
        })
        .collect();
    let out = run_kernel(
        CVT_FLOAT,
        1,
        32,
        &[Arg::f32s(&floats), Arg::u32s(&ints), Arg::zeros(32 * 16)],
    )
    .ok();
    let words = out.u32s(2);
    let wide = out.u64s(2);
    let to_s32 = |x: f64| -> u32 {
        if x.is_nan() {
            0
        } else {
            x.clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32
        }
    };
    for lane in 0..32usize {
        let f = floats[lane];
        let a = ints[lane];
        let w = &words[lane * 16..lane * 16 + 16];
        let x = f64::from(f);
        assert_eq!(w[0], to_s32(x.round_ties_even()), "lane {lane}: rni({f})");
        assert_eq!(w[1], to_s32(x.trunc()), "lane {lane}: rzi({f})");
        assert_eq!(w[2], to_s32(x.floor()), "lane {lane}: rmi({f})");
        assert_eq!(w[3], to_s32(x.ceil()), "lane {lane}: rpi({f})");
        let unsigned = if f.is_nan() {
            0
        } else {
            x.trunc().clamp(0.0, u32::MAX as f64) as u32
        };
        assert_eq!(w[4], unsigned, "lane {lane}: rzi.u32({f})");
        let integral = f32::from_bits(w[5]);
        if f.is_nan() {
            assert!(integral.is_nan(), "lane {lane}: rni.f32(NaN)");
        } else {
            assert_eq!(
                integral.to_bits(),
                f.round_ties_even().to_bits(),
                "lane {lane}: rni.f32({f})"
            );
        }
        let saturated = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        assert_eq!(
            f32::from_bits(w[6]).to_bits(),
            saturated.to_bits(),
            "lane {lane}: sat({f})"
        );
        assert_eq!(
            f32::from_bits(w[7]),
            a as i32 as f32,
            "lane {lane}: rn.f32.s32"
        );
        assert_eq!(f32::from_bits(w[8]), a as f32, "lane {lane}: rn.f32.u32");
        assert_eq!(
            f32::from_bits(w[9]),
            f32_toward_zero(f64::from(a)),
            "lane {lane}: rz.f32.u32({a})"
        );
        let d = f64::from_bits(wide[lane * 8 + 5]);
        assert_eq!(d.to_bits(), x.to_bits(), "lane {lane}: f64.f32({f})");
        let bumped = x * f64::from_bits(0x3FF0_0000_0000_0001);
        if !bumped.is_nan() {
            assert_eq!(
                f32::from_bits(w[12]).to_bits(),
                (bumped as f32).to_bits(),
                "lane {lane}: rn.f32.f64"
            );
            assert_eq!(
                f32::from_bits(w[13]).to_bits(),
                if bumped.is_infinite() {
                    bumped as f32
                } else {
                    f32_toward_zero(bumped)
                }
                .to_bits(),
                "lane {lane}: rz.f32.f64({bumped})"
            );
        }
    }
}

// Float arithmetic of A[t], B[t], C[t]: fma, add, sub, mul, div, min, max, neg, abs, sqrt.
const FLOAT_OPS: &str = r#"
.kernel floatops(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 OUT)
{
    .reg .u32 %t;
    .reg .f32 %a, %b, %c, %r;
    .reg .u64 %pa, %pb, %pc, %po, %off;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.f32 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.f32 %b, [%pb];
    ld.param.u64 %pc, [C];
    add.u64 %pc, %pc, %off;
    ld.global.f32 %c, [%pc];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    fma.rn.f32 %r, %a, %b, %c;  st.global.f32 [%po], %r;
    add.rn.f32 %r, %a, %b;      st.global.f32 [%po+4], %r;
    sub.f32 %r, %a, %b;         st.global.f32 [%po+8], %r;
    mul.rn.f32 %r, %a, %b;      st.global.f32 [%po+12], %r;
    div.rn.f32 %r, %a, %b;      st.global.f32 [%po+16], %r;
    min.f32 %r, %a, %b;         st.global.f32 [%po+20], %r;
    max.f32 %r, %a, %b;         st.global.f32 [%po+24], %r;
    neg.f32 %r, %a;             st.global.f32 [%po+28], %r;
    abs.f32 %r, %a;             st.global.f32 [%po+32], %r;
    sqrt.rn.f32 %r, %c;         st.global.f32 [%po+36], %r;
}
"#;

#[test]
fn float_operations_fma_is_single_rounding_and_min_max_skip_nan() {
    let nan = f32::NAN;
    let eps = f32::EPSILON;
    // fma cases where rounding a*b first, or rounding a*b+c through f64 and
    // then to f32, would give a different answer.
    let mut cases: Vec<(f32, f32, f32)> = vec![
        (1.0 + eps, 1.0 - eps / 2.0, 1e-8),
        (1.0 + eps, 1.0 + eps, -1.0),
        (0.1, 0.2, 0.3),
        (1.0001, 1.0001, -1.0002),
        (3.0e38, 2.0, -3.0e38),
        (1.0 + 2.0 * eps, 1.0 + 4.0 * eps, -(1.0 + 6.0 * eps)),
        (f32::MAX, 2.0, 0.0),
        (nan, 1.0, 1.0),
        (1.0, nan, 2.0),
        (nan, nan, 4.0),
        (-0.0, 0.0, 9.0),
        (f32::MIN_POSITIVE, 0.5, f32::MIN_POSITIVE * eps),
        (-2.0, 3.0, f32::INFINITY),
    ];
    let mut lcg = Lcg(1234);
    while cases.len() < 32 {
        cases.push((lcg.float(), lcg.float(), lcg.float()));
    }
    let a: Vec<f32> = cases.iter().map(|c| c.0).collect();
    let b: Vec<f32> = cases.iter().map(|c| c.1).collect();
    let c: Vec<f32> = cases.iter().map(|c| c.2).collect();
    let out = run_kernel(
        FLOAT_OPS,
        1,
        32,
        &[
            Arg::f32s(&a),
            Arg::f32s(&b),
            Arg::f32s(&c),
            Arg::zeros(32 * 16),
        ],
    )
    .ok();
    let results = out.f32s(3);
    // Bits must match exactly, except that any NaN matches any NaN.
    let same =
        |got: f32, want: f32| (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits();
    for lane in 0..32usize {
        let (x, y, z) = (a[lane], b[lane], c[lane]);
        let r = &results[lane * 16..lane * 16 + 16];
        let want = [
            x.mul_add(y, z),
            x + y,
            x - y,
            x * y,
            x / y,
            // PTX min/max: a NaN operand gives the other operand; -0 < +0.
            if x.is_nan() {
                y
            } else if y.is_nan() || x < y || (x == y && x.is_sign_negative()) {
                x
            } else {
                y
            },
            if x.is_nan() {
                y
            } else if y.is_nan() || x > y || (x == y && x.is_sign_positive()) {
                x
            } else {
                y
            },
            -x,
            x.abs(),
            z.sqrt(),
        ];
        for (index, want) in want.into_iter().enumerate() {
            assert!(
                same(r[index], want),
                "lane {lane}, result {index}: ({x:e}, {y:e}, {z:e}) gave {:e} ({:#x}), want {want:e} ({:#x})",
                r[index],
                r[index].to_bits(),
                want.to_bits()
            );
        }
    }
    // The double-rounding case: the naive product-then-add differs.
    let (x, y, z) = cases[0];
    assert_ne!((x * y + z).to_bits(), results[0].to_bits());
}

// min/max.f32 of signed zeros in both orders, and of two NaNs.
const SIGNED_ZEROS: &str = r#"
.kernel zeros(.param .u64 OUT)
{
    .reg .f32 %p, %n, %r, %nan;
    .reg .u64 %po;
    ld.param.u64 %po, [OUT];
    mov.b32 %p, 0x00000000;
    mov.b32 %n, 0x80000000;
    mov.b32 %nan, 0x7fc00001;
    min.f32 %r, %p, %n;     st.global.f32 [%po], %r;
    min.f32 %r, %n, %p;     st.global.f32 [%po+4], %r;
    max.f32 %r, %p, %n;     st.global.f32 [%po+8], %r;
    max.f32 %r, %n, %p;     st.global.f32 [%po+12], %r;
    min.f32 %r, %nan, %nan; st.global.f32 [%po+16], %r;
}
"#;

#[test]
fn float_min_max_order_signed_zeros() {
    let out = run_kernel(SIGNED_ZEROS, 1, 1, &[Arg::zeros(5)]).ok();
    let words = out.u32s(0);
    // Measured on an H100 (min.f32/max.f32 in inline PTX): -0 < +0 in both orders.
    assert_eq!(&words[..4], &[0x8000_0000, 0x8000_0000, 0, 0]);
    assert!(f32::from_bits(words[4]).is_nan());
}

// setp on 64-bit and 16-bit integers, signed and unsigned, on A[t], B[t] (u64).
const SETP_WIDTHS: &str = r#"
.kernel setpwidths(.param .u64 A, .param .u64 B, .param .u64 OUT)
{
    .reg .u32 %t, %r;
    .reg .u64 %a, %b, %pa, %pb, %po, %off;
    .reg .b16 %h, %k;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 8;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.u64 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.u64 %b, [%pb];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    cvt.u16.u64 %h, %a;
    cvt.u16.u64 %k, %b;
    setp.lt.s64 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po], %r;
    setp.lt.u64 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+4], %r;
    setp.ge.s64 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+8], %r;
    setp.hi.u64 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+12], %r;
    setp.eq.s64 %p, %a, %b;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+16], %r;
    setp.lt.s16 %p, %h, %k;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+20], %r;
    setp.lt.u16 %p, %h, %k;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+24], %r;
    setp.gt.s16 %p, %h, %k;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+28], %r;
    setp.ls.u16 %p, %h, %k;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+32], %r;
    setp.ne.s16 %p, %h, %k;    selp.u32 %r, 1, 0, %p; st.global.u32 [%po+36], %r;
}
"#;

#[test]
fn setp_on_64_and_16_bit_integers() {
    let mut lcg = Lcg(5);
    let mut a = vec![
        0u64,
        u64::MAX,
        1 << 63,
        0x7fff_ffff_ffff_ffff,
        0x8000,
        0xffff_ffff_0000_7fff,
        5,
        0x1_0000_0000,
    ];
    let mut b = vec![
        1u64,
        0,
        0x7fff_ffff_ffff_ffff,
        1 << 63,
        0x7fff,
        0x8000,
        5,
        0xffff_ffff,
    ];
    while a.len() < 32 {
        a.push(u64::from(lcg.next()) << 32 | u64::from(lcg.next()));
        b.push(u64::from(lcg.next()) << 32 | u64::from(lcg.next()));
    }
    let out = run_kernel(
        SETP_WIDTHS,
        1,
        32,
        &[Arg::u64s(&a), Arg::u64s(&b), Arg::zeros(32 * 16)],
    )
    .ok();
    let words = out.u32s(2);
    for lane in 0..32 {
        let (x, y) = (a[lane], b[lane]);
        let (sx, sy) = (x as i64, y as i64);
        let (h, k) = (x as u16, y as u16);
        let (sh, sk) = (h as i16, k as i16);
        let want: Vec<u32> = [
            sx < sy,
            x < y,
            sx >= sy,
            x > y,
            x == y,
            sh < sk,
            h < k,
            sh > sk,
            h <= k,
            h != k,
        ]
        .iter()
        .map(|&v| u32::from(v))
        .collect();
        assert_eq!(
            &words[lane * 16..lane * 16 + 10],
            &want[..],
            "lane {lane}: a = {x:#x}, b = {y:#x}"
        );
    }
}

// fma.rn.f32 with a partial guard (odd lanes), writing one of its own sources.
const FMA_PARTIAL: &str = r#"
.kernel fmapartial(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 OUT)
{
    .reg .u32 %t, %m;
    .reg .f32 %a, %b, %c;
    .reg .u64 %pa, %pb, %pc, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pa, [A];
    add.u64 %pa, %pa, %off;
    ld.global.f32 %a, [%pa];
    ld.param.u64 %pb, [B];
    add.u64 %pb, %pb, %off;
    ld.global.f32 %b, [%pb];
    ld.param.u64 %pc, [C];
    add.u64 %pc, %pc, %off;
    ld.global.f32 %c, [%pc];
    and.b32 %m, %t, 1;
    setp.eq.u32 %p, %m, 1;
@%p fma.rn.f32 %c, %a, %b, %c;       // @fma
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    st.global.f32 [%po], %c;
}
"#;

#[test]
fn fma_with_a_partial_mask_writes_only_its_lanes() {
    let eps = f32::EPSILON;
    let mut lcg = Lcg(77);
    let mut cases = vec![
        (1.0 + eps, 1.0 - eps / 2.0, 1e-8f32),
        (1.0e-20, 1.0e-20, 1.0e-39),
        (f32::MIN_POSITIVE, 0.5, f32::from_bits(1)),
        (1.0 + eps, 1.0 + eps, -1.0),
    ];
    while cases.len() < 32 {
        cases.push((lcg.float(), lcg.float(), lcg.float()));
    }
    // Each case on an odd lane.
    let mut lanes = Vec::new();
    for i in 0..16 {
        lanes.push(cases[i + 16]);
        lanes.push(cases[i]);
    }
    let a: Vec<f32> = lanes.iter().map(|c| c.0).collect();
    let b: Vec<f32> = lanes.iter().map(|c| c.1).collect();
    let c: Vec<f32> = lanes.iter().map(|c| c.2).collect();
    let out = run_kernel(
        FMA_PARTIAL,
        1,
        32,
        &[Arg::f32s(&a), Arg::f32s(&b), Arg::f32s(&c), Arg::zeros(32)],
    )
    .ok();
    let results = out.f32s(3);
    for lane in 0..32 {
        let want = if lane % 2 == 1 {
            a[lane].mul_add(b[lane], c[lane])
        } else {
            c[lane]
        };
        assert_eq!(results[lane].to_bits(), want.to_bits(), "lane {lane}");
    }
    assert_eq!(out.stats("@fma"), counts(1, 16));
}
