//! The rules of a round, for playing games rather than solving them: a prize turned up
//! at random, a bid drawn from a mixed strategy, and the state after both bids.

use rand::Rng;

use crate::cards::CardSet;
use crate::state::GameState;

/// A card of `hand` drawn with `probabilities`.
pub fn draw(hand: CardSet, probabilities: &[f64], rng: &mut impl Rng) -> u8 {
    let mut u: f64 = rng.random::<f64>() * probabilities.iter().sum::<f64>();
    let mut last = hand.iter().next().unwrap_or(0);
    for (card, &p) in hand.iter().zip(probabilities) {
        if p > 0.0 {
            last = card;
            if u < p {
                return card;
            }
            u -= p;
        }
    }
    last
}

/// The state after A bids `a` and B bids `b` on `upcard`.
pub fn play_round(state: &GameState, upcard: u8, a: u8, b: u8) -> GameState {
    let won = i32::from(upcard) * (i32::from(a) - i32::from(b)).signum();
    GameState {
        a: state.a.without(a),
        b: state.b.without(b),
        prizes: state.prizes.without(upcard),
        diff: state.diff + won,
        ..*state
    }
}

/// States along random games of the `n`-card game (each prize and both bids drawn
/// uniformly), each with the prize turned up at it, those `keep` accepts, until there are
/// `count`: states the game reaches, for tests and checks.
pub fn random_game_states(
    n: u8,
    count: usize,
    rng: &mut impl Rng,
    keep: impl Fn(&GameState) -> bool,
) -> Vec<(GameState, u8)> {
    let any = |hand: CardSet, rng: &mut dyn rand::RngCore| {
        hand.iter()
            .nth(rng.random_range(0..hand.len()))
            .expect("a card is left")
    };
    let mut states = Vec::new();
    while states.len() < count {
        let mut state = GameState::initial(n);
        while !state.prizes.is_empty() && states.len() < count {
            let upcard = turn_up(state.prizes, rng);
            if keep(&state) {
                states.push((state, upcard));
            }
            let (a, b) = (any(state.a, rng), any(state.b, rng));
            state = play_round(&state, upcard, a, b);
        }
    }
    states
}

/// A prize drawn uniformly from those left.
pub fn turn_up(prizes: CardSet, rng: &mut impl Rng) -> u8 {
    let index = rng.random_range(0..prizes.len());
    prizes.iter().nth(index).expect("a prize is left")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn cards(list: &[u8]) -> CardSet {
        CardSet::from_cards(list)
    }

    #[test]
    fn draws_follow_the_probabilities() {
        let hand = cards(&[2, 3, 7]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            let card = draw(hand, &[0.2, 0.0, 0.8], &mut rng);
            counts[hand.iter().position(|c| c == card).unwrap()] += 1;
        }
        assert_eq!(counts[1], 0, "a card of probability 0 is never drawn");
        let share = f64::from(counts[0]) / 30_000.0;
        assert!((share - 0.2).abs() < 0.015, "{share}");
    }

    #[test]
    fn a_round_moves_the_cards_and_the_score() {
        let state = GameState::new(3, cards(&[1, 3]), cards(&[2, 3]), cards(&[2, 3]), 1).unwrap();
        let after = play_round(&state, 3, 1, 2);
        assert_eq!(
            (after.a, after.b, after.prizes),
            (cards(&[3]), cards(&[3]), cards(&[2]))
        );
        assert_eq!(after.diff, 1 - 3, "B's higher bid wins the 3");
        assert_eq!(
            play_round(&after, 2, 3, 3).diff,
            -2,
            "a tie splits the prize"
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert!(state.prizes.contains(turn_up(state.prizes, &mut rng)));
    }
}
