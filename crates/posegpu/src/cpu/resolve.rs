//! CPU twin of `shaders/resolve.wgsl`: each clip sample's key search over its clip's reference
//! times (the reference word after its channels) at its time, the search the sampling stage starts
//! every bone of the sample from. The twin's own sampling makes the same search at a sample's
//! first bone and keeps it for the rest ([`super::clip::KeySearch`]), so it needs no rows; these
//! are what the GPU's resolve pass must write, for the tests and the traffic replay.

#[cfg(test)]
use crate::layout::{Entry, Head, LAYER_SAMPLES_SHIFT};
use crate::layout::{KeySearch, CLIP_COMPRESSED};
use crate::library::AnimLibrary;
use crate::model::find_keys;

/// The key search of the clip sample in frame entry `e` (`sample_search` in `clip.wgsl`).
#[cfg(test)]
pub(crate) fn sample_search(lib: &AnimLibrary, e: &Entry) -> KeySearch {
    let s = super::clip::Prepared::from_entry(lib, e);
    search_at(lib, s.clip, s.time)
}

/// The key search of `clip` at the already mapped time `t`, over its reference times: none
/// for a compressed clip (its keys find their own) or a clip with no moving channel.
pub(crate) fn search_at(lib: &AnimLibrary, clip: usize, t: f32) -> KeySearch {
    let data = lib.data();
    let c = data.clip_data(clip as u32);
    if c.flags & CLIP_COMPRESSED != 0 {
        return KeySearch::NONE;
    }
    let ch = data.reference_channel(&c);
    if ch.count == 0 {
        return KeySearch::NONE;
    }
    let (first, count) = (ch.time_offset as usize, ch.count as usize);
    let (lo, hi, alpha) = find_keys(&data.times[first..first + count], t);
    KeySearch {
        time_offset: ch.time_offset,
        lo: lo as u32,
        hi: hi as u32,
        alpha,
    }
}

/// Every sample of the instance with `head`: `rows[e]` is the search of the sample at entry
/// `e` of `entries` (the rows of other entries are left as they are). The tests compare it
/// with the rows the GPU writes; the twin's sampling takes each row where it starts a sample
/// ([`search_at`]).
#[cfg(test)]
pub(crate) fn run_instance(
    lib: &AnimLibrary,
    entries: &[Entry],
    head: &Head,
    rows: &mut [KeySearch],
) {
    let mut e = head.first as usize;
    for _ in 0..head.layers {
        let n = (entries[e][0] >> LAYER_SAMPLES_SHIFT) as usize;
        for k in e + 1..=e + n {
            rows[k] = sample_search(lib, &entries[k]);
        }
        e += 1 + n;
    }
}
