//! `gops verify`: re-checks a db (its layer checksums, and a sample or all of its states
//! re-solved bit for bit from the layer below) and reports what it found, within a memory
//! budget. Exit 1 on any mismatch.

use gops_common::budget::{available_memory, verify_cache};
use gops_db::verify::{VerifyOptions, verify};

use crate::args::VerifyArgs;
use crate::failure::Failure;

pub fn run(args: VerifyArgs) -> Result<(), Failure> {
    if !(args.fraction > 0.0 && args.fraction <= 1.0) {
        return Err(Failure::Usage(format!(
            "--fraction must be in (0, 1], got {}",
            args.fraction
        )));
    }
    // the budget is checked from the manifest alone, before the store is opened: a
    // refusal leaves the db's files as they were
    let threads = crate::args::threads_or_all_cores(args.threads);
    let cache_for = |n, objective| {
        verify_cache(
            "--memory-mb",
            args.memory_mb,
            n,
            objective,
            threads,
            available_memory(),
        )
        .map_err(Failure::Usage)
    };
    let cache_bytes = match gops_db::store::Store::peek_manifest(&args.db) {
        Ok(Some(manifest)) => Some(cache_for(manifest.n, manifest.objective)?),
        _ => None,
    };
    let on_demand = crate::args::OnDemandArgs {
        memory_mb: args.memory_mb,
        max_on_demand_games: args.max_on_demand_games,
    };
    let (store, layers) = crate::db_open::open_checked(&args.db, &on_demand, |n| {
        crate::input::parse_layers(args.layers.as_deref(), n)
    })?;
    let n = store.n();
    let cache_bytes = match cache_bytes {
        Some(bytes) => bytes,
        None => cache_for(n, store.objective())?,
    };
    let options = VerifyOptions {
        fraction: args.fraction,
        layers,
        seed: args.seed.unwrap_or_else(crate::input::clock_seed),
        cache_bytes: usize::try_from(cache_bytes).unwrap_or(usize::MAX),
        on_demand_states: args.on_demand_states,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Failure::Runtime(format!("cannot start {threads} threads: {e}")))?;
    let slices: u64 = options
        .layers
        .clone()
        .map(|k| gops_common::prizes::prize_set_count(n, k) as u64)
        .sum();
    let bar = crate::progress::count_bar(slices, "verify");
    let report = pool
        .install(|| verify(&store, &options, &|done| bar.inc(done)))
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    bar.finish_and_clear();
    if args.json {
        crate::out!(
            "{}",
            serde_json::to_string(&report).expect("a report serialises")
        );
    } else {
        crate::out!("{}", report.text(threads));
    }
    if report.layers.is_empty() {
        return Err(Failure::Runtime(format!(
            "nothing verified: no layer asked for is complete in {} (not complete: layers {:?}); solve it first",
            args.db.display(),
            report.incomplete_layers
        )));
    }
    if report.is_clean() {
        Ok(())
    } else {
        Err(Failure::Runtime(format!(
            "{} mismatches, {} layer checksums wrong: the db does not hold what its layers below give",
            report.mismatch_count,
            report.layers.iter().filter(|l| !l.checksum_matches).count()
        )))
    }
}
