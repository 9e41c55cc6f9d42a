//! `gops.Db`: a solved game opened for reading. A state's value, both players' optimal
//! strategies once a prize is turned up (NumPy arrays beside the cards they belong to),
//! the layers' records, a layer as a pyarrow Table with the Parquet export's schema, and
//! the export's files. Answers are those of `gops value`, `gops strategy` and
//! `gops export`, bit for bit.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow::pyarrow::{IntoPyArrow, Table};
use gops_db::book::on_demand::{LimitNames, OnDemandLimits};
use gops_db::book::{Book, ReadOptions};
use gops_db::export::arrow::BatchCollector;
use gops_db::export::files::{FileFormat, export_file};
use gops_db::export::{ExportOptions, export};
use gops_db::read::SharedReader;
use gops_db::store::LayerRecord;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;

use gops_common::sync::lock;

use crate::cards::game_state;
use crate::errors::{
    DbError, GopsError, export_error, file_export_error, query_error, store_error, value_error,
};

/// Bytes of slices a `Db` keeps between calls.
const CACHE_BYTES: usize = 256 << 20;

/// A solved (or partly solved) game, opened for reading with `gops.open(path)`.
///
/// Reads a db's sealed layers with no lock, beside any other reader or a running solve;
/// a db of an earlier build (not sealed) is read through its lock, held until `close()`
/// (or the end of a `with` block, or garbage collection).
#[pyclass(module = "gops", frozen)]
pub struct Db {
    path: PathBuf,
    n: u8,
    objective: &'static str,
    reader: Mutex<Option<Arc<SharedReader>>>,
}

impl Db {
    pub fn from_book(book: Book) -> Db {
        Db {
            path: book.store().path().to_path_buf(),
            n: book.n(),
            objective: book.objective().name(),
            reader: Mutex::new(Some(Arc::new(SharedReader::new(book, CACHE_BYTES)))),
        }
    }

    /// `layer` (cards left in each hand) as a layer of this game, or the ValueError that
    /// says it is outside.
    fn layer_of(&self, layer: i64) -> PyResult<u8> {
        u8::try_from(layer)
            .ok()
            .filter(|k| (1..=self.n).contains(k))
            .ok_or_else(|| {
                value_error(format!(
                    "layer {layer} is outside this {}-card game's 1..{}",
                    self.n, self.n
                ))
            })
    }

    /// The open reader, or the error of a closed db.
    pub fn reader(&self) -> PyResult<Arc<SharedReader>> {
        lock(&self.reader)
            .clone()
            .ok_or_else(|| DbError::new_err(format!("db {} is closed", self.path.display())))
    }
}

/// One complete layer: `k` cards left in each hand.
#[pyclass(module = "gops", frozen, get_all)]
pub struct Layer {
    /// Cards left in each hand.
    pub k: u8,
    /// Prize sets of the layer.
    pub slices: usize,
    /// Canonical states, both orientations.
    pub states: u64,
    /// Values stored.
    pub stored_values: u64,
    /// The largest certificate gap of its matrix games.
    pub max_gap: f64,
    /// The layer's checksum (equal checksums: bit-identical values).
    pub checksum: String,
    /// The matrix games solved for the layer, every run of the solve; `None` for a
    /// layer an older build completed.
    pub matrix_games: Option<u64>,
}

#[pymethods]
impl Layer {
    fn __repr__(&self) -> String {
        format!(
            "Layer(k={}, slices={}, states={}, max_gap={:?}, checksum='{}')",
            self.k, self.slices, self.states, self.max_gap, self.checksum
        )
    }
}

impl From<LayerRecord> for Layer {
    fn from(r: LayerRecord) -> Layer {
        Layer {
            k: r.k,
            slices: r.slices,
            states: r.states,
            stored_values: r.stored_values,
            max_gap: r.max_gap,
            checksum: r.checksum,
            matrix_games: r.matrix_games,
        }
    }
}

/// The game of a state once a prize is turned up: its value for A, both players'
/// optimal mixed strategies (`strategy_a[i]` is the probability of bidding
/// `cards_a[i]`) and the certificate's gap.
#[pyclass(module = "gops", frozen, get_all)]
pub struct Strategy {
    pub upcard: u8,
    pub value: f64,
    pub cards_a: Py<PyArray1<u8>>,
    pub strategy_a: Py<PyArray1<f64>>,
    pub cards_b: Py<PyArray1<u8>>,
    pub strategy_b: Py<PyArray1<f64>>,
    /// How far from exact the value may be (the certificate's duality gap).
    pub gap: f64,
}

#[pymethods]
impl Strategy {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let pairs = |cards: &Py<PyArray1<u8>>, p: &Py<PyArray1<f64>>| -> PyResult<String> {
            let cards = cards.bind(py).to_vec()?;
            let p = p.bind(py).to_vec()?;
            Ok(cards
                .iter()
                .zip(&p)
                .filter(|(_, p)| **p > 0.0)
                .map(|(c, p)| format!("{c}: {p:.4}"))
                .collect::<Vec<_>>()
                .join(", "))
        };
        Ok(format!(
            "Strategy(upcard={}, value={:?}, a={{{}}}, b={{{}}}, gap={:?})",
            self.upcard,
            self.value,
            pairs(&self.cards_a, &self.strategy_a)?,
            pairs(&self.cards_b, &self.strategy_b)?,
            self.gap
        ))
    }
}

#[pymethods]
impl Db {
    /// Cards per suit.
    #[getter]
    fn n(&self) -> u8 {
        self.n
    }

    /// `"points"` or `"win"`.
    #[getter]
    fn objective(&self) -> &'static str {
        self.objective
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The complete layers, `k` = 1 up: a solved game has all `n` (a book: every
    /// layer's record from the full db, those below it solved on demand).
    #[getter]
    fn layers(&self) -> PyResult<Vec<Layer>> {
        let reader = self.reader()?;
        if let Some(book) = reader.book().store().book() {
            return Ok(book.layers.iter().cloned().map(Layer::from).collect());
        }
        let mut layers = Vec::new();
        for k in 1..=self.n {
            match reader.book().store().layer(k).map_err(store_error)? {
                Some(record) => layers.push(Layer::from(record)),
                None => break,
            }
        }
        Ok(layers)
    }

    /// Whether every layer is solved.
    #[getter]
    fn complete(&self) -> PyResult<bool> {
        Ok(self.layers()?.len() == usize::from(self.n))
    }

    /// The value for A of the state (A's hand, B's hand, the prizes left, A's score
    /// minus B's so far), before the next prize is turned up: the expected final score
    /// difference for `points`, P(win) - P(loss) for `win`.
    #[pyo3(signature = (a, b, prizes, diff = 0))]
    fn value(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        prizes: &Bound<'_, PyAny>,
        diff: i64,
    ) -> PyResult<f64> {
        let state = game_state(self.n, a, b, prizes, diff)?;
        let reader = self.reader()?;
        py.detach(|| reader.reader().value(&state))
            .map_err(query_error)
    }

    /// The game of the state once `upcard` (one of the prizes) is turned up: both
    /// players' optimal strategies, the value and the certificate's gap.
    #[pyo3(signature = (a, b, prizes, upcard, diff = 0))]
    fn strategy(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        prizes: &Bound<'_, PyAny>,
        upcard: i64,
        diff: i64,
    ) -> PyResult<Strategy> {
        let state = game_state(self.n, a, b, prizes, diff)?;
        let upcard = gops_db::read::parse_upcard(&state, upcard).map_err(value_error)?;
        let reader = self.reader()?;
        state
            .check_reachable(reader.book().objective())
            .map_err(value_error)?;
        let game = py
            .detach(|| reader.reader().revealed(&state, upcard))
            .map_err(query_error)?;
        Ok(Strategy {
            upcard,
            value: game.value,
            cards_a: PyArray1::from_vec(py, state.a.to_vec()).unbind(),
            strategy_a: PyArray1::from_vec(py, game.strategy_a).unbind(),
            cards_b: PyArray1::from_vec(py, state.b.to_vec()).unbind(),
            strategy_b: PyArray1::from_vec(py, game.strategy_b).unbind(),
            gap: game.gap,
        })
    }

    /// Layer `layer` (cards left in each hand) as a pyarrow Table with the schema of
    /// `gops export --format parquet`: per state a row before the reveal and a row per
    /// upcard with both strategies. `concrete`: every concrete (A, B) a canonical state
    /// stands for, both orientations; `all_diffs` (win): every score difference that can
    /// occur, not only those whose value is strictly between -1 and 1.
    #[pyo3(signature = (layer, *, concrete = false, all_diffs = false))]
    fn to_arrow<'py>(
        &self,
        py: Python<'py>,
        layer: i64,
        concrete: bool,
        all_diffs: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = self.layer_of(layer)?;
        let reader = self.reader()?;
        let options = ExportOptions {
            layers: k..=k,
            concrete,
            all_diffs,
        };
        let (schema, batches) = py.detach(|| {
            let store = reader.book().store();
            let mut sink = BatchCollector::new(store.n(), store.objective());
            export(store, &options, &mut sink, &mut |_| true).map_err(export_error)?;
            sink.finish().map_err(GopsError::new_err)
        })?;
        Table::try_new(batches, schema)
            .map_err(|e| GopsError::new_err(e.to_string()))?
            .into_pyarrow(py)
    }

    /// Writes layers `layers` (a `(first, last)` pair of cards left, inclusive; all by
    /// default) to the file `path` in `format` (`"csv"`, `"jsonl"`, `"parquet"` or
    /// `"sqlite"`): the file of `gops export`, byte for byte the same rows. The file is
    /// written under a temporary name and renamed when complete; an existing `path` is
    /// refused unless `overwrite`. Returns the number of rows written.
    #[pyo3(signature = (path, format, *, layers = None, concrete = false, all_diffs = false, overwrite = false))]
    #[expect(clippy::too_many_arguments, reason = "Python's keyword arguments")]
    fn export(
        &self,
        py: Python<'_>,
        path: PathBuf,
        format: &str,
        layers: Option<(i64, i64)>,
        concrete: bool,
        all_diffs: bool,
        overwrite: bool,
    ) -> PyResult<u64> {
        let format = FileFormat::named(format).ok_or_else(|| {
            let names: Vec<&str> = FileFormat::ALL.iter().map(|f| f.name()).collect();
            value_error(format!(
                "unknown export format {format:?}; one of {}",
                names.join(", ")
            ))
        })?;
        if path.exists() && !overwrite {
            return Err(pyo3::exceptions::PyFileExistsError::new_err(format!(
                "{} exists; choose another path or pass overwrite=True",
                path.display()
            )));
        }
        let (first, last) = layers.unwrap_or((1, i64::from(self.n)));
        let options = ExportOptions {
            layers: self.layer_of(first)?..=self.layer_of(last)?,
            concrete,
            all_diffs,
        };
        let reader = self.reader()?;
        let summary = py.detach(|| {
            export_file(reader.book().store(), &options, format, &path, &mut |_| {
                true
            })
            .map_err(file_export_error)
        })?;
        Ok(summary.rows)
    }

    /// Releases the db (and its lock, if it holds one); any later call raises
    /// `gops.DbError`.
    fn close(&self) {
        lock(&self.reader).take();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "gops.Db(n={}, objective='{}', path='{}')",
            self.n,
            self.objective,
            self.path.display()
        )
    }
}

/// The largest `memory_mb` taken, as the command line's `--memory-mb`.
const MAX_MEMORY_MB: u64 = 1 << 24;

/// How `gops.open` names the limits of solving on demand, in a refusal's advice.
const OPEN_LIMITS: LimitNames = LimitNames {
    games: "max_on_demand_games (of gops.open)",
    memory: "memory_mb (of gops.open)",
};

/// Opens the db at `path` for reading (it must exist). A book solves the states below
/// its layers on demand: subtrees estimated at up to `max_on_demand_games` matrix games,
/// kept within `memory_mb` MiB (defaults: those of `OnDemandLimits`, as the command
/// line's); a larger one is refused before any work.
#[pyfunction]
#[pyo3(signature = (path, max_on_demand_games = None, memory_mb = None))]
pub fn open(
    py: Python<'_>,
    path: PathBuf,
    max_on_demand_games: Option<u64>,
    memory_mb: Option<u64>,
) -> PyResult<Db> {
    let options = read_options(max_on_demand_games, memory_mb)?;
    let book = py
        .detach(|| Book::open(&path, &options))
        .map_err(store_error)?;
    Ok(Db::from_book(book))
}

/// What `gops.open`'s limits let a book solve on demand (`None`: the defaults), named as
/// its parameters in a refusal.
pub fn read_options(
    max_on_demand_games: Option<u64>,
    memory_mb: Option<u64>,
) -> PyResult<ReadOptions> {
    let defaults = OnDemandLimits::default();
    let limits = OnDemandLimits {
        max_games: at_least_one("max_on_demand_games", max_on_demand_games)?
            .unwrap_or(defaults.max_games),
        memory_bytes: match at_least_one("memory_mb", memory_mb)? {
            // the command line's bound of --memory-mb
            Some(mb) if mb > MAX_MEMORY_MB => {
                return Err(value_error(format!(
                    "memory_mb {mb} is more than {MAX_MEMORY_MB} (16 TiB)"
                )));
            }
            Some(mb) => mb << 20,
            None => defaults.memory_bytes,
        },
        names: OPEN_LIMITS,
    };
    Ok(ReadOptions {
        limits,
        ..ReadOptions::default()
    })
}

/// `value`, refused when it is 0.
fn at_least_one(name: &str, value: Option<u64>) -> PyResult<Option<u64>> {
    match value {
        Some(0) => Err(value_error(format!("{name} must be at least 1"))),
        other => Ok(other),
    }
}
