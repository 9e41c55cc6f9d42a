//! The read side on a solved db: `simulate` (A bids the prize, B the equilibrium) with
//! every slice read whole, with slices over 1 MiB read in part (the default), and with
//! every slice read in part, one after another in one process; with `--cold` each
//! begins from an empty page cache (it drops the kernel's caches: root only). Prints
//! each one's wall time and the bytes it read (`/proc/self/io`: `rchar` all reads,
//! `read_bytes` those that reached the disk), and checks that the three reports are
//! identical.
//!
//! ```sh
//! cargo bench -p gops-bench --bench read_side -- --db DIR [--games 1000] [--seed 13] [--cold]
//! ```
//!
//! Without `--cold` the first reader warms the page cache for the others, so compare
//! warm figures only between runs of the same order.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use gops_arena::agent::{Agent, Base};
use gops_arena::measure::simulate;
use gops_bench::args::number;
use gops_db::book::{Book, ReadOptions};
use gops_db::read::slices::POINT_READ_MIN_BYTES;
use gops_db::read::{Reader, SliceReads};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// What `gops simulate` keeps in memory.
const CACHE_BYTES: usize = 1 << 30;

struct Args {
    db: PathBuf,
    games: u64,
    seed: u64,
    cold: bool,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = std::env::args().skip(1);
    let (mut db, mut games, mut seed, mut cold) = (None, 1000, 13, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => db = args.next().map(PathBuf::from),
            "--games" => games = number(&mut args, "--games")?,
            "--seed" => seed = number(&mut args, "--seed")?,
            "--cold" => cold = true,
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(db.map(|db| Args {
        db,
        games: games.max(1),
        seed,
        cold,
    }))
}

/// (`rchar`, `read_bytes`) of this process so far.
fn reads_so_far() -> (u64, u64) {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (field("rchar:"), field("read_bytes:"))
}

fn drop_caches() -> Result<(), String> {
    Command::new("sync")
        .status()
        .map_err(|e| format!("sync: {e}"))?;
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| format!("dropping the page cache (root only): {e}"))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("read_side: no --db given, nothing measured");
            println!(
                "usage: cargo bench -p gops-bench --bench read_side -- --db DIR [--games N] [--seed S] [--cold]"
            );
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("read_side: {why}");
            return ExitCode::from(2);
        }
    };
    let store = match Book::open(&args.db, &ReadOptions::default()) {
        Ok(book) => book,
        Err(e) => {
            eprintln!("read_side: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "{}-card {} db {}, {} games of match against optimal, seed {}{}",
        store.n(),
        store.objective(),
        args.db.display(),
        args.games,
        args.seed,
        if args.cold {
            ", each from a cold page cache"
        } else {
            ""
        }
    );
    let readers = [
        ("every slice whole", u64::MAX),
        ("over 1 MiB in part (default)", POINT_READ_MIN_BYTES),
        ("every slice in part", 0),
    ];
    let mut reports = Vec::new();
    for (name, min_bytes) in readers {
        if args.cold
            && let Err(why) = drop_caches()
        {
            eprintln!("read_side: {why}");
            return ExitCode::from(2);
        }
        let (rchar, disk) = reads_so_far();
        let start = Instant::now();
        let reads = SliceReads::reading_in_part_above(CACHE_BYTES, min_bytes);
        let mut reader = Reader::new(&store, reads);
        let mut rng = StdRng::seed_from_u64(args.seed);
        let report = simulate(
            &mut reader,
            (&Agent::base(Base::Upcard), &Agent::base(Base::Equilibrium)),
            args.games,
            &mut rng,
            &mut |_| {},
            &mut |_, _| {},
        );
        let seconds = start.elapsed().as_secs_f64();
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                eprintln!("read_side: {e}");
                return ExitCode::from(1);
            }
        };
        let (rchar_after, disk_after) = reads_so_far();
        println!(
            "{name:<30} {seconds:>9.2} s {:>9.2} ms a game   read {:>10.1} MB, {:>10.1} MB from the disk",
            1e3 * seconds / args.games as f64,
            (rchar_after - rchar) as f64 / 1e6,
            (disk_after - disk) as f64 / 1e6,
        );
        reports.push(report);
    }
    if reports.windows(2).all(|pair| pair[0] == pair[1]) {
        println!("the three reports are identical");
        ExitCode::SUCCESS
    } else {
        eprintln!("read_side: the reports differ: {reports:?}");
        ExitCode::from(1)
    }
}
