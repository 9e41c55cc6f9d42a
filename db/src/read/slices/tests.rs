//! Slices read in part answer as whole ones, bit for bit, along random games of small
//! solved dbs (every slice read in part); damage found by a part read is an error.

use std::path::Path;

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::rules::{play_round, turn_up};
use gops_common::state::GameState;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::book::ReadOptions;
use crate::read::{Reader, SharedReader};
use crate::store::StoreError;
use crate::test_db::revealed_bits as bits;

/// A complete db of the `n`-card game at `path`, its slices those of an in-memory solve.
fn solved_store(path: &Path, n: u8, objective: Objective) -> Store {
    crate::test_db::solved_store(path, n, objective, n)
}

/// The complete db of the `n`-card game at `path`, opened to read.
fn solved_book(path: &Path, n: u8, objective: Objective) -> Book {
    drop(solved_store(path, n, objective));
    Book::open(path, &ReadOptions::default()).unwrap()
}

/// Reads records larger than `min_bytes` in part, keeping `cache_bytes`.
fn reads(cache_bytes: usize, min_bytes: u64) -> SliceReads {
    SliceReads::reading_in_part_above(cache_bytes, min_bytes)
}

/// A uniformly random card of `hand`.
fn any_card(hand: CardSet, rng: &mut StdRng) -> u8 {
    hand.iter().nth(rng.random_range(0..hand.len())).unwrap()
}

/// Every state along `games` random games of the `n`-card game, with an upcard each.
fn random_states(n: u8, games: usize, seed: u64) -> Vec<(GameState, u8)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut states = Vec::new();
    for _ in 0..games {
        let mut state = GameState::initial(n);
        while !state.prizes.is_empty() {
            let upcard = turn_up(state.prizes, &mut rng);
            states.push((state, upcard));
            let (a, b) = (any_card(state.a, &mut rng), any_card(state.b, &mut rng));
            state = play_round(&state, upcard, a, b);
        }
    }
    states
}

#[test]
fn part_reads_answer_as_whole_reads_along_random_games() {
    for objective in [Objective::Points, Objective::Win] {
        let dir = tempfile::tempdir().unwrap();
        let book = solved_book(&dir.path().join("db"), 7, objective);
        let mut whole = Reader::new(&book, reads(1 << 30, u64::MAX));
        let mut parts = Reader::new(&book, reads(1 << 30, 0));
        // no cache at all: every lookup reads its table again
        let mut bare = Reader::new(&book, reads(0, 0));
        for (state, upcard) in random_states(7, 40, 11) {
            let want = whole.value(&state).unwrap().to_bits();
            assert_eq!(parts.value(&state).unwrap().to_bits(), want, "{state:?}");
            assert_eq!(bare.value(&state).unwrap().to_bits(), want, "{state:?}");
            let want = bits(&whole.revealed(&state, upcard).unwrap());
            assert_eq!(bits(&parts.revealed(&state, upcard).unwrap()), want);
            assert_eq!(bits(&bare.revealed(&state, upcard).unwrap()), want);
        }
    }
}

#[test]
fn large_records_are_read_in_part_and_small_ones_whole() {
    let dir = tempfile::tempdir().unwrap();
    let book = solved_book(&dir.path().join("db"), 6, Objective::Win);
    let store = book.store();
    let (k, rank) = (4, 5);
    let place = store.record_place(k, rank).unwrap().unwrap();
    let len = u64::from(place.len);
    let at = |min_bytes| SliceSource::load(store, k, rank, min_bytes).unwrap();
    assert!(matches!(at(len - 1), SliceSource::Parts(_)));
    assert!(matches!(at(len), SliceSource::Whole(_)));
    // the terminal layer is never read in part
    assert!(matches!(
        SliceSource::load(store, 0, 0, 0).unwrap(),
        SliceSource::Whole(_)
    ));
    let mut kept = reads(1 << 20, 0);
    assert!(kept.cached(k, rank).is_none());
    kept.slice(&book, k, rank, &|| vec![0]).unwrap();
    assert!(matches!(kept.cached(k, rank), Some(SliceSource::Parts(_))));
}

#[test]
fn the_shared_reader_reading_in_part_answers_as_the_one_shot_queries() {
    let dir = tempfile::tempdir().unwrap();
    let book = solved_book(&dir.path().join("db"), 6, Objective::Win);
    let shared = SharedReader::reading(book, reads(1 << 30, 0));
    for (state, upcard) in random_states(6, 20, 5) {
        let book = shared.book();
        let want = book.value(&state).unwrap().to_bits();
        assert_eq!(shared.reader().value(&state).unwrap().to_bits(), want);
        let want = bits(&book.revealed(&state, upcard).unwrap());
        assert_eq!(
            bits(&shared.reader().revealed(&state, upcard).unwrap()),
            want
        );
    }
}

#[test]
fn damage_found_by_a_part_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let book = solved_book(&path, 6, Objective::Win);
    let store = book.store();
    let (k, rank) = (4u8, 5u32);
    let mut kept = reads(1 << 20, 0);
    let source = SliceSource::load(store, k, rank, 0).unwrap();
    let SliceSource::Parts(part) = &source else {
        panic!("read in part")
    };
    kept.keep(k, rank, &source);
    // a value out of range, written over the first stored value of a pattern
    let p = (0..part.table.shape().patterns)
        .find(|&p| !part.table.values_at(p).is_empty())
        .unwrap();
    let at = part.place.offset + SliceBytes::RECORD_HEADER as u64 + part.table.values_at(p).start;
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path.join(format!("slices-{k:02}.dat")))
        .unwrap();
    file.write_all_at(&2.5f64.to_le_bytes(), at).unwrap();
    let err = kept.slice(&book, k, rank, &|| vec![p]).unwrap_err();
    assert!(
        matches!(
            err,
            QueryError::Store(StoreError::DamagedSlice { k: 4, rank: 5, .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("out of range"), "{err}");
    // the other patterns still read
    let other = (0..part.table.shape().patterns).find(|&q| q != p).unwrap();
    kept.slice(&book, k, rank, &|| vec![other]).unwrap();
    // the data file cut short: the bytes are missing, which is damage too
    file.set_len(part.place.offset + 60).unwrap();
    let damaged =
        |err: &QueryError| matches!(err, QueryError::Store(StoreError::DamagedSlice { .. }));
    let err = kept.slice(&book, k, rank, &|| vec![p]).unwrap_err();
    assert!(damaged(&err), "{err}");
    // a table loaded afresh from a record cut short
    let err = SliceSource::load(store, k, rank, 0).err().unwrap();
    assert!(damaged(&err), "{err}");
}
