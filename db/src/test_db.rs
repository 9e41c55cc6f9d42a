//! Solved dbs for unit tests (this crate's and the arena's): a game solved in memory, its slices stored and
//! its layers completed (and so sealed) as a solve stores and completes them.

use std::path::Path;

use gops_common::checksum::Digest;
use gops_common::engine::SolvedSlice;
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_common::solution::InMemorySolution;

use crate::read::RevealedGame;
use crate::store::{LayerRecord, Store};

/// The db at `path` with layers 1 to `complete` of the `n`-card game stored and complete,
/// through the writer's handle, which is returned (still holding the db).
pub fn solved_store(path: &Path, n: u8, objective: Objective, complete: u8) -> Store {
    let solved = InMemorySolution::solve(n, objective).unwrap();
    let store = Store::open_or_create(path, n, objective).unwrap();
    for k in 1..=complete {
        let slices: Vec<SolvedSlice> = solved.layers[usize::from(k)]
            .iter()
            .enumerate()
            .map(|(rank, slice)| SolvedSlice {
                prize_rank: rank as u32,
                slice: slice.clone(),
                max_gap: 0.0,
                games: 0,
            })
            .collect();
        store.put_slices(k, &slices).unwrap();
        let size = LayerSize::of(n, k, objective);
        let digests: Vec<Digest> = slices.iter().map(|s| s.to_bytes().digest).collect();
        let record = LayerRecord::complete(&size, &digests, 0.0, 0, 0);
        store.complete_layer(&record).unwrap();
    }
    store
}

/// Every bit of a revealed game's answer: value, gap and both strategies.
pub fn revealed_bits(game: &RevealedGame) -> Vec<u64> {
    let mut all = vec![game.value.to_bits(), game.gap.to_bits()];
    all.extend(game.strategy_a.iter().map(|p| p.to_bits()));
    all.extend(game.strategy_b.iter().map(|p| p.to_bits()));
    all
}
