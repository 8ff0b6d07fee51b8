//! Warp-level operations: `shfl.sync` in every mode (butterfly reduction,
//! up/down with the `|p` in-range predicate at the edges, idx, sub-warp
//! widths through the clamp/segment operand), `vote.sync` ballot/all/any/uni
//! in converged and divergent code, `bar.warp.sync` in converged and
//! divergent code and with exited lanes, and the special registers
//! (`%laneid`, `%warpid`, `%lanemask_*`, `%tid`/`%ntid`/`%ctaid`/`%nctaid`).

mod common;
use common::*;

// __shfl_xor_sync butterfly reduction: every lane ends with the sum of the 32 values t*t + 1.
const BUTTERFLY_SUM: &str = r#"
.kernel bfly(.param .u64 OUT)
{
    .reg .u32 %t, %v, %r;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    mad.lo.u32 %v, %t, %t, 1;
    shfl.sync.bfly.b32 %r, %v, 16, 0x1f, 0xffffffff;   // @bfly16
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 8, 0x1f, 0xffffffff;
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 4, 0x1f, 0xffffffff;
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 2, 0x1f, 0xffffffff;
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 1, 0x1f, 0xffffffff;
    add.u32 %v, %v, %r;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn butterfly_reduction_sums_the_warp() {
    let out = run_kernel(BUTTERFLY_SUM, 1, 64, &[Arg::zeros(64)]).ok();
    let first: u32 = (0..32).map(|t| t * t + 1).sum();
    let second: u32 = (32..64).map(|t| t * t + 1).sum();
    let want: Vec<u32> = (0..64)
        .map(|t| if t < 32 { first } else { second })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@bfly16"), counts(2, 64));
}

// Each shuffle mode with its in-range predicate: 2 words (value, predicate) per mode and lane.
const SHUFFLES: &str = r#"
.kernel shuffles(.param .u64 OUT)
{
    .reg .u32 %t, %v, %r, %q, %b;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %laneid;
    mad.lo.u32 %v, %t, 10, 7;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 64;
    add.u64 %po, %po, %off;
    shfl.sync.up.b32 %r|%p, %v, 3, 0, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po], {%r, %q};
    shfl.sync.down.b32 %r|%p, %v, 5, 0x1f, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+8], {%r, %q};
    sub.u32 %b, 31, %t;
    shfl.sync.idx.b32 %r|%p, %v, %b, 0x1f, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+16], {%r, %q};
    shfl.sync.bfly.b32 %r|%p, %v, 5, 0x1f, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+24], {%r, %q};
    shfl.sync.idx.b32 %r|%p, %v, 2, 0x181f, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+32], {%r, %q};
    shfl.sync.down.b32 %r|%p, %v, 4, 0x101f, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+40], {%r, %q};
    shfl.sync.up.b32 %r|%p, %v, 4, 0x1000, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+48], {%r, %q};
    shfl.sync.bfly.b32 %r|%p, %v, 9, 0x181f, 0xffffffff;
    selp.u32 %q, 1, 0, %p;
    st.global.v2.u32 [%po+56], {%r, %q};
}
"#;

#[test]
fn shuffle_modes_and_their_predicate_at_the_edges() {
    let out = run_kernel(SHUFFLES, 1, 32, &[Arg::zeros(32 * 16)]).ok();
    let words = out.u32s(0);
    let value = |lane: u32| lane * 10 + 7;
    // (source lane, in range) for each mode, in CUDA's terms (width w).
    let up = |lane: u32, delta: u32, width: u32| {
        if lane % width >= delta {
            (lane - delta, true)
        } else {
            (lane, false)
        }
    };
    let down = |lane: u32, delta: u32, width: u32| {
        if lane % width + delta < width {
            (lane + delta, true)
        } else {
            (lane, false)
        }
    };
    let idx = |lane: u32, source: u32, width: u32| ((lane / width) * width + source % width, true);
    let xor = |lane: u32, mask: u32, width: u32| {
        let j = lane ^ mask;
        if j / width == lane / width || j < (lane / width + 1) * width {
            (j, true)
        } else {
            (lane, false)
        }
    };
    for lane in 0..32u32 {
        let expected = [
            up(lane, 3, 32),
            down(lane, 5, 32),
            idx(lane, 31 - lane, 32),
            xor(lane, 5, 32),
            idx(lane, 2, 8),
            down(lane, 4, 16),
            up(lane, 4, 16),
            xor(lane, 9, 8),
        ];
        for (mode, (source, in_range)) in expected.into_iter().enumerate() {
            let at = lane as usize * 16 + mode * 2;
            assert_eq!(
                (words[at], words[at + 1]),
                (value(source), u32::from(in_range)),
                "lane {lane}, shuffle {mode}"
            );
        }
    }
}

// Votes in converged code: ballot, all, any, uni, each twice (true and false cases).
const VOTES: &str = r#"
.kernel votes(.param .u64 OUT)
{
    .reg .u32 %t, %m, %r, %q;
    .reg .u64 %po, %off;
    .reg .pred %p, %v;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 40;
    add.u64 %po, %po, %off;
    rem.u32 %m, %t, 3;
    setp.eq.u32 %p, %m, 0;
    vote.sync.ballot.b32 %r, %p, 0xffffffff;             // @ballot
    st.global.u32 [%po], %r;
    vote.sync.ballot.b32 %r, !%p, 0xffffffff;
    st.global.u32 [%po+4], %r;
    setp.lt.u32 %p, %t, 1000;
    vote.sync.all.pred %v, %p, 0xffffffff;
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+8], %q;
    setp.ne.u32 %p, %t, 40;
    vote.sync.all.pred %v, %p, 0xffffffff;
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+12], %q;
    setp.eq.u32 %p, %t, 17;
    vote.sync.any.pred %v, %p, 0xffffffff;
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+16], %q;
    setp.gt.u32 %p, %t, 1000;
    vote.sync.any.pred %v, %p, 0xffffffff;
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+20], %q;
    setp.lt.u32 %p, %t, 32;
    vote.sync.uni.pred %v, %p, 0xffffffff;
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+24], %q;
    and.b32 %m, %t, 1;
    setp.eq.u32 %p, %m, 0;
    vote.sync.uni.pred %v, %p, 0xffffffff;
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+28], %q;
@%p vote.sync.uni.pred %v, !%p, 0x55555555;           // @guarded_uni
    selp.u32 %q, 1, 0, %v;
    st.global.u32 [%po+32], %q;
}
"#;

#[test]
fn votes_in_converged_code() {
    let out = run_kernel(VOTES, 1, 64, &[Arg::zeros(64 * 10)]).ok();
    let words = out.u32s(0);
    for t in 0..64u32 {
        let warp = t / 32;
        let ballot = lanes_where(|l| (warp * 32 + l) % 3 == 0);
        let want = [
            ballot,
            !ballot,
            1,
            u32::from(warp != 1), // thread 40 is in warp 1
            u32::from(warp == 0), // thread 17 is in warp 0
            0,
            1, // in each warp t < 32 holds for all lanes or for none
            0,
            // only the even lanes vote (mask 0x55555555), all with !p false:
            // uniform; the odd lanes keep the previous (false) result
            u32::from(t % 2 == 0),
        ];
        let at = t as usize * 10;
        assert_eq!(&words[at..at + 9], &want, "thread {t}");
    }
    assert_eq!(out.stats("@ballot"), counts(2, 64));
    assert_eq!(out.stats("@guarded_uni"), counts(2, 32));
}

// Votes inside divergent code see only the lanes of their path.
const DIVERGENT_VOTES: &str = r#"
.kernel divvotes(.param .u64 OUT)
{
    .reg .u32 %t, %m, %r, %q;
    .reg .u64 %po, %off;
    .reg .pred %p, %v, %low;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 8;
    add.u64 %po, %po, %off;
    and.b32 %m, %t, 1;
    setp.eq.u32 %p, %m, 0;
    setp.ge.u32 %low, %t, 16;
@%low bra HIGH;
    vote.sync.ballot.b32 %r, %p, 0x0000ffff;             // @low_ballot
    vote.sync.all.pred %v, %p, 0x0000ffff;
    bra JOIN;
HIGH:
    vote.sync.ballot.b32 %r, %p, 0xffff0000;             // @high_ballot
    setp.ge.u32 %p, %t, 16;
    vote.sync.all.pred %v, %p, 0xffff0000;
JOIN:
    selp.u32 %q, 1, 0, %v;
    st.global.v2.u32 [%po], {%r, %q};
}
"#;

#[test]
fn votes_in_divergent_code_see_their_own_path() {
    let out = run_kernel(DIVERGENT_VOTES, 1, 32, &[Arg::zeros(64)]).ok();
    let words = out.u32s(0);
    for t in 0..32usize {
        let want = if t < 16 {
            [0x0000_5555, 0]
        } else {
            [0x5555_0000, 1]
        };
        assert_eq!(&words[2 * t..2 * t + 2], &want, "thread {t}");
    }
    assert_eq!(out.stats("@low_ballot"), counts(1, 16));
    assert_eq!(out.stats("@high_ballot"), counts(1, 16));
}

// __syncwarp in converged code.
const WARP_SYNC_CONVERGED: &str = r#"
.kernel syncwarp(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[64];
    .reg .u32 %t, %a, %s, %v, %o;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    mov.u32 %s, sh;
    mad.lo.u32 %a, %t, 4, %s;
    st.shared.u32 [%a], %t;
    bar.warp.sync 0xffffffff;                            // @sync
    xor.b32 %o, %t, 1;
    mad.lo.u32 %a, %o, 4, %s;
    ld.shared.u32 %v, [%a];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn warp_sync_in_converged_code() {
    let out = run_kernel(WARP_SYNC_CONVERGED, 1, 64, &[Arg::zeros(64)]).ok();
    let want: Vec<u32> = (0..64).map(|t| t ^ 1).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(2, 64));
}

// __syncwarp in both arms of a divergent branch (allowed on Volta and later):
// the halves exchange values through shared memory.
const WARP_SYNC_DIVERGENT: &str = r#"
.kernel syncwarpdiv(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[32];
    .reg .u32 %t, %a, %s, %v, %o;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %s, sh;
    mad.lo.u32 %a, %t, 4, %s;
    xor.b32 %o, %t, 16;
    mad.lo.u32 %o, %o, 4, %s;
    setp.lt.u32 %p, %t, 16;
@%p bra LOW;
    add.u32 %v, %t, 2000;
    st.shared.u32 [%a], %v;
    bar.warp.sync 0xffffffff;                            // @high_sync
    ld.shared.u32 %v, [%o];
    bra JOIN;
LOW:
    add.u32 %v, %t, 1000;
    st.shared.u32 [%a], %v;
    bar.warp.sync 0xffffffff;                            // @low_sync
    ld.shared.u32 %v, [%o];
JOIN:
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;                             // @join
}
"#;

#[test]
fn warp_sync_in_both_arms_of_a_branch() {
    let out = run_kernel(WARP_SYNC_DIVERGENT, 1, 32, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32)
        .map(|t| {
            if t < 16 {
                (t ^ 16) + 2000
            } else {
                (t ^ 16) + 1000
            }
        })
        .collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@high_sync"), counts(1, 16));
    assert_eq!(out.stats("@low_sync"), counts(1, 16));
    assert_eq!(out.stats("@join"), global(1, 32, 4));
}

// __syncwarp(full mask) after the other half of the warp has exited; the
// exiting lanes take the branch, which the machine runs first.
const WARP_SYNC_AFTER_EXIT_FALLTHROUGH: &str = r#"
.kernel syncexit1(.param .u64 OUT)
{
    .reg .u32 %t;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.lt.u32 %p, %t, 16;
@%p bra LEAVE;
    bar.warp.sync 0xffffffff;                            // @sync
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %t;
    exit;
LEAVE:
    exit;
}
"#;

// The same with the lanes that exit on the fall-through side: the lanes that
// take the branch reach the __syncwarp first and must be released by the exits.
const WARP_SYNC_AFTER_EXIT_TAKEN: &str = r#"
.kernel syncexit2(.param .u64 OUT)
{
    .reg .u32 %t;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.lt.u32 %p, %t, 16;
@%p bra SYNC;
    exit;
SYNC:
    bar.warp.sync 0xffffffff;                            // @sync
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %t;
}
"#;

#[test]
fn warp_sync_does_not_wait_for_lanes_that_exited_first() {
    let out = run_kernel(WARP_SYNC_AFTER_EXIT_FALLTHROUGH, 1, 32, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32).map(|t| if t >= 16 { t } else { 0 }).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(1, 16));
}

#[test]
fn warp_sync_is_released_when_the_missing_lanes_exit() {
    let out = run_kernel(WARP_SYNC_AFTER_EXIT_TAKEN, 1, 32, &[Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32).map(|t| if t < 16 { t } else { 0 }).collect();
    assert_eq!(out.u32s(0), want);
    assert_eq!(out.stats("@sync"), counts(1, 16));
}

// A real __syncwarp deadlock: lanes 0..15 wait for lanes 16..31, which wait at a block barrier
// that lanes 0..15 never reach.
const WARP_SYNC_DEADLOCK: &str = r#"
.kernel syncdeadlock()
{
    .reg .u32 %t;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    setp.lt.u32 %p, %t, 16;
@%p bra LOW;
    bar.sync 0;                                          // @bar
    bra JOIN;
LOW:
    bar.warp.sync 0xffffffff;                            // @sync
JOIN:
    exit;                                                // @join
}
"#;

#[test]
fn warp_sync_and_block_barrier_waiting_on_each_other_deadlock() {
    use warpsim_machine::error::{PathPosition, Waiting, WarpPosition};
    use warpsim_machine::FaultKind;
    let out = run_kernel(WARP_SYNC_DEADLOCK, 1, 32, &[]);
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
                    pc: out.pc("@bar"),
                    lanes: 0xffff_0000,
                    waiting: Waiting::Barrier(0),
                },
                PathPosition {
                    pc: out.pc("@sync"),
                    lanes: 0x0000_ffff,
                    waiting: Waiting::WarpSync(u32::MAX),
                },
            ],
        }]
    );
    assert_eq!(error.barriers, vec![barrier_at(0, 16, 32)]);
}

// Special registers of a 3-D block in a 2-D grid: 8 words per thread at its global linear index.
const SPECIALS: &str = r#"
.kernel specials(.param .u64 OUT)
{
    .reg .u32 %x, %y, %z, %nx, %ny, %nz, %bx, %by, %gx, %gy, %lin, %blk, %v;
    .reg .u64 %po, %off;
    mov.u32 %x, %tid.x;
    mov.u32 %y, %tid.y;
    mov.u32 %z, %tid.z;
    mov.u32 %nx, %ntid.x;
    mov.u32 %ny, %ntid.y;
    mov.u32 %nz, %ntid.z;
    mov.u32 %bx, %ctaid.x;
    mov.u32 %by, %ctaid.y;
    mov.u32 %gx, %nctaid.x;
    mov.u32 %gy, %nctaid.y;
    mad.lo.u32 %lin, %z, %ny, %y;
    mad.lo.u32 %lin, %lin, %nx, %x;
    mad.lo.u32 %blk, %by, %gx, %bx;
    mul.lo.u32 %v, %nx, %ny;
    mul.lo.u32 %v, %v, %nz;
    mad.lo.u32 %v, %blk, %v, %lin;
    mul.wide.u32 %off, %v, 32;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    mad.lo.u32 %v, %z, 256, %y;
    mad.lo.u32 %v, %v, 256, %x;
    st.global.u32 [%po], %v;
    mad.lo.u32 %v, %by, 256, %bx;
    st.global.u32 [%po+4], %v;
    mov.u32 %v, %laneid;
    st.global.u32 [%po+8], %v;
    mov.u32 %v, %warpid;
    st.global.u32 [%po+12], %v;
    mov.u32 %v, %lanemask_lt;
    st.global.u32 [%po+16], %v;
    mov.u32 %v, %lanemask_le;
    st.global.u32 [%po+20], %v;
    mov.u32 %v, %lanemask_gt;
    st.global.u32 [%po+24], %v;
    mov.u32 %v, %lanemask_eq;
    mad.lo.u32 %v, %gy, 0x10000, %v;
    st.global.u32 [%po+28], %v;
}
"#;

#[test]
fn special_registers_of_threads_warps_and_blocks() {
    let (grid, block) = ([2u32, 3, 1], [8u32, 4, 3]);
    let threads = 8 * 4 * 3;
    let blocks = 6;
    let out = kernel(SPECIALS)
        .grid(grid)
        .block(block)
        .arg(Arg::zeros(blocks * threads * 8))
        .run()
        .ok();
    let words = out.u32s(0);
    for by in 0..3u32 {
        for bx in 0..2u32 {
            for linear in 0..threads as u32 {
                let (x, y, z) = (linear % 8, linear / 8 % 4, linear / 32);
                let lane = linear % 32;
                let at = ((by * 2 + bx) * threads as u32 + linear) as usize * 8;
                let lt = (1u32 << lane) - 1;
                assert_eq!(
                    &words[at..at + 8],
                    &[
                        z << 16 | y << 8 | x,
                        by << 8 | bx,
                        lane,
                        linear / 32,
                        lt,
                        lt | 1 << lane,
                        !(lt | 1 << lane),
                        (3u32 << 16).wrapping_add(1 << lane),
                    ],
                    "block ({bx}, {by}), thread ({x}, {y}, {z})"
                );
            }
        }
    }
}

// shfl.sync.idx with the full mask in both arms of a divergent branch. PTX
// (sm_70+): each thread waits until every non-exited thread of the mask has
// executed a shfl.sync with the same qualifiers and mask; on an H100 the two
// instructions (two SHFL.IDX in the SASS) exchange values across the arms.
const DIVERGENT_SHUFFLE: &str = r#"
.kernel divshfl(.param .u64 OUT)
{
    .reg .u32 %t, %v, %r, %src;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %laneid;
    xor.b32 %src, %t, 16;
    setp.lt.u32 %p, %t, 16;
@%p bra LOW;
    add.u32 %v, %t, 200;
    shfl.sync.idx.b32 %r, %v, %src, 0x1f, 0xffffffff;
    bra JOIN;
LOW:
    add.u32 %v, %t, 100;
    shfl.sync.idx.b32 %r, %v, %src, 0x1f, 0xffffffff;
JOIN:
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %r;
}
"#;

#[test]
fn shuffles_in_both_arms_of_a_branch_exchange_across_the_arms() {
    let out = run_kernel(DIVERGENT_SHUFFLE, 1, 32, &[Arg::zeros(32)]);
    assert_eq!(out.error(), None);
    // Measured on an H100 with the same two shuffles in inline PTX.
    let want: Vec<u32> = (0..32)
        .map(|t| {
            if t < 16 {
                (t ^ 16) + 200
            } else {
                (t ^ 16) + 100
            }
        })
        .collect();
    assert_eq!(out.u32s(0), want);
}

// vote.sync.ballot with the full mask in both arms of a divergent branch.
const DIVERGENT_BALLOT: &str = r#"
.kernel divballot(.param .u64 OUT)
{
    .reg .u32 %t, %r;
    .reg .u64 %po, %off;
    .reg .pred %p, %q;
    mov.u32 %t, %laneid;
    setp.ne.u32 %q, %t, 99;
    setp.lt.u32 %p, %t, 16;
@%p bra LOW;
    vote.sync.ballot.b32 %r, %q, 0xffffffff;
    bra JOIN;
LOW:
    vote.sync.ballot.b32 %r, %q, 0xffffffff;
JOIN:
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %r;
}
"#;

#[test]
fn ballots_in_both_arms_of_a_branch_count_the_whole_mask() {
    let out = run_kernel(DIVERGENT_BALLOT, 1, 32, &[Arg::zeros(32)]);
    assert_eq!(out.error(), None);
    // Measured on an H100 with the same two ballots in inline PTX.
    assert_eq!(out.u32s(0), vec![u32::MAX; 32]);
}
