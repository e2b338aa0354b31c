//! [`Transform`]: a rotation, translation and per-axis scale, UE's `FTransform`, with the
//! composition and inverse of `docs/pose-math.md`.

use glam::{Mat4, Quat, Vec3, Vec4};

use super::{mirror, safe_recip};
use crate::layout::Xform;

/// A rotation, translation and per-axis scale (UE's `FTransform`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Translation (in the skeleton's units).
    pub translation: Vec3,
    /// Per-axis scale.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No rotation, no translation, unit scale.
    pub const IDENTITY: Self = Self {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
        scale: Vec3::ONE,
    };

    /// A transform from its parts (translation first, unlike the fields).
    pub fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self {
            rotation,
            translation,
            scale,
        }
    }

    /// `compose(child, parent)`: the child expressed in the parent's space, then the parent
    /// applied (UE's `child * parent`). TRS composition: a parent's non-uniform scale does not
    /// shear a rotated child, unlike a chain of 4x4 matrices.
    ///
    /// Where either scale has a negative component (a mirrored bone), the rotation comes from
    /// UE's matrix path instead (`mirror::compose_rotation`); scale and translation are the
    /// same formulas. Spec: `docs/pose-math.md`, "Transforms".
    #[inline]
    pub fn compose(child: &Self, parent: &Self) -> Self {
        let mut out = Self {
            rotation: parent.rotation * child.rotation,
            scale: child.scale * parent.scale,
            translation: parent.rotation * (parent.scale * child.translation) + parent.translation,
        };
        if mirror::any_negative(child.scale, parent.scale) {
            out.rotation = mirror::compose_rotation(child, parent);
        }
        out
    }

    /// `relative(a, b)`: `a` expressed in `b`'s space (UE's `A.GetRelativeTransform(B)`).
    /// Where either scale has a negative component, the rotation comes from UE's matrix path
    /// (`mirror::relative_rotation`).
    pub fn relative(a: &Self, b: &Self) -> Self {
        let inv_r = b.rotation.conjugate();
        let inv_s = safe_recip(b.scale);
        let mut out = Self {
            rotation: inv_r * a.rotation,
            scale: a.scale * inv_s,
            translation: (inv_r * (a.translation - b.translation)) * inv_s,
        };
        if mirror::any_negative(a.scale, b.scale) {
            out.rotation = mirror::relative_rotation(a, b);
        }
        out
    }

    /// The inverse of a TRS transform: `relative(identity, self)` (exact where the scale is
    /// uniform; a zero scale component inverts to 0, as `safeRecip`).
    pub fn inverse(&self) -> Self {
        Self::relative(&Self::IDENTITY, self)
    }

    /// `translate(T) · rotate(R) · scale(S)`, column vectors.
    pub fn to_matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.rotation.is_finite() && self.translation.is_finite() && self.scale.is_finite()
    }
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
