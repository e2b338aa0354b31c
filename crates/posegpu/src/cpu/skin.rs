//! CPU twin of `shaders/skin.wgsl`'s vertex stage: a bind-pose vertex moved by one instance's
//! skinning matrices, `Σ wᵢ · Sᵢ · p` over the weights above zero, then the mesh's root.

use glam::{Mat4, Vec3};

use crate::layout::{Mat3x4, SkinnedVertex};
use crate::math::rows_to_mat4;

/// `root · Σ wᵢ · Sᵢ · p` for vertex `v` and one instance's `skinning` matrices.
pub(crate) fn skin_vertex(v: &SkinnedVertex, skinning: &[Mat3x4], root: &Mat4) -> Vec3 {
    let p = Vec3::from(v.position);
    let skinned = v
        .joints
        .iter()
        .zip(v.weights)
        .filter(|(_, w)| *w > 0.0)
        .fold(Vec3::ZERO, |acc, (&j, w)| {
            acc + rows_to_mat4(&skinning[j as usize]).transform_point3(p) * w
        });
    root.transform_point3(skinned)
}
