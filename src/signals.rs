//! SIGINT and SIGTERM for the long-running servers (`coordinator`, `worker`, `serve`).
//!
//! The listeners are registered when a [`Termination`] is made, not when it is first
//! awaited: a command makes one before it announces that it is listening, so a signal
//! sent right after that line is caught (ending the process cleanly) instead of killing
//! it with the signal's default action.

use crate::failure::Failure;

/// SIGINT and SIGTERM, registered from the moment this is made.
pub struct Termination {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Termination {
    /// Registers both listeners; call it inside the runtime, before anything is announced.
    pub fn listen() -> Result<Self, Failure> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let register = |kind: SignalKind, name: &str| {
                signal(kind).map_err(|e| Failure::Runtime(format!("cannot listen for {name}: {e}")))
            };
            Ok(Termination {
                interrupt: register(SignalKind::interrupt(), "SIGINT")?,
                terminate: register(SignalKind::terminate(), "SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Termination {})
        }
    }

    /// Resolves when SIGINT or SIGTERM has arrived (at any time since [`Termination::listen`]).
    pub async fn received(mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => {}
                _ = self.terminate.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
