//! The vocabulary's names, aliases and mixtures, and what its agents bid.

use super::*;

#[test]
fn names_and_their_aliases_name_one_agent() {
    for base in Base::ALL {
        assert_eq!(Agent::parse(base.name()).unwrap(), Agent::base(base));
    }
    for (alias, base) in Base::ALIASES {
        let agent = Agent::parse(alias).unwrap();
        assert_eq!(agent, Agent::base(base));
        assert_eq!(
            agent.name(),
            base.name(),
            "an alias is shown by its new name"
        );
    }
    let error = Agent::parse("bluff").unwrap_err().to_string();
    assert!(
        error.contains("unknown agent \"bluff\"") && error.contains("upcard-plus-one"),
        "{error}"
    );
}

#[test]
fn the_safe_exploiter_is_named_with_its_model_and_risk() {
    let agent = Agent::parse("exploit:0.6*upcard+0.4*uniform:2.5").unwrap();
    assert_eq!(
        agent,
        Agent::Exploit {
            model: Model::parse("0.6*upcard+0.4*uniform").unwrap(),
            risk: 2.5
        }
    );
    assert_eq!(agent.name(), "exploit:0.4*uniform+0.6*upcard:2.5");
    assert_eq!(Agent::parse(&agent.name()).unwrap(), agent);
    assert_eq!(
        Agent::parse("exploit:match").unwrap().name(),
        "exploit:upcard"
    );
    assert!(!agent.plays_by_state() && agent.reads_db());
    for (bad, said) in [
        ("exploit:upcard:-1", "at least 0"),
        ("exploit:bluff", "unknown agent"),
        ("exploit:upcard:inf", "at least 0"),
    ] {
        let error = Agent::parse(bad).unwrap_err().to_string();
        assert!(error.contains(said), "{bad}: {error}");
    }
}

#[test]
fn a_mixture_is_parsed_checked_and_written_back() {
    let model = Model::parse("0.6*upcard+0.4*uniform").unwrap();
    assert_eq!(model.to_string(), "0.4*uniform+0.6*upcard");
    assert_eq!(model.weight(Base::Upcard), 0.6);
    assert_eq!(Model::parse(&model.to_string()).unwrap(), model);
    assert_eq!(Model::parse("1*greedy").unwrap(), Model::of(Base::Greedy));
    let refused = [
        ("0.6*upcard+0.5*uniform", "sum to"),
        ("1.2*upcard+-0.2*uniform", "not between 0 and 1"),
        ("0.5*upcard+0.5*match", "named twice"),
        ("0.5*upcard+0.5", "not WEIGHT*NAME"),
        ("x*upcard", "not a number"),
        ("0.5*upcard+0.5*bluff", "unknown agent"),
    ];
    for (text, said) in refused {
        let error = Model::parse(text).unwrap_err().to_string();
        assert!(error.contains(said), "{text}: {error}");
    }
}

#[test]
fn a_mixture_bids_its_parts_by_their_weights() {
    let dir = tempfile::tempdir().unwrap();
    let book = crate::tests::solved(dir.path(), 4, gops_common::objective::Objective::Points);
    let mut reader = CachedReader::cached(&book, 1 << 20);
    let state = gops_common::state::GameState::initial(4);
    let request = Request::new(0, book.objective(), Seat::B, &state, 2, &[]);
    let model = Model::parse("0.25*upcard+0.75*uniform").unwrap();
    let p = model.probabilities(&mut reader, &request).unwrap();
    let expected = [0.1875, 0.4375, 0.1875, 0.1875];
    for (got, want) in p.iter().zip(expected) {
        assert!((got - want).abs() < 1e-15, "{p:?}");
    }
    let equilibrium = Base::Equilibrium
        .probabilities(&mut reader, &request)
        .unwrap();
    let game = reader.revealed(&state, 2).unwrap();
    assert_eq!(equilibrium, game.strategy_b, "seat B plays B's strategy");
}

#[test]
fn a_certain_card_is_answered_as_a_bid() {
    assert_eq!(
        Reply::of_probabilities(&[2, 5], &[0.0, 1.0]),
        Reply::Bid { bid: 5 }
    );
    assert!(matches!(
        Reply::of_probabilities(&[2, 5], &[0.5, 0.5]),
        Reply::Distribution { .. }
    ));
}

/// `games` games of `uniform` (A) against `model` (B) at N = 6, B's decisions recorded.
fn recorded_games(model: &str, games: u64, seed: u64) -> Vec<fit::Observed> {
    use rand::SeedableRng;
    let dir = tempfile::tempdir().unwrap();
    let book = crate::tests::solved(dir.path(), 6, gops_common::objective::Objective::Points);
    let mut reader = CachedReader::cached(&book, 1 << 20);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut lines = Vec::new();
    crate::measure::simulate(
        &mut reader,
        (&Agent::base(Base::Uniform), &Agent::parse(model).unwrap()),
        games,
        &mut rng,
        &mut |_| {},
        &mut |request, bid| {
            if request.seat == Seat::B {
                lines.push(fit::record_line(request, bid));
            }
        },
    )
    .unwrap();
    lines
        .iter()
        .map(|l| fit::parse_record(l).unwrap().unwrap())
        .collect()
}

#[test]
fn a_fit_recovers_a_known_mixture_from_its_games() {
    // 200 games of 6 cards: 1,200 decisions (5 of 6 tell the rules apart at most)
    for seed in 1..=3 {
        let decisions = recorded_games("0.6*upcard+0.3*uniform+0.1*greedy", 200, seed);
        let fitted = fit::fit(&decisions);
        let truth = [
            (Base::Upcard, 0.6),
            (Base::Uniform, 0.3),
            (Base::Greedy, 0.1),
        ];
        for (base, weight) in truth.into_iter().chain([(Base::UpcardPlusOne, 0.0)]) {
            let got = fitted.weights[base.name()];
            assert!(
                (got - weight).abs() <= 0.1,
                "seed {seed}: {base:?} {got} ({fitted:?})"
            );
        }
        // the model's text is a model, and its weights sum to 1 within the tolerance
        let model = Model::parse(&fitted.model).unwrap();
        assert!((model.weight(Base::Upcard) - fitted.weights["upcard"]).abs() < 1e-4);
        assert!(fitted.log_likelihood < 0.0 && fitted.decisions == 1_200);
    }
    // a pure rule is found pure: every other weight goes to (nearly) 0
    let decisions = recorded_games("upcard-plus-one", 100, 9);
    let fitted = fit::fit(&decisions);
    assert!(fitted.weights["upcard-plus-one"] > 0.99, "{fitted:?}");
}

#[test]
fn a_bad_record_is_refused_with_its_reason() {
    let good = r#"{"game":0,"round":2,"n":4,"objective":"points","seat":"B","hand":[1,2,4],"opponent_hand":[1,2,3],"prizes":[1,2,4],"upcard":4,"diff":-3,"history":[{"prize":3,"bid":3,"opponent_bid":4}],"bid":4}"#;
    let seen = fit::parse_record(good).unwrap().unwrap();
    assert_eq!((seen.upcard, seen.bid), (4, 4));
    let cases = [
        (good.replace(r#""bid":4}"#, r#""bid":3}"#), "illegal bid"),
        (
            good.replace(r#""upcard":4"#, r#""upcard":3"#),
            "not among the prizes",
        ),
        (
            good.replace(r#""opponent_bid":4"#, r#""opponent_bid":2"#),
            "do not match the history",
        ),
        (
            good.replace(r#""hand":[1,2,4]"#, r#""hand":[1,2]"#),
            "not of one size",
        ),
        (
            good.replace(r#""prize":3,"bid":3"#, r#""prize":3,"bid":9"#),
            "history",
        ),
        ("{not json".to_string(), "not JSON"),
        (r#"{"bid": 2}"#.to_string(), "not a request"),
    ];
    for (line, said) in cases {
        let error = fit::parse_record(&line).unwrap_err();
        assert!(error.contains(said), "{line}: {error}");
    }
    // an arena's record: the bot's bid; a forfeit and the summary hold no decision
    let arena = r#"{"kind":"decision","game":1,"round":1,"seat":"B","a":[1,2,3],"b":[1,2,3],"prizes":[1,2,3],"diff":0,"upcard":2,"hand":[1,2,3],"probabilities":[0,1,0],"bid":2,"opponent_bid":1,"value":0,"loss":0,"fault":null}"#;
    assert_eq!(fit::parse_record(arena).unwrap().unwrap().bid, 2);
    let forfeit = arena.replace(r#""bid":2"#, r#""bid":null"#);
    assert_eq!(fit::parse_record(&forfeit).unwrap(), None);
    assert_eq!(fit::parse_record(r#"{"kind":"summary"}"#).unwrap(), None);
    // a file names its bad line
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.jsonl");
    std::fs::write(
        &path,
        format!("{good}\n\n{}\n", good.replace(r#""bid":4}"#, r#""bid":7}"#)),
    )
    .unwrap();
    let error = Model::parse(&format!("fit:{}", path.display()))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 3") && error.contains("illegal bid"),
        "{error}"
    );
}
