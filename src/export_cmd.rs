//! `gops export`: the strategy database written to a file (CSV, JSON lines, Parquet or
//! SQLite, by `gops_db::export::files`) with a progress bar; Ctrl-C stops it and leaves no
//! file behind.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gops_common::human::count;
use gops_db::book::ReadOptions;
use gops_db::export::files::{FileExportError, export_file};
use gops_db::export::{ExportError, ExportOptions, slices_in};
use tracing::warn;

use crate::args::ExportArgs;
use crate::failure::Failure;

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    if args.out.exists() && !args.force {
        return Err(Failure::Usage(format!(
            "{} exists; choose another --out or pass --force to replace it",
            args.out.display()
        )));
    }
    let (book, layers) = crate::db_open::open_checked(&args.db, &ReadOptions::default(), |n| {
        crate::input::parse_layers(args.layers.as_deref(), n)
    })?;
    let options = ExportOptions {
        layers,
        concrete: args.concrete,
        all_diffs: args.all_diffs,
    };
    let format = args.format.file_format();
    let stop = Arc::new(AtomicBool::new(false));
    let on_signal = Arc::clone(&stop);
    if let Err(e) = ctrlc::set_handler(move || on_signal.store(true, Ordering::SeqCst)) {
        warn!(error = %e, "no Ctrl-C handler");
    }
    let started = std::time::Instant::now();
    let bar = crate::progress::count_bar(slices_in(book.n(), &options.layers), "export");
    let written = export_file(book.store(), &options, format, &args.out, &mut |done| {
        bar.set_position(done);
        !stop.load(Ordering::SeqCst)
    });
    bar.finish_and_clear();
    let summary = written.map_err(|e| match e {
        FileExportError::Export(ExportError::Interrupted) => {
            Failure::Interrupted("export interrupted; nothing was written".into())
        }
        FileExportError::Export(e) => Failure::from(e),
        e if e.is_usage() => Failure::Usage(e.to_string()),
        e => Failure::Runtime(e.to_string()),
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&args.out).map_or(0, |m| m.len());
    crate::out!(
        "exported {} rows of {} prize sets to {} ({}, {} bytes) in {seconds:.1} s ({} rows/s)",
        count(summary.rows),
        count(summary.slices),
        args.out.display(),
        format.name(),
        count(bytes),
        count((summary.rows as f64 / seconds.max(1e-9)) as u64)
    );
    Ok(())
}
