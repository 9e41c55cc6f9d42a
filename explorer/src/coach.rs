//! The explorer's coach (`GET /api/coach`, the page `/coach`): the coach of a real game
//! as a view whose address holds the game. Nothing is kept on the server: the rounds
//! played (`rounds=P.Y.T,...`: prize, your bid, their bid) are replayed through
//! `gops_arena::coach::Coach` at each call, the budget banked again round by round, and
//! the advice given for the upcard now turned up (`upcard=U`). With `learn=1` the model is
//! refitted to the opponent's bids in the rounds played, after each, as `gops coach
//! --learn` does across a session.

use gops_arena::agent::{Base, Model};
use gops_arena::coach::Coach;
use gops_arena::table::Table;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};

use crate::api::{ApiError, Explorer};
use crate::params::{BadRequest, Query};

/// The keys `/api/coach` takes.
pub const COACH_KEYS: [&str; 6] = ["opponent", "risk", "rounds", "upcard", "seed", "learn"];

/// `rounds=P.Y.T,P.Y.T`: each round's prize, your bid and theirs.
fn parse_rounds(text: &str) -> Result<Vec<(u8, u8, u8)>, BadRequest> {
    text.split(',')
        .filter(|r| !r.is_empty())
        .map(|round| {
            let cards: Vec<Option<u8>> = round.split('.').map(|c| c.parse().ok()).collect();
            match cards[..] {
                [Some(p), Some(y), Some(t)] => Ok((p, y, t)),
                _ => Err(BadRequest::new(format!(
                    "rounds: '{round}' is not PRIZE.YOURS.THEIRS (for example 7.8.7)"
                ))),
            }
        })
        .collect()
}

impl Explorer {
    /// `GET /api/coach?opponent=MODEL&risk=R&rounds=...&upcard=U[&seed=S][&learn=1]`.
    pub fn coach(&self, query: &Query) -> Result<Value, ApiError> {
        let model = match query.get("opponent") {
            Some(text) => {
                Model::parse(text).map_err(|e| BadRequest::new(format!("opponent: {e}")))?
            }
            None => Model::of(Base::Uniform),
        };
        let risk = match query.get("risk") {
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .ok_or_else(|| {
                    BadRequest::new(format!("risk: '{text}' is not a number of at least 0"))
                })?,
            None => 0.0,
        };
        let learn = match query.get("learn") {
            None | Some("0") | Some("false") => false,
            Some("1") | Some("true") => true,
            Some(text) => {
                return Err(BadRequest::new(format!("learn: '{text}' is not 1 or 0")).into());
            }
        };
        let rounds = parse_rounds(query.get("rounds").unwrap_or(""))?;
        let seed = match query.int("seed")? {
            Some(s) => u64::try_from(s).map_err(|_| BadRequest::new("seed: negative"))?,
            None => 0,
        };
        let book = self.reader.book();
        let mut reader = self.reader.reader();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut coach = Coach::new(model, learn, risk, &[]).map_err(BadRequest::new)?;
        let mut table = Table::new(book.n(), book.objective());
        let mut played = Vec::new();
        for (i, &(prize, yours, theirs)) in rounds.iter().enumerate() {
            let at = |e: String| BadRequest::new(format!("rounds: round {}: {e}", i + 1));
            if table.is_over() {
                return Err(at("the game is over".into()).into());
            }
            table.turn_up_card(prize).map_err(at)?;
            coach.advise(&mut reader, &table, &mut rng)?;
            let settled = coach
                .settle(&mut reader, &mut table, yours, theirs)?
                .map_err(|e| at(e.to_string()))?;
            played.push(settled);
        }
        let advice = match query.int("upcard")? {
            Some(upcard) => {
                let upcard = u8::try_from(upcard)
                    .ok()
                    .filter(|u| table.state().prizes.contains(*u))
                    .ok_or_else(|| {
                        BadRequest::new(format!(
                            "upcard: {upcard} is not one of the prizes left ({})",
                            table.state().prizes
                        ))
                    })?;
                table.turn_up_card(upcard).map_err(BadRequest::new)?;
                let a = coach.advise(&mut reader, &table, &mut rng)?;
                let d = &a.decision;
                let mix: serde_json::Map<String, Value> = table
                    .state()
                    .a
                    .iter()
                    .zip(&d.mix)
                    .map(|(c, p)| (c.to_string(), json!(p)))
                    .collect();
                json!({
                    "upcard": upcard,
                    "mix": mix,
                    "suggested": a.suggested,
                    "value": d.value,
                    "expected_gain": d.expected_gain(),
                    "budget": d.budget,
                })
            }
            None => Value::Null,
        };
        let state = table.state();
        let (you, them) = table.taken();
        Ok(json!({
            "n": book.n(),
            "objective": book.objective().name(),
            "opponent": coach.model_name(),
            "risk": risk,
            "learn": learn,
            "rounds": played,
            "prizes_left": state.prizes.to_vec(),
            "your_cards": state.a.to_vec(),
            "their_cards": state.b.to_vec(),
            "you": you,
            "them": them,
            "banked": coach.banked(),
            "over": table.is_over(),
            "advice": advice,
            "habits": coach.habits(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_read_or_refused() {
        assert_eq!(
            parse_rounds("7.8.7,3.1.2").unwrap(),
            vec![(7, 8, 7), (3, 1, 2)]
        );
        assert_eq!(parse_rounds("").unwrap(), vec![]);
        for bad in ["7.8", "7.8.x", "7.8.7.1", "a"] {
            assert!(parse_rounds(bad).is_err(), "{bad}");
        }
    }
}
