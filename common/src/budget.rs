//! Memory by design: what the bounded path of a solve needs at the least, and how a
//! process's memory budget is split among its caches. Nothing here holds a layer: a
//! worker holds one shard's dependency slices and its result, the coordinator one slice
//! per check in flight, and everything else is in bounded caches, so a process's peak
//! is set by its budget, not by the size of the game.

use crate::cards::CardSet;
use crate::objective::Objective;
use crate::pattern::PatternIndex;

/// What a process needs besides the engine, slices and caches: the async runtime,
/// sled's page cache (64 MiB), gRPC message buffers, thread stacks.
pub const FIXED_BYTES: u64 = 256 << 20;

/// The largest slice of layer `k` in memory (for `win`, every live score difference).
pub fn largest_slice_bytes(n: u8, k: u8, objective: Objective) -> u64 {
    if k == 0 {
        return 8;
    }
    let canonical = PatternIndex::new(n, k).count().div_ceil(2) as u64;
    // the highest prizes have the widest range of score differences
    let top = CardSet::from_cards(&(n - k + 1..=n).collect::<Vec<u8>>());
    canonical * objective.slice_width(top) as u64 * 8
}

/// The layer engine of layer `k`: both layouts and the child table.
pub fn engine_bytes(n: u8, k: u8) -> u64 {
    let canonical = |k: u8| PatternIndex::new(n, k).count().div_ceil(2) as u64;
    let kk = u64::from(k);
    // a child is an 8-byte Oriented and a 1-byte sign; a layout 20 bytes per pattern
    canonical(k) * (kk * kk * 9 + 8 + 20) + canonical(k - 1) * 20
}

/// The least memory a process that solves shards needs for the `n`-card game: the fixed
/// costs, and over the layers the most that the engine, one prize set's dependency
/// slices (k slices of layer k - 1) and its result (the slice, its encoding and its
/// message) take together.
pub fn bounded_need(n: u8, objective: Objective) -> u64 {
    let layer = |k: u8| {
        engine_bytes(n, k)
            + u64::from(k) * largest_slice_bytes(n, k - 1, objective)
            + 3 * largest_slice_bytes(n, k, objective)
    };
    FIXED_BYTES + (1..=n).map(layer).max().unwrap_or(0)
}

/// A process's memory budget split among its caches of slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSplit {
    /// The worker's cache of dependency slices.
    pub worker_cache: u64,
    /// The coordinator's cache of slices below, read by its checks.
    pub verify_cache: u64,
}

/// Which processes share the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `gops solve`: a coordinator and a worker in one process.
    Solve,
    Coordinator,
    Worker,
}

impl CacheSplit {
    /// The caches that `budget` bytes leave once `need` (see [`bounded_need`]) is set
    /// aside; `None` when the budget is below the need. In `solve` the worker's cache
    /// gets two thirds: it is read for every game, the checks only for a sample.
    pub fn of(budget: u64, need: u64, role: Role) -> Option<CacheSplit> {
        let spare = budget.checked_sub(need)?;
        Some(match role {
            Role::Solve => CacheSplit {
                worker_cache: spare / 3 * 2,
                verify_cache: spare / 3,
            },
            Role::Coordinator => CacheSplit {
                worker_cache: 0,
                verify_cache: spare,
            },
            Role::Worker => CacheSplit {
                worker_cache: spare,
                verify_cache: 0,
            },
        })
    }
}

/// The most a default budget is: 3 GiB, so that a process on default settings stays
/// under 4 GB resident with the allocator's slack on top of its budget (measured: a
/// 14-card solve on the budget's caches reached 4.0 GB resident with a 4 GiB budget).
pub const DEFAULT_BUDGET_CAP: u64 = 3 << 30;

/// The default budget: half the memory available now, at most [`DEFAULT_BUDGET_CAP`],
/// but never less than what the game needs (a machine too small is then refused by the
/// caller).
pub fn default_budget(available: Option<u64>, need: u64) -> u64 {
    let half = available.map_or(DEFAULT_BUDGET_CAP, |a| a / 2);
    half.min(DEFAULT_BUDGET_CAP).max(need)
}

/// The caches of a process with a budget of `memory_mb` MiB (`None`: the default of
/// [`default_budget`] over `available` bytes) for the `n`-card game; the message says
/// why a budget cannot hold the game's least need, naming the setting `budget_name`
/// (`--memory-mb`, `memory_mb`).
pub fn process_caches(
    budget_name: &str,
    memory_mb: Option<u64>,
    n: u8,
    objective: Objective,
    role: Role,
    available: Option<u64>,
) -> Result<CacheSplit, String> {
    let need = Need {
        n,
        objective,
        bytes: bounded_need(n, objective),
        what: "one shard and its dependency slices".into(),
    };
    let budget = need.budget(memory_mb, available)?;
    CacheSplit::of(budget, need.bytes, role).ok_or_else(|| need.refusal(budget_name, budget))
}

/// The cache of slices of the layer below that `gops verify` on `threads` threads gets
/// from a budget of `memory_mb` MiB (`None`: the default of [`default_budget`] over
/// `available` bytes): what is left once the game's least need (see [`bounded_need`])
/// and one slice being checked per thread are set aside. Verify reads the slices below
/// a batch of prize sets at most this much at once, so that they fit the cache.
pub fn verify_cache(
    budget_name: &str,
    memory_mb: Option<u64>,
    n: u8,
    objective: Objective,
    threads: usize,
    available: Option<u64>,
) -> Result<u64, String> {
    let checked = (1..=n)
        .map(|k| largest_slice_bytes(n, k, objective))
        .max()
        .unwrap_or(0);
    let need = Need {
        n,
        objective,
        bytes: bounded_need(n, objective).saturating_add(checked.saturating_mul(threads as u64)),
        what: format!("one prize set's slices below, and a slice for each of {threads} threads"),
    };
    let budget = need.budget(memory_mb, available)?;
    budget
        .checked_sub(need.bytes)
        .ok_or_else(|| need.refusal(budget_name, budget))
}

/// What a process needs at the least for the `n`-card game, and what that is made of
/// (for the messages).
struct Need {
    n: u8,
    objective: Objective,
    bytes: u64,
    what: String,
}

impl Need {
    /// The budget `memory_mb` asks for, or the default over `available`; refused when
    /// the memory available cannot hold the need.
    fn budget(&self, memory_mb: Option<u64>, available: Option<u64>) -> Result<u64, String> {
        match memory_mb {
            Some(mb) => Ok(mb.saturating_mul(1 << 20)),
            None => match available.filter(|&a| a < self.bytes) {
                Some(available) => Err(format!(
                    "{}, but only {} MiB is available",
                    self.needs(),
                    mib(available)
                )),
                None => Ok(default_budget(available, self.bytes)),
            },
        }
    }

    /// Why `budget` bytes, set by `budget_name`, are too few.
    fn refusal(&self, budget_name: &str, budget: u64) -> String {
        format!("{}; {budget_name} is {} MiB", self.needs(), mib(budget))
    }

    fn needs(&self) -> String {
        format!(
            "the {}-card {} game needs at least {} MiB ({})",
            self.n,
            self.objective,
            mib(self.bytes),
            self.what
        )
    }
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// MemAvailable from /proc/meminfo, where there is one.
pub fn available_memory() -> Option<u64> {
    crate::system::proc_kib("/proc/meminfo", "MemAvailable:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_need_grows_with_the_slices_not_with_the_layers() {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        // 13-card points: 58,648 canonical patterns in the largest layer, 470 KB slices
        assert_eq!(largest_slice_bytes(13, 8, Objective::Points), 58_648 * 8);
        let need13 = bounded_need(13, Objective::Points);
        assert!(gib(need13) < 0.5, "{}", gib(need13));
        // 16-card points fits a worker of a few GiB although its largest layer is ~86 GB
        assert!(gib(bounded_need(16, Objective::Points)) < 4.0);
        assert!(bounded_need(16, Objective::Points) > need13);
        // win slices are wider: every live score difference
        assert!(bounded_need(12, Objective::Win) > bounded_need(12, Objective::Points));
    }

    #[test]
    fn a_process_budget_below_the_need_is_refused_with_the_figures() {
        let need = bounded_need(8, Objective::Win);
        let small =
            process_caches("memory_mb", Some(1), 8, Objective::Win, Role::Solve, None).unwrap_err();
        assert!(small.contains("memory_mb is 1 MiB"), "{small}");
        let scarce =
            process_caches("m", None, 8, Objective::Win, Role::Solve, Some(need - 1)).unwrap_err();
        assert!(scarce.contains("is available"), "{scarce}");
        let fine =
            process_caches("m", None, 8, Objective::Win, Role::Solve, Some(need * 4)).unwrap();
        assert_eq!(fine, CacheSplit::of(need * 2, need, Role::Solve).unwrap());
    }

    #[test]
    fn verify_gets_what_the_need_and_its_threads_leave() {
        let (n, objective) = (10, Objective::Win);
        let need = bounded_need(n, objective);
        let checked = (1..=n)
            .map(|k| largest_slice_bytes(n, k, objective))
            .max()
            .unwrap();
        let budget_mb = (need + 4 * checked + (100 << 20)).div_ceil(1 << 20);
        let one = verify_cache("--memory-mb", Some(budget_mb), n, objective, 1, None).unwrap();
        let four = verify_cache("--memory-mb", Some(budget_mb), n, objective, 4, None).unwrap();
        assert_eq!(one - four, 3 * checked);
        assert!(((100 << 20)..(101 << 20)).contains(&four), "{four}");
        // more threads than the budget holds slices for: refused, with the figures
        let many = ((budget_mb << 20) / checked + 1) as usize;
        let refused =
            verify_cache("--memory-mb", Some(budget_mb), n, objective, many, None).unwrap_err();
        assert!(
            refused.contains(&format!("--memory-mb is {budget_mb} MiB")),
            "{refused}"
        );
        assert!(
            refused.contains(&format!("each of {many} threads")),
            "{refused}"
        );
        // the default: half of what is available, at most 3 GiB
        let default = verify_cache("m", None, n, objective, 2, Some(24 << 30)).unwrap();
        assert_eq!(default, (3 << 30) - need - 2 * checked);
        let scarce = verify_cache("m", None, n, objective, 2, Some(need)).unwrap_err();
        assert!(scarce.contains("is available"), "{scarce}");
    }

    #[test]
    fn budgets_split_what_the_need_leaves() {
        let split = CacheSplit::of(900, 300, Role::Solve).unwrap();
        assert_eq!(
            split,
            CacheSplit {
                worker_cache: 400,
                verify_cache: 200
            }
        );
        assert_eq!(
            CacheSplit::of(900, 300, Role::Worker).unwrap().worker_cache,
            600
        );
        assert_eq!(
            CacheSplit::of(900, 300, Role::Coordinator)
                .unwrap()
                .verify_cache,
            600
        );
        assert_eq!(CacheSplit::of(299, 300, Role::Solve), None);
        assert_eq!(default_budget(Some(24 << 30), 1 << 30), 3 << 30);
        assert_eq!(default_budget(Some(2 << 30), 1 << 30), 1 << 30);
        assert_eq!(default_budget(Some(2 << 30), 3 << 30), 3 << 30);
        assert_eq!(default_budget(None, 1), 3 << 30);
    }
}
