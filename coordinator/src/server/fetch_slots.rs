//! The bound on slice streams served at once, shared fairly. A fetch beyond it waits its
//! turn (first come, first served) for a while before it is refused: when hundreds of
//! workers start a layer together, a refusal would send each into its retry backoff
//! (100 ms doubling up to 5 s), idle while streams free up; a queue hands the next free
//! stream to the oldest waiter at once. One party (a per-worker token, or else a peer
//! address) holds at most [`PER_PARTY`] streams, and the last [`RESERVE`] free streams
//! go only to parties holding none: whatever one party holds open, another's fetch
//! starts as soon as a stream is free.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gops_common::sync::lock;
use tokio::sync::oneshot;
use tonic::Status;

/// Slice streams served at once: each holds one slice in memory and reads the store off
/// the async runtime.
pub const MAX_FETCH_STREAMS: usize = 64;
/// Streams one party may hold at once (a worker fetches one shard's dependencies and
/// perhaps the next's).
pub const PER_PARTY: usize = 16;
/// Free streams kept for parties that hold none.
pub const RESERVE: usize = 8;

/// How long a fetch waits for a stream before it is refused (the worker then retries).
pub const FETCH_QUEUE_WAIT: Duration = Duration::from_secs(30);

/// Who holds streams: the token presented (one per worker) or the peer's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FetchParty {
    Credential(u32),
    Address(std::net::IpAddr),
    Unknown,
}

/// Stream slots, handed out in the order they are asked for, within each party's share.
#[derive(Clone)]
pub struct FetchSlots {
    shared: Arc<Mutex<Slots>>,
    limit: usize,
    per_party: usize,
    reserve: usize,
    wait: Duration,
}

struct Slots {
    free: usize,
    held: HashMap<FetchParty, usize>,
    /// Fetches waiting, oldest first; a dropped receiver (a fetch given up) is skipped.
    waiting: VecDeque<(FetchParty, oneshot::Sender<FetchSlot>)>,
}

/// One stream's slot, given back when dropped (to the first waiting fetch that may
/// take it).
pub struct FetchSlot {
    slots: Option<FetchSlots>,
    party: FetchParty,
}

impl Default for FetchSlots {
    fn default() -> Self {
        FetchSlots::new(MAX_FETCH_STREAMS, FETCH_QUEUE_WAIT)
    }
}

impl FetchSlots {
    /// `limit` streams at once; a fetch waits at most `wait` for one. Shares as the
    /// defaults, cut to fit a small limit.
    pub fn new(limit: usize, wait: Duration) -> FetchSlots {
        FetchSlots::with_shares(limit, PER_PARTY.min(limit), RESERVE.min(limit / 4), wait)
    }

    /// `limit` streams, at most `per_party` to one party, the last `reserve` free only
    /// to a party holding none.
    pub fn with_shares(
        limit: usize,
        per_party: usize,
        reserve: usize,
        wait: Duration,
    ) -> FetchSlots {
        FetchSlots {
            shared: Arc::new(Mutex::new(Slots {
                free: limit,
                held: HashMap::new(),
                waiting: VecDeque::new(),
            })),
            limit,
            per_party: per_party.max(1),
            reserve,
            wait,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        lock(&self.shared)
    }

    /// Whether `party` may take a free slot now.
    fn may_take(&self, slots: &Slots, party: &FetchParty) -> bool {
        let held = slots.held.get(party).copied().unwrap_or(0);
        slots.free > 0 && held < self.per_party && (slots.free > self.reserve || held == 0)
    }

    fn take(&self, slots: &mut Slots, party: &FetchParty) -> FetchSlot {
        slots.free -= 1;
        *slots.held.entry(party.clone()).or_default() += 1;
        FetchSlot {
            slots: Some(self.clone()),
            party: party.clone(),
        }
    }

    /// A slot for one stream of `party`, held until it is dropped; `resource_exhausted`
    /// when none came free within the wait.
    pub async fn acquire(&self, party: FetchParty) -> Result<FetchSlot, Status> {
        let receiver = {
            let mut slots = self.lock();
            // first come, first served: a fetch that may take a slot does so only when
            // nobody who may take it is waiting before it
            let ahead = slots
                .waiting
                .iter()
                .any(|(p, s)| !s.is_closed() && self.may_take(&slots, p));
            if !ahead && self.may_take(&slots, &party) {
                return Ok(self.take(&mut slots, &party));
            }
            let (sender, receiver) = oneshot::channel();
            slots.waiting.push_back((party, sender));
            receiver
        };
        match tokio::time::timeout(self.wait, receiver).await {
            Ok(Ok(slot)) => Ok(slot),
            Ok(Err(_)) => Err(Status::unavailable("the coordinator is stopping")),
            Err(_) => Err(Status::resource_exhausted(format!(
                "all {} slice streams stayed busy for {} s (or this peer holds its share of {}): try again shortly",
                self.limit,
                self.wait.as_secs(),
                self.per_party
            ))),
        }
    }

    /// Gives a slot of `party` back and hands free slots to the waiting fetches that may
    /// take them, oldest first.
    fn give_back(&self, party: &FetchParty) {
        let mut slots = self.lock();
        slots.put_back(party);
        let mut i = 0;
        while i < slots.waiting.len() && slots.free > 0 {
            let (p, sender) = &slots.waiting[i];
            if sender.is_closed() {
                slots.waiting.remove(i);
                continue;
            }
            if !self.may_take(&slots, p) {
                i += 1;
                continue;
            }
            let (p, sender) = slots.waiting.remove(i).expect("index in range");
            let slot = self.take(&mut slots, &p);
            if let Err(mut unused) = sender.send(slot) {
                // the fetch gave up meanwhile: its slot goes back here, not through
                // its drop (which would take the lock again)
                unused.slots = None;
                slots.put_back(&p);
            }
        }
    }

    /// Slots free now.
    pub fn available(&self) -> usize {
        self.lock().free
    }
}

impl Slots {
    /// One slot of `party` free again.
    fn put_back(&mut self, party: &FetchParty) {
        self.free += 1;
        if let Some(held) = self.held.get_mut(party) {
            *held -= 1;
            if *held == 0 {
                self.held.remove(party);
            }
        }
    }
}

impl std::fmt::Debug for FetchSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchSlot")
            .field("party", &self.party)
            .finish()
    }
}

impl Drop for FetchSlot {
    fn drop(&mut self) {
        if let Some(slots) = self.slots.take() {
            slots.give_back(&self.party);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_fetch_beyond_the_limit_waits_for_a_slot_and_gets_it() {
        let slots = FetchSlots::new(1, Duration::from_secs(10));
        let first = slots.acquire(FetchParty::Unknown).await.unwrap();
        assert_eq!(slots.available(), 0);
        let waiting = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire(FetchParty::Unknown).await }
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
        let held = slots.acquire(FetchParty::Unknown).await.unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut waiters = Vec::new();
        for i in 0..4 {
            let (slots, tx) = (slots.clone(), tx.clone());
            waiters.push(tokio::spawn(async move {
                let permit = slots.acquire(FetchParty::Unknown).await.unwrap();
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
            slots.acquire(FetchParty::Unknown).await.unwrap(),
            slots.acquire(FetchParty::Unknown).await.unwrap(),
        );
        let refused = slots.acquire(FetchParty::Unknown).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(
            refused.message().contains("all 2 slice streams"),
            "{}",
            refused.message()
        );
    }

    #[tokio::test]
    async fn a_party_at_its_share_does_not_hold_up_another() {
        let slots = FetchSlots::with_shares(4, 2, 1, Duration::from_millis(200));
        let hog = FetchParty::Address([10, 0, 0, 1].into());
        let other = FetchParty::Address([10, 0, 0, 2].into());
        let _held = (
            slots.acquire(hog.clone()).await.unwrap(),
            slots.acquire(hog.clone()).await.unwrap(),
        );
        // the hog is at its share: its third fetch waits, and is refused in the end
        let third = tokio::spawn({
            let (slots, hog) = (slots.clone(), hog.clone());
            async move { slots.acquire(hog).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        // another party is served at once, even the last (reserved) slot
        let a = slots.acquire(other.clone()).await.unwrap();
        let third = third.await.unwrap();
        assert_eq!(
            third.err().map(|e| e.code()),
            Some(tonic::Code::ResourceExhausted)
        );
        drop(a);
        assert_eq!(slots.available(), 2);
    }

    #[tokio::test]
    async fn the_reserve_goes_only_to_a_party_holding_nothing() {
        let slots = FetchSlots::with_shares(4, 4, 2, Duration::from_millis(100));
        let busy = FetchParty::Credential(1);
        let fresh = FetchParty::Credential(2);
        let _two = (
            slots.acquire(busy.clone()).await.unwrap(),
            slots.acquire(busy.clone()).await.unwrap(),
        );
        // two free, both reserved: the busy party waits and is refused
        assert!(slots.acquire(busy.clone()).await.is_err());
        // a party with none gets one, then is held to the reserve rule too
        let _one = slots.acquire(fresh.clone()).await.unwrap();
        assert!(slots.acquire(fresh).await.is_err());
        assert_eq!(slots.available(), 1);
    }
}
