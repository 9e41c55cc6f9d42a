//! `gops seal`: writes the sealed files of a db's complete layers that lack them (a db of
//! an earlier build), so that readers need neither its lock nor a writable disk. A writer
//! seals as it goes, and on opening a db; this does it without solving.

use gops_db::store::Store;

use crate::args::SealArgs;
use crate::failure::Failure;

pub fn run(args: SealArgs) -> Result<(), Failure> {
    // the writer's way: the lock taken, so no solve or coordinator is writing meanwhile
    let store = Store::open_live(&args.db)?;
    let sealed = store.seal_complete_layers()?;
    let complete = (1..=store.n())
        .map(|k| store.layer(k))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .count();
    let layers = |ks: &[u8]| ks.iter().map(u8::to_string).collect::<Vec<_>>().join(", ");
    if sealed.is_empty() {
        crate::out!(
            "{}: {complete} of {} layers complete, all sealed already; nothing written",
            args.db.display(),
            store.n()
        );
    } else {
        crate::out!(
            "{}: sealed layers {} ({complete} of {} layers complete, all sealed now)",
            args.db.display(),
            layers(&sealed),
            store.n()
        );
    }
    Ok(())
}
