//! The expanded form of a litmus test: locations, placed threads of decoded instructions, the
//! outcome to look for, and what the PTX memory model says about it.
//!
//! A [`LitmusTest`] is what [`crate::LitmusFile::expand`] produces for one variant and one
//! placement, and what [`crate::allowed_outcomes`] checks. The instruction vocabulary mirrors the
//! operations of the PTX ISA chapter "Memory Consistency Model": loads, stores, read-modify-write
//! atomics (`atom`, `red`), fences (`fence.sc`, `fence.acq_rel`, `membar`) and the CTA barrier
//! `bar.sync`.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// The index of a thread within its test, in the order of the file's `[[thread]]` tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ThreadId(pub u32);

impl ThreadId {
    /// The thread's position in [`LitmusTest::threads`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// The index of a location within its test, in the order of the file's `[locations]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LocationId(pub u32);

impl LocationId {
    /// The location's position in [`LitmusTest::locations`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A 32-bit register of one thread, `r0` to `r15`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Register(pub u8);

impl Register {
    /// How many registers a thread has: `r0` to `r15`.
    pub const COUNT: u8 = 16;
}

impl fmt::Display for Register {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "r{}", self.0)
    }
}

/// One shared global location and the value it holds before any thread runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub name: String,
    pub init: u32,
}

/// Where a thread runs in the launch. Two threads share a CTA (and so a `.cta` scope) exactly
/// when their `block`s are equal; the warp is not a scope of the memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Placement {
    pub block: u32,
    pub warp: u32,
    pub lane: u32,
}

impl fmt::Display for Placement {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "block {} warp {} lane {}",
            self.block, self.warp, self.lane
        )
    }
}

/// One thread of a test: where it runs and its straight-line instructions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Thread {
    pub placement: Placement,
    pub instructions: Vec<Instruction>,
}

/// One PTX instruction of a thread body.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instruction {
    /// The PTX line after placeholder substitution, trimmed, with its `;` and without comments.
    pub text: String,
    /// The line of the `.litmus` file the instruction comes from (1-based).
    pub line: u32,
    /// What the instruction does, in the memory model's terms.
    pub event: Event,
}

/// A memory-model operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// `ld{.order}.global.u32 dst, [location];`
    Load {
        order: AccessOrder,
        dst: Register,
        location: LocationId,
    },
    /// `st{.order}.global.u32 [location], value;`
    Store {
        order: AccessOrder,
        location: LocationId,
        value: Value,
    },
    /// `atom{.sem}{.scope}.global.op.u32 dst, [location], operands...;`, or `red...` with no `dst`.
    /// `cas` has two operands (compare, new); every other operation has one.
    Rmw {
        order: RmwOrder,
        op: RmwOp,
        dst: Option<Register>,
        location: LocationId,
        operands: Vec<Value>,
    },
    /// `fence.sc.S`, `fence.acq_rel.S`, `fence.S` or `membar.{cta,gl,sys}`.
    Fence { kind: FenceKind, scope: Scope },
    /// `bar.sync 0;`: a CTA barrier among all threads of the test that share the block.
    Barrier,
}

impl Event {
    /// The register this event writes, if any.
    pub fn destination(&self) -> Option<Register> {
        match self {
            Event::Load { dst, .. } => Some(*dst),
            Event::Rmw { dst, .. } => *dst,
            Event::Store { .. } | Event::Fence { .. } | Event::Barrier => None,
        }
    }

    /// The registers this event reads, in operand order.
    pub fn sources(&self) -> Vec<Register> {
        let values: &[Value] = match self {
            Event::Store { value, .. } => std::slice::from_ref(value),
            Event::Rmw { operands, .. } => operands,
            Event::Load { .. } | Event::Fence { .. } | Event::Barrier => &[],
        };
        values
            .iter()
            .filter_map(|value| match value {
                Value::Register(register) => Some(*register),
                Value::Immediate(_) => None,
            })
            .collect()
    }

    /// The location this event accesses, if it is a memory access.
    pub fn location(&self) -> Option<LocationId> {
        match self {
            Event::Load { location, .. }
            | Event::Store { location, .. }
            | Event::Rmw { location, .. } => Some(*location),
            Event::Fence { .. } | Event::Barrier => None,
        }
    }
}

/// The memory-ordering qualifier of a load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessOrder {
    /// No qualifier or `.weak`: a weak access, morally strong only with its own thread.
    Weak,
    /// `.volatile`: the PTX ISA treats it as `.relaxed.sys`.
    Volatile,
    Relaxed(Scope),
    /// Only for loads.
    Acquire(Scope),
    /// Only for stores.
    Release(Scope),
}

impl AccessOrder {
    /// The scope of a strong access, or `None` for a weak one.
    pub fn strength(self) -> Option<Scope> {
        match self {
            AccessOrder::Weak => None,
            AccessOrder::Volatile => Some(Scope::System),
            AccessOrder::Relaxed(scope)
            | AccessOrder::Acquire(scope)
            | AccessOrder::Release(scope) => Some(scope),
        }
    }
}

/// The semantics and scope of an atomic read-modify-write. PTX defaults to `.relaxed` and `.gpu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RmwOrder {
    pub semantics: RmwSemantics,
    pub scope: Scope,
}

/// The `.sem` qualifier of `atom` and `red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmwSemantics {
    Relaxed,
    Acquire,
    Release,
    AcquireRelease,
}

impl RmwSemantics {
    /// Whether the operation is an acquire operation (`.acquire` or `.acq_rel`).
    pub fn acquires(self) -> bool {
        matches!(self, RmwSemantics::Acquire | RmwSemantics::AcquireRelease)
    }

    /// Whether the operation is a release operation (`.release` or `.acq_rel`).
    pub fn releases(self) -> bool {
        matches!(self, RmwSemantics::Release | RmwSemantics::AcquireRelease)
    }
}

/// The operation of an atomic read-modify-write on an unsigned 32-bit value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmwOp {
    Add,
    Exchange,
    /// Operands: the value to compare with, then the value to store when equal.
    CompareAndSwap,
    Or,
    And,
    Xor,
    Max,
    Min,
    /// `inc`: `old >= operand ? 0 : old + 1`.
    Increment,
    /// `dec`: `old == 0 || old > operand ? operand : old - 1`.
    Decrement,
}

impl RmwOp {
    /// How many value operands the operation takes after the address.
    pub fn operand_count(self) -> usize {
        match self {
            RmwOp::CompareAndSwap => 2,
            _ => 1,
        }
    }

    /// The value the operation stores, given the old value and its operands. A `cas` whose
    /// comparison fails stores the old value back, as the PTX ISA describes `atom.cas`; the
    /// memory model therefore still sees it as a write.
    pub fn apply(self, old: u32, operands: &[u32]) -> u32 {
        let first = operands.first().copied().unwrap_or(0);
        match self {
            RmwOp::Add => old.wrapping_add(first),
            RmwOp::Exchange => first,
            RmwOp::CompareAndSwap => {
                let new = operands.get(1).copied().unwrap_or(old);
                if old == first {
                    new
                } else {
                    old
                }
            }
            RmwOp::Or => old | first,
            RmwOp::And => old & first,
            RmwOp::Xor => old ^ first,
            RmwOp::Max => old.max(first),
            RmwOp::Min => old.min(first),
            RmwOp::Increment => {
                if old >= first {
                    0
                } else {
                    old + 1
                }
            }
            RmwOp::Decrement => {
                if old == 0 || old > first {
                    first
                } else {
                    old - 1
                }
            }
        }
    }
}

/// A source operand: an integer literal or a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Immediate(u32),
    Register(Register),
}

/// The kind of a fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FenceKind {
    /// `fence.sc` (and `membar`): an acquire-release fence that also takes part in Fence-SC order.
    Sc,
    /// `fence.acq_rel` (and `fence` without semantics).
    AcquireRelease,
}

/// The scope of a strong operation: the set of threads it is strong with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    /// The checker treats `.cluster` like `.gpu`: warpsim launches one cluster per block, and a
    /// cluster is never smaller than the threads of these tests span.
    Cluster,
    Gpu,
    System,
}

impl fmt::Display for Scope {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::System => "sys",
        })
    }
}

/// A value that an outcome reports: a register of a thread at the end, or a location's final
/// value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Observable {
    Register {
        thread: ThreadId,
        register: Register,
    },
    Location(LocationId),
}

/// What the PTX memory model says about a test's `[exists]` outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Expectation {
    Allowed,
    Forbidden,
}

impl fmt::Display for Expectation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Expectation::Allowed => "allowed",
            Expectation::Forbidden => "forbidden",
        })
    }
}

/// The values of a test's [`LitmusTest::observables`], in that order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Outcome(pub Vec<u32>);

/// One concrete litmus test: a variant of a file at one placement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LitmusTest {
    /// `<name>+<variant>@<placement>`, or `<name>@<placement>` for a file without variants.
    pub name: String,
    /// The file the test comes from.
    pub path: PathBuf,
    pub locations: Vec<Location>,
    pub threads: Vec<Thread>,
    /// The outcome to look for: a conjunction of equalities.
    pub exists: Vec<(Observable, u32)>,
    pub expect: Option<Expectation>,
}

impl LitmusTest {
    /// The values an outcome reports: every register a thread writes, in thread then register
    /// order, then every location's final value, in `[locations]` order.
    pub fn observables(&self) -> Vec<Observable> {
        let mut observables = Vec::new();
        for (thread_index, thread) in self.threads.iter().enumerate() {
            let mut written = [false; Register::COUNT as usize];
            for instruction in &thread.instructions {
                if let Some(register) = instruction.event.destination() {
                    if let Some(slot) = written.get_mut(register.0 as usize) {
                        *slot = true;
                    }
                }
            }
            observables.extend(
                (0..Register::COUNT)
                    .filter(|&number| written[number as usize])
                    .map(|number| Observable::Register {
                        thread: ThreadId(thread_index as u32),
                        register: Register(number),
                    }),
            );
        }
        observables.extend(
            (0..self.locations.len()).map(|index| Observable::Location(LocationId(index as u32))),
        );
        observables
    }

    /// The name of an observable as the `[exists]` clause writes it: `1:r0` or `x`.
    pub fn observable_name(&self, observable: Observable) -> String {
        match observable {
            Observable::Register { thread, register } => format!("{thread}:{register}"),
            Observable::Location(location) => self
                .locations
                .get(location.index())
                .map(|location| location.name.clone())
                .unwrap_or_else(|| format!("location#{}", location.0)),
        }
    }

    /// An outcome in words: `0:r0=1 1:r1=0 x=2`.
    pub fn describe(&self, outcome: &Outcome) -> String {
        self.observables()
            .into_iter()
            .zip(&outcome.0)
            .map(|(observable, value)| format!("{}={value}", self.observable_name(observable)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether an outcome satisfies every equality of the `[exists]` clause. An observable that
    /// the outcome does not report never matches.
    pub fn matches_exists(&self, outcome: &Outcome) -> bool {
        let observables = self.observables();
        self.exists.iter().all(|(wanted, value)| {
            observables
                .iter()
                .position(|observable| observable == wanted)
                .and_then(|index| outcome.0.get(index))
                == Some(value)
        })
    }
}
