//! A solve's summary as people read it (`gops solve`): the game and the db, this run's
//! states, games and pace, the peak memory and the db's size, and one line a layer with
//! its checksum (equal checksums: bit-identical values).

use std::fmt;

use gops_common::human::{count, counted};
use gops_common::system::peak_rss;
use gops_db::disk::{db_bytes, human_bytes};
use gops_db::store::Store;

use crate::run::SolveSummary;

/// A solve's summary as people read it ([`SolveSummary::text`]).
pub struct SolveText<'a> {
    summary: &'a SolveSummary,
    store: &'a Store,
    threads: usize,
}

impl SolveSummary {
    /// The summary of a solve into `store` on `threads` threads, as people read it.
    pub fn text<'a>(&'a self, store: &'a Store, threads: usize) -> SolveText<'a> {
        SolveText {
            summary: self,
            store,
            threads,
        }
    }
}

impl fmt::Display for SolveText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (summary, store, threads) = (self.summary, self.store, self.threads);
        let seconds = summary.wall.as_secs_f64();
        let rate = summary.games as f64 / seconds.max(1e-9);
        writeln!(
            f,
            "solved the {}-card {} game into {}",
            store.n(),
            store.objective(),
            store.path().display()
        )?;
        writeln!(
            f,
            "{} states, {} matrix games in this run ({}), {:.2} s wall, {} games/s on {}",
            count(summary.states),
            count(summary.games),
            counted(summary.slices as u64, "slice", "slices"),
            seconds,
            count(rate as u64),
            counted(threads as u64, "thread", "threads")
        )?;
        let db_size = human_bytes(db_bytes(store.path()));
        match peak_rss() {
            Some(peak) => writeln!(f, "peak memory {}, db {db_size}", human_bytes(peak))?,
            None => writeln!(f, "db {db_size}")?,
        }
        writeln!(
            f,
            "per layer (k cards left in each hand): the prize sets (slices) and states stored,"
        )?;
        writeln!(
            f,
            "the largest certificate gap of its matrix games (how far from exact a value may be),"
        )?;
        writeln!(
            f,
            "and its checksum (equal checksums: bit-identical values; see RESULTS.md)"
        )?;
        write!(
            f,
            "{:>3} {:>7} {:>14} {:>9}  checksum",
            "k", "slices", "states", "max_gap"
        )?;
        for l in &summary.layers {
            write!(
                f,
                "\n{:>3} {:>7} {:>14} {:>9.1e}  {}",
                l.k, l.slices, l.states, l.max_gap, l.checksum
            )?;
        }
        Ok(())
    }
}
