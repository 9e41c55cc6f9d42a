//! `gops status`: the layers of a run, from its db (`--db`, `gops_db::status::db::DbStatus`)
//! or from its running coordinator (`--coordinator`, which adds the open layer, the
//! workers and the rate: `gops_coordinator::report::status::ClusterStatus`). Both are typed
//! values, printed as their tables or as JSON made by serde.

use gops_coordinator::report::status::ClusterStatus;
use gops_db::status::db::DbStatus;
use gops_proto::v1::StatusRequest;
use gops_worker::backoff::tls_refusal;
use gops_worker::connect_with_ca;
use tonic::Code;

use crate::args::StatusArgs;
use crate::failure::Failure;
use crate::network::{client_credentials, runtime};

pub fn status(args: StatusArgs) -> Result<(), Failure> {
    let Some(db) = &args.db else {
        return remote_status(&args);
    };
    let reader = crate::db_open::open_store(db)?;
    let status = DbStatus::read(reader)?;
    if args.json {
        crate::out!("{}", crate::output::json_line(&status));
    } else {
        crate::out!("{status}");
    }
    Ok(())
}

fn remote_status(args: &StatusArgs) -> Result<(), Failure> {
    let url = args
        .coordinator
        .clone()
        .expect("clap requires --db or --coordinator");
    let (token, tls_ca) = client_credentials(args.token_file.as_deref(), args.tls_ca.as_deref())?;
    let rt = runtime()?;
    let reply = rt.block_on(async move {
        let mut client = connect_with_ca(&url, token.as_deref(), tls_ca.as_deref())
            .map_err(|e| Failure::Usage(e.to_string()))?;
        client
            .status(StatusRequest {})
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| {
                let why = match tls_refusal(&s) {
                    Some(tls) => format!("TLS with the coordinator failed: {tls}"),
                    // what a plain client makes of a TLS server's answer
                    None if url.starts_with("http://")
                        && matches!(s.code(), Code::Cancelled | Code::Unknown) =>
                    {
                        format!(
                            "{} (if the coordinator serves TLS, use https:// and --tls-ca)",
                            s.message()
                        )
                    }
                    None => s.message().to_string(),
                };
                Failure::Runtime(format!("status from {url}: {why}"))
            })
    })?;
    let status = ClusterStatus::from_proto(reply)
        .map_err(|e| Failure::Runtime(format!("bad status from the coordinator: {e}")))?;
    if args.json {
        crate::out!("{}", crate::output::json_line(&status));
        return Ok(());
    }
    crate::out!("{status}");
    Ok(())
}
