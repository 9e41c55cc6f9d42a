//! `gops arena`: a bot (a program speaking JSON lines, a service behind a URL, or an
//! agent of the vocabulary) plays the equilibrium of a db in both seats; the report gives the mean
//! result, the mean summed decision loss, where the loss falls and the worst decisions
//! (`gops_arena` does the work; this is the command line's glue).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use gops_arena::agent::{Agent, AgentBot};
use gops_arena::bot::Bot;
use gops_arena::http::HttpBot;
use gops_arena::process::ProcessBot;
use gops_arena::report::decision_json;
use gops_arena::run::{ArenaError, ArenaOptions, run_arena};

use crate::args::{OnDemandArgs, agent_arg, threads_or_all_cores};
use crate::db_open::read_options;
use crate::failure::Failure;

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
    /// An agent of the vocabulary instead: uniform, upcard, upcard-plus-one, greedy,
    /// equilibrium, equilibrium-pure, or a mixture such as 0.6*upcard+0.4*uniform.
    #[arg(long, value_name = "AGENT", value_parser = agent_arg)]
    pub builtin: Option<Agent>,
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
    /// An agent of the vocabulary.
    Agent(Agent),
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
            (None, None, Some(agent)) => Ok(Player::Agent(agent.clone())),
            _ => Err(Failure::Usage(
                "give exactly one of --bot, --bot-url and --builtin".into(),
            )),
        }
    }

    fn label(&self) -> String {
        match self {
            Player::Program(command) => format!("the bot `{command}`"),
            Player::Service(url) => format!("the bot at {url}"),
            Player::Agent(agent) => format!("the built-in `{agent}`"),
        }
    }
}

/// The db's readers' slices, all threads together.
const CACHE_BYTES: usize = 1 << 30;

pub fn arena(args: ArenaArgs) -> Result<(), Failure> {
    let player = Player::of(&args)?;
    let book = crate::db_open::open_reader(&args.db, &read_options(&args.on_demand))?;
    if let Player::Agent(agent) = &player {
        agent
            .check_fits(book.n(), book.objective())
            .map_err(|e| Failure::Runtime(e.to_string()))?;
    }
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let threads = threads_or_all_cores(args.threads);
    let limit = Duration::from_millis(args.timeout_ms);
    let make_bot = || -> Result<Box<dyn Bot + '_>, gops_arena::protocol::BotFault> {
        Ok(match &player {
            Player::Program(command) => Box::new(ProcessBot::new(command, limit)),
            Player::Service(url) => Box::new(HttpBot::new(url, limit)),
            Player::Agent(agent) => {
                Box::new(AgentBot::new(agent.clone(), &book, CACHE_BYTES / threads))
            }
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
    let summary = run_arena(&book, &options, &make_bot, &mut |game| {
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
    crate::out!("{}", summary.text(&player.label(), &args.db));
    Ok(())
}
