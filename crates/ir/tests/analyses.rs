//! The control-flow analyses (basic blocks, immediate post-dominators, which
//! decide where divergent paths reconverge) and the printer's literals.

use proptest::prelude::*;
use warpsim_ir::cfg::{Cfg, Successor};
use warpsim_ir::{parse_module, print_module, InstrId, ScalarType};

fn cfg_of(body: &str) -> (Cfg, Vec<Option<Successor>>) {
    let text = format!(
        ".kernel k(.param .u32 n)\n{{\n.reg .u32 %r, %s;\n.reg .pred %p, %q;\n{body}\n}}\n"
    );
    let module = parse_module("t.kir", &text).unwrap_or_else(|error| panic!("{error}"));
    let cfg = Cfg::build(&module.kernels[0]);
    let ipdom = cfg.immediate_post_dominators();
    (cfg, ipdom)
}

/// The instruction a block starts at, or `None` for the exit.
fn start(cfg: &Cfg, successor: Option<Successor>) -> Option<u32> {
    match successor {
        Some(Successor::Block(block)) => Some(cfg.blocks[block].start.0),
        _ => None,
    }
}

#[test]
fn if_else_reconverges_after_both_arms() {
    let (cfg, ipdom) = cfg_of(
        "setp.eq.u32 %p, %r, 0;\n@%p bra ELSE;\nadd.u32 %r, %r, 1;\nbra JOIN;\nELSE:\nadd.u32 %r, %r, 2;\nJOIN:\nadd.u32 %s, %r, 3;\nexit;",
    );
    // Blocks: [0,1] the branch, [2,3] then, [4] else, [5,6] join.
    assert_eq!(cfg.blocks.len(), 4);
    assert_eq!(cfg.block_of[1], 0);
    assert_eq!(start(&cfg, ipdom[0]), Some(5));
    assert_eq!(start(&cfg, ipdom[1]), Some(5));
    assert_eq!(start(&cfg, ipdom[2]), Some(5));
    assert_eq!(ipdom[3], Some(Successor::Exit));
}

#[test]
fn a_loop_reconverges_at_its_exit() {
    let (cfg, ipdom) = cfg_of(
        "mov.u32 %r, 0;\nLOOP:\nadd.u32 %r, %r, 1;\nsetp.lt.u32 %p, %r, 10;\n@%p bra LOOP;\nmov.u32 %s, %r;\nexit;",
    );
    let loop_block = cfg.block_of[1];
    assert_eq!(cfg.blocks[loop_block].start, InstrId(1));
    assert_eq!(start(&cfg, ipdom[loop_block]), Some(4));
}

#[test]
fn an_early_exit_means_the_sides_only_meet_at_the_exit() {
    let (cfg, ipdom) =
        cfg_of("setp.eq.u32 %p, %r, 0;\n@%p bra OUT;\nadd.u32 %r, %r, 1;\nexit;\nOUT:\nexit;");
    assert_eq!(ipdom[cfg.block_of[1]], Some(Successor::Exit));
}

#[test]
fn a_guarded_exit_continues_to_the_next_instruction() {
    let (cfg, ipdom) = cfg_of("setp.eq.u32 %p, %r, 0;\n@%p exit;\nadd.u32 %r, %r, 1;\nexit;");
    assert_eq!(cfg.blocks.len(), 2);
    assert_eq!(
        cfg.blocks[0].successors,
        vec![Successor::Exit, Successor::Block(1)]
    );
    // Lanes may leave straight from block 0, so only the exit post-dominates it.
    assert_eq!(ipdom[0], Some(Successor::Exit));
}

#[test]
fn an_endless_loop_has_no_post_dominator() {
    let (cfg, ipdom) = cfg_of("SPIN:\nbra SPIN;");
    assert_eq!(cfg.blocks.len(), 1);
    assert_eq!(ipdom[0], None);
}

#[test]
fn the_verifier_lists_every_problem() {
    let text = ".kernel k()\n{\n.reg .u32 %r;\n.reg .f32 %f;\n.reg .pred %p;\nadd.s32 %f, %r, 1;\nsetp.eq.u32 %r, %r, 1;\nbar.sync 16;\nexit;\n}\n";
    let module = parse_module("v.kir", text).unwrap();
    let problems = warpsim_ir::verify_module(&module).unwrap_err().problems;
    let lines: Vec<u32> = problems.iter().map(|problem| problem.line).collect();
    assert_eq!(lines, vec![6, 7, 8], "{problems:?}");
}

fn kernel_with_literal(ty: ScalarType, literal: &str) -> String {
    format!(".kernel k()\n{{\n.reg .{ty} %x;\nmov.{ty} %x, {literal};\nexit;\n}}\n")
}

proptest! {
    /// Every f32 and f64 bit pattern, NaNs and infinities included, prints as a
    /// literal that parses back to the same bits.
    #[test]
    fn float_literals_round_trip(bits32 in any::<u32>(), bits64 in any::<u64>()) {
        for (ty, bits) in [(ScalarType::F32, u64::from(bits32)), (ScalarType::F64, bits64)] {
            let literal = warpsim_ir::printer::literal_text(bits, ty);
            let text = kernel_with_literal(ty, &literal);
            let module = parse_module("l.kir", &text).unwrap();
            let printed = print_module(&module);
            prop_assert_eq!(&parse_module("p.kir", &printed).unwrap(), &module);
            let warpsim_ir::Op::Unary { a: warpsim_ir::Operand::Imm { bits: parsed, .. }, .. } =
                module.kernels[0].instrs[0].op else { panic!("a mov") };
            prop_assert_eq!(parsed, bits, "{}", literal);
        }
    }

    /// Integer literals of every type round-trip too.
    #[test]
    fn integer_literals_round_trip(value in any::<u64>(), type_index in 0usize..12) {
        let ty = [ScalarType::B8, ScalarType::B16, ScalarType::B32, ScalarType::B64,
                  ScalarType::U8, ScalarType::U16, ScalarType::U32, ScalarType::U64,
                  ScalarType::S8, ScalarType::S16, ScalarType::S32, ScalarType::S64][type_index];
        let bits = value & (u64::MAX >> (64 - ty.bits()));
        let literal = warpsim_ir::printer::literal_text(bits, ty);
        let module = parse_module("l.kir", &kernel_with_literal(ty, &literal)).unwrap();
        let warpsim_ir::Op::Unary { a: warpsim_ir::Operand::Imm { bits: parsed, .. }, .. } =
            module.kernels[0].instrs[0].op else { panic!("a mov") };
        prop_assert_eq!(parsed, bits);
    }
}

/// PTX read by the PTX front end prints as `.kir` that reads back to the same
/// module, locations (the CUDA lines) included.
#[test]
fn ptx_modules_round_trip_through_kir() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../programs/cuda/seed-kernels.ptx"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let module = warpsim_ir::parse_ptx("seed-kernels.ptx", &text).unwrap();
    warpsim_ir::verify_module(&module).unwrap();
    assert_eq!(module.kernels.len(), 13);
    assert_eq!(module.files, ["seed-kernels.ptx", "seed-kernels.cu"]);
    let printed = print_module(&module);
    assert_eq!(parse_module("printed.kir", &printed).unwrap(), module);
}

#[test]
fn an_early_return_does_not_stop_the_rest_from_reconverging() {
    // if (c) { if (d) return; r += 1; } JOIN: s = r + 3;
    let body = "setp.eq.u32 %p, %r, 0;\n@%p bra JOIN;\nsetp.eq.u32 %q, %s, 0;\n@%q bra OUT;\nadd.u32 %r, %r, 1;\nJOIN:\nadd.u32 %s, %r, 3;\nexit;\nOUT:\nexit;";
    let text = format!(".kernel k()\n{{\n.reg .u32 %r, %s;\n.reg .pred %p, %q;\n{body}\n}}\n");
    let module = parse_module("t.kir", &text).unwrap();
    let kernel = &module.kernels[0];
    let cfg = Cfg::build(kernel);
    let textbook = cfg.immediate_post_dominators();
    let reconvergence = cfg.reconvergence_points(kernel);
    // Textbook post-dominance: the outer branch only meets the early return at the exit.
    assert_eq!(textbook[0], Some(Successor::Exit));
    // Reconvergence ignores the lanes that leave at once: both meet at JOIN.
    assert_eq!(start(&cfg, reconvergence[0]), Some(5));
    assert_eq!(start(&cfg, reconvergence[cfg.block_of[3]]), Some(4));
}

#[test]
fn a_guarded_exit_in_a_loop_does_not_stop_the_loop_from_reconverging() {
    let (cfg, _) = cfg_of("mov.u32 %r, 0;\nLOOP:\n@%q exit;\nadd.u32 %r, %r, 1;\nsetp.lt.u32 %p, %r, 10;\n@%p bra LOOP;\nmov.u32 %s, %r;\nexit;");
    let text = ".kernel k(.param .u32 n)\n{\n.reg .u32 %r, %s;\n.reg .pred %p, %q;\nmov.u32 %r, 0;\nLOOP:\n@%q exit;\nadd.u32 %r, %r, 1;\nsetp.lt.u32 %p, %r, 10;\n@%p bra LOOP;\nmov.u32 %s, %r;\nexit;\n}\n";
    let module = parse_module("t.kir", text).unwrap();
    let reconvergence = cfg.reconvergence_points(&module.kernels[0]);
    // Instructions: 0 mov, 1 @%q exit, 2 add, 3 setp, 4 @%p bra LOOP, 5 mov, 6 exit.
    let back_edge = cfg.block_of[4];
    assert_eq!(start(&cfg, reconvergence[back_edge]), Some(5));
}

/// The bit-field, permute, math and active-mask instructions parse, verify and
/// print back to themselves.
#[test]
fn bit_and_math_instructions_round_trip() {
    let text = ".kernel k()\n{\n.reg .u32 %u;\n.reg .s32 %s;\n.reg .b32 %b, %c;\n.reg .f32 %f;\n\
        bfe.u32 %u, %u, 4, 8;\nbfe.s32 %s, %s, %u, 3;\nbfi.b32 %b, %c, %b, 8, 8;\n\
        prmt.b32 %b, %b, %c, 0x3210;\nex2.approx.f32 %f, %f;\nlg2.approx.f32 %f, %f;\n\
        sin.approx.f32 %f, %f;\ncos.approx.f32 %f, %f;\nactivemask.b32 %b;\nexit;\n}\n";
    let module = parse_module("bits.kir", text).unwrap_or_else(|error| panic!("{error}"));
    warpsim_ir::verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    let printed = print_module(&module);
    assert_eq!(parse_module("printed.kir", &printed).unwrap(), module);
    for spelling in [
        "bfe.u32",
        "bfe.s32",
        "bfi.b32",
        "prmt.b32",
        "ex2.approx.f32",
        "activemask.b32",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
}

/// Registers declared in nested PTX scopes are new registers visible only
/// inside them; sibling scopes may reuse a name (as `__syncthreads_count`
/// compiles), and the outer register is back after the scope.
#[test]
fn nested_ptx_scopes_declare_their_own_registers() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .pred %p<2>;\n.reg .b32 %r<3>;\n\
        { .reg .pred %p1; setp.ne.u32 %p1, %r1, 0; }\n\
        { .reg .pred %p1; setp.ne.u32 %p1, %r2, 0; }\n\
        setp.eq.u32 %p1, %r0, 0;\nret;\n}\n";
    let module =
        warpsim_ir::parse_ptx("scopes.ptx", text).unwrap_or_else(|error| panic!("{error}"));
    let kernel = &module.kernels[0];
    let destinations: Vec<String> = kernel
        .instrs
        .iter()
        .filter_map(|instr| {
            instr
                .op
                .destinations()
                .first()
                .map(|&reg| kernel.reg(reg).name.clone())
        })
        .collect();
    assert_ne!(
        destinations[0], destinations[1],
        "sibling scopes get distinct registers"
    );
    assert_eq!(
        destinations[2], "%p1",
        "the outer register is back after the scopes"
    );
    assert!(destinations[0].starts_with("%p1$") && destinations[1].starts_with("%p1$"));
    let printed = print_module(&module);
    assert_eq!(parse_module("printed.kir", &printed).unwrap(), module);
    // Declaring twice in one scope is still an error.
    let twice = text.replace(
        "{ .reg .pred %p1; setp.ne.u32 %p1, %r1, 0; }",
        "{ .reg .pred %p1; .reg .pred %p1; }",
    );
    let error = warpsim_ir::parse_ptx("twice.ptx", &twice).expect_err("declared twice");
    assert_eq!(
        error.to_string(),
        "twice.ptx:8:30: register `%p1` is declared twice"
    );
}
