//! The shared-memory race checker of one block, as compute-sanitizer's
//! racecheck finds hazards: two accesses to the same bytes of a block's
//! shared memory by different threads, at least one a write, with no
//! barrier between them (read-after-write, write-after-read,
//! write-after-write).
//!
//! Ordering follows the CUDA memory model for one block (PTX ISA, "Memory
//! Consistency Model"; `bar.sync` is a CTA-scope release and acquire):
//! - a block barrier that opens orders everything before it before
//!   everything after it;
//! - the lanes of one warp are not in lockstep since Volta, so accesses by
//!   lanes of one warp in different instructions race unless a warp
//!   synchronization (`bar.warp.sync`, or another `.sync` collective) lies
//!   between them; lanes of one instruction never race with each other;
//! - a thread's own accesses are in program order.
//!
//! It is on only when checking (`warpsim check`, `run --check`). Like the
//! other checkers it only observes: memory holds the same values with it
//! or without it, and its findings are a function of the block's
//! deterministic execution. Its shadow is one entry per 4-byte word of the
//! block's shared memory (the bytes a kernel can touch, not threads ×
//! bytes), holding the last write and the last reads of two threads, each
//! with the barrier epoch it happened in.
//!
//! Deviations from racecheck, each one that can miss a race but never
//! reports one that is not there:
//! - Any barrier that opens (named barriers of part of the block included)
//!   starts a new epoch for the whole block.
//! - A word remembers its last writer and the last readers of two threads;
//!   a race with an earlier access overwritten in between is not seen.
//! - Any warp collective that completes (`shfl.sync`, `vote.sync`, ...)
//!   orders the warp's lanes, as `bar.warp.sync` does.
//! - Atomics are not checked: they do not race with each other, and an
//!   atomic racing with a plain access is not reported.

use indexmap::IndexMap;

use crate::findings::{add_lanes, Finding, FindingKind, Severity, Site, WarpLanes};
use crate::initcheck::shared_bytes_text;
use crate::program::Program;
use crate::warp::WARP_SIZE;

/// Marks an access slot that holds no access.
const NO_THREAD: u16 = u16::MAX;

/// One access to a shared word, as the checker remembers it.
#[derive(Clone, Copy, Debug)]
struct Access {
    thread: u16,
    /// The bytes of the word accessed (bit `i`: byte `i`).
    bytes: u8,
    /// The block's barrier epoch at the access.
    epoch: u32,
    /// The block's dynamic warp instruction that made it (lanes of one
    /// instruction do not race).
    instruction: u32,
    /// The warp's completed synchronizations at the access.
    warp_syncs: u32,
    pc: u32,
}

const NO_ACCESS: Access = Access {
    thread: NO_THREAD,
    bytes: 0,
    epoch: 0,
    instruction: 0,
    warp_syncs: 0,
    pc: 0,
};

impl Access {
    /// Whether this earlier access and `later` touch common bytes with
    /// nothing ordering them.
    fn races_with(&self, later: &Access) -> bool {
        self.thread != NO_THREAD
            && self.thread != later.thread
            && self.bytes & later.bytes != 0
            && self.epoch == later.epoch
            && self.instruction != later.instruction
            && !(usize::from(self.thread) / WARP_SIZE == usize::from(later.thread) / WARP_SIZE
                && self.warp_syncs != later.warp_syncs)
    }
}

#[derive(Clone, Copy, Debug)]
struct WordShadow {
    write: Access,
    /// The last read, and the last read by another thread than its.
    read: Access,
    other_read: Access,
}

const FRESH_WORD: WordShadow = WordShadow {
    write: NO_ACCESS,
    read: NO_ACCESS,
    other_read: NO_ACCESS,
};

/// Which order two racing accesses came in (shared and global memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Hazard {
    ReadAfterWrite,
    WriteAfterRead,
    WriteAfterWrite,
}

impl Hazard {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Hazard::ReadAfterWrite => "read-after-write",
            Hazard::WriteAfterRead => "write-after-read",
            Hazard::WriteAfterWrite => "write-after-write",
        }
    }

    /// What the earlier and the later access did.
    pub(crate) fn verbs(self) -> (&'static str, &'static str) {
        match self {
            Hazard::ReadAfterWrite => ("writes", "reads"),
            Hazard::WriteAfterRead => ("reads", "writes"),
            Hazard::WriteAfterWrite => ("writes", "writes"),
        }
    }
}

/// The races between two instructions in one block, gathered.
#[derive(Debug)]
struct Race {
    earlier_threads: Vec<WarpLanes>,
    later_threads: Vec<WarpLanes>,
    /// Whether some racing pair was in one warp.
    same_warp: bool,
    first: u64,
    end: u64,
}

/// Where the current access comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Accessor {
    pub thread: u32,
    pub pc: u32,
    pub epoch: u32,
    pub instruction: u64,
    pub warp_syncs: u32,
}

/// The race checker's state for one block.
#[derive(Debug, Default)]
pub(crate) struct SharedRaces {
    words: Vec<WordShadow>,
    /// By (hazard, earlier pc, later pc), in the order first seen.
    races: IndexMap<(Hazard, u32, u32), Race>,
    /// Per word, the `cp.async` in flight that writes it: its pc and thread
    /// (`NO_THREAD` when none), until a wait completes it.
    async_writes: Vec<(u32, u16)>,
    /// Accesses of bytes a `cp.async` in flight writes, by (copy pc,
    /// access pc, whether the access writes).
    async_races: IndexMap<(u32, u32, bool), Race>,
}

impl SharedRaces {
    pub fn new(shared_bytes: usize) -> SharedRaces {
        SharedRaces {
            words: vec![FRESH_WORD; shared_bytes.div_ceil(4)],
            races: IndexMap::new(),
            async_writes: vec![(0, NO_THREAD); shared_bytes.div_ceil(4)],
            async_races: IndexMap::new(),
        }
    }

    /// A new block: no access yet.
    pub fn reset(&mut self) {
        self.words.fill(FRESH_WORD);
        self.races.clear();
        self.async_writes.fill((0, NO_THREAD));
        self.async_races.clear();
    }

    /// A `cp.async` by `thread` at `pc` will write `len` bytes at shared
    /// `offset` when it completes: until then, any access of them races
    /// with it, even by the same thread.
    pub fn async_write_issued(&mut self, thread: u32, pc: u32, offset: u64, len: u32) {
        let words = offset / 4..(offset + u64::from(len)).div_ceil(4);
        for word in words {
            if let Some(slot) = self.async_writes.get_mut(word as usize) {
                *slot = (pc, thread as u16);
            }
        }
    }

    /// The `cp.async` completed at a wait: its bytes are now its thread's
    /// write, ordered like any other.
    pub fn async_write_completed(&mut self, accessor: Accessor, offset: u64, len: u32) {
        let words = offset / 4..(offset + u64::from(len)).div_ceil(4);
        for word in words {
            if let Some(slot) = self.async_writes.get_mut(word as usize) {
                if slot.0 == accessor.pc && slot.1 == accessor.thread as u16 {
                    *slot = (0, NO_THREAD);
                }
            }
        }
        self.observe(accessor, offset, len, true);
    }

    /// An access of bytes that a `cp.async` in flight writes.
    #[cold]
    fn record_async(&mut self, copy: (u32, u16), accessor: Accessor, write: bool, word: u64) {
        let race = self
            .async_races
            .entry((copy.0, accessor.pc, write))
            .or_insert_with(|| Race {
                earlier_threads: Vec::new(),
                later_threads: Vec::new(),
                same_warp: false,
                first: word * 4,
                end: word * 4 + 4,
            });
        let lanes = |thread: u32| WarpLanes {
            warp: thread / WARP_SIZE as u32,
            lanes: 1 << (thread % WARP_SIZE as u32),
        };
        add_lanes(&mut race.earlier_threads, lanes(u32::from(copy.1)));
        add_lanes(&mut race.later_threads, lanes(accessor.thread));
        race.first = race.first.min(word * 4);
        race.end = race.end.max(word * 4 + 4);
    }

    /// `accessor` reads (or writes, when `write`) `len` bytes at shared
    /// `offset`.
    pub fn observe(&mut self, accessor: Accessor, offset: u64, len: u32, write: bool) {
        let end = offset + u64::from(len);
        let mut word = offset / 4;
        while word * 4 < end {
            if let Some(&copy) = self.async_writes.get(word as usize) {
                // The completion of the copy itself is not a race with it.
                if copy.1 != NO_THREAD && copy.0 != accessor.pc {
                    self.record_async(copy, accessor, write, word);
                }
            }
            let Some(shadow) = self.words.get_mut(word as usize) else {
                return;
            };
            let first_byte = (word * 4).max(offset);
            let last_byte = (word * 4 + 4).min(end);
            let bytes = (((1u32 << (last_byte - first_byte)) - 1) << (first_byte - word * 4)) as u8;
            let access = Access {
                thread: accessor.thread as u16,
                bytes,
                epoch: accessor.epoch,
                instruction: accessor.instruction as u32,
                warp_syncs: accessor.warp_syncs,
                pc: accessor.pc,
            };
            let mut found: [Option<(Hazard, Access)>; 3] = [None; 3];
            if shadow.write.races_with(&access) {
                let hazard = if write {
                    Hazard::WriteAfterWrite
                } else {
                    Hazard::ReadAfterWrite
                };
                found[0] = Some((hazard, shadow.write));
            }
            if write {
                for (slot, read) in [shadow.read, shadow.other_read].into_iter().enumerate() {
                    if read.races_with(&access) {
                        found[slot + 1] = Some((Hazard::WriteAfterRead, read));
                    }
                }
                shadow.write = access;
            } else if shadow.read.thread == access.thread || shadow.read.thread == NO_THREAD {
                shadow.read = access;
            } else {
                shadow.other_read = shadow.read;
                shadow.read = access;
            }
            for (hazard, earlier) in found.into_iter().flatten() {
                self.record(hazard, earlier, access, first_byte, last_byte);
            }
            word += 1;
        }
    }

    #[cold]
    fn record(&mut self, hazard: Hazard, earlier: Access, later: Access, first: u64, end: u64) {
        let race = self
            .races
            .entry((hazard, earlier.pc, later.pc))
            .or_insert_with(|| Race {
                earlier_threads: Vec::new(),
                later_threads: Vec::new(),
                same_warp: false,
                first,
                end,
            });
        let lanes = |thread: u16| WarpLanes {
            warp: u32::from(thread) / WARP_SIZE as u32,
            lanes: 1 << (u32::from(thread) % WARP_SIZE as u32),
        };
        add_lanes(&mut race.earlier_threads, lanes(earlier.thread));
        add_lanes(&mut race.later_threads, lanes(later.thread));
        race.same_warp |=
            usize::from(earlier.thread) / WARP_SIZE == usize::from(later.thread) / WARP_SIZE;
        race.first = race.first.min(first);
        race.end = race.end.max(end);
    }

    /// The block's races, one finding per pair of instructions and hazard.
    pub fn take_findings(&mut self, program: &Program) -> Vec<Finding> {
        let asynchronous: Vec<Finding> = self
            .async_races
            .drain(..)
            .map(|((copy_pc, access_pc, write), race)| {
                let verb = if write { "writes" } else { "reads" };
                let message = format!(
                    "shared memory race with an asynchronous copy: a thread {verb} {} while a `cp.async` that writes them is in flight (issued, not yet completed by `cp.async.wait_group`/`wait_all`), so it {} the old bytes or the copied ones depending on timing",
                    shared_bytes_text(program, race.first, race.end),
                    if write { "may be overwritten by" } else { "sees" },
                );
                let mut finding = Finding::new(FindingKind::SharedRace, Severity::Error, message);
                finding.sites.push(Site::new(
                    copy_pc,
                    race.earlier_threads,
                    "the copy is issued here".to_string(),
                    false,
                ));
                finding.sites.push(Site::new(
                    access_pc,
                    race.later_threads,
                    format!("then {verb} here before waiting for it"),
                    true,
                ));
                finding.notes.push(
                    "`cp.async.wait_group`/`wait_all` (and a __syncthreads() for other threads' copies) before the access orders them".to_string(),
                );
                finding
            })
            .collect();
        asynchronous.into_iter().chain(self.races
            .drain(..)
            .map(|((hazard, earlier_pc, later_pc), race)| {
                let (earlier_verb, later_verb) = hazard.verbs();
                let message = format!(
                    "shared memory race ({}): one thread {earlier_verb} {} and another {later_verb} it with no barrier between them, so what the second sees or leaves depends on timing",
                    hazard.name(),
                    shared_bytes_text(program, race.first, race.end),
                );
                let mut finding = Finding::new(FindingKind::SharedRace, Severity::Error, message);
                finding.sites.push(Site::new(
                    earlier_pc,
                    race.earlier_threads,
                    format!("{earlier_verb} here first"),
                    false,
                ));
                finding.sites.push(Site::new(
                    later_pc,
                    race.later_threads,
                    format!("then another thread {later_verb} here, unordered"),
                    true,
                ));
                finding.notes.push(
                    "a __syncthreads() (bar.sync) between the two accesses orders them".to_string(),
                );
                if race.same_warp {
                    finding.notes.push(
                        "the lanes of a warp are not in lockstep since Volta: accesses by threads of one warp need __syncwarp() between them".to_string(),
                    );
                }
                finding
            }))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accessor(thread: u32, pc: u32, epoch: u32, instruction: u64) -> Accessor {
        Accessor {
            thread,
            pc,
            epoch,
            instruction,
            warp_syncs: 0,
        }
    }

    #[test]
    fn hazards_are_found_only_without_a_barrier_between() {
        let mut races = SharedRaces::new(64);
        // Thread 40 writes word 2; thread 70 reads it in the same epoch.
        races.observe(accessor(40, 1, 0, 1), 8, 4, true);
        races.observe(accessor(70, 2, 0, 2), 8, 4, false);
        // After a barrier (epoch 1), thread 71 reads it: ordered.
        races.observe(accessor(71, 3, 1, 3), 8, 4, false);
        // Thread 40 writes it again in epoch 1: after 71's read, a race.
        races.observe(accessor(40, 4, 1, 4), 8, 4, true);
        // Different bytes of one word do not race.
        races.observe(accessor(1, 5, 1, 5), 16, 1, true);
        races.observe(accessor(2, 6, 1, 6), 17, 1, true);
        let keys: Vec<_> = races.races.keys().copied().collect();
        assert_eq!(
            keys,
            [
                (Hazard::ReadAfterWrite, 1, 2),
                (Hazard::WriteAfterRead, 3, 4)
            ]
        );
    }

    #[test]
    fn lanes_of_one_warp_race_unless_one_instruction_or_a_warp_sync_orders_them() {
        let mut races = SharedRaces::new(64);
        // Lanes 0 and 1 of warp 0 write word 0 in one instruction: no race.
        races.observe(accessor(0, 1, 0, 1), 0, 4, true);
        races.observe(accessor(1, 1, 0, 1), 0, 4, true);
        assert!(races.races.is_empty());
        // Lane 2 reads it in a later instruction: a race in one warp.
        races.observe(accessor(2, 2, 0, 2), 0, 4, false);
        assert_eq!(races.races.len(), 1);
        // After a warp synchronization, lane 3 writes it: ordered.
        let mut synced = accessor(3, 3, 0, 3);
        synced.warp_syncs = 1;
        races.observe(synced, 0, 4, true);
        assert_eq!(races.races.len(), 1);
    }
}
