//! `gops verify` of a book's lowest layer: the layer below it is not stored, so a sample
//! of its states is re-solved from children solved on demand ([`crate::book::on_demand`]) and
//! compared bit for bit with the stored values, which came from the full solve. Each
//! state re-solved costs a subtree as large as the book's lowest layer (solved whole, or
//! game by game when the whole is over the limits: [`OnDemand::resolve_stored`]), so the
//! sample is a number of states over the whole layer, not a fraction of every slice.

use gops_common::audit::sample_states;
use gops_common::checksum::LayerChecksum;
use gops_common::layout::{LayerLayout, Oriented};
use gops_common::prizes::{prize_set_count, prize_unrank};
use gops_common::state::GameState;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{LayerVerified, MAX_REPORTED, Mismatch, VerifyError, VerifyOptions};
use crate::book::on_demand::OnDemand;
use crate::store::{LayerRecord, Store};

/// Verifies layer `k` of the book `store` (its lowest): the slices' digests against the
/// record's checksum, and `options.on_demand_states` states re-solved on demand.
pub(crate) fn verify_lowest_layer(
    store: &Store,
    on_demand: &OnDemand,
    options: &VerifyOptions,
    k: u8,
    record: &LayerRecord,
    mismatches: &mut Vec<Mismatch>,
) -> Result<LayerVerified, VerifyError> {
    let n = store.n();
    let slices = prize_set_count(n, k);
    let mut layer = LayerVerified {
        k,
        slices,
        states_checked: 0,
        mismatches: 0,
        checksum_matches: false,
        max_gap: 0.0,
    };
    let mut checksum = LayerChecksum::new();
    for rank in 0..slices as u32 {
        checksum.add(&store.require_slice(k, rank)?.digest);
    }
    layer.checksum_matches = checksum.finish() == record.checksum;
    let layout = LayerLayout::new(n, k);
    let mut rng = StdRng::seed_from_u64(options.seed ^ 0xB00C);
    for _ in 0..options.on_demand_states {
        let rank = rng.random_range(0..slices as u32);
        let slice = store.require_slice(k, rank)?.slice;
        let states = sample_states(&slice, 1.0, &mut rng);
        let state = states[rng.random_range(0..states.len())];
        let (p, d) = (
            state / slice.width(),
            (state % slice.width()) as i32 - slice.diff_range,
        );
        let pattern = layout.canonical[p];
        let prizes = prize_unrank(rank, k);
        let (a, b) = pattern.place(gops_common::CardSet::full(pattern.len() as u8));
        let concrete = GameState {
            n,
            a,
            b,
            prizes,
            diff: d,
        };
        let stored = slice.value(Oriented::new(p as u32, false), d);
        let (resolved, gap) = on_demand
            .resolve_stored(&concrete)
            .map_err(VerifyError::OnDemand)?;
        layer.max_gap = layer.max_gap.max(gap);
        layer.states_checked += 1;
        if stored.to_bits() != resolved.to_bits() {
            layer.mismatches += 1;
            if mismatches.len() < MAX_REPORTED {
                mismatches.push(Mismatch {
                    k,
                    prizes: prizes.iter().collect(),
                    pattern: pattern.letters(),
                    diff: d,
                    stored,
                    resolved,
                });
            }
        }
    }
    Ok(layer)
}
