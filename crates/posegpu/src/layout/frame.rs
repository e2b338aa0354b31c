//! The frame: what each instance plays, one chunk's array of 16-byte words (`src/batch.rs`
//! builds it).

use bytemuck::{Pod, Zeroable};

/// One 16-byte word of the frame buffer: a [`Head`], a [`LayerEntry`] or a [`SampleEntry`].
pub(crate) type Entry = [u32; 4];

/// Per instance: where its entries start, how many layers it has (the base included), and its
/// first delta slot and slot count (slots hold the deltas of layers the layer stage applies).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Head {
    pub first: u32,
    pub layers: u32,
    pub slot: u32,
    pub slots: u32,
}

/// A layer's header: its kind (`LAYER_*`) in the low byte and its sample count above, its
/// weight, a word of the kind's own (an IK layer's hands weight), and its bone mask: the word of
/// the retarget table its weights start at, 0 for none (`MaskId`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct LayerEntry {
    pub kind_and_samples: u32,
    pub weight: f32,
    pub extra: u32,
    pub mask: u32,
}

/// One clip at one time: the clip index with [`INSTANCE_LOOP`] set when it loops, the time in
/// seconds, the weight in its layer's blend and a root-lock code (`ROOT_LOCK_*`, 0 for none).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct SampleEntry {
    pub clip_and_flags: u32,
    pub time: f32,
    pub weight: f32,
    pub root_lock: u32,
}

/// [`LayerEntry::kind_and_samples`]: the kind's bits; the sample count is above them, from
/// [`LAYER_SAMPLES_SHIFT`] up.
pub(crate) const LAYER_KIND_MASK: u32 = (1 << LAYER_SAMPLES_SHIFT) - 1;
pub(crate) const LAYER_SAMPLES_SHIFT: u32 = 8;
pub(crate) const LAYER_BASE: u32 = 0;
pub(crate) const LAYER_LOCAL: u32 = 1;
pub(crate) const LAYER_MESH: u32 = 2;
pub(crate) const LAYER_DYNAMIC_LOCAL: u32 = 3;
pub(crate) const LAYER_DYNAMIC_MESH: u32 = 4;
/// The instance's IK weights, its last layer: no samples; the feet weight in `weight`, the
/// hands weight's bits in `extra`. Read by the IK stage only.
pub(crate) const LAYER_IK: u32 = 5;
/// UE's Layered blend per bone: the blend of the layer's samples replaces the pose by the
/// layer's weight times its mask's, rotations blended in local space...
pub(crate) const LAYER_BLEND_LOCAL: u32 = 6;
/// ... or in mesh space (UE's `bMeshSpaceRotationBlend`), by the layer stage.
pub(crate) const LAYER_BLEND_MESH: u32 = 7;
/// An inertialized transition ([`crate::batch::InstanceLayers::inertialize`]): the blend time
/// in `weight`, the seconds since the transition in `extra`, and in `mask` the step (seconds)
/// between its two samples, the old pose now and one step earlier; 0 once the offsets are
/// stored. After the pose layers, before the IK layer.
pub(crate) const LAYER_INERTIALIZE: u32 = 8;
/// [`SampleEntry::clip_and_flags`]: the clip loops.
pub(crate) const INSTANCE_LOOP: u32 = 1 << 31;
/// [`SampleEntry::root_lock`]: the lock's bits (`ROOT_LOCK_*`); its axis mask is above them.
pub(crate) const ROOT_LOCK_MASK: u32 = 0xff;
pub(crate) const ROOT_LOCK_REF_POSE: u32 = 1;
pub(crate) const ROOT_LOCK_FIRST_FRAME: u32 = 2;
pub(crate) const ROOT_LOCK_ZERO: u32 = 3;
/// A root-lock code's axis mask ([`crate::playback::RootMotionAxes`]): translation in bits 8-9,
/// rotation in bits 10-11, each `ROOT_AXES_*`.
pub(crate) const ROOT_TRANSLATION_SHIFT: u32 = 8;
pub(crate) const ROOT_ROTATION_SHIFT: u32 = 10;
/// All of it (translation: every axis; rotation: the whole rotation).
pub(crate) const ROOT_AXES_ALL: u32 = 0;
/// Translation: its part in the ground plane (perpendicular to up); rotation: the yaw (its
/// twist about up).
pub(crate) const ROOT_AXES_PLANE: u32 = 1;
/// None of it.
pub(crate) const ROOT_AXES_NONE: u32 = 2;
