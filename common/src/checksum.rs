//! Digests of slice values and layer checksums: identical values give identical digests,
//! however the work was split.

/// The digest of a slice's values (little-endian f64 bytes).
pub fn slice_digest(values: &[f64]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    for v in values {
        hasher.update(&v.to_le_bytes());
    }
    *hasher.finalize().as_bytes()
}

/// Accumulates slice digests in prize-rank order into a layer checksum.
#[derive(Default)]
pub struct LayerChecksum {
    hasher: blake3::Hasher,
}

impl LayerChecksum {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, slice_digest: &[u8; 32]) {
        self.hasher.update(slice_digest);
    }

    /// The checksum as lowercase hex.
    pub fn finish(&self) -> String {
        self.hasher.finalize().to_hex().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_depends_on_every_bit() {
        let a = slice_digest(&[1.0, 2.0]);
        assert_eq!(a, slice_digest(&[1.0, 2.0]));
        assert_ne!(a, slice_digest(&[1.0, 2.0 + f64::EPSILON * 2.0]));
        assert_ne!(a, slice_digest(&[2.0, 1.0]));
        // -0.0 and 0.0 differ in bits, so they differ here too
        assert_ne!(slice_digest(&[0.0]), slice_digest(&[-0.0]));
    }
}
