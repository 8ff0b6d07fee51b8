//! A set-associative sector cache: the tags of an L1 or the L2, without
//! data (memory contents live in `memory.rs`; a cache here only decides
//! how long a sector takes to arrive).
//!
//! Lines are 128 bytes of four 32-byte sectors, each sector valid on its
//! own, as in NVIDIA's L1 and L2 since Volta (Jia et al., "Dissecting the
//! NVIDIA Volta GPU Architecture via Microbenchmarking", 2018; the CUDA
//! C++ Best Practices Guide's "sectors"). A miss allocates the sector's
//! line, evicting the least recently used line of its set; Accel-Sim models
//! both caches the same way.

use crate::timing::shards::{apply_in_shards, ShardOrder};

/// Bytes per sector and per line.
pub(crate) const SECTOR_BYTES: u64 = 32;
pub(crate) const SECTORS_PER_LINE: u64 = 4;

/// The tags of one cache, one entry per way, set after set, each set's
/// ways in order of use: the most recently used first, empty ways last.
/// The order is the LRU state, so a set is its tags alone (128 bytes for
/// 16 ways, two host cache lines): the simulator keeps every SM's L1 and
/// the L2 at once, and their first touch is part of a launch's host time.
#[derive(Clone, Debug)]
pub(crate) struct SectorCache {
    sets: usize,
    ways: usize,
    /// Per way: `(line + 1) << 4 | sectors present` (bit `i`: sector `i`
    /// of the line), where `line` is the address / 128; 0 marks an empty way.
    tags: Vec<u64>,
}

const SECTOR_BITS: u64 = 0xf;

/// The tag bits of `line` (without its sectors).
fn line_tag(line: u64) -> u64 {
    (line + 1) << 4
}

impl SectorCache {
    /// A cache of `bytes` (rounded down to whole sets) with `ways` lines per set.
    pub(crate) fn new(bytes: u64, ways: u32) -> SectorCache {
        let ways = ways.max(1) as usize;
        let line_bytes = SECTOR_BYTES * SECTORS_PER_LINE;
        let sets = ((bytes / line_bytes) as usize / ways).max(1);
        SectorCache {
            sets,
            ways,
            tags: Vec::new(),
        }
    }

    /// Allocates the tags on first use, so that a cache that is never
    /// touched (an SM without global loads) costs nothing.
    fn allocate(&mut self) {
        if self.tags.is_empty() {
            self.tags = vec![0; self.sets * self.ways];
        }
    }

    fn ways_of(&self, set: usize) -> std::ops::Range<usize> {
        set * self.ways..(set + 1) * self.ways
    }

    /// Whether `sector` is present, without marking its line used (the L2
    /// as every SM sees it during a time window).
    pub(crate) fn contains(&self, sector: u64) -> bool {
        if self.tags.is_empty() {
            return false;
        }
        let line = sector / SECTORS_PER_LINE;
        let bit = 1 << (sector % SECTORS_PER_LINE);
        self.tags[self.ways_of(set_index(line, self.sets))]
            .iter()
            .any(|&tag| tag & !SECTOR_BITS == line_tag(line) && tag & bit != 0)
    }

    /// Whether `sector` (an address / 32) is present, marking its line used.
    pub(crate) fn lookup(&mut self, sector: u64) -> bool {
        self.allocate();
        let line = sector / SECTORS_PER_LINE;
        let ways = self.ways_of(set_index(line, self.sets));
        let tags = &mut self.tags[ways];
        match tags
            .iter()
            .position(|&tag| tag & !SECTOR_BITS == line_tag(line))
        {
            Some(way) => {
                tags[..=way].rotate_right(1);
                tags[0] & 1 << (sector % SECTORS_PER_LINE) != 0
            }
            None => false,
        }
    }

    /// Makes `sector` present, allocating its line over the least recently
    /// used one of its set.
    pub(crate) fn fill(&mut self, sector: u64) {
        self.allocate();
        let ways = self.ways_of(set_index(sector / SECTORS_PER_LINE, self.sets));
        fill_set(&mut self.tags[ways], sector);
    }

    /// How many shards of sets the fills of a window are split into for
    /// `threads` host threads: two per thread, so that uneven shards even
    /// out, and never more than there are sets.
    pub(crate) fn shards(&self, threads: usize) -> usize {
        (threads * 2).clamp(1, self.sets)
    }

    /// The shard of `shards` that `sector`'s set falls in.
    pub(crate) fn shard_of(&self, sector: u64, shards: usize) -> usize {
        set_index(sector / SECTORS_PER_LINE, self.sets) / self.sets.div_ceil(shards)
    }

    /// Fills the sectors of `batches`, in order, exactly as `fill` on each
    /// in turn would. With `orders` (each batch's sectors sorted by
    /// [`SectorCache::shard_of`] into that many shards) the shards' sets
    /// are filled on the rayon pool's threads at once, each set's sectors
    /// in their order.
    pub(crate) fn fill_in_order(
        &mut self,
        batches: &[&[u64]],
        orders: Option<(&[&ShardOrder], usize)>,
    ) {
        let total: usize = batches.iter().map(|batch| batch.len()).sum();
        if total == 0 {
            return;
        }
        self.allocate();
        let Some((orders, shards)) = orders else {
            // The sets are far apart in a large cache: asking for the set
            // a few fills ahead overlaps the host's cache misses.
            let sectors = || batches.iter().flat_map(|batch| batch.iter().copied());
            let mut ahead = sectors().skip(PREFETCH_DISTANCE);
            for sector in sectors() {
                if let Some(ahead) = ahead.next() {
                    let set = set_index(ahead / SECTORS_PER_LINE, self.sets);
                    prefetch(&self.tags[set * self.ways]);
                }
                self.fill(sector);
            }
            return;
        };
        let sets_per_shard = self.sets.div_ceil(shards);
        let (sets, ways) = (self.sets, self.ways);
        let chunk = sets_per_shard * ways;
        let mut states: Vec<(usize, &mut [u64])> = self
            .tags
            .chunks_mut(chunk)
            .enumerate()
            .map(|(shard, tags)| (shard * sets_per_shard, tags))
            .collect();
        let sorted: Vec<(usize, &ShardOrder)> = batches
            .iter()
            .zip(orders)
            .map(|(batch, &order)| {
                debug_assert!(order.covers(batch.len(), shards), "a batch not sorted");
                (batch.len(), order)
            })
            .collect();
        apply_in_shards(&mut states, &sorted, |(first_set, tags), batch, index| {
            let sector = batches[batch][index];
            let local = set_index(sector / SECTORS_PER_LINE, sets) - *first_set;
            fill_set(&mut tags[local * ways..(local + 1) * ways], sector);
        });
    }
}

/// How many fills ahead `fill_in_order` asks for a set.
const PREFETCH_DISTANCE: usize = 8;

/// Asks the host to bring `value`'s cache line in, without waiting for it.
#[inline(always)]
fn prefetch<T>(value: &T) {
    // SAFETY: SSE, the one feature `_mm_prefetch` needs, is part of every
    // x86-64 CPU, and a prefetch neither reads nor writes memory that Rust
    // can observe (a hint, even for an address it cannot use).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Consecutive lines that go to consecutive sets: 4 KiB of addresses, whose
/// sets' tags fill one 4 KiB host page in a 16-way cache.
const LINES_PER_GROUP: u64 = 32;

/// The set of `line` in a cache of `sets` sets. A multiplicative hash of
/// the line's group of [`LINES_PER_GROUP`] spreads strided lines over the
/// sets, as the hardware's address hashing does: it picks the group of
/// sets the lines go to, and the order they take those sets in (so that
/// lines a multiple of 4 KiB apart do not all take a group's first set).
/// The lines of a group stay in one group of sets, so that a kernel
/// touching a few megabytes of a 50 MiB L2 touches the host pages of those
/// sets' tags only, not nearly every page of them (first touches are
/// zeroed by the host's kernel, a visible part of a short launch's time).
fn set_index(line: u64, sets: usize) -> usize {
    let hash = (line / LINES_PER_GROUP).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let first_set = (hash >> 20) * LINES_PER_GROUP;
    let offset = (line % LINES_PER_GROUP) ^ (hash >> (64 - LINES_PER_GROUP.trailing_zeros()));
    ((first_set + offset) % sets as u64) as usize
}

/// Makes `sector` present in one set (its ways' `tags`, most recently used
/// first) and its line the most recently used.
fn fill_set(tags: &mut [u64], sector: u64) {
    let line = sector / SECTORS_PER_LINE;
    let bit = 1u64 << (sector % SECTORS_PER_LINE);
    let Some(last) = tags.len().checked_sub(1) else {
        return;
    };
    // The line's own way, else the last: an empty way if the set has one,
    // else the least recently used line, which the new line replaces.
    let way = tags
        .iter()
        .position(|&tag| tag & !SECTOR_BITS == line_tag(line))
        .unwrap_or(last);
    let present = if tags[way] & !SECTOR_BITS == line_tag(line) {
        tags[way]
    } else {
        line_tag(line)
    };
    tags[..=way].rotate_right(1);
    tags[0] = present | bit;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_sector_hits_and_its_neighbours_do_not() {
        let mut cache = SectorCache::new(4096, 4);
        assert!(!cache.lookup(40));
        cache.fill(40);
        assert!(cache.lookup(40));
        // Same line, other sector: the line is there, the sector is not.
        assert!(!cache.lookup(41));
        cache.fill(41);
        assert!(cache.lookup(41));
    }

    #[test]
    fn the_least_recently_used_line_of_a_set_is_evicted() {
        // One set of two ways: lines 0, 1 and 2 compete for it.
        let mut cache = SectorCache::new(256, 2);
        cache.fill(0);
        cache.fill(4);
        assert!(cache.lookup(0));
        cache.fill(8);
        assert!(cache.lookup(0), "line 0 was used last and stays");
        assert!(!cache.lookup(4), "line 1 was the least recently used");
        assert!(cache.lookup(8));
    }

    #[test]
    fn a_working_set_larger_than_the_cache_misses() {
        let mut cache = SectorCache::new(64 * 1024, 4);
        let sectors = 64 * 1024 / 32 * 2;
        for pass in 0..2 {
            let mut hits = 0;
            for sector in 0..sectors {
                if cache.lookup(sector) {
                    hits += 1;
                } else {
                    cache.fill(sector);
                }
            }
            assert!(hits < sectors / 2, "pass {pass}: {hits} hits of {sectors}");
        }
    }

    #[test]
    fn a_group_of_lines_takes_one_group_of_sets_and_strided_lines_spread() {
        // The L2 of an H100: 50 MiB of 16-way sets.
        let sets = (50 << 20) / 128 / 16;
        let group = 5 * LINES_PER_GROUP;
        let taken: std::collections::BTreeSet<usize> = (group..group + LINES_PER_GROUP)
            .map(|line| set_index(line, sets))
            .collect();
        assert_eq!(taken.len(), LINES_PER_GROUP as usize);
        let first = *taken.first().unwrap();
        assert_eq!(first % LINES_PER_GROUP as usize, 0);
        assert_eq!(*taken.last().unwrap(), first + LINES_PER_GROUP as usize - 1);
        // Lines a power-of-two stride apart (a column of a 4096-float
        // matrix: 16 KiB) share a set at most in twos, as random sets would.
        let stride = 16 * 1024 / 128;
        let mut per_set = std::collections::HashMap::new();
        for row in 0..256 {
            *per_set.entry(set_index(row * stride, sets)).or_insert(0) += 1;
        }
        assert!(per_set.values().all(|&lines| lines <= 2), "{per_set:?}");
    }

    #[test]
    fn filling_in_parallel_leaves_the_tags_sequential_fills_leave() {
        // Three batches of pseudo-random sectors over a small cache, so
        // that sets overflow and the LRU order decides what stays.
        let mut state = 12345u64;
        let batches: Vec<Vec<u64>> = (0..3)
            .map(|_| {
                (0..2000)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 33) % 4096
                    })
                    .collect()
            })
            .collect();
        let slices: Vec<&[u64]> = batches.iter().map(|batch| batch.as_slice()).collect();
        let mut sequential = SectorCache::new(16 * 1024, 4);
        sequential.fill(7);
        for &sector in batches.iter().flatten() {
            sequential.fill(sector);
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut parallel = SectorCache::new(16 * 1024, 4);
        parallel.fill(7);
        // Each batch sorted by shard, as each SM sorts its own.
        let shards = parallel.shards(3);
        let orders: Vec<ShardOrder> = batches
            .iter()
            .map(|batch| {
                let mut order = ShardOrder::default();
                order.sort(batch.len(), shards, |index| {
                    parallel.shard_of(batch[index], shards)
                });
                order
            })
            .collect();
        let orders: Vec<&ShardOrder> = orders.iter().collect();
        pool.install(|| parallel.fill_in_order(&slices, Some((&orders, shards))));
        assert_eq!(parallel.tags, sequential.tags);
    }
}
