//! Runs one thread block: its warps, its barriers, its shared and local
//! memory, and the semantics of every instruction over the 32 lanes of a warp.
//!
//! Warps take turns in a fixed order, each running until it blocks (a barrier,
//! a warp sync), finishes, or has run a quantum of instructions, so that a warp
//! spinning on a flag cannot starve the one that will set it. The order is a
//! pure function of the program and launch: the same inputs give the same
//! interleaving on every host.

use warpsim_banks::{AccessKind, BankArbiter};
use warpsim_ir::{AtomOp, BarrierKind, BarrierReduction, BoolOp, StateSpace};

use crate::arith::{self, f32_bits, f32_of, sign_extend, width_mask};
use crate::checker::BlockChecker;
use crate::config::{BarrierSemantics, MachineConfig};
use crate::error::*;
use crate::findings::Finding;
use crate::initcheck::{ReadSpace, WrittenBytes};
use crate::memory::{
    read_bytes, size_mask, write_bytes, GlobalMemory, CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW,
    SHARED_WINDOW, WINDOW_SIZE,
};
use crate::printf;
use crate::program::*;
use crate::stats::{InstrStats, RunStats};
use crate::warp::{Barrier, Path, PathWait, Warp, WARP_SIZE};
use crate::warp_sync;

/// Instructions a warp runs before the next warp gets its turn.
const QUANTUM: u32 = 512;

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
}

/// Runs blocks one after another, reusing its allocations; one per host thread.
pub struct BlockRunner<'a> {
    env: &'a LaunchEnv<'a>,
    /// The host CPU has AVX2 and FMA (see [`BlockRunner::run_warp`]).
    #[cfg(target_arch = "x86_64")]
    has_avx2_fma: bool,
    warps: Vec<Warp>,
    state: BlockState,
    /// Livelock detection: the progress mark the recorded states belong to,
    /// and fingerprints of the block's state at the end of scheduling rounds
    /// since the livelock window ran out without progress.
    spin_mark: Option<u64>,
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

/// Everything of a block except its warps, so a warp and the block state can
/// be borrowed at the same time.
struct BlockState {
    block_index: [u32; 3],
    shared: Vec<u8>,
    local: Vec<u8>,
    barriers: [Barrier; 16],
    live_threads: u32,
    instructions: u64,
    stats: RunStats,
    arbiter: BankArbiter,
    /// Scratch lane addresses for the bank arbiter.
    shared_addresses: [u32; WARP_SIZE],
    /// Scratch sector numbers for coalescing.
    sectors: Vec<u64>,
    checker: BlockChecker,
    /// The bytes of shared and local memory written so far, when checking
    /// for uninitialized reads.
    written: Option<WrittenBytes>,
    /// The block's `printf` output, in the order its threads printed it.
    printed: Vec<u8>,
    /// Bytes of `printf` output dropped because the buffer was full.
    printed_dropped: u64,
}

/// Where a lane's access goes once its address is resolved.
#[derive(Clone, Copy)]
enum Target {
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
            #[cfg(target_arch = "x86_64")]
            has_avx2_fma: std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma"),
            warps: Vec::new(),
            spin_mark: None,
            spin_states: std::collections::HashSet::new(),
            rounds_without_progress: 0,
            state: BlockState {
                block_index: [0; 3],
                shared: vec![0; shared_bytes],
                local: vec![0; local_bytes],
                barriers: [Barrier::default(); 16],
                live_threads: 0,
                instructions: 0,
                stats: RunStats::new(env.program.code.len()),
                arbiter: BankArbiter::new(env.config.shared_memory.bank_config()),
                shared_addresses: [0; WARP_SIZE],
                sectors: Vec::with_capacity(2 * WARP_SIZE),
                checker: BlockChecker::default(),
                written: env
                    .check_initialization
                    .then(|| WrittenBytes::new(shared_bytes, local_bytes)),
                printed: Vec::new(),
                printed_dropped: 0,
            },
        }
    }

    /// The `printf` output of the last block run, and how many bytes of it
    /// did not fit the buffer.
    pub fn take_printed(&mut self) -> (Vec<u8>, u64) {
        let dropped = std::mem::take(&mut self.state.printed_dropped);
        (std::mem::take(&mut self.state.printed), dropped)
    }

    /// The counters of every block this runner has run.
    pub fn into_stats(self) -> RunStats {
        self.state.stats
    }

    /// The checker's findings for the last block run (a hang or an invalid
    /// barrier that ended it included).
    pub fn take_findings(&mut self) -> Vec<Finding> {
        let fill = self.env.config.memory.fresh_fill;
        self.state.checker.take_findings(self.env.program, fill)
    }

    /// Runs one block to the end, or to its first fault.
    pub fn run_block(&mut self, block_index: [u32; 3]) -> Result<(), Box<ExecError>> {
        let result = self.run_block_inner(block_index);
        if let Err(error) = &result {
            if let Some(finding) = Finding::from_hang(error) {
                self.state.checker.report(finding);
            }
        }
        result
    }

    fn run_block_inner(&mut self, block_index: [u32; 3]) -> Result<(), Box<ExecError>> {
        self.setup(block_index);
        self.state.stats.blocks_run += 1;
        let livelock_window = self.env.config.barriers.livelock_window;
        loop {
            if self.env.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(Box::new(self.hang_error(FaultKind::Interrupted)));
            }
            let mut progressed = false;
            let mut unfinished = false;
            for warp_index in 0..self.warps.len() {
                if self.warps[warp_index].paths.is_empty() {
                    continue;
                }
                unfinished = true;
                let executed = self.run_warp(warp_index)?;
                progressed |= executed > 0;
            }
            if !unfinished {
                return Ok(());
            }
            if !progressed {
                let may_release = self.env.config.barriers.semantics == BarrierSemantics::Volta;
                if may_release && self.release_blocked_reconvergence() {
                    continue;
                }
                return Err(Box::new(self.hang_error(FaultKind::Deadlock)));
            }
            // Past the window, the block's state is fingerprinted: every
            // round while some thread waits, every SPIN_SAMPLE_ROUNDS rounds
            // otherwise (a long loop that computes without storing is then
            // hardly slowed). A state that repeats at a fixed stride repeats
            // in the samples too.
            if self.state.instructions - self.state.checker.last_progress > livelock_window {
                self.rounds_without_progress += 1;
                let sample = self.some_path_waits()
                    || self
                        .rounds_without_progress
                        .is_multiple_of(SPIN_SAMPLE_ROUNDS);
                if sample && self.state_repeats() {
                    return Err(Box::new(self.livelock_error(livelock_window)));
                }
            } else {
                self.rounds_without_progress = 0;
            }
        }
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
    fn state_repeats(&mut self) -> bool {
        use std::hash::{Hash, Hasher};
        let mark = self.state.checker.last_progress;
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
    fn livelock_error(&self, window: u64) -> ExecError {
        let mut error = self.hang_error(FaultKind::Livelock {
            window,
            across_blocks: false,
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
                error.spinning.push(SpinLoop {
                    warp: warp.warp,
                    pc: path.pc,
                    loop_start,
                    loop_end,
                    polls_global: polled.as_ref().is_some_and(|(_, global)| *global),
                    polled: polled.map(|(text, _)| text),
                });
            }
        }
        let blocks: u64 = self.env.grid.iter().map(|&dim| u64::from(dim)).product();
        let across_blocks = blocks > 1 && error.spinning.iter().any(|spin| spin.polls_global);
        error.kind = FaultKind::Livelock {
            window,
            across_blocks,
        };
        error
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
        let warp_count = threads.div_ceil(WARP_SIZE as u32) as usize;
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
        self.state.barriers = [Barrier::default(); 16];
        self.state.live_threads = threads;
        self.state.instructions = 0;
        self.warps.resize_with(warp_count, Warp::default);
        for (index, warp) in self.warps.iter_mut().enumerate() {
            warp.index = index as u32;
            warp.values.clear();
            warp.values
                .resize(program.value_regs as usize * WARP_SIZE, 0);
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
            warp.paths.clear();
            warp.paths.push(Path {
                pc: 0,
                reconverge: NO_RECONVERGENCE,
                mask: warp.valid,
                wait: PathWait::Ready,
            });
            for &(reg, init) in &program.warp_inits {
                let lanes = lanes_mut(&mut warp.values, reg);
                match init {
                    WarpInit::Constant(value) => lanes.fill(value),
                    WarpInit::GlobalVariable(index) => {
                        lanes.fill(env.global_variable_addresses[index as usize])
                    }
                    WarpInit::Special(special) => {
                        for (lane, slot) in lanes.iter_mut().enumerate() {
                            let thread = thread_index(first_thread + lane as u32, env.block_dim);
                            *slot = special_value(
                                special,
                                lane as u32,
                                index as u32,
                                warp_count as u32,
                                thread,
                                block_index,
                                env,
                            );
                        }
                    }
                }
            }
        }
        self.spin_mark = None;
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

    /// Runs warp `warp_index` for up to a quantum; returns how many
    /// instructions it executed (0: it is blocked or finished).
    ///
    /// The interpreter loop is compiled twice: for the baseline instruction
    /// set, and with AVX2 and FMA for hosts that have them (checked once, at
    /// run time). The lane loops vectorise far better with AVX2, and hardware
    /// FMA gives `fma.rn.f32` its single rounding directly.
    fn run_warp(&mut self, warp_index: usize) -> Result<u32, Box<ExecError>> {
        #[cfg(target_arch = "x86_64")]
        if self.has_avx2_fma {
            // SAFETY: `has_avx2_fma` is set only when the running CPU reports
            // AVX2 and FMA (`BlockRunner::new`), the one requirement of a
            // `target_feature` function.
            return unsafe { self.run_warp_avx2_fma(warp_index) };
        }
        self.run_warp_with::<false>(warp_index)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_warp_avx2_fma(&mut self, warp_index: usize) -> Result<u32, Box<ExecError>> {
        self.run_warp_with::<true>(warp_index)
    }

    #[inline(always)]
    fn run_warp_with<const HARDWARE_FMA: bool>(
        &mut self,
        warp_index: usize,
    ) -> Result<u32, Box<ExecError>> {
        let env = self.env;
        let program = env.program;
        let limit = env.config.limits.max_warp_instructions_per_block;
        let mut executed = 0;
        let mut streak = (usize::MAX, 0u32);
        // Before Volta a warp had one program counter: a path waiting at a
        // barrier holds the whole warp, and no path yields to its siblings.
        let per_warp = env.config.barriers.semantics == BarrierSemantics::PreVolta;
        while executed < QUANTUM {
            let warp = &mut self.warps[warp_index];
            let state = &mut self.state;
            let Some(path_index) = warp.select_path(program, &state.barriers, per_warp) else {
                break;
            };
            // Independent thread scheduling: a path that has run for a while
            // lets its siblings run, so one spinning on a flag that another
            // path of the warp will set cannot starve it.
            if streak.0 == path_index {
                streak.1 += 1;
                if streak.1 >= PATH_QUANTUM && warp.paths.len() > 1 && !per_warp {
                    warp.yield_path(path_index);
                    streak = (usize::MAX, 0);
                    continue;
                }
            } else {
                streak = (path_index, 0);
            }
            let pc = warp.paths[path_index].pc;
            let instruction = &program.code[pc as usize];
            let mut active = warp.paths[path_index].mask;
            if let Some(guard) = instruction.guard {
                active &= warp.pred_bits(guard.pred, guard.negated);
            }
            let counters = &mut state.stats.per_instruction[pc as usize];
            counters.executed += 1;
            counters.threads += u64::from(active.count_ones());
            executed += 1;
            state.instructions += 1;
            if state.instructions > limit {
                return Err(Box::new(
                    self.hang_error(FaultKind::InstructionLimit { limit }),
                ));
            }
            if let Err(fault) = execute::<HARDWARE_FMA>(env, warp, state, path_index, pc, active) {
                return Err(self.fault_error(*fault, pc, warp_index));
            }
        }
        Ok(executed)
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

/// A fault and the lane that caused it; boxed so the happy path stays small.
type Fault = Box<(FaultKind, u32)>;

#[cold]
fn fault(kind: FaultKind, lane: u32) -> Fault {
    Box::new((kind, lane))
}

/// The (x, y, z) index of linear thread `linear` of a block, x fastest.
pub fn thread_index(linear: u32, block_dim: [u32; 3]) -> [u32; 3] {
    let x = linear % block_dim[0];
    let y = (linear / block_dim[0]) % block_dim[1];
    let z = linear / (block_dim[0] * block_dim[1]);
    [x, y, z]
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

#[inline(always)]
fn lanes(values: &[u64], reg: u32) -> [u64; WARP_SIZE] {
    let mut out = [0; WARP_SIZE];
    let start = reg as usize * WARP_SIZE;
    out.copy_from_slice(&values[start..start + WARP_SIZE]);
    out
}

#[inline(always)]
fn lanes_mut(values: &mut [u64], reg: u32) -> &mut [u64] {
    let start = reg as usize * WARP_SIZE;
    &mut values[start..start + WARP_SIZE]
}

/// `dst = f(a)` on the active lanes. Lane `l` of the destination depends
/// only on lane `l` of the sources, so a destination that is also a source
/// can be updated lane by lane. With every lane active (the common case) the
/// result goes through a local array so the loop has no aliasing and vectorises.
#[inline(always)]
fn map1(values: &mut [u64], dst: u32, a: u32, active: u32, f: impl Fn(u64) -> u64) {
    let (dst, a) = (dst as usize * WARP_SIZE, a as usize * WARP_SIZE);
    if active == u32::MAX {
        let mut out = [0u64; WARP_SIZE];
        for (out, &x) in out.iter_mut().zip(&values[a..a + WARP_SIZE]) {
            *out = f(x);
        }
        values[dst..dst + WARP_SIZE].copy_from_slice(&out);
        return;
    }
    let values = &mut values[..dst.max(a) + WARP_SIZE];
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 != 0 {
            values[dst + lane] = f(values[a + lane]);
        }
    }
}

/// `dst = f(a, b)` on the active lanes, as [`map1`].
#[inline(always)]
fn map2(values: &mut [u64], dst: u32, a: u32, b: u32, active: u32, f: impl Fn(u64, u64) -> u64) {
    let (dst, a, b) = (
        dst as usize * WARP_SIZE,
        a as usize * WARP_SIZE,
        b as usize * WARP_SIZE,
    );
    if active == u32::MAX {
        let mut out = [0u64; WARP_SIZE];
        let (a, b) = (&values[a..a + WARP_SIZE], &values[b..b + WARP_SIZE]);
        for ((out, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *out = f(x, y);
        }
        values[dst..dst + WARP_SIZE].copy_from_slice(&out);
        return;
    }
    let values = &mut values[..dst.max(a).max(b) + WARP_SIZE];
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 != 0 {
            values[dst + lane] = f(values[a + lane], values[b + lane]);
        }
    }
}

/// `dst = f(a, b, c)` on the active lanes, as [`map1`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn map3(
    values: &mut [u64],
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    active: u32,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    let (dst, a, b, c) = (
        dst as usize * WARP_SIZE,
        a as usize * WARP_SIZE,
        b as usize * WARP_SIZE,
        c as usize * WARP_SIZE,
    );
    if active == u32::MAX {
        let mut out = [0u64; WARP_SIZE];
        let (a, b, c) = (
            &values[a..a + WARP_SIZE],
            &values[b..b + WARP_SIZE],
            &values[c..c + WARP_SIZE],
        );
        for (((out, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
            *out = f(x, y, z);
        }
        values[dst..dst + WARP_SIZE].copy_from_slice(&out);
        return;
    }
    let values = &mut values[..dst.max(a).max(b).max(c) + WARP_SIZE];
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 != 0 {
            values[dst + lane] = f(values[a + lane], values[b + lane], values[c + lane]);
        }
    }
}

/// The lanes where `test(lane)` holds, as a mask.
#[inline(always)]
fn lane_mask(test: impl Fn(usize) -> bool) -> u32 {
    let mut mask = 0u32;
    for lane in 0..WARP_SIZE {
        mask |= u32::from(test(lane)) << lane;
    }
    mask
}

/// Both operands of a comparison as order-preserving unsigned keys.
#[inline(always)]
fn order_keys(
    a: &[u64; WARP_SIZE],
    b: &[u64; WARP_SIZE],
    key: impl Fn(u64) -> u64,
) -> ([u64; WARP_SIZE], [u64; WARP_SIZE]) {
    let (mut x, mut y) = ([0u64; WARP_SIZE], [0u64; WARP_SIZE]);
    for lane in 0..WARP_SIZE {
        x[lane] = key(a[lane]);
        y[lane] = key(b[lane]);
    }
    (x, y)
}

/// `setp` over a whole warp: the comparison is chosen once, outside the lane
/// loop. Integers become order-preserving unsigned keys (signed values with
/// their sign bit flipped), so six loops serve every integer type.
#[inline(always)]
fn compare_lanes(
    cmp: warpsim_ir::CmpOp,
    ty: NumberType,
    a: &[u64; WARP_SIZE],
    b: &[u64; WARP_SIZE],
) -> u32 {
    use warpsim_ir::CmpOp::*;
    match ty {
        NumberType::Int(int) => {
            let signed = int.signed && !cmp.is_unsigned_only();
            let (x, y) = match (signed, int.bits) {
                // 32-bit integers, the common case: flipping the sign bit of the
                // low word orders signed values as unsigned ones.
                (true, 32) => order_keys(a, b, |value| u64::from(value as u32 ^ 0x8000_0000)),
                (false, 32) => order_keys(a, b, |value| value & 0xffff_ffff),
                (true, bits) => {
                    order_keys(a, b, |value| (sign_extend(value, bits) as u64) ^ (1 << 63))
                }
                (false, bits) => order_keys(a, b, |value| value & width_mask(bits)),
            };
            match cmp {
                Eq | Equ => lane_mask(|l| x[l] == y[l]),
                Ne | Neu => lane_mask(|l| x[l] != y[l]),
                Lt | Ltu | Lo => lane_mask(|l| x[l] < y[l]),
                Le | Leu | Ls => lane_mask(|l| x[l] <= y[l]),
                Gt | Gtu | Hi => lane_mask(|l| x[l] > y[l]),
                Ge | Geu | Hs => lane_mask(|l| x[l] >= y[l]),
                Num => u32::MAX,
                Nan => 0,
            }
        }
        NumberType::Float(_) => lane_mask(|lane| arith::compare(cmp, ty, a[lane], b[lane])),
    }
}

/// The value of a register that must be warp-uniform: the first active
/// lane's, or `Err` with the first active lane whose value differs.
fn uniform_value(values: &[u64], reg: u32, active: u32) -> Result<u64, u32> {
    let lanes = &values[reg as usize * WARP_SIZE..][..WARP_SIZE];
    let first = lanes[active.trailing_zeros().min(31) as usize];
    match (0..WARP_SIZE).find(|&lane| active >> lane & 1 != 0 && lanes[lane] != first) {
        Some(lane) => Err(lane as u32),
        None => Ok(first),
    }
}

/// Executes the instruction at `pc` for the active lanes of path `path_index`.
/// `HARDWARE_FMA`: the caller is compiled with the FMA instruction set.
#[inline(always)]
fn execute<const HARDWARE_FMA: bool>(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    path_index: usize,
    pc: u32,
    active: u32,
) -> Result<(), Fault> {
    let instruction = &env.program.code[pc as usize];
    let values = &mut warp.values;
    match instruction.kind {
        Kind::IntBinary { op, ty, dst, a, b } => match op {
            IntBinary::Add => map2(values, dst, a, b, active, |x, y| arith::int_add(x, y, ty)),
            IntBinary::Sub => map2(values, dst, a, b, active, |x, y| arith::int_sub(x, y, ty)),
            IntBinary::MulLo => map2(values, dst, a, b, active, |x, y| {
                arith::int_mul_lo(x, y, ty)
            }),
            IntBinary::MulHi => map2(values, dst, a, b, active, |x, y| {
                arith::int_mul_hi(x, y, ty)
            }),
            IntBinary::MulWide => map2(values, dst, a, b, active, |x, y| {
                arith::int_mul_wide(x, y, ty)
            }),
            IntBinary::Div => map2(values, dst, a, b, active, |x, y| arith::int_div(x, y, ty)),
            IntBinary::Rem => map2(values, dst, a, b, active, |x, y| arith::int_rem(x, y, ty)),
            IntBinary::Min => map2(values, dst, a, b, active, |x, y| arith::int_min(x, y, ty)),
            IntBinary::Max => map2(values, dst, a, b, active, |x, y| arith::int_max(x, y, ty)),
            IntBinary::And => map2(values, dst, a, b, active, |x, y| x & y),
            IntBinary::Or => map2(values, dst, a, b, active, |x, y| x | y),
            IntBinary::Xor => map2(values, dst, a, b, active, |x, y| x ^ y),
            IntBinary::Shl => map2(values, dst, a, b, active, |x, y| arith::int_shl(x, y, ty)),
            IntBinary::Shr => map2(values, dst, a, b, active, |x, y| arith::int_shr(x, y, ty)),
        },
        Kind::FloatBinary { op, ty, dst, a, b } => match ty {
            // One closure per operation, so each lane loop is monomorphic.
            // NaN results are the canonical NaN, as on NVIDIA GPUs.
            FloatType::F32 => {
                let result = arith::f32_result;
                match op {
                    FloatBinary::Add => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) + f32_of(y))
                    }),
                    FloatBinary::Sub => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) - f32_of(y))
                    }),
                    FloatBinary::Mul => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) * f32_of(y))
                    }),
                    FloatBinary::Div => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) / f32_of(y))
                    }),
                    FloatBinary::Min => map2(values, dst, a, b, active, |x, y| {
                        result(arith::f32_min(f32_of(x), f32_of(y)))
                    }),
                    FloatBinary::Max => map2(values, dst, a, b, active, |x, y| {
                        result(arith::f32_max(f32_of(x), f32_of(y)))
                    }),
                }
            }
            FloatType::F64 => {
                let (x, y) = (f64::from_bits, f64::from_bits);
                match op {
                    FloatBinary::Add => {
                        map2(values, dst, a, b, active, |p, q| (x(p) + y(q)).to_bits())
                    }
                    FloatBinary::Sub => {
                        map2(values, dst, a, b, active, |p, q| (x(p) - y(q)).to_bits())
                    }
                    FloatBinary::Mul => {
                        map2(values, dst, a, b, active, |p, q| (x(p) * y(q)).to_bits())
                    }
                    FloatBinary::Div => {
                        map2(values, dst, a, b, active, |p, q| (x(p) / y(q)).to_bits())
                    }
                    FloatBinary::Min => map2(values, dst, a, b, active, |p, q| {
                        arith::f64_min(x(p), y(q)).to_bits()
                    }),
                    FloatBinary::Max => map2(values, dst, a, b, active, |p, q| {
                        arith::f64_max(x(p), y(q)).to_bits()
                    }),
                }
            }
        },
        Kind::IntUnary { op, ty, dst, a } => match op {
            IntUnary::Mov => map1(values, dst, a, active, |x| x & width_mask(ty.bits)),
            IntUnary::Neg => map1(values, dst, a, active, |x| arith::int_neg(x, ty)),
            IntUnary::Abs => map1(values, dst, a, active, |x| arith::int_abs(x, ty)),
            IntUnary::Not => map1(values, dst, a, active, |x| !x & width_mask(ty.bits)),
            IntUnary::Popc => map1(values, dst, a, active, |x| arith::int_popc(x, ty)),
            IntUnary::Clz => map1(values, dst, a, active, |x| arith::int_clz(x, ty)),
            IntUnary::Brev => map1(values, dst, a, active, |x| arith::int_brev(x, ty)),
            IntUnary::Bfind => map1(values, dst, a, active, |x| arith::int_bfind(x, ty, false)),
            IntUnary::BfindShiftAmount => {
                map1(values, dst, a, active, |x| arith::int_bfind(x, ty, true))
            }
        },
        // One closure per operation, so each lane loop is monomorphic. Sign
        // operations change the sign bit only; the others give NVIDIA's
        // canonical NaN. The approximate forms (`ex2`, `lg2`, `sin`, `cos`)
        // are computed exactly: within the PTX ISA's bounds, the same on every host.
        Kind::FloatUnary { op, ty, dst, a } => match ty {
            FloatType::F32 => match op {
                FloatUnary::Neg => map1(values, dst, a, active, f32_sign_lane(|x| -x)),
                FloatUnary::Abs => map1(values, dst, a, active, f32_sign_lane(f32::abs)),
                FloatUnary::Sqrt => map1(values, dst, a, active, f32_value_lane(f32::sqrt)),
                FloatUnary::Rcp => map1(values, dst, a, active, f32_value_lane(|x| 1.0 / x)),
                FloatUnary::Rsqrt => {
                    map1(values, dst, a, active, f32_value_lane(|x| 1.0 / x.sqrt()))
                }
                FloatUnary::Ex2 => map1(values, dst, a, active, f32_value_lane(f32::exp2)),
                FloatUnary::Lg2 => map1(values, dst, a, active, f32_value_lane(f32::log2)),
                FloatUnary::Sin => map1(values, dst, a, active, f32_value_lane(f32::sin)),
                FloatUnary::Cos => map1(values, dst, a, active, f32_value_lane(f32::cos)),
            },
            FloatType::F64 => match op {
                FloatUnary::Neg => map1(values, dst, a, active, f64_lane(|x| -x)),
                FloatUnary::Abs => map1(values, dst, a, active, f64_lane(f64::abs)),
                FloatUnary::Sqrt => map1(values, dst, a, active, f64_lane(f64::sqrt)),
                FloatUnary::Rcp => map1(values, dst, a, active, f64_lane(|x| 1.0 / x)),
                FloatUnary::Rsqrt => map1(values, dst, a, active, f64_lane(|x| 1.0 / x.sqrt())),
                FloatUnary::Ex2 => map1(values, dst, a, active, f64_lane(f64::exp2)),
                FloatUnary::Lg2 => map1(values, dst, a, active, f64_lane(f64::log2)),
                FloatUnary::Sin => map1(values, dst, a, active, f64_lane(f64::sin)),
                FloatUnary::Cos => map1(values, dst, a, active, f64_lane(f64::cos)),
            },
        },
        Kind::IntMulAdd {
            mode,
            ty,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::int_mad(mode, x, y, z, ty)
        }),
        Kind::CvtHalf {
            to_half,
            other,
            rounding,
            saturate,
            dst,
            src,
        } => {
            let single = NumberType::Float(FloatType::F32);
            if to_half {
                map1(values, dst, src, active, |x| {
                    u64::from(arith::f32_to_f16(f32_of(x)))
                });
            } else {
                map1(values, dst, src, active, |x| {
                    let value = f32_bits(arith::f16_to_f32(x as u16));
                    arith::convert(value, single, other, rounding, saturate)
                });
            }
        }
        Kind::HalfBinary {
            op,
            packed,
            dst,
            a,
            b,
        } => half_binary(values, op, packed, dst, a, b, active),
        Kind::HalfUnary { op, packed, dst, a } => half_unary(values, op, packed, dst, a, active),
        Kind::HalfFma {
            packed: false,
            relu: false,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, arith::f16_fma),
        Kind::HalfFma {
            packed: true,
            relu: false,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f16x2_ternary(x, y, z, arith::f16_fma)
        }),
        Kind::HalfFma {
            packed,
            relu: true,
            dst,
            a,
            b,
            c,
        } => half_fma_relu(values, packed, dst, a, b, c, active),
        Kind::Bf16Binary {
            op,
            packed,
            dst,
            a,
            b,
        } => bf16_binary(values, op, packed, dst, a, b, active),
        Kind::Bf16Unary { op, packed, dst, a } => bf16_unary(values, op, packed, dst, a, active),
        Kind::Bf16Fma {
            packed,
            relu,
            dst,
            a,
            b,
            c,
        } => bf16_fma(values, packed, relu, dst, a, b, c, active),
        Kind::Bf16Setp {
            cmp,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            let a = lanes(values, a);
            let b = lanes(values, b);
            let result = lane_mask(|lane| arith::bf16_compare(cmp, a[lane], b[lane]));
            set_preds(warp, active, result, dst, dst_not, combine);
        }
        Kind::HalfSet {
            cmp,
            format,
            packed,
            dst,
            a,
            b,
            combine,
        } => half_set(warp, cmp, format, packed, dst, a, b, combine, active),
        Kind::CvtToBf16 {
            from,
            rounding,
            saturate,
            dst,
            src,
        } => convert_to_bf16(values, from, rounding, saturate, dst, src, active),
        Kind::CvtFromBf16 {
            to,
            rounding,
            saturate,
            dst,
            src,
        } => convert_from_bf16(values, to, rounding, saturate, dst, src, active),
        Kind::CvtPair {
            format,
            rounding,
            dst,
            a,
            b,
        } => convert_pair(values, format, rounding, dst, a, b, active),
        Kind::HalfSetp {
            cmp,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            let a = lanes(values, a);
            let b = lanes(values, b);
            let result = lane_mask(|lane| arith::f16_compare(cmp, a[lane], b[lane]));
            set_preds(warp, active, result, dst, dst_not, combine);
        }
        Kind::SatS32 { op, dst, a, b, c } => match op {
            SatOp::Add => map2(values, dst, a, b, active, arith::s32_add_sat),
            SatOp::Sub => map2(values, dst, a, b, active, arith::s32_sub_sat),
            SatOp::Mul | SatOp::MulAdd => map3(values, dst, a, b, c, active, arith::s32_mad_hi_sat),
        },
        Kind::SatF32 { op, dst, a, b, c } => match op {
            SatOp::Add => map2(values, dst, a, b, active, |x, y| {
                arith::f32_saturate(f32_of(x) + f32_of(y))
            }),
            SatOp::Sub => map2(values, dst, a, b, active, |x, y| {
                arith::f32_saturate(f32_of(x) - f32_of(y))
            }),
            SatOp::Mul => map2(values, dst, a, b, active, |x, y| {
                arith::f32_saturate(f32_of(x) * f32_of(y))
            }),
            SatOp::MulAdd => map3(values, dst, a, b, c, active, |x, y, z| {
                arith::f32_saturate(arith::fma_f32(f32_of(x), f32_of(y), f32_of(z)))
            }),
        },
        Kind::FmaDirected {
            rounding,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f32_result(arith::fma_f32_directed(
                f32_of(x),
                f32_of(y),
                f32_of(z),
                rounding,
            ))
        }),
        Kind::Fma { ty, dst, a, b, c } => match ty {
            // With the FMA instruction set, `mul_add` is one correctly rounded instruction.
            FloatType::F32 if HARDWARE_FMA => map3(values, dst, a, b, c, active, |x, y, z| {
                arith::f32_result(f32_of(x).mul_add(f32_of(y), f32_of(z)))
            }),
            // All lanes first through `f64` in one branch-free (vectorisable)
            // pass, then the rare lanes where that could round differently again.
            FloatType::F32 if active == u32::MAX => {
                let (a, b, c) = (
                    a as usize * WARP_SIZE,
                    b as usize * WARP_SIZE,
                    c as usize * WARP_SIZE,
                );
                let mut wide = [0f64; WARP_SIZE];
                for (lane, wide) in wide.iter_mut().enumerate() {
                    *wide = arith::fma_f32_wide(
                        f32_of(values[a + lane]),
                        f32_of(values[b + lane]),
                        f32_of(values[c + lane]),
                    );
                }
                let mut fallback = 0u32;
                for (lane, &wide) in wide.iter().enumerate() {
                    fallback |= u32::from(arith::fma_f32_needs_fallback(wide)) << lane;
                }
                // The rare lanes are recomputed before any lane of `dst` is
                // written, since `dst` may be one of the sources.
                let mut exact = [0f32; WARP_SIZE];
                let mut pending = fallback;
                while pending != 0 {
                    let lane = pending.trailing_zeros() as usize;
                    exact[lane] = arith::fma_f32(
                        f32_of(values[a + lane]),
                        f32_of(values[b + lane]),
                        f32_of(values[c + lane]),
                    );
                    pending &= pending - 1;
                }
                let out = lanes_mut(values, dst);
                for (lane, out) in out.iter_mut().enumerate() {
                    let value = if fallback >> lane & 1 != 0 {
                        exact[lane]
                    } else {
                        wide[lane] as f32
                    };
                    *out = arith::f32_result(value);
                }
            }
            FloatType::F32 => map3(values, dst, a, b, c, active, |x, y, z| {
                f32_bits(arith::fma_f32(f32_of(x), f32_of(y), f32_of(z)))
            }),
            FloatType::F64 => map3(values, dst, a, b, c, active, |x, y, z| {
                f64::from_bits(x)
                    .mul_add(f64::from_bits(y), f64::from_bits(z))
                    .to_bits()
            }),
        },
        Kind::Setp {
            cmp,
            ty,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            let a = lanes(values, a);
            let b = lanes(values, b);
            let result = compare_lanes(cmp, ty, &a, &b);
            set_preds(warp, active, result, dst, dst_not, combine);
        }
        Kind::Set {
            cmp,
            ty,
            half,
            float_result,
            dst,
            a,
            b,
            combine,
        } => {
            let (a, b) = (lanes(values, a), lanes(values, b));
            let mut result = match half {
                Some(HalfFormat::F16) => {
                    lane_mask(|lane| arith::f16_compare(cmp, a[lane], b[lane]))
                }
                Some(HalfFormat::Bf16) => {
                    lane_mask(|lane| arith::bf16_compare(cmp, a[lane], b[lane]))
                }
                None => compare_lanes(cmp, ty, &a, &b),
            };
            if let Some((op, pred, negated)) = combine {
                result = combine_bits(op, result, warp.pred_bits(pred, negated));
            }
            let truth = if float_result {
                u64::from(1.0f32.to_bits())
            } else {
                0xffff_ffff
            };
            let out = lanes_mut(&mut warp.values, dst);
            for (lane, out) in out.iter_mut().enumerate() {
                if active >> lane & 1 != 0 {
                    *out = if result >> lane & 1 != 0 { truth } else { 0 };
                }
            }
        }
        Kind::Selp {
            dst,
            a,
            b,
            cond,
            negated,
        } => {
            let a = lanes(values, a);
            let b = lanes(values, b);
            let bits = warp.pred_bits(cond, negated);
            let out = lanes_mut(&mut warp.values, dst);
            for lane in 0..WARP_SIZE {
                if active >> lane & 1 != 0 {
                    out[lane] = if bits >> lane & 1 != 0 {
                        a[lane]
                    } else {
                        b[lane]
                    };
                }
            }
        }
        Kind::PredBinary {
            op,
            dst,
            a,
            a_negated,
            b,
            b_negated,
        } => {
            let result = combine_bits(
                op,
                warp.pred_bits(a, a_negated),
                warp.pred_bits(b, b_negated),
            );
            warp.set_pred(dst, active, result);
        }
        Kind::Cvt {
            dst_ty,
            src_ty,
            rounding,
            saturate,
            dst,
            src,
        } => match (src_ty, dst_ty, saturate) {
            // Integer widening and narrowing, by far the most common conversion.
            (NumberType::Int(from), NumberType::Int(to), false) => {
                map1(values, dst, src, active, |x| arith::resize_int(x, from, to))
            }
            _ => map1(values, dst, src, active, |x| {
                arith::convert(x, src_ty, dst_ty, rounding, saturate)
            }),
        },
        Kind::ReadClock { dst, wide } => {
            let clock = if wide {
                state.instructions
            } else {
                state.instructions & 0xffff_ffff
            };
            warp.fill_lanes(dst, active, clock);
        }
        Kind::Load {
            space,
            value,
            dst,
            count,
            addr,
        } => memory_access(
            env, warp, state, pc, active, space, value, &dst, count, addr, false,
        )?,
        Kind::Store {
            space,
            value,
            src,
            count,
            addr,
        } => {
            state.checker.last_progress = state.instructions;
            memory_access(
                env, warp, state, pc, active, space, value, &src, count, addr, true,
            )?
        }
        Kind::Atom {
            space,
            op,
            ty,
            size,
            dst,
            addr,
            a,
            b,
        } => atomic(
            env, warp, state, pc, active, space, op, ty, size, dst, addr, a, b,
        )?,
        Kind::Barrier {
            kind,
            id,
            count,
            reduction,
        } => {
            return barrier(
                env.program,
                env.config.barriers.semantics,
                warp,
                state,
                path_index,
                active,
                kind,
                id,
                count,
                reduction,
            );
        }
        Kind::WarpSync { mask }
        | Kind::Shuffle { mask, .. }
        | Kind::Vote { mask, .. }
        | Kind::Redux { mask, .. }
        | Kind::Match { mask, .. } => {
            if active == 0 {
                // Every lane's guard is false: nobody arrives, the path moves on.
                warp.paths[path_index].pc = pc + 1;
                return Ok(());
            }
            // Each lane names its own mask (cooperative groups' tiles give
            // each tile its own); the path waits for the lanes of them all.
            let masks = lanes(values, mask);
            let mut union = 0u32;
            let mut outside = 0u32;
            for (lane, &lane_mask) in masks.iter().enumerate() {
                if active >> lane & 1 != 0 {
                    union |= lane_mask as u32;
                    outside |= (!(lane_mask as u32) >> lane & 1) << lane;
                }
            }
            let mask = union;
            warp_sync::arrive(
                env.program,
                warp,
                &mut state.checker,
                path_index,
                active,
                mask,
                outside,
            );
            return Ok(());
        }
        Kind::Mul24 {
            hi,
            signed,
            dst,
            a,
            b,
        } => map2(values, dst, a, b, active, |x, y| {
            arith::mul24(x, y, hi, signed)
        }),
        Kind::Sad { ty, dst, a, b, c } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::sad(x, y, z, ty)
        }),
        Kind::Testp { class, ty, dst, a } => {
            let a = lanes(values, a);
            let result = lane_mask(|lane| arith::float_class(a[lane], ty, class));
            warp.set_pred(dst, active, result);
        }
        Kind::CopySign { ty, dst, a, b } => {
            map2(values, dst, a, b, active, |x, y| arith::copysign(x, y, ty))
        }
        Kind::Fence => {}
        Kind::BitFieldExtract {
            ty,
            dst,
            a,
            position,
            length,
        } => map3(values, dst, a, position, length, active, |x, p, l| {
            arith::bit_field_extract(x, p, l, ty)
        }),
        Kind::BitFieldInsert {
            bits,
            dst,
            field,
            base,
            position,
            length,
        } => {
            // Four inputs: read them all before writing, as `dst` may be one.
            let (field, base, position, length) = (
                lanes(values, field),
                lanes(values, base),
                lanes(values, position),
                lanes(values, length),
            );
            let out = lanes_mut(values, dst);
            for (lane, out) in out.iter_mut().enumerate() {
                if active >> lane & 1 != 0 {
                    *out = arith::bit_field_insert(
                        field[lane],
                        base[lane],
                        position[lane],
                        length[lane],
                        bits,
                    );
                }
            }
        }
        Kind::Permute {
            dst,
            a,
            b,
            selector,
        } => map3(values, dst, a, b, selector, active, arith::permute),
        Kind::ActiveMask { dst } => {
            // The lanes of the path executing it, whatever the guard said.
            warp.fill_lanes(dst, active, u64::from(warp.paths[path_index].mask));
        }
        Kind::FunnelShift {
            left,
            clamp,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::funnel_shift(x, y, z, left, clamp)
        }),
        Kind::Lop3 { lut, dst, a, b, c } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::lop3(x, y, z, lut)
        }),
        Kind::Pack {
            element_bits,
            count,
            dst,
            src,
        } => {
            let mut elements = [[0u64; WARP_SIZE]; 4];
            for (element, &reg) in elements.iter_mut().zip(&src).take(count as usize) {
                *element = lanes(values, reg);
            }
            let out = lanes_mut(values, dst);
            for (lane, out) in out.iter_mut().enumerate() {
                if active >> lane & 1 != 0 {
                    let lane_elements = elements.map(|element| element[lane]);
                    *out = arith::pack(&lane_elements[..count as usize], element_bits);
                }
            }
        }
        Kind::Unpack {
            element_bits,
            count,
            keep,
            dst,
            src,
        } => {
            // The source first: it may also be a destination.
            let source = lanes(values, src);
            for (index, &reg) in dst.iter().enumerate().take(count as usize) {
                if keep >> index & 1 == 0 {
                    continue;
                }
                let out = lanes_mut(values, reg);
                for (lane, out) in out.iter_mut().enumerate() {
                    if active >> lane & 1 != 0 {
                        *out = arith::unpack(source[lane], index as u32, element_bits);
                    }
                }
            }
        }
        Kind::Cvta {
            window,
            to_generic,
            bits,
            dst,
            src,
        } => {
            let mask = width_mask(bits);
            if to_generic {
                map1(values, dst, src, active, |x| x.wrapping_add(window) & mask);
            } else {
                map1(values, dst, src, active, |x| x.wrapping_sub(window) & mask);
            }
        }
        Kind::Printf {
            dst,
            format,
            arguments,
        } => printf(env, warp, state, active, dst, format, arguments),
        Kind::AssertFail {
            message,
            file,
            line,
            function,
        } => {
            if active != 0 {
                let lane = active.trailing_zeros() as usize;
                let thread = warp.index as usize * WARP_SIZE + lane;
                let text = |register: ValueReg| {
                    let address = values[register as usize * WARP_SIZE + lane];
                    String::from_utf8_lossy(&read_string(env, state, thread, address)).into_owned()
                };
                // Every failing thread prints its message, as on a GPU.
                let threads = (0..WARP_SIZE as u32)
                    .filter(|lane| active >> lane & 1 != 0)
                    .map(|lane| thread_index(warp.index * WARP_SIZE as u32 + lane, env.block_dim))
                    .collect();
                return Err(fault(
                    FaultKind::AssertionFailed {
                        expression: text(message),
                        file: text(file),
                        line: values[line as usize * WARP_SIZE + lane] as u32,
                        function: text(function),
                        threads,
                    },
                    lane as u32,
                ));
            }
        }
        Kind::Trap => {
            if active != 0 {
                return Err(fault(FaultKind::Trap, active.trailing_zeros()));
            }
        }
        Kind::Nop => {}
        Kind::Branch { target, reconverge } => {
            branch(warp, path_index, active, target, reconverge);
            return Ok(());
        }
        // Exits leave the paths where they are (only masks and waits change).
        Kind::Exit => exit_lanes(env.program, warp, state, active),
    }
    warp.paths[path_index].pc = pc + 1;
    Ok(())
}

/// The destinations of `setp d[|q]`: `d = cmp boolop c`, `q = !cmp boolop c`
/// (PTX ISA, `setp`), written after the comparison, so `c` may be either.
#[inline(always)]
fn set_preds(
    warp: &mut Warp,
    active: u32,
    compared: u32,
    dst: u32,
    dst_not: Option<u32>,
    combine: Option<(BoolOp, u32, bool)>,
) {
    let (p, q) = match combine {
        Some((op, pred, negated)) => {
            let c = warp.pred_bits(pred, negated);
            (
                combine_bits(op, compared, c),
                combine_bits(op, !compared, c),
            )
        }
        None => (compared, !compared),
    };
    warp.set_pred(dst, active, p);
    if let Some(q_reg) = dst_not {
        warp.set_pred(q_reg, active, q);
    }
}

/// Combines two lane masks of predicates.
#[inline(always)]
fn combine_bits(op: BoolOp, x: u32, y: u32) -> u32 {
    match op {
        BoolOp::And => x & y,
        BoolOp::Or => x | y,
        BoolOp::Xor => x ^ y,
    }
}

/// An `f32` operation on a lane's register bits that changes the sign bit only.
#[inline(always)]
fn f32_sign_lane(f: impl Fn(f32) -> f32) -> impl Fn(u64) -> u64 {
    move |x| f32_bits(f(f32_of(x)))
}

/// An `f32` arithmetic operation on a lane's register bits (canonical NaN).
#[inline(always)]
fn f32_value_lane(f: impl Fn(f32) -> f32) -> impl Fn(u64) -> u64 {
    move |x| arith::f32_result(f(f32_of(x)))
}

/// An `f64` operation on a lane's register bits.
#[inline(always)]
fn f64_lane(f: impl Fn(f64) -> f64) -> impl Fn(u64) -> u64 {
    move |x| f(f64::from_bits(x)).to_bits()
}

/// A branch: the lanes in `taken` go to `target`, the rest of the path falls
/// through; if both sides have lanes, the path splits until `reconverge`.
fn branch(warp: &mut Warp, path_index: usize, taken: u32, target: u32, reconverge: u32) {
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
fn exit_lanes(program: &Program, warp: &mut Warp, state: &mut BlockState, lanes: u32) {
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
fn try_complete_barrier(program: &Program, state: &mut BlockState, id: usize) {
    let barrier = &mut state.barriers[id];
    let counted = barrier.count.is_some();
    if barrier.try_complete(state.live_threads) {
        state
            .checker
            .complete(id as u32, counted, |pc| program.is_divergent_barrier(pc));
    }
}

#[allow(clippy::too_many_arguments)]
fn barrier(
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

/// Computes a lane's address.
#[inline(always)]
fn lane_address(values: &[u64], addr: LoweredAddress, lane: usize) -> u64 {
    match addr.base {
        Some(reg) => {
            let sum = values[reg as usize * WARP_SIZE + lane].wrapping_add(addr.offset as u64);
            if addr.base_bits <= 32 {
                sum & 0xffff_ffff
            } else {
                sum
            }
        }
        None => addr.offset as u64,
    }
}

/// A lane's address and where it goes, once it passed the alignment every
/// access of `size` bytes needs (PTX requires natural alignment).
#[inline(always)]
fn lane_target(
    env: &LaunchEnv,
    values: &[u64],
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
fn resolve(space: StateSpace, address: u64) -> Target {
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
fn memory_access(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    space: StateSpace,
    value: MemoryValue,
    registers: &[u32; 4],
    count: u8,
    addr: LoweredAddress,
    store: bool,
) -> Result<(), Fault> {
    let size = u32::from(value.size);
    let total = size * u32::from(count);
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
    state.sectors.clear();
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
            }
            Target::Global(address) => {
                global_lanes |= 1 << lane;
                push_sectors(&mut state.sectors, address, total);
            }
            _ => {}
        }
        for (element, &register) in registers.iter().enumerate().take(usize::from(count)) {
            let element_offset = (element as u32 * size) as u64;
            let out_of_bounds = || out_of_bounds(env, target, address, total, store, lane);
            let reg = register as usize * WARP_SIZE + lane;
            if store {
                let bits = warp.values[reg] & size_mask(size);
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
                    Target::Global(address) => {
                        env.global.write(address + element_offset, size, bits).ok()
                    }
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
                let raw = load(env, state, target, thread, element_offset, size, total)
                    .ok_or_else(out_of_bounds)?;
                let extended = if value.sign_extend && size < 8 {
                    sign_extend(raw, value.size * 8) as u64 & width_mask(value.register_bits)
                } else {
                    raw
                };
                warp.values[reg] = extended;
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
        let verdict = state
            .arbiter
            .request(kind, total, shared_lanes, &state.shared_addresses);
        record_wavefronts(counters, verdict);
    }
    if global_lanes != 0 {
        record_sectors(counters, &mut state.sectors);
    }
    Ok(())
}

/// What a memory instruction does to the bytes it touches, for the
/// initialization checker.
#[derive(Clone, Copy)]
struct InitAccess {
    reads: bool,
    writes: bool,
    atomic: bool,
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
fn observe_initialization(
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
fn load(
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
        Target::Global(address) => env.global.read(address + element_offset, size).ok(),
        Target::Param(offset) => read_bytes(env.params, (offset + element_offset) as usize, size),
        Target::Const(offset) => read_bytes(
            &env.program.const_data,
            (offset + element_offset) as usize,
            size,
        ),
    }
}

/// `size` bytes at a generic `address`, as `thread` of the block sees them.
fn read_generic(
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
fn read_string(env: &LaunchEnv, state: &BlockState, thread: usize, address: u64) -> Vec<u8> {
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
struct LaneMemory<'a> {
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
fn printf(
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
        let format_address = warp.values[format as usize * WARP_SIZE + lane];
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
                arguments: warp.values[arguments as usize * WARP_SIZE + lane],
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
            warp.values[dst as usize * WARP_SIZE + lane] = u64::from(taken as u32);
        }
    }
}

/// A lane's access of `size` bytes at `address`, landing in `target`, falls
/// outside its space. (Not `#[cold]`: `fault` is, and marking this one too
/// makes `memory_access`'s lane loop some 8% longer.)
fn out_of_bounds(
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
fn local_index(
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

/// Records the 32-byte sectors an access touches. Neighbouring lanes usually
/// touch the same sector, so repeats of the last one are dropped at once and
/// the final sort has little left to do.
#[inline(always)]
fn push_sectors(sectors: &mut Vec<u64>, address: u64, size: u32) {
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
fn record_sectors(counters: &mut InstrStats, sectors: &mut Vec<u64>) {
    sectors.sort_unstable();
    sectors.dedup();
    counters.global_requests += 1;
    counters.sectors += sectors.len() as u64;
}

fn record_wavefronts(counters: &mut InstrStats, verdict: warpsim_banks::Wavefronts) {
    counters.shared_requests += 1;
    counters.wavefronts += u64::from(verdict.wavefronts);
    counters.ideal_wavefronts += u64::from(verdict.ideal);
    counters.bank_conflicts += u64::from(verdict.conflicts());
}

/// The new value of an atomic read-modify-write.
fn atomic_update(op: AtomOp, ty: NumberType, old: u64, a: u64, b: u64) -> u64 {
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
fn atomic(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    space: StateSpace,
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
    state.sectors.clear();
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let (address, target) = lane_target(env, &warp.values, addr, lane, space, size)?;
        let operand = warp.values[a as usize * WARP_SIZE + lane] & mask;
        let swap = b.map_or(0, |b| warp.values[b as usize * WARP_SIZE + lane] & mask);
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
            Target::Global(address) => {
                push_sectors(&mut state.sectors, address, size);
                env.global
                    .atomic(address, size, update)
                    .map_err(|_| out_of_bounds())?
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
            warp.values[dst as usize * WARP_SIZE + lane] = old;
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
        let verdict = state
            .arbiter
            .request(kind, size, shared_lanes, &state.shared_addresses);
        record_wavefronts(counters, verdict);
    }
    if !state.sectors.is_empty() {
        record_sectors(counters, &mut state.sectors);
    }
    Ok(())
}

/// A binary operation on 16-bit floats of either format, applied to each
/// active lane's value, or (`packed`) to both halves of each lane's pair.
#[inline(always)]
fn map2_halves(
    values: &mut [u64],
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
    f: impl Fn(u64, u64) -> u64 + Copy,
) {
    if packed {
        map2(values, dst, a, b, active, |x, y| {
            arith::f16x2_binary(x, y, f)
        });
    } else {
        map2(values, dst, a, b, active, f);
    }
}

/// `.f16` (or, `packed`, `.f16x2`) binary arithmetic on the active lanes:
/// one monomorphic lane loop per operation, the rounding done by arith.rs.
#[inline(always)]
fn half_binary(
    values: &mut [u64],
    op: HalfBinary,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
) {
    match op {
        HalfBinary::Add => map2_halves(values, packed, dst, a, b, active, arith::f16_add),
        HalfBinary::Sub => map2_halves(values, packed, dst, a, b, active, arith::f16_sub),
        HalfBinary::Mul => map2_halves(values, packed, dst, a, b, active, arith::f16_mul),
        HalfBinary::Min => map2_halves(values, packed, dst, a, b, active, arith::f16_min),
        HalfBinary::Max => map2_halves(values, packed, dst, a, b, active, arith::f16_max),
        HalfBinary::MinNan => map2_halves(values, packed, dst, a, b, active, arith::f16_min_nan),
        HalfBinary::MaxNan => map2_halves(values, packed, dst, a, b, active, arith::f16_max_nan),
    }
}

/// `fma.rn.relu.f16` (or, `packed`, `.f16x2`) on the active lanes. Out of
/// line, as are the bfloat16 operations below, so that the instructions
/// most kernels run keep the interpreter loop to themselves.
#[inline(never)]
fn half_fma_relu(values: &mut [u64], packed: bool, dst: u32, a: u32, b: u32, c: u32, active: u32) {
    if packed {
        map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f16x2_ternary(x, y, z, arith::f16_fma_relu)
        });
    } else {
        map3(values, dst, a, b, c, active, arith::f16_fma_relu);
    }
}

/// `.bf16` (or, `packed`, `.bf16x2`) binary arithmetic on the active lanes.
#[inline(never)]
fn bf16_binary(
    values: &mut [u64],
    op: HalfBinary,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
) {
    match op {
        HalfBinary::Add => map2_halves(values, packed, dst, a, b, active, arith::bf16_add),
        HalfBinary::Sub => map2_halves(values, packed, dst, a, b, active, arith::bf16_sub),
        HalfBinary::Mul => map2_halves(values, packed, dst, a, b, active, arith::bf16_mul),
        HalfBinary::Min => map2_halves(values, packed, dst, a, b, active, arith::bf16_min),
        HalfBinary::Max => map2_halves(values, packed, dst, a, b, active, arith::bf16_max),
        HalfBinary::MinNan => map2_halves(values, packed, dst, a, b, active, arith::bf16_min_nan),
        HalfBinary::MaxNan => map2_halves(values, packed, dst, a, b, active, arith::bf16_max_nan),
    }
}

/// `neg`/`abs` on `.bf16` (or, `packed`, `.bf16x2`) lanes.
#[inline(never)]
fn bf16_unary(values: &mut [u64], op: HalfUnary, packed: bool, dst: u32, a: u32, active: u32) {
    let f = match op {
        HalfUnary::Neg => arith::bf16_neg,
        HalfUnary::Abs => arith::bf16_abs,
    };
    if packed {
        map1(values, dst, a, active, |x| arith::f16x2_unary(x, f));
    } else {
        map1(values, dst, a, active, f);
    }
}

/// `fma.rn[.relu].bf16` (or, `packed`, `.bf16x2`) on the active lanes.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn bf16_fma(
    values: &mut [u64],
    packed: bool,
    relu: bool,
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    active: u32,
) {
    let f = if relu {
        arith::bf16_fma_relu
    } else {
        arith::bf16_fma
    };
    if packed {
        map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f16x2_ternary(x, y, z, f)
        });
    } else {
        map3(values, dst, a, b, c, active, f);
    }
}

/// `set.cmp.ty.ty` of a 16-bit float type: each element of the result is
/// 1.0 in `format` where its comparison (combined with the predicate, if
/// any) holds, else 0.0.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn half_set(
    warp: &mut Warp,
    cmp: warpsim_ir::CmpOp,
    format: HalfFormat,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    combine: Option<(BoolOp, PredReg, bool)>,
    active: u32,
) {
    let (compare, one): (fn(warpsim_ir::CmpOp, u64, u64) -> bool, u64) = match format {
        HalfFormat::F16 => (arith::f16_compare, 0x3c00),
        HalfFormat::Bf16 => (arith::bf16_compare, 0x3f80),
    };
    let (a, b) = (lanes(&warp.values, a), lanes(&warp.values, b));
    let predicate = combine.map(|(op, pred, negated)| (op, warp.pred_bits(pred, negated)));
    let elements = if packed { 2 } else { 1 };
    // One lane mask per element: where its comparison holds.
    let mut holds = [0u32; 2];
    for (element, mask) in holds.iter_mut().enumerate().take(elements) {
        let shift = 16 * element;
        *mask = lane_mask(|lane| {
            compare(
                cmp,
                (a[lane] >> shift) & 0xffff,
                (b[lane] >> shift) & 0xffff,
            )
        });
        if let Some((op, bits)) = predicate {
            *mask = combine_bits(op, *mask, bits);
        }
    }
    let out = lanes_mut(&mut warp.values, dst);
    for (lane, out) in out.iter_mut().enumerate() {
        if active >> lane & 1 != 0 {
            *out = (0..elements)
                .filter(|&element| holds[element] >> lane & 1 != 0)
                .map(|element| one << (16 * element))
                .sum();
        }
    }
}

/// `cvt` to `.bf16` on the active lanes.
#[inline(never)]
fn convert_to_bf16(
    values: &mut [u64],
    from: Bf16Source,
    rounding: warpsim_ir::Rounding,
    saturate: bool,
    dst: u32,
    src: u32,
    active: u32,
) {
    map1(values, dst, src, active, |x| {
        arith::convert_to_bf16(x, from, rounding, saturate)
    });
}

/// `cvt` from `.bf16` on the active lanes.
#[inline(never)]
fn convert_from_bf16(
    values: &mut [u64],
    to: NumberType,
    rounding: Option<warpsim_ir::Rounding>,
    saturate: bool,
    dst: u32,
    src: u32,
    active: u32,
) {
    map1(values, dst, src, active, |x| {
        arith::convert_from_bf16(x, to, rounding, saturate)
    });
}

/// `cvt.rn/.rz.f16x2/.bf16x2.f32 d, a, b` on the active lanes.
#[inline(never)]
fn convert_pair(
    values: &mut [u64],
    format: HalfFormat,
    rounding: warpsim_ir::Rounding,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
) {
    map2(values, dst, a, b, active, |x, y| {
        arith::convert_pair(x, y, format, rounding)
    });
}

/// `neg`/`abs` on `.f16` (or, `packed`, `.f16x2`) lanes: sign bits only.
#[inline(always)]
fn half_unary(values: &mut [u64], op: HalfUnary, packed: bool, dst: u32, a: u32, active: u32) {
    let f = match op {
        HalfUnary::Neg => arith::f16_neg,
        HalfUnary::Abs => arith::f16_abs,
    };
    if packed {
        map1(values, dst, a, active, |x| arith::f16x2_unary(x, f));
    } else {
        map1(values, dst, a, active, f);
    }
}
