//! The extension module `gops._gops` of the Python package `gops` (the pure-Python
//! parts, OpenSpiel included, are in `python/python/gops/`). Modules:
//! - `db`: `gops.open` and `gops.Db` (values, strategies, layers, Arrow tables);
//! - `solve`: `gops.solve`, with progress and Ctrl-C;
//! - `exploit`: `gops.exploitability` of a Python agent or a built-in policy;
//! - `arena`: `gops.arena`'s runs and the games `gops.env` steps;
//! - `players`: `gops.respond`, `gops.fit` and `gops.Agent` (any agent of the
//!   vocabulary as a callable);
//! - `cards`: hands and prize sets read from Python objects;
//! - `errors`: the exceptions and the mapping of the solver's errors onto them.

mod arena;
mod cards;
mod db;
mod errors;
mod exploit;
mod players;
mod solve;

use pyo3::prelude::*;

#[pymodule]
fn _gops(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GopsError", py.get_type::<errors::GopsError>())?;
    m.add("DbError", py.get_type::<errors::DbError>())?;
    m.add("MAX_N", gops_common::cards::MAX_N)?;
    m.add(
        "EXPLOIT_STATE_LIMIT",
        gops_arena::measure::EXPLOIT_STATE_LIMIT,
    )?;
    m.add_class::<db::Db>()?;
    m.add_class::<db::Layer>()?;
    m.add_class::<db::Strategy>()?;
    m.add_class::<exploit::Exploitability>()?;
    m.add_class::<arena::ArenaGame>()?;
    m.add_function(wrap_pyfunction!(arena::arena_run, m)?)?;
    m.add_function(wrap_pyfunction!(db::open, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_function(wrap_pyfunction!(exploit::exploitability, m)?)?;
    m.add_class::<players::Agent>()?;
    m.add_function(wrap_pyfunction!(players::respond, m)?)?;
    m.add_function(wrap_pyfunction!(players::fit, m)?)?;
    Ok(())
}
