//! The status of a run as its db records it: per layer, slices done, states, and once
//! complete its checksum and largest certificate gap (DESIGN §6 `status --json`); and
//! the status as the table people read (`table`). A db that a running writer holds:
//! [`crate::status::db`].

pub mod db;
pub mod file;
mod table;

use gops_common::plan::LayerSize;
use serde::{Deserialize, Serialize};

use crate::store::{Store, StoreError};

/// One layer in `status` (DESIGN §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerStatus {
    pub k: u8,
    pub slices: usize,
    pub done: usize,
    pub states: u64,
    /// Set once the layer is complete.
    pub checksum: Option<String>,
    pub max_gap: Option<f64>,
    pub complete: bool,
    /// Set once the layer is complete: values stored (for `win`, only the windows).
    pub stored_values: Option<u64>,
    /// Values a dense layout would store.
    pub dense_values: u64,
    /// Set once the layer is complete, where its record counts them (a layer completed
    /// by an older build has none): the matrix games solved for its slices, every run.
    #[serde(default)]
    pub matrix_games: Option<u64>,
    /// In a book, a layer below its lowest: not stored, solved on demand (its record and
    /// checksum those of the full db the book was made from).
    #[serde(default)]
    pub on_demand: bool,
}

/// The run's status (DESIGN §6 `status --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    pub n: u8,
    pub objective: String,
    pub complete: bool,
    pub layers: Vec<LayerStatus>,
    pub db: String,
    pub format_version: u32,
    /// Bytes the db's files take now.
    pub db_bytes: u64,
    /// The db's estimated size once complete ([`crate::disk::estimated_db_bytes`]).
    pub estimated_db_bytes: u64,
    /// In a book: the lowest layer it keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub book_from_layer: Option<u8>,
}

pub fn run_status(store: &Store) -> Result<RunStatus, StoreError> {
    let (n, objective) = (store.n(), store.objective());
    let mut layers = Vec::new();
    for k in 1..=n {
        let size = LayerSize::of(n, k, objective);
        let book = store.book().filter(|b| k < b.from_layer);
        let record = match book {
            Some(book) => Some(book.layers[usize::from(k) - 1].clone()),
            None => store.layer(k)?,
        };
        layers.push(LayerStatus {
            k,
            slices: size.slices,
            done: match (&record, book) {
                (_, Some(_)) => 0,
                (Some(r), None) => r.slices,
                (None, None) => store.stored_count(k)?,
            },
            on_demand: book.is_some(),
            states: size.states,
            complete: record.is_some(),
            checksum: record.as_ref().map(|r| r.checksum.clone()),
            max_gap: record.as_ref().map(|r| r.max_gap),
            stored_values: record.as_ref().map(|r| r.stored_values),
            dense_values: size.dense_values,
            matrix_games: record.as_ref().and_then(|r| r.matrix_games),
        });
    }
    Ok(RunStatus {
        n,
        objective: objective.name().to_string(),
        complete: layers.iter().all(|l| l.complete),
        layers,
        db: store.path().display().to_string(),
        format_version: store.manifest().format_version,
        db_bytes: crate::disk::db_bytes(store.path()),
        estimated_db_bytes: crate::disk::estimated_db_bytes(n, objective),
        book_from_layer: store.book().map(|b| b.from_layer),
    })
}
