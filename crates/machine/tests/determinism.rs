//! Determinism: the same launch on 1, 2 and 4 host threads (and on the
//! default pool) gives identical output buffers and identical `RunStats`;
//! when several blocks fault, the fault of the lowest block is reported,
//! whatever the number of host threads and whichever block finished first.

mod common;
use common::*;
use warpsim_ir::StateSpace;
use warpsim_machine::memory::buffer_base;
use warpsim_machine::FaultKind;

// Per block of 128 threads over a 2-D grid: a transpose-like shared exchange with
// bank conflicts, a divergent loop and a reduction with barriers. No atomics
// (the ticket test below has them).
const MIXED: &str = r#"
.kernel mixed(.param .u64 IN, .param .u64 OUT, .param .u64 SUMS, .param .u64 COUNT)
{
    .shared .align 4 .u32 tile[4096];
    .shared .align 4 .u32 red[128];
    .reg .u32 %t, %bx, %by, %gx, %blk, %g, %v, %w, %a, %s, %i, %n, %acc, %base, %rbase;
    .reg .u64 %pi, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %bx, %ctaid.x;
    mov.u32 %by, %ctaid.y;
    mov.u32 %gx, %nctaid.x;
    mad.lo.u32 %blk, %by, %gx, %bx;
    mad.lo.u32 %g, %blk, 128, %t;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %g, 4;
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];
    // tile[t * 32] = v: 32-way conflicts; then read back transposed.
    mov.u32 %base, tile;
    mul.lo.u32 %a, %t, 128;
    add.u32 %a, %a, %base;
    st.shared.u32 [%a], %v;
    bar.sync 0;
    sub.u32 %s, 127, %t;
    mul.lo.u32 %a, %s, 128;
    add.u32 %a, %a, %base;
    ld.shared.u32 %w, [%a];
    // A loop of (v mod 7) + 1 iterations.
    rem.u32 %n, %v, 7;
    mov.u32 %i, 0;
    mov.u32 %acc, 0;
LOOP:
    mad.lo.u32 %acc, %acc, 3, %w;
    add.u32 %i, %i, 1;
    setp.le.u32 %p, %i, %n;
@%p bra LOOP;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %acc;
    // Block sum of v by a tree reduction.
    mov.u32 %rbase, red;
    mad.lo.u32 %a, %t, 4, %rbase;
    st.shared.u32 [%a], %v;
    bar.sync 0;
    mov.u32 %s, 64;
RLOOP:
    setp.ge.u32 %p, %t, %s;
@%p bra RSKIP;
    add.u32 %i, %t, %s;
    mad.lo.u32 %i, %i, 4, %rbase;
    ld.shared.u32 %w, [%i];
    ld.shared.u32 %v, [%a];
    add.u32 %v, %v, %w;
    st.shared.u32 [%a], %v;
RSKIP:
    bar.sync 0;
    shr.u32 %s, %s, 1;
    setp.ne.u32 %p, %s, 0;
@%p bra RLOOP;
    setp.ne.u32 %p, %t, 0;
@%p exit;
    ld.shared.u32 %v, [red];
    ld.param.u64 %po, [SUMS];
    mul.wide.u32 %off, %blk, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

/// Asserts that `other` left the buffers in `buffers` and the counters as
/// `reference` did (`context` says which run `other` is).
fn assert_same_run(
    other: &Outcome,
    reference: &Outcome,
    buffers: std::ops::Range<usize>,
    context: &str,
) {
    for buffer in buffers {
        assert_eq!(
            other.bytes(buffer),
            reference.bytes(buffer),
            "buffer {buffer}, {context}"
        );
    }
    assert_eq!(
        other.outcome.stats, reference.outcome.stats,
        "counters, {context}"
    );
}

#[test]
fn host_thread_count_does_not_change_results_or_counters() {
    let blocks: u32 = 4 * 5;
    let input: Vec<u32> = (0..blocks * 128)
        .map(|i: u32| i.wrapping_mul(2654435761) >> 7)
        .collect();
    let launch = |host_threads| {
        kernel(MIXED)
            .grid([4, 5, 1])
            .threads(128)
            .args(&[
                Arg::u32s(&input),
                Arg::zeros(blocks as usize * 128),
                Arg::zeros(blocks as usize),
                Arg::zeros(1),
            ])
            .host_threads(host_threads)
            .run()
            .ok()
    };
    let reference = launch(1);
    // The results are right, not only repeatable.
    let sums = reference.u32s(2);
    for block in 0..blocks as usize {
        let want: u32 = input[block * 128..block * 128 + 128]
            .iter()
            .fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(sums[block], want, "block {block}");
    }
    assert!(!reference.program.communicates_across_blocks);
    let outputs = reference.u32s(1);
    for g in 0..(blocks * 128) as usize {
        let (block, t) = (g / 128, g % 128);
        let w = input[block * 128 + 127 - t];
        let n = input[g] % 7;
        let acc = (0..=n).fold(0u32, |acc, _| acc.wrapping_mul(3).wrapping_add(w));
        assert_eq!(outputs[g], acc, "thread {g}");
    }
    assert_eq!(reference.outcome.stats.blocks_run, u64::from(blocks));
    for host_threads in [2, 4, 0] {
        let other = launch(host_threads);
        assert_same_run(
            &other,
            &reference,
            0..4,
            &format!("{host_threads} host threads"),
        );
        assert_eq!(other.outcome.failed_blocks, 0);
    }
}

// Blocks 3 and up store out of bounds, each at a different lane; blocks 0..3 are fine.
const SEVERAL_FAULTS: &str = r#"
.kernel faults(.param .u64 OUT)
{
    .reg .u32 %t, %b, %i, %bad;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %b, %ctaid.x;
    mad.lo.u32 %i, %b, 64, %t;
    setp.ge.u32 %p, %b, 3;
@!%p bra STORE;
    // Lane (b - 3) of warp 1 and every later lane of the block address far past the end.
    sub.u32 %bad, %b, 3;
    add.u32 %bad, %bad, 32;
    setp.ge.u32 %p, %t, %bad;
@%p add.u32 %i, %i, 100000;
STORE:
    mul.wide.u32 %off, %i, 4;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %t;                         // @store
}
"#;

#[test]
fn the_lowest_faulting_block_is_reported_whatever_the_host_threads() {
    let blocks = 12u32;
    let mut reference = None;
    for host_threads in [1, 2, 4, 0] {
        let out = kernel(SEVERAL_FAULTS)
            .grid([blocks, 1, 1])
            .threads(64)
            .arg(Arg::zeros(blocks as usize * 64))
            .host_threads(host_threads)
            .run();
        // Block 3: thread 32 (warp 1, lane 0) stores at index 3 * 64 + 32 + 100000.
        let index = 3 * 64 + 32 + 100_000u64;
        assert_site(
            out.fault(),
            FaultKind::OutOfBounds {
                space: StateSpace::Global,
                address: buffer_base(0) + index * 4,
                size: 4,
                store: true,
                place: Some(place("OUT", index * 4, u64::from(blocks) * 64 * 4)),
            },
            [3, 0, 0],
            out.pc("@store"),
            1,
            0,
            [32, 0, 0],
        );
        assert_eq!(out.outcome.failed_blocks, u64::from(blocks - 3));
        assert_eq!(out.outcome.stats.blocks_run, u64::from(blocks));
        let snapshot = (out.bytes(0), out.outcome.stats.clone());
        match &reference {
            None => reference = Some(snapshot),
            Some(reference) => {
                assert_eq!(&snapshot, reference, "{host_threads} host threads")
            }
        }
    }
}

// Every block spins until the instruction limit: the limit is per block, so
// every block stops at the same point and the report is the same.
const RUNAWAY: &str = r#"
.kernel runaway()
{
    .reg .u32 %i;
    mov.u32 %i, 0;
LOOP:
    add.u32 %i, %i, 1;
    bra LOOP;                                        // @back
}
"#;

#[test]
fn a_fault_ends_the_kernel_at_the_end_of_its_time_window() {
    // The 6 blocks are resident at once, one per SM, and run the same loop
    // in step: each reaches its limit of 1,000 instructions (the 1,001st
    // issue faults) in the same time window, which ends the launch. The
    // reported fault is block 0's, as on every host.
    for host_threads in [1, 2] {
        let out = kernel(RUNAWAY)
            .grid([3, 2, 1])
            .threads(64)
            .limit(1000)
            .host_threads(host_threads)
            .run();
        assert_eq!(out.fault().block, [0, 0, 0]);
        assert_eq!(out.outcome.failed_blocks, 6);
        assert_eq!(out.outcome.stats.blocks_run, 6);
        assert_eq!(out.outcome.stats.warp_instructions(), 6 * 1001);
    }
}

#[test]
fn instruction_limits_are_per_block_and_deterministic() {
    let limit = 1000;
    let mut reference = None;
    for host_threads in [1, 2] {
        let out = kernel(RUNAWAY)
            .grid([3, 2, 1])
            .threads(64)
            .limit(limit)
            .host_threads(host_threads)
            .keep_going()
            .run();
        let error = out.fault();
        assert_eq!(error.kind, FaultKind::InstructionLimit { limit });
        assert_eq!(error.block, [0, 0, 0]);
        assert_eq!(out.outcome.failed_blocks, 6);
        // Each block ran limit + 1 warp instructions, the refused one counted.
        assert_eq!(out.outcome.stats.warp_instructions(), 6 * (limit + 1));
        let snapshot = (error.clone(), out.outcome.stats.clone());
        match &reference {
            None => reference = Some(snapshot),
            Some(reference) => assert_eq!(&snapshot, reference),
        }
    }
}

// A work counter shared by blocks: thread 0 of each block takes a ticket with
// atom.add and writes its block index at out[ticket] (stream compaction, work queues).
const TICKETS: &str = r#"
.kernel tickets(.param .u64 COUNTER, .param .u64 OUT)
{
    .reg .u32 %t, %b, %ticket;
    .reg .u64 %pc, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ne.u32 %p, %t, 0;
@%p exit;
    mov.u32 %b, %ctaid.x;
    ld.param.u64 %pc, [COUNTER];
    atom.global.add.u32 %ticket, [%pc], 1;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %ticket, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %b;
}
"#;

#[test]
fn cross_block_atomics_are_deterministic_whatever_the_host_threads() {
    let blocks = 256u32;
    let launch_with = |host_threads, config: warpsim_machine::MachineConfig| {
        kernel(TICKETS)
            .grid([blocks, 1, 1])
            .threads(32)
            .args(&[Arg::zeros(1), Arg::zeros(blocks as usize)])
            .host_threads(host_threads)
            .config(config)
            .run()
            .ok()
            .u32s(1)
    };
    let launch = |host_threads| launch_with(host_threads, warpsim_machine::MachineConfig::hopper());
    let reference = launch(1);
    // The first 132 blocks go one to an SM, the next 124 to a second slot of
    // SMs 0-123 (the scheduler spreads a launch breadth first). Within a
    // time window the SMs' atomics meet memory in SM order at the window's
    // end, and on an SM the first block's in slot order: SM by SM, each
    // SM's blocks take their tickets in slot order.
    let sms = 132u32;
    let expected: Vec<u32> = (0..sms)
        .flat_map(|sm| [sm, sm + sms].into_iter().filter(|&block| block < blocks))
        .collect();
    assert_eq!(reference, expected);
    for _ in 0..5 {
        assert_eq!(launch(2), reference);
        assert_eq!(launch(4), reference);
    }
    // A machine whose atomics take less than a window: the tickets still
    // wait for the window's end, when they are known.
    let mut quick = warpsim_machine::MachineConfig::hopper();
    quick.timing.atomic_latency = 10;
    assert_eq!(launch_with(1, quick.clone()), reference);
    assert_eq!(launch_with(3, quick), reference);
}

// An atomic's old value lands when the window ends, long after it issued.
// On the odd lanes' path (the branch taken, which runs first) it is dead
// from the branch on, so a register written there could share its
// storage; that register is read again after a load from DRAM, past the
// window's end.
const LATE_RESULT: &str = r#"
.kernel late(.param .u64 COUNTER, .param .u64 OUT)
{
    .reg .u32 %t, %old, %odd, %y, %w;
    .reg .u64 %pc, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pc, [COUNTER];
    atom.global.add.u32 %old, [%pc], 1;
    and.b32 %odd, %t, 1;
    setp.ne.u32 %p, %odd, 0;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
@%p bra ODD;
    st.global.u32 [%po], %old;
    exit;
ODD:
    mul.lo.u32 %y, %t, 3;
    ld.global.u32 %w, [%po];
    add.u32 %y, %y, %w;
    st.global.u32 [%po], %y;
}
"#;

#[test]
fn an_atomics_old_value_lands_at_the_windows_end_and_nowhere_else() {
    let out = kernel(LATE_RESULT)
        .threads(32)
        .args(&[Arg::zeros(1), Arg::zeros(32)])
        .run()
        .ok();
    // The lanes take the counter's values in lane order; the odd lanes
    // keep 3t, which a late old value would have overwritten.
    let expected: Vec<u32> = (0..32)
        .map(|t| if t % 2 == 0 { t } else { 3 * t })
        .collect();
    assert_eq!(out.u32s(1), expected);
    assert_eq!(out.u32s(0), [32]);
}

// Reductions between blocks: a float sum (whose rounding depends on the
// order the additions land in), an `atom` whose old value no instruction
// reads (ptxas makes it a `RED`), a maximum, and per-block counters each
// block reads back after its own reductions. No thread learns from a
// reduction what another block did, so the SMs run side by side and the
// reductions land at the windows' ends, in SM order.
const REDUCTIONS: &str = r#"
.kernel reductions(.param .u64 IN, .param .u64 TOTALS, .param .u64 COUNTS, .param .u64 SEEN)
{
    .reg .u32 %t, %b, %g, %dead, %v;
    .reg .f32 %x;
    .reg .u64 %pi, %pt, %pc, %ps, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %b, %ctaid.x;
    mad.lo.u32 %g, %b, 64, %t;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %g, 4;
    add.u64 %pi, %pi, %off;
    ld.global.f32 %x, [%pi];
    ld.param.u64 %pt, [TOTALS];
    red.global.add.f32 [%pt], %x;
    atom.global.add.u32 %dead, [%pt+4], %g;
    red.global.max.u32 [%pt+8], %g;
    ld.param.u64 %pc, [COUNTS];
    mul.wide.u32 %off, %b, 4;
    add.u64 %pc, %pc, %off;
    red.global.add.u32 [%pc], 1;
    bar.sync 0;
    setp.ne.u32 %p, %t, 0;
@%p exit;
    ld.global.u32 %v, [%pc];
    ld.param.u64 %ps, [SEEN];
    add.u64 %ps, %ps, %off;
    st.global.u32 [%ps], %v;
}
"#;

#[test]
fn reductions_between_blocks_run_side_by_side_and_land_the_same_on_every_host() {
    let blocks = 300u32;
    let threads = blocks * 64;
    let input: Vec<f32> = (0..threads)
        .map(|i| ((i.wrapping_mul(2654435761) >> 8) % 1000) as f32 / 7.0)
        .collect();
    let launch = |host_threads| {
        kernel(REDUCTIONS)
            .grid([blocks, 1, 1])
            .threads(64)
            .args(&[
                Arg::f32s(&input),
                Arg::zeros(3),
                Arg::zeros(blocks as usize),
                Arg::zeros(blocks as usize),
            ])
            .host_threads(host_threads)
            .run()
            .ok()
    };
    let reference = launch(1);
    assert!(!reference.program.communicates_across_blocks);
    let totals = reference.u32s(1);
    assert_eq!(totals[1], (0..threads).fold(0u32, u32::wrapping_add));
    assert_eq!(totals[2], threads - 1);
    let float_sum = f32::from_bits(totals[0]);
    let exact: f64 = input.iter().map(|&x| f64::from(x)).sum();
    assert!(
        (f64::from(float_sum) - exact).abs() < exact * 1e-4,
        "{float_sum} {exact}"
    );
    // Every block's 64 reductions, and each block saw its own at once.
    assert_eq!(reference.u32s(2), vec![64; blocks as usize]);
    assert_eq!(reference.u32s(3), vec![64; blocks as usize]);
    for host_threads in [2, 4, 2, 4] {
        assert_same_run(
            &launch(host_threads),
            &reference,
            1..4,
            &format!("{host_threads} host threads"),
        );
    }
    // An atomic whose old value is read does communicate.
    let tickets = kernel(TICKETS)
        .grid([2, 1, 1])
        .threads(32)
        .args(&[Arg::zeros(1), Arg::zeros(2)])
        .run()
        .ok();
    assert!(tickets.program.communicates_across_blocks);
}

// Blocks racing on plain global stores: every thread adds its block's
// number to one of 8 counters with a load and a store (the read-modify-write
// that should have been an atomic), and copies a counter it reads back into
// its own slot. Which updates are lost depends on how the blocks interleave,
// which must come from simulated time, not from the host's threads.
const RACY: &str = r#"
.kernel racy(.param .u64 COUNTERS, .param .u64 SEEN)
{
    .reg .u32 %t, %b, %slot, %v, %g, %i;
    .reg .u64 %pc, %ps, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %b, %ctaid.x;
    and.b32 %slot, %t, 7;
    ld.param.u64 %pc, [COUNTERS];
    mul.wide.u32 %off, %slot, 4;
    add.u64 %pc, %pc, %off;
    mov.u32 %i, 0;
LOOP:
    ld.global.u32 %v, [%pc];
    add.u32 %v, %v, %b;
    add.u32 %v, %v, 1;
    st.global.u32 [%pc], %v;
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, 6;
@%p bra LOOP;
    ld.global.u32 %v, [%pc];
    mad.lo.u32 %g, %b, 64, %t;
    ld.param.u64 %ps, [SEEN];
    mul.wide.u32 %off, %g, 4;
    add.u64 %ps, %ps, %off;
    st.global.u32 [%ps], %v;
}
"#;

#[test]
fn blocks_racing_on_plain_stores_give_the_same_outputs_on_every_host() {
    let blocks = 400u32;
    let launch = |host_threads| {
        kernel(RACY)
            .grid([blocks, 1, 1])
            .threads(64)
            .args(&[Arg::zeros(8), Arg::zeros(blocks as usize * 64)])
            .host_threads(host_threads)
            .run()
            .ok()
    };
    let reference = launch(1);
    assert!(!reference.program.communicates_across_blocks);
    // The race is real: updates were lost, so the counters are not the
    // sums an atomic would give.
    let counters = reference.u32s(0);
    let atomic_sum: u32 = (1..=blocks).sum::<u32>() * 8 * 6;
    assert!(counters.iter().all(|&counter| counter < atomic_sum));
    for run in 0..6 {
        for host_threads in [1, 2, 3] {
            assert_same_run(
                &launch(host_threads),
                &reference,
                0..2,
                &format!("run {run} with {host_threads} host threads"),
            );
        }
    }
}
