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
