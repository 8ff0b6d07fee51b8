//! Warp-synchronous instructions: `bar.warp.sync`, `shfl.sync` and
//! `vote.sync` (PTX ISA, "Parallel Synchronization and Communication
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
//! lane, votes count every participating lane, and each path moves past its
//! instruction. Deviation from hardware: a lane named in the mask that never
//! arrives makes the waiters wait for ever (the block then reports a
//! deadlock), where a GPU's behaviour is undefined.

use warpsim_ir::{ShuffleMode, VoteMode};

use crate::program::{Kind, Program};
use crate::warp::{PathWait, Warp, WARP_SIZE};

/// A path arrives at a warp-synchronous instruction with `mask`.
pub(crate) fn arrive(program: &Program, warp: &mut Warp, path_index: usize, mask: u32) {
    warp.paths[path_index].wait = PathWait::WarpSync { mask };
    try_release(program, warp, mask);
}

/// After lanes exit, releases the waiters that no longer wait for anyone.
pub(crate) fn release_after_exit(program: &Program, warp: &mut Warp) {
    let mut index = 0;
    while index < warp.paths.len() {
        if let PathWait::WarpSync { mask } = warp.paths[index].wait {
            try_release(program, warp, mask);
        }
        index += 1;
    }
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
fn try_release(program: &Program, warp: &mut Warp, mask: u32) -> bool {
    // The waiting paths are found by scanning (a warp has few paths), so the
    // release allocates nothing.
    let is_waiting =
        |warp: &Warp, index: usize| warp.paths[index].wait == PathWait::WarpSync { mask };
    let arrived = (0..warp.paths.len())
        .filter(|&index| is_waiting(warp, index))
        .fold(0u32, |lanes, index| lanes | warp.paths[index].mask);
    if mask & warp.live() & !arrived != 0 {
        return false;
    }
    // Gather what every participating lane contributes.
    let mut shuffle_source = [0u64; WARP_SIZE];
    let mut vote_bits = 0u32;
    let mut participants = 0u32;
    let mut sources_seeded = false;
    for index in 0..warp.paths.len() {
        if !is_waiting(warp, index) {
            continue;
        }
        let lanes = participating_lanes(program, warp, index);
        participants |= lanes;
        match program.code[warp.paths[index].pc as usize].kind {
            Kind::Shuffle { a, .. } => {
                let base = a as usize * WARP_SIZE;
                if !sources_seeded {
                    // Lanes outside every path read an undefined value in PTX;
                    // here it is the first shuffle's own source register.
                    shuffle_source.copy_from_slice(&warp.values[base..base + WARP_SIZE]);
                    sources_seeded = true;
                }
                let registers = &warp.values[base..base + WARP_SIZE];
                for (lane, (slot, &value)) in shuffle_source.iter_mut().zip(registers).enumerate() {
                    if lanes >> lane & 1 != 0 {
                        *slot = value;
                    }
                }
            }
            Kind::Vote { pred, negated, .. } => {
                vote_bits |= warp.pred_bits(pred, negated) & lanes;
            }
            _ => {}
        }
    }
    let members = mask & participants;
    for index in 0..warp.paths.len() {
        if !is_waiting(warp, index) {
            continue;
        }
        let lanes = participating_lanes(program, warp, index);
        match program.code[warp.paths[index].pc as usize].kind {
            Kind::Shuffle {
                mode,
                dst,
                dst_pred,
                b,
                c,
                ..
            } => shuffle(warp, lanes, &shuffle_source, mode, dst, dst_pred, b, c),
            Kind::Vote { mode, dst, .. } => {
                vote(warp, lanes, members, vote_bits & members, mode, dst)
            }
            _ => {}
        }
        let path = &mut warp.paths[index];
        path.wait = PathWait::Ready;
        path.pc += 1;
    }
    true
}

/// `shfl.sync` for `lanes`, reading from `source` (PTX ISA, shfl.sync:
/// `c` packs the clamp value in bits 0-4 and the segment mask in bits 8-12).
#[allow(clippy::too_many_arguments)]
fn shuffle(
    warp: &mut Warp,
    lanes: u32,
    source: &[u64; WARP_SIZE],
    mode: ShuffleMode,
    dst: u32,
    dst_pred: Option<u32>,
    b: u32,
    c: u32,
) {
    let mut in_range = 0u32;
    for lane in 0..WARP_SIZE {
        if lanes >> lane & 1 == 0 {
            continue;
        }
        let lane_id = lane as i64;
        let shift = (warp.values[b as usize * WARP_SIZE + lane] & 0x1f) as i64;
        let packed = warp.values[c as usize * WARP_SIZE + lane];
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
        warp.values[dst as usize * WARP_SIZE + lane] =
            source[source_lane as usize & 31] & 0xffff_ffff;
        in_range |= u32::from(valid) << lane;
    }
    if let Some(pred) = dst_pred {
        warp.set_pred(pred, lanes, in_range);
    }
}

/// `vote.sync` for `lanes`: `members` are the participating lanes of the
/// mask, `votes` those of them whose predicate is true.
fn vote(warp: &mut Warp, lanes: u32, members: u32, votes: u32, mode: VoteMode, dst: u32) {
    if mode == VoteMode::Ballot {
        for lane in 0..WARP_SIZE {
            if lanes >> lane & 1 != 0 {
                warp.values[dst as usize * WARP_SIZE + lane] = u64::from(votes);
            }
        }
        return;
    }
    let result = match mode {
        VoteMode::All => votes == members,
        VoteMode::Any => votes != 0,
        _ => votes == 0 || votes == members,
    };
    warp.set_pred(dst, lanes, if result { u32::MAX } else { 0 });
}
