//! Fitting an opponent from their recorded decisions (`gops fit`, the model `fit:FILE`,
//! the coach's `--learn`): the weights of a mixture of the rules ([`Base::RULES`]) that
//! make the recorded bids most likely, by EM (each step raises the likelihood; it stops
//! when no weight moves by 1e-12, or after 10,000 steps).
//!
//! A record is one JSON line: a bot-protocol request as the recorded player saw it, with
//! its `bid` added (what `gops simulate --record` and the coach write), or a decision
//! record of `gops arena --json` (the bot's bids; forfeits are skipped, the summary line
//! too). Each is checked: the bid in the hand, the upcard among the prizes, the hands and
//! prizes of one size, and (for a request) the history consistent with them.

use std::collections::BTreeMap;
use std::path::Path;

use gops_common::cards::CardSet;
use serde::{Deserialize, Serialize};

use super::{AgentError, Base, Model};
use crate::protocol::Request;

/// Steps of EM at most.
const MAX_STEPS: usize = 10_000;
/// EM stops once no weight moves by more than this.
const CONVERGED: f64 = 1e-12;

/// One recorded decision: what the rules need, and the bid made.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub hand: CardSet,
    pub prizes: CardSet,
    pub upcard: u8,
    pub bid: u8,
}

impl Observed {
    /// The probability each rule gave the bid, in [`Base::RULES`]' order.
    fn likelihoods(&self) -> [f64; 4] {
        let at = self.hand.iter().position(|c| c == self.bid).unwrap_or(0);
        Base::RULES.map(|rule| {
            rule.rule(self.hand, self.prizes, self.upcard)
                .expect("a rule reads no db")[at]
        })
    }
}

/// A request with the bid made.
#[derive(Deserialize)]
struct RecordedRequest {
    #[serde(flatten)]
    request: Request,
    bid: u8,
}

/// The line that records `bid` made at `request` (a games file's line).
pub fn record_line(request: &Request, bid: u8) -> String {
    #[derive(Serialize)]
    struct Line<'r> {
        #[serde(flatten)]
        request: &'r Request,
        bid: u8,
    }
    serde_json::to_string(&Line { request, bid }).expect("a request serialises")
}

/// A decision record of `gops arena --json`.
#[derive(Deserialize)]
struct ArenaRecord {
    hand: Vec<u8>,
    a: Vec<u8>,
    b: Vec<u8>,
    prizes: Vec<u8>,
    upcard: u8,
    bid: Option<u8>,
}

/// The decision of one line (`None` for a line that holds none: blank, an arena
/// summary, a forfeit), or what is wrong with it.
pub fn parse_record(line: &str) -> Result<Option<Observed>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("kind").and_then(|k| k.as_str()) {
        Some("decision") => {
            let record: ArenaRecord = serde_json::from_value(value)
                .map_err(|e| format!("not an arena decision record: {e}"))?;
            let Some(bid) = record.bid else {
                return Ok(None);
            };
            let hand = cards(&record.hand, "hand")?;
            let (a, b) = (cards(&record.a, "a")?, cards(&record.b, "b")?);
            if hand != a && hand != b {
                return Err("the hand is neither a nor b".into());
            }
            observed(
                hand,
                cards(&record.prizes, "prizes")?,
                a.len(),
                b.len(),
                record.upcard,
                bid,
            )
            .map(Some)
        }
        Some(_) => Ok(None),
        None => {
            let recorded: RecordedRequest = serde_json::from_value(value)
                .map_err(|e| format!("not a request with its bid: {e}"))?;
            let r = &recorded.request;
            let hand = cards(&r.hand, "hand")?;
            let opponent = cards(&r.opponent_hand, "opponent_hand")?;
            let prizes = cards(&r.prizes, "prizes")?;
            let seen = observed(
                hand,
                prizes,
                hand.len(),
                opponent.len(),
                r.upcard,
                recorded.bid,
            )?;
            check_history(r, hand, opponent, prizes)?;
            Ok(Some(seen))
        }
    }
}

fn cards(list: &[u8], name: &str) -> Result<CardSet, String> {
    let set = CardSet::from_cards(list);
    if list.iter().any(|&c| c == 0 || c > 16) || set.len() != list.len() {
        return Err(format!("{name} {list:?} is not a set of cards 1 to 16"));
    }
    Ok(set)
}

fn observed(
    hand: CardSet,
    prizes: CardSet,
    own: usize,
    other: usize,
    upcard: u8,
    bid: u8,
) -> Result<Observed, String> {
    if own != prizes.len() || other != prizes.len() || prizes.is_empty() {
        return Err(format!(
            "the hands ({own} and {other} cards) and the prizes ({}) are not of one size",
            prizes.len()
        ));
    }
    if !prizes.contains(upcard) {
        return Err(format!(
            "the upcard {upcard} is not among the prizes {prizes}"
        ));
    }
    if !hand.contains(bid) {
        return Err(format!("an illegal bid: {bid} is not in the hand {hand}"));
    }
    Ok(Observed {
        hand,
        prizes,
        upcard,
        bid,
    })
}

/// A request's history played out from the start must leave its hands and prizes.
fn check_history(
    r: &Request,
    hand: CardSet,
    opponent: CardSet,
    prizes: CardSet,
) -> Result<(), String> {
    let full = CardSet::full(r.n);
    let (mut own, mut other, mut left) = (full, full, full);
    for (i, round) in r.history.iter().enumerate() {
        for (set, card, whose) in [
            (&mut own, round.bid, "bid"),
            (&mut other, round.opponent_bid, "opponent_bid"),
            (&mut left, round.prize, "prize"),
        ] {
            if !set.contains(card) {
                return Err(format!(
                    "round {} of the history: {whose} {card} was already played or is not a card of the {}-card game",
                    i + 1,
                    r.n
                ));
            }
            *set = set.without(card);
        }
    }
    if (own, other, left) != (hand, opponent, prizes) {
        return Err(format!(
            "the hands and prizes ({hand} / {opponent} / {prizes}) do not match the history (which leaves {own} / {other} / {left})"
        ));
    }
    Ok(())
}

/// Every decision of a games file, or the first bad line (numbered from 1).
pub fn read_records(path: &Path) -> Result<Vec<Observed>, AgentError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        AgentError(format!(
            "cannot read the games file {}: {e}",
            path.display()
        ))
    })?;
    let mut decisions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_record(line) {
            Ok(Some(d)) => decisions.push(d),
            Ok(None) => {}
            Err(e) => {
                return Err(AgentError(format!(
                    "{} line {}: {e}",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    if decisions.is_empty() {
        return Err(AgentError(format!(
            "{} holds no decision to fit",
            path.display()
        )));
    }
    Ok(decisions)
}

/// A fitted model and how well it explains the decisions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    /// The mixture, its weights rounded to 4 decimals (summing to 1): a model's text.
    pub model: String,
    /// Each rule's weight, unrounded.
    pub weights: BTreeMap<&'static str, f64>,
    /// The log likelihood of the recorded bids under the fitted mixture.
    pub log_likelihood: f64,
    /// The log likelihood per decision.
    pub mean_log_likelihood: f64,
    pub decisions: u64,
    /// Steps of EM taken.
    pub steps: u64,
}

impl Fit {
    /// The fitted mixture, unrounded.
    pub fn mixture(&self) -> Model {
        let weights: Vec<(Base, f64)> = Base::RULES
            .iter()
            .map(|&b| (b, self.weights[b.name()]))
            .collect();
        Model::mixture(&weights).expect("EM's weights are a distribution")
    }
}

/// The maximum-likelihood weights of the rules for `decisions`.
pub fn fit(decisions: &[Observed]) -> Fit {
    // decisions with the same likelihoods count alike: few kinds (a uniform part 1/k and
    // three 0-or-1 rules), so a step of EM costs nothing whatever the number of decisions
    let mut kinds: BTreeMap<[u64; 4], (u64, [f64; 4])> = BTreeMap::new();
    for l in decisions.iter().map(Observed::likelihoods) {
        kinds.entry(l.map(f64::to_bits)).or_insert((0, l)).0 += 1;
    }
    let likelihoods: Vec<(f64, [f64; 4])> =
        kinds.into_values().map(|(c, l)| (c as f64, l)).collect();
    let n = decisions.len() as f64;
    let mut w = [0.25; 4];
    let mut steps = 0;
    while steps < MAX_STEPS {
        steps += 1;
        let mut next = [0.0; 4];
        for (count, l) in &likelihoods {
            let total: f64 = (0..4).map(|r| w[r] * l[r]).sum();
            for r in 0..4 {
                next[r] += count * w[r] * l[r] / total;
            }
        }
        next.iter_mut().for_each(|x| *x /= n);
        let moved = (0..4).map(|r| (next[r] - w[r]).abs()).fold(0.0, f64::max);
        w = next;
        if moved <= CONVERGED {
            break;
        }
    }
    let log_likelihood: f64 = likelihoods
        .iter()
        .map(|(count, l)| count * (0..4).map(|r| w[r] * l[r]).sum::<f64>().ln())
        .sum();
    Fit {
        model: rounded(&w),
        weights: Base::RULES.iter().map(|b| b.name()).zip(w).collect(),
        log_likelihood,
        mean_log_likelihood: log_likelihood / decisions.len() as f64,
        decisions: decisions.len() as u64,
        steps: steps as u64,
    }
}

/// The mixture with weights rounded to 4 decimals, the rounding's residue on the largest.
fn rounded(w: &[f64; 4]) -> String {
    let mut tenths: Vec<i64> = w.iter().map(|x| (x * 10_000.0).round() as i64).collect();
    let largest = (0..4).fold(0, |m, r| if w[r] > w[m] { r } else { m });
    tenths[largest] += 10_000 - tenths.iter().sum::<i64>();
    let parts: Vec<String> = Base::RULES
        .iter()
        .zip(&tenths)
        .filter(|(_, t)| **t > 0)
        .map(|(b, t)| format!("{}*{}", *t as f64 / 10_000.0, b.name()))
        .collect();
    parts.join("+")
}

/// The model `fit:FILE`: the mixture fitted to FILE's decisions.
pub fn fit_file(path: &Path) -> Result<Model, AgentError> {
    Ok(fit(&read_records(path)?).mixture())
}
