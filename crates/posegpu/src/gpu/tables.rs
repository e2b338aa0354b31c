//! The library's tables as the shaders bind them, where that differs from how the library
//! holds them: fewer, larger bindings, so that the fused pass reads everything it needs through
//! at most 8 storage buffers.

use crate::layout::{Entry, CLIP_SOURCES_SHIFT, PLAN_WORDS, RETARGET_WORDS};
use crate::library::{packed, LibraryData, SourceKind};

/// The clip table (`clip_table` in `clip.wgsl`): the library's clips, then their channels, 16
/// bytes each. Each clip's channels are laid out kind-major (its source bones' translations,
/// then rotations, then scales: lanes sampling neighbouring bones read neighbouring words), its
/// `channel_base` rebased to count from the table's start and its source bone count put in its
/// flags above bit 8.
pub(crate) fn clip_table(data: &LibraryData) -> Vec<Entry> {
    let rebase = data.clips.len() as u32;
    let mut table = Vec::with_capacity(data.clips.len() + data.channels.len());
    let mut channels = vec![[0; 4]; data.channels.len()];
    for (clip, sources) in data.clips.iter().zip(clip_sources(data)) {
        let (start, sources) = (clip.channel_base as usize, sources as usize);
        let end = start + 3 * sources;
        for (i, ch) in data.channels[start..end].iter().enumerate() {
            let (source, kind) = (i / 3, i % 3);
            channels[start + kind * sources + source] =
                [ch.time_offset, ch.value_offset, ch.count, ch.flags];
        }
        table.push([
            clip.duration.to_bits(),
            clip.channel_base + rebase,
            clip.retarget_base,
            clip.flags | (sources as u32) << CLIP_SOURCES_SHIFT,
        ]);
    }
    table.extend(channels);
    table
}

/// Each clip's source bone count: its channels over 3 (three per source bone).
pub(crate) fn clip_sources(data: &LibraryData) -> Vec<u32> {
    let ends = data.clips.iter().skip(1).map(|c| c.channel_base);
    let ends = ends.chain([data.channels.len() as u32]);
    data.clips
        .iter()
        .zip(ends)
        .map(|(c, end)| (end - c.channel_base) / 3)
        .collect()
}

/// The retarget table as the shaders read it: the target bones' records of every section
/// field-major, word `k` of bone `b` at `base + k * bones + b`, so that lanes of neighbouring
/// bones read neighbouring words. That is each section of [`crate::layout::BoneRetarget`]s (the
/// target's own, and each source retargeted by translation modes), and the first `bones`
/// [`crate::layout::BonePlan`]s of each character source's plan. A plan's IK goal records,
/// reference locals and paths, and the masks, stay as they are.
pub(crate) fn retarget_table(data: &LibraryData) -> Vec<Entry> {
    let mut table = data.retarget.clone();
    let bones = data.parents.len();
    for (source, &base) in data.sources.iter().zip(&data.source_tables) {
        let words = match source.kind {
            SourceKind::Character => PLAN_WORDS,
            SourceKind::Modes => RETARGET_WORDS,
        } as usize;
        let base = base as usize;
        for b in 0..bones {
            for k in 0..words {
                table[base + k * bones + b] = data.retarget[base + b * words + k];
            }
        }
    }
    table
}

/// The skeleton section appended to the retarget table for the fused pass (`fused.wgsl`), from
/// word `first` of the table; the words' offsets are in [`SkeletonSection`].
pub(crate) struct SkeletonSection {
    /// Parents (`-1` for a root, as `i32` bits), four per word.
    pub parents: u32,
    /// Inverse bind matrices' rows, row-major: row `r` of bone `b` at word `r * bones + b`.
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
        for row in 0..3 {
            words.extend(
                data.inverse_bind
                    .iter()
                    .map(|m| std::array::from_fn(|k| m[row * 4 + k].to_bits())),
            );
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
