//! Divergence and reconvergence: if/else arms taken by different lanes,
//! nested ifs, loops whose trip count depends on the lane (top- and
//! bottom-tested, with a break), early exits of some lanes, guarded
//! instructions with partial masks, and the per-instruction `executed` /
//! `threads` counts that show where a warp reconverged.

mod common;
use common::*;
use warpsim_machine::InstrStats;

// Odd lanes take one arm, even lanes the other; both write; the join runs once per warp.
const IF_ELSE: &str = r#"
.kernel ifelse(.param .u64 OUT)
{
    .reg .u32 %t, %v, %odd;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    and.b32 %odd, %t, 1;
    setp.eq.u32 %p, %odd, 1;
@%p bra ODD;                         // @branch
    mul.lo.u32 %v, %t, 10;           // @even
    bra JOIN;                        // @even_bra
ODD:
    add.u32 %v, %t, 1000;            // @odd
JOIN:
    st.global.u32 [%po], %v;         // @join
}
"#;

#[test]
fn if_else_odd_and_even_lanes_both_write_and_reconverge() {
    let out = run_kernel(IF_ELSE, 1, 64, &[Arg::zeros(64)]).ok();
    let want: Vec<u32> = (0..64)
        .map(|t| if t % 2 == 1 { t + 1000 } else { t * 10 })
        .collect();
    assert_eq!(out.u32s(0), want);
    // Two warps; the guard of the branch is true in the 16 odd lanes of each.
    assert_eq!(out.stats("@branch"), counts(2, 32));
    assert_eq!(out.stats("@even"), counts(2, 32));
    assert_eq!(out.stats("@even_bra"), counts(2, 32));
    assert_eq!(out.stats("@odd"), counts(2, 32));
    assert_eq!(out.stats("@join"), global(2, 64, 8));
    assert_eq!(out.outcome.stats.blocks_run, 1);
    assert_eq!(out.outcome.failed_blocks, 0);
}

// if (t < 16) { if (t % 4 == 0) v = 1; else v = 2; v += 10; } else { v = 3; } out[t] = v;
const NESTED_IF: &str = r#"
.kernel nested(.param .u64 OUT)
{
    .reg .u32 %t, %v, %m;
    .reg .u64 %po, %off;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    setp.ge.u32 %p, %t, 16;
@%p bra OUTER_ELSE;                  // @outer
    and.b32 %m, %t, 3;
    setp.ne.u32 %q, %m, 0;
@%q bra INNER_ELSE;                  // @inner
    mov.u32 %v, 1;                   // @inner_then
    bra INNER_JOIN;
INNER_ELSE:
    mov.u32 %v, 2;                   // @inner_else
INNER_JOIN:
    add.u32 %v, %v, 10;              // @inner_join
    bra OUTER_JOIN;
OUTER_ELSE:
    mov.u32 %v, 3;                   // @outer_else
OUTER_JOIN:
    st.global.u32 [%po], %v;         // @outer_join
}
"#;

#[test]
fn nested_if_inside_if() {
    let out = run_kernel(NESTED_IF, 1, 32, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32)
        .map(|t| match (t < 16, t % 4 == 0) {
            (true, true) => 11,
            (true, false) => 12,
            (false, _) => 3,
        })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@outer"), counts(1, 16));
    assert_eq!(out.stats("@inner"), counts(1, 12));
    assert_eq!(out.stats("@inner_then"), counts(1, 4));
    assert_eq!(out.stats("@inner_else"), counts(1, 12));
    assert_eq!(out.stats("@inner_join"), counts(1, 16));
    assert_eq!(out.stats("@outer_else"), counts(1, 16));
    assert_eq!(out.stats("@outer_join"), global(1, 32, 4));
}

// An inner if/else whose join is the outer join (both branches reconverge at the same point).
const NESTED_SHARED_JOIN: &str = r#"
.kernel nested2(.param .u64 OUT)
{
    .reg .u32 %t, %v;
    .reg .u64 %po, %off;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    mov.u32 %v, 0;
    setp.lt.u32 %p, %t, 20;
@%p bra A;                           // @outer
    mov.u32 %v, 300;                 // @c
    bra JOIN;
A:
    setp.lt.u32 %q, %t, 5;
@%q bra B;                           // @inner
    mov.u32 %v, 200;                 // @a
    bra JOIN;
B:
    mov.u32 %v, 100;                 // @b
JOIN:
    add.u32 %v, %v, %t;              // @join
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn nested_branches_meeting_at_one_join() {
    let out = run_kernel(NESTED_SHARED_JOIN, 1, 32, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32)
        .map(|t| {
            t + if t < 5 {
                100
            } else if t < 20 {
                200
            } else {
                300
            }
        })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@outer"), counts(1, 20));
    assert_eq!(out.stats("@inner"), counts(1, 5));
    assert_eq!(out.stats("@a"), counts(1, 15));
    assert_eq!(out.stats("@b"), counts(1, 5));
    assert_eq!(out.stats("@c"), counts(1, 12));
    assert_eq!(out.stats("@join"), counts(1, 32));
}

// Lane l runs a top-tested loop l times: acc = 0 + 1 + ... + (l - 1).
const LANE_LOOP: &str = r#"
.kernel laneloop(.param .u64 OUT)
{
    .reg .u32 %t, %lane, %i, %acc;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %lane, %laneid;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    mov.u32 %i, 0;
    mov.u32 %acc, 0;
LOOP:
    setp.ge.u32 %p, %i, %lane;       // @cond
@%p bra END;                         // @exit_branch
    add.u32 %acc, %acc, %i;          // @body
    add.u32 %i, %i, 1;
    bra LOOP;                        // @back
END:
    st.global.u32 [%po], %acc;       // @after
}
"#;

#[test]
fn lane_dependent_loop_reconverges_after_the_loop() {
    let out = run_kernel(LANE_LOOP, 1, 64, &[Arg::zeros(64)]).ok();
    let want: Vec<u32> = (0..64)
        .map(|t| {
            let l = t % 32;
            l * (l.max(1) - 1) / 2
        })
        .collect();
    assert_eq!(out.u32s(0), want);
    // Per warp: the condition is evaluated at i = 0..=31 by the 32 - i lanes
    // still in the loop; lane i leaves at step i; the body runs for i = 0..=30.
    let warps = 2;
    assert_eq!(out.stats("@cond"), counts(32 * warps, 528 * warps));
    assert_eq!(out.stats("@exit_branch"), counts(32 * warps, 32 * warps));
    assert_eq!(out.stats("@body"), counts(31 * warps, 496 * warps));
    assert_eq!(out.stats("@back"), counts(31 * warps, 496 * warps));
    // Reconverged: the store after the loop is issued once per warp, by all lanes.
    assert_eq!(out.stats("@after"), global(warps, 32 * warps, 8));
}

// A bottom-tested (do-while) loop: lane l runs max(l, 1) times; then a break from the middle.
const DO_WHILE_AND_BREAK: &str = r#"
.kernel dowhile(.param .u64 OUT)
{
    .reg .u32 %t, %i, %acc, %j, %k;
    .reg .u64 %po, %off;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 8;
    add.u64 %po, %po, %off;
    mov.u32 %i, 0;
    mov.u32 %acc, 0;
LOOP:
    add.u32 %acc, %acc, 2;           // @dw_body
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, %t;
@%p bra LOOP;                        // @dw_back
    st.global.u32 [%po], %acc;       // @dw_after
    // for (j = 0;; j++) { if (j * j >= t) break; k += j; }
    mov.u32 %j, 0;
    mov.u32 %k, 0;
FOR:
    mul.lo.u32 %i, %j, %j;
    setp.ge.u32 %q, %i, %t;
@%q bra BREAK;                       // @break
    add.u32 %k, %k, %j;              // @for_body
    add.u32 %j, %j, 1;
    bra FOR;
BREAK:
    st.global.u32 [%po+4], %k;       // @for_after
}
"#;

#[test]
fn do_while_loop_and_break_from_the_middle() {
    let out = run_kernel(DO_WHILE_AND_BREAK, 1, 32, &[Arg::zeros(64)]).ok();
    let words = out.u32s(0);
    for t in 0..32u32 {
        let iterations = t.max(1);
        assert_eq!(
            words[2 * t as usize],
            2 * iterations,
            "do-while of lane {t}"
        );
        // j runs while j*j < t; k sums those j.
        let k: u32 = (0..).take_while(|j| j * j < t).sum();
        assert_eq!(words[2 * t as usize + 1], k, "break loop of lane {t}");
    }
    // do-while: pass p (1-based) runs for lanes with max(l, 1) >= p: 32 lanes at p = 1.
    let dw_threads: u64 = (1..=31u64)
        .map(|p| (0..32u64).filter(|&l| l.max(1) >= p).count() as u64)
        .sum();
    assert_eq!(out.stats("@dw_body"), counts(31, dw_threads));
    assert_eq!(out.stats("@dw_after"), global(1, 32, 8));
    assert_eq!(out.stats("@for_after"), global(1, 32, 8));
    // j = 0..=5 are tested (5 * 5 = 25 < 31, 6 * 6 = 36 >= 31): 7 passes.
    assert_eq!(out.executed("@break"), 7);
    assert_eq!(out.executed("@for_body"), 6);
}

// if (t % 4 == 0) exit; then the remaining lanes compute and store, and a second group exits later.
const EARLY_EXIT: &str = r#"
.kernel earlyexit(.param .u64 OUT)
{
    .reg .u32 %t, %m, %v;
    .reg .u64 %po, %off;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    and.b32 %m, %t, 3;
    setp.eq.u32 %p, %m, 0;
@%p exit;                            // @exit1
    mul.lo.u32 %v, %t, 3;            // @compute
    st.global.u32 [%po], %v;         // @store1
    setp.gt.u32 %q, %t, 40;
@%q exit;                            // @exit2
    add.u32 %v, %v, 1;               // @after2
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn early_exit_of_some_lanes_then_the_rest_run() {
    let sentinel = 0xdead_beef;
    let out = run_kernel(EARLY_EXIT, 1, 64, &[Arg::u32s(&[sentinel; 64])]).ok();
    let want: Vec<u32> = (0..64)
        .map(|t| {
            if t % 4 == 0 {
                sentinel
            } else if t > 40 {
                t * 3
            } else {
                t * 3 + 1
            }
        })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@exit1"), counts(2, 16));
    assert_eq!(out.stats("@compute"), counts(2, 48));
    // Warp 0: all 24 lanes left stay; warp 1: lanes of t 33..=40 not multiple of 4 (6) stay.
    let stay = (0..64).filter(|t| t % 4 != 0 && *t <= 40).count() as u64;
    assert_eq!(out.stats("@exit2"), counts(2, 48 - stay));
    assert_eq!(out.stats("@after2"), counts(2, stay));
}

// One arm of an if exits entirely; the other arm continues past the join.
const ARM_EXITS: &str = r#"
.kernel armexits(.param .u64 OUT)
{
    .reg .u32 %t, %v;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    setp.lt.u32 %p, %t, 8;
@%p bra STAY;
    st.global.u32 [%po], 77;         // @leaving
    exit;                            // @exit
STAY:
    mov.u32 %v, 5;
    st.global.u32 [%po], %v;         // @staying
}
"#;

#[test]
fn an_arm_that_exits_does_not_block_the_other() {
    let out = run_kernel(ARM_EXITS, 1, 32, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32).map(|t| if t < 8 { 5 } else { 77 }).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@leaving"), global(1, 24, 3));
    assert_eq!(out.stats("@exit"), counts(1, 24));
    assert_eq!(out.stats("@staying"), global(1, 8, 1));
}

// Guarded instructions with partial masks: threads counts only lanes whose guard is true.
const GUARDS: &str = r#"
.kernel guards(.param .u64 OUT)
{
    .reg .u32 %t, %v;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    mov.u32 %v, 1;
    setp.lt.u32 %p, %t, 5;
@%p add.u32 %v, %v, 100;             // @g_true
@!%p mul.lo.u32 %v, %v, 7;           // @g_false
@%p st.global.u32 [%po], %v;         // @g_store_true
@!%p st.global.u32 [%po], %t;        // @g_store_false
    setp.gt.u32 %p, %t, 100;
@%p st.global.u32 [%po], 0;          // @g_never
}
"#;

#[test]
fn guarded_instructions_with_partial_masks() {
    let out = run_kernel(GUARDS, 1, 64, &[Arg::zeros(64)]).ok();
    let want: Vec<u32> = (0..64).map(|t| if t < 5 { 101 } else { t }).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@g_true"), counts(2, 5));
    assert_eq!(out.stats("@g_false"), counts(2, 59));
    // Lanes 0..5 write 20 contiguous bytes: one sector; warp 1 issues with no
    // lane, so it sends no request to memory.
    assert_eq!(
        out.stats("@g_store_true"),
        InstrStats {
            global_requests: 1,
            ..global(2, 5, 1)
        }
    );
    assert_eq!(out.stats("@g_store_false"), global(2, 59, 8));
    // A guard false in every lane still counts as an issue, but not as a request.
    assert_eq!(
        out.stats("@g_never"),
        InstrStats {
            global_requests: 0,
            ..global(2, 0, 0)
        }
    );
}

// Intra-warp forward progress (independent thread scheduling): lane 0 spins on a
// global flag that lanes 1..31, on the other side of a branch, set. Here the
// spinning lanes take the branch (the side the machine runs first).
const SPIN_TAKEN: &str = r#"
.kernel spintaken(.param .u64 FLAG)
{
    .reg .u32 %t, %f;
    .reg .u64 %pf;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pf, [FLAG];
    setp.eq.u32 %p, %t, 0;
@%p bra SPIN;
    st.global.u32 [%pf], 1;
    bra DONE;
SPIN:
    ld.volatile.global.u32 %f, [%pf];
    setp.eq.u32 %q, %f, 0;
@%q bra SPIN;
    st.global.u32 [%pf+4], 2;
DONE:
    exit;
}
"#;

// The same with the spinning lane on the fall-through side.
const SPIN_FALLTHROUGH: &str = r#"
.kernel spinfall(.param .u64 FLAG)
{
    .reg .u32 %t, %f;
    .reg .u64 %pf;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pf, [FLAG];
    setp.ne.u32 %p, %t, 0;
@%p bra SETTER;
SPIN:
    ld.volatile.global.u32 %f, [%pf];
    setp.eq.u32 %q, %f, 0;
@%q bra SPIN;
    st.global.u32 [%pf+4], 2;
    bra DONE;
SETTER:
    st.global.u32 [%pf], 1;
DONE:
    exit;
}
"#;

#[test]
fn a_spinning_fall_through_path_lets_its_sibling_run() {
    let out = kernel(SPIN_FALLTHROUGH)
        .threads(32)
        .arg(Arg::zeros(2))
        .limit(100_000)
        .run()
        .ok();
    assert_eq!(out.u32s(0), vec![1, 2]);
}

#[test]
fn a_spinning_taken_path_does_not_starve_its_sibling() {
    let out = kernel(SPIN_TAKEN)
        .threads(32)
        .arg(Arg::zeros(2))
        .limit(100_000)
        .run();
    assert_eq!(out.error(), None);
    assert_eq!(out.u32s(0), vec![1, 2]);
}

// Warp 0 spins on a global flag that warp 1 sets: warps take turns (a quantum of
// 512 instructions), so the spinning warp does not starve the other.
const SPIN_ACROSS_WARPS: &str = r#"
.kernel spinwarps(.param .u64 FLAG)
{
    .reg .u32 %t, %f;
    .reg .u64 %pf;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pf, [FLAG];
    setp.ge.u32 %p, %t, 32;
@%p bra SETTER;
SPIN:
    ld.volatile.global.u32 %f, [%pf];    // @spin_load
    setp.eq.u32 %q, %f, 0;
@%q bra SPIN;
    st.global.u32 [%pf+4], %f;           // @after
    exit;
SETTER:
    st.global.u32 [%pf], 7;              // @set
}
"#;

#[test]
fn a_spinning_warp_does_not_starve_another_warp() {
    let out = kernel(SPIN_ACROSS_WARPS)
        .threads(64)
        .arg(Arg::zeros(2))
        .run()
        .ok();
    assert_eq!(out.u32s(0), vec![7, 7]);
    // The warps run side by side on two sub-partitions. Warp 0 loads the
    // flag before warp 1's store (which comes after warp 1's branch), waits
    // for DRAM, and its second load, issued long after the store, sees 7.
    assert_eq!(out.executed("@spin_load"), 2);
    assert_eq!(out.stats("@set"), global(1, 32, 1));
    assert_eq!(out.stats("@after"), global(1, 32, 1));
}

// A branch to a label after the last instruction: running off the end exits.
const BRANCH_TO_END: &str = r#"
.kernel toend(.param .u64 OUT)
{
    .reg .u32 %t;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    setp.lt.u32 %p, %t, 10;
@%p bra END;                             // @branch
    st.global.u32 [%po], %t;             // @store
END:
}
"#;

#[test]
fn a_branch_to_the_end_of_the_kernel_exits() {
    let out = run_kernel(BRANCH_TO_END, 1, 32, &[Arg::u32s(&[99; 32])]).ok();
    let want: Vec<u32> = (0..32).map(|t| if t < 10 { 99 } else { t }).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@branch"), counts(1, 10));
    assert_eq!(out.stats("@store"), global(1, 22, 3));
    // The implicit exit after the last instruction runs for both paths.
    let exit = out.program.code.len() - 1;
    assert_eq!(
        out.outcome.stats.per_instruction[exit].counters(),
        counts(2, 32)
    );
}

// if (lane < 16) { if (lane == 3) return; } JOIN: one shared store per warp.
// The early return must not keep the two sides of the outer `if` apart.
const EARLY_RETURN: &str = r#"
.kernel earlyReturn(.param .u64 out)
{
    .shared .align 4 .u32 cell[32];
    .reg .u32 %l, %base;
    .reg .u64 %out, %offset;
    .reg .pred %outer, %inner;
    ld.param.u64 %out, [out];
    mov.u32 %l, %laneid;
    setp.ge.u32 %outer, %l, 16;
@%outer bra JOIN;
    setp.eq.u32 %inner, %l, 3;
@%inner bra OUT;
    add.u32 %l, %l, 0;
JOIN:
    mov.u32 %base, cell;
    mad.lo.u32 %base, %l, 4, %base;
    st.shared.u32 [%base], %l;          // @store
    mul.wide.u32 %offset, %l, 4;
    add.s64 %out, %out, %offset;
    st.global.u32 [%out], 1;
    exit;
OUT:
    exit;
}
"#;

#[test]
fn an_early_return_still_lets_the_other_lanes_reconverge() {
    let out = run_kernel(EARLY_RETURN, 1, 64, &[Arg::zeros(32)]).ok();
    // Two warps: the store issues once per warp, with 31 lanes in each.
    assert_eq!(out.executed("@store"), 2);
    assert_eq!(out.threads("@store"), 62);
    assert_eq!(out.stats("@store").wavefronts, 2);
    let mut want = vec![1u32; 32];
    want[3] = 0;
    assert_eq!(out.u32s(0), want);
}

// Lane l loops l % 4 + 1 times; a guarded exit that is never taken sits in
// the loop. The store after the loop must still issue once per warp.
const LOOP_WITH_GUARDED_EXIT: &str = r#"
.kernel loopExit(.param .u64 out)
{
    .shared .align 4 .u32 cell[32];
    .reg .u32 %l, %trips, %i, %base;
    .reg .pred %again, %never;
    mov.u32 %l, %laneid;
    and.b32 %trips, %l, 3;
    add.u32 %trips, %trips, 1;
    setp.gt.u32 %never, %l, 100;
    mov.u32 %i, 0;
LOOP:
@%never exit;
    add.u32 %i, %i, 1;
    setp.lt.u32 %again, %i, %trips;
@%again bra LOOP;
    mov.u32 %base, cell;
    mad.lo.u32 %base, %l, 4, %base;
    st.shared.u32 [%base], %i;          // @store
    exit;
}
"#;

#[test]
fn a_guarded_exit_in_a_divergent_loop_does_not_split_the_code_after_it() {
    let out = run_kernel(LOOP_WITH_GUARDED_EXIT, 1, 32, &[Arg::zeros(1)]).ok();
    assert_eq!(out.executed("@store"), 1);
    assert_eq!(out.threads("@store"), 32);
    assert_eq!(out.stats("@store").wavefronts, 1);
}
