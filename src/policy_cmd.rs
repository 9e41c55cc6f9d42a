//! `gops simulate` and `gops exploit`: policies against each other in many random games,
//! and a policy against its best response, exactly.

use gops_db::oracle::Oracle;
use gops_db::policy::{
    EXPLOIT_STATE_LIMIT, Policy, Rate, concrete_state_count, exploit as exploit_policy,
    simulate as simulate_policies,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::json;

use crate::args::{ExploitArgs, PolicyArg, SimulateArgs};
use crate::failure::Failure;
use gops_common::human::count;

/// Slices kept in memory while playing.
const CACHE_BYTES: usize = 1 << 30;

fn policy(arg: PolicyArg) -> Policy {
    match arg {
        PolicyArg::Optimal => Policy::Optimal,
        PolicyArg::Random => Policy::Random,
        PolicyArg::Match => Policy::Match,
        PolicyArg::Greedy => Policy::Greedy,
        PolicyArg::PlusOne => Policy::PlusOne,
    }
}

pub fn simulate(args: SimulateArgs) -> Result<(), Failure> {
    let store = crate::db_open::open_reader(&args.db, &args.on_demand)?;
    let mut oracle = Oracle::new(&store, CACHE_BYTES);
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let (a, b) = (policy(args.a), policy(args.b));
    let bar = crate::progress::count_bar(args.games, "games");
    let report = simulate_policies(&mut oracle, a, b, args.games, &mut rng, &mut |done| {
        bar.set_position(done)
    });
    bar.finish_and_clear();
    let report = report?;
    if args.json {
        let mut object = serde_json::to_value(&report).expect("report serialises");
        object["n"] = json!(store.n());
        object["objective"] = json!(store.objective().name());
        object["a"] = json!(a.name());
        object["b"] = json!(b.name());
        object["seed"] = json!(seed);
        crate::out!("{object}");
        return Ok(());
    }
    let rate = |r: &Rate| format!("{:.4}  (95 % CI {:.4} .. {:.4})", r.rate, r.low, r.high);
    crate::out!(
        "{} games of {}-card GOPS, A = {}, B = {} (seed {seed})",
        count(report.games),
        store.n(),
        a.name(),
        b.name()
    );
    crate::out!("A wins    {}", rate(&report.win_rate));
    crate::out!("draws     {}", rate(&report.draw_rate));
    crate::out!("A loses   {}", rate(&report.loss_rate));
    let s = &report.score_difference;
    crate::out!(
        "A's score minus B's: mean {:.4}  (95 % CI {:.4} .. {:.4}), std dev {:.4}",
        s.mean,
        s.low,
        s.high,
        s.std_dev
    );
    Ok(())
}

pub fn exploit(args: ExploitArgs) -> Result<(), Failure> {
    let store = crate::db_open::open_reader(&args.db, &args.on_demand)?;
    let states = concrete_state_count(store.n(), store.objective());
    if states > EXPLOIT_STATE_LIMIT {
        return Err(Failure::Usage(format!(
            "exploit walks every concrete state: the {}-card {} game has {} (with score differences), more than the {} this command holds in memory; use a smaller game",
            store.n(),
            store.objective(),
            count(states),
            count(EXPLOIT_STATE_LIMIT)
        )));
    }
    let mut oracle = Oracle::new(&store, CACHE_BYTES);
    let p = policy(args.policy);
    let bar = crate::progress::spinner("exploit");
    let result = exploit_policy(&mut oracle, p, &mut |states| {
        bar.set_message(format!("{} states evaluated", count(states)));
    });
    bar.finish_and_clear();
    let result = result?;
    if args.json {
        let mut object = serde_json::to_value(&result).expect("result serialises");
        object["n"] = json!(store.n());
        object["objective"] = json!(store.objective().name());
        object["policy"] = json!(p.name());
        crate::out!("{object}");
        return Ok(());
    }
    crate::out!(
        "{}-card GOPS ({}), A plays {} and B best-responds:",
        store.n(),
        store.objective(),
        p.name()
    );
    // rounded as values are for people (12 decimals, never "-0"); --json keeps every bit
    crate::out!(
        "game value for A:          {}",
        gops_common::human::value(result.game_value)
    );
    crate::out!(
        "A's value with the policy: {}",
        gops_common::human::value(result.policy_value)
    );
    crate::out!(
        "exploitability:            {}  ({} states evaluated)",
        gops_common::human::value(result.exploitability),
        count(result.states)
    );
    Ok(())
}
