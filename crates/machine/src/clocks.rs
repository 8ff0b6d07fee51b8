//! Maps that only grow: for each key the largest value seen. The explore
//! model's views (`weak_memory.rs`) and the race checker's vector clocks
//! (`global_races.rs`) are both of this shape; `hashing.rs`'s hasher
//! serves their keys (addresses, threads, blocks).

use std::hash::Hash;

use crate::hashing::FastIndexMap;

/// For each key, the largest value raised to; absent keys are 0.
#[derive(Clone, Debug)]
pub(crate) struct MaxMap<K, V>(FastIndexMap<K, V>);

impl<K, V> Default for MaxMap<K, V> {
    fn default() -> Self {
        MaxMap(FastIndexMap::default())
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
