//! The GOPS strategy explorer behind `gops serve`: an HTTP server over one solved db,
//! read-only, answering the query API (`/api/value` and `/api/strategy` as `gops value
//! --json` and `gops strategy --json` do, `/api/step` into a subgame, `/api/game`) and
//! games against the equilibrium (`/api/play/...`), the solves on demand under way
//! (`/api/solving`), and serving the page that uses them.
//!
//! Layout:
//! - [`params`]: query strings read into states, cards and numbers (400 reasons).
//! - [`api`]: the answers, plain blocking functions over the shared solved game.
//! - [`play`]: games in play against the equilibrium, the bot's bid sealed first.
//! - [`solving`]: the solves on demand under way, for the page's progress view.
//! - [`access`]: the token check (bearer header or `token` parameter).
//! - [`page`]: the embedded page and its content security policy.
//! - [`server`]: the axum router, thin handlers, and the accept loop with its limits.

pub mod access;
pub mod api;
pub mod coach;
pub mod page;
pub mod params;
pub mod play;
pub mod server;
pub mod solving;

pub use access::Access;
pub use api::Explorer;
pub use server::serve;
