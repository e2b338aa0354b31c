//! Keys of compressed clips decoded once for every bone and shared by the samples that play
//! them: in a crowd, many instances sample the same clip between the same two keys, and each
//! would otherwise decode them bone by bone. The values are those [`KeyCursor::local`] decodes
//! (the same reader), so a sample plays alike from either.

use std::collections::HashMap;
use std::sync::Arc;

use super::packed::{DecodedBone, KeyCursor};

/// One key of a compressed clip, decoded at every bone (and goal) of its block.
pub(crate) type DecodedKey = Arc<[DecodedBone]>;

/// The keys a scratch's samples have decoded, by block and key; bounded: past
/// [`DecodedKeys::CAPACITY`] bones it starts afresh (the keys samples hold stay theirs).
#[derive(Clone, Debug, Default)]
pub(crate) struct DecodedKeys {
    keys: HashMap<(u32, u32), DecodedKey>,
    /// Bones held, over all keys.
    held: usize,
}

impl DecodedKeys {
    /// Decoded bones held at most: 6 MiB at 48 bytes each, a cache's worth.
    const CAPACITY: usize = 1 << 17;

    /// The cursor's two keys decoded (from the cache, or decoded into it).
    pub(crate) fn pair(&mut self, w: &[u32], cursor: &KeyCursor) -> [DecodedKey; 2] {
        [self.key(w, cursor, 0), self.key(w, cursor, 1)]
    }

    fn key(&mut self, w: &[u32], cursor: &KeyCursor, k: usize) -> DecodedKey {
        let id = (cursor.header.base, cursor.keys[k]);
        if let Some(key) = self.keys.get(&id) {
            return key.clone();
        }
        let key: DecodedKey = cursor.decode_key(w, k).into();
        if self.held + key.len() > Self::CAPACITY {
            self.keys.clear();
            self.held = 0;
        }
        self.held += key.len();
        self.keys.insert(id, key.clone());
        key
    }
}
