//! Exported rows as Arrow record batches: the one schema of the Parquet export and of
//! the Python package's `Db.to_arrow`, the batch built from [`ExportRow`]s, and a
//! [`RowSink`] that keeps the batches in memory.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int32Builder, ListBuilder, StringBuilder, UInt8Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use gops_common::objective::Objective;

use crate::export::{ExportRow, RowSink};

/// The columns of an export (see `docs/reference/export.md`), with the game in the
/// schema's metadata (`gops.n`, `gops.objective`).
pub fn export_schema(n: u8, objective: Objective) -> Schema {
    let cards = || DataType::List(item(DataType::UInt8));
    let probabilities = || DataType::List(item(DataType::Float64));
    Schema::new(vec![
        Field::new("k", DataType::UInt8, false),
        Field::new("pattern", DataType::Utf8, false),
        Field::new("a", cards(), false),
        Field::new("b", cards(), false),
        Field::new("prizes", cards(), false),
        Field::new("diff", DataType::Int32, false),
        Field::new("upcard", DataType::UInt8, true),
        Field::new("value", DataType::Float64, false),
        Field::new("strategy_a", probabilities(), true),
        Field::new("strategy_b", probabilities(), true),
        Field::new("gap", DataType::Float64, true),
    ])
    .with_metadata(HashMap::from([
        ("gops.n".to_string(), n.to_string()),
        ("gops.objective".to_string(), objective.name().to_string()),
    ]))
}

/// A list's items: never null.
fn item(data_type: DataType) -> Arc<Field> {
    Arc::new(Field::new("item", data_type, false))
}

/// `rows` as one record batch of `schema` (made by [`export_schema`]).
pub fn record_batch(schema: &Arc<Schema>, rows: &[ExportRow]) -> Result<RecordBatch, ArrowError> {
    let mut k = UInt8Builder::new();
    let mut pattern = StringBuilder::new();
    let cards = || ListBuilder::new(UInt8Builder::new()).with_field(item(DataType::UInt8));
    let (mut a, mut b, mut prizes) = (cards(), cards(), cards());
    let mut diff = Int32Builder::new();
    let mut upcard = UInt8Builder::new();
    let mut value = Float64Builder::new();
    let probabilities =
        || ListBuilder::new(Float64Builder::new()).with_field(item(DataType::Float64));
    let (mut strategy_a, mut strategy_b) = (probabilities(), probabilities());
    let mut gap = Float64Builder::new();
    for row in rows {
        k.append_value(row.k);
        pattern.append_value(&row.pattern);
        for (builder, set) in [(&mut a, row.a), (&mut b, row.b), (&mut prizes, row.prizes)] {
            builder.values().append_slice(&set.to_vec());
            builder.append(true);
        }
        diff.append_value(row.diff);
        upcard.append_option(row.upcard);
        value.append_value(row.value);
        let revealed = row.upcard.is_some();
        for (builder, probabilities) in [
            (&mut strategy_a, &row.strategy_a),
            (&mut strategy_b, &row.strategy_b),
        ] {
            builder.values().append_slice(probabilities);
            builder.append(revealed);
        }
        gap.append_option(row.gap);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(k.finish()),
        Arc::new(pattern.finish()),
        Arc::new(a.finish()),
        Arc::new(b.finish()),
        Arc::new(prizes.finish()),
        Arc::new(diff.finish()),
        Arc::new(upcard.finish()),
        Arc::new(value.finish()),
        Arc::new(strategy_a.finish()),
        Arc::new(strategy_b.finish()),
        Arc::new(gap.finish()),
    ];
    RecordBatch::try_new(Arc::clone(schema), columns)
}

/// Rows per batch of a [`BatchCollector`].
pub const BATCH_ROWS: usize = 65_536;

/// A sink that keeps the export in memory as record batches of about [`BATCH_ROWS`].
pub struct BatchCollector {
    schema: Arc<Schema>,
    pending: Vec<ExportRow>,
    batches: Vec<RecordBatch>,
}

impl BatchCollector {
    pub fn new(n: u8, objective: Objective) -> BatchCollector {
        BatchCollector {
            schema: Arc::new(export_schema(n, objective)),
            pending: Vec::new(),
            batches: Vec::new(),
        }
    }

    fn flush(&mut self) -> Result<(), String> {
        if !self.pending.is_empty() {
            let rows = std::mem::take(&mut self.pending);
            let batch = record_batch(&self.schema, &rows).map_err(|e| e.to_string())?;
            self.batches.push(batch);
        }
        Ok(())
    }

    /// The schema and every batch, the last rows included.
    pub fn finish(mut self) -> Result<(Arc<Schema>, Vec<RecordBatch>), String> {
        self.flush()?;
        Ok((self.schema, self.batches))
    }
}

impl RowSink for BatchCollector {
    fn write_rows(&mut self, rows: &[ExportRow]) -> Result<(), String> {
        self.pending.extend_from_slice(rows);
        if self.pending.len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }
}
