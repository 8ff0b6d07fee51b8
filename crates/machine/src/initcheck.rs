//! The initialization checker of one block, as compute-sanitizer's
//! initcheck does it for shared memory ("Uninitialized __shared__ memory
//! read"): which bytes of the block's shared memory, and of each thread's
//! local memory, some store or atomic has written, and the loads that read
//! bytes none has.
//!
//! It is on only when checking (`warpsim check`, `run --check`): the block
//! then keeps a bit per byte of shared and local memory, so a plain run pays
//! nothing but one test per memory instruction. Like the barrier checker it
//! only observes: memory holds the same values with it or without it, and
//! its findings are a function of the block's deterministic execution.
//!
//! What counts as written: every byte a store (`st`, vector stores included,
//! generic stores that land in the window) or an atomic (`atom`, `red`)
//! touched, whichever thread of the block did it, for shared memory; for
//! local memory only the thread's own stores, since no other thread can
//! reach it. What counts as read: loads, and atomics that use the old value
//! (all but an `atom.exch` whose result is not used). `.param` and `.const`
//! memory are initialized by the launch and not tracked, and global memory
//! is the launch's buffers, which always have contents.

use crate::findings::{add_lanes, Finding, FindingKind, Severity, Site, WarpLanes};
use crate::program::Program;

/// One bit per byte of a memory: set once the byte has been written.
#[derive(Debug, Default)]
struct ByteSet {
    words: Vec<u64>,
    bytes: usize,
}

impl ByteSet {
    fn with_bytes(bytes: usize) -> ByteSet {
        ByteSet {
            words: vec![0; bytes.div_ceil(64)],
            bytes,
        }
    }

    fn clear(&mut self) {
        self.words.fill(0);
    }

    #[inline]
    fn set(&mut self, start: usize, len: usize) {
        if let Some((word, mask)) = one_word(self.bytes, start, len) {
            self.words[word] |= mask;
            return;
        }
        for (word, mask) in masks(self.bytes, start, len) {
            self.words[word] |= mask;
        }
    }

    /// Whether every byte of the range has been written.
    #[inline]
    fn all_set(&self, start: usize, len: usize) -> bool {
        if let Some((word, mask)) = one_word(self.bytes, start, len) {
            return self.words[word] & mask == mask;
        }
        masks(self.bytes, start, len).all(|(word, mask)| self.words[word] & mask == mask)
    }
}

/// The word and bits of bytes `start..start + len` when they lie in one word
/// of a set of `bytes` bytes: every naturally aligned access of up to 16
/// bytes in shared memory, the common case, taken without a loop.
#[inline(always)]
fn one_word(bytes: usize, start: usize, len: usize) -> Option<(usize, u64)> {
    let bit = start % 64;
    let fits = (1..64).contains(&len)
        && bit + len <= 64
        && start.checked_add(len).is_some_and(|end| end <= bytes);
    fits.then(|| (start / 64, ((1u64 << len) - 1) << bit))
}

/// The words of bytes `start..start + len` of a set of `bytes` bytes and the
/// bits of each that the range covers; a range past the end is cut there.
fn masks(bytes: usize, start: usize, len: usize) -> impl Iterator<Item = (usize, u64)> {
    let end = start.saturating_add(len).min(bytes);
    let mut at = start;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let (word, bit) = (at / 64, at % 64);
        let count = (64 - bit).min(end - at);
        let mask = if count == 64 {
            u64::MAX
        } else {
            ((1u64 << count) - 1) << bit
        };
        at += count;
        Some((word, mask))
    })
}

/// The written bytes of a block's shared memory and of its threads' local
/// memory.
#[derive(Debug)]
pub(crate) struct WrittenBytes {
    shared: ByteSet,
    /// Thread `t`'s local memory is bytes `t * local_bytes ..` of this, as in
    /// the block's local array.
    local: ByteSet,
}

impl WrittenBytes {
    pub fn new(shared_bytes: usize, local_bytes_of_block: usize) -> WrittenBytes {
        WrittenBytes {
            shared: ByteSet::with_bytes(shared_bytes),
            local: ByteSet::with_bytes(local_bytes_of_block),
        }
    }

    /// A new block: nothing is written.
    pub fn reset(&mut self) {
        self.shared.clear();
        self.local.clear();
    }

    #[inline]
    pub fn write_shared(&mut self, offset: usize, len: usize) {
        self.shared.set(offset, len);
    }

    #[inline]
    pub fn shared_written(&self, offset: usize, len: usize) -> bool {
        self.shared.all_set(offset, len)
    }

    /// `index` is the byte's place in the block's local array.
    #[inline]
    pub fn write_local(&mut self, index: usize, len: usize) {
        self.local.set(index, len);
    }

    #[inline]
    pub fn local_written(&self, index: usize, len: usize) -> bool {
        self.local.all_set(index, len)
    }
}

/// The memory an uninitialized read read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadSpace {
    Shared,
    Local,
}

/// The uninitialized reads of one instruction in one block, gathered over
/// its executions; made into one finding when the block ends.
#[derive(Debug)]
pub(crate) struct UninitializedReads {
    pub pc: u32,
    pub space: ReadSpace,
    /// An atomic rather than a load.
    pub atomic: bool,
    threads: Vec<WarpLanes>,
    /// The bytes read, from the lowest to the end of the highest access:
    /// shared-memory offsets, or offsets in the thread's local memory.
    first: u64,
    end: u64,
}

impl UninitializedReads {
    pub fn new(pc: u32, space: ReadSpace, atomic: bool) -> UninitializedReads {
        UninitializedReads {
            pc,
            space,
            atomic,
            threads: Vec::new(),
            first: u64::MAX,
            end: 0,
        }
    }

    /// `lanes` of `warp` read bytes `first..end` (their union).
    pub fn add(&mut self, warp: u32, lanes: u32, first: u64, end: u64) {
        add_lanes(&mut self.threads, WarpLanes { warp, lanes });
        self.first = self.first.min(first);
        self.end = self.end.max(end);
    }

    /// The finding: the instruction, its threads, the bytes (named by their
    /// shared variable where the program knows it) and why it matters.
    pub fn finding(&self, program: &Program, fresh_fill: u8) -> Finding {
        let access = if self.atomic { "atomic" } else { "load" };
        let (message, label, fill_note) = match self.space {
            ReadSpace::Shared => (
                format!(
                    "uninitialized shared memory read: {} reads {} that no thread of the block had written, and fresh shared memory holds whatever an earlier block left there",
                    if self.atomic { "an atomic" } else { "a load" },
                    shared_bytes_text(program, self.first, self.end),
                ),
                format!("this {access} reads shared memory that no thread of the block has written"),
                format!("warpsim fills fresh shared memory with {fresh_fill:#04x} bytes (`[memory] fresh_fill` in the machine file), so what these threads read shows in the output"),
            ),
            ReadSpace::Local => (
                format!(
                    "uninitialized local memory read: a load reads bytes of its thread's local memory (within {}) that the thread had not written, and local memory starts with whatever was there before",
                    byte_range(self.first, self.end),
                ),
                format!("this {access} reads local memory that its thread has not written"),
                format!("warpsim fills fresh local memory with {fresh_fill:#04x} bytes (`[memory] fresh_fill` in the machine file), so what these threads read shows in the output"),
            ),
        };
        let mut finding = Finding::new(FindingKind::UninitializedRead, Severity::Error, message);
        finding
            .sites
            .push(Site::new(self.pc, self.threads.clone(), label, true));
        finding.notes.push(fill_note);
        finding
    }
}

/// `byte 4`, `bytes 0-127`.
fn byte_range(first: u64, end: u64) -> String {
    if end <= first + 1 {
        format!("byte {first}")
    } else {
        format!("bytes {first}-{}", end - 1)
    }
}

/// Shared-memory bytes `first..end` (not all of which need be uninitialized)
/// as a person would name them: by the variable that holds them (`bytes of
/// `tile` (within its bytes 0-127, shared offsets 0x0-0x7f)`), by the
/// variables they span, or by offset alone.
pub(crate) fn shared_bytes_text(program: &Program, first: u64, end: u64) -> String {
    let offsets = if end <= first + 1 {
        format!("shared offset {first:#x}")
    } else {
        format!("shared offsets {first:#x}-{:#x}", end - 1)
    };
    // Every variable the range overlaps, in layout order; aliases of the
    // dynamic shared memory (every `extern __shared__` array starts there)
    // are named by the first declared.
    let mut overlapping: Vec<&crate::program::SharedVariable> = Vec::new();
    for variable in &program.shared_variables {
        let start = u64::from(variable.offset);
        let variable_end = variable
            .size
            .map_or(u64::MAX, |size| start + u64::from(size));
        let aliased = overlapping
            .last()
            .is_some_and(|last| last.offset == variable.offset);
        if start < end && first < variable_end && !aliased {
            overlapping.push(variable);
        }
    }
    match overlapping.as_slice() {
        [] => format!("bytes (within {offsets})"),
        [variable] if variable.contains(first) && variable.contains(end - 1) => {
            let start = u64::from(variable.offset);
            let dynamic = if variable.size.is_none() {
                ", dynamic shared memory"
            } else {
                ""
            };
            format!(
                "bytes of `{}` (within its {}, {offsets}{dynamic})",
                variable.source_name(),
                byte_range(first - start, end - start),
            )
        }
        variables => {
            const NAMED: usize = 3;
            let mut names: Vec<String> = variables
                .iter()
                .take(NAMED)
                .map(|variable| format!("`{}`", variable.source_name()))
                .collect();
            if variables.len() > NAMED {
                names.push(format!("{} more", variables.len() - NAMED));
            }
            format!("bytes of {} (within {offsets})", names.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sets_track_ranges_across_words() {
        let mut set = ByteSet::with_bytes(200);
        assert!(!set.all_set(0, 1));
        set.set(60, 8);
        assert!(set.all_set(60, 8));
        assert!(set.all_set(63, 2));
        assert!(!set.all_set(56, 8));
        assert!(!set.all_set(64, 8));
        set.set(0, 200);
        assert!(set.all_set(0, 200));
        // Past the end is cut, never a panic.
        set.set(190, 100);
        assert!(set.all_set(199, 50));
        set.clear();
        assert!(!set.all_set(199, 1));
        // A range that would pass the top of the address space is past the end.
        assert!(set.all_set(usize::MAX - 2, 8));
        set.set(usize::MAX - 2, 8);
    }
}
