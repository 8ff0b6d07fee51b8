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
}

fn default_fresh_fill() -> u8 {
    0xff
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            fresh_fill: default_fresh_fill(),
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
}

fn default_true() -> bool {
    true
}

impl Default for CompilerConfig {
    fn default() -> Self {
        CompilerConfig {
            merge_accesses: true,
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
}

/// A configuration value that makes no sense, with the `section.key`s at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    pub keys: &'static [&'static str],
    pub message: String,
}
