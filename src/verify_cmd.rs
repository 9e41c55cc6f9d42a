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
    let split = budget_split(is_book, args.memory_mb, available_memory());
    let cache_for = |n, objective| {
        verify_cache(
            split.name,
            split.cache_mb,
            n,
            objective,
            threads,
            split.available,
        )
        .map_err(Failure::Usage)
    };
    let cache_bytes = match &manifest {
        Some(manifest) => Some(cache_for(manifest.n, manifest.objective)?),
        None => None,
    };
    let on_demand = crate::args::OnDemandArgs {
        memory_mb: split.on_demand_mb,
        max_on_demand_games: args.max_on_demand_games,
    };
    let mut options = crate::db_open::read_options(&on_demand);
    options.limits.names.memory = "--memory-mb (half of it is a book's budget on demand)";
    let (book, layers) = crate::db_open::open_checked(&args.db, &options, |n| {
        crate::input::parse_layers(args.layers.as_deref(), n)
    })?;
    let n = book.n();
    let cache_bytes = match cache_bytes {
        Some(bytes) => bytes,
        None => cache_for(n, book.objective())?,
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
        .install(|| verify(&book, &options, &|done| bar.inc(done)))
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

/// What each part of verify's one memory budget gets.
#[derive(Debug, PartialEq)]
struct BudgetSplit {
    /// The cache of slices below, in MiB (`None`: the default over `available`).
    cache_mb: Option<u64>,
    /// The memory the cache's default is taken from.
    available: Option<u64>,
    /// A book's subtrees solved on demand, in MiB.
    on_demand_mb: Option<u64>,
    /// How a refusal of the cache's budget names it.
    name: &'static str,
}

/// One budget of `--memory-mb` MiB, or the default over `available` bytes: all of it
/// for the cache of a full db's slices below; a book's split in half between that cache
/// and the subtrees solved on demand (the default: each half taken over half of
/// `available`).
fn budget_split(is_book: bool, memory_mb: Option<u64>, available: Option<u64>) -> BudgetSplit {
    match (is_book, memory_mb) {
        (false, mb) => BudgetSplit {
            cache_mb: mb,
            available,
            on_demand_mb: mb,
            name: "--memory-mb",
        },
        (true, Some(mb)) => BudgetSplit {
            cache_mb: Some(mb / 2),
            available,
            on_demand_mb: Some(mb - mb / 2),
            name: "half of --memory-mb (a book's other half solves subtrees on demand)",
        },
        (true, None) => {
            let half = available.map(|a| a / 2);
            BudgetSplit {
                cache_mb: None,
                available: half,
                on_demand_mb: Some((default_budget(half, 0) >> 20).max(1)),
                name: "--memory-mb",
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::budget_split;

    #[test]
    fn a_books_budget_is_split_in_half_and_a_full_dbs_is_the_cache_s() {
        let gib = Some(8u64 << 30);
        let full = budget_split(false, Some(1000), gib);
        assert_eq!((full.cache_mb, full.available), (Some(1000), gib));
        let book = budget_split(true, Some(1001), gib);
        assert_eq!((book.cache_mb, book.on_demand_mb), (Some(500), Some(501)));
        // the default: each half from half the memory (here 2 GiB each of 8 available)
        let book = budget_split(true, None, gib);
        assert_eq!((book.cache_mb, book.available), (None, Some(4 << 30)));
        assert_eq!(book.on_demand_mb, Some(2048));
    }
}
