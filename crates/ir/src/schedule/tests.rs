//! Tests of the load schedule: loads and their address arithmetic rise past
//! what they may pass, in order, and stop at every instruction the module
//! documentation lists; the result verifies, round-trips through its text,
//! and is a fixed point.

use super::*;
use crate::{parse_module, print_module, verify_module, Module};

/// A kernel whose body is `body`, with `%g` a global address, `%s` a shared
/// one, `%t` the thread index, and spare registers; the set-up is a block
/// of its own (the label after it starts one), so that nothing in the body
/// rises above it.
fn kernel(body: &str) -> Module {
    let text = format!(
        ".kernel k(.param .u64 G)
{{
    .shared .align 4 .b8 s[1024];
    .reg .u32 %t, %s, %r<8>, %v<8>;
    .reg .u64 %g, %a<8>, %w;
    .reg .f32 %f<8>;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %g, [G];
    mov.u32 %s, s;
BODY:
{body}
    exit;
}}
"
    );
    parse_module("schedule.kir", &text).unwrap_or_else(|error| panic!("{error}\n{text}"))
}

/// Schedules `body`'s kernel, checks that it verifies, round-trips and
/// that a second schedule changes nothing, and returns the summary and the
/// body's instructions in their new order, as text (the three set-up
/// instructions and the exit left out).
fn scheduled(body: &str) -> (ScheduleSummary, Vec<String>) {
    let mut module = kernel(body);
    verify_module(&module).unwrap_or_else(|error| panic!("before: {error}"));
    let summary = schedule_kernel(&mut module.kernels[0]);
    verify_module(&module)
        .unwrap_or_else(|error| panic!("after: {error}\n{}", print_module(&module)));
    let printed = print_module(&module);
    let reparsed = parse_module("scheduled.kir", &printed).expect("the scheduled text parses");
    assert_eq!(reparsed, module, "parse(print(m)) != m\n{printed}");
    let mut again = module.clone();
    let second = schedule_kernel(&mut again.kernels[0]);
    assert_eq!(
        second.loads_hoisted, 0,
        "a second schedule moved loads:\n{printed}"
    );
    assert_eq!(again, module, "a second schedule changed the kernel");
    let kernel = &module.kernels[0];
    let count = kernel.instrs.len();
    let lines = kernel.instrs[3..count - 1]
        .iter()
        .map(|instr| crate::instruction_text(kernel, instr))
        .collect();
    (summary, lines)
}

fn body_lines(body: &str) -> Vec<String> {
    let module = kernel(body);
    let kernel = &module.kernels[0];
    let count = kernel.instrs.len();
    kernel.instrs[3..count - 1]
        .iter()
        .map(|instr| crate::instruction_text(kernel, instr))
        .collect()
}

#[test]
fn independent_loads_rise_above_the_shared_stores_of_their_values_with_their_addresses() {
    let body = "
    cvt.u64.u32 %a0, %t;
    add.s64 %a1, %g, %a0;
    ld.global.u32 %v0, [%a1];
    st.shared.u32 [%s], %v0;
    add.s64 %a2, %a1, 128;
    ld.global.u32 %v1, [%a2];
    st.shared.u32 [%s+128], %v1;
    add.s64 %a3, %a1, 256;
    ld.global.u32 %v2, [%a3];
    st.shared.u32 [%s+256], %v2;";
    let (summary, lines) = scheduled(body);
    let expected = body_lines(
        "
    cvt.u64.u32 %a0, %t;
    add.s64 %a1, %g, %a0;
    ld.global.u32 %v0, [%a1];
    add.s64 %a2, %a1, 128;
    ld.global.u32 %v1, [%a2];
    add.s64 %a3, %a1, 256;
    ld.global.u32 %v2, [%a3];
    st.shared.u32 [%s], %v0;
    st.shared.u32 [%s+128], %v1;
    st.shared.u32 [%s+256], %v2;",
    );
    assert_eq!(lines, expected);
    assert_eq!(
        summary,
        ScheduleSummary {
            loads_hoisted: 2,
            blocks_reordered: 1,
            branches_predicated: 0
        }
    );
}

#[test]
fn a_load_rises_above_arithmetic_it_does_not_depend_on() {
    let (summary, lines) = scheduled(
        "
    mul.lo.u32 %r0, %t, 3;
    add.u32 %r1, %r0, 7;
    ld.global.u32 %v0, [%g];
    add.u32 %r2, %r1, %v0;",
    );
    assert_eq!(
        lines,
        body_lines(
            "
    ld.global.u32 %v0, [%g];
    mul.lo.u32 %r0, %t, 3;
    add.u32 %r1, %r0, 7;
    add.u32 %r2, %r1, %v0;"
        )
    );
    assert_eq!(summary.loads_hoisted, 1);
}

/// Each instruction a plain global load must not pass, with the load after
/// it: the order stays.
#[test]
fn a_load_stays_below_what_may_write_global_memory_or_orders_accesses() {
    for stop in [
        "st.global.u32 [%g+64], %t;",
        "st.u32 [%w], %t;",
        "atom.shared.add.u32 %r1, [%s], 1;",
        "red.global.add.u32 [%g+64], 1;",
        "bar.sync 0;",
        "membar.gl;",
        "fence.acq_rel.gpu;",
        "bar.warp.sync -1;",
        "ld.volatile.global.u32 %r1, [%g+64];",
        "ld.acquire.gpu.global.u32 %r1, [%g+64];",
        "mov.u32 %r1, %clock;",
        "mov.u64 %w, %clock64;",
        "@%p trap;",
        "nanosleep.u32 100;",
    ] {
        let body = format!(
            "
    setp.eq.u32 %p, %t, 99;
    cvta.to.global.u64 %w, %g;
    {stop}
    ld.global.u32 %v0, [%g];"
        );
        let (summary, lines) = scheduled(&body);
        assert_eq!(lines, body_lines(&body), "moved past `{stop}`");
        assert_eq!(summary.loads_hoisted, 0, "moved past `{stop}`");
    }
}

#[test]
fn plain_global_loads_keep_their_order() {
    let (summary, lines) = scheduled(
        "
    st.shared.u32 [%s], %t;
    ld.global.u32 %v1, [%g+4];
    st.shared.u32 [%s+4], %t;
    ld.global.u32 %v0, [%g];",
    );
    assert_eq!(
        lines,
        body_lines(
            "
    ld.global.u32 %v1, [%g+4];
    ld.global.u32 %v0, [%g];
    st.shared.u32 [%s], %t;
    st.shared.u32 [%s+4], %t;"
        )
    );
    assert_eq!(summary.loads_hoisted, 2);
}

/// Shared, local and parameter accesses and warp collectives touch no
/// global memory a load reads, so a load passes them; they keep their own
/// order.
#[test]
fn a_load_passes_shared_and_local_accesses_and_shuffles_which_keep_their_order() {
    let (summary, lines) = scheduled(
        "
    st.shared.u32 [%s], %t;
    ld.shared.u32 %r0, [%s+4];
    shfl.sync.bfly.b32 %r1, %r0, 1, 31, -1;
    ld.param.u64 %w, [G];
    ld.global.u32 %v0, [%g];",
    );
    assert_eq!(
        lines,
        body_lines(
            "
    ld.global.u32 %v0, [%g];
    st.shared.u32 [%s], %t;
    ld.shared.u32 %r0, [%s+4];
    shfl.sync.bfly.b32 %r1, %r0, 1, 31, -1;
    ld.param.u64 %w, [G];"
        )
    );
    assert_eq!(summary.loads_hoisted, 1);
}

#[test]
fn registers_hold_a_load_below_their_readers_writers_and_its_guard() {
    // The load's destination is read before it (a write after a read),
    // written before it (after a write), and its guard and address are
    // computed right before it.
    for body in [
        "
    add.u32 %r0, %v0, 1;
    ld.global.u32 %v0, [%g];",
        "
    mov.u32 %v0, 5;
    ld.global.u32 %v0, [%g];",
        "
    setp.eq.u32 %p, %t, 0;
    @%p ld.global.u32 %v0, [%g];",
    ] {
        let (_, lines) = scheduled(body);
        assert_eq!(lines, body_lines(body), "{body}");
    }
    // A guarded load moves with the comparison that makes its guard.
    let (summary, lines) = scheduled(
        "
    st.shared.u32 [%s], %t;
    setp.eq.u32 %p, %t, 0;
    @%p ld.global.u32 %v0, [%g];",
    );
    assert_eq!(
        lines,
        body_lines(
            "
    setp.eq.u32 %p, %t, 0;
    @%p ld.global.u32 %v0, [%g];
    st.shared.u32 [%s], %t;"
        )
    );
    assert_eq!(summary.loads_hoisted, 1);
}

/// The carry flag is a register: `addc` stays after its `add.cc`, whatever
/// the schedule takes first.
#[test]
fn the_carry_flag_orders_carry_chains() {
    let body = "
    add.cc.u32 %r0, %t, 1;
    addc.u32 %r1, %t, 0;
    add.cc.u32 %r2, %v1, 1;
    ld.global.u32 %v1, [%g];
    addc.u32 %r3, %r2, 0;";
    let (_, lines) = scheduled(body);
    let position = |text: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(text))
            .unwrap_or_else(|| panic!("no `{text}` in {lines:?}"))
    };
    assert!(position("add.cc.u32 %r0") < position("addc.u32 %r1"));
    assert!(position("addc.u32 %r1") < position("add.cc.u32 %r2"));
    assert!(position("add.cc.u32 %r2") < position("addc.u32 %r3"));
    // The load writes %v1, which the second add.cc reads first.
    assert!(position("add.cc.u32 %r2") < position("ld.global"));
}

/// Instructions never leave their basic block, and the branch stays last.
#[test]
fn loads_stay_in_their_block_and_the_branch_stays_last() {
    let body = "
    setp.eq.u32 %p, %t, 0;
    st.shared.u32 [%s], %t;
@%p bra SKIP;
    st.shared.u32 [%s+4], %t;
    ld.global.u32 %v0, [%g];
SKIP:
    st.shared.u32 [%s+8], %t;
    ld.global.u32 %v1, [%g+4];
    setp.eq.u32 %p, %v1, 0;
@%p bra SKIP;";
    let (summary, lines) = scheduled(body);
    assert_eq!(
        lines,
        body_lines(
            "
    setp.eq.u32 %p, %t, 0;
    st.shared.u32 [%s], %t;
@%p bra SKIP;
    ld.global.u32 %v0, [%g];
    st.shared.u32 [%s+4], %t;
SKIP:
    ld.global.u32 %v1, [%g+4];
    st.shared.u32 [%s+8], %t;
    setp.eq.u32 %p, %v1, 0;
@%p bra SKIP;"
        )
    );
    assert_eq!(
        summary,
        ScheduleSummary {
            loads_hoisted: 2,
            blocks_reordered: 2,
            branches_predicated: 0
        }
    );
}

#[test]
fn a_kernel_without_global_loads_keeps_its_order() {
    let body = "
    st.shared.u32 [%s], %t;
    add.u32 %r0, %t, 1;
    ld.shared.u32 %r1, [%s];";
    let module = kernel(body);
    let mut scheduled = module.clone();
    assert_eq!(
        schedule_kernel(&mut scheduled.kernels[0]),
        ScheduleSummary::default()
    );
    assert_eq!(scheduled, module);
}

/// A bounds check around a load, as NVVM writes it, becomes a predicated
/// load, and the load then rises above the store before it; the label goes
/// with the branch.
#[test]
fn a_short_branch_around_loads_becomes_predication() {
    let (summary, lines) = scheduled(
        "
    setp.ge.u32 %p, %t, 100;
    mov.u32 %v0, 0;
@%p bra SKIP0;
    ld.global.u32 %v0, [%g];
SKIP0:
    st.shared.u32 [%s], %v0;
    mov.u32 %v1, 0;
@!%p bra SKIP1;
    add.s64 %a0, %g, 128;
    ld.global.u32 %v1, [%a0];
SKIP1:
    st.shared.u32 [%s+4], %v1;",
    );
    assert_eq!(
        lines,
        body_lines(
            "
    setp.ge.u32 %p, %t, 100;
    mov.u32 %v0, 0;
@!%p ld.global.u32 %v0, [%g];
    mov.u32 %v1, 0;
@%p add.s64 %a0, %g, 128;
@%p ld.global.u32 %v1, [%a0];
    st.shared.u32 [%s], %v0;
    st.shared.u32 [%s+4], %v1;"
        )
    );
    assert_eq!(
        summary,
        ScheduleSummary {
            loads_hoisted: 1,
            blocks_reordered: 1,
            branches_predicated: 2
        }
    );
}

/// What a branch skips stays a branch when it stores, holds no global
/// load, is guarded already, writes the branch's predicate, is entered by
/// another branch, or is longer than [`MAX_PREDICATED`].
#[test]
fn other_branches_stay() {
    let long_body = "add.u32 %r0, %t, 1;\n".repeat(MAX_PREDICATED);
    for skipped in [
        "ld.global.u32 %v0, [%g];\n    st.global.u32 [%g+4], %v0;".to_string(),
        "add.u32 %r0, %t, 1;".to_string(),
        "@%p ld.global.u32 %v0, [%g];".to_string(),
        "ld.global.u32 %v0, [%g];\n    setp.eq.u32 %p, %v0, 0;".to_string(),
        "ld.global.u32 %v0, [%g];\nINSIDE:\n    add.u32 %r0, %t, 1;".to_string(),
        format!("ld.global.u32 %v0, [%g];\n{long_body}"),
    ] {
        let enters = if skipped.contains("INSIDE") {
            "\n@%p bra INSIDE;"
        } else {
            ""
        };
        let body = format!(
            "
    setp.ge.u32 %p, %t, 100;
@%p bra SKIP;
    {skipped}
SKIP:
    st.shared.u32 [%s], %v0;{enters}"
        );
        let (summary, _) = scheduled(&body);
        assert_eq!(summary.branches_predicated, 0, "predicated:{body}");
    }
}
