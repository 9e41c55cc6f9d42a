//! `gops book`: writes the top layers of a complete db as a book, which every reader
//! answers for the whole game from (the layers below solved on demand).

use gops_db::book::write_book;

use crate::args::BookArgs;
use crate::failure::Failure;

pub fn run(args: BookArgs) -> Result<(), Failure> {
    let full = crate::db_open::open_store(&args.db)?;
    let written = write_book(&full, args.from_layer, &args.out).map_err(|e| {
        if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Runtime(e.to_string())
        }
    })?;
    crate::out!(
        "{}: book of the {}-card {} game, layers {} to {} ({} bytes); layers below {} are solved on demand",
        args.out.display(),
        full.n(),
        full.objective(),
        written.from_layer,
        full.n(),
        written.bytes,
        written.from_layer
    );
    for record in &written.layers {
        let kept = if record.k >= written.from_layer {
            "kept"
        } else {
            "on demand"
        };
        crate::out!("  layer {:>2}  {kept:<9}  {}", record.k, record.checksum);
    }
    Ok(())
}
