//! Memory of the machine: global buffers shared by all blocks, and the
//! address windows of generic addressing (PTX ISA, "Generic Addressing").
//!
//! Blocks run on several host threads at once, and kernels may race on global
//! memory (that is what atomics and spin flags are for), so global memory is
//! stored as relaxed atomic 64-bit words: a racing kernel gets some
//! interleaving of its accesses, never undefined behaviour in the simulator.
//! Every global access of 8 bytes or less is aligned (checked before), so it
//! lies inside one word; a narrower store is a compare-and-swap on its word.
//!
//! Address map: global buffer `i` lives at `(i + 1) << 40`, so an address
//! names its buffer without a search and running off one buffer never lands
//! in another. Generic addresses with bit 62 set are in the block's shared
//! window, with bit 61 set in the thread's local window, with bit 60 in the
//! `.const` window and with bit 59 in the kernel parameters' window.

use std::sync::atomic::{AtomicU64, Ordering};

/// Where global buffer `index` starts.
pub fn buffer_base(index: usize) -> u64 {
    (index as u64 + 1) << BUFFER_SHIFT
}

pub(crate) const BUFFER_SHIFT: u32 = 40;
const BUFFER_OFFSET_MASK: u64 = (1 << BUFFER_SHIFT) - 1;

/// Generic address of offset 0 of the shared window (`cvta.shared`).
pub const SHARED_WINDOW: u64 = 1 << 62;
/// Generic address of offset 0 of a thread's local window (`cvta.local`).
pub const LOCAL_WINDOW: u64 = 1 << 61;
/// Generic address of offset 0 of the `.const` window (`cvta.const`).
pub const CONST_WINDOW: u64 = 1 << 60;
/// Generic address of offset 0 of the kernel parameters' window (`cvta.param`).
pub const PARAM_WINDOW: u64 = 1 << 59;
/// Size of each window; addresses beyond it are not in the window.
pub const WINDOW_SIZE: u64 = 1 << 32;

/// The largest global buffer, in bytes.
pub const MAX_BUFFER_BYTES: u64 = 1 << BUFFER_SHIFT;

/// Where a global address lies relative to the launch's buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalPlace {
    /// At `offset` of `buffer`, which holds `len` bytes (`offset` may be at
    /// or past the end).
    Offset {
        buffer: String,
        offset: u64,
        len: u64,
    },
    /// `bytes` before the first byte of `buffer`.
    BeforeStart { buffer: String, bytes: u64 },
    /// Below every buffer: a null pointer, or one never set.
    NullPointer,
    /// Far from every buffer.
    Unmapped,
}

/// Why a global access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfBounds;

/// The global buffers of one launch.
#[derive(Debug, Default)]
pub struct GlobalMemory {
    buffers: Vec<GlobalBuffer>,
}

#[derive(Debug)]
struct GlobalBuffer {
    name: String,
    len: u64,
    /// `len` bytes, little-endian, rounded up to whole words with zeros.
    words: Vec<AtomicU64>,
}

/// The host could not give the memory a buffer needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the host cannot allocate {bytes} bytes")]
pub struct AllocationError {
    /// The bytes asked for (the buffer rounded up to whole words).
    pub bytes: u64,
}

/// A global buffer's words, written front to back before the buffer joins a
/// [`GlobalMemory`] ([`GlobalMemory::add_words`]). Initial contents go
/// straight into the words the kernel will use, so building a buffer takes
/// its size in host memory once, not again for a staging copy.
#[derive(Debug)]
pub struct BufferWords {
    words: Vec<AtomicU64>,
    /// The buffer's size in bytes.
    len: u64,
    /// Bytes written so far.
    written: u64,
    /// The bytes of the word being assembled, low bytes first.
    partial: u64,
}

impl BufferWords {
    /// Room for a buffer of `len` bytes, or an error when the host cannot
    /// give it (never an abort).
    pub fn with_len(len: u64) -> Result<BufferWords, AllocationError> {
        let word_count = len.div_ceil(8);
        let error = AllocationError {
            bytes: word_count.saturating_mul(8),
        };
        let word_count = usize::try_from(word_count).map_err(|_| error)?;
        let mut words = Vec::new();
        words.try_reserve_exact(word_count).map_err(|_| error)?;
        Ok(BufferWords {
            words,
            len,
            written: 0,
            partial: 0,
        })
    }

    /// A whole buffer of `len` bytes whose elements of `element_size`
    /// bytes (1, 2, 4 or 8, so none straddles a word) are
    /// `element(index)`, made on the current rayon pool's threads: word by
    /// word, each from its own elements (the host's pages fault in on the
    /// threads too). Bytes past the last whole element are zeros.
    pub fn from_elements(
        len: u64,
        element_size: u32,
        element: impl Fn(u64) -> u64 + Sync,
    ) -> Result<BufferWords, AllocationError> {
        use rayon::prelude::*;
        let mut buffer = BufferWords::with_len(len)?;
        let size = u64::from(element_size.clamp(1, 8));
        let (per_word, elements) = (8 / size, len / size);
        let word = |word: u64| {
            let bits = (0..per_word)
                .map(|slot| (word * per_word + slot, slot))
                .take_while(|&(index, _)| index < elements)
                .fold(0u64, |bits, (index, slot)| {
                    bits | (element(index) & size_mask(size as u32)) << (slot * size * 8)
                });
            AtomicU64::new(bits)
        };
        // The word count fits a usize: `with_len` has room for that many.
        (0..len.div_ceil(8) as usize)
            .into_par_iter()
            .map(|index| word(index as u64))
            .collect_into_vec(&mut buffer.words);
        buffer.written = len;
        Ok(buffer)
    }

    /// The buffer's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends raw bytes; those past the buffer's end are dropped.
    pub fn extend_from_bytes(&mut self, bytes: &[u8]) {
        let room = (self.len - self.written).min(bytes.len() as u64) as usize;
        let mut bytes = &bytes[..room];
        while !self.written.is_multiple_of(8) {
            let Some((&byte, rest)) = bytes.split_first() else {
                return;
            };
            self.partial |= u64::from(byte) << ((self.written % 8) * 8);
            self.written += 1;
            bytes = rest;
            if self.written.is_multiple_of(8) {
                self.words.push(AtomicU64::new(self.partial));
                self.partial = 0;
            }
        }
        let mut chunks = bytes.chunks_exact(8);
        self.words.extend(chunks.by_ref().map(|chunk| {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            AtomicU64::new(u64::from_le_bytes(word))
        }));
        self.written += (bytes.len() - chunks.remainder().len()) as u64;
        for &byte in chunks.remainder() {
            self.partial |= u64::from(byte) << ((self.written % 8) * 8);
            self.written += 1;
        }
    }

    /// The words, with zeros after the last byte written.
    fn finish(mut self) -> (u64, Vec<AtomicU64>) {
        let word_count = self.len.div_ceil(8) as usize;
        if !self.written.is_multiple_of(8) && self.words.len() < word_count {
            self.words.push(AtomicU64::new(self.partial));
        }
        // The capacity was reserved up front, so this never reallocates.
        self.words.resize_with(word_count, || AtomicU64::new(0));
        (self.len, self.words)
    }
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory::default()
    }

    /// Adds a buffer holding `bytes`; returns its index.
    pub fn add_buffer(&mut self, name: &str, bytes: &[u8]) -> usize {
        let words = bytes
            .chunks(8)
            .map(|chunk| {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                AtomicU64::new(u64::from_le_bytes(word))
            })
            .collect();
        self.buffers.push(GlobalBuffer {
            name: name.to_string(),
            len: bytes.len() as u64,
            words,
        });
        self.buffers.len() - 1
    }

    /// Adds a buffer built in place ([`BufferWords`]); bytes not written
    /// are zeros. Returns its index.
    pub fn add_words(&mut self, name: &str, words: BufferWords) -> usize {
        let (len, words) = words.finish();
        self.buffers.push(GlobalBuffer {
            name: name.to_string(),
            len,
            words,
        });
        self.buffers.len() - 1
    }

    pub fn buffer_count(&self) -> usize {
        self.buffers.len()
    }

    pub fn buffer_name(&self, index: usize) -> &str {
        &self.buffers[index].name
    }

    /// The index of the buffer named `name`.
    pub fn buffer_index(&self, name: &str) -> Option<usize> {
        self.buffers.iter().position(|buffer| buffer.name == name)
    }

    /// The buffer's size in bytes.
    pub fn buffer_len(&self, index: usize) -> u64 {
        self.buffers[index].len
    }

    /// Copies the buffer's bytes from `offset` into `out`, as many as fit
    /// and are there; returns how many. Large buffers are read out in
    /// pieces this way without a copy of the whole.
    pub fn copy_out(&self, index: usize, offset: u64, out: &mut [u8]) -> usize {
        let buffer = &self.buffers[index];
        let end = buffer
            .len
            .min(offset.saturating_add(out.len() as u64))
            .max(offset);
        let count = (end - offset) as usize;
        let mut position = offset;
        let mut filled = 0;
        while filled < count {
            let word = buffer.words[(position / 8) as usize].load(Ordering::Relaxed);
            let skip = (position % 8) as usize;
            let take = (8 - skip).min(count - filled);
            out[filled..filled + take].copy_from_slice(&word.to_le_bytes()[skip..skip + take]);
            filled += take;
            position += take as u64;
        }
        count
    }

    /// A copy of the buffer's bytes.
    pub fn contents(&self, index: usize) -> Vec<u8> {
        let mut bytes = vec![0u8; self.buffers[index].len as usize];
        self.copy_out(index, 0, &mut bytes);
        bytes
    }

    /// Where a global `address` lies, as a person would name it (for error
    /// messages). Buffers sit 2^40 bytes apart and are far smaller, so an
    /// address outside every buffer is taken to belong to the nearer of the
    /// two around it: `p[-1]` is just before `p`'s buffer, not a terabyte
    /// past the end of the buffer below it. Addresses below the first
    /// buffer can only come from a null (or never set) pointer.
    pub fn place(&self, address: u64) -> GlobalPlace {
        let region = address >> BUFFER_SHIFT;
        let offset = address & BUFFER_OFFSET_MASK;
        let above = self.buffers.get(region as usize);
        let before_start = MAX_BUFFER_BYTES - offset;
        if region == 0 {
            return match above {
                Some(buffer) if before_start < offset => GlobalPlace::BeforeStart {
                    buffer: buffer.name.clone(),
                    bytes: before_start,
                },
                _ => GlobalPlace::NullPointer,
            };
        }
        let below = self.buffers.get(region as usize - 1);
        match (below, above) {
            (Some(buffer), above)
                if above.is_none() || offset.saturating_sub(buffer.len) < before_start =>
            {
                GlobalPlace::Offset {
                    buffer: buffer.name.clone(),
                    offset,
                    len: buffer.len,
                }
            }
            (_, Some(buffer)) => GlobalPlace::BeforeStart {
                buffer: buffer.name.clone(),
                bytes: before_start,
            },
            _ => GlobalPlace::Unmapped,
        }
    }

    /// The word holding `size` bytes at `address`, and the bit shift of those
    /// bytes in it. The caller has checked alignment, so they never straddle words.
    #[inline]
    fn locate(&self, address: u64, size: u32) -> Result<(&AtomicU64, u32), OutOfBounds> {
        let index = (address >> BUFFER_SHIFT).wrapping_sub(1) as usize;
        let buffer = self.buffers.get(index).ok_or(OutOfBounds)?;
        let offset = address & BUFFER_OFFSET_MASK;
        if offset + u64::from(size) > buffer.len {
            return Err(OutOfBounds);
        }
        let word = &buffer.words[(offset / 8) as usize];
        Ok((word, ((offset % 8) * 8) as u32))
    }

    /// Whether `size` bytes at `address` lie in a buffer.
    #[inline]
    pub fn check(&self, address: u64, size: u32) -> Result<(), OutOfBounds> {
        self.locate(address, size).map(|_| ())
    }

    /// The 8-byte word at `address` (8-aligned, in a buffer: checked when
    /// the bytes were stored; 0 outside every buffer).
    pub(crate) fn read_word(&self, address: u64) -> u64 {
        self.locate(address, 1)
            .map_or(0, |(word, _)| word.load(Ordering::Relaxed))
    }

    /// Replaces the bits of `mask` in the word at `address` (8-aligned,
    /// in a buffer: checked when the bytes were stored) with those of `value`.
    pub(crate) fn merge_word(&self, address: u64, value: u64, mask: u64) {
        let Ok((word, _)) = self.locate(address, 1) else {
            return;
        };
        if mask == u64::MAX {
            word.store(value, Ordering::Relaxed);
        } else {
            let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | (value & mask))
            });
        }
    }

    #[inline]
    pub fn read(&self, address: u64, size: u32) -> Result<u64, OutOfBounds> {
        let (word, shift) = self.locate(address, size)?;
        Ok((word.load(Ordering::Relaxed) >> shift) & size_mask(size))
    }

    #[inline]
    pub fn write(&self, address: u64, size: u32, value: u64) -> Result<(), OutOfBounds> {
        let (word, shift) = self.locate(address, size)?;
        if size == 8 {
            word.store(value, Ordering::Relaxed);
        } else {
            let mask = size_mask(size) << shift;
            let bits = (value << shift) & mask;
            // `fetch_update` retries only if another thread changed the word meanwhile.
            let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | bits)
            });
        }
        Ok(())
    }

    /// Atomically replaces the value with `update(old)`; returns the old
    /// value and the new one (`update(old)` cut to `size` bytes).
    pub fn atomic(
        &self,
        address: u64,
        size: u32,
        update: impl Fn(u64) -> u64,
    ) -> Result<(u64, u64), OutOfBounds> {
        let (word, shift) = self.locate(address, size)?;
        let mask = size_mask(size) << shift;
        let (mut old_value, mut new_value) = (0, 0);
        let _ = word.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| {
            old_value = (old & mask) >> shift;
            new_value = update(old_value) & size_mask(size);
            Some((old & !mask) | new_value << shift)
        });
        Ok((old_value, new_value))
    }
}

/// The mask of the low `size` bytes.
#[inline(always)]
pub fn size_mask(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}

/// Reads `size` (1, 2, 4 or 8) little-endian bytes at `offset` of a byte
/// array. Each size has its own fixed-width load: a copy of variable length
/// would call `memmove` on the interpreter's hottest path.
#[inline(always)]
pub fn read_bytes(bytes: &[u8], offset: usize, size: u32) -> Option<u64> {
    let slice = bytes.get(offset..offset.checked_add(size as usize)?)?;
    Some(match *slice {
        [a] => u64::from(a),
        [a, b] => u64::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => return None,
    })
}

/// Writes the low `size` (1, 2, 4 or 8) bytes of `value` at `offset`, little-endian.
#[inline(always)]
pub fn write_bytes(bytes: &mut [u8], offset: usize, size: u32, value: u64) -> Option<()> {
    let slice = bytes.get_mut(offset..offset.checked_add(size as usize)?)?;
    match size {
        1 => slice.copy_from_slice(&(value as u8).to_le_bytes()),
        2 => slice.copy_from_slice(&(value as u16).to_le_bytes()),
        4 => slice.copy_from_slice(&(value as u32).to_le_bytes()),
        8 => slice.copy_from_slice(&value.to_le_bytes()),
        _ => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_separate_and_bounds_checked() {
        let mut memory = GlobalMemory::new();
        let a = memory.add_buffer("a", &[1, 2, 3, 4, 5]);
        let b = memory.add_buffer("b", &[0; 16]);
        assert_eq!(memory.read(buffer_base(a), 4), Ok(0x0403_0201));
        assert_eq!(memory.read(buffer_base(a) + 4, 1), Ok(5));
        assert_eq!(memory.read(buffer_base(a) + 4, 2), Err(OutOfBounds));
        assert_eq!(memory.read(buffer_base(a) + 8, 1), Err(OutOfBounds));
        memory.write(buffer_base(b) + 2, 2, 0xbeef).unwrap();
        assert_eq!(memory.contents(b)[2..4], [0xef, 0xbe]);
        assert_eq!(
            memory.atomic(buffer_base(b) + 4, 4, |old| old + 7),
            Ok((0, 7))
        );
        assert_eq!(memory.read(buffer_base(b) + 4, 4), Ok(7));
        assert_eq!(memory.read(0, 4), Err(OutOfBounds));
        assert_eq!(
            memory.place(buffer_base(b) + 12),
            GlobalPlace::Offset {
                buffer: "b".to_string(),
                offset: 12,
                len: 16
            }
        );
    }

    #[test]
    fn addresses_outside_buffers_belong_to_the_nearer_one() {
        let mut memory = GlobalMemory::new();
        memory.add_buffer("index", &[0; 8]);
        memory.add_buffer("list", &[0; 8]);
        assert_eq!(memory.place(0), GlobalPlace::NullPointer);
        assert_eq!(memory.place(0x10), GlobalPlace::NullPointer);
        assert_eq!(
            memory.place(buffer_base(0) - 8),
            GlobalPlace::BeforeStart {
                buffer: "index".to_string(),
                bytes: 8
            }
        );
        // `list[-1]`: 4 bytes before `list`, not a terabyte past `index`.
        assert_eq!(
            memory.place(buffer_base(1) - 4),
            GlobalPlace::BeforeStart {
                buffer: "list".to_string(),
                bytes: 4
            }
        );
        assert_eq!(
            memory.place(buffer_base(0) + 100),
            GlobalPlace::Offset {
                buffer: "index".to_string(),
                offset: 100,
                len: 8
            }
        );
        // Past the last buffer, there is no buffer above to be before.
        assert_eq!(
            memory.place(buffer_base(1) + (1 << 39) + 1),
            GlobalPlace::Offset {
                buffer: "list".to_string(),
                offset: (1 << 39) + 1,
                len: 8
            }
        );
        assert_eq!(memory.place(buffer_base(3)), GlobalPlace::Unmapped);
    }

    /// What `build` writes into a buffer of `len` bytes, read back.
    fn built(len: u64, build: impl FnOnce(&mut BufferWords)) -> Vec<u8> {
        let mut words = BufferWords::with_len(len).unwrap();
        build(&mut words);
        let mut memory = GlobalMemory::new();
        let index = memory.add_words("b", words);
        assert_eq!(memory.buffer_index("b"), Some(index));
        assert_eq!(memory.buffer_len(index), len);
        memory.contents(index)
    }

    /// The bytes of a buffer made by `from_elements`, read back.
    fn from_elements(len: u64, size: u32, element: impl Fn(u64) -> u64 + Sync) -> Vec<u8> {
        let mut memory = GlobalMemory::new();
        let words = BufferWords::from_elements(len, size, element).unwrap();
        let index = memory.add_words("b", words);
        assert_eq!(memory.buffer_len(index), len);
        memory.contents(index)
    }

    #[test]
    fn buffers_built_in_place_hold_what_was_written() {
        // Elements of 2 bytes, 5 to a 10-byte buffer; the bytes past each
        // element's size are dropped.
        let elements = from_elements(10, 2, |index| 0x7_0100 + index);
        assert_eq!(elements, [0, 1, 1, 1, 2, 1, 3, 1, 4, 1]);
        // A buffer whose last word is partly past its end, and one whose
        // last element is cut short: the bytes after the whole elements are zeros.
        assert_eq!(from_elements(3, 1, |index| 9 - index), [9, 8, 7]);
        let short = from_elements(11, 4, |_| 0x0605_0403);
        assert_eq!(short, [3, 4, 5, 6, 3, 4, 5, 6, 0, 0, 0]);
        // Raw bytes at any length; what is not written is zero, what is
        // past the end is dropped.
        let bytes = built(12, |words| words.extend_from_bytes(&[5; 9]));
        assert_eq!(bytes, [5, 5, 5, 5, 5, 5, 5, 5, 5, 0, 0, 0]);
        let cut = built(3, |words| words.extend_from_bytes(&[7; 100]));
        assert_eq!(cut, [7, 7, 7]);
        let mixed = built(13, |words| {
            words.extend_from_bytes(&[9, 8, 7]);
            words.extend_from_bytes(&[3, 4, 5, 6]);
            words.extend_from_bytes(&[1; 9]);
        });
        assert_eq!(mixed, [9, 8, 7, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1]);
        assert_eq!(from_elements(0, 8, |_| 1), []);
    }

    #[test]
    fn buffers_are_copied_out_in_pieces() {
        let mut memory = GlobalMemory::new();
        let bytes: Vec<u8> = (0..21).collect();
        let index = memory.add_buffer("b", &bytes);
        let mut piece = [0u8; 5];
        assert_eq!(memory.copy_out(index, 3, &mut piece), 5);
        assert_eq!(piece, [3, 4, 5, 6, 7]);
        assert_eq!(memory.copy_out(index, 18, &mut piece), 3);
        assert_eq!(piece[..3], [18, 19, 20]);
        assert_eq!(memory.copy_out(index, 40, &mut piece), 0);
    }

    #[test]
    fn a_buffer_the_host_cannot_hold_is_an_error() {
        // 4 EiB is more than any host has; the 2^64 - 1 of a corrupt length
        // is more than an address space can hold.
        assert_eq!(
            BufferWords::with_len(1 << 62).unwrap_err(),
            AllocationError { bytes: 1 << 62 }
        );
        assert!(BufferWords::with_len(u64::MAX).is_err());
    }
}
