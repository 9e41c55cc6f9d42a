//! `gops respond`: the exact best response to an opponent model from a state, beside
//! what the equilibrium earns against it (`gops_arena::measure::respond` does the work).

use std::time::Instant;

use gops_arena::measure::respond::{RESPOND_STATE_LIMIT, Responder, reachable_states};
use gops_common::human::{count, value};
use gops_db::read::CachedReader;
use serde_json::json;

use crate::args::RespondArgs;
use crate::failure::Failure;

/// Slices kept in memory while walking.
const CACHE_BYTES: usize = 1 << 30;

pub fn respond(args: RespondArgs) -> Result<(), Failure> {
    let (book, state, ()) = crate::query_cmd::open_state(&args.state, |_| Ok(()))?;
    let objective = book.objective();
    let estimate = reachable_states(&args.opponent, objective, &state);
    if estimate > RESPOND_STATE_LIMIT {
        return Err(Failure::Runtime(format!(
            "a best response to {} from here may walk up to {} concrete states, more than the {} it holds in memory: start from a later state (--a, --b, --prizes), or take a model of deterministic rules only, which keeps few of B's hands",
            args.opponent,
            count(estimate),
            count(RESPOND_STATE_LIMIT)
        )));
    }
    let started = Instant::now();
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let game_value = reader.value(&state)?;
    let mut responder = Responder::new(args.opponent.clone(), objective);
    let bar = crate::progress::spinner("respond");
    let results = responder.results_by_layers(&mut reader, &state, &mut |states| {
        bar.set_message(format!(
            "{} of at most {} states evaluated",
            count(states),
            count(estimate)
        ));
    });
    bar.finish_and_clear();
    let results = results?;
    let seconds = started.elapsed().as_secs_f64();
    let exploitability = game_value - results.best_response_guaranteed;
    if args.state.json {
        let line = json!({
            "n": book.n(),
            "objective": objective.name(),
            "opponent": args.opponent.to_string(),
            "a": state.a.to_vec(),
            "b": state.b.to_vec(),
            "prizes": state.prizes.to_vec(),
            "diff": state.diff,
            "value": game_value,
            "best_response": results.best_response,
            "equilibrium": results.equilibrium,
            "gain": results.best_response - results.equilibrium,
            "exploitability": exploitability,
            "states": responder.states(),
            "states_estimate": estimate,
            "seconds": seconds,
        });
        crate::out!("{}", crate::output::json_line(&line));
        return Ok(());
    }
    let unit = match objective {
        gops_common::objective::Objective::Points => "points still to come",
        gops_common::objective::Objective::Win => "P(win) - P(loss)",
    };
    crate::out!(
        "A against B playing {} in the {}-card {} game from a={{{}}} b={{{}}} prizes={{{}}} diff={} ({unit}):",
        args.opponent,
        book.n(),
        objective,
        state.a,
        state.b,
        state.prizes,
        state.diff
    );
    crate::out!("  the game's value        {}", value(game_value));
    crate::out!("  the equilibrium earns   {}", value(results.equilibrium));
    crate::out!(
        "  a best response earns   {}  ({} more than the equilibrium)",
        value(results.best_response),
        value(results.best_response - results.equilibrium)
    );
    crate::out!(
        "  its own exploitability  {}  (what a best response to it takes back below the value)",
        value(exploitability)
    );
    crate::out!("{} states in {seconds:.1} s", count(responder.states()));
    Ok(())
}
