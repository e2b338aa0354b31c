//! The library's clips and channels (`src/library.rs` packs them).

use bytemuck::{Pod, Zeroable};

/// Per clip: its duration, where its channels start in the clip table (kind-major: channel
/// `channel_base + kind * sources + source_bone`, kind 0: T, 1: R, 2: S, over the bones of the
/// skeleton it was authored on, then any goals; `sources` from [`CLIP_SOURCES_SHIFT`]) and the
/// word where its source's table starts in the retarget table:
/// [`BoneRetarget`](super::BoneRetarget)s (`RETARGET_WORDS` words per target bone), or with
/// [`CLIP_PLAN`] a character source's [`BonePlan`](super::BonePlan)s.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ClipData {
    pub duration: f32,
    pub channel_base: u32,
    pub retarget_base: u32,
    /// [`CLIP_ADDITIVE`], [`CLIP_MESH_SPACE`], [`CLIP_PLAN`], [`CLIP_GOALS`], and the source
    /// bone count from [`CLIP_SOURCES_SHIFT`] up.
    pub flags: u32,
}

/// [`ClipData::flags`]: the keys are additive deltas.
pub(crate) const CLIP_ADDITIVE: u32 = 1;
/// [`ClipData::flags`], with [`CLIP_ADDITIVE`]: the rotation deltas are between mesh-space
/// rotations.
pub(crate) const CLIP_MESH_SPACE: u32 = 2;
/// [`ClipData::flags`] from this bit up: the clip's source bone count (goals included), the
/// stride of its kind-major channels (`clip_channel`).
pub(crate) const CLIP_SOURCES_SHIFT: u32 = 8;

/// A clip sample's key search (`KeySearch` in `clip.wgsl`, one 16-byte word): the first word
/// of the key times searched ([`NO_TIMES`] for none), the keys around the sample's time and
/// the blend factor. The resolve pass writes one per sample after the frame's entries.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub(crate) struct KeySearch {
    pub time_offset: u32,
    pub lo: u32,
    pub hi: u32,
    pub alpha: f32,
}

/// [`KeySearch::time_offset`] of no search: matches no channel.
pub(crate) const NO_TIMES: u32 = u32::MAX;

impl KeySearch {
    /// No search made.
    pub(crate) const NONE: Self = Self {
        time_offset: NO_TIMES,
        lo: 0,
        hi: 0,
        alpha: 0.0,
    };
}

/// One channel's place in the key arrays; `count == 0` means the channel is absent.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ChannelData {
    pub time_offset: u32,
    pub value_offset: u32,
    pub count: u32,
    /// [`CHANNEL_STEP`], and the values' stride from [`CHANNEL_STRIDE_SHIFT`] up.
    pub flags: u32,
}

/// [`ChannelData::flags`]: STEP interpolation.
pub(crate) const CHANNEL_STEP: u32 = 1;
/// [`ChannelData::flags`] from this bit up: the stride of the channel's values, the number of
/// the clip's channels that share its key times (stored key-major: key `k` at `value_offset +
/// k * stride`).
pub(crate) const CHANNEL_STRIDE_SHIFT: u32 = 8;

/// A clip whose keys are not compressed keeps, right after its channels (at `channel_base +
/// 3 * sources`), its reference word (`reference_channel` in `clip.wgsl`, a [`ChannelData`]
/// with only the time offset and count): the key times that most of its moving channels
/// share, which the resolve pass searches once per sample (count 0 where nothing moves).
///
/// A clip of UE's translation modes then keeps a bone-keys word per target bone
/// (`bone_keys` in `clip.wgsl`, at `channel_base + 3 * sources + 1 + bone`): the value
/// offsets of the first key of the translation, rotation and scale channels of the bone's
/// source bone, and flags. A lane finds its bone's keys from its clip in one load, without
/// the retarget record's source bone or the three channel words; the keys of a channel on the
/// clip's reference times lie at `offset + key * stride`, `key` from the sample's resolved
/// search.
///
/// The flags word: [`KEYS_PRESENT`], [`KEYS_MOVING`] and [`KEYS_STEP`] shifted by the kind
/// (0 T, 1 R, 2 S), [`KEYS_OWN_TIMES`], and the moving channels' stride from
/// [`KEYS_STRIDE_SHIFT`] up.
pub(crate) const KEYS_PRESENT: u32 = 1;
/// Bone-keys flag (shifted by the kind): the channel has more than one key, on the clip's
/// reference times.
pub(crate) const KEYS_MOVING: u32 = 8;
/// Bone-keys flag (shifted by the kind): the channel steps (STEP interpolation).
pub(crate) const KEYS_STEP: u32 = 64;
/// Bone-keys flag: a channel of the bone moves on key times of its own; the bone is sampled
/// through its channel words as before (glTF samplers that do not share their inputs).
pub(crate) const KEYS_OWN_TIMES: u32 = 512;
/// Bone-keys flags from this bit up: the stride of the moving channels' keys.
pub(crate) const KEYS_STRIDE_SHIFT: u32 = 16;

/// [`ClipData::flags`]: the clip's source is a character source: `retarget_base` is the word
/// where its [`BonePlan`](super::BonePlan) table starts, not a table of
/// [`BoneRetarget`](super::BoneRetarget)s.
pub(crate) const CLIP_PLAN: u32 = 4;
/// [`ClipData::flags`]: a clip baked from a character source's plan, its IK goals keyed after
/// its bones (goal `g` read as source bone `bones + g`: the chains' goals, then their toe goals).
pub(crate) const CLIP_GOALS: u32 = 8;

/// [`ClipData::flags`]: the clip's keys are compressed (issue 31): `channel_base` is the
/// first 16-byte word of its packed block in the key values (`values`), read word by word as
/// u32 (`packed_word` in `packed.wgsl`, `src/cpu/packed.rs`), not a place in the clip
/// table. The block: [`PACKED_HEADER_WORDS`] words of header, then per source bone a
/// descriptor of [`PACKED_DESCRIPTOR_WORDS`] words, the ranges (every quantized track's, then
/// every constant's), the segment table and the segments.
pub(crate) const CLIP_COMPRESSED: u32 = 16;
/// Words of a packed block's header: key count, first time, 1 / step (uniform keys), where
/// its key times start in `times` (other keys), flags (with the quantized track count from
/// [`PACKED_QUANTIZED_SHIFT`] up), bits per key, the segment table's word, the ranges' word.
pub(crate) const PACKED_HEADER_WORDS: u32 = 8;
/// Header flag: uniform keys (a first time and 1 / step, no times).
pub(crate) const PACKED_UNIFORM: u32 = 1;
/// Header flag: each segment starts with its quantized tracks' 8-bit ranges.
pub(crate) const PACKED_SEGMENTED: u32 = 2;
/// The header's flags word from this bit up: the clip's quantized track count.
pub(crate) const PACKED_QUANTIZED_SHIFT: u32 = 8;
/// Keys per segment: each segment starts on a word of its own.
pub(crate) const PACKED_SEGMENT_KEYS: u32 = 16;
/// Words of a bone's descriptor: the first holds the rates, the STEP flags, [`BONE_PRESENT`]
/// and, from [`PACKED_INDEX_SHIFT`] up, the index of the bone's first constant track among the
/// clip's constants; the second the bone's first bit within a key (below
/// [`PACKED_INDEX_SHIFT`]) and the index of its first quantized track among the quantized.
pub(crate) const PACKED_DESCRIPTOR_WORDS: u32 = 2;
/// Where a descriptor word's track index starts (13 bits: at most 8,191 constant and 8,191
/// quantized tracks, and first bits under 2^19, in one clip: [`PACKED_MAX_BONES`] bones).
pub(crate) const PACKED_INDEX_SHIFT: u32 = 19;
/// The most bones (goals included) a packed block holds: three raw tracks each stay under
/// 2^19 bits of key, and their tracks under 8,192 of each kind.
pub(crate) const PACKED_MAX_BONES: usize = 1638;
/// A descriptor's first word: each track's rate code in 5 bits (rotation, translation, scale
/// from bit 0, in steps of this), 0 the reference (no data), 1 a constant, 2 to 17 one to 16
/// bits per component, [`RATE_RAW`] full f32.
pub(crate) const RATE_SHIFT: u32 = 5;
/// A rate code's mask.
pub(crate) const RATE_MASK: u32 = 31;
/// The rate code of a constant track (three f32, no bits).
pub(crate) const RATE_CONSTANT: u32 = 1;
/// The rate code of a track kept at full precision.
pub(crate) const RATE_RAW: u32 = 18;
/// A descriptor's first word from this bit: the three tracks' STEP flags.
pub(crate) const RATE_STEP_SHIFT: u32 = 15;
/// A descriptor's first word: the clip keys this bone at all (a bone it does not key keeps
/// its target reference, as a plain clip's bone without channels).
pub(crate) const BONE_PRESENT: u32 = 1 << 18;

/// Bits per component of rate code `rate` (0 where none are stored).
pub(crate) const fn rate_bits(rate: u32) -> u32 {
    match rate {
        r if r == RATE_RAW => 32,
        r if r > RATE_CONSTANT => r - 1,
        _ => 0,
    }
}

/// Bits one key of a track of kind `kind` (0 rotation) at `rate` takes.
pub(crate) const fn key_bits(rate: u32, kind: u32) -> u32 {
    match rate {
        r if r == RATE_RAW && kind == 0 => 128,
        _ => 3 * rate_bits(rate),
    }
}
