//! How far one coordinator goes (see `gops_bench::scale`): for each scenario a
//! coordinator process on a real store, fed by a second process of simulated workers at
//! the slice sizes of the 15- and 16-card games; then what the figures mean for whole
//! games on 64 and 512 worker cores.
//!
//! ```sh
//! cargo bench -p gops-bench --bench scale                  # every scenario (~3 min, 10 GB of disk)
//! cargo bench -p gops-bench --bench scale -- --quick       # one small scenario
//! cargo bench -p gops-bench --bench scale -- --games       # the whole-games table only
//! cargo bench -p gops-bench --bench scale -- --games --cache-mb 16000   # with larger worker caches
//! cargo bench -p gops-bench --bench scale -- --games --check-cache-mb 32000   # a larger coordinator check cache
//! cargo bench -p gops-bench --bench scale -- --slices-dir  # workers read the db directory
//! cargo bench -p gops-bench --bench scale -- --shards 1500  # longer runs (every scenario)
//! ```
//!
//! Each scenario prints what the simulated workers saw (leases, submissions, slices and
//! bytes each way per second, the share of their time spent waiting on the coordinator)
//! and what the coordinator process used (CPU seconds per shard and per GB handed in,
//! peak resident memory), and the CPU time a 1 % re-solve adds per shard (1 % of its
//! games at 1.25 times the solve's CPU per game: what the checks' single-state re-solve
//! costs).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Instant;

use gops_bench::fetch_model::{ModelChecks, simulate_layer_fetches};
use gops_bench::scale::{
    DriveReport, Prepared, RankCache, Scenario, drive, host, prepare, shard_plan,
};
use gops_common::budget::{CacheSplit, DEFAULT_BUDGET_CAP, Role, bounded_need};
use gops_common::engine::LayerEngine;
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_coordinator::cluster::CoordinatorConfig;
use gops_db::disk::estimated_db_bytes;
use serde::{Deserialize, Serialize};

/// One core's matrix games per second in a whole solve on the 2-core machine (13-card
/// points, `gops solve`, 2 threads, commit `3a9a5f3`: 4.97 and 5.22 M games/s in two
/// runs, 269.4 and 256.3 s; their mean).
const GAMES_PER_CORE_SECOND: f64 = 2.55e6;

/// CPU per state of the checks' re-solve (single states in sampled order: `gops verify`,
/// the coordinator's checks) against the solve's: `gops verify --fraction 0.1` less
/// `--fraction 0.01` on a 13-card points db, 55.5-61 CPU-s for 9 % of its states, against
/// 9 % of the 13-card solve's 502-528 CPU-s (the build of commit `cedca88`, which sorts
/// the sample).
const CHECK_RESOLVE_COST: f64 = 1.25;

#[derive(Serialize, Deserialize)]
struct HostReport {
    prepared: Prepared,
    drive: DriveReport,
    cpu_seconds: f64,
    peak_rss_bytes: u64,
    resolve_seconds_per_shard: f64,
    slices_per_shard: f64,
    check_loads: CheckLoads,
}

/// What loading dependency slices from the store costs the coordinator's checks.
#[derive(Serialize, Deserialize)]
struct CheckLoads {
    slices: u64,
    bytes: u64,
    cpu_seconds: f64,
    wall_seconds: f64,
}

/// Loads the dependency slices of the plan's shards from the store at `db` as the
/// coordinator's checks do (`Store::slices_below`: read, digest checked, decoded), with
/// an empty cache each time, until 2 GB are loaded or the plan ends; the files were just
/// written, so this is the CPU of a load from the page cache.
fn time_check_loads(db: &std::path::Path, scenario: &Scenario, plan: &[Vec<u32>]) -> CheckLoads {
    let store = gops_db::store::Store::open_live(db).unwrap();
    let (cpu_before, started) = (cpu_seconds(), Instant::now());
    let (mut slices, mut bytes) = (0u64, 0u64);
    for shard in plan {
        let mut cache = gops_common::cache::SliceCache::new(0);
        let below = store
            .slices_below(&mut cache, scenario.k, shard.iter().copied())
            .unwrap();
        slices += below.len() as u64;
        bytes += below
            .values()
            .map(|s| 8 * s.values.len() as u64)
            .sum::<u64>();
        if bytes > 2_000_000_000 {
            break;
        }
    }
    CheckLoads {
        slices,
        bytes,
        cpu_seconds: cpu_seconds() - cpu_before,
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--drive") {
        return drive_mode(&args[i + 1], &args[i + 2], &args[i + 3]);
    }
    if let Some(i) = args.iter().position(|a| a == "--host") {
        return host_mode(&args[i + 1]);
    }
    if let Some(i) = args.iter().position(|a| a == "--layers") {
        return layers_table(args[i + 1].parse().expect("--layers N"));
    }
    let quick = args.iter().any(|a| a == "--quick");
    let cache_bytes = args
        .iter()
        .position(|a| a == "--cache-mb")
        .map_or(WORKER_CACHE_BYTES, |i| {
            args[i + 1].parse::<u64>().expect("--cache-mb MB") << 20
        });
    let check_cache_bytes = args
        .iter()
        .position(|a| a == "--check-cache-mb")
        .map(|i| args[i + 1].parse::<u64>().expect("--check-cache-mb MB") << 20);
    games_table(cache_bytes, check_cache_bytes);
    if args.iter().any(|a| a == "--games") {
        return;
    }
    let scenarios: Vec<(&str, Scenario)> = if quick {
        vec![(
            "16 cards, layer 7, 32 workers x 2 cores",
            scenario(16, 7, 32, 2, 60),
        )]
    } else {
        vec![
            (
                "16 cards, layer 7, 128 workers x 2 cores",
                scenario(16, 7, 128, 2, 300),
            ),
            (
                "16 cards, layer 8, 128 workers x 2 cores",
                scenario(16, 8, 128, 2, 300),
            ),
            (
                "15 cards, layer 9, 128 workers x 2 cores",
                scenario(15, 9, 128, 2, 300),
            ),
            (
                "16 cards, layer 8, 32 workers x 16 cores",
                scenario(16, 8, 32, 16, 640),
            ),
        ]
    };
    let read_from_dir = args.iter().any(|a| a == "--slices-dir");
    let shards = args
        .iter()
        .position(|a| a == "--shards")
        .map(|i| args[i + 1].parse::<usize>().expect("--shards COUNT"));
    for (name, scenario) in scenarios {
        run_scenario(
            name,
            &Scenario {
                read_from_dir,
                shards: shards.unwrap_or(scenario.shards),
                ..scenario
            },
        );
    }
}

fn scenario(n: u8, k: u8, workers: usize, threads: u32, shards: usize) -> Scenario {
    Scenario {
        n,
        k,
        workers,
        threads,
        games_per_core_second: GAMES_PER_CORE_SECOND,
        shards,
        target_games_per_shard: gops_common::plan::TARGET_GAMES_PER_SHARD,
        worker_cache_bytes: WORKER_CACHE_BYTES,
        read_from_dir: false,
    }
}

/// A simulated worker's cache of dependency slices: what a worker with the default 3 GiB
/// budget keeps at N = 16 (the budget less the 1.7 GiB the game needs at the least).
const WORKER_CACHE_BYTES: u64 = 1300 << 20;

/// Dependency slices fetched per shard if the first `shards` shards were handed out in
/// order to `workers` workers in turn (the lease order before affinity), each with the
/// scenario's cache.
fn in_order_fetches(scenario: &Scenario, shards: usize) -> f64 {
    let plan = scenario.shard_plan();
    let mut caches: Vec<RankCache> = (0..scenario.workers)
        .map(|_| RankCache::new(scenario.cache_slices()))
        .collect();
    let mut fetched = 0u64;
    for (i, shard) in plan.iter().take(shards).enumerate() {
        let cache = &mut caches[i % scenario.workers];
        let needed = LayerEngine::shard_dependency_ranks(shard, scenario.k);
        fetched += needed.into_iter().filter(|&r| !cache.touch(r)).count() as u64;
    }
    fetched as f64 / shards.max(1) as f64
}

/// Runs `scenario` in a coordinator process of its own, and prints what it reports.
fn run_scenario(name: &str, scenario: &Scenario) {
    let json = serde_json::to_string(scenario).unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--host", &json])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scenario {name} failed");
    let report: HostReport = serde_json::from_slice(&out.stdout).unwrap();
    let d = &report.drive;
    let size = scenario.size();
    let mb = |b: f64| b / 1e6;
    println!(
        "\n{name}: {} slices of {:.2} MB each, {:.1} slices and {:.1} M games a shard",
        size.slices,
        mb(report.prepared.slice_bytes as f64),
        report.slices_per_shard,
        report.slices_per_shard * size.games_per_slice() as f64 / 1e6
    );
    println!(
        "  workers: {} submissions in {:.1} s ({} waits, {} duplicate slices): {:.1} leases/s, {:.1} submissions/s; in {:.1} MB/s ({:.0} slices/s), out {:.1} MB/s ({:.0} slices/s, {} fetch calls, {} refused busy)",
        d.submissions,
        d.seconds,
        d.waits,
        d.duplicates,
        d.leases as f64 / d.seconds,
        d.submissions as f64 / d.seconds,
        mb(d.bytes_submitted as f64) / d.seconds,
        d.slices_submitted as f64 / d.seconds,
        mb(d.bytes_fetched as f64) / d.seconds,
        d.slices_fetched as f64 / d.seconds,
        d.fetch_calls,
        d.fetch_refusals,
    );
    if scenario.read_from_dir {
        println!(
            "  read from the db directory instead: {:.1} MB/s ({:.0} slices/s, {} locate calls)",
            mb(d.bytes_read as f64) / d.seconds,
            d.slices_read as f64 / d.seconds,
            d.locate_calls
        );
    }
    let shards = d.submissions.max(1) as usize;
    println!(
        "  dependency slices fetched (or read) per shard, with {} MB of cache a worker: {:.2} (this lease order), {:.2} if handed out in order (computed), {:.2} without a cache",
        WORKER_CACHE_BYTES >> 20,
        (d.slices_fetched + d.slices_read) as f64 / shards as f64,
        in_order_fetches(scenario, shards),
        in_order_fetches(
            &Scenario {
                worker_cache_bytes: 0,
                ..scenario.clone()
            },
            shards
        ),
    );
    println!(
        "  waiting on the coordinator: {:.2} % of the workers' time ({:.1} of {:.1} worker-seconds); {:.2} % once each worker had its first shard",
        100.0 * d.waiting_share(),
        d.waiting_seconds,
        d.waiting_seconds + d.solving_seconds,
        100.0 * d.steady_waiting_share()
    );
    let shards = d.submissions.max(1) as f64;
    let gb_in = d.bytes_submitted as f64 / 1e9;
    println!(
        "  coordinator: {:.3} CPU-s per shard ({:.2} CPU-s per GB handed in, fetches served included), peak {:.0} MB resident; a 1 % re-solve adds {:.3} CPU-s per shard",
        report.cpu_seconds / shards,
        report.cpu_seconds / gb_in.max(1e-9),
        mb(report.peak_rss_bytes as f64),
        report.resolve_seconds_per_shard
    );
    let loads = &report.check_loads;
    println!(
        "  checks' loads from the store (at --verify-slices 1, any --verify-fraction above 0 reads every dependency of every slice): {} slices, {:.2} GB in {:.2} CPU-s ({:.2} s wall): {:.2} CPU-s per GB",
        loads.slices,
        loads.bytes as f64 / 1e9,
        loads.cpu_seconds,
        loads.wall_seconds,
        loads.cpu_seconds / (loads.bytes as f64 / 1e9).max(1e-9)
    );
}

/// The coordinator's side of a scenario: prepare the db, serve it, run the simulated
/// workers in a child process, report as JSON on stdout.
fn host_mode(json: &str) {
    let scenario: Scenario = serde_json::from_str(json).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let prepared = prepare(&db, &scenario).unwrap();
    let plan = scenario.shard_plan();
    // before the coordinator opens the store and the runtime starts: this process's CPU
    // is the loads' alone
    let check_loads = time_check_loads(&db, &scenario, &plan);
    let slices_per_shard = plan.iter().map(Vec::len).sum::<usize>() as f64 / plan.len() as f64;
    // the 1 % re-solve: the kernel's work on 1 % of a shard's games, at the checks' rate
    let resolve_seconds_per_shard =
        0.01 * CHECK_RESOLVE_COST * slices_per_shard * scenario.size().games_per_slice() as f64
            / GAMES_PER_CORE_SECOND;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (url, core) = rt.block_on(host(&db, &scenario)).unwrap();
    let cpu_before = cpu_seconds();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--drive", &url, json, db.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success(), "simulated workers failed");
    let cpu_seconds = cpu_seconds() - cpu_before;
    let drive: DriveReport = serde_json::from_str(&out).unwrap();
    drop(core);
    let report = HostReport {
        prepared,
        drive,
        cpu_seconds,
        peak_rss_bytes: peak_rss(),
        resolve_seconds_per_shard,
        slices_per_shard,
        check_loads,
    };
    println!("{}", serde_json::to_string(&report).unwrap());
    rt.shutdown_background();
}

fn drive_mode(url: &str, json: &str, db: &str) {
    let scenario: Scenario = serde_json::from_str(json).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let report = rt
        .block_on(drive(url, &scenario, std::path::Path::new(db)))
        .unwrap();
    println!("{}", serde_json::to_string(&report).unwrap());
}

/// User and system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // the fields after the command name (which is in parentheses)
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Peak resident memory of this process (VmHWM).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb << 10)
}

/// What whole games ask of the coordinator: matrix games, db size, and the bytes that go
/// through it (every slice handed in once; every shard's dependency slices fetched once
/// per shard, as by a worker without a cache: an upper bound; and the same with each
/// worker's cache of `cache_bytes`, for 4 and 32 workers of 16 cores taking shards in the
/// lease ledger's order, from `fetch_model`); and what the coordinator's checks load
/// from its store to re-solve their samples, with its cache of slices below (on the
/// default budget unless `check_cache_bytes` is given), for the same 32 workers, every
/// slice checked or a tenth of them.
fn games_table(cache_bytes: u64, check_cache_bytes: Option<u64>) {
    println!(
        "game | matrix games | db (estimate) | bytes in | bytes out (at most) | bytes out, 4 x 16 cores, {} MB caches (model) | 32 x 16 (model) | check loads, 32 x 16 (model) | with --verify-slices 0.1 | coordinator's check cache | shards | wall on 64 cores | on 512 cores",
        cache_bytes >> 20
    );
    let started = Instant::now();
    for (n, objective) in [
        (14, Objective::Points),
        (15, Objective::Points),
        (16, Objective::Points),
        (12, Objective::Win),
        (13, Objective::Win),
    ] {
        let check_cache = check_cache_bytes.unwrap_or_else(|| {
            let need = bounded_need(n, objective);
            CacheSplit::of(DEFAULT_BUDGET_CAP.max(need), need, Role::Coordinator)
                .map_or(0, |split| split.verify_cache)
        });
        let (mut games, mut bytes_in, mut bytes_out, mut shards) = (0u64, 0u64, 0u64, 0usize);
        // bytes out with caches, by the lease ledger's order: 4 and 32 workers of 16 cores
        let mut modelled = [(4usize, 0u64), (32, 0)];
        let mut check_loads = [0u64; 2];
        for k in 1..=n {
            let size = LayerSize::of(n, k, objective);
            let plan = shard_plan(&size, &CoordinatorConfig::default());
            games += size.games;
            // dense values, 8 bytes each: exact for points, an upper bound for win
            let slice_bytes = |layer: u8| -> u64 {
                if layer == 0 {
                    return 16;
                }
                let below = LayerSize::of(n, layer, objective);
                below.dense_values / below.slices as u64 * 8
            };
            bytes_in += size.dense_values * 8;
            let fetched: u64 = plan
                .iter()
                .map(|shard| {
                    LayerEngine::shard_dependency_ranks(shard, k).len() as u64 * slice_bytes(k - 1)
                })
                .sum();
            bytes_out += fetched;
            shards += plan.len();
            let slices_in = |bytes: u64| (bytes / slice_bytes(k - 1).max(1)) as usize;
            let checks = |slice_share: f64| ModelChecks {
                cache_slices: slices_in(check_cache),
                slice_share,
            };
            for (workers, bytes) in &mut modelled {
                let fetches = simulate_layer_fetches(
                    plan.clone(),
                    k,
                    *workers,
                    slices_in(cache_bytes),
                    checks(1.0),
                );
                *bytes += fetches.fetched * slice_bytes(k - 1);
                if *workers == 32 {
                    check_loads[0] += fetches.check_loads * slice_bytes(k - 1);
                }
            }
            let tenth =
                simulate_layer_fetches(plan.clone(), k, 32, slices_in(cache_bytes), checks(0.1));
            check_loads[1] += tenth.check_loads * slice_bytes(k - 1);
        }
        let minutes = |cores: f64| games as f64 / (cores * GAMES_PER_CORE_SECOND) / 60.0;
        println!(
            "{n} {} | {:.3e} | {:.0} GB | {:.0} GB | {:.0} GB | {:.0} GB | {:.0} GB | {:.0} GB | {:.0} GB | {} MB | {shards} | {:.0} min | {:.1} min",
            objective.name(),
            games as f64,
            estimated_db_bytes(n, objective) as f64 / 1e9,
            bytes_in as f64 / 1e9,
            bytes_out as f64 / 1e9,
            modelled[0].1 as f64 / 1e9,
            modelled[1].1 as f64 / 1e9,
            check_loads[0] as f64 / 1e9,
            check_loads[1] as f64 / 1e9,
            check_cache >> 20,
            minutes(64.0),
            minutes(512.0),
        );
    }
    eprintln!(
        "(table computed in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
}

/// Layer by layer, the `n`-card points game as the coordinator cuts it.
fn layers_table(n: u8) {
    println!("k | slices | MB per slice | slices per shard | shards | M games per shard");
    for k in 1..=n {
        let size = LayerSize::of(n, k, Objective::Points);
        let plan = shard_plan(&size, &CoordinatorConfig::default());
        let per_shard = size.slices as f64 / plan.len() as f64;
        println!(
            "{k} | {} | {:.2} | {per_shard:.1} | {} | {:.1}",
            size.slices,
            (size.dense_values / size.slices as u64 * 8) as f64 / 1e6,
            plan.len(),
            per_shard * size.games_per_slice() as f64 / 1e6
        );
    }
}
