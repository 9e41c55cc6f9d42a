//! `gops verify`: re-checks a db (its layer checksums, and a sample or all of its states
//! re-solved bit for bit from the layer below) and reports what it found, within one
//! memory budget: a full db's for the cache of slices below, a book's split in half
//! between that cache and the subtrees its lowest layer solves on demand. Exit 1 on any
//! mismatch.

use gops_common::budget::{available_memory, default_budget, verify_cache};
use gops_db::store::Store;
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
    let manifest = Store::peek_manifest(&args.db).ok().flatten();
    let is_book = manifest.as_ref().is_some_and(|m| m.book.is_some());
    let (cache_mb, on_demand_mb, budget_name) = budget_split(is_book, args.memory_mb);
    let cache_for = |n, objective| {
        verify_cache(
            budget_name,
            cache_mb,
            n,
            objective,
            threads,
            available_memory(),
        )
        .map_err(Failure::Usage)
    };
    let cache_bytes = match &manifest {
        Some(manifest) => Some(cache_for(manifest.n, manifest.objective)?),
        None => None,
    };
    let on_demand = crate::args::OnDemandArgs {
        memory_mb: on_demand_mb,
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

/// One budget of `--memory-mb` MiB (or the default): all of it for the cache of a full
/// db's slices below; a book's split in half between that cache and the subtrees solved
/// on demand. The cache's MiB, the subtrees' MiB, and how a refusal names the cache's.
fn budget_split(is_book: bool, memory_mb: Option<u64>) -> (Option<u64>, Option<u64>, &'static str) {
    const HALF: &str = "half of --memory-mb (a book's other half solves subtrees on demand)";
    match (is_book, memory_mb) {
        (false, mb) => (mb, mb, "--memory-mb"),
        (true, Some(mb)) => (Some(mb / 2), Some((mb - mb / 2).max(1)), HALF),
        (true, None) => {
            let half = (default_budget(available_memory(), 0) >> 21).max(1);
            (Some(half), Some(half), HALF)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::budget_split;

    #[test]
    fn a_books_budget_is_split_in_half_and_a_full_dbs_is_the_cache_s() {
        assert_eq!(budget_split(false, Some(1000)).0, Some(1000));
        let (cache, subtrees, _) = budget_split(true, Some(1001));
        assert_eq!((cache, subtrees), (Some(500), Some(501)));
        let (cache, subtrees, _) = budget_split(true, None);
        assert_eq!(cache, subtrees);
    }
}
