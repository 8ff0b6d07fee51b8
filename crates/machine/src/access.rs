//! Where a byte lives: the lanes of a memory instruction resolved to shared,
//! local, global, parameter or constant memory, loaded, stored or updated
//! atomically, with the bank arbiter's wavefronts for shared memory, the
//! 32-byte sectors of global accesses, and the initialization checker's view.
//!
//! State spaces and generic addressing follow the PTX ISA (section 5.1,
//! "State Spaces", and 6.4.1, "Generic Addressing").

use warpsim_banks::AccessKind;
use warpsim_ir::{AtomOp, StateSpace};

use crate::arith::{self, f32_bits, f32_of, sign_extend, width_mask};
use crate::block::{BlockState, LaunchEnv};
use crate::error::*;
use crate::initcheck::ReadSpace;
use crate::memory::{
    read_bytes, size_mask, write_bytes, CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW,
    WINDOW_SIZE,
};
use crate::printf;
use crate::program::*;
use crate::semantics::{fault, Fault};
use crate::stats::InstrStats;
use crate::store_buffer::{AtomicResult, PendingAtomic};
use crate::warp::{RegisterFile, Warp, WARP_SIZE};
use crate::weak_memory::{AccessOrdering, GlobalThread, WeakMemory};

/// Where a lane's access goes once its address is resolved.
#[derive(Clone, Copy)]
pub(crate) enum Target {
    Shared(u64),
    Local(u64),
    Global(u64),
    Param(u64),
    Const(u64),
}

impl Target {
    /// The state space the access lands in.
    fn space(self) -> StateSpace {
        match self {
            Target::Shared(_) => StateSpace::Shared,
            Target::Local(_) => StateSpace::Local,
            Target::Global(_) => StateSpace::Global,
            Target::Param(_) => StateSpace::Param,
            Target::Const(_) => StateSpace::Const,
        }
    }

    /// Where a global access lies among the buffers.
    fn place(self, env: &LaunchEnv) -> Option<GlobalPlace> {
        match self {
            Target::Global(address) => Some(env.global.place(address)),
            _ => None,
        }
    }
}

/// The address `addr` names from its base register's value `base`.
#[inline(always)]
fn offset_from(base: u64, addr: LoweredAddress) -> u64 {
    let sum = base.wrapping_add(addr.offset as u64);
    if addr.base_bits <= 32 {
        sum & 0xffff_ffff
    } else {
        sum
    }
}

/// Computes a lane's address.
#[inline(always)]
pub(crate) fn lane_address(values: &RegisterFile, addr: LoweredAddress, lane: usize) -> u64 {
    match addr.base {
        Some(reg) => offset_from(values.get(reg, lane), addr),
        None => addr.offset as u64,
    }
}

/// Every lane's address, the base register read once for the warp.
#[inline(always)]
fn lane_addresses(values: &RegisterFile, addr: LoweredAddress) -> [u64; WARP_SIZE] {
    let Some(reg) = addr.base else {
        return [addr.offset as u64; WARP_SIZE];
    };
    let mut addresses = values.read(reg);
    for address in &mut addresses {
        *address = offset_from(*address, addr);
    }
    addresses
}

/// A lane's address and where it goes, once it passed the alignment every
/// access of `size` bytes needs (PTX requires natural alignment).
#[inline(always)]
pub(crate) fn lane_target(
    env: &LaunchEnv,
    values: &RegisterFile,
    addr: LoweredAddress,
    lane: usize,
    space: StateSpace,
    size: u32,
) -> Result<(u64, Target), Fault> {
    let address = lane_address(values, addr, lane);
    let target = resolve(space, address);
    if address & (u64::from(size) - 1) != 0 {
        return Err(fault(
            FaultKind::Misaligned {
                space,
                address,
                size,
                place: target.place(env),
            },
            lane as u32,
        ));
    }
    Ok((address, target))
}

/// Resolves a generic address into its window.
#[inline(always)]
pub(crate) fn resolve(space: StateSpace, address: u64) -> Target {
    match space {
        StateSpace::Shared => Target::Shared(address),
        StateSpace::Local => Target::Local(address),
        StateSpace::Param => Target::Param(address),
        StateSpace::Const => Target::Const(address),
        StateSpace::Global => Target::Global(address),
        StateSpace::Generic => {
            if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&address) {
                Target::Shared(address - SHARED_WINDOW)
            } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&address) {
                Target::Local(address - LOCAL_WINDOW)
            } else if (CONST_WINDOW..CONST_WINDOW + WINDOW_SIZE).contains(&address) {
                Target::Const(address - CONST_WINDOW)
            } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&address) {
                Target::Param(address - PARAM_WINDOW)
            } else {
                Target::Global(address)
            }
        }
    }
}

/// A load or store of `count` elements for every active lane, with the bank
/// arbiter's verdict for shared memory and the sectors for global memory.
#[allow(clippy::too_many_arguments)]
pub(crate) fn memory_access(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    space: StateSpace,
    order: warpsim_ir::MemoryOrder,
    value: MemoryValue,
    registers: &[u32; 4],
    count: u8,
    addr: LoweredAddress,
    store: bool,
) -> Result<(), Fault> {
    let size = u32::from(value.size);
    let total = size * u32::from(count);
    let request = Request {
        pc,
        active,
        value,
        registers: &registers[..usize::from(count)],
        addr,
        store,
    };
    let window = match space {
        StateSpace::Shared => state.written.is_none() && state.races.is_none(),
        StateSpace::Param | StateSpace::Const => !store,
        _ => false,
    };
    if window && window_access(env, warp, state, space, request) {
        return Ok(());
    }
    if space == StateSpace::Global
        && env.weak_memory.is_none()
        && env.global_races.is_none()
        && global_access(env, warp, state, request)
    {
        return Ok(());
    }
    // Global, `.param` and `.const` memory always have contents.
    let may_reach_tracked = matches!(
        space,
        StateSpace::Shared | StateSpace::Local | StateSpace::Generic
    );
    if may_reach_tracked && state.written.is_some() {
        // Before the lanes run: a load may overwrite its address register.
        let access = InitAccess {
            reads: !store,
            writes: store,
            atomic: false,
        };
        observe_initialization(env, warp, state, pc, active, space, addr, total, access);
    }
    let mut shared_lanes = 0u32;
    let mut global_lanes = 0u32;
    // The race checker's view of this instruction: the block's barrier
    // epoch (every barrier opening adds one generation), this dynamic
    // instruction, the warp's synchronizations.
    let race_accessor = state.races.is_some().then(|| crate::racecheck::Accessor {
        thread: 0,
        pc,
        epoch: crate::warp::barrier_openings(&state.barriers),
        instruction: state.instructions,
        warp_syncs: warp.syncs,
    });
    begin_request(state);
    // Where the warp's local memory starts for the caches, once per
    // instruction, when a lane reaches local memory.
    let mut local_base = None;
    // The global race checker, locked once per instruction.
    let mut global_races = env.global_races();
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let (address, target) = lane_target(env, &warp.values, addr, lane, space, total)?;
        let thread = warp.index as usize * WARP_SIZE + lane;
        match target {
            Target::Shared(offset) => {
                shared_lanes |= 1 << lane;
                state.shared_addresses[lane] = offset as u32;
                if let (Some(races), Some(accessor)) = (&mut state.races, race_accessor) {
                    let accessor = crate::racecheck::Accessor {
                        thread: thread as u32,
                        ..accessor
                    };
                    races.observe(accessor, offset, total, store);
                }
            }
            Target::Global(address) => {
                global_lanes |= 1 << lane;
                state.global_bytes += total;
                push_sectors(&mut state.sectors, address, total);
                if let Some(races) = global_races.as_mut() {
                    let accessor = global_accessor(env, state, warp, lane, pc);
                    let ordering = AccessOrdering::of_access(order);
                    let value = (store && count == 1)
                        .then(|| warp.values.get(registers[0], lane) & size_mask(size));
                    races.observe(
                        accessor,
                        crate::global_races::GlobalAccess {
                            address,
                            len: total,
                            reads: !store,
                            writes: store,
                            ordering,
                            atomic: false,
                            value,
                        },
                    );
                }
            }
            Target::Local(offset) => {
                let base = *local_base
                    .get_or_insert_with(|| local_timing_base(env, state.block_index, warp.index));
                state.local_bytes += total;
                push_sectors(
                    &mut state.local_sectors,
                    local_timing_address(base, lane, offset),
                    total,
                );
            }
            _ => {}
        }
        for (element, &register) in registers.iter().enumerate().take(usize::from(count)) {
            let element_offset = (element as u32 * size) as u64;
            let out_of_bounds = || out_of_bounds(env, target, address, total, store, lane);
            if store {
                let bits = warp.values.get(register, lane) & size_mask(size);
                let written = match target {
                    Target::Shared(offset) => write_bytes(
                        &mut state.shared,
                        (offset + element_offset) as usize,
                        size,
                        bits,
                    ),
                    Target::Local(offset) => local_index(
                        env.program.local_bytes,
                        thread,
                        offset,
                        element_offset,
                        total,
                    )
                    .and_then(|start| write_bytes(&mut state.local, start, size, bits)),
                    Target::Global(address) => match env.weak_memory {
                        Some(weak) => {
                            let thread = global_thread(env, state, warp, lane);
                            crate::weak_memory::perform_pending(weak, env, warp, state, |load| {
                                load.thread == thread
                                    && load.word >> 2 == (address + element_offset) >> 2
                            });
                            weak_store(
                                env,
                                weak,
                                thread,
                                address + element_offset,
                                size,
                                bits,
                                order,
                            )
                        }
                        None => state
                            .stores
                            .write(env.global, address + element_offset, size, bits)
                            .ok(),
                    },
                    Target::Param(_) | Target::Const(_) => {
                        return Err(fault(
                            FaultKind::InvalidAccess {
                                message: "the .param and .const spaces are read-only".to_string(),
                            },
                            lane as u32,
                        ))
                    }
                };
                written.ok_or_else(out_of_bounds)?;
            } else {
                let raw = match (env.weak_memory, target) {
                    (Some(weak), Target::Global(address)) if size == 4 => {
                        let load = crate::weak_memory::PendingLoad {
                            warp: warp.index,
                            lane: lane as u8,
                            register,
                            value,
                            thread: global_thread(env, state, warp, lane),
                            word: address + element_offset,
                            ordering: AccessOrdering::of_access(order),
                        };
                        match crate::weak_memory::load_or_defer(weak, env, warp, state, load) {
                            Some(Some(raw)) => Some(raw),
                            Some(None) => continue,
                            None => None,
                        }
                    }
                    _ => load(env, state, target, thread, element_offset, size, total),
                }
                .ok_or_else(out_of_bounds)?;
                warp.values.set(register, lane, extend_loaded(raw, value));
            }
        }
    }
    let counters = &mut state.stats.per_instruction[pc as usize];
    if shared_lanes != 0 {
        let kind = if store {
            AccessKind::Store
        } else {
            AccessKind::Load
        };
        let verdict =
            state
                .arbiter
                .get()
                .request(kind, total, shared_lanes, &state.shared_addresses);
        record_wavefronts(counters, verdict);
        state.last_wavefronts = verdict;
    }
    if global_lanes != 0 {
        record_sectors(counters, &mut state.sectors);
    }
    Ok(())
}

/// One warp's load or store as the whole-warp paths take it.
#[derive(Clone, Copy)]
struct Request<'r> {
    pc: u32,
    active: u32,
    value: MemoryValue,
    /// The registers loaded or stored, one per element.
    registers: &'r [u32],
    addr: LoweredAddress,
    store: bool,
}

impl Request<'_> {
    /// The bytes each lane moves.
    fn total(&self) -> u32 {
        u32::from(self.value.size) * self.registers.len() as u32
    }
}

/// Forgets the sectors and wavefronts of the block's previous request.
#[inline(always)]
fn begin_request(state: &mut BlockState) {
    state.sectors.clear();
    state.local_sectors.clear();
    state.global_bytes = 0;
    state.local_bytes = 0;
    state.last_wavefronts = warpsim_banks::Wavefronts::default();
}

/// Every lane's address, or `None` when an active lane's access of `total`
/// bytes is misaligned (a vector access is aligned to its whole size, as
/// `lane_target` checks) or not `in_bounds`.
#[inline(always)]
fn warp_addresses(
    values: &RegisterFile,
    request: &Request,
    in_bounds: impl Fn(u64) -> bool,
) -> Option<[u64; WARP_SIZE]> {
    let total = u64::from(request.total());
    let addresses = lane_addresses(values, request.addr);
    // Every lane tested, active or not, without short circuits: a loop
    // with no branches, which vectorises.
    let misfits = crate::semantics::lane_mask(|lane| {
        let address = addresses[lane];
        (address & (total - 1) != 0) | !in_bounds(address)
    });
    (misfits & request.active == 0).then_some(addresses)
}

/// Loads each active lane's elements from `bytes` at its offset (every
/// access in bounds: [`warp_addresses`] said so), lane by lane.
#[inline(always)]
fn load_lanes(
    values: &mut RegisterFile,
    bytes: &[u8],
    offsets: &[u64; WARP_SIZE],
    request: &Request,
) {
    let size = u32::from(request.value.size);
    if let (&[register], 1 | 2 | 4 | 8) = (request.registers, size) {
        // One element a lane, the common case: gathered, then written to
        // the register in one pass rather than lane by lane. Every active
        // lane's bytes are in bounds, so each read gives a value.
        let loaded = crate::semantics::map_active(request.active, |lane| {
            let raw = read_bytes(bytes, offsets[lane] as usize, size);
            debug_assert!(raw.is_some(), "lane {lane} reads past the window");
            raw.map_or(0, |raw| extend_loaded(raw, request.value))
        });
        values.write(register, request.active, &loaded);
        return;
    }
    for (lane, &offset) in offsets.iter().enumerate() {
        if request.active >> lane & 1 == 0 {
            continue;
        }
        for (element, &register) in request.registers.iter().enumerate() {
            let start = offset as usize + element * size as usize;
            if let Some(raw) = read_bytes(bytes, start, size) {
                values.set(register, lane, extend_loaded(raw, request.value));
            }
        }
    }
}

/// [`memory_access`] for an instruction that names the shared space, or
/// loads from the parameters or the constants, when no checker watches:
/// every active lane's address is worked out and checked first, then the
/// lanes move their bytes in lane order, as the general path does.
/// Returns `false`, having changed nothing, when a lane is misaligned or
/// out of bounds (the general path then reports it), or for a store to a
/// read-only space.
#[inline(always)]
fn window_access(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    space: StateSpace,
    request: Request,
) -> bool {
    let size = u32::from(request.value.size);
    let read_only = match space {
        StateSpace::Param => env.params,
        StateSpace::Const => &env.program.const_data[..],
        _ => &[][..],
    };
    let len = if space == StateSpace::Shared {
        state.shared.len()
    } else {
        read_only.len()
    } as u64;
    let total = u64::from(request.total());
    // The largest offset at which `total` bytes fit, if any: one compare a
    // lane, which vectorises, where `offset + total <= len` needs a check
    // for overflow.
    let (fits_anywhere, last_start) = match len.checked_sub(total) {
        Some(last_start) => (true, last_start),
        None => (false, 0),
    };
    let Some(offsets) = warp_addresses(&warp.values, &request, |offset| {
        fits_anywhere & (offset <= last_start)
    }) else {
        return false;
    };
    begin_request(state);
    if space != StateSpace::Shared {
        let first_lane = request.active.trailing_zeros() as usize;
        if let Some(&offset) = offsets.get(first_lane) {
            let window = if space == StateSpace::Param {
                crate::memory::PARAM_WINDOW
            } else {
                crate::memory::CONST_WINDOW
            };
            state.constant_address = window + offset;
        }
        load_lanes(&mut warp.values, read_only, &offsets, &request);
        return true;
    }
    if let (true, &[register]) = (request.store, request.registers) {
        // One element a lane, the common case: the register read once.
        let lanes = warp.values.read(register);
        for (lane, &offset) in offsets.iter().enumerate() {
            if request.active >> lane & 1 != 0 {
                // In bounds: `warp_addresses` said so.
                write_bytes(
                    &mut state.shared,
                    offset as usize,
                    size,
                    lanes[lane] & size_mask(size),
                );
            }
        }
    } else if request.store {
        for (lane, &offset) in offsets.iter().enumerate() {
            if request.active >> lane & 1 == 0 {
                continue;
            }
            for (element, &register) in request.registers.iter().enumerate() {
                let bits = warp.values.get(register, lane) & size_mask(size);
                // In bounds: `warp_addresses` said so.
                write_bytes(
                    &mut state.shared,
                    offset as usize + element * size as usize,
                    size,
                    bits,
                );
            }
        }
    } else {
        load_lanes(&mut warp.values, &state.shared, &offsets, &request);
    }
    if request.active == 0 {
        return true;
    }
    // In bounds of shared memory, so each fits in 32 bits.
    state.shared_addresses = offsets.map(|offset| offset as u32);
    let kind = if request.store {
        AccessKind::Store
    } else {
        AccessKind::Load
    };
    let verdict = state.arbiter.get().request(
        kind,
        request.total(),
        request.active,
        &state.shared_addresses,
    );
    record_wavefronts(
        &mut state.stats.per_instruction[request.pc as usize],
        verdict,
    );
    state.last_wavefronts = verdict;
    true
}

/// [`memory_access`] for an instruction that names the global space, when
/// neither the explore model's weak memory nor the global race checker
/// watches, as [`window_access`]: addresses checked first, then the lanes'
/// sectors and bytes in lane order. Returns `false`, having changed
/// nothing, when a lane is misaligned or out of bounds.
#[inline(always)]
fn global_access(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    request: Request,
) -> bool {
    let size = u32::from(request.value.size);
    let total = request.total();
    let Some(addresses) = warp_addresses(&warp.values, &request, |address| {
        env.global.check(address, total).is_ok()
    }) else {
        return false;
    };
    begin_request(state);
    if request.active == 0 {
        return true;
    }
    state.global_bytes = request.active.count_ones() * total;
    for (lane, &address) in addresses.iter().enumerate() {
        if request.active >> lane & 1 == 0 {
            continue;
        }
        push_sectors(&mut state.sectors, address, total);
        for (element, &register) in request.registers.iter().enumerate() {
            let element_address = address + u64::from(element as u32 * size);
            // In bounds: checked above for the whole access.
            if request.store {
                let bits = warp.values.get(register, lane) & size_mask(size);
                state.stores.write_checked(element_address, size, bits);
            } else if let Ok(raw) = state.stores.read(env.global, element_address, size) {
                warp.values
                    .set(register, lane, extend_loaded(raw, request.value));
            }
        }
    }
    record_sectors(
        &mut state.stats.per_instruction[request.pc as usize],
        &mut state.sectors,
    );
    true
}

/// What a memory instruction does to the bytes it touches, for the
/// initialization checker.
#[derive(Clone, Copy)]
pub(crate) struct InitAccess {
    pub(crate) reads: bool,
    pub(crate) writes: bool,
    pub(crate) atomic: bool,
}

/// The initialization checker's part of a memory instruction of `total`
/// bytes per lane, run before its lanes are: reads of shared or local bytes
/// not yet written are reported (shared and local lanes apart, as a generic
/// load may reach both), then the bytes it writes are marked. Bytes outside
/// the memory count as written (that access faults when the lanes run), and
/// a misaligned access is looked at like any other: its fault ends the
/// block right after.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn observe_initialization(
    env: &LaunchEnv,
    warp: &Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    space: StateSpace,
    addr: LoweredAddress,
    total: u32,
    access: InitAccess,
) {
    let BlockState {
        written: Some(written),
        checker,
        ..
    } = state
    else {
        return;
    };
    let local_bytes = env.program.local_bytes;
    let len = total as usize;
    let active_lanes = || {
        let mut pending = active;
        std::iter::from_fn(move || {
            let lane = pending.trailing_zeros() as usize;
            pending &= pending.wrapping_sub(1);
            (lane < WARP_SIZE).then_some(lane)
        })
    };
    if access.reads {
        // Per memory: the lanes, and the bytes they read (first, end).
        let mut shared = (0u32, u64::MAX, 0u64);
        let mut local = (0u32, u64::MAX, 0u64);
        for lane in active_lanes() {
            let address = lane_address(&warp.values, addr, lane);
            let thread = warp.index as usize * WARP_SIZE + lane;
            let (reads, offset) = match resolve(space, address) {
                Target::Shared(offset) if !written.shared_written(offset as usize, len) => {
                    (&mut shared, offset)
                }
                Target::Local(offset) => match local_index(local_bytes, thread, offset, 0, total) {
                    Some(index) if !written.local_written(index, len) => (&mut local, offset),
                    _ => continue,
                },
                _ => continue,
            };
            reads.0 |= 1 << lane;
            reads.1 = reads.1.min(offset);
            reads.2 = reads.2.max(offset + u64::from(total));
        }
        for (space, (lanes, first, end)) in [(ReadSpace::Shared, shared), (ReadSpace::Local, local)]
        {
            if lanes != 0 {
                checker.uninitialized_read(pc, space, access.atomic, warp.index, lanes, first, end);
            }
        }
    }
    if access.writes {
        for lane in active_lanes() {
            let address = lane_address(&warp.values, addr, lane);
            let thread = warp.index as usize * WARP_SIZE + lane;
            match resolve(space, address) {
                Target::Shared(offset) => written.write_shared(offset as usize, len),
                Target::Local(offset) => {
                    if let Some(index) = local_index(local_bytes, thread, offset, 0, total) {
                        written.write_local(index, len);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Element `element_offset` (of `size` bytes) of a `total`-byte load by
/// `thread` from `target`, or `None` when the access falls outside its space.
#[inline(always)]
pub(crate) fn load(
    env: &LaunchEnv,
    state: &BlockState,
    target: Target,
    thread: usize,
    element_offset: u64,
    size: u32,
    total: u32,
) -> Option<u64> {
    match target {
        Target::Shared(offset) => {
            read_bytes(&state.shared, (offset + element_offset) as usize, size)
        }
        Target::Local(offset) => local_index(
            env.program.local_bytes,
            thread,
            offset,
            element_offset,
            total,
        )
        .and_then(|start| read_bytes(&state.local, start, size)),
        Target::Global(address) => state
            .stores
            .read(env.global, address + element_offset, size)
            .ok(),
        Target::Param(offset) => read_bytes(env.params, (offset + element_offset) as usize, size),
        Target::Const(offset) => read_bytes(
            &env.program.const_data,
            (offset + element_offset) as usize,
            size,
        ),
    }
}

/// `size` bytes at a generic `address`, as `thread` of the block sees them.
pub(crate) fn read_generic(
    env: &LaunchEnv,
    state: &BlockState,
    thread: usize,
    address: u64,
    size: u32,
) -> Option<u64> {
    let target = resolve(StateSpace::Generic, address);
    load(env, state, target, thread, 0, size, size)
}

/// The NUL-terminated string at a generic `address` (at most
/// [`printf::MAX_STRING_BYTES`]; what cannot be read ends it).
pub(crate) fn read_string(
    env: &LaunchEnv,
    state: &BlockState,
    thread: usize,
    address: u64,
) -> Vec<u8> {
    let mut text = Vec::new();
    while text.len() < printf::MAX_STRING_BYTES {
        match read_generic(
            env,
            state,
            thread,
            address.wrapping_add(text.len() as u64),
            1,
        ) {
            Some(0) | None => break,
            Some(byte) => text.push(byte as u8),
        }
    }
    text
}

/// What `printf` reads of one lane's memory.
pub(crate) struct LaneMemory<'a> {
    env: &'a LaunchEnv<'a>,
    state: &'a BlockState,
    thread: usize,
    arguments: u64,
}

impl printf::PrintfMemory for LaneMemory<'_> {
    fn argument(&mut self, offset: u64, size: u32) -> Option<u64> {
        let address = self.arguments.checked_add(offset)?;
        read_generic(self.env, self.state, self.thread, address, size)
    }

    fn string(&mut self, address: u64) -> Option<Vec<u8>> {
        Some(read_string(self.env, self.state, self.thread, address))
    }
}

/// `vprintf` for every active lane, in lane order: the text goes to the
/// block's output (up to the launch's printf buffer), the number of
/// arguments taken to `dst`.
#[cold]
pub(crate) fn printf(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    active: u32,
    dst: Option<ValueReg>,
    format: ValueReg,
    arguments: ValueReg,
) {
    let limit = env.config.limits.printf_buffer_bytes;
    let mut text = Vec::new();
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let thread = warp.index as usize * WARP_SIZE + lane;
        let format_address = warp.values.get(format, lane);
        // A null format prints nothing and returns -1 (CUDA C++
        // Programming Guide, "Formatted Output").
        let taken = if format_address == 0 {
            -1
        } else {
            let format_text = read_string(env, state, thread, format_address);
            let mut memory = LaneMemory {
                env,
                state,
                thread,
                arguments: warp.values.get(arguments, lane),
            };
            text.clear();
            let taken = printf::format(&format_text, &mut memory, &mut text);
            if (state.printed.len() + text.len()) as u64 <= limit {
                state.printed.extend_from_slice(&text);
            } else {
                state.printed_dropped += text.len() as u64;
            }
            taken
        };
        if let Some(dst) = dst {
            warp.values.set(dst, lane, u64::from(taken as u32));
        }
    }
}

/// A lane's access of `size` bytes at `address`, landing in `target`, falls
/// outside its space. (Not `#[cold]`: `fault` is, and marking this one too
/// makes `memory_access`'s lane loop some 8% longer.)
pub(crate) fn out_of_bounds(
    env: &LaunchEnv,
    target: Target,
    address: u64,
    size: u32,
    store: bool,
    lane: usize,
) -> Fault {
    fault(
        FaultKind::OutOfBounds {
            space: target.space(),
            address,
            size,
            store,
            place: target.place(env),
        },
        lane as u32,
    )
}

/// Where element `element_offset` of a `total`-byte access at `offset` of a
/// thread's local window lies in the block's local array, if the whole access
/// fits the window.
#[inline(always)]
pub(crate) fn local_index(
    local_bytes: u32,
    thread: usize,
    offset: u64,
    element_offset: u64,
    total: u32,
) -> Option<usize> {
    let local_bytes = u64::from(local_bytes);
    let end = offset.checked_add(u64::from(total))?;
    (end <= local_bytes).then(|| (thread as u64 * local_bytes + offset + element_offset) as usize)
}

/// Where the hardware keeps the local memory of warp `warp` of `block`, for
/// the timing model's L1: each warp of each block has its own range, in a
/// window no real address reaches (only the caches' tags see it).
fn local_timing_base(env: &LaunchEnv, block: [u32; 3], warp: u32) -> u64 {
    const LOCAL_TIMING_WINDOW: u64 = 1 << 62;
    let [x, y, z] = block;
    let [gx, gy, _] = env.grid;
    let linear_block = u64::from(x) + u64::from(gx) * (u64::from(y) + u64::from(gy) * u64::from(z));
    let warps = env.warps_per_block() as u64;
    let warp_bytes = u64::from(env.program.local_bytes).next_multiple_of(4) * WARP_SIZE as u64;
    LOCAL_TIMING_WINDOW
        .wrapping_add((linear_block * warps + u64::from(warp)).wrapping_mul(warp_bytes))
}

/// Where the hardware keeps byte `offset` of lane `lane`'s local memory,
/// in its warp's range starting at `base` (`local_timing_base`): local
/// memory is interleaved word by word across the threads of a warp (CUDA
/// C++ Best Practices Guide, "Local Memory"), so that the same word of
/// every lane is one 128-byte line.
fn local_timing_address(base: u64, lane: usize, offset: u64) -> u64 {
    base.wrapping_add(offset / 4 * 4 * WARP_SIZE as u64)
        .wrapping_add(lane as u64 * 4)
        .wrapping_add(offset % 4)
}

/// Records the 32-byte sectors an access touches. Neighbouring lanes usually
/// touch the same sector, so repeats of the last one are dropped at once and
/// the final sort has little left to do.
#[inline(always)]
pub(crate) fn push_sectors(sectors: &mut Vec<u64>, address: u64, size: u32) {
    let first = address >> 5;
    // `address` is aligned to `size`, so this cannot pass the top of memory.
    let last = (address + (u64::from(size) - 1)) >> 5;
    for sector in first..=last {
        if sectors.last() != Some(&sector) {
            sectors.push(sector);
        }
    }
}

/// One global request: the distinct 32-byte sectors its lanes touched.
pub(crate) fn record_sectors(counters: &mut InstrStats, sectors: &mut Vec<u64>) {
    sectors.sort_unstable();
    sectors.dedup();
    counters.global_requests += 1;
    counters.sectors += sectors.len() as u64;
}

pub(crate) fn record_wavefronts(counters: &mut InstrStats, verdict: warpsim_banks::Wavefronts) {
    counters.shared_requests += 1;
    counters.wavefronts += u64::from(verdict.wavefronts);
    counters.ideal_wavefronts += u64::from(verdict.ideal);
    counters.bank_conflicts += u64::from(verdict.conflicts());
}

/// A loaded value as its destination register holds it: sub-word loads
/// sign- or zero-extended, upper bits beyond the register's width clear.
pub(crate) fn extend_loaded(raw: u64, value: MemoryValue) -> u64 {
    if value.sign_extend && value.size < 8 {
        sign_extend(raw, value.size * 8) as u64 & width_mask(value.register_bits)
    } else {
        raw
    }
}

/// The launch-wide name of `lane` of `warp`, for the explore model's weak
/// memory.
pub(crate) fn global_thread(
    env: &LaunchEnv,
    state: &BlockState,
    warp: &Warp,
    lane: usize,
) -> GlobalThread {
    let [x, y, z] = state.block_index.map(u64::from);
    let [grid_x, grid_y, _] = env.grid.map(u64::from);
    GlobalThread {
        block: x + grid_x * (y + grid_y * z),
        thread: warp.index * WARP_SIZE as u32 + lane as u32,
    }
}

/// An instruction that orders memory for the threads that run it, beside
/// their accesses: a fence, or an arrival at a block barrier (a CTA-scope
/// release and acquire).
#[derive(Clone, Copy, Debug)]
pub(crate) enum OrderingPoint {
    Fence(warpsim_ir::FenceKind, warpsim_ir::Scope),
    /// `id`: the value register holding the barrier's number.
    Barrier {
        id: u32,
    },
}

/// The `active` lanes of `warp` reach `point`: the explore model's weak
/// memory and the global race checker, when on, order around it.
pub(crate) fn order_lanes(
    env: &LaunchEnv,
    state: &BlockState,
    warp: &Warp,
    active: u32,
    point: OrderingPoint,
) {
    let mut global_races = env.global_races();
    if env.weak_memory.is_none() && global_races.is_none() {
        return;
    }
    let epoch = crate::warp::barrier_openings(&state.barriers);
    for lane in (0..WARP_SIZE).filter(|lane| active >> lane & 1 != 0) {
        let thread = global_thread(env, state, warp, lane);
        match point {
            OrderingPoint::Fence(kind, scope) => {
                if let Some(races) = global_races.as_mut() {
                    races.fence(thread, epoch, scope);
                }
                if let Some(weak) = env.weak_memory {
                    weak.fence(thread, kind, scope);
                }
            }
            OrderingPoint::Barrier { id } => {
                if let Some(races) = global_races.as_mut() {
                    races.arrive_at_barrier(thread, epoch);
                }
                // An id out of range faults when the barrier runs.
                let barrier = warp.values.get(id, lane) as u32;
                if let (Some(weak), Some(opening)) =
                    (env.weak_memory, state.barriers.get(barrier as usize))
                {
                    weak.arrive_at_barrier(thread, barrier, opening.generation);
                }
            }
        }
    }
}

/// Where a global access of `lane` comes from, for the race checker.
pub(crate) fn global_accessor(
    env: &LaunchEnv,
    state: &BlockState,
    warp: &Warp,
    lane: usize,
    pc: u32,
) -> crate::global_races::GlobalAccessor {
    crate::global_races::GlobalAccessor {
        thread: global_thread(env, state, warp, lane),
        block_index: state.block_index,
        epoch: crate::warp::barrier_openings(&state.barriers),
        instruction: state.instructions,
        warp_syncs: warp.syncs,
        pc,
    }
}

/// A global store in the explore model: 4-byte stores take their place in
/// the word's history; others write memory and become each touched
/// word's latest store.
#[cold]
fn weak_store(
    env: &LaunchEnv,
    weak: &WeakMemory,
    thread: GlobalThread,
    address: u64,
    size: u32,
    bits: u64,
    order: warpsim_ir::MemoryOrder,
) -> Option<()> {
    if size == 4 {
        let ordering = AccessOrdering::of_access(order);
        return weak.store(env.global, thread, address, bits as u32, ordering);
    }
    env.global.write(address, size, bits).ok()?;
    overwrite_words(env, weak, thread, address, size);
    Some(())
}

/// The 4-byte words of `size` bytes at `address` got new contents that did
/// not go through their histories.
fn overwrite_words(
    env: &LaunchEnv,
    weak: &WeakMemory,
    thread: GlobalThread,
    address: u64,
    size: u32,
) {
    let end = address.saturating_add(u64::from(size));
    let mut word = address & !3;
    while word < end {
        weak.overwrite(env.global, thread, word);
        word = word.saturating_add(4);
    }
}

/// The new value of an atomic read-modify-write.
pub(crate) fn atomic_update(op: AtomOp, ty: NumberType, old: u64, a: u64, b: u64) -> u64 {
    match (op, ty) {
        (AtomOp::Add, NumberType::Float(FloatType::F32)) => f32_bits(f32_of(old) + f32_of(a)),
        (AtomOp::Add, NumberType::Float(FloatType::F64)) => {
            (f64::from_bits(old) + f64::from_bits(a)).to_bits()
        }
        (AtomOp::Add, NumberType::Int(int)) => arith::int_add(old, a, int),
        // A population-count increment adds the literal 1 (`a`) for every lane.
        (AtomOp::PopcIncrement, NumberType::Int(int)) => arith::int_add(old, a, int),
        (AtomOp::Min, NumberType::Int(int)) => arith::int_min(old, a, int),
        (AtomOp::Max, NumberType::Int(int)) => arith::int_max(old, a, int),
        (AtomOp::Exch, _) => a,
        (AtomOp::Cas, _) => {
            if old == a {
                b
            } else {
                old
            }
        }
        (AtomOp::And, _) => old & a,
        (AtomOp::Or, _) => old | a,
        (AtomOp::Xor, _) => old ^ a,
        (AtomOp::Inc, _) => {
            if old >= a {
                0
            } else {
                old + 1
            }
        }
        (AtomOp::Dec, _) => {
            if old == 0 || old > a {
                a
            } else {
                old - 1
            }
        }
        // The verifier rejects float min/max and float population-count increments.
        (AtomOp::Min | AtomOp::Max | AtomOp::PopcIncrement, NumberType::Float(_)) => old,
    }
}

/// An atomic on every active lane, one lane after another in lane order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    space: StateSpace,
    order: warpsim_ir::AtomicOrder,
    op: AtomOp,
    ty: NumberType,
    size: u8,
    dst: Option<u32>,
    addr: LoweredAddress,
    a: u32,
    b: Option<u32>,
) -> Result<(), Fault> {
    let size = u32::from(size);
    let mask = size_mask(size);
    if space != StateSpace::Global && state.written.is_some() {
        // An exchange whose old value goes nowhere reads nothing.
        let access = InitAccess {
            reads: op != AtomOp::Exch || dst.is_some(),
            writes: true,
            atomic: true,
        };
        observe_initialization(env, warp, state, pc, active, space, addr, size, access);
    }
    let mut shared_lanes = 0u32;
    begin_request(state);
    // The global race checker, locked once per instruction.
    let mut global_races = env.global_races();
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let (address, target) = lane_target(env, &warp.values, addr, lane, space, size)?;
        // What the global race checker sees of the lane's atomic.
        let observe_atomic = |races: &mut crate::global_races::GlobalRaces, accessor| {
            races.observe(
                accessor,
                crate::global_races::GlobalAccess {
                    address,
                    len: size,
                    reads: true,
                    writes: true,
                    ordering: AccessOrdering::of_atomic(order),
                    atomic: true,
                    value: None,
                },
            )
        };
        let operand = warp.values.get(a, lane) & mask;
        let swap = b.map_or(0, |b| warp.values.get(b, lane) & mask);
        let update = |old| atomic_update(op, ty, old, operand, swap) & mask;
        let out_of_bounds = || out_of_bounds(env, target, address, size, true, lane);
        let (old, new) = match target {
            Target::Shared(offset) => {
                shared_lanes |= 1 << lane;
                state.shared_addresses[lane] = offset as u32;
                let old =
                    read_bytes(&state.shared, offset as usize, size).ok_or_else(out_of_bounds)?;
                let new = update(old);
                write_bytes(&mut state.shared, offset as usize, size, new);
                (old, new)
            }
            Target::Global(address) if env.weak_memory.is_none() => {
                // It waits in the block's store buffer with the stores
                // until the window's end, which hands its old value, if a
                // thread reads it, to the register (`store_buffer.rs`).
                push_sectors(&mut state.sectors, address, size);
                let pending = PendingAtomic {
                    address,
                    size,
                    op,
                    ty,
                    operand,
                    swap,
                    result: dst.map(|register| AtomicResult {
                        warp: warp.index,
                        register,
                        lane: lane as u32,
                    }),
                };
                let performed = state
                    .stores
                    .atomic(env.global, pending)
                    .map_err(|_| out_of_bounds())?;
                if let Some(races) = global_races.as_mut() {
                    observe_atomic(races, global_accessor(env, state, warp, lane, pc));
                }
                // A reduction held back: its old value is not known yet;
                // (0, 1) counts it as a change, as a store is.
                performed.unwrap_or((0, 1))
            }
            Target::Global(address) => {
                push_sectors(&mut state.sectors, address, size);
                let (old, new) = env
                    .global
                    .atomic(address, size, update)
                    .map_err(|_| out_of_bounds())?;
                if let Some(races) = global_races.as_mut() {
                    observe_atomic(races, global_accessor(env, state, warp, lane, pc));
                }
                if let Some(weak) = env.weak_memory {
                    let thread = global_thread(env, state, warp, lane);
                    if size == 4 {
                        let ordering = AccessOrdering::of_atomic(order);
                        weak.atomic(thread, address, old as u32, new as u32, ordering);
                    } else {
                        overwrite_words(env, weak, thread, address, size);
                    }
                }
                (old, new)
            }
            Target::Local(_) | Target::Param(_) | Target::Const(_) => {
                return Err(fault(
                    FaultKind::InvalidAccess {
                        message: "atomics work on global and shared memory only".to_string(),
                    },
                    lane as u32,
                ))
            }
        };
        // Only an atomic that changed memory is progress to the livelock
        // detector: a compare-and-swap spinning on a taken lock is not.
        if new != old {
            state.checker.last_progress = state.instructions;
        }
        if let Some(dst) = dst {
            warp.values.set(dst, lane, old);
        }
    }
    let counters = &mut state.stats.per_instruction[pc as usize];
    if shared_lanes != 0 {
        // ATOMS.POPC.INC serves the lanes of one word together; other atomics never merge.
        let kind = if op == AtomOp::PopcIncrement {
            AccessKind::PopcIncrement
        } else {
            AccessKind::Atomic
        };
        let verdict =
            state
                .arbiter
                .get()
                .request(kind, size, shared_lanes, &state.shared_addresses);
        record_wavefronts(counters, verdict);
        state.last_wavefronts = verdict;
    }
    if !state.sectors.is_empty() {
        record_sectors(counters, &mut state.sectors);
    }
    Ok(())
}
