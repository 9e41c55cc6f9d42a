//! `gops simulate` and `gops exploit`: agents against each other in many random games,
//! and an agent against its best response, exactly.

use gops_arena::measure::{
    EXPLOIT_STATE_LIMIT, PolicyExploitation, Simulation, concrete_state_count,
    exploit as exploit_agent, simulate as simulate_agents,
};
use gops_common::human::count;
use gops_db::read::CachedReader;
use rand::SeedableRng;
use rand::rngs::StdRng;

use std::io::Write;
use std::path::{Path, PathBuf};

use gops_arena::agent::fit::record_line;
use gops_arena::protocol::{Request, Seat};

use crate::args::{ExploitArgs, SimulateArgs};
use crate::db_open::read_options;
use crate::failure::Failure;

/// Slices kept in memory while playing.
const CACHE_BYTES: usize = 1 << 30;

pub fn simulate(args: SimulateArgs) -> Result<(), Failure> {
    let book = crate::db_open::open_reader(&args.db, &read_options(&args.on_demand))?;
    for agent in [&args.a, &args.b] {
        agent
            .check_fits(book.n(), book.objective())
            .map_err(|e| Failure::Runtime(e.to_string()))?;
    }
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let (a, b) = (&args.a, &args.b);
    let mut record = match &args.record {
        Some(path) => Some(Record::create(path)?),
        None => None,
    };
    let bar = crate::progress::count_bar(args.games, "games");
    let report = simulate_agents(
        &mut reader,
        (a, b),
        args.games,
        &mut rng,
        &mut |done| bar.set_position(done),
        &mut |request, bid| {
            if let Some(record) = record.as_mut()
                && request.seat == Seat::B
            {
                record.write(request, bid);
            }
        },
    );
    bar.finish_and_clear();
    if let Some(record) = record {
        record.finish()?;
    }
    let simulation = Simulation {
        n: book.n(),
        objective: book.objective().name(),
        a: a.name(),
        b: b.name(),
        seed,
        report: report?,
    };
    if args.json {
        crate::out!("{}", crate::output::json_line(&simulation));
    } else {
        crate::out!("{simulation}");
    }
    Ok(())
}

pub fn exploit(args: ExploitArgs) -> Result<(), Failure> {
    if !args.policy.plays_by_state() {
        return Err(Failure::Usage(format!(
            "--policy {}: exploit walks states, and this agent's bids depend on the history of the game; measure it with simulate or arena",
            args.policy
        )));
    }
    let book = crate::db_open::open_reader(&args.db, &read_options(&args.on_demand))?;
    let states = concrete_state_count(book.n(), book.objective());
    if states > EXPLOIT_STATE_LIMIT {
        return Err(Failure::Usage(format!(
            "exploit walks every concrete state: the {}-card {} game has {} (with score differences), more than the {} this command holds in memory; use a smaller game",
            book.n(),
            book.objective(),
            count(states),
            count(EXPLOIT_STATE_LIMIT)
        )));
    }
    args.policy
        .check_fits(book.n(), book.objective())
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let p = &args.policy;
    let bar = crate::progress::spinner("exploit");
    let result = exploit_agent(&mut reader, p, &mut |states| {
        bar.set_message(format!("{} states evaluated", count(states)));
    });
    bar.finish_and_clear();
    let exploitation = PolicyExploitation {
        n: book.n(),
        objective: book.objective().name(),
        policy: p.name(),
        result: result?,
    };
    if args.json {
        crate::out!("{}", crate::output::json_line(&exploitation));
    } else {
        crate::out!("{exploitation}");
    }
    Ok(())
}

/// The games file `simulate --record` writes: B's decisions, one line each, the first
/// write error kept for the end.
struct Record {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    failed: Option<std::io::Error>,
}

impl Record {
    fn create(path: &Path) -> Result<Record, Failure> {
        let file = std::fs::File::create(path).map_err(|e| {
            Failure::Usage(format!(
                "--record {}: cannot create it: {e}",
                path.display()
            ))
        })?;
        Ok(Record {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
            failed: None,
        })
    }

    fn write(&mut self, request: &Request, bid: u8) {
        if self.failed.is_none()
            && let Err(e) = writeln!(self.out, "{}", record_line(request, bid))
        {
            self.failed = Some(e);
        }
    }

    fn finish(mut self) -> Result<(), Failure> {
        let flushed = self.out.flush();
        match self.failed.map_or(flushed, Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(Failure::Runtime(format!(
                "cannot write the record {}: {e}",
                self.path.display()
            ))),
        }
    }
}
