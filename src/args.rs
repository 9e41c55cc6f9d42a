//! The raw command line (clap). Values that need the game (cards, which depend on N) are
//! kept as text here and validated by the commands.

use std::path::PathBuf;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand};
use gops_common::Objective;
use gops_coordinator::config::VerifyMode;

pub use crate::players_args::{
    CoachArgs, ExploitArgs, FitArgs, PlayArgs, RespondArgs, SimulateArgs, agent_arg,
};

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
    /// RUST_LOG overrides it. [default: info; warn for `solve` on a terminal, where the
    /// progress bar shows the progress]
    #[arg(long, global = true)]
    pub log: Option<String>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Solve a game into a database, resuming an interrupted solve.
    Solve(SolveArgs),
    /// Show the progress and checksums of a database.
    Status(StatusArgs),
    /// The value of a state for player A.
    Value(StateArgs),
    /// Run a coordinator: own the db, hand shards to workers over gRPC.
    Coordinator(CoordinatorArgs),
    /// Run a worker: solve shards for a coordinator.
    Worker(WorkerArgs),
    /// Both players' optimal strategies once a prize is turned up.
    Strategy(StrategyArgs),
    /// Write the strategy database to a file (CSV, JSON lines, Parquet or SQLite).
    Export(ExportArgs),
    /// Play a game against the optimal strategy (or any agent) in the terminal.
    Play(PlayArgs),
    /// Play many games between two agents and report the results.
    Simulate(SimulateArgs),
    /// How much a best-responding opponent gains against an agent, exactly.
    Exploit(ExploitArgs),
    /// Fit an opponent model (a mixture of the simple rules) to recorded decisions.
    Fit(FitArgs),
    /// The exact best response to an opponent model, against the equilibrium's result.
    Respond(RespondArgs),
    /// A coach for a real game: type the upcards and the opponent's bids, get advice.
    Coach(CoachArgs),
    /// Re-check a database: layer checksums, and stored states re-solved bit for bit.
    Verify(VerifyArgs),
    /// Serve the strategy explorer (a page for the browser) and the query API over HTTP.
    Serve(ServeArgs),
    /// Seal a db's complete layers (a db of an earlier build), so that any number of
    /// readers can read it at once, without its lock, on read-only media too.
    Seal(SealArgs),
    /// Write a book: the top layers of a complete db; the states below them are solved
    /// on demand by every reader.
    Book(BookArgs),
    /// A bot (a program, a service or a built-in rule) against the equilibrium: its
    /// mean result and its exact loss, decision by decision.
    Arena(crate::arena_cmd::ArenaArgs),
}

#[derive(Args)]
pub struct BookArgs {
    /// The complete db (or a book) to take the layers from.
    #[arg(long)]
    pub db: PathBuf,
    /// The lowest layer (cards left) the book keeps; layers 1 to K - 1 are solved on
    /// demand.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=16))]
    pub from_layer: u8,
    /// The book's directory (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
}

/// How a book solves the states below its layers (a full db needs none of it).
#[derive(Args, Clone, Debug, Default)]
pub struct OnDemandArgs {
    /// Memory for the subtrees a book solves on demand, in MiB [default: 4096]: solved
    /// subtrees are kept until a new one needs the room (least recently used first); a
    /// subtree estimated above it is refused before any work.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub memory_mb: Option<u64>,
    /// The largest subtree a book solves on demand, in matrix games (estimated, at
    /// most) [default: 2000000000]; a larger one is refused before any work.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_on_demand_games: Option<u64>,
}

#[derive(Args)]
pub struct SealArgs {
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
}

/// `--threads`, or every core the machine offers.
pub fn threads_or_all_cores(threads: Option<u16>) -> usize {
    threads
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |t| t.get()))
}

fn parse_objective(s: &str) -> Result<Objective, String> {
    s.parse()
}

/// `--verify-slices`: a share of the slices, checked where the coordinator checks it.
fn parse_share(s: &str) -> Result<f64, String> {
    let share = s.parse::<f64>().map_err(|e| format!("not a number: {e}"))?;
    gops_coordinator::config::verify_slices(share)
}

/// `--verify-mode`: one of the coordinator's names, listed in `--help`.
fn verify_mode_parser() -> impl TypedValueParser<Value = VerifyMode> {
    clap::builder::PossibleValuesParser::new(VerifyMode::NAMES)
        .map(|name| name.parse().expect("a name of VerifyMode::NAMES"))
}

/// `--verify-fraction`: a fraction of the states, checked where the coordinator checks it.
fn parse_fraction(s: &str) -> Result<f64, String> {
    let fraction = s.parse::<f64>().map_err(|e| format!("not a number: {e}"))?;
    gops_coordinator::config::verify_fraction(fraction)
}

#[derive(Args)]
pub struct SolveArgs {
    /// Cards per player (1 to 16; 13 is the standard game); `-n N` for short.
    #[arg(short = 'n', long, allow_hyphen_values = true)]
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
    /// Do not print the value and first-move strategies before the summary.
    #[arg(long)]
    pub no_first_moves: bool,
    /// Start even if the db's file system has less free space than the db is estimated
    /// to need.
    #[arg(long)]
    pub skip_disk_check: bool,
    /// A rolling solve: each layer below K loses its data once the layer above it is
    /// sealed (its record and checksum stay), so the disk holds two adjacent layers and
    /// those kept; the finished db is a book of layers K to N. A resume remembers it.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..=16))]
    pub keep_from_layer: Option<u8>,
    /// Memory budget of the process in MiB, split among its caches [default: half the
    /// memory available, at most 3072]; refused when below what the game needs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub memory_mb: Option<u64>,
    /// Stop after solving this many slices, as if interrupted (for testing resume).
    #[arg(long, hide = true)]
    pub stop_after_slices: Option<usize>,
    /// Lease nothing more after this many slices, without stopping: the run holds (for
    /// testing what a stalled run says).
    #[arg(long, hide = true)]
    pub hold_after_slices: Option<usize>,
    /// Seconds without progress that make a stall [default: four leases, 240].
    #[arg(long, hide = true, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub stall_secs: Option<u64>,
    /// Fraction F of the states handed in that the in-process coordinator re-solves and
    /// compares bit for bit: F of every slice's states, or with --verify-slices Q below 1,
    /// F / Q of the states of a share Q of the slices. 0, the default, re-solves nothing
    /// (the same process computed them; the cheap checks still run); `gops verify`
    /// re-checks a db afterwards.
    #[arg(long, default_value_t = 0.0, value_parser = parse_fraction, allow_negative_numbers = true)]
    pub verify_fraction: f64,
    /// Share of the slices whose states are re-solved, each chosen at random with
    /// --verify-fraction / SHARE of its states: the same states re-solved in all, fewer
    /// slices of the layer below read (0 < SHARE <= 1).
    #[arg(long, value_name = "SHARE", default_value_t = 1.0, value_parser = parse_share, allow_negative_numbers = true)]
    pub verify_slices: f64,
    /// Solve without the coordinator/worker protocol (to measure what it costs).
    #[arg(long, hide = true)]
    pub no_grpc: bool,
    /// Serve the live dashboard of this solve at http://ADDR/ while it runs (e.g.
    /// 127.0.0.1:0: any free port); its address, with the run's token, is printed on
    /// stderr.
    #[arg(long, value_name = "ADDR", conflicts_with = "no_grpc")]
    pub dashboard: Option<std::net::SocketAddr>,
}

#[derive(Args)]
pub struct CoordinatorArgs {
    /// Cards per player (1 to 16); `-n N` for short.
    #[arg(short = 'n', long, allow_hyphen_values = true)]
    pub n: i64,
    #[arg(long, default_value = "points", value_parser = parse_objective)]
    pub objective: Objective,
    /// Database directory (created if missing).
    #[arg(long)]
    pub db: PathBuf,
    /// Start even if the db's file system has less free space than the db is estimated
    /// to need.
    #[arg(long)]
    pub skip_disk_check: bool,
    /// A rolling solve: each layer below K loses its data once the layer above it is
    /// sealed (its record and checksum stay), so the disk holds two adjacent layers and
    /// those kept; the finished db is a book of layers K to N. A resume remembers it.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..=16))]
    pub keep_from_layer: Option<u8>,
    /// Memory budget of the process in MiB, split among its caches [default: half the
    /// memory available, at most 3072]; refused when below what the game needs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub memory_mb: Option<u64>,
    /// Address to serve gRPC on, e.g. 0.0.0.0:7700.
    #[arg(long)]
    pub listen: std::net::SocketAddr,
    /// File holding the run's token; every call must carry it. Several lines: one token
    /// per worker (lines starting with # are comments), and standing lost for rejected
    /// submissions stays with the token.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Serve an address other machines can reach without --token-file (anyone who
    /// reaches it can join the run and waste its work); refused without this flag.
    #[arg(long)]
    pub insecure: bool,
    /// PEM certificate chain: serve gRPC over TLS only (needs --tls-key). Workers then
    /// use an https:// URL whose host the certificate names.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Address to serve Prometheus metrics on (/metrics).
    #[arg(long)]
    pub metrics: Option<std::net::SocketAddr>,
    /// Lease length in milliseconds: a worker silent this long loses its shard
    /// (200 to 86400000; workers heartbeat every third of it).
    #[arg(long, default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(*gops_coordinator::cluster::LEASE_RANGE_MS.start()..=*gops_coordinator::cluster::LEASE_RANGE_MS.end()))]
    pub lease_ms: u64,
    /// Connections open at once; at the cap a new connection pushes out the oldest one
    /// that has not passed the token check [default: 4096, or the file limit less 256 if
    /// that is lower].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: Option<u64>,
    /// Connections open at once from one IPv4 address (or IPv6 /64); more are closed at
    /// once. Raise it for many workers behind one NAT address [default: 512].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_address: Option<u64>,
    /// Fraction F of the states handed in that the coordinator re-solves and compares bit
    /// for bit: F of every slice's states, or with --verify-slices Q below 1, F / Q of the
    /// states of a share Q of the slices.
    #[arg(long, default_value_t = 0.01, value_parser = parse_fraction, allow_negative_numbers = true)]
    pub verify_fraction: f64,
    /// Share of the submitted slices whose states are re-solved, each chosen at random
    /// with --verify-fraction / SHARE of its states: the same states re-solved in all,
    /// fewer slices of the layer below read (0 < SHARE <= 1; see
    /// docs/guide/security.md).
    #[arg(long, value_name = "SHARE", default_value_t = 1.0, value_parser = parse_share, allow_negative_numbers = true)]
    pub verify_slices: f64,
    /// How submissions are verified: `sample` (--verify-fraction of each slice's states
    /// re-solved) or `replicate` (also: every shard solved by two workers, or two tokens
    /// when there is one per worker, and stored only when their copies agree; twice the
    /// work). See docs/guide/security.md.
    #[arg(long, default_value = "sample", value_parser = verify_mode_parser())]
    pub verify_mode: VerifyMode,
    /// Matrix games per shard the coordinator aims for (smaller shards spread a layer
    /// over more workers; larger ones cost fewer round trips).
    #[arg(long, default_value_t = 4_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub shard_games: u64,
    /// Seconds between progress log lines.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub progress_secs: u64,
    /// Stop serving once the run is complete.
    #[arg(long)]
    pub exit_when_done: bool,
    /// Lease nothing more once this run has stored this many slices, and say so in the
    /// log: the run holds mid-way (for testing a restart). The same hold as `solve
    /// --hold-after-slices`; `--stop-after-slices`, its name before, still works.
    #[arg(long, hide = true, alias = "stop-after-slices")]
    pub hold_after_slices: Option<u64>,
}

#[derive(Args)]
pub struct WorkerArgs {
    /// The coordinator's URL, e.g. http://10.0.0.1:7700, or https://HOST:7700 for a
    /// coordinator serving TLS.
    #[arg(long)]
    pub coordinator: String,
    /// PEM of the CA (or the self-signed certificate) to trust for an https:// URL
    /// [default: the webpki roots].
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Solver threads [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// File holding the run's token.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Memory for cached dependency slices, in MiB (instead of --memory-mb).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "memory_mb")]
    pub cache_mb: Option<u64>,
    /// Memory budget of the worker in MiB; its cache gets what the game's need leaves
    /// [default: half the memory available, at most 3072].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub memory_mb: Option<u64>,
    /// A name for logs and status [default: the host name].
    #[arg(long)]
    pub name: Option<String>,
    /// The coordinator's --db directory as this machine sees it (a shared file system,
    /// read only is enough): dependency slices are read from it, checked against the
    /// digests the coordinator gives, instead of fetched through the coordinator
    /// [default: fetch every slice].
    #[arg(long, value_name = "DIR")]
    pub slices_dir: Option<PathBuf>,
    /// Give up after the coordinator has been unreachable this many seconds (at most 30
    /// when it has never been reached: a mistyped address fails fast).
    #[arg(long, default_value_t = 900)]
    pub give_up_secs: u64,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["db", "coordinator"])))]
pub struct StatusArgs {
    /// Database directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// A running coordinator's URL instead of a db.
    #[arg(long)]
    pub coordinator: Option<String>,
    /// File holding the run's token (with --coordinator).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// PEM of the CA to trust for an https:// coordinator [default: the webpki roots].
    #[arg(long, value_name = "FILE", conflicts_with = "db")]
    pub tls_ca: Option<PathBuf>,
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
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}

#[derive(Args)]
pub struct StrategyArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// The prize turned up.
    #[arg(long, allow_hyphen_values = true)]
    pub upcard: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Jsonl,
    Parquet,
    Sqlite,
}

impl ExportFormat {
    /// The library's format of the same name.
    pub fn file_format(self) -> gops_db::export::files::FileFormat {
        use gops_db::export::files::FileFormat;
        match self {
            ExportFormat::Csv => FileFormat::Csv,
            ExportFormat::Jsonl => FileFormat::Jsonl,
            ExportFormat::Parquet => FileFormat::Parquet,
            ExportFormat::Sqlite => FileFormat::Sqlite,
        }
    }
}

#[derive(Args)]
pub struct ExportArgs {
    /// Database directory of a solved game.
    #[arg(long)]
    pub db: PathBuf,
    /// File format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// The file to write (refused if it exists, unless --force).
    #[arg(long)]
    pub out: PathBuf,
    /// Layers (cards left) to export: K..L (inclusive), K.., ..L or K [default: all].
    #[arg(long)]
    pub layers: Option<String>,
    /// One row per concrete (A, B, C) a canonical state stands for, both orientations
    /// (for small games: rows multiply by up to 2 C(N, pattern length)).
    #[arg(long)]
    pub concrete: bool,
    /// For `win`: every live score difference, also those whose value is exactly -1 or
    /// +1 (by default only the undecided ones are written).
    #[arg(long)]
    pub all_diffs: bool,
    /// Replace --out if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Database directory of a solved (or partly solved) game.
    #[arg(long)]
    pub db: PathBuf,
    /// Fraction of each slice's states to re-solve, in (0, 1]; 1 checks every state.
    #[arg(long, default_value_t = 0.01)]
    pub fraction: f64,
    /// Layers (cards left) to verify: K..L (inclusive), K.., ..L or K [default: all].
    #[arg(long)]
    pub layers: Option<String>,
    /// Seed of the sample: the same seed re-solves the same states [default: from the
    /// clock; the report prints it].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Threads [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Memory budget in MiB: the slices of the layer below are read in batches that fit
    /// what the game's need and one slice per thread leave; a book's budget is split in
    /// half between those slices and the subtrees solved on demand [default: half the
    /// memory available, at most 3072].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub memory_mb: Option<u64>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// A book: states of its lowest layer re-solved from children solved on demand (each
    /// a subtree as large as that layer's states are), drawn over the whole layer.
    #[arg(long, default_value_t = 2)]
    pub on_demand_states: usize,
    /// A book: the largest subtree solved on demand, in matrix games [default:
    /// 2000000000]; half of --memory-mb bounds the subtrees kept.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_on_demand_games: Option<u64>,
}

#[derive(Args)]
pub struct ServeArgs {
    /// Database directory of a solved game.
    #[arg(long)]
    pub db: PathBuf,
    /// Address to serve HTTP on.
    #[arg(long, default_value = "127.0.0.1:7800")]
    pub listen: std::net::SocketAddr,
    /// File holding the token(s) the page and the API ask for (lines starting with # are
    /// comments): `Authorization: Bearer <token>`, or `?token=<token>` in the address.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Serve an address other machines can reach without --token-file (anyone who
    /// reaches it can read the db); refused without this flag.
    #[arg(long)]
    pub insecure: bool,
    /// Memory for cached slices of the db, in MiB.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub cache_mb: u64,
    #[command(flatten)]
    pub on_demand: OnDemandArgs,
}
