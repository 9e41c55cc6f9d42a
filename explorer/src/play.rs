//! Games against the equilibrium, kept on the server: the player is A, the bot is B.
//! When a prize is turned up the bot's bid is drawn from its optimal mixed strategy and
//! sealed in the game *before* the player's bid can be read; the bid request only reveals
//! it. The games in play live in a [`PlayTable`] bounded in size (the least recently
//! played goes first).

use std::collections::HashMap;

use gops_common::cards::CardSet;
use gops_common::rules::{draw, play_round, turn_up};
use gops_common::state::GameState;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use serde_json::{Value, json};

/// One round played: the prize and both bids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Round {
    pub prize: u8,
    pub you: u8,
    pub bot: u8,
}

impl Round {
    /// Who took the prize: `"you"`, `"bot"` or `"tie"`.
    pub fn winner(self) -> &'static str {
        match self.you.cmp(&self.bot) {
            std::cmp::Ordering::Greater => "you",
            std::cmp::Ordering::Less => "bot",
            std::cmp::Ordering::Equal => "tie",
        }
    }
}

/// Why a bid was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BidError {
    #[error("card {card} is not in your hand ({hand})")]
    NotYourCard { card: i64, hand: CardSet },
    #[error("the game is over")]
    Over,
}

/// One game in play.
#[derive(Clone)]
pub struct Game {
    state: GameState,
    /// The prize turned up and the bot's sealed bid on it; `None` once the game is over.
    turn: Option<(u8, u8)>,
    you: u32,
    bot: u32,
    rounds: Vec<Round>,
    seed: u64,
    rng: StdRng,
}

impl Game {
    /// A new `n`-card game whose prizes and bot draws come from `seed`; `bot` gives the
    /// bot's probabilities (of B's cards, ascending) in a state once a prize is up.
    pub fn start<E>(
        n: u8,
        seed: u64,
        bot: impl Fn(&GameState, u8) -> Result<Vec<f64>, E>,
    ) -> Result<Game, E> {
        let mut game = Game {
            state: GameState::initial(n),
            turn: None,
            you: 0,
            bot: 0,
            rounds: Vec::new(),
            seed,
            rng: StdRng::seed_from_u64(seed),
        };
        game.turn_up(&bot)?;
        Ok(game)
    }

    /// Turns up the next prize and seals the bot's bid on it (nothing when none is left).
    fn turn_up<E>(&mut self, bot: impl Fn(&GameState, u8) -> Result<Vec<f64>, E>) -> Result<(), E> {
        self.turn = None;
        if self.state.prizes.is_empty() {
            return Ok(());
        }
        let prize = turn_up(self.state.prizes, &mut self.rng);
        let strategy = bot(&self.state, prize)?;
        let sealed = draw(self.state.b, &strategy, &mut self.rng);
        self.turn = Some((prize, sealed));
        Ok(())
    }

    /// Plays the player's `card` against the sealed bid, then turns up the next prize.
    /// A refused bid changes nothing.
    pub fn bid<E>(
        &mut self,
        card: i64,
        bot: impl Fn(&GameState, u8) -> Result<Vec<f64>, E>,
    ) -> Result<Result<Round, BidError>, E> {
        let Some((prize, sealed)) = self.turn else {
            return Ok(Err(BidError::Over));
        };
        let Some(card) = u8::try_from(card)
            .ok()
            .filter(|&c| self.state.a.contains(c))
        else {
            return Ok(Err(BidError::NotYourCard {
                card,
                hand: self.state.a,
            }));
        };
        let round = Round {
            prize,
            you: card,
            bot: sealed,
        };
        match round.winner() {
            "you" => self.you += u32::from(prize),
            "bot" => self.bot += u32::from(prize),
            _ => {}
        }
        self.state = play_round(&self.state, prize, card, sealed);
        self.rounds.push(round);
        self.turn_up(bot)?;
        Ok(Ok(round))
    }

    pub fn is_over(&self) -> bool {
        self.turn.is_none()
    }

    /// The game as the player may see it (the sealed bid left out): `game` is its id.
    pub fn view(&self, id: &str) -> Value {
        let result = self.is_over().then(|| match self.you.cmp(&self.bot) {
            std::cmp::Ordering::Greater => "you win",
            std::cmp::Ordering::Less => "the bot wins",
            std::cmp::Ordering::Equal => "a draw",
        });
        let rounds: Vec<Value> = self
            .rounds
            .iter()
            .map(|r| json!({"prize": r.prize, "you": r.you, "bot": r.bot, "winner": r.winner()}))
            .collect();
        json!({
            "game": id,
            "n": self.state.n,
            "seed": self.seed,
            "upcard": self.turn.map(|(prize, _)| prize),
            "prizes_left": self.state.prizes.to_vec(),
            "your_cards": self.state.a.to_vec(),
            "bot_cards": self.state.b.to_vec(),
            "you": self.you,
            "bot": self.bot,
            "rounds": rounds,
            "over": self.is_over(),
            "result": result,
        })
    }
}

/// The games in play, by id, at most `capacity` of them.
pub struct PlayTable {
    capacity: usize,
    tick: u64,
    games: HashMap<u64, (Game, u64)>,
}

impl PlayTable {
    pub fn new(capacity: usize) -> PlayTable {
        PlayTable {
            capacity: capacity.max(1),
            tick: 0,
            games: HashMap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.games.len()
    }

    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// Keeps `game` under `id`, dropping the least recently played game when full.
    pub fn put(&mut self, id: u64, game: Game) {
        self.tick += 1;
        self.games.insert(id, (game, self.tick));
        while self.games.len() > self.capacity {
            let oldest = self
                .games
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| *id)
                .expect("not empty");
            self.games.remove(&oldest);
        }
    }

    /// Takes the game `id` out of the table (to play a round; [`PlayTable::put`] it back).
    pub fn take(&mut self, id: u64) -> Option<Game> {
        self.games.remove(&id).map(|(game, _)| game)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.games.contains_key(&id)
    }
}

/// A game's id as the API shows it.
pub fn id_text(id: u64) -> String {
    format!("{id:016x}")
}

/// A game id from the API, if it is one.
pub fn parse_id(text: &str) -> Option<u64> {
    (text.len() == 16)
        .then(|| u64::from_str_radix(text, 16).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::convert::Infallible;

    /// A bot that bids its lowest card for sure.
    fn lowest(state: &GameState, _: u8) -> Result<Vec<f64>, Infallible> {
        Ok(state
            .b
            .iter()
            .enumerate()
            .map(|(i, _)| f64::from(i == 0))
            .collect())
    }

    /// A bot that mixes uniformly.
    fn uniform(state: &GameState, _: u8) -> Result<Vec<f64>, Infallible> {
        Ok(vec![1.0 / state.b.len() as f64; state.b.len()])
    }

    #[test]
    fn a_game_runs_to_the_end_and_keeps_the_score() {
        let mut game = Game::start(4, 7, lowest).unwrap();
        let mut rounds = 0;
        while !game.is_over() {
            let highest = game.state.a.iter().last().unwrap();
            let round = game.bid(i64::from(highest), lowest).unwrap().unwrap();
            rounds += 1;
            // the bot bids its lowest card: the player's highest wins until they meet
            assert_eq!(round.bot, game.state.n - game.state.b.len() as u8);
        }
        assert_eq!(rounds, 4);
        let view = game.view("x");
        assert_eq!(view["over"], true);
        // 4 v 1 and 3 v 2 go to the player, 2 v 3 and 1 v 4 to the bot: no tie, so
        // every prize is scored
        let winners: Vec<&str> = game.rounds.iter().map(|r| r.winner()).collect();
        assert_eq!(winners, ["you", "you", "bot", "bot"]);
        assert_eq!(
            view["you"].as_u64().unwrap() + view["bot"].as_u64().unwrap(),
            10
        );
        assert!(view["result"].is_string());
        assert_eq!(view["upcard"], Value::Null);
        assert_eq!(game.bid(1, lowest).unwrap(), Err(BidError::Over));
    }

    #[test]
    fn the_bots_bid_is_drawn_before_the_players_bid_is_read() {
        // same seed, different bids from the player: the bot's bids are the same, so
        // they cannot depend on what the player chose
        let bot_bids = |pick_high: bool| {
            let mut game = Game::start(6, 42, uniform).unwrap();
            let mut bids = Vec::new();
            while !game.is_over() {
                let card = if pick_high {
                    game.state.a.iter().last()
                } else {
                    game.state.a.iter().next()
                };
                let round = game
                    .bid(i64::from(card.unwrap()), uniform)
                    .unwrap()
                    .unwrap();
                bids.push((round.prize, round.bot));
            }
            bids
        };
        assert_eq!(bot_bids(true), bot_bids(false));
        // and the sealed bid is in the game before any bid is made, asked for exactly
        // once per round
        let asked = RefCell::new(0);
        let counting = |s: &GameState, u: u8| {
            *asked.borrow_mut() += 1;
            uniform(s, u)
        };
        let game = Game::start(3, 1, counting).unwrap();
        assert_eq!(*asked.borrow(), 1);
        assert!(game.turn.is_some());
    }

    #[test]
    fn a_card_not_in_hand_is_refused_and_changes_nothing() {
        let mut game = Game::start(3, 3, lowest).unwrap();
        let before = game.view("x");
        for card in [0, 4, -1, 1000] {
            assert!(matches!(
                game.bid(card, lowest).unwrap(),
                Err(BidError::NotYourCard { .. })
            ));
        }
        assert_eq!(game.view("x"), before);
        let played = game.bid(2, lowest).unwrap().unwrap();
        assert_eq!(played.you, 2);
        assert!(matches!(
            game.bid(2, lowest).unwrap(),
            Err(BidError::NotYourCard { card: 2, .. })
        ));
    }

    #[test]
    fn the_table_is_bounded_and_drops_the_least_recently_played() {
        let mut table = PlayTable::new(2);
        let game = Game::start(3, 1, lowest).unwrap();
        table.put(1, game.clone());
        table.put(2, game.clone());
        let again = table.take(1).unwrap();
        table.put(1, again); // 1 played more recently than 2
        table.put(3, game);
        assert_eq!(table.len(), 2);
        assert!(table.contains(1) && table.contains(3) && !table.contains(2));
        assert_eq!(parse_id(&id_text(0xdead_beef)), Some(0xdead_beef));
        assert_eq!(parse_id("xyz"), None);
        assert_eq!(parse_id("00000000000000zz"), None);
    }
}
