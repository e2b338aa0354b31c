//! CPU twin of `shaders/hierarchy.wgsl`: the parent-ordered pass from local transforms to
//! component-space transforms and skinning matrices (spec: `docs/pose-math.md`, "Skeleton and
//! hierarchy").

use glam::Mat4;

use crate::layout::{Mat3x4, Xform};
use crate::library::AnimLibrary;
use crate::math::{affine_rows, rows_to_mat4};
use crate::Transform;

/// One instance: `locals`, `component` and `skinning` hold one entry per bone.
pub(super) fn run_instance(
    lib: &AnimLibrary,
    locals: &[Xform],
    component: &mut [Xform],
    skinning: &mut [Mat3x4],
) {
    for (i, local) in locals.iter().enumerate() {
        let local = Transform::from(*local);
        let cs = match usize::try_from(lib.data().parents[i]) {
            Ok(p) => Transform::compose(&local, &component[p].into()),
            Err(_) => local,
        };
        component[i] = cs.into();
        skinning[i] = skinning_matrix(&lib.data().inverse_bind[i], &cs);
    }
}

/// A bone's skinning matrix from its inverse bind matrix's rows and its component-space
/// transform `cs`.
#[inline]
pub(super) fn skinning_matrix(inverse_bind: &Mat3x4, cs: &Transform) -> Mat3x4 {
    let bind: Mat4 = rows_to_mat4(inverse_bind);
    affine_rows(&(cs.to_matrix() * bind))
}

/// The stage for every instance (instance-major buffers).
pub(super) fn run(
    lib: &AnimLibrary,
    locals: &[Xform],
    component: &mut [Xform],
    skinning: &mut [Mat3x4],
) {
    let bones = lib.bone_count();
    for ((l, c), s) in locals
        .chunks_exact(bones)
        .zip(component.chunks_exact_mut(bones))
        .zip(skinning.chunks_exact_mut(bones))
    {
        run_instance(lib, l, c, s);
    }
}
