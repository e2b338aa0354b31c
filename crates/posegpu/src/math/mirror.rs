//! Mirrored bones (a negative scale component): UE's matrix path for `compose` and `relative`
//! (`docs/pose-math.md`, "Transforms"). The scale and translation are the TRS formulas' (the
//! matrix product's translation is the TRS one, and UE's desired scale is `S_A ∘ S_B`, or
//! `S_A ∘ safeRecip(S_B)`); only the rotation comes from the matrix product: its 3x3 with each
//! axis normalized (an axis shorter than `sqrt(TINY)` kept as it is), axis `i` multiplied by
//! the sign of the desired scale's component `i` (`+1` for `≥ 0`), then turned into a
//! quaternion by [`quat_from_axes`] and normalized.
//!
//! WGSL twins in `shaders/common.wgsl` (`compose_rotation_mirrored`,
//! `relative_rotation_mirrored`, `quat_from_axes`), in the same order.

use glam::{Quat, Vec3, Vec4};

use super::Transform;
use super::{normalize_quat, safe_recip, TINY};

/// True when a component of `a` or `b` is negative: the test that picks the matrix path (one
/// compare per component, cheap on the fast path).
#[inline]
pub(crate) fn any_negative(a: Vec3, b: Vec3) -> bool {
    a.min(b).min_element() < 0.0
}

/// The columns of `q`'s rotation matrix (column vectors), `q` a unit quaternion; the formulas
/// of `skinning_matrix` in `shaders/common.wgsl`.
pub(crate) fn quat_axes(q: Quat) -> [Vec3; 3] {
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
    let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    [
        Vec3::new(1.0 - (yy + zz), xy + wz, xz - wy),
        Vec3::new(xy - wz, 1.0 - (xx + zz), yz + wx),
        Vec3::new(xz + wy, yz - wx, 1.0 - (xx + yy)),
    ]
}

/// The quaternion of the 3x3 matrix whose columns are `c0, c1, c2` (column vectors),
/// normalized: Shepperd's method, the trace branch where the trace is positive, otherwise the
/// branch of the largest diagonal element (the first of equals). Never a zero quaternion (each
/// branch's square root is at least 1), so a degenerate matrix still gives a unit rotation.
pub(crate) fn quat_from_axes(c0: Vec3, c1: Vec3, c2: Vec3) -> Quat {
    // m_rc: row r, column c.
    let (m00, m10, m20) = (c0.x, c0.y, c0.z);
    let (m01, m11, m21) = (c1.x, c1.y, c1.z);
    let (m02, m12, m22) = (c2.x, c2.y, c2.z);
    let trace = m00 + m11 + m22;
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt();
        let k = 0.5 / s;
        Vec4::new((m21 - m12) * k, (m02 - m20) * k, (m10 - m01) * k, 0.5 * s)
    } else if m00 >= m11 && m00 >= m22 {
        let s = (m00 - m11 - m22 + 1.0).sqrt();
        let k = 0.5 / s;
        Vec4::new(0.5 * s, (m01 + m10) * k, (m02 + m20) * k, (m21 - m12) * k)
    } else if m11 >= m22 {
        let s = (m11 - m22 - m00 + 1.0).sqrt();
        let k = 0.5 / s;
        Vec4::new((m01 + m10) * k, 0.5 * s, (m12 + m21) * k, (m02 - m20) * k)
    } else {
        let s = (m22 - m00 - m11 + 1.0).sqrt();
        let k = 0.5 / s;
        Vec4::new((m02 + m20) * k, (m12 + m21) * k, 0.5 * s, (m10 - m01) * k)
    };
    normalize_quat(q)
}

/// Axis `v` of the product with its scaling removed and the desired scale's sign `s` put back.
fn signed_unit(v: Vec3, s: f32) -> Vec3 {
    let sq = v.dot(v);
    let unit = if sq >= TINY { v * sq.sqrt().recip() } else { v };
    if s >= 0.0 {
        unit
    } else {
        -unit
    }
}

/// The rotation of `compose(child, parent)` by the matrix path: axis `i` of
/// `M_parent · M_child` is `R_p · (S_p ∘ (S_c[i] · R_c e_i))`; desired scale `S_c ∘ S_p`.
pub(crate) fn compose_rotation(child: &Transform, parent: &Transform) -> Quat {
    let a = quat_axes(child.rotation);
    let (sc, sp) = (child.scale, parent.scale);
    let desired = sc * sp;
    let axis = |i: usize| {
        let v = parent.rotation * (sp * (a[i] * sc[i]));
        signed_unit(v, desired[i])
    };
    quat_from_axes(axis(0), axis(1), axis(2))
}

/// The rotation of `relative(a, b)` by the matrix path: axis `i` of `M_b⁻¹ · M_a`, with
/// `M_b⁻¹ = safeRecip(S_b) · R_b⁻¹ · translate(−T_b)` (exact where `S_b` has no zero
/// component), is `safeRecip(S_b) ∘ (R_b⁻¹ · (S_a[i] · R_a e_i))`; desired scale
/// `S_a ∘ safeRecip(S_b)`.
pub(crate) fn relative_rotation(a: &Transform, b: &Transform) -> Quat {
    let axes = quat_axes(a.rotation);
    let inv_r = b.rotation.conjugate();
    let inv_s = safe_recip(b.scale);
    let desired = a.scale * inv_s;
    let axis = |i: usize| {
        let v = inv_s * (inv_r * (axes[i] * a.scale[i]));
        signed_unit(v, desired[i])
    };
    quat_from_axes(axis(0), axis(1), axis(2))
}

/// The local rotation that puts a bone at component-space rotation `cs` under a parent at
/// component-space transform `parent`: `R_p⁻¹ ⊗ cs`, normalized, and where the parent is
/// mirrored, that rotation reflected as the matrix path reflects a child's (with `D` the
/// parent's scale signs, the matrix path gives `R = R_p ⊗ (D · R_c · D)` for uniform
/// magnitudes; `D · R · D` turns about `det(D)·D·axis` by the same angle). The inverse of
/// [`Transform::compose`]'s rotation for uniform-magnitude scales, whatever the child's own
/// scale. IK uses it to turn a bone in component space.
pub(crate) fn local_rotation(parent: &Transform, cs: Quat) -> Quat {
    let q = (parent.rotation.conjugate() * cs).normalize();
    if parent.scale.min_element() >= 0.0 {
        return q;
    }
    let d = Vec3::select(parent.scale.cmplt(Vec3::ZERO), -Vec3::ONE, Vec3::ONE);
    let det = d.x * d.y * d.z;
    let v = Vec3::new(q.x, q.y, q.z) * d * det;
    Quat::from_xyzw(v.x, v.y, v.z, q.w)
}

/// A reflection's sign pattern: bit 0 set where `scale.x` is negative, bit 1 `y`, bit 2 `z`
/// (0: no reflection). Retarget plans record the patterns of mirrored frames so.
pub(crate) fn sign_pattern(scale: Vec3) -> u32 {
    u32::from(scale.x < 0.0) | u32::from(scale.y < 0.0) << 1 | u32::from(scale.z < 0.0) << 2
}

/// The diagonal `D` of sign pattern `pattern` ([`sign_pattern`]): `-1` where a bit is set.
pub(crate) fn pattern_signs(pattern: u32) -> Vec3 {
    let s = |bit: u32| if pattern & bit != 0 { -1.0 } else { 1.0 };
    Vec3::new(s(1), s(2), s(4))
}

/// `D · R · D` as a quaternion, `D` the diagonal of sign pattern `pattern`: the rotation the
/// matrix path puts below a parent frame reflected by `D` (`R_w = R_p ⊗ (D · R_c · D)`), and
/// its own inverse. `D · R · D` turns about `det(D) · D · axis` by the same angle:
/// `(x, y, z, w)` becomes `(sy·sz·x, sx·sz·y, sx·sy·z, w)`, whatever the number of negative
/// signs.
pub(crate) fn reflect_rotation(q: Quat, pattern: u32) -> Quat {
    let d = pattern_signs(pattern);
    let v = Vec3::new(q.x, q.y, q.z) * Vec3::new(d.y * d.z, d.x * d.z, d.x * d.y);
    Quat::from_xyzw(v.x, v.y, v.z, q.w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Mat3;

    #[test]
    fn reflect_rotation_is_the_rotation_conjugated_by_the_reflection() {
        let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -2.1, 1.2);
        for pattern in 0..8 {
            let d = Mat3::from_diagonal(pattern_signs(pattern));
            let want = d * Mat3::from_quat(q) * d;
            let got = Mat3::from_quat(reflect_rotation(q, pattern));
            assert!(got.abs_diff_eq(want, 1e-6), "{pattern}");
            assert_eq!(sign_pattern(pattern_signs(pattern)), pattern);
            let back = reflect_rotation(reflect_rotation(q, pattern), pattern);
            assert_eq!(back, q);
        }
    }

    #[test]
    fn quat_from_axes_inverts_quat_axes_on_every_branch() {
        let cases = [
            Quat::IDENTITY,
            Quat::from_rotation_x(3.0),
            Quat::from_rotation_y(3.0),
            Quat::from_rotation_z(3.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -2.9, 1.7),
            Quat::from_xyzw(0.5, 0.5, -0.5, 0.5),
        ];
        for q in cases {
            let [a, b, c] = quat_axes(q);
            let m = Mat3::from_quat(q);
            assert!(Mat3::from_cols(a, b, c).abs_diff_eq(m, 1e-6), "{q}");
            let back = quat_from_axes(a, b, c);
            assert!(
                back.abs_diff_eq(q, 1e-6) || back.abs_diff_eq(-q, 1e-6),
                "{q} {back}"
            );
        }
        // A degenerate matrix still gives a unit quaternion.
        let z = quat_from_axes(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);
        assert!((z.length() - 1.0).abs() < 1e-6);
    }
}
