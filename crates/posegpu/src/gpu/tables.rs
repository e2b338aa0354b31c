//! The library's tables as the shaders bind them, where that differs from how the library
//! holds them: fewer, larger bindings, so that the fused pass reads everything it needs through
//! at most 8 storage buffers.

use crate::layout::Entry;
use crate::library::{packed, LibraryData};

/// The clip table (`clip_table` in `clip.wgsl`): the library's clips, then their channels, 16
/// bytes each, every clip's `channel_base` rebased to count from the table's start.
pub(crate) fn clip_table(data: &LibraryData) -> Vec<Entry> {
    let rebase = data.clips.len() as u32;
    let clips = data.clips.iter().map(|c| {
        [
            c.duration.to_bits(),
            c.channel_base + rebase,
            c.retarget_base,
            c.flags,
        ]
    });
    let channels = data
        .channels
        .iter()
        .map(|c| [c.time_offset, c.value_offset, c.count, c.flags]);
    clips.chain(channels).collect()
}

/// The skeleton section appended to the retarget table for the fused pass (`fused.wgsl`), from
/// word `first` of the table; the words' offsets are in [`SkeletonSection`].
pub(crate) struct SkeletonSection {
    /// Parents (`-1` for a root, as `i32` bits), four per word.
    pub parents: u32,
    /// Inverse bind matrices, three words (rows) per bone.
    pub inverse_bind: u32,
    /// Bones ordered by depth, then index, four per word ([`crate::Skeleton::depth_levels`]):
    /// level `d` (bones `d` steps below a root) is `order[level_starts[d] .. level_starts[d +
    /// 1]]`.
    pub order: u32,
    /// Where each level starts in `order`, four per word; `levels + 1` of them.
    pub level_starts: u32,
    /// The skeleton's depth levels (1 for a skeleton of roots alone).
    pub levels: u32,
    /// The words themselves.
    pub words: Vec<Entry>,
}

impl SkeletonSection {
    pub(crate) fn new(data: &LibraryData, first: u32) -> Self {
        let (order, starts) = (&data.level_order, &data.level_starts);
        let parent_bits: Vec<u32> = data.parents.iter().map(|&p| p as u32).collect();
        let mut words: Vec<Entry> = packed(&parent_bits).collect();
        let inverse_bind = first + words.len() as u32;
        for m in &data.inverse_bind {
            words.extend(m.chunks(4).map(|r| std::array::from_fn(|k| r[k].to_bits())));
        }
        let order_at = first + words.len() as u32;
        words.extend(packed(order));
        let starts_at = first + words.len() as u32;
        words.extend(packed(starts));
        Self {
            parents: first,
            inverse_bind,
            order: order_at,
            level_starts: starts_at,
            levels: starts.len() as u32 - 1,
            words,
        }
    }
}
