//! Books against the full dbs they were made of: every state below the book's layers,
//! solved on demand, and every strategy after an upcard, bit for bit; bad books and bad
//! requests refused with nothing written.

use std::path::{Path, PathBuf};

use gops_common::objective::Objective;
use gops_common::rules::{play_round, random_game_states};
use gops_common::state::GameState;
use gops_common::subtree::{SubtreeEstimate, SubtreeRoot};
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::on_demand::{Fault, LimitNames, OnDemandError, OnDemandLimits};
use super::*;
use crate::read::{CachedReader, QueryError, SharedReader};
use crate::sealed::record_file_name;
use crate::test_db::revealed_bits as bits;

/// A complete, sealed db of the `n`-card game in `dir`, opened to read.
fn full_db(dir: &Path, n: u8, objective: Objective) -> Book {
    let path = dir.join("full");
    drop(crate::test_db::solved_store(&path, n, objective, n));
    Book::open(&path, &ReadOptions::default()).unwrap()
}

/// The book at `path` opened with `options`.
fn opened(path: &Path, options: ReadOptions) -> Book {
    Book::open(path, &options).unwrap()
}

/// Options that let a book solve at most `max_games` on demand within `memory_bytes`.
fn limited(max_games: u64, memory_bytes: u64) -> ReadOptions {
    ReadOptions {
        limits: OnDemandLimits {
            max_games,
            memory_bytes,
            ..OnDemandLimits::default()
        },
        ..ReadOptions::default()
    }
}

/// States along random games with fewer than `below` cards left, each with an upcard.
fn states_below(n: u8, below: u8, count: usize, seed: u64) -> Vec<(GameState, u8)> {
    let mut rng = StdRng::seed_from_u64(seed);
    random_game_states(n, count, &mut rng, |s| s.k() < below)
}

fn book_of(full: &Book, dir: &Path, from: u8) -> (PathBuf, Book) {
    let out = dir.join(format!("book-{from}"));
    let written = write_book(full.store(), from, &out).unwrap();
    assert_eq!(written.from_layer, from);
    assert_eq!(written.layers.len(), usize::from(full.n()));
    let book = opened(&out, ReadOptions::default());
    (out, book)
}

/// The book's answers for `states` against the full db's, bit for bit, through the
/// one-shot queries and a cached reader.
fn assert_same_answers(full: &Book, book: &Book, states: &[(GameState, u8)]) {
    let mut reader = CachedReader::cached(book, 1 << 24);
    for (state, upcard) in states {
        let want = full.value(state).unwrap().to_bits();
        assert_eq!(book.value(state).unwrap().to_bits(), want, "{state:?}");
        assert_eq!(reader.value(state).unwrap().to_bits(), want, "{state:?}");
        let want = bits(&full.revealed(state, *upcard).unwrap());
        assert_eq!(bits(&book.revealed(state, *upcard).unwrap()), want);
        assert_eq!(bits(&reader.revealed(state, *upcard).unwrap()), want);
    }
}

#[test]
fn books_of_the_9_card_win_game_answer_every_state_below_them_as_the_full_db() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 9, Objective::Win);
    for from in [9, 7, 5] {
        let (_, book) = book_of(&full, dir.path(), from);
        assert_eq!(book.store().book().unwrap().from_layer, from);
        for k in 1..from {
            assert!(
                book.store().layer(k).unwrap().is_none(),
                "layer {k} is not stored"
            );
        }
        let states = states_below(9, from, 1_000, u64::from(from));
        let layers: std::collections::BTreeSet<u8> = states.iter().map(|(s, _)| s.k()).collect();
        assert_eq!(
            layers.len(),
            usize::from(from) - 1,
            "every layer below {from}"
        );
        assert_same_answers(&full, &book, &states);
        // the book's own layers read as stored
        let start = GameState::initial(9);
        assert_eq!(
            book.value(&start).unwrap().to_bits(),
            full.value(&start).unwrap().to_bits()
        );
        assert!(book.below().unwrap().solves() > 0);
    }
}

#[test]
fn books_of_the_10_card_points_game_answer_every_state_below_them_as_the_full_db() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 10, Objective::Points);
    for from in [8, 6] {
        let (_, book) = book_of(&full, dir.path(), from);
        let states = states_below(10, from, 1_000, u64::from(from) + 10);
        assert_same_answers(&full, &book, &states);
    }
}

#[test]
fn threads_asking_for_one_subtree_at_once_share_one_solve() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 8, Objective::Win);
    let (_, book) = book_of(&full, dir.path(), 6);
    let shared = SharedReader::new(book, 1 << 24);
    // a state of the lowest stored layer: every thread asks for its game after one
    // upcard, which reads that game's subtree alone
    let mut rng = StdRng::seed_from_u64(3);
    let (state, upcard) = random_game_states(8, 1, &mut rng, |s| s.k() == 6)[0];
    let answers: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let shared = &shared;
                scope.spawn(move || bits(&shared.reader().revealed(&state, upcard).unwrap()))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let solver = shared.book().below().unwrap();
    assert_eq!(solver.solves(), 1, "one solve");
    let want = bits(&full.revealed(&state, upcard).unwrap());
    assert!(answers.iter().all(|got| *got == want));
    // each other upcard: its own subtree, once
    for other in state.prizes.iter().filter(|&u| u != upcard) {
        let want = bits(&full.revealed(&state, other).unwrap());
        assert_eq!(
            bits(&shared.reader().revealed(&state, other).unwrap()),
            want
        );
        assert_eq!(
            bits(&shared.reader().revealed(&state, other).unwrap()),
            want
        );
    }
    assert_eq!(solver.solves(), 6, "one solve per upcard");
}

#[test]
fn a_subtree_over_the_limit_or_the_budget_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 7, Objective::Win);
    let (path, book) = book_of(&full, dir.path(), 7);
    let state = play_round(&GameState::initial(7), 7, 1, 2);
    let estimate = book.below().unwrap().estimate(&state);
    let budget = on_demand::DEFAULT_BUDGET_BYTES;
    let book = opened(&path, limited(estimate.games - 1, budget));
    match book.value(&state) {
        Err(QueryError::OnDemand(OnDemandError::OverLimit { k: 6, games, .. })) => {
            assert_eq!(games, estimate.games)
        }
        other => panic!("{other:?}"),
    }
    let book = opened(&path, limited(estimate.games, estimate.bytes - 1));
    let err = book.value(&state).unwrap_err();
    assert!(matches!(
        err,
        QueryError::OnDemand(OnDemandError::OverBudget { .. })
    ));
    assert!(err.to_string().contains("raise --memory-mb"), "{err}");
    assert_eq!(book.below().unwrap().solves(), 0, "nothing solved");
    // the advice in the words of the front end that set the limits
    let mut options = limited(estimate.games - 1, budget);
    options.limits.names = LimitNames {
        games: "max_on_demand_games",
        memory: "memory_mb",
    };
    let err = opened(&path, options).value(&state).unwrap_err();
    assert!(
        err.to_string().contains("raise max_on_demand_games,"),
        "{err}"
    );
    let book = opened(&path, limited(estimate.games, estimate.bytes));
    let want = full.value(&state).unwrap();
    assert_eq!(book.value(&state).unwrap().to_bits(), want.to_bits());
    assert!(book.below().unwrap().kept_bytes() <= estimate.bytes);
}

#[test]
fn bad_requests_and_damaged_books_are_refused_and_nothing_is_changed() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 6, Objective::Points);
    let out = dir.path().join("book");
    assert!(matches!(
        write_book(full.store(), 0, &out),
        Err(BookError::NoSuchLayer { .. })
    ));
    assert!(matches!(
        write_book(full.store(), 7, &out),
        Err(BookError::NoSuchLayer { .. })
    ));
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), b"mine").unwrap();
    let err = write_book(full.store(), 4, &out).unwrap_err();
    assert!(matches!(err, BookError::OutExists(_)) && err.is_usage());
    assert_eq!(std::fs::read(out.join("keep.txt")).unwrap(), b"mine");
    // an incomplete db
    let partial = dir.path().join("partial");
    drop(crate::test_db::solved_store(
        &partial,
        6,
        Objective::Points,
        4,
    ));
    let partial = Store::open_existing(&partial).unwrap();
    let err = write_book(&partial, 3, &dir.path().join("b2")).unwrap_err();
    assert!(matches!(err, BookError::Incomplete { k: 5, .. }), "{err}");
    assert!(!dir.path().join("b2").exists());
    // a book is not solved into
    let (path, book) = book_of(&full, dir.path(), 4);
    drop(book);
    let err = Store::open_or_create(&path, 6, Objective::Points)
        .err()
        .unwrap();
    assert!(matches!(err, StoreError::IsBook(_)), "{err}");
    // a book of a book keeps its layers or fewer
    let book = opened(&path, ReadOptions::default());
    assert!(matches!(
        write_book(book.store(), 3, &dir.path().join("b3")),
        Err(BookError::BelowBook { has: 4, .. })
    ));
    let (_, smaller) = book_of(&book, dir.path(), 5);
    let layers = |b: &Book| b.store().book().unwrap().layers.clone();
    assert_eq!(layers(&smaller), layers(&book));
    drop(book);
    // a damaged record or a truncated data file: an error naming the layer
    let record = path.join(record_file_name(5));
    let json = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        json.replace("\"max_gap\": 0.0", "\"max_gap\": 1.0"),
    )
    .unwrap();
    let err = Store::open_existing(&path).err().unwrap();
    assert!(err.to_string().contains("layer 5"), "{err}");
    std::fs::write(&record, json).unwrap();
    let data = path.join(full.store().data_file_name(6));
    let bytes = std::fs::read(&data).unwrap();
    std::fs::write(&data, &bytes[..bytes.len() / 2]).unwrap();
    let err = Store::open_existing(&path).err().unwrap();
    assert!(err.to_string().contains("layer 6"), "{err}");
}

#[test]
fn verify_of_a_book_re_solves_its_lowest_layer_on_demand_and_a_wrong_value_fails_it() {
    use crate::verify::{VerifyOptions, verify};
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 8, Objective::Win);
    let (path, book) = book_of(&full, dir.path(), 6);
    let options = VerifyOptions {
        fraction: 0.05,
        layers: 1..=8,
        seed: 9,
        cache_bytes: 1 << 26,
        on_demand_states: 12,
    };
    let report = verify(&book, &options, &|_| {}).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.on_demand_layers, (1..6).collect::<Vec<u8>>());
    assert!(report.incomplete_layers.is_empty());
    let lowest = report.layers.iter().find(|l| l.k == 6).unwrap();
    assert_eq!((lowest.states_checked, lowest.mismatches), (12, 0));
    assert!(lowest.checksum_matches);
    assert!(
        report
            .layers
            .iter()
            .any(|l| l.k == 7 && l.states_checked > 0)
    );
    let faulty = ReadOptions {
        fault: Fault::FlipRootValues,
        ..ReadOptions::default()
    };
    let book = opened(&path, faulty);
    let report = verify(&book, &options, &|_| {}).unwrap();
    assert!(!report.is_clean());
    assert_eq!(
        report.mismatch_count, 12,
        "every state re-solved on demand differs"
    );
}

/// The game after an upcard of a state in the book's lowest layer reads the layer below
/// it: solved as the subtree of that game alone, its answer the full db's, bit for bit,
/// and the states after it answered from the same subtree.
#[test]
fn the_game_of_a_state_in_the_lowest_layer_is_solved_from_its_upcards_subtree() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective, from) in [(9, Objective::Win, 6), (9, Objective::Points, 6)] {
        let full = full_db(&dir.path().join(format!("{objective}")), n, objective);
        let (_, book) = book_of(&full, &dir.path().join(format!("{objective}")), from);
        let solver = book.below().unwrap();
        let mut rng = StdRng::seed_from_u64(61);
        let states = random_game_states(n, 40, &mut rng, |s| s.k() == from);
        for (state, upcard) in &states {
            let want = bits(&full.revealed(state, *upcard).unwrap());
            assert_eq!(bits(&book.revealed(state, *upcard).unwrap()), want);
            let subtree = solver.subtree_after(state, *upcard).unwrap();
            assert!(subtree.shape.holds_game_after(state, *upcard));
            // the rounds after it: every child of the state after that upcard is held
            let whole = solver.estimate(state).games;
            assert_eq!(subtree.shape.root.upcard, Some(*upcard));
            assert!(subtree.games < whole, "{} of {whole}", subtree.games);
            let (a, b) = (state.a.to_vec(), state.b.to_vec());
            let before = solver.solves();
            for (&x, &y) in a.iter().zip(b.iter().rev()) {
                let child = play_round(state, *upcard, x, y);
                let want = full.value(&child).unwrap().to_bits();
                assert_eq!(book.value(&child).unwrap().to_bits(), want);
            }
            assert_eq!(
                solver.solves(),
                before,
                "answered from the upcard's subtree"
            );
        }
    }
}

/// A state of the lowest layer whose whole subtree is over the limit is re-solved from
/// its upcards' games, as `gops verify` does: the full db's value, bit for bit, and a
/// wrong value (the fault hook) is seen.
#[test]
fn a_stored_value_is_re_solved_game_by_game_when_its_whole_subtree_is_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective, from) in [(8, Objective::Win, 6), (8, Objective::Points, 6)] {
        let full = full_db(&dir.path().join(format!("{objective}")), n, objective);
        let (path, book) = book_of(&full, &dir.path().join(format!("{objective}")), from);
        let budget = on_demand::DEFAULT_BUDGET_BYTES;
        let mut rng = StdRng::seed_from_u64(53);
        let states = random_game_states(n, 16, &mut rng, |s| s.k() == from);
        for (state, _) in &states {
            let want = full.value(state).unwrap();
            // a limit every game's subtree is within, and the whole subtree over
            let estimates = book.below().unwrap();
            let per_game = state
                .prizes
                .iter()
                .map(|u| estimates.estimate_after(state, u).games)
                .max()
                .unwrap();
            let whole = estimates.estimate(state).games;
            assert!(per_game < whole, "{per_game} v {whole}");
            let game_by_game = opened(&path, limited(per_game, budget));
            let solver = game_by_game.below().unwrap();
            let before = solver.solves();
            let (value, gap) = solver.resolve_stored(state).unwrap();
            assert_eq!(value.to_bits(), want.to_bits(), "{state:?}");
            assert!((0.0..1e-9).contains(&gap), "{gap}");
            assert_eq!(
                solver.solves() - before,
                u64::from(state.k()),
                "one subtree per upcard"
            );
            let faulty = ReadOptions {
                fault: Fault::FlipRootValues,
                ..limited(per_game, budget)
            };
            let faulty = opened(&path, faulty);
            let (flipped, _) = faulty.below().unwrap().resolve_stored(state).unwrap();
            assert_eq!(flipped.to_bits(), want.to_bits() ^ 1);
            // within the limit, the whole subtree gives the same bits
            let whole_at_once = opened(&path, limited(whole, budget));
            let solver = whole_at_once.below().unwrap();
            assert_eq!(
                solver.resolve_stored(state).unwrap().0.to_bits(),
                want.to_bits()
            );
        }
    }
}

/// An observer that stops the solve at its first progress report until the test says go.
struct PauseAtFirstProgress {
    at: std::sync::Mutex<Option<std::sync::mpsc::Sender<()>>>,
    go: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl crate::book::on_demand::SolveObserver for PauseAtFirstProgress {
    fn started(&self, _: &SubtreeRoot, _: &SubtreeEstimate) {}
    fn advanced(&self, _: &SubtreeRoot, _: u64, _: u64) {
        if let Some(at) = self.at.lock().unwrap().take() {
            at.send(()).unwrap();
            self.go.lock().unwrap().recv().unwrap();
        }
    }
    fn finished(&self, _: &SubtreeRoot, _: Result<(u64, std::time::Duration), &OnDemandError>) {}
}

#[test]
fn a_solve_under_way_is_listed_with_its_progress_until_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let full = full_db(dir.path(), 8, Objective::Points);
    let (path, _) = book_of(&full, dir.path(), 7);
    let (at_tx, at_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel();
    let observed = ReadOptions {
        observer: Some(std::sync::Arc::new(PauseAtFirstProgress {
            at: std::sync::Mutex::new(Some(at_tx)),
            go: std::sync::Mutex::new(go_rx),
        })),
        ..ReadOptions::default()
    };
    let shared = SharedReader::new(opened(&path, observed), 1 << 24);
    let solver = shared.book().below().unwrap();
    assert!(solver.under_way().is_empty());
    let (state, upcard) = states_below(8, 7, 1, 5)[0];
    std::thread::scope(|scope| {
        let asked = scope.spawn(|| bits(&shared.reader().revealed(&state, upcard).unwrap()));
        at_rx.recv().unwrap();
        let listed = solver.under_way();
        assert_eq!(listed.len(), 1, "{listed:?}");
        let root = SubtreeRoot::of(
            &state,
            Objective::Points,
            &gops_common::layout::Layouts::new(8).get(state.k()),
        );
        assert_eq!(listed[0].root, root, "the subtree of the state asked");
        assert!(listed[0].done <= listed[0].total && listed[0].total > 0);
        go_tx.send(()).unwrap();
        let want = bits(&full.revealed(&state, upcard).unwrap());
        assert_eq!(asked.join().unwrap(), want);
    });
    assert!(solver.under_way().is_empty(), "none once it has ended");
    assert_eq!(solver.solves(), 1);
}
