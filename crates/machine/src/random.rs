//! The one pseudorandom generator of warpsim: SplitMix64 (Steele, Lea and
//! Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014),
//! tiny and the same sequence on every host, for random buffer contents and
//! the explore memory model's choices.

/// SplitMix64 from a seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

/// What SplitMix64 adds to its state at each step.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl SplitMix64 {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The `index`th (from 0) 64 random bits of SplitMix64 from `seed`, without
/// the ones before: the state only ever adds [`GAMMA`], so each output can
/// be made on its own (a large random buffer is filled in parallel).
pub fn split_mix64_at(seed: u64, index: u64) -> u64 {
    SplitMix64(seed.wrapping_add(index.wrapping_mul(GAMMA))).next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_output_can_be_made_on_its_own() {
        let mut sequence = SplitMix64(42);
        for index in 0..100 {
            assert_eq!(split_mix64_at(42, index), sequence.next());
        }
    }
}
