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

/// Bytes per sector and per line.
pub(crate) const SECTOR_BYTES: u64 = 32;
const SECTORS_PER_LINE: u64 = 4;

#[derive(Clone, Copy, Debug, Default)]
struct Line {
    /// The line's number (address / 128) plus one; 0 marks an empty way.
    tag: u64,
    /// Bit `i`: sector `i` of the line is present.
    sectors: u8,
    /// When the line was last used (a counter, larger is later).
    used: u64,
}

/// The tags of one cache.
#[derive(Clone, Debug)]
pub(crate) struct SectorCache {
    sets: usize,
    ways: usize,
    lines: Vec<Line>,
    clock: u64,
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
            lines: Vec::new(),
            clock: 0,
        }
    }

    fn set_of(&mut self, line: u64) -> &mut [Line] {
        // Lines are allocated on first use, so that a cache that is never
        // touched (an SM without global loads) costs nothing.
        if self.lines.is_empty() {
            self.lines = vec![Line::default(); self.sets * self.ways];
        }
        let set = self.set_index(line);
        &mut self.lines[set * self.ways..(set + 1) * self.ways]
    }

    /// Whether `sector` is present, without marking its line used (the L2
    /// as every SM sees it during a time window).
    pub(crate) fn contains(&self, sector: u64) -> bool {
        if self.lines.is_empty() {
            return false;
        }
        let line = sector / SECTORS_PER_LINE;
        let set = self.set_index(line);
        self.lines[set * self.ways..(set + 1) * self.ways]
            .iter()
            .any(|way| way.tag == line + 1 && way.sectors & (1 << (sector % SECTORS_PER_LINE)) != 0)
    }

    fn set_index(&self, line: u64) -> usize {
        // A multiplicative hash spreads strided lines over the sets, as the
        // hardware's address hashing does.
        (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize % self.sets
    }

    /// Whether `sector` (an address / 32) is present, marking its line used.
    pub(crate) fn lookup(&mut self, sector: u64) -> bool {
        self.clock += 1;
        let clock = self.clock;
        let line = sector / SECTORS_PER_LINE;
        let bit = 1u8 << (sector % SECTORS_PER_LINE);
        let set = self.set_of(line);
        match set.iter_mut().find(|way| way.tag == line + 1) {
            Some(way) => {
                way.used = clock;
                way.sectors & bit != 0
            }
            None => false,
        }
    }

    /// Makes `sector` present, allocating its line over the least recently
    /// used one of its set.
    pub(crate) fn fill(&mut self, sector: u64) {
        self.clock += 1;
        let clock = self.clock;
        let line = sector / SECTORS_PER_LINE;
        let bit = 1u8 << (sector % SECTORS_PER_LINE);
        let set = self.set_of(line);
        if let Some(way) = set.iter_mut().find(|way| way.tag == line + 1) {
            way.sectors |= bit;
            way.used = clock;
            return;
        }
        // The first empty way, else the least recently used (the empty
        // ways have `used` 0, so the minimum finds them first).
        if let Some(victim) = set.iter_mut().min_by_key(|way| way.used) {
            *victim = Line {
                tag: line + 1,
                sectors: bit,
                used: clock,
            };
        }
    }
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
}
