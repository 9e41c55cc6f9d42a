//! The layer engine on a solved db's own slices, apart from everything else a solve does
//! (leases, checks, storing): for a few prize sets of layer K, evenly spread over the
//! layer, the slices below are read from the store (read, digest checked, decoded) and
//! timed; then the slice is solved by the same code as `gops solve` (one shard of one
//! slice on a pool of `--threads`) and timed, and its bytes compared with the stored
//! slice's, which they must equal bit for bit. Prints each slice's figures and the
//! totals: what the engine alone reaches in matrix games a second, to hold against the
//! layer's rate in a whole solve and the kernel bench's nanoseconds a game.
//!
//! ```sh
//! cargo bench -p gops-bench --bench layer -- --db DIR --layer K[,K2,...] [--slices 8] [--threads 2]
//! ```
//!
//! For where the engine's time goes (filling the matrices against the kernel), run the
//! bench binary under `perf record -g` and read `perf report --no-children`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use gops_bench::args::number;
use gops_common::cards::CardSet;
use gops_common::engine::LayerEngine;
use gops_common::prizes::{prize_rank, prize_set_count};
use gops_common::shard::ShardSolver;
use gops_common::slice::Slice;
use gops_db::store::Store;

struct Args {
    db: PathBuf,
    layers: Vec<u8>,
    slices: usize,
    threads: usize,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = std::env::args().skip(1);
    let (mut db, mut layer, mut slices, mut threads) = (None, None, 8, 2);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => db = args.next().map(PathBuf::from),
            "--layer" => layer = Some(layers(args.next())?),
            "--slices" => slices = number(&mut args, "--slices")?,
            "--threads" => threads = number(&mut args, "--threads")?,
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let Some(db) = db else {
        return Ok(None);
    };
    Ok(Some(Args {
        db,
        layers: layer.ok_or("--layer K is needed with --db")?,
        slices: slices.max(1),
        threads: threads.max(1),
    }))
}

/// The layers of `--layer K,K2,...`.
fn layers(text: Option<String>) -> Result<Vec<u8>, String> {
    let text = text.ok_or("--layer needs a value")?;
    text.split(',')
        .map(|k| {
            k.trim()
                .parse()
                .map_err(|_| format!("--layer {text}: not a list of layers"))
        })
        .collect()
}

/// `count` prize ranks spread evenly over `0..total`.
fn spread(total: usize, count: usize) -> Vec<u32> {
    let count = count.min(total);
    (0..count).map(|i| (i * total / count) as u32).collect()
}

/// What one slice cost.
#[derive(Default)]
struct Measured {
    load_s: f64,
    load_bytes: u64,
    solve_s: f64,
    games: u64,
}

fn measure(
    store: &Store,
    solver: &ShardSolver,
    engine: &LayerEngine,
    rank: u32,
) -> Result<Measured, String> {
    let k = engine.k();
    let started = Instant::now();
    let mut deps: HashMap<u32, Arc<Slice>> = HashMap::new();
    let mut load_bytes = 0;
    for below in LayerEngine::dependency_ranks(rank, k) {
        let record = store
            .require_slice(k - 1, below)
            .map_err(|e| e.to_string())?;
        deps.insert(below, Arc::new(record.slice));
    }
    let load_s = started.elapsed().as_secs_f64();
    // the bytes read, looked up outside the time taken
    for &below in deps.keys() {
        if let Ok(Some(place)) = store.record_place(k - 1, below) {
            load_bytes += u64::from(place.len);
        }
    }
    let dependency = |prizes: CardSet| &*deps[&prize_rank(prizes)];
    let started = Instant::now();
    let solved = solver
        .solve_shard(engine, &[rank], &dependency)
        .map_err(|e| e.to_string())?;
    let solve_s = started.elapsed().as_secs_f64();
    let solved = solved.into_iter().next().ok_or("no slice solved")?;
    let stored = store
        .require_slice_bytes(k, rank)
        .map_err(|e| e.to_string())?;
    let computed = solved.to_bytes();
    if computed.body != stored.body || computed.digest != stored.digest {
        return Err(format!(
            "layer {k}, prize rank {rank}: the slice solved differs from the stored one"
        ));
    }
    Ok(Measured {
        load_s,
        load_bytes,
        solve_s,
        games: solved.games,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("layer: no --db given, nothing measured");
            println!(
                "usage: cargo bench -p gops-bench --bench layer -- --db DIR --layer K[,K2,...] [--slices 8] [--threads 2]"
            );
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("layer: {why}");
            return ExitCode::from(2);
        }
    };
    let store = match Store::open_existing(&args.db) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("layer: {e}");
            return ExitCode::from(2);
        }
    };
    let solver = match ShardSolver::new(args.threads) {
        Ok(solver) => solver,
        Err(e) => {
            eprintln!("layer: {e}");
            return ExitCode::from(2);
        }
    };
    for &k in &args.layers {
        if let Err(why) = run_layer(&store, &solver, k, args.slices) {
            eprintln!("layer: {why}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// Measures `slices` prize sets of layer `k`, printing each and the totals.
fn run_layer(store: &Store, solver: &ShardSolver, k: u8, slices: usize) -> Result<(), String> {
    let n = store.n();
    if k < 1 || k > n || !matches!(store.layer(k), Ok(Some(_))) {
        return Err(format!("layer {k} of this {n}-card db is not complete"));
    }
    let engine = LayerEngine::new(n, k, store.objective()).with_start(store.pivot_start());
    let ranks = spread(prize_set_count(n, k), slices);
    println!(
        "{n}-card {} db {}, layer {k}: {} slices of {}, {} threads",
        store.objective(),
        store.path().display(),
        ranks.len(),
        prize_set_count(n, k),
        solver.threads()
    );
    let mut total = Measured::default();
    for rank in ranks {
        let m = measure(store, solver, &engine, rank)?;
        println!(
            "  prize rank {rank:>5}: slices below {:>8.1} MB read in {:>6.2} s; {:>12} games solved in {:>7.2} s ({:.2} M a second); bytes equal to the stored slice",
            m.load_bytes as f64 / 1e6,
            m.load_s,
            m.games,
            m.solve_s,
            m.games as f64 / m.solve_s / 1e6
        );
        total.load_s += m.load_s;
        total.load_bytes += m.load_bytes;
        total.solve_s += m.solve_s;
        total.games += m.games;
    }
    println!(
        "  layer {k}: slices below {:.1} MB in {:.2} s ({:.0} MB/s); {} games in {:.2} s: {:.2} M games a second, {:.0} ns a game on each of {} threads",
        total.load_bytes as f64 / 1e6,
        total.load_s,
        total.load_bytes as f64 / 1e6 / total.load_s,
        total.games,
        total.solve_s,
        total.games as f64 / total.solve_s / 1e6,
        total.solve_s * 1e9 * solver.threads() as f64 / total.games as f64,
        solver.threads()
    );
    Ok(())
}
