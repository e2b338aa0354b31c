//! Every type and constant the GPU sees, in one place (what `vello_encoding` is to vello).
//!
//! Each `#[repr(C)]` type here has a WGSL twin of the same name in `shaders/`, and each shared
//! constant a WGSL `const` of the same name. They are kept in step by a test, not by comments:
//! `layout::tests` parses every stage with naga, lays each struct out with naga's layouter and
//! compares its size and member offsets with the Rust type's `size_of`/`offset_of!` (its
//! `STRUCTS` table), and every scalar WGSL constant with its Rust value (`CONSTANTS`).
//!
//! Buffers are arrays of these records. The per-frame buffer of a chunk (`frame`) is an array
//! of 16-byte words: one [`Head`] per instance, then its layers, each a [`LayerEntry`] followed
//! by its [`SampleEntry`]s.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec4};

use crate::math::Transform;

/// Invocations per workgroup of every compute stage.
pub(crate) const WORKGROUP_SIZE: u32 = 64;
/// Bones one invocation walks in the stages that walk an instance's bones (hierarchy, layers):
/// lavapipe (llvmpipe) ends an invocation's loops after 65,535 iterations in all, so longer
/// skeletons take one dispatch per block of this many bones.
pub(crate) const BONE_BLOCK: u32 = 4096;

// ---------------------------------------------------------------------------------------------
// Poses and matrices

/// A transform as stored in buffers: 48 bytes, the rotation quaternion (x, y, z, w), then
/// translation and scale as `vec4`s whose `w` is 0. WGSL: `struct Xform { r, t, s }`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Xform {
    /// Rotation quaternion, `[x, y, z, w]`.
    pub rotation: [f32; 4],
    /// Translation in `xyz`; `w` is 0.
    pub translation: [f32; 4],
    /// Per-axis scale in `xyz`; `w` is 0.
    pub scale: [f32; 4],
}

impl From<Transform> for Xform {
    fn from(t: Transform) -> Self {
        Self {
            rotation: t.rotation.to_array(),
            translation: t.translation.extend(0.0).to_array(),
            scale: t.scale.extend(0.0).to_array(),
        }
    }
}

impl From<Xform> for Transform {
    fn from(x: Xform) -> Self {
        Transform {
            rotation: Quat::from_array(x.rotation),
            translation: Vec4::from(x.translation).truncate(),
            scale: Vec4::from(x.scale).truncate(),
        }
    }
}

/// A 3x4 affine matrix, three rows `[r0 | tx]`, `[r1 | ty]`, `[r2 | tz]`: 48 bytes. A vertex
/// shader applies it as `vec3(dot(m[0], p), dot(m[1], p), dot(m[2], p))` with
/// `p = vec4(position, 1)`. WGSL: `struct Mat3x4 { r0, r1, r2 }`.
pub type Mat3x4 = [f32; 12];

/// Per dispatch of the pose stages: the skeleton's bone count, the chunk's instance count, and
/// the library's root-motion bone and up axis (in that bone's parent's frame), which an
/// in-place sample's lock and axis mask use.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct Params {
    pub bone_count: u32,
    pub instance_count: u32,
    pub root_bone: u32,
    /// The library's curves (the curve stage's invocations per instance).
    pub curve_count: u32,
    pub root_up: [f32; 4],
    /// The root-motion bone's parent at the reference pose, in component space.
    pub root_parent: Xform,
    /// The fused pass's: the skeleton's depth levels, instances per workgroup, and where the
    /// skeleton section's parts start in the retarget table (`src/gpu/tables.rs`).
    pub levels: u32,
    pub group_instances: u32,
    pub parents_word: u32,
    pub inverse_bind_word: u32,
    pub order_word: u32,
    pub level_starts_word: u32,
    pub pad0: u32,
    pub pad1: u32,
}

/// Bones the fused pass holds in workgroup memory (48 bytes each, within WebGPU's 16 KiB):
/// larger skeletons take the separate passes.
pub(crate) const FUSED_BONES: u32 = 320;
/// Key searches the fused pass shares per workgroup (one per sample of its block's first frame
/// words; 20 bytes each, in the 1 KiB of workgroup memory the poses leave).
pub(crate) const SHARED_SEARCHES: u32 = 48;

// ---------------------------------------------------------------------------------------------
// The frame: what each instance plays (src/batch.rs builds it)

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

// ---------------------------------------------------------------------------------------------
// The library: clips, channels, keys and retarget caches (src/library.rs packs them)

/// Per clip: its duration, where its channels start (`channel_base + source_bone * 3 + {0: T,
/// 1: R, 2: S}`, indexed by the bones of the skeleton it was authored on) and the word where its
/// source's table starts in the retarget table: [`BoneRetarget`]s (`RETARGET_WORDS` words per
/// target bone), or with [`CLIP_PLAN`] a character source's [`BonePlan`]s.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ClipData {
    pub duration: f32,
    pub channel_base: u32,
    pub retarget_base: u32,
    /// [`CLIP_ADDITIVE`], [`CLIP_MESH_SPACE`], [`CLIP_PLAN`], [`CLIP_GOALS`].
    pub flags: u32,
}

/// [`ClipData::flags`]: the keys are additive deltas.
pub(crate) const CLIP_ADDITIVE: u32 = 1;
/// [`ClipData::flags`], with [`CLIP_ADDITIVE`]: the rotation deltas are between mesh-space
/// rotations.
pub(crate) const CLIP_MESH_SPACE: u32 = 2;
/// [`ClipData::flags`] on the GPU from this bit up: the clip's source bone count, the stride of
/// its kind-major channels (`src/gpu/tables.rs`).
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

/// Everything the sampling stage needs to drive one target bone from one retarget source:
/// built on the host once per (retarget source, target skeleton) pair, uploaded once, read for
/// every instance. 208 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BoneRetarget {
    /// The source bone whose channels drive this bone; -1 for none (the bone keeps its target
    /// reference local).
    pub source: i32,
    /// A [`crate::TranslationMode`] as `u32` (`MODE_*` in `clip.wgsl`).
    pub mode: u32,
    /// [`RETARGET_ORIENT`].
    pub flags: u32,
    /// AnimationScaled: `|T_tgt| / |T_src|`, or exactly 1 where `|T_src| ≤ SMALL`.
    pub length_ratio: f32,
    /// The retarget source's local reference: the value of channels a clip lacks.
    pub source_ref: Xform,
    /// The target's local reference.
    pub target_ref: Xform,
    /// AnimationRelative: `(R_src⁻¹ ⊗ R_tgt, T_tgt − T_src, S_tgt ∘ safeRecip(S_src))`.
    pub relative: Xform,
    /// OrientAndScale: `Δq = findBetweenNormals(ŝ, t̂)`.
    pub orient_rotation: [f32; 4],
    /// OrientAndScale: `s` in xyz, `k = |t| / |s|` in w.
    pub orient_source: [f32; 4],
    /// OrientAndScale: `t` in xyz.
    pub orient_target: [f32; 4],
}

/// [`BoneRetarget::flags`]: the bone has an OrientAndScale entry.
pub(crate) const RETARGET_ORIENT: u32 = 1;

/// [`ClipData::flags`]: the clip's source is a character source: `retarget_base` is the word
/// where its [`BonePlan`] table starts, not a table of [`BoneRetarget`]s.
pub(crate) const CLIP_PLAN: u32 = 4;
/// [`ClipData::flags`]: a clip baked from a character source's plan, its IK goals keyed after
/// its bones (goal `g` read as source bone `bones + g`: the chains' goals, then their toe goals).
pub(crate) const CLIP_GOALS: u32 = 8;

/// 16-byte words of one [`BoneRetarget`] in the retarget table.
pub(crate) const RETARGET_WORDS: u32 = (size_of::<BoneRetarget>() / 16) as u32;
/// 16-byte words of one [`BonePlan`] in the retarget table.
pub(crate) const PLAN_WORDS: u32 = (size_of::<BonePlan>() / 16) as u32;

/// One target bone's retarget plan (`docs/pose-math.md`, "Retargeting between characters"),
/// built once per (source, target) pair by `retarget::RetargetPlan` and run by `apply_plan`
/// in `clip.wgsl` (CPU twin: `retarget::plan::apply_bone`). Quaternions are `[x, y, z, w]`.
/// 272 bytes. The retarget table holds a character source as its records (one per target
/// bone), the source skeleton's reference locals ([`Xform`]s, the value of channels a clip
/// lacks) and its path entries (four `u32` per word).
///
/// `X` is the composition of the sampled source locals on the path, entries
/// `path_start .. path_start + path_len`: `X = identity`, then `X = compose(L_e, X)` per entry,
/// `L_e` the local of source bone `e & PATH_BONE` (unmirrored by the entry's mirror bits,
/// [`PATH_MIRROR_SHIFT`]), inverted where `PATH_INVERSE` is set;
/// `Xc` is `X` after the first `t_cap` entries. The chord sub-paths follow: `chord_len`
/// entries (`Y`), then `parent_chord_len` (`Z`, or `X` itself when 0). `Sc` is the smallest
/// rotation taking `swing` to `Y.T`'s direction (identity when `swing` is zero), `Sp` likewise
/// from `parent_swing` and `Z.T`.
///
/// Rotation (`modes & PLAN_ROTATION`), with `E = pre ⊗ ((Sp⁻¹ ⊗ X.R) ⊗ Sc) ⊗ post` and `B` =
/// `E`, or its twist about `twist_axis` when that is not zero: reference `outer_post`; mapped
/// `E`; segment end `outer_pre ⊗ B^(−fraction) ⊗ E ⊗ outer_post` (`B^0` left out); chain share
/// `outer_pre ⊗ B^fraction ⊗ outer_post`. Translation: `t_const`, plus where
/// [`PLAN_DRIVEN`] is set `t_inv_scale ∘ (t_rot · Sp⁻¹ · (t_k · X.T − t_sub) + W)`, with
/// `W = t_par_inv · D · t_w` where `t_cap > 0`, `D = t_wpre ⊗ Xc.R ⊗ t_wpost` (its twist about
/// `t_yaw_axis` when that is not zero). Scale: `scale`. Where `modes` holds a mirror pattern
/// `D` ([`PLAN_MIRROR_SHIFT`]), the rotation `R` becomes `D · R · D` and the translation
/// `D ∘ T` last.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BonePlan {
    pub pre: [f32; 4],
    pub post: [f32; 4],
    pub outer_pre: [f32; 4],
    pub outer_post: [f32; 4],
    pub twist_axis: [f32; 3],
    pub fraction: f32,
    pub t_rot: [f32; 4],
    pub t_inv_scale: [f32; 3],
    pub t_k: f32,
    pub t_w: [f32; 3],
    /// The first path entry, counted in `u32`s (from the plan's own path list; the library
    /// rebases it onto the retarget table).
    pub path_start: u32,
    pub t_const: [f32; 3],
    pub path_len: u32,
    pub t_sub: [f32; 3],
    pub chord_len: u32,
    pub swing: [f32; 3],
    pub parent_chord_len: u32,
    pub parent_swing: [f32; 3],
    /// The rotation mode (`PLAN_REFERENCE`, `PLAN_MAPPED`, `PLAN_CHAIN`, `PLAN_SEGMENT_END`) |
    /// [`PLAN_DRIVEN`] | the parent frame's mirror pattern << [`PLAN_MIRROR_SHIFT`].
    pub modes: u32,
    pub scale: [f32; 3],
    pub t_cap: u32,
    pub t_wpre: [f32; 4],
    pub t_wpost: [f32; 4],
    pub t_par_inv: [f32; 4],
    pub t_yaw_axis: [f32; 3],
    /// The word where the source's reference locals start in the retarget table (0 in a
    /// plan; the library sets it).
    pub source_rest: u32,
}

/// [`BonePlan::modes`]: the bits of the rotation mode.
pub(crate) const PLAN_ROTATION: u32 = 3;
/// Rotation mode: the (aligned) reference rotation.
pub(crate) const PLAN_REFERENCE: u32 = 0;
/// Rotation mode: follows the counterpart's rotation from rest.
pub(crate) const PLAN_MAPPED: u32 = 1;
/// Rotation mode: a share of a chain's rotation.
pub(crate) const PLAN_CHAIN: u32 = 2;
/// Rotation mode: follows the counterpart, less the shares of the chain bones above it.
pub(crate) const PLAN_SEGMENT_END: u32 = 3;
/// [`BonePlan::modes`]: the translation follows the source (driven or a translation delta).
pub(crate) const PLAN_DRIVEN: u32 = 4;
/// A path entry: the source local is inverted (the path goes up).
pub(crate) const PATH_INVERSE: u32 = 1 << 31;
/// A path entry's bits that name the source bone.
pub(crate) const PATH_BONE: u32 = (1 << PATH_MIRROR_SHIFT) - 1;
/// A path entry's mirror bits start here (0 for a bone of an unmirrored frame): the sign
/// pattern (`math::mirror::sign_pattern`) of the bone's parent's component-space reference
/// scale, then (3 bits up) that of the bone's own local scale. The local is read as the
/// unmirrored twin's (`docs/pose-math.md`, "Mirrored characters in retarget plans").
pub(crate) const PATH_MIRROR_SHIFT: u32 = 24;
/// [`BonePlan::modes`]: the sign pattern of the target bone's parent frame (of an IK goal
/// record: of its goal frame) starts here, 3 bits (0: unmirrored); the record's rotation and
/// translation are reflected by it last.
pub(crate) const PLAN_MIRROR_SHIFT: u32 = 4;
/// [`BonePlan::modes`] of an IK goal record: the plan has no goal for this chain (the source
/// lacks the bone, or its path is too long); the chain keeps its pose.
pub(crate) const PLAN_NO_GOAL: u32 = 8;

// ---------------------------------------------------------------------------------------------
// IK after retargeting (src/retarget/goals.rs builds the chains, src/cpu/ik.rs and
// shaders/ik.wgsl run them)

/// The head of the IK table (`ik` buffer), an array of 16-byte words: this header, the
/// [`IkChain`]s, then their bone paths (four `u32` per word; path starts count `u32`s from the
/// table's start).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct IkHeader {
    pub chain_count: u32,
    /// The bone that carries both legs (the hips), lowered where the legs cannot reach their
    /// goals; [`IK_NO_BONE`] for none.
    pub pelvis: u32,
    /// The bones from the skeleton's root down to the pelvis's parent (empty for a root
    /// pelvis).
    pub pelvis_path_start: u32,
    pub pelvis_path_len: u32,
    /// The most the pelvis is lowered, in component units.
    pub max_drop: f32,
    pub _pad0: u32,
    pub _pad1: u32,
    pub _pad2: u32,
}

/// The most chains an IK table holds (the torso, both legs and the left arm).
pub(crate) const IK_MAX_CHAINS: u32 = 4;

/// Words of the [`IkHeader`]; the chains start after it.
pub(crate) const IK_HEADER_WORDS: u32 = (size_of::<IkHeader>() / 16) as u32;

/// One two-bone IK chain of the library's skeleton, in the IK table after its [`IkHeader`].
///
/// `root` → `mid` → `end` (thigh, shin, foot; upper arm, forearm, hand), each a descendant of
/// the one before (96 bytes); or, [`IK_CARRIED`], an IK-style leg whose foot hangs elsewhere
/// (Mech's): its end is the point the shin carries, `tip`; its goal is in component space, as
/// a leg's, and `goal_parent` is its foot bone, which a sample without a goal gives. `bend` is
/// the way `mid` bends, in `root`'s local frame. The path lists the bones from the skeleton's
/// root down to `end` (a carried chain's: to `mid`), root first; the goal path those down to
/// `goal_parent` (empty for a goal in component space). Or, [`IK_TORSO`], the torso: `root`
/// the spine bone below the chest `mid`, `end` the neck's base, `goal_parent` the hips and
/// `tip` the pelvis in the hips' frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct IkChain {
    pub root: u32,
    pub mid: u32,
    pub end: u32,
    /// The bone the goal is relative to, or [`IK_NO_BONE`] (component space).
    pub goal_parent: u32,
    pub bend: [f32; 3],
    /// [`IK_HAND`], [`IK_CARRIED`], [`IK_TORSO`] or 0 (a leg).
    pub flags: u32,
    pub path_start: u32,
    pub path_len: u32,
    pub goal_path_start: u32,
    pub goal_path_len: u32,
    /// A leg's up direction (component space) and its end's rest height along it.
    pub up: [f32; 3],
    pub rest_height: f32,
    /// A leg's contact band: a goal up to `contact_lo` above the rest height is in contact (its
    /// height is reached in full); from `contact_hi` on the foot swings, and its height is
    /// reached within `slack`; smoothly in between.
    pub contact_lo: f32,
    pub contact_hi: f32,
    /// A leg's toe bone, a child of `end` whose height the IK stage brings to the toe goal's
    /// by turning the foot about the ankle; [`IK_NO_BONE`] for none.
    pub toe: u32,
    pub slack: f32,
    /// An [`IK_CARRIED`] chain's end: the point `mid` carries, in `mid`'s frame; the
    /// [`IK_TORSO`] chain's pelvis, in the hips' frame.
    pub tip: [f32; 3],
    pub _pad2: u32,
}

/// [`IkChain::flags`]: a hand chain: weighted by the hands weight, and its goal sets the
/// hand's rotation too (a foot keeps its own).
pub(crate) const IK_HAND: u32 = 1;
/// [`IkChain::flags`]: the end is the point `mid` carries (`tip`), the goal the `goal_parent`
/// bone itself.
pub(crate) const IK_CARRIED: u32 = 2;
/// [`IkChain::flags`]: the torso: `root` turns so that the line from the pelvis (`tip` in the
/// `goal_parent` hips' frame) to `end` points at the goal, `mid` (the chest) keeping its turn.
pub(crate) const IK_TORSO: u32 = 4;
/// [`IkChain::goal_parent`]: the goal is in component space.
pub(crate) const IK_NO_BONE: u32 = u32::MAX;
/// Words of one [`IkChain`].
pub(crate) const IK_CHAIN_WORDS: u32 = (size_of::<IkChain>() / 16) as u32;

// ---------------------------------------------------------------------------------------------
// Crowd playback (src/playback/ describes it, src/gpu/crowd.rs keeps it on the GPU)

/// Per crowd chunk and step, and the library's root-motion bone and its up axis (as in
/// [`Params`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct CrowdParams {
    pub dt: f32,
    pub group_count: u32,
    /// Where the tracks and the segments start in the structure buffer (in 16-byte words).
    pub tracks: u32,
    pub segments: u32,
    pub root_up: [f32; 3],
    pub root_bone: u32,
    /// The root-motion bone's parent at the reference pose, in component space: root motion
    /// measured in its frame is turned into the character's (`P ∘ Δ ∘ P⁻¹`).
    pub root_parent: Xform,
    /// The target's bone count: the stride of the retarget records' fields on the GPU.
    pub bone_count: u32,
    pub pad0: u32,
    pub pad1: u32,
    pub pad2: u32,
}

/// One sequence player (64 bytes). `entry` is its clip sample in the chunk's frame buffer;
/// `step_start` and `step_travel` are its last step, for the root-motion stage.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct PlayerData {
    pub track: u32,
    /// [`PLAYER_LOOP`].
    pub flags: u32,
    pub entry: u32,
    pub _pad0: u32,
    pub position: f32,
    pub start_position: f32,
    pub weight: f32,
    /// An outgoing player's: seconds into the inertialized transition its own transition
    /// interrupts when asked for (the advance stage writes it, a step on, into the old pose's
    /// sample); −1 for none.
    pub interrupted: f32,
    pub rate: f32,
    pub basis: f32,
    pub scale: f32,
    pub bias: f32,
    pub clamp_min: f32,
    pub clamp_max: f32,
    pub step_start: f32,
    pub step_travel: f32,
}

/// [`PlayerData::flags`]: the player loops.
pub(crate) const PLAYER_LOOP: u32 = 1;

/// One instance's players in the structure buffer: the first, how many, `GROUP_*` flags |
/// root-lock code (with its axis mask) << 8, and the instance's index in the crowd.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GroupData {
    pub first_player: u32,
    pub player_count: u32,
    pub flags: u32,
    pub instance: u32,
}

/// [`GroupData::flags`]: the players follow the leader's phase.
pub(crate) const GROUP_SYNC: u32 = 1;
/// [`GroupData::flags`]: the instance extracts root motion.
pub(crate) const GROUP_ROOT_MOTION: u32 = 2;
/// [`GroupData::flags`]: only montage players are locked and give root motion (UE's root
/// motion from montages only).
pub(crate) const GROUP_MONTAGES_ONLY: u32 = 4;
/// [`GroupData::flags`]: the root motion is extracted and reported, but the placement does not
/// move (UE's ignore root motion).
pub(crate) const GROUP_IGNORE_MOTION: u32 = 8;
/// [`GroupData::flags`]: the instance's second player is its outgoing one, and its frame ends
/// with an inertialization layer whose two samples the advance stage writes from it.
pub(crate) const GROUP_TRANSITIONS: u32 = 16;
/// An event record's kind (`[instance, player, kind, payload]`): a notify passed (payload: its
/// id), a looping track wrapped, a montage segment entered (payload: the segment).
pub(crate) const EVENT_NOTIFY: u32 = 0;
pub(crate) const EVENT_LOOPED: u32 = 1;
pub(crate) const EVENT_SEGMENT: u32 = 2;
/// The most laps of a looping track one step's events cover (a step longer than that reports
/// the crossings of its first laps only).
pub(crate) const MAX_EVENT_LAPS: u32 = 64;

/// A track: its segments and its length in seconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct TrackData {
    pub first_segment: u32,
    pub segment_count: u32,
    pub length: f32,
    /// [`TRACK_MONTAGE`].
    pub flags: u32,
}

/// [`TrackData::flags`]: a montage's track (`Crowd::add_montage`), not a clip's.
pub(crate) const TRACK_MONTAGE: u32 = 1;

/// A segment: its clip, where it starts on its track, where in its clip, and its length (in
/// seconds).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct SegmentData {
    pub clip: u32,
    pub track_start: f32,
    pub clip_start: f32,
    pub length: f32,
}

/// Per instance: its root motion over the last step, and its placement (96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct RootMotionData {
    pub delta: Xform,
    pub placement: Xform,
}

// ---------------------------------------------------------------------------------------------
// Drawing (src/render/)

/// One vertex, 56 bytes, as the vertex buffer holds it: bind-pose position and normal, four
/// bone indices into the skeleton (parents-first order, as the skinning buffer) and their
/// weights.
#[cfg(feature = "render")]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SkinnedVertex {
    /// Bind-pose position.
    pub position: [f32; 3],
    /// Bind-pose normal.
    pub normal: [f32; 3],
    /// Bone indices (into the skeleton's parents-first order).
    pub joints: [u32; 4],
    /// Weights of the four bones.
    pub weights: [f32; 4],
}

/// The camera and the mesh's root matrix, per draw.
#[cfg(feature = "render")]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ViewUniform {
    pub view_proj: [[f32; 4]; 4],
    pub root: [[f32; 4]; 4],
    pub light: [f32; 4],
}

/// Per chunk drawn: bones per instance, the chunk's first instance, where its placements
/// start and how far apart they lie (in [`Xform`]s), and `vec4` words per skinning matrix (3
/// for rows, 4 for 4x4 columns).
#[cfg(feature = "render")]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ChunkUniform {
    pub bones: u32,
    pub first: u32,
    pub placement_first: u32,
    pub placement_stride: u32,
    pub matrix_words: u32,
}

// ---------------------------------------------------------------------------------------------
// The contract with the shaders, checked by the tests below.

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use std::mem::offset_of;

    use super::*;
    use crate::gpu::shaders::{tests::module, STAGES};

    /// A Rust type's layout as its WGSL twin must have it: the WGSL struct name, the size, and
    /// each WGSL member's name with the byte offset of the Rust field it mirrors.
    #[derive(Clone, Copy, Debug)]
    struct StructLayout {
        pub wgsl: &'static str,
        pub size: usize,
        pub members: &'static [(&'static str, usize)],
    }

    /// `layout!(Type { wgsl_member: rust_field, ... })`.
    macro_rules! layout {
        ($t:ident { $($wgsl:ident: $field:ident),* $(,)? }) => {
            StructLayout {
                wgsl: stringify!($t),
                size: size_of::<$t>(),
                members: &[$((stringify!($wgsl), offset_of!($t, $field))),*],
            }
        };
    }

    /// Every struct the shaders share with Rust.
    const STRUCTS: &[StructLayout] = &[
        layout!(Xform {
            r: rotation,
            t: translation,
            s: scale
        }),
        StructLayout {
            wgsl: "Mat3x4",
            size: size_of::<Mat3x4>(),
            members: &[("r0", 0), ("r1", 16), ("r2", 32)],
        },
        layout!(Params {
            bone_count: bone_count,
            instance_count: instance_count,
            root_bone: root_bone,
            curve_count: curve_count,
            root_up: root_up,
            root_parent: root_parent,
            levels: levels,
            group_instances: group_instances,
            parents_word: parents_word,
            inverse_bind_word: inverse_bind_word,
            order_word: order_word,
            level_starts_word: level_starts_word,
            pad0: pad0,
            pad1: pad1
        }),
        layout!(Head {
            first: first,
            layers: layers,
            slot: slot,
            slots: slots
        }),
        layout!(LayerEntry {
            kind_and_samples: kind_and_samples,
            weight: weight,
            extra: extra,
            mask: mask
        }),
        layout!(SampleEntry {
            clip_and_flags: clip_and_flags,
            time: time,
            weight: weight,
            root_lock: root_lock
        }),
        layout!(ClipData {
            duration: duration,
            channel_base: channel_base,
            retarget_base: retarget_base,
            flags: flags
        }),
        layout!(ChannelData {
            time_offset: time_offset,
            value_offset: value_offset,
            count: count,
            flags: flags
        }),
        layout!(BoneRetarget {
            source: source,
            mode: mode,
            flags: flags,
            length_ratio: length_ratio,
            source_ref: source_ref,
            target_ref: target_ref,
            relative: relative,
            orient_rotation: orient_rotation,
            orient_source: orient_source,
            orient_target: orient_target,
        }),
        layout!(BonePlan {
            pre: pre,
            post: post,
            outer_pre: outer_pre,
            outer_post: outer_post,
            twist_axis: twist_axis,
            fraction: fraction,
            t_rot: t_rot,
            t_inv_scale: t_inv_scale,
            t_k: t_k,
            t_w: t_w,
            path_start: path_start,
            t_const: t_const,
            path_len: path_len,
            t_sub: t_sub,
            chord_len: chord_len,
            swing: swing,
            parent_chord_len: parent_chord_len,
            parent_swing: parent_swing,
            modes: modes,
            scale: scale,
            t_cap: t_cap,
            t_wpre: t_wpre,
            t_wpost: t_wpost,
            t_par_inv: t_par_inv,
            t_yaw_axis: t_yaw_axis,
            source_rest: source_rest,
        }),
        layout!(IkHeader {
            chain_count: chain_count,
            pelvis: pelvis,
            pelvis_path_start: pelvis_path_start,
            pelvis_path_len: pelvis_path_len,
            max_drop: max_drop,
            _pad0: _pad0,
            _pad1: _pad1,
            _pad2: _pad2,
        }),
        layout!(IkChain {
            root: root,
            mid: mid,
            end: end,
            goal_parent: goal_parent,
            bend: bend,
            flags: flags,
            path_start: path_start,
            path_len: path_len,
            goal_path_start: goal_path_start,
            goal_path_len: goal_path_len,
            up: up,
            rest_height: rest_height,
            contact_lo: contact_lo,
            contact_hi: contact_hi,
            toe: toe,
            slack: slack,
            tip: tip,
            _pad2: _pad2,
        }),
        layout!(CrowdParams {
            dt: dt,
            group_count: group_count,
            tracks: tracks,
            segments: segments,
            root_up: root_up,
            root_bone: root_bone,
            root_parent: root_parent,
            bone_count: bone_count,
            pad0: pad0,
            pad1: pad1,
            pad2: pad2
        }),
        layout!(PlayerData {
            track: track,
            flags: flags,
            entry: entry,
            _pad0: _pad0,
            position: position,
            start_position: start_position,
            weight: weight,
            interrupted: interrupted,
            rate: rate,
            basis: basis,
            scale: scale,
            bias: bias,
            clamp_min: clamp_min,
            clamp_max: clamp_max,
            step_start: step_start,
            step_travel: step_travel,
        }),
        layout!(GroupData {
            first_player: first_player,
            player_count: player_count,
            flags: flags,
            instance: instance
        }),
        layout!(TrackData {
            first_segment: first_segment,
            segment_count: segment_count,
            length: length,
            flags: flags
        }),
        layout!(SegmentData {
            clip: clip,
            track_start: track_start,
            clip_start: clip_start,
            length: length
        }),
        layout!(RootMotionData {
            delta: delta,
            placement: placement
        }),
        #[cfg(feature = "render")]
        layout!(ViewUniform {
            view_proj: view_proj,
            root: root,
            light: light
        }),
        #[cfg(feature = "render")]
        layout!(ChunkUniform {
            bones: bones,
            first: first,
            placement_first: placement_first,
            placement_stride: placement_stride,
            matrix_words: matrix_words
        }),
    ];

    /// A scalar constant's value as Rust has it.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Constant {
        U32(u32),
        F32(f32),
    }

    /// Every scalar constant the shaders share with Rust, by its WGSL name.
    const CONSTANTS: &[(&str, Constant)] = {
        use crate::additive::delta::{NO_ROTATION, ZERO_WEIGHT};
        use crate::math::{ORIENT_PRECISION, TINY};
        use crate::TranslationMode;
        use Constant::{F32, U32};
        &[
            ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
            ("BONE_BLOCK", U32(BONE_BLOCK)),
            ("FUSED_BONES", U32(FUSED_BONES)),
            ("SHARED_SEARCHES", U32(SHARED_SEARCHES)),
            ("LAYER_BASE", U32(LAYER_BASE)),
            ("LAYER_LOCAL", U32(LAYER_LOCAL)),
            ("LAYER_MESH", U32(LAYER_MESH)),
            ("LAYER_DYNAMIC_LOCAL", U32(LAYER_DYNAMIC_LOCAL)),
            ("LAYER_DYNAMIC_MESH", U32(LAYER_DYNAMIC_MESH)),
            ("LAYER_IK", U32(LAYER_IK)),
            ("LAYER_BLEND_LOCAL", U32(LAYER_BLEND_LOCAL)),
            ("LAYER_BLEND_MESH", U32(LAYER_BLEND_MESH)),
            ("LAYER_INERTIALIZE", U32(LAYER_INERTIALIZE)),
            ("PLAN_NO_GOAL", U32(PLAN_NO_GOAL)),
            ("IK_HAND", U32(IK_HAND)),
            ("IK_CARRIED", U32(IK_CARRIED)),
            ("IK_TORSO", U32(IK_TORSO)),
            ("IK_NO_BONE", U32(IK_NO_BONE)),
            ("IK_CHAIN_WORDS", U32(IK_CHAIN_WORDS)),
            ("IK_HEADER_WORDS", U32(IK_HEADER_WORDS)),
            ("IK_MAX_CHAINS", U32(IK_MAX_CHAINS)),
            ("INSTANCE_LOOP", U32(INSTANCE_LOOP)),
            ("ROOT_LOCK_REF_POSE", U32(ROOT_LOCK_REF_POSE)),
            ("ROOT_LOCK_FIRST_FRAME", U32(ROOT_LOCK_FIRST_FRAME)),
            ("ROOT_LOCK_ZERO", U32(ROOT_LOCK_ZERO)),
            ("ROOT_TRANSLATION_SHIFT", U32(ROOT_TRANSLATION_SHIFT)),
            ("ROOT_ROTATION_SHIFT", U32(ROOT_ROTATION_SHIFT)),
            ("ROOT_AXES_ALL", U32(ROOT_AXES_ALL)),
            ("ROOT_AXES_PLANE", U32(ROOT_AXES_PLANE)),
            ("ROOT_AXES_NONE", U32(ROOT_AXES_NONE)),
            ("CLIP_ADDITIVE", U32(CLIP_ADDITIVE)),
            ("CHANNEL_STEP", U32(CHANNEL_STEP)),
            ("CHANNEL_STRIDE_SHIFT", U32(CHANNEL_STRIDE_SHIFT)),
            ("CLIP_SOURCES_SHIFT", U32(CLIP_SOURCES_SHIFT)),
            ("RETARGET_ORIENT", U32(RETARGET_ORIENT)),
            ("CLIP_PLAN", U32(CLIP_PLAN)),
            ("CLIP_GOALS", U32(CLIP_GOALS)),
            ("RETARGET_WORDS", U32(RETARGET_WORDS)),
            ("PLAN_WORDS", U32(PLAN_WORDS)),
            ("PLAN_ROTATION", U32(PLAN_ROTATION)),
            ("PLAN_REFERENCE", U32(PLAN_REFERENCE)),
            ("PLAN_MAPPED", U32(PLAN_MAPPED)),
            ("PLAN_CHAIN", U32(PLAN_CHAIN)),
            ("PLAN_SEGMENT_END", U32(PLAN_SEGMENT_END)),
            ("PLAN_DRIVEN", U32(PLAN_DRIVEN)),
            ("PATH_INVERSE", U32(PATH_INVERSE)),
            ("PATH_BONE", U32(PATH_BONE)),
            ("PATH_MIRROR_SHIFT", U32(PATH_MIRROR_SHIFT)),
            ("PLAN_MIRROR_SHIFT", U32(PLAN_MIRROR_SHIFT)),
            ("MODE_SKELETON", U32(TranslationMode::Skeleton as u32)),
            (
                "MODE_ANIMATION_SCALED",
                U32(TranslationMode::AnimationScaled as u32),
            ),
            (
                "MODE_ANIMATION_RELATIVE",
                U32(TranslationMode::AnimationRelative as u32),
            ),
            (
                "MODE_ORIENT_AND_SCALE",
                U32(TranslationMode::OrientAndScale as u32),
            ),
            ("PLAYER_LOOP", U32(PLAYER_LOOP)),
            ("GROUP_SYNC", U32(GROUP_SYNC)),
            ("GROUP_ROOT_MOTION", U32(GROUP_ROOT_MOTION)),
            ("GROUP_MONTAGES_ONLY", U32(GROUP_MONTAGES_ONLY)),
            ("GROUP_IGNORE_MOTION", U32(GROUP_IGNORE_MOTION)),
            ("GROUP_TRANSITIONS", U32(GROUP_TRANSITIONS)),
            ("TRACK_MONTAGE", U32(TRACK_MONTAGE)),
            ("EVENT_NOTIFY", U32(EVENT_NOTIFY)),
            ("EVENT_LOOPED", U32(EVENT_LOOPED)),
            ("EVENT_SEGMENT", U32(EVENT_SEGMENT)),
            ("MAX_EVENT_LAPS", U32(MAX_EVENT_LAPS)),
            ("ZERO_WEIGHT", F32(ZERO_WEIGHT)),
            ("NO_OFFSET", F32(crate::blend::inertia::NO_OFFSET)),
            ("NO_ROTATION", F32(NO_ROTATION)),
            ("TINY", F32(TINY)),
            ("BEND_BIAS", F32(crate::retarget::ik::BEND_BIAS)),
            ("MAX_REACH", F32(crate::retarget::ik::MAX_REACH)),
            ("ORIENT_PRECISION", F32(ORIENT_PRECISION)),
        ]
    };

    /// Structs the shaders keep to themselves (locals of one stage, never in a buffer).
    const SHADER_PRIVATE: &[&str] = &[
        "Blend",
        "KeySearch",
        "KeyPair",
        "PathFold",
        "ChainPose",
        "TwoBone",
        "Turn",
        "Goal",
        "Step",
        "Crossing",
        "MeshApplied",
        "VertexIn",
        "VertexOut",
    ];

    /// Where the structs and scalar constants of `module` (the stage `stage`) differ from
    /// their Rust twins; the names found go to `seen`.
    fn contract_errors(
        module: &naga::Module,
        stage: &str,
        seen: &mut HashSet<&'static str>,
    ) -> Vec<String> {
        let mut layouter = naga::proc::Layouter::default();
        layouter
            .update(module.to_ctx())
            .expect("naga lays the types out");
        let mut errors = Vec::new();
        for (handle, ty) in module.types.iter() {
            let (Some(name), naga::TypeInner::Struct { members, .. }) = (&ty.name, &ty.inner)
            else {
                continue;
            };
            let Some(rust) = STRUCTS.iter().find(|s| s.wgsl == name) else {
                if !SHADER_PRIVATE.contains(&name.as_str()) {
                    errors.push(format!(
                        "{stage}.wgsl: struct {name} has no Rust twin in layout::STRUCTS \
                         (nor is it listed as shader-private)"
                    ));
                }
                continue;
            };
            seen.insert(rust.wgsl);
            let size = layouter[handle].size as usize;
            if size != rust.size {
                errors.push(format!(
                    "{stage}.wgsl: struct {name} is {size} bytes, its Rust twin {} bytes",
                    rust.size
                ));
            }
            for m in members {
                let field = m.name.as_deref().unwrap_or("(unnamed)");
                match rust.members.iter().find(|(n, _)| *n == field) {
                    None => errors.push(format!(
                        "{stage}.wgsl: {name}.{field} has no Rust field in layout::STRUCTS"
                    )),
                    Some(&(_, offset)) if offset != m.offset as usize => errors.push(format!(
                        "{stage}.wgsl: {name}.{field} is at byte {}, its Rust field at byte \
                         {offset}",
                        m.offset
                    )),
                    Some(_) => {}
                }
            }
            for (field, _) in rust.members {
                if !members.iter().any(|m| m.name.as_deref() == Some(field)) {
                    errors.push(format!(
                        "{stage}.wgsl: {name}.{field} is in layout::STRUCTS but not in the shader"
                    ));
                }
            }
        }
        for (_, c) in module.constants.iter() {
            let Some(name) = &c.name else { continue };
            let value = match module.global_expressions[c.init] {
                naga::Expression::Literal(naga::Literal::U32(v)) => Constant::U32(v),
                naga::Expression::Literal(naga::Literal::F32(v)) => Constant::F32(v),
                naga::Expression::Literal(other) => {
                    errors.push(format!(
                        "{stage}.wgsl: const {name} = {other:?}: shared constants are u32 or f32"
                    ));
                    continue;
                }
                _ => continue, // composites (IDENTITY, BLEND_EMPTY) are shader-only values
            };
            match CONSTANTS.iter().find(|(n, _)| n == name) {
                None => errors.push(format!(
                    "{stage}.wgsl: const {name} has no Rust twin in layout::CONSTANTS"
                )),
                Some((n, rust)) if *rust != value => errors.push(format!(
                    "{stage}.wgsl: const {name} is {value:?}, its Rust twin {rust:?}"
                )),
                Some((n, _)) => {
                    seen.insert(n);
                }
            }
        }
        errors
    }

    #[test]
    fn every_shared_struct_and_constant_matches_its_rust_twin() {
        let mut seen = HashSet::new();
        let errors: Vec<String> = STAGES
            .iter()
            .flat_map(|s| contract_errors(&module(s), s.name, &mut seen))
            .collect();
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        for name in STRUCTS
            .iter()
            .map(|s| s.wgsl)
            .chain(CONSTANTS.iter().map(|c| c.0))
        {
            assert!(
                seen.contains(name),
                "{name} is in layout.rs but in no shader"
            );
        }
    }

    #[test]
    fn a_deliberate_mismatch_names_the_struct_and_the_field() {
        let src = "struct Xform { r: vec4<f32>, s: vec4<f32>, t: vec4<f32> }\n\
                   struct Head { first: u32, layers: u32, slot: u32 }\n\
                   const ZERO_WEIGHT: f32 = 1e-4;\n\
                   const LAYER_BOGUS: u32 = 9u;\n\
                   @group(0) @binding(0) var<storage, read> a: array<Xform>;\n\
                   @group(0) @binding(1) var<storage, read> b: array<Head>;\n\
                   @compute @workgroup_size(1) fn main() { _ = a[0]; _ = b[0]; }";
        let module = naga::front::wgsl::parse_str(src).unwrap();
        let errors = contract_errors(&module, "test", &mut HashSet::new()).join("\n");
        for expected in [
            "Xform.s is at byte 16, its Rust field at byte 32",
            "Xform.t is at byte 32, its Rust field at byte 16",
            "struct Head is 12 bytes, its Rust twin 16 bytes",
            "Head.slots is in layout::STRUCTS but not in the shader",
            "const ZERO_WEIGHT is F32(0.0001), its Rust twin F32(1e-5)",
            "const LAYER_BOGUS has no Rust twin",
        ] {
            assert!(
                errors.contains(expected),
                "missing '{expected}' in:\n{errors}"
            );
        }
    }

    #[test]
    fn layouts_are_the_sizes_the_buffers_assume() {
        assert_eq!(size_of::<Xform>(), 48);
        assert_eq!(size_of::<Mat3x4>(), 48);
        assert_eq!(size_of::<BoneRetarget>(), 208);
        assert_eq!(size_of::<BonePlan>(), 272);
        assert_eq!(size_of::<PlayerData>(), 64);
        assert_eq!(size_of::<RootMotionData>(), 96);
        for entry in [
            size_of::<Head>(),
            size_of::<LayerEntry>(),
            size_of::<SampleEntry>(),
            size_of::<GroupData>(),
            size_of::<TrackData>(),
            size_of::<SegmentData>(),
        ] {
            assert_eq!(
                entry,
                size_of::<Entry>(),
                "16-byte words of a shared buffer"
            );
        }
    }
}
