//! A verify report as people read it (`gops verify`): the run, one line a layer, what
//! was not verified, how the layers were read, each mismatch listed, and the totals.

use std::fmt;

use super::VerifyReport;

/// A verify report as people read it, for a run on `threads` threads
/// ([`VerifyReport::text`]).
pub struct VerifyText<'a> {
    report: &'a VerifyReport,
    threads: usize,
}

impl VerifyReport {
    /// The report as people read it, for a run on `threads` threads.
    pub fn text(&self, threads: usize) -> VerifyText<'_> {
        VerifyText {
            report: self,
            threads,
        }
    }
}

impl fmt::Display for VerifyText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (report, threads) = (self.report, self.threads);
        writeln!(
            f,
            "verified the {}-card {} game: {:.4} of each slice's states re-solved (seed {}), {threads} threads",
            report.n, report.objective, report.fraction, report.seed
        )?;
        // win re-solves (state, score difference) pairs, which `status` does not count
        let (column, counted) = if report.objective == "win" {
            ("states x d", "(state, score difference) pairs")
        } else {
            ("states", "states")
        };
        writeln!(
            f,
            "{:>3} {:>7} {:>14} {:>10} {:>9}  checksum",
            "k", "slices", column, "mismatches", "max_gap"
        )?;
        for l in &report.layers {
            writeln!(
                f,
                "{:>3} {:>7} {:>14} {:>10} {:>9.1e}  {}",
                l.k,
                l.slices,
                l.states_checked,
                l.mismatches,
                l.max_gap,
                if l.checksum_matches { "ok" } else { "WRONG" }
            )?;
        }
        if !report.incomplete_layers.is_empty() {
            writeln!(
                f,
                "not complete, not verified: layers {:?}",
                report.incomplete_layers
            )?;
        }
        if report.sealed {
            writeln!(
                f,
                "read through the sealed files: each layer's index, record and data file agree"
            )?;
        } else {
            writeln!(
                f,
                "read through sled (no sealed layers: an unsealed db of an earlier build)"
            )?;
        }
        for m in &report.mismatches {
            writeln!(
                f,
                "mismatch: layer {} prizes {:?} pattern {} d {}: stored {:e}, re-solved {:e}",
                m.k, m.prizes, m.pattern, m.diff, m.stored, m.resolved
            )?;
        }
        write!(
            f,
            "{} {counted} re-solved in {:.1} s, {} mismatches, largest gap {:.1e}",
            report.states_checked, report.seconds, report.mismatch_count, report.max_gap
        )?;
        Ok(())
    }
}
