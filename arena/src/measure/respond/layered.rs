//! The best response walked two layers at a time over every concrete state, for a model
//! that keeps every hand of B (a uniform or equilibrium part): there the model's states
//! are all the states, so instead of listing them and keeping each in a hash map (the
//! sparse walk of [`super::Responder`]), the states of a layer are numbered
//! (prizes, A's hand, B's hand and, for `win`, the score difference) and their results
//! held in one array, the layer below's only until the layer above is done.
//!
//! A layer with `k` cards left holds, for each set `P` of `k` prizes left, every pair of
//! hands of `k` cards each (subsets of the start's hands) and, for `win`, every score
//! difference that can occur and is not yet decided: the start's plus a signed sum of
//! the prizes played since, within the prizes left's sum. Each
//! state combines its children exactly as the sparse walk does ([`super::Revealed`]),
//! in the same order, so the two give the same numbers bit for bit.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use gops_common::binomial::binomial;
use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::reach::Reach;
use gops_common::rules::play_round;
use gops_common::state::GameState;
use gops_db::read::{CachedReader, QueryError, Reader, Slices};

use super::{Results, Revealed, over_upcards, scored, terminal};
use crate::agent::Model;

/// Subsets of the start's cards (`k0` of them) by their positions: bit `p` for the
/// `p`-th card, ascending. Each subset of `k` positions has a rank among those of its
/// size (the combinatorial number system).
struct Subsets {
    /// The rank of each mask among the masks of its size.
    rank: Vec<u32>,
    /// The masks of each size, by rank.
    by_size: Vec<Vec<u16>>,
}

impl Subsets {
    fn new(k0: usize) -> Subsets {
        let mut by_size = vec![Vec::new(); k0 + 1];
        let mut rank = vec![0u32; 1 << k0];
        // colex order: a mask's rank is the sum over its i-th set bit p of C(p, i + 1),
        // the same as listing masks in increasing value within each size
        for mask in 0..1u32 << k0 {
            let size = mask.count_ones() as usize;
            rank[mask as usize] = by_size[size].len() as u32;
            by_size[size].push(mask as u16);
        }
        Subsets { rank, by_size }
    }
}

/// The numbering of one layer: `k` cards left.
struct Layer {
    k: usize,
    /// Hands of `k` cards: C(k0, k).
    hands: u64,
    /// Whether states are told apart by their score difference (`win`).
    by_diff: bool,
    /// For each prize set (by rank): its first state, and the score differences kept
    /// (for `points`, which does not look at them, one: the start's).
    first: Vec<u64>,
    diffs: Vec<Vec<i32>>,
    /// For each prize set, the place among its differences of each difference `d`
    /// (at `d + sum of the prizes`), or `u32::MAX` where it is not kept.
    places: Vec<Vec<u32>>,
    len: u64,
}

impl Layer {
    fn new(walk: &Walk<'_>, k: usize) -> Layer {
        let hands = binomial(walk.k0 as u32, k as u32);
        let by_diff = walk.objective == Objective::Win;
        let (mut first, mut diffs, mut places) = (Vec::new(), Vec::new(), Vec::new());
        let mut len = 0u64;
        for &mask in &walk.subsets.by_size[k] {
            let prizes = walk.cards(&walk.prizes, mask);
            let (kept, place) = if by_diff {
                let reach = Reach::below(walk.from.prizes, walk.from.diff, prizes);
                let range = reach.diff_range();
                let kept: Vec<i32> = reach.positions().map(|p| p as i32 - range).collect();
                let mut place = vec![u32::MAX; reach.width()];
                for (i, &d) in kept.iter().enumerate() {
                    place[(d + range) as usize] = i as u32;
                }
                (kept, place)
            } else {
                (vec![walk.from.diff], Vec::new())
            };
            first.push(len);
            len += hands * hands * kept.len() as u64;
            diffs.push(kept);
            places.push(place);
        }
        Layer {
            k,
            hands,
            by_diff,
            first,
            diffs,
            places,
            len,
        }
    }

    /// The states of prize set `p` (by rank): every pair of hands, at each difference.
    fn states_at(&self, p: usize) -> usize {
        (self.hands * self.hands) as usize * self.diffs[p].len()
    }

    /// The index of a state of this layer, or `None` for a score difference it does not
    /// keep (one the prizes left cannot overturn, or one that cannot occur).
    fn index(&self, prizes: u32, a: u32, b: u32, diff: i32) -> Option<usize> {
        let p = prizes as usize;
        let place = if self.by_diff {
            let range = (self.places[p].len() / 2) as i32;
            let at = usize::try_from(diff + range).ok()?;
            *self.places[p].get(at).filter(|&&i| i != u32::MAX)?
        } else {
            0
        };
        let width = self.diffs[p].len() as u64;
        let pair = u64::from(a) * self.hands + u64::from(b);
        Some((self.first[p] + pair * width + u64::from(place)) as usize)
    }
}

/// The states a layered walk from `from` evaluates, in all and at most in two adjacent
/// layers (what it holds at once).
pub fn layered_states(objective: Objective, from: &GameState) -> (u64, u64) {
    let walk = Walk::new(objective, from);
    let lens: Vec<u64> = (1..=walk.k0).map(|k| Layer::new(&walk, k).len).collect();
    let held = lens
        .windows(2)
        .map(|w| w[0] + w[1])
        .chain(lens.first().copied())
        .max()
        .unwrap_or(0);
    (lens.iter().sum(), held)
}

/// The walk's fixed parts: the start, its cards by position, the subsets' numbering.
struct Walk<'a> {
    objective: Objective,
    from: &'a GameState,
    k0: usize,
    a: Vec<u8>,
    b: Vec<u8>,
    prizes: Vec<u8>,
    subsets: Subsets,
}

impl<'a> Walk<'a> {
    fn new(objective: Objective, from: &'a GameState) -> Walk<'a> {
        let k0 = from.prizes.len();
        Walk {
            objective,
            from,
            k0,
            a: from.a.to_vec(),
            b: from.b.to_vec(),
            prizes: from.prizes.to_vec(),
            subsets: Subsets::new(k0),
        }
    }

    /// The cards of `by_position` at the positions of `mask`.
    fn cards(&self, by_position: &[u8], mask: u16) -> CardSet {
        let mut set = CardSet::EMPTY;
        for (p, &card) in by_position.iter().enumerate() {
            if mask & 1 << p != 0 {
                set = set.union(CardSet::from_cards(&[card]));
            }
        }
        set
    }
}

/// Slices each helper thread's reader keeps in memory.
const HELPER_CACHE_BYTES: usize = 512 << 20;

/// A's results against `model` from `from`, walked from the bottom layer up, two layers
/// held at a time, each layer's prize sets shared out among `threads` threads (the
/// caller's reader and one reader of the same book for each other thread): the same
/// numbers for any number of threads. With the number of states evaluated; `progress`
/// hears that number now and then.
pub fn respond_layered<S: Slices>(
    reader: &mut Reader<'_, S>,
    model: &Model,
    from: &GameState,
    threads: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<(Results, u64), QueryError> {
    let objective = reader.objective();
    if let Some(end) = terminal(objective, from) {
        return Ok((end, 0));
    }
    let walk = Walk::new(objective, from);
    let mut below: Option<(Layer, Vec<Results>)> = None;
    let evaluated = AtomicU64::new(0);
    for k in 1..=walk.k0 {
        let layer = Layer::new(&walk, k);
        let mut results = vec![Results::default(); layer.len as usize];
        fill_layer(
            reader,
            model,
            &walk,
            &below,
            &layer,
            &mut results,
            threads,
            &evaluated,
            progress,
        )?;
        below = Some((layer, results));
    }
    let (layer, results) = below.expect("the start has a prize left");
    let index = layer
        .index(0, 0, 0, from.diff)
        .expect("the start is kept: it is not decided");
    Ok((results[index], evaluated.into_inner()))
}

/// The results of every state of `layer`, its prize sets shared out among `threads`
/// threads.
#[allow(clippy::too_many_arguments)]
fn fill_layer<S: Slices>(
    reader: &mut Reader<'_, S>,
    model: &Model,
    walk: &Walk<'_>,
    below: &Option<(Layer, Vec<Results>)>,
    layer: &Layer,
    results: &mut [Results],
    threads: usize,
    evaluated: &AtomicU64,
    progress: &mut dyn FnMut(u64),
) -> Result<(), QueryError> {
    let book = reader.book();
    {
        // one segment of the layer's results a prize set, handed out in turn
        let mut segments = Vec::with_capacity(layer.first.len());
        let mut rest = results;
        for p in 0..layer.diffs.len() {
            let (segment, tail) = rest.split_at_mut(layer.states_at(p));
            segments.push((p, segment));
            rest = tail;
        }
        let shared = Shared {
            model,
            walk,
            below,
            layer,
            queue: Mutex::new(segments.into_iter()),
            evaluated,
            failed: AtomicBool::new(false),
        };
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads.max(1))
                .map(|_| {
                    let shared = &shared;
                    scope.spawn(move || {
                        let mut reader = CachedReader::cached(book, HELPER_CACHE_BYTES);
                        shared.work(&mut reader, &mut |_| {})
                    })
                })
                .collect();
            let mine = shared.work(reader, progress);
            helpers
                .into_iter()
                .map(|h| h.join().expect("a helper thread of the walk panicked"))
                .fold(mine, Result::and)
        })
    }
}

/// What the threads of one layer share: the walk, the layer below, the segments of this
/// layer's results still to fill.
struct Shared<'s, 'r> {
    model: &'s Model,
    walk: &'s Walk<'s>,
    below: &'s Option<(Layer, Vec<Results>)>,
    layer: &'s Layer,
    queue: Mutex<std::vec::IntoIter<(usize, &'r mut [Results])>>,
    evaluated: &'s AtomicU64,
    failed: AtomicBool,
}

impl Shared<'_, '_> {
    /// Fills segments until none is left (or another thread failed).
    fn work<S: Slices>(
        &self,
        reader: &mut Reader<'_, S>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), QueryError> {
        loop {
            let next = self
                .queue
                .lock()
                .expect("no thread panics holding it")
                .next();
            let Some((p, segment)) = next else {
                return Ok(());
            };
            if self.failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            if let Err(e) = self.fill(reader, p, segment) {
                self.failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
            let filled = segment.len() as u64;
            let done = self.evaluated.fetch_add(filled, Ordering::Relaxed);
            progress(done + filled);
        }
    }

    /// The results of the states of prize set `p` (by rank), in the layer's order.
    fn fill<S: Slices>(
        &self,
        reader: &mut Reader<'_, S>,
        p: usize,
        segment: &mut [Results],
    ) -> Result<(), QueryError> {
        let (walk, layer) = (self.walk, self.layer);
        let masks = &walk.subsets.by_size[layer.k];
        let p_mask = masks[p];
        let prizes = walk.cards(&walk.prizes, p_mask);
        let mut out = segment.iter_mut();
        for &a_mask in masks {
            let a = walk.cards(&walk.a, a_mask);
            for &b_mask in masks {
                let b = walk.cards(&walk.b, b_mask);
                for &diff in &layer.diffs[p] {
                    let state = GameState {
                        n: walk.from.n,
                        a,
                        b,
                        prizes,
                        diff,
                    };
                    let masks = (p_mask, a_mask, b_mask);
                    let r = state_results(reader, self.model, walk, self.below, &state, masks)?;
                    *out.next().expect("a place for each state") = r;
                }
            }
        }
        Ok(())
    }
}

/// One state's results, its children read from the layer below (`None` below one card).
fn state_results<S: Slices>(
    reader: &mut Reader<'_, S>,
    model: &Model,
    walk: &Walk<'_>,
    below: &Option<(Layer, Vec<Results>)>,
    state: &GameState,
    (p_mask, a_mask, b_mask): (u16, u16, u16),
) -> Result<Results, QueryError> {
    let positions = |mask: u16| (0..walk.k0).filter(move |p| mask & 1 << p != 0);
    let (a_at, b_at): (Vec<usize>, Vec<usize>) =
        (positions(a_mask).collect(), positions(b_mask).collect());
    let ranks = &walk.subsets.rank;
    let mut up = positions(p_mask);
    over_upcards(state, |upcard| {
        let p_at = up.next().expect("one position a prize");
        let revealed = Revealed::read(reader, model, state, upcard)?;
        let p_child = ranks[usize::from(p_mask) & !(1 << p_at)];
        let (_, r) = revealed.combine(|i, j| {
            let (a, b) = (walk.a[a_at[i]], walk.b[b_at[j]]);
            let child = play_round(state, upcard, a, b);
            let now = scored(walk.objective, state, &child);
            if let Some(end) = terminal(walk.objective, &child) {
                return Ok((now, end));
            }
            let (layer, results) = below.as_ref().expect("a child with prizes left");
            let a_child = ranks[usize::from(a_mask) & !(1 << a_at[i])];
            let b_child = ranks[usize::from(b_mask) & !(1 << b_at[j])];
            let index = layer
                .index(p_child, a_child, b_child, child.diff)
                .expect("a child not decided is kept in the layer below");
            debug_assert_eq!(layer.k, child.prizes.len());
            Ok((now, results[index]))
        })?;
        Ok(r)
    })
}
