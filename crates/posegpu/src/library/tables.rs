//! The library's tables as the shaders bind them, byte for byte, and the readers of their words.
//! Each reader is named, and addresses the words, as the WGSL function that reads the same
//! table (`clip.wgsl`, `fused.wgsl`), so that the CPU twins read what the GPU reads: an
//! addressing bug fails on the CPU first.
//!
//! - The clip table (`clip_table` in `clip.wgsl`): the clips, then their channels. Each clip's
//!   channels are kind-major (its source bones' translations, then rotations, then scales), so
//!   that lanes sampling neighbouring bones read neighbouring words; its `channel_base` counts
//!   from the table's start and its flags carry its source bone count from
//!   [`CLIP_SOURCES_SHIFT`] up.
//! - The retarget table (`retarget`): per source its target bones' records field-major (word
//!   `k` of bone `b` at `base + k * bones + b`, so that lanes of neighbouring bones read
//!   neighbouring words; a character source's IK goal records after them as they are), the
//!   bone masks, then the [`SkeletonSection`] the fused pass reads.

use super::{packed, LibraryData};
use crate::layout::{
    BonePlan, BoneRetarget, ChannelData, ClipData, Entry, Mat3x4, Xform, CLIP_SOURCES_SHIFT,
    PLAN_WORDS, RETARGET_WORDS,
};
use crate::math::Transform;

/// Where the skeleton section lies in the retarget table, read by the fused pass (`fused.wgsl`;
/// the words' offsets go to its `Params`). It repeats the `parents` and `inverse_bind` tables the
/// other passes bind, so that the fused pass reads everything it needs through at most 8
/// storage buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SkeletonSection {
    /// Parents (`-1` for a root, as `i32` bits), four per word (`table_u32`).
    pub parents: u32,
    /// Inverse bind matrices' rows, row-major: row `r` of bone `b` at word `r * bones + b`
    /// ([`Self::inverse_bind_word`]).
    pub inverse_bind: u32,
    /// Bones ordered by depth, then index, four per word ([`crate::Skeleton::depth_levels`]):
    /// level `d` (bones `d` steps below a root) is `order[level_starts[d] .. level_starts[d +
    /// 1]]`.
    pub order: u32,
    /// Where each level starts in `order`, four per word; `levels + 1` of them.
    pub level_starts: u32,
    /// The skeleton's depth levels (1 for a skeleton of roots alone).
    pub levels: u32,
}

impl SkeletonSection {
    /// The section of a skeleton (its `parents`, `inverse_bind` rows and `depth_levels`) from
    /// word `first` of the retarget table, and its words.
    pub(super) fn new(
        parents: &[i32],
        inverse_bind: &[Mat3x4],
        (order, starts): (Vec<u32>, Vec<u32>),
        first: u32,
    ) -> (Self, Vec<Entry>) {
        let parent_bits: Vec<u32> = parents.iter().map(|&p| p as u32).collect();
        let mut words: Vec<Entry> = packed(&parent_bits).collect();
        let inverse_bind_at = first + words.len() as u32;
        for row in 0..3 {
            words.extend(
                inverse_bind
                    .iter()
                    .map(|m| std::array::from_fn(|k| m[row * 4 + k].to_bits())),
            );
        }
        let order_at = first + words.len() as u32;
        words.extend(packed(&order));
        let starts_at = first + words.len() as u32;
        words.extend(packed(&starts));
        let section = Self {
            parents: first,
            inverse_bind: inverse_bind_at,
            order: order_at,
            level_starts: starts_at,
            levels: starts.len() as u32 - 1,
        };
        (section, words)
    }

    /// The word of row `row` of bone `bone`'s inverse bind matrix, in a skeleton of `bones`.
    pub(crate) fn inverse_bind_word(&self, bones: u32, bone: u32, row: u32) -> u32 {
        self.inverse_bind + row * bones + bone
    }
}

/// `records`, `words` 16-byte words each, laid out field-major: word `k` of record `b` at
/// `k * records + b`.
pub(super) fn field_major(records: &[Entry], words: usize) -> Vec<Entry> {
    let n = records.len() / words;
    (0..words)
        .flat_map(|k| (0..n).map(move |b| records[b * words + k]))
        .collect()
}

/// The clip table of `clips` (their `channel_base` counting from the first of `channels`),
/// then `channels`.
pub(super) fn clip_table(clips: &[ClipData], channels: &[ChannelData]) -> Vec<Entry> {
    let rebase = clips.len() as u32;
    let clips = clips.iter().map(|c| ClipData {
        channel_base: c.channel_base + rebase,
        ..*c
    });
    clips
        .map(bytemuck::cast)
        .chain(channels.iter().map(|&c| bytemuck::cast(c)))
        .collect()
}

/// The word of the clip table that `clip_channel` reads: channel `k` (0 translation, 1
/// rotation, 2 scale) of source bone `source` in `clip`.
pub(crate) fn clip_channel_word(clip: &ClipData, source: u32, k: u32) -> u32 {
    clip.channel_base + k * (clip.flags >> CLIP_SOURCES_SHIFT) + source
}

/// Where `table_u32(w, k)` reads: entry `k` of the `u32`s packed four per word from word `w`
/// (the word and the lane).
pub(crate) fn table_u32_at(w: u32, k: u32) -> (u32, usize) {
    (w + k / 4, (k % 4) as usize)
}

impl LibraryData {
    /// The clips in the clip table.
    pub(crate) fn clip_count(&self) -> usize {
        self.clip_names.len()
    }

    /// The target's bone count: the stride of the retarget records' fields (`table_bones`).
    pub(crate) fn table_bones(&self) -> u32 {
        self.parents.len() as u32
    }

    /// `clip_data` in `clip.wgsl`.
    pub(crate) fn clip_data(&self, clip: u32) -> ClipData {
        bytemuck::cast(self.clip_table[clip as usize])
    }

    /// `channel_data` in `clip.wgsl`: word `channel` of the clip table.
    pub(crate) fn channel_data(&self, channel: u32) -> ChannelData {
        bytemuck::cast(self.clip_table[channel as usize])
    }

    /// `clip_channel` in `clip.wgsl`: channel `k` (0 translation, 1 rotation, 2 scale) of
    /// source bone `source` in `clip`.
    pub(crate) fn clip_channel(&self, clip: &ClipData, source: u32, k: u32) -> ChannelData {
        self.channel_data(clip_channel_word(clip, source, k))
    }

    /// `retarget_f32` in `clip.wgsl`.
    pub(crate) fn retarget_f32(&self, w: u32) -> [f32; 4] {
        bytemuck::cast(self.retarget[w as usize])
    }

    /// `retarget_xform` in `clip.wgsl`: an [`Xform`] whole from word `w`.
    pub(crate) fn retarget_xform(&self, w: u32) -> Xform {
        Xform {
            rotation: self.retarget_f32(w),
            translation: self.retarget_f32(w + 1),
            scale: self.retarget_f32(w + 2),
        }
    }

    /// The word of the retarget table that `bone_retarget(base, bone)` reads its word `k` from.
    pub(crate) fn bone_retarget_word(&self, base: u32, bone: u32, k: u32) -> u32 {
        base + k * self.table_bones() + bone
    }

    /// `bone_retarget` in `clip.wgsl`: target bone `bone`'s record of the retarget section at
    /// word `base`.
    pub(crate) fn bone_retarget(&self, base: u32, bone: u32) -> BoneRetarget {
        let words: [Entry; RETARGET_WORDS as usize] = std::array::from_fn(|k| {
            self.retarget[self.bone_retarget_word(base, bone, k as u32) as usize]
        });
        bytemuck::cast(words)
    }

    /// `plan_word` in `clip.wgsl`: the word `k` of plan record `record` in the plan section at
    /// word `base` lies at; the target bones' records are field-major, the IK goal records
    /// after them as they are.
    pub(crate) fn plan_word(&self, base: u32, record: u32, k: u32) -> u32 {
        let bones = self.table_bones();
        if record < bones {
            base + k * bones + record
        } else {
            base + record * PLAN_WORDS + k
        }
    }

    /// `bone_plan` in `clip.wgsl`.
    pub(crate) fn bone_plan(&self, base: u32, record: u32) -> BonePlan {
        let words: [Entry; PLAN_WORDS as usize] =
            std::array::from_fn(|k| self.retarget[self.plan_word(base, record, k as u32) as usize]);
        bytemuck::cast(words)
    }

    /// `table_u32` in `fused.wgsl`: entry `k` of the `u32`s packed four per word from word `w`
    /// (`fold_path` in `clip.wgsl` reads a path entry `i` as `table_u32(0, i)`).
    pub(crate) fn table_u32(&self, w: u32, k: u32) -> u32 {
        let (word, lane) = table_u32_at(w, k);
        self.retarget[word as usize][lane]
    }

    /// `mask_weight` in `clip.wgsl`: the weight of `bone` in the mask at word `mask` of the
    /// retarget table (a layer's mask word); 1 for 0, no mask.
    pub(crate) fn mask_weight(&self, mask: u32, bone: usize) -> f32 {
        if mask == 0 {
            return 1.0;
        }
        f32::from_bits(self.table_u32(mask, bone as u32))
    }

    /// `target_reference` in `clip.wgsl`: the target's reference local of `bone` (from its own
    /// table, the first).
    pub(crate) fn target_reference(&self, bone: usize) -> Transform {
        self.bone_retarget(0, bone as u32).target_ref.into()
    }
}
