//! The hierarchy's arithmetic on four instances at once, one per lane of a `Vec4`: the same bone
//! of four instances composed with the same parent, as ozz-animation composes four joints per
//! SIMD register. The bone is the same in every lane, so no lane idles and the inverse bind
//! matrix is one splat.
//!
//! Each formula performs glam's operations in glam's order (its SSE2 `Quat` product and
//! rotation, and `Mat3::from_quat`), so each lane has the bits of `Transform::compose` and of
//! the 3x4 skinning matrix the twin made bone by bone before (a test checks both on x86_64).
//! Only the operations' order differs from WGSL's (`compose` and `skinning_matrix` in
//! `common.wgsl`); the formulas are the same.

use glam::{Mat4, Vec4};

use crate::layout::{Mat3x4, Xform};
use crate::math::TINY;

/// Instances per group: one per lane.
pub(in crate::cpu) const LANES: usize = 4;

/// Four transforms, one per lane: rotation `xyzw`, translation, scale, a `Vec4` per component.
#[derive(Clone, Copy, Debug)]
pub(in crate::cpu) struct Pose {
    r: [Vec4; 4],
    t: [Vec4; 3],
    s: [Vec4; 3],
}

/// Four vectors' components, lane `k` from vector `k`: a 4x4 transpose.
#[inline(always)]
fn transpose(v: [Vec4; 4]) -> [Vec4; 4] {
    let m = Mat4::from_cols(v[0], v[1], v[2], v[3]).transpose();
    [m.x_axis, m.y_axis, m.z_axis, m.w_axis]
}

impl Pose {
    /// Lane `k` from `x[k]`.
    #[inline(always)]
    pub(super) fn gather(x: [&Xform; LANES]) -> Self {
        let [rx, ry, rz, rw] = transpose(x.map(|x| Vec4::from(x.rotation)));
        let [tx, ty, tz, _] = transpose(x.map(|x| Vec4::from(x.translation)));
        let [sx, sy, sz, _] = transpose(x.map(|x| Vec4::from(x.scale)));
        Self {
            r: [rx, ry, rz, rw],
            t: [tx, ty, tz],
            s: [sx, sy, sz],
        }
    }

    /// Each lane's `Xform` (translation's and scale's `w` 0).
    #[inline(always)]
    pub(super) fn scatter(&self) -> [Xform; LANES] {
        let r = transpose(self.r);
        let t = transpose([self.t[0], self.t[1], self.t[2], Vec4::ZERO]);
        let s = transpose([self.s[0], self.s[1], self.s[2], Vec4::ZERO]);
        std::array::from_fn(|k| Xform {
            rotation: r[k].to_array(),
            translation: t[k].to_array(),
            scale: s[k].to_array(),
        })
    }

    /// `Transform::compose(child, parent)` in each lane, bit for bit.
    #[inline(always)]
    pub(super) fn compose(c: &Self, p: &Self) -> Self {
        let ([px, py, pz, pw], [cx, cy, cz, cw]) = (p.r, c.r);
        // glam's `mul_quat` (after rtm's `quat_mul`): two partial sums of two products each.
        let mut r = [
            (px * cw + pw * cx) + (py * cz - pz * cy),
            (pw * cy - px * cz) + (py * cw + pz * cx),
            (px * cy + pw * cz) + (pz * cw - py * cx),
            (pw * cw - px * cx) + (-(py * cy) - pz * cz),
        ];
        let s = [c.s[0] * p.s[0], c.s[1] * p.s[1], c.s[2] * p.s[2]];
        let v = rotate(p.r, [p.s[0] * c.t[0], p.s[1] * c.t[1], p.s[2] * c.t[2]]);
        let t = [v[0] + p.t[0], v[1] + p.t[1], v[2] + p.t[2]];
        // Where a scale has a negative component, UE's matrix path (`Transform::compose`).
        let least = |s: &[Vec4; 3]| s[0].min(s[1]).min(s[2]);
        let mirrored = least(&c.s).min(least(&p.s)).cmplt(Vec4::ZERO);
        if mirrored.any() {
            let m = mirrored_rotation(c, p);
            r = std::array::from_fn(|i| Vec4::select(mirrored, m[i], r[i]));
        }
        Self { r, t, s }
    }

    /// Each lane's skinning matrix, for the one bone whose inverse bind matrix is
    /// `inverse_bind`: rotate(R) · scale(S) (glam's `Mat3::from_quat`, transposed, each row
    /// scaled), each row dotted with the inverse bind's columns, plus T.
    #[inline(always)]
    pub(super) fn skinning_matrices(&self, inverse_bind: &Mat3x4) -> [Mat3x4; LANES] {
        let axes = axes(self.r);
        let bind = |r: usize, j: usize| Vec4::splat(inverse_bind[r * 4 + j]);
        let m: [[Vec4; 4]; 3] = std::array::from_fn(|i| {
            // Row i of the rotation matrix, each entry scaled by its axis's scale.
            let m = [0, 1, 2].map(|a| axes[a][i] * self.s[a]);
            let mut row: [Vec4; 4] = std::array::from_fn(|j| {
                (m[0] * bind(0, j) + m[1] * bind(1, j)) + m[2] * bind(2, j)
            });
            row[3] += self.t[i];
            transpose(row)
        });
        std::array::from_fn(|k| bytemuck::cast([m[0][k], m[1][k], m[2][k]]))
    }
}

/// The columns of each lane's rotation matrix: glam's `Mat3::from_quat` (and
/// `mirror::quat_axes`), term for term.
#[inline(always)]
fn axes([x, y, z, w]: [Vec4; 4]) -> [[Vec4; 3]; 3] {
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, xy, xz) = (x * x2, x * y2, x * z2);
    let (yy, yz, zz) = (y * y2, y * z2, z * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    [
        [Vec4::ONE - (yy + zz), xy + wz, xz - wy],
        [xy - wz, Vec4::ONE - (xx + zz), yz + wx],
        [xz + wy, yz - wx, Vec4::ONE - (xx + yy)],
    ]
}

/// `q * v` for a unit quaternion `q`, glam's `mul_vec3a`:
/// v (w² − b·b) + 2 (v·b) b + 2w (b × v).
#[inline(always)]
fn rotate([bx, by, bz, w]: [Vec4; 4], v: [Vec4; 3]) -> [Vec4; 3] {
    let k = w * w - ((bx * bx + by * by) + bz * bz);
    let d = ((v[0] * bx + v[1] * by) + v[2] * bz) * 2.0;
    let w2 = w * 2.0;
    let cross = [
        by * v[2] - v[1] * bz,
        bz * v[0] - v[2] * bx,
        bx * v[1] - v[0] * by,
    ];
    let b = [bx, by, bz];
    std::array::from_fn(|i| (v[i] * k + b[i] * d) + cross[i] * w2)
}

/// `mirror::compose_rotation` in each lane, bit for bit: the product's axes, each normalized
/// and signed by the desired scale, to a quaternion by `mirror::quat_from_axes`, whose four
/// branches are all computed and one chosen per lane.
#[inline(never)]
fn mirrored_rotation(c: &Pose, p: &Pose) -> [Vec4; 4] {
    let a = axes(c.r);
    let axis = |i: usize| {
        let v = rotate(p.r, [0, 1, 2].map(|j| p.s[j] * (a[i][j] * c.s[i])));
        let sq = (v[0] * v[0] + v[1] * v[1]) + v[2] * v[2];
        let long = sq.cmpge(Vec4::splat(TINY));
        let inv = sq.sqrt().recip();
        let positive = (c.s[i] * p.s[i]).cmpge(Vec4::ZERO);
        v.map(|v| {
            let unit = Vec4::select(long, v * inv, v);
            Vec4::select(positive, unit, -unit)
        })
    };
    let ([m00, m10, m20], [m01, m11, m21], [m02, m12, m22]) = (axis(0), axis(1), axis(2));
    // A branch of Shepperd's method: `s` under its square root, the components over `2 sqrt(s)`
    // and the one (`None`) that is `sqrt(s) / 2`.
    let half = Vec4::splat(0.5);
    let branch = |s: Vec4, q: [Option<Vec4>; 4]| {
        let s = s.sqrt();
        let k = half / s;
        q.map(|q| q.map_or(half * s, |q| q * k))
    };
    let trace = (m00 + m11) + m22;
    let q = [
        branch(
            trace + 1.0,
            [Some(m21 - m12), Some(m02 - m20), Some(m10 - m01), None],
        ),
        branch(
            ((m00 - m11) - m22) + 1.0,
            [None, Some(m01 + m10), Some(m02 + m20), Some(m21 - m12)],
        ),
        branch(
            ((m11 - m22) - m00) + 1.0,
            [Some(m01 + m10), None, Some(m12 + m21), Some(m02 - m20)],
        ),
        branch(
            ((m22 - m00) - m11) + 1.0,
            [Some(m02 + m20), Some(m12 + m21), None, Some(m10 - m01)],
        ),
    ];
    let first = trace.cmpgt(Vec4::ZERO);
    let second = m00.cmpge(m11) & m00.cmpge(m22);
    let third = m11.cmpge(m22);
    let q: [Vec4; 4] = std::array::from_fn(|i| {
        let rest = Vec4::select(third, q[2][i], q[3][i]);
        Vec4::select(first, q[0][i], Vec4::select(second, q[1][i], rest))
    });
    // `normalize_quat`: glam's dot4 sums (x² + z²) + (y² + w²).
    let d = (q[0] * q[0] + q[2] * q[2]) + (q[1] * q[1] + q[3] * q[3]);
    let inv = d.sqrt().recip();
    q.map(|q| q * inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::mirror;
    use crate::Transform;
    use glam::{Mat3, Quat, Vec3};

    /// The skinning matrix as the twin made it bone by bone before: glam's rotation matrix,
    /// each row scaled and dotted with the inverse bind's columns.
    fn glam_skinning(inverse_bind: &Mat3x4, cs: &Transform) -> Mat3x4 {
        let b = |r: usize| Vec4::from_slice(&inverse_bind[r * 4..r * 4 + 4]);
        let columns: [Vec3; 4] = std::array::from_fn(|j| Vec3::new(b(0)[j], b(1)[j], b(2)[j]));
        let axes = Mat3::from_quat(cs.rotation).transpose();
        let mut out = [0.0; 12];
        for (i, row) in [axes.x_axis, axes.y_axis, axes.z_axis]
            .into_iter()
            .enumerate()
        {
            let m = row * cs.scale;
            for j in 0..4 {
                out[i * 4 + j] = m.dot(columns[j]);
            }
            out[i * 4 + 3] += cs.translation[i];
        }
        out
    }

    #[test]
    fn each_lane_has_glams_bits() {
        let mut rng = crate::procedural::Rng(7);
        let mut mirrored = 0;
        for _ in 0..500 {
            let mut random = || {
                let axis = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.5).normalize();
                let mut scale = Vec3::new(
                    rng.range(0.5, 2.0),
                    rng.range(0.5, 2.0),
                    rng.range(0.5, 2.0),
                );
                if rng.chance(0.2) {
                    scale.y = -scale.y;
                }
                Transform::new(
                    Vec3::new(
                        rng.range(-3.0, 3.0),
                        rng.range(-3.0, 3.0),
                        rng.range(-3.0, 3.0),
                    ),
                    Quat::from_axis_angle(axis, rng.range(-3.0, 3.0)),
                    scale,
                )
            };
            let (c, p): (Vec<Transform>, Vec<Transform>) =
                (0..LANES).map(|_| (random(), random())).unzip();
            let xforms = |t: &[Transform]| t.iter().map(|&t| Xform::from(t)).collect::<Vec<_>>();
            let (cx, px) = (xforms(&c), xforms(&p));
            let lanes = |x: &[Xform]| Pose::gather(std::array::from_fn(|k| &x[k]));
            let composed = Pose::compose(&lanes(&cx), &lanes(&px));
            let inverse_bind: Mat3x4 = std::array::from_fn(|i| rng.range(-2.0, 2.0) + i as f32);
            let matrices = composed.skinning_matrices(&inverse_bind);
            for (k, (out, m)) in composed.scatter().iter().zip(matrices).enumerate() {
                let expected = Transform::compose(&c[k], &p[k]);
                mirrored += usize::from(mirror::any_negative(c[k].scale, p[k].scale));
                if cfg!(target_arch = "x86_64") {
                    assert_eq!(*out, Xform::from(expected));
                    assert_eq!(m, glam_skinning(&inverse_bind, &expected));
                } else {
                    let t = Transform::from(*out);
                    assert!(t.rotation.abs_diff_eq(expected.rotation, 1e-6));
                    assert!(t.translation.abs_diff_eq(expected.translation, 1e-5));
                }
            }
        }
        assert!(mirrored > 100, "{mirrored} mirrored lanes");
    }
}
