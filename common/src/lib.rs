//! The GOPS game and its exact solution, with no async, no network and no storage:
//! everything the coordinator, the workers and the read side share.
//!
//! Layout:
//! - [`cards`]: card sets as bitmasks, parsing and validation of user input.
//! - [`binomial`]: binomial coefficients and colex ranks.
//! - [`pattern`]: the merged A/B pattern of two hands and its perfect rank per layer.
//! - [`prizes`]: colex rank of prize sets.
//! - [`objective`]: `points` and `win`, and the score-difference range each stores.
//! - [`reach`]: the score differences a `win` state can have at all.
//! - [`layout`]: a layer's canonical (antisymmetry-reduced) patterns and child table.
//! - [`kernel`]: the certified matrix-game solver, the hot path; `cpu`: the proof that
//!   this CPU has AVX2, on which the kernel's and the matrix fill's vector code rests.
//! - [`slice`]: a prize set's values, dense or windowed over score differences.
//! - [`slice_shape`]: the shape of a slice, which follows from the game alone;
//!   [`slice_table`]: where a stored slice's patterns lie, to read a few of them.
//! - [`engine`]: computes the slices of layer k from those of layer k - 1.
//! - [`matrix_fill`]: the engine's fast matrix fills (gathers where there is AVX2).
//! - [`state`]: concrete states and where their values are stored.
//! - [`checksum`]: slice digests and layer checksums.
//! - [`audit`]: stored states re-solved and compared bit for bit.
//! - [`shard`]: a pool of threads solving a shard of prize sets.
//! - [`plan`]: layer sizes and the split of a layer into shards.
//! - [`cache`]: a bounded LRU cache of slices.
//! - [`budget`]: the least memory a solve needs, and a budget split among caches.
//! - [`rules`]: a round played: a prize turned up, a bid drawn, the state after.
//! - [`sealed_index`]: the bytes of a sealed layer's index of its slices' records.
//! - [`solution`]: a whole game solved in memory (tests, benchmarks).
//! - [`subtree`]: one state's subtree solved on its own (a book's states below it);
//! - [`sync`]: the one policy for a poisoned lock.
//! - [`human`]: counts, durations, values and strategies as people read them.
//! - [`system`]: the allocator's settings, the file limit and the peak memory.

pub mod audit;
pub mod binomial;
pub mod budget;
pub mod cache;
pub mod cards;
pub mod checksum;
mod cpu;
pub mod engine;
pub mod human;
pub mod kernel;
pub mod layout;
pub mod matrix_fill;
pub mod objective;
pub mod pattern;
pub mod plan;
pub mod prizes;
pub mod reach;
pub mod rules;
pub mod sealed_index;
pub mod shard;
pub mod slice;
pub mod slice_shape;
pub mod slice_table;
pub mod solution;
pub mod state;
pub mod subtree;
pub mod sync;
pub mod system;

pub use cards::{CardSet, InputError, MAX_N};
pub use objective::Objective;
