//! The slices a shard reads (layer k - 1), from the worker's cache or fetched from the
//! coordinator in chunks of at most [`gops_proto::MAX_FETCH_SLICES`]; every fetched slice
//! is checked to be the one asked for, intact (its digest) and of the right shape before
//! it is used or cached.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use gops_common::cache::SliceCache;
use gops_common::checksum::digest_bytes;
use gops_common::engine::{LayerEngine, terminal_slice};
use gops_common::objective::Objective;
use gops_common::slice::Slice;
use gops_proto::v1::{FetchRequest, SliceData};

use crate::call::Called;
use crate::client::ClientError;
use crate::session::Session;

/// The slices of layer `layer - 1` that the shard of `prize_ranks` reads, by prize rank.
pub async fn fetch_dependencies(
    session: &Session,
    cache: &mut SliceCache,
    layer: u8,
    prize_ranks: &[u32],
) -> Result<HashMap<u32, Arc<Slice>>, ClientError> {
    let mut deps = HashMap::new();
    if layer == 1 {
        deps.insert(0, Arc::new(terminal_slice()));
        return Ok(deps);
    }
    let below = layer - 1;
    let needed: BTreeSet<u32> = prize_ranks
        .iter()
        .flat_map(|&r| LayerEngine::dependency_ranks(r, layer))
        .collect();
    let mut missing = Vec::new();
    for rank in needed {
        match cache.get(below, rank) {
            Some(slice) => {
                deps.insert(rank, slice);
            }
            None => missing.push(rank),
        }
    }
    for chunk in missing.chunks(gops_proto::MAX_FETCH_SLICES) {
        let request = FetchRequest {
            layer: u32::from(below),
            prize_ranks: chunk.to_vec(),
        };
        let fetched = session
            .call("fetch", |mut c| {
                let r = request.clone();
                async move {
                    let mut stream = c.fetch_slices(r).await?.into_inner();
                    let mut slices = Vec::new();
                    while let Some(item) = stream.message().await? {
                        slices.push(item);
                    }
                    Ok(tonic::Response::new(slices))
                }
            })
            .await?;
        let Called::Done(fetched) = fetched else {
            return Err(ClientError::Protocol(
                "fetch answered 'unknown worker'".into(),
            ));
        };
        let slices = accept_fetched(session.n, session.objective, below, chunk, fetched)?;
        for (&rank, slice) in chunk.iter().zip(slices) {
            let slice = Arc::new(slice);
            cache.insert(below, rank, Arc::clone(&slice));
            deps.insert(rank, slice);
        }
    }
    Ok(deps)
}

/// The slices of `layer` asked for as `asked` (prize ranks, in order), decoded from the
/// messages that came back, or why they cannot be used.
pub fn accept_fetched(
    n: u8,
    objective: Objective,
    layer: u8,
    asked: &[u32],
    fetched: Vec<SliceData>,
) -> Result<Vec<Slice>, ClientError> {
    if fetched.len() != asked.len() {
        return Err(ClientError::Protocol(format!(
            "asked for {} slices, got {}",
            asked.len(),
            fetched.len()
        )));
    }
    fetched
        .into_iter()
        .zip(asked)
        .map(|(data, &want)| {
            if data.layer != u32::from(layer) || data.prize_rank != want {
                return Err(ClientError::Protocol(
                    "fetched slice is not the one asked for".into(),
                ));
            }
            if digest_bytes(&data.body).as_slice() != data.digest.as_slice() {
                return Err(ClientError::Protocol(format!(
                    "slice {want} arrived damaged"
                )));
            }
            Slice::decode_for(n, objective, layer, want, &data.body).map_err(ClientError::Protocol)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::solution::InMemorySolution;
    use gops_proto::wire::slice_data;

    #[test]
    fn fetched_slices_are_used_only_when_they_are_the_ones_asked_for_and_intact() {
        let game = InMemorySolution::solve(4, Objective::Win).unwrap();
        let message = |rank: u32| {
            slice_data(
                2,
                rank,
                gops_common::slice::SliceBytes::of(&game.layers[2][rank as usize], 0.0, 1),
            )
        };
        let ok = accept_fetched(4, Objective::Win, 2, &[1, 4], vec![message(1), message(4)]);
        assert_eq!(
            ok.unwrap(),
            vec![game.layers[2][1].clone(), game.layers[2][4].clone()]
        );
        let protocol_error =
            |r: Result<Vec<Slice>, ClientError>| matches!(r, Err(ClientError::Protocol(_)));
        // too few, out of order, another layer's
        assert!(protocol_error(accept_fetched(
            4,
            Objective::Win,
            2,
            &[1, 4],
            vec![message(1)]
        )));
        assert!(protocol_error(accept_fetched(
            4,
            Objective::Win,
            2,
            &[1, 4],
            vec![message(4), message(1)]
        )));
        assert!(protocol_error(accept_fetched(
            4,
            Objective::Win,
            3,
            &[1],
            vec![message(1)]
        )));
        // a flipped bit, and a body whose digest matches but whose shape does not
        let mut damaged = message(1);
        damaged.body[3] ^= 1;
        assert!(protocol_error(accept_fetched(
            4,
            Objective::Win,
            2,
            &[1],
            vec![damaged]
        )));
        let mut short = message(1);
        short.body.truncate(4);
        short.digest = digest_bytes(&short.body).to_vec();
        assert!(protocol_error(accept_fetched(
            4,
            Objective::Win,
            2,
            &[1],
            vec![short]
        )));
    }
}
