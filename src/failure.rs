//! How a command fails: a message for stderr and an exit code, decided in one place.

use gops_common::InputError;
use gops_db::disk::check::DiskCheckError;
use gops_db::export::ExportError;
use gops_db::read::QueryError;
use gops_db::store::StoreError;
use gops_http::token_files::TokenFileError;

pub enum Failure {
    /// Bad input: exit 2.
    Usage(String),
    /// The work failed: exit 1.
    Runtime(String),
    /// Stopped on request: exit 130.
    Interrupted(String),
}

impl Failure {
    pub fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Runtime(m) | Failure::Interrupted(m) => m,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Runtime(_) => 1,
            Failure::Interrupted(_) => 130,
        }
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        Failure::Usage(e.to_string())
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Runtime(e.to_string())
        }
    }
}

impl From<QueryError> for Failure {
    fn from(e: QueryError) -> Self {
        if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Runtime(e.to_string())
        }
    }
}

impl From<ExportError> for Failure {
    fn from(e: ExportError) -> Self {
        if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Runtime(e.to_string())
        }
    }
}

impl From<TokenFileError> for Failure {
    fn from(e: TokenFileError) -> Self {
        Failure::Usage(e.to_string())
    }
}

impl From<DiskCheckError> for Failure {
    fn from(e: DiskCheckError) -> Self {
        match e {
            DiskCheckError::Store(e) => e.into(),
            DiskCheckError::NoRoom(message) => Failure::Usage(message),
        }
    }
}
