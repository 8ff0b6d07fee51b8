//! The shared-memory bank arbiter: how many wavefronts one warp-level shared-memory access costs.
//!
//! Shared memory is split into banks. In one *wavefront* each bank can deliver one distinct
//! word, so a warp-level request whose lanes ask one bank for several different words is served
//! over several wavefronts. This crate counts those wavefronts for one request, together with
//! the *ideal* count (what the same number of active lanes would need without any conflict).
//! The difference, never below zero, is the number of bank conflicts.
//!
//! The counts correspond to these profiler metrics:
//!
//! - Nsight Compute: "L1 Wavefronts Shared" ([`Wavefronts::wavefronts`]), "L1 Wavefronts Shared
//!   Ideal" ([`Wavefronts::ideal`]) and "L1 Wavefronts Shared Excessive"
//!   ([`Wavefronts::conflicts`]); the hardware counters behind them are
//!   `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld` and `..._op_st`.
//! - nvprof (older GPUs): `shared_ld_transactions` and `shared_st_transactions` (wavefronts),
//!   and `shared_ld_bank_conflict` and `shared_st_bank_conflict` (conflicts).
//!
//! # Where the rules come from
//!
//! The rules are the ones measured on an NVIDIA H200 (compute capability 9.0) and written down
//! in `reference/bank-rules.md` of the project's shared reference folder, corrected and
//! extended by 5,232 single-warp instructions measured on an H100 (`tests/data/h100`,
//! `hardware/README.md`): random and targeted masks and addresses for 4-, 8- and 16-byte
//! loads, 8- and 16-byte stores, atomic adds and population-count increments. Where the
//! reference file, the CUDA Programming Guide and a measurement disagree, the measurement wins.
//! In short:
//!
//! - A word is `address / bank_width_bytes`, and its bank is `word % banks`. An access of
//!   `size` bytes touches every word from the one holding its first byte to the one holding
//!   its last byte.
//! - The warp is cut into *phases*, consecutive lane ranges whose accesses together fill one
//!   row of banks: `min(32, banks * bank_width_bytes / size)` lanes. With the Hopper layout
//!   this is the whole warp for 1-, 2- and 4-byte accesses, half-warps for 8-byte accesses and
//!   quarter-warps for 16-byte accesses.
//! - Within a phase, lanes that touch the same word share it (a load broadcasts it; for a
//!   store one lane wins). The phase costs the largest number of distinct words asked of any
//!   single bank. The request costs the sum over its phases; a phase with no active lane costs
//!   nothing. Inactive lanes take no part at all: the H100 gave the same counts whatever
//!   addresses they held.
//! - 8- and 16-byte *loads* may serve two phases in one wavefront. Two adjacent phases (a
//!   whole warp of 8-byte loads, a half-warp of 16-byte loads) take one wavefront when they
//!   fit one together and every pair of lanes (2i, 2i + 1) that are both active asks for one
//!   address; otherwise each phase counts on its own. The four phases of a 16-byte load take
//!   one wavefront only when every active lane asks for one address and at most 16 lanes are
//!   active. So a uniform 8-byte load is 1 wavefront, 8(l/2) is 1 and 8(l%16) is 2; a uniform
//!   16-byte load is 2 wavefronts with the whole warp active and 1 with 16 lanes; a 16-byte
//!   uniform *store* takes 4: merging is a read-side effect. This replaces the "pair
//!   exception" of bank-rules.md (the phase doubles when every pair of the warp shares), which
//!   charged 2 wavefronts to 8-byte loads with partial masks that the H100 served in 1, and
//!   too few to pair-shared patterns that conflict.
//! - Atomics never merge: every active lane is its own access, even when several lanes name
//!   the same address, so 32 lanes on one address take 32 wavefronts. A population-count
//!   increment ([`AccessKind::PopcIncrement`], ptxas's `ATOMS.POPC.INC` for `atomicAdd(p, 1)`
//!   with the result unused) is served like a load: lanes on one word share it.
//! - Ideal wavefronts are `ceil(active_lanes * size / (banks * bank_width_bytes))`, at least 1
//!   when any lane is active, and never more than the wavefronts: a uniform 16-byte load has 2
//!   ideal wavefronts, not 4 (this held for every one of the 5,232 H100 measurements). A
//!   request with no active lane costs 0 and has ideal 0.
//!
//! # Where the model goes beyond the measurements
//!
//! The measurements cover only one layout (32 banks of 4 bytes) and only naturally aligned
//! accesses, so some behaviour is extrapolated and may be wrong on real hardware:
//!
//! - The rule for 8- and 16-byte loads is not the whole truth. On the H100 it gives the measured
//!   count for every 8-byte load in which no pair of active lanes differs, and never fewer
//!   wavefronts than measured; but the H100 sometimes serves in one wavefront a warp whose
//!   active pairs differ (26 of 1,056 distinct 8-byte cases, where the model charges 2), for a
//!   reason these measurements did not reveal. For 16-byte loads the rule matches every case
//!   with all lanes active and 612 of 688 distinct cases overall (the old rules: 521); the
//!   rest differ both ways.
//! - Configurable banks are an extrapolation. The phase size for another layout follows the
//!   same "one full row of banks per phase" rule; for 8-byte banks (the eight-byte mode of
//!   Kepler GPUs) this gives the whole warp for 8-byte accesses and half-warps for 16-byte
//!   accesses, which was not measured; the merging of phases follows the same rule by the
//!   number of phases.
//! - Only 4-byte atomics and increments were measured. An 8-byte atomic uses the 8-byte phase
//!   size (half-warps with 4-byte banks) and each lane is counted once against the bank of every
//!   word its access touches; other atomic sizes follow the same rule.
//! - A misaligned access (which real hardware rejects) is still counted, as the span of words
//!   it touches, so that the simulator can report a cost before it reports the fault.
//!
//! # Matrix loads and stores
//!
//! `ldmatrix` and `stmatrix` (PTX ISA 9.7.14.5.15 and 9.7.14.5.16) move 8x8 matrices of 16-bit
//! elements: each of the 8 lanes `8i .. 8i + 7` gives the address of one 16-byte row of matrix
//! `i`, for 1, 2 or 4 matrices. [`BankArbiter::matrix_request`] serves each matrix's 8 rows as
//! one phase, by the same max rule as a 16-byte access (rows on one word share it), and sums
//! the phases: measured on an H200 (bank-rules.md: x1 rows 16 bytes apart 1 wavefront, 128
//! bytes apart 8; x4 4 and 32; the XOR swizzle 4; stmatrix x4 4 and 32) and on an H100
//! (`programs/tensor/hardware/ncu`: rows 32, 64 and 128 bytes apart took 2, 4 and 8
//! wavefronts per matrix, for `ldmatrix` and for the `LDSM` that `wmma.load` becomes). The
//! ideal is one wavefront per matrix with 32 banks of 4 bytes (its 128 bytes fill one row of
//! banks), and in general `ceil(matrices * 128 / (banks * bank_width_bytes))`.

#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

/// The number of lanes in a warp.
const WARP_LANES: u32 = 32;

/// The largest bank count a [`BankConfig`] may have; banks are tracked in a 64-bit mask.
const MAX_BANKS: usize = 64;

/// The number of index bits of the word table used to find repeated words within a phase.
const WORD_TABLE_BITS: u32 = 9;

/// The number of slots of that word table. One phase touches at most 32 lanes times 5 words
/// (a misaligned 16-byte access over 4-byte banks), that is 160 distinct words, so 512 slots
/// keep the table less than a third full and linear probing short.
const WORD_TABLE_SLOTS: usize = 1 << WORD_TABLE_BITS;

/// The layout of the shared-memory banks: how many banks there are and how wide each is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BankConfig {
    /// The number of banks: a power of two from 1 to 64 (32 on every NVIDIA GPU since Fermi).
    pub banks: u32,
    /// The width of one bank in bytes: 4 (every NVIDIA GPU since Fermi) or 8 (the
    /// eight-byte mode of Kepler GPUs).
    pub bank_width_bytes: u32,
}

impl BankConfig {
    /// The layout of Hopper GPUs such as the H100 and H200, on which the rules were measured:
    /// 32 banks of 4 bytes.
    pub const HOPPER: BankConfig = BankConfig {
        banks: 32,
        bank_width_bytes: 4,
    };

    /// Checks that the layout is one this arbiter can model, and says why not if it is not.
    ///
    /// The bank count must be a power of two from 1 to 64, because the bank of a word is
    /// taken from the low bits of the word index and banks are tracked in a 64-bit mask. The
    /// bank width must be 4 or 8 bytes, the only widths NVIDIA hardware has used.
    pub fn validate(&self) -> Result<(), String> {
        if self.banks == 0 || self.banks as usize > MAX_BANKS || !self.banks.is_power_of_two() {
            return Err(format!(
                "the bank count is {}, but it must be a power of two from 1 to {MAX_BANKS}: the bank \
                 of a word is taken from the low bits of its index, and the arbiter tracks banks \
                 in a 64-bit mask",
                self.banks
            ));
        }
        if self.bank_width_bytes != 4 && self.bank_width_bytes != 8 {
            return Err(format!(
                "the bank width is {} bytes, but it must be 4 bytes (every NVIDIA GPU since \
                 Fermi) or 8 bytes (the eight-byte mode of Kepler GPUs)",
                self.bank_width_bytes
            ));
        }
        Ok(())
    }
}

/// What a warp-level shared-memory request does, which decides whether lanes may share words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A read (`ld.shared`). Lanes reading the same word share one read of it (broadcast), and
    /// the pair exception for 8- and 16-byte accesses applies.
    Load,
    /// A write (`st.shared`). Lanes writing the same word share it (one lane wins), but the
    /// pair exception does not apply.
    Store,
    /// A read-modify-write (`atom.shared`, `red.shared`). Lanes never share: every active lane
    /// is its own access, even when several lanes name the same address.
    Atomic,
    /// A population-count increment (ptxas's ATOMS.POPC.INC, which `atomicAdd(p, 1)` on
    /// shared memory becomes when its result is unused): the lanes that name one word are
    /// served as one operation, so lanes share words as in a load, over the whole warp.
    PopcIncrement,
}

/// The cost of one warp-level shared-memory request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wavefronts {
    /// The wavefronts the hardware needs (Nsight Compute: "L1 Wavefronts Shared").
    pub wavefronts: u32,
    /// The wavefronts the same number of active lanes would need without any bank conflict
    /// (Nsight Compute: "L1 Wavefronts Shared Ideal").
    pub ideal: u32,
}

impl Wavefronts {
    /// The bank conflicts of the request (Nsight Compute: "L1 Wavefronts Shared Excessive"):
    /// wavefronts minus ideal, or zero when a request needs fewer wavefronts than its ideal
    /// (as a broadcast load can).
    #[inline]
    pub fn conflicts(&self) -> u32 {
        self.wavefronts.saturating_sub(self.ideal)
    }
}

/// A reusable bank arbiter. It holds scratch space so that [`BankArbiter::request`], which
/// runs for every warp-level shared-memory access the simulator executes, never allocates.
///
/// The scratch tables are stamped with a generation number that advances once per phase, so
/// that starting a phase never has to clear them: an entry whose stamp is not the current
/// generation counts as empty.
#[derive(Clone)]
pub struct BankArbiter {
    /// The layout this arbiter models.
    config: BankConfig,
    /// `banks - 1`: the bank of a word is `word & bank_mask` because `banks` is a power of two.
    bank_mask: u32,
    /// `log2(bank_width_bytes)`: the word of an address is `address >> width_shift`.
    width_shift: u32,
    /// `banks * bank_width_bytes`: the bytes one wavefront can deliver without a conflict.
    row_bytes: u32,
    /// The generation of the phase being counted; stamps equal to it mark live entries.
    generation: u32,
    /// The generation in which each word-table slot was last filled.
    word_stamps: [u32; WORD_TABLE_SLOTS],
    /// The word held by each word-table slot, meaningful only when its stamp is current.
    word_keys: [u32; WORD_TABLE_SLOTS],
    /// The generation in which each bank's counter was last written.
    bank_stamps: [u32; MAX_BANKS],
    /// How many accesses each bank must serve in the current phase, meaningful only when the
    /// bank's stamp is current.
    bank_counts: [u32; MAX_BANKS],
}

impl std::fmt::Debug for BankArbiter {
    /// Shows the layout only; the scratch tables carry no meaning between requests.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("BankArbiter")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl BankArbiter {
    /// Creates an arbiter for the given bank layout.
    ///
    /// # Panics
    ///
    /// Panics with the message of [`BankConfig::validate`] when the layout is not valid; check
    /// user-supplied layouts with `validate` first.
    pub fn new(config: BankConfig) -> Self {
        if let Err(reason) = config.validate() {
            panic!("invalid shared-memory bank layout: {reason}");
        }
        BankArbiter {
            config,
            bank_mask: config.banks - 1,
            width_shift: config.bank_width_bytes.trailing_zeros(),
            row_bytes: config.banks * config.bank_width_bytes,
            generation: 0,
            word_stamps: [0; WORD_TABLE_SLOTS],
            word_keys: [0; WORD_TABLE_SLOTS],
            bank_stamps: [0; MAX_BANKS],
            bank_counts: [0; MAX_BANKS],
        }
    }

    /// The bank layout this arbiter models.
    #[inline]
    pub fn config(&self) -> BankConfig {
        self.config
    }

    /// Counts the wavefronts of one warp-level shared-memory request.
    ///
    /// `addresses[lane]` is the byte offset in the block's shared window for lane `lane`; only
    /// lanes whose bit is set in `active` take part, and the addresses of the other lanes are
    /// ignored. `size` is the bytes per thread: 1, 2, 4, 8 or 16.
    ///
    /// # Panics
    ///
    /// Panics when `size` is not 1, 2, 4, 8 or 16, because no shared-memory instruction moves
    /// another amount per thread.
    #[inline]
    pub fn request(
        &mut self,
        kind: AccessKind,
        size: u32,
        active: u32,
        addresses: &[u32; 32],
    ) -> Wavefronts {
        assert!(
            matches!(size, 1 | 2 | 4 | 8 | 16),
            "a shared-memory access moves 1, 2, 4, 8 or 16 bytes per thread, not {size}"
        );
        if active == 0 {
            return Wavefronts::default();
        }

        let lanes_per_phase = (self.row_bytes / size).clamp(1, WARP_LANES);
        let wavefronts = if kind == AccessKind::Load && size >= 8 {
            self.wide_load_wavefronts(size, lanes_per_phase, 0, WARP_LANES, active, addresses)
        } else {
            // Lanes never merge in an atomic, so each lane counts against its banks on its own.
            let merge = kind != AccessKind::Atomic;
            let mut wavefronts = 0;
            let mut phase_start = 0;
            while phase_start < WARP_LANES {
                let phase_lanes = active & phase_lane_mask(phase_start, lanes_per_phase);
                if phase_lanes != 0 {
                    wavefronts +=
                        self.phase_wavefronts(merge, size, phase_start, phase_lanes, addresses);
                }
                phase_start += lanes_per_phase;
            }
            wavefronts
        };

        // The bytes of all active lanes, spread over as few full rows of banks as possible,
        // but never more than the request needs: a broadcast is ideal as it is.
        let active_bytes = active.count_ones() * size;
        let ideal = active_bytes.div_ceil(self.row_bytes).min(wavefronts).max(1);
        Wavefronts { wavefronts, ideal }
    }

    /// Counts the wavefronts of one `ldmatrix` or `stmatrix` of `matrices` (1, 2 or 4) 8x8
    /// matrices of 16-bit elements.
    ///
    /// `row_addresses[lane]` is the byte offset in the block's shared window of the 16-byte row
    /// that lane `lane` gives: lanes `8i .. 8i + 7` give the rows of matrix `i`, and the other
    /// lanes' addresses are ignored. Only lanes whose bit is set in `active` take part; a matrix
    /// none of whose row lanes is active costs nothing. Each matrix is one phase, costing the
    /// largest number of distinct words asked of one bank (rows that share a word share it).
    ///
    /// # Panics
    ///
    /// Panics when `matrices` is not 1, 2 or 4, the only counts the instructions have.
    pub fn matrix_request(
        &mut self,
        matrices: u32,
        active: u32,
        row_addresses: &[u32; 32],
    ) -> Wavefronts {
        assert!(
            matches!(matrices, 1 | 2 | 4),
            "ldmatrix and stmatrix move 1, 2 or 4 matrices, not {matrices}"
        );
        const ROW_BYTES: u32 = 16;
        const ROWS_PER_MATRIX: u32 = 8;
        let row_lanes = active & phase_lane_mask(0, matrices * ROWS_PER_MATRIX);
        if row_lanes == 0 {
            return Wavefronts::default();
        }
        let mut wavefronts = 0;
        for matrix in 0..matrices {
            let phase_start = matrix * ROWS_PER_MATRIX;
            let phase_lanes = row_lanes & phase_lane_mask(phase_start, ROWS_PER_MATRIX);
            if phase_lanes != 0 {
                wavefronts +=
                    self.phase_wavefronts(true, ROW_BYTES, phase_start, phase_lanes, row_addresses);
            }
        }
        // Each matrix is 128 bytes however its rows lie; a matrix whose rows repeat one word
        // can cost less than that, so the ideal never exceeds the wavefronts.
        let matrix_bytes = matrices * ROW_BYTES * ROWS_PER_MATRIX;
        let ideal = matrix_bytes.div_ceil(self.row_bytes).min(wavefronts).max(1);
        Wavefronts { wavefronts, ideal }
    }

    /// Counts the wavefronts of the lanes `first_lane .. first_lane + lanes` of an 8- or
    /// 16-byte load. A range of one natural phase costs what its banks ask; a larger range
    /// is served in a single wavefront when its banks allow it and its lanes qualify (see
    /// [`range_may_share_a_wavefront`]); otherwise its two halves are counted apart.
    fn wide_load_wavefronts(
        &mut self,
        size: u32,
        lanes_per_phase: u32,
        first_lane: u32,
        lanes: u32,
        active: u32,
        addresses: &[u32; 32],
    ) -> u32 {
        let range_lanes = active & phase_lane_mask(first_lane, lanes);
        if range_lanes == 0 {
            return 0;
        }
        let range_cost = self.phase_wavefronts(true, size, first_lane, range_lanes, addresses);
        if lanes <= lanes_per_phase {
            return range_cost;
        }
        if range_cost == 1
            && range_may_share_a_wavefront(
                size,
                self.row_bytes,
                lanes / lanes_per_phase,
                range_lanes,
                addresses,
            )
        {
            return 1;
        }
        let half = lanes / 2;
        self.wide_load_wavefronts(size, lanes_per_phase, first_lane, half, active, addresses)
            + self.wide_load_wavefronts(
                size,
                lanes_per_phase,
                first_lane + half,
                half,
                active,
                addresses,
            )
    }

    /// Counts the wavefronts of one phase, given its first lane and the non-empty mask of its
    /// active lanes (as a mask over the whole warp).
    #[inline]
    fn phase_wavefronts(
        &mut self,
        merge: bool,
        size: u32,
        phase_start: u32,
        lanes: u32,
        addresses: &[u32; 32],
    ) -> u32 {
        // The fast path looks only at the lanes from the phase's first lane to its last
        // active lane, with the mask shifted to match.
        let phase_end = WARP_LANES - lanes.leading_zeros();
        let phase_addresses = &addresses[phase_start as usize..phase_end as usize];
        if self.phase_fits_one_wavefront(merge, size, lanes >> phase_start, phase_addresses) {
            return 1;
        }

        let generation = self.next_generation();
        let mut busiest_bank = 0;
        let mut remaining = lanes;
        while remaining != 0 {
            let lane = remaining.trailing_zeros() as usize;
            remaining &= remaining - 1;
            let (first_word, last_word) = self.word_span(addresses[lane], size);
            for word in first_word..last_word + 1 {
                // A word already asked of its bank in this phase is served by the same
                // wavefront, unless the access is an atomic, where every lane stands alone.
                if merge && !self.insert_word(word, generation) {
                    continue;
                }
                busiest_bank = busiest_bank.max(self.count_bank_access(word, generation));
            }
        }
        busiest_bank
    }

    /// The fast path of a phase: says whether the phase certainly needs exactly one wavefront.
    /// When it says no, the full count decides, so it only has to be right when it says yes.
    /// `addresses[i]` belongs to the lane of bit `i` of `lanes`, a non-empty mask.
    ///
    /// It judges naturally aligned accesses only, because their words are easy to place: an
    /// aligned access of `size` bytes covers `max(1, size / bank_width_bytes)` consecutive
    /// words starting at a multiple of that count, so with at least that many banks its words
    /// lie in distinct, consecutive banks that never wrap around the last bank. The phase then
    /// needs one wavefront when every active lane of a merging access names the same address,
    /// or when no two lanes touch the same bank, which is exactly when the union of the lanes'
    /// bank bits has one bit per word touched. The loop visits every lane of the slice without
    /// branching on whether it is active, so that it stays short and predictable.
    #[inline]
    fn phase_fits_one_wavefront(
        &self,
        merge: bool,
        size: u32,
        lanes: u32,
        addresses: &[u32],
    ) -> bool {
        let words_per_access = (size >> self.width_shift).max(1);
        if words_per_access > self.config.banks {
            return false;
        }
        let access_bank_bits = (1u64 << words_per_access) - 1;
        let first_address = addresses[lanes.trailing_zeros() as usize];
        let mut address_bits = 0u32;
        let mut banks_seen = 0u64;
        let mut uniform = true;
        for (lane, &address) in addresses.iter().enumerate() {
            let active = lanes & (1u32 << lane) != 0;
            let first_bank = (address >> self.width_shift) & self.bank_mask;
            address_bits |= if active { address } else { 0 };
            banks_seen |= if active {
                access_bank_bits << first_bank
            } else {
                0
            };
            uniform &= !active || address == first_address;
        }
        let aligned = address_bits & (size - 1) == 0;
        let banks_distinct = banks_seen.count_ones() == lanes.count_ones() * words_per_access;
        aligned && ((merge && uniform) || banks_distinct)
    }

    /// The first and last word touched by an access of `size` bytes at `address`.
    #[inline]
    fn word_span(&self, address: u32, size: u32) -> (u32, u32) {
        let first_word = address >> self.width_shift;
        // The last byte is computed in 64 bits so that an access ending past 4 GiB cannot wrap
        // around; shifted right by at least 2, the word index fits in 32 bits again.
        let last_byte = u64::from(address) + u64::from(size) - 1;
        let last_word = (last_byte >> self.width_shift) as u32;
        (first_word, last_word)
    }

    /// Records `word` in the current phase's word table. Returns true when the word was not
    /// there yet, that is, when it is a new distinct word for its bank.
    #[inline]
    fn insert_word(&mut self, word: u32, generation: u32) -> bool {
        // Fibonacci hashing spreads strided word indices (the usual shared-memory patterns)
        // over the table.
        let mut slot = (word.wrapping_mul(0x9E37_79B9) >> (32 - WORD_TABLE_BITS)) as usize;
        loop {
            if self.word_stamps[slot] != generation {
                self.word_stamps[slot] = generation;
                self.word_keys[slot] = word;
                return true;
            }
            if self.word_keys[slot] == word {
                return false;
            }
            // The table never holds more than 160 of its 512 slots, so probing ends quickly.
            slot = (slot + 1) & (WORD_TABLE_SLOTS - 1);
        }
    }

    /// Adds one access to the bank of `word` in the current phase and returns how many
    /// accesses that bank now has to serve.
    #[inline]
    fn count_bank_access(&mut self, word: u32, generation: u32) -> u32 {
        let bank = (word & self.bank_mask) as usize;
        let count = if self.bank_stamps[bank] == generation {
            self.bank_counts[bank] + 1
        } else {
            self.bank_stamps[bank] = generation;
            1
        };
        self.bank_counts[bank] = count;
        count
    }

    /// Starts a new phase: advances the generation so that every scratch entry reads as empty.
    #[inline]
    fn next_generation(&mut self) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // After 2^32 phases the stamps would repeat, so the tables are cleared once and
            // generation 0 stays reserved for "never written".
            self.word_stamps.fill(0);
            self.bank_stamps.fill(0);
            self.generation = 1;
        }
        self.generation
    }
}

/// The mask of the lanes `start .. start + count` of a warp.
#[inline]
fn phase_lane_mask(start: u32, count: u32) -> u32 {
    let lanes = if count >= WARP_LANES {
        u32::MAX
    } else {
        (1u32 << count) - 1
    };
    lanes << start
}

/// Whether the active lanes `lanes` of a range of `phases` natural phases of an 8- or 16-byte
/// load may be served together, given that their banks fit one wavefront. Two phases may share a
/// wavefront when every pair of lanes (2i, 2i + 1) that are both active asks for one address
/// (measured on an H100: a uniform or 8(l/2) 8-byte load is 1 wavefront, 8(l%16) is 2); four
/// phases (a 16-byte load's whole warp) only when all active lanes ask for one address and their
/// data fits twice a row of banks (a uniform 16-byte load of at most 16 lanes is 1 wavefront, of
/// more lanes 2).
#[inline]
fn range_may_share_a_wavefront(
    size: u32,
    row_bytes: u32,
    phases: u32,
    lanes: u32,
    addresses: &[u32; 32],
) -> bool {
    if phases <= 2 {
        return pairs_share_addresses(lanes, addresses);
    }
    let first = addresses[lanes.trailing_zeros() as usize];
    let mut remaining = lanes;
    while remaining != 0 {
        let lane = remaining.trailing_zeros() as usize;
        remaining &= remaining - 1;
        if addresses[lane] != first {
            return false;
        }
    }
    lanes.count_ones() * size <= 2 * row_bytes
}

/// Whether every pair of lanes (2i, 2i + 1) that are both active asks for a single address; a
/// pair with one or no active lane asks for at most one address and so counts as sharing.
#[inline]
fn pairs_share_addresses(active: u32, addresses: &[u32; 32]) -> bool {
    const EVEN_LANES: u32 = 0x5555_5555;
    // Bit 2i is set when both lane 2i and lane 2i + 1 are active.
    let mut full_pairs = active & (active >> 1) & EVEN_LANES;
    while full_pairs != 0 {
        let even_lane = full_pairs.trailing_zeros() as usize;
        full_pairs &= full_pairs - 1;
        if addresses[even_lane] != addresses[even_lane + 1] {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests;
