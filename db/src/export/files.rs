//! The export's files: [`export_file`] writes the rows of [`export`] as CSV, JSON lines,
//! Parquet or SQLite. The file is written under a temporary name beside the target
//! ([`partial_path`]) and renamed when complete, so an interrupted or failed export never
//! leaves a file that looks whole. `gops export` and Python's `Db.export` both write
//! through here.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::Schema;
use gops_common::CardSet;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde::Serialize;

use crate::export::arrow::{export_schema, record_batch};
use crate::export::{ExportError, ExportOptions, ExportRow, ExportSummary, RowSink, export};
use crate::store::Store;

/// The file formats of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// One row a line, the header first; cards and probabilities as `1,3,7` texts.
    Csv,
    /// One JSON object a line, with the field names of `gops strategy --json`.
    Jsonl,
    /// Snappy-compressed columns with the Arrow schema of [`super::arrow`].
    Parquet,
    /// A `states` table (cards as texts) with an index, and a `meta` table.
    Sqlite,
}

impl FileFormat {
    pub const ALL: [FileFormat; 4] = [
        FileFormat::Csv,
        FileFormat::Jsonl,
        FileFormat::Parquet,
        FileFormat::Sqlite,
    ];

    /// The format's name, as the command line and Python take it.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Csv => "csv",
            FileFormat::Jsonl => "jsonl",
            FileFormat::Parquet => "parquet",
            FileFormat::Sqlite => "sqlite",
        }
    }

    /// The format named `name` (see [`FileFormat::name`]).
    pub fn named(name: &str) -> Option<FileFormat> {
        FileFormat::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Why an export file was not written. In every case the temporary file is removed and
/// the target is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum FileExportError {
    #[error("cannot create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The format's writer could not start (a SQLite or Parquet error).
    #[error("{0}")]
    Start(String),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("writing {} failed: {message}", path.display())]
    Finish { path: PathBuf, message: String },
    #[error("cannot move {} to {}: {source}", from.display(), to.display())]
    Rename {
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
}

impl FileExportError {
    /// Whether the caller's input is at fault (a path that cannot be created, layers
    /// outside the game) rather than the machine or the db.
    pub fn is_usage(&self) -> bool {
        match self {
            FileExportError::Create { .. } => true,
            FileExportError::Export(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// Where [`export_file`] writes before the rename: `out` with `.partial` appended.
pub fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}

/// Exports the chosen layers of `store` to `out` in `format`, replacing `out` if it
/// exists (the caller decides whether it may). `progress` is told the prize sets done
/// after every batch and returns false to stop, which ends in
/// [`ExportError::Interrupted`] with nothing written.
pub fn export_file(
    store: &Store,
    options: &ExportOptions,
    format: FileFormat,
    out: &Path,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<ExportSummary, FileExportError> {
    let partial = partial_path(out);
    let written = write_partial(store, options, format, &partial, progress).and_then(|summary| {
        std::fs::rename(&partial, out).map_err(|source| FileExportError::Rename {
            from: partial.clone(),
            to: out.to_path_buf(),
            source,
        })?;
        Ok(summary)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

fn write_partial(
    store: &Store,
    options: &ExportOptions,
    format: FileFormat,
    path: &Path,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<ExportSummary, FileExportError> {
    let create = |path: &Path| {
        File::create(path).map_err(|source| FileExportError::Create {
            path: path.to_path_buf(),
            source,
        })
    };
    let _ = std::fs::remove_file(path);
    let mut sink: Box<dyn FileSink> = match format {
        FileFormat::Csv => Box::new(CsvSink::new(create(path)?)?),
        FileFormat::Jsonl => Box::new(JsonlSink::new(create(path)?)),
        FileFormat::Parquet => Box::new(ParquetSink::new(create(path)?, store)?),
        FileFormat::Sqlite => Box::new(SqliteSink::new(path, store, options)?),
    };
    let summary = export(store, options, sink.as_mut(), progress)?;
    sink.finish().map_err(|message| FileExportError::Finish {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(summary)
}

/// A sink that writes a file and must be finished to be complete.
trait FileSink: RowSink {
    fn finish(self: Box<Self>) -> Result<(), String>;
}

/// Appends cards as the command line takes them, `1,3,7`: `CardSet`'s `Display` text,
/// written through `itoa` (the formatting machinery costs 22 % more instructions in a
/// CSV export, measured with callgrind).
fn push_cards(out: &mut String, cards: CardSet) {
    let mut number = itoa::Buffer::new();
    for (i, card) in cards.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(number.format(card));
    }
}

fn cards_text(cards: CardSet) -> String {
    let mut text = String::new();
    push_cards(&mut text, cards);
    text
}

/// Appends probabilities as `p1,p2,...`, each written so it reads back exactly.
fn push_probabilities(out: &mut String, probabilities: &[f64]) {
    let mut number = ryu::Buffer::new();
    for (i, p) in probabilities.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(number.format(*p));
    }
}

fn probabilities_text(probabilities: &[f64]) -> String {
    let mut text = String::new();
    push_probabilities(&mut text, probabilities);
    text
}

/// The column names, in file order.
pub const COLUMNS: [&str; 11] = [
    "k",
    "pattern",
    "a",
    "b",
    "prizes",
    "diff",
    "upcard",
    "value",
    "strategy_a",
    "strategy_b",
    "gap",
];

struct CsvSink {
    writer: csv::Writer<BufWriter<File>>,
}

impl CsvSink {
    fn new(file: File) -> Result<CsvSink, FileExportError> {
        let mut writer = csv::Writer::from_writer(BufWriter::new(file));
        writer
            .write_record(COLUMNS)
            .map_err(|e| FileExportError::Start(e.to_string()))?;
        Ok(CsvSink { writer })
    }
}

impl RowSink for CsvSink {
    fn write_rows(&mut self, rows: &[ExportRow]) -> Result<(), String> {
        let mut field = String::new();
        let mut number = ryu::Buffer::new();
        for row in rows {
            let writer = &mut self.writer;
            let result = (|| {
                let mut put = |text: &str| writer.write_field(text);
                put(itoa::Buffer::new().format(row.k))?;
                put(&row.pattern)?;
                for set in [row.a, row.b, row.prizes] {
                    field.clear();
                    push_cards(&mut field, set);
                    put(&field)?;
                }
                put(itoa::Buffer::new().format(row.diff))?;
                match row.upcard {
                    Some(c) => put(itoa::Buffer::new().format(c))?,
                    None => put("")?,
                }
                put(number.format(row.value))?;
                for probabilities in [&row.strategy_a, &row.strategy_b] {
                    field.clear();
                    push_probabilities(&mut field, probabilities);
                    put(&field)?;
                }
                match row.gap {
                    Some(g) => put(number.format(g))?,
                    None => put("")?,
                }
                writer.write_record(None::<&[u8]>)
            })();
            result.map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

impl FileSink for CsvSink {
    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.writer.flush().map_err(|e| e.to_string())
    }
}

struct JsonlSink {
    writer: BufWriter<File>,
}

impl JsonlSink {
    fn new(file: File) -> JsonlSink {
        JsonlSink {
            writer: BufWriter::new(file),
        }
    }
}

/// One JSON line: the field names of `gops strategy --json`.
#[derive(Serialize)]
struct JsonRow<'r> {
    k: u8,
    pattern: &'r str,
    a: Vec<u8>,
    b: Vec<u8>,
    prizes: Vec<u8>,
    diff: i32,
    upcard: Option<u8>,
    value: f64,
    strategy_a: Option<&'r [f64]>,
    strategy_b: Option<&'r [f64]>,
    gap: Option<f64>,
}

impl RowSink for JsonlSink {
    fn write_rows(&mut self, rows: &[ExportRow]) -> Result<(), String> {
        for row in rows {
            let revealed = row.upcard.is_some();
            let line = JsonRow {
                k: row.k,
                pattern: &row.pattern,
                a: row.a.to_vec(),
                b: row.b.to_vec(),
                prizes: row.prizes.to_vec(),
                diff: row.diff,
                upcard: row.upcard,
                value: row.value,
                strategy_a: revealed.then_some(row.strategy_a.as_slice()),
                strategy_b: revealed.then_some(row.strategy_b.as_slice()),
                gap: row.gap,
            };
            serde_json::to_writer(&mut self.writer, &line).map_err(|e| e.to_string())?;
            self.writer.write_all(b"\n").map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

impl FileSink for JsonlSink {
    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.writer.flush().map_err(|e| e.to_string())
    }
}

/// Rows buffered per Parquet record batch.
const PARQUET_BATCH_ROWS: usize = 65_536;

struct ParquetSink {
    writer: ArrowWriter<File>,
    schema: Arc<Schema>,
    pending: Vec<ExportRow>,
}

impl ParquetSink {
    fn new(file: File, store: &Store) -> Result<ParquetSink, FileExportError> {
        let schema = Arc::new(export_schema(store.n(), store.objective()));
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(PARQUET_BATCH_ROWS * 2))
            .build();
        let writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(properties))
            .map_err(|e| FileExportError::Start(format!("cannot start the Parquet file: {e}")))?;
        Ok(ParquetSink {
            writer,
            schema,
            pending: Vec::new(),
        })
    }

    fn flush_batch(&mut self) -> Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.pending);
        let batch = record_batch(&self.schema, &rows).map_err(|e| e.to_string())?;
        self.writer.write(&batch).map_err(|e| e.to_string())
    }
}

impl RowSink for ParquetSink {
    fn write_rows(&mut self, rows: &[ExportRow]) -> Result<(), String> {
        self.pending.extend_from_slice(rows);
        if self.pending.len() >= PARQUET_BATCH_ROWS {
            self.flush_batch()?;
        }
        Ok(())
    }
}

impl FileSink for ParquetSink {
    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.flush_batch()?;
        self.writer.close().map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Rows per SQLite transaction.
const SQLITE_COMMIT_ROWS: u64 = 200_000;

struct SqliteSink {
    connection: rusqlite::Connection,
    concrete: bool,
    uncommitted: u64,
}

const SQLITE_SCHEMA: &str = "
    PRAGMA journal_mode = OFF;
    PRAGMA synchronous = OFF;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE states (
        k INTEGER NOT NULL,
        pattern TEXT NOT NULL,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        prizes TEXT NOT NULL,
        diff INTEGER NOT NULL,
        upcard INTEGER,
        value REAL NOT NULL,
        strategy_a TEXT,
        strategy_b TEXT,
        gap REAL
    );
    BEGIN;
";

impl SqliteSink {
    fn new(
        path: &Path,
        store: &Store,
        options: &ExportOptions,
    ) -> Result<SqliteSink, FileExportError> {
        let sqlite = |e: rusqlite::Error| FileExportError::Start(format!("SQLite: {e}"));
        let connection = rusqlite::Connection::open(path).map_err(sqlite)?;
        connection.execute_batch(SQLITE_SCHEMA).map_err(sqlite)?;
        let meta = [
            ("format", "gops-export-1".to_string()),
            ("n", store.n().to_string()),
            ("objective", store.objective().name().to_string()),
            ("concrete", options.concrete.to_string()),
            ("all_diffs", options.all_diffs.to_string()),
            (
                "layers",
                format!("{}..{}", options.layers.start(), options.layers.end()),
            ),
            ("gops_version", env!("CARGO_PKG_VERSION").to_string()),
        ];
        for (key, value) in meta {
            connection
                .execute(
                    "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                    (key, value),
                )
                .map_err(sqlite)?;
        }
        Ok(SqliteSink {
            connection,
            concrete: options.concrete,
            uncommitted: 0,
        })
    }
}

impl RowSink for SqliteSink {
    fn write_rows(&mut self, rows: &[ExportRow]) -> Result<(), String> {
        let mut insert = self
            .connection
            .prepare_cached(
                "INSERT INTO states (k, pattern, a, b, prizes, diff, upcard, value, strategy_a, strategy_b, gap)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .map_err(|e| e.to_string())?;
        for row in rows {
            let revealed = row.upcard.is_some();
            insert
                .execute(rusqlite::params![
                    row.k,
                    row.pattern,
                    cards_text(row.a),
                    cards_text(row.b),
                    cards_text(row.prizes),
                    row.diff,
                    row.upcard,
                    row.value,
                    revealed.then(|| probabilities_text(&row.strategy_a)),
                    revealed.then(|| probabilities_text(&row.strategy_b)),
                    row.gap,
                ])
                .map_err(|e| e.to_string())?;
        }
        drop(insert);
        self.uncommitted += rows.len() as u64;
        if self.uncommitted >= SQLITE_COMMIT_ROWS {
            self.connection
                .execute_batch("COMMIT; BEGIN;")
                .map_err(|e| e.to_string())?;
            self.uncommitted = 0;
        }
        Ok(())
    }
}

impl FileSink for SqliteSink {
    fn finish(self: Box<Self>) -> Result<(), String> {
        // a lookup names the state by its cards (concrete) or by its pattern (canonical)
        let index = if self.concrete {
            "CREATE INDEX states_by_hands ON states (a, b, prizes, diff, upcard);"
        } else {
            "CREATE INDEX states_by_pattern ON states (pattern, prizes, diff, upcard);"
        };
        self.connection
            .execute_batch(&format!("COMMIT; {index} ANALYZE;"))
            .map_err(|e| e.to_string())?;
        self.connection.close().map_err(|(_, e)| e.to_string())
    }
}

#[cfg(test)]
mod tests;
