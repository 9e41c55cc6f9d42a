//! The players' side of Python: `gops.respond` (the exact best response to a model),
//! `gops.fit` (an opponent model from recorded decisions) and `gops.Agent` (any agent
//! of the vocabulary, `exploit:` and `respond:` included, as a callable from a
//! request to its distribution: what `gops.arena.evaluate` and a `gops.env` loop take).
//! The work is `gops_arena`'s; results cross as JSON, read by the pure-Python wrappers.

use std::sync::{Arc, Mutex};

use gops_arena::agent::fit::{fit as fit_model, parse_record};
use gops_arena::agent::{Agent as ArenaAgent, Model, Player};
use gops_arena::measure::respond::{RESPOND_STATE_LIMIT, reachable_states, respond as respond_to};
use gops_arena::protocol::Request;
use gops_common::sync::lock;
use gops_db::read::{CachedReader, SharedReader};
use pyo3::prelude::*;

use crate::cards::game_state;
use crate::db::Db;
use crate::errors::{query_error, value_error};

/// Slices kept while a best response walks.
const CACHE_BYTES: usize = 1 << 30;

/// The exact best response to `opponent` (a model's text) from a state, as the JSON of
/// `gops respond --json`.
#[pyfunction]
#[pyo3(signature = (db, opponent, a, b, prizes, diff = 0))]
pub fn respond(
    py: Python<'_>,
    db: &Db,
    opponent: &str,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    prizes: &Bound<'_, PyAny>,
    diff: i64,
) -> PyResult<String> {
    let model = Model::parse(opponent).map_err(|e| value_error(e.to_string()))?;
    let shared = db.reader()?;
    let book = shared.book();
    let state = game_state(book.n(), a, b, prizes, diff)?;
    let objective = book.objective();
    let estimate = reachable_states(&model, objective, &state);
    if estimate > RESPOND_STATE_LIMIT {
        return Err(value_error(format!(
            "a best response to {model} from this state may walk up to {estimate} concrete states, more than the {RESPOND_STATE_LIMIT} held in memory: start from a later state, or take a model of deterministic rules"
        )));
    }
    let response = py
        .detach(|| {
            let mut reader = CachedReader::cached(book, CACHE_BYTES);
            respond_to(&mut reader, &model, &state, estimate, &mut |_| {})
        })
        .map_err(query_error)?;
    Ok(serde_json::to_string(&response).expect("a response serialises"))
}

/// The mixture of the rules fitted to recorded decisions (one JSON line each, as a
/// games file's lines), as the JSON of `gops fit --json`.
#[pyfunction]
pub fn fit(lines: Vec<String>) -> PyResult<String> {
    let mut decisions = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match parse_record(line) {
            Ok(Some(d)) => decisions.push(d),
            Ok(None) => {}
            Err(e) => return Err(value_error(format!("record {}: {e}", i + 1))),
        }
    }
    if decisions.is_empty() {
        return Err(value_error("the records hold no decision to fit"));
    }
    Ok(serde_json::to_string(&fit_model(&decisions)).expect("a fit serialises"))
}

/// An agent of the vocabulary, asked one decision at a time: called with a request (its
/// JSON), it answers its distribution over its cards as JSON (`{"card": p}`). A safe
/// exploiter carries its budget from one round of a game to the next.
#[pyclass(module = "gops")]
pub struct Agent {
    reader: Arc<SharedReader>,
    player: Mutex<Player>,
    name: String,
}

#[pymethods]
impl Agent {
    #[new]
    fn new(db: &Db, name: &str) -> PyResult<Agent> {
        let agent = ArenaAgent::parse(name).map_err(|e| value_error(e.to_string()))?;
        let reader = db.reader()?;
        agent
            .check_fits(reader.book().n(), reader.book().objective())
            .map_err(|e| value_error(e.to_string()))?;
        Ok(Agent {
            reader,
            name: agent.name(),
            player: Mutex::new(Player::new(agent)),
        })
    }

    /// The agent's name, aliases resolved.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// Its distribution at `request` (a bot-protocol request's JSON), as JSON.
    fn decide(&self, py: Python<'_>, request: &str) -> PyResult<String> {
        let request: Request = serde_json::from_str(request)
            .map_err(|e| value_error(format!("not a bot-protocol request: {e}")))?;
        let p = py
            .detach(|| lock(&self.player).probabilities(&mut self.reader.reader(), &request))
            .map_err(query_error)?;
        let distribution: serde_json::Map<String, serde_json::Value> = request
            .hand
            .iter()
            .zip(p)
            .map(|(card, q)| (card.to_string(), q.into()))
            .collect();
        Ok(serde_json::Value::Object(distribution).to_string())
    }

    fn __repr__(&self) -> String {
        format!("gops.Agent({:?})", self.name)
    }
}
