//! Reading a user's text files, and the hashes that tie files together.

use crate::error::{GateError, Result};
use sha2::{Digest, Sha256};

/// Read a user's text file (a byte-order mark is dropped); failures name the file.
pub fn read_text(path: &std::path::Path) -> Result<String> {
    let mut text = std::fs::read_to_string(path).map_err(|e| GateError::Io {
        file: path.display().to_string(),
        source: e,
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Hex SHA-256 of some byte strings, in order.
pub fn sha256_hex<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
