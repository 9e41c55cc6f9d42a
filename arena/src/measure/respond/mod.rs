//! The exact best response to an opponent model (`gops respond`, the agent
//! `respond:MODEL`): B bids by MODEL, A maximises, by backward induction over the
//! concrete states the model lets the game reach (A's hand, B's hand, the prizes, and
//! for `win` the score difference). At each state it also gives what the db's
//! equilibrium earns against MODEL, and how much a best response to A's best response
//! takes back (A playing the equilibrium off the model's path, where its best response
//! is not defined). The pattern reduction of the solver does not hold here: a rule looks
//! at card values.
//!
//! States are kept in memory, so the walk is sized first ([`reachable_states`]): a model
//! whose every part is a deterministic rule keeps few of B's hands (against `upcard`, B's
//! hand is the prizes left), a uniform or equilibrium part keeps them all.

use std::collections::{HashMap, HashSet};

use gops_common::binomial::binomial;
use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::rules::play_round;
use gops_common::state::GameState;
use gops_db::read::{QueryError, Reader, RevealedGame, Slices};
use serde::Serialize;

use crate::agent::{Base, Model};
use crate::protocol::{Request, Seat};

mod layered;

pub use layered::{layered_states, respond_layered};

/// States the sparse walk (a model of deterministic rules, or the agent `respond:MODEL`)
/// is willing to keep (about 100 bytes each).
pub const RESPOND_STATE_LIMIT: u64 = 100_000_000;

/// States the layered walk (a model that keeps every hand of B) is willing to hold at
/// once, in two adjacent layers (24 bytes each: about 9.6 GB).
pub const RESPOND_HELD_LIMIT: u64 = 400_000_000;

/// A's results from a state on against the model (points: the score still to come; win:
/// the final outcome), and the game's value there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Results {
    /// A best-responding to the model.
    pub best_response: f64,
    /// A playing the db's equilibrium against the model.
    pub equilibrium: f64,
    /// A's best response (the equilibrium off the model's path) against a best response
    /// to it.
    pub best_response_guaranteed: f64,
}

/// The best response's walk, its memo kept from one question to the next (as an agent,
/// one walk serves every later decision).
#[derive(Clone, Debug)]
pub struct Responder {
    model: Model,
    objective: Objective,
    memo: HashMap<u64, Results>,
}

impl Responder {
    pub fn new(model: Model, objective: Objective) -> Responder {
        Responder {
            model,
            objective,
            memo: HashMap::new(),
        }
    }

    /// States evaluated so far.
    pub fn states(&self) -> u64 {
        self.memo.len() as u64
    }

    fn key(&self, state: &GameState) -> u64 {
        let d = match self.objective {
            Objective::Win => state.diff,
            Objective::Points => 0,
        };
        u64::from(state.a.0)
            | u64::from(state.b.0) << 16
            | u64::from(state.prizes.0) << 32
            | ((d + 1024) as u64) << 48
    }

    /// The results from `state` on (before its upcard). `progress` hears the states
    /// evaluated now and then.
    pub fn results<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        state: &GameState,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Results, QueryError> {
        if let Some(end) = terminal(self.objective, state) {
            return Ok(end);
        }
        let key = self.key(state);
        if let Some(&r) = self.memo.get(&key) {
            return Ok(r);
        }
        let r = over_upcards(state, |upcard| {
            Ok(self.after_upcard(reader, state, upcard, progress)?.1)
        })?;
        self.memo.insert(key, r);
        if self.memo.len().is_multiple_of(65_536) {
            progress(self.memo.len() as u64);
        }
        Ok(r)
    }

    /// The results from `state` on, walked layer by layer: the states the model reaches
    /// are listed first (from the top), then evaluated from the bottom layer up, each
    /// layer in the order of its prizes, so that the reads of one set of prizes come
    /// together (a walk in depth comes back to the same prizes again and again, long
    /// after their slices have left the cache). `progress` hears the states evaluated
    /// now and then.
    pub fn results_by_layers<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        from: &GameState,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Results, QueryError> {
        let layers = self.reached_layers(from);
        for mut layer in layers.into_iter().skip(1) {
            layer.sort_by_key(|s| (s.prizes.0, s.a.0, s.b.0, s.diff));
            for state in &layer {
                self.results(reader, state, progress)?;
            }
        }
        self.results(reader, from, progress)
    }

    /// The states the model reaches from `from`, by cards left (B's bids those its rules
    /// can make; every card for a part that is uniform or reads the db).
    fn reached_layers(&self, from: &GameState) -> Vec<Vec<GameState>> {
        let mut layers = vec![Vec::new(); from.prizes.len() + 1];
        layers[from.prizes.len()].push(*from);
        for k in (1..=from.prizes.len()).rev() {
            let mut seen = HashSet::new();
            let mut next = Vec::new();
            for s in &layers[k] {
                let decided =
                    self.objective == Objective::Win && s.diff.abs() > s.prizes.sum() as i32;
                if decided {
                    continue;
                }
                for upcard in s.prizes.iter() {
                    let bids = self.possible_bids(s, upcard);
                    for a in s.a.iter() {
                        for b in bids.iter() {
                            let child = play_round(s, upcard, a, b);
                            if seen.insert(self.key(&child)) {
                                next.push(child);
                            }
                        }
                    }
                }
            }
            layers[k - 1] = next;
        }
        layers
    }

    /// B's cards the model may bid at `state` once `upcard` is up.
    fn possible_bids(&self, state: &GameState, upcard: u8) -> CardSet {
        let mut bids = CardSet::from_cards(&[]);
        for (base, _) in self.model.parts() {
            match base.rule(state.b, state.prizes, upcard) {
                Some(p) => {
                    for (card, q) in state.b.iter().zip(p) {
                        if q > 0.0 {
                            bids = bids.union(CardSet::from_cards(&[card]));
                        }
                    }
                }
                None => return state.b,
            }
        }
        bids
    }

    /// A's best bid at `state` once `upcard` is up (the lowest card on a tie).
    pub fn best_bid<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        state: &GameState,
        upcard: u8,
    ) -> Result<u8, QueryError> {
        Ok(self.after_upcard(reader, state, upcard, &mut |_| {})?.0)
    }

    /// A's best bid and the results once `upcard` is up.
    fn after_upcard<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        state: &GameState,
        upcard: u8,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(u8, Results), QueryError> {
        let revealed = Revealed::read(reader, &self.model, state, upcard)?;
        let (a_cards, b_cards) = (state.a.to_vec(), state.b.to_vec());
        let objective = self.objective;
        let (i, r) = revealed.combine(|i, j| {
            let child = play_round(state, upcard, a_cards[i], b_cards[j]);
            let r = self.results(reader, &child, progress)?;
            Ok((scored(objective, state, &child), r))
        })?;
        Ok((a_cards[i], r))
    }
}

/// The results where nothing is left to play: no prizes, or (`win`) a lead the prizes
/// left cannot overturn.
fn terminal(objective: Objective, state: &GameState) -> Option<Results> {
    let remaining = state.prizes.sum() as i32;
    let decided = objective == Objective::Win && state.diff.abs() > remaining;
    if !(state.prizes.is_empty() || decided) {
        return None;
    }
    let end = match objective {
        Objective::Points => 0.0,
        Objective::Win => f64::from(state.diff.signum()),
    };
    Some(Results {
        best_response: end,
        equilibrium: end,
        best_response_guaranteed: end,
    })
}

/// The results before the upcard: the mean over the prizes, each turned up with the same
/// chance, of the results once it is up (`after`), summed in the prizes' order.
fn over_upcards(
    state: &GameState,
    mut after: impl FnMut(u8) -> Result<Results, QueryError>,
) -> Result<Results, QueryError> {
    let mut sum = [0.0; 3];
    for upcard in state.prizes.iter() {
        let r = after(upcard)?;
        sum[0] += r.best_response;
        sum[1] += r.equilibrium;
        sum[2] += r.best_response_guaranteed;
    }
    let k = state.prizes.len() as f64;
    Ok(Results {
        best_response: sum[0] / k,
        equilibrium: sum[1] / k,
        best_response_guaranteed: sum[2] / k,
    })
}

/// What A scores in the round from `state` to `child` (for `win`, nothing until the end).
fn scored(objective: Objective, state: &GameState, child: &GameState) -> f64 {
    match objective {
        Objective::Points => f64::from(child.diff - state.diff),
        Objective::Win => 0.0,
    }
}

/// One round once its upcard is up: B's predicted bids and the db's game there.
struct Revealed {
    predicted: Vec<f64>,
    game: RevealedGame,
}

impl Revealed {
    fn read<S: Slices>(
        reader: &mut Reader<'_, S>,
        model: &Model,
        state: &GameState,
        upcard: u8,
    ) -> Result<Revealed, QueryError> {
        let request = Request::new(0, reader.objective(), Seat::B, state, upcard, &[]);
        let predicted = model.probabilities(reader, &request)?;
        let game = reader.revealed(state, upcard)?;
        Ok(Revealed { predicted, game })
    }

    /// A's best card (its index, the lowest on a tie) and the results, from each child
    /// the model reaches: `child(i, j)` gives what A scores in the round and the child's
    /// results when A bids its i-th card and B its j-th, asked only where the model
    /// gives B's j-th card a positive probability. Both walks combine here, so that
    /// their numbers agree bit for bit.
    fn combine(
        &self,
        mut child: impl FnMut(usize, usize) -> Result<(f64, Results), QueryError>,
    ) -> Result<(usize, Results), QueryError> {
        let (predicted, game) = (&self.predicted, &self.game);
        let k = predicted.len();
        let mut best = (0, f64::NEG_INFINITY);
        let mut equilibrium = 0.0;
        // each child the model reaches, by (A's card, B's card)
        let mut children = vec![None; k * k];
        for i in 0..k {
            let (mut earned, mut earned_at_equilibrium) = (0.0, 0.0);
            for (j, &p) in predicted.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                let (now, r) = child(i, j)?;
                earned += p * (now + r.best_response);
                earned_at_equilibrium += p * (now + r.equilibrium);
                children[i * k + j] = Some((now, r));
            }
            if earned > best.1 {
                best = (i, earned);
            }
            equilibrium += game.strategy_a[i] * earned_at_equilibrium;
        }
        let i = best.0;
        let guaranteed = (0..k)
            .map(|j| match children[i * k + j] {
                Some((now, r)) => now + r.best_response_guaranteed,
                // off the model's path A plays the equilibrium: a best response to it
                // takes exactly the value there
                None => game.matrix[i * k + j],
            })
            .fold(f64::INFINITY, f64::min);
        Ok((
            i,
            Results {
                best_response: best.1,
                equilibrium,
                best_response_guaranteed: guaranteed,
            },
        ))
    }
}
/// A best response's whole answer from a state, as `gops respond --json` and Python's
/// `gops.respond` give it (results for A: points, the score still to come; win, P(win) -
/// P(loss)).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Response {
    pub n: u8,
    pub objective: &'static str,
    pub opponent: String,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub prizes: Vec<u8>,
    pub diff: i32,
    /// The game's value there.
    pub value: f64,
    pub best_response: f64,
    pub equilibrium: f64,
    /// `best_response - equilibrium`.
    pub gain: f64,
    /// What a best response to A's best response takes back below the value.
    pub exploitability: f64,
    pub states: u64,
    /// The bound the walk was sized with ([`reachable_states`]).
    pub states_estimate: u64,
    pub seconds: f64,
}

/// Whether B may hold any hand under `model` (a part that is uniform or reads the db):
/// then `respond` walks every state, two layers at a time.
pub fn keeps_every_hand(model: &Model) -> bool {
    model
        .parts()
        .iter()
        .any(|(b, _)| matches!(b, Base::Uniform) || b.reads_db())
}

/// How `respond` would walk from a state: its states in all, and those it holds at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Two layers at a time over every state (a model that keeps every hand), or the
    /// sparse walk over the states the model reaches, all kept.
    pub layered: bool,
    /// At most the states walked ([`reachable_states`]).
    pub states: u64,
    /// At most the states held at once.
    pub held: u64,
}

impl Plan {
    pub fn new(model: &Model, objective: Objective, from: &GameState) -> Plan {
        if keeps_every_hand(model) {
            let (states, held) = layered_states(objective, from);
            Plan {
                layered: true,
                states,
                held,
            }
        } else {
            let states = reachable_states(model, objective, from);
            Plan {
                layered: false,
                states,
                held: states,
            }
        }
    }

    /// Whether the walk fits the memory `respond` allows itself.
    pub fn fits(&self) -> bool {
        self.held <= self.limit()
    }

    /// The most states it allows itself to hold at once.
    pub fn limit(&self) -> u64 {
        if self.layered {
            RESPOND_HELD_LIMIT
        } else {
            RESPOND_STATE_LIMIT
        }
    }
}

/// The best response to `model` from `from`, walked by layers, with the game's value
/// there; `states_estimate` is the size the caller checked. `progress` hears the states
/// evaluated now and then.
pub fn respond<S: Slices>(
    reader: &mut Reader<'_, S>,
    model: &Model,
    from: &GameState,
    states_estimate: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Response, QueryError> {
    let started = std::time::Instant::now();
    let objective = reader.objective();
    let value = reader.value(from)?;
    let (r, states) = if keeps_every_hand(model) {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        layered::respond_layered(reader, model, from, threads, progress)?
    } else {
        let mut responder = Responder::new(model.clone(), objective);
        let r = responder.results_by_layers(reader, from, progress)?;
        (r, responder.states())
    };
    Ok(Response {
        n: from.n,
        objective: objective.name(),
        opponent: model.to_string(),
        a: from.a.to_vec(),
        b: from.b.to_vec(),
        prizes: from.prizes.to_vec(),
        diff: from.diff,
        value,
        best_response: r.best_response,
        equilibrium: r.equilibrium,
        gain: r.best_response - r.equilibrium,
        exploitability: value - r.best_response_guaranteed,
        states,
        states_estimate,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// How many concrete states a best response to `model` from `from` walks at most: the
/// hands B can hold under the model (all of them when a part is uniform or reads the
/// db), times A's hands, times (for `win`) the score differences.
pub fn reachable_states(model: &Model, objective: Objective, from: &GameState) -> u64 {
    if keeps_every_hand(model) {
        return layered_states(objective, from).0;
    }
    let k0 = from.prizes.len();
    let mut pairs_by_layer = vec![0u64; k0 + 1];
    let mut seen = HashSet::new();
    let mut stack = vec![(from.b, from.prizes)];
    while let Some((b, prizes)) = stack.pop() {
        if !seen.insert((b.0, prizes.0)) {
            continue;
        }
        pairs_by_layer[prizes.len()] += 1;
        for upcard in prizes.iter() {
            for (base, _) in model.parts() {
                let p = base.rule(b, prizes, upcard).expect("a rule reads no db");
                let bid = b.iter().zip(p).find(|(_, q)| *q > 0.0).map(|(c, _)| c);
                if let Some(bid) = bid {
                    stack.push((b.without(bid), prizes.without(upcard)));
                }
            }
        }
    }
    let played: u32 = CardSet::full(from.n).sum() - from.prizes.sum();
    (0..=k0)
        .map(|k| {
            let hands_a = binomial(k0 as u32, k as u32);
            let diffs = match objective {
                Objective::Points => 1,
                Objective::Win => {
                    // at most the prizes played by then, on either side of the start's
                    let mut cards = from.prizes.to_vec();
                    cards.reverse();
                    let top: u32 = cards.iter().take(k0 - k).map(|&c| u32::from(c)).sum();
                    u64::from(2 * (played + top) + 1)
                }
            };
            pairs_by_layer[k] * hands_a * diffs
        })
        .sum()
}
