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
use crate::drive::TranslationMode;
use crate::layout::{fused_group_instances, fused_task, FUSED_BONES, FUSED_MAX_POSES};
use crate::layout::{
    BonePlan, BoneRetarget, ChannelData, ClipData, Entry, Mat3x4, Xform, CHANNEL_STEP,
    CHANNEL_STRIDE_SHIFT, CLIP_COMPRESSED, CLIP_SOURCES_SHIFT, KEYS_MOVING, KEYS_OWN_TIMES,
    KEYS_PRESENT, KEYS_STEP, KEYS_STRIDE_SHIFT, PLAN_WORDS, RETARGET_WORDS,
};
use crate::Transform;

// The records the readers gather word by word are whole 16-byte words.
const _: () = assert!(std::mem::size_of::<BoneRetarget>() == RETARGET_WORDS as usize * 16);
const _: () = assert!(std::mem::size_of::<BonePlan>() == PLAN_WORDS as usize * 16);

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
    /// The hierarchy's tasks for one block of `G` instances, the most a fused workgroup may
    /// hold ([`fused_group_instances`] at [`FUSED_MAX_POSES`]), four per word, level by level
    /// (the roots' level too) and instance by instance within a level: task
    /// `G * level_starts[d] + i * n + j` (`n` bones in level `d`) is the `j`-th bone of level
    /// `d` (by index) of the block's instance `i`: its index in the block's poses, its
    /// parent's (its own for a root) and the bone ([`crate::layout::fused_task`]). A smaller
    /// block takes each level's first tasks. A lane finds its bone, its parent and its
    /// inverse bind in one load, without dividing by the level's size or the skeleton's.
    /// Empty for skeletons past [`FUSED_BONES`], which the fused pass does not run.
    pub tasks: u32,
    /// Where each level (bones `d` steps below a root, [`crate::Skeleton::depth_levels`])
    /// starts in the depth order, four per word; `levels + 1` of them.
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
        let tasks_at = first + words.len() as u32;
        words.extend(packed(&fused_tasks(parents, &order, &starts)));
        let starts_at = first + words.len() as u32;
        words.extend(packed(&starts));
        let section = Self {
            parents: first,
            inverse_bind: inverse_bind_at,
            tasks: tasks_at,
            level_starts: starts_at,
            levels: starts.len() as u32 - 1,
        };
        (section, words)
    }

    /// The word of row `row` of bone `bone`'s inverse bind matrix, in a skeleton of `bones`.
    #[inline]
    pub(crate) fn inverse_bind_word(&self, bones: u32, bone: u32, row: u32) -> u32 {
        self.inverse_bind + row * bones + bone
    }
}

/// [`SkeletonSection::tasks`] of a skeleton of `parents` with depth order `order` and level
/// starts `starts`: the roots' tasks too (their parent word is their own pose), for their
/// skinning matrices.
fn fused_tasks(parents: &[i32], order: &[u32], starts: &[u32]) -> Vec<u32> {
    let bones = parents.len() as u32;
    if bones > FUSED_BONES {
        return Vec::new();
    }
    let g = fused_group_instances(bones, FUSED_MAX_POSES);
    let mut tasks = vec![0; (g * bones) as usize];
    for level in starts.windows(2) {
        let (lo, n) = (level[0], level[1] - level[0]);
        for i in 0..g {
            for j in 0..n {
                let bone = order[(lo + j) as usize];
                let parent = u32::try_from(parents[bone as usize]).unwrap_or(bone);
                tasks[(g * lo + i * n + j) as usize] =
                    fused_task(i * bones + bone, i * bones + parent, bone);
            }
        }
    }
    tasks
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
    // A compressed clip's base is its block's place in the key values, not in this table.
    let clips = clips.iter().map(|c| ClipData {
        channel_base: match c.flags & CLIP_COMPRESSED {
            0 => c.channel_base + rebase,
            _ => c.channel_base,
        },
        ..*c
    });
    clips
        .map(bytemuck::cast)
        .chain(channels.iter().map(|&c| bytemuck::cast(c)))
        .collect()
}

/// The word of the clip table that `clip_channel` reads: channel `k` (0 translation, 1
/// rotation, 2 scale) of source bone `source` in `clip`.
#[inline]
pub(crate) fn clip_channel_word(clip: &ClipData, source: u32, k: u32) -> u32 {
    clip.channel_base + k * (clip.flags >> CLIP_SOURCES_SHIFT) + source
}

/// The word of the clip table that `reference_channel` reads: right after `clip`'s channels.
#[inline]
pub(crate) fn reference_word(clip: &ClipData) -> u32 {
    clip.channel_base + 3 * (clip.flags >> CLIP_SOURCES_SHIFT)
}

/// The word of the clip table that `bone_keys` reads: target bone `bone`'s, after `clip`'s
/// channels and its reference word.
#[inline]
pub(crate) fn bone_keys_word(clip: &ClipData, bone: u32) -> u32 {
    reference_word(clip) + 1 + bone
}

/// A clip's reference word, from its channels: the key times (first word and count) that the
/// most of its moving channels (more than one key) share, the first such channel's on a tie;
/// count 0 where none moves. The resolve pass searches them once per sample
/// (`sample_search`), and the bones whose moving channels all lie on them start from that
/// search.
pub(super) fn reference_channel(channels: &[ChannelData]) -> ChannelData {
    let mut counts: Vec<((u32, u32), usize)> = Vec::new();
    for c in channels.iter().filter(|c| c.count > 1) {
        let times = (c.time_offset, c.count);
        match counts.iter_mut().find(|(t, _)| *t == times) {
            Some((_, n)) => *n += 1,
            None => counts.push((times, 1)),
        }
    }
    // The most shared, the first of equals.
    let most = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let times = counts.iter().find(|(_, n)| *n == most).map(|(t, _)| *t);
    times.map_or(ChannelData::default(), |(time_offset, count)| ChannelData {
        time_offset,
        count,
        ..ChannelData::default()
    })
}

/// The bone-keys words of a clip of UE's translation modes whose channels (kind-major over
/// its `sources` source bones) are `channels` and whose reference word is `reference`, for
/// target bones driven by source bones `sources_of` (`None`: no source bone).
pub(super) fn bone_keys(
    channels: &[ChannelData],
    reference: &ChannelData,
    sources: usize,
    sources_of: impl Iterator<Item = Option<usize>>,
) -> Vec<ChannelData> {
    let on_reference = |c: &ChannelData| {
        reference.count > 0 && (reference.time_offset, reference.count) == (c.time_offset, c.count)
    };
    sources_of
        .map(|source| {
            let (mut offsets, mut flags, mut stride) = ([0; 3], 0, None);
            for (k, offset) in (0..3).zip(&mut offsets) {
                let Some(ch) = source.map(|s| channels[k * sources + s]) else {
                    continue;
                };
                if ch.count == 0 {
                    continue;
                }
                *offset = ch.value_offset;
                flags |= KEYS_PRESENT << k;
                if ch.flags & CHANNEL_STEP != 0 {
                    flags |= KEYS_STEP << k;
                }
                if ch.count > 1 {
                    let own = ch.flags >> CHANNEL_STRIDE_SHIFT;
                    if !on_reference(&ch) || stride.is_some_and(|s| s != own) {
                        flags |= KEYS_OWN_TIMES;
                    }
                    flags |= KEYS_MOVING << k;
                    stride = Some(own);
                }
            }
            let stride = stride.unwrap_or(0) << KEYS_STRIDE_SHIFT;
            bytemuck::cast([offsets[0], offsets[1], offsets[2], flags | stride])
        })
        .collect()
}

/// Where `table_u32(w, k)` reads: entry `k` of the `u32`s packed four per word from word `w`
/// (the word and the lane).
#[inline]
pub(crate) fn table_u32_at(w: u32, k: u32) -> (u32, usize) {
    (w + k / 4, (k % 4) as usize)
}

impl LibraryData {
    /// The clips in the clip table.
    #[inline]
    pub(crate) fn clip_count(&self) -> usize {
        self.clip_names.len()
    }

    /// The key values as the u32 words a packed block is read from (`packed_word` in
    /// `packed.wgsl`).
    #[inline]
    pub(crate) fn value_words(&self) -> &[u32] {
        bytemuck::cast_slice(&self.values)
    }

    /// The target's bone count: the stride of the retarget records' fields (`table_bones`).
    #[inline]
    pub(crate) fn table_bones(&self) -> u32 {
        self.parents.len() as u32
    }

    /// `clip_data` in `clip.wgsl`.
    #[inline]
    pub(crate) fn clip_data(&self, clip: u32) -> ClipData {
        bytemuck::cast(self.clip_table[clip as usize])
    }

    /// `channel_data` in `clip.wgsl`: word `channel` of the clip table.
    #[inline]
    pub(crate) fn channel_data(&self, channel: u32) -> ChannelData {
        bytemuck::cast(self.clip_table[channel as usize])
    }

    /// `clip_channel` in `clip.wgsl`: channel `k` (0 translation, 1 rotation, 2 scale) of
    /// source bone `source` in `clip`.
    #[inline]
    pub(crate) fn clip_channel(&self, clip: &ClipData, source: u32, k: u32) -> ChannelData {
        self.channel_data(clip_channel_word(clip, source, k))
    }

    /// `reference_channel` in `clip.wgsl`: the key times `clip`'s samples are resolved on
    /// (count 0 for none; a clip whose keys are not compressed).
    #[inline]
    pub(crate) fn reference_channel(&self, clip: &ClipData) -> ChannelData {
        self.channel_data(reference_word(clip))
    }

    /// `bone_keys` in `clip.wgsl`: target bone `bone`'s bone-keys word in `clip` (a clip of
    /// UE's translation modes with keys in the clip table; [`KEYS_PRESENT`] and the rest).
    #[inline]
    pub(crate) fn bone_keys(&self, clip: &ClipData, bone: u32) -> [u32; 4] {
        self.clip_table[bone_keys_word(clip, bone) as usize]
    }

    /// `retarget_f32` in `clip.wgsl`.
    #[inline]
    pub(crate) fn retarget_f32(&self, w: u32) -> [f32; 4] {
        bytemuck::cast(self.retarget[w as usize])
    }

    /// `retarget_xform` in `clip.wgsl`: an [`Xform`] whole from word `w`.
    #[inline]
    pub(crate) fn retarget_xform(&self, w: u32) -> Xform {
        Xform {
            rotation: self.retarget_f32(w),
            translation: self.retarget_f32(w + 1),
            scale: self.retarget_f32(w + 2),
        }
    }

    /// The word of the retarget table that `bone_retarget(base, bone)` reads its word `k` from.
    #[inline]
    pub(crate) fn bone_retarget_word(&self, base: u32, bone: u32, k: u32) -> u32 {
        base + k * self.table_bones() + bone
    }

    /// `bone_retarget` in `clip.wgsl`: target bone `bone`'s record of the retarget section at
    /// word `base`.
    #[inline(always)]
    pub(crate) fn bone_retarget(&self, base: u32, bone: u32) -> BoneRetarget {
        let mut record = BoneRetarget::default();
        // Gathered straight into the record: it is read for every bone of every sample.
        let words: &mut [Entry] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut record));
        let (stride, first) = (self.table_bones() as usize, (base + bone) as usize);
        for (k, word) in words.iter_mut().enumerate() {
            *word = self.retarget[first + k * stride];
        }
        record
    }

    /// [`Self::bone_retarget`] for sampling: only the words the record's translation mode reads
    /// (the head, both references, and the relative or orient words for those modes), as a
    /// shader compiler drops the other loads; the rest stay zero. Half the gather for the
    /// common modes, on every bone of every sample.
    #[inline(always)]
    pub(crate) fn bone_retarget_sampled(&self, base: u32, bone: u32) -> BoneRetarget {
        use std::mem::offset_of;
        const RELATIVE: usize = offset_of!(BoneRetarget, relative) / 16;
        const ORIENT: usize = offset_of!(BoneRetarget, orient_rotation) / 16;
        let mut record = BoneRetarget::default();
        let words: &mut [Entry] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut record));
        let (stride, first) = (self.table_bones() as usize, (base + bone) as usize);
        let word = |k: usize| self.retarget[first + k * stride];
        for (k, w) in words[..RELATIVE].iter_mut().enumerate() {
            *w = word(k);
        }
        let more = match TranslationMode::from_code(words[0][1]) {
            TranslationMode::AnimationRelative => RELATIVE..ORIENT,
            TranslationMode::OrientAndScale => ORIENT..words.len(),
            _ => 0..0,
        };
        for k in more {
            words[k] = word(k);
        }
        record
    }

    /// `plan_word` in `clip.wgsl`: the word `k` of plan record `record` in the plan section at
    /// word `base` lies at; the target bones' records are field-major, the IK goal records
    /// after them as they are.
    #[inline]
    pub(crate) fn plan_word(&self, base: u32, record: u32, k: u32) -> u32 {
        let bones = self.table_bones();
        if record < bones {
            base + k * bones + record
        } else {
            base + record * PLAN_WORDS + k
        }
    }

    /// `bone_plan` in `clip.wgsl`.
    #[inline(always)]
    pub(crate) fn bone_plan(&self, base: u32, record: u32) -> BonePlan {
        let mut plan = BonePlan::default();
        let words: &mut [Entry] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut plan));
        for (k, word) in (0..).zip(words.iter_mut()) {
            *word = self.retarget[self.plan_word(base, record, k) as usize];
        }
        plan
    }

    /// `table_u32` in `fused.wgsl`: entry `k` of the `u32`s packed four per word from word `w`
    /// (`fold_path` in `clip.wgsl` reads a path entry `i` as `table_u32(0, i)`).
    #[inline]
    pub(crate) fn table_u32(&self, w: u32, k: u32) -> u32 {
        let (word, lane) = table_u32_at(w, k);
        self.retarget[word as usize][lane]
    }

    /// `mask_weight` in `clip.wgsl`: the weight of `bone` in the mask at word `mask` of the
    /// retarget table (a layer's mask word); 1 for 0, no mask.
    #[inline]
    pub(crate) fn mask_weight(&self, mask: u32, bone: usize) -> f32 {
        if mask == 0 {
            return 1.0;
        }
        f32::from_bits(self.table_u32(mask, bone as u32))
    }

    /// `target_reference` in `clip.wgsl`: the target's reference local of `bone` (from its own
    /// table, the first).
    #[inline]
    pub(crate) fn target_reference(&self, bone: usize) -> Transform {
        // Only the field's three words (a shader compiler drops the record's other loads).
        const FIRST: usize = std::mem::offset_of!(BoneRetarget, target_ref) / 16;
        let n = self.table_bones() as usize;
        let word = |k: usize| bytemuck::cast(self.retarget[k * n + bone]);
        Xform {
            rotation: word(FIRST),
            translation: word(FIRST + 1),
            scale: word(FIRST + 2),
        }
        .into()
    }
}

#[cfg(test)]
impl super::AnimLibrary {
    /// The tables of a library no evaluator shares yet, for tests that damage them.
    pub(crate) fn data_mut(&mut self) -> &mut LibraryData {
        std::sync::Arc::get_mut(&mut self.data).expect("a library nothing else holds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{TASK_BONE_SHIFT, TASK_PARENT_SHIFT, TASK_POSE_MASK};
    use crate::library::AnimLibrary;
    use crate::procedural::random_asset;
    use crate::{CpuEvaluator, PoseBatch, Poses};

    type Vec3Channel<'a> = Option<&'a crate::model::Channel<glam::Vec3>>;

    /// Damage done to a library's tables (of its target's bone count).
    type Damage = fn(&mut LibraryData, usize);

    /// A word that says where it was put.
    fn tag(k: usize, b: usize, what: u32) -> Entry {
        [k as u32, b as u32, what, 0]
    }

    /// The readers on tables written out by hand, laid out as the shaders' comments say.
    #[test]
    fn the_readers_find_kind_major_channels_and_field_major_records() {
        let bones = 5;
        let asset = random_asset(3, bones, 0);
        let mut lib = AnimLibrary::new(&asset.skeleton, &[]).unwrap();
        let data = lib.data_mut();
        // Two clips of 2 and 3 source bones, each one's channels every translation, then every
        // rotation, then every scale.
        let sources = [2u32, 3];
        let (mut clips, mut channels) = (Vec::new(), Vec::new());
        for (c, &n) in (0..).zip(&sources) {
            clips.push(ClipData {
                duration: 1.0,
                channel_base: sources.len() as u32 + channels.len() as u32,
                retarget_base: 0,
                flags: n << CLIP_SOURCES_SHIFT,
            });
            for kind in 0..3 {
                channels.extend((0..n).map(|s| ChannelData {
                    time_offset: c,
                    value_offset: s,
                    count: kind,
                    flags: 0,
                }));
            }
        }
        let clip_words = clips.iter().map(|&c| bytemuck::cast::<_, Entry>(c));
        data.clip_table = clip_words
            .chain(channels.iter().map(|&c| bytemuck::cast(c)))
            .collect();
        for (c, &n) in (0..).zip(&sources) {
            let clip = data.clip_data(c);
            for (s, k) in (0..n).flat_map(|s| (0..3).map(move |k| (s, k))) {
                let ch = data.clip_channel(&clip, s, k);
                assert_eq!((ch.time_offset, ch.value_offset, ch.count), (c, s, k));
            }
        }
        // The retarget table: 3 words of padding, a section of BoneRetargets field-major, a
        // plan section (the bones' records field-major, two goal records after them as they
        // are), then u32s four to a word.
        let mut retarget = vec![[0; 4]; 3];
        for k in 0..RETARGET_WORDS as usize {
            retarget.extend((0..bones).map(|b| tag(k, b, 1)));
        }
        let plan = retarget.len() as u32;
        for k in 0..PLAN_WORDS as usize {
            retarget.extend((0..bones).map(|b| tag(k, b, 2)));
        }
        for g in bones..bones + 2 {
            retarget.extend((0..PLAN_WORDS as usize).map(|k| tag(k, g, 2)));
        }
        let packed_at = retarget.len() as u32;
        retarget.extend(packed(&(100..110).collect::<Vec<u32>>()));
        data.retarget = retarget;
        for b in 0..bones {
            let words: [Entry; RETARGET_WORDS as usize] =
                bytemuck::cast(data.bone_retarget(3, b as u32));
            for (k, w) in words.iter().enumerate() {
                assert_eq!(*w, tag(k, b, 1), "word {k} of bone {b}");
            }
        }
        for r in 0..bones + 2 {
            let words: [Entry; PLAN_WORDS as usize] =
                bytemuck::cast(data.bone_plan(plan, r as u32));
            for (k, w) in words.iter().enumerate() {
                assert_eq!(*w, tag(k, r, 2), "word {k} of plan record {r}");
            }
        }
        for i in 0..10 {
            assert_eq!(data.table_u32(packed_at, i), 100 + i);
        }
        assert_eq!(data.mask_weight(0, 3), 1.0);
        assert_eq!(data.mask_weight(packed_at, 3).to_bits(), 103);
    }

    /// A built library's tables, read back through the readers, hold the clips' keys, the
    /// target's references and the skeleton where the typed model has them.
    #[test]
    fn the_built_tables_hold_what_the_model_has() {
        let asset = random_asset(5, 23, 3);
        let (skeleton, bones) = (&asset.skeleton, asset.skeleton.len());
        let lib = AnimLibrary::new(skeleton, &asset.clips).unwrap();
        let data = lib.data();
        for (c, clip) in (0..).zip(&asset.clips) {
            let cd = data.clip_data(c);
            assert_eq!(cd.duration, clip.duration());
            for (s, track) in (0..).zip(clip.tracks()) {
                let first = |k| {
                    let ch = data.clip_channel(&cd, s, k);
                    (ch.count > 0)
                        .then(|| (ch.count as usize, data.values[ch.value_offset as usize]))
                };
                let v3 = |v: Vec3Channel| v.map(|c| (c.len(), c.values[0].extend(0.0).to_array()));
                assert_eq!(
                    first(0),
                    v3(track.translation.as_ref()),
                    "clip {c}, bone {s}"
                );
                let r = track.rotation.as_ref();
                assert_eq!(first(1), r.map(|c| (c.len(), c.values[0].to_array())));
                assert_eq!(first(2), v3(track.scale.as_ref()), "clip {c}, bone {s}");
            }
        }
        let s = data.skeleton_section;
        let (order, starts) = skeleton.depth_levels();
        assert_eq!(s.levels as usize, starts.len() - 1);
        // The block's last instance's tasks: each bone once, after its parent's level, the
        // roots first.
        let g = fused_group_instances(bones as u32, FUSED_MAX_POSES);
        let last = (g - 1) * bones as u32;
        for level in starts.windows(2) {
            let (lo, n) = (level[0], level[1] - level[0]);
            for j in 0..n {
                let task = data.table_u32(s.tasks, g * lo + (g - 1) * n + j);
                let bone = order[(lo + j) as usize];
                let parent = data.parents[bone as usize];
                let parent = if parent < 0 { bone } else { parent as u32 };
                assert_eq!(task, fused_task(last + bone, last + parent, bone));
                assert_eq!(task & TASK_POSE_MASK, last + bone);
                assert_eq!((task >> TASK_PARENT_SHIFT) & TASK_POSE_MASK, last + parent);
                assert_eq!(task >> TASK_BONE_SHIFT, bone);
            }
        }
        for (i, &start) in (0..).zip(&starts) {
            assert_eq!(data.table_u32(s.level_starts, i), start);
        }
        for b in 0..bones {
            let own = data.bone_retarget(0, b as u32);
            assert_eq!(
                (own.source, own.target_ref),
                (b as i32, skeleton.rest()[b].into())
            );
            assert_eq!(data.table_u32(s.parents, b as u32) as i32, data.parents[b]);
            for r in 0..3 {
                let row = data.retarget_f32(s.inverse_bind_word(bones as u32, b as u32, r));
                assert_eq!(row[..], data.inverse_bind[b][r as usize * 4..][..4]);
            }
        }
    }

    /// The CPU twin reads the GPU's tables: the addressing bugs the layouts invite (a clip's
    /// channels bone-major, a section's bones in the wrong places, the fused pass's inverse
    /// binds bone-major) change the CPU's poses, with no GPU. Undamaged, a rebuilt library
    /// gives the same poses bit for bit.
    #[test]
    fn an_addressing_bug_in_the_tables_fails_on_the_cpu() {
        let asset = random_asset(7, 29, 3);
        let build = || AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        let mut batch = PoseBatch::new();
        for i in 0..6 {
            batch.push_clip(i % 3, 0.13 * i as f32, true);
        }
        let poses = |lib: &AnimLibrary| {
            let mut out = Poses::default();
            CpuEvaluator::new(lib).evaluate(&batch, &mut out).unwrap();
            (out.locals, out.component, out.skinning)
        };
        let good = poses(&build());
        assert_eq!(poses(&build()), good);
        let bones = asset.skeleton.len();
        let damages: [(&str, Damage); 3] = [
            ("each clip's channels bone-major", |d, _| {
                for c in 0..d.clip_count() as u32 {
                    let clip = d.clip_data(c);
                    let n = (clip.flags >> CLIP_SOURCES_SHIFT) as usize;
                    let at = clip.channel_base as usize;
                    let kind_major = d.clip_table[at..at + 3 * n].to_vec();
                    for (s, k) in (0..n).flat_map(|s| (0..3).map(move |k| (s, k))) {
                        d.clip_table[at + s * 3 + k] = kind_major[k * n + s];
                    }
                }
            }),
            ("the target's records in reverse bone order", |d, bones| {
                for k in 0..RETARGET_WORDS as usize {
                    d.retarget[k * bones..(k + 1) * bones].reverse();
                }
            }),
            ("the inverse binds' rows bone-major", |d, bones| {
                let at = d.skeleton_section.inverse_bind as usize;
                let row_major = d.retarget[at..at + 3 * bones].to_vec();
                for (b, r) in (0..bones).flat_map(|b| (0..3).map(move |r| (b, r))) {
                    d.retarget[at + b * 3 + r] = row_major[r * bones + b];
                }
            }),
        ];
        for (what, damage) in damages {
            let mut lib = build();
            damage(lib.data_mut(), bones);
            assert_ne!(poses(&lib), good, "{what}");
        }
    }

    /// A clip's reference word names the key times most of its moving channels share, not its
    /// first bone's (here a rotation held on one key), so its bones read their keys through
    /// the sample's one search (no `KEYS_OWN_TIMES`); a channel on times of its own keeps its
    /// flag.
    #[test]
    fn the_reference_times_are_the_most_shared() {
        use crate::model::{Channel, Clip, Interpolation};
        let asset = random_asset(5, 6, 0);
        let shared: Vec<f32> = (0..9).map(|k| k as f32 / 8.0).collect();
        let mut tracks = vec![crate::BoneTrack::default(); 6];
        let turn = |k: usize| glam::Quat::from_rotation_z(0.1 * k as f32);
        let rotation = |times: Vec<f32>| {
            let values = (0..times.len()).map(turn).collect();
            Some(Channel::new(times, values, Interpolation::Linear))
        };
        tracks[0].rotation = rotation(vec![0.0]);
        for t in &mut tracks[1..5] {
            t.rotation = rotation(shared.clone());
        }
        tracks[5].rotation = rotation(vec![0.0, 0.3, 1.0]);
        let clip = Clip::new("c", &asset.skeleton, tracks).unwrap();
        let lib = AnimLibrary::new(&asset.skeleton, &[clip]).unwrap();
        let d = lib.data();
        let c = d.clip_data(0);
        let reference = d.reference_channel(&c);
        assert_eq!(reference.count, 9);
        assert_eq!(&d.times[reference.time_offset as usize..][..9], &shared[..]);
        let own = |b: u32| d.bone_keys(&c, b)[3] & KEYS_OWN_TIMES != 0;
        assert_eq!(
            (0..6).map(own).collect::<Vec<_>>(),
            [false, false, false, false, false, true]
        );
        // No moving channel: no reference.
        let mut still = vec![crate::BoneTrack::default(); 6];
        still[2].rotation = rotation(vec![0.5]);
        let clip = Clip::new("still", &asset.skeleton, still).unwrap();
        let lib = AnimLibrary::new(&asset.skeleton, &[clip]).unwrap();
        assert_eq!(
            lib.data().reference_channel(&lib.data().clip_data(0)).count,
            0
        );
    }
}
