//! `gops respond`: the exact best response to an opponent model from a state, beside
//! what the equilibrium earns against it (`gops_arena::measure::respond` does the work).

use gops_arena::measure::respond::{Plan, respond as respond_to};
use gops_common::human::{count, value};
use gops_db::read::CachedReader;

use crate::args::RespondArgs;
use crate::failure::Failure;

/// Slices kept in memory while walking.
const CACHE_BYTES: usize = 1 << 30;

pub fn respond(args: RespondArgs) -> Result<(), Failure> {
    let (book, state, ()) = crate::query_cmd::open_state(&args.state, |_| Ok(()))?;
    let objective = book.objective();
    let plan = Plan::new(&args.opponent, objective, &state);
    if !plan.fits() {
        let hint = if plan.layered {
            format!(
                "B may hold any hand under {}, so it walks every state, two layers at a time: {} at once here ({} in all), more than the {} it holds in memory: start from a later state (--a, --b, --prizes)",
                args.opponent,
                count(plan.held),
                count(plan.states),
                count(plan.limit())
            )
        } else {
            // the model is of deterministic rules only: each one mixed in adds B's hands
            let fewer = if args.opponent.parts().len() > 1 {
                ", or a model of fewer rules (each rule mixed in adds the hands B may hold)"
            } else {
                ""
            };
            format!(
                "a best response to {} from here may walk up to {} concrete states, more than the {} it holds in memory: start from a later state (--a, --b, --prizes){fewer}",
                args.opponent,
                count(plan.states),
                count(plan.limit())
            )
        };
        return Err(Failure::Runtime(hint));
    }
    let estimate = plan.states;
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let bar = crate::progress::spinner("respond");
    let response = respond_to(
        &mut reader,
        &args.opponent,
        &state,
        estimate,
        &mut |states| {
            bar.set_message(format!(
                "{} of at most {} states evaluated",
                count(states),
                count(estimate)
            ));
        },
    );
    bar.finish_and_clear();
    let r = response?;
    if args.state.json {
        crate::out!("{}", crate::output::json_line(&r));
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
    crate::out!("  the game's value        {}", value(r.value));
    crate::out!("  the equilibrium earns   {}", value(r.equilibrium));
    crate::out!(
        "  a best response earns   {}  ({} more than the equilibrium)",
        value(r.best_response),
        value(r.gain)
    );
    crate::out!(
        "  its own exploitability  {}  (what a best response to it takes back below the value)",
        value(r.exploitability)
    );
    crate::out!("{} states in {:.1} s", count(r.states), r.seconds);
    Ok(())
}
