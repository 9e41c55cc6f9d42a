//! A solved game answering many threads at once (the explorer's server, Python): a book
//! and one set of caches ([`SharedReads`]) that every thread's [`Reader`] reads through.
//! The answers are those of any other reader, bit for bit.

use super::{Reader, SharedReads, SliceReads};
use crate::book::Book;

pub struct SharedReader {
    book: Book,
    slices: SharedReads,
}

impl SharedReader {
    /// A shared reader of `book`, caching at most about `cache_bytes` of slices and
    /// tables.
    pub fn new(book: Book, cache_bytes: usize) -> SharedReader {
        SharedReader::reading(book, SliceReads::new(cache_bytes))
    }

    /// A shared reader of `book` reading slices through `slices`.
    pub fn reading(book: Book, slices: SliceReads) -> SharedReader {
        SharedReader {
            book,
            slices: SharedReads::new(slices),
        }
    }

    pub fn book(&self) -> &Book {
        &self.book
    }

    /// A reader for one thread (or one request), through the shared caches.
    pub fn reader(&self) -> Reader<'_, &SharedReads> {
        Reader::new(&self.book, &self.slices)
    }
}

// the explorer's server shares one reader (and so one book) between its threads
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<SharedReader>();
};
