//! Proof that this CPU has AVX2: an [`Avx2`] is made only by [`Avx2::detect`], after
//! `is_x86_feature_detected!` said yes (which caches its answer), so code that holds one
//! may run AVX2 instructions. The unsafe blocks of the kernel's lanes and of the matrix
//! fill rest on it, not on where they happen to be inlined.

/// This CPU has AVX2. Free to copy and to pass (no bytes); made only by [`Avx2::detect`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2 {
    _detected: (),
}

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The proof, where this CPU has AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<Avx2> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2 { _detected: () })
    }
}
