//! Layers: opening the first incomplete one (completing those already stored) and
//! completing the open one, which opens the next.

use gops_db::store::StoreError;
use tracing::info;

use super::Coordinator;
use super::state::Inner;
use crate::cluster::open_layer::OpenLayer;
use crate::error::CoreError;
use crate::report::happening::Happening;

impl Coordinator {
    /// Opens the first incomplete layer from `from` on (completing any whose slices are
    /// all stored already), or finishes the run.
    pub(super) fn open_next_layer(&self, inner: &mut Inner, from: u8) -> Result<(), CoreError> {
        for k in from..=self.n() {
            if self.store.layer(k)?.is_some() {
                continue;
            }
            let open = OpenLayer::open(&self.store, k, &self.config, inner.next_lease)?;
            let already = open.progress().stored();
            // not a Happening: the dashboard's `layer_complete` event already says that
            // the next layer opens; this line gives log readers the layer's shard plan
            info!(
                layer = k,
                slices = open.progress().size().slices,
                stored = already,
                shards = open.ledger().shard_count(),
                "layer open"
            );
            self.observer.layer_started(open.progress().size(), already);
            let complete = open.progress().is_complete();
            inner.open = Some(open);
            inner.notices.signal_change();
            if complete {
                return self.complete_layer(inner);
            }
            return Ok(());
        }
        inner.open = None;
        inner.tally.finish();
        inner.notices.signal_change();
        inner
            .notices
            .note(Happening::RunComplete { layers: self.n() });
        Ok(())
    }

    /// Writes the open layer's record (its slices are flushed already) and opens the
    /// next layer.
    pub(super) fn complete_layer(&self, inner: &mut Inner) -> Result<(), CoreError> {
        let open = inner.open.as_ref().expect("a layer is open");
        // the layer stays open (and the run unfinished) unless its record is durable
        let record = open.progress().complete(&self.store)?.ok_or_else(|| {
            StoreError::Corrupt(format!("layer {} completed with slices missing", open.k()))
        })?;
        inner
            .notices
            .note(Happening::LayerComplete { record: &record });
        self.observer.layer_done(&record);
        if let Some(keep_from) = self.store.keep_from_layer()
            && record.k > 1
            && self.store.is_released(record.k - 1)?
        {
            inner.notices.note(Happening::LayerReleased {
                layer: record.k - 1,
                keep_from,
            });
        }
        inner.next_lease = inner.next_lease.max(open.ledger().next_lease_id());
        inner.open = None;
        self.open_next_layer(inner, record.k + 1)
    }

    /// Whether every layer is complete.
    pub fn is_finished(&self) -> bool {
        self.lock().open.is_none()
    }

    /// The open layer and how many slices this run stored (for an interrupted run).
    pub fn position(&self) -> (Option<u8>, u64) {
        let inner = self.lock();
        (inner.open.as_ref().map(OpenLayer::k), inner.tally.slices)
    }
}
