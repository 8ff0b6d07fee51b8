//! A block's plain global stores, held back until the end of the timing
//! model's window, so that blocks racing on plain stores see each other in
//! an order that simulated time decides, not the host's threads.
//!
//! Within a window the SMs run on several host threads at once. A weak
//! store another SM reads in the same window would be seen or not depending
//! on which host thread got there first: a kernel whose blocks race on
//! plain stores (a read-modify-write that should have been an atomic) would
//! give different outputs from run to run. So a block's weak global stores
//! wait in its buffer: its own threads read them back at once (program
//! order and the block's barriers keep working as on hardware), other
//! blocks see them when the window ends, when `timing::gpu` applies every
//! buffer in SM order (within an SM, those of the blocks that left first,
//! in the order they left, then the resident ones' in slot order). The PTX memory
//! model allows this: without a fence, release or atomic, a weak store by
//! one block need not become visible to another block at any particular
//! time (PTX ISA, "Memory Consistency Model"). Strong stores (volatile,
//! relaxed, release) wait here as weak ones do: another block sees them
//! at the window's end, which is sooner than a round trip through the L2
//! would let it on hardware (a window is `block_launch_latency`, 200
//! cycles; an L2 hit takes 251).
//!
//! Global atomics wait here too: `red`, an `atom` whose old value goes
//! nowhere, and an `atom` whose old value a thread reads. At the window's
//! end a buffer applies its atomics, each word's in the order issued, then
//! its stores; an atomic whose old value is read gets the value it found
//! in memory then, which the buffer hands back ([`AtomicResult`]) for the
//! SM to write into the thread's register. The timing model holds that
//! register's readers until the window has ended (an atomic takes
//! `atomic_latency`, 396 cycles, longer than a window), so no thread reads
//! an old value before it is known, and the order in which the atomics of
//! different blocks meet memory is fixed on every host: SM order; within
//! an SM, the buffers' order above; within a buffer, issue order. A ticket
//! counter hands out the same tickets, and sums of floats round the same
//! way, whatever the host's threads. Until then the block's own threads
//! see their pending atomics at once (a block that reads a counter it
//! incremented sees its own increment). An atomic on bytes the block has
//! a pending store to is folded into that store, so the block's program
//! order holds; its old value is the stored one. Deviations, all for
//! blocks that race on hardware, where either order can happen: a plain
//! store and an atomic by different blocks of one SM to one word in one
//! window are applied atomics first; an atomic folded into a block's
//! pending store overwrites, at the window's end, what other blocks did to
//! those bytes in it.

use warpsim_ir::AtomOp;

use crate::access::atomic_update;
use crate::hashing::FastIndexMap;
use crate::memory::{size_mask, GlobalMemory, OutOfBounds};
use crate::program::NumberType;

/// The bytes of one 8-byte word a block has stored and not yet applied.
#[derive(Clone, Copy, Debug)]
struct PendingWord {
    value: u64,
    /// Which bits of `value` were stored (whole bytes).
    mask: u64,
}

/// A block's global stores and atomics in the current window. (The
/// explore model's weak memory takes a block's global accesses instead.)
#[derive(Debug, Default)]
pub(crate) struct StoreBuffer {
    /// Global buffers with a pending store, by index (bit `i` for buffer
    /// `i`, bit 63 for every buffer from 63 on): a load from a buffer the
    /// block has not stored to skips the look-up.
    stored_buffers: u64,
    /// Pending words by address, in the order first stored (the order
    /// they are applied in, so applying them is the same on every host).
    words: FastIndexMap<u64, PendingWord>,
    /// Pending atomics by word (address / 8 * 8), words in the order
    /// first used, each word's in the order issued (atomics on different
    /// words commute, so this is issue order where it matters).
    atomics: FastIndexMap<u64, Vec<PendingAtomic>>,
}

/// Where the old value of an atomic goes: a lane of a register of one of
/// the block's warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicResult {
    pub warp: u32,
    pub register: u32,
    pub lane: u32,
}

/// A global atomic a block issued, as an operation on memory: its bytes,
/// what it does to them, and where their old value goes (nowhere for a
/// reduction).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingAtomic {
    pub address: u64,
    pub size: u32,
    pub op: AtomOp,
    pub ty: NumberType,
    pub operand: u64,
    /// A compare-and-swap's new value.
    pub swap: u64,
    pub result: Option<AtomicResult>,
}

impl PendingAtomic {
    /// The atomic's bytes, `old`, updated.
    fn update(&self, old: u64) -> u64 {
        atomic_update(self.op, self.ty, old, self.operand, self.swap) & size_mask(self.size)
    }

    /// Applies the atomic to `word`, the 8-byte word holding it.
    fn apply_to_word(&self, word: u64) -> u64 {
        let shift = (self.address % 8) * 8;
        let mask = size_mask(self.size);
        let new = self.update((word >> shift) & mask);
        (word & !(mask << shift)) | new << shift
    }
}

impl StoreBuffer {
    /// Bit of the buffer holding `address` in `stored_buffers`.
    #[inline(always)]
    fn buffer_bit(address: u64) -> u64 {
        let index = (address >> crate::memory::BUFFER_SHIFT).saturating_sub(1);
        1 << index.min(63)
    }

    /// Stores `size` bytes of `value` at `address` into the buffer; an
    /// out-of-bounds store fails.
    #[inline]
    pub(crate) fn write(
        &mut self,
        global: &GlobalMemory,
        address: u64,
        size: u32,
        value: u64,
    ) -> Result<(), OutOfBounds> {
        global.check(address, size)?;
        self.write_checked(address, size, value);
        Ok(())
    }

    /// [`StoreBuffer::write`] of a store the caller has checked is in
    /// bounds (an access checks all its lanes before it moves a byte).
    #[inline]
    pub(crate) fn write_checked(&mut self, address: u64, size: u32, value: u64) {
        let shift = (address % 8) * 8;
        let mask = size_mask(size) << shift;
        let bits = (value << shift) & mask;
        let word = self
            .words
            .entry(address & !7)
            .or_insert(PendingWord { value: 0, mask: 0 });
        word.value = (word.value & !mask) | bits;
        word.mask |= mask;
        self.stored_buffers |= Self::buffer_bit(address);
    }

    /// Performs `atomic` into the buffer (folded into a pending store to
    /// its bytes, if any). Returns the old and new bytes as the block sees
    /// them when the atomic has a result (the one `apply` hands back may
    /// differ, when other blocks' atomics on the word come first) or is
    /// folded into a store; `None` for a reduction held back. An
    /// out-of-bounds atomic fails.
    pub(crate) fn atomic(
        &mut self,
        global: &GlobalMemory,
        atomic: PendingAtomic,
    ) -> Result<Option<(u64, u64)>, OutOfBounds> {
        let (address, size) = (atomic.address, atomic.size);
        global.check(address, size)?;
        let word_address = address & !7;
        let shift = (address % 8) * 8;
        if let Some(word) = self
            .words
            .get(&word_address)
            .filter(|word| word.mask & (size_mask(size) << shift) != 0)
        {
            // After a store to those bytes: the store takes the atomic in.
            let old = (self.word_as_seen(global, word_address, word) >> shift) & size_mask(size);
            let new = atomic.update(old);
            self.write(global, address, size, new)?;
            return Ok(Some((old, new)));
        }
        let seen = match atomic.result {
            Some(_) => {
                let old = self.read(global, address, size)?;
                Some((old, atomic.update(old)))
            }
            None => None,
        };
        self.atomics.entry(word_address).or_default().push(atomic);
        self.stored_buffers |= Self::buffer_bit(address);
        Ok(seen)
    }

    /// `size` bytes at `address` as the block sees them: memory, after the
    /// block's own pending atomics and overlaid with its pending stores.
    #[inline]
    pub(crate) fn read(
        &self,
        global: &GlobalMemory,
        address: u64,
        size: u32,
    ) -> Result<u64, OutOfBounds> {
        let value = global.read(address, size)?;
        if self.stored_buffers & Self::buffer_bit(address) == 0 {
            return Ok(value);
        }
        Ok(self.overlay(global, address, size, value))
    }

    #[cold]
    fn overlay(&self, global: &GlobalMemory, address: u64, size: u32, value: u64) -> u64 {
        let word_address = address & !7;
        let shift = (address % 8) * 8;
        if self.atomics.contains_key(&word_address) {
            let pending = self
                .words
                .get(&word_address)
                .copied()
                .unwrap_or(PendingWord { value: 0, mask: 0 });
            return (self.word_as_seen(global, word_address, &pending) >> shift) & size_mask(size);
        }
        let Some(word) = self.words.get(&word_address) else {
            return value;
        };
        let pending_mask = (word.mask >> shift) & size_mask(size);
        (value & !pending_mask) | ((word.value >> shift) & pending_mask)
    }

    /// The word at `word_address` as the block sees it: memory, after the
    /// block's pending atomics on it in order, overlaid with `pending`, its
    /// pending stores to it.
    fn word_as_seen(&self, global: &GlobalMemory, word_address: u64, pending: &PendingWord) -> u64 {
        let atomics = self.atomics.get(&word_address).into_iter().flatten();
        let word = atomics.fold(global.read_word(word_address), |word, atomic| {
            atomic.apply_to_word(word)
        });
        (word & !pending.mask) | (pending.value & pending.mask)
    }

    /// Applies the pending atomics (each word's in the order issued), then
    /// the pending stores, in the order first stored, to memory, and
    /// forgets them; hands `results` the old value of each atomic whose old
    /// value is read.
    pub(crate) fn apply(
        &mut self,
        global: &GlobalMemory,
        mut results: impl FnMut(AtomicResult, u64),
    ) {
        for atomic in self.atomics.values().flatten() {
            let performed = global.atomic(atomic.address, atomic.size, |old| atomic.update(old));
            if let (Some(result), Ok((old, _))) = (atomic.result, performed) {
                results(result, old);
            }
        }
        for (&address, word) in &self.words {
            global.merge_word(address, word.value, word.mask);
        }
        self.words.clear();
        self.atomics.clear();
        self.stored_buffers = 0;
    }

    /// Whether no store or atomic is pending.
    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.atomics.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::buffer_base;

    fn apply(buffer: &mut StoreBuffer, memory: &GlobalMemory) {
        buffer.apply(memory, |result, _| {
            panic!("no atomic here has a result: {result:?}")
        });
    }

    /// An atomic whose old value goes nowhere.
    fn reduction(
        address: u64,
        size: u32,
        op: AtomOp,
        ty: NumberType,
        operand: u64,
    ) -> PendingAtomic {
        PendingAtomic {
            address,
            size,
            op,
            ty,
            operand,
            swap: 0,
            result: None,
        }
    }

    #[test]
    fn pending_stores_are_seen_by_their_block_and_applied_at_the_end() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &[0; 16]);
        let b = memory.add_buffer("b", &[7; 8]);
        let mut buffer = StoreBuffer::default();
        buffer
            .write(&memory, buffer_base(a) + 2, 2, 0xbeef)
            .unwrap();
        buffer.write(&memory, buffer_base(a) + 3, 1, 0x11).unwrap();
        // Memory is unchanged; the block reads its own bytes over it.
        assert_eq!(memory.read(buffer_base(a), 4), Ok(0));
        assert_eq!(buffer.read(&memory, buffer_base(a), 4), Ok(0x11ef_0000));
        assert_eq!(buffer.read(&memory, buffer_base(b), 1), Ok(7));
        assert_eq!(
            buffer.write(&memory, buffer_base(a) + 16, 1, 0),
            Err(OutOfBounds)
        );
        apply(&mut buffer, &memory);
        assert!(buffer.is_empty());
        assert_eq!(memory.read(buffer_base(a), 4), Ok(0x11ef_0000));
    }

    #[test]
    fn the_buffer_applied_later_wins_where_two_overlap() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &[0; 8]);
        let mut first = StoreBuffer::default();
        let mut second = StoreBuffer::default();
        first
            .write(&memory, buffer_base(a), 4, 0x0101_0101)
            .unwrap();
        second
            .write(&memory, buffer_base(a) + 2, 2, 0x0202)
            .unwrap();
        // Each sees only its own bytes until applied.
        assert_eq!(second.read(&memory, buffer_base(a), 4), Ok(0x0202_0000));
        apply(&mut first, &memory);
        apply(&mut second, &memory);
        assert_eq!(memory.read(buffer_base(a), 8), Ok(0x0202_0101));
    }

    const U32: NumberType = NumberType::Int(crate::program::IntType {
        bits: 32,
        signed: false,
    });

    #[test]
    fn pending_reductions_are_seen_by_their_block_in_program_order() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &10u32.to_le_bytes().repeat(4));
        let base = buffer_base(a);
        let mut buffer = StoreBuffer::default();
        // A reduction alone: memory keeps its value, the block sees 10 + 5.
        buffer
            .atomic(&memory, reduction(base, 4, AtomOp::Add, U32, 5))
            .unwrap();
        assert_eq!(memory.read(base, 4), Ok(10));
        assert_eq!(buffer.read(&memory, base, 4), Ok(15));
        // The other half of the word is untouched.
        assert_eq!(buffer.read(&memory, base + 4, 4), Ok(10));
        // A store after it, then a reduction after the store (folded in).
        buffer.write(&memory, base, 4, 100).unwrap();
        buffer
            .atomic(&memory, reduction(base, 4, AtomOp::Add, U32, 1))
            .unwrap();
        assert_eq!(buffer.read(&memory, base, 4), Ok(101));
        // A reduction, then a store to the other half of its word.
        buffer
            .atomic(&memory, reduction(base + 8, 4, AtomOp::Max, U32, 40))
            .unwrap();
        buffer.write(&memory, base + 12, 4, 7).unwrap();
        assert_eq!(buffer.read(&memory, base + 8, 8), Ok(7 << 32 | 40));
        assert_eq!(
            buffer.atomic(&memory, reduction(base + 16, 4, AtomOp::Add, U32, 1)),
            Err(OutOfBounds)
        );
        // Applied: reductions in order, then stores, as the block saw them.
        apply(&mut buffer, &memory);
        assert!(buffer.is_empty());
        assert_eq!(memory.read(base, 4), Ok(101));
        assert_eq!(memory.read(base + 8, 8), Ok(7 << 32 | 40));
    }

    #[test]
    fn reductions_of_several_buffers_add_up() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &[0; 4]);
        let base = buffer_base(a);
        let mut buffers: Vec<StoreBuffer> = (0..3).map(|_| StoreBuffer::default()).collect();
        for (index, buffer) in buffers.iter_mut().enumerate() {
            buffer
                .atomic(
                    &memory,
                    reduction(base, 4, AtomOp::Add, U32, index as u64 + 1),
                )
                .unwrap();
            // Each sees its own reduction only.
            assert_eq!(buffer.read(&memory, base, 4), Ok(index as u64 + 1));
        }
        for buffer in &mut buffers {
            apply(buffer, &memory);
        }
        assert_eq!(memory.read(base, 4), Ok(6));
    }

    #[test]
    fn a_reduction_over_part_of_a_pending_store_is_folded_into_it() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &0x0101_0101_0101_0101u64.to_le_bytes());
        let base = buffer_base(a);
        let mut buffer = StoreBuffer::default();
        // A 2-byte store to bytes 2-3, then an 8-byte add over the word:
        // the add sees the stored bytes and becomes a store of all 8.
        buffer.write(&memory, base + 2, 2, 0x0505).unwrap();
        let u64_type = NumberType::Int(crate::program::IntType {
            bits: 64,
            signed: false,
        });
        assert_eq!(
            buffer.atomic(&memory, reduction(base, 8, AtomOp::Add, u64_type, 0x10)),
            Ok(Some((0x0101_0101_0505_0101, 0x0101_0101_0505_0111)))
        );
        assert_eq!(buffer.read(&memory, base, 8), Ok(0x0101_0101_0505_0111));
        apply(&mut buffer, &memory);
        assert_eq!(memory.read(base, 8), Ok(0x0101_0101_0505_0111));
    }

    /// An atomic of `warp`'s lane `lane` whose old value goes to register 3.
    fn with_result(atomic: PendingAtomic, warp: u32, lane: u32) -> PendingAtomic {
        PendingAtomic {
            result: Some(AtomicResult {
                warp,
                register: 3,
                lane,
            }),
            ..atomic
        }
    }

    #[test]
    fn atomics_with_results_get_the_values_memory_had_when_applied_in_order() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &100u32.to_le_bytes().repeat(2));
        let base = buffer_base(a);
        let ticket = |warp, lane| with_result(reduction(base, 4, AtomOp::Add, U32, 1), warp, lane);
        let mut first = StoreBuffer::default();
        let mut second = StoreBuffer::default();
        // Each block sees memory and its own pending atomics: both take
        // ticket 100 for now, and the first also 101 for its second lane.
        assert_eq!(first.atomic(&memory, ticket(0, 0)), Ok(Some((100, 101))));
        assert_eq!(first.atomic(&memory, ticket(0, 1)), Ok(Some((101, 102))));
        assert_eq!(second.atomic(&memory, ticket(2, 5)), Ok(Some((100, 101))));
        assert_eq!(second.read(&memory, base, 4), Ok(101));
        // A compare-and-swap that fails in the second block's view.
        let swap = PendingAtomic {
            swap: 7,
            ..with_result(reduction(base + 4, 4, AtomOp::Cas, U32, 99), 1, 31)
        };
        assert_eq!(second.atomic(&memory, swap), Ok(Some((100, 100))));
        assert_eq!(memory.read(base, 4), Ok(100));
        // Applied in order, the first buffer's first: the tickets are the
        // values memory held as each atomic met it.
        let mut results = Vec::new();
        for buffer in [&mut first, &mut second] {
            buffer.apply(&memory, |result, old| {
                results.push((result.warp, result.lane, old))
            });
            assert!(buffer.is_empty());
        }
        assert_eq!(
            results,
            [(0, 0, 100), (0, 1, 101), (2, 5, 102), (1, 31, 100)]
        );
        assert_eq!(memory.read(base, 8), Ok(100 << 32 | 103));
        // A compare-and-swap that finds its value swaps.
        let mut third = StoreBuffer::default();
        let swap = PendingAtomic {
            swap: 7,
            ..with_result(reduction(base, 4, AtomOp::Cas, U32, 103), 0, 0)
        };
        assert_eq!(third.atomic(&memory, swap), Ok(Some((103, 7))));
        let mut found = Vec::new();
        third.apply(&memory, |result, old| found.push((result, old)));
        let result = AtomicResult {
            warp: 0,
            register: 3,
            lane: 0,
        };
        assert_eq!(found, [(result, 103)]);
        assert_eq!(memory.read(base, 4), Ok(7));
    }
}
