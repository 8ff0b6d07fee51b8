//! The machine description (`sim.toml`): bank geometry, per-block limits,
//! barrier semantics and run limits. Configuration is data: nothing here is
//! hard-wired into the interpreter.

use serde::{Deserialize, Serialize};
use warpsim_banks::BankConfig;

/// The whole machine configuration, as read from `sim.toml`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    pub device: DeviceConfig,
    pub shared_memory: SharedMemoryConfig,
    #[serde(default)]
    pub barriers: BarrierConfig,
    #[serde(default)]
    pub limits: LimitConfig,
    #[serde(default)]
    pub compiler: CompilerConfig,
    #[serde(default)]
    pub memory: MemoryConfig,
    #[serde(default)]
    pub sm: SmConfig,
    #[serde(default)]
    pub timing: TimingConfig,
}

/// What a block's memory holds before its threads write it.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// The byte that fills fresh shared memory and local memory of every
    /// block. A GPU leaves there whatever an earlier block or kernel wrote;
    /// a pattern that is not zero makes a kernel that reads memory it never
    /// wrote show it in its output, where zeros would often hide the bug.
    /// The default, 0xff, reads as -1 in every integer type and as NaN in
    /// every float type.
    #[serde(default = "default_fresh_fill")]
    pub fresh_fill: u8,
    /// How global memory orders what threads see (`weak_memory.rs`).
    #[serde(default)]
    pub model: MemoryModel,
    /// The seed of the explore model's choices: the same seed, the same run.
    #[serde(default)]
    pub seed: u64,
}

/// How global memory orders what threads see of each other's stores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryModel {
    /// The machine's own ordering: deterministic, with the timing model's
    /// delays; blocks see each other's plain stores at time-window ends.
    #[default]
    Machine,
    /// Any ordering the PTX memory model allows, chosen at random from the
    /// seed: a load may return an older store, a store may take an earlier
    /// place in coherence order, blocks start at jittered times and the SMs
    /// take turns in a random order. For finding the fences a kernel lacks.
    Explore,
}

fn default_fresh_fill() -> u8 {
    0xff
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            fresh_fill: default_fresh_fill(),
            model: MemoryModel::default(),
            seed: 0,
        }
    }
}

/// What the hardware's compiler does to the code before it runs.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompilerConfig {
    /// Merge shared-memory accesses of PTX from NVRTC or nvcc as ptxas
    /// does (adjacent aligned words into vector accesses, unused
    /// `atomicAdd(p, 1)` into population-count increments;
    /// docs/access-merging.md), so that counts are those of the SASS the
    /// GPU runs.
    #[serde(default = "default_true")]
    pub merge_accesses: bool,
    /// Move each plain global load as early in its basic block as its
    /// operands and memory ordering allow, as ptxas schedules loads, so
    /// that a thread's independent loads are in flight together
    /// (`warpsim_ir::schedule`); and each parameter load to where ptxas
    /// reads the parameter (`warpsim_ir::parameter_placement`).
    #[serde(default = "default_true")]
    pub schedule_loads: bool,
}

fn default_true() -> bool {
    true
}

impl Default for CompilerConfig {
    fn default() -> Self {
        CompilerConfig {
            merge_accesses: true,
            schedule_loads: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// A name for reports, e.g. "Hopper (sm_90)".
    pub name: String,
    /// Compute capability times ten, e.g. 90 for sm_90.
    pub compute_capability: u32,
    pub sm_count: u32,
    pub max_threads_per_block: u32,
    /// Largest block dimensions, x, y, z.
    pub max_block_dims: [u32; 3],
    /// Largest grid dimensions, x, y, z.
    pub max_grid_dims: [u32; 3],
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SharedMemoryConfig {
    pub banks: u32,
    pub bank_width_bytes: u32,
    /// Static shared memory a block may declare.
    pub static_bytes_per_block: u32,
    /// Static plus dynamic shared memory a block may use (opt-in maximum).
    pub max_bytes_per_block: u32,
}

impl SharedMemoryConfig {
    pub fn bank_config(&self) -> BankConfig {
        BankConfig {
            banks: self.banks,
            bank_width_bytes: self.bank_width_bytes,
        }
    }
}

/// What one SM can hold at once: the limits that decide how many blocks
/// are resident together (occupancy). Defaults are Hopper's (compute
/// capability 9.0: CUDA C++ Programming Guide, "Technical Specifications per
/// Compute Capability"; reference/timing.md), checked against
/// `cudaOccupancyMaxActiveBlocksPerMultiprocessor` on an H100.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SmConfig {
    /// Warp schedulers (sub-partitions) per SM; warp `w` of a block lives on
    /// sub-partition `(first warp slot of the block + w) mod sub_partitions`.
    pub sub_partitions: u32,
    pub max_threads: u32,
    pub max_warps: u32,
    pub max_blocks: u32,
    /// 32-bit registers of the SM's register file.
    pub registers: u32,
    /// Registers are allocated per warp in units of this many.
    pub register_allocation_unit: u32,
    pub max_registers_per_thread: u32,
    /// Shared memory an SM can give its blocks (the carve-out's maximum).
    pub shared_bytes: u32,
    /// Shared memory is allocated per block in units of this many bytes.
    pub shared_allocation_unit: u32,
    /// Shared memory the CUDA runtime reserves for itself in every resident
    /// block (`cudaDeviceProp::reservedSharedMemPerBlock`).
    pub reserved_shared_bytes_per_block: u32,
}

impl Default for SmConfig {
    fn default() -> Self {
        SmConfig {
            sub_partitions: 4,
            max_threads: 2048,
            max_warps: 64,
            max_blocks: 32,
            registers: 65_536,
            register_allocation_unit: 256,
            max_registers_per_thread: 255,
            shared_bytes: 233_472,
            shared_allocation_unit: 128,
            reserved_shared_bytes_per_block: 1024,
        }
    }
}

/// The timing model's numbers (`timing/mod.rs` says how they are used).
/// Latencies are in SM cycles from issue to the result being usable by a
/// dependent instruction; intervals are the cycles a sub-partition's pipe
/// is busy per warp instruction (32 lanes over the pipe's lanes per
/// sub-partition). Sources: reference/timing.md (measured on an H200 with
/// `clock64()`), programs/timing (measured on an H100), and the H100
/// whitepaper for unit counts.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    /// The SM clock in MHz, for times in microseconds. 1,755 MHz is the
    /// H100 SXM's base clock, which Nsight Compute locks while it measures.
    pub clock_mhz: u32,
    /// Registers per thread when neither the launch nor the compiler says.
    pub default_registers_per_thread: u32,
    /// FP32 add, multiply, fma: 32 lanes per sub-partition.
    pub fp32_latency: u32,
    pub fp32_interval: u32,
    /// The ALU pipe (16 lanes per sub-partition): integer logic, shifts,
    /// compares, selects, minimum and maximum, and `f32` compares and
    /// minimum and maximum. Integer adds and moves issue here, or to the
    /// FMA pipe at `integer_multiply_interval` when the ALU is busy.
    pub integer_latency: u32,
    pub integer_interval: u32,
    /// Integer multiply and multiply-add (IMAD), on the FMA pipe.
    pub integer_multiply_latency: u32,
    pub integer_multiply_interval: u32,
    /// FP64: 16 lanes per sub-partition on H100 SXM.
    pub fp64_latency: u32,
    pub fp64_interval: u32,
    /// Half and bfloat16 arithmetic.
    pub half_latency: u32,
    pub half_interval: u32,
    /// The special-function unit (`ex2`, `lg2`, `sin`, `cos`, `rcp`,
    /// `rsqrt`, `sqrt`): 4 lanes per sub-partition.
    pub sfu_latency: u32,
    pub sfu_interval: u32,
    /// Conversions between number types.
    pub conversion_latency: u32,
    pub conversion_interval: u32,
    /// Division and remainder, which compile to instruction sequences.
    pub division_latency: u32,
    pub division_interval: u32,
    /// Shuffles, votes, reductions and matches within a warp.
    pub warp_shuffle_latency: u32,
    pub warp_shuffle_interval: u32,
    /// Branches, exits, fences and other control: issue cost only.
    pub control_interval: u32,
    /// `mma.sync` on the tensor cores (programs/tensor/hardware/probe/
    /// timing.txt, an H100): latency of a dependent chain and cycles per
    /// `mma` of one warp with independent accumulators. m16n8k16 `.f16`
    /// and `.bf16`, m16n8k8 `.tf32`, m16n8k32 `.s8`/`.u8`: 24.03 and 6.22.
    pub tensor_latency: u32,
    pub tensor_interval: u32,
    /// m16n8k8 `.f16` and `.bf16`: 17.03 and 4.19.
    pub tensor_half_latency: u32,
    pub tensor_half_interval: u32,
    /// m8n8k4 `.f64`: 26.00 and 17.16.
    pub tensor_f64_latency: u32,
    pub tensor_f64_interval: u32,
    /// Shared-memory load latency with one wavefront (29 cycles,
    /// reference/timing.md), and what each extra wavefront adds (2).
    pub shared_latency: u32,
    pub shared_latency_per_extra_wavefront: u32,
    /// Wavefronts the shared-memory pipe (MIO) accepts per SM per cycle.
    pub shared_wavefronts_per_cycle: u32,
    /// Global and local loads: L1 hit latency, and the latency of a miss
    /// served by L2 and beyond (reference/timing.md: 47 and 288 cycles for
    /// a pointer chase, which includes the address arithmetic).
    pub l1_hit_latency: u32,
    pub l2_hit_latency: u32,
    /// Per-SM L1 data cache for global and local loads: bytes, ways, line.
    pub l1_bytes: u32,
    pub l1_ways: u32,
    /// Sectors (32 bytes) the L1 returns per cycle.
    pub l1_sectors_per_cycle: u32,
    /// Bytes of global and local stores one SM sends towards the L2 per
    /// cycle, a whole sector for each sector a request writes to, and the
    /// cycles each 128-byte line costs on top when the request writes only
    /// part of some sector in it (programs/timing/hardware/h200-stores.txt:
    /// 1.02 cycles per sector, 0.99 per such line, on one SM).
    pub store_bytes_per_cycle: u32,
    pub partial_store_line_cycles: u32,
    /// Store requests an SM's queue holds before warps that store stall
    /// (`stall_lg_throttle`): on an H200, warps hand over 47 requests more
    /// than the path has sent (h200-stores.txt, the unfenced stores).
    pub store_queue_requests: u32,
    /// 128-byte lines of stores the L2 takes a cycle across the GPU, beside
    /// its write bandwidth in bytes: on an H200, 132 SMs storing 4 bytes a
    /// line reached 31.3 lines a cycle (h200-stores.txt).
    pub l2_write_lines_per_cycle: f64,
    /// The same for loads that miss the L1: 132 SMs loading 4 bytes a line
    /// reached 41 lines a cycle (h200-store-merging.txt).
    pub l2_read_lines_per_cycle: f64,
    /// What a fence costs with no store outstanding: `membar.gl`,
    /// `fence.sc.gpu`, `fence.acq_rel.gpu` and the system scope (263 cycles
    /// on an H200, h200-stores.txt), and `membar.cta` (11). The loops that
    /// measured them read their count (an `LDC` after the first clock
    /// read, in ptxas's SASS) inside the window: its first-level miss is
    /// not the fences'.
    pub fence_latency: u32,
    pub block_fence_latency: u32,
    /// The first load of a kernel parameter's 64-byte constant-cache line
    /// on an SM in a launch, or of a constant's line whose 256-byte block
    /// the SM's second-level constant cache holds: about 88 cycles on an
    /// H200, where the later ones hit (programs/timing/hardware/
    /// h200-tails.txt).
    pub constant_miss_latency: u32,
    /// An `LDC` that hits the SM's indexed constant cache, from issue to
    /// use: 34 cycles on an H200, whose dependent loads of constants 64
    /// bytes apart take 38 a load warm, an `IMAD` of the next address
    /// between (constantChase64, h200-tails.txt).
    pub constant_load_latency: u32,
    /// DRAM bandwidth in bytes per SM cycle for the whole GPU (3.35 TB/s at
    /// 1,755 MHz is about 1,900).
    pub dram_bytes_per_cycle: u32,
    /// The L2 shared by all SMs: bytes and ways (H100 SXM: 50 MiB in two
    /// partitions; `reference/timing.md`).
    pub l2_bytes: u64,
    pub l2_ways: u32,
    /// The L2's bandwidth for the whole GPU in bytes per SM cycle, reads and
    /// writes apart (programs/timing/hardware/h100-l2-bandwidth.txt: all
    /// SMs reading and writing a 16 MiB buffer that stays in the L2).
    pub l2_read_bytes_per_cycle: u32,
    pub l2_write_bytes_per_cycle: u32,
    /// A load that misses the L2: cycles until its sector arrives from
    /// DRAM when nothing else is queued (programs/timing: 577 cycles
    /// under Nsight Compute's clock lock).
    pub dram_latency: u32,
    /// Which ready warp a sub-partition issues from.
    pub scheduler: SchedulerPolicy,
    /// Global atomics resolve at L2: latency of one (a dependent chain
    /// on an H100 under Nsight Compute's clock lock).
    pub atomic_latency: u32,
    /// Cycles the L2 spends on each warp's atomic request to one 32-byte
    /// sector: requests to a sector queue behind each other (all lanes of
    /// a warp to one sector are one request). programs/timing/hardware/
    /// h100-atomic-contention.txt: 1.19 on an H100.
    pub atomic_sector_interval: f64,
    /// Atomic requests to distinct sectors the whole L2 performs per cycle:
    /// each SM's atomics queue for its share of them.
    /// programs/timing/hardware/h100-atomic-chains.txt: 24.4 on an H100.
    pub atomic_sectors_per_cycle: f64,
    /// `bar.sync` release: cycles after the last arrival for a one-warp
    /// block, and the cycles each further warp adds (reference/timing.md:
    /// 14.7 cycles a loop iteration for 32 threads, +2 per warp).
    pub barrier_latency: u32,
    pub barrier_latency_per_warp: u32,
    /// Cycles from a block's launch on an SM to its warps' first issue.
    pub block_launch_latency: u32,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            clock_mhz: 1590,
            default_registers_per_thread: 32,
            fp32_latency: 4,
            fp32_interval: 1,
            integer_latency: 4,
            integer_interval: 2,
            integer_multiply_latency: 4,
            integer_multiply_interval: 2,
            fp64_latency: 8,
            fp64_interval: 2,
            half_latency: 4,
            half_interval: 1,
            sfu_latency: 17,
            sfu_interval: 8,
            conversion_latency: 6,
            conversion_interval: 2,
            division_latency: 40,
            division_interval: 16,
            warp_shuffle_latency: 23,
            warp_shuffle_interval: 2,
            control_interval: 1,
            tensor_latency: 24,
            tensor_interval: 6,
            tensor_half_latency: 17,
            tensor_half_interval: 4,
            tensor_f64_latency: 26,
            tensor_f64_interval: 17,
            shared_latency: 23,
            shared_latency_per_extra_wavefront: 2,
            shared_wavefronts_per_cycle: 1,
            l1_hit_latency: 35,
            l2_hit_latency: 251,
            // The unified 256 KiB less a typical shared-memory carve-out.
            l1_bytes: 128 * 1024,
            l1_ways: 4,
            l1_sectors_per_cycle: 4,
            store_bytes_per_cycle: 32,
            partial_store_line_cycles: 1,
            store_queue_requests: 47,
            l2_write_lines_per_cycle: 31.0,
            l2_read_lines_per_cycle: 41.0,
            fence_latency: 263,
            block_fence_latency: 11,
            constant_miss_latency: 88,
            constant_load_latency: 34,
            dram_bytes_per_cycle: 2000,
            l2_bytes: 50 * 1024 * 1024,
            l2_ways: 16,
            l2_read_bytes_per_cycle: 4500,
            l2_write_bytes_per_cycle: 2400,
            dram_latency: 577,
            scheduler: SchedulerPolicy::GreedyThenOldest,
            atomic_latency: 396,
            atomic_sector_interval: 1.19,
            atomic_sectors_per_cycle: 24.4,
            barrier_latency: 13,
            barrier_latency_per_warp: 2,
            block_launch_latency: 200,
        }
    }
}

/// Which ready warp a sub-partition's scheduler issues from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerPolicy {
    /// The warp that issued last while it can, else the oldest that can
    /// (GTO; Rogers et al., MICRO 2012).
    #[default]
    GreedyThenOldest,
    /// The warps in turn, starting after the one that issued last.
    LooseRoundRobin,
}

/// How block-level barriers count arrivals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BarrierSemantics {
    /// Volta and later: arrival is counted per thread.
    #[default]
    Volta,
    /// Pascal and earlier: one thread of a warp arriving counts the whole warp.
    PreVolta,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BarrierConfig {
    #[serde(default)]
    pub semantics: BarrierSemantics,
    /// Warp instructions a block may run without observable progress (a
    /// store, an atomic that changed memory, a barrier arrival, an exit)
    /// while some of its threads wait at a barrier or a warp sync, before
    /// the checker starts looking for a repeated state, which proves a
    /// livelock (the machine has no cycle counter yet, so the window is
    /// counted in issued warp instructions).
    #[serde(default = "default_livelock_window")]
    pub livelock_window: u64,
}

fn default_livelock_window() -> u64 {
    1_000_000
}

impl Default for BarrierConfig {
    fn default() -> Self {
        BarrierConfig {
            semantics: BarrierSemantics::default(),
            livelock_window: default_livelock_window(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitConfig {
    /// A block that executes more warp instructions than this stops with an
    /// error saying where its warps were: a runaway kernel ends instead of
    /// running forever. The limit is per block so that it is reached at the
    /// same point whatever the number of host threads.
    #[serde(default = "default_instruction_limit")]
    pub max_warp_instructions_per_block: u64,
    /// The bytes of `printf` output a launch keeps; later output is dropped
    /// with a note, as the CUDA runtime drops what does not fit its buffer
    /// (`cudaLimitPrintfFifoSize`, 1 MiB by default).
    #[serde(default = "default_printf_buffer_bytes")]
    pub printf_buffer_bytes: u64,
}

fn default_instruction_limit() -> u64 {
    100_000_000
}

fn default_printf_buffer_bytes() -> u64 {
    1 << 20
}

impl Default for LimitConfig {
    fn default() -> Self {
        LimitConfig {
            max_warp_instructions_per_block: default_instruction_limit(),
            printf_buffer_bytes: default_printf_buffer_bytes(),
        }
    }
}

impl MachineConfig {
    /// A Hopper-class GPU (H100/H200, sm_90): the default machine.
    pub fn hopper() -> MachineConfig {
        MachineConfig {
            device: DeviceConfig {
                name: "Hopper (sm_90)".to_string(),
                compute_capability: 90,
                sm_count: 132,
                max_threads_per_block: 1024,
                max_block_dims: [1024, 1024, 64],
                max_grid_dims: [2_147_483_647, 65_535, 65_535],
            },
            shared_memory: SharedMemoryConfig {
                banks: 32,
                bank_width_bytes: 4,
                static_bytes_per_block: 48 * 1024,
                max_bytes_per_block: 227 * 1024,
            },
            barriers: BarrierConfig::default(),
            limits: LimitConfig::default(),
            compiler: CompilerConfig::default(),
            memory: MemoryConfig::default(),
            sm: SmConfig::default(),
            timing: TimingConfig::default(),
        }
    }

    /// Checks values that deserialize but make no sense; the error names the keys.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail =
            |keys: &'static [&'static str], message: String| Err(ConfigError { keys, message });
        let shared = &self.shared_memory;
        // The bank count alone (with a valid width), then the geometry as a whole:
        // whatever is still wrong is the width.
        let banks_only = BankConfig {
            banks: shared.banks,
            bank_width_bytes: 4,
        };
        if let Err(message) = banks_only.validate() {
            return fail(
                &["shared_memory.banks"],
                format!("shared_memory: {message}"),
            );
        }
        if let Err(message) = shared.bank_config().validate() {
            return fail(
                &["shared_memory.bank_width_bytes"],
                format!("shared_memory: {message}"),
            );
        }
        if self.device.max_threads_per_block == 0 || self.device.max_threads_per_block > 1024 {
            return fail(
                &["device.max_threads_per_block"],
                "device.max_threads_per_block must be between 1 and 1024".to_string(),
            );
        }
        if self.device.max_block_dims.contains(&0) || self.device.max_grid_dims.contains(&0) {
            return fail(
                &["device.max_block_dims", "device.max_grid_dims"],
                "device.max_block_dims and device.max_grid_dims must be positive".to_string(),
            );
        }
        if shared.static_bytes_per_block > shared.max_bytes_per_block {
            return fail(
                &[
                    "shared_memory.static_bytes_per_block",
                    "shared_memory.max_bytes_per_block",
                ],
                "shared_memory.static_bytes_per_block exceeds shared_memory.max_bytes_per_block"
                    .to_string(),
            );
        }
        self.validate_sm_and_timing()?;
        if self.barriers.livelock_window == 0 {
            return fail(
                &["barriers.livelock_window"],
                "barriers.livelock_window must be positive".to_string(),
            );
        }
        if self.limits.max_warp_instructions_per_block == 0 {
            return fail(
                &["limits.max_warp_instructions_per_block"],
                "limits.max_warp_instructions_per_block must be positive".to_string(),
            );
        }
        Ok(())
    }

    /// Zero where a count, a latency, an interval, a size or a bandwidth is
    /// expected, or a register limit past what PTX allows.
    fn validate_sm_and_timing(&self) -> Result<(), ConfigError> {
        let sm = &self.sm;
        let timing = &self.timing;
        let positive: [(&'static [&'static str], u64); 55] = [
            (&["device.sm_count"], self.device.sm_count.into()),
            (&["sm.sub_partitions"], sm.sub_partitions.into()),
            (&["sm.max_threads"], sm.max_threads.into()),
            (&["sm.max_warps"], sm.max_warps.into()),
            (&["sm.max_blocks"], sm.max_blocks.into()),
            (&["sm.registers"], sm.registers.into()),
            (
                &["sm.register_allocation_unit"],
                sm.register_allocation_unit.into(),
            ),
            (
                &["sm.max_registers_per_thread"],
                sm.max_registers_per_thread.into(),
            ),
            (&["sm.shared_bytes"], sm.shared_bytes.into()),
            (
                &["sm.shared_allocation_unit"],
                sm.shared_allocation_unit.into(),
            ),
            (&["timing.clock_mhz"], timing.clock_mhz.into()),
            (
                &["timing.default_registers_per_thread"],
                timing.default_registers_per_thread.into(),
            ),
            (&["timing.fp32_latency"], timing.fp32_latency.into()),
            (&["timing.fp32_interval"], timing.fp32_interval.into()),
            (&["timing.integer_latency"], timing.integer_latency.into()),
            (&["timing.integer_interval"], timing.integer_interval.into()),
            (
                &["timing.integer_multiply_latency"],
                timing.integer_multiply_latency.into(),
            ),
            (
                &["timing.integer_multiply_interval"],
                timing.integer_multiply_interval.into(),
            ),
            (&["timing.fp64_latency"], timing.fp64_latency.into()),
            (&["timing.fp64_interval"], timing.fp64_interval.into()),
            (&["timing.half_latency"], timing.half_latency.into()),
            (&["timing.half_interval"], timing.half_interval.into()),
            (&["timing.sfu_latency"], timing.sfu_latency.into()),
            (&["timing.sfu_interval"], timing.sfu_interval.into()),
            (
                &["timing.conversion_latency"],
                timing.conversion_latency.into(),
            ),
            (
                &["timing.conversion_interval"],
                timing.conversion_interval.into(),
            ),
            (&["timing.division_latency"], timing.division_latency.into()),
            (
                &["timing.division_interval"],
                timing.division_interval.into(),
            ),
            (
                &["timing.warp_shuffle_latency"],
                timing.warp_shuffle_latency.into(),
            ),
            (
                &["timing.warp_shuffle_interval"],
                timing.warp_shuffle_interval.into(),
            ),
            (&["timing.control_interval"], timing.control_interval.into()),
            (&["timing.tensor_latency"], timing.tensor_latency.into()),
            (&["timing.tensor_interval"], timing.tensor_interval.into()),
            (
                &["timing.tensor_half_latency"],
                timing.tensor_half_latency.into(),
            ),
            (
                &["timing.tensor_half_interval"],
                timing.tensor_half_interval.into(),
            ),
            (
                &["timing.tensor_f64_latency"],
                timing.tensor_f64_latency.into(),
            ),
            (
                &["timing.tensor_f64_interval"],
                timing.tensor_f64_interval.into(),
            ),
            (&["timing.shared_latency"], timing.shared_latency.into()),
            (
                &["timing.shared_wavefronts_per_cycle"],
                timing.shared_wavefronts_per_cycle.into(),
            ),
            (&["timing.l1_hit_latency"], timing.l1_hit_latency.into()),
            (
                &["timing.constant_miss_latency"],
                timing.constant_miss_latency.into(),
            ),
            (
                &["timing.constant_load_latency"],
                timing.constant_load_latency.into(),
            ),
            (&["timing.l2_hit_latency"], timing.l2_hit_latency.into()),
            (
                &["timing.dram_bytes_per_cycle"],
                timing.dram_bytes_per_cycle.into(),
            ),
            (&["timing.l1_bytes"], timing.l1_bytes.into()),
            (&["timing.l1_ways"], timing.l1_ways.into()),
            (
                &["timing.l1_sectors_per_cycle"],
                timing.l1_sectors_per_cycle.into(),
            ),
            (
                &["timing.store_bytes_per_cycle"],
                timing.store_bytes_per_cycle.into(),
            ),
            (
                &["timing.store_queue_requests"],
                timing.store_queue_requests.into(),
            ),
            (&["timing.atomic_latency"], timing.atomic_latency.into()),
            (&["timing.l2_bytes"], timing.l2_bytes),
            (&["timing.l2_ways"], timing.l2_ways.into()),
            (
                &["timing.l2_read_bytes_per_cycle"],
                timing.l2_read_bytes_per_cycle.into(),
            ),
            (
                &["timing.l2_write_bytes_per_cycle"],
                timing.l2_write_bytes_per_cycle.into(),
            ),
            (&["timing.dram_latency"], timing.dram_latency.into()),
        ];
        for (keys, value) in positive {
            if value == 0 {
                return Err(ConfigError {
                    keys,
                    message: format!("{} must be positive, not 0", keys[0]),
                });
            }
        }
        for (keys, value, unit) in [
            (
                &["timing.atomic_sector_interval"],
                timing.atomic_sector_interval,
                "cycles",
            ),
            (
                &["timing.atomic_sectors_per_cycle"],
                timing.atomic_sectors_per_cycle,
                "sectors per cycle",
            ),
            (
                &["timing.l2_write_lines_per_cycle"],
                timing.l2_write_lines_per_cycle,
                "lines per cycle",
            ),
            (
                &["timing.l2_read_lines_per_cycle"],
                timing.l2_read_lines_per_cycle,
                "lines per cycle",
            ),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(ConfigError {
                    keys,
                    message: format!(
                        "{} must be a positive number of {unit}, not {value}",
                        keys[0]
                    ),
                });
            }
        }
        if sm.max_registers_per_thread > 255 {
            return Err(ConfigError {
                keys: &["sm.max_registers_per_thread"],
                message: format!(
                    "sm.max_registers_per_thread is {}; PTX allows at most 255 registers per thread",
                    sm.max_registers_per_thread
                ),
            });
        }
        if timing.default_registers_per_thread > sm.max_registers_per_thread {
            return Err(ConfigError {
                keys: &["timing.default_registers_per_thread"],
                message: format!(
                    "timing.default_registers_per_thread is {}; an SM allows at most {} (sm.max_registers_per_thread)",
                    timing.default_registers_per_thread, sm.max_registers_per_thread
                ),
            });
        }
        if !u64::from(timing.l1_bytes).is_multiple_of(u64::from(timing.l1_ways) * 128) {
            return Err(ConfigError {
                keys: &["timing.l1_bytes", "timing.l1_ways"],
                message: format!(
                    "timing.l1_bytes ({}) must be a multiple of timing.l1_ways ({}) times the 128-byte line",
                    timing.l1_bytes, timing.l1_ways
                ),
            });
        }
        Ok(())
    }
}

/// A configuration value that makes no sense, with the `section.key`s at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    pub keys: &'static [&'static str],
    pub message: String,
}
