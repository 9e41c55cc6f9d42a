//! The one game stepper: a game at the table, one round at a time. It turns up the
//! prizes, asks each seat's decision as the bot protocol words it ([`Request`]), draws a
//! seat's bid from its mix and plays both bids. Whoever bids (a built-in agent, a
//! program, a person at the terminal or in the browser) is the caller's business; the
//! rules of the game are kept here. `simulate`, the arena, `play` and the explorer's
//! games all step through it.

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::rules::{draw, play_round, turn_up};
use gops_common::state::GameState;
use rand::Rng;
use serde::Serialize;

use crate::protocol::{Request, Round, Seat};

/// One round played, from A's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Played {
    pub prize: u8,
    pub a: u8,
    pub b: u8,
}

impl Played {
    /// The seat that took the prize (`None` on a tie: nobody takes it).
    pub fn winner(self) -> Option<Seat> {
        match self.a.cmp(&self.b) {
            std::cmp::Ordering::Greater => Some(Seat::A),
            std::cmp::Ordering::Less => Some(Seat::B),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// The round from `seat`'s side.
    pub fn seen_by(self, seat: Seat) -> Round {
        let (bid, opponent_bid) = match seat {
            Seat::A => (self.a, self.b),
            Seat::B => (self.b, self.a),
        };
        Round {
            prize: self.prize,
            bid,
            opponent_bid,
        }
    }
}

/// Why a bid cannot be played.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalBid {
    #[error("card {card} is not in {seat}'s hand ({hand})", seat = .seat.name())]
    NotInHand { seat: Seat, card: u8, hand: CardSet },
    #[error("no prize is turned up")]
    NoUpcard,
}

/// A game in progress.
#[derive(Clone, Debug)]
pub struct Table {
    objective: Objective,
    state: GameState,
    upcard: Option<u8>,
    rounds: Vec<Played>,
    /// The prizes each seat has taken, summed: A's, B's.
    taken: (u32, u32),
}

impl Table {
    /// The start of the `n`-card game.
    pub fn new(n: u8, objective: Objective) -> Table {
        Table {
            objective,
            state: GameState::initial(n),
            upcard: None,
            rounds: Vec::new(),
            taken: (0, 0),
        }
    }

    /// The state before the upcard.
    pub fn state(&self) -> &GameState {
        &self.state
    }

    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// The prize turned up and not yet played.
    pub fn upcard(&self) -> Option<u8> {
        self.upcard
    }

    pub fn rounds(&self) -> &[Played] {
        &self.rounds
    }

    /// The round being played, from 1 (`n + 1` once the game is over).
    pub fn round(&self) -> u8 {
        self.rounds.len() as u8 + 1
    }

    /// The prizes each seat has taken so far, summed: (A's, B's).
    pub fn taken(&self) -> (u32, u32) {
        self.taken
    }

    pub fn is_over(&self) -> bool {
        self.state.prizes.is_empty()
    }

    /// Turns up the next prize at random (once: until it is played, the same one).
    ///
    /// Panics once the game is over (a caller's bug).
    pub fn turn_up(&mut self, rng: &mut impl Rng) -> u8 {
        *self
            .upcard
            .get_or_insert_with(|| turn_up(self.state.prizes, rng))
    }

    /// Turns up `prize`, which must be one of the prizes left (a coach is told it).
    pub fn turn_up_card(&mut self, prize: u8) -> Result<(), String> {
        if !self.state.prizes.contains(prize) {
            return Err(format!(
                "{prize} is not one of the prizes left ({})",
                self.state.prizes
            ));
        }
        self.upcard = Some(prize);
        Ok(())
    }

    /// What `seat` is asked now, in game `game` of a run.
    ///
    /// Panics when no prize is turned up (a caller's bug).
    pub fn request(&self, game: u64, seat: Seat) -> Request {
        let history: Vec<Round> = self.rounds.iter().map(|r| r.seen_by(seat)).collect();
        Request::new(
            game,
            self.objective,
            seat,
            &self.state,
            self.upcard.expect("a prize is turned up"),
            &history,
        )
    }

    /// A card of `seat`'s hand drawn from `probabilities` (over its cards, ascending).
    pub fn draw(&self, seat: Seat, probabilities: &[f64], rng: &mut impl Rng) -> u8 {
        draw(seat.hands(&self.state).0, probabilities, rng)
    }

    /// Plays both bids on the prize turned up.
    pub fn play(&mut self, a: u8, b: u8) -> Result<Played, IllegalBid> {
        let prize = self.upcard.ok_or(IllegalBid::NoUpcard)?;
        for (seat, card, hand) in [(Seat::A, a, self.state.a), (Seat::B, b, self.state.b)] {
            if !hand.contains(card) {
                return Err(IllegalBid::NotInHand { seat, card, hand });
            }
        }
        let played = Played { prize, a, b };
        match played.winner() {
            Some(Seat::A) => self.taken.0 += u32::from(prize),
            Some(Seat::B) => self.taken.1 += u32::from(prize),
            None => {}
        }
        self.state = play_round(&self.state, prize, a, b);
        self.upcard = None;
        self.rounds.push(played);
        Ok(played)
    }

    /// `seat`'s result once the game is over: `win`, 1, 0 or -1; `points`, its score
    /// minus the opponent's.
    pub fn result(&self, seat: Seat) -> Option<f64> {
        self.is_over()
            .then(|| result_of(self.objective, seat, self.state.diff))
    }
}

/// The result of the player in `seat` of a finished game whose final A-minus-B score is
/// `diff`.
pub fn result_of(objective: Objective, seat: Seat, diff: i32) -> f64 {
    let own = match seat {
        Seat::A => diff,
        Seat::B => -diff,
    };
    match objective {
        Objective::Win => f64::from(own.signum()),
        Objective::Points => f64::from(own),
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    #[test]
    fn a_game_is_stepped_to_its_result_and_refuses_what_is_not_held() {
        let mut table = Table::new(3, Objective::Points);
        let mut rng = StdRng::seed_from_u64(1);
        let prize = table.turn_up(&mut rng);
        assert_eq!(
            table.turn_up(&mut rng),
            prize,
            "the same prize until it is played"
        );
        let request = table.request(0, Seat::B);
        assert_eq!((request.round, request.upcard), (1, prize));
        assert!(matches!(
            table.play(4, 1),
            Err(IllegalBid::NotInHand {
                seat: Seat::A,
                card: 4,
                ..
            })
        ));
        assert_eq!(table.round(), 1, "a refused bid changes nothing");
        let played = table.play(3, 1).unwrap();
        assert_eq!(played.winner(), Some(Seat::A));
        assert_eq!(table.taken(), (u32::from(prize), 0));
        assert_eq!(table.request_after(&mut rng).history[0].opponent_bid, 1);
        while !table.is_over() {
            let prize = table.turn_up(&mut rng);
            let card = table.state().a.iter().next().unwrap();
            let other = table.state().b.iter().last().unwrap();
            table.play(card, other).unwrap();
            let _ = prize;
        }
        let (a, b) = table.taken();
        assert_eq!(table.result(Seat::A), Some(f64::from(a as i32 - b as i32)));
        assert_eq!(table.result(Seat::B), Some(f64::from(b as i32 - a as i32)));
    }

    impl Table {
        fn request_after(&mut self, rng: &mut StdRng) -> Request {
            self.turn_up(rng);
            self.request(0, Seat::A)
        }
    }
}
