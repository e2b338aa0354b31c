//! The spec's per-bone math (`docs/pose-math.md`, UE's TRS conventions), which both evaluators
//! run and the authoring tools reuse: the formulas here, [`crate::Transform`] and its
//! composition, additive deltas ([`delta`]), the blend rule ([`blend`]) and inertialization
//! ([`inertia`]).
//!
//! Every function here has a WGSL twin in `shaders/`; keep the operation order identical so
//! that the GPU and the CPU agree to rounding.

use glam::{Mat4, Quat, Vec3, Vec4};

pub mod blend;
pub mod delta;
pub mod inertia;
pub(crate) mod mirror;
pub(crate) mod transform;

// The thresholds the shaders share live with the other shared constants, in `layout`.
pub use crate::layout::constants::{NO_OFFSET, ORIENT_PRECISION, TINY, ZERO_WEIGHT};
use transform::Transform;

/// UE's `KINDA_SMALL_NUMBER`: shorter translations are not rescaled.
pub const SMALL: f32 = 1e-4;

/// `0` where `|x| ≤ 1e-8`, else `1/x`, per component.
pub fn safe_recip(v: Vec3) -> Vec3 {
    let r = |x: f32| if x.abs() <= TINY { 0.0 } else { 1.0 / x };
    Vec3::new(r(v.x), r(v.y), r(v.z))
}

/// `(1−α)·a + α·sign(a·b)·b`, not normalized: interpolation along the shorter arc.
/// `sign(0)` is taken as `+1`.
pub fn fast_lerp(a: Quat, b: Quat, alpha: f32) -> Vec4 {
    let a = Vec4::from(a);
    let b = Vec4::from(b);
    let sign = if a.dot(b) >= 0.0 { 1.0 } else { -1.0 };
    a * (1.0 - alpha) + b * (alpha * sign)
}

/// Normalizes a quaternion given as a 4-vector; the same expression the shaders use.
pub fn normalize_quat(v: Vec4) -> Quat {
    Quat::from_vec4(v * v.dot(v).sqrt().recip())
}

/// `normalize(fastLerp(a, b, α))`: the rotation interpolation of the spec (nlerp).
pub fn nlerp(a: Quat, b: Quat, alpha: f32) -> Quat {
    normalize_quat(fast_lerp(a, b, alpha))
}

/// Linear interpolation in the form the shaders use (`mix`).
pub fn lerp3(a: Vec3, b: Vec3, alpha: f32) -> Vec3 {
    a * (1.0 - alpha) + b * alpha
}

/// An affine matrix as three rows `[m00 m01 m02 tx | m10 .. ty | m20 .. tz]`: the 3x4 layout of
/// posegpu's skinning-matrix buffers.
pub fn affine_rows(m: &Mat4) -> [f32; 12] {
    let r = m.transpose();
    let (a, b, c) = (r.x_axis, r.y_axis, r.z_axis);
    [a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w]
}

/// The inverse of [`affine_rows`]: a 4x4 matrix with last row `0 0 0 1`.
pub fn rows_to_mat4(r: &[f32; 12]) -> Mat4 {
    Mat4::from_cols_array(&[
        r[0], r[4], r[8], 0.0, r[1], r[5], r[9], 0.0, r[2], r[6], r[10], 0.0, r[3], r[7], r[11],
        1.0,
    ])
}

/// The rotation taking unit vector `a` to unit vector `b` (`findBetweenNormals` in the spec).
/// For opposite vectors, a half turn about an axis perpendicular to `a`.
pub fn find_between_normals(a: Vec3, b: Vec3) -> Quat {
    let w = 1.0 + a.dot(b);
    let q = if w >= 1e-6 {
        a.cross(b).extend(w)
    } else if a.x.abs() > a.y.abs() {
        Vec4::new(-a.z, 0.0, a.x, 0.0)
    } else {
        Vec4::new(0.0, -a.z, a.y, 0.0)
    };
    normalize_quat(q)
}

/// The twist of `q` about unit vector `axis`: `q = swing ⊗ twist`, where `twist` turns about
/// `axis` only and `swing` turns `axis` by the smallest rotation. The identity where `q` has no
/// twist (a half turn perpendicular to `axis`).
pub fn twist(q: Quat, axis: Vec3) -> Quat {
    let p = axis * q.xyz().dot(axis);
    let t = Vec4::new(p.x, p.y, p.z, q.w);
    let len = t.length();
    if len < 1e-9 {
        Quat::IDENTITY
    } else {
        Quat::from_vec4(t / len)
    }
}

/// `q^f`: the rotation by `f` times `q`'s angle about `q`'s axis, `q` taken with `w ≥ 0` (the
/// shorter way round). The identity for a rotation under about 1e-9 rad.
pub fn quat_pow(q: Quat, f: f32) -> Quat {
    let q = if q.w < 0.0 { -q } else { q };
    let s = q.xyz().length();
    if s < 1e-9 {
        return Quat::IDENTITY;
    }
    let half = s.atan2(q.w) * f;
    Quat::from_vec4((q.xyz() * (half.sin() / s)).extend(half.cos()))
}

/// Rotation angle between two rotations, in radians, up to the sign of the quaternion.
/// Through `atan2` rather than `acos`, which loses precision near zero.
pub fn angle_between(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transform;

    #[test]
    fn affine_rows_round_trip() {
        let t = Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_rotation_y(0.3),
            Vec3::new(1.0, 2.0, 0.5),
        );
        let m = t.to_matrix();
        let back = rows_to_mat4(&affine_rows(&m));
        assert!(m.abs_diff_eq(back, 0.0));
        assert_eq!(affine_rows(&m)[3], 1.0);
    }
}
