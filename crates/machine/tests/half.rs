//! Half-precision arithmetic in kernels: `.f16` add, sub, mul, fma, neg,
//! abs, min, max and `setp` lane by lane, guarded and in place, and the same
//! operations on `.f16x2` pairs, against results worked out by hand; the
//! half forms the machine does not have are lowering errors that say so.

mod common;
use common::*;

use warpsim_machine::Program;

/// One row per case: a, b, c, then a + b, a - b, a * b, fma(a, b, c), -a,
/// |a|, min, max, all as half bits. Lane `l` takes row `l % 10`.
const ROWS: [[u16; 11]; 10] = [
    // 1 and 2, c = 0.5: exact.
    [
        0x3c00, 0x4000, 0x3800, 0x4200, 0xbc00, 0x4000, 0x4100, 0xbc00, 0x3c00, 0x3c00, 0x4000,
    ],
    // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9; fma with
    // -(1 + 2^-9) keeps 2^-20 (subnormal 0x0010); x - x = +0.
    [
        0x3c01, 0x3c01, 0xbc02, 0x4001, 0x0000, 0x3c02, 0x0010, 0xbc01, 0x3c01, 0x3c01, 0x3c01,
    ],
    // -0 and +0: -0 + +0 = +0, -0 - +0 = -0, -0 * +0 = -0, -0 + -0 = -0;
    // min is -0, max +0.
    [
        0x8000, 0x0000, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, 0x0000, 0x0000, 0x8000, 0x0000,
    ],
    // 65504 and 16: 65520 is a tie that goes to infinity (even); 65488 a tie
    // between 65472 and 65504 that goes to 65472 (0x7bfe); the product
    // overflows, but fma's exact product plus -inf is -inf.
    [
        0x7bff, 0x4c00, 0xfc00, 0x7c00, 0x7bfe, 0x7c00, 0xfc00, 0xfbff, 0x7bff, 0x4c00, 0x7bff,
    ],
    // A NaN: canonical NaN out of every arithmetic operation, neg and abs
    // included; min and max give the other operand.
    [
        0x7e00, 0x3c00, 0x3c00, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x3c00, 0x3c00,
    ],
    // +inf and -inf: their sum is NaN, their difference +inf.
    [
        0x7c00, 0xfc00, 0x0000, 0x7fff, 0x7c00, 0xfc00, 0xfc00, 0xfc00, 0x7c00, 0xfc00, 0x7c00,
    ],
    // 2^-24 and 0.5: the sum rounds back to 0.5, the product 2^-25 is a tie
    // that goes to +0, and fma's 2^-25 + 2^-24 a tie that goes to 2^-23.
    [
        0x0001, 0x3800, 0x0001, 0x3800, 0xb800, 0x0000, 0x0002, 0x8001, 0x0001, 0x0001, 0x3800,
    ],
    // inf * 0 is NaN, in mul and in fma.
    [
        0x7c00, 0x0000, 0x3c00, 0x7c00, 0x7c00, 0x7fff, 0x7fff, 0xfc00, 0x7c00, 0x0000, 0x7c00,
    ],
    // 1365/4096 (the half nearest 1/3) and 3: the sum 13653/4096 rounds up
    // to 1707 * 2^-9, the difference down to -1365 * 2^-9, the product
    // 1 - 2^-12 is a tie that goes to 1; fma with -1 keeps -2^-12.
    [
        0x3555, 0x4200, 0xbc00, 0x42ab, 0xc155, 0x3c00, 0x8c00, 0xb555, 0x3555, 0x3555, 0x4200,
    ],
    // -2048 and -1, c = 1: -2049 and 2049 are ties that go to 2048 (even).
    [
        0xe800, 0xbc00, 0x3c00, 0xe800, 0xe7ff, 0x6800, 0x6800, 0x6800, 0x6800, 0xe800, 0xbc00,
    ],
];

/// Whether a < b (`setp.lt`) for each row, and whether geu(a, b) and not
/// a < b (`setp.geu.and` with a negated predicate).
const LT: [bool; 10] = [
    true, false, false, false, false, false, true, false, true, true,
];
const GEU_AND_NOT_LT: [bool; 10] = [
    false, true, true, true, true, true, false, true, false, false,
];

fn row(lane: usize) -> [u16; 11] {
    ROWS[lane % ROWS.len()]
}

fn halves(values: impl Iterator<Item = u16>) -> Arg {
    Arg::Buffer(values.flat_map(u16::to_le_bytes).collect())
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

// Each lane loads a, b, c (halves) and the packed pairs P, Q, R, and writes
// 11 halves (the eight operations, the guarded add, the in-place add, the
// fma into a .f16 register) and 8 packed results, 64 bytes a lane each, and
// the two predicates as bits.
const HALF_OPS: &str = r#"
.kernel halfops(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 P, .param .u64 Q,
                .param .u64 R, .param .u64 OUT, .param .u64 OUT2, .param .u64 FLAGS)
{
    .reg .u32 %t, %flags, %bit;
    .reg .u64 %ptr, %off, %off4, %po;
    .reg .b16 %a, %b, %c, %r, %g, %x;
    .reg .f16 %h;
    .reg .b32 %p2, %q2, %r2;
    .reg .f16x2 %o2;
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
    add.f16 %r, %a, %b;           st.global.b16 [%po], %r;
    sub.f16 %r, %a, %b;           st.global.b16 [%po+2], %r;
    mul.f16 %r, %a, %b;           st.global.b16 [%po+4], %r;
    fma.rn.f16 %r, %a, %b, %c;    st.global.b16 [%po+6], %r;
    neg.f16 %r, %a;               st.global.b16 [%po+8], %r;
    abs.f16 %r, %a;               st.global.b16 [%po+10], %r;
    min.f16 %r, %a, %b;           st.global.b16 [%po+12], %r;
    max.f16 %r, %a, %b;           st.global.b16 [%po+14], %r;
    setp.lt.f16 %p, %a, %b;
    setp.geu.and.f16 %q, %a, %b, !%p;
    mov.b16 %g, 0x1234;
    @%p add.f16 %g, %a, %b;       st.global.b16 [%po+16], %g;
    mov.b16 %x, %a;
    add.f16 %x, %x, %b;           st.global.b16 [%po+18], %x;
    fma.rn.f16 %h, %a, %b, %c;    st.global.f16 [%po+20], %h;
    ld.param.u64 %po, [OUT2];
    add.u64 %po, %po, %off;
    add.f16x2 %o2, %p2, %q2;          st.global.b32 [%po], %o2;
    sub.f16x2 %o2, %p2, %q2;          st.global.b32 [%po+4], %o2;
    mul.f16x2 %o2, %p2, %q2;          st.global.b32 [%po+8], %o2;
    fma.rn.f16x2 %o2, %p2, %q2, %r2;  st.global.b32 [%po+12], %o2;
    neg.f16x2 %o2, %p2;               st.global.b32 [%po+16], %o2;
    abs.f16x2 %o2, %p2;               st.global.b32 [%po+20], %o2;
    min.f16x2 %p2, %p2, %q2;          st.global.b32 [%po+24], %p2;
    ld.param.u64 %ptr, [P];  add.u64 %ptr, %ptr, %off4; ld.global.b32 %p2, [%ptr];
    max.f16x2 %q2, %p2, %q2;          st.global.b32 [%po+28], %q2;
    selp.u32 %flags, 1, 0, %p;
    selp.u32 %bit, 2, 0, %q;
    or.b32 %flags, %flags, %bit;
    ld.param.u64 %ptr, [FLAGS]; add.u64 %ptr, %ptr, %off4; st.global.u32 [%ptr], %flags;
}
"#;

#[test]
fn half_operations_lane_by_lane() {
    let column = |k: usize| halves((0..32).map(move |lane| row(lane)[k]));
    let packed = |k: usize| Arg::u32s(&(0..32).map(|lane| pair(lane, k)).collect::<Vec<_>>());
    let outcome = run_kernel(
        HALF_OPS,
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
    let out2 = outcome.u32s(7);
    let flags = outcome.u32s(8);
    let names = ["add", "sub", "mul", "fma", "neg", "abs", "min", "max"];
    for lane in 0..32 {
        let row = row(lane);
        let results = &out[32 * lane..32 * lane + 11];
        let (a, b) = (row[0], row[1]);
        for (k, name) in names.iter().enumerate() {
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
                "lane {lane}: {name}.f16x2 = {:#010x}, expected {:#010x}",
                out2[16 * lane + k],
                pair(lane, 3 + k)
            );
        }
        let lt = LT[lane % 10];
        let guarded = if lt { row[3] } else { 0x1234 };
        assert_eq!(results[8], guarded, "lane {lane}: @%p add.f16");
        assert_eq!(results[9], row[3], "lane {lane}: add.f16 in place");
        assert_eq!(results[10], row[6], "lane {lane}: fma.rn.f16 into .f16");
        let expected_flags = u32::from(lt) | u32::from(GEU_AND_NOT_LT[lane % 10]) << 1;
        assert_eq!(flags[lane], expected_flags, "lane {lane}: setp");
    }
}

/// The flags above follow from the rows: a < b and geu(a, b) on the values.
#[test]
fn comparison_tables_match_the_rows() {
    let value = |bits: u16| -> f64 {
        let magnitude = match (bits >> 10) & 0x1f {
            0 => f64::from(bits & 0x3ff) * 2f64.powi(-24),
            31 if bits & 0x3ff == 0 => f64::INFINITY,
            31 => f64::NAN,
            e => f64::from(1024 + (bits & 0x3ff)) * 2f64.powi(i32::from(e) - 25),
        };
        if bits & 0x8000 != 0 {
            -magnitude
        } else {
            magnitude
        }
    };
    for (k, row) in ROWS.iter().enumerate() {
        let (a, b) = (value(row[0]), value(row[1]));
        assert_eq!(LT[k], a < b, "row {k}");
        // geu (true on NaN) implies not lt, so `geu and !lt` is geu.
        let geu = a >= b || a.is_nan() || b.is_nan();
        assert_eq!(GEU_AND_NOT_LT[k], geu, "row {k}");
    }
}

/// A warp split by a branch runs half arithmetic on each side with only its
/// own lanes.
#[test]
fn half_arithmetic_under_divergence() {
    let source = r#"
.kernel diverge(.param .u64 OUT)
{
    .reg .u32 %t, %odd;
    .reg .u64 %po, %off;
    .reg .b16 %one, %r;
    .reg .b32 %pair;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.b16 %one, 0x3c00;
    mov.b16 %r, 0x4000;
    mov.b32 %pair, 0x3c004000;
    and.b32 %odd, %t, 1;
    setp.eq.u32 %p, %odd, 1;
    @%p bra ODD;
    sub.f16 %r, %r, %one;
    add.f16x2 %pair, %pair, %pair;
    bra DONE;
ODD:
    mul.f16 %r, %r, %r;
    neg.f16x2 %pair, %pair;
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
        let (half, pair) = if lane % 2 == 1 {
            (0x4400, 0xbc00_c000) // 2 * 2 = 4; -(2, 1)
        } else {
            (0x3c00, 0x4000_4400) // 2 - 1 = 1; (2, 1) * 2 = (4, 2)
        };
        assert_eq!(words[2 * lane], half, "lane {lane}");
        assert_eq!(words[2 * lane + 1], pair, "lane {lane}");
    }
}

/// `.f16x2` prints and parses back to the same module.
#[test]
fn packed_halves_print_and_parse_back() {
    let module = warpsim_ir::parse_and_verify("test.kir", HALF_OPS).unwrap();
    let text = warpsim_ir::print_module(&module);
    assert!(text.contains("fma.rn.f16x2"), "{text}");
    assert!(text.contains(".reg .f16x2"), "{text}");
    let again = warpsim_ir::parse_and_verify("test.kir", &text).unwrap();
    assert_eq!(again, module);
}

fn lower_error(body: &str) -> String {
    let source = format!(
        ".kernel k(.param .u64 OUT)\n{{\n    .reg .b16 %a, %b, %c;\n    .reg .b32 %x, %y, %z;\n    .reg .f32 %f;\n    .reg .pred %p;\n    {body}\n}}\n"
    );
    let module = warpsim_ir::parse_and_verify("test.kir", &source)
        .unwrap_or_else(|error| panic!("{body}: {error:?}"));
    match Program::lower(&module, warpsim_ir::KernelId(0)) {
        Ok(_) => panic!("`{body}` lowered"),
        Err(error) => error.message,
    }
}

/// The half forms the machine does not have are refused when lowering, with
/// the operation and the type named.
#[test]
fn unsupported_half_forms_are_lowering_errors() {
    for (body, named) in [
        (
            "div.rn.f16 %a, %a, %b;",
            "`div` is not supported for `.f16`",
        ),
        ("sqrt.rn.f16 %a, %a;", "`sqrt` is not supported for `.f16`"),
        (
            "rcp.rn.f16x2 %x, %y;",
            "`rcp` is not supported for `.f16x2`",
        ),
        (
            "fma.rz.f16 %a, %a, %b, %c;",
            "`fma` with a directed rounding is not supported for `.f16`",
        ),
        (
            "setp.lt.f16x2 %p, %x, %y;",
            "`setp` is not supported for `.f16x2`",
        ),
        (
            "cvt.f32.f16x2 %f, %x;",
            "`cvt` is not supported for `.f16x2`",
        ),
    ] {
        let message = lower_error(body);
        assert!(message.contains(named), "{body}: {message}");
        assert!(
            message.contains("add sub mul fma.rn neg abs min max"),
            "{message}"
        );
    }
}

/// A `.f16x2` operand cannot be a literal, as a `.f16` one cannot.
#[test]
fn packed_half_literals_are_parse_errors() {
    let source =
        ".kernel k(.param .u64 OUT)\n{\n    .reg .b32 %x;\n    add.f16x2 %x, %x, 1.0;\n}\n";
    let error = warpsim_ir::parse_and_verify("test.kir", source).unwrap_err();
    let message = format!("{error:?}");
    assert!(
        message.contains("`.f16x2` operand cannot be a literal"),
        "{message}"
    );
}
