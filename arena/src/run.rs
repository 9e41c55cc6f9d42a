//! A run of the arena: G games, the bot's seat alternating, played on `threads` threads,
//! each with its own bot and its own reader of the db; the finished games handed back in
//! game order, so that the records, the tally and the summary are the same for any
//! number of threads. Before the first game, a book is asked whether it can answer the
//! states the games will meet ([`preflight`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::channel;
use std::time::Instant;

use gops_common::rules::random_game_states;
use gops_common::state::GameState;
use gops_db::book::Book;
use gops_db::book::on_demand::OnDemandError;
use gops_db::read::{CachedReader, QueryError};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::bot::Bot;
use crate::game::{GameRecord, play_game};
use crate::protocol::{BotFault, Seat};
use crate::report::{Summary, Tally};

/// How a run is played.
#[derive(Clone, Copy, Debug)]
pub struct ArenaOptions {
    pub games: u64,
    pub seed: u64,
    pub threads: usize,
    /// Slice cache of the db's readers, all threads together.
    pub cache_bytes: usize,
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    #[error("the db cannot answer the games' states: {0}")]
    Preflight(OnDemandError),
    #[error("the db could not answer game {game}: {error}")]
    Db { game: u64, error: QueryError },
    #[error("{0}")]
    Bot(BotFault),
}

/// States drawn along random games to ask a book about before the first game.
pub const PREFLIGHT_STATES: usize = 32;

/// For a book: whether the states the games meet below its layers are within the
/// on-demand limits, asked of states drawn along random games at the two layers whose
/// subtrees are the largest (the first below the book, and the games after an upcard of
/// its lowest layer). Nothing is solved.
pub fn preflight(book: &Book, seed: u64) -> Result<(), ArenaError> {
    let Some(on_demand) = book.below() else {
        return Ok(());
    };
    let (n, from) = (book.n(), on_demand.from_layer());
    let mut rng = StdRng::seed_from_u64(seed ^ 0xA4E7A);
    let mut ask = |k: u8, upcard: bool| -> Result<(), ArenaError> {
        if k == 0 || k > n {
            return Ok(());
        }
        for (state, u) in
            random_game_states(n, PREFLIGHT_STATES, &mut rng, |s: &GameState| s.k() == k)
        {
            let upcard = upcard.then_some(u);
            if let Some(refusal) = on_demand.refusal(&state, upcard) {
                return Err(ArenaError::Preflight(refusal));
            }
        }
        Ok(())
    };
    ask(from - 1, false)?;
    ask(from, true)
}

/// Plays the run: `make_bot` gives each thread its bot, `on_game` hears each finished
/// game in game order. The summary, or the first error of the db.
pub fn run_arena<'b>(
    book: &'b Book,
    options: &ArenaOptions,
    make_bot: &(dyn Fn() -> Result<Box<dyn Bot + 'b>, BotFault> + Sync),
    on_game: &mut dyn FnMut(&GameRecord),
) -> Result<Summary, ArenaError> {
    let started = Instant::now();
    preflight(book, options.seed)?;
    let threads = options.threads.max(1).min(options.games.max(1) as usize);
    let cache = (options.cache_bytes / threads).max(1 << 20);
    let game_value = book
        .value(&GameState::initial(book.n()))
        .map_err(|error| ArenaError::Db { game: 0, error })?;
    let mut tally = Tally::new(book.n(), book.objective(), options.seed, game_value);
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let (send, finished) = channel::<(u64, Result<GameRecord, ArenaError>)>();
    let mut failure = None;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let send = send.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || {
                let mut bot = match make_bot() {
                    Ok(bot) => bot,
                    Err(fault) => {
                        let _ = send.send((u64::MAX, Err(ArenaError::Bot(fault))));
                        return;
                    }
                };
                let mut reader = CachedReader::cached(book, cache);
                while !stop.load(Ordering::Relaxed) {
                    let game = next.fetch_add(1, Ordering::Relaxed);
                    if game >= options.games {
                        break;
                    }
                    let played = play_game(
                        &mut reader,
                        bot.as_mut(),
                        options.seed,
                        game,
                        Seat::of_game(game),
                    )
                    .map_err(|error| ArenaError::Db { game, error });
                    if send.send((game, played)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        // the games as they finish, handed on in game order
        let mut waiting: BTreeMap<u64, GameRecord> = BTreeMap::new();
        let mut due = 0u64;
        for (game, played) in finished {
            match played {
                Ok(record) => {
                    waiting.insert(game, record);
                    while let Some(record) = waiting.remove(&due) {
                        tally.add(&record);
                        on_game(&record);
                        due += 1;
                    }
                }
                Err(error) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(error);
                }
            }
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(tally.summary(started.elapsed().as_secs_f64()))
}
