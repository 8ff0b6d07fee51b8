//! The warpsim machine: runs a lowered kernel over a grid of thread blocks,
//! the way an NVIDIA GPU of compute capability 7.0 to 9.0 would, and counts
//! what every instruction did.
//!
//! Machine state, scheduling and diagnostics live in separate modules
//! (as in Miri, the Rust interpreter): [`program`] is the dense
//! executable form, [`warp`] the state of a warp and its divergent paths,
//! [`block`] the execution of a block (its warps' paths, barriers and
//! memories), [`timing`] which warp issues when, [`memory`] the global buffers and address windows, [`stats`]
//! the counters, and [`error`] the diagnostics. The machine knows nothing of
//! PTX or files: it takes IR, a launch and buffers, and returns counters and
//! faults.
//!
//! Launches run on the timing model ([`timing`]): blocks go to SMs as
//! room frees up, and every SM issues its warps' instructions cycle by
//! cycle, so time decides the interleaving. Determinism: SMs advance in
//! time windows in which each depends only on the state at the window's
//! start, the windows' effects are applied in SM order, and when several
//! blocks fault, the fault of the lowest block index is the one reported.
//! Kernels whose blocks can communicate (global atomics, strong global
//! accesses) run their SMs in SM order on one host thread within a window,
//! so their results are the same on every host too.

mod access;
pub mod arith;
mod async_copy;
pub mod block;
mod checker;
mod clocks;
pub mod config;
pub mod error;
pub mod findings;
mod global_races;
mod hashing;
mod host_pool;
mod initcheck;
pub mod memory;
pub mod printf;
pub mod program;
mod racecheck;
pub mod random;
mod scalar_ops;
mod semantics;
pub mod stats;
mod store_buffer;
pub mod tensor;
pub mod timing;
pub mod warp;
mod warp_sync;
pub mod weak_memory;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub use config::{BarrierSemantics, ConfigError, MachineConfig, MemoryModel};
pub use error::{ExecError, FaultKind, LaunchCause, LaunchError};
use findings::FindingLog;
pub use findings::{Finding, FindingKind, Severity};
pub use host_pool::host_pool;
pub use memory::GlobalMemory;
pub use program::Program;
pub use stats::{InstrStats, RunStats};

/// Local memory a thread may declare: CUDA's limit of 512 KiB per thread
/// (CUDA C++ Programming Guide, "Features and Technical Specifications").
pub const MAX_LOCAL_BYTES_PER_THREAD: u32 = 512 * 1024;

/// Constant memory a kernel's `.const` variables may take: 64 KiB on every
/// compute capability (CUDA C++ Programming Guide, "Features and Technical
/// Specifications").
pub const MAX_CONST_BYTES: u64 = 64 * 1024;

/// The most host memory one simulated block's registers, local and shared
/// memory may take; every host thread holds one block at a time.
pub const MAX_BLOCK_STATE_BYTES: u64 = 256 << 20;

/// The shape and parameters of one launch.
#[derive(Clone, Debug)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory per block (the third `<<< >>>` argument).
    pub dynamic_shared_bytes: u32,
    /// The parameter buffer, laid out as [`Program::params`] says.
    pub params: Vec<u8>,
    /// The global address of each of [`Program::global_variables`].
    pub global_variable_addresses: Vec<u64>,
    /// Registers per thread, which decide how many blocks an SM holds; the
    /// machine's `timing.default_registers_per_thread` when not known.
    pub registers_per_thread: Option<u32>,
}

/// What a launch produced. `error` is the first fault by block index; the
/// counters include every block, including the faulting ones up to their fault.
#[derive(Debug)]
pub struct RunOutcome {
    pub stats: RunStats,
    pub error: Option<ExecError>,
    /// How many blocks faulted.
    pub failed_blocks: u64,
    /// The launch was stopped from outside (`RunControl::stop`) before it
    /// ran every block.
    pub interrupted: bool,
    /// The checker's findings (barriers always, uninitialized reads when
    /// [`RunOptions::check_initialization`]), by first block; a finding seen
    /// in several blocks is listed once.
    pub findings: Vec<Finding>,
    /// What the kernel's `printf` calls printed: block by block in block
    /// order, and in each block in the order its threads printed.
    pub printed: Vec<u8>,
    /// Bytes of `printf` output dropped because they did not fit
    /// `limits.printf_buffer_bytes`.
    pub printed_dropped: u64,
    /// Cycles, occupancy and the memory system's figures.
    pub timing: Option<timing::LaunchTiming>,
    /// Each SM's blocks over time, when [`RunOptions::timeline`] asked.
    pub timeline: Option<timing::Timeline>,
}

/// Checks a launch against the program and the machine before anything runs.
pub fn validate_launch(
    program: &Program,
    launch: &Launch,
    config: &MachineConfig,
) -> Result<(), LaunchError> {
    config
        .validate()
        .map_err(|error| LaunchError::new(LaunchCause::Config(error.keys), error.message))?;
    let device = &config.device;
    check_dimensions(
        "block",
        &launch.block,
        &device.max_block_dims,
        LaunchCause::BlockDimension,
    )?;
    check_dimensions(
        "grid",
        &launch.grid,
        &device.max_grid_dims,
        LaunchCause::GridDimension,
    )?;
    let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    if threads > u64::from(device.max_threads_per_block) {
        return Err(LaunchError::new(
            LaunchCause::ThreadsPerBlock,
            format!(
                "a block of {}x{}x{} has {threads} threads; this machine allows at most {}",
                launch.block[0], launch.block[1], launch.block[2], device.max_threads_per_block
            ),
        ));
    }
    let shared = &config.shared_memory;
    if program.static_shared_bytes > shared.static_bytes_per_block {
        return Err(LaunchError::new(
            LaunchCause::StaticSharedMemory,
            format!(
                "the kernel declares {} bytes of static shared memory; a block may have at most {}",
                program.static_shared_bytes, shared.static_bytes_per_block
            ),
        ));
    }
    let total_shared =
        u64::from(program.dynamic_shared_offset) + u64::from(launch.dynamic_shared_bytes);
    if launch.dynamic_shared_bytes > 0 && total_shared > u64::from(shared.max_bytes_per_block) {
        return Err(LaunchError::new(LaunchCause::DynamicSharedMemory, format!(
            "{} bytes of static and {} bytes of dynamic shared memory exceed the {} bytes a block may use",
            program.static_shared_bytes, launch.dynamic_shared_bytes, shared.max_bytes_per_block
        )));
    }
    if program.local_bytes > MAX_LOCAL_BYTES_PER_THREAD {
        return Err(LaunchError::new(LaunchCause::LocalMemory, format!(
            "the kernel declares {} bytes of local memory per thread; CUDA allows at most {MAX_LOCAL_BYTES_PER_THREAD}",
            program.local_bytes
        )));
    }
    let warps = threads.div_ceil(32);
    // Four bytes a lane per register, eight for a wide one, and nothing
    // per lane for a warp-uniform one (`warp::RegisterFile`).
    let block_state = u64::from(program.lane_value_regs + program.wide_value_regs) * 4 * 32 * warps
        + u64::from(program.local_bytes) * threads
        + total_shared;
    if block_state > MAX_BLOCK_STATE_BYTES {
        return Err(LaunchError::new(LaunchCause::BlockState, format!(
            "a block of {threads} threads needs {} MiB to simulate ({} registers per thread, {} bytes of local memory per thread); the limit is {} MiB",
            block_state >> 20,
            program.lane_value_regs,
            program.local_bytes,
            MAX_BLOCK_STATE_BYTES >> 20
        )));
    }
    if let Err(refusal) = timing::occupancy(&config.sm, block_resources(program, launch, config)) {
        return Err(LaunchError::new(
            LaunchCause::Residency(refusal.limited_by),
            format!("no block of this launch fits on an SM: {}", refusal.message),
        ));
    }
    if launch.global_variable_addresses.len() != program.global_variables.len() {
        return Err(LaunchError::new(
            LaunchCause::Host,
            format!(
                "the launch places {} global variables; the kernel has {}",
                launch.global_variable_addresses.len(),
                program.global_variables.len()
            ),
        ));
    }
    if launch.params.len() != program.param_bytes as usize {
        return Err(LaunchError::new(
            LaunchCause::Parameters,
            format!(
                "the parameter buffer has {} bytes; the kernel's parameters take {}",
                launch.params.len(),
                program.param_bytes
            ),
        ));
    }
    Ok(())
}

/// Checks each of the three `what` dimensions (block or grid) against its limit.
fn check_dimensions(
    what: &str,
    dims: &[u32; 3],
    limits: &[u32; 3],
    cause: fn(usize) -> LaunchCause,
) -> Result<(), LaunchError> {
    for (index, (axis, (&dim, &limit))) in ["x", "y", "z"]
        .iter()
        .zip(dims.iter().zip(limits))
        .enumerate()
    {
        if dim == 0 || dim > limit {
            return Err(LaunchError::new(
                cause(index),
                format!("{what} dimension {axis} is {dim}; it must be between 1 and {limit}"),
            ));
        }
    }
    Ok(())
}

/// The fault of the lower block index of two (the one a launch reports).
fn lowest_fault(
    a: Option<(u64, ExecError)>,
    b: Option<(u64, ExecError)>,
) -> Option<(u64, ExecError)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// How a launch is watched and stopped from outside while it runs.
#[derive(Debug, Default)]
pub struct RunControl {
    /// Run every block even after one faults (as a debugger would), rather
    /// than end the kernel at the first fault as a GPU does.
    pub keep_going: bool,
    /// Blocks finished so far, for a progress display.
    pub blocks_done: AtomicU64,
    /// Simulated cycles and warp instructions issued so far (updated at
    /// the end of each time window), for a progress display.
    pub cycles: AtomicU64,
    pub warp_instructions: AtomicU64,
    /// Set from outside (Ctrl-C) to end the launch: blocks not started are
    /// not run, and running ones stop at the end of the time window.
    pub stop: AtomicBool,
}

/// How a launch runs, beyond what the program, the launch and the machine say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Host threads to run blocks on (0: every core).
    pub host_threads: usize,
    /// Report reads of shared and local memory that nothing wrote
    /// (`uninitialized-read` findings). It keeps a bit per byte of each
    /// block's shared and local memory and looks at every access, so plain
    /// runs leave it off; the barrier checker runs either way.
    pub check_initialization: bool,
    /// Report shared-memory races within a block (`shared-race`
    /// findings): a shadow entry per word of each block's shared memory,
    /// looked at by every shared access, so plain runs leave it off.
    pub check_races: bool,
    /// Record what every SM held over time ([`RunOutcome::timeline`]).
    pub timeline: bool,
    /// Simulate only this many waves of blocks (0: all) and extrapolate the
    /// launch's cycles from them (`LaunchTiming::sampled`); the counters
    /// and outputs are those of the blocks simulated.
    pub sample_waves: u32,
}

/// Runs every block of the launch on `host_threads` host threads (0: all
/// cores), without the initialization checker, ending at the first fault as
/// a GPU does (see [`run_with`]).
pub fn run(
    program: &Program,
    launch: &Launch,
    global: &GlobalMemory,
    config: &MachineConfig,
    host_threads: usize,
) -> Result<RunOutcome, LaunchError> {
    let options = RunOptions {
        host_threads,
        check_initialization: false,
        check_races: false,
        timeline: false,
        sample_waves: 0,
    };
    run_with(
        program,
        launch,
        global,
        config,
        options,
        &RunControl::default(),
    )
}

/// Runs every block of the launch as `options` say, watched and stopped
/// through `control`, on the timing model's GPU. After the time window in
/// which a block faulted no more blocks run (unless `control.keep_going`),
/// so the counters cover what every block did up to the end of that
/// window, the same on every host.
///
/// With `memory.model = "explore"` the global memory is weakly ordered
/// (`weak_memory.rs`), its choices drawn from `memory.seed`.
pub fn run_with(
    program: &Program,
    launch: &Launch,
    global: &GlobalMemory,
    config: &MachineConfig,
    options: RunOptions,
    control: &RunControl,
) -> Result<RunOutcome, LaunchError> {
    match config.memory.model {
        MemoryModel::Machine => run_on_gpu(program, launch, global, config, options, control, None),
        MemoryModel::Explore => {
            let choices = weak_memory::ChoiceSource::seeded(config.memory.seed);
            run_exploring(program, launch, global, config, options, control, choices)
                .map(|(outcome, _)| outcome)
        }
    }
}

/// [`run_with`] in the explore model, its choices taken from `choices`;
/// returns them with the outcome, for the exhaustive mode to go on from.
pub fn run_exploring(
    program: &Program,
    launch: &Launch,
    global: &GlobalMemory,
    config: &MachineConfig,
    options: RunOptions,
    control: &RunControl,
    choices: weak_memory::ChoiceSource,
) -> Result<(RunOutcome, weak_memory::ChoiceSource), LaunchError> {
    let weak = weak_memory::WeakMemory::new(choices);
    let outcome = run_on_gpu(
        program,
        launch,
        global,
        config,
        options,
        control,
        Some(&weak),
    )?;
    Ok((outcome, weak.into_choices()))
}

fn run_on_gpu(
    program: &Program,
    launch: &Launch,
    global: &GlobalMemory,
    config: &MachineConfig,
    options: RunOptions,
    control: &RunControl,
    weak_memory: Option<&weak_memory::WeakMemory>,
) -> Result<RunOutcome, LaunchError> {
    let host_threads = options.host_threads;
    validate_launch(program, launch, config)?;
    let env = block::LaunchEnv {
        stop: &control.stop,
        program,
        config,
        global,
        params: &launch.params,
        grid: launch.grid,
        block_dim: launch.block,
        dynamic_shared_bytes: launch.dynamic_shared_bytes,
        global_variable_addresses: &launch.global_variable_addresses,
        check_initialization: options.check_initialization,
        check_races: options.check_races,
        weak_memory,
        global_races: options
            .check_races
            .then(|| std::sync::Mutex::new(global_races::GlobalRaces::default())),
    };
    let [gx, gy, gz] = launch.grid;
    let block_count = u64::from(gx) * u64::from(gy) * u64::from(gz);
    let block_at = |linear: u64| -> [u32; 3] {
        let x = linear % u64::from(gx);
        let y = (linear / u64::from(gx)) % u64::from(gy);
        let z = linear / (u64::from(gx) * u64::from(gy));
        [x as u32, y as u32, z as u32]
    };
    tracing::debug!(
        kernel = %program.kernel_name,
        blocks = block_count,
        threads_per_block = launch.block.iter().product::<u32>(),
        "launch"
    );
    let occupancy = timing::occupancy(&config.sm, block_resources(program, launch, config))
        .map_err(|refusal| {
            LaunchError::new(
                LaunchCause::Residency(refusal.limited_by),
                format!("no block of this launch fits on an SM: {}", refusal.message),
            )
        })?;
    let pool = host_pool(host_threads).map_err(|error| {
        LaunchError::new(
            LaunchCause::Host,
            format!("cannot start host threads: {error}"),
        )
    })?;
    let gpu = timing::gpu::run_gpu(
        &env,
        control,
        &pool,
        occupancy,
        block_count,
        block_at,
        options,
    );
    let mut outcome = finish_launch(
        config,
        control,
        gpu.stats,
        gpu.first_fault,
        gpu.failed_blocks,
        gpu.findings,
        gpu.printed,
    );
    outcome.timing = Some(gpu.timing);
    outcome.timeline = gpu.timeline;
    Ok(outcome)
}

/// What a block of `launch` needs from an SM. Without dynamic shared memory
/// a block has its static variables; with it, the dynamic part starts at its
/// aligned offset after them.
fn block_resources(
    program: &Program,
    launch: &Launch,
    config: &MachineConfig,
) -> timing::BlockResources {
    let shared_bytes = if launch.dynamic_shared_bytes == 0 {
        program.static_shared_bytes
    } else {
        program
            .dynamic_shared_offset
            .saturating_add(launch.dynamic_shared_bytes)
    };
    timing::BlockResources {
        threads: launch
            .block
            .iter()
            .fold(1u32, |product, &dim| product.saturating_mul(dim)),
        registers_per_thread: launch
            .registers_per_thread
            .unwrap_or(config.timing.default_registers_per_thread),
        shared_bytes,
    }
}

/// The outcome of a launch from what its blocks left.
fn finish_launch(
    config: &MachineConfig,
    control: &RunControl,
    stats: RunStats,
    error: Option<(u64, ExecError)>,
    failed_blocks: u64,
    findings: FindingLog,
    printed: PrintLog,
) -> RunOutcome {
    let (printed, printed_dropped) = printed.into_output(config.limits.printf_buffer_bytes);
    tracing::debug!(
        warp_instructions = stats.warp_instructions(),
        failed_blocks,
        "launch finished"
    );
    RunOutcome {
        interrupted: control.stop.load(Ordering::Relaxed),
        stats,
        error: error.map(|(_, error)| error),
        failed_blocks,
        findings: findings.into_sorted(),
        printed,
        printed_dropped,
        timing: None,
        timeline: None,
    }
}

#[derive(Default)]
pub(crate) struct PrintLog {
    blocks: Vec<(u64, Vec<u8>)>,
    dropped: u64,
}

impl PrintLog {
    fn add_block(&mut self, linear: u64, (text, dropped): (Vec<u8>, u64)) {
        if !text.is_empty() {
            self.blocks.push((linear, text));
        }
        self.dropped += dropped;
    }

    /// The output in block order, cut to `limit` bytes at a block's
    /// boundary, and how many bytes were dropped.
    fn into_output(mut self, limit: u64) -> (Vec<u8>, u64) {
        self.blocks.sort_unstable_by_key(|&(linear, _)| linear);
        let mut output = Vec::new();
        let mut dropped = self.dropped;
        for (_, text) in self.blocks {
            if (output.len() + text.len()) as u64 <= limit {
                output.extend_from_slice(&text);
            } else {
                dropped += text.len() as u64;
            }
        }
        (output, dropped)
    }
}
