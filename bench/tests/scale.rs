//! The short mode of the coordinator's capacity benchmark (`benches/scale.rs`): simulated
//! workers at the slice sizes of the 16-card game lease, fetch and submit through a real
//! coordinator, and everything they handed in is in the store, with the counts adding up.
//! No timing is asserted.

use gops_bench::scale::{Scenario, drive, host, prepare, zero_slice};
use gops_common::engine::LayerEngine;
use gops_db::store::Store;

#[test]
fn simulated_workers_at_16_card_sizes_are_served_and_stored() {
    served_and_stored(false);
}

#[test]
fn simulated_workers_reading_the_db_directory_fetch_nothing() {
    served_and_stored(true);
}

/// Runs the short scenario, the workers fetching or reading the coordinator's directory.
fn served_and_stored(read_from_dir: bool) {
    let scenario = Scenario {
        n: 16,
        k: 5,
        workers: 12,
        threads: 1,
        // fast "solving", so the coordinator, not the sleeps, sets the pace
        games_per_core_second: 5e8,
        shards: 40,
        target_games_per_shard: 200_000,
        worker_cache_bytes: 0,
        read_from_dir,
    };
    let plan = scenario.shard_plan();
    assert!(
        plan.len() > scenario.shards,
        "{} shards of {:?}",
        plan.len(),
        scenario.size()
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let prepared = prepare(&db, &scenario).unwrap();
    assert_eq!(prepared.slice_bytes, zero_slice(16, 5).body.len() as u64);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let report = rt.block_on(async {
        let (url, core) = host(&db, &scenario).await.unwrap();
        let report = drive(&url, &scenario, &db).await.unwrap();
        (report, core)
    });
    let (report, core) = report;
    assert!(report.submissions >= scenario.shards as u64, "{report:?}");
    assert!(report.leases >= report.submissions);
    // the shards handed in are whole shards of the plan, stored in full
    let stored = core.store().stored_ranks(5).unwrap();
    assert_eq!(
        stored.len() as u64,
        report.slices_submitted - report.duplicates,
        "{report:?}"
    );
    assert_eq!(
        report.bytes_submitted,
        report.slices_submitted * prepared.slice_bytes
    );
    let shards_stored = plan
        .iter()
        .filter(|shard| shard.iter().all(|r| stored.contains(r)))
        .count();
    assert!(shards_stored as u64 <= report.submissions);
    assert!(shards_stored >= scenario.shards, "{shards_stored}");
    // every dependency of a submitted slice was fetched at least once, in full size
    let needed = LayerEngine::shard_dependency_ranks(&stored, 5);
    let dependency = zero_slice(16, 4);
    if read_from_dir {
        // located and read as records from the data files, none through the coordinator
        assert_eq!(report.slices_fetched, 0, "{report:?}");
        assert!(report.slices_read >= needed.len() as u64, "{report:?}");
        assert_eq!(
            report.bytes_read,
            report.slices_read * dependency.to_record().len() as u64
        );
    } else {
        assert_eq!(report.locate_calls, 0, "{report:?}");
        assert!(report.slices_fetched >= needed.len() as u64, "{report:?}");
        assert_eq!(
            report.bytes_fetched,
            report.slices_fetched * dependency.body.len() as u64
        );
    }
    let share = report.waiting_share();
    assert!(share > 0.0 && share < 1.0, "{share}");
    // every worker waited for its first shard, and that is part of the waiting
    assert!(
        report.startup_seconds > 0.0 && report.startup_seconds <= report.waiting_seconds,
        "{report:?}"
    );
    assert!(report.steady_waiting_share() <= share);
    drop(core);
    rt.shutdown_background();
    // what was stored reads back as the zero slices handed in
    let store = Store::open_existing(&db).unwrap();
    assert_eq!(
        store.require_slice_bytes(5, stored[0]).unwrap(),
        zero_slice(16, 5)
    );
}
