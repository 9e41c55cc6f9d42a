//! The engine of `gops.arena` (the pure-Python part, `python/python/gops/arena.py`,
//! adapts callables and OpenSpiel policies and bots): `arena_run` plays a run of
//! `gops_arena` whose bot is a Python function from a request's JSON to a reply's JSON,
//! and `ArenaGame` steps one game for the Gymnasium environment (`gops.env`). The GIL is
//! released while the db answers (a book may solve on demand).

use std::sync::{Arc, Mutex};

use gops_arena::bot::{Bot, NoReply};
use gops_arena::game::GameInPlay;
use gops_arena::protocol::{BotFault, Reply, Request, Seat};
use gops_arena::report::decision_json;
use gops_arena::run::{ArenaError, ArenaOptions, run_arena};
use gops_db::read::SharedReader;
use pyo3::prelude::*;

use gops_common::sync::lock;

use crate::db::Db;
use crate::errors::{query_error, value_error};

/// Slices the run's reader keeps.
const CACHE_BYTES: usize = 1 << 30;

/// A Python function as a bot; the first exception it raised is kept to be raised
/// again once the run ends (its game is forfeited meanwhile).
struct PythonBot {
    decide: Py<PyAny>,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl Bot for PythonBot {
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply> {
        Ok(self.ask(request)?)
    }
}

impl PythonBot {
    /// The agent called on one request's JSON; its answer parsed.
    fn ask(&mut self, request: &Request) -> Result<Reply, BotFault> {
        let line = serde_json::to_string(request).expect("a request serialises");
        Python::attach(|py| match self.decide.call1(py, (line,)) {
            Ok(answer) => match answer.extract::<String>(py) {
                Ok(text) => Reply::parse(&text),
                Err(_) => Err(BotFault::Malformed(
                    "the agent's answer is not a str".into(),
                )),
            },
            Err(e) => {
                let message = e.to_string();
                lock(&self.raised).get_or_insert(e);
                Err(BotFault::Crashed(format!("the agent raised {message}")))
            }
        })
    }
}

/// Plays `games` games of `decide` against `db`'s equilibrium (seed `seed`, the seat
/// alternating) and returns the summary's JSON and each decision's JSON record.
/// `progress(games_done)` hears each finished game.
#[pyfunction]
#[pyo3(signature = (db, decide, games, seed, progress = None))]
pub fn arena_run(
    py: Python<'_>,
    db: &Db,
    decide: Py<PyAny>,
    games: u64,
    seed: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, Vec<String>)> {
    if games == 0 {
        return Err(value_error("games must be at least 1"));
    }
    let shared = db.reader()?;
    let raised = Arc::new(Mutex::new(None));
    let options = ArenaOptions {
        games,
        seed,
        threads: 1,
        cache_bytes: CACHE_BYTES,
    };
    let make_bot = || -> Result<Box<dyn Bot>, BotFault> {
        Ok(Box::new(PythonBot {
            decide: Python::attach(|py| decide.clone_ref(py)),
            raised: Arc::clone(&raised),
        }))
    };
    let mut records = Vec::new();
    let mut progress_error = None;
    let mut done = 0u64;
    let summary = py.detach(|| {
        run_arena(shared.book(), &options, &make_bot, &mut |game| {
            records.extend(game.decisions.iter().map(|d| decision_json(d).to_string()));
            done += 1;
            if let Some(callback) = &progress
                && progress_error.is_none()
            {
                Python::attach(|py| {
                    if let Err(e) = callback.call1(py, (done,)).and_then(|_| py.check_signals()) {
                        progress_error = Some(e);
                    }
                });
            }
        })
    });
    if let Some(e) = lock(&raised).take() {
        return Err(e);
    }
    if let Some(e) = progress_error {
        return Err(e);
    }
    let summary = summary.map_err(|e| match e {
        ArenaError::Db { error, .. } => query_error(error),
        other => value_error(other.to_string()),
    })?;
    Ok((
        serde_json::to_string(&summary).expect("a summary serialises"),
        records,
    ))
}

/// One game against the equilibrium, a decision at a time (what `gops.env` steps).
#[pyclass(module = "gops")]
pub struct ArenaGame {
    reader: Arc<SharedReader>,
    playing: GameInPlay,
}

#[pymethods]
impl ArenaGame {
    /// Game `game` of a run seeded `seed` on `db`, the agent in `seat` ("A" or "B").
    #[new]
    #[pyo3(signature = (db, seed, game = 0, seat = "A"))]
    fn new(db: &Db, seed: u64, game: u64, seat: &str) -> PyResult<ArenaGame> {
        let seat = match seat {
            "A" => Seat::A,
            "B" => Seat::B,
            other => {
                return Err(value_error(format!(
                    "seat must be \"A\" or \"B\", not {other:?}"
                )));
            }
        };
        let reader = db.reader()?;
        let book = reader.book();
        let playing = GameInPlay::new(book.n(), book.objective(), seed, game, seat);
        Ok(ArenaGame { reader, playing })
    }

    /// The JSON of the decision asked now (the next prize is turned up), or None once
    /// the game is over.
    fn request(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        let (reader, playing) = (&self.reader, &mut self.playing);
        let asked = py.detach(|| {
            playing
                .next_request(&mut reader.reader())
                .map(|r| r.map(|r| serde_json::to_string(r).expect("a request serialises")))
        });
        asked.map_err(query_error)
    }

    /// Plays `reply` (a reply's JSON) to the pending request; the decision's JSON record,
    /// with its loss (a malformed or illegal reply forfeits the game, as in the arena).
    fn answer(&mut self, reply: &str) -> PyResult<String> {
        self.request_pending()?;
        let decision = self.playing.answer(Reply::parse(reply));
        Ok(decision_json(decision).to_string())
    }

    /// The agent's result once the game is over (`win`: 1, 0 or -1; `points`: its score
    /// minus the opponent's), else None.
    fn result(&self) -> Option<f64> {
        self.playing.result()
    }
}

impl ArenaGame {
    fn request_pending(&self) -> PyResult<()> {
        if self.playing.result().is_some() {
            return Err(value_error("the game is over"));
        }
        if !self.playing.is_pending() {
            return Err(value_error("no decision is asked: call request() first"));
        }
        Ok(())
    }
}
