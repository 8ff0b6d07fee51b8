//! Maps that only grow: for each key the largest value seen. The explore
//! model's views (`weak_memory.rs`) and the race checker's vector clocks
//! (`global_races.rs`) are both of this shape; a multiply-rotate hash
//! serves their keys (addresses, threads, blocks), which no adversary
//! chooses.

use std::hash::{BuildHasherDefault, Hash, Hasher};

use indexmap::IndexMap;

/// Hashes the keys of [`FastMap`]: a multiply-rotate mix.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
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

/// An insertion-ordered map with [`KeyHasher`].
pub(crate) type FastMap<K, V> = IndexMap<K, V, BuildHasherDefault<KeyHasher>>;

/// For each key, the largest value raised to; absent keys are 0.
#[derive(Clone, Debug)]
pub(crate) struct MaxMap<K, V>(FastMap<K, V>);

impl<K, V> Default for MaxMap<K, V> {
    fn default() -> Self {
        MaxMap(FastMap::default())
    }
}

impl<K: Hash + Eq + Copy, V: Ord + Copy + Default> MaxMap<K, V> {
    pub fn get(&self, key: K) -> V {
        self.0.get(&key).copied().unwrap_or_default()
    }

    pub fn raise(&mut self, key: K, value: V) {
        let entry = self.0.entry(key).or_default();
        *entry = (*entry).max(value);
    }

    pub fn join(&mut self, other: &MaxMap<K, V>) {
        for (&key, &value) in &other.0 {
            self.raise(key, value);
        }
    }
}
