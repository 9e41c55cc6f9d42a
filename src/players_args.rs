//! The players' command lines (`play`, `simulate`, `exploit`, `fit`, `respond`, `coach`):
//! their flags, and the parsers of an agent, a model and a risk shared by them and by
//! `arena`.

use std::path::PathBuf;

use clap::Args;
use gops_arena::agent::{Agent, Model};

use crate::args::{OnDemandArgs, StateArgs};

#[derive(Args)]
pub struct PlayArgs {
    /// Database directory of a solved game.
    #[arg(long)]
    pub db: PathBuf,
    /// Seed for the prize order and the bot's draws [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Show the bot's probabilities before every bid without being asked.
    #[arg(long)]
    pub show_probabilities: bool,
    /// The bot's agent (the names of `simulate`).
    #[arg(long, value_name = "AGENT", default_value = "equilibrium", value_parser = agent_arg)]
    pub opponent: Agent,
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}

/// An agent of the vocabulary (`gops_arena::agent`), by name, alias or mixture.
pub fn agent_arg(text: &str) -> Result<Agent, String> {
    Agent::parse(text).map_err(|e| e.to_string())
}

#[derive(Args)]
pub struct SimulateArgs {
    /// Database directory of a solved game.
    #[arg(long)]
    pub db: PathBuf,
    /// A's agent: uniform, upcard, upcard-plus-one, greedy, equilibrium,
    /// equilibrium-pure, or a mixture such as 0.6*upcard+0.4*uniform (the old names
    /// optimal, random, match and plus-one still work).
    #[arg(long, value_name = "AGENT", value_parser = agent_arg)]
    pub a: Agent,
    /// B's agent (as A's).
    #[arg(long, value_name = "AGENT", value_parser = agent_arg)]
    pub b: Agent,
    /// Number of games.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub games: u64,
    /// Seed [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write B's decisions to FILE, one JSON line each (a request with its `bid`): the
    /// games file of `gops fit`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}

#[derive(Args)]
pub struct CoachArgs {
    /// Database directory of a solved game, or a book.
    #[arg(long)]
    pub db: PathBuf,
    /// The opponent's model (an agent of the vocabulary, a mixture, or fit:FILE)
    /// [default: uniform, or with --learn the fit as soon as there are decisions].
    #[arg(long, value_name = "MODEL", value_parser = model_arg, conflicts_with = "learn")]
    pub opponent: Option<Model>,
    /// Learn the opponent: refit the model after each of their decisions, from the
    /// session file's decisions on.
    #[arg(long)]
    pub learn: bool,
    /// What the advice may risk below the game's value, over a whole game.
    #[arg(long, default_value_t = 0.0, value_parser = risk_arg)]
    pub risk: f64,
    /// The session file: the opponent's decisions, one JSON line each (a games file of
    /// `gops fit`), continued by the next game [default with --learn:
    /// coach-session.jsonl].
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// Seed of the bids drawn from the advice [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}

fn risk_arg(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        _ => Err(format!("{text:?} is not a number of at least 0")),
    }
}

#[derive(Args)]
pub struct RespondArgs {
    /// The state to start from (the flags of `value`; the start of the game by default).
    #[command(flatten)]
    pub state: StateArgs,
    /// The opponent's model, played by B: an agent of the vocabulary, a mixture such as
    /// 0.6*upcard+0.4*uniform, or fit:FILE.
    #[arg(long, value_name = "MODEL", value_parser = model_arg)]
    pub opponent: Model,
}

/// An opponent model (`gops_arena::agent::Model`), by name, mixture or `fit:FILE`.
pub fn model_arg(text: &str) -> Result<Model, String> {
    Model::parse(text).map_err(|e| e.to_string())
}

#[derive(Args)]
pub struct FitArgs {
    /// The recorded decisions: one JSON line each, a bot-protocol request with its `bid`
    /// (`simulate --record`, the coach), or `gops arena --json`'s records.
    #[arg(long)]
    pub games: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ExploitArgs {
    /// Database directory of a solved game.
    #[arg(long)]
    pub db: PathBuf,
    /// The agent, played as A (the game is symmetric): any agent that bids by the state
    /// (the names of `simulate`).
    #[arg(long, visible_alias = "agent", value_name = "AGENT", value_parser = agent_arg)]
    pub policy: Agent,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}
