//! `gops`: the command line of the GOPS solver (DESIGN §6). Parses arguments, sets up
//! logging and hands each command to its module; the work itself lives in the library
//! crates. Exit codes: 0 success, 1 runtime failure, 2 bad input, 130 interrupted.

mod arena_cmd;
mod args;
mod book_cmd;
mod cluster_cmd;
mod coach_cmd;
mod db_open;
mod export_cmd;
mod failure;
mod fit_cmd;
mod input;
mod network;
mod on_demand_progress;
mod output;
mod play_cmd;
mod players_args;
mod policy_cmd;
mod progress;
mod query_cmd;
mod respond_cmd;
mod seal_cmd;
mod serve_cmd;
mod signals;
mod solve_cmd;
mod status_cmd;
mod verify_cmd;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() {
    gops_common::system::tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // one line, like every other input error: what comes before the usage hint
            let text = e.render().to_string();
            let mut message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            // an unknown flag: the command's usage, on the same line
            let usage = text.lines().find_map(|l| l.trim().strip_prefix("Usage: "));
            if let (clap::error::ErrorKind::UnknownArgument, Some(usage)) = (e.kind(), usage) {
                message.push("; usage:");
                message.push(usage);
            }
            eprintln!("{}", message.join(" "));
            std::process::exit(2);
        }
    };
    let level = cli.log.clone().unwrap_or_else(|| {
        let solve_on_terminal = matches!(cli.command, Command::Solve(_))
            && std::io::IsTerminal::is_terminal(&std::io::stderr());
        if solve_on_terminal { "warn" } else { "info" }.to_string()
    });
    progress::init_logging(&level);
    let result = match cli.command {
        Command::Solve(args) => solve_cmd::run(args),
        Command::Status(args) => status_cmd::status(args),
        Command::Coordinator(args) => cluster_cmd::coordinator(args),
        Command::Worker(args) => cluster_cmd::worker(args),
        Command::Value(args) => query_cmd::value(args),
        Command::Strategy(args) => query_cmd::strategy(args),
        Command::Export(args) => export_cmd::run(args),
        Command::Play(args) => play_cmd::run(args),
        Command::Simulate(args) => policy_cmd::simulate(args),
        Command::Exploit(args) => policy_cmd::exploit(args),
        Command::Fit(args) => fit_cmd::fit(args),
        Command::Respond(args) => respond_cmd::respond(args),
        Command::Coach(args) => coach_cmd::coach(args),
        Command::Verify(args) => verify_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Seal(args) => seal_cmd::run(args),
        Command::Book(args) => book_cmd::run(args),
        Command::Arena(args) => arena_cmd::arena(args),
    };
    if let Err(failure) = result {
        eprintln!("error: {}", failure.message());
        std::process::exit(failure.exit_code());
    }
}
