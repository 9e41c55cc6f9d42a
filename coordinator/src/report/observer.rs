//! What a coordinator reports as its run goes: a progress bar, a log, a test probe.

use gops_common::plan::LayerSize;
use gops_db::store::LayerRecord;

/// Told about the run's progress; every method defaults to doing nothing.
pub trait RunObserver: Sync {
    /// Called once before any work, with every layer's size and how many of its slices
    /// are already stored.
    fn plan(&self, _layers: &[(LayerSize, usize)]) {}
    fn layer_started(&self, _size: &LayerSize, _already_stored: usize) {}
    fn shard_done(&self, _k: u8, _slices: usize, _games: u64) {}
    fn layer_done(&self, _record: &LayerRecord) {}
}

/// Observes nothing.
pub struct Silent;
impl RunObserver for Silent {}
