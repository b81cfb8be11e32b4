//! Digests written as text.

/// Bytes (a digest, a random id) as lowercase hexadecimal text.
pub(crate) fn hex_digest(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
