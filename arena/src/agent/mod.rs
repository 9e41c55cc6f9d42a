//! The one vocabulary of agents: every way of bidding the project knows, by one name
//! everywhere (`simulate`, `exploit`, `arena --builtin`, `play`, the explorer, Python).
//!
//! * [`Base`]: the simple rules (`uniform`, `upcard`, `upcard-plus-one`, `greedy`) and
//!   the db's equilibrium (`equilibrium`, `equilibrium-pure`); the names of before are
//!   aliases (`random`, `match`, `plus-one`, `optimal`);
//! * [`Model`]: a weighted mixture of bases, `0.6*upcard+0.4*uniform` (one base alone is
//!   a model too), or one fitted to recorded games, `fit:FILE` ([`fit`]): what an
//!   opponent is assumed to do;
//! * [`Agent`]: a model played as it is, or an agent that answers a model: the safe
//!   exploiter `exploit:MODEL[:RISK]` ([`safe`]) and the exact best response
//!   `respond:MODEL`;
//! * [`Player`]: an agent at the table, asked one decision at a time ([`crate::protocol::Request`]),
//!   reading the db through the reader it is given; [`AgentBot`] is a player with a
//!   reader of its own, as the arena's bots are.

pub mod fit;
pub mod rules;
pub mod safe;

use std::fmt;

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::state::GameState;
use gops_db::book::Book;
use gops_db::read::{CachedReader, QueryError, Reader, Slices};

use crate::bot::{Bot, NoReply};
use crate::measure::respond;
use crate::protocol::{Reply, Request, Seat};

/// How far a mixture's weights may sum from 1.
pub const WEIGHT_TOLERANCE: f64 = 1e-9;

/// A way of bidding that needs nothing but the decision and the db.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    /// A card of the hand, uniformly.
    Uniform,
    /// The card equal to the upcard; once it is gone, the nearest held card (the lower
    /// one on a tie).
    Upcard,
    /// The card one above the upcard; once it is gone, the nearest held card.
    UpcardPlusOne,
    /// The card whose rank among one's cards is the upcard's rank among the prizes left
    /// (the highest cards on the highest prizes).
    Greedy,
    /// The equilibrium's mixed strategy, from the db.
    Equilibrium,
    /// The equilibrium's most likely bid (the lowest such card on a tie), played pure.
    EquilibriumPure,
    /// Mined from the 13-card equilibrium: the upcard + 1 early, the upcard in the middle,
    /// the upcard - 1 late ([`rules::drift`]).
    UpcardDrift,
    /// Mined: the held card nearest the upcard + 2 (the opening's bids of the upcard's
    /// parity above it).
    UpcardPlusTwo,
    /// Mined: one above on the upper half of the prizes, the lowest card on the lower
    /// half ([`rules::split`]).
    Split,
}

impl Base {
    pub const ALL: [Base; 9] = [
        Base::Uniform,
        Base::Upcard,
        Base::UpcardPlusOne,
        Base::Greedy,
        Base::Equilibrium,
        Base::EquilibriumPure,
        Base::UpcardDrift,
        Base::UpcardPlusTwo,
        Base::Split,
    ];

    /// The rules that read nothing but the decision (what `gops fit` fits over).
    pub const RULES: [Base; 4] = [
        Base::Uniform,
        Base::Upcard,
        Base::UpcardPlusOne,
        Base::Greedy,
    ];

    /// The names of before, kept as aliases: (alias, the base it names).
    pub const ALIASES: [(&'static str, Base); 4] = [
        ("random", Base::Uniform),
        ("match", Base::Upcard),
        ("plus-one", Base::UpcardPlusOne),
        ("optimal", Base::Equilibrium),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Base::Uniform => "uniform",
            Base::Upcard => "upcard",
            Base::UpcardPlusOne => "upcard-plus-one",
            Base::Greedy => "greedy",
            Base::Equilibrium => "equilibrium",
            Base::EquilibriumPure => "equilibrium-pure",
            Base::UpcardDrift => "upcard-drift",
            Base::UpcardPlusTwo => "upcard-plus-two",
            Base::Split => "split",
        }
    }

    /// The base a name or an alias names.
    pub fn from_name(name: &str) -> Option<Base> {
        Base::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .or_else(|| {
                Base::ALIASES
                    .iter()
                    .find(|(a, _)| *a == name)
                    .map(|(_, b)| *b)
            })
    }

    /// Whether it reads the db (the rules do not).
    pub fn reads_db(self) -> bool {
        matches!(self, Base::Equilibrium | Base::EquilibriumPure)
    }

    /// A rule's probability of each card of `hand` (ascending) when `upcard` is turned
    /// up and `prizes` are left; `None` for the equilibrium's, which read the db.
    pub fn rule(self, hand: CardSet, prizes: CardSet, upcard: u8) -> Option<Vec<f64>> {
        Some(match self {
            Base::Uniform => rules::uniform(hand),
            Base::Upcard => rules::pure(hand, rules::nearest(hand, upcard)),
            Base::UpcardPlusOne => rules::pure(hand, rules::nearest(hand, upcard + 1)),
            Base::Greedy => rules::pure(hand, rules::greedy(hand, prizes, upcard)),
            Base::UpcardDrift => rules::pure(hand, rules::drift(hand, prizes, upcard)),
            Base::UpcardPlusTwo => rules::pure(hand, rules::nearest(hand, upcard + 2)),
            Base::Split => rules::pure(hand, rules::split(hand, prizes, upcard)),
            Base::Equilibrium | Base::EquilibriumPure => return None,
        })
    }

    /// The probability of each card of the hand (ascending) at `request`.
    pub fn probabilities<S: Slices>(
        self,
        reader: &mut Reader<'_, S>,
        request: &Request,
    ) -> Result<Vec<f64>, QueryError> {
        let hand = request.hand_set();
        let prizes = CardSet::from_cards(&request.prizes);
        if let Some(p) = self.rule(hand, prizes, request.upcard) {
            return Ok(p);
        }
        Ok(match self {
            Base::Equilibrium => equilibrium(reader, request)?,
            Base::EquilibriumPure => {
                let p = equilibrium(reader, request)?;
                let best = (0..p.len()).fold(0, |best, i| if p[i] > p[best] { i } else { best });
                rules::pure(hand, hand.to_vec()[best])
            }
            _ => unreachable!("the rules answered above"),
        })
    }
}

/// The equilibrium's mix of the requested seat's cards.
fn equilibrium<S: Slices>(
    reader: &mut Reader<'_, S>,
    request: &Request,
) -> Result<Vec<f64>, QueryError> {
    let game = reader.revealed(&request.state(), request.upcard)?;
    Ok(match request.seat {
        Seat::A => game.strategy_a,
        Seat::B => game.strategy_b,
    })
}

/// Why an agent's or a model's text names nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

/// A weighted mixture of bases: at each decision one base is picked by its weight and
/// plays. Weights are positive and sum to 1; no base twice; in [`Base::ALL`]'s order.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    parts: Vec<(Base, f64)>,
}

impl Model {
    /// One base alone.
    pub fn of(base: Base) -> Model {
        Model {
            parts: vec![(base, 1.0)],
        }
    }

    /// A mixture from its weights; parts of weight 0 are left out.
    pub fn mixture(weights: &[(Base, f64)]) -> Result<Model, AgentError> {
        let mut parts: Vec<(Base, f64)> = Vec::new();
        for &(base, weight) in weights {
            if !weight.is_finite() || !(0.0..=1.0).contains(&weight) {
                return Err(AgentError(format!(
                    "the weight {weight} of {} is not between 0 and 1",
                    base.name()
                )));
            }
            if parts.iter().any(|(b, _)| *b == base) {
                return Err(AgentError(format!("{} is named twice", base.name())));
            }
            parts.push((base, weight));
        }
        let sum: f64 = parts.iter().map(|(_, w)| w).sum();
        if (sum - 1.0).abs() > WEIGHT_TOLERANCE {
            return Err(AgentError(format!(
                "the weights sum to {sum}, not 1 (within {WEIGHT_TOLERANCE:e})"
            )));
        }
        parts.retain(|(_, w)| *w > 0.0);
        parts.sort_by_key(|(b, _)| *b);
        Ok(Model { parts })
    }

    /// `NAME`, `W*NAME+W*NAME...` (weights summing to 1), or `fit:FILE` (the mixture
    /// of the rules fitted to FILE's recorded decisions, [`fit`]).
    pub fn parse(text: &str) -> Result<Model, AgentError> {
        let text = text.trim();
        if let Some(path) = text.strip_prefix("fit:") {
            return fit::fit_file(std::path::Path::new(path));
        }
        if !text.contains(['*', '+']) {
            return Base::from_name(text)
                .map(Model::of)
                .ok_or_else(|| unknown(text));
        }
        let mut weights = Vec::new();
        for part in text.split('+') {
            let Some((weight, name)) = part.split_once('*') else {
                return Err(AgentError(format!(
                    "{part:?} in the mixture {text:?} is not WEIGHT*NAME (for example 0.6*upcard+0.4*uniform)"
                )));
            };
            let weight: f64 = weight.trim().parse().map_err(|_| {
                AgentError(format!(
                    "the weight {:?} in the mixture {text:?} is not a number",
                    weight.trim()
                ))
            })?;
            let base = Base::from_name(name.trim()).ok_or_else(|| unknown(name.trim()))?;
            weights.push((base, weight));
        }
        Model::mixture(&weights)
    }

    pub fn parts(&self) -> &[(Base, f64)] {
        &self.parts
    }

    /// The weight of `base` (0 when absent).
    pub fn weight(&self, base: Base) -> f64 {
        self.parts
            .iter()
            .find(|(b, _)| *b == base)
            .map_or(0.0, |(_, w)| *w)
    }

    pub fn reads_db(&self) -> bool {
        self.parts.iter().any(|(b, _)| b.reads_db())
    }

    /// The mixture's probability of each card of the hand at `request`.
    pub fn probabilities<S: Slices>(
        &self,
        reader: &mut Reader<'_, S>,
        request: &Request,
    ) -> Result<Vec<f64>, QueryError> {
        if let [(base, _)] = self.parts[..] {
            return base.probabilities(reader, request);
        }
        let mut mixed = vec![0.0; request.hand.len()];
        for &(base, weight) in &self.parts {
            let p = base.probabilities(reader, request)?;
            for (m, q) in mixed.iter_mut().zip(p) {
                *m += weight * q;
            }
        }
        Ok(mixed)
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [(base, _)] = self.parts[..] {
            return f.write_str(base.name());
        }
        for (i, (base, weight)) in self.parts.iter().enumerate() {
            let sep = if i == 0 { "" } else { "+" };
            write!(f, "{sep}{weight}*{}", base.name())?;
        }
        Ok(())
    }
}

fn unknown(name: &str) -> AgentError {
    let names: Vec<&str> = Base::ALL.iter().map(|b| b.name()).collect();
    AgentError(format!(
        "unknown agent {name:?}: expected one of {} (or the old names random, match, plus-one, optimal), a mixture such as 0.6*upcard+0.4*uniform, or fit:FILE",
        names.join(", ")
    ))
}

/// An agent, by the name it is written with.
#[derive(Clone, Debug, PartialEq)]
pub enum Agent {
    /// A model played as it is.
    Plays(Model),
    /// The safe exploiter of a model, `exploit:MODEL[:RISK]` ([`safe`]): RISK is what it
    /// may lose below the game's value over a whole game, 0 by default.
    Exploit { model: Model, risk: f64 },
    /// The exact best response to a model, `respond:MODEL`
    /// ([`crate::measure::respond`]), where the model's states fit in memory.
    Respond { model: Model },
}

impl Agent {
    /// An agent from its text: a model (see the module's names), or
    /// `exploit:MODEL[:RISK]`.
    pub fn parse(text: &str) -> Result<Agent, AgentError> {
        let text = text.trim();
        if let Some(model) = text.strip_prefix("respond:") {
            return Ok(Agent::Respond {
                model: Model::parse(model)?,
            });
        }
        if let Some(rest) = text.strip_prefix("exploit:") {
            // a last `:NUMBER` is the risk (a model's text holds no such part)
            let (model, risk) = match rest.rsplit_once(':') {
                Some((model, risk)) if risk.trim().parse::<f64>().is_ok() => {
                    (model, risk.trim().parse::<f64>().expect("checked"))
                }
                _ => (rest, 0.0),
            };
            if !risk.is_finite() || risk < 0.0 {
                return Err(AgentError(format!(
                    "the risk {risk} of {text:?} is not a number of at least 0"
                )));
            }
            let model = Model::parse(model)?;
            return Ok(Agent::Exploit { model, risk });
        }
        Model::parse(text).map(Agent::Plays)
    }

    pub fn base(base: Base) -> Agent {
        Agent::Plays(Model::of(base))
    }

    /// The name it is written with, aliases resolved.
    pub fn name(&self) -> String {
        match self {
            Agent::Plays(model) => model.to_string(),
            Agent::Exploit { model, risk } if *risk == 0.0 => format!("exploit:{model}"),
            Agent::Exploit { model, risk } => format!("exploit:{model}:{risk}"),
            Agent::Respond { model } => format!("respond:{model}"),
        }
    }

    pub fn reads_db(&self) -> bool {
        match self {
            Agent::Plays(model) => model.reads_db(),
            Agent::Exploit { .. } | Agent::Respond { .. } => true,
        }
    }

    /// Whether it can play the `n`-card game: a best response refuses a model whose
    /// states would not fit in memory, with its estimate.
    pub fn check_fits(&self, n: u8, objective: Objective) -> Result<(), AgentError> {
        let Agent::Respond { model } = self else {
            return Ok(());
        };
        let states = respond::reachable_states(model, objective, &GameState::initial(n));
        if states > respond::RESPOND_STATE_LIMIT {
            return Err(AgentError(format!(
                "{self}: a best response to this model in the {n}-card {objective} game may walk up to {states} concrete states, more than the {} it holds in memory; take a model of deterministic rules, or a smaller game",
                respond::RESPOND_STATE_LIMIT
            )));
        }
        Ok(())
    }

    /// Whether its bids depend on nothing but the state and the upcard (not on the
    /// history): what an exact exploitation over states needs.
    pub fn plays_by_state(&self) -> bool {
        matches!(self, Agent::Plays(_) | Agent::Respond { .. })
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// An agent at the table: asked one decision at a time, it answers the probability of
/// each of its cards. It may keep what it saw of the game so far.
#[derive(Clone, Debug)]
pub struct Player {
    agent: Agent,
    plays: Plays,
}

/// How a player bids, with what it keeps between decisions.
#[derive(Clone, Debug)]
enum Plays {
    Model(Model),
    /// The safe exploiter, its budget carried from round to round.
    Safe(safe::SafeExploiter),
    /// The best response, its walk kept for every later decision (made at the first).
    Respond(Model, Option<respond::Responder>),
}

impl Player {
    pub fn new(agent: Agent) -> Player {
        let plays = match &agent {
            Agent::Plays(model) => Plays::Model(model.clone()),
            Agent::Exploit { model, risk } => {
                Plays::Safe(safe::SafeExploiter::new(model.clone(), *risk))
            }
            Agent::Respond { model } => Plays::Respond(model.clone(), None),
        };
        Player { agent, plays }
    }

    /// The safe exploiter's state, when the agent is one.
    pub fn safe(&self) -> Option<&safe::SafeExploiter> {
        match &self.plays {
            Plays::Safe(safe) => Some(safe),
            _ => None,
        }
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The probability of each card of the hand (ascending) at `request`, reading the
    /// db through `reader`.
    pub fn probabilities<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        request: &Request,
    ) -> Result<Vec<f64>, QueryError> {
        match &mut self.plays {
            Plays::Model(model) => model.probabilities(reader, request),
            Plays::Safe(safe) => Ok(safe.decide(reader, request)?.mix),
            Plays::Respond(model, responder) => {
                let responder = responder.get_or_insert_with(|| {
                    respond::Responder::new(model.clone(), request.objective)
                });
                // the request's own side as A (the game is the same from both seats)
                let as_a = GameState {
                    n: request.n,
                    a: request.hand_set(),
                    b: CardSet::from_cards(&request.opponent_hand),
                    prizes: CardSet::from_cards(&request.prizes),
                    diff: request.diff,
                };
                let bid = responder.best_bid(reader, &as_a, request.upcard)?;
                Ok(rules::pure(as_a.a, bid))
            }
        }
    }
}

/// A player with a reader of its own: an agent as the arena's bot.
pub struct AgentBot<'b> {
    player: Player,
    reader: CachedReader<'b>,
}

impl<'b> AgentBot<'b> {
    /// `agent`, reading `book` through a reader of its own that caches at most about
    /// `cache_bytes` (a rule reads nothing).
    pub fn new(agent: Agent, book: &'b Book, cache_bytes: usize) -> AgentBot<'b> {
        let cache = if agent.reads_db() { cache_bytes } else { 0 };
        AgentBot {
            player: Player::new(agent),
            reader: CachedReader::cached(book, cache),
        }
    }
}

impl Bot for AgentBot<'_> {
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply> {
        let p = self.player.probabilities(&mut self.reader, request)?;
        Ok(Reply::of_probabilities(&request.hand, &p))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod safe_tests;
