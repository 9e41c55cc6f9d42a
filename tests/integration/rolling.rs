//! A rolling solve (`gops solve --keep-from-layer K`): interrupted and resumed without
//! the flag, it removes each layer below K once the layer above is sealed, and ends as a
//! book of layers K to N with the full solve's checksums, answering every state as the
//! full db does; a K it cannot keep any more, or outside the game, is refused (exit 2).

use std::path::Path;

use gops_common::rules::random_game_states;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::support::{checksums, gops, gops_ok, snapshot, solve, state_query, status_json, stderr};

/// Whether layer `k`'s files (data, index, sealed record) are in `db`: all or none.
fn has_layer_files(db: &Path, k: u8) -> bool {
    let names = [
        format!("slices-{k:02}.dat"),
        format!("layer-{k:02}.idx"),
        format!("layer-{k:02}.json"),
    ];
    let present: Vec<bool> = names.iter().map(|f| db.join(f).exists()).collect();
    assert!(
        present.iter().all(|&p| p == present[0]),
        "layer {k} of {}: {names:?} present {present:?}",
        db.display()
    );
    present[0]
}

#[test]
fn a_rolling_solve_resumed_ends_as_the_book_of_the_full_solve() {
    // (n, objective, K, slices before the interruption, at most the layers below K)
    for (n, objective, keep, stop) in [(8, "win", 5, "150"), (9, "points", 6, "250")] {
        let dir = tempfile::tempdir().unwrap();
        let (full, rolling) = (dir.path().join("full"), dir.path().join("rolling"));
        solve(&full, n, &["--objective", objective]);
        let (n_arg, keep_arg) = (n.to_string(), keep.to_string());
        let solve_args = |extra: &[&'static str]| {
            let mut args = vec![
                "solve",
                "--n",
                &n_arg,
                "--objective",
                objective,
                "--db",
                rolling.to_str().unwrap(),
                "--no-first-moves",
            ];
            args.extend_from_slice(extra);
            args
        };
        let mut first = solve_args(&["--stop-after-slices", stop]);
        first.extend(["--keep-from-layer", &keep_arg]);
        let out = gops(&first);
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        // interrupted in layer L: the layers below L - 1 removed (the layer above each
        // sealed), L - 1 kept for solving L
        let said = stderr(&out);
        let open: u8 = said
            .split("interrupted in layer ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("{said}"));
        assert!((3..=keep).contains(&open), "{said}");
        for k in 1..open {
            assert_eq!(has_layer_files(&rolling, k), k == open - 1, "layer {k}");
        }
        // resumed without the flag: the db remembers it
        gops_ok(&solve_args(&[]));
        for k in 1..=n {
            assert_eq!(has_layer_files(&rolling, k), k >= keep, "layer {k}");
        }
        // a book of layers K..N with every layer's checksum of the full solve
        assert_eq!(checksums(&rolling), checksums(&full));
        let status = status_json(&rolling);
        assert_eq!(status["book_from_layer"], keep);
        let book = dir.path().join("book");
        gops_ok(&[
            "book",
            "--db",
            full.to_str().unwrap(),
            "--from-layer",
            &keep_arg,
            "--out",
            book.to_str().unwrap(),
        ]);
        assert_eq!(status["layers"], status_json(&book)["layers"]);
        // every layer answered as the full db answers, the removed ones solved on demand
        let mut rng = StdRng::seed_from_u64(7);
        for (state, upcard) in random_game_states(n, 30, &mut rng, |_| true) {
            let hands = (
                &state.a.to_vec()[..],
                &state.b.to_vec()[..],
                &state.prizes.to_vec()[..],
            );
            let diff = i64::from(state.diff);
            assert_eq!(
                state_query(&rolling, hands, diff, Some(upcard)),
                state_query(&full, hands, diff, Some(upcard))
            );
        }
        let out = gops(&["verify", "--db", rolling.to_str().unwrap(), "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));

        // the same command again: complete, nothing solved, the kept layers unchanged
        let kept = |db: &Path| -> Vec<_> {
            snapshot(db)
                .into_iter()
                .filter(|(p, _)| {
                    let name = p.file_name().unwrap().to_string_lossy();
                    name.starts_with("slices-") || name.starts_with("layer-")
                })
                .collect()
        };
        let before = kept(&rolling);
        let mut again = solve_args(&[]);
        again.extend(["--keep-from-layer", &keep_arg]);
        gops_ok(&again);
        assert_eq!(kept(&rolling), before);
        // keeping more layers than are left is refused; so is a layer outside the game
        let lower = (keep - 1).to_string();
        let mut refused = solve_args(&[]);
        refused.extend(["--keep-from-layer", &lower]);
        let out = gops(&refused);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("resume it with --keep-from-layer {keep}")),
            "{}",
            stderr(&out)
        );
        let mut outside = solve_args(&[]);
        outside.extend(["--keep-from-layer", "12"]);
        let out = gops(&outside);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("not a layer of the"),
            "{}",
            stderr(&out)
        );
        assert_eq!(kept(&rolling), before);
    }
}

/// A rolling solve that keeps only the top layer ends by showing its opening as a full
/// solve does: the layer below, which it released, is read as a book reads it (solved
/// on demand), not as missing from the writer's store.
#[test]
fn a_rolling_solve_keeping_only_the_top_layer_shows_the_full_solves_opening() {
    let dir = tempfile::tempdir().unwrap();
    let (full, rolling) = (dir.path().join("full"), dir.path().join("rolling"));
    let opening = |db: &Path, extra: &[&str]| {
        let mut args = vec!["solve", "--n", "6", "--objective", "win"];
        args.extend_from_slice(&["--db", db.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let out = gops_ok(&args);
        // the value and the first bids, before the summary's timings
        out.lines().take(8).collect::<Vec<_>>().join("\n")
    };
    let want = opening(&full, &[]);
    assert!(want.starts_with("value of the game for A: 0"), "{want}");
    assert_eq!(opening(&rolling, &["--keep-from-layer", "6"]), want);
    assert!(!has_layer_files(&rolling, 5), "layer 5 released");
    assert_eq!(checksums(&rolling), checksums(&full));
}
