//! The one policy of this workspace for a poisoned lock: the data is used as it is. A
//! lock is poisoned when a thread panicked while holding it; no code here leaves what a
//! lock guards half changed before a panic (what it guards is changed in one step, or
//! an error is returned first), so the data is as sound as before, and the panic itself
//! is reported where it happened.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// `mutex` locked, poisoned or not.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_is_used_as_it_is() {
        let mutex = std::sync::Arc::new(Mutex::new(7));
        let held = std::sync::Arc::clone(&mutex);
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), 7);
    }
}
