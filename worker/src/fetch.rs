//! The slices a shard reads (layer k - 1): from the worker's cache, else read from the
//! coordinator's db directory on a shared file system (`--slices-dir`,
//! [`crate::shared_dir`]), else fetched from the coordinator in chunks of at most
//! [`gops_proto::MAX_FETCH_SLICES`]; every slice that arrives is checked to be the one
//! asked for, intact (its digest) and of the right shape before it is used or cached.

use std::collections::HashMap;
use std::sync::Arc;

use gops_common::cache::SliceCache;
use gops_common::checksum::digest_bytes;
use gops_common::engine::{LayerEngine, terminal_slice};
use gops_common::objective::Objective;
use gops_common::slice::Slice;
use gops_proto::v1::{FetchRequest, SliceData, SlicePlace};
use tracing::warn;

use crate::call::Called;
use crate::error::ClientError;
use crate::link::Link;
use crate::session::Session;
use crate::shared_dir::SharedDir;

/// How many dependency slices came from where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceCounts {
    pub cached: u64,
    pub read_from_dir: u64,
    pub fetched: u64,
    /// Slices whose place came from a sealed index in the shared directory rather than
    /// from the coordinator.
    pub placed_by_sealed_index: u64,
}

/// Where a worker's dependency slices come from, in order: its cache, the coordinator's
/// db directory (when it is given, and a sealed index there or the coordinator says
/// where they lie), the coordinator.
pub struct SliceSources {
    pub cache: SliceCache,
    shared: Option<SharedDir>,
    pub counts: SourceCounts,
}

impl SliceSources {
    pub fn new(cache: SliceCache, shared: Option<SharedDir>) -> SliceSources {
        SliceSources {
            cache,
            shared,
            counts: SourceCounts::default(),
        }
    }

    /// The slices of layer `layer - 1` that the shard of `prize_ranks` reads, by prize
    /// rank.
    pub async fn dependencies<L: Link>(
        &mut self,
        session: &Session<L>,
        layer: u8,
        prize_ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<Slice>>, ClientError> {
        let mut deps = HashMap::new();
        if layer == 1 {
            deps.insert(0, Arc::new(terminal_slice()));
            return Ok(deps);
        }
        let below = layer - 1;
        let needed = LayerEngine::shard_dependency_ranks(prize_ranks, layer);
        let mut missing = Vec::new();
        for rank in needed {
            match self.cache.get(below, rank) {
                Some(slice) => {
                    deps.insert(rank, slice);
                }
                None => missing.push(rank),
            }
        }
        self.counts.cached += deps.len() as u64;
        if self.shared.is_some() && !missing.is_empty() {
            missing = self
                .read_from_dir(session, below, missing, &mut deps)
                .await?;
        }
        for chunk in missing.chunks(gops_proto::MAX_FETCH_SLICES) {
            for (&rank, slice) in chunk.iter().zip(fetch(session, below, chunk).await?) {
                let slice = Arc::new(slice);
                self.cache.insert(below, rank, Arc::clone(&slice));
                deps.insert(rank, slice);
            }
            self.counts.fetched += chunk.len() as u64;
        }
        Ok(deps)
    }

    /// Reads what it can of `missing` (slices of layer `below`) from the shared
    /// directory into `deps` and the cache; the ranks left to fetch. The coordinator
    /// is asked where they lie; a coordinator that cannot say (an older build, or a
    /// failed call) leaves them all to the fetch, and one that never can (the call is
    /// unimplemented) turns the directory off, as does a directory none of whose reads
    /// ever matched.
    async fn read_from_dir<L: Link>(
        &mut self,
        session: &Session<L>,
        below: u8,
        missing: Vec<u32>,
        deps: &mut HashMap<u32, Arc<Slice>>,
    ) -> Result<Vec<u32>, ClientError> {
        let Some(shared) = self.shared.clone() else {
            return Ok(missing);
        };
        let mut left = Vec::new();
        let mut failures = 0u64;
        let mut first_failure = None;
        for chunk in missing.chunks(gops_proto::MAX_FETCH_SLICES) {
            if self.shared.is_none() {
                // turned off by an earlier chunk's answer
                left.extend_from_slice(chunk);
                continue;
            }
            let request = FetchRequest {
                layer: u32::from(below),
                prize_ranks: chunk.to_vec(),
            };
            let sealed = shared.sealed_places(session.n(), session.objective(), below, chunk);
            if sealed.is_some() {
                self.counts.placed_by_sealed_index += chunk.len() as u64;
            }
            // one attempt: whatever goes wrong, the fetch below (with its retries) serves
            let located = match sealed {
                Some(places) => Ok(places),
                None => session
                    .client
                    .locate_slices(request)
                    .await
                    .map(|reply| reply.places),
            };
            let places = match located {
                Ok(places) => places,
                Err(status) if status.code() == tonic::Code::Unimplemented => {
                    warn!(
                        "the coordinator cannot locate slices (an older build): fetching them instead of reading {}",
                        shared.path().display()
                    );
                    self.shared = None;
                    left.extend_from_slice(chunk);
                    continue;
                }
                Err(status) => {
                    warn!(error = %status.message(), "locating slices failed; fetching them");
                    left.extend_from_slice(chunk);
                    continue;
                }
            };
            check_places(chunk, &places)?;
            // a slice kept inside sled (a db of format 3) has no place: fetched, no warning
            let (places, unplaced): (Vec<SlicePlace>, Vec<SlicePlace>) =
                places.into_iter().partition(|p| !p.file.is_empty());
            left.extend(unplaced.iter().map(|p| p.prize_rank));
            let (n, objective, reader) = (session.n(), session.objective(), shared.clone());
            let read = tokio::task::spawn_blocking(move || {
                read_places(&reader, n, objective, below, places)
            })
            .await
            .map_err(|e| ClientError::Local(format!("reading the shared directory: {e}")))?;
            for (rank, outcome) in read {
                match outcome {
                    Ok(slice) => {
                        let slice = Arc::new(slice);
                        self.cache.insert(below, rank, Arc::clone(&slice));
                        deps.insert(rank, slice);
                        self.counts.read_from_dir += 1;
                    }
                    Err(why) => {
                        failures += 1;
                        first_failure.get_or_insert(why);
                        left.push(rank);
                    }
                }
            }
        }
        if let Some(why) = first_failure {
            let never_matched = self.counts.read_from_dir == 0;
            warn!(
                slices = failures,
                first = %why,
                dir = %shared.path().display(),
                "slices not readable from the shared directory; fetching them"
            );
            if never_matched && self.shared.is_some() {
                warn!(
                    dir = %shared.path().display(),
                    "no slice has ever been read from the shared directory: not using it again"
                );
                self.shared = None;
            }
        }
        Ok(left)
    }
}

/// A locate reply must give one place per slice asked for, in order.
fn check_places(asked: &[u32], places: &[SlicePlace]) -> Result<(), ClientError> {
    if places.len() != asked.len()
        || places
            .iter()
            .zip(asked)
            .any(|(p, &rank)| p.prize_rank != rank)
    {
        return Err(ClientError::Protocol(format!(
            "asked where {} slices lie, got {} places, not in the order asked",
            asked.len(),
            places.len()
        )));
    }
    Ok(())
}

/// The slices at `places` (of layer `layer`) by prize rank, each read, checked and
/// decoded, or why not.
fn read_places(
    shared: &SharedDir,
    n: u8,
    objective: Objective,
    layer: u8,
    places: Vec<SlicePlace>,
) -> Vec<(u32, Result<Slice, String>)> {
    places
        .iter()
        .map(|place| {
            let slice = shared.read(place).and_then(|bytes| {
                Slice::decode_for(n, objective, layer, place.prize_rank, &bytes.body)
            });
            (place.prize_rank, slice)
        })
        .collect()
}

/// The slices `chunk` of layer `below`, fetched from the coordinator and checked.
async fn fetch<L: Link>(
    session: &Session<L>,
    below: u8,
    chunk: &[u32],
) -> Result<Vec<Slice>, ClientError> {
    let request = FetchRequest {
        layer: u32::from(below),
        prize_ranks: chunk.to_vec(),
    };
    let fetched = session
        .call("fetch", |c| {
            let r = request.clone();
            async move { c.fetch_slices(r).await }
        })
        .await?;
    let Called::Done(fetched) = fetched else {
        return Err(ClientError::Protocol(
            "fetch answered 'unknown worker'".into(),
        ));
    };
    accept_fetched(session.n(), session.objective(), below, chunk, fetched)
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
