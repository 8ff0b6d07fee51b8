//! The timing model of a Hopper GPU: occupancy (how many blocks an SM
//! holds), and the numbers of `[sm]` and `[timing]` in the machine file.
//!
//! The model follows the public descriptions of NVIDIA's sub-core pipeline
//! (Accel-Sim: Khairy et al., ISCA 2020; Huerta et al., "Dissecting and
//! modeling the architecture of modern GPU cores", MICRO 2023) and the
//! figures measured on an H200 and an H100 (`reference/timing.md`,
//! `programs/timing`).

pub mod occupancy;

pub use occupancy::{occupancy, BlockResources, DoesNotFit, Occupancy, OccupancyLimit};
