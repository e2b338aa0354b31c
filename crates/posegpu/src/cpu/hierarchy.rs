//! CPU twin of `shaders/hierarchy.wgsl`: the parent-ordered pass from local transforms to
//! component-space transforms and skinning matrices (spec: `docs/pose-math.md`, "Skeleton and
//! hierarchy").

use glam::{Mat3, Vec3, Vec4};

use crate::layout::{Mat3x4, Xform};
use crate::library::AnimLibrary;
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
/// As `skinning_matrix` in `common.wgsl`: the rows of rotate(R) · scale(S), each dotted with
/// the inverse bind's columns, plus T (3x4 throughout: no 4x4 product, no transposes).
#[inline]
pub(super) fn skinning_matrix(inverse_bind: &Mat3x4, cs: &Transform) -> Mat3x4 {
    let [b0, b1, b2] = [0, 4, 8].map(|k| Vec4::from_slice(&inverse_bind[k..k + 4]));
    let columns = [
        Vec3::new(b0.x, b1.x, b2.x),
        Vec3::new(b0.y, b1.y, b2.y),
        Vec3::new(b0.z, b1.z, b2.z),
        Vec3::new(b0.w, b1.w, b2.w),
    ];
    // Rows of rotate(R) (the transpose of its axes), each scaled by S.
    let axes = Mat3::from_quat(cs.rotation).transpose();
    let t = cs.translation.to_array();
    let mut out = [0.0; 12];
    for (i, row) in [axes.x_axis, axes.y_axis, axes.z_axis]
        .into_iter()
        .enumerate()
    {
        let m = row * cs.scale;
        let r = &mut out[i * 4..i * 4 + 4];
        r[0] = m.dot(columns[0]);
        r[1] = m.dot(columns[1]);
        r[2] = m.dot(columns[2]);
        r[3] = m.dot(columns[3]) + t[i];
    }
    out
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
