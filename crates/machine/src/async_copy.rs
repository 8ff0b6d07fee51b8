//! Asynchronous copies into shared memory and the mbarriers they complete
//! on: `cp.async` with its groups (PTX ISA 9.7.9.25, "Data Movement and
//! Conversion Instructions: cp.async"), `cp.async.bulk` completing
//! transactions on an mbarrier (9.7.9.25.4.1), and the mbarrier object
//! itself (9.7.13.15, "mbarrier").
//!
//! Choices, each documented where the PTX ISA leaves the timing open:
//! - A `cp.async` reads its global source when it issues, and holds the
//!   bytes (zeros past `src-size`) until the thread's wait completes its
//!   group: only then are they written to shared memory. A read of those
//!   bytes before the wait sees the old ones, as a GPU may show, and the race
//!   checker reports it. The shared-memory wavefronts are counted when the
//!   copy issues, on its line, as Nsight Compute counts `LDGSTS` (measured
//!   on an H100: `programs/tensor/hardware`), with the bank arbiter's rules
//!   for a store of the copy's size; a copy whose lanes are all predicated
//!   off still takes one wavefront, as the H100 showed.
//! - `cp.async.mbarrier.arrive` completes the thread's earlier copies at
//!   once, then arrives (without `.noinc` the pending count is raised first,
//!   so the arrival changes nothing).
//! - `cp.async.bulk` reads and writes its bytes when it issues and then
//!   completes its transaction bytes on the mbarrier; the bulk copy engine's
//!   writes do not go through the LSU, so they count no wavefronts (the
//!   H100 counts none on `UBLKCP`), and they are not seen by the race
//!   checker (the async proxy's writes are ordered by the mbarrier).
//! - An mbarrier's state lives beside shared memory, in a table of the
//!   block keyed by its shared-memory offset: its phase, the arrivals still
//!   pending in it, the arrivals each phase expects, and the transaction
//!   count. `init` marks its 8 bytes written for the initialization
//!   checker; ordinary loads of them read what was stored there, as the
//!   object's encoding is the hardware's own.
//! - The state `arrive` returns is the phase and the pending count before
//!   the arrival (phase in the high 32 bits), which `test_wait` and
//!   `pending_count` read back: the H100 returns the count before the
//!   arrival too (`async-mbarrier-ops.cu`, `out[128]`).
//! - A transaction count that goes below zero is an error, though PTX
//!   lets it go negative within a phase: in a pipeline it means a copy
//!   completed more bytes than its `expect_tx` announced.

use std::collections::HashMap;

use warpsim_banks::AccessKind;
use warpsim_ir::{StateSpace, MBARRIER_MAX_COUNT};

use crate::access::{
    lane_address, load, push_sectors, record_sectors, record_wavefronts, resolve, Target,
};
use crate::block::{BlockState, LaunchEnv};
use crate::error::FaultKind;
use crate::findings::{thread_ranges, WarpLanes};
use crate::memory::write_bytes;
use crate::program::{LoweredAddress, MbarrierAction, PredReg, ValueReg};
use crate::semantics::{fault, Fault};
use crate::warp::{Warp, WARP_SIZE};

/// A group number that marks a copy not yet committed.
const UNCOMMITTED: u64 = u64::MAX;

/// One lane's copy in flight: its bytes, read when it issued, and where
/// they go.
#[derive(Clone, Debug)]
struct PendingCopy {
    thread: u32,
    group: u64,
    shared_offset: u32,
    len: u8,
    bytes: [u8; 16],
    pc: u32,
}

/// One mbarrier object (PTX ISA 9.7.13.15.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mbarrier {
    pub phase: u32,
    pub pending: u32,
    pub expected: u32,
    pub tx_count: i64,
}

/// A block's copies in flight and its mbarriers.
#[derive(Debug, Default)]
pub(crate) struct AsyncState {
    copies: Vec<PendingCopy>,
    /// Per thread of the block, the groups it committed so far.
    committed: Vec<u64>,
    pub(crate) mbarriers: HashMap<u32, Mbarrier>,
}

impl AsyncState {
    /// A new block: nothing in flight, no mbarrier.
    pub(crate) fn reset(&mut self) {
        self.copies.clear();
        self.committed.clear();
        self.mbarriers.clear();
    }

    fn committed_mut(&mut self, thread: u32) -> &mut u64 {
        let index = thread as usize;
        if self.committed.len() <= index {
            self.committed.resize(index + 1, 0);
        }
        &mut self.committed[index]
    }
}

fn invalid(message: String, lane: u32) -> Fault {
    fault(FaultKind::InvalidAccess { message }, lane)
}

/// Runs `check` for every active lane before the instruction changes
/// anything: the first lane's failure, its message naming every thread of
/// the warp that fails a check, so that the error shows all the lanes at
/// fault and not only the first.
fn check_every_lane(
    warp: &Warp,
    active: u32,
    mut check: impl FnMut(usize) -> Result<(), Fault>,
) -> Result<(), Fault> {
    let mut first = None;
    let mut failing = 0u32;
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 != 0 {
            if let Err(fault) = check(lane) {
                failing |= 1 << lane;
                first.get_or_insert(fault);
            }
        }
    }
    let Some(mut fault) = first else {
        return Ok(());
    };
    if failing.count_ones() > 1 {
        if let FaultKind::InvalidAccess { message } = &mut fault.0 {
            let threads = thread_ranges(&[WarpLanes {
                warp: warp.index,
                lanes: failing,
            }]);
            message.push_str(&format!(" (threads {threads} fail this way)"));
        }
    }
    Err(fault)
}

/// The shared-memory offset a lane's address names (`.shared` or a generic
/// address in the shared window), checked for alignment and bounds.
fn shared_offset(
    state: &BlockState,
    space: StateSpace,
    address: u64,
    len: u32,
    align: u32,
    what: &str,
    lane: usize,
) -> Result<u32, Fault> {
    match resolve(space, address) {
        Target::Shared(offset) => {
            if offset % u64::from(align) != 0 {
                return Err(invalid(
                    format!("{what} at shared address {offset:#x} is not {align}-byte aligned"),
                    lane as u32,
                ));
            }
            if offset + u64::from(len) > state.shared.len() as u64 {
                return Err(invalid(
                    format!(
                        "{what} at shared address {offset:#x} ({len} bytes) is past the block's {} bytes of shared memory",
                        state.shared.len()
                    ),
                    lane as u32,
                ));
            }
            Ok(offset as u32)
        }
        _ => Err(invalid(
            format!("{what} at address {address:#x} is not in shared memory"),
            lane as u32,
        )),
    }
}

/// Reads `len` bytes of global memory at `address` into `out`.
fn read_global(
    env: &LaunchEnv,
    state: &BlockState,
    address: u64,
    out: &mut [u8],
    lane: usize,
) -> Result<(), Fault> {
    for (index, chunk) in out.chunks_mut(4).enumerate() {
        let at = address + 4 * index as u64;
        let bits = load(env, state, Target::Global(at), 0, 0, 4, 4).ok_or_else(|| {
            crate::access::out_of_bounds(env, Target::Global(at), at, 4, false, lane)
        })?;
        chunk.copy_from_slice(&bits.to_le_bytes()[..chunk.len()]);
    }
    Ok(())
}

/// `cp.async`: reads each lane's source now and keeps its bytes until a
/// wait completes its group.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cp_async(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    size: u8,
    dst: LoweredAddress,
    src: LoweredAddress,
    src_size: Option<ValueReg>,
    ignore_src: Option<(PredReg, bool)>,
) -> Result<(), Fault> {
    let len = u32::from(size);
    let ignored = ignore_src.map_or(0, |(pred, negated)| warp.pred_bits(pred, negated));
    check_every_lane(warp, active, |lane| {
        shared_offset(
            state,
            StateSpace::Shared,
            lane_address(&warp.values, dst, lane),
            len,
            len,
            "the `cp.async` destination",
            lane,
        )?;
        check_cp_async_source(warp, src, src_size, len, lane)
    })?;
    state.sectors.clear();
    let mut lanes = 0u32;
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let thread = warp.index * WARP_SIZE as u32 + lane as u32;
        let offset = shared_offset(
            state,
            StateSpace::Shared,
            lane_address(&warp.values, dst, lane),
            len,
            len,
            "the `cp.async` destination",
            lane,
        )?;
        let source = lane_address(&warp.values, src, lane);
        // The source size was checked above.
        let read = src_size.map_or(len, |reg| (warp.values.get(reg, lane) & 0xffff_ffff) as u32);
        let mut read = read.min(len);
        if ignored >> lane & 1 != 0 {
            read = 0;
        }
        let mut bytes = [0u8; 16];
        if read > 0 {
            read_global(env, state, source, &mut bytes[..read as usize], lane)?;
            push_sectors(&mut state.sectors, source, read);
        }
        lanes |= 1 << lane;
        state.shared_addresses[lane] = offset;
        if let Some(races) = state.races.as_mut() {
            races.async_write_issued(thread, pc, u64::from(offset), len);
        }
        state.async_copies.copies.push(PendingCopy {
            thread,
            group: UNCOMMITTED,
            shared_offset: offset,
            len: size,
            bytes,
            pc,
        });
    }
    let counters = &mut state.stats.per_instruction[pc as usize];
    let verdict = if lanes != 0 {
        state
            .arbiter
            .get()
            .request(AccessKind::Store, len, lanes, &state.shared_addresses)
    } else {
        // A copy with every lane predicated off still takes a wavefront.
        warpsim_banks::Wavefronts {
            wavefronts: 1,
            ideal: 1,
        }
    };
    record_wavefronts(counters, verdict);
    state.last_wavefronts = verdict;
    if !state.sectors.is_empty() {
        record_sectors(counters, &mut state.sectors);
    }
    Ok(())
}

/// A lane's `cp.async` source: aligned to the copy's size, and its
/// source size (when given) no larger than the copy.
fn check_cp_async_source(
    warp: &Warp,
    src: LoweredAddress,
    src_size: Option<ValueReg>,
    len: u32,
    lane: usize,
) -> Result<(), Fault> {
    let source = lane_address(&warp.values, src, lane);
    if !source.is_multiple_of(u64::from(len)) {
        return Err(invalid(
            format!(
                "the `cp.async` source at global address {source:#x} is not {len}-byte aligned"
            ),
            lane as u32,
        ));
    }
    if let Some(reg) = src_size {
        let requested = warp.values.get(reg, lane) & 0xffff_ffff;
        if requested > u64::from(len) {
            return Err(invalid(
                format!("`cp.async` source size {requested} is larger than the copy's {len} bytes"),
                lane as u32,
            ));
        }
    }
    Ok(())
}

/// `cp.async.commit_group`: each lane's uncommitted copies become its
/// newest group.
pub(crate) fn commit_group(warp: &Warp, state: &mut BlockState, active: u32) {
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let thread = warp.index * WARP_SIZE as u32 + lane as u32;
        let asynchronous = &mut state.async_copies;
        let group = *asynchronous.committed_mut(thread);
        for copy in asynchronous
            .copies
            .iter_mut()
            .filter(|copy| copy.thread == thread && copy.group == UNCOMMITTED)
        {
            copy.group = group;
        }
        *asynchronous.committed_mut(thread) = group + 1;
    }
}

/// `cp.async.wait_group n` (`Some(n)`) and `cp.async.wait_all` (`None`):
/// completes each lane's copies but those of its `n` newest groups.
pub(crate) fn wait_group(
    env: &LaunchEnv,
    warp: &Warp,
    state: &mut BlockState,
    active: u32,
    pending: Option<u32>,
) {
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let thread = warp.index * WARP_SIZE as u32 + lane as u32;
        let committed = *state.async_copies.committed_mut(thread);
        let completes = |copy: &PendingCopy| {
            copy.thread == thread
                && match pending {
                    None => true,
                    Some(pending) => {
                        copy.group != UNCOMMITTED && copy.group + u64::from(pending) < committed
                    }
                }
        };
        complete_copies(env, warp, state, completes);
    }
}

/// Writes the copies `completes` picks into shared memory, as their
/// thread's writes now.
fn complete_copies(
    _env: &LaunchEnv,
    warp: &Warp,
    state: &mut BlockState,
    completes: impl Fn(&PendingCopy) -> bool,
) {
    if !state.async_copies.copies.iter().any(&completes) {
        return;
    }
    let copies = std::mem::take(&mut state.async_copies.copies);
    let epoch = crate::warp::barrier_openings(&state.barriers);
    for copy in copies {
        if !completes(&copy) {
            state.async_copies.copies.push(copy);
            continue;
        }
        let offset = copy.shared_offset as usize;
        let len = usize::from(copy.len);
        for (index, chunk) in copy.bytes[..len].chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            // The destination was checked when the copy issued.
            let _ = write_bytes(
                &mut state.shared,
                offset + 8 * index,
                chunk.len() as u32,
                u64::from_le_bytes(word),
            );
        }
        if let Some(written) = state.written.as_mut() {
            written.write_shared(offset, len);
        }
        if let Some(races) = state.races.as_mut() {
            races.async_write_completed(
                crate::racecheck::Accessor {
                    thread: copy.thread,
                    pc: copy.pc,
                    epoch,
                    instruction: state.instructions,
                    warp_syncs: warp.syncs,
                },
                u64::from(copy.shared_offset),
                u32::from(copy.len),
            );
        }
    }
    state.checker.last_progress = state.instructions;
}

/// `cp.async.mbarrier.arrive{.noinc}`: completes each lane's copies, then
/// arrives on the mbarrier (an arrival `init` counted only with `.noinc`).
pub(crate) fn cp_async_mbarrier_arrive(
    env: &LaunchEnv,
    warp: &Warp,
    state: &mut BlockState,
    active: u32,
    noinc: bool,
    addr: LoweredAddress,
) -> Result<(), Fault> {
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let thread = warp.index * WARP_SIZE as u32 + lane as u32;
        complete_copies(env, warp, state, |copy| copy.thread == thread);
        let offset = mbarrier_offset(state, StateSpace::Shared, warp, addr, lane)?;
        let barrier = existing(state, offset, lane)?;
        if noinc {
            arrive(barrier, 1, false, lane)?;
        }
    }
    Ok(())
}

/// `cp.async.bulk...mbarrier::complete_tx::bytes`: copies `size` bytes
/// now and completes as many transaction bytes on the mbarrier.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cp_async_bulk(
    env: &LaunchEnv,
    warp: &Warp,
    state: &mut BlockState,
    active: u32,
    dst: LoweredAddress,
    src: LoweredAddress,
    size: ValueReg,
    mbarrier: LoweredAddress,
) -> Result<(), Fault> {
    // A lane's copy, checked: its shared destination, global source, size
    // and mbarrier offset.
    let lane_copy = |state: &BlockState, lane: usize| -> Result<(u32, u64, u32, u32), Fault> {
        let len = (warp.values.get(size, lane) & 0xffff_ffff) as u32;
        if len == 0 || !len.is_multiple_of(16) {
            return Err(invalid(
                format!("`cp.async.bulk` copies a multiple of 16 bytes, not {len}"),
                lane as u32,
            ));
        }
        let offset = shared_offset(
            state,
            StateSpace::Shared,
            lane_address(&warp.values, dst, lane),
            len,
            16,
            "the `cp.async.bulk` destination",
            lane,
        )?;
        let source = lane_address(&warp.values, src, lane);
        if !source.is_multiple_of(16) {
            return Err(invalid(
                format!("the `cp.async.bulk` source at global address {source:#x} is not 16-byte aligned"),
                lane as u32,
            ));
        }
        let barrier = mbarrier_offset(state, StateSpace::Shared, warp, mbarrier, lane)?;
        Ok((offset, source, len, barrier))
    };
    check_every_lane(warp, active, |lane| lane_copy(state, lane).map(|_| ()))?;
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let (offset, source, len, barrier_offset) = lane_copy(state, lane)?;
        let (offset, len) = (offset as usize, len as usize);
        let mut bytes = vec![0u8; len];
        read_global(env, state, source, &mut bytes, lane)?;
        state.shared[offset..offset + len].copy_from_slice(&bytes);
        if let Some(written) = state.written.as_mut() {
            written.write_shared(offset, len);
        }
        let barrier = existing(state, barrier_offset, lane)?;
        complete_tx(barrier, len as i64, lane)?;
        state.checker.last_progress = state.instructions;
    }
    Ok(())
}

/// A lane's mbarrier address as a shared-memory offset: 8 bytes, aligned.
fn mbarrier_offset(
    state: &BlockState,
    space: StateSpace,
    warp: &Warp,
    addr: LoweredAddress,
    lane: usize,
) -> Result<u32, Fault> {
    let address = lane_address(&warp.values, addr, lane);
    shared_offset(state, space, address, 8, 8, "the mbarrier", lane)
}

fn existing(state: &mut BlockState, offset: u32, lane: usize) -> Result<&mut Mbarrier, Fault> {
    state
        .async_copies
        .mbarriers
        .get_mut(&offset)
        .ok_or_else(|| not_initialized(offset, lane))
}

fn not_initialized(offset: u32, lane: usize) -> Fault {
    invalid(
        format!("the mbarrier at shared address {offset:#x} is used before `mbarrier.init` (or after `mbarrier.inval`)"),
        lane as u32,
    )
}

/// Ends the phase when nothing is pending in it.
fn complete_phase_if_done(barrier: &mut Mbarrier) {
    if barrier.pending == 0 && barrier.tx_count == 0 {
        barrier.phase = barrier.phase.wrapping_add(1);
        barrier.pending = barrier.expected;
    }
}

fn arrive(barrier: &mut Mbarrier, count: u64, drop: bool, lane: usize) -> Result<(), Fault> {
    if count == 0 || count > MBARRIER_MAX_COUNT {
        return Err(invalid(
            format!("an mbarrier arrival counts 1 to {MBARRIER_MAX_COUNT}, not {count}"),
            lane as u32,
        ));
    }
    if count > u64::from(barrier.pending) {
        return Err(invalid(
            format!(
                "an arrival of {count} on an mbarrier with {} arrivals pending in phase {}",
                barrier.pending, barrier.phase
            ),
            lane as u32,
        ));
    }
    barrier.pending -= count as u32;
    if drop {
        barrier.expected = barrier.expected.saturating_sub(count as u32);
    }
    complete_phase_if_done(barrier);
    Ok(())
}

fn complete_tx(barrier: &mut Mbarrier, bytes: i64, lane: usize) -> Result<(), Fault> {
    if bytes > barrier.tx_count {
        return Err(invalid(
            format!(
                "the mbarrier's transaction count goes negative: {bytes} bytes complete where {} were expected in phase {}",
                barrier.tx_count, barrier.phase
            ),
            lane as u32,
        ));
    }
    barrier.tx_count -= bytes;
    complete_phase_if_done(barrier);
    Ok(())
}

/// One `mbarrier` instruction, lane by lane in lane order.
pub(crate) fn mbarrier(
    warp: &mut Warp,
    state: &mut BlockState,
    active: u32,
    action: MbarrierAction,
    space: StateSpace,
    addr: LoweredAddress,
) -> Result<(), Fault> {
    let value = |warp: &Warp, reg: ValueReg, lane: usize| warp.values.get(reg, lane) & 0xffff_ffff;
    check_every_lane(warp, active, |lane| {
        let offset = mbarrier_offset(state, space, warp, addr, lane)?;
        let count = match action {
            MbarrierAction::Init { count } => {
                let count = value(warp, count, lane);
                if count == 0 || count > MBARRIER_MAX_COUNT {
                    return Err(invalid(
                        format!(
                            "an mbarrier expects 1 to {MBARRIER_MAX_COUNT} arrivals, not {count}"
                        ),
                        lane as u32,
                    ));
                }
                return Ok(());
            }
            MbarrierAction::Arrive { count, .. } => count.map_or(1, |reg| value(warp, reg, lane)),
            _ => 1,
        };
        if count == 0 || count > MBARRIER_MAX_COUNT {
            return Err(invalid(
                format!("an mbarrier arrival counts 1 to {MBARRIER_MAX_COUNT}, not {count}"),
                lane as u32,
            ));
        }
        if !state.async_copies.mbarriers.contains_key(&offset) {
            return Err(not_initialized(offset, lane));
        }
        Ok(())
    })?;
    let mut done_lanes = 0u32;
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let offset = mbarrier_offset(state, space, warp, addr, lane)?;
        match action {
            MbarrierAction::Init { count } => {
                let count = value(warp, count, lane);
                if count == 0 || count > MBARRIER_MAX_COUNT {
                    return Err(invalid(
                        format!(
                            "an mbarrier expects 1 to {MBARRIER_MAX_COUNT} arrivals, not {count}"
                        ),
                        lane as u32,
                    ));
                }
                state.async_copies.mbarriers.insert(
                    offset,
                    Mbarrier {
                        phase: 0,
                        pending: count as u32,
                        expected: count as u32,
                        tx_count: 0,
                    },
                );
                if let Some(written) = state.written.as_mut() {
                    written.write_shared(offset as usize, 8);
                }
            }
            MbarrierAction::Arrive {
                drop,
                state: state_reg,
                count,
                expect_tx,
            } => {
                let count = count.map_or(1, |reg| value(warp, reg, lane));
                let tx = expect_tx.map_or(0, |reg| value(warp, reg, lane));
                let barrier = existing(state, offset, lane)?;
                let before = u64::from(barrier.phase) << 32 | u64::from(barrier.pending);
                barrier.tx_count += tx as i64;
                arrive(barrier, count, drop, lane)?;
                if let Some(reg) = state_reg {
                    warp.values.set(reg, lane, before);
                }
            }
            MbarrierAction::ExpectTx { bytes } => {
                let bytes = value(warp, bytes, lane);
                existing(state, offset, lane)?.tx_count += bytes as i64;
            }
            MbarrierAction::CompleteTx { bytes } => {
                let bytes = value(warp, bytes, lane) as i64;
                complete_tx(existing(state, offset, lane)?, bytes, lane)?;
            }
            MbarrierAction::Wait { parity, phase, .. } => {
                let operand = warp.values.get(phase, lane);
                let barrier = existing(state, offset, lane)?;
                let done = if parity {
                    u64::from(barrier.phase & 1) != operand & 1
                } else {
                    u64::from(barrier.phase) != operand >> 32
                };
                done_lanes |= u32::from(done) << lane;
            }
            MbarrierAction::Invalidate => {
                existing(state, offset, lane)?;
                state.async_copies.mbarriers.remove(&offset);
            }
        }
    }
    match action {
        MbarrierAction::Wait { done, .. } => warp.set_pred(done, active, done_lanes),
        // Every other action changes the block's state: progress for the
        // livelock detector.
        _ => state.checker.last_progress = state.instructions,
    }
    Ok(())
}

/// `mbarrier.pending_count.b64 count, state`: the count the state holds.
pub(crate) fn pending_count(warp: &mut Warp, active: u32, dst: ValueReg, state: ValueReg) {
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 != 0 {
            let value = warp.values.get(state, lane) & 0xffff_ffff;
            warp.values.set(dst, lane, value);
        }
    }
}
