use rand::{Rng, SeedableRng};

use super::*;
use crate::rules::{play_round, random_game_states};
use crate::solution::InMemorySolution;

/// A card of `set` drawn at random.
fn pick(set: CardSet, rng: &mut impl Rng) -> u8 {
    let cards = set.to_vec();
    cards[rng.random_range(0..cards.len())]
}

/// A state `rounds` rounds into the `n`-card game, each round's prize and bids drawn at
/// random: a state the game reaches.
fn random_state(n: u8, rounds: u8, rng: &mut impl Rng) -> GameState {
    random_game_states(n, 1, rng, |s| s.k() == n - rounds)[0].0
}

/// States below `state` (itself included): every one when it has at most 3 cards left,
/// else 300 drawn by playing random rounds from it.
fn descendants(state: GameState, rng: &mut impl Rng) -> Vec<GameState> {
    fn every(state: GameState, out: &mut Vec<GameState>) {
        out.push(state);
        for upcard in state.prizes.iter() {
            for a in state.a.iter() {
                for b in state.b.iter() {
                    every(play_round(&state, upcard, a, b), out);
                }
            }
        }
    }
    let mut out = Vec::new();
    if state.k() <= 3 {
        every(state, &mut out);
        return out;
    }
    for _ in 0..300 {
        let mut s = state;
        for _ in 0..rng.random_range(0..=state.k()) {
            let upcard = pick(s.prizes, rng);
            let (a, b) = (pick(s.a, rng), pick(s.b, rng));
            s = play_round(&s, upcard, a, b);
        }
        out.push(s);
    }
    out
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn every_state_below_a_root_has_the_whole_games_bits_and_so_do_its_revealed_games() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(52);
    for (n, objective) in [
        (6, Objective::Win),
        (6, Objective::Points),
        (7, Objective::Win),
    ] {
        let game = InMemorySolution::solve(n, objective).unwrap();
        let layouts = Layouts::new(n);
        for round in 0..10u8 {
            let state = random_state(n, 1 + round % (n - 2), &mut rng);
            let state = if round % 2 == 1 {
                state.swapped_roles()
            } else {
                state
            };
            let k = state.k();
            let root = SubtreeRoot::of(&state, objective, &layouts.get(k));
            let plan = SubtreePlan::new(objective, PivotStart::default(), root, &layouts);
            let estimate = plan.estimate;
            let seen = AtomicU64::new(0);
            let solved = plan
                .solve(&|done, all| {
                    assert!(done <= all);
                    seen.store(done, Ordering::Relaxed);
                })
                .unwrap();
            assert_eq!(
                seen.load(Ordering::Relaxed),
                estimate.games,
                "ends at the whole"
            );
            assert!(
                solved.games <= estimate.games,
                "{} {estimate:?}",
                solved.games
            );
            assert!(solved.bytes as u64 <= estimate.bytes + 8 * 1024 * 1024);
            for s in descendants(state, &mut rng) {
                assert!(solved.holds(&s), "{s:?} below {state:?}");
                let want = game.value(&s);
                assert_eq!(solved.value(&s).map(f64::to_bits), Some(want.to_bits()));
                for upcard in s.prizes.iter() {
                    let (layout, slice) = solved.below(&s, upcard).unwrap();
                    let k = usize::from(s.k());
                    let full_slice =
                        &game.layers[k - 1][prize_rank(s.prizes.without(upcard)) as usize];
                    let full = s
                        .matrix_after(objective, upcard, &game.layouts[k - 1], full_slice)
                        .unwrap();
                    let ours = s.matrix_after(objective, upcard, layout, slice).unwrap();
                    assert_eq!(bits(&ours), bits(&full), "{s:?} upcard {upcard}");
                }
            }
            // a state off the root's play is not held: another prize set of the layer,
            // or a hand the root's cannot become
            let mut other = state;
            other.prizes = CardSet(state.prizes.0 ^ 0b11);
            if other.prizes.len() == state.prizes.len() && other.prizes != state.prizes {
                assert!(!solved.holds(&other));
            }
        }
    }
}

#[test]
fn the_subtree_of_a_late_state_is_far_smaller_than_its_layers() {
    let layouts = Layouts::new(10);
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let state = random_state(10, 4, &mut rng);
    let root = SubtreeRoot::of(&state, Objective::Win, &layouts.get(6));
    let plan = SubtreePlan::new(Objective::Win, PivotStart::default(), root, &layouts);
    // the last rounds' few patterns are all reached; the middle ones are not
    for j in 3..6u8 {
        assert!(plan.shape.layout(j).canonical_count() < layouts.get(j).canonical_count());
    }
    assert_eq!(plan.shape.layout(6).canonical_count(), 1);
    assert_eq!(
        plan.prize_sets[3].len(),
        20,
        "the 3-card subsets of 6 prizes"
    );
    assert!(plan.estimate.games > 0);
}

#[test]
fn subsets_come_by_size_each_once() {
    let set = CardSet::from_cards(&[2, 5, 7, 9]);
    let by_size = subsets_by_size(set);
    assert_eq!(
        by_size.iter().map(Vec::len).collect::<Vec<_>>(),
        [1, 4, 6, 4, 1]
    );
    let mut all: Vec<u32> = by_size.iter().flatten().map(|s| s.0).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 16);
    assert!(all.iter().all(|&s| s & !set.0 == 0));
}
