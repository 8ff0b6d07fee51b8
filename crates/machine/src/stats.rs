//! Counters kept per instruction while a kernel runs: warp-level and
//! thread-level executions, shared-memory wavefronts (the bank arbiter's
//! output) and global-memory sectors. Every statistic belongs to one
//! instruction, so reports can attribute it to a source line.

use serde::Serialize;

/// What one instruction did over a whole launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InstrStats {
    /// Warp-level executions (issues), including those whose guard was false in every lane.
    pub executed: u64,
    /// Thread-level executions: lanes active with a true guard.
    pub threads: u64,
    /// Executions that sent a request to shared memory (at least one lane
    /// accessed it; for generic addresses, decided lane by lane).
    pub shared_requests: u64,
    /// Executions that sent a request to global memory.
    pub global_requests: u64,
    /// Shared memory: wavefronts the bank arbiter needed.
    pub wavefronts: u64,
    /// Shared memory: wavefronts the same requests would need without conflicts.
    pub ideal_wavefronts: u64,
    /// Shared memory: the sum over requests of `wavefronts - ideal`, never below zero per request.
    pub bank_conflicts: u64,
    /// Global memory: distinct 32-byte sectors touched, summed over requests.
    pub sectors: u64,
    /// Warp-cycles spent with this instruction next to issue, by reason
    /// (indexed by [`StallReason`]; `selected` counts the issue cycles), as
    /// Nsight Compute's warp-state sampling reports them.
    pub stalls: [u64; StallReason::COUNT],
    /// Cycles the shared-memory pipe spent on this instruction's
    /// wavefronts beyond the ideal ones: what its bank conflicts cost.
    pub conflict_cycles: u64,
}

/// Why a warp did not issue in a cycle, under Nsight Compute's names for
/// the warp states it samples (`smsp__pcsamp_warps_issue_stalled_*`; the
/// "Warp State Statistics" section of the Nsight Compute profiling guide).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum StallReason {
    /// The warp issued this cycle.
    Selected,
    /// The warp could issue, but the scheduler picked another warp.
    NotSelected,
    /// Waiting on a fixed-latency dependency (an arithmetic result).
    Wait,
    /// Waiting on a result of the MIO pipe: shared memory, shuffles,
    /// special functions.
    ShortScoreboard,
    /// Waiting on a result of the L1TEX pipe: global and local memory.
    LongScoreboard,
    /// The execution pipe the instruction needs is busy.
    MathPipeThrottle,
    /// The MIO instruction queue (shared memory, shuffles) is full.
    MioThrottle,
    /// The local/global memory instruction queue is full.
    LgThrottle,
    /// Waiting at a block barrier for the other warps.
    Barrier,
    /// Waiting for a memory fence to complete.
    Membar,
    /// Waiting for a branch target to be computed.
    BranchResolving,
    /// Waiting for a line of the constant cache (kernel parameters,
    /// `.const` data) to arrive.
    ImcMiss,
}

impl StallReason {
    pub const COUNT: usize = 12;

    /// Every reason, in index order.
    pub const ALL: [StallReason; StallReason::COUNT] = [
        StallReason::Selected,
        StallReason::NotSelected,
        StallReason::Wait,
        StallReason::ShortScoreboard,
        StallReason::LongScoreboard,
        StallReason::MathPipeThrottle,
        StallReason::MioThrottle,
        StallReason::LgThrottle,
        StallReason::Barrier,
        StallReason::Membar,
        StallReason::BranchResolving,
        StallReason::ImcMiss,
    ];

    /// Nsight Compute's name for the state.
    pub fn ncu_name(self) -> &'static str {
        match self {
            StallReason::Selected => "selected",
            StallReason::NotSelected => "stall_not_selected",
            StallReason::Wait => "stall_wait",
            StallReason::ShortScoreboard => "stall_short_scoreboard",
            StallReason::LongScoreboard => "stall_long_scoreboard",
            StallReason::MathPipeThrottle => "stall_math_pipe_throttle",
            StallReason::MioThrottle => "stall_mio_throttle",
            StallReason::LgThrottle => "stall_lg_throttle",
            StallReason::Barrier => "stall_barrier",
            StallReason::Membar => "stall_membar",
            StallReason::BranchResolving => "stall_branch_resolving",
            StallReason::ImcMiss => "stall_imc_miss",
        }
    }
}

impl InstrStats {
    pub fn add(&mut self, other: &InstrStats) {
        self.executed += other.executed;
        self.threads += other.threads;
        self.shared_requests += other.shared_requests;
        self.global_requests += other.global_requests;
        self.wavefronts += other.wavefronts;
        self.ideal_wavefronts += other.ideal_wavefronts;
        self.bank_conflicts += other.bank_conflicts;
        self.sectors += other.sectors;
        for (mine, theirs) in self.stalls.iter_mut().zip(&other.stalls) {
            *mine += theirs;
        }
        self.conflict_cycles += other.conflict_cycles;
    }

    /// The counters alone, without the timing model's stalls and conflict
    /// cycles (what the machine counts the same under any timing).
    pub fn counters(&self) -> InstrStats {
        InstrStats {
            stalls: [0; StallReason::COUNT],
            conflict_cycles: 0,
            ..*self
        }
    }

    /// Warp-cycles this instruction was next to issue, issue cycles included.
    pub fn warp_cycles(&self) -> u64 {
        self.stalls.iter().sum()
    }
}

/// The counters of a launch: one entry per instruction of the lowered program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    pub per_instruction: Vec<InstrStats>,
    /// Blocks that ran to the end or stopped on an error.
    pub blocks_run: u64,
}

impl RunStats {
    pub fn new(instructions: usize) -> RunStats {
        RunStats {
            per_instruction: vec![InstrStats::default(); instructions],
            blocks_run: 0,
        }
    }

    pub fn merge(&mut self, other: &RunStats) {
        for (mine, theirs) in self.per_instruction.iter_mut().zip(&other.per_instruction) {
            mine.add(theirs);
        }
        self.blocks_run += other.blocks_run;
    }

    pub fn warp_instructions(&self) -> u64 {
        self.per_instruction
            .iter()
            .map(|stats| stats.executed)
            .sum()
    }

    pub fn thread_instructions(&self) -> u64 {
        self.per_instruction.iter().map(|stats| stats.threads).sum()
    }
}
