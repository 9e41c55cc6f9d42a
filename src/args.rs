//! The raw command line (clap). Values that need the game (cards, which depend on N) are
//! kept as text here and validated by the commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use gops_common::Objective;

#[derive(Parser)]
#[command(
    name = "gops",
    version,
    about = "Exact solver of Goofspiel (the Game Of Pure Strategy)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Log filter for stderr (error, warn, info, debug, trace; or a tracing directive).
    /// RUST_LOG overrides it.
    #[arg(long, global = true, default_value = "info")]
    pub log: String,
}

#[derive(Subcommand)]
pub enum Command {
    /// Solve a game into a database, resuming an interrupted solve.
    Solve(SolveArgs),
    /// Show the progress and checksums of a database.
    Status(StatusArgs),
    /// The value of a state for player A.
    Value(StateArgs),
    /// Both players' optimal strategies once a prize is turned up.
    Strategy(StrategyArgs),
}

fn parse_objective(s: &str) -> Result<Objective, String> {
    s.parse()
}

#[derive(Args)]
pub struct SolveArgs {
    /// Cards per player (1 to 16; 13 is the standard game).
    #[arg(long, allow_hyphen_values = true)]
    pub n: i64,
    /// What A maximises: `points` (expected score difference) or `win` (P(win) - P(loss)).
    #[arg(long, default_value = "points", value_parser = parse_objective)]
    pub objective: Objective,
    /// Database directory (created if missing).
    #[arg(long, default_value = "gops-db")]
    pub db: PathBuf,
    /// Solver threads [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Do not print the first-move strategies after the summary.
    #[arg(long)]
    pub no_first_moves: bool,
    /// Stop after solving this many slices, as if interrupted (for testing resume).
    #[arg(long, hide = true)]
    pub stop_after_slices: Option<usize>,
}

#[derive(Args)]
pub struct StatusArgs {
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Clone)]
pub struct StateArgs {
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
    /// A's cards, comma-separated [default: the full hand].
    #[arg(long, allow_hyphen_values = true)]
    pub a: Option<String>,
    /// B's cards [default: the full hand].
    #[arg(long, allow_hyphen_values = true)]
    pub b: Option<String>,
    /// The prizes not yet turned up [default: all].
    #[arg(long, allow_hyphen_values = true)]
    pub prizes: Option<String>,
    /// A's score minus B's so far (matters for `win`).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub diff: i64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct StrategyArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// The prize turned up.
    #[arg(long, allow_hyphen_values = true)]
    pub upcard: i64,
}
