//! Work done at a window's end in SM order, split among host threads by
//! shard: the SMs' L2 fills, in shards of the L2's sets. Items of
//! different shards never touch the same state, so each shard can take
//! its own items, in their order, on its own thread, and the result is
//! what one pass in order would give.
//!
//! Each SM sorts its batch by shard at the end of its part of the window,
//! in the window's parallel part ([`ShardOrder::sort`]), so each shard
//! then walks only its own items ([`apply_in_shards`]): shards that each
//! scanned every item for their own made the work grow with the number of
//! threads (on the 16-core GPU host the L2 fills of `transposeSmemF_4096`
//! took 126 ms that way, 80 ms sorted, 265 ms on one thread).

use rayon::prelude::*;

/// The items of one batch, their indices sorted by shard (a counting sort;
/// the allocations are kept from window to window).
#[derive(Clone, Debug, Default)]
pub(crate) struct ShardOrder {
    /// Each item's shard.
    shard_of_item: Vec<u32>,
    /// Where each shard's next index goes, during the sort.
    next: Vec<u32>,
    /// Indices into the batch, shard after shard, each shard's in order.
    indices: Vec<u32>,
    /// Where each shard's indices begin in `indices` (and one past the end).
    starts: Vec<u32>,
}

impl ShardOrder {
    /// Sorts the `length` items of a batch into `shards` shards, item
    /// `index` into `shard_of(index)` (below `shards`).
    pub(crate) fn sort(&mut self, length: usize, shards: usize, shard_of: impl Fn(usize) -> usize) {
        self.shard_of_item.clear();
        self.shard_of_item
            .extend((0..length).map(|index| shard_of(index) as u32));
        self.starts.clear();
        self.starts.resize(shards + 1, 0);
        for &shard in &self.shard_of_item {
            self.starts[shard as usize + 1] += 1;
        }
        for shard in 0..shards {
            self.starts[shard + 1] += self.starts[shard];
        }
        self.indices.clear();
        self.indices.resize(length, 0);
        self.next.clone_from(&self.starts);
        for (index, &shard) in self.shard_of_item.iter().enumerate() {
            let next = &mut self.next[shard as usize];
            self.indices[*next as usize] = index as u32;
            *next += 1;
        }
    }

    /// Whether the order is of a batch of `length` items sorted into
    /// `shards` shards (a batch that changed since it was sorted, or was
    /// cleared, must be sorted again).
    pub(crate) fn covers(&self, length: usize, shards: usize) -> bool {
        self.indices.len() == length && self.starts.len() == shards + 1
    }

    /// Forgets the order, as the batch is emptied.
    pub(crate) fn clear(&mut self) {
        self.indices.clear();
        self.starts.clear();
    }

    /// The indices of shard `shard`'s items, in order; none if the batch
    /// was sorted into fewer shards or not at all.
    fn of_shard(&self, shard: usize) -> &[u32] {
        match (self.starts.get(shard), self.starts.get(shard + 1)) {
            (Some(&start), Some(&end)) => &self.indices[start as usize..end as usize],
            _ => &[],
        }
    }
}

/// Calls `apply(state, batch, index)` on every item of `batches` (each a
/// length and its items' [`ShardOrder`], sorted into `states.len()`
/// shards): for each shard, on its `states` entry, its items in the order
/// of all batches, one after another. Runs on the current rayon pool.
pub(crate) fn apply_in_shards<S: Send>(
    states: &mut [S],
    batches: &[(usize, &ShardOrder)],
    apply: impl Fn(&mut S, usize, usize) + Sync,
) {
    states
        .par_iter_mut()
        .enumerate()
        .for_each(|(shard, state)| {
            for (batch, (_, order)) in batches.iter().enumerate() {
                for &index in order.of_shard(shard) {
                    apply(state, batch, index as usize);
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shard_gets_its_items_in_order() {
        let batches: Vec<Vec<u64>> = vec![vec![5, 2, 9, 4], vec![], vec![7, 1, 6]];
        let orders: Vec<ShardOrder> = batches
            .iter()
            .map(|batch| {
                let mut order = ShardOrder::default();
                order.sort(batch.len(), 3, |index| (batch[index] % 3) as usize);
                order
            })
            .collect();
        let sorted: Vec<(usize, &ShardOrder)> = batches
            .iter()
            .zip(&orders)
            .map(|(batch, order)| (batch.len(), order))
            .collect();
        let mut seen: Vec<Vec<u64>> = vec![Vec::new(); 3];
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| {
            apply_in_shards(&mut seen, &sorted, |items, batch, index| {
                items.push(batches[batch][index])
            })
        });
        // Items in the order of all batches: 5 2 9 4 7 1 6.
        assert_eq!(seen[0], vec![9, 6]);
        assert_eq!(seen[1], vec![4, 7, 1]);
        assert_eq!(seen[2], vec![5, 2]);
    }
}
