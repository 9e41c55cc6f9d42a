//! Games against an agent (the equilibrium by default), kept on the server and stepped
//! through the arena's [`Table`]: the player is A, the bot is B. When a prize is turned
//! up the bot's bid is drawn from its mixed strategy and sealed in the game *before* the player's bid can be read; the bid request only reveals
//! it. The games in play live in a [`PlayTable`] bounded in size (the least recently
//! played goes first).

use std::collections::HashMap;

use gops_arena::agent::Player;
use gops_arena::protocol::{Request, Seat};
use gops_arena::table::Table;
use gops_common::cards::CardSet;
use gops_common::objective::Objective;
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

/// One game in play, stepped through the arena's [`Table`]: the player is A, the bot B.
#[derive(Clone)]
pub struct Game {
    table: Table,
    /// The bot's bid sealed on the prize turned up; `None` once the game is over.
    sealed: Option<u8>,
    bot: Player,
    seed: u64,
    rng: StdRng,
}

impl Game {
    /// A new `n`-card game against `bot`, whose prizes and bot draws come from `seed`;
    /// `ask` gives the bot's probabilities (of B's cards, ascending) at a decision.
    pub fn start<E>(
        n: u8,
        objective: Objective,
        bot: Player,
        seed: u64,
        ask: impl FnMut(&mut Player, &Request) -> Result<Vec<f64>, E>,
    ) -> Result<Game, E> {
        let mut game = Game {
            table: Table::new(n, objective),
            sealed: None,
            bot,
            seed,
            rng: StdRng::seed_from_u64(seed),
        };
        game.turn_up(ask)?;
        Ok(game)
    }

    /// Turns up the next prize and seals the bot's bid on it (nothing when none is left).
    fn turn_up<E>(
        &mut self,
        mut ask: impl FnMut(&mut Player, &Request) -> Result<Vec<f64>, E>,
    ) -> Result<(), E> {
        self.sealed = None;
        if self.table.is_over() {
            return Ok(());
        }
        self.table.turn_up(&mut self.rng);
        let strategy = ask(&mut self.bot, &self.table.request(0, Seat::B))?;
        self.sealed = Some(self.table.draw(Seat::B, &strategy, &mut self.rng));
        Ok(())
    }

    /// Plays the player's `card` against the sealed bid, then turns up the next prize.
    /// A refused bid changes nothing.
    pub fn bid<E>(
        &mut self,
        card: i64,
        ask: impl FnMut(&mut Player, &Request) -> Result<Vec<f64>, E>,
    ) -> Result<Result<Round, BidError>, E> {
        let Some(sealed) = self.sealed else {
            return Ok(Err(BidError::Over));
        };
        let hand = self.table.state().a;
        let Some(card) = u8::try_from(card).ok().filter(|&c| hand.contains(c)) else {
            return Ok(Err(BidError::NotYourCard { card, hand }));
        };
        let played = self
            .table
            .play(card, sealed)
            .expect("a held card against the bot's sealed bid");
        let round = Round {
            prize: played.prize,
            you: played.a,
            bot: played.b,
        };
        self.turn_up(ask)?;
        Ok(Ok(round))
    }

    pub fn is_over(&self) -> bool {
        self.sealed.is_none()
    }

    /// The game as the player may see it (the sealed bid left out): `game` is its id.
    pub fn view(&self, id: &str) -> Value {
        let (you, bot) = self.table.taken();
        let result = self.is_over().then(|| match you.cmp(&bot) {
            std::cmp::Ordering::Greater => "you win",
            std::cmp::Ordering::Less => "the bot wins",
            std::cmp::Ordering::Equal => "a draw",
        });
        let rounds: Vec<Value> = self
            .table
            .rounds()
            .iter()
            .map(|r| Round {
                prize: r.prize,
                you: r.a,
                bot: r.b,
            })
            .map(|r| json!({"prize": r.prize, "you": r.you, "bot": r.bot, "winner": r.winner()}))
            .collect();
        let state = self.table.state();
        json!({
            "game": id,
            "n": state.n,
            "seed": self.seed,
            "opponent": self.bot.agent().name(),
            "upcard": self.table.upcard(),
            "prizes_left": state.prizes.to_vec(),
            "your_cards": state.a.to_vec(),
            "bot_cards": state.b.to_vec(),
            "you": you,
            "bot": bot,
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
    fn lowest(_: &mut Player, request: &Request) -> Result<Vec<f64>, Infallible> {
        Ok((0..request.hand.len()).map(|i| f64::from(i == 0)).collect())
    }

    /// A bot that mixes uniformly.
    fn uniform(_: &mut Player, request: &Request) -> Result<Vec<f64>, Infallible> {
        Ok(vec![1.0 / request.hand.len() as f64; request.hand.len()])
    }

    fn start<E>(
        n: u8,
        seed: u64,
        ask: impl FnMut(&mut Player, &Request) -> Result<Vec<f64>, E>,
    ) -> Result<Game, E> {
        let player = Player::new(gops_arena::agent::Agent::base(
            gops_arena::agent::Base::Uniform,
        ));
        Game::start(n, Objective::Points, player, seed, ask)
    }

    #[test]
    fn a_game_runs_to_the_end_and_keeps_the_score() {
        let mut game = start(4, 7, lowest).unwrap();
        let mut rounds = 0;
        while !game.is_over() {
            let highest = game.table.state().a.iter().last().unwrap();
            let round = game.bid(i64::from(highest), lowest).unwrap().unwrap();
            rounds += 1;
            // the bot bids its lowest card: the player's highest wins until they meet
            assert_eq!(
                round.bot,
                game.table.state().n - game.table.state().b.len() as u8
            );
        }
        assert_eq!(rounds, 4);
        let view = game.view("x");
        assert_eq!(view["over"], true);
        // 4 v 1 and 3 v 2 go to the player, 2 v 3 and 1 v 4 to the bot: no tie, so
        // every prize is scored
        let winners: Vec<&str> = game
            .table
            .rounds()
            .iter()
            .map(|r| match r.winner() {
                Some(Seat::A) => "you",
                Some(Seat::B) => "bot",
                None => "tie",
            })
            .collect();
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
            let mut game = start(6, 42, uniform).unwrap();
            let mut bids = Vec::new();
            while !game.is_over() {
                let card = if pick_high {
                    game.table.state().a.iter().last()
                } else {
                    game.table.state().a.iter().next()
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
        let counting = |p: &mut Player, r: &Request| {
            *asked.borrow_mut() += 1;
            uniform(p, r)
        };
        let game = start(3, 1, counting).unwrap();
        assert_eq!(*asked.borrow(), 1);
        assert!(game.sealed.is_some());
    }

    #[test]
    fn a_card_not_in_hand_is_refused_and_changes_nothing() {
        let mut game = start(3, 3, lowest).unwrap();
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
        let game = start(3, 1, lowest).unwrap();
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
