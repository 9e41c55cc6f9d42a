//! The checks of a submission, outside the lock: each new slice's form and a share of
//! its states re-solved against the slices below (read through the open layer's cache),
//! and the copies that disagree with a stored one re-checked in full
//! ([`super::disputes`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gops_common::cache::SliceCache;
use gops_common::engine::LayerEngine;
use gops_common::slice::Slice;
use gops_common::sync::lock;

use super::Coordinator;
use super::submit::SubmissionContext;
use crate::cluster::open_layer::OpenLayer;
use crate::cluster::rules::{
    CheckFailure, Rejection, SliceCheck, Submitted, check_form, check_slice, slice_fractions,
};

impl Coordinator {
    /// One round's checks: the new slices `fresh`, each with the share of its states that
    /// the verification settings draw for it, and the disputed copies. The stored values
    /// of each new slice, and for each disputed one the values of its replacement if the
    /// stored copy was the wrong one.
    pub(super) fn check_round(
        &self,
        context: &SubmissionContext,
        fresh: &[Submitted],
        disputed: &[Submitted],
    ) -> Result<(Vec<u64>, Vec<Option<u64>>), CheckFailure> {
        let fractions = slice_fractions(
            fresh.len(),
            self.config.verify_fraction,
            self.config.verify_slices,
            &mut rand::rng(),
        );
        let checked = self.check_submitted(&context.engine, fresh, &fractions);
        let resolved = self.resolve_disputes(&context.engine, context.worker, disputed);
        Ok((checked?, resolved?))
    }

    /// Checks new slices, each with the share of its states re-solved that `fractions`
    /// gives it; the number of stored values of each.
    pub(super) fn check_submitted(
        &self,
        engine: &LayerEngine,
        slices: &[Submitted],
        fractions: &[f64],
    ) -> Result<Vec<u64>, CheckFailure> {
        if slices.is_empty() {
            return Ok(Vec::new());
        }
        // the cheap checks first: a damaged submission loads nothing
        let decoded = slices
            .iter()
            .map(|s| check_form(self.n(), self.objective(), engine, s))
            .collect::<Result<Vec<_>, Rejection>>()?;
        // only the slices with states to re-solve read the slices below
        let resolved: Vec<u32> = slices
            .iter()
            .zip(fractions)
            .filter(|&(_, &fraction)| fraction > 0.0)
            .map(|(s, _)| s.prize_rank)
            .collect();
        let below = if resolved.is_empty() {
            HashMap::new()
        } else {
            self.dependencies(engine.k(), &resolved)?
        };
        let check = SliceCheck {
            n: self.n(),
            objective: self.objective(),
            engine,
            below: &below,
        };
        slices
            .iter()
            .zip(&decoded)
            .zip(fractions)
            .map(|((s, slice), &fraction)| check_slice(&check, s, slice, fraction))
            .collect()
    }

    /// The slices of the layer below that the slices `ranks` read, through the open
    /// layer's bounded cache. Loaded under the cache's own lock, not the coordinator's:
    /// leases and heartbeats go on meanwhile.
    pub(super) fn dependencies(
        &self,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<Slice>>, CheckFailure> {
        let cache = {
            let inner = self.lock();
            inner
                .open
                .as_ref()
                .filter(|o| o.k() == k)
                .map(OpenLayer::below)
        };
        // the layer completed meanwhile: its dependencies are still in the store
        let cache = cache.unwrap_or_else(|| {
            Arc::new(Mutex::new(SliceCache::new(self.config.verify_cache_bytes)))
        });
        let mut cache = lock(&cache);
        Ok(self.read_below(&mut cache, k, ranks)?)
    }
}
