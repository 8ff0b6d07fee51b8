//! One thread block: its warps, where each goes next and why it waits,
//! their divergent paths' branches and exits, its barriers, the
//! detection of deadlocks and livelocks, and the block's state (shared and
//! local memory, counters, checker) that `semantics.rs` (what an instruction
//! computes) and `access.rs` (where a byte lives) work on.
//!
//! Which warp issues when is the timing model's (`timing/sm.rs`): it asks
//! [`BlockRunner::peek`] where a warp goes next and has it issue with
//! [`BlockRunner::issue`]. Within a warp, a path that has run for a while
//! yields to its siblings, so that one spinning on a flag that another
//! path will set cannot starve it. Barriers follow the PTX ISA's
//! `bar.sync` (section 9.7.13.1) with Volta's per-thread arrival, or
//! per-warp arrival before Volta.
use warpsim_banks::BankArbiter;
use warpsim_ir::{BarrierKind, BarrierReduction, StateSpace};

use crate::access::{lane_address, resolve, Target};
use crate::checker::BlockChecker;
use crate::config::{BarrierSemantics, MachineConfig};
use crate::error::*;
use crate::findings::Finding;
use crate::initcheck::WrittenBytes;
use crate::memory::{GlobalMemory, SHARED_WINDOW, WINDOW_SIZE};
use crate::program::*;
use crate::racecheck::SharedRaces;
use crate::semantics::{fault, map_active, uniform_value, Fault, Semantics};
use crate::stats::RunStats;
use crate::store_buffer::StoreBuffer;
use crate::warp::{Barrier, Path, PathWait, Warp, WARP_SIZE};
use crate::warp_sync;

/// Instructions one path of a divergent warp runs before its siblings get a turn.
const PATH_QUANTUM: u32 = 256;

/// What every block of a launch shares, read-only.
pub struct LaunchEnv<'a> {
    /// Set from outside to end the launch (see [`crate::RunControl`]).
    pub stop: &'a std::sync::atomic::AtomicBool,
    pub program: &'a Program,
    pub config: &'a MachineConfig,
    pub global: &'a GlobalMemory,
    pub params: &'a [u8],
    pub grid: [u32; 3],
    pub block_dim: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// The address of each of the program's `.global` variables.
    pub global_variable_addresses: &'a [u64],
    /// Track which bytes of shared and local memory have been written and
    /// report reads of the others (`initcheck.rs`); off for a plain run.
    pub check_initialization: bool,
    /// Look for shared-memory races (`racecheck.rs`); off for a plain run.
    pub check_races: bool,
    /// The weakly-ordered global memory of the explore model
    /// (`weak_memory.rs`); `None` in the machine's own ordering.
    pub weak_memory: Option<&'a crate::weak_memory::WeakMemory>,
    /// The global-memory race checker (`global_races.rs`), when checking.
    pub(crate) global_races: Option<std::sync::Mutex<crate::global_races::GlobalRaces>>,
}

impl LaunchEnv<'_> {
    /// How many warps each block has (its last one may be partial).
    pub(crate) fn warps_per_block(&self) -> usize {
        (self.block_dim.iter().product::<u32>() as usize).div_ceil(WARP_SIZE)
    }

    /// Whether SMs must take turns within a time window: in the explore
    /// model, whose weak memory sees every access in one order, and when
    /// the global race checker, which sees every access, runs.
    pub(crate) fn runs_sms_in_turn(&self) -> bool {
        self.weak_memory.is_some() || self.global_races.is_some()
    }

    /// Whether a block's global stores and atomics wait for the window's
    /// end (`store_buffer.rs`): always but in the explore model, where they
    /// go straight to its weak memory. (The race checker runs SMs in turn
    /// but keeps the buffers, so that a checked run computes what a plain
    /// one does.)
    pub(crate) fn buffers_stores(&self) -> bool {
        self.weak_memory.is_none()
    }

    /// The global-memory race checker, locked.
    pub(crate) fn global_races(
        &self,
    ) -> Option<std::sync::MutexGuard<'_, crate::global_races::GlobalRaces>> {
        self.global_races
            .as_ref()
            .map(|races| races.lock().unwrap_or_else(|error| error.into_inner()))
    }
}

/// Where a warp goes next (see [`BlockRunner::peek`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Peek {
    /// Path `path` issues the instruction at `pc` next.
    Ready {
        path: usize,
        pc: u32,
    },
    /// Every path of the warp waits (a barrier, a warp sync).
    Blocked,
    Finished,
}

/// How long one path of a warp has been chosen in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PathStreak {
    /// A warp has at most one path per lane.
    path: u32,
    length: u32,
}

impl Default for PathStreak {
    fn default() -> Self {
        PathStreak {
            path: u32::MAX,
            length: 0,
        }
    }
}

impl PathStreak {
    /// Path `path` is chosen (again): the streak's length after it.
    #[inline(always)]
    fn choose(&mut self, path: usize) -> u32 {
        let path = path as u32;
        if self.path == path {
            self.length += 1;
        } else {
            *self = PathStreak { path, length: 0 };
        }
        self.length
    }
}

/// Runs blocks one after another, reusing its allocations; one per host
/// thread, or one per resident block when blocks run side by side.
///
/// Aligned to 128 bytes, as the SM's structures are (`timing::sm::Sm` says
/// why): runners of different SMs are allocated one after another.
#[repr(align(128))]
pub struct BlockRunner<'a> {
    env: &'a LaunchEnv<'a>,
    pub(crate) warps: Vec<Warp>,
    pub(crate) state: BlockState,
    /// Livelock detection: the progress mark the recorded states belong to,
    /// and fingerprints of the block's state at the end of scheduling rounds
    /// since the livelock window ran out without progress.
    spin_mark: Option<(u64, u64)>,
    /// The last fingerprint taken repeated an earlier one (see
    /// [`BlockRunner::round`]).
    spinning: bool,
    spin_states: std::collections::HashSet<u64>,
    /// Scheduling rounds run since the livelock window ran out.
    rounds_without_progress: u64,
}

/// Fingerprints kept per suspected livelock before starting over (bounds
/// memory; a loop whose state comes back only after more rounds than this
/// runs on to the instruction limit).
const MAX_SPIN_STATES: usize = 1 << 14;

/// Past the livelock window with no thread waiting, the block's state is
/// fingerprinted once every this many scheduling rounds.
const SPIN_SAMPLE_ROUNDS: u64 = 64;

/// The bank arbiter a block's shared-memory requests go through. Its tables
/// are scratch (4.6 KB) that means nothing between requests, so one per SM
/// serves all its resident blocks: the SM lends it to the block that
/// issues (`BlockRunner::swap_arbiter`). A block that was lent none makes
/// its own.
#[derive(Debug)]
pub(crate) struct LentArbiter {
    arbiter: Option<Box<BankArbiter>>,
    config: warpsim_banks::BankConfig,
}

impl LentArbiter {
    #[inline]
    pub(crate) fn get(&mut self) -> &mut BankArbiter {
        let config = self.config;
        self.arbiter
            .get_or_insert_with(|| Box::new(BankArbiter::new(config)))
    }
}

/// Everything of a block except its warps, so a warp and the block state can
/// be borrowed at the same time.
pub(crate) struct BlockState {
    pub(crate) block_index: [u32; 3],
    pub(crate) shared: Vec<u8>,
    pub(crate) local: Vec<u8>,
    pub(crate) barriers: [Barrier; 16],
    pub(crate) live_threads: u32,
    pub(crate) instructions: u64,
    /// The SM's cycle at the instruction being issued (`clock64`).
    pub(crate) clock: u64,
    /// Wavefronts and ideal wavefronts of the last shared-memory request
    /// (the timing model's cost of it).
    pub(crate) last_wavefronts: warpsim_banks::Wavefronts,
    pub(crate) stats: RunStats,
    pub(crate) arbiter: LentArbiter,
    /// Scratch lane addresses for the bank arbiter.
    pub(crate) shared_addresses: [u32; WARP_SIZE],
    /// Scratch sector numbers for coalescing.
    pub(crate) sectors: Vec<u64>,
    /// The sectors of the last request's local-memory lanes, where the
    /// hardware keeps them (`access::local_timing_address`), for the
    /// timing model's L1; not counted as global sectors.
    pub(crate) local_sectors: Vec<u64>,
    /// The bytes the last request's global and local lanes moved, which
    /// say with its sectors whether a store wrote them whole.
    pub(crate) global_bytes: u32,
    pub(crate) local_bytes: u32,
    /// Where the last load from the parameters or the constants read, its
    /// first active lane's address in the space's window
    /// (`memory::PARAM_WINDOW`, `memory::CONST_WINDOW`), for the timing
    /// model's constant cache.
    pub(crate) constant_address: u64,
    pub(crate) checker: BlockChecker,
    /// The bytes of shared and local memory written so far, when checking
    /// for uninitialized reads.
    pub(crate) written: Option<WrittenBytes>,
    /// The block's `printf` output, in the order its threads printed it.
    pub(crate) printed: Vec<u8>,
    /// Bytes of `printf` output dropped because the buffer was full.
    pub(crate) printed_dropped: u64,
    /// The block's weak global stores of the current time window.
    pub(crate) stores: StoreBuffer,
    /// The shared-memory race checker, when checking.
    pub(crate) races: Option<SharedRaces>,
    /// Global loads of the explore model not yet performed
    /// (`weak_memory::PendingLoad`), in program order.
    pub(crate) pending_loads: Vec<crate::weak_memory::PendingLoad>,
    /// The block's `cp.async` copies in flight and its mbarriers.
    pub(crate) async_copies: crate::async_copy::AsyncState,
}

impl<'a> BlockRunner<'a> {
    pub fn new(env: &'a LaunchEnv<'a>) -> BlockRunner<'a> {
        let threads = env.block_dim.iter().product::<u32>() as usize;
        // Without dynamic shared memory the window ends with the static
        // variables, not at the (aligned) start of the empty dynamic part.
        let shared_bytes = if env.dynamic_shared_bytes == 0 {
            env.program.static_shared_bytes as usize
        } else {
            env.program.dynamic_shared_offset as usize + env.dynamic_shared_bytes as usize
        };
        let local_bytes = threads * env.program.local_bytes as usize;
        BlockRunner {
            env,
            warps: Vec::new(),
            spin_mark: None,
            spinning: false,
            spin_states: std::collections::HashSet::new(),
            rounds_without_progress: 0,
            state: BlockState {
                block_index: [0; 3],
                shared: vec![0; shared_bytes],
                local: vec![0; local_bytes],
                barriers: [Barrier::default(); 16],
                live_threads: 0,
                instructions: 0,
                clock: 0,
                last_wavefronts: warpsim_banks::Wavefronts::default(),
                // The runner counts into the set its SM lends it for each
                // call (`swap_stats`), so it needs none of its own.
                stats: RunStats::new(0),
                arbiter: LentArbiter {
                    arbiter: None,
                    config: env.config.shared_memory.bank_config(),
                },
                shared_addresses: [0; WARP_SIZE],
                sectors: Vec::with_capacity(2 * WARP_SIZE),
                local_sectors: Vec::with_capacity(2 * WARP_SIZE),
                global_bytes: 0,
                local_bytes: 0,
                constant_address: 0,
                checker: BlockChecker::default(),
                written: env
                    .check_initialization
                    .then(|| WrittenBytes::new(shared_bytes, local_bytes)),
                printed: Vec::new(),
                printed_dropped: 0,
                stores: StoreBuffer::default(),
                races: env.check_races.then(|| SharedRaces::new(shared_bytes)),
                pending_loads: Vec::new(),
                async_copies: Default::default(),
            },
        }
    }

    /// Takes the block's pending weak global stores, leaving `empty` in
    /// their place.
    pub(crate) fn replace_stores(&mut self, empty: StoreBuffer) -> StoreBuffer {
        std::mem::replace(&mut self.state.stores, empty)
    }

    /// Applies the block's pending global stores and atomics to memory and
    /// forgets them (`StoreBuffer::apply`), and writes the old values the
    /// atomics found into the registers that take them.
    pub(crate) fn apply_stores(&mut self, global: &crate::memory::GlobalMemory) {
        let warps = &mut self.warps;
        self.state.stores.apply(global, |result, old| {
            let warp = &mut warps[result.warp as usize];
            warp.values.set(result.register, result.lane as usize, old);
        });
    }

    /// The `printf` output of the last block run, and how many bytes of it
    /// did not fit the buffer.
    pub fn take_printed(&mut self) -> (Vec<u8>, u64) {
        let dropped = std::mem::take(&mut self.state.printed_dropped);
        (std::mem::take(&mut self.state.printed), dropped)
    }

    /// The checker's findings for the last block run (a hang or an invalid
    /// barrier that ended it included).
    pub fn take_findings(&mut self) -> Vec<Finding> {
        let fill = self.env.config.memory.fresh_fill;
        let mut findings = self.state.checker.take_findings(self.env.program, fill);
        if let Some(races) = &mut self.state.races {
            for mut finding in races.take_findings(self.env.program) {
                finding.block = self.state.block_index;
                findings.push(finding);
            }
        }
        findings
    }

    /// Makes `block_index` this runner's block, its warps at their first
    /// instruction.
    pub fn start_block(&mut self, block_index: [u32; 3]) {
        self.setup(block_index);
        self.state.stats.blocks_run += 1;
    }

    /// The checker's finding for a hang that ended the block, if it is one.
    pub fn report_hang(&mut self, error: &ExecError) {
        if let Some(finding) = Finding::from_hang(error) {
            self.state.checker.report(finding);
        }
    }

    /// Changes whenever the block makes progress (a store, an atomic that
    /// changed memory, a barrier arrival, an exit).
    pub fn progress_mark(&self) -> u64 {
        self.state.checker.last_progress
    }

    /// Swaps the runner's counters with `stats`: the blocks of an SM count
    /// into the SM's set, lent to whichever block issues.
    pub fn swap_stats(&mut self, stats: &mut RunStats) {
        std::mem::swap(&mut self.state.stats, stats);
    }

    /// Swaps the runner's bank arbiter with `arbiter`: an SM lends its own
    /// to whichever block issues, as [`BlockRunner::swap_stats`].
    pub fn swap_arbiter(&mut self, arbiter: &mut Option<Box<BankArbiter>>) {
        std::mem::swap(&mut self.state.arbiter.arbiter, arbiter);
    }

    /// How many warps the block has.
    pub fn warp_count(&self) -> usize {
        self.warps.len()
    }

    /// The linear index of the block this runner holds.
    pub fn block_index(&self) -> [u32; 3] {
        self.state.block_index
    }

    /// Where warp `warp_index` goes next: the instruction its chosen path
    /// issues, or why it issues nothing. Paths whose barrier completed wake
    /// here, and a path that has run for a while yields to its siblings
    /// (independent thread scheduling: one spinning on a flag that another
    /// path of the warp will set cannot starve it).
    #[inline(always)]
    pub(crate) fn peek(&mut self, warp_index: usize, streak: &mut PathStreak) -> Peek {
        if let Some(pc) = self.peek_single_path(warp_index, streak) {
            return Peek::Ready { path: 0, pc };
        }
        self.peek_paths(warp_index, streak)
    }

    /// [`BlockRunner::peek`] of a warp whose lanes run as one path, the
    /// common case, which goes on with it (nothing to wake, drop or yield
    /// to): the program counter of path 0. `None` for any other warp,
    /// whose choice `peek` makes.
    #[inline(always)]
    pub(crate) fn peek_single_path(
        &mut self,
        warp_index: usize,
        streak: &mut PathStreak,
    ) -> Option<u32> {
        let warp = &self.warps[warp_index];
        if let [path] = warp.paths.as_slice() {
            if path.wait == PathWait::Ready && path.mask != 0 && path.pc != path.reconverge {
                streak.choose(0);
                return Some(path.pc);
            }
        }
        None
    }

    /// [`BlockRunner::peek`] for a warp whose paths diverged, wait or end.
    #[inline(never)]
    fn peek_paths(&mut self, warp_index: usize, streak: &mut PathStreak) -> Peek {
        let program = self.env.program;
        // Before Volta a warp had one program counter: a path waiting at a
        // barrier holds the whole warp, and no path yields to its siblings.
        let per_warp = self.env.config.barriers.semantics == BarrierSemantics::PreVolta;
        let warp = &mut self.warps[warp_index];
        loop {
            if warp.paths.is_empty() {
                return Peek::Finished;
            }
            let Some(path_index) = warp.select_path(program, &self.state.barriers, per_warp) else {
                return if warp.is_finished() {
                    Peek::Finished
                } else {
                    Peek::Blocked
                };
            };
            // The explore model lets divergent paths take turns at random,
            // as independent thread scheduling may.
            if warp.paths.len() > 1 && !per_warp {
                if let Some(weak) = self.env.weak_memory.filter(|weak| weak.scheduling_noise()) {
                    if weak.choose(4) == 0 {
                        warp.yield_path(path_index);
                        *streak = PathStreak::default();
                        continue;
                    }
                }
            }
            if streak.choose(path_index) >= PATH_QUANTUM && warp.paths.len() > 1 && !per_warp {
                warp.yield_path(path_index);
                *streak = PathStreak::default();
                continue;
            }
            return Peek::Ready {
                path: path_index,
                pc: warp.paths[path_index].pc,
            };
        }
    }

    /// Issues the instruction at `pc` of path `path_index` of warp
    /// `warp_index` (as [`BlockRunner::peek`] chose them) at SM cycle
    /// `clock`: runs its lanes with `semantics`, the instruction's
    /// ([`crate::semantics::semantics_of`]). Returns the lanes it ran (for
    /// the caller to count, a faulting instruction included) and the
    /// outcome.
    ///
    /// # Safety
    ///
    /// `semantics` must be one that `semantics_of` gave for this
    /// instruction's kind, compiled for instruction sets the running host
    /// has.
    #[inline(always)]
    pub(crate) unsafe fn issue(
        &mut self,
        warp_index: usize,
        path_index: usize,
        pc: u32,
        clock: u64,
        semantics: Semantics,
    ) -> (u32, Result<(), Box<ExecError>>) {
        let env = self.env;
        let program = env.program;
        let limit = env.config.limits.max_warp_instructions_per_block;
        let warp = &mut self.warps[warp_index];
        let state = &mut self.state;
        let instruction = &program.code[pc as usize];
        let mut active = warp.paths[path_index].mask;
        if let Some(guard) = instruction.guard {
            active &= warp.pred_bits(guard.pred, guard.negated);
        }
        state.instructions += 1;
        state.clock = clock;
        if state.instructions > limit {
            return (
                active,
                Err(Box::new(
                    self.hang_error(FaultKind::InstructionLimit { limit }),
                )),
            );
        }
        if let Some(weak) = env.weak_memory {
            crate::weak_memory::perform_before(weak, env, warp, state, instruction);
        }
        // SAFETY: the caller gives the semantics `semantics_of` chose for
        // this instruction, compiled for what the host has.
        if let Err(fault) =
            unsafe { semantics(env, warp, state, instruction, path_index, pc, active) }
        {
            return (active, Err(self.fault_error(*fault, pc, warp_index)));
        }
        (active, Ok(()))
    }

    /// A number that changes whenever one of the block's barriers opens.
    pub(crate) fn barrier_generations(&self) -> u32 {
        crate::warp::barrier_openings(&self.state.barriers)
    }

    /// When no warp of the block can issue and none waits for anything
    /// but another warp of the block: lets lanes held at a reconvergence
    /// point go on (Volta), or reports the deadlock.
    #[cold]
    pub(crate) fn unblock_or_deadlock(&mut self) -> Result<(), Box<ExecError>> {
        let may_release = self.env.config.barriers.semantics == BarrierSemantics::Volta;
        if may_release && self.release_blocked_reconvergence() {
            return Ok(());
        }
        Err(Box::new(self.hang_error(FaultKind::Deadlock)))
    }

    /// Livelock detection, called now and then while the block runs
    /// (the SM calls it at the end of each of its time windows).
    /// `memory_epoch` changes whenever another block changed memory: a
    /// state the block repeats proves that it loops for ever only while
    /// nothing else changes what it reads. Past the livelock window with no
    /// progress, the block's state is fingerprinted: every call while some
    /// thread waits, every SPIN_SAMPLE_ROUNDS calls otherwise (a long loop
    /// that computes without storing is then hardly slowed). A state that
    /// repeats at a fixed stride repeats in the samples too.
    pub fn spinning(&mut self, memory_epoch: u64) -> bool {
        let livelock_window = self.env.config.barriers.livelock_window;
        if self.state.instructions - self.state.checker.last_progress > livelock_window {
            self.rounds_without_progress += 1;
            let sample = self.some_path_waits()
                || self
                    .rounds_without_progress
                    .is_multiple_of(SPIN_SAMPLE_ROUNDS);
            if sample {
                self.spinning = self.state_repeats(memory_epoch);
            }
        } else {
            self.rounds_without_progress = 0;
            self.spinning = false;
        }
        self.spinning
    }

    /// See [`Warp::release_blocked_reconvergence`]; tries every warp.
    fn release_blocked_reconvergence(&mut self) -> bool {
        let mut released = false;
        for warp in &mut self.warps {
            released |= warp.release_blocked_reconvergence();
        }
        released
    }

    /// Whether the block's state (every warp's paths, registers and
    /// predicates) at the end of this round is one it was in at the end of
    /// an earlier round with no progress in between. Nothing else changes
    /// without progress (memory only changes by stores and atomics, barriers
    /// only by arrivals), and the machine is deterministic, so a repeated
    /// state proves that the block loops for ever. A long loop that ends
    /// (a counter, a changing load) never repeats a state.
    #[cold]
    fn state_repeats(&mut self, memory_epoch: u64) -> bool {
        use std::hash::{Hash, Hasher};
        let mark = (self.state.checker.last_progress, memory_epoch);
        if self.spin_mark != Some(mark) || self.spin_states.len() >= MAX_SPIN_STATES {
            self.spin_mark = Some(mark);
            self.spin_states.clear();
        }
        // SipHash with fixed keys: the same fingerprint on every host.
        let mut hasher = std::hash::DefaultHasher::new();
        for warp in &self.warps {
            warp.paths.hash(&mut hasher);
            warp.values.hash(&mut hasher);
            warp.preds.hash(&mut hasher);
            warp.exited.hash(&mut hasher);
        }
        !self.spin_states.insert(hasher.finish())
    }

    /// Whether some path of the block waits at a barrier or a warp sync.
    fn some_path_waits(&self) -> bool {
        self.warps.iter().any(|warp| {
            warp.paths
                .iter()
                .any(|path| path.mask != 0 && path.wait != PathWait::Ready)
        })
    }

    /// A livelock: where every warp stands, and for each running path the
    /// innermost loop around it and the address that loop reads.
    #[cold]
    pub fn livelock_error(&self, window: u64) -> ExecError {
        let mut error = self.hang_error(FaultKind::Livelock {
            window,
            across_blocks: false,
            not_resident: None,
        });
        let program = self.env.program;
        for warp in &error.warps {
            for path in warp
                .paths
                .iter()
                .filter(|path| path.waiting == Waiting::Running)
            {
                let Some((loop_start, loop_end)) = innermost_loop(program, path.pc) else {
                    continue;
                };
                let first_lane = path.lanes.trailing_zeros() as usize;
                // What the loop reads: a load, or an atomic that changes
                // nothing (`atomicAdd(p, 0)`, a failing compare-and-swap).
                let polled = (loop_start..=loop_end).find_map(|pc| {
                    let (space, addr) = match program.code[pc as usize].kind {
                        Kind::Load { space, addr, .. } | Kind::Atom { space, addr, .. } => {
                            (space, addr)
                        }
                        _ => return None,
                    };
                    let values = &self.warps[warp.warp as usize].values;
                    let address = lane_address(values, addr, first_lane.min(31));
                    let global = matches!(resolve(space, address), Target::Global(_));
                    Some((self.describe_address(space, address), global))
                });
                let mbarrier =
                    self.mbarrier_wait_in(warp.warp, first_lane.min(31), loop_start..=loop_end);
                error.spinning.push(SpinLoop {
                    warp: warp.warp,
                    pc: path.pc,
                    loop_start,
                    loop_end,
                    polls_global: polled.as_ref().is_some_and(|(_, global)| *global),
                    polled: polled.map(|(text, _)| text),
                    mbarrier,
                });
            }
        }
        let blocks: u64 = self.env.grid.iter().map(|&dim| u64::from(dim)).product();
        let across_blocks = blocks > 1 && error.spinning.iter().any(|spin| spin.polls_global);
        // Threads that spin only on mbarrier waits, the others waiting for
        // them or done: the phases cannot complete, as the repeated state
        // proves (an arrival, a transaction completed or a copy landing is
        // progress, and there was none), so the block is deadlocked on its
        // mbarriers rather than polling memory someone else might change.
        let on_mbarriers =
            !error.spinning.is_empty() && error.spinning.iter().all(|spin| spin.mbarrier.is_some());
        error.kind = if on_mbarriers {
            FaultKind::MbarrierDeadlock { window }
        } else {
            FaultKind::Livelock {
                window,
                across_blocks,
                not_resident: None,
            }
        };
        error
    }

    /// The first mbarrier wait (`test_wait`/`try_wait`) among the
    /// instructions `pcs` of a spin loop, with the mbarrier `lane` of warp
    /// `warp` waits on and what for.
    fn mbarrier_wait_in(
        &self,
        warp: u32,
        lane: usize,
        pcs: std::ops::RangeInclusive<u32>,
    ) -> Option<MbarrierWait> {
        let program = self.env.program;
        pcs.into_iter().find_map(|pc| {
            let Kind::Mbarrier {
                action: MbarrierAction::Wait { parity, phase, .. },
                space,
                addr,
            } = program.code[pc as usize].kind
            else {
                return None;
            };
            let values = &self.warps[warp as usize].values;
            let address = lane_address(values, addr, lane);
            let offset = match resolve(space, address) {
                Target::Shared(offset) => offset as u32,
                _ => return None,
            };
            let operand = values.get(phase, lane);
            let awaited = if parity {
                AwaitedPhase::Parity((operand & 1) as u32)
            } else {
                AwaitedPhase::Phase((operand >> 32) as u32)
            };
            let state = self
                .state
                .async_copies
                .mbarriers
                .get(&offset)
                .map(|barrier| {
                    (
                        barrier.phase,
                        barrier.pending,
                        barrier.expected,
                        barrier.tx_count,
                    )
                });
            Some(MbarrierWait {
                pc,
                offset,
                awaited,
                state,
            })
        })
    }

    /// An address as a person would name it: the global buffer and offset,
    /// or the shared-memory offset.
    fn describe_address(&self, space: StateSpace, address: u64) -> String {
        let global = |address: u64| match self.env.global.place(address) {
            GlobalPlace::Offset { buffer, offset, .. } => {
                format!("offset {offset} of buffer `{buffer}`")
            }
            _ => format!("global address {address:#x}"),
        };
        match space {
            StateSpace::Global => global(address),
            StateSpace::Shared => format!("shared memory offset {address:#x}"),
            StateSpace::Generic
                if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&address) =>
            {
                format!("shared memory offset {:#x}", address - SHARED_WINDOW)
            }
            StateSpace::Generic => global(address),
            _ => format!("address {address:#x}"),
        }
    }

    fn setup(&mut self, block_index: [u32; 3]) {
        let env = self.env;
        let program = env.program;
        let [bx, by, bz] = env.block_dim;
        let threads = bx * by * bz;
        let warp_count = env.warps_per_block();
        self.state.block_index = block_index;
        // Real shared and local memory start with stale contents. A fixed
        // pattern keeps runs reproducible, and one that is not zero
        // (`memory.fresh_fill`, 0xff unless configured) makes a read of
        // memory that was never written show in the kernel's output.
        let fill = env.config.memory.fresh_fill;
        self.state.shared.fill(fill);
        self.state.local.fill(fill);
        if let Some(written) = &mut self.state.written {
            written.reset();
        }
        if let Some(races) = &mut self.state.races {
            races.reset();
        }
        self.state.async_copies.reset();
        self.state.pending_loads.clear();
        self.state.barriers = [Barrier::default(); 16];
        self.state.live_threads = threads;
        self.state.instructions = 0;
        self.warps.resize_with(warp_count, Warp::default);
        for (index, warp) in self.warps.iter_mut().enumerate() {
            warp.index = index as u32;
            warp.values.reset(
                program.lane_value_regs,
                program.wide_value_regs,
                program.value_regs - program.lane_value_regs,
            );
            warp.preds.clear();
            warp.preds.resize(program.pred_regs as usize, 0);
            let first_thread = index as u32 * WARP_SIZE as u32;
            let lanes = (threads - first_thread).min(WARP_SIZE as u32);
            warp.valid = if lanes == 32 {
                u32::MAX
            } else {
                (1 << lanes) - 1
            };
            warp.exited = 0;
            warp.syncs = 0;
            warp.paths.clear();
            warp.paths.push(Path {
                pc: 0,
                reconverge: NO_RECONVERGENCE,
                mask: warp.valid,
                wait: PathWait::Ready,
            });
            // The threads' indices, made once for the warp's registers
            // that need them.
            let mut threads = None;
            for &(reg, init) in &program.warp_inits {
                match init {
                    WarpInit::Constant(value) => warp.values.set_uniform(reg, value),
                    WarpInit::GlobalVariable(variable) => warp
                        .values
                        .set_uniform(reg, env.global_variable_addresses[variable as usize]),
                    WarpInit::Special(special) if init.is_warp_uniform() => {
                        let thread = thread_index(first_thread, env.block_dim);
                        let value = special_value(
                            special,
                            0,
                            index as u32,
                            warp_count as u32,
                            thread,
                            block_index,
                            env,
                        );
                        warp.values.set_uniform(reg, value);
                    }
                    WarpInit::Special(special) => {
                        let threads = threads.get_or_insert_with(|| {
                            warp_thread_indices(first_thread, env.block_dim)
                        });
                        let lanes = map_active(u32::MAX, |lane| {
                            special_value(
                                special,
                                lane as u32,
                                index as u32,
                                warp_count as u32,
                                threads[lane],
                                block_index,
                                env,
                            )
                        });
                        warp.values.write(reg, u32::MAX, &lanes);
                    }
                }
            }
        }
        self.spin_mark = None;
        self.spinning = false;
        self.spin_states.clear();
        self.rounds_without_progress = 0;
        let valid: Vec<u32> = self.warps.iter().map(|warp| warp.valid).collect();
        self.state
            .checker
            .reset(block_index, env.config.barriers.semantics, &valid);
    }

    /// Where every warp stands, for deadlock and limit reports.
    fn hang_error(&self, kind: FaultKind) -> ExecError {
        let warps = self
            .warps
            .iter()
            .filter(|warp| !warp.is_finished())
            .map(|warp| WarpPosition {
                warp: warp.index,
                exited: warp.exited,
                paths: warp
                    .paths
                    .iter()
                    .enumerate()
                    .filter(|(_, path)| path.mask != 0)
                    .map(|(index, path)| PathPosition {
                        pc: path.pc,
                        lanes: path.mask,
                        waiting: match path.wait {
                            PathWait::Barrier { id, .. } => Waiting::Barrier(u32::from(id)),
                            PathWait::WarpSync { mask } => Waiting::WarpSync(mask),
                            PathWait::Ready if warp.has_children(index) => Waiting::Reconvergence,
                            PathWait::Ready => Waiting::Running,
                        },
                    })
                    .collect(),
            })
            .collect();
        let barriers = self
            .state
            .barriers
            .iter()
            .enumerate()
            .filter(|(_, barrier)| barrier.arrived > 0)
            .map(|(id, barrier)| BarrierPosition {
                id: id as u32,
                arrived: barrier.arrived,
                expected: barrier.expected(self.state.live_threads),
            })
            .collect();
        ExecError {
            kind,
            block: self.state.block_index,
            site: None,
            warps,
            barriers,
            spinning: Vec::new(),
        }
    }
}

impl BlockRunner<'_> {
    /// The error of a fault at `pc` in warp `warp_index`: its site; where the
    /// other warps stand is not reported.
    #[cold]
    #[inline(never)]
    fn fault_error(
        &self,
        (kind, lane): (FaultKind, u32),
        pc: u32,
        warp_index: usize,
    ) -> Box<ExecError> {
        let warp_number = warp_index as u32;
        Box::new(ExecError {
            kind,
            block: self.state.block_index,
            site: Some(FaultSite {
                pc,
                warp: warp_number,
                lane,
                thread: thread_index(warp_number * 32 + lane, self.env.block_dim),
            }),
            warps: Vec::new(),
            barriers: Vec::new(),
            spinning: Vec::new(),
        })
    }
}

/// The smallest loop around `pc`: a backward branch at or after `pc` whose
/// target is at or before it, as (target, branch).
fn innermost_loop(program: &Program, pc: u32) -> Option<(u32, u32)> {
    program
        .code
        .iter()
        .enumerate()
        .filter_map(|(index, instruction)| match instruction.kind {
            Kind::Branch { target, .. } if target <= pc && index as u32 >= pc => {
                Some((target, index as u32))
            }
            _ => None,
        })
        .min_by_key(|&(start, end)| end - start)
}

/// The (x, y, z) index of linear thread `linear` of a block, x fastest.
pub fn thread_index(linear: u32, block_dim: [u32; 3]) -> [u32; 3] {
    let x = linear % block_dim[0];
    let y = (linear / block_dim[0]) % block_dim[1];
    let z = linear / (block_dim[0] * block_dim[1]);
    [x, y, z]
}

/// The (x, y, z) indices of the 32 threads of a warp whose first thread is
/// linear thread `first` ([`thread_index`]): one division for the warp,
/// then each lane steps from the one before.
fn warp_thread_indices(first: u32, block_dim: [u32; 3]) -> [[u32; 3]; WARP_SIZE] {
    let mut thread = thread_index(first, block_dim);
    let mut threads = [[0; 3]; WARP_SIZE];
    for slot in &mut threads {
        *slot = thread;
        thread[0] += 1;
        if thread[0] == block_dim[0] {
            thread[0] = 0;
            thread[1] += 1;
            if thread[1] == block_dim[1] {
                thread[1] = 0;
                thread[2] += 1;
            }
        }
    }
    threads
}

fn special_value(
    special: warpsim_ir::SpecialReg,
    lane: u32,
    warp: u32,
    warp_count: u32,
    thread: [u32; 3],
    block: [u32; 3],
    env: &LaunchEnv,
) -> u64 {
    use warpsim_ir::{LaneMaskKind, SpecialReg};
    // `lane` is at most 31, so the shift cannot overflow.
    let below = (1u32 << lane) - 1;
    u64::from(match special {
        SpecialReg::Tid(dim) => thread[dim.index()],
        SpecialReg::Ntid(dim) => env.block_dim[dim.index()],
        SpecialReg::Ctaid(dim) => block[dim.index()],
        SpecialReg::Nctaid(dim) => env.grid[dim.index()],
        SpecialReg::LaneId => lane,
        SpecialReg::WarpId => warp,
        SpecialReg::NWarpId => warp_count,
        SpecialReg::LaneMask(LaneMaskKind::Eq) => 1 << lane,
        SpecialReg::LaneMask(LaneMaskKind::Lt) => below,
        SpecialReg::LaneMask(LaneMaskKind::Le) => below | (1 << lane),
        SpecialReg::LaneMask(LaneMaskKind::Gt) => !(below | (1 << lane)),
        SpecialReg::LaneMask(LaneMaskKind::Ge) => !below,
        // Lowering turns clock reads into `ReadClock`.
        SpecialReg::Clock | SpecialReg::Clock64 => 0,
    })
}

/// A branch: the lanes in `taken` go to `target`, the rest of the path falls
/// through; if both sides have lanes, the path splits until `reconverge`.
pub(crate) fn branch(warp: &mut Warp, path_index: usize, taken: u32, target: u32, reconverge: u32) {
    let path = warp.paths[path_index];
    let not_taken = path.mask & !taken;
    if not_taken == 0 {
        warp.paths[path_index].pc = target;
        return;
    }
    if taken == 0 {
        warp.paths[path_index].pc = path.pc + 1;
        return;
    }
    let side = |pc, mask, reconverge| Path {
        pc,
        reconverge,
        mask,
        wait: PathWait::Ready,
    };
    if reconverge == NO_RECONVERGENCE || reconverge == path.reconverge {
        // The sides meet where this path ends anyway: replace it by the two sides.
        warp.paths[path_index] = side(path.pc + 1, not_taken, path.reconverge);
        warp.paths
            .insert(path_index + 1, side(target, taken, path.reconverge));
    } else {
        warp.paths[path_index].pc = reconverge;
        warp.paths
            .insert(path_index + 1, side(path.pc + 1, not_taken, reconverge));
        warp.paths
            .insert(path_index + 2, side(target, taken, reconverge));
    }
}

/// Lanes leave the kernel: they are no longer expected at any barrier.
pub(crate) fn exit_lanes(program: &Program, warp: &mut Warp, state: &mut BlockState, lanes: u32) {
    let lanes = lanes & !warp.exited;
    warp.exited |= lanes;
    for path in &mut warp.paths {
        path.mask &= !lanes;
    }
    state.live_threads -= lanes.count_ones();
    state.checker.exited(warp.index, lanes);
    state.checker.last_progress = state.instructions;
    for id in 0..state.barriers.len() {
        try_complete_barrier(program, state, id);
    }
    // Nor at warp-synchronous instructions: waiters may now be complete.
    warp_sync::release_after_exit(program, warp, &mut state.checker, lanes);
}

/// Completes barrier `id` if every expected thread has arrived, and lets the
/// checker look at the finished episode.
pub(crate) fn try_complete_barrier(program: &Program, state: &mut BlockState, id: usize) {
    let barrier = &mut state.barriers[id];
    let counted = barrier.count.is_some();
    if barrier.try_complete(state.live_threads) {
        state
            .checker
            .complete(id as u32, counted, |pc| program.is_divergent_barrier(pc));
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn barrier(
    program: &Program,
    semantics: BarrierSemantics,
    warp: &mut Warp,
    state: &mut BlockState,
    path_index: usize,
    active: u32,
    kind: BarrierKind,
    id: u32,
    count: Option<u32>,
    reduction: Option<BarrierReductionOperands>,
) -> Result<(), Fault> {
    let path = warp.paths[path_index];
    if active == 0 {
        warp.paths[path_index].pc += 1;
        return Ok(());
    }
    let first_lane = active.trailing_zeros();
    let barrier_id = uniform_value(&warp.values, id, active).map_err(|lane| {
        fault(
            FaultKind::InvalidBarrier {
                message: "the barrier id differs between the threads of a warp executing this barrier; it must be the same for all".to_string(),
            },
            lane,
        )
    })?;
    if barrier_id > 15 {
        return Err(fault(
            FaultKind::InvalidBarrier {
                message: format!(
                    "barrier id {barrier_id} is out of range: a block has barriers 0 to 15"
                ),
            },
            first_lane,
        ));
    }
    let thread_count = match count {
        Some(reg) => {
            let value = uniform_value(&warp.values, reg, active).map_err(|lane| {
                fault(
                    FaultKind::InvalidBarrier {
                        message: "the barrier thread count differs between the threads of a warp executing this barrier; it must be the same for all".to_string(),
                    },
                    lane,
                )
            })?;
            if value == 0 || !value.is_multiple_of(32) || value > 1024 {
                return Err(fault(
                    FaultKind::InvalidBarrier {
                        message: format!(
                            "barrier thread count {value} is not a multiple of 32 between 32 and 1024"
                        ),
                    },
                    first_lane,
                ));
            }
            Some(value as u32)
        }
        None => None,
    };
    let barrier = &mut state.barriers[barrier_id as usize];
    // Volta and later count the threads that arrive; earlier GPUs count the
    // whole warp as soon as one of its threads arrives.
    barrier.arrived += match semantics {
        BarrierSemantics::Volta => active.count_ones(),
        BarrierSemantics::PreVolta => warp.live().count_ones(),
    };
    if thread_count.is_some() {
        barrier.count = thread_count;
    }
    state.checker.last_progress = state.instructions;
    state.checker.arrive(
        barrier_id as u32,
        path.pc,
        warp.index,
        active,
        kind != BarrierKind::Arrive,
        reduction.is_some(),
        thread_count,
    );
    let barrier = &mut state.barriers[barrier_id as usize];
    if let Some(reduction) = reduction {
        let votes = warp.pred_bits(reduction.pred, reduction.negated) & active;
        match reduction.reduction {
            BarrierReduction::Popc => barrier.popc += votes.count_ones(),
            BarrierReduction::And => barrier.all &= votes == active,
            BarrierReduction::Or => barrier.any |= votes != 0,
        }
    }
    let generation = barrier.generation;
    if kind == BarrierKind::Arrive {
        warp.paths[path_index].pc += 1;
    } else {
        // Lanes whose guard was false do not take part and move on.
        let waiting = Path {
            wait: PathWait::Barrier {
                id: barrier_id as u8,
                generation,
            },
            mask: active,
            ..path
        };
        if active == path.mask {
            warp.paths[path_index] = waiting;
        } else {
            warp.paths[path_index] = Path {
                pc: path.pc + 1,
                mask: path.mask & !active,
                ..path
            };
            warp.paths.insert(path_index + 1, waiting);
        }
    }
    try_complete_barrier(program, state, barrier_id as usize);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{thread_index, warp_thread_indices, WARP_SIZE};

    /// A warp's thread indices, stepped lane by lane, are those each
    /// lane's linear index gives, in blocks whose rows are shorter than a
    /// warp, longer, and end inside one, and past a block's last thread.
    #[test]
    fn a_warps_thread_indices_step_as_their_linear_indices_divide() {
        for block_dim in [
            [32, 32, 1],
            [3, 5, 7],
            [1, 1, 64],
            [100, 1, 1],
            [7, 1, 9],
            [16, 2, 2],
        ] {
            let threads = block_dim.iter().product::<u32>();
            for first in (0..threads + 64).step_by(WARP_SIZE) {
                let stepped = warp_thread_indices(first, block_dim);
                for (lane, &thread) in stepped.iter().enumerate() {
                    assert_eq!(
                        thread,
                        thread_index(first + lane as u32, block_dim),
                        "{block_dim:?}, thread {}",
                        first + lane as u32
                    );
                }
            }
        }
    }
}
