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

/// [`ClipData::flags`]: the clip's source is a character source: `retarget_base` is the word
/// where its [`BonePlan`](super::BonePlan) table starts, not a table of
/// [`BoneRetarget`](super::BoneRetarget)s.
pub(crate) const CLIP_PLAN: u32 = 4;
/// [`ClipData::flags`]: a clip baked from a character source's plan, its IK goals keyed after
/// its bones (goal `g` read as source bone `bones + g`: the chains' goals, then their toe goals).
pub(crate) const CLIP_GOALS: u32 = 8;
