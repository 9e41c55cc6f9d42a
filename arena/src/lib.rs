//! GOPS as an exact benchmark for agents (`gops arena`, Python's `gops.arena`): any
//! program plays the equilibrium of a solved db, and every decision's loss is measured
//! exactly.
//!
//! * [`protocol`]: the JSON messages of a decision, the reply's checks (the one check of
//!   an agent's distribution), the faults;
//! * [`agent`]: the one vocabulary of agents (the rules, the equilibrium, mixtures of
//!   them as opponent models), a player asked one decision at a time;
//! * [`table`]: the one game stepper every game goes through;
//! * [`coach`]: the coach of a real game (advice, the opponent's leaks, the session);
//! * [`bot`]: the [`bot::Bot`] trait; [`process`] and [`http`]: a bot that is a program
//!   (JSON lines on stdin/stdout) or a service behind a URL;
//! * [`loss`]: a decision's exact loss against the equilibrium;
//! * [`stats`]: means, rates and their intervals;
//! * [`measure`]: many games between two agents (`simulate`), and an agent's exact
//!   exploitability (`exploit`);
//! * [`game`]: one game, the bot in one seat and the equilibrium in the other;
//! * [`run`]: the games of a run on several threads, in game order;
//! * [`report`]: the per-decision records and the summary.

pub mod agent;
pub mod bot;
pub mod coach;
pub mod game;
pub mod http;
pub mod loss;
pub mod measure;
pub mod process;
pub mod protocol;
pub mod report;
pub mod run;
pub mod stats;
pub mod table;

#[cfg(test)]
mod tests;
