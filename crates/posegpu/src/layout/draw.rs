//! Drawing (`src/render/`).

use bytemuck::{Pod, Zeroable};

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
/// start and how far apart they lie (in [`Xform`](super::Xform)s), and `vec4` words per
/// skinning matrix (3 for rows, 4 for 4x4 columns).
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
