//! `gops serve`: the strategy explorer and its query API over HTTP, on a solved db opened
//! as the other read-only commands open it. The flags are checked here (token file,
//! exposure, the address); the server is the `gops-explorer` crate.

use std::sync::Arc;

use gops_explorer::{Access, Explorer};
use gops_http::token_files::{Exposure, check_exposure, server_tokens};
use tracing::info;

use crate::args::ServeArgs;
use crate::db_open::read_options;
use crate::failure::Failure;
use crate::network::runtime;
use crate::signals::Termination;

/// The explorer's port: anyone who reaches it reads the db.
const EXPLORER_EXPOSURE: Exposure = Exposure {
    risk: "read the database through the explorer and its API",
    token_use: "then open the page as http://HOST:PORT/?token=<the token>",
    warning: "serving without a token (--insecure): anyone who reaches this address can read the database",
};

pub fn run(args: ServeArgs) -> Result<(), Failure> {
    let tokens = server_tokens(args.token_file.as_deref())?;
    check_exposure(
        args.listen,
        !tokens.is_empty(),
        args.insecure,
        &EXPLORER_EXPOSURE,
    )?;
    let listener = std::net::TcpListener::bind(args.listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| Failure::Usage(format!("cannot listen on {}: {e}", args.listen)))?;
    let address = listener
        .local_addr()
        .map_err(|e| Failure::Runtime(format!("cannot read the listening address: {e}")))?;
    let book = crate::db_open::open_reader(&args.db, &read_options(&args.on_demand))?;
    let (n, objective) = (book.n(), book.objective());
    let cache_bytes = usize::try_from(args.cache_mb << 20).unwrap_or(usize::MAX);
    let explorer = Arc::new(Explorer::new(book, cache_bytes));
    let access = Access::tokens(tokens);
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| Failure::Runtime(format!("cannot listen on {address}: {e}")))?;
        // before the address is announced: a signal right after it must be caught
        let termination = Termination::listen()?;
        let hint = match &args.token_file {
            Some(file) => format!(" (add ?token=<a token of {}>)", file.display()),
            None => String::new(),
        };
        crate::out!("gops explorer of the {n}-card {objective} game: http://{address}/{hint}");
        info!(%address, token = access.needs_token(), "explorer listening");
        tokio::select! {
            served = gops_explorer::serve(listener, explorer, access) => served
                .map_err(|e| Failure::Runtime(format!("the explorer stopped: {e}"))),
            () = termination.received() => {
                info!("explorer stopped");
                Ok(())
            }
        }
    })
}
