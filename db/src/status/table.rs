//! The status as people read it (`gops status`): a heading, the db's size and one line a
//! layer.

use std::fmt;

use super::RunStatus;
use crate::disk::human_bytes;

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = if self.complete {
            "complete"
        } else {
            "incomplete"
        };
        writeln!(
            f,
            "{}-card {} game in {}: {state}",
            self.n, self.objective, self.db
        )?;
        let size = human_bytes(self.db_bytes);
        match self.book_from_layer {
            Some(from) => writeln!(
                f,
                "a book: layers {from} to {} kept ({size}), layers below {from} solved on demand (checksums of the full db)",
                self.n
            )?,
            None if self.complete => writeln!(f, "db size: {size}")?,
            None => writeln!(
                f,
                "db size: {size} (an estimated {} when complete)",
                human_bytes(self.estimated_db_bytes)
            )?,
        }
        write!(
            f,
            "{:>3} {:>7} {:>7} {:>14} {:>9}  checksum",
            "k", "slices", "done", "states", "max_gap"
        )?;
        for l in &self.layers {
            let done = if l.on_demand {
                "demand".to_string()
            } else {
                l.done.to_string()
            };
            write!(
                f,
                "\n{:>3} {:>7} {done:>7} {:>14} {:>9}  {}",
                l.k,
                l.slices,
                l.states,
                l.max_gap.map_or("-".to_string(), |g| format!("{g:.1e}")),
                l.checksum.as_deref().unwrap_or("-")
            )?;
        }
        if let Some(games) = self.total_matrix_games() {
            write!(
                f,
                "\n{games} matrix games solved in all (every run of the solve)"
            )?;
        }
        Ok(())
    }
}

impl RunStatus {
    /// The matrix games of a complete run, every run of it, where every layer's record
    /// counts them (layers completed by an older build do not).
    pub fn total_matrix_games(&self) -> Option<u64> {
        if !self.complete {
            return None;
        }
        self.layers.iter().map(|l| l.matrix_games).sum()
    }
}
