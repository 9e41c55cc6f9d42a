//! The stall check on its own clock: a task that asks the core
//! ([`crate::cluster::Coordinator::check_stall`]) a few times per quiet period whether the
//! run moves, and says so in the log when it does not. Spawned by [`crate::server::service::serve`],
//! so a cluster's coordinator and the in-process solve (which serves its one worker the
//! same way) both run it, whatever their progress log's period.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::warn;

use crate::cluster::Coordinator;

/// Asks every quarter of the quiet period (at least every 100 ms, at most every 15 s),
/// forever: raced against the server it belongs to.
pub async fn watch_for_stalls(core: Arc<Coordinator>) {
    let every = (core.config().quiet_after() / 4)
        .clamp(Duration::from_millis(100), Duration::from_secs(15));
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let c = Arc::clone(&core);
        // the core's lock may be held across a flushed write: off the async threads
        let checked =
            tokio::task::spawn_blocking(move || (c.position().0, c.check_stall(Instant::now())))
                .await;
        if let Ok((layer, Some(stall))) = checked {
            warn!(layer, "{}", stall.describe());
        }
    }
}
