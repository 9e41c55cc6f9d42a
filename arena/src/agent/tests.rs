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
