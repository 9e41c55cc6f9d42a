//! The answers of the API, as plain blocking functions over one shared, read-only solved
//! game ([`SharedReader`]) and the games in play: each takes a decoded query and gives
//! the JSON of the answer or an [`ApiError`]. The value and strategy answers are those of
//! `gops value --json` and `gops strategy --json` (the same `gops_db::read` code writes
//! both); a step applies the round rules of `gops_common::rules`.

use std::sync::Mutex;

use gops_arena::agent::{Agent, Base, Player};
use gops_arena::protocol::Request;
use gops_common::state::GameState;
use gops_common::sync::lock;
use gops_db::book::Book;
use gops_db::book::on_demand::OnDemandError;
use gops_db::read::SharedReader;
use gops_db::read::{QueryError, parse_upcard, strategy_json, value_json};
use serde_json::{Value, json};

use crate::params::{BadRequest, Query};
use crate::play::{BidError, Game, PlayTable, id_text, parse_id};
use crate::solving::solving_json;

/// How an answer failed, and so its HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 400: the request itself is wrong.
    #[error("{}", .0.0)]
    BadRequest(BadRequest),
    /// 404: no such game in play.
    #[error("{0}")]
    NotFound(String),
    /// 409: the db does not hold the answer yet (a layer not solved).
    #[error("{0}")]
    NotSolved(String),
    /// 500: reading the db failed.
    #[error("{0}")]
    Internal(String),
}

impl From<BadRequest> for ApiError {
    fn from(e: BadRequest) -> Self {
        ApiError::BadRequest(e)
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> Self {
        match e {
            QueryError::NotSolved { .. }
            | QueryError::NotInBook { .. }
            | QueryError::OnDemand(OnDemandError::OverLimit { .. })
            | QueryError::OnDemand(OnDemandError::OverBudget { .. }) => {
                ApiError::NotSolved(e.to_string())
            }
            e if e.is_usage() => ApiError::BadRequest(BadRequest::new(e.to_string())),
            e => ApiError::Internal(e.to_string()),
        }
    }
}

/// The most games in play at once; the least recently played is dropped past it.
pub const MAX_GAMES: usize = 10_000;

/// What the server answers from: the solved game and the games in play.
pub struct Explorer {
    pub(crate) reader: SharedReader,
    plays: Mutex<PlayTable>,
}

impl Explorer {
    /// An explorer over `book`, caching at most about `cache_bytes` of slices.
    pub fn new(book: Book, cache_bytes: usize) -> Explorer {
        Explorer {
            reader: SharedReader::new(book, cache_bytes),
            plays: Mutex::new(PlayTable::new(MAX_GAMES)),
        }
    }

    /// `GET /api/solving`: the solves on demand under way (none in a full db), and the
    /// subtrees solved so far.
    pub fn solving(&self) -> Result<Value, ApiError> {
        Ok(solving_json(self.reader.book().below()))
    }

    pub fn n(&self) -> u8 {
        self.reader.book().n()
    }

    /// `GET /api/game`: `{"n","objective","complete"}`.
    pub fn game(&self) -> Result<Value, ApiError> {
        let store = self.reader.book().store();
        let mut complete = true;
        for k in 1..=store.n() {
            complete &= store
                .layer(k)
                .map_err(|e| ApiError::Internal(e.to_string()))?
                .is_some();
        }
        Ok(json!({
            "n": store.n(),
            "objective": store.objective().name(),
            "complete": complete,
        }))
    }

    /// `GET /api/value`: what `gops value --json` prints for the same state.
    pub fn value(&self, query: &Query) -> Result<Value, ApiError> {
        let state = query.state(self.n())?;
        let value = self.reader.reader().value(&state)?;
        Ok(value_json(self.reader.book().objective(), &state, value))
    }

    /// `GET /api/strategy`: what `gops strategy --json` prints for the same state and
    /// upcard.
    pub fn strategy(&self, query: &Query) -> Result<Value, ApiError> {
        let (state, upcard) = self.state_and_upcard(query)?;
        let game = self.reader.reader().revealed(&state, upcard)?;
        Ok(strategy_json(
            self.reader.book().objective(),
            &state,
            upcard,
            &game,
        ))
    }

    /// `GET /api/step`: the state after A bids `bid_a` and B bids `bid_b` on `upcard`
    /// (as `/api/value` answers it), with the round under `"round"`: the prize, both
    /// bids and the points it moved to A (`"won"`: + for A, - for B, 0 on a tie).
    pub fn step(&self, query: &Query) -> Result<Value, ApiError> {
        let (state, upcard) = self.state_and_upcard(query)?;
        let bid = |key: &str, hand: gops_common::CardSet, who: &str| {
            let card = query.required_int(key, &format!("the card {who} bids"))?;
            u8::try_from(card)
                .ok()
                .filter(|&c| hand.contains(c))
                .ok_or_else(|| {
                    BadRequest::new(format!(
                        "{key}: card {card} is not in {who}'s hand ({hand})"
                    ))
                })
        };
        let bid_a = bid("bid_a", state.a, "A")?;
        let bid_b = bid("bid_b", state.b, "B")?;
        let next = gops_common::rules::play_round(&state, upcard, bid_a, bid_b);
        let value = self.reader.reader().value(&next)?;
        let mut answer = value_json(self.reader.book().objective(), &next, value);
        answer["round"] = json!({
            "upcard": upcard,
            "bid_a": bid_a,
            "bid_b": bid_b,
            "won": next.diff - state.diff,
        });
        Ok(answer)
    }

    fn state_and_upcard(&self, query: &Query) -> Result<(GameState, u8), ApiError> {
        let state = query.state(self.n())?;
        let upcard = query.required_int("upcard", "the prize turned up (one of prizes)")?;
        let upcard = parse_upcard(&state, upcard).map_err(|e| BadRequest::new(e.to_string()))?;
        Ok((state, upcard))
    }

    /// The bot's probabilities of its cards at `request`.
    fn bot(&self, bot: &mut Player, request: &Request) -> Result<Vec<f64>, ApiError> {
        Ok(bot.probabilities(&mut self.reader.reader(), request)?)
    }

    fn plays(&self) -> std::sync::MutexGuard<'_, PlayTable> {
        // the table is whole between any two of its calls: a panic elsewhere cannot
        // leave it half changed
        lock(&self.plays)
    }

    /// `POST /api/play/new[?seed=S][&opponent=AGENT]`: a new game against an agent (the
    /// equilibrium by default), its first prize turned up and the bot's bid on it sealed.
    pub fn play_new(&self, query: &Query) -> Result<Value, ApiError> {
        let seed = match query.int("seed")? {
            Some(seed) => u64::try_from(seed)
                .map_err(|_| BadRequest::new(format!("seed: {seed} is negative")))?,
            None => rand::random(),
        };
        let agent = match query.get("opponent") {
            Some(text) => {
                Agent::parse(text).map_err(|e| BadRequest::new(format!("opponent: {e}")))?
            }
            None => Agent::base(Base::Equilibrium),
        };
        let book = self.reader.book();
        agent
            .check_fits(book.n(), book.objective())
            .map_err(|e| BadRequest::new(format!("opponent: {e}")))?;
        let game = Game::start(
            self.n(),
            book.objective(),
            Player::new(agent),
            seed,
            |p, r| self.bot(p, r),
        )?;
        let mut plays = self.plays();
        let id = loop {
            let id: u64 = rand::random();
            if !plays.contains(id) {
                break id;
            }
        };
        let view = game.view(&id_text(id));
        plays.put(id, game);
        Ok(view)
    }

    /// `POST /api/play/bid?game=ID&card=C`: plays the player's card against the sealed
    /// bid, reveals it (`"rounds"`' last) and turns up the next prize.
    pub fn play_bid(&self, query: &Query) -> Result<Value, ApiError> {
        let text = query
            .get("game")
            .ok_or_else(|| BadRequest::new("game is missing: the id /api/play/new gave"))?;
        let id = parse_id(text)
            .ok_or_else(|| BadRequest::new(format!("game: '{text}' is not a game id")))?;
        let card = query.required_int("card", "the card you bid")?;
        // out of the table while the round is played: a second bid on the same game at
        // the same time finds no game rather than a half-played round
        let mut game = self.plays().take(id).ok_or_else(|| {
            ApiError::NotFound(format!(
                "no game {text} in play (it ended, or was dropped for newer games)"
            ))
        })?;
        let played = game.bid(card, |p, r| self.bot(p, r))?;
        let view = game.view(text);
        match played {
            Err(BidError::Over) => Err(ApiError::NotFound(format!("game {text} is over"))),
            Err(refused) => {
                self.plays().put(id, game);
                Err(BadRequest::new(refused.to_string()).into())
            }
            Ok(_) => {
                if !game.is_over() {
                    self.plays().put(id, game);
                }
                Ok(view)
            }
        }
    }
}
