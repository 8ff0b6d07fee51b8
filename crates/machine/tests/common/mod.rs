//! The test harness: parses a `.kir` kernel, lowers it, lays out its
//! parameters and buffers, runs it on the machine and reads the results back,
//! so that each test is a kernel, a launch and exact expectations.
#![allow(dead_code)]

use warpsim_machine::error::{BarrierPosition, PathPosition, Waiting, WarpPosition};
use warpsim_machine::memory::buffer_base;
use warpsim_machine::{
    ExecError, FaultKind, GlobalMemory, InstrStats, Launch, LaunchError, MachineConfig, Program,
    RunOptions, RunOutcome,
};

/// One kernel argument, in the order of the kernel's parameters.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A global buffer; the parameter (a `.u64`) gets its base address.
    Buffer(Vec<u8>),
    U8(u8),
    U16(u16),
    U32(u32),
    S32(i32),
    U64(u64),
    F32(f32),
}

impl Arg {
    pub fn u32s(values: &[u32]) -> Arg {
        Arg::Buffer(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    pub fn i32s(values: &[i32]) -> Arg {
        Arg::Buffer(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    pub fn f32s(values: &[f32]) -> Arg {
        Arg::Buffer(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    pub fn u64s(values: &[u64]) -> Arg {
        Arg::Buffer(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    /// `words` zeroed 32-bit words.
    pub fn zeros(words: usize) -> Arg {
        Arg::Buffer(vec![0; words * 4])
    }

    pub fn bytes(bytes: &[u8]) -> Arg {
        Arg::Buffer(bytes.to_vec())
    }
}

/// A launch being put together.
pub struct Launcher {
    source: String,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: u32,
    args: Vec<Arg>,
    config: MachineConfig,
    host_threads: usize,
    keep_going: bool,
    params_override: Option<Vec<u8>>,
    check_initialization: bool,
    check_races: bool,
    registers_per_thread: Option<u32>,
    sample_waves: u32,
}

/// Starts a launch of the only kernel of `source`.
pub fn kernel(source: &str) -> Launcher {
    Launcher {
        source: source.to_string(),
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        args: Vec::new(),
        config: MachineConfig::hopper(),
        host_threads: 1,
        keep_going: false,
        params_override: None,
        check_initialization: false,
        check_races: false,
        registers_per_thread: None,
        sample_waves: 0,
    }
}

/// Runs `source` on `grid` x `block` threads (x only) with `args`.
pub fn run_kernel(source: &str, grid: u32, block: u32, args: &[Arg]) -> Outcome {
    kernel(source)
        .grid([grid, 1, 1])
        .block([block, 1, 1])
        .args(args)
        .run()
}

impl Launcher {
    pub fn grid(mut self, grid: [u32; 3]) -> Self {
        self.grid = grid;
        self
    }

    pub fn block(mut self, block: [u32; 3]) -> Self {
        self.block = block;
        self
    }

    pub fn threads(self, threads: u32) -> Self {
        self.block([threads, 1, 1])
    }

    pub fn dynamic_shared(mut self, bytes: u32) -> Self {
        self.dynamic_shared_bytes = bytes;
        self
    }

    pub fn arg(mut self, arg: Arg) -> Self {
        self.args.push(arg);
        self
    }

    pub fn args(mut self, args: &[Arg]) -> Self {
        self.args.extend_from_slice(args);
        self
    }

    pub fn config(mut self, config: MachineConfig) -> Self {
        self.config = config;
        self
    }

    /// Lowers the per-block instruction limit.
    pub fn limit(mut self, max_warp_instructions_per_block: u64) -> Self {
        self.config.limits.max_warp_instructions_per_block = max_warp_instructions_per_block;
        self
    }

    /// Runs every block even after one faults.
    pub fn keep_going(mut self) -> Self {
        self.keep_going = true;
        self
    }

    pub fn host_threads(mut self, host_threads: usize) -> Self {
        self.host_threads = host_threads;
        self
    }

    /// Runs the initialization checker too (as `warpsim check` does).
    /// Simulate only the first `waves` waves and extrapolate the cycles.
    pub fn sample_waves(mut self, waves: u32) -> Self {
        self.sample_waves = waves;
        self
    }

    /// Registers per thread, which decide how many blocks an SM holds.
    pub fn registers(mut self, registers_per_thread: u32) -> Self {
        self.registers_per_thread = Some(registers_per_thread);
        self
    }

    pub fn check_initialization(mut self) -> Self {
        self.check_initialization = true;
        self
    }

    pub fn check_races(mut self) -> Self {
        self.check_races = true;
        self
    }

    /// Replaces the parameter buffer built from the arguments.
    pub fn raw_params(mut self, params: Vec<u8>) -> Self {
        self.params_override = Some(params);
        self
    }

    /// Runs the launch; panics if the launch is refused.
    pub fn run(self) -> Outcome {
        match self.try_run() {
            Ok(outcome) => outcome,
            Err(error) => panic!("launch refused: {error}"),
        }
    }

    /// Runs the launch, or returns why it was refused.
    pub fn try_run(self) -> Result<Outcome, LaunchError> {
        let module = match warpsim_ir::parse_and_verify("test.kir", &self.source) {
            Ok(module) => module,
            Err(error) => panic!("the test kernel does not parse or verify: {error:?}"),
        };
        assert_eq!(module.kernels.len(), 1, "one kernel per test source");
        let kernel_id = warpsim_ir::KernelId(0);
        let program = Program::lower(&module, kernel_id).expect("the test kernel lowers");
        let mut memory = GlobalMemory::new();
        let mut buffers = Vec::new();
        let mut params = vec![0u8; program.param_bytes as usize];
        assert_eq!(
            program.params.len(),
            self.args.len(),
            "the kernel takes {} parameters",
            program.params.len()
        );
        for (slot, arg) in program.params.iter().zip(&self.args) {
            let offset = slot.offset as usize;
            let size = slot.ty.size_bytes() as usize;
            let bytes: Vec<u8> = match arg {
                Arg::Buffer(contents) => {
                    let index = memory.add_buffer(&slot.name, contents);
                    buffers.push(index);
                    buffer_base(index).to_le_bytes().to_vec()
                }
                Arg::U8(value) => value.to_le_bytes().to_vec(),
                Arg::U16(value) => value.to_le_bytes().to_vec(),
                Arg::U32(value) => value.to_le_bytes().to_vec(),
                Arg::S32(value) => value.to_le_bytes().to_vec(),
                Arg::U64(value) => value.to_le_bytes().to_vec(),
                Arg::F32(value) => value.to_le_bytes().to_vec(),
            };
            assert_eq!(
                bytes.len(),
                size,
                "argument for `.param .{} {}` has the wrong size",
                slot.ty,
                slot.name
            );
            params[offset..offset + size].copy_from_slice(&bytes);
        }
        // The module's `.global` variables follow the arguments' buffers.
        let global_variable_addresses = program
            .global_variables
            .iter()
            .map(|variable| buffer_base(memory.add_buffer(&variable.name, &variable.initial)))
            .collect();
        let launch = Launch {
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.dynamic_shared_bytes,
            params: self.params_override.unwrap_or(params),
            global_variable_addresses,
            registers_per_thread: self.registers_per_thread,
        };
        let options = RunOptions {
            host_threads: self.host_threads,
            check_initialization: self.check_initialization,
            check_races: self.check_races,
            timeline: false,
            sample_waves: self.sample_waves,
        };
        let outcome = warpsim_machine::run_with(
            &program,
            &launch,
            &memory,
            &self.config,
            options,
            &warpsim_machine::RunControl {
                keep_going: self.keep_going,
                ..Default::default()
            },
        )?;
        Ok(Outcome {
            source: self.source,
            program,
            memory,
            buffers,
            outcome,
        })
    }
}

/// What a launch left behind.
pub struct Outcome {
    pub source: String,
    pub program: Program,
    pub memory: GlobalMemory,
    /// Global buffer index of each buffer argument, in argument order.
    pub buffers: Vec<usize>,
    pub outcome: RunOutcome,
}

impl Outcome {
    pub fn error(&self) -> Option<&ExecError> {
        self.outcome.error.as_ref()
    }

    /// Panics with the fault if the kernel faulted.
    pub fn ok(self) -> Self {
        if let Some(error) = &self.outcome.error {
            panic!("the kernel faulted: {error:#?}");
        }
        self
    }

    /// The fault, which the test expects.
    pub fn fault(&self) -> &ExecError {
        self.outcome
            .error
            .as_ref()
            .expect("the kernel was expected to fault")
    }

    /// The bytes of the `n`-th buffer argument.
    pub fn bytes(&self, n: usize) -> Vec<u8> {
        self.memory.contents(self.buffers[n])
    }

    pub fn u32s(&self, n: usize) -> Vec<u32> {
        self.bytes(n)
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    pub fn i32s(&self, n: usize) -> Vec<i32> {
        self.u32s(n).into_iter().map(|v| v as i32).collect()
    }

    pub fn f32s(&self, n: usize) -> Vec<f32> {
        self.u32s(n).into_iter().map(f32::from_bits).collect()
    }

    pub fn u64s(&self, n: usize) -> Vec<u64> {
        self.bytes(n)
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// The code index of the one instruction on the source line containing `marker`.
    pub fn pc(&self, marker: &str) -> u32 {
        pc_of(&self.source, &self.program, marker)
    }

    /// The counters of the instruction on the line containing `marker`
    /// (without the timing model's stalls, which `tests/timing.rs` checks).
    pub fn stats(&self, marker: &str) -> InstrStats {
        self.outcome.stats.per_instruction[self.pc(marker) as usize].counters()
    }

    pub fn executed(&self, marker: &str) -> u64 {
        self.stats(marker).executed
    }

    pub fn threads(&self, marker: &str) -> u64 {
        self.stats(marker).threads
    }
}

/// The code index of the instruction on the one source line that contains `marker`.
pub fn pc_of(source: &str, program: &Program, marker: &str) -> u32 {
    let lines: Vec<u32> = source
        .lines()
        .enumerate()
        .filter(|(_, line)| contains_marker(line, marker))
        .map(|(index, _)| index as u32 + 1)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "marker `{marker}` must be on exactly one line, found {lines:?}"
    );
    let pcs: Vec<u32> = program.locations[..program.code.len() - 1]
        .iter()
        .enumerate()
        .filter(|(_, loc)| loc.line == lines[0])
        .map(|(pc, _)| pc as u32)
        .collect();
    assert_eq!(
        pcs.len(),
        1,
        "line {} (`{marker}`) must hold exactly one instruction",
        lines[0]
    );
    pcs[0]
}

/// Whether `line` holds `marker` as a whole word (`@outer` is not in `@outer_else`).
fn contains_marker(line: &str, marker: &str) -> bool {
    line.match_indices(marker).any(|(at, _)| {
        !line[at + marker.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Counters with only the execution counts set.
pub fn counts(executed: u64, threads: u64) -> InstrStats {
    InstrStats {
        executed,
        threads,
        ..InstrStats::default()
    }
}

/// Counters of a shared-memory instruction whose every execution had a lane active.
pub fn shared(executed: u64, threads: u64, wavefronts: u64, ideal_wavefronts: u64) -> InstrStats {
    InstrStats {
        executed,
        threads,
        shared_requests: executed,
        wavefronts,
        ideal_wavefronts,
        bank_conflicts: wavefronts - ideal_wavefronts,
        ..InstrStats::default()
    }
}

/// Counters of a global-memory instruction.
pub fn global(executed: u64, threads: u64, sectors: u64) -> InstrStats {
    InstrStats {
        executed,
        threads,
        global_requests: executed,
        sectors,
        ..InstrStats::default()
    }
}

/// A warp position of a hang report with one path.
pub fn warp_at(warp: u32, exited: u32, pc: u32, lanes: u32, waiting: Waiting) -> WarpPosition {
    WarpPosition {
        warp,
        exited,
        paths: vec![PathPosition { pc, lanes, waiting }],
    }
}

pub fn barrier_at(id: u32, arrived: u32, expected: u32) -> BarrierPosition {
    BarrierPosition {
        id,
        arrived,
        expected,
    }
}

/// Asserts that `error` is a fault of `kind` at one site.
pub fn assert_site(
    error: &ExecError,
    kind: FaultKind,
    block: [u32; 3],
    pc: u32,
    warp: u32,
    lane: u32,
    thread: [u32; 3],
) {
    assert_eq!(error.kind, kind, "fault kind: {error:#?}");
    assert_eq!(error.block, block, "block: {error:#?}");
    let site = error.site.expect("a fault with a site");
    assert_eq!(
        (site.pc, site.warp, site.lane, site.thread),
        (pc, warp, lane, thread),
        "(pc, warp, lane, thread): {error:#?}"
    );
    assert!(error.warps.is_empty() && error.barriers.is_empty());
}

/// The lanes `0..n` as a mask.
pub fn low_lanes(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// Lanes whose index satisfies `f`.
pub fn lanes_where(f: impl Fn(u32) -> bool) -> u32 {
    (0..32).filter(|&l| f(l)).fold(0, |m, l| m | 1 << l)
}

/// The place of an access at `offset` of buffer `buffer`, which has `len` bytes.
pub fn place(buffer: &str, offset: u64, len: u64) -> warpsim_machine::error::GlobalPlace {
    warpsim_machine::error::GlobalPlace::Offset {
        buffer: buffer.to_string(),
        offset,
        len,
    }
}
