//! The additive math of the spec, per bone: making a delta, weighting it, applying it, and the
//! parent-ordered conversions between local and mesh-space rotations. The shaders follow these
//! expressions in the same order (`shaders/common.wgsl`, `shaders/layers.wgsl`). Spec:
//! `docs/pose-math.md`, "Additive poses".

use glam::{Quat, Vec3, Vec4};

use super::{fast_lerp, normalize_quat, safe_recip, Transform};
use crate::layout::{NO_ROTATION, ZERO_WEIGHT};

/// The delta that changes nothing: no rotation, no translation, scale delta 0.
pub const IDENTITY_DELTA: Transform = Transform {
    rotation: Quat::IDENTITY,
    translation: Vec3::ZERO,
    scale: Vec3::ZERO,
};

/// `Δ` of pose `p` against base `b`: `R = normalize(R_P ⊗ R_B⁻¹)`, `T = T_P − T_B`,
/// `S = S_P ∘ safeRecip(S_B) − 1` (the identity delta has `S = 0`).
pub fn make_delta(p: &Transform, b: &Transform) -> Transform {
    Transform {
        rotation: normalize_quat(Vec4::from(p.rotation * b.rotation.conjugate())),
        translation: p.translation - b.translation,
        scale: p.scale * safe_recip(b.scale) - Vec3::ONE,
    }
}

/// `D`, the part of `delta` that weight `w` applies; `None` when `w ≤ ZERO_WEIGHT`. Full
/// weight scales the whole delta by `w` (the rotation as a 4-vector, left unnormalized);
/// partial weight scales translation and scale and takes `normalize(fastLerp(identity, Δ.R,
/// w))`.
///
/// The spec skips the rotation when `D.R.w² ≥ 1 − 1e-10`; such a `D.R` is returned as the
/// exact identity, which [`apply_delta`] skips. The test is evaluated as `|D.R.xyz|² ≤ w² − 1 +
/// 1e-10` (`w = 1` on the partial path, where `D.R` is a unit quaternion), the same condition for
/// a unit `Δ.R`: in f32, `1 − 1e-10` rounds to 1 and `w²` to 1 for any rotation under about
/// 5e-4 rad, so the test as written would skip those, on one side or the other of a rounding.
pub fn weighted_delta(delta: &Transform, w: f32) -> Option<Transform> {
    if w <= ZERO_WEIGHT {
        return None;
    }
    let (rotation, limit) = if w >= 1.0 - ZERO_WEIGHT {
        let r = Quat::from_vec4(Vec4::from(delta.rotation) * w);
        (r, (w - 1.0) * (w + 1.0) + NO_ROTATION)
    } else {
        let r = normalize_quat(fast_lerp(Quat::IDENTITY, delta.rotation, w));
        (r, NO_ROTATION)
    };
    let rotation = if rotation.xyz().length_squared() <= limit {
        Quat::IDENTITY
    } else {
        rotation
    };
    Some(Transform {
        rotation,
        translation: delta.translation * w,
        scale: delta.scale * w,
    })
}

/// `D` applied onto `x`: `R = normalize(D.R ⊗ R)` (no product for the identity, which is how
/// [`weighted_delta`] marks a skipped rotation), `T = T + D.T`, `S = S ∘ (1 + D.S)`.
pub fn apply_delta(x: &Transform, d: &Transform) -> Transform {
    let r = if d.rotation == Quat::IDENTITY {
        x.rotation
    } else {
        d.rotation * x.rotation
    };
    Transform {
        rotation: normalize_quat(Vec4::from(r)),
        translation: x.translation + d.translation,
        scale: x.scale * (Vec3::ONE + d.scale),
    }
}

/// Turns local rotations into mesh-space ones, parents first: `R_i ← R_parent ⊗ R_i`.
/// Translations and scales stay local.
pub fn to_mesh_rotations(parents: &[i32], pose: &mut [Transform]) {
    for i in 0..pose.len() {
        if let Ok(p) = usize::try_from(parents[i]) {
            pose[i].rotation = pose[p].rotation * pose[i].rotation;
        }
    }
}

/// The inverse of [`to_mesh_rotations`]: `R_i ← R_parent⁻¹ ⊗ R_i`, from the last bone down to
/// the first (so each parent is still in mesh space when its child is converted).
pub fn to_local_rotations(parents: &[i32], pose: &mut [Transform]) {
    for i in (0..pose.len()).rev() {
        if let Ok(p) = usize::try_from(parents[i]) {
            pose[i].rotation = pose[p].rotation.conjugate() * pose[i].rotation;
        }
    }
}

/// `d` applied to `local` in mesh space, given its parent's mesh-space rotations before and
/// after the delta (`None` for a root). Returns the new local transform and the bone's own
/// mesh-space rotations before and after.
///
/// This is the spec's convert, accumulate, convert back, normalize, folded into one
/// parents-first loop: converting back from the last bone down reads each parent's rotation
/// after the delta, which the forward loop has kept.
pub fn apply_mesh_delta(
    local: &Transform,
    d: &Transform,
    parent: Option<(Quat, Quat)>,
) -> (Transform, Quat, Quat) {
    let mesh = match parent {
        Some((before, _)) => before * local.rotation,
        None => local.rotation,
    };
    let applied = apply_delta(
        &Transform {
            rotation: mesh,
            ..*local
        },
        d,
    );
    let back = match parent {
        Some((_, after)) => after.conjugate() * applied.rotation,
        None => applied.rotation,
    };
    let out = Transform {
        rotation: normalize_quat(back.into()),
        ..applied
    };
    (out, mesh, applied.rotation)
}
