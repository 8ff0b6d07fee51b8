//! The one hasher of the machine's maps whose keys are addresses, sectors,
//! threads or blocks. No adversary chooses those keys, so a keyed hash
//! (the standard library's SipHash, 3% of `transposeSmem`'s host
//! instructions when it hashed the L2 model's sectors) buys nothing; a
//! multiply-rotate mix does.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use indexmap::IndexMap;

/// A multiply-rotate mix of the words written.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    /// The high half folded into the low one: a product's high bits depend
    /// on every bit of the key and its low bits only on the key's low bits,
    /// and the tables pick buckets by the low bits (word addresses, all
    /// multiples of 8, would otherwise share three of them).
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(29) ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type BuildKeyHasher = BuildHasherDefault<KeyHasher>;

/// An insertion-ordered map with [`KeyHasher`], for maps whose order is
/// seen (applied, merged, reported).
pub(crate) type FastIndexMap<K, V> = IndexMap<K, V, BuildKeyHasher>;

/// A map with [`KeyHasher`], for maps that are only looked up.
pub(crate) type FastHashMap<K, V> = HashMap<K, V, BuildKeyHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn word_addresses_spread_over_the_low_bits() {
        // 4096 consecutive 8-byte words, as a table masking the low 12
        // bits sees them: a random hash reaches about 2,590 of the 4096
        // buckets, the product alone (its low 3 bits always 0) 512.
        let build = BuildKeyHasher::default();
        let mut buckets = std::collections::HashSet::new();
        for word in 0..4096u64 {
            buckets.insert(build.hash_one(0x7000_0000 + word * 8) & 4095);
        }
        assert!(buckets.len() > 2000, "{} buckets of 4096", buckets.len());
    }
}
