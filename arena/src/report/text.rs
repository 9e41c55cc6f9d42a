//! A run's summary as people read it (`gops arena`): the games and who played, the
//! result and the loss with their intervals, where the loss falls (by round, by
//! upcard), the worst decisions with their explorer links, the bot's faults and the
//! pace.

use std::fmt;
use std::path::Path;

use gops_common::human::count;
use gops_common::objective::Objective;

use super::{LossPart, Summary};

/// A run's summary as people read it ([`Summary::text`]).
pub struct SummaryText<'a> {
    summary: &'a Summary,
    player: &'a str,
    db: &'a Path,
}

impl Summary {
    /// The summary as people read it: `player` names who played the equilibrium, and
    /// `db` is where the worst decisions can be opened in the explorer.
    pub fn text<'a>(&'a self, player: &'a str, db: &'a Path) -> SummaryText<'a> {
        SummaryText {
            summary: self,
            player,
            db,
        }
    }
}

impl fmt::Display for SummaryText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, player, db) = (self.summary, self.player, self.db);
        let unit = match s.objective {
            Objective::Win => "a game's result (1 win, 0 draw, -1 loss)",
            Objective::Points => "the score difference",
        };
        writeln!(
            f,
            "{} games of {}-card GOPS ({}): {player} against the equilibrium, seats alternating (seed {})",
            count(s.games),
            s.n,
            s.objective,
            s.seed
        )?;
        writeln!(
            f,
            "result: mean {:.4} (95 % CI {:.4} .. {:.4}), {unit}; won {}, drew {}, lost {} (win rate {:.4})",
            s.mean_result,
            s.result_ci95[0],
            s.result_ci95[1],
            count(s.wins),
            count(s.draws),
            count(s.losses),
            s.win_rate
        )?;
        writeln!(
            f,
            "loss:   mean {:.4} a game (95 % CI {:.4} .. {:.4}), summed over its decisions; the value less the loss: {:.4}",
            s.mean_loss, s.loss_ci95[0], s.loss_ci95[1], s.result_from_loss
        )?;
        let parts = |parts: &[LossPart]| {
            parts
                .iter()
                .map(|p| format!("{} {:.3}", p.at, p.loss_per_game))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(f, "loss a game by round:  {}", parts(&s.loss_by_round))?;
        writeln!(f, "loss a game by upcard: {}", parts(&s.loss_by_upcard))?;
        if !s.worst_decisions.is_empty() {
            writeln!(
                f,
                "worst decisions (open the explorer with `gops serve --db {}`, then the address):",
                db.display()
            )?;
            for w in &s.worst_decisions {
                let bid = match (&w.fault, w.bid) {
                    (Some(fault), _) => format!("forfeit ({fault})"),
                    (None, Some(bid)) => format!("bid {bid}"),
                    (None, None) => "no bid".to_string(),
                };
                writeln!(
                    f,
                    "  game {}, round {} as {}: upcard {}, {bid}, loss {:.4}  {}",
                    w.game, w.round, w.seat, w.upcard, w.loss, w.explorer
                )?;
            }
        }
        writeln!(f, "bot faults: {} (games forfeited)", count(s.bot_faults))?;
        for fault in &s.first_faults {
            writeln!(
                f,
                "  game {}, round {}: {}",
                fault.game, fault.round, fault.message
            )?;
        }
        write!(
            f,
            "{} decisions in {:.1} s ({:.0} a second)",
            count(s.decisions),
            s.seconds,
            s.decisions_per_second
        )?;
        Ok(())
    }
}
