//! The one pseudorandom generator of warpsim: SplitMix64 (Steele, Lea and
//! Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014),
//! tiny and the same sequence on every host, for random buffer contents and
//! the explore memory model's choices.

/// SplitMix64 from a seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
