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
//!
//! One file per part, every item re-exported here (`crate::layout::X`): the poses and the
//! per-dispatch parameters here, the frame (`frame.rs`), clips and channels (`clips.rs`), a compressed clip's packed block (`packed.rs`), the
//! retarget table's records (`retarget.rs`), the IK table (`ik.rs`), crowd playback
//! (`crowd.rs`), drawing (`draw.rs`), and the contract test (`tests.rs`).

mod clips;
pub(crate) mod constants;
mod crowd;
#[cfg(feature = "render")]
mod draw;
mod frame;
mod ik;
mod packed;
mod retarget;
#[cfg(test)]
mod tests;

use bytemuck::{Pod, Zeroable};

pub(crate) use clips::*;
pub(crate) use constants::*;
pub(crate) use crowd::*;
#[cfg(feature = "render")]
pub use draw::SkinnedVertex;
#[cfg(feature = "render")]
pub(crate) use draw::{ChunkUniform, ViewUniform};
pub(crate) use frame::*;
pub(crate) use ik::*;
pub(crate) use packed::{Located, PackedHeader};
pub(crate) use retarget::*;

/// Invocations per workgroup of every compute stage.
pub(crate) const WORKGROUP_SIZE: u32 = 64;
/// Bones one invocation walks in the stages that walk an instance's bones (hierarchy, layers):
/// lavapipe (llvmpipe) ends an invocation's loops after 65,535 iterations in all, so longer
/// skeletons take one dispatch per block of this many bones.
pub(crate) const BONE_BLOCK: u32 = 4096;

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
    /// skeleton section's parts start in the retarget table (`src/library/tables.rs`).
    pub levels: u32,
    pub group_instances: u32,
    pub parents_word: u32,
    pub inverse_bind_word: u32,
    pub tasks_word: u32,
    pub level_starts_word: u32,
    /// The frame buffer's word where the resolve pass writes each sample's key search
    /// (entry `e`'s at `resolved_word + e`): the chunk's heads and entries come before it.
    pub resolved_word: u32,
    /// Instances per block of the fused pass's task table (`fused_group_instances` at
    /// `FUSED_MAX_POSES`): a level's tasks start at `task_instances` times its first bone.
    pub task_instances: u32,
}

/// The largest skeleton the fused pass takes, and the poses its workgroup holds by default
/// (48 bytes each, within WebGPU's 16 KiB): larger skeletons take the separate passes.
pub(crate) const FUSED_BONES: u32 = 320;

/// The most poses a fused workgroup may hold (`GpuOptions::fused_poses`): 48 KiB of workgroup
/// memory, what most Vulkan drivers give. The task table serves blocks of up to this many.
pub(crate) const FUSED_MAX_POSES: u32 = 1024;

/// Instances per workgroup of a fused pass whose workgroup holds `poses` poses: as many whole
/// skeletons of `bones` bones as fit.
pub(crate) fn fused_group_instances(bones: u32, poses: u32) -> u32 {
    (poses / bones.max(1)).max(1)
}

/// A fused task word (`shaders/fused.wgsl`): a bone's pose index within the workgroup's block
/// (bits 0–10), its parent's (11–21), and the bone itself (22–31), for its inverse bind
/// matrix. A block holds at most `FUSED_MAX_POSES` poses, within 11 bits.
pub(crate) const TASK_POSE_MASK: u32 = 0x7ff;
pub(crate) const TASK_PARENT_SHIFT: u32 = 11;
pub(crate) const TASK_BONE_SHIFT: u32 = 22;

/// The task word of the bone at pose `at` whose parent is at pose `parent`.
pub(crate) fn fused_task(at: u32, parent: u32, bone: u32) -> u32 {
    debug_assert!(at.max(parent) <= TASK_POSE_MASK && bone < 1 << (32 - TASK_BONE_SHIFT));
    at | parent << TASK_PARENT_SHIFT | bone << TASK_BONE_SHIFT
}
