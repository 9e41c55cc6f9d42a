//! The coach of a real game (`gops coach`, the explorer's coach view): a person at the
//! table types each upcard and what the opponent bid; the coach advises the safe
//! exploiter's mix against a model of the opponent ([`crate::agent::safe`]) and one bid
//! drawn from it, and shows, as it goes, the opponent's exact loss on each decision
//! (where they leak, measured as the arena measures a bot), the gifts banked, and the
//! expected gain against the model. With `learn`, the model is the mixture of the rules
//! fitted to every decision of the opponent seen so far ([`crate::agent::fit`]), refitted
//! after each one. The opponent's decisions are kept as a games file's lines (the
//! session), which `gops fit` reads and the next game continues.

use gops_common::cards::CardSet;
use gops_db::read::{QueryError, Reader, Slices};
use rand::Rng;
use serde::Serialize;

use crate::agent::fit::{Observed, fit, parse_record, record_line};
use crate::agent::safe::{SafeDecision, safe_decision};
use crate::agent::{Base, Model, rules};
use crate::loss::decision_loss;
use crate::protocol::Seat;
use crate::table::{IllegalBid, Table};

/// The advice at one decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    pub decision: SafeDecision,
    /// One bid drawn from the mix.
    pub suggested: u8,
}

/// One round settled: what the opponent lost and what was banked.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settled {
    pub round: u8,
    pub upcard: u8,
    pub yours: u8,
    pub theirs: u8,
    /// The opponent's exact loss on this decision: their value of the revealed game
    /// less what their bid earns against the equilibrium.
    pub their_loss: f64,
    /// What the advised mix earned above the value against their bid (the budget's
    /// change).
    pub gift: f64,
    /// What is banked in this game after it.
    pub banked: f64,
}

/// A coach across games.
pub struct Coach {
    model: Model,
    /// With `learn`, the fitted model as `gops fit` names it (weights rounded).
    fitted_name: Option<String>,
    learn: bool,
    risk: f64,
    banked: f64,
    /// The advice given at the decision under way.
    advised: Option<Advice>,
    /// The opponent's decisions, as lines of a games file, and read.
    lines: Vec<String>,
    observed: Vec<Observed>,
    /// Their losses, by round, over every game of the session: (round, loss).
    losses: Vec<(u8, f64)>,
    game: u64,
}

impl Coach {
    /// A coach against `model` (with `learn`, the starting model, replaced by the fit as
    /// soon as there are decisions), risking `risk` a game, continuing a session whose
    /// lines are `session` (each a games file's line).
    pub fn new(model: Model, learn: bool, risk: f64, session: &[String]) -> Result<Coach, String> {
        let mut coach = Coach {
            model,
            fitted_name: None,
            learn,
            risk,
            banked: 0.0,
            advised: None,
            lines: Vec::new(),
            observed: Vec::new(),
            losses: Vec::new(),
            game: 0,
        };
        for (i, line) in session.iter().enumerate() {
            let seen = parse_record(line).map_err(|e| format!("session line {}: {e}", i + 1))?;
            if let Some(seen) = seen {
                coach.observed.push(seen);
            }
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line)
                && let Some(game) = value.get("game").and_then(|g| g.as_u64())
            {
                coach.game = coach.game.max(game + 1);
            }
            coach.lines.push(line.clone());
        }
        coach.refit();
        Ok(coach)
    }

    fn refit(&mut self) {
        if self.learn && !self.observed.is_empty() {
            let fitted = fit(&self.observed);
            self.model = fitted.mixture();
            self.fitted_name = Some(fitted.model);
        }
    }

    /// The model advised against (with `learn`, the fit's unrounded weights).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The model's name to show: with `learn`, the fit's as `gops fit` prints it.
    pub fn model_name(&self) -> String {
        self.fitted_name
            .clone()
            .unwrap_or_else(|| self.model.to_string())
    }

    /// The game under way's number in the session.
    pub fn game(&self) -> u64 {
        self.game
    }

    /// What is banked in the game under way.
    pub fn banked(&self) -> f64 {
        self.banked
    }

    /// The session's lines (the opponent's decisions).
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Starts the next game (the first needs no call).
    pub fn next_game(&mut self) {
        self.game += 1;
        self.banked = 0.0;
        self.advised = None;
    }

    /// The advice once the table's upcard is turned up: the player is A, the opponent B.
    pub fn advise<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        table: &Table,
        rng: &mut impl Rng,
    ) -> Result<&Advice, QueryError> {
        let request = table.request(self.game, Seat::A);
        let decision = safe_decision(reader, &self.model, &request, self.risk + self.banked)?;
        let suggested = table.draw(Seat::A, &decision.mix, rng);
        Ok(self.advised.insert(Advice {
            decision,
            suggested,
        }))
    }

    /// Plays the round (the player's bid and the opponent's), measures the opponent's
    /// loss, banks the advised mix's result against their bid, records their decision
    /// and (learning) refits the model. A bid not held is refused and changes nothing.
    ///
    /// Panics when no advice was given for this decision (a caller's bug).
    pub fn settle<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        table: &mut Table,
        yours: u8,
        theirs: u8,
    ) -> Result<Result<Settled, IllegalBid>, QueryError> {
        let state = *table.state();
        for (seat, card, hand) in [(Seat::A, yours, state.a), (Seat::B, theirs, state.b)] {
            if !hand.contains(card) {
                return Ok(Err(IllegalBid::NotInHand { seat, card, hand }));
            }
        }
        let upcard = table.upcard().expect("an upcard is turned up");
        let advice = self.advised.take().expect("advice was given");
        let revealed = reader.revealed(&state, upcard)?;
        let their_loss = decision_loss(Seat::B, &revealed, &rules::pure(state.b, theirs));
        let at = state.b.iter().position(|c| c == theirs).expect("held");
        let gift = advice.decision.against[at] - advice.decision.value;
        self.banked += gift;
        let request = table.request(self.game, Seat::B);
        self.lines.push(record_line(&request, theirs));
        self.observed.push(Observed {
            hand: state.b,
            prizes: state.prizes,
            upcard,
            bid: theirs,
        });
        self.losses.push((request.round, their_loss));
        self.refit();
        table.play(yours, theirs).expect("both bids checked");
        Ok(Ok(Settled {
            round: request.round,
            upcard,
            yours,
            theirs,
            their_loss,
            gift,
            banked: self.banked,
        }))
    }

    /// The opponent's habits over the session.
    pub fn habits(&self) -> Habits {
        let decisions = self.observed.len() as u64;
        let fitted = (!self.observed.is_empty()).then(|| fit(&self.observed));
        let mut by_round = std::collections::BTreeMap::new();
        for &(round, loss) in &self.losses {
            let e: &mut (f64, u64) = by_round.entry(round).or_default();
            e.0 += loss;
            e.1 += 1;
        }
        let measured = self.losses.len() as f64;
        Habits {
            decisions,
            model: fitted.as_ref().map(|f| f.model.clone()),
            weights: fitted.map(|f| {
                Base::RULES
                    .iter()
                    .map(|b| (b.name(), f.weights[b.name()]))
                    .collect()
            }),
            mean_loss: self.losses.iter().map(|l| l.1).sum::<f64>() / measured.max(1.0),
            loss_by_round: by_round
                .into_iter()
                .map(|(round, (sum, n))| (round, sum / n as f64))
                .collect(),
        }
    }
}

/// What the coach saw of the opponent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Habits {
    /// Their decisions seen (the session's, earlier games included).
    pub decisions: u64,
    /// The mixture of the rules that explains them best.
    pub model: Option<String>,
    pub weights: Option<Vec<(&'static str, f64)>>,
    /// Their mean exact loss a decision, over this run's decisions.
    pub mean_loss: f64,
    /// Their mean loss by round.
    pub loss_by_round: Vec<(u8, f64)>,
}

/// The cards of `set`, or "none".
pub fn cards_text(set: CardSet) -> String {
    if set.is_empty() {
        "none".into()
    } else {
        set.to_string()
    }
}
