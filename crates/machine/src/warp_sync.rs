//! Warp-synchronous instructions: `bar.warp.sync`, `shfl.sync`,
//! `vote.sync`, `redux.sync` and `match.sync` (PTX ISA, "Parallel Synchronization and Communication
//! Instructions"). On sm_70 and later each of them first waits until every
//! non-exited lane named in its mask has reached a warp-synchronous
//! instruction, then the lanes go on together, even when they arrived on
//! different paths of a divergent branch: a `__shfl_sync` in both arms of an
//! `if` exchanges values across the arms, as an H100 does.
//!
//! A path that reaches one of these instructions waits with
//! [`PathWait::WarpSync`]; when the union of the waiting paths covers the
//! mask's live lanes (or lanes exit so that it does), all of them are
//! released at once: shuffles read their sources from every participating
//! lane, votes count every participating lane, reductions and matches
//! combine the values of every lane that executes one, and each path moves
//! past its instruction. Deviation from hardware: a lane named in the mask that never
//! arrives makes the waiters wait for ever (the block then reports a
//! deadlock), where a GPU's behaviour is undefined.
//!
//! The barrier checker is told of every misuse: a mask that leaves out a
//! lane executing the instruction (an error, `Invalid arguments` in
//! compute-sanitizer's words), a mask naming lanes that have exited or hold
//! no thread, and a shuffle reading a lane that does not take part (both
//! undefined, warnings).

use warpsim_ir::{ReduxOp, ShuffleMode, VoteMode};

use crate::checker::BlockChecker;
use crate::findings::{Finding, FindingKind, Severity, Site, WarpLanes};
use crate::program::{Kind, Program};
use crate::warp::{PathWait, Warp, WARP_SIZE};

/// A path arrives at a warp-synchronous instruction; `active` are its lanes
/// whose guard holds, `mask` the union of their masks (each lane names its
/// own), `outside` the lanes that are not in their own mask.
pub(crate) fn arrive(
    program: &Program,
    warp: &mut Warp,
    checker: &mut BlockChecker,
    path_index: usize,
    active: u32,
    mask: u32,
    outside: u32,
) {
    let pc = warp.paths[path_index].pc;
    if outside != 0 {
        misuse(
            checker,
            pc,
            warp.index,
            outside,
            Severity::Error,
            "these lanes execute a warp-synchronous instruction whose mask leaves them out; the calling lane must be in the mask".to_string(),
        );
    }
    // Lanes without a thread (a block that is not a multiple of 32) are
    // left alone: a full mask in a partial warp is common and harmless.
    let absent = mask & warp.valid & warp.exited;
    if absent != 0 {
        misuse(
            checker,
            pc,
            warp.index,
            active,
            Severity::Warning,
            exited_lanes_message(mask, absent),
        );
    }
    warp.paths[path_index].wait = PathWait::WarpSync { mask };
    try_release(program, warp, checker, mask);
}

#[cold]
fn misuse(
    checker: &mut BlockChecker,
    pc: u32,
    warp: u32,
    lanes: u32,
    severity: Severity,
    message: String,
) {
    let mut finding = Finding::new(FindingKind::WarpSync, severity, message);
    finding
        .sites
        .push(Site::new(pc, vec![WarpLanes { warp, lanes }], "here", true));
    checker.report(finding);
}

/// After `exited` lanes exit, releases the waiters that no longer wait for
/// anyone; a waiter whose mask names them is told of.
pub(crate) fn release_after_exit(
    program: &Program,
    warp: &mut Warp,
    checker: &mut BlockChecker,
    exited: u32,
) {
    let mut index = 0;
    while index < warp.paths.len() {
        if let PathWait::WarpSync { mask } = warp.paths[index].wait {
            if mask & exited != 0 {
                let path = warp.paths[index];
                misuse(
                    checker,
                    path.pc,
                    warp.index,
                    path.mask,
                    Severity::Warning,
                    exited_lanes_message(mask, mask & exited),
                );
            }
            try_release(program, warp, checker, mask);
        }
        index += 1;
    }
}

fn exited_lanes_message(mask: u32, exited: u32) -> String {
    format!(
        "the mask {mask:#010x} names lanes {} that have exited; every non-exited lane named in the mask must execute the instruction",
        crate::findings::thread_ranges(&[WarpLanes {
            warp: 0,
            lanes: exited,
        }])
    )
}

/// The lanes of a waiting path that take part: its mask, less lanes whose
/// guard is false.
fn participating_lanes(program: &Program, warp: &Warp, path_index: usize) -> u32 {
    let path = warp.paths[path_index];
    let mut lanes = path.mask;
    if let Some(guard) = program.code[path.pc as usize].guard {
        lanes &= warp.pred_bits(guard.pred, guard.negated);
    }
    lanes
}

/// Releases every path waiting with `mask` if, together, they hold all the
/// mask's live lanes; performs their shuffles and votes first.
fn try_release(program: &Program, warp: &mut Warp, checker: &mut BlockChecker, mask: u32) {
    // The waiting paths are found by scanning (a warp has few paths), so the
    // release allocates nothing.
    let is_waiting =
        |warp: &Warp, index: usize| warp.paths[index].wait == PathWait::WarpSync { mask };
    let arrived = (0..warp.paths.len())
        .filter(|&index| is_waiting(warp, index))
        .fold(0u32, |lanes, index| lanes | warp.paths[index].mask);
    if mask & warp.live() & !arrived != 0 {
        return;
    }
    warp.syncs = warp.syncs.wrapping_add(1);
    // Gather what every participating lane contributes.
    let mut shuffle_source = [0u64; WARP_SIZE];
    let mut vote_bits = 0u32;
    let mut participants = 0u32;
    // The values of `redux.sync` and `match.sync`, and the lanes that give them.
    let mut sync_values = [0u64; WARP_SIZE];
    let mut redux_lanes = 0u32;
    let mut match_lanes = 0u32;
    for index in 0..warp.paths.len() {
        if !is_waiting(warp, index) {
            continue;
        }
        let lanes = participating_lanes(program, warp, index);
        participants |= lanes;
        match program.code[warp.paths[index].pc as usize].kind {
            Kind::Shuffle { a, .. } => {
                // A lane that takes no part gives an undefined value in PTX;
                // an H100 gives 0 (programs/barriers/README.md,
                // shflReadsInactiveLane), and so does the machine.
                gather(&mut shuffle_source, warp, a, lanes);
            }
            Kind::Vote { pred, negated, .. } => {
                vote_bits |= warp.pred_bits(pred, negated) & lanes;
            }
            Kind::Redux { a, .. } | Kind::ReduxFloat { a, .. } => {
                redux_lanes |= lanes;
                gather(&mut sync_values, warp, a, lanes);
            }
            Kind::Match { a, .. } => {
                match_lanes |= lanes;
                gather(&mut sync_values, warp, a, lanes);
            }
            _ => {}
        }
    }
    // Every lane that executes the vote takes part, even one the mask
    // leaves out (an error the checker reports): an H100 gives such a
    // `__ballot_sync(0x0000ffff, ...)` run by all 32 lanes the ballot of all
    // 32 (programs/barriers/README.md, ballotMaskExcludesCaller).
    let members = participants;
    for index in 0..warp.paths.len() {
        if !is_waiting(warp, index) {
            continue;
        }
        let lanes = participating_lanes(program, warp, index);
        let pc = warp.paths[index].pc;
        match program.code[pc as usize].kind {
            Kind::Shuffle {
                mode,
                dst,
                dst_pred,
                b,
                c,
                ..
            } => {
                let readers = shuffle(
                    warp,
                    lanes,
                    participants,
                    &shuffle_source,
                    mode,
                    dst,
                    dst_pred,
                    b,
                    c,
                );
                if readers != 0 {
                    misuse(
                        checker,
                        pc,
                        warp.index,
                        readers,
                        Severity::Warning,
                        format!(
                            "these lanes read the value of a lane that does not take part in the shuffle (mask {mask:#010x}); the value they get is undefined"
                        ),
                    );
                }
            }
            Kind::Vote { mode, dst, .. } => {
                vote(warp, lanes, members, vote_bits & members, mode, dst)
            }
            Kind::Redux {
                op, signed, dst, ..
            } => {
                let result = u64::from(reduce(op, signed, redux_lanes, &sync_values));
                warp.values.fill(dst, lanes, result);
            }
            Kind::ReduxFloat {
                max, abs, nan, dst, ..
            } => {
                let result =
                    crate::scalar_ops::redux_float(max, abs, nan, redux_lanes, &sync_values);
                warp.values.fill(dst, lanes, result);
            }
            Kind::Match {
                all,
                wide,
                dst,
                dst_pred,
                ..
            } => match_values(
                warp,
                lanes,
                match_lanes,
                &sync_values,
                all,
                wide,
                dst,
                dst_pred,
            ),
            _ => {}
        }
        let path = &mut warp.paths[index];
        path.wait = PathWait::Ready;
        path.pc += 1;
    }
}

/// `shfl.sync` for `lanes`, reading from `source` (PTX ISA, shfl.sync:
/// `c` packs the clamp value in bits 0-4 and the segment mask in bits 8-12).
/// Returns the lanes that read, in range, a lane outside `participants`.
#[allow(clippy::too_many_arguments)]
fn shuffle(
    warp: &mut Warp,
    lanes: u32,
    participants: u32,
    source: &[u64; WARP_SIZE],
    mode: ShuffleMode,
    dst: u32,
    dst_pred: Option<u32>,
    b: u32,
    c: u32,
) -> u32 {
    let mut in_range = 0u32;
    let mut undefined_reads = 0u32;
    for lane in 0..WARP_SIZE {
        if lanes >> lane & 1 == 0 {
            continue;
        }
        let lane_id = lane as i64;
        let shift = (warp.values.get(b, lane) & 0x1f) as i64;
        let packed = warp.values.get(c, lane);
        let clamp = (packed & 0x1f) as i64;
        let segment_mask = ((packed >> 8) & 0x1f) as i64;
        let max_lane = (lane_id & segment_mask) | (clamp & !segment_mask);
        let min_lane = lane_id & segment_mask;
        let (source_lane, valid) = match mode {
            ShuffleMode::Up => (lane_id - shift, lane_id - shift >= max_lane),
            ShuffleMode::Down => (lane_id + shift, lane_id + shift <= max_lane),
            ShuffleMode::Butterfly => (lane_id ^ shift, (lane_id ^ shift) <= max_lane),
            ShuffleMode::Index => {
                let j = min_lane | (shift & !segment_mask);
                (j, j <= max_lane)
            }
        };
        let source_lane = if valid { source_lane } else { lane_id };
        if participants >> (source_lane as usize & 31) & 1 == 0 {
            undefined_reads |= 1 << lane;
        }
        warp.values
            .set(dst, lane, source[source_lane as usize & 31] & 0xffff_ffff);
        in_range |= u32::from(valid) << lane;
    }
    if let Some(pred) = dst_pred {
        warp.set_pred(pred, lanes, in_range);
    }
    undefined_reads
}

/// `vote.sync` for `lanes`: `members` are the participating lanes of the
/// mask, `votes` those of them whose predicate is true.
fn vote(warp: &mut Warp, lanes: u32, members: u32, votes: u32, mode: VoteMode, dst: u32) {
    if mode == VoteMode::Ballot {
        warp.values.fill(dst, lanes, u64::from(votes));
        return;
    }
    let result = match mode {
        VoteMode::All => votes == members,
        VoteMode::Any => votes != 0,
        _ => votes == 0 || votes == members,
    };
    warp.set_pred(dst, lanes, if result { u32::MAX } else { 0 });
}

/// Copies register `reg` of `lanes` into `values`.
fn gather(values: &mut [u64; WARP_SIZE], warp: &Warp, reg: u32, lanes: u32) {
    let registers = warp.values.read(reg);
    for (lane, (slot, &value)) in values.iter_mut().zip(&registers).enumerate() {
        if lanes >> lane & 1 != 0 {
            *slot = value;
        }
    }
}

/// `redux.sync`: the reduction of the low 32 bits of `values` over `members`
/// (`signed` orders `min` and `max` as `.s32`; `add` wraps at 32 bits).
fn reduce(op: ReduxOp, signed: bool, members: u32, values: &[u64; WARP_SIZE]) -> u32 {
    let mut lanes = (0..WARP_SIZE)
        .filter(|&lane| members >> lane & 1 != 0)
        .map(|lane| values[lane] as u32);
    let Some(first) = lanes.next() else {
        return 0;
    };
    lanes.fold(first, |acc, value| match op {
        ReduxOp::Add => acc.wrapping_add(value),
        ReduxOp::Min if signed => (acc as i32).min(value as i32) as u32,
        ReduxOp::Max if signed => (acc as i32).max(value as i32) as u32,
        ReduxOp::Min => acc.min(value),
        ReduxOp::Max => acc.max(value),
        ReduxOp::And => acc & value,
        ReduxOp::Or => acc | value,
        ReduxOp::Xor => acc ^ value,
    })
}

/// `match.any.sync` and `match.all.sync` for `lanes`, over the values of
/// `members` (64 bits when `wide`, else the low 32).
#[allow(clippy::too_many_arguments)]
fn match_values(
    warp: &mut Warp,
    lanes: u32,
    members: u32,
    values: &[u64; WARP_SIZE],
    all: bool,
    wide: bool,
    dst: u32,
    dst_pred: Option<u32>,
) {
    let key = |lane: usize| {
        if wide {
            values[lane]
        } else {
            values[lane] & 0xffff_ffff
        }
    };
    let equal_to = |value: u64| {
        (0..WARP_SIZE).fold(0u32, |mask, lane| {
            mask | (u32::from(members >> lane & 1 != 0 && key(lane) == value) << lane)
        })
    };
    let first = members.trailing_zeros() as usize;
    let uniform = first >= WARP_SIZE || equal_to(key(first)) == members;
    for lane in 0..WARP_SIZE {
        if lanes >> lane & 1 == 0 {
            continue;
        }
        let result = match (all, uniform) {
            (false, _) => equal_to(key(lane)),
            (true, true) => members,
            (true, false) => 0,
        };
        warp.values.set(dst, lane, u64::from(result));
    }
    if let Some(pred) = dst_pred {
        warp.set_pred(pred, lanes, if uniform { u32::MAX } else { 0 });
    }
}
