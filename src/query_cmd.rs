//! `gops value` and `gops strategy`: read-only commands on a solved db.

use gops_common::cards::InputError;
use gops_common::human::strategy_line;
use gops_common::state::GameState;
use gops_db::book::Book;
use gops_db::read::{StateText, parse_upcard, strategy_json, value_json};

use crate::args::{StateArgs, StrategyArgs};
use crate::db_open::read_options;
use crate::failure::Failure;

/// The db and the state the arguments name (full hands where a list is omitted). The
/// input is checked against the db's manifest file before the database is opened, so bad
/// input leaves every byte of the db as it was.
/// `check` validates whatever else the command takes against the state.
pub fn open_state<T>(
    args: &StateArgs,
    check: impl Fn(&GameState) -> Result<T, InputError>,
) -> Result<(Book, GameState, T), Failure> {
    let (book, (state, checked)) =
        crate::db_open::open_checked(&args.db, &read_options(&args.on_demand), |n| {
            let state = parse_state(args, n)?;
            let checked = check(&state)?;
            Ok((state, checked))
        })?;
    Ok((book, state, checked))
}

fn parse_state(args: &StateArgs, n: u8) -> Result<GameState, InputError> {
    StateText {
        a: args.a.as_deref(),
        b: args.b.as_deref(),
        prizes: args.prizes.as_deref(),
        diff: args.diff,
    }
    .parse(n, ["--a", "--b", "--prizes"])
}

pub fn value(args: StateArgs) -> Result<(), Failure> {
    let (book, state, ()) = open_state(&args, |_| Ok(()))?;
    let value = book.value(&state)?;
    if args.json {
        crate::out!("{}", value_json(book.objective(), &state, value));
    } else {
        crate::out!(
            "value for A of a={{{}}} b={{{}}} prizes={{{}}} diff={} ({}): {}",
            state.a,
            state.b,
            state.prizes,
            state.diff,
            book.objective(),
            gops_common::human::value(value)
        );
    }
    Ok(())
}

pub fn strategy(args: StrategyArgs) -> Result<(), Failure> {
    let (book, state, upcard) = open_state(&args.state, |state| parse_upcard(state, args.upcard))?;
    let game = book.revealed(&state, upcard)?;
    if args.state.json {
        crate::out!("{}", strategy_json(book.objective(), &state, upcard, &game));
    } else {
        crate::out!(
            "a={{{}}} b={{{}}} prizes={{{}}} diff={} ({}), upcard {upcard}",
            state.a,
            state.b,
            state.prizes,
            state.diff,
            book.objective()
        );
        crate::out!(
            "value for A after the reveal: {}",
            gops_common::human::value(game.value)
        );
        crate::out!("A bids  {}", strategy_line(state.a, &game.strategy_a));
        crate::out!("B bids  {}", strategy_line(state.b, &game.strategy_b));
        crate::out!("certificate gap: {:.1e}", game.gap);
    }
    Ok(())
}
