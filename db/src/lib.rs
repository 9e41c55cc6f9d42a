//! The strategy database of a GOPS game: the one sled store of a run, the sealed files
//! of its complete layers, and everything that reads a solved game. The coordinator
//! writes through [`store`]; the command line's read-only commands, the explorer, the
//! arena and Python read through [`book`] and [`read`].
//!
//! Layout:
//! - [`store`]: the sled store behind one typed handle (manifest, slices, layers), the
//!   data files of the slices' bytes (`store::files`), the sealed files of complete
//!   layers ([`sealed`]), and a layer's progress as the writer keeps it
//!   (`store::progress`: digests, largest gap, completion).
//! - [`book`]: a db opened to be read ([`book::Book`]), the solver of a book's layers
//!   below the ones it keeps (`book::on_demand`), and `gops book`'s writing
//!   (`book::write`).
//! - [`read`]: the one reader of a solved game ([`read::Reader`]): a state's value and
//!   the game after an upcard, through the slices a caller's way reaches; states from
//!   text and answers as JSON; the opening of a game.
//! - [`status`]: the run's status as a db records it, in a file beside the db while it is
//!   in use (`status::file`), and as `gops status --db` shows it (`status::db`).
//! - [`disk`]: a db's estimated final size, its size now, the free space for it, and the
//!   check before a solve that the rest fits (`disk::check`).
//! - [`export`]: the strategy database as rows, and (feature `export-files`, on by
//!   default) as Arrow batches (`export::arrow`) and files: CSV, JSON lines, Parquet,
//!   SQLite (`export::files`).
//! - [`verify`]: a db's layers re-checked: checksums, and states re-solved bit for bit,
//!   in batches that fit the memory (`verify::batch`; a book's lowest layer from states
//!   solved on demand).

pub mod book;
pub mod disk;
pub mod export;
pub mod read;
pub mod status;
pub mod store;
#[doc(hidden)]
pub mod test_db;
pub mod verify;

pub use store::sealed;
