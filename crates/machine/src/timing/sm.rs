//! One streaming multiprocessor in time: its resident blocks, its four
//! sub-partitions issuing at most one warp instruction per cycle each, a
//! scoreboard per warp, the execution pipes, the MIO and L1TEX paths to
//! shared memory and the L1, and its share of the L2 and DRAM.
//!
//! The model is the sub-core pipeline of Accel-Sim (Khairy et al., ISCA
//! 2020) as Huerta et al. describe Ampere's and Hopper's ("Dissecting and
//! modeling the architecture of modern GPU cores", MICRO 2023), calibrated
//! with the figures measured on an H100 (`programs/timing`) and an H200
//! (`reference/timing.md`):
//!
//! - A warp lives on sub-partition `w mod 4` of the SM's warp slots. Each
//!   cycle each sub-partition issues at most one instruction, from the warp
//!   it issued last if that one can (greedy), else the oldest that can
//!   (greedy-then-oldest), or round-robin (`timing.scheduler`).
//! - A warp can issue when the registers its instruction reads and writes
//!   are ready (the scoreboard), its pipe accepts an instruction (each pipe
//!   takes one per `interval` cycles per sub-partition), and it issued
//!   nothing this cycle. Results are ready `latency` cycles after issue.
//! - The pipes are an H200's sub-partition's (`h200-pipes.txt`): FP32 on
//!   both halves of the FMA pipe, a warp instruction a cycle; `IMAD` on its
//!   heavy half, one per two cycles; logic, shifts, compares, selects and
//!   minimums on the 16-lane ALU, one per two; bit counts and
//!   float-to-integer conversions on the XU with the transcendentals, one
//!   per eight. An integer add or move, which ptxas gives to either the
//!   ALU or the heavy half, issues to the ALU when it is free, else to the
//!   FMA pipe (`PipeCost::alternate`).
//! - Shared memory: the SM's MIO path takes one wavefront per cycle and a
//!   sub-partition's requests one per two cycles; a load's result is ready
//!   `shared_latency` plus `shared_latency_per_extra_wavefront` per extra
//!   wavefront after its first wavefront starts.
//! - Global and local memory: the L1TEX path takes `l1_sectors_per_cycle`
//!   sectors a cycle; each sector is an L1 hit, an L2 hit, or a DRAM access
//!   that waits for the SM's share of the DRAM bandwidth. The L2 is shared
//!   by all SMs: an SM reads it as it was at the start of the current time
//!   window and its own accesses of the window, and the accesses are
//!   applied in SM order at the window's end (`gpu.rs`). The L2 takes an
//!   SM's requests at its share of the bandwidth in bytes and of
//!   `l2_read_lines_per_cycle` and `l2_write_lines_per_cycle` in 128-byte
//!   lines, whichever is the slower (`h200-stores.txt`,
//!   `h200-store-merging.txt`).
//! - Stores, global and local, then wait their turn on the SM's path
//!   towards the L2, which takes `store_bytes_per_cycle` (a whole sector for
//!   each sector written to) and `partial_store_line_cycles` more for each
//!   line in which a request writes part of a sector; a warp that stores
//!   stalls (`stall_lg_throttle`) while `store_queue_requests` requests
//!   wait for the path. Loads do not wait behind stores.
//! - A fence waits for the warp's stores and atomics, at GPU scope until
//!   they have reached the L2, at CTA scope until the stores have left the
//!   SM, and then takes `fence_latency` (`block_fence_latency` at CTA
//!   scope), which an H200 spends even with nothing outstanding. A block
//!   retires once its stores have left the SM and its atomics are done
//!   (`h200-tails.txt`: an exit does not wait for a store's
//!   acknowledgement).
//! - Kernel parameters and constants come through two first-level
//!   constant caches of 64-byte lines, which miss apart: the indexed one
//!   (`LDC`: 64-bit parameters, constants at an address in a register; a
//!   hit takes `constant_load_latency`) and the operand one (`ULDC` and
//!   constant-bank operands: the rest; a hit costs a register's read). A
//!   line's first load in a launch on either waits `constant_miss_latency`
//!   for it from a second level of 256-byte blocks, which holds the
//!   parameters from the start and fetches constants from the L2
//!   (`h200-tails.txt`). The parameter loads themselves are where ptxas
//!   reads the parameters (`warpsim_ir::parameter_placement`), and a move
//!   of `%ntid` or `%nctaid` reads bank 0's first line as an operand
//!   (`MemoryPipe::LaunchShape`).
//! - A global atomic costs what an L2 access costs, `atomic_latency` in
//!   place of the hit's (a miss fetches the sector from DRAM first), after
//!   the SM's earlier atomics have had their share of the L2's
//!   `atomic_sectors_per_cycle`; a warp's requests to one sector queue
//!   behind every other warp's at the L2's atomic unit for it, one per
//!   `atomic_sector_interval` cycles; the queues are served at the
//!   window's end (`gpu.rs`), which delays the results (and, for fences,
//!   the writes) of the requests that waited (`Sm::delay_atomic`). A
//!   reduction (no old value read) is done, for the SM, once the L2 has it.
//! - A warp at a block barrier issues nothing; the barrier opens
//!   `barrier_latency` plus `barrier_latency_per_warp` per warp of the
//!   block after the last arrival.
//!
//! Instructions execute (compute their results, move bytes) when they
//! issue: the machine's semantics are those of `semantics.rs` and
//! `access.rs`, and time only decides the order.
//!
//! Stall accounting follows Nsight Compute's warp states: every cycle a
//! resident, unfinished warp spends is counted once, at the instruction it
//! is about to issue, under the reason it could not (or `selected`).
//! Deviations: warps do not fetch instructions (no `no_instruction` or
//! instruction-cache stalls), register-bank conflicts and the operand
//! reuse cache are not modelled, PTX, not the SASS that ptxas would
//! schedule, is what issues (but for global loads, which rise in their
//! basic blocks as ptxas raises them: `warpsim_ir::schedule`; where ptxas
//! gives successive atomics' results one register, which makes each wait
//! for the last on an H100, warpsim's overlap: `h100-atomic-chains.txt`),
//! reductions never hold the SM back (on an H100 a queue of them
//! does, once each SM has more than about 128 outstanding), the L1 does
//! not merge a warp's partial stores to the same sectors before they leave
//! for the L2 (an H200's does, `h200-store-merging.txt`), the constant
//! cache never evicts and serves lanes of different addresses at once, an
//! add or move takes whichever pipe is free at its issue where ptxas
//! balances the two over a whole block of code, a left shift by a register
//! may take the FMA pipe, which only a shift by a constant can (`IMAD.SHL`),
//! FP32 work beside ALU work runs at the ALU's rate where an H200 spends a
//! third more (`h200-pipes.txt`, `ffma_lop3`), which constant cache a
//! 32-bit parameter goes through is decided by its width alone (ptxas
//! reads about half of them with `LDC`, as an operand that must be a
//! register needs; `%ntid` and `%nctaid`, likewise, always through the
//! operand one), and a store after a barrier or
//! fence that followed other memory instructions costs what it costs
//! without them (on an H200, 160-260 cycles more in the kernels
//! whose parameter reads do not explain it, for a reason `h200-tails.txt`
//! does not establish).

use std::collections::VecDeque;

use crate::hashing::FastHashMap;

use crate::block::{BlockRunner, LaunchEnv, PathStreak, Peek};
use crate::config::{SchedulerPolicy, TimingConfig};
use crate::error::ExecError;
use crate::memory::GlobalMemory;
use crate::program::{Kind, MbarrierAction};
use crate::semantics::{semantics_of, HostInstructions, Semantics};
use crate::stats::{RunStats, StallReason};
use crate::store_buffer::StoreBuffer;
use crate::timing::cache::SectorCache;
use crate::timing::operands::{ConstantCache, InstructionTiming, MemoryPipe, Pipe, TensorRate};
use crate::timing::shards::ShardOrder;
use crate::timing::{BlockSpan, WarpSpan};

/// A cycle no event will ever reach.
pub(crate) const NEVER: u64 = u64::MAX;

/// Per-sub-partition issue ports an instruction may occupy.
const PORTS: usize = 9;
const PORT_FMA: usize = 0;
const PORT_ALU: usize = 1;
const PORT_FP64: usize = 2;
const PORT_SFU: usize = 3;
const PORT_CONVERSION: usize = 4;
const PORT_DIVISION: usize = 5;
const PORT_CONTROL: usize = 6;
/// The sub-partition's path into the SM's MIO queue.
const PORT_MIO: usize = 7;
/// The sub-partition's tensor core.
const PORT_TENSOR: usize = 8;

/// The MIO queue holds this many cycles of work before warps that want to
/// add to it stall (`stall_mio_throttle`, `stall_lg_throttle`).
const MEMORY_QUEUE_CYCLES: u64 = 16;

/// The SM's requests to the L2 may run this many cycles ahead of what the
/// L2 has taken before global and local instructions stall
/// (`stall_lg_throttle`): the memory system's queues are finite.
const L2_QUEUE_CYCLES: u64 = 256;

/// What an instruction costs once it issues, from its pipe.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PipeCost {
    latency: u32,
    interval: u32,
    /// The interval of `alternate`, when the instruction issues there.
    alternate_interval: u32,
    port: u8,
    /// A second port the instruction may issue to when `port` is busy (an
    /// integer add on the FMA pipe's heavy half, `Pipe::Integer`); `port`
    /// itself for every other instruction.
    alternate: u8,
    /// What a wait for its result counts as.
    reason: StallReason,
}

impl PipeCost {
    /// The port the instruction issues to at `cycle`, and for how long it
    /// holds it: `port` when it is free, else `alternate`.
    #[inline(always)]
    fn issue_port(&self, port_free: &[u64; PORTS], cycle: u64) -> (usize, u32) {
        if port_free[usize::from(self.port)] <= cycle {
            (usize::from(self.port), self.interval)
        } else {
            (usize::from(self.alternate), self.alternate_interval)
        }
    }

    /// When a port the instruction may issue to is free.
    #[inline(always)]
    fn free(&self, port_free: &[u64; PORTS]) -> u64 {
        port_free[usize::from(self.port)].min(port_free[usize::from(self.alternate)])
    }
}

/// What issuing one instruction involves, gathered from its pipe, its
/// operands and its kind once per launch, so that an issue reads one
/// record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IssueRecord {
    pipe: Pipe,
    cost: PipeCost,
    /// The registers the scoreboard checks are
    /// `IssueRecords::registers[first..first + checked]`: the reads, then
    /// the writes, which are the last `written` of them. Up to
    /// `INLINE_REGISTERS` of them, the common case, are also here, where
    /// the issue finds them without a second lookup.
    first: u32,
    inline: [u32; INLINE_REGISTERS],
    checked: u16,
    written: u16,
    /// A barrier or an exit, which may open a barrier.
    may_open_barrier: bool,
    /// A `cp.async` or mbarrier instruction, timed by `async_copy_timing`.
    asynchronous: bool,
    /// A store that may reach global or local memory, which waits for room
    /// in the SM's store queue.
    store: bool,
    /// A CTA-scope fence, which waits for the warp's stores to leave the
    /// SM rather than to reach the L2.
    block_fence: bool,
    /// Whether running it may count into the SM's counters or ask its
    /// bank arbiter (`BlockRunner::swap_stats`, `swap_arbiter`): all but
    /// the instructions that only compute on registers.
    lends_counters: bool,
    /// What it computes ([`semantics_of`]), compiled for this host.
    semantics: Semantics,
}

/// How many of an instruction's checked registers its issue record holds
/// itself: an arithmetic instruction's three sources and its destination.
const INLINE_REGISTERS: usize = 4;

/// The issue records of a program, by program counter, and the registers
/// they name.
pub(crate) struct IssueRecords {
    records: Vec<IssueRecord>,
    registers: Vec<u32>,
}

impl IssueRecords {
    /// The registers the scoreboard checks before `record` issues.
    #[inline(always)]
    fn checked<'r>(&'r self, record: &'r IssueRecord) -> &'r [u32] {
        let checked = usize::from(record.checked);
        if checked <= INLINE_REGISTERS {
            return &record.inline[..checked];
        }
        let first = record.first as usize;
        &self.registers[first..first + checked]
    }

    /// The registers `record` writes.
    #[inline(always)]
    fn written<'r>(&'r self, record: &'r IssueRecord) -> &'r [u32] {
        let checked = self.checked(record);
        &checked[checked.len() - usize::from(record.written)..]
    }
}

/// The costs of every non-memory pipe, and the memory figures, from
/// `[timing]`.
#[derive(Clone, Debug)]
pub(crate) struct Costs {
    fp32: PipeCost,
    alu: PipeCost,
    integer: PipeCost,
    integer_multiply: PipeCost,
    parameter: PipeCost,
    constant_load: PipeCost,
    fp64: PipeCost,
    half: PipeCost,
    sfu: PipeCost,
    conversion: PipeCost,
    division: PipeCost,
    shuffle: PipeCost,
    control: PipeCost,
    tensor: PipeCost,
    tensor_half: PipeCost,
    tensor_double: PipeCost,
    pub(crate) config: TimingConfig,
}

impl Costs {
    pub(crate) fn new(config: &TimingConfig) -> Costs {
        let cost = |latency, interval: u32, port: usize, reason| PipeCost {
            latency,
            interval,
            alternate_interval: interval,
            port: port as u8,
            alternate: port as u8,
            reason,
        };
        let alu = cost(
            config.integer_latency,
            config.integer_interval,
            PORT_ALU,
            StallReason::Wait,
        );
        Costs {
            fp32: cost(
                config.fp32_latency,
                config.fp32_interval,
                PORT_FMA,
                StallReason::Wait,
            ),
            alu,
            // An add or move goes to the ALU, or when the ALU is busy to the
            // FMA pipe's heavy half, at the rate of an `IMAD` there.
            integer: PipeCost {
                alternate: PORT_FMA as u8,
                alternate_interval: config.integer_multiply_interval,
                ..alu
            },
            integer_multiply: cost(
                config.integer_multiply_latency,
                config.integer_multiply_interval,
                PORT_FMA,
                StallReason::Wait,
            ),
            // A parameter or constant read as an operand of the constant
            // bank holds no arithmetic pipe; `constant_cache_cost` times
            // its result from the integer latency. It marks the
            // control port for the one cycle its issue takes, in which the
            // sub-partition issues nothing else anyway, so that it never
            // delays a branch whatever `control_interval` is.
            parameter: cost(config.integer_latency, 1, PORT_CONTROL, StallReason::Wait),
            // An `LDC` into a register, through the indexed constant cache,
            // issues as the operand read does.
            constant_load: cost(
                config.constant_load_latency,
                1,
                PORT_CONTROL,
                StallReason::ShortScoreboard,
            ),
            fp64: cost(
                config.fp64_latency,
                config.fp64_interval,
                PORT_FP64,
                StallReason::Wait,
            ),
            half: cost(
                config.half_latency,
                config.half_interval,
                PORT_FMA,
                StallReason::Wait,
            ),
            sfu: cost(
                config.sfu_latency,
                config.sfu_interval,
                PORT_SFU,
                StallReason::ShortScoreboard,
            ),
            conversion: cost(
                config.conversion_latency,
                config.conversion_interval,
                PORT_CONVERSION,
                StallReason::ShortScoreboard,
            ),
            division: cost(
                config.division_latency,
                config.division_interval,
                PORT_DIVISION,
                StallReason::Wait,
            ),
            shuffle: cost(
                config.warp_shuffle_latency,
                config.warp_shuffle_interval,
                PORT_MIO,
                StallReason::ShortScoreboard,
            ),
            control: cost(
                config.integer_latency,
                config.control_interval,
                PORT_CONTROL,
                StallReason::Wait,
            ),
            tensor: cost(
                config.tensor_latency,
                config.tensor_interval,
                PORT_TENSOR,
                StallReason::Wait,
            ),
            tensor_half: cost(
                config.tensor_half_latency,
                config.tensor_half_interval,
                PORT_TENSOR,
                StallReason::Wait,
            ),
            tensor_double: cost(
                config.tensor_f64_latency,
                config.tensor_f64_interval,
                PORT_TENSOR,
                StallReason::Wait,
            ),
            config: config.clone(),
        }
    }

    /// What the issue loop needs of each instruction, gathered once per
    /// launch; the semantics compiled for the instruction sets `host` has.
    pub(crate) fn issue_records(
        &self,
        program: &crate::program::Program,
        timings: &[InstructionTiming],
        host: HostInstructions,
    ) -> IssueRecords {
        // A register no instruction writes (a literal, a special register,
        // one only ever read) is ready from the warp's start: the
        // scoreboard never waits for it, so it is not checked.
        let mut ever_written =
            vec![false; (program.scoreboard_value_regs + program.pred_regs) as usize];
        for timing in timings {
            for &register in timing.operands.writes() {
                ever_written[register as usize] = true;
            }
        }
        let mut registers = Vec::new();
        let records = timings
            .iter()
            .zip(&program.code)
            .map(|(timing, instruction)| {
                let first = registers.len() as u32;
                let (reads, writes) = (timing.operands.reads(), timing.operands.writes());
                registers.extend(
                    reads
                        .iter()
                        .copied()
                        .filter(|&register| ever_written[register as usize]),
                );
                registers.extend_from_slice(writes);
                let mut inline = [0; INLINE_REGISTERS];
                let checked = &registers[first as usize..];
                if checked.len() <= INLINE_REGISTERS {
                    inline[..checked.len()].copy_from_slice(checked);
                }
                IssueRecord {
                    pipe: timing.pipe,
                    cost: self.of_instruction(timing.pipe, &instruction.kind),
                    first,
                    inline,
                    checked: (registers.len() as u32 - first) as u16,
                    written: writes.len() as u16,
                    // Only barriers and exits open barriers (an exit lowers
                    // the count of threads a barrier waits for).
                    may_open_barrier: timing.pipe == Pipe::Barrier
                        || matches!(instruction.kind, Kind::Exit),
                    asynchronous: matches!(
                        instruction.kind,
                        Kind::CpAsync { .. }
                            | Kind::CpAsyncCommitGroup
                            | Kind::CpAsyncWait { .. }
                            | Kind::Mbarrier { .. }
                    ),
                    store: matches!(instruction.kind, Kind::Store { .. })
                        && matches!(
                            timing.pipe,
                            Pipe::Memory(
                                MemoryPipe::Global | MemoryPipe::Local | MemoryPipe::Generic
                            )
                        ),
                    block_fence: matches!(
                        instruction.kind,
                        Kind::Fence {
                            scope: warpsim_ir::Scope::Cta,
                            ..
                        }
                    ),
                    lends_counters: !crate::semantics::computes_on_registers_only(
                        &instruction.kind,
                    ),
                    semantics: semantics_of(&instruction.kind, host),
                }
            })
            .collect();
        IssueRecords { records, registers }
    }

    /// What `kind`, on `pipe`, costs: its pipe's cost, but for a fence,
    /// whose latency is its own once the warp's stores are done, by scope
    /// (programs/timing/hardware/h200-stores.txt: MEMBAR.SC.GPU with ERRBAR
    /// and CCTL.IVALL, 265 cycles with nothing outstanding; MEMBAR.CTA 13).
    fn of_instruction(&self, pipe: Pipe, kind: &Kind) -> PipeCost {
        match kind {
            Kind::Fence { scope, .. } => PipeCost {
                latency: if *scope == warpsim_ir::Scope::Cta {
                    self.config.block_fence_latency
                } else {
                    self.config.fence_latency
                },
                ..self.control
            },
            _ => self.of(pipe),
        }
    }

    fn of(&self, pipe: Pipe) -> PipeCost {
        match pipe {
            Pipe::Fp32 => self.fp32,
            Pipe::Alu => self.alu,
            Pipe::Integer => self.integer,
            Pipe::IntegerMultiply => self.integer_multiply,
            Pipe::Fp64 => self.fp64,
            Pipe::Half => self.half,
            Pipe::Sfu => self.sfu,
            Pipe::Conversion => self.conversion,
            Pipe::Division => self.division,
            Pipe::WarpShuffle => self.shuffle,
            Pipe::Tensor(TensorRate::Full) => self.tensor,
            Pipe::Tensor(TensorRate::Half) => self.tensor_half,
            Pipe::Tensor(TensorRate::Double) => self.tensor_double,
            Pipe::Memory(
                MemoryPipe::Param(ConstantCache::Indexed)
                | MemoryPipe::Const(ConstantCache::Indexed),
            ) => self.constant_load,
            Pipe::Memory(MemoryPipe::Param(_) | MemoryPipe::Const(_) | MemoryPipe::LaunchShape) => {
                self.parameter
            }
            Pipe::Control | Pipe::Barrier | Pipe::Fence | Pipe::Memory(_) => self.control,
        }
    }
}

/// What every SM reads and nothing changes during a time window.
pub(crate) struct Shared<'s, 'a> {
    pub env: &'a LaunchEnv<'a>,
    /// What issuing each instruction involves ([`Costs::issue_records`]).
    pub issue: &'s IssueRecords,
    pub costs: &'s Costs,
    /// The L2 as it was at the start of the window.
    pub l2: &'s SectorCache,
    /// This SM's share of the DRAM bandwidth in bytes per cycle.
    pub dram_share: f64,
    /// SMs with blocks resident, which share the L2's bandwidth.
    pub active_sms: f64,
    pub record_timeline: bool,
    /// The instruction sets the loop may be compiled for.
    pub host: HostInstructions,
}

/// The timing state of one warp.
///
/// The fields an attempt to issue reads come first, in the first 64 bytes:
/// every time window walks every resident warp of every SM, so the first
/// touch of a warp's timing in a window is a host cache miss, and one line
/// costs one miss rather than three. The cycle before which the warp issues
/// nothing is not here but in [`Sm::earliest`], where a scan passes the
/// warps that cannot issue yet without touching their timings.
#[derive(Clone, Debug, Default)]
#[repr(C, align(128))]
struct WarpTiming {
    /// Stall cycles are counted up to here.
    accounted: u64,
    /// Per register (values, then predicates): when its value is ready,
    /// and what waiting for it counts as.
    ready: Box<[RegisterReady]>,
    /// The path and instruction the warp chose (when it stalled, or in the
    /// look right after its previous issue: `look_ahead`), until it issues
    /// them.
    chosen: Option<Chosen>,
    streak: PathStreak,
    /// The instruction the warp last issued (a barrier wait counts there).
    last_pc: u32,
    sub_partition: u8,
    finished: bool,
    /// Every path waits (a barrier, a warp sync) since this cycle; `NEVER`
    /// while some path can go on. A cycle rather than an `Option`, so that
    /// it fits in the first cache line: a barrier's opening wakes each of
    /// its block's warps from here.
    blocked_since: u64,
    /// When the warp's stores and atomics so far are complete: reached the
    /// L2 (a GPU-scope fence waits for this).
    memory_done: u64,
    /// When the warp's stores so far have left the SM for the L2 and its
    /// atomics are complete: a CTA-scope fence waits for this, and the
    /// block retires after it (`programs/timing/hardware/h200-tails.txt`).
    memory_sent: u64,
    /// When the warp's `cp.async` copies not yet committed have arrived.
    copies_uncommitted: u64,
    /// When each of the warp's committed `cp.async` groups still pending
    /// has arrived, oldest first.
    copy_groups: Vec<u64>,
}

/// When a register's value is ready, and what a wait for it counts as
/// (the pipe or memory of the instruction that writes it): one entry, so
/// that the scoreboard finds both at once, packed in one word (the cycle
/// above the low byte, the reason in it). Eight bytes rather than sixteen:
/// a time window visits every resident warp, so the scoreboard's reads of
/// these entries are often the first touch of their cache lines, and half
/// the bytes are half the lines (in `reduceSequential`, these reads were a
/// sixth of the misses in a 2 MiB cache).
#[derive(Clone, Copy, Debug)]
struct RegisterReady(u64);

impl RegisterReady {
    const REASON_BITS: u32 = 8;

    /// Ready at `at` (held to the 56 bits the word keeps for it, over a
    /// year of simulated time at 1.6 GHz; ready times are always an issue
    /// cycle plus a latency, never `NEVER`), a wait for it counting as
    /// `producer`.
    fn new(at: u64, producer: StallReason) -> RegisterReady {
        let at = at.min(u64::MAX >> Self::REASON_BITS);
        RegisterReady(at << Self::REASON_BITS | producer as u64)
    }

    fn at(self) -> u64 {
        self.0 >> Self::REASON_BITS
    }

    fn producer(self) -> StallReason {
        StallReason::ALL[(self.0 & ((1 << Self::REASON_BITS) - 1)) as usize]
    }
}

impl Default for RegisterReady {
    fn default() -> Self {
        RegisterReady::new(0, StallReason::Wait)
    }
}

/// The instruction a warp chose: it stalled there, or looked ahead to it.
#[derive(Clone, Copy, Debug)]
struct Chosen {
    path: u32,
    pc: u32,
    /// Its source registers are ready by the warp's next look: it stalled
    /// at a pipe or queue, or at the scoreboard (in a scan or a look
    /// ahead) until its [`Sm::earliest`], before which no scan looks at it
    /// again, and no atomic's delay has raised a ready time since.
    sources_ready: bool,
}

/// How long one request's sectors take through the L1TEX and the caches,
/// in cycles from its issue.
#[derive(Clone, Copy, Debug)]
struct MemoryTrip {
    /// Until the last sector is done: a load's data is back, a store or an
    /// atomic has reached the L2.
    done: u64,
    /// Until the last sector has left the SM: for a store, its turn on the
    /// path to the L2 is over; for anything else, `done`.
    sent: u64,
}

impl WarpTiming {
    /// Notes a store or atomic issued at `cycle`, done `done` cycles after
    /// and sent `sent` cycles after.
    fn note_memory(&mut self, cycle: u64, done: u64, sent: u64) {
        self.memory_done = self.memory_done.max(cycle + done);
        self.memory_sent = self.memory_sent.max(cycle + sent);
    }

    /// Makes this the timing of a new warp of `registers` registers in
    /// `sub_partition`, issuing from `start` (its [`Sm::earliest`] is the
    /// caller's to set), reusing the allocations of the warp it replaces.
    fn start(&mut self, registers: usize, sub_partition: u8, start: u64) {
        let mut ready = std::mem::take(&mut self.ready);
        let mut copy_groups = std::mem::take(&mut self.copy_groups);
        if ready.len() == registers {
            ready.fill(RegisterReady::default());
        } else {
            ready = vec![RegisterReady::default(); registers].into_boxed_slice();
        }
        copy_groups.clear();
        *self = WarpTiming {
            accounted: start,
            ready,
            chosen: None,
            streak: PathStreak::default(),
            last_pc: 0,
            sub_partition,
            finished: false,
            blocked_since: NEVER,
            memory_done: start,
            memory_sent: start,
            copies_uncommitted: start,
            copy_groups,
        };
    }
}

/// The cycles a failing `mbarrier.try_wait` takes before the thread tries
/// again (a `test_wait` answers at once). PTX ISA 9.7.13.15.16 leaves the
/// time limit to the system, and it has not been measured here: a guess of
/// the order of an L2 round trip, which keeps a spinning warp from issuing
/// a wait every few cycles.
const TRY_WAIT_RETRY_CYCLES: u32 = 200;

/// A block resident on the SM.
#[repr(align(128))]
struct ResidentBlock<'a> {
    linear: u64,
    /// What setting the block up needs, until it has been (in the
    /// window's parallel part, not in the serial one that places it).
    pending_setup: Option<PendingSetup>,
    /// Boxed: a runner is large (its arrays are inline), and the SM keeps a
    /// slot for every block it could hold, resident or not.
    runner: Box<BlockRunner<'a>>,
    start: u64,
    live_warps: u32,
    blocked_warps: u32,
    /// When the barrier unit has counted the arrivals so far.
    barrier_counted: u64,
}

/// The sub-partition of warp `warp` of the block in slot `slot`, blocks
/// of `warp_count` warps: the SM's warp slots go round the sub-partitions.
fn sub_partition_of(slot: usize, warp_count: usize, warp: usize, sub_partitions: usize) -> usize {
    (slot * warp_count + warp) % sub_partitions
}

/// The entries of the warps of the block in `slot`, among an SM's `warps`
/// (its timings, or their earliest cycles) of blocks of `warps_per_block`
/// warps (a function of the fields, so that it borrows one field of the SM
/// alone while the slots are borrowed too).
fn slot_warps<T>(warps: &mut [T], warps_per_block: usize, slot: usize) -> &mut [T] {
    &mut warps[slot * warps_per_block..(slot + 1) * warps_per_block]
}

/// A block placed on the SM and not yet set up.
struct PendingSetup {
    block_index: [u32; 3],
    /// Per warp, how much later than the block it starts (the explore
    /// model's jitter; empty without it).
    jitters: Vec<u64>,
}

/// A resident warp: warp `warp` of the block in slot `slot`, whose timing
/// is `Sm::warps[index]`.
#[derive(Clone, Copy, Debug)]
struct WarpRef {
    slot: u16,
    warp: u16,
    index: u16,
}

#[derive(Clone, Debug, Default)]
#[repr(align(128))]
struct SubPartition {
    /// Resident warps, oldest first.
    warps: Vec<WarpRef>,
    /// Index in `warps` of the warp that issued last.
    greedy: usize,
    /// No warp of the sub-partition can issue before this cycle (the
    /// minimum of their `earliest`, kept when it is lowered).
    next_possible: u64,
    port_free: [u64; PORTS],
}

/// A global atomic's request to one sector, on its way to the L2 unit that
/// performs the atomics on that sector.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtomicArrival {
    pub sector: u64,
    /// When the atomic issued.
    pub cycle: u64,
    /// When its result is ready (and its write performed) if nothing
    /// queues before it at the unit.
    ready: u64,
    linear: u64,
    warp: WarpRef,
    pc: u32,
}

/// A block that left the SM in the current window.
pub(crate) struct Departure {
    pub linear: u64,
    pub error: Option<Box<ExecError>>,
    pub findings: Vec<crate::findings::Finding>,
    pub printed: (Vec<u8>, u64),
}

/// One SM.
///
/// Aligned to 128 bytes (a pair of cache lines, which the host's
/// adjacent-line prefetcher moves together), as is every structure an SM
/// writes as it issues (`SubPartition`, `ResidentBlock`, `WarpTiming`,
/// `BlockRunner`): SMs run on different host threads, and many of those
/// structures are allocated by the thread that places blocks, one SM after
/// another, so without the alignment neighbours in memory belong to
/// different SMs and a shared line would bounce between cores at every
/// issue.
#[repr(align(128))]
pub(crate) struct Sm<'a> {
    pub index: u32,
    /// The next cycle to simulate.
    pub cycle: u64,
    /// The end of the window the SM runs in (`run_until`'s end).
    window_end: u64,
    slots: Vec<Option<ResidentBlock<'a>>>,
    /// The timing of every warp the SM can hold, the warps of the block in
    /// slot `s` at `s * warps_per_block..`: one array, so that the issue
    /// loop reaches a warp's timing in one step (made at the first
    /// launch, and reused by block after block).
    warps: Vec<WarpTiming>,
    /// Per warp slot, as `warps`: the warp issues nothing before this
    /// cycle. Apart from the timings, in one dense array of the SM's warps,
    /// so that the schedulers' scans, which pass most warps by this alone,
    /// read a few cache lines rather than a line per warp.
    earliest: Vec<u64>,
    warps_per_block: usize,
    /// Runners of blocks that left, for the next ones.
    /// Boxed as a resident block holds its runner: a runner moves between
    /// a slot and this list without copying its kilobyte and a half.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<BlockRunner<'a>>>,
    /// The bank arbiter, lent to the block that issues.
    arbiter: Option<Box<warpsim_banks::BankArbiter>>,
    /// Whether a resident block waits for its runner to be set up.
    setups_pending: bool,
    sub_partitions: Vec<SubPartition>,
    scheduler: SchedulerPolicy,
    /// When the SM's MIO and L1TEX data path is free.
    data_path_free: u64,
    /// When the SM's path for store data towards the L2 is free, and when
    /// each store request in its queue leaves it, in order.
    store_path_free: u64,
    store_queue: VecDeque<u64>,
    l1: SectorCache,
    /// L2 sectors this SM reached in the current window, with when they
    /// arrive, and every L2 access in order (applied at the window's end).
    window_sectors: FastHashMap<u64, u64>,
    /// The constant-cache lines the SM has asked for in this launch
    /// (`constant_cache_line`), and the blocks of
    /// `CONSTANT_BLOCK_LINES` lines its second-level constant cache has
    /// fetched from the L2, with when each arrives.
    constant_lines: FastHashMap<u64, u64>,
    constant_blocks: FastHashMap<u64, u64>,
    pub l2_accesses: Vec<u64>,
    /// The window's global atomics, a request per sector, for the L2's
    /// atomic units (`gpu.rs` orders them at the window's end).
    pub atomic_arrivals: Vec<AtomicArrival>,
    /// `l2_accesses` sorted by shard of the L2's sets (`sort_l2_accesses`).
    l2_order: ShardOrder,
    dram_free: f64,
    /// When the SM's requests to the L2 so far have gone through.
    l2_free: f64,
    /// When the SM's share of the L2's atomic units has performed its
    /// atomics so far.
    atomics_free: f64,
    /// Blocks that left in this window, in the order they left.
    pub departures: Vec<Departure>,
    /// The weak global stores of blocks that left in this window, in the
    /// order they left, waiting for its end (`store_buffer`); and emptied
    /// buffers to hand to the next blocks that leave.
    departed_stores: Vec<StoreBuffer>,
    empty_stores: Vec<StoreBuffer>,
    /// Slots freed in this window, with the cycle they were freed.
    pub freed: Vec<(usize, u64)>,
    // Counters.
    pub active_cycles: u64,
    pub resident_warp_cycles: u64,
    pub issued: u64,
    pub l1_hit_sectors: u64,
    pub l2_hit_sectors: u64,
    pub dram_sectors: u64,
    pub dram_bytes: u64,
    pub blocks_spans: Vec<BlockSpan>,
    pub warp_spans: Vec<WarpSpan>,
    /// The first cycle a block was resident and the last.
    pub first_active: u64,
    pub last_active: u64,
    resident_warps: u64,
    /// Blocks resident, and the latest cycle one of them starts at.
    resident_blocks: u32,
    latest_start: u64,
}

impl<'a> Sm<'a> {
    pub(crate) fn new(index: u32, blocks_per_sm: u32, config: &TimingConfig) -> Sm<'a> {
        Sm {
            index,
            cycle: 0,
            window_end: 0,
            slots: (0..blocks_per_sm).map(|_| None).collect(),
            warps: Vec::new(),
            earliest: Vec::new(),
            warps_per_block: 0,
            spare: Vec::new(),
            arbiter: None,
            setups_pending: false,
            sub_partitions: vec![SubPartition::default(); 4],
            scheduler: config.scheduler,
            data_path_free: 0,
            store_path_free: 0,
            store_queue: VecDeque::new(),
            l1: SectorCache::new(u64::from(config.l1_bytes), config.l1_ways),
            window_sectors: FastHashMap::default(),
            constant_lines: FastHashMap::default(),
            constant_blocks: FastHashMap::default(),
            l2_accesses: Vec::new(),
            atomic_arrivals: Vec::new(),
            l2_order: ShardOrder::default(),
            dram_free: 0.0,
            l2_free: 0.0,
            atomics_free: 0.0,
            departures: Vec::new(),
            departed_stores: Vec::new(),
            empty_stores: Vec::new(),
            freed: Vec::new(),
            active_cycles: 0,
            resident_warp_cycles: 0,
            issued: 0,
            l1_hit_sectors: 0,
            l2_hit_sectors: 0,
            dram_sectors: 0,
            dram_bytes: 0,
            blocks_spans: Vec::new(),
            warp_spans: Vec::new(),
            first_active: NEVER,
            last_active: 0,
            resident_warps: 0,
            resident_blocks: 0,
            latest_start: 0,
        }
    }

    /// Whether a block is resident.
    pub(crate) fn is_active(&self) -> bool {
        self.resident_blocks > 0
    }

    /// Places block `linear` (index `block_index`) in `slot`, its warps
    /// issuing from cycle `start`. The block's runner is set up when the SM
    /// next runs (`set_up_blocks`), so that the window's serial end does
    /// no per-thread work.
    pub(crate) fn launch(
        &mut self,
        env: &'a LaunchEnv<'a>,
        slot: usize,
        linear: u64,
        block_index: [u32; 3],
        start: u64,
    ) {
        let runner = self
            .spare
            .pop()
            .unwrap_or_else(|| Box::new(BlockRunner::new(env)));
        let warp_count = env.warps_per_block();
        if self.warps.is_empty() {
            self.warps_per_block = warp_count;
            self.warps = vec![WarpTiming::default(); self.slots.len() * warp_count];
            self.earliest = vec![NEVER; self.slots.len() * warp_count];
        }
        // The explore model starts the warps of a block at jittered times
        // too, so that they run in either order: drawn here, in launch
        // order, as the random stream must be the same on every host.
        let jitters = match env.weak_memory.filter(|_| warp_count > 1) {
            Some(weak) => (0..warp_count).map(|_| weak.start_jitter()).collect(),
            None => Vec::new(),
        };
        // The sub-partitions list their warps oldest first, so the warps
        // join them here, in launch order; their timings are made when
        // the block is set up.
        for warp in 0..warp_count {
            let sub_partition = sub_partition_of(slot, warp_count, warp, self.sub_partitions.len());
            self.sub_partitions[sub_partition].warps.push(WarpRef {
                slot: slot as u16,
                warp: warp as u16,
                index: (slot * warp_count + warp) as u16,
            });
        }
        self.setups_pending = true;
        for sub in &mut self.sub_partitions {
            sub.next_possible = sub.next_possible.min(start);
        }
        self.resident_warps += warp_count as u64;
        self.resident_blocks += 1;
        self.latest_start = self.latest_start.max(start);
        self.first_active = self.first_active.min(start);
        self.slots[slot] = Some(ResidentBlock {
            linear,
            pending_setup: Some(PendingSetup {
                block_index,
                jitters,
            }),
            runner,
            start,
            live_warps: warp_count as u32,
            blocked_warps: 0,
            barrier_counted: 0,
        });
        if self.cycle < start && !self.slots.iter().flatten().any(|block| block.start < start) {
            // Nothing else was resident: the SM is busy launching the block
            // until it starts (Nsight Compute counts those cycles active).
            self.active_cycles += start - self.cycle;
            self.cycle = start;
        }
    }

    /// Runs cycles up to (not including) `end`.
    pub(crate) fn run_until(&mut self, shared: &Shared<'_, 'a>, stats: &mut RunStats, end: u64) {
        #[cfg(target_arch = "x86_64")]
        if shared.host.has_avx2_fma() {
            // SAFETY: only `HostInstructions::detect` makes a
            // `HostInstructions`, which has AVX2 and FMA only when the
            // running CPU reports AVX2, FMA, POPCNT, LZCNT, BMI1 and BMI2,
            // the one requirement of a `target_feature` function.
            return unsafe { self.run_until_avx2_fma(shared, stats, end) };
        }
        self.run_until_with(shared, stats, end)
    }

    /// The loop compiled for hosts with AVX2 and FMA (and the bit
    /// instructions every such CPU has): counting a mask's lanes is one
    /// instruction, and the loops over a warp's lanes that the scheduler
    /// and the memory timing inline vectorise wider. (The instructions'
    /// semantics are compiled for the host apart: `semantics_of`.)
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    unsafe fn run_until_avx2_fma(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        end: u64,
    ) {
        self.run_until_with(shared, stats, end)
    }

    #[inline(always)]
    fn run_until_with(&mut self, shared: &Shared<'_, 'a>, stats: &mut RunStats, end: u64) {
        self.window_end = end;
        if self.setups_pending {
            self.set_up_blocks(shared.env, stats);
        }
        while self.cycle < end && self.is_active() {
            let cycle = self.cycle;
            let mut next = NEVER;
            let mut issued = false;
            for sub_partition in 0..self.sub_partitions.len() {
                issued |= self.issue_in(shared, stats, sub_partition, cycle, &mut next);
            }
            // Blocks not started yet wake the SM when they start.
            if self.latest_start > cycle {
                for block in self.slots.iter().flatten() {
                    if block.start > cycle {
                        next = next.min(block.start);
                    }
                }
            }
            let following = if issued {
                cycle + 1
            } else {
                next.max(cycle + 1)
            };
            let following = following.min(end);
            let span = following - cycle;
            if self.is_active() {
                self.active_cycles += span;
                self.resident_warp_cycles += span * self.resident_warps;
                self.last_active = self.last_active.max(following);
            }
            self.cycle = following;
        }
        if !self.is_active() {
            // Idle until the next block arrives.
            self.cycle = self.cycle.max(end);
        }
    }

    /// Sets up the runners of the blocks placed since the SM last ran.
    #[cold]
    fn set_up_blocks(&mut self, env: &LaunchEnv<'a>, stats: &mut RunStats) {
        self.setups_pending = false;
        let registers = (env.program.scoreboard_value_regs + env.program.pred_regs) as usize;
        let warp_count = env.warps_per_block();
        let sub_partitions = self.sub_partitions.len();
        for (slot, block) in self.slots.iter_mut().enumerate() {
            let Some(block) = block else {
                continue;
            };
            let Some(setup) = block.pending_setup.take() else {
                continue;
            };
            let timings = slot_warps(&mut self.warps, self.warps_per_block, slot);
            let earliest = slot_warps(&mut self.earliest, self.warps_per_block, slot);
            for (warp, (timing, earliest)) in timings.iter_mut().zip(earliest).enumerate() {
                let sub_partition = sub_partition_of(slot, warp_count, warp, sub_partitions) as u8;
                timing.start(registers, sub_partition, block.start);
                *earliest = block.start + setup.jitters.get(warp).copied().unwrap_or(0);
            }
            block.runner.swap_stats(stats);
            block.runner.start_block(setup.block_index);
            block.runner.swap_stats(stats);
        }
    }

    /// Issues at most one instruction in `sub_partition` at `cycle`;
    /// lowers `next` to the earliest cycle a warp that did not issue could.
    #[inline(always)]
    fn issue_in(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        sub_partition: usize,
        cycle: u64,
        next: &mut u64,
    ) -> bool {
        let possible = self.sub_partitions[sub_partition].next_possible;
        if possible > cycle {
            // No warp of the sub-partition can issue yet.
            *next = (*next).min(possible);
            return false;
        }
        let mut earliest_other = NEVER;
        // Warps woken during the scan (a barrier opening, lanes let go at a
        // reconvergence point) lower it again.
        self.sub_partitions[sub_partition].next_possible = NEVER;
        // The scan starts over when a warp leaves the list under it.
        'scan: loop {
            let count = self.sub_partitions[sub_partition].warps.len();
            if count == 0 {
                self.sub_partitions[sub_partition].next_possible = NEVER;
                return false;
            }
            let first = match self.scheduler {
                SchedulerPolicy::GreedyThenOldest => self.sub_partitions[sub_partition].greedy,
                SchedulerPolicy::LooseRoundRobin => {
                    (self.sub_partitions[sub_partition].greedy + 1) % count
                }
            };
            let mut attempt = 0;
            while attempt < count {
                // Greedy first, then the rest oldest first (or, round robin,
                // the ones after the last issued).
                let position = match self.scheduler {
                    SchedulerPolicy::GreedyThenOldest => match attempt {
                        0 => first.min(count - 1),
                        n if n <= first => n - 1,
                        n => n,
                    },
                    SchedulerPolicy::LooseRoundRobin => (first + attempt) % count,
                };
                attempt += 1;
                let warp_ref = self.sub_partitions[sub_partition].warps[position];
                let earliest = self.earliest[warp_ref.index as usize];
                if earliest > cycle {
                    earliest_other = earliest_other.min(earliest);
                    continue;
                }
                match self.try_issue(shared, stats, warp_ref, cycle) {
                    Attempt::Issued => {
                        let sub = &mut self.sub_partitions[sub_partition];
                        // The warp may have finished and left the list.
                        sub.greedy = position.min(sub.warps.len().saturating_sub(1));
                        // Others may be ready next cycle; the scan then
                        // finds out.
                        sub.next_possible = cycle + 1;
                        return true;
                    }
                    Attempt::Stalled(until) => earliest_other = earliest_other.min(until),
                    Attempt::Left => continue 'scan,
                }
            }
            let sub = &mut self.sub_partitions[sub_partition];
            // A warp woken at this cycle issues at the next one at the
            // earliest.
            sub.next_possible = sub.next_possible.max(cycle + 1).min(earliest_other);
            *next = (*next).min(sub.next_possible);
            return false;
        }
    }

    fn warp(&self, warp_ref: WarpRef) -> &WarpTiming {
        &self.warps[warp_ref.index as usize]
    }

    /// The timings of the warps of the block in `slot`.
    fn block_warps(&mut self, slot: usize) -> &mut [WarpTiming] {
        slot_warps(&mut self.warps, self.warps_per_block, slot)
    }

    /// Tries to issue the next instruction of one warp at `cycle`.
    ///
    /// The SM's fields are borrowed apart (the block, the warp's timing,
    /// its sub-partition), so that the issue path holds them in locals
    /// across the block's run of the instruction rather than finding them
    /// through `self` again after it; what only some instructions need
    /// (a warp with nothing to issue, the memory pipes, a barrier that
    /// opens) is done through `self` once those borrows end.
    #[inline(always)]
    fn try_issue(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        cycle: u64,
    ) -> Attempt {
        let slot = warp_ref.slot as usize;
        let warp_index = warp_ref.warp as usize;
        let Sm {
            slots,
            warps,
            earliest,
            sub_partitions,
            arbiter,
            data_path_free,
            store_queue,
            l2_free,
            issued,
            window_end,
            ..
        } = self;
        let block = slots[slot].as_mut().expect("resident");
        let timing = &mut warps[warp_ref.index as usize];
        let earliest = &mut earliest[warp_ref.index as usize];
        // A warp that stalled keeps the instruction it chose: nothing but
        // its own issue changes its paths (lanes let go at a reconvergence
        // point aside, which forgets the choice), and a path's streak
        // counts issues, not looks.
        let (peek, sources_ready) = match timing.chosen {
            Some(chosen) => (
                Peek::Ready {
                    path: chosen.path as usize,
                    pc: chosen.pc,
                },
                chosen.sources_ready,
            ),
            None => (block.runner.peek(warp_index, &mut timing.streak), false),
        };
        let Peek::Ready { path, pc } = peek else {
            return self.nothing_to_issue(shared, stats, warp_ref, peek, cycle);
        };
        let record = &shared.issue.records[pc as usize];
        // A stalled warp cannot issue before `ready` (only its own issues,
        // and an atomic's delay, change its registers' ready times) or
        // `free` (the pipes and queues only get busier), so the scans skip
        // it until then, and then its sources are ready.
        let chosen = Chosen {
            path: path as u32,
            pc,
            sources_ready: true,
        };
        debug_assert!(
            !sources_ready
                || shared
                    .issue
                    .checked(record)
                    .iter()
                    .all(|&register| timing.ready[register as usize].at() <= cycle),
            "warp {warp_ref:?} skips the scoreboard at pc {pc}, cycle {cycle}, with a source not ready"
        );
        if !sources_ready {
            let (ready, reason) = scoreboard(shared, timing, record, cycle);
            if ready > cycle {
                stall(stats, timing, pc, reason, ready);
                timing.chosen = Some(chosen);
                *earliest = ready;
                return Attempt::Stalled(ready);
            }
        }
        let pipe = record.pipe;
        let cost = record.cost;
        let sub = &mut sub_partitions[timing.sub_partition as usize];
        let (free, throttle) = match pipe {
            Pipe::Memory(MemoryPipe::Param(_) | MemoryPipe::Const(_) | MemoryPipe::LaunchShape) => {
                (cycle, StallReason::Wait)
            }
            Pipe::Memory(MemoryPipe::Shared | MemoryPipe::Generic) | Pipe::WarpShuffle => (
                sub.port_free[PORT_MIO].max(data_path_free.saturating_sub(MEMORY_QUEUE_CYCLES)),
                StallReason::MioThrottle,
            ),
            Pipe::Memory(_) => (
                sub.port_free[PORT_MIO]
                    .max(data_path_free.saturating_sub(MEMORY_QUEUE_CYCLES))
                    .max((*l2_free as u64).saturating_sub(L2_QUEUE_CYCLES))
                    .max(if record.store {
                        store_queue_room(
                            store_queue,
                            shared.costs.config.store_queue_requests,
                            cycle,
                        )
                    } else {
                        cycle
                    }),
                StallReason::LgThrottle,
            ),
            _ => (cost.free(&sub.port_free), StallReason::MathPipeThrottle),
        };
        if free > cycle {
            stall(stats, timing, pc, throttle, free);
            timing.chosen = Some(chosen);
            *earliest = free;
            return Attempt::Stalled(free);
        }
        timing.chosen = None;
        // Issue. The cycles since the last counted were ones the warp could
        // have issued in.
        let not_selected = cycle.saturating_sub(timing.accounted);
        timing.accounted = cycle + 1;
        *earliest = cycle + 1;
        timing.last_pc = pc;
        let may_open_barrier = record.may_open_barrier;
        let generations = if may_open_barrier {
            block.runner.barrier_generations()
        } else {
            0
        };
        if pipe == Pipe::Barrier {
            // The barrier unit counts one warp's arrival per
            // `barrier_latency_per_warp` cycles (programs/timing: a barrier
            // costs 13.3 cycles plus 2 per warp of the block).
            block.barrier_counted = block.barrier_counted.max(cycle)
                + u64::from(shared.costs.config.barrier_latency_per_warp);
        }
        // The SM's counters and bank arbiter are lent to the block for the
        // instructions that use them.
        let lend = record.lends_counters;
        if lend {
            block.runner.swap_stats(stats);
            block.runner.swap_arbiter(arbiter);
        }
        // SAFETY: the record's semantics are those `semantics_of` chose
        // for the instruction at `pc`, for the instruction sets this host
        // has (`issue_records`, given a detected `HostInstructions`).
        let (active, result) = unsafe {
            block
                .runner
                .issue(warp_index, path, pc, cycle, record.semantics)
        };
        if lend {
            block.runner.swap_arbiter(arbiter);
            block.runner.swap_stats(stats);
        }
        *issued += 1;
        let counters = &mut stats.per_instruction[pc as usize];
        counters.stalls[StallReason::NotSelected as usize] += not_selected;
        counters.stalls[StallReason::Selected as usize] += 1;
        counters.executed += 1;
        counters.threads += u64::from(active.count_ones());
        if let Err(error) = result {
            self.depart(shared, slot, cycle, Some(error));
            return Attempt::Left;
        }
        let (port, interval) = cost.issue_port(&sub.port_free, cycle);
        sub.port_free[port] = cycle + u64::from(interval);
        if record.asynchronous || matches!(pipe, Pipe::Memory(_) | Pipe::WarpShuffle | Pipe::Fence)
        {
            self.complete(shared, stats, warp_ref, record, pc, cycle);
        } else {
            // The arithmetic, control and barrier pipes: the results are
            // ready after the pipe's latency.
            set_ready(
                shared,
                timing,
                record,
                cycle + u64::from(cost.latency),
                cost.reason,
            );
            // At a window's last cycle the look waits for the next window:
            // the atomics' delays that the window's end applies
            // (`delay_atomic`) may raise ready times before it.
            if !may_open_barrier && cycle + 1 < *window_end {
                look_ahead(
                    shared,
                    stats,
                    &mut block.runner,
                    timing,
                    earliest,
                    warp_index,
                    cycle + 1,
                );
            }
        }
        if may_open_barrier {
            self.open_barrier(shared, stats, warp_ref, pipe, pc, generations, cycle);
        }
        Attempt::Issued
    }

    /// What a warp with no instruction to issue does: it waits at a
    /// barrier or warp sync (`peek` is `Peek::Blocked`; when every warp of
    /// its block waits, lanes held at a reconvergence point go on, or the
    /// block deadlocked), or it finished.
    #[cold]
    #[inline(never)]
    fn nothing_to_issue(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        peek: Peek,
        cycle: u64,
    ) -> Attempt {
        let slot = warp_ref.slot as usize;
        if !matches!(peek, Peek::Blocked) {
            self.finish_warp(shared, stats, warp_ref, cycle);
            return Attempt::Left;
        }
        self.earliest[warp_ref.index as usize] = NEVER;
        self.warps[warp_ref.index as usize].blocked_since = cycle;
        let block = self.slots[slot].as_mut().expect("resident");
        block.blocked_warps += 1;
        if block.blocked_warps == block.live_warps {
            // Nothing in the block can move unless lanes held at a
            // reconvergence point go on.
            match block.runner.unblock_or_deadlock() {
                Ok(()) => {
                    for timing in self.block_warps(slot) {
                        timing.chosen = None;
                    }
                    self.wake_blocked(shared, stats, slot, cycle, 0)
                }
                Err(error) => {
                    self.depart(shared, slot, cycle, Some(error));
                    return Attempt::Left;
                }
            }
        }
        Attempt::Stalled(NEVER)
    }

    /// After a barrier or an exit issued (`generations` counted the
    /// block's barrier openings before it): if a barrier opened (the last
    /// arrival, or an exit that made the arrived threads enough), its
    /// warps, the last to arrive included, go on once the unit has counted
    /// every arrival and the release has reached them. (An exit that opens
    /// a barrier counts no arrival: the release then follows the exit.)
    #[allow(clippy::too_many_arguments)]
    fn open_barrier(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        pipe: Pipe,
        pc: u32,
        generations: u32,
        cycle: u64,
    ) {
        let block = self.slots[warp_ref.slot as usize]
            .as_mut()
            .expect("resident");
        if block.runner.barrier_generations() == generations {
            return;
        }
        let release =
            block.barrier_counted.max(cycle) + u64::from(shared.costs.config.barrier_latency);
        if pipe == Pipe::Barrier {
            let earliest = &mut self.earliest[warp_ref.index as usize];
            *earliest = (*earliest).max(release);
            let timing = &mut self.warps[warp_ref.index as usize];
            stall(stats, timing, pc, StallReason::Barrier, release);
        }
        self.wake_blocked(
            shared,
            stats,
            warp_ref.slot as usize,
            cycle,
            release - cycle,
        );
    }

    /// Sets the ready times an issued instruction's results get, and what
    /// its memory accesses cost.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn complete(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        record: &IssueRecord,
        pc: u32,
        cycle: u64,
    ) {
        let (pipe, cost) = (record.pipe, record.cost);
        let (latency, reason) = match pipe {
            Pipe::Memory(MemoryPipe::Param(_) | MemoryPipe::Const(_) | MemoryPipe::LaunchShape) => {
                self.constant_cache_cost(shared, warp_ref, pipe, cost, cycle)
            }
            Pipe::Memory(_) => self.memory_cost(shared, stats, warp_ref, pc, cycle),
            Pipe::WarpShuffle => {
                let sub_partition = self.warp(warp_ref).sub_partition as usize;
                let start = cycle.max(self.data_path_free);
                self.data_path_free = start + 1;
                self.sub_partitions[sub_partition].port_free[PORT_MIO] = cycle + 2;
                ((start - cycle) as u32 + cost.latency, cost.reason)
            }
            Pipe::Fence => {
                // A fence waits for the warp's stores and atomics to be
                // performed (at the L2 for the GPU scope; for the CTA's,
                // in the SM's L1 once they have left for the L2: on an
                // H200, MEMBAR.CTA right after a store takes 14 cycles,
                // `h200-tails.txt`), and then takes its own latency
                // (`Costs::of_instruction`), which writes no register: the
                // warp waits for it here.
                let timing = &mut self.warps[warp_ref.index as usize];
                let performed = if record.block_fence {
                    timing.memory_sent
                } else {
                    timing.memory_done
                };
                let done = performed.max(cycle) + u64::from(cost.latency);
                if done > cycle + 1 {
                    stall(stats, timing, pc, StallReason::Membar, done);
                    self.earliest[warp_ref.index as usize] = done;
                }
                (0, cost.reason)
            }
            _ => (cost.latency, cost.reason),
        };
        let (latency, reason) = if record.asynchronous {
            self.async_copy_timing(shared, stats, warp_ref, pc, cycle, latency)
                .unwrap_or((latency, reason))
        } else {
            (latency, reason)
        };
        let timing = &mut self.warps[warp_ref.index as usize];
        set_ready(shared, timing, record, cycle + u64::from(latency), reason);
    }

    /// The timing of the asynchronous copies and mbarrier waits
    /// (`async_copy.rs`), given the `latency` the instruction just issued
    /// at `pc` got: a `cp.async` writes no register, so its latency (the
    /// global load's, through the caches) becomes the arrival of its group
    /// instead; `cp.async.wait_group`/`wait_all` stall the warp until the
    /// groups they wait for have arrived; a `try_wait`/`test_wait` that
    /// finds its phase incomplete in every lane gives its predicate after
    /// the retry time. The groups are kept per warp, not per thread: the
    /// lanes of a warp commit and wait together in the kernels this models.
    /// `None` for every other instruction.
    fn async_copy_timing(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        pc: u32,
        cycle: u64,
        latency: u32,
    ) -> Option<(u32, StallReason)> {
        let kind = &shared.env.program.code[pc as usize].kind;
        let block = self.slots[warp_ref.slot as usize]
            .as_mut()
            .expect("resident");
        let timing = &mut self.warps[warp_ref.index as usize];
        match *kind {
            Kind::CpAsync { .. } => {
                timing.copies_uncommitted =
                    timing.copies_uncommitted.max(cycle + u64::from(latency));
                Some((0, StallReason::LongScoreboard))
            }
            Kind::CpAsyncCommitGroup => {
                let arrival = std::mem::replace(&mut timing.copies_uncommitted, cycle);
                timing.copy_groups.push(arrival);
                None
            }
            Kind::CpAsyncWait { pending } => {
                let keep = pending.map_or(0, |pending| pending as usize);
                let complete = timing.copy_groups.len().saturating_sub(keep);
                let mut arrival = timing.copy_groups.drain(..complete).max().unwrap_or(0);
                if pending.is_none() {
                    arrival = arrival.max(timing.copies_uncommitted);
                    timing.copies_uncommitted = cycle;
                }
                // Nsight Compute counts the wait of `DEPBAR` (what a
                // `cp.async.wait_group` becomes) as a long-scoreboard stall:
                // the H100's samples after `DEPBAR.LE SB0, 0x1` in
                // programs/tensor/hardware/h100/async_gemm.sass.csv are
                // `stall_long_sb`.
                if arrival > cycle + 1 {
                    stall(stats, timing, pc, StallReason::LongScoreboard, arrival);
                    self.earliest[warp_ref.index as usize] = arrival;
                }
                None
            }
            Kind::Mbarrier {
                action:
                    MbarrierAction::Wait {
                        try_wait: true,
                        done,
                        ..
                    },
                ..
            } => {
                let warp = &block.runner.warps[warp_ref.warp as usize];
                let failed = warp.pred_bits(done, false) == 0;
                failed.then_some((TRY_WAIT_RETRY_CYCLES, StallReason::Wait))
            }
            _ => None,
        }
    }

    /// The latency of the memory instruction just issued at `pc`, and what
    /// waiting for it counts as; occupies the data path and the caches.
    fn memory_cost(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        pc: u32,
        cycle: u64,
    ) -> (u32, StallReason) {
        let config = &shared.costs.config;
        let slot = warp_ref.slot as usize;
        let block = self.slots[slot].as_mut().expect("resident");
        let sub_partition = self.warps[warp_ref.index as usize].sub_partition as usize;
        let state = &block.runner.state;
        let instruction = &shared.env.program.code[pc as usize].kind;
        let (is_store, is_atomic) = match instruction {
            Kind::Store { .. } | Kind::MatrixAccess { store: true, .. } => (true, false),
            Kind::Atom { dst, .. } => (dst.is_none(), true),
            _ => (false, false),
        };
        let returns_global_old_value = is_atomic && !is_store && shared.env.buffers_stores();
        let wavefronts = state.last_wavefronts;
        let mut latency = 0u64;
        let mut reason = StallReason::ShortScoreboard;
        if wavefronts.wavefronts > 0 {
            let count = u64::from(wavefronts.wavefronts);
            let per_cycle = u64::from(config.shared_wavefronts_per_cycle.max(1));
            let start = cycle.max(self.data_path_free);
            self.data_path_free = start + count.div_ceil(per_cycle);
            // One sub-partition's requests go through at half the SM's rate
            // (programs/timing: one warp gets a wavefront per 2 cycles).
            self.sub_partitions[sub_partition].port_free[PORT_MIO] = cycle + 2 * count;
            latency = start - cycle
                + u64::from(config.shared_latency)
                + u64::from(config.shared_latency_per_extra_wavefront) * (count - 1);
            stats.per_instruction[pc as usize].conflict_cycles +=
                count.saturating_sub(u64::from(wavefronts.ideal));
        }
        // The request's sectors, lent out of the block's scratch vectors
        // for the walk through the caches and given back after.
        let state = &mut block.runner.state;
        let global = std::mem::take(&mut state.sectors);
        let local = std::mem::take(&mut state.local_sectors);
        let (global_bytes, local_bytes) = (state.global_bytes, state.local_bytes);
        if !global.is_empty() {
            reason = StallReason::LongScoreboard;
            let kind = if is_atomic && is_store {
                SectorAccess::Reduction
            } else if is_atomic {
                SectorAccess::Atomic
            } else if is_store {
                SectorAccess::GlobalStore
            } else {
                SectorAccess::Load
            };
            let trip = self.through_l1tex(shared, &global, global_bytes, cycle, kind);
            let mut done = trip.done;
            if returns_global_old_value {
                // The old value is known when the window ends, when the
                // store buffers meet memory (`store_buffer.rs`): nothing
                // reads it before.
                done = done.max(self.window_end - cycle);
            }
            if is_store || is_atomic {
                let sent = if is_atomic { done } else { trip.sent };
                self.warps[warp_ref.index as usize].note_memory(cycle, done, sent);
            }
            latency = latency.max(done);
        }
        if !local.is_empty() {
            // Local memory goes through the L1 like global memory, its
            // lanes interleaved word by word (a per-thread array indexed
            // alike by every lane is one line; indexed apart, up to 32).
            // Stores stay in the L1 for later loads and are written through
            // to the L2 as global stores are: on an H100 the 3 x 3 median
            // filter's 5.9 million local byte stores wrote 23.9 million
            // sectors into the L2, four per store, and its L2 was 85% busy
            // (programs/timing/hardware/h100-local-stores.txt).
            reason = StallReason::LongScoreboard;
            let kind = if is_store {
                SectorAccess::LocalStore
            } else {
                SectorAccess::Load
            };
            let trip = self.through_l1tex(shared, &local, local_bytes, cycle, kind);
            if is_store {
                self.warps[warp_ref.index as usize].note_memory(cycle, trip.done, trip.sent);
            }
            latency = latency.max(trip.done);
        }
        let block = self.slots[slot].as_mut().expect("resident");
        if is_atomic {
            // Each sector's atomics queue at the L2 at the window's end.
            let linear = block.linear;
            for &sector in &global {
                self.atomic_arrivals.push(AtomicArrival {
                    sector,
                    cycle,
                    ready: cycle + latency,
                    linear,
                    warp: warp_ref,
                    pc,
                });
            }
        }
        let state = &mut block.runner.state;
        state.sectors = global;
        state.local_sectors = local;
        (latency.min(u64::from(u32::MAX)) as u32, reason)
    }

    /// What a load from the parameters or the constants issued at `cycle`
    /// costs: the pipe's latency once its 64-byte line is in the SM's
    /// first-level constant cache the pipe names (each holds its own lines).
    /// The first load of a line in a launch on either waits
    /// `constant_miss_latency` cycles for it from the second-level constant
    /// cache, which holds 256-byte blocks: a kernel's parameters from the
    /// start (the launch puts them there), a block of constants once it has
    /// come from the L2. On an H200 (`h200-tails.txt`) a kernel's first LDC
    /// of a parameter takes about 88 cycles, and chases through constants
    /// take 471 cycles a load 256 bytes apart (each a new block, from DRAM
    /// with the caches flushed; 258 from the L2), 203 a load 64 bytes
    /// apart (a new block every fourth load), and 38 when they hit. Later
    /// loads of a line wait for it to arrive.
    #[inline(never)]
    fn constant_cache_cost(
        &mut self,
        shared: &Shared<'_, 'a>,
        warp_ref: WarpRef,
        pipe: Pipe,
        cost: PipeCost,
        cycle: u64,
    ) -> (u32, StallReason) {
        let block = self.slots[warp_ref.slot as usize]
            .as_ref()
            .expect("resident");
        let (cache, line) = match pipe {
            Pipe::Memory(MemoryPipe::Param(cache) | MemoryPipe::Const(cache)) => (
                cache,
                constant_cache_line(block.runner.state.constant_address),
            ),
            // The block's and grid's shape, at the start of constant bank 0.
            _ => (ConstantCache::Operand, 0),
        };
        // The two first-level caches hold their lines apart.
        let first_level_line = line << 1 | u64::from(cache == ConstantCache::Indexed);
        let arrival = match self.constant_lines.get(&first_level_line) {
            Some(&arrival) => arrival,
            None => {
                let config = &shared.costs.config;
                let from_second_level = cycle + u64::from(config.constant_miss_latency);
                let arrival = if matches!(
                    pipe,
                    Pipe::Memory(MemoryPipe::Param(_) | MemoryPipe::LaunchShape)
                ) {
                    from_second_level
                } else {
                    // The line that misses the block comes with it; the
                    // block's other lines then take the second level's
                    // latency.
                    let first_line = line / CONSTANT_BLOCK_LINES * CONSTANT_BLOCK_LINES;
                    match self.constant_blocks.get(&first_line) {
                        Some(&block_arrival) => block_arrival.max(from_second_level),
                        None => {
                            let sector = first_line * CONSTANT_LINE_BYTES
                                / crate::timing::cache::SECTOR_BYTES;
                            let block_arrival =
                                cycle + self.l2_access(shared, sector, cycle, false);
                            self.constant_blocks.insert(first_line, block_arrival);
                            block_arrival
                        }
                    }
                };
                self.constant_lines.insert(first_level_line, arrival);
                arrival
            }
        };
        let waited = arrival.saturating_sub(cycle);
        if waited > u64::from(cost.latency) {
            (waited.min(u64::from(u32::MAX)) as u32, StallReason::ImcMiss)
        } else {
            (cost.latency, cost.reason)
        }
    }

    /// The sectors of one request, its lanes having moved `bytes`, through
    /// the L1TEX data path and the caches: the cycles until the last one is
    /// done, and until the last has left the SM. Loads take
    /// `l1_sectors_per_cycle` a cycle; stores go towards the L2 at
    /// `store_bytes_per_cycle`, a whole sector each, and a store
    /// that writes only part of some sector costs
    /// `partial_store_line_cycles` more for each 128-byte line it touches
    /// (its byte masks: programs/timing/hardware/h200-stores.txt, where 32
    /// lanes storing 4 bytes 32 bytes apart take 40 cycles a request on one
    /// SM, and 16 bytes 16 bytes apart, 16 whole sectors, 18). The L2 takes
    /// what misses the L1 at the SM's share of its bandwidth in bytes and of
    /// its rate in lines, whichever is the slower.
    fn through_l1tex(
        &mut self,
        shared: &Shared<'_, 'a>,
        sectors: &[u64],
        bytes: u32,
        cycle: u64,
        kind: SectorAccess,
    ) -> MemoryTrip {
        let config = &shared.costs.config;
        let count = sectors.len() as u64;
        let start = cycle.max(self.data_path_free);
        self.data_path_free = start + count.div_ceil(u64::from(config.l1_sectors_per_cycle.max(1)));
        // A store's data then waits its turn on the path to the L2, which
        // loads do not wait for.
        let store = matches!(kind, SectorAccess::GlobalStore | SectorAccess::LocalStore);
        let store_lines = if store { lines_of(sectors) } else { 0 };
        let drained = if store {
            let sector_bytes = crate::timing::cache::SECTOR_BYTES;
            let whole =
                (count * sector_bytes).div_ceil(u64::from(config.store_bytes_per_cycle.max(1)));
            let partial_lines = if u64::from(bytes) < count * sector_bytes {
                store_lines
            } else {
                0
            };
            let occupied = whole + partial_lines * u64::from(config.partial_store_line_cycles);
            let drain_start = start.max(self.store_path_free);
            self.store_path_free = drain_start + occupied;
            self.store_queue.push_back(self.store_path_free);
            self.store_path_free - start
        } else {
            0
        };
        let l2_before = self.l2_free.max(cycle as f64);
        // The lines of a load's sectors that miss the L1, counted as they
        // change along the sorted sectors.
        let mut missed_lines = 0u64;
        let mut last_missed_line = None;
        let mut slowest = 0u64;
        for &sector in sectors {
            let arrival = match kind {
                SectorAccess::Atomic | SectorAccess::Reduction => {
                    // An atomic costs what an L2 access costs (a miss
                    // fetches its sector from DRAM first), with the atomic
                    // unit's latency for the hit's, after the SM's earlier
                    // atomics have had their share of the units. A
                    // reduction takes its share too, but the SM is done
                    // with it once the L2 has it, as with a store.
                    let reduction = matches!(kind, SectorAccess::Reduction);
                    let access = self.l2_access(shared, sector, cycle, reduction);
                    let start = self.atomics_free.max(cycle as f64);
                    self.atomics_free = start + shared.active_sms / config.atomic_sectors_per_cycle;
                    if reduction {
                        access
                    } else {
                        let waited = (start - cycle as f64).ceil() as u64;
                        waited
                            + access.saturating_sub(u64::from(config.l2_hit_latency))
                            + u64::from(config.atomic_latency)
                    }
                }
                SectorAccess::GlobalStore => {
                    self.l2_access(shared, sector, cycle, true);
                    u64::from(config.l2_hit_latency)
                }
                SectorAccess::LocalStore => {
                    self.l1.fill(sector);
                    self.l2_access(shared, sector, cycle, true);
                    u64::from(config.l1_hit_latency)
                }
                SectorAccess::Load if self.l1.lookup(sector) => {
                    self.l1_hit_sectors += 1;
                    u64::from(config.l1_hit_latency)
                }
                SectorAccess::Load => {
                    let line = sector / crate::timing::cache::SECTORS_PER_LINE;
                    if last_missed_line != Some(line) {
                        missed_lines += 1;
                        last_missed_line = Some(line);
                    }
                    self.l1.fill(sector);
                    self.l2_access(shared, sector, cycle, false)
                }
            };
            slowest = slowest.max(arrival);
        }
        if missed_lines > 0 {
            // Loads too go through the L2 by lines as well as by bytes (on
            // 132 SMs, 4-byte loads a line each went at 41 lines a cycle,
            // h200-store-merging.txt, where whole lines run at the
            // measured bandwidth, 35 lines a cycle).
            let lines = missed_lines as f64 * shared.active_sms / config.l2_read_lines_per_cycle;
            self.l2_free = self.l2_free.max(l2_before + lines);
        }
        if matches!(kind, SectorAccess::GlobalStore) {
            // The L2 takes global stores a line at a time as well as by
            // their bytes: the SM's share of `l2_write_lines_per_cycle`,
            // where that is the slower (on 132 SMs, 4-byte stores a line
            // each went at 31 lines a cycle: h200-stores.txt). Local
            // stores are left to their bytes: an H100's median filter
            // wrote four sectors into the L2 a local store
            // (h100-local-stores.txt), where the lanes' words as
            // `access::local_timing_address` lays them out make 2.65 lines
            // a store, more than the rate allows in the kernel's time.
            let lines = store_lines as f64 * shared.active_sms / config.l2_write_lines_per_cycle;
            self.l2_free = self.l2_free.max(l2_before + lines);
        }
        // A store is done when its last sector has left and reached the L2.
        let sent = start - cycle + drained;
        MemoryTrip {
            done: sent + slowest,
            sent: if store { sent } else { sent + slowest },
        }
    }

    /// A sector's trip to the L2 (and DRAM on a miss) at `cycle`: the
    /// cycles until it arrives. Stores are written into the L2 (a sector
    /// not there yet costs DRAM bandwidth when it is written back).
    fn l2_access(&mut self, shared: &Shared<'_, 'a>, sector: u64, cycle: u64, store: bool) -> u64 {
        let config = &shared.costs.config;
        self.l2_accesses.push(sector);
        let bytes = crate::timing::cache::SECTOR_BYTES as f64;
        // The SM's share of the L2's bandwidth: requests queue behind the
        // ones it already has in flight (programs/timing/hardware:
        // h100-l2-bandwidth.txt, reads and writes measured apart).
        let bandwidth = if store {
            config.l2_write_bytes_per_cycle
        } else {
            config.l2_read_bytes_per_cycle
        };
        let start = self.l2_free.max(cycle as f64);
        self.l2_free = start + bytes * shared.active_sms / f64::from(bandwidth);
        let queued = (self.l2_free - cycle as f64).ceil() as u64;
        let l2_hit = queued + u64::from(config.l2_hit_latency);
        if let Some(&arrives) = self.window_sectors.get(&sector) {
            self.l2_hit_sectors += u64::from(!store);
            return arrives.saturating_sub(cycle).max(l2_hit);
        }
        if shared.l2.contains(sector) {
            self.l2_hit_sectors += u64::from(!store);
            return l2_hit;
        }
        // A miss: the sector crosses the DRAM interface, after the bytes
        // this SM already has in flight there.
        let start = self.dram_free.max((cycle + queued) as f64);
        self.dram_free = start + bytes / shared.dram_share;
        self.dram_bytes += crate::timing::cache::SECTOR_BYTES;
        let latency = if store {
            l2_hit
        } else {
            self.dram_sectors += 1;
            (self.dram_free - cycle as f64).ceil() as u64 + u64::from(config.dram_latency)
        };
        self.window_sectors.insert(sector, cycle + latency);
        latency
    }

    /// The atomic `arrival` waited `delay` cycles at its sector's unit
    /// behind other atomics: its result, and its write as fences see it,
    /// come that much later. (A block that left needs neither.)
    pub(crate) fn delay_atomic(
        &mut self,
        issue: &IssueRecords,
        arrival: &AtomicArrival,
        delay: u64,
    ) {
        let Some(block) = self.slots[arrival.warp.slot as usize].as_mut() else {
            return;
        };
        if block.linear != arrival.linear {
            return;
        }
        let timing = &mut self.warps[arrival.warp.index as usize];
        let ready = arrival.ready + delay;
        let written = issue.written(&issue.records[arrival.pc as usize]);
        for &register in written {
            let entry = &mut timing.ready[register as usize];
            if ready > entry.at() {
                *entry = RegisterReady::new(ready, entry.producer());
            }
        }
        if let Some(chosen) = &mut timing.chosen {
            // Its next look checks the scoreboard again.
            chosen.sources_ready = false;
        }
        // A reduction (no old value) is the L2's business once it has
        // arrived there: its queue holds neither the SM nor a fence.
        if !written.is_empty() {
            timing.memory_done = timing.memory_done.max(ready);
            timing.memory_sent = timing.memory_sent.max(ready);
        }
    }

    /// The window ended: the L2 takes this SM's accesses (`gpu.rs` applies
    /// `l2_accesses`), and what was in flight is in the L2 now.
    pub(crate) fn end_window(&mut self) {
        self.window_sectors.clear();
        self.l2_accesses.clear();
        self.atomic_arrivals.clear();
        self.l2_order.clear();
    }

    /// Wakes the blocked warps of the block in `slot` `delay` cycles after `cycle`.
    fn wake_blocked(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        slot: usize,
        cycle: u64,
        delay: u64,
    ) {
        let sm = self.index;
        let block = self.slots[slot].as_mut().expect("resident");
        let release = cycle + delay;
        let timings = slot_warps(&mut self.warps, self.warps_per_block, slot);
        let earliest = slot_warps(&mut self.earliest, self.warps_per_block, slot);
        for (warp_index, (timing, earliest)) in timings.iter_mut().zip(earliest).enumerate() {
            let since = std::mem::replace(&mut timing.blocked_since, NEVER);
            if since == NEVER {
                continue;
            }
            block.blocked_warps -= 1;
            *earliest = release;
            let sub = &mut self.sub_partitions[timing.sub_partition as usize];
            sub.next_possible = sub.next_possible.min(release);
            stall(stats, timing, timing.last_pc, StallReason::Barrier, release);
            if shared.record_timeline {
                self.warp_spans.push(WarpSpan {
                    sm,
                    sub_partition: u32::from(timing.sub_partition),
                    linear: block.linear,
                    warp: warp_index as u32,
                    state: StallReason::Barrier,
                    start: since,
                    end: release,
                });
            }
        }
    }

    /// A warp has no lanes left: it leaves its sub-partition, and the
    /// block leaves the SM with its last warp.
    fn finish_warp(
        &mut self,
        shared: &Shared<'_, 'a>,
        stats: &mut RunStats,
        warp_ref: WarpRef,
        cycle: u64,
    ) {
        let slot = warp_ref.slot as usize;
        let block = self.slots[slot].as_mut().expect("resident");
        let timing = &mut self.warps[warp_ref.index as usize];
        if timing.finished {
            return;
        }
        timing.finished = true;
        self.earliest[warp_ref.index as usize] = NEVER;
        let sub_partition = timing.sub_partition as usize;
        block.live_warps -= 1;
        self.resident_warps -= 1;
        let list = &mut self.sub_partitions[sub_partition].warps;
        if let Some(position) = list
            .iter()
            .position(|entry| entry.slot == warp_ref.slot && entry.warp == warp_ref.warp)
        {
            list.remove(position);
        }
        if block.live_warps == 0 {
            self.depart(shared, slot, cycle, None);
        } else if block.blocked_warps == block.live_warps {
            // The warps left behind may wait for a barrier the exit opened.
            self.wake_blocked(shared, stats, slot, cycle, 0);
        }
    }

    /// The block in `slot` leaves the SM at `cycle`, finished or faulted.
    fn depart(
        &mut self,
        shared: &Shared<'_, 'a>,
        slot: usize,
        cycle: u64,
        error: Option<Box<ExecError>>,
    ) {
        let Some(mut block) = self.slots[slot].take() else {
            return;
        };
        self.resident_blocks -= 1;
        for sub in &mut self.sub_partitions {
            sub.warps.retain(|entry| entry.slot as usize != slot);
            sub.greedy = sub.greedy.min(sub.warps.len().saturating_sub(1));
        }
        self.resident_warps -= u64::from(block.live_warps);
        if let Some(error) = &error {
            block.runner.report_hang(error);
        }
        // A block retires once its stores have left the SM and its atomics
        // are done: on an H200 a warp's exit after a store keeps the SM no
        // longer than sending it (`programs/timing/hardware/h200-tails.txt`:
        // one warp's coalesced store and exit, 302 active cycles against an
        // empty kernel's 198, where its trip to the L2 and back is 250).
        let cycle = if error.is_none() {
            let drained = self
                .block_warps(slot)
                .iter()
                .map(|warp| warp.memory_sent)
                .max()
                .unwrap_or(cycle)
                .max(cycle);
            if self.resident_blocks == 0 {
                // Nothing else keeps the SM busy while the stores drain.
                self.active_cycles += drained - cycle;
            }
            self.last_active = self.last_active.max(drained);
            drained
        } else {
            cycle
        };
        if shared.record_timeline {
            self.blocks_spans.push(BlockSpan {
                sm: self.index,
                block: block.runner.block_index(),
                linear: block.linear,
                start: block.start,
                end: cycle,
            });
        }
        self.departures.push(Departure {
            linear: block.linear,
            error,
            findings: block.runner.take_findings(),
            printed: block.runner.take_printed(),
        });
        let empty = self.empty_stores.pop().unwrap_or_default();
        let stores = block.runner.replace_stores(empty);
        if stores.is_empty() {
            self.empty_stores.push(stores);
        } else {
            self.departed_stores.push(stores);
        }
        self.freed.push((slot, cycle));
        self.spare.push(block.runner);
    }

    /// Applies the global stores and atomics of this window to memory,
    /// and forgets them: those of the blocks that left, in the order they
    /// left, then those of the resident blocks, in slot order, whose
    /// atomics' old values go to their registers (the blocks that left
    /// read none).
    pub(crate) fn apply_stores(&mut self, global: &GlobalMemory) {
        for mut stores in self.departed_stores.drain(..) {
            stores.apply(global, |_, _| {});
            self.empty_stores.push(stores);
        }
        for block in self.slots.iter_mut().flatten() {
            block.runner.apply_stores(global);
        }
    }

    /// Sorts the window's L2 accesses into `shards` shards of `l2`'s sets,
    /// so that the window's end can fill them on several host threads
    /// (`shards.rs`); run at the end of the SM's part of a window, in
    /// parallel with the other SMs'. Nothing to do when they are sorted so.
    pub(crate) fn sort_l2_accesses(&mut self, l2: &SectorCache, shards: usize) {
        let accesses = &self.l2_accesses;
        if !self.l2_order.covers(accesses.len(), shards) {
            self.l2_order.sort(accesses.len(), shards, |index| {
                l2.shard_of(accesses[index], shards)
            });
        }
    }

    /// The window's L2 accesses, sorted by `sort_l2_accesses`.
    pub(crate) fn l2_order(&self) -> &ShardOrder {
        &self.l2_order
    }

    /// The resident blocks' runners, for the livelock checks at a
    /// window's end.
    pub(crate) fn resident_runners(&mut self) -> impl Iterator<Item = (u64, &mut BlockRunner<'a>)> {
        self.slots
            .iter_mut()
            .flatten()
            .map(|block| (block.linear, &mut *block.runner))
    }

    /// Ends resident block `linear`: it faulted outside the
    /// issue loop (a livelock found at a window's end, an interruption).
    pub(crate) fn evict(&mut self, shared: &Shared<'_, 'a>, linear: u64, error: Box<ExecError>) {
        let slot = self
            .slots
            .iter()
            .position(|block| block.as_ref().is_some_and(|block| block.linear == linear));
        if let Some(slot) = slot {
            let cycle = self.cycle;
            self.depart(shared, slot, cycle, Some(error));
        }
    }
}

/// What a request does with its sectors on their way through the caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SectorAccess {
    /// A load, global or local: the L1, then the L2 and DRAM on a miss.
    Load,
    /// A global store: written through to the L2.
    GlobalStore,
    /// A local store: kept in the L1.
    LocalStore,
    /// A global atomic whose old value is read: performed at the L2.
    Atomic,
    /// A global reduction (an atomic whose old value is not read): the SM
    /// is done with it once the L2 has it, as with a store (on an H100 an
    /// SM whose reductions queue 20,000 cycles at the L2 is active 919:
    /// programs/timing/hardware/h100-atomic-contention.txt).
    Reduction,
}

/// How an attempt to issue went.
enum Attempt {
    Issued,
    /// Not before this cycle.
    Stalled(u64),
    /// The warp (or its block) left the SM.
    Left,
}

/// Marks the registers `record` writes ready at `ready`, a wait for them
/// counting as `reason`.
#[inline(always)]
fn set_ready(
    shared: &Shared<'_, '_>,
    timing: &mut WarpTiming,
    record: &IssueRecord,
    ready: u64,
    reason: StallReason,
) {
    for &register in shared.issue.written(record) {
        timing.ready[register as usize] = RegisterReady::new(ready, reason);
    }
}

/// The scoreboard: the cycle from `cycle` on at which the registers
/// `record` checks (its sources read, its destinations written in flight)
/// are all ready, and what a wait for the last of them counts as.
#[inline(always)]
fn scoreboard(
    shared: &Shared<'_, '_>,
    timing: &WarpTiming,
    record: &IssueRecord,
    cycle: u64,
) -> (u64, StallReason) {
    // The latest entry, its reason unpacked once.
    let mut latest = RegisterReady::new(cycle, StallReason::Wait);
    for &register in shared.issue.checked(record) {
        let entry = timing.ready[register as usize];
        if entry.at() > latest.at() {
            latest = entry;
        }
    }
    (latest.at(), latest.producer())
}

/// Right after an issue, the warp's look at its next instruction, which
/// it would otherwise take at `next_cycle` in a scan of its own: a warp
/// whose lanes run as one path chooses that instruction now (nothing but
/// its own issue changes its paths), and a scoreboard wait for its
/// sources counts from here, so that no scan looks at the warp before
/// they are ready.
///
/// Under greedy-then-oldest the warp that issued is the first its
/// sub-partition looks at in the next cycle, so this is the look the
/// scan would take. Under loose round robin the scan may first issue
/// another warp and look at this one later; a wait for its sources
/// counts then as the scoreboard's up to the cycle they are ready (as
/// Nsight Compute samples a warp's state every cycle), where a look
/// taken after that cycle would have counted it as not selected.
#[inline(always)]
fn look_ahead(
    shared: &Shared<'_, '_>,
    stats: &mut RunStats,
    runner: &mut BlockRunner<'_>,
    timing: &mut WarpTiming,
    earliest: &mut u64,
    warp_index: usize,
    next_cycle: u64,
) {
    let Some(pc) = runner.peek_single_path(warp_index, &mut timing.streak) else {
        return;
    };
    let record = &shared.issue.records[pc as usize];
    let (ready, reason) = scoreboard(shared, timing, record, next_cycle);
    if ready > next_cycle {
        stall(stats, timing, pc, reason, ready);
        *earliest = ready;
    }
    timing.chosen = Some(Chosen {
        path: 0,
        pc,
        sources_ready: true,
    });
}

/// Counts the cycles from what is already counted up to `until` as
/// `reason`, at instruction `pc`.
#[inline]
fn stall(stats: &mut RunStats, timing: &mut WarpTiming, pc: u32, reason: StallReason, until: u64) {
    if until > timing.accounted {
        if until != NEVER {
            stats.per_instruction[pc as usize].stalls[reason as usize] += until - timing.accounted;
        }
        timing.accounted = until;
    }
}

/// Where a kernel's parameters start in the constant bank the hardware
/// reads them from: `c[0x0][0x210]` on sm_90 (ptxas's SASS for every
/// kernel of `programs/timing/tails.cu`); the driver's own values (the
/// block's and grid's shape, the stack) are below.
const PARAM_BANK_OFFSET: u64 = 0x210;

/// The bytes of a constant-cache line: 64 on an H200, whose loads of
/// constants 64 bytes apart each miss the SM's constant cache and whose
/// loads 4 bytes apart hit after the first (constantChase64 and
/// constantChase4 of `programs/timing/tails.cu`,
/// `programs/timing/hardware/h200-tails.txt`).
const CONSTANT_LINE_BYTES: u64 = 64;

/// The constant-cache line of a load from the parameters or the constants
/// at `address` in the space's window (`BlockState::constant_address`), the
/// parameters placed as the hardware's constant bank holds them.
fn constant_cache_line(address: u64) -> u64 {
    let in_bank = if address < crate::memory::CONST_WINDOW {
        address + PARAM_BANK_OFFSET
    } else {
        address
    };
    in_bank / CONSTANT_LINE_BYTES
}

/// The 64-byte constant-cache lines of a block of the second-level constant
/// cache: 256 bytes (constantChase64 of `programs/timing/tails.cu` on an
/// H200 goes to the L2 every fourth load, `h200-tails.txt`).
const CONSTANT_BLOCK_LINES: u64 = 4;

/// When a store may join the SM's store queue at `cycle`: at once while it
/// holds fewer than `capacity` requests, else when the oldest leaves.
fn store_queue_room(queue: &mut VecDeque<u64>, capacity: u32, cycle: u64) -> u64 {
    while queue.front().is_some_and(|&leaves| leaves <= cycle) {
        queue.pop_front();
    }
    let capacity = capacity.max(1) as usize;
    if queue.len() < capacity {
        cycle
    } else {
        queue[queue.len() - capacity]
    }
}

/// The 128-byte lines of a request's sectors, counted as changes of line
/// along the list: exact for a global request's, which are sorted, and at
/// most the lanes' changes of line for a local one's, in lane order.
fn lines_of(sectors: &[u64]) -> u64 {
    let sectors_per_line = crate::timing::cache::SECTORS_PER_LINE;
    let mut lines = 0;
    let mut last = None;
    for &sector in sectors {
        let line = sector / sectors_per_line;
        if last != Some(line) {
            lines += 1;
            last = Some(line);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_joins_the_queue_once_fewer_requests_than_its_capacity_wait() {
        // Requests leave at cycles 10, 20, 30, 40.
        let mut queue: VecDeque<u64> = [10, 20, 30, 40].into_iter().collect();
        // Room for five: at once.
        assert_eq!(store_queue_room(&mut queue, 5, 0), 0);
        // Room for four: when the oldest leaves.
        assert_eq!(store_queue_room(&mut queue, 4, 0), 10);
        // Room for two: when three have left, one remaining.
        assert_eq!(store_queue_room(&mut queue, 2, 0), 30);
        // At cycle 25 two have left and are forgotten; two remain.
        assert_eq!(store_queue_room(&mut queue, 2, 25), 30);
        assert_eq!(queue.len(), 2);
        assert_eq!(store_queue_room(&mut queue, 3, 25), 25);
    }

    #[test]
    fn a_request_lines_are_its_sectors_four_to_a_line() {
        assert_eq!(lines_of(&[]), 0);
        assert_eq!(lines_of(&[0, 1, 2, 3]), 1);
        assert_eq!(lines_of(&[3, 4]), 2);
        // 4-byte lanes 32 bytes apart: 32 sectors in 8 lines.
        let strided: Vec<u64> = (0..32).collect();
        assert_eq!(lines_of(&strided), 8);
        // 128 bytes apart: a line each.
        let spread: Vec<u64> = (0..32).map(|lane| lane * 4).collect();
        assert_eq!(lines_of(&spread), 32);
    }

    #[test]
    fn a_register_ready_entry_keeps_its_cycle_and_reason() {
        for reason in StallReason::ALL {
            for at in [0, 1, 255, 256, 4_000_000_000, 1 << 40, (u64::MAX >> 8) - 1] {
                let entry = RegisterReady::new(at, reason);
                assert_eq!((entry.at(), entry.producer()), (at, reason));
            }
            // Beyond what the word holds, the cycle stays the latest it can.
            let entry = RegisterReady::new(NEVER, reason);
            assert_eq!((entry.at(), entry.producer()), (u64::MAX >> 8, reason));
        }
    }

    #[test]
    fn what_an_issue_reads_of_a_warp_timing_is_in_its_first_cache_line() {
        // Each field's end from its own offset and size, so that a field
        // whose type grows moves the end with it.
        let timing = WarpTiming::default();
        let base = std::ptr::addr_of!(timing) as usize;
        macro_rules! end_of {
            ($field:ident) => {
                std::ptr::addr_of!(timing.$field) as usize - base
                    + std::mem::size_of_val(&timing.$field)
            };
        }
        let ends = [
            end_of!(accounted),
            end_of!(ready),
            end_of!(chosen),
            end_of!(streak),
            end_of!(last_pc),
            end_of!(sub_partition),
            end_of!(finished),
            end_of!(blocked_since),
        ];
        let last = ends.into_iter().max().unwrap();
        assert!(last <= 64, "the fields an issue reads end at byte {last}");
        assert_eq!(std::mem::align_of::<WarpTiming>(), 128);
    }
}
