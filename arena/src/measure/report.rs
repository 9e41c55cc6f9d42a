//! What `gops simulate` and `gops exploit` report, whole: the game and the agents with
//! the result, as one value whose JSON serde makes and whose text people read.

use std::fmt;

use gops_common::human::{count, value};
use serde::Serialize;

use super::{Exploitation, Rate, SimulationReport};

/// Many games of policy `a` against policy `b` on the `n`-card game.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Simulation {
    pub n: u8,
    pub objective: &'static str,
    pub a: String,
    pub b: String,
    pub seed: u64,
    #[serde(flatten)]
    pub report: SimulationReport,
}

/// A policy played by A against B's best response on the `n`-card game.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyExploitation {
    pub n: u8,
    pub objective: &'static str,
    pub policy: String,
    #[serde(flatten)]
    pub result: Exploitation,
}

impl fmt::Display for Simulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |r: &Rate| format!("{:.4}  (95 % CI {:.4} .. {:.4})", r.rate, r.low, r.high);
        let report = &self.report;
        writeln!(
            f,
            "{} games of {}-card GOPS, A = {}, B = {} (seed {})",
            count(report.games),
            self.n,
            self.a,
            self.b,
            self.seed
        )?;
        writeln!(f, "A wins    {}", rate(&report.win_rate))?;
        writeln!(f, "draws     {}", rate(&report.draw_rate))?;
        writeln!(f, "A loses   {}", rate(&report.loss_rate))?;
        let s = &report.score_difference;
        write!(
            f,
            "A's score minus B's: mean {:.4}  (95 % CI {:.4} .. {:.4}), std dev {:.4}",
            s.mean, s.low, s.high, s.std_dev
        )?;
        let o = &report.outcome;
        write!(
            f,
            "\nP(A wins) - P(A loses): {:.4}  (95 % CI {:.4} .. {:.4})",
            o.mean, o.low, o.high
        )
    }
}

impl fmt::Display for PolicyExploitation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.result;
        writeln!(
            f,
            "{}-card GOPS ({}), A plays {} and B best-responds:",
            self.n, self.objective, self.policy
        )?;
        // rounded as values are for people (12 decimals, never "-0"); JSON keeps every bit
        writeln!(f, "game value for A:          {}", value(r.game_value))?;
        writeln!(f, "A's value with the policy: {}", value(r.policy_value))?;
        write!(
            f,
            "exploitability:            {}  ({} states evaluated)",
            value(r.exploitability),
            count(r.states)
        )
    }
}
