//! Block barriers (reference/barriers.md): `bar.sync 0` ordering a shared
//! memory exchange between warps, barriers in divergent code with Volta
//! per-thread arrival (ifElseSync, warpEarlyExit, condSync), exits that
//! complete a barrier, named barriers with thread counts, `bar.arrive`
//! producer/consumer, `bar.red.popc/and/or`, true deadlocks with exact warp
//! and barrier positions, and spinDeadlock ending at the instruction limit.

mod common;
use common::*;
use warpsim_machine::error::{PathPosition, Waiting, WarpPosition};
use warpsim_machine::{BarrierSemantics, FaultKind, FindingKind, MachineConfig, Severity};

// __syncthreads orders a shared-memory exchange between 4 warps: out[t] = sh[127 - t].
const EXCHANGE: &str = r#"
.kernel exchange(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[128];
    .reg .u32 %t, %v, %base, %a, %other;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    mov.u32 %base, sh;
    mad.lo.u32 %a, %t, 4, %base;
    mul.lo.u32 %v, %t, %t;
    add.u32 %v, %v, 1;
    st.shared.u32 [%a], %v;          // @write
    bar.sync 0;                      // @sync
    sub.u32 %other, 127, %t;
    mad.lo.u32 %a, %other, 4, %base;
    ld.shared.u32 %v, [%a];          // @read
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn syncthreads_orders_a_shared_exchange_between_warps() {
    let out = run_kernel(EXCHANGE, 1, 128, &[Arg::zeros(128)]).ok();
    let want: Vec<u32> = (0..128).map(|t| (127 - t) * (127 - t) + 1).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(4, 128));
    assert_eq!(out.stats("@write"), shared(4, 128, 4, 4));
    assert_eq!(out.stats("@read"), shared(4, 128, 4, 4));
}

// A tree reduction with bar.sync inside a loop: the same barrier completes 1 + log2(256) times.
const REDUCE: &str = r#"
.kernel reduce(.param .u64 IN, .param .u64 OUT)
{
    .shared .align 4 .u32 sh[256];
    .reg .u32 %t, %s, %v, %w, %base, %mine, %other;
    .reg .u64 %pi, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %base, sh;
    mad.lo.u32 %mine, %t, 4, %base;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];
    st.shared.u32 [%mine], %v;
    bar.sync 0;                      // @first_sync
    mov.u32 %s, 128;
LOOP:
    setp.ge.u32 %p, %t, %s;
@%p bra SKIP;
    add.u32 %other, %t, %s;
    mad.lo.u32 %other, %other, 4, %base;
    ld.shared.u32 %w, [%other];
    ld.shared.u32 %v, [%mine];
    add.u32 %v, %v, %w;
    st.shared.u32 [%mine], %v;       // @accumulate
SKIP:
    bar.sync 0;                      // @loop_sync
    shr.u32 %s, %s, 1;
    setp.ne.u32 %p, %s, 0;
@%p bra LOOP;
    setp.ne.u32 %p, %t, 0;
@%p exit;
    ld.shared.u32 %v, [sh];
    ld.param.u64 %po, [OUT];
    st.global.u32 [%po], %v;         // @result
}
"#;

#[test]
fn barrier_in_a_loop_completes_every_round() {
    let input: Vec<u32> = (0..256).map(|i| i * 7 + 3).collect();
    let out = run_kernel(REDUCE, 1, 256, &[Arg::u32s(&input), Arg::zeros(1)]).ok();
    assert_eq!(out.u32s(1), vec![input.iter().sum::<u32>()]);
    assert_eq!(out.stats("@first_sync"), counts(8, 256));
    // 8 rounds (s = 128 .. 1), 8 warps each.
    assert_eq!(out.stats("@loop_sync"), counts(64, 2048));
    // Warps with some t < s: 4, 2, then 1 for the six last rounds.
    assert_eq!(out.stats("@accumulate"), shared(12, 255, 12, 12));
    assert_eq!(out.stats("@result"), global(1, 1, 1));
}

// ifElseSync (seed 003): __syncthreads() in both arms of if (tid % 2 == 0), 128 threads.
const IF_ELSE_SYNC: &str = r#"
.kernel ifElseSync(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[128];
    .reg .u32 %t, %m, %v, %base, %a;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %base, sh;
    and.b32 %m, %t, 1;
    setp.ne.u32 %p, %m, 0;
@%p bra ODD;
    add.u32 %v, %t, 1000;
    mad.lo.u32 %a, %t, 4, %base;
    st.shared.u32 [%a], %v;
    bar.sync 0;                      // @even_sync
    add.u32 %a, %a, 4;
    ld.shared.u32 %v, [%a];          // @even_read
    bra JOIN;
ODD:
    add.u32 %v, %t, 2000;
    mad.lo.u32 %a, %t, 4, %base;
    st.shared.u32 [%a], %v;
    bar.sync 0;                      // @odd_sync
    sub.u32 %a, %a, 4;
    ld.shared.u32 %v, [%a];          // @odd_read
JOIN:
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;         // @join
}
"#;

#[test]
fn if_else_sync_completes_with_volta_per_thread_arrival() {
    let out = run_kernel(IF_ELSE_SYNC, 1, 128, &[Arg::zeros(128)]).ok();
    // Each thread reads its neighbour's value, written before the neighbour's barrier.
    let want: Vec<u32> = (0..128)
        .map(|t| {
            if t % 2 == 0 {
                t + 1 + 2000
            } else {
                t - 1 + 1000
            }
        })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@even_sync"), counts(4, 64));
    assert_eq!(out.stats("@odd_sync"), counts(4, 64));
    assert_eq!(out.stats("@join"), global(4, 128, 16));
}

// warpEarlyExit: if (tid >= 64) return; __syncthreads(); then an exchange among the 64 left.
const WARP_EARLY_EXIT: &str = r#"
.kernel warpEarlyExit(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[64];
    .reg .u32 %t, %v, %base, %a, %other;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ge.u32 %p, %t, 64;
@%p exit;
    mov.u32 %base, sh;
    mad.lo.u32 %a, %t, 4, %base;
    st.shared.u32 [%a], %t;
    bar.sync 0;                      // @sync
    sub.u32 %other, 63, %t;
    mad.lo.u32 %a, %other, 4, %base;
    ld.shared.u32 %v, [%a];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;         // @store
}
"#;

#[test]
fn warp_early_exit_does_not_block_the_barrier() {
    let out = run_kernel(WARP_EARLY_EXIT, 1, 128, &[Arg::u32s(&[0xffff_ffff; 128])]).ok();
    let want: Vec<u32> = (0..128)
        .map(|t| if t < 64 { 63 - t } else { 0xffff_ffff })
        .collect();
    assert_eq!(out.u32s(0), want);
    // Warps 0 and 1 arrive first; the barrier completes when warps 2 and 3 exit.
    assert_eq!(out.stats("@sync"), counts(2, 64));
    assert_eq!(out.stats("@store"), global(2, 64, 8));
}

// Odd lanes of every warp exit before the barrier: exits inside a warp count too.
const ODD_LANES_EXIT: &str = r#"
.kernel oddexit(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[128];
    .reg .u32 %t, %m, %v, %base, %a, %other;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    and.b32 %m, %t, 1;
    setp.eq.u32 %p, %m, 1;
@%p exit;
    mov.u32 %base, sh;
    mad.lo.u32 %a, %t, 4, %base;
    st.shared.u32 [%a], %t;
    bar.sync 0;                      // @sync
    sub.u32 %other, 126, %t;
    mad.lo.u32 %a, %other, 4, %base;
    ld.shared.u32 %v, [%a];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn lanes_that_exited_are_not_expected_at_the_barrier() {
    let out = run_kernel(ODD_LANES_EXIT, 1, 128, &[Arg::u32s(&[7; 128])]).ok();
    let want: Vec<u32> = (0..128)
        .map(|t| if t % 2 == 0 { 126 - t } else { 7 })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(4, 64));
}

// condSync: if (tid < 64) __syncthreads(); then a store by everyone, no exit before it.
const COND_SYNC: &str = r#"
.kernel condSync(.param .u64 OUT)
{
    .reg .u32 %t, %v;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ge.u32 %p, %t, 64;
@%p bra AFTER;
    bar.sync 0;                      // @sync
AFTER:
    mul.lo.u32 %v, %t, 2;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;         // @store
}
"#;

#[test]
fn cond_sync_completes_when_the_others_exit() {
    let out = run_kernel(COND_SYNC, 1, 128, &[Arg::zeros(128)]).ok();
    let want: Vec<u32> = (0..128).map(|t| t * 2).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(2, 64));
    assert_eq!(out.stats("@store"), global(4, 128, 16));
}

// A guarded bar.sync: only lanes whose guard holds arrive, the others pass by.
const GUARDED_SYNC: &str = r#"
.kernel guardedsync(.param .u64 OUT)
{
    .reg .u32 %t, %v;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.lt.u32 %p, %t, 16;
@%p bar.sync 0;                      // @sync
    mul.lo.u32 %v, %t, 3;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;         // @store
}
"#;

#[test]
fn a_guarded_barrier_waits_for_the_others_to_exit() {
    let out = run_kernel(GUARDED_SYNC, 1, 64, &[Arg::zeros(64)]).ok();
    let want: Vec<u32> = (0..64).map(|t| t * 3).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(2, 16));
    // Lanes 16..31 of warp 0 store before lanes 0..15 (which wait for every
    // other thread to exit): warp 0 issues the store twice.
    assert_eq!(out.stats("@store"), global(3, 64, 8));
}

// A true deadlock: warp 0 waits at barrier 0, warp 1 at barrier 1.
const TWO_BARRIERS: &str = r#"
.kernel twobarriers()
{
    .reg .u32 %t;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ge.u32 %p, %t, 32;
@%p bra W1;
    bar.sync 0;                      // @bar0
    exit;
W1:
    bar.sync 1;                      // @bar1
    exit;
}
"#;

#[test]
fn warps_waiting_at_different_barriers_deadlock() {
    let out = run_kernel(TWO_BARRIERS, 1, 64, &[]);
    let error = out.fault();
    assert_eq!(error.kind, FaultKind::Deadlock);
    assert_eq!(error.block, [0, 0, 0]);
    assert_eq!(error.site, None);
    assert_eq!(
        error.warps,
        vec![
            warp_at(0, 0, out.pc("@bar0"), u32::MAX, Waiting::Barrier(0)),
            warp_at(1, 0, out.pc("@bar1"), u32::MAX, Waiting::Barrier(1)),
        ]
    );
    assert_eq!(
        error.barriers,
        vec![barrier_at(0, 32, 64), barrier_at(1, 32, 64)]
    );
    assert_eq!(out.outcome.failed_blocks, 1);
    assert_eq!(out.outcome.stats.blocks_run, 1);
}

// Inside one warp, lanes 0..15 wait at barrier 0 and lanes 16..31 at barrier 1.
const SPLIT_WARP_BARRIERS: &str = r#"
.kernel splitwarp()
{
    .reg .u32 %t;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ge.u32 %p, %t, 16;
@%p bra HIGH;
    bar.sync 0;                      // @low
    bra JOIN;
HIGH:
    bar.sync 1;                      // @high
JOIN:
    add.u32 %t, %t, 1;               // @join
}
"#;

#[test]
fn lanes_of_one_warp_at_different_barriers_deadlock() {
    let out = run_kernel(SPLIT_WARP_BARRIERS, 1, 32, &[]);
    let error = out.fault();
    assert_eq!(error.kind, FaultKind::Deadlock);
    assert_eq!(
        error.warps,
        vec![WarpPosition {
            warp: 0,
            exited: 0,
            paths: vec![
                PathPosition {
                    pc: out.pc("@join"),
                    lanes: u32::MAX,
                    waiting: Waiting::Reconvergence,
                },
                PathPosition {
                    pc: out.pc("@low"),
                    lanes: 0x0000_ffff,
                    waiting: Waiting::Barrier(0),
                },
                PathPosition {
                    pc: out.pc("@high"),
                    lanes: 0xffff_0000,
                    waiting: Waiting::Barrier(1),
                },
            ],
        }]
    );
    assert_eq!(
        error.barriers,
        vec![barrier_at(0, 16, 32), barrier_at(1, 16, 32)]
    );
}

// bar.sync 1, 64 where only warp 0 (32 threads) ever arrives: warp 1 just ends.
const NAMED_COUNT_NEVER_REACHED: &str = r#"
.kernel named32()
{
    .reg .u32 %t;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ge.u32 %p, %t, 32;
@%p exit;
    bar.sync 1, 64;                  // @named
    exit;
}
"#;

#[test]
fn a_named_barrier_whose_count_is_never_reached_deadlocks() {
    let out = run_kernel(NAMED_COUNT_NEVER_REACHED, 1, 64, &[]);
    let error = out.fault();
    assert_eq!(error.kind, FaultKind::Deadlock);
    assert_eq!(
        error.warps,
        vec![warp_at(
            0,
            0,
            out.pc("@named"),
            u32::MAX,
            Waiting::Barrier(1)
        )]
    );
    assert_eq!(error.barriers, vec![barrier_at(1, 32, 64)]);
}

// Named barriers with counts: warps 0-1 exchange through barrier 1, warps 2-3 through
// barrier 2, each pair with bar.sync id, 64; neither pair waits for the other.
const NAMED_PAIRS: &str = r#"
.kernel namedpairs(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[128];
    .reg .u32 %t, %v, %base, %a, %partner;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %base, sh;
    mad.lo.u32 %a, %t, 4, %base;
    mul.lo.u32 %v, %t, 11;
    st.shared.u32 [%a], %v;
    xor.b32 %partner, %t, 32;
    mad.lo.u32 %a, %partner, 4, %base;
    setp.ge.u32 %p, %t, 64;
@%p bra SECOND;
    bar.sync 1, 64;                  // @pair1
    bra READ;
SECOND:
    bar.sync 2, 64;                  // @pair2
READ:
    ld.shared.u32 %v, [%a];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;         // @store
}
"#;

#[test]
fn named_barriers_with_counts_synchronise_pairs_of_warps() {
    let out = run_kernel(NAMED_PAIRS, 1, 128, &[Arg::zeros(128)]).ok();
    let want: Vec<u32> = (0..128).map(|t| (t ^ 32) * 11).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@pair1"), counts(2, 64));
    assert_eq!(out.stats("@pair2"), counts(2, 64));
    assert_eq!(out.stats("@store"), global(4, 128, 16));
}

// Producer/consumer over 4 rounds with bar.arrive and bar.sync (FULL = 1, EMPTY = 2):
// warp 1 produces buf[lane] = 100 r + lane, warp 0 consumes and sums.
const PRODUCER_CONSUMER: &str = r#"
.kernel prodcons(.param .u64 OUT)
{
    .shared .align 4 .u32 buf[32];
    .reg .u32 %t, %lane, %r, %v, %acc, %a;
    .reg .u64 %po, %off;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    mov.u32 %lane, %laneid;
    mov.u32 %a, buf;
    mad.lo.u32 %a, %lane, 4, %a;
    mov.u32 %r, 0;
    mov.u32 %acc, 0;
    setp.ge.u32 %p, %t, 32;
@%p bra PRODUCER;
CONSUME:
    bar.sync 1, 64;                  // @wait_full
    ld.shared.u32 %v, [%a];
    add.u32 %acc, %acc, %v;
    bar.arrive 2, 64;                // @signal_empty
    add.u32 %r, %r, 1;
    setp.lt.u32 %q, %r, 4;
@%q bra CONSUME;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %lane, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %acc;       // @store
    exit;
PRODUCER:
    setp.eq.u32 %q, %r, 0;
@!%q bar.sync 2, 64;                 // @wait_empty
    mad.lo.u32 %v, %r, 100, %lane;
    st.shared.u32 [%a], %v;
    bar.arrive 1, 64;                // @signal_full
    add.u32 %r, %r, 1;
    setp.lt.u32 %q, %r, 4;
@%q bra PRODUCER;
}
"#;

#[test]
fn bar_arrive_and_bar_sync_pass_data_from_producer_to_consumer() {
    let out = run_kernel(PRODUCER_CONSUMER, 1, 64, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32).map(|lane| 600 + 4 * lane).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@wait_full"), counts(4, 128));
    assert_eq!(out.stats("@signal_empty"), counts(4, 128));
    assert_eq!(out.stats("@wait_empty"), counts(4, 96));
    assert_eq!(out.stats("@signal_full"), counts(4, 128));
    assert_eq!(out.stats("@store"), global(1, 32, 4));
}

// __syncthreads_count / _and / _or: every thread receives the block-wide reduction.
const BAR_RED: &str = r#"
.kernel barred(.param .u64 OUT)
{
    .reg .u32 %t, %m, %count, %v;
    .reg .u64 %po, %off;
    .reg .pred %p, %r;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 32;
    add.u64 %po, %po, %off;
    rem.u32 %m, %t, 3;
    setp.eq.u32 %p, %m, 0;
    bar.red.popc.u32 %count, 0, %p;  // @popc
    st.global.u32 [%po], %count;
    bar.red.popc.u32 %count, 0, !%p; // @popc_not
    st.global.u32 [%po+4], %count;
    setp.lt.u32 %p, %t, 200;
    bar.red.and.pred %r, 0, %p;      // @and_true
    selp.u32 %v, 1, 0, %r;
    st.global.u32 [%po+8], %v;
    setp.lt.u32 %p, %t, 127;
    bar.red.and.pred %r, 0, %p;      // @and_false
    selp.u32 %v, 1, 0, %r;
    st.global.u32 [%po+12], %v;
    setp.eq.u32 %p, %t, 77;
    bar.red.or.pred %r, 0, %p;       // @or_true
    selp.u32 %v, 1, 0, %r;
    st.global.u32 [%po+16], %v;
    setp.gt.u32 %p, %t, 500;
    bar.red.or.pred %r, 0, %p;       // @or_false
    selp.u32 %v, 1, 0, %r;
    st.global.u32 [%po+20], %v;
}
"#;

#[test]
fn bar_red_popc_and_or_give_every_thread_the_reduction() {
    let out = run_kernel(BAR_RED, 1, 128, &[Arg::zeros(128 * 8)]).ok();
    let words = out.u32s(0);
    let multiples_of_3 = (0..128).filter(|t| t % 3 == 0).count() as u32;
    assert_eq!(multiples_of_3, 43);
    for t in 0..128 {
        assert_eq!(
            &words[t * 8..t * 8 + 6],
            &[43, 128 - 43, 1, 0, 1, 0],
            "thread {t}"
        );
    }
    for marker in [
        "@popc",
        "@popc_not",
        "@and_true",
        "@and_false",
        "@or_true",
        "@or_false",
    ] {
        assert_eq!(out.stats(marker), counts(4, 128), "{marker}");
    }
}

// bar.red with some threads exited: only the threads still live take part.
const BAR_RED_AFTER_EXIT: &str = r#"
.kernel barredexit(.param .u64 OUT)
{
    .reg .u32 %t, %count;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.ge.u32 %p, %t, 40;
@%p exit;
    setp.ne.u32 %p, %t, 5;
    bar.red.popc.u32 %count, 0, %p;  // @popc
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %count;
}
"#;

#[test]
fn bar_red_counts_only_threads_that_have_not_exited() {
    let out = run_kernel(BAR_RED_AFTER_EXIT, 1, 96, &[Arg::zeros(96)]).ok();
    let want: Vec<u32> = (0..96).map(|t| if t < 40 { 39 } else { 0 }).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@popc"), counts(2, 40));
}

// spinDeadlock (64 threads): warp 0 does __syncthreads(); if (tid == 0) *flag = 1;
// warp 1 spins while (*flag == 0) {} and never reaches the barrier.
const SPIN_DEADLOCK: &str = r#"
.kernel spinDeadlock(.param .u64 FLAG)
{
    .reg .u32 %t, %f;
    .reg .u64 %pf;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pf, [FLAG];
    setp.ge.u32 %p, %t, 32;
@%p bra SPIN;
    bar.sync 0;                      // @sync
    setp.eq.u32 %p, %t, 0;
@%p st.global.u32 [%pf], 1;
    exit;
SPIN:
    ld.volatile.global.u32 %f, [%pf]; // @spin_load
    setp.eq.u32 %p, %f, 0;           // @spin_test
@%p bra SPIN;                        // @spin_back
    exit;
}
"#;

#[test]
fn spin_deadlock_ends_at_the_instruction_limit() {
    let limit = 100_000;
    let out = kernel(SPIN_DEADLOCK)
        .threads(64)
        .arg(Arg::zeros(1))
        .limit(limit)
        .run();
    let error = out.fault();
    assert_eq!(error.kind, FaultKind::InstructionLimit { limit });
    assert_eq!(error.site, None);
    // Warp 0 ran 5 instructions (up to and including the barrier); warp 1 ran
    // its 4 before the loop, then the loop of 3. Instruction number limit + 1,
    // the one refused, is warp 1's number limit + 1 - 5, which is
    // (limit + 1 - 5 - 4 - 1) % 3 = 1 instruction into the loop.
    let into_loop = (limit + 1 - 5 - 4 - 1) % 3;
    assert_eq!(into_loop, 1);
    assert_eq!(
        error.warps,
        vec![
            warp_at(0, 0, out.pc("@sync"), u32::MAX, Waiting::Barrier(0)),
            warp_at(1, 0, out.pc("@spin_test"), u32::MAX, Waiting::Running),
        ]
    );
    assert_eq!(error.barriers, vec![barrier_at(0, 32, 64)]);
    assert_eq!(out.u32s(0), vec![0]);
    // Every instruction counted, the refused one included.
    assert_eq!(out.outcome.stats.warp_instructions(), limit + 1);
}

// A barrier id outside 0..=15 given in a register (16 in warp 0, 17 in
// warp 1).
const BAD_BARRIER_ID: &str = r#"
.kernel badid()
{
    .reg .u32 %t, %id;
    mov.u32 %t, %warpid;
    add.u32 %id, %t, 16;
    bar.sync %id;                    // @sync
}
"#;

// A barrier id that differs between the lanes of a warp: lanes 0-15 name
// barrier 1, lanes 16-31 barrier 2.
const LANE_BARRIER_ID: &str = r#"
.kernel laneid()
{
    .reg .u32 %l, %id;
    mov.u32 %l, %laneid;
    shr.u32 %id, %l, 4;
    add.u32 %id, %id, 1;
    bar.sync %id, 32;                // @sync
}
"#;

#[test]
fn a_barrier_id_that_differs_within_a_warp_is_an_invalid_barrier() {
    let out = run_kernel(LANE_BARRIER_ID, 1, 32, &[]);
    let error = out.fault();
    assert!(
        matches!(&error.kind, FaultKind::InvalidBarrier { message } if message.contains("differs between the threads of a warp")),
        "{error:?}"
    );
    let site = error.site.unwrap();
    assert_eq!((site.pc, site.warp, site.lane), (out.pc("@sync"), 0, 16));
    let findings = &out.outcome.findings;
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind, FindingKind::InvalidBarrier);
}

#[test]
fn a_barrier_id_out_of_range_is_an_invalid_barrier() {
    let out = run_kernel(BAD_BARRIER_ID, 1, 32, &[]);
    let error = out.fault();
    assert!(
        matches!(&error.kind, FaultKind::InvalidBarrier { message } if message.contains("16")),
        "{error:?}"
    );
    let site = error.site.unwrap();
    assert_eq!((site.pc, site.warp, site.lane), (out.pc("@sync"), 0, 0));
}

// for (i = 0; i <= tid / 32; i++) __syncthreads(); warp w arrives w + 1 times and
// then exits, so each later round completes with the warps still running.
const SYNC_COUNT_PER_WARP: &str = r#"
.kernel syncrounds(.param .u64 OUT)
{
    .reg .u32 %t, %w, %i;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    shr.u32 %w, %t, 5;
    mov.u32 %i, 0;
LOOP:
    bar.sync 0;                      // @sync
    add.u32 %i, %i, 1;
    setp.le.u32 %p, %i, %w;
@%p bra LOOP;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %i;
}
"#;

#[test]
fn warps_leaving_a_barrier_loop_early_do_not_block_the_others() {
    let out = run_kernel(SYNC_COUNT_PER_WARP, 1, 128, &[Arg::zeros(128)]).ok();
    let want: Vec<u32> = (0..128).map(|t| t / 32 + 1).collect();
    assert_eq!(out.u32s(0), want);
    // 1 + 2 + 3 + 4 warp arrivals.
    assert_eq!(out.stats("@sync"), counts(10, 320));
}

// In block 1 only: lanes 16..31 exit and lanes 0..15 wait at bar.sync 1, 64, which
// no one else will reach. Block 0 exits at once.
const PARTIAL_DEADLOCK: &str = r#"
.kernel partialdeadlock()
{
    .reg .u32 %t, %b;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %b, %ctaid.x;
    setp.eq.u32 %p, %b, 0;
@%p exit;
    setp.ge.u32 %p, %t, 16;
@%p exit;
    bar.sync 1, 64;                  // @sync
}
"#;

#[test]
fn a_deadlock_report_names_the_block_and_the_exited_lanes() {
    let out = kernel(PARTIAL_DEADLOCK).grid([2, 1, 1]).threads(32).run();
    let error = out.fault();
    assert_eq!(error.kind, FaultKind::Deadlock);
    assert_eq!(error.block, [1, 0, 0]);
    assert_eq!(
        error.warps,
        vec![warp_at(
            0,
            0xffff_0000,
            out.pc("@sync"),
            0x0000_ffff,
            Waiting::Barrier(1)
        )]
    );
    assert_eq!(error.barriers, vec![barrier_at(1, 16, 64)]);
    assert_eq!(out.outcome.failed_blocks, 1);
}

#[test]
fn spin_deadlock_is_a_livelock_naming_the_loop_and_the_polled_address() {
    let mut config = MachineConfig::hopper();
    config.barriers.livelock_window = 20_000;
    let out = kernel(SPIN_DEADLOCK)
        .threads(64)
        .arg(Arg::zeros(1))
        .config(config)
        .run();
    let error = out.fault();
    assert_eq!(
        error.kind,
        FaultKind::Livelock {
            window: 20_000,
            across_blocks: false,
            not_resident: None
        }
    );
    // Warp 1 spins in the three-instruction loop, reading the flag at the
    // start of the launch's first buffer.
    assert_eq!(error.spinning.len(), 1);
    let spin = &error.spinning[0];
    assert_eq!(spin.warp, 1);
    assert_eq!(
        (spin.loop_start, spin.loop_end),
        (out.pc("@spin_load"), out.pc("@spin_back"))
    );
    assert_eq!(spin.polled.as_deref(), Some("offset 0 of buffer `FLAG`"));
    assert_eq!(error.barriers, vec![barrier_at(0, 32, 64)]);
    // Warp 0 runs 5 instructions and arrives (the last progress, at
    // instruction 5); warp 1 spins. The block's state is looked at when a
    // time window ends (every `block_launch_latency` cycles); once the
    // livelock window has run out, its fingerprint repeats within a few
    // windows (the loop's position at a window's end recurs), and a warp
    // issues at most one instruction a cycle.
    let window_cycles = u64::from(MachineConfig::hopper().timing.block_launch_latency);
    let executed = out.outcome.stats.warp_instructions();
    assert!(
        executed > 5 + 20_000 && executed <= 5 + 20_000 + 4 * window_cycles,
        "{executed} instructions"
    );
    let findings = &out.outcome.findings;
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].kind, FindingKind::Livelock);
    assert_eq!(findings[0].severity, Severity::Error);
}

// Lanes 0-15 spin on a shared flag that lanes 16-31 of the same warp set
// after the branch; the spinning side is the taken one, so it runs first.
// The whole warp clears the flag first: fresh shared memory is not zero.
const SPIN_ON_SIBLING_LANES: &str = r#"
.kernel siblings(.param .u64 OUT)
{
    .shared .align 4 .u32 flag[1];
    .reg .u32 %lane, %f, %base;
    .reg .u64 %po, %off;
    .reg .pred %p, %wait;
    mov.u32 %lane, %laneid;
    mov.u32 %base, flag;
    ld.param.u64 %po, [OUT];
    st.volatile.shared.u32 [%base], 0;
    setp.lt.u32 %p, %lane, 16;
@%p bra SPIN;
    st.volatile.shared.u32 [%base], 1;
    bra DONE;
SPIN:
    ld.volatile.shared.u32 %f, [%base];
    setp.eq.u32 %wait, %f, 0;
@%wait bra SPIN;
DONE:
    mul.wide.u32 %off, %lane, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], 1;
}
"#;

/// Before Volta a warp had one program counter: a side of a branch runs
/// until it reaches the join, so lanes spinning on a value their own warp's
/// other side will write never let it run. Volta's independent thread
/// scheduling (the default) finishes the same kernel.
#[test]
fn pre_volta_warps_cannot_wait_for_their_own_lanes() {
    let volta = kernel(SPIN_ON_SIBLING_LANES)
        .threads(32)
        .arg(Arg::zeros(32))
        .run()
        .ok();
    assert_eq!(volta.u32s(0), vec![1; 32]);
    let mut config = MachineConfig::hopper();
    config.barriers.semantics = BarrierSemantics::PreVolta;
    let pre_volta = kernel(SPIN_ON_SIBLING_LANES)
        .threads(32)
        .arg(Arg::zeros(32))
        .config(config)
        .limit(50_000)
        .run();
    assert_eq!(
        pre_volta.fault().kind,
        FaultKind::InstructionLimit { limit: 50_000 }
    );
    assert_eq!(pre_volta.u32s(0), vec![0; 32]);
}

// One warp's lanes 0-15 wait at the barrier of the `if` arm, lanes 16-31 at
// the one of the `else` arm: one phase of barrier 0 with both instructions.
const HALF_WARP_ARMS: &str = r#"
.kernel ifelse(.param .u64 OUT)
{
    .reg .u32 %lane;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %lane, %laneid;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %lane, 4;
    add.u64 %po, %po, %off;
    setp.lt.u32 %p, %lane, 16;
@%p bra LOW;
    bar.sync 0;                      // @high
    bra DONE;
LOW:
    bar.sync 0;                      // @low
DONE:
    st.global.u32 [%po], %lane;
}
"#;

/// With per-thread arrival the two arms' arrivals make one phase of 32 and
/// the divergence is a warning; with per-warp arrival each arm's arrival
/// counts the whole warp, so there are two phases of "32", each with half
/// the warp absent: an error each time.
#[test]
fn divergent_barrier_in_a_warp_is_a_warning_on_volta_and_an_error_before() {
    let volta = kernel(HALF_WARP_ARMS)
        .threads(32)
        .arg(Arg::zeros(32))
        .run()
        .ok();
    let kinds: Vec<_> = volta
        .outcome
        .findings
        .iter()
        .map(|finding| (finding.kind, finding.severity))
        .collect();
    assert_eq!(
        kinds,
        vec![(FindingKind::DivergentBarrierInWarp, Severity::Warning)]
    );
    let sites: Vec<(u32, u32)> = volta.outcome.findings[0]
        .sites
        .iter()
        .map(|site| (site.pc, site.threads[0].lanes))
        .collect();
    assert_eq!(
        sites,
        vec![
            (volta.pc("@high"), 0xffff_0000),
            (volta.pc("@low"), 0x0000_ffff)
        ]
    );
    assert_eq!(volta.stats("@low"), counts(1, 16));

    let mut config = MachineConfig::hopper();
    config.barriers.semantics = BarrierSemantics::PreVolta;
    let pre_volta = kernel(HALF_WARP_ARMS)
        .threads(32)
        .arg(Arg::zeros(32))
        .config(config)
        .run()
        .ok();
    assert_eq!(pre_volta.u32s(0), (0..32).collect::<Vec<u32>>());
    let kinds: Vec<_> = pre_volta
        .outcome
        .findings
        .iter()
        .map(|finding| (finding.kind, finding.severity, finding.sites[0].pc))
        .collect();
    // The taken side (lanes 0-15, `@low`) runs first.
    assert_eq!(
        kinds,
        vec![
            (
                FindingKind::DivergentBarrierInWarp,
                Severity::Error,
                pre_volta.pc("@low")
            ),
            (
                FindingKind::DivergentBarrierInWarp,
                Severity::Error,
                pre_volta.pc("@high")
            ),
        ]
    );
}

// Threads i < n run a long loop of loads (no store) while the others wait at
// the barrier; then the block exchanges neighbours' sums.
const LONG_LOAD_LOOP: &str = r#"
.kernel longLoop(.param .u64 OUT, .param .u64 IN, .param .u32 N, .param .u32 M)
{
    .shared .align 4 .u32 s[64];
    .reg .u32 %t, %j, %n, %m, %acc, %v, %x, %sbase, %mine, %other;
    .reg .u64 %out, %in, %off, %addr, %ia;
    .reg .pred %p;
    ld.param.u64 %out, [OUT];
    ld.param.u64 %in, [IN];
    ld.param.u32 %n, [N];
    ld.param.u32 %m, [M];
    mov.u32 %sbase, s;
    mov.u32 %t, %tid.x;
    mov.u32 %acc, 0;
    setp.ge.u32 %p, %t, %n;
@%p bra DONE;
    mov.u32 %j, 0;
    mov.u64 %ia, %in;
LOOP:
    ld.global.u32 %x, [%ia];
    add.u32 %acc, %acc, %x;
    add.u64 %ia, %ia, 4;
    add.u32 %j, %j, 1;
    setp.lt.u32 %p, %j, %m;
@%p bra LOOP;
DONE:
    mad.lo.u32 %mine, %t, 4, %sbase;
    st.shared.u32 [%mine], %acc;
    bar.sync 0;
    xor.b32 %other, %t, 1;
    mad.lo.u32 %other, %other, 4, %sbase;
    ld.shared.u32 %v, [%other];
    mul.wide.u32 %off, %t, 4;
    add.s64 %addr, %out, %off;
    st.global.u32 [%addr], %v;
}
"#;

/// A long loop that ends is not a livelock, however long it runs without a
/// store while other threads wait: its state (the counter) never repeats.
#[test]
fn a_long_loop_without_stores_is_not_a_livelock() {
    let mut config = MachineConfig::hopper();
    config.barriers.livelock_window = 1_000;
    let m = 5_000u32;
    let out = kernel(LONG_LOAD_LOOP)
        .threads(64)
        .args(&[
            Arg::zeros(64),
            Arg::u32s(&vec![1; m as usize]),
            Arg::U32(40),
            Arg::U32(m),
        ])
        .config(config)
        .run()
        .ok();
    // Thread t reads thread t ^ 1's sum: m for threads below 40, else 0.
    let want: Vec<u32> = (0..64).map(|t| if t ^ 1 < 40 { m } else { 0 }).collect();
    assert_eq!(out.u32s(0), want);
    assert!(
        out.outcome.findings.is_empty(),
        "{:?}",
        out.outcome.findings
    );
}

// Warp 1 spins on a compare-and-swap of a lock that stays taken (it holds
// 1; warp 0 would release it after the barrier that warp 1 never reaches).
const CAS_SPIN: &str = r#"
.kernel casSpin(.param .u64 OUT, .param .u64 LOCK)
{
    .reg .u32 %t, %w, %old;
    .reg .u64 %out, %lock, %off, %addr;
    .reg .pred %p;
    ld.param.u64 %out, [OUT];
    ld.param.u64 %lock, [LOCK];
    mov.u32 %t, %tid.x;
    shr.u32 %w, %t, 5;
    setp.ne.u32 %p, %w, 0;
@%p bra SPIN;
    bar.sync 0;
    st.global.u32 [%lock], 0;
    bra DONE;
SPIN:
    atom.global.cas.b32 %old, [%lock], 0, 1;   // @cas
    setp.ne.u32 %p, %old, 0;
@%p bra SPIN;
    bar.sync 0;
DONE:
    mul.wide.u32 %off, %t, 4;
    add.s64 %addr, %out, %off;
    st.global.u32 [%addr], %t;
}
"#;

/// An atomic that changes nothing is not progress: a compare-and-swap
/// spinning on a taken lock while the lock's holder waits at a barrier is a
/// livelock.
#[test]
fn a_compare_and_swap_spin_on_a_taken_lock_is_a_livelock() {
    let mut config = MachineConfig::hopper();
    config.barriers.livelock_window = 10_000;
    let out = kernel(CAS_SPIN)
        .threads(64)
        .args(&[Arg::zeros(64), Arg::u32s(&[1])])
        .config(config)
        .run();
    let error = out.fault();
    assert_eq!(
        error.kind,
        FaultKind::Livelock {
            window: 10_000,
            across_blocks: false,
            not_resident: None
        }
    );
    assert_eq!(error.spinning.len(), 1);
    assert_eq!(error.spinning[0].loop_start, out.pc("@cas"));
    assert_eq!(out.outcome.findings[0].kind, FindingKind::Livelock);
}

// Cooperative groups' `thread_block_tile<16>`: each lane's mask is its own
// tile's, 0xffff << (lane & 16); the converged warp syncs and shuffles with
// per-lane masks.
const TILE16: &str = r#"
.kernel tile16(.param .u64 OUT)
{
    .reg .u32 %l, %t, %mask, %shift, %v, %w;
    .reg .u64 %out, %off;
    ld.param.u64 %out, [OUT];
    mov.u32 %l, %laneid;
    mov.u32 %t, %tid.x;
    and.b32 %shift, %l, 16;
    shl.b32 %mask, 0xffff, %shift;
    bar.warp.sync %mask;             // @sync
    shfl.sync.down.b32 %v, %t, 8, 0x101f, %mask;  // @shfl
    mul.wide.u32 %off, %t, 4;
    add.u64 %out, %out, %off;
    st.global.u32 [%out], %v;
}
"#;

/// Each lane names its own mask: a lane in its own tile's mask breaks no
/// rule, although lane 0's mask leaves out lanes 16-31.
#[test]
fn per_lane_masks_of_tiles_are_each_lanes_own() {
    let out = kernel(TILE16).threads(64).arg(Arg::zeros(64)).run().ok();
    assert!(
        out.outcome.findings.is_empty(),
        "{:?}",
        out.outcome.findings
    );
    // shfl.down by 8 with width 16 (c = (32 - 16) << 8 | 0x1f, as CUDA
    // encodes it): lanes 0-7 of each tile read lane + 8, the others would
    // cross their tile's end and keep their own value.
    let want: Vec<u32> = (0..64)
        .map(|t: u32| if t % 16 < 8 { t + 8 } else { t })
        .collect();
    assert_eq!(out.u32s(0), want);
}
