//! A coordinator's status as people read it (`gops status --coordinator`): the run's
//! table, then the open layer's shards, the workers, the rate and the time left, the
//! counts of what was refused or repaired, and whatever stalls or stops the run.

use std::fmt;

use gops_common::human::duration;

use super::ClusterStatus;

impl fmt::Display for ClusterStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.run)?;
        let shards = self.shards.unwrap_or_default();
        writeln!(
            f,
            "open layer: {}; shards {} pending, {} leased, {} done",
            self.open_layer.map_or("-".to_string(), |k| k.to_string()),
            shards.pending,
            shards.leased,
            shards.done
        )?;
        writeln!(
            f,
            "{} live workers ({} sessions held); {} games/s this run",
            self.workers.len(),
            self.workers_registered,
            self.games_per_second as u64
        )?;
        // the coordinator's one estimate, as its log and dashboard show it
        match self.eta_seconds {
            Some(_) if self.run.complete => {}
            Some(seconds) => writeln!(
                f,
                "time left: about {} at the last minute's speed",
                duration(seconds)
            )?,
            None => writeln!(f, "time left: unknown (nothing stored in the last minute)")?,
        }
        for w in &self.workers {
            writeln!(
                f,
                "  worker {} {:<20} {:>3} threads {:>8} slices {:>3} rejected",
                w.id, w.name, w.threads, w.slices, w.rejected
            )?;
        }
        write!(
            f,
            "rejected submissions {}, calls with a wrong session key {}, disagreeing copies {}, damaged slices solved again {}",
            self.rejected_submissions, self.refused_calls, self.disagreements, self.repaired_slices
        )?;
        if let Some(stall) = &self.stall {
            write!(f, "\nnot moving: {stall}")?;
        }
        if let Some(failure) = &self.failure {
            write!(f, "\nstopping: {failure}")?;
        }
        Ok(())
    }
}
