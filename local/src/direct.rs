//! A solve on one machine without the network (`gops solve --no-grpc`): the coordinator
//! leasing its shards straight to a solver loop in the same process, to measure what the
//! protocol costs. The same leases, checks and store as a cluster, so the same bits.

use std::time::Instant;

use gops_common::cache::SliceCache;
use gops_common::engine::LayerEngine;
use gops_common::prizes::prize_rank;
use gops_common::shard::ShardSolver;
use gops_coordinator::cluster::LeaseOutcome;
use gops_coordinator::cluster::rules::Submitted;
use gops_db::store::Store;

use crate::run::{LocalError, LocalRun, SolveOutcome, outcome, should_stop};

/// Solves the store's game with the in-process coordinator leasing shards directly to a
/// solver loop: the same leases, checks and store as a cluster, without the protocol.
pub fn solve_direct(run: LocalRun) -> Result<(Store, SolveOutcome), LocalError> {
    let started = Instant::now();
    let (core, settings, stop) = run.into_parts()?;
    let solver = ShardSolver::new(settings.threads)?;
    let worker = core.hello(
        gops_proto::PROTOCOL_VERSION,
        "direct",
        settings.threads as u32,
        None,
    )?;
    let mut cache = SliceCache::new(settings.cache_bytes);
    let mut layer_engine: Option<LayerEngine> = None;
    while !should_stop(&core, &stop) {
        let (lease_id, layer, prize_ranks) = match core.lease(worker, Instant::now())? {
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => (lease_id, layer, prize_ranks),
            LeaseOutcome::Finished => break,
            // one worker, one shard at a time: only a reached slice budget waits
            LeaseOutcome::Wait(_) => break,
        };
        let engine = match layer_engine.take().filter(|e| e.k() == layer) {
            Some(e) => layer_engine.insert(e),
            None => {
                cache.keep_layer(layer - 1);
                layer_engine.insert(
                    LayerEngine::new(core.n(), layer, core.objective())
                        .with_start(core.pivot_start()),
                )
            }
        };
        let below = core.slices_below(&mut cache, layer, &prize_ranks)?;
        let dependency = |prizes| &*below[&prize_rank(prizes)];
        let solved = solver.solve_shard(engine, &prize_ranks, &dependency)?;
        let submitted = solved.iter().map(|s| Submitted::solved(layer, s)).collect();
        core.submit(worker, lease_id, submitted, Instant::now())?;
    }
    outcome(core, started)
}
