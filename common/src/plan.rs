//! The size of a layer (slices, states, matrix games) and its split into shards of
//! prize sets: pure functions over plain data, shared by the coordinator, the status of a
//! db and the estimates of a run.

use crate::objective::Objective;
use crate::pattern::PatternIndex;
use crate::prizes::{prize_set_count, prize_unrank};
use crate::reach::Reach;

/// Matrix games per shard the planner aims for: large enough that per-shard overhead
/// (a store batch, a progress update) is negligible, small enough to interrupt quickly.
pub const TARGET_GAMES_PER_SHARD: u64 = 4_000_000;

/// A layer is not split into shards smaller than this, however many are wanted: each
/// shard costs a few round trips and a flushed write.
pub const MIN_GAMES_PER_SHARD: u64 = 250_000;

/// The size of a layer: slices and the work they hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerSize {
    pub k: u8,
    pub slices: usize,
    /// (pattern, prize set) states, both orientations.
    pub states: u64,
    /// Values a dense layout would store: canonical patterns x live score differences
    /// (for `win`, those that can occur: [`Reach`]).
    pub dense_values: u64,
    /// Matrix games to solve for the whole layer (symmetric `points` states are free).
    pub games: u64,
}

impl LayerSize {
    pub fn of(n: u8, k: u8, objective: Objective) -> LayerSize {
        let patterns = PatternIndex::new(n, k).count() as u64;
        // exactly one pattern per layer is its own mirror: every card held by both
        let canonical = patterns.div_ceil(2);
        let slices = prize_set_count(n, k);
        // `win`: the score differences that can occur (the only ones solved and stored)
        let widths: u64 = (0..slices as u32)
            .map(|rank| match objective {
                Objective::Points => 1,
                Objective::Win => Reach::of(n, prize_unrank(rank, k)).count() as u64,
            })
            .sum();
        // the symmetric pattern is free for `points` and solved for d > 0 only for `win`
        // (the reachable set is symmetric and holds 0)
        let symmetric_values: u64 = match objective {
            Objective::Points => 0,
            Objective::Win => (widths - slices as u64) / 2,
        };
        let solved_values = (canonical - 1) * widths + symmetric_values;
        LayerSize {
            k,
            slices,
            states: patterns * slices as u64,
            dense_values: canonical * widths,
            // an upper bound for `win`, whose bisection skips most decided differences
            games: solved_values * u64::from(k),
        }
    }

    /// Mean games per slice.
    pub fn games_per_slice(&self) -> u64 {
        (self.games / self.slices.max(1) as u64).max(1)
    }
}

/// Splits the prize ranks still to do into shards of consecutive ranks (colex order:
/// neighbours share dependency slices) of about [`TARGET_GAMES_PER_SHARD`] games, and no
/// fewer than `min_shards` shards when there are enough ranks (to keep every worker busy),
/// unless that would make shards smaller than `min_games` games.
pub fn plan_shards(
    missing: &[u32],
    games_per_slice: u64,
    min_shards: usize,
    min_games: u64,
) -> Vec<Vec<u32>> {
    plan_shards_sized(
        missing,
        games_per_slice,
        min_shards,
        min_games,
        TARGET_GAMES_PER_SHARD,
    )
}

/// [`plan_shards`] with another target of games per shard.
pub fn plan_shards_sized(
    missing: &[u32],
    games_per_slice: u64,
    min_shards: usize,
    min_games: u64,
    target_games: u64,
) -> Vec<Vec<u32>> {
    if missing.is_empty() {
        return Vec::new();
    }
    let by_work = (target_games / games_per_slice.max(1)).max(1) as usize;
    let least = (min_games / games_per_slice.max(1)).max(1) as usize;
    let by_count = missing.len().div_ceil(min_shards.max(1));
    let size = by_work.min(by_count).max(least).max(1);
    missing.chunks(size).map(<[u32]>::to_vec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_missing_rank_once_in_order() {
        let missing: Vec<u32> = (0..1000).filter(|r| r % 7 != 3).collect();
        for (gps, min) in [(1, 1), (1_000_000, 4), (50_000_000, 2), (10, 64)] {
            let shards = plan_shards(&missing, gps, min, 1);
            let flat: Vec<u32> = shards.concat();
            assert_eq!(flat, missing);
            assert!(shards.iter().all(|s| !s.is_empty()));
        }
        assert!(plan_shards(&[], 5, 3, 1).is_empty());
        // a smaller target gives more, smaller shards
        assert_eq!(
            plan_shards_sized(&missing, 1000, 1, 1, 10_000).len(),
            missing.len().div_ceil(10)
        );
        // small layers are not cut finer than the minimum work per shard
        assert_eq!(
            plan_shards(&missing, 10, 64, 1000).len(),
            missing.len().div_ceil(100)
        );
        // a slice heavier than the target gets a shard of its own
        assert!(
            plan_shards(&missing, u64::MAX, 1, MIN_GAMES_PER_SHARD)
                .iter()
                .all(|s| s.len() == 1)
        );
    }

    #[test]
    fn layer_sizes_of_the_13_card_game() {
        let size = LayerSize::of(13, 8, Objective::Points);
        assert_eq!(size.slices, 1287);
        assert_eq!(size.states, 117_295 * 1287);
        assert_eq!(size.dense_values, 58_648 * 1287);
        assert_eq!(size.games, 58_647 * 1287 * 8);
    }
}
