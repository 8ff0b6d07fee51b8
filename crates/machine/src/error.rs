//! Errors of a launch: bad launch shapes and arguments (the input was wrong),
//! and faults of a running kernel (the kernel was wrong), each with the block,
//! warp, thread and instruction where it happened, and for hangs every warp's
//! position and every barrier's counts.

use warpsim_ir::StateSpace;

pub use crate::memory::GlobalPlace;

/// The launch cannot start: shape, arguments or resources are invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LaunchError {
    /// What is at fault, so a front end can point at the setting that asks for it.
    pub cause: LaunchCause,
    pub message: String,
}

/// The setting a [`LaunchError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchCause {
    /// A machine-configuration value, by its `section.key`s.
    Config(&'static [&'static str]),
    /// Grid dimension x, y or z (0, 1, 2).
    GridDimension(usize),
    /// Block dimension x, y or z (0, 1, 2).
    BlockDimension(usize),
    ThreadsPerBlock,
    StaticSharedMemory,
    DynamicSharedMemory,
    LocalMemory,
    /// The registers and memory one block needs on the host.
    BlockState,
    /// Not even one block fits on an SM: the resource that does not suffice.
    Residency(crate::timing::OccupancyLimit),
    Parameters,
    /// The host, not the input (e.g. threads could not start).
    Host,
}

impl LaunchError {
    pub fn new(cause: LaunchCause, message: impl Into<String>) -> LaunchError {
        LaunchError {
            cause,
            message: message.into(),
        }
    }
}

/// A kernel fault: the block stops, other blocks go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError {
    pub kind: FaultKind,
    /// The block's index (x, y, z).
    pub block: [u32; 3],
    /// The instruction and thread that faulted, when one did.
    pub site: Option<FaultSite>,
    /// Where every unfinished warp of the block stood (deadlocks, limits).
    pub warps: Vec<WarpPosition>,
    /// Barriers with arrivals pending (deadlocks, limits).
    pub barriers: Vec<BarrierPosition>,
    /// For a livelock: the loops the running paths spin in.
    pub spinning: Vec<SpinLoop>,
}

/// A path that spins in a loop without progress (livelocks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpinLoop {
    pub warp: u32,
    /// Where the path stands.
    pub pc: u32,
    /// The loop's first and last instruction (the target and the backward branch).
    pub loop_start: u32,
    pub loop_end: u32,
    /// The address its loads read, described (`buffer `flag`, offset 0`).
    pub polled: Option<String>,
    /// Whether that address is in global memory.
    pub polls_global: bool,
    /// The loop's `mbarrier.try_wait`/`test_wait` and the mbarrier it
    /// waits on, when the loop has one.
    pub mbarrier: Option<MbarrierWait>,
}

/// A spin loop's wait on an mbarrier (PTX ISA 9.7.13.15.16,
/// `mbarrier.test_wait`/`try_wait`): where it waits, what it waits for and
/// where the mbarrier stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbarrierWait {
    /// The wait instruction.
    pub pc: u32,
    /// The mbarrier's shared-memory offset.
    pub offset: u32,
    /// What the first waiting lane waits for: the end of the phase with
    /// this parity (`.parity`), or of this phase (a state from `arrive`).
    pub awaited: AwaitedPhase,
    /// The mbarrier's current phase, the arrivals still pending in it and
    /// expected in each, and the transaction bytes pending; `None` when no
    /// mbarrier is initialized there.
    pub state: Option<(u32, u32, u32, i64)>,
}

/// The phase a wait on an mbarrier waits to see completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AwaitedPhase {
    Parity(u32),
    Phase(u32),
}

impl MbarrierWait {
    /// `the mbarrier at shared offset 0x8 to complete its phase of parity
    /// 0 (now in phase 0: 1 of 2 arrivals pending, 0 transaction bytes)`.
    pub fn describe(&self) -> String {
        let awaited = match self.awaited {
            AwaitedPhase::Parity(parity) => format!("its phase of parity {parity}"),
            AwaitedPhase::Phase(phase) => format!("phase {phase}"),
        };
        let state = match self.state {
            Some((phase, pending, expected, tx_count)) => format!(
                "now in phase {phase}: {pending} of {expected} arrivals pending, {tx_count} transaction bytes pending"
            ),
            None => "not initialized".to_string(),
        };
        format!(
            "the mbarrier at shared offset {:#x} to complete {awaited} ({state})",
            self.offset
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultSite {
    /// Index into the program's code (and the IR's instructions).
    pub pc: u32,
    pub warp: u32,
    pub lane: u32,
    /// The thread's index in the block (x, y, z).
    pub thread: [u32; 3],
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    OutOfBounds {
        space: StateSpace,
        address: u64,
        size: u32,
        store: bool,
        /// For global memory: where the address lies among the buffers.
        place: Option<GlobalPlace>,
    },
    Misaligned {
        space: StateSpace,
        address: u64,
        size: u32,
        /// For global memory: where the address lies among the buffers.
        place: Option<GlobalPlace>,
    },
    /// A store to a read-only space, an unsupported space, and the like.
    InvalidAccess {
        message: String,
    },
    InvalidBarrier {
        message: String,
    },
    /// No warp of the block can ever move again.
    Deadlock,
    /// Threads ran `window` warp instructions without observable progress,
    /// and the block came back to a state it had been in: it loops for ever.
    /// `across_blocks`: the loop polls global memory that no thread of the
    /// block changes, so only another block (of a launch with more than
    /// one) could end it. `not_resident`: every resident block spins, and
    /// this block (the next in line) and those after it cannot become
    /// resident until one of them exits: a deadlock across blocks.
    Livelock {
        window: u64,
        across_blocks: bool,
        not_resident: Option<[u32; 3]>,
    },
    InstructionLimit {
        limit: u64,
    },
    /// Every thread that has not finished either spins on an mbarrier wait
    /// (`try_wait`/`test_wait` in a loop) or waits for the spinning ones,
    /// and the block came back to a state it had been in: no thread
    /// arrives and no copy in flight completes a transaction, so the
    /// phases they wait for never complete (`window` as for a livelock).
    MbarrierDeadlock {
        window: u64,
    },
    /// A thread's `assert` failed (`__assertfail`): the asserted expression,
    /// and the file, line and function the program names; `threads` are the
    /// indices of every thread of the warp whose assertion failed there.
    AssertionFailed {
        expression: String,
        file: String,
        line: u32,
        function: String,
        threads: Vec<[u32; 3]>,
    },
    /// A thread executed `trap` (`__trap()`).
    Trap,
}

/// One divergent path of a warp: where it is, which lanes, and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPosition {
    pub pc: u32,
    pub lanes: u32,
    pub waiting: Waiting,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiting {
    Running,
    /// At a block barrier.
    Barrier(u32),
    /// At `bar.warp.sync` with this mask.
    WarpSync(u32),
    /// A reconvergence point, waiting for the other paths of its branch.
    Reconvergence,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpPosition {
    pub warp: u32,
    /// Lanes that have exited.
    pub exited: u32,
    pub paths: Vec<PathPosition>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierPosition {
    pub id: u32,
    pub arrived: u32,
    pub expected: u32,
}
