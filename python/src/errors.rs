//! The package's exceptions and the mapping of the solver's errors onto Python's: bad
//! input is a `ValueError`, a missing db a `FileNotFoundError`, a damaged, locked or
//! unfinished db a `gops.DbError`, the machine's own trouble an `OSError`, anything
//! else a `gops.GopsError` (the base of `DbError`). Messages are the command line's.

use gops_coordinator::error::RunFailure;
use gops_db::export::ExportError;
use gops_db::export::files::FileExportError;
use gops_db::read::QueryError;
use gops_db::store::StoreError;
use gops_local::LocalError;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::{PyErr, create_exception};

create_exception!(
    gops,
    GopsError,
    PyException,
    "An error of the gops solver that is neither bad input nor the machine's."
);
create_exception!(
    gops,
    DbError,
    GopsError,
    "A strategy db that cannot answer: damaged, in use by another process, of an unsupported format, or not solved that far."
);

pub fn store_error(e: StoreError) -> PyErr {
    let message = e.to_string();
    match e {
        StoreError::Missing(_) => PyFileNotFoundError::new_err(message),
        StoreError::Mismatch { .. }
        | StoreError::IsBook(_)
        | StoreError::KeepMismatch { .. }
        | StoreError::KeepOutOfRange { .. } => PyValueError::new_err(message),
        StoreError::Io(_) | StoreError::DiskFull(_) => PyOSError::new_err(message),
        StoreError::NotADatabase(_)
        | StoreError::Locked(_)
        | StoreError::Corrupt(_)
        | StoreError::DamagedSlice { .. }
        | StoreError::DamagedLayer { .. }
        | StoreError::ReadOnly(_)
        | StoreError::Version { .. }
        | StoreError::WinFormat { .. } => DbError::new_err(message),
    }
}

pub fn query_error(e: QueryError) -> PyErr {
    match e {
        QueryError::Input(e) => PyValueError::new_err(e.to_string()),
        QueryError::Store(e) => store_error(e),
        QueryError::NotSolved { .. } | QueryError::NotInBook { .. } => {
            DbError::new_err(e.to_string())
        }
        QueryError::Uncertified { .. } => GopsError::new_err(e.to_string()),
        // a subtree over the limit or the budget: the book cannot answer that state
        QueryError::OnDemand(_) => DbError::new_err(e.to_string()),
    }
}

pub fn export_error(e: ExportError) -> PyErr {
    match e {
        ExportError::Query(e) => query_error(e),
        ExportError::Store(e) => store_error(e),
        ExportError::BadLayers { .. } => PyValueError::new_err(e.to_string()),
        _ => GopsError::new_err(e.to_string()),
    }
}

pub fn file_export_error(e: FileExportError) -> PyErr {
    let message = e.to_string();
    match e {
        FileExportError::Export(e) => export_error(e),
        FileExportError::Create { .. } | FileExportError::Rename { .. } => {
            PyOSError::new_err(message)
        }
        FileExportError::Start(_) | FileExportError::Finish { .. } => GopsError::new_err(message),
    }
}

pub fn local_error(e: LocalError) -> PyErr {
    match e {
        LocalError::Core(gops_coordinator::error::CoreError::Store(e)) => store_error(e),
        // a full disk or an I/O error that stopped the run: an OSError, as a store's own
        LocalError::Failed(failure @ RunFailure::StoreUnwritable { .. }) => {
            PyOSError::new_err(failure.to_string())
        }
        other => GopsError::new_err(other.to_string()),
    }
}

pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}
