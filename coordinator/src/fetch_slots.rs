//! The bound on slice streams served at once. A fetch beyond it waits its turn (first
//! come, first served) for a while before it is refused: when hundreds of workers start a
//! layer together, a refusal would send each into its retry backoff (100 ms doubling up
//! to 5 s), idle while streams free up; a queue hands the next free stream to the oldest
//! waiter at once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;

/// Slice streams served at once: each holds one slice in memory and reads the store off
/// the async runtime.
pub const MAX_FETCH_STREAMS: usize = 64;

/// How long a fetch waits for a stream before it is refused (the worker then retries).
pub const FETCH_QUEUE_WAIT: Duration = Duration::from_secs(30);

/// Stream slots, handed out in the order they are asked for.
#[derive(Clone)]
pub struct FetchSlots {
    slots: Arc<Semaphore>,
    limit: usize,
    wait: Duration,
}

impl Default for FetchSlots {
    fn default() -> Self {
        FetchSlots::new(MAX_FETCH_STREAMS, FETCH_QUEUE_WAIT)
    }
}

impl FetchSlots {
    /// `limit` streams at once; a fetch waits at most `wait` for one.
    pub fn new(limit: usize, wait: Duration) -> FetchSlots {
        FetchSlots {
            slots: Arc::new(Semaphore::new(limit)),
            limit,
            wait,
        }
    }

    /// A slot for one stream, held until the permit is dropped; `resource_exhausted`
    /// when none came free within the wait.
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit, Status> {
        match tokio::time::timeout(self.wait, Arc::clone(&self.slots).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            // the semaphore is never closed; kept apart from a timeout all the same
            Ok(Err(_)) => Err(Status::unavailable("the coordinator is stopping")),
            Err(_) => Err(Status::resource_exhausted(format!(
                "all {} slice streams stayed busy for {} s: try again shortly",
                self.limit,
                self.wait.as_secs()
            ))),
        }
    }

    /// Slots free now.
    pub fn available(&self) -> usize {
        self.slots.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_fetch_beyond_the_limit_waits_for_a_slot_and_gets_it() {
        let slots = FetchSlots::new(1, Duration::from_secs(10));
        let first = slots.acquire().await.unwrap();
        assert_eq!(slots.available(), 0);
        let waiting = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !waiting.is_finished(),
            "the second fetch was answered while the slot was held"
        );
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the freed slot went to the waiting fetch")
            .unwrap();
        assert!(second.is_ok());
    }

    #[tokio::test]
    async fn waiters_are_served_in_order() {
        let slots = FetchSlots::new(1, Duration::from_secs(10));
        let held = slots.acquire().await.unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut waiters = Vec::new();
        for i in 0..4 {
            let (slots, tx) = (slots.clone(), tx.clone());
            waiters.push(tokio::spawn(async move {
                let permit = slots.acquire().await.unwrap();
                tx.send(i).unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
                drop(permit);
            }));
            // each waiter queued before the next one asks
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(held);
        for waiter in waiters {
            waiter.await.unwrap();
        }
        let order: Vec<i32> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(order, vec![0, 1, 2, 3]);
    }

    #[tokio::test]
    async fn a_fetch_that_waits_too_long_is_refused_as_busy() {
        let slots = FetchSlots::new(2, Duration::from_millis(50));
        let _held = (
            slots.acquire().await.unwrap(),
            slots.acquire().await.unwrap(),
        );
        let refused = slots.acquire().await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(
            refused.message().contains("all 2 slice streams"),
            "{}",
            refused.message()
        );
    }
}
