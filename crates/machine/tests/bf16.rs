//! bfloat16 in kernels: `.bf16` add, sub, mul, fma, neg, abs, min, max,
//! their `.NaN` and `.relu` forms, `setp` and `set`, lane by lane and on
//! `.bf16x2` pairs; the conversions to and from `.bf16` and into pairs; the
//! forms new to `.f16` alongside; all against results worked out by hand.
//! The bfloat16 forms the machine does not have are errors that say so, and
//! every form prints and parses back to the same module.

mod common;
use common::*;

use warpsim_machine::Program;

/// One row per case: a, b, c, then a + b, a - b, a * b, fma(a, b, c), -a,
/// |a|, min, max, min.NaN, max.NaN and fma.relu, all as bfloat16 bits.
/// Lane `l` takes row `l % 10`.
const ROWS: [[u16; 14]; 10] = [
    // 1 and 2, c = 0.5: exact.
    [
        0x3f80, 0x4000, 0x3f00, 0x4040, 0xbf80, 0x4000, 0x4020, 0xbf80, 0x3f80, 0x3f80, 0x4000,
        0x3f80, 0x4000, 0x4020,
    ],
    // 1.75 and 37/64: the sum 149 * 2^-6 and the difference 150 * 2^-7 are
    // exact; the product 1 + 3 * 2^-8 is a tie between 0x3f81 and 0x3f82
    // that goes to the even 0x3f82, and c = -2^-100 pulls fma below it.
    [
        0x3fe0, 0x3f14, 0x8d80, 0x4015, 0x3f96, 0x3f82, 0x3f81, 0xbfe0, 0x3fe0, 0x3f14, 0x3fe0,
        0x3f14, 0x3fe0, 0x3f81,
    ],
    // -0 and +0, c = -0: -0 + +0 = +0, -0 - +0 = -0, -0 * +0 = -0, fma -0;
    // min is -0, max +0; relu makes -0 +0.
    [
        0x8000, 0x0000, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, 0x0000, 0x0000, 0x8000, 0x0000,
        0x8000, 0x0000, 0x0000,
    ],
    // The largest finite value and 2^119, half its step: the sum is a tie
    // that goes to infinity (0x7f7f is odd), the difference 254.5 * 2^120 a
    // tie that goes to 254 * 2^120; the product overflows, but fma's exact
    // product plus -inf is -inf, which relu makes +0.
    [
        0x7f7f, 0x7b00, 0xff80, 0x7f80, 0x7f7e, 0x7f80, 0xff80, 0xff7f, 0x7f7f, 0x7b00, 0x7f7f,
        0x7b00, 0x7f7f, 0x0000,
    ],
    // A NaN: the canonical NaN out of every arithmetic operation, neg and
    // abs included; min and max give the other operand, their `.NaN` forms
    // the canonical NaN.
    [
        0x7fc0, 0x3f80, 0x3f80, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x3f80, 0x3f80,
        0x7fff, 0x7fff, 0x7fff,
    ],
    // 2^-133 and 0.5, c = 2^-133: the sum and difference round to ±0.5,
    // the product 2^-134 is a tie that goes to +0, and fma's 3 * 2^-134 a
    // tie that goes to 2 * 2^-133.
    [
        0x0001, 0x3f00, 0x0001, 0x3f00, 0xbf00, 0x0000, 0x0002, 0x8001, 0x0001, 0x0001, 0x3f00,
        0x0001, 0x3f00, 0x0002,
    ],
    // inf * 0 is NaN, in mul and in fma.
    [
        0x7f80, 0x0000, 0x3f80, 0x7f80, 0x7f80, 0x7fff, 0x7fff, 0xff80, 0x7f80, 0x0000, 0x7f80,
        0x0000, 0x7f80, 0x7fff,
    ],
    // -256 and -1, c = 1: -257 and 257 are ties that go to ±256 (even);
    // -255 is exact.
    [
        0xc380, 0xbf80, 0x3f80, 0xc380, 0xc37f, 0x4380, 0x4380, 0x4380, 0x4380, 0xc380, 0xbf80,
        0xc380, 0xbf80, 0x4380,
    ],
    // 1.0625 squared is 1 + 2^-3 + 2^-8, a tie that mul rounds to even
    // (0x3f90); c = 2^-100 makes fma round it up (0x3f91), which rounding
    // the sum to f64 first would lose.
    [
        0x3f88, 0x3f88, 0x0d80, 0x4008, 0x0000, 0x3f90, 0x3f91, 0xbf88, 0x3f88, 0x3f88, 0x3f88,
        0x3f88, 0x3f88, 0x3f91,
    ],
    // -1 and 2, c = 1: fma is -1, which relu makes +0.
    [
        0xbf80, 0x4000, 0x3f80, 0x3f80, 0xc040, 0xc000, 0xbf80, 0x3f80, 0x3f80, 0xbf80, 0x4000,
        0xbf80, 0x4000, 0x0000,
    ],
];

/// Whether a < b (`setp.lt`) and whether a >= b or either is NaN
/// (`setp.geu`), row by row.
const LT: [bool; 10] = [
    true, false, false, false, false, true, false, true, false, true,
];
const GEU: [bool; 10] = [
    false, true, true, true, true, false, true, false, true, false,
];

/// The operations of the rows, in their column order (from column 3).
const NAMES: [&str; 11] = [
    "add", "sub", "mul", "fma", "neg", "abs", "min", "max", "min.NaN", "max.NaN", "fma.relu",
];

fn row(lane: usize) -> [u16; 14] {
    ROWS[lane % ROWS.len()]
}

/// Column `k` of lane `lane` and of the next lane, packed: element 0 low.
fn pair(lane: usize, k: usize) -> u32 {
    u32::from(row(lane)[k]) | u32::from(row((lane + 1) % 32)[k]) << 16
}

fn u16s(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn halves(values: impl Iterator<Item = u16>) -> Arg {
    Arg::Buffer(values.flat_map(u16::to_le_bytes).collect())
}

// Each lane loads a, b, c and the packed pairs P, Q, R; it writes the eleven
// results, a guarded add, `set` of a < b as a bfloat16 (1.0 or 0.0) and as
// a `.u32` mask (in OUT, 32 halves a lane), the eleven packed results and
// `set.geu` on the pairs (in OUT2, 16 words a lane), and `setp`'s
// predicates as bits (in FLAGS).
const BF16_OPS: &str = r#"
.kernel bf16ops(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 P, .param .u64 Q,
                .param .u64 R, .param .u64 OUT, .param .u64 OUT2, .param .u64 FLAGS)
{
    .reg .u32 %t, %flags, %bit, %mask;
    .reg .u64 %ptr, %off, %off4, %po;
    .reg .b16 %a, %b, %c, %r, %g;
    .reg .bf16 %h;
    .reg .b32 %p2, %q2, %r2;
    .reg .bf16x2 %o2;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 2;
    mul.wide.u32 %off4, %t, 4;
    ld.param.u64 %ptr, [A];  add.u64 %ptr, %ptr, %off;  ld.global.b16 %a, [%ptr];
    ld.param.u64 %ptr, [B];  add.u64 %ptr, %ptr, %off;  ld.global.b16 %b, [%ptr];
    ld.param.u64 %ptr, [C];  add.u64 %ptr, %ptr, %off;  ld.global.b16 %c, [%ptr];
    ld.param.u64 %ptr, [P];  add.u64 %ptr, %ptr, %off4; ld.global.b32 %p2, [%ptr];
    ld.param.u64 %ptr, [Q];  add.u64 %ptr, %ptr, %off4; ld.global.b32 %q2, [%ptr];
    ld.param.u64 %ptr, [R];  add.u64 %ptr, %ptr, %off4; ld.global.b32 %r2, [%ptr];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    add.bf16 %r, %a, %b;              st.global.b16 [%po], %r;
    sub.rn.bf16 %r, %a, %b;           st.global.b16 [%po+2], %r;
    mul.bf16 %r, %a, %b;              st.global.b16 [%po+4], %r;
    fma.rn.bf16 %r, %a, %b, %c;       st.global.b16 [%po+6], %r;
    neg.bf16 %r, %a;                  st.global.b16 [%po+8], %r;
    abs.bf16 %r, %a;                  st.global.b16 [%po+10], %r;
    min.bf16 %r, %a, %b;              st.global.b16 [%po+12], %r;
    max.bf16 %r, %a, %b;              st.global.b16 [%po+14], %r;
    min.NaN.bf16 %r, %a, %b;          st.global.b16 [%po+16], %r;
    max.NaN.bf16 %r, %a, %b;          st.global.b16 [%po+18], %r;
    fma.rn.relu.bf16 %h, %a, %b, %c;  st.global.b16 [%po+20], %h;
    setp.lt.bf16 %p, %a, %b;
    setp.geu.and.bf16 %q, %a, %b, !%p;
    mov.b16 %g, 0x1234;
    @%p add.bf16 %g, %a, %b;          st.global.b16 [%po+22], %g;
    set.lt.bf16.bf16 %r, %a, %b;      st.global.b16 [%po+24], %r;
    set.lt.u32.bf16 %mask, %a, %b;    st.global.b32 [%po+28], %mask;
    ld.param.u64 %po, [OUT2];
    add.u64 %po, %po, %off;
    add.bf16x2 %o2, %p2, %q2;             st.global.b32 [%po], %o2;
    sub.bf16x2 %o2, %p2, %q2;             st.global.b32 [%po+4], %o2;
    mul.rn.bf16x2 %o2, %p2, %q2;          st.global.b32 [%po+8], %o2;
    fma.rn.bf16x2 %o2, %p2, %q2, %r2;     st.global.b32 [%po+12], %o2;
    neg.bf16x2 %o2, %p2;                  st.global.b32 [%po+16], %o2;
    abs.bf16x2 %o2, %p2;                  st.global.b32 [%po+20], %o2;
    min.bf16x2 %o2, %p2, %q2;             st.global.b32 [%po+24], %o2;
    max.bf16x2 %o2, %p2, %q2;             st.global.b32 [%po+28], %o2;
    min.NaN.bf16x2 %o2, %p2, %q2;         st.global.b32 [%po+32], %o2;
    max.NaN.bf16x2 %o2, %p2, %q2;         st.global.b32 [%po+36], %o2;
    fma.rn.relu.bf16x2 %o2, %p2, %q2, %r2; st.global.b32 [%po+40], %o2;
    set.geu.bf16x2.bf16x2 %o2, %p2, %q2;  st.global.b32 [%po+44], %o2;
    selp.u32 %flags, 1, 0, %p;
    selp.u32 %bit, 2, 0, %q;
    or.b32 %flags, %flags, %bit;
    ld.param.u64 %ptr, [FLAGS]; add.u64 %ptr, %ptr, %off4; st.global.u32 [%ptr], %flags;
}
"#;

#[test]
fn bfloat16_operations_lane_by_lane() {
    let column = |k: usize| halves((0..32).map(move |lane| row(lane)[k]));
    let packed = |k: usize| Arg::u32s(&(0..32).map(|lane| pair(lane, k)).collect::<Vec<_>>());
    let outcome = run_kernel(
        BF16_OPS,
        1,
        32,
        &[
            column(0),
            column(1),
            column(2),
            packed(0),
            packed(1),
            packed(2),
            Arg::zeros(32 * 16),
            Arg::zeros(32 * 16),
            Arg::zeros(32),
        ],
    )
    .ok();
    let out = u16s(&outcome.bytes(6));
    let out_words = outcome.u32s(6);
    let out2 = outcome.u32s(7);
    let flags = outcome.u32s(8);
    let bf16_truth = |holds: bool| -> u32 {
        if holds {
            0x3f80
        } else {
            0
        }
    };
    for lane in 0..32 {
        let row = row(lane);
        let results = &out[32 * lane..32 * lane + 13];
        let (a, b) = (row[0], row[1]);
        for (k, name) in NAMES.iter().enumerate() {
            assert_eq!(
                results[k],
                row[3 + k],
                "lane {lane}: {name}({a:#06x}, {b:#06x}) = {:#06x}, expected {:#06x}",
                results[k],
                row[3 + k]
            );
            assert_eq!(
                out2[16 * lane + k],
                pair(lane, 3 + k),
                "lane {lane}: {name}.bf16x2 = {:#010x}, expected {:#010x}",
                out2[16 * lane + k],
                pair(lane, 3 + k)
            );
        }
        let lt = LT[lane % 10];
        let guarded = if lt { row[3] } else { 0x1234 };
        assert_eq!(results[11], guarded, "lane {lane}: @%p add.bf16");
        assert_eq!(
            u32::from(results[12]),
            bf16_truth(lt),
            "lane {lane}: set.lt.bf16.bf16"
        );
        let mask = if lt { u32::MAX } else { 0 };
        assert_eq!(
            out_words[16 * lane + 7],
            mask,
            "lane {lane}: set.lt.u32.bf16"
        );
        let geu_pair = bf16_truth(GEU[lane % 10]) | bf16_truth(GEU[(lane + 1) % 32 % 10]) << 16;
        assert_eq!(
            out2[16 * lane + 11],
            geu_pair,
            "lane {lane}: set.geu.bf16x2"
        );
        // geu implies not lt, so `geu and !lt` is geu.
        let expected_flags = u32::from(lt) | u32::from(GEU[lane % 10]) << 1;
        assert_eq!(flags[lane], expected_flags, "lane {lane}: setp");
    }
}

/// The comparison tables follow from the rows' values (a bfloat16 is the
/// upper half of an `f32`).
#[test]
fn comparison_tables_match_the_rows() {
    let value = |bits: u16| f32::from_bits(u32::from(bits) << 16);
    for (k, row) in ROWS.iter().enumerate() {
        let (a, b) = (value(row[0]), value(row[1]));
        assert_eq!(LT[k], a < b, "row {k}");
        assert_eq!(GEU[k], a >= b || a.is_nan() || b.is_nan(), "row {k}");
    }
}

/// Conversions to and from `.bf16`, and of two `.f32` into a pair, on four
/// lanes of chosen values: F and G are `.f32`, I an `.s32`, H a bfloat16.
const CONVERSIONS: &str = r#"
.kernel conversions(.param .u64 F, .param .u64 G, .param .u64 I, .param .u64 H, .param .u64 OUT)
{
    .reg .u32 %t, %w;
    .reg .s32 %i, %s;
    .reg .u64 %ptr, %off4, %off, %po;
    .reg .f32 %f, %g, %x;
    .reg .b16 %h, %r;
    .reg .b32 %pair;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off4, %t, 4;
    ld.param.u64 %ptr, [F]; add.u64 %ptr, %ptr, %off4; ld.global.f32 %f, [%ptr];
    ld.param.u64 %ptr, [G]; add.u64 %ptr, %ptr, %off4; ld.global.f32 %g, [%ptr];
    ld.param.u64 %ptr, [I]; add.u64 %ptr, %ptr, %off4; ld.global.s32 %i, [%ptr];
    mul.wide.u32 %off, %t, 2;
    ld.param.u64 %ptr, [H]; add.u64 %ptr, %ptr, %off; ld.global.b16 %h, [%ptr];
    mul.wide.u32 %off, %t, 64;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    cvt.rn.bf16.f32 %r, %f;           cvt.u32.u16 %w, %r; st.global.u32 [%po], %w;
    cvt.rz.bf16.f32 %r, %f;           cvt.u32.u16 %w, %r; st.global.u32 [%po+4], %w;
    cvt.rm.bf16.f32 %r, %f;           cvt.u32.u16 %w, %r; st.global.u32 [%po+8], %w;
    cvt.rp.bf16.f32 %r, %f;           cvt.u32.u16 %w, %r; st.global.u32 [%po+12], %w;
    cvt.rn.bf16x2.f32 %pair, %f, %g;  st.global.b32 [%po+16], %pair;
    cvt.rn.f16x2.f32 %pair, %f, %g;   st.global.b32 [%po+20], %pair;
    cvt.f32.bf16 %x, %h;              st.global.f32 [%po+24], %x;
    cvt.rzi.s32.bf16 %s, %h;          st.global.s32 [%po+28], %s;
    cvt.rn.bf16.s32 %r, %i;           cvt.u32.u16 %w, %r; st.global.u32 [%po+32], %w;
    cvt.rni.bf16.bf16 %r, %h;         cvt.u32.u16 %w, %r; st.global.u32 [%po+36], %w;
    cvt.rz.f16x2.f32 %pair, %f, %g;   st.global.b32 [%po+40], %pair;
}
"#;

#[test]
fn bfloat16_conversions() {
    let f = [
        f32::from_bits(0x3f80_8008), // 1 + 2^-8 + 2^-20: just past a tie
        f32::from_bits(0xbf80_8008),
        f32::MAX,
        0.1,
    ];
    let g = [
        2.0,
        f32::NAN,
        f32::from_bits(0x0000_8000), // 2^-134, half the smallest bfloat16
        -0.0,
    ];
    let i = [257, -257, i32::MAX, 0];
    let h: [u16; 4] = [0x4020, 0xc020, 0x7f80, 0xbf00]; // 2.5, -2.5, inf, -0.5
    let outcome = run_kernel(
        CONVERSIONS,
        1,
        4,
        &[
            Arg::f32s(&f),
            Arg::f32s(&g),
            Arg::i32s(&i),
            halves(h.into_iter()),
            Arg::zeros(4 * 16),
        ],
    )
    .ok();
    let out = outcome.u32s(4);
    #[rustfmt::skip]
    let expected: [[u32; 11]; 4] = [
        // rn, rz, rm, rp of F; the bf16x2 and f16x2 pairs (F upper, G
        // lower); H as f32; H to s32 toward zero; I rounded; H rounded to an
        // integral value (ties to even); the f16x2 pair toward zero.
        [0x3f81, 0x3f80, 0x3f80, 0x3f81, 0x3f81_4000, 0x3c04_4000, 0x4020_0000, 2,
         0x4380, 0x4000, 0x3c04_4000],
        [0xbf81, 0xbf80, 0xbf81, 0xbf80, 0xbf81_7fff, 0xbc04_7fff, 0xc020_0000, (-2i32) as u32,
         0xc380, 0xc000, 0xbc04_7fff],
        // f32::MAX is past the midpoint above the largest bfloat16: to
        // nearest it is infinity, and toward zero or down the largest; the
        // same for halves. 2^-134 ties to +0. 2^31 - 1 rounds to 2^31.
        [0x7f80, 0x7f7f, 0x7f7f, 0x7f80, 0x7f80_0000, 0x7c00_0000, 0x7f80_0000, i32::MAX as u32,
         0x4f00, 0x7f80, 0x7bff_0000],
        // 0.1f is 0x3dcc_cccd; -0.5 truncates to 0 and rounds to -0.
        [0x3dcd, 0x3dcc, 0x3dcc, 0x3dcd, 0x3dcd_8000, 0x2e66_8000, 0xbf00_0000, 0,
         0x0000, 0x8000, 0x2e66_8000],
    ];
    for lane in 0..4 {
        for (k, &want) in expected[lane].iter().enumerate() {
            let got = out[16 * lane + k];
            assert_eq!(
                got, want,
                "lane {lane}, result {k}: {got:#x}, expected {want:#x}"
            );
        }
    }
}

/// The forms new to `.f16` with this change: `min.NaN`, `max.NaN`,
/// `fma.rn.relu` and `set` into halves, on pairs of (1, NaN) and (2, -3).
#[test]
fn new_half_forms() {
    let source = r#"
.kernel halves(.param .u64 OUT)
{
    .reg .b32 %x, %y, %z, %o;
    .reg .b16 %a, %b, %r;
    .reg .u64 %po;
    ld.param.u64 %po, [OUT];
    mov.b32 %x, 0x7e003c00;
    mov.b32 %y, 0xc2004000;
    mov.b32 %z, 0x3c003c00;
    min.NaN.f16x2 %o, %x, %y;         st.global.b32 [%po], %o;
    max.NaN.f16x2 %o, %x, %y;         st.global.b32 [%po+4], %o;
    min.f16x2 %o, %x, %y;             st.global.b32 [%po+8], %o;
    fma.rn.relu.f16x2 %o, %y, %z, %z; st.global.b32 [%po+12], %o;
    set.lt.f16x2.f16x2 %o, %x, %y;    st.global.b32 [%po+16], %o;
    set.nan.f16x2.f16x2 %o, %x, %x;   st.global.b32 [%po+20], %o;
    mov.b16 %a, 0xc200;
    mov.b16 %b, 0x3c00;
    fma.rn.relu.f16 %r, %a, %b, %b;   st.global.b16 [%po+24], %r;
    max.NaN.f16 %r, %a, %b;           st.global.b16 [%po+26], %r;
    set.le.f16.f16 %r, %a, %b;        st.global.b16 [%po+28], %r;
}
"#;
    let outcome = run_kernel(source, 1, 1, &[Arg::zeros(8)]).ok();
    let out = outcome.u32s(0);
    // Low elements 1 and 2, high elements NaN and -3.
    assert_eq!(out[0], 0x7fff_3c00, "min.NaN.f16x2");
    assert_eq!(out[1], 0x7fff_4000, "max.NaN.f16x2");
    assert_eq!(out[2], 0xc200_3c00, "min.f16x2");
    // fma of (2, -3) * 1 + 1: 3, and -2 made +0.
    assert_eq!(out[3], 0x0000_4200, "fma.rn.relu.f16x2");
    // 1 < 2 holds; NaN < -3 does not.
    assert_eq!(out[4], 0x0000_3c00, "set.lt.f16x2");
    assert_eq!(out[5], 0x3c00_0000, "set.nan.f16x2");
    // -3 * 1 + 1 = -2 made +0; max.NaN(-3, 1) = 1; -3 <= 1 holds.
    assert_eq!(out[6], 0x3c00_0000, "fma.rn.relu.f16 and max.NaN.f16");
    assert_eq!(out[7] & 0xffff, 0x3c00, "set.le.f16.f16");
}

/// A warp split by a branch runs bfloat16 arithmetic on each side with only
/// its own lanes.
#[test]
fn bfloat16_arithmetic_under_divergence() {
    let source = r#"
.kernel diverge(.param .u64 OUT)
{
    .reg .u32 %t, %odd;
    .reg .u64 %po, %off;
    .reg .b16 %one, %r;
    .reg .b32 %pair;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.b16 %one, 0x3f80U;
    mov.b16 %r, 0x4000;
    mov.b32 %pair, 0x3f804000;
    and.b32 %odd, %t, 1;
    setp.eq.u32 %p, %odd, 1;
    @%p bra ODD;
    sub.bf16 %r, %r, %one;
    add.bf16x2 %pair, %pair, %pair;
    bra DONE;
ODD:
    mul.bf16 %r, %r, %r;
    neg.bf16x2 %pair, %pair;
DONE:
    mul.wide.u32 %off, %t, 8;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    st.global.b16 [%po], %r;
    st.global.b32 [%po+4], %pair;
}
"#;
    let outcome = run_kernel(source, 1, 32, &[Arg::zeros(64)]).ok();
    let words = outcome.u32s(0);
    for lane in 0..32 {
        let (single, pair) = if lane % 2 == 1 {
            (0x4080, 0xbf80_c000) // 2 * 2 = 4; -(2, 1)
        } else {
            (0x3f80, 0x4000_4080) // 2 - 1 = 1; (2, 1) * 2 = (4, 2)
        };
        assert_eq!(words[2 * lane], single, "lane {lane}");
        assert_eq!(words[2 * lane + 1], pair, "lane {lane}");
    }
}

/// Every new form prints and parses back to the same module, and the
/// printed text spells them as PTX does.
#[test]
fn bfloat16_forms_print_and_parse_back() {
    for source in [BF16_OPS, CONVERSIONS] {
        let module = warpsim_ir::parse_and_verify("test.kir", source).unwrap();
        let text = warpsim_ir::print_module(&module);
        for spelling in [
            ".reg .bf16x2",
            "cvt.rn.bf16x2.f32",
            "min.NaN.bf16",
            "fma.rn.relu.bf16",
        ] {
            if source.contains(spelling) {
                assert!(text.contains(spelling), "{spelling} in {text}");
            }
        }
        let again = warpsim_ir::parse_and_verify("test.kir", &text).unwrap();
        assert_eq!(again, module);
    }
}

fn lower_error(body: &str) -> String {
    let source = format!(
        ".kernel k(.param .u64 OUT)\n{{\n    .reg .b16 %a, %b, %c;\n    .reg .b32 %x, %y, %z;\n    .reg .f32 %f;\n    .reg .u64 %d;\n    .reg .pred %p;\n    {body}\n}}\n"
    );
    let module = warpsim_ir::parse_and_verify("test.kir", &source)
        .unwrap_or_else(|error| panic!("{body}: {error:?}"));
    match Program::lower(&module, warpsim_ir::KernelId(0)) {
        Ok(_) => panic!("`{body}` lowered"),
        Err(error) => error.message,
    }
}

/// The bfloat16 forms the machine does not have are refused when lowering,
/// with the operation and the type named.
#[test]
fn unsupported_bfloat16_forms_are_lowering_errors() {
    for (body, named) in [
        (
            "div.rn.bf16 %a, %a, %b;",
            "`div` is not supported for `.bf16`",
        ),
        (
            "sqrt.rn.bf16x2 %x, %y;",
            "`sqrt` is not supported for `.bf16x2`",
        ),
        (
            "setp.lt.bf16x2 %p, %x, %y;",
            "`setp` is not supported for `.bf16x2`",
        ),
        (
            "cvt.f32.bf16x2 %f, %x;",
            "`cvt` is not supported for `.bf16x2`",
        ),
        (
            "atom.global.add.noftz.bf16 %a, [%d], %b;",
            "`atom`/`red` is not supported for `.bf16`",
        ),
        (
            "fma.rz.bf16 %a, %a, %b, %c;",
            "`fma` with a directed rounding is not supported for `.bf16`",
        ),
    ] {
        let message = lower_error(body);
        assert!(message.contains(named), "{body}: {message}");
        assert!(
            message.contains("add sub mul fma.rn neg abs min max"),
            "{message}"
        );
    }
    for (body, named) in [
        (
            "cvt.rn.f16.bf16 %a, %b;",
            "`cvt.rn.f16.bf16` is not supported",
        ),
        (
            "cvt.rn.bf16.bf16 %a, %b;",
            "`cvt.rn.bf16.bf16` is not supported",
        ),
        (
            "cvt.rzi.bf16.f32 %a, %f;",
            "`cvt.rzi.bf16.f32` is not supported",
        ),
        (
            "min.NaN.f32 %f, %f, %f;",
            "`min.NaN` and `max.NaN` are supported for the half types only",
        ),
    ] {
        let message = lower_error(body);
        assert!(message.contains(named), "{body}: {message}");
    }
}

/// What PTX does not define is refused by the parser or the verifier.
#[test]
fn malformed_bfloat16_forms_are_refused() {
    let verify = |body: &str| {
        let source = format!(
            ".kernel k(.param .u64 OUT)\n{{\n    .reg .b16 %a, %b;\n    .reg .b32 %x;\n    .reg .f32 %f;\n    .reg .f64 %d;\n    {body}\n}}\n"
        );
        format!(
            "{:?}",
            warpsim_ir::parse_and_verify("test.kir", &source).unwrap_err()
        )
    };
    for (body, named) in [
        (
            "add.bf16 %a, %a, 1.0;",
            "a `.bf16` operand cannot be a literal",
        ),
        (
            "add.bf16x2 %x, %x, 1.0;",
            "a `.bf16x2` operand cannot be a literal",
        ),
        (
            "cvt.rn.bf16x2.f64 %x, %d, %d;",
            "converts two `.f32` values",
        ),
        ("cvt.bf16x2.f32 %x, %f, %f;", "needs a rounding"),
        (
            "cvt.rm.bf16x2.f32 %x, %f, %f;",
            "rounds with `.rn` or `.rz`",
        ),
        (
            "fma.rn.relu.f32 %f, %f, %f, %f;",
            "`fma.rn.relu` is defined for",
        ),
        (
            "set.lt.bf16.f32 %a, %f, %f;",
            "`set` writes `.bf16` only from",
        ),
        (
            "set.lt.u32.bf16x2 %x, %x, %x;",
            "`set` compares `.bf16x2` pairs",
        ),
        ("add.bf16 %x, %a, %a;", "declared `.b32`"),
    ] {
        let message = verify(body);
        assert!(message.contains(named), "{body}: {message}");
    }
}
