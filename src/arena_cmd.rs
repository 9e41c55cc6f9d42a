//! `gops arena`: a bot (a program speaking JSON lines, a service behind a URL, or a
//! built-in rule) plays the equilibrium of a db in both seats; the report gives the mean
//! result, the mean summed decision loss, where the loss falls and the worst decisions
//! (`gops_arena` does the work; this is the command line's glue).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use gops_arena::bot::{Bot, Builtin, BuiltinBot};
use gops_arena::http::HttpBot;
use gops_arena::process::ProcessBot;
use gops_arena::report::{Summary, decision_json};
use gops_arena::run::{ArenaError, ArenaOptions, run_arena};
use gops_db::oracle::Oracle;

use crate::args::{OnDemandArgs, threads_or_all_cores};
use crate::failure::Failure;
use gops_common::human::count;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("player").required(true).args(["bot", "bot_url", "builtin"])))]
pub struct ArenaArgs {
    /// Database directory of a solved game, or a book.
    #[arg(long)]
    pub db: PathBuf,
    /// The bot: a shell command line, started once per thread, asked one JSON line on
    /// its stdin per decision and answering one line on its stdout
    /// (docs/reference/bot-protocol.md).
    #[arg(long)]
    pub bot: Option<String>,
    /// The bot as a service: one HTTP POST of the same JSON per decision (http:// only).
    #[arg(long)]
    pub bot_url: Option<String>,
    /// A built-in player instead: uniform, upcard, upcard-plus-one, equilibrium or
    /// equilibrium-pure.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(Builtin::ALL.map(Builtin::name)))]
    pub builtin: Option<String>,
    /// Number of games; the bot's seat alternates, A in even games.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub games: u64,
    /// Seed of the games (upcards and both players' draws) [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Games played at once, each thread with its own bot [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Time a bot has for one decision, in milliseconds; past it the game is forfeited.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub timeout_ms: u64,
    /// One JSON record per decision, then a last line with the summary.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}

/// Who plays against the equilibrium.
enum Player {
    /// A program speaking the protocol on stdin/stdout.
    Program(String),
    /// A service behind a URL.
    Service(String),
    Builtin(Builtin),
}

impl Player {
    /// The one player the flags name (clap checks that exactly one is given).
    fn of(args: &ArenaArgs) -> Result<Player, Failure> {
        match (&args.bot, &args.bot_url, &args.builtin) {
            (Some(command), None, None) => Ok(Player::Program(command.clone())),
            (None, Some(url), None) if url.starts_with("http://") => {
                Ok(Player::Service(url.clone()))
            }
            (None, Some(url), None) => Err(Failure::Usage(format!(
                "--bot-url {url:?}: only http:// URLs (a TLS service goes behind a local proxy)"
            ))),
            (None, None, Some(name)) => Builtin::from_name(name)
                .map(Player::Builtin)
                .ok_or_else(|| Failure::Usage(format!("--builtin {name:?}: no such player"))),
            _ => Err(Failure::Usage(
                "give exactly one of --bot, --bot-url and --builtin".into(),
            )),
        }
    }

    fn label(&self) -> String {
        match self {
            Player::Program(command) => format!("the bot `{command}`"),
            Player::Service(url) => format!("the bot at {url}"),
            Player::Builtin(rule) => format!("the built-in `{}`", rule.name()),
        }
    }
}

/// The db's readers' slices, all threads together.
const CACHE_BYTES: usize = 1 << 30;

pub fn arena(args: ArenaArgs) -> Result<(), Failure> {
    let player = Player::of(&args)?;
    let store = crate::db_open::open_reader(&args.db, &args.on_demand)?;
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let threads = threads_or_all_cores(args.threads);
    let limit = Duration::from_millis(args.timeout_ms);
    let make_bot = || -> Result<Box<dyn Bot + '_>, gops_arena::protocol::BotFault> {
        Ok(match &player {
            Player::Program(command) => Box::new(ProcessBot::new(command, limit)),
            Player::Service(url) => Box::new(HttpBot::new(url, limit)),
            Player::Builtin(rule) => Box::new(BuiltinBot::new(
                *rule,
                Oracle::new(&store, CACHE_BYTES / threads),
            )),
        })
    };
    let options = ArenaOptions {
        games: args.games,
        seed,
        threads,
        cache_bytes: CACHE_BYTES,
    };
    let bar = crate::progress::count_bar(args.games, "games");
    let mut done = 0;
    let summary = run_arena(&store, &options, &make_bot, &mut |game| {
        done += 1;
        bar.set_position(done);
        if args.json {
            for d in &game.decisions {
                crate::out!("{}", decision_json(d));
            }
        }
    });
    bar.finish_and_clear();
    let summary = summary.map_err(|e| match e {
        ArenaError::Bot(fault) => Failure::Usage(fault.to_string()),
        other => Failure::Runtime(other.to_string()),
    })?;
    if args.json {
        crate::out!(
            "{}",
            serde_json::to_string(&summary).expect("a summary serialises")
        );
        return Ok(());
    }
    print_summary(&summary, &player.label(), &args.db);
    Ok(())
}

fn print_summary(s: &Summary, player: &str, db: &std::path::Path) {
    let unit = match s.objective {
        gops_common::Objective::Win => "a game's result (1 win, 0 draw, -1 loss)",
        gops_common::Objective::Points => "the score difference",
    };
    crate::out!(
        "{} games of {}-card GOPS ({}): {player} against the equilibrium, seats alternating (seed {})",
        count(s.games),
        s.n,
        s.objective,
        s.seed
    );
    crate::out!(
        "result: mean {:.4} (95 % CI {:.4} .. {:.4}), {unit}; won {}, drew {}, lost {} (win rate {:.4})",
        s.mean_result,
        s.result_ci95[0],
        s.result_ci95[1],
        count(s.wins),
        count(s.draws),
        count(s.losses),
        s.win_rate
    );
    crate::out!(
        "loss:   mean {:.4} a game (95 % CI {:.4} .. {:.4}), summed over its decisions; the value less the loss: {:.4}",
        s.mean_loss,
        s.loss_ci95[0],
        s.loss_ci95[1],
        s.result_from_loss
    );
    let parts = |parts: &[gops_arena::report::LossPart]| {
        parts
            .iter()
            .map(|p| format!("{} {:.3}", p.at, p.loss_per_game))
            .collect::<Vec<_>>()
            .join(", ")
    };
    crate::out!("loss a game by round:  {}", parts(&s.loss_by_round));
    crate::out!("loss a game by upcard: {}", parts(&s.loss_by_upcard));
    if !s.worst_decisions.is_empty() {
        crate::out!(
            "worst decisions (open the explorer with `gops serve --db {}`, then the address):",
            db.display()
        );
        for w in &s.worst_decisions {
            let bid = match (&w.fault, w.bid) {
                (Some(fault), _) => format!("forfeit ({fault})"),
                (None, Some(bid)) => format!("bid {bid}"),
                (None, None) => "no bid".to_string(),
            };
            crate::out!(
                "  game {}, round {} as {}: upcard {}, {bid}, loss {:.4}  {}",
                w.game,
                w.round,
                w.seat,
                w.upcard,
                w.loss,
                w.explorer
            );
        }
    }
    crate::out!("bot faults: {} (games forfeited)", count(s.bot_faults));
    for f in &s.first_faults {
        crate::out!("  game {}, round {}: {}", f.game, f.round, f.message);
    }
    crate::out!(
        "{} decisions in {:.1} s ({:.0} a second)",
        count(s.decisions),
        s.seconds,
        s.decisions_per_second
    );
}
