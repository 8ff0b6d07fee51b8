//! Tests of the parameter placement: each load lands where the module
//! documentation says, the kernel still verifies and round-trips, and a
//! second placement moves nothing.

use super::*;
use crate::{parse_module, print_module, verify_module};

/// Places the parameter loads of a kernel whose body is `body` (registers
/// declared here, the parameters `P` (.u64) and `N` (.u32)), checks the
/// result, and returns how many moved and the instructions as text.
fn placed(body: &str) -> (usize, Vec<String>) {
    let text = format!(
        ".kernel k(.param .u64 P, .param .u32 N)
{{
    .shared .align 4 .b8 s[128];
    .reg .u32 %t, %n, %r<8>;
    .reg .u64 %p, %a<8>, %c<2>;
    .reg .pred %q<2>;
{body}
}}
"
    );
    let mut module = parse_module("placement.kir", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify_module(&module).unwrap_or_else(|error| panic!("before: {error}"));
    let moved = place_parameter_loads(&mut module.kernels[0]);
    verify_module(&module)
        .unwrap_or_else(|error| panic!("after: {error}\n{}", print_module(&module)));
    let printed = print_module(&module);
    let reparsed = parse_module("placed.kir", &printed).expect("the placed text parses");
    assert_eq!(reparsed, module, "parse(print(m)) != m\n{printed}");
    let mut again = module.clone();
    assert_eq!(
        place_parameter_loads(&mut again.kernels[0]),
        0,
        "a second placement moved loads:\n{printed}"
    );
    let kernel = &module.kernels[0];
    let mut lines = Vec::new();
    let mut label_at = std::collections::BTreeMap::new();
    for label in &kernel.labels {
        label_at.insert(label.target.index(), label.name.clone());
    }
    for (index, instr) in kernel.instrs.iter().enumerate() {
        if let Some(name) = label_at.get(&index) {
            lines.push(format!("{name}:"));
        }
        lines.push(crate::instruction_text(kernel, instr));
    }
    (moved, lines)
}

#[test]
fn a_pointer_read_after_a_barrier_is_loaded_after_it() {
    // seed1_noconflict's output pointer: NVVM loads it at the top, ptxas
    // after the __syncthreads() that comes before its only use.
    let (moved, lines) = placed(
        "    ld.param.u64 %p, [P];
    mov.u32 %t, %tid.x;
    st.shared.u32 [s], %t;
    bar.sync 0;
    ld.shared.u32 %r1, [s];
    cvta.to.global.u64 %a1, %p;
    st.global.u32 [%a1], %r1;
    exit;",
    );
    assert_eq!(moved, 1);
    assert_eq!(
        lines,
        [
            "mov.u32 %t, %tid.x",
            "st.shared.u32 [s], %t",
            "bar.sync 0",
            "ld.param.u64 %p, [P]",
            "ld.shared.u32 %r1, [s]",
            "cvta.to.global.u64 %a1, %p",
            "st.global.u32 [%a1], %r1",
            "exit",
        ]
    );
}

#[test]
fn a_load_used_only_in_a_branch_moves_into_it_and_after_a_clock_read() {
    // sharedStoreBarrier's cycles pointer, read inside
    // `if (threadIdx.x == 0)`; storeSpinBarrier's, after a clock read.
    let (moved, lines) = placed(
        "    ld.param.u64 %p, [P];
    mov.u32 %t, %tid.x;
    setp.ne.u32 %q0, %t, 0;
@%q0 bra DONE;
    mov.u64 %c0, %clock64;
    cvta.to.global.u64 %a1, %p;
    st.global.u64 [%a1], %c0;
DONE:
    exit;",
    );
    assert_eq!(moved, 1);
    assert_eq!(
        lines,
        [
            "mov.u32 %t, %tid.x",
            "setp.ne.u32 %q0, %t, 0",
            "@%q0 bra DONE",
            "mov.u64 %c0, %clock64",
            "ld.param.u64 %p, [P]",
            "cvta.to.global.u64 %a1, %p",
            "st.global.u64 [%a1], %c0",
            "DONE:",
            "exit",
        ]
    );
}

#[test]
fn a_loop_invariant_stays_out_of_the_loop_early_in_the_block_before_it() {
    // storeSpinBarrier's spin count: compared with in the loop, loaded
    // before it, after the barrier and before the store that come before
    // the loop (ptxas's ULDC comes before the first clock read).
    let (moved, lines) = placed(
        "    ld.param.u32 %n, [N];
    ld.param.u64 %p, [P];
    bar.sync 0;
    cvta.to.global.u64 %a1, %p;
    st.global.u32 [%a1], 1;
    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %q0, %r1, %n;
@%q0 bra LOOP;
    exit;",
    );
    assert_eq!(moved, 2);
    assert_eq!(
        lines,
        [
            "bar.sync 0",
            "ld.param.u32 %n, [N]",
            "ld.param.u64 %p, [P]",
            "cvta.to.global.u64 %a1, %p",
            "st.global.u32 [%a1], 1",
            "mov.u32 %r1, 0",
            "LOOP:",
            "add.u32 %r1, %r1, 1",
            "setp.lt.u32 %q0, %r1, %n",
            "@%q0 bra LOOP",
            "exit",
        ]
    );
}

#[test]
fn uses_in_two_branches_meet_in_the_block_that_dominates_both() {
    let (moved, lines) = placed(
        "    ld.param.u32 %n, [N];
    mov.u32 %t, %tid.x;
    bar.sync 0;
    setp.ne.u32 %q0, %t, 0;
@%q0 bra OTHER;
    add.u32 %r1, %n, 1;
    bra DONE;
OTHER:
    add.u32 %r1, %n, 2;
DONE:
    st.shared.u32 [s], %r1;
    exit;",
    );
    assert_eq!(moved, 1);
    assert_eq!(
        lines,
        [
            "mov.u32 %t, %tid.x",
            "bar.sync 0",
            "ld.param.u32 %n, [N]",
            "setp.ne.u32 %q0, %t, 0",
            "@%q0 bra OTHER",
            "add.u32 %r1, %n, 1",
            "bra DONE",
            "OTHER:",
            "add.u32 %r1, %n, 2",
            "DONE:",
            "st.shared.u32 [s], %r1",
            "exit",
        ]
    );
}

#[test]
fn loads_that_something_could_tell_apart_stay() {
    // A register written twice, a guarded load, and a load whose first use
    // is the next instruction: none moves.
    let (moved, lines) = placed(
        "    ld.param.u32 %n, [N];
    mov.u32 %t, %tid.x;
    setp.ne.u32 %q0, %t, 0;
@%q0 ld.param.u32 %r2, [N];
    bar.sync 0;
    add.u32 %n, %n, %r2;
    ld.param.u64 %p, [P];
    cvta.to.global.u64 %a1, %p;
    st.global.u32 [%a1], %n;
    exit;",
    );
    assert_eq!(moved, 0);
    assert_eq!(lines[0], "ld.param.u32 %n, [N]");
    assert_eq!(lines[3], "@%q0 ld.param.u32 %r2, [N]");
    // A load whose register a loop reads above it, before the load's
    // first run wrote it.
    let (moved, _) = placed(
        "    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, %n;
    bar.sync 0;
    ld.param.u32 %n, [N];
    setp.lt.u32 %q0, %r1, 100;
@%q0 bra LOOP;
    exit;",
    );
    assert_eq!(moved, 0);
}

#[test]
fn a_read_of_the_launch_shape_rises_to_the_last_barrier() {
    // ptxas reads %ntid from constant bank 0 early (ULDC c[0x0][0x0]), so
    // that its miss overlaps the parameters'; it does not rise above the
    // barrier, nor above an instruction that touches its register.
    let (moved, lines) = placed(
        "    mov.u32 %t, %tid.x;
    bar.sync 0;
    add.u32 %r1, %t, 1;
    mov.u32 %r2, %ntid.x;
    mad.lo.u32 %r3, %r2, %r1, %t;
    mov.u32 %r4, %r3;
    add.u32 %r5, %r4, 1;
    mov.u32 %r4, %nctaid.x;
    st.shared.u32 [s], %r4;
    st.shared.u32 [s+4], %r5;
    exit;",
    );
    assert_eq!(moved, 1);
    assert_eq!(
        lines,
        [
            "mov.u32 %t, %tid.x",
            "bar.sync 0",
            "mov.u32 %r2, %ntid.x",
            "add.u32 %r1, %t, 1",
            "mad.lo.u32 %r3, %r2, %r1, %t",
            "mov.u32 %r4, %r3",
            "add.u32 %r5, %r4, 1",
            "mov.u32 %r4, %nctaid.x",
            "st.shared.u32 [s], %r4",
            "st.shared.u32 [s+4], %r5",
            "exit",
        ]
    );
}
