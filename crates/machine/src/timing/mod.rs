//! The timing model of a Hopper GPU: occupancy (how many blocks an SM
//! holds), and the numbers of `[sm]` and `[timing]` in the machine file.
//!
//! The model follows the public descriptions of NVIDIA's sub-core pipeline
//! (Accel-Sim: Khairy et al., ISCA 2020; Huerta et al., "Dissecting and
//! modeling the architecture of modern GPU cores", MICRO 2023) and the
//! figures measured on an H200 and an H100 (`reference/timing.md`,
//! `programs/timing`).

pub(crate) mod cache;
pub(crate) mod gpu;
pub mod occupancy;
pub(crate) mod operands;
mod shards;
pub(crate) mod sm;

pub use occupancy::{occupancy, BlockResources, DoesNotFit, Occupancy, OccupancyLimit};

use serde::Serialize;

use crate::stats::StallReason;

/// What the timing model measured of a launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchTiming {
    /// Cycles from the first block's launch to the last block's end: the
    /// kernel's duration (Nsight Compute's `gpc__cycles_elapsed.max` less
    /// the launch overhead the driver adds before the first block).
    pub cycles: u64,
    /// The busiest SM's active cycles (cycles with a block resident;
    /// `sm__cycles_active.max`).
    pub busiest_sm_cycles: u64,
    /// The SM clock the times are computed at.
    pub clock_mhz: u32,
    pub sm_count: u32,
    /// SMs that ran at least one block.
    pub sms_used: u32,
    pub sub_partitions: u32,
    /// Warp instructions issued (`smsp__inst_executed.sum`).
    pub warp_instructions: u64,
    /// Active cycles summed over SMs (`sm__cycles_active.sum`).
    pub sm_active_cycles: u64,
    /// Resident warps summed over SMs and active cycles
    /// (`sm__warps_active.sum`).
    pub resident_warp_cycles: u64,
    /// The SM's warp slots (`[sm] max_warps`).
    pub max_warps_per_sm: u32,
    /// The theoretical occupancy and what limits it.
    pub occupancy: Occupancy,
    pub blocks: u64,
    /// Blocks over the blocks the GPU holds at once.
    pub waves: f64,
    /// Global and local load sectors served by each level.
    pub l1_hit_sectors: u64,
    pub l2_hit_sectors: u64,
    pub dram_sectors: u64,
    /// Bytes moved between L2 and DRAM, reads and writes.
    pub dram_bytes: u64,
    /// Set when only the first waves of the launch ran
    /// (`RunOptions::sample_waves`): `cycles` is then extrapolated.
    pub sampled: Option<Sampled>,
}

/// What a sampled launch simulated: the first `waves` waves in full, the
/// rest extrapolated from them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sampled {
    pub waves: u32,
    /// Blocks simulated, of the launch's `blocks`.
    pub blocks_simulated: u64,
    pub blocks: u64,
    /// The cycles of the blocks simulated; [`LaunchTiming::cycles`] scales
    /// them by the blocks not simulated.
    pub simulated_cycles: u64,
}

impl LaunchTiming {
    /// The kernel's duration in microseconds at the configured clock.
    pub fn time_us(&self) -> f64 {
        self.cycles as f64 / f64::from(self.clock_mhz.max(1))
    }

    /// Warp instructions per active SM cycle (`sm__inst_executed.avg.per_cycle_active`).
    pub fn ipc(&self) -> f64 {
        ratio(self.warp_instructions, self.sm_active_cycles)
    }

    /// Issued over the issue slots of the active cycles (one per
    /// sub-partition per cycle).
    pub fn issue_slot_utilisation(&self) -> f64 {
        ratio(
            self.warp_instructions,
            self.sm_active_cycles * u64::from(self.sub_partitions),
        )
    }

    /// Resident warps per active cycle over the SM's warp slots
    /// (`sm__warps_active.avg.pct_of_peak_sustained_active`).
    pub fn achieved_occupancy(&self) -> f64 {
        ratio(
            self.resident_warp_cycles,
            self.sm_active_cycles * u64::from(self.max_warps_per_sm),
        )
    }
}

fn ratio(numerator: u64, denominator: u64) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

/// What each SM held over time, for `--timeline` (recorded only when
/// asked for: `RunOptions::timeline`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    /// Every block's stay on its SM, in the order blocks started.
    pub blocks: Vec<BlockSpan>,
    /// Spans of warps' states worth seeing (barrier waits, long memory
    /// waits), in the order they ended.
    pub warps: Vec<WarpSpan>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockSpan {
    pub sm: u32,
    pub block: [u32; 3],
    pub linear: u64,
    /// Cycle the block was launched on the SM, and the cycle its last warp
    /// finished.
    pub start: u64,
    pub end: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarpSpan {
    pub sm: u32,
    pub sub_partition: u32,
    /// The block's linear index and the warp's index in it.
    pub linear: u64,
    pub warp: u32,
    pub state: StallReason,
    pub start: u64,
    pub end: u64,
}
