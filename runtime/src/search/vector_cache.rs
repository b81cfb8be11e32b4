//! Tools' embeddings kept in a file, keyed by the model's name and the text embedded: a
//! restart embeds only the tools whose text changed (1,233 tools take 47 s on two cores).
//!
//! The file is a list of records, each `[SHA-256 of model and text][u32 length][f32 × length]`
//! (little-endian), appended as tools are embedded. It is a cache: a record cut short (a
//! process stopped while writing) ends the list, and it and what follows are dropped and
//! embedded again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The longest vector a record may hold (larger is taken for a damaged file).
const MOST_DIMENSIONS: usize = 1 << 16;

type Key = [u8; 32];

/// Embeddings by model and text, read from and appended to one file.
pub(crate) struct VectorCache {
    model: String,
    path: PathBuf,
    vectors: HashMap<Key, Vec<f32>>,
}

impl VectorCache {
    /// The cache of `model`'s vectors in `folder` (created if missing).
    pub(crate) fn open(folder: &Path, model: &str) -> io::Result<Self> {
        std::fs::create_dir_all(folder)?;
        let path = folder.join("tool-vectors.bin");
        let (vectors, complete) = match File::open(&path) {
            Ok(file) => read_records(file)?,
            Err(error) if error.kind() == io::ErrorKind::NotFound => (HashMap::new(), 0),
            Err(error) => return Err(error),
        };
        if path.exists() && std::fs::metadata(&path)?.len() > complete {
            // A record cut short: drop it, so that new records follow whole ones.
            OpenOptions::new()
                .write(true)
                .open(&path)?
                .set_len(complete)?;
        }
        Ok(VectorCache {
            model: model.to_owned(),
            path,
            vectors,
        })
    }

    /// The vector kept for `text`, if any.
    pub(crate) fn get(&self, text: &str) -> Option<&Vec<f32>> {
        self.vectors.get(&self.key(text))
    }

    /// Keeps the vectors of `texts`, in memory and in the file (a file that cannot be written
    /// is logged: the vectors are kept in memory all the same).
    pub(crate) fn put(&mut self, texts: &[String], vectors: &[Vec<f32>]) {
        let mut bytes = Vec::new();
        for (text, vector) in texts.iter().zip(vectors) {
            let key = self.key(text);
            bytes.extend_from_slice(&key);
            bytes.extend_from_slice(&(vector.len() as u32).to_le_bytes());
            vector
                .iter()
                .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
            self.vectors.insert(key, vector.clone());
        }
        // One write of whole records: another process appending meanwhile does not split one.
        let written = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut file| file.write_all(&bytes));
        if let Err(error) = written {
            let path = self.path.display();
            tracing::warn!(%error, %path, "tool embeddings could not be kept on disk; they will be embedded again after a restart");
        }
    }

    fn key(&self, text: &str) -> Key {
        let mut hash = Sha256::new();
        hash.update(self.model.as_bytes());
        hash.update([0]);
        hash.update(text.as_bytes());
        hash.finalize().into()
    }
}

/// The whole records of `file`, and how many bytes they take.
fn read_records(mut file: File) -> io::Result<(HashMap<Key, Vec<f32>>, u64)> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let (mut vectors, mut at) = (HashMap::new(), 0usize);
    while let Some((key, vector, next)) = record(&bytes, at) {
        vectors.insert(key, vector);
        at = next;
    }
    Ok((vectors, at as u64))
}

/// The record at `at`, and where the next begins; `None` at the end or a record cut short.
fn record(bytes: &[u8], at: usize) -> Option<(Key, Vec<f32>, usize)> {
    let key: Key = bytes.get(at..at + 32)?.try_into().ok()?;
    let length = bytes.get(at + 32..at + 36)?;
    let dimensions = u32::from_le_bytes(length.try_into().ok()?) as usize;
    if dimensions > MOST_DIMENSIONS {
        return None;
    }
    let start = at + 36;
    let values = bytes.get(start..start + 4 * dimensions)?;
    let vector = values
        .chunks_exact(4)
        .map(|four| f32::from_le_bytes([four[0], four[1], four[2], four[3]]))
        .collect();
    Some((key, vector, start + 4 * dimensions))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_a_reopen_and_a_record_cut_short_is_dropped() {
        let folder = tempfile::tempdir().unwrap();
        let texts = ["weather: forecast".to_owned(), "email: send".to_owned()];
        let mut cache = VectorCache::open(folder.path(), "m1").unwrap();
        cache.put(&texts, &[vec![1.0, 2.0], vec![3.0]]);
        let path = folder.path().join("tool-vectors.bin");
        let whole = std::fs::metadata(&path).unwrap().len();
        // A writer stopped halfway through a third record.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&[7; 40]).unwrap();

        let mut again = VectorCache::open(folder.path(), "m1").unwrap();
        assert_eq!(again.get(&texts[0]), Some(&vec![1.0, 2.0]));
        assert_eq!(again.get(&texts[1]), Some(&vec![3.0]));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), whole);
        again.put(&["new".to_owned()], &[vec![5.0]]);
        let last = VectorCache::open(folder.path(), "m1").unwrap();
        assert_eq!(last.get("new"), Some(&vec![5.0]));
        // Another model's vectors are not these.
        let other = VectorCache::open(folder.path(), "m2").unwrap();
        assert!(other.get(&texts[0]).is_none());
    }
}
