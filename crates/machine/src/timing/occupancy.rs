//! Occupancy: how many blocks of a launch one SM holds at once, and which
//! resource limits it, computed as CUDA's occupancy calculator does
//! (`cuda_occupancy.h`, `cudaOccupancyMaxActiveBlocksPerMultiprocessor`)
//! from the SM's limits in the machine file.
//!
//! - Warps: a block takes `ceil(threads / 32)` warp slots.
//! - Registers: a warp's registers are allocated in units of
//!   `register_allocation_unit`, and each of the SM's sub-partitions has its
//!   own quarter of the register file, so a sub-partition holds
//!   `floor(registers / sub_partitions / registers_per_warp)` warps.
//! - Shared memory: a block takes its static and dynamic shared memory plus
//!   the runtime's reserved bytes, rounded up to the allocation unit.

use serde::Serialize;

use crate::config::SmConfig;

/// The resource that stops an SM from holding one more block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OccupancyLimit {
    Warps,
    Blocks,
    Registers,
    SharedMemory,
}

impl OccupancyLimit {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            OccupancyLimit::Warps => "threads",
            OccupancyLimit::Blocks => "blocks",
            OccupancyLimit::Registers => "registers",
            OccupancyLimit::SharedMemory => "shared memory",
        }
    }
}

/// What a block of a launch needs from an SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockResources {
    pub threads: u32,
    pub registers_per_thread: u32,
    /// Static plus dynamic shared memory, without the runtime's reserve.
    pub shared_bytes: u32,
}

/// How many blocks fit on one SM, and the first resource (in the order of
/// [`OccupancyLimit`]) that allows no more.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Occupancy {
    pub blocks_per_sm: u32,
    pub limited_by: OccupancyLimit,
    pub warps_per_block: u32,
    /// Resident warps per SM at full occupancy over the SM's warp slots.
    pub theoretical: f64,
}

/// Why not even one block of a launch fits on an SM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoesNotFit {
    pub limited_by: OccupancyLimit,
    pub message: String,
}

/// The occupancy of blocks needing `block` on an SM described by `sm`.
pub fn occupancy(sm: &SmConfig, block: BlockResources) -> Result<Occupancy, DoesNotFit> {
    let warps_per_block = block.threads.div_ceil(32).max(1);
    let by_warps = sm.max_warps / warps_per_block;
    let by_blocks = sm.max_blocks;
    let registers_per_warp =
        (block.registers_per_thread.max(1) * 32).next_multiple_of(sm.register_allocation_unit);
    let warps_per_sub_partition = sm.registers / sm.sub_partitions / registers_per_warp;
    let by_registers = warps_per_sub_partition * sm.sub_partitions / warps_per_block;
    let shared_per_block = if block.shared_bytes == 0 {
        0
    } else {
        (block.shared_bytes + sm.reserved_shared_bytes_per_block)
            .next_multiple_of(sm.shared_allocation_unit)
    };
    let by_shared = sm
        .shared_bytes
        .checked_div(shared_per_block)
        .unwrap_or(u32::MAX);
    let limits = [
        (by_warps, OccupancyLimit::Warps),
        (by_blocks, OccupancyLimit::Blocks),
        (by_registers, OccupancyLimit::Registers),
        (by_shared, OccupancyLimit::SharedMemory),
    ];
    let &(blocks_per_sm, limited_by) = limits
        .iter()
        .min_by_key(|(blocks, _)| *blocks)
        .expect("four limits");
    if blocks_per_sm == 0 {
        let message = match limited_by {
            OccupancyLimit::Warps => format!(
                "a block of {} threads needs {warps_per_block} warps; an SM holds {}",
                block.threads, sm.max_warps
            ),
            OccupancyLimit::Blocks => "the SM holds no blocks (sm.max_blocks is 0)".to_string(),
            OccupancyLimit::Registers => format!(
                "a block of {} threads at {} registers per thread needs {} registers; an SM sub-partition has {} for its warps",
                block.threads,
                block.registers_per_thread,
                registers_per_warp * warps_per_block,
                sm.registers / sm.sub_partitions
            ),
            OccupancyLimit::SharedMemory => format!(
                "a block needs {shared_per_block} bytes of shared memory with the runtime's reserve; an SM has {}",
                sm.shared_bytes
            ),
        };
        return Err(DoesNotFit {
            limited_by,
            message,
        });
    }
    Ok(Occupancy {
        blocks_per_sm,
        limited_by,
        warps_per_block,
        theoretical: f64::from(blocks_per_sm * warps_per_block) / f64::from(sm.max_warps),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(threads: u32, registers_per_thread: u32, shared_bytes: u32) -> (u32, OccupancyLimit) {
        let result = occupancy(
            &SmConfig::default(),
            BlockResources {
                threads,
                registers_per_thread,
                shared_bytes,
            },
        )
        .unwrap();
        (result.blocks_per_sm, result.limited_by)
    }

    /// Each limit in turn, from the calculator's rules.
    #[test]
    fn each_resource_limits_in_turn() {
        assert_eq!(blocks(1024, 32, 0), (2, OccupancyLimit::Warps));
        assert_eq!(blocks(32, 16, 0), (32, OccupancyLimit::Blocks));
        // 64 registers: 2048 per warp, 8 warps per sub-partition, 32 per SM.
        assert_eq!(blocks(256, 64, 0), (4, OccupancyLimit::Registers));
        // 48 KiB + 1 KiB reserve: 4 blocks in 228 KiB.
        assert_eq!(
            blocks(128, 32, 48 * 1024),
            (4, OccupancyLimit::SharedMemory)
        );
    }

    #[test]
    fn a_block_that_cannot_fit_says_why() {
        let error = occupancy(
            &SmConfig::default(),
            BlockResources {
                threads: 1024,
                registers_per_thread: 255,
                shared_bytes: 0,
            },
        )
        .unwrap_err();
        assert_eq!(error.limited_by, OccupancyLimit::Registers);
    }
}
