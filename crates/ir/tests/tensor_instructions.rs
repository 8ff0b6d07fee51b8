//! The tensor-core instructions in the IR: `ldmatrix`, `stmatrix` and
//! `mma.sync` (PTX ISA 9.7.14) parse, verify, print and read back to the
//! same module, in the spellings NVRTC emits; wrong fragment sizes, types
//! and layouts are errors that name them.

use warpsim_ir::{parse_module, print_module, verify_module, Op};

/// A `.kir` kernel with the registers the tests use, around `body`.
fn kernel(body: &str) -> String {
    format!(
        ".kernel k()\n{{\n.reg .u32 %address;\n.reg .b32 %r<8>;\n.reg .f32 %f<4>;\n\
         .reg .s32 %s<4>;\n.reg .f64 %x<4>;\n{body}\nexit;\n}}\n"
    )
}

/// Parses, verifies, prints and reparses `body`; returns the printed line
/// of its first instruction.
fn round_trip(body: &str) -> String {
    let text = kernel(body);
    let module = parse_module("tensor.kir", &text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    let printed = print_module(&module);
    assert_eq!(
        parse_module("printed.kir", &printed).unwrap_or_else(|error| panic!("{error}\n{printed}")),
        module
    );
    printed
        .lines()
        .map(str::trim)
        .find(|line| {
            line.starts_with("ldmatrix") || line.starts_with("stmatrix") || line.starts_with("mma")
        })
        .expect("the instruction is printed")
        .to_string()
}

fn parse_error(body: &str) -> String {
    parse_module("tensor.kir", &kernel(body))
        .expect_err("it must not parse")
        .to_string()
}

#[test]
fn matrix_loads_and_stores_round_trip() {
    for text in [
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r0}, [%address]",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r0, %r1}, [%address+16]",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [%address]",
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%address], {%r0, %r1, %r2, %r3}",
        "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%address], {%r4}",
    ] {
        assert_eq!(round_trip(&format!("{text};")), format!("{text};"));
    }
}

#[test]
fn every_mma_shape_round_trips() {
    for text in [
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3}",
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r6, %r7}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%r6, %r7}",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3}",
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4}, {%f0, %f1, %f2, %f3}",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3}",
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%x0, %x1}, {%x2}, {%x3}, {%x0, %x1}",
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%s0, %s1, %s2, %s3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%s0, %s1, %s2, %s3}",
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%s0, %s1, %s2, %s3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%s0, %s1, %s2, %s3}",
    ] {
        assert_eq!(round_trip(&format!("{text};")), format!("{text};"));
    }
}

#[test]
fn an_mma_writes_its_d_fragment() {
    let module = parse_module(
        "tensor.kir",
        &kernel("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4}, {%f0, %f1, %f2, %f3};"),
    )
    .unwrap();
    let op = &module.kernels[0].instrs[0].op;
    assert!(matches!(op, Op::MatrixMultiplyAccumulate { .. }));
    assert_eq!(op.destinations().len(), 4);
}

#[test]
fn wrong_fragments_types_and_layouts_are_errors() {
    for (body, message) in [
        (
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1}, [%address];",
            "`.x4` moves 4 matrices and takes 4 destination registers, not 2",
        ),
        (
            "ldmatrix.sync.aligned.m8n8.x4.shared.b32 {%r0, %r1, %r2, %r3}, [%address];",
            "`ldmatrix` takes `.b16`",
        ),
        (
            "ldmatrix.sync.aligned.m8n8.x4.global.b16 {%r0, %r1, %r2, %r3}, [%address];",
            "`ldmatrix` accesses shared memory, not `.global`",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4, %r5}, {%f0, %f1, %f2, %f3};",
            "this `mma` takes 4 registers for A, not 2",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};",
            "`mma.sync.aligned.m16n8k16` takes `.row.col`",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f32 {%r6, %r7}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};",
            "`mma.m16n8k16` does not take D `.f16`, A `.bf16`, B `.bf16`, C `.f32`",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};",
            "`.satfinite` is for integer `mma` only",
        ),
    ] {
        let error = parse_error(body);
        assert!(error.contains(message), "{body}: {error}");
    }
}

#[test]
fn a_fragment_register_of_the_wrong_type_does_not_verify() {
    // C of `.f32` in `.s32` registers.
    let module = parse_module(
        "tensor.kir",
        &kernel("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%s0, %s1, %s2, %s3};"),
    )
    .unwrap();
    let error = verify_module(&module).unwrap_err().to_string();
    assert!(
        error.contains("C `%s0` is declared `.s32` but the instruction uses it as `.f32`"),
        "{error}"
    );
}

/// `.shared::cta` (PTX ISA 7.8's name for the block's own shared memory)
/// is `.shared`, for matrix accesses and ordinary loads and stores alike;
/// `.shared::cluster` is another block's and is refused.
#[test]
fn shared_cta_is_the_blocks_shared_memory() {
    let spelled = |space: &str| {
        let body = format!(
            "ldmatrix.sync.aligned.m8n8.x1.{space}.b16 {{%r0}}, [%address];\n\
             ld.{space}.u32 %r1, [%address];\nst.{space}.u32 [%address], %r1;"
        );
        let module =
            parse_module("shared.kir", &kernel(&body)).unwrap_or_else(|error| panic!("{error}"));
        module.kernels[0]
            .instrs
            .iter()
            .map(|instr| instr.op.clone())
            .collect::<Vec<Op>>()
    };
    assert_eq!(spelled("shared::cta"), spelled("shared"));
    assert!(
        round_trip("ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%r0}, [%address];")
            .contains(".shared.b16")
    );
    assert!(parse_error("ld.shared::cluster.u32 %r1, [%address];").contains("shared::cluster"));
}
