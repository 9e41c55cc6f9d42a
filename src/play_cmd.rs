//! `gops play`: a game in the terminal against an agent (the equilibrium by default),
//! stepped through the arena's [`Table`]. The player is A, the bot is B; its bid is
//! drawn before the player's is read. Works the same with stdin a pipe (scripts, tests): every line is one
//! answer, anything unreadable is asked again, end of input ends the game.

use std::io::{BufRead, IsTerminal, Write};

use gops_arena::agent::Player;
use gops_arena::protocol::Seat;
use gops_arena::table::Table;
use gops_common::cards::CardSet;
use gops_common::human::strategy_line;
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
    args.opponent
        .check_fits(book.n(), book.objective())
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let stdin = std::io::stdin();
    let echoes = stdin.is_terminal();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| Failure::Runtime(format!("cannot write to the terminal: {e}"));

    let n = reader.n();
    let mut table = Table::new(n, reader.objective());
    let mut bot = Player::new(args.opponent.clone());
    let start_value = reader.value(table.state())?;
    let plays = match bot.agent().name().as_str() {
        "equilibrium" => "the equilibrium".to_string(),
        name => format!("`{name}`"),
    };
    writeln!(
        out,
        "GOPS with {n} cards, objective {} (seed {seed}). You are A; the bot plays {plays}.",
        reader.objective()
    )
    .map_err(io)?;
    writeln!(
        out,
        "Value of the game for you at the start: {start_value:.6}. Type a card to bid, '?' for the bot's probabilities, 'q' to quit."
    )
    .map_err(io)?;

    let mut quit = false;
    while !table.is_over() && !quit {
        let round = table.round();
        let upcard = table.turn_up(&mut rng);
        let bot_strategy = bot.probabilities(&mut reader, &table.request(0, Seat::B))?;
        let bot_bid = table.draw(Seat::B, &bot_strategy, &mut rng);
        let state = *table.state();
        let (yours, bots) = table.taken();
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
        let played = table.play(bid, bot_bid).expect("both bids are held cards");
        let outcome = match played.winner() {
            Some(Seat::A) => format!("you win {upcard}"),
            Some(Seat::B) => format!("the bot wins {upcard}"),
            None => format!("a tie: nobody wins {upcard}"),
        };
        writeln!(
            out,
            "round {round}: prize {upcard}, you bid {bid}, bot bid {bot_bid}: {outcome}"
        )
        .map_err(io)?;
    }

    writeln!(out).map_err(io)?;
    let (yours, bots) = table.taken();
    if quit {
        // an unfinished game has no winner: say where it stood, not who "won"
        let played = table.round() - 1;
        let rounds = if played == 1 { "round" } else { "rounds" };
        writeln!(
            out,
            "game abandoned after {played} {rounds}, {} prizes unplayed: score you {yours}, bot {bots} (no result)",
            table.state().prizes.len()
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
