//! `gops verify`'s batches: prize sets of a layer gathered in order while the slices
//! below that they read, each counted once, weigh at most a limit together, so that a
//! batch fits the verifier's cache and its memory follows the budget.

use std::collections::HashMap;

/// Prize sets re-solved together at most: neighbours in colex order share the slices
/// below, and a batch keeps the threads busy.
pub const SLICES_PER_BATCH: usize = 64;

/// A batch ready to be checked: its prize ranks, ascending, and every slice below they
/// read, by prize rank.
pub type Ready<T> = (Vec<u32>, HashMap<u32, T>);

/// The batch being gathered. A prize set joins while the batch has fewer than
/// [`SLICES_PER_BATCH`] and the weight of its slices below stays within `limit`; a prize
/// set alone may weigh more.
pub struct Batch<T> {
    limit: u64,
    ranks: Vec<u32>,
    below: HashMap<u32, (T, u64)>,
    weight: u64,
}

impl<T: Clone> Batch<T> {
    pub fn new(limit: u64) -> Batch<T> {
        Batch {
            limit,
            ranks: Vec::new(),
            below: HashMap::new(),
            weight: 0,
        }
    }

    /// Which of `dependencies` the batch does not hold yet: what to load for
    /// [`Batch::add`].
    pub fn missing(&self, dependencies: &[u32]) -> Vec<u32> {
        dependencies
            .iter()
            .copied()
            .filter(|d| !self.below.contains_key(d))
            .collect()
    }

    /// Adds the prize set of `rank`, which reads `dependencies`; `loaded` holds those
    /// that [`Batch::missing`] named, each with its weight. When the prize set does not
    /// fit, the batch gathered so far is returned, to be checked, and a new one starts
    /// with this prize set and its slices below.
    pub fn add(
        &mut self,
        rank: u32,
        dependencies: &[u32],
        loaded: Vec<(u32, T, u64)>,
    ) -> Option<Ready<T>> {
        let added: u64 = loaded.iter().map(|(_, _, weight)| weight).sum();
        let full = self.ranks.len() == SLICES_PER_BATCH;
        let ready = if !self.ranks.is_empty() && (full || self.weight + added > self.limit) {
            let kept: Vec<(u32, (T, u64))> = dependencies
                .iter()
                .filter_map(|d| self.below.get(d).map(|entry| (*d, entry.clone())))
                .collect();
            let ready = self.take();
            for (d, entry) in kept {
                self.weight += entry.1;
                self.below.insert(d, entry);
            }
            Some(ready)
        } else {
            None
        };
        for (d, slice, weight) in loaded {
            if self.below.insert(d, (slice, weight)).is_none() {
                self.weight += weight;
            }
        }
        self.ranks.push(rank);
        ready
    }

    /// The last batch, if it holds a prize set.
    pub fn finish(mut self) -> Option<Ready<T>> {
        (!self.ranks.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> Ready<T> {
        self.weight = 0;
        let below = std::mem::take(&mut self.below)
            .into_iter()
            .map(|(d, (slice, _))| (d, slice))
            .collect();
        (std::mem::take(&mut self.ranks), below)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use gops_common::engine::LayerEngine;
    use gops_common::prizes::prize_set_count;

    use super::*;

    /// The batches of layer `k` (ranks `0..slices`) gathered as `verify` gathers them,
    /// each slice below weighing `weights[rank]`; and how many loads that took.
    fn gather(k: u8, slices: u32, weights: &[u64], limit: u64) -> (Vec<Ready<u64>>, usize) {
        let mut batch = Batch::new(limit);
        let (mut ready, mut loads) = (Vec::new(), 0);
        for rank in 0..slices {
            let dependencies: Vec<u32> = LayerEngine::dependency_ranks(rank, k).collect();
            let loaded: Vec<(u32, u64, u64)> = batch
                .missing(&dependencies)
                .into_iter()
                .map(|d| (d, weights[d as usize], weights[d as usize]))
                .collect();
            loads += loaded.len();
            ready.extend(batch.add(rank, &dependencies, loaded));
        }
        ready.extend(batch.finish());
        (ready, loads)
    }

    fn needed(k: u8, ranks: &[u32]) -> HashSet<u32> {
        ranks
            .iter()
            .flat_map(|&r| LayerEngine::dependency_ranks(r, k))
            .collect()
    }

    #[test]
    fn batches_cover_the_layer_in_order_within_the_limit() {
        let (n, k) = (12u8, 6u8);
        let slices = prize_set_count(n, k) as u32;
        let mut x = 7u64;
        let weights: Vec<u64> = (0..prize_set_count(n, k - 1))
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                1 + (x >> 40) % 1000
            })
            .collect();
        let weigh =
            |ranks: &[u32]| -> u64 { needed(k, ranks).iter().map(|&d| weights[d as usize]).sum() };
        let heaviest = (0..slices).map(|r| weigh(&[r])).max().unwrap();
        let limits = [0, heaviest / 2, heaviest, 3 * heaviest, 40_000, u64::MAX];
        for limit in limits {
            let (split, loads) = gather(k, slices, &weights, limit);
            let flat: Vec<u32> = split.iter().flat_map(|(r, _)| r.clone()).collect();
            assert_eq!(flat, (0..slices).collect::<Vec<_>>(), "limit {limit}");
            let mut distinct = 0;
            for (i, (ranks, below)) in split.iter().enumerate() {
                assert!(!ranks.is_empty() && ranks.len() <= SLICES_PER_BATCH);
                // every slice below the batch reads, and nothing else, its own weight
                let keys: HashSet<u32> = below.keys().copied().collect();
                assert_eq!(keys, needed(k, ranks), "limit {limit}, batch {i}");
                assert!(below.iter().all(|(d, w)| *w == weights[*d as usize]));
                distinct += below.len();
                let weight = weigh(ranks);
                assert!(
                    ranks.len() == 1 || weight <= limit,
                    "limit {limit}: {weight}"
                );
                // greedy: the next prize set did not fit, or the batch was full
                if let Some((next, _)) = split.get(i + 1) {
                    let mut grown = ranks.clone();
                    grown.push(next[0]);
                    assert!(
                        ranks.len() == SLICES_PER_BATCH || weigh(&grown) > limit,
                        "limit {limit}: batch {i} could have taken {}",
                        next[0]
                    );
                }
            }
            // nothing is loaded twice into a batch (a batch may keep its predecessor's)
            assert!(
                loads <= distinct,
                "limit {limit}: {loads} loads, {distinct} held"
            );
            if limit == u64::MAX {
                assert_eq!(split.len(), (slices as usize).div_ceil(SLICES_PER_BATCH));
            }
            if limit < heaviest {
                assert!(split.iter().any(|(r, _)| r.len() == 1));
            }
        }
    }

    #[test]
    fn layer_one_reads_only_the_terminal_slice() {
        let (split, loads) = gather(1, 13, &[0], 0);
        assert_eq!(split.len(), 1);
        assert_eq!(split[0].0, (0..13).collect::<Vec<u32>>());
        assert_eq!(loads, 1);
    }
}
