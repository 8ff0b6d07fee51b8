//! Tests of the known-bits analysis: each transfer rule, the cases where
//! ptxas proves less than could be proved (and so must this analysis), the
//! fixed point over loops, constants, and the layout of shared variables.

use super::*;
use crate::parse_module;

/// Parses a kernel whose body is `body`, with `%t` the thread index (unknown),
/// `%p` a parameter (unknown) and `%x`, `%y`, `%z` results to inspect.
fn analyzed(body: &str) -> (Kernel, KernelKnownBits) {
    let text = format!(
        ".kernel k(.param .u32 P)
{{
    .shared .align 4 .b8 first[12];
    .shared .align 4 .b8 second[64];
    .extern .shared .align 8 .b8 dynamic[];
    .reg .u32 %t, %p, %x, %y, %z, %i;
    .reg .u64 %w, %v, %u;
    .reg .u16 %h;
    .reg .pred %q;
    mov.u32 %t, %tid.x;
    ld.param.u32 %p, [P];
{body}
    exit;
}}
"
    );
    let module = parse_module("known.kir", &text).unwrap_or_else(|error| panic!("{error}"));
    let kernel = module.kernels.into_iter().next().expect("one kernel");
    let known = analyze(&kernel);
    (kernel, known)
}

fn reg(kernel: &Kernel, name: &str) -> RegId {
    let index = kernel
        .regs
        .iter()
        .position(|decl| decl.name == name)
        .unwrap_or_else(|| panic!("no register {name}"));
    RegId(index as u32)
}

/// The known low zero bits of `%x` after `body`.
fn zero_bits_of_x(body: &str) -> u32 {
    let (kernel, known) = analyzed(body);
    known.register(reg(&kernel, "%x")).low_zero_bits
}

#[test]
fn transfer_rules_follow_what_ptxas_proves() {
    // (body, known zero bits of %x). Each line matches a probe of ptxas 12.9: a pair of
    // 4-byte loads at s + 4x and s + 4x + 4 merged into LDS.64 exactly when x is proved even
    // (docs/access-merging.md, "Alignment proofs").
    let cases: &[(&str, u32)] = &[
        ("shl.b32 %x, %t, 1;", 1),
        ("add.s32 %x, %t, %t;", 0),
        ("and.b32 %x, %t, -2;", 1),
        ("and.b32 %x, %t, 254;", 1),
        ("mul.lo.s32 %x, %t, 6;", 1),
        ("mul.lo.s32 %x, %t, 3;", 0),
        ("mad.lo.s32 %x, %t, 2, 4;", 1),
        ("mad.lo.s32 %x, %t, 2, 1;", 0),
        ("mad.lo.s32 %x, %t, 2, %p;", 0),
        ("shl.b32 %x, %p, 1;", 1),
        ("mov.u32 %x, %p;", 0),
        ("shl.b32 %y, %t, 2; or.b32 %x, %y, 2;", 1),
        (
            "shl.b32 %y, %t, 1; shl.b32 %z, %p, 1; add.s32 %x, %y, %z;",
            1,
        ),
        (
            "shl.b32 %y, %t, 1; shl.b32 %z, %p, 1; sub.s32 %x, %y, %z;",
            0,
        ),
        ("shl.b32 %y, %t, 1; sub.s32 %x, %y, 2;", 1),
        ("shl.b32 %y, %t, 1; sub.s32 %x, 100, %y;", 1),
        ("shl.b32 %y, %t, 1; neg.s32 %x, %y;", 0),
        (
            "shl.b32 %y, %t, 1; shl.b32 %z, %p, 3; xor.b32 %x, %y, %z;",
            1,
        ),
        (
            "setp.lt.u32 %q, %t, 5; shl.b32 %y, %t, 1; shl.b32 %z, %p, 3; selp.b32 %x, %y, %z, %q;",
            1,
        ),
        ("shl.b32 %y, %t, 3; shr.u32 %x, %y, 2;", 1),
        ("shl.b32 %y, %t, 3; shr.s32 %x, %y, 2;", 1),
        ("rem.u32 %y, %t, 7; shl.b32 %x, %y, 1;", 1),
        ("bfi.b32 %x, %t, 0, 1, 20;", 1),
        ("shl.b32 %y, %t, 1; min.u32 %x, %y, 100;", 0),
        ("shl.b32 %y, %t, 1; max.u32 %x, %y, 100;", 0),
        ("shl.b32 %y, %t, 2; div.u32 %x, %y, 2;", 0),
        ("bfe.u32 %y, %t, 0, 5; shl.b32 %x, %y, 1;", 1),
        (
            "shl.b32 %y, %t, 1; cvt.u16.u32 %h, %y; cvt.u32.u16 %x, %h;",
            1,
        ),
        ("shl.b32 %y, %t, 1; prmt.b32 %x, %y, 0, 0x3210;", 0),
        ("mul.lo.s32 %y, %t, 12; mul.lo.s32 %x, %y, %p;", 2),
        ("shl.b32 %y, %t, 4; and.b32 %x, %y, %p;", 4),
    ];
    for (body, expected) in cases {
        assert_eq!(zero_bits_of_x(body), *expected, "`{body}`");
    }
}

#[test]
fn wide_multiplies_and_conversions_keep_zero_bits_within_the_width() {
    let (kernel, known) = analyzed(
        "shl.b32 %y, %t, 1;
    mul.wide.s32 %w, %y, 4;
    cvt.u32.u64 %x, %w;
    cvt.u16.u32 %h, %x;",
    );
    assert_eq!(known.register(reg(&kernel, "%w")).low_zero_bits, 3);
    assert_eq!(known.register(reg(&kernel, "%x")).low_zero_bits, 3);
    assert_eq!(known.register(reg(&kernel, "%h")).low_zero_bits, 3);
    // A constant's zero bits never exceed its register's width.
    let (kernel, known) = analyzed("mov.u16 %h, 0;");
    assert_eq!(
        known.register(reg(&kernel, "%h")),
        KnownBits {
            low_zero_bits: 16,
            constant: Some(0)
        }
    );
}

#[test]
fn constants_fold_through_arithmetic() {
    let (kernel, known) = analyzed(
        "mov.u32 %y, 3;
    shl.b32 %z, %y, 2;
    add.s32 %x, %z, 4;",
    );
    assert_eq!(known.register(reg(&kernel, "%x")).constant, Some(16));
    assert_eq!(known.register(reg(&kernel, "%x")).low_zero_bits, 4);
    let (kernel, known) = analyzed("mov.u32 %y, 1; mov.u32 %x, %y;");
    assert_eq!(known.register(reg(&kernel, "%x")).constant, Some(1));
    // Negative constants wrap in their width.
    let (kernel, known) = analyzed("mov.u32 %y, 8; sub.s32 %x, %y, 12;");
    assert_eq!(
        known.register(reg(&kernel, "%x")).constant,
        Some(0xFFFF_FFFC)
    );
}

#[test]
fn loop_carried_registers_meet_every_definition() {
    // %i starts at 0 and steps by 4: its two low bits stay zero around the loop.
    let (kernel, known) = analyzed(
        "mov.u32 %i, 0;
LOOP:
    add.s32 %i, %i, 4;
    setp.lt.u32 %q, %i, 64;
@%q bra LOOP;
    mov.u32 %x, %i;",
    );
    assert_eq!(
        known.register(reg(&kernel, "%i")),
        KnownBits {
            low_zero_bits: 2,
            constant: None
        }
    );
    assert_eq!(known.register(reg(&kernel, "%x")).low_zero_bits, 2);
    // Stepping by 4 from 2 proves one bit; stepping by an unknown amount proves none.
    let (kernel, known) = analyzed(
        "mov.u32 %i, 2;
LOOP:
    add.s32 %i, %i, 4;
    setp.lt.u32 %q, %i, 64;
@%q bra LOOP;",
    );
    assert_eq!(known.register(reg(&kernel, "%i")).low_zero_bits, 1);
    let (kernel, known) = analyzed(
        "mov.u32 %i, 0;
LOOP:
    add.s32 %i, %i, %p;
    setp.lt.u32 %q, %i, 64;
@%q bra LOOP;",
    );
    assert_eq!(known.register(reg(&kernel, "%i")).low_zero_bits, 0);
}

#[test]
fn registers_without_a_start_are_unknown() {
    // %y is read before anything writes it, and %z only ever depends on itself.
    let (kernel, known) = analyzed(
        "shl.b32 %x, %y, 2;
    add.s32 %z, %z, 4;",
    );
    assert_eq!(known.register(reg(&kernel, "%x")).low_zero_bits, 2);
    assert_eq!(known.register(reg(&kernel, "%x")).constant, None);
    assert_eq!(known.register(reg(&kernel, "%z")), KnownBits::UNKNOWN);
    // A register the kernel does not have is unknown, not a panic.
    assert_eq!(known.register(RegId(10_000)), KnownBits::UNKNOWN);
}

#[test]
fn shared_variables_lie_where_the_machine_puts_them() {
    let (kernel, known) = analyzed("mov.u32 %x, second; mov.u32 %y, dynamic; mov.u32 %z, first;");
    // `first` at 0, `second` after 12 bytes at 12, the extern array after 76 bytes at 80.
    let symbol = |name: &str| {
        SymbolId(
            kernel
                .symbols
                .iter()
                .position(|symbol| symbol.name == name)
                .expect("a symbol") as u32,
        )
    };
    assert_eq!(known.shared_offset(symbol("first")), Some(0));
    assert_eq!(known.shared_offset(symbol("second")), Some(12));
    assert_eq!(known.shared_offset(symbol("dynamic")), Some(80));
    assert_eq!(known.shared_offset(symbol("P")), None);
    // ptxas's window starts at byte 0x400, 1024-aligned: `first` is known 1024-aligned,
    // `second` only 4-aligned.
    assert_eq!(known.register(reg(&kernel, "%z")).low_zero_bits, 10);
    assert_eq!(known.register(reg(&kernel, "%x")).low_zero_bits, 2);
    assert_eq!(known.register(reg(&kernel, "%y")).low_zero_bits, 4);
    assert_eq!(
        known.address(AddressBase::Symbol(symbol("second")), 4),
        KnownBits::constant(SHARED_WINDOW_BASE + 16, 64)
    );
}

#[test]
fn conversions_of_state_spaces_keep_alignment_but_not_values() {
    let (kernel, known) = analyzed(
        "mov.u64 %u, second;
    add.s64 %v, %u, 4;
    cvta.shared.u64 %w, %v;",
    );
    assert_eq!(known.register(reg(&kernel, "%v")).constant, Some(0x410));
    assert_eq!(
        known.register(reg(&kernel, "%w")),
        KnownBits {
            low_zero_bits: 4,
            constant: None
        }
    );
}

#[test]
fn meet_keeps_only_what_both_sides_know() {
    let a = KnownBits::constant(8, 32);
    let b = KnownBits::constant(24, 32);
    assert_eq!(a.meet(b), KnownBits::aligned(3, 32));
    assert_eq!(a.meet(a), a);
    assert_eq!(a.meet(KnownBits::UNKNOWN), KnownBits::UNKNOWN);
    assert_eq!(KnownBits::aligned(40, 64).alignment(), 1 << 32);
    assert_eq!(KnownBits::aligned(3, 64).plus(-8, 64).low_zero_bits, 3);
    assert_eq!(KnownBits::aligned(3, 64).plus(4, 64).low_zero_bits, 2);
}
