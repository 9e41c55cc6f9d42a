//! What plays in the arena: the [`Bot`] trait (a request in, a reply out). The agents of
//! the vocabulary are bots through [`crate::agent::AgentBot`]; a program or a service
//! through [`crate::process`] and [`crate::http`].

use gops_db::read::QueryError;

use crate::protocol::{BotFault, Reply, Request};

/// Why a bot gave no reply.
#[derive(Debug, thiserror::Error)]
pub enum NoReply {
    /// The bot's own fault: it forfeits the game.
    #[error(transparent)]
    Fault(#[from] BotFault),
    /// The db that a built-in bot reads could not answer: the run stops with the db's
    /// error, as when the equilibrium's own seat cannot be read.
    #[error(transparent)]
    Db(#[from] QueryError),
}

/// A player of the arena's games.
pub trait Bot: Send {
    /// The answer to one decision.
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply>;

    /// After a fault: make the bot ready for the next game (a process is started again).
    fn reset(&mut self) {}
}
