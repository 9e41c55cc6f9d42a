//! GOPS as an exact benchmark for agents (`gops arena`, Python's `gops.arena`): any
//! program plays the equilibrium of a solved db, and every decision's loss is measured
//! exactly.
//!
//! * [`protocol`]: the JSON messages of a decision, the reply's checks, the faults;
//! * [`bot`]: the [`bot::Bot`] trait, the built-in rules and the equilibrium as a bot;
//!   [`process`] and [`http`]: a bot that is a program (JSON lines on stdin/stdout) or a
//!   service behind a URL;
//! * [`loss`]: a decision's exact loss against the equilibrium;
//! * [`policy`]: the policies of `simulate` and `exploit`, simulated play between two,
//!   and a policy's exact exploitability;
//! * [`game`]: one game, the bot in one seat and the equilibrium in the other;
//! * [`run`]: the games of a run on several threads, in game order;
//! * [`report`]: the per-decision records and the summary.

pub mod bot;
pub mod game;
pub mod http;
pub mod loss;
pub mod policy;
pub mod process;
pub mod protocol;
pub mod report;
pub mod run;

#[cfg(test)]
mod tests;
