//! What a layer's dependency fetches come to when workers keep a cache and the
//! coordinator hands shards out in its real lease order: the bytes that go out of one
//! coordinator, the figure that sizes its network for a large cluster.
//!
//! [`simulate_layer_fetches`] drives the coordinator's own [`LeaseLedger`] with simulated
//! workers that finish their shards in turn at one speed (each holds one lease, done within a
//! round of one second; then it stores its slices and asks again), each with a least-recently-used
//! [`RankCache`] of dependency slices. No clock, no network, no store: the lease order
//! and the caches are the only things modelled, so the result is a count of slices
//! fetched, deterministic for given inputs. Real workers differ in speed, which changes
//! which shard each one gets next; the model says what the lease order makes of the
//! caches, not what a particular run will do.
//!
//! The coordinator reads the same slices again: to re-solve a sample of a handed-in
//! slice's states it loads the slice's dependency slices from its store through its own
//! cache of slices below (`--verify-fraction` above 0), for every slice or for a share of
//! them (`--verify-slices`). The model counts those loads too, the slices handed in in
//! the order the simulated workers finish and the share chosen by a draw seeded by the
//! rank (the coordinator draws afresh; a seeded draw keeps the count deterministic).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use gops_common::engine::LayerEngine;
use gops_proto::ids::{LeaseId, WorkerId};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use gops_common::plan::LayerSize;
use gops_coordinator::cluster::ledger::{Assignment, LeaseLedger};
use gops_coordinator::config::CoordinatorConfig;

/// The prize ranks a worker has cached, least recently used dropped first. Each touch
/// costs O(log capacity).
pub struct RankCache {
    capacity: usize,
    /// rank -> when last used
    used: HashMap<u32, u64>,
    /// when last used -> rank: the oldest first
    by_age: BTreeMap<u64, u32>,
    clock: u64,
}

impl RankCache {
    pub fn new(capacity: usize) -> RankCache {
        RankCache {
            capacity,
            used: HashMap::new(),
            by_age: BTreeMap::new(),
            clock: 0,
        }
    }

    /// Whether `rank` was cached; it is cached (and most recently used) afterwards.
    pub fn touch(&mut self, rank: u32) -> bool {
        if self.capacity == 0 {
            return false;
        }
        self.clock += 1;
        let previous = self.used.insert(rank, self.clock);
        if let Some(age) = previous {
            self.by_age.remove(&age);
        }
        self.by_age.insert(self.clock, rank);
        if self.used.len() > self.capacity
            && let Some((_, oldest)) = self.by_age.pop_first()
        {
            self.used.remove(&oldest);
        }
        previous.is_some()
    }

    /// Ranks cached now.
    pub fn len(&self) -> usize {
        self.used.len()
    }

    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }
}

/// The dependency fetches of one layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerFetches {
    pub shards: usize,
    /// Dependency slices fetched, cache misses only.
    pub fetched: u64,
    /// Dependency slices fetched with no cache: every shard's own, once per shard.
    pub uncached: u64,
    /// Dependency slices the coordinator's checks load from its store (cache misses of
    /// its cache of slices below), re-solving a sample of every handed-in shard.
    pub check_loads: u64,
}

/// How the coordinator's checks read the layer below, in the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelChecks {
    /// Slices its cache of slices below holds.
    pub cache_slices: usize,
    /// Share of the slices whose states are re-solved (`--verify-slices`).
    pub slice_share: f64,
}

impl ModelChecks {
    /// Whether the slice of `rank` is one whose states are re-solved: a draw seeded by the
    /// rank below the share.
    fn chooses(&self, rank: u32) -> bool {
        StdRng::seed_from_u64(u64::from(rank)).random::<f64>() < self.slice_share
    }
}

/// The dependency slices of layer `k`'s shards that `workers` workers fetch, each with a
/// cache of `cache_slices` slices of layer `k - 1`, when the coordinator's lease ledger
/// hands out `shards` and the workers finish in turn; and those that the coordinator's
/// `checks` load (see the module's text).
pub fn simulate_layer_fetches(
    shards: Vec<Vec<u32>>,
    k: u8,
    workers: usize,
    cache_slices: usize,
    checks: ModelChecks,
) -> LayerFetches {
    let workers = workers.max(1);
    let mut result = LayerFetches {
        shards: shards.len(),
        ..LayerFetches::default()
    };
    // a lease never expires here: every simulated worker finishes what it takes
    let far = Duration::from_secs(365 * 24 * 3600);
    let mut ledger = LeaseLedger::new(shards, far, LeaseId(1)).with_max_per_worker(1);
    // one round, one second: every worker finishes its shard within a round, so no shard
    // is ever out for twice the mean and no speculative copy is made
    let start = Instant::now();
    let mut caches: Vec<RankCache> = (0..workers).map(|_| RankCache::new(cache_slices)).collect();
    let mut held: Vec<Option<Vec<u32>>> = vec![None; workers];
    let mut check_cache = RankCache::new(checks.cache_slices);
    for round in 0u64.. {
        let now = start + Duration::from_secs(round);
        let mut progressed = false;
        for (w, (cache, lease)) in caches.iter_mut().zip(&mut held).enumerate() {
            if let Some(ranks) = lease.take() {
                // the check loads the dependencies of the chosen slices in their order
                for &rank in ranks.iter().filter(|&&r| checks.chooses(r)) {
                    result.check_loads += LayerEngine::dependency_ranks(rank, k)
                        .filter(|&r| !check_cache.touch(r))
                        .count() as u64;
                }
                for rank in ranks {
                    ledger.slice_stored(rank, now);
                }
                progressed = true;
            }
            match ledger.assign(WorkerId(w as u64 + 1), now) {
                Assignment::Shard { prize_ranks, .. } => {
                    let needed = LayerEngine::shard_dependency_ranks(&prize_ranks, k);
                    result.uncached += needed.len() as u64;
                    result.fetched +=
                        needed.into_iter().filter(|&r| !cache.touch(r)).count() as u64;
                    *lease = Some(prize_ranks);
                    progressed = true;
                }
                Assignment::Wait => {}
                Assignment::LayerDone => return result,
            }
        }
        if !progressed {
            // every shard is leased to someone and nobody finished: cannot happen with
            // leases that do not expire, but never loop
            return result;
        }
    }
    unreachable!("the rounds outlast any layer")
}

/// The shards of a whole layer of `size`, as a coordinator with `config` plans them.
pub fn shard_plan(size: &LayerSize, config: &CoordinatorConfig) -> Vec<Vec<u32>> {
    let missing: Vec<u32> = (0..size.slices as u32).collect();
    gops_coordinator::cluster::open_layer::plan_layer_shards(&missing, size, config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::objective::Objective;

    /// Every slice checked, with a cache of `cache_slices`.
    fn all(cache_slices: usize) -> ModelChecks {
        ModelChecks {
            cache_slices,
            slice_share: 1.0,
        }
    }

    fn plan(n: u8, k: u8) -> Vec<Vec<u32>> {
        shard_plan(
            &LayerSize::of(n, k, Objective::Points),
            &CoordinatorConfig::default(),
        )
    }

    /// Every dependency rank that some shard of the plan reads.
    fn distinct_dependencies(plan: &[Vec<u32>], k: u8) -> u64 {
        let all: Vec<u32> = plan.iter().flatten().copied().collect();
        LayerEngine::shard_dependency_ranks(&all, k).len() as u64
    }

    #[test]
    fn the_cache_forgets_the_least_recently_used() {
        let mut cache = RankCache::new(2);
        assert!(!cache.touch(1));
        assert!(!cache.touch(2));
        assert!(cache.touch(1)); // 2 is now the oldest
        assert!(!cache.touch(3)); // drops 2
        assert_eq!(cache.len(), 2);
        assert!(cache.touch(1));
        assert!(!cache.touch(2));
        assert!(!RankCache::new(0).touch(5));
    }

    #[test]
    fn without_a_cache_every_shard_fetches_all_its_dependencies() {
        let shards = plan(12, 6);
        let per_shard: u64 = shards
            .iter()
            .map(|s| LayerEngine::shard_dependency_ranks(s, 6).len() as u64)
            .sum();
        let fetches = simulate_layer_fetches(shards.clone(), 6, 8, 0, all(0));
        assert_eq!(fetches.shards, shards.len());
        assert_eq!(fetches.uncached, per_shard);
        assert_eq!(fetches.fetched, per_shard);
        // nor does the coordinator's check: each slice's six dependencies, every time
        let slices = shards.iter().map(Vec::len).sum::<usize>() as u64;
        assert_eq!(fetches.check_loads, 6 * slices);
    }

    #[test]
    fn one_worker_with_room_for_everything_fetches_each_slice_once() {
        let shards = plan(12, 6);
        let distinct = distinct_dependencies(&shards, 6);
        let fetches = simulate_layer_fetches(shards, 6, 1, usize::MAX, all(usize::MAX));
        assert_eq!(fetches.fetched, distinct);
        assert!(fetches.uncached > distinct);
        assert_eq!(fetches.check_loads, distinct);
    }

    #[test]
    fn caches_cut_fetches_and_more_workers_share_less() {
        let shards = plan(13, 7);
        let distinct = distinct_dependencies(&shards, 7);
        let few = simulate_layer_fetches(shards.clone(), 7, 4, 200, all(200));
        let many = simulate_layer_fetches(shards.clone(), 7, 32, 200, all(200));
        assert!(few.fetched < few.uncached, "{few:?}");
        assert!(few.fetched >= distinct && many.fetched >= distinct);
        assert!(many.fetched > few.fetched, "{few:?} {many:?}");
        // the coordinator's cache saves loads, and with room for the whole layer below it
        // loads each slice once, however many workers hand in
        let slices = shards.iter().map(Vec::len).sum::<usize>() as u64;
        for fetches in [few, many] {
            assert!(fetches.check_loads >= distinct, "{fetches:?}");
            assert!(fetches.check_loads < 7 * slices, "{fetches:?}");
        }
        let roomy = simulate_layer_fetches(shards.clone(), 7, 32, 200, all(usize::MAX));
        assert_eq!(roomy.check_loads, distinct);
        // a tenth of the slices checked: about a tenth of the loads, the fetches unchanged
        let tenth = ModelChecks {
            cache_slices: 200,
            slice_share: 0.1,
        };
        let chosen = shards
            .iter()
            .flatten()
            .filter(|&&r| tenth.chooses(r))
            .count();
        assert!(
            (slices / 20..slices / 5).contains(&(chosen as u64)),
            "{chosen} of {slices}"
        );
        let sampled = simulate_layer_fetches(shards, 7, 32, 200, tenth);
        assert_eq!(sampled.fetched, many.fetched);
        assert!(sampled.check_loads <= 7 * chosen as u64, "{sampled:?}");
        assert!(
            sampled.check_loads * 5 < many.check_loads,
            "{sampled:?} {many:?}"
        );
    }
}
