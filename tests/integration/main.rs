//! Integration tests of the `gops` binary and its store, one module per concern.

mod admission;
mod bad_input;
mod books;
mod browser;
mod cluster;
mod damage;
mod dashboard;
mod disk;
mod export;
mod fetch_streams;
mod formats;
mod grpc;
mod hostile;
mod netns;
mod pipes;
mod policies;
mod reference;
mod resume;
mod sealed;
mod serve;
mod signals;
mod stall;
mod status;
mod support;
mod tls;
mod verify;
