//! Slice cache benchmark: nanoseconds per insert into a full `SliceCache` (each insert
//! evicts the least recently used slice) and per hit, by how many slices it holds. A
//! coordinator's check cache or a worker's cache holds up to one layer's slices (12,870
//! at 16 cards), and every miss inserts, so the eviction's cost per slice loaded is what
//! this shows. The slices are one value each: the bookkeeping, not the bytes.
//!
//! Run: `cargo bench -p gops-common --bench cache`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use gops_common::cache::SliceCache;
use gops_common::slice::Slice;

fn main() {
    let one = Arc::new(Slice::dense(0, vec![0.0]));
    let per_slice = {
        let mut probe = SliceCache::new(usize::MAX);
        probe.insert(0, 0, Arc::clone(&one));
        probe.bytes()
    };
    println!("slices held | ns per insert (evicting one) | ns per hit");
    for held in [100u32, 1_000, 12_870] {
        let mut cache = SliceCache::new(held as usize * per_slice);
        for rank in 0..held {
            cache.insert(8, rank, Arc::clone(&one));
        }
        assert_eq!(cache.len(), held as usize);
        let inserts = 200_000u32;
        let started = Instant::now();
        for rank in held..held + inserts {
            cache.insert(8, black_box(rank), Arc::clone(&one));
        }
        let insert_ns = started.elapsed().as_nanos() as f64 / f64::from(inserts);
        assert_eq!(cache.len(), held as usize);
        // the slices held now are the last `held` inserted
        let first = inserts;
        let started = Instant::now();
        let mut hits = 0u32;
        for i in 0..inserts {
            hits += u32::from(cache.get(8, black_box(first + i % held)).is_some());
        }
        let hit_ns = started.elapsed().as_nanos() as f64 / f64::from(inserts);
        assert_eq!(hits, inserts);
        println!("{held} | {insert_ns:.0} | {hit_ns:.0}");
    }
}
