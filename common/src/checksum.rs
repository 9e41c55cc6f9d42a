//! Digests of slices and layer checksums: identical values give identical digests,
//! however the work was split.

pub type Digest = [u8; 32];

/// The digest of a byte string (a slice's encoding).
pub fn digest_bytes(bytes: &[u8]) -> Digest {
    *blake3::hash(bytes).as_bytes()
}

/// A digest as lowercase hex.
pub fn digest_hex(digest: &Digest) -> String {
    blake3::Hash::from(*digest).to_hex().to_string()
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

    pub fn add(&mut self, slice_digest: &Digest) {
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
    use crate::slice::Slice;

    #[test]
    fn digest_depends_on_every_bit() {
        let digest = |v: &[f64]| Slice::dense(0, v.to_vec()).digest();
        let a = digest(&[1.0, 2.0]);
        assert_eq!(a, digest(&[1.0, 2.0]));
        assert_ne!(a, digest(&[1.0, 2.0 + f64::EPSILON * 2.0]));
        assert_ne!(a, digest(&[2.0, 1.0]));
        // -0.0 and 0.0 differ in bits, so they differ here too
        assert_ne!(digest(&[0.0]), digest(&[-0.0]));
    }

    #[test]
    fn layer_checksum_depends_on_order() {
        let (x, y) = (digest_bytes(b"x"), digest_bytes(b"y"));
        let mut a = LayerChecksum::new();
        a.add(&x);
        a.add(&y);
        let mut b = LayerChecksum::new();
        b.add(&y);
        b.add(&x);
        assert_ne!(a.finish(), b.finish());
    }
}
