//! The strategy database of a GOPS game: the one sled store of a run, the sealed files
//! of its complete layers, and everything that reads a solved game. The coordinator writes through [`store`] and keeps a layer's
//! bookkeeping in [`progress`]; the command line's read-only commands use the rest.
//!
//! Layout:
//! - [`store`]: the sled store behind one typed handle (manifest, slices, layers).
//! - [`slice_files`]: the append-only data files that hold the slices' bytes.
//! - [`sealed`] (a part of the store, `store::sealed`): a complete layer's immutable
//!   index and record files, read without sled.
//! - [`progress`]: one record of a layer's progress (digests, largest gap, completion).
//! - [`status`]: the run's status as a db records it.
//! - [`status_file`]: that status in a file beside the db, for a reader while it is in use;
//!   [`db_status`]: a db's status whoever holds it, as `gops status --db` shows it.
//! - [`disk`]: a db's estimated final size, its size now, and the free space for it;
//!   [`disk_check`]: the check before a solve that the rest fits.
//! - [`query`]: a state's value and the strategies of a revealed game.
//! - [`point_reads`]: the read side's slices, large ones read only where a lookup needs.
//! - [`book`]: a book: the top layers of a complete db, copied, the rest solved on demand.
//! - [`on_demand`]: a book's states below its layers, their subtrees solved and kept.
//! - [`oracle`]: a solved game answering for concrete states, cached (play, simulate).
//! - [`opening`]: the value of a game and A's first bids, as `gops solve` shows them.
//! - [`shared`]: the same answers for many threads at once (the explorer's server).
//! - [`export`]: the strategy database as rows, a batch of prize sets at a time.
//! - [`export_arrow`]: those rows as Arrow record batches (Parquet, Python).
//! - [`export_files`]: those rows written to a file: CSV, JSON lines, Parquet, SQLite.
//! - [`policy`]: bidding policies, simulated play and exact exploitability.
//! - [`verify`]: a db's layers re-checked: checksums, and states re-solved bit for bit (a
//!   book's lowest layer from states solved on demand, in its child `book`).
//! - [`verify_batch`]: verify's batches of prize sets, their slices below within a limit.

pub mod book;
pub mod db_status;
pub mod disk;
pub mod disk_check;
pub mod export;
#[cfg(feature = "export-files")]
pub mod export_arrow;
#[cfg(feature = "export-files")]
pub mod export_files;
pub mod on_demand;
pub mod opening;
pub mod oracle;
pub mod point_reads;
pub mod policy;
pub mod progress;
pub mod query;
pub mod shared;
pub mod slice_files;
pub mod status;
pub mod status_file;
pub mod store;
#[doc(hidden)]
pub mod test_db;
pub use store::sealed;
pub mod verify;
pub mod verify_batch;
