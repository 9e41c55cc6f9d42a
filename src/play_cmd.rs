//! `gops play`: a game in the terminal against the optimal strategy. The player is A,
//! the bot is B and bids from its equilibrium mixed strategy, drawn before the player's
//! bid is read. Works the same with stdin a pipe (scripts, tests): every line is one
//! answer, anything unreadable is asked again, end of input ends the game.

use std::io::{BufRead, IsTerminal, Write};

use gops_arena::policy::{Policy, Side, bid_distribution};
use gops_common::cards::CardSet;
use gops_common::human::strategy_line;
use gops_common::rules::{draw, play_round, turn_up};
use gops_common::state::GameState;
use gops_db::read::CachedReader;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::args::PlayArgs;
use crate::db_open::read_options;
use crate::failure::Failure;

/// Slices the bot keeps in memory.
const CACHE_BYTES: usize = 256 << 20;

pub fn run(args: PlayArgs) -> Result<(), Failure> {
    let book = crate::db_open::open_reader(&args.db, &read_options(&args.on_demand))?;
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let stdin = std::io::stdin();
    let echoes = stdin.is_terminal();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| Failure::Runtime(format!("cannot write to the terminal: {e}"));

    let n = reader.n();
    let mut state = GameState::initial(n);
    let start_value = reader.value(&state)?;
    writeln!(
        out,
        "GOPS with {n} cards, objective {} (seed {seed}). You are A; the bot plays the equilibrium.",
        reader.objective()
    )
    .map_err(io)?;
    writeln!(
        out,
        "Value of the game for you at the start: {start_value:.6}. Type a card to bid, '?' for the bot's probabilities, 'q' to quit."
    )
    .map_err(io)?;

    let (mut yours, mut bots) = (0u32, 0u32);
    let mut round = 0;
    let mut quit = false;
    while !state.prizes.is_empty() && !quit {
        round += 1;
        let upcard = turn_up(state.prizes, &mut rng);
        let bot_strategy = bid_distribution(Policy::Optimal, Side::B, &mut reader, &state, upcard)?;
        let bot_bid = draw(state.b, &bot_strategy, &mut rng);
        writeln!(
            out,
            "\nround {round}: prize {upcard} turned up (prizes left after it: {})",
            list(state.prizes.without(upcard))
        )
        .map_err(io)?;
        writeln!(
            out,
            "score: you {yours}, bot {bots}; your cards: {}; bot's cards: {}",
            list(state.a),
            list(state.b)
        )
        .map_err(io)?;
        if args.show_probabilities {
            writeln!(out, "bot bids  {}", strategy_line(state.b, &bot_strategy)).map_err(io)?;
        }
        let bid = loop {
            write!(out, "your bid> ").map_err(io)?;
            out.flush().map_err(io)?;
            let mut line = String::new();
            let read = input
                .read_line(&mut line)
                .map_err(|e| Failure::Runtime(format!("cannot read input: {e}")))?;
            let answer = line.trim();
            if !echoes {
                // a script's answers are not echoed by a terminal: show them in the transcript
                writeln!(out, "{answer}").map_err(io)?;
            }
            if read == 0 || answer.eq_ignore_ascii_case("q") || answer.eq_ignore_ascii_case("quit")
            {
                quit = true;
                break None;
            }
            if answer == "?" {
                writeln!(out, "bot bids  {}", strategy_line(state.b, &bot_strategy)).map_err(io)?;
                continue;
            }
            match answer.parse::<u8>() {
                Ok(card) if state.a.contains(card) => break Some(card),
                _ => writeln!(
                    out,
                    "'{answer}' is not one of your cards ({}); try again",
                    list(state.a)
                )
                .map_err(io)?,
            }
        };
        let Some(bid) = bid else { break };
        let outcome = match bid.cmp(&bot_bid) {
            std::cmp::Ordering::Greater => {
                yours += u32::from(upcard);
                format!("you win {upcard}")
            }
            std::cmp::Ordering::Less => {
                bots += u32::from(upcard);
                format!("the bot wins {upcard}")
            }
            std::cmp::Ordering::Equal => format!("a tie: nobody wins {upcard}"),
        };
        writeln!(
            out,
            "round {round}: prize {upcard}, you bid {bid}, bot bid {bot_bid}: {outcome}"
        )
        .map_err(io)?;
        state = play_round(&state, upcard, bid, bot_bid);
    }

    writeln!(out).map_err(io)?;
    if quit {
        // an unfinished game has no winner: say where it stood, not who "won"
        let played = round - 1;
        let rounds = if played == 1 { "round" } else { "rounds" };
        writeln!(
            out,
            "game abandoned after {played} {rounds}, {} prizes unplayed: score you {yours}, bot {bots} (no result)",
            state.prizes.len()
        )
        .map_err(io)?;
        return Ok(());
    }
    let result = match yours.cmp(&bots) {
        std::cmp::Ordering::Greater => "you win",
        std::cmp::Ordering::Less => "the bot wins",
        std::cmp::Ordering::Equal => "a draw",
    };
    writeln!(out, "final score: you {yours}, bot {bots}: {result}").map_err(io)?;
    Ok(())
}

fn list(cards: CardSet) -> String {
    if cards.is_empty() {
        "none".to_string()
    } else {
        cards.to_string()
    }
}
