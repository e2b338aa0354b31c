//! Blending full poses with weights, per bone: the rule the sampling stage follows for a base
//! blended from several clips and for the samples of a blend-space additive layer. Spec:
//! `docs/pose-math.md`, "Blending and blend spaces".

use glam::{Quat, Vec3, Vec4};

use super::{normalize_quat, Transform, ZERO_WEIGHT};

/// Weights at or below `ZERO_WEIGHT` (1e-5) are dropped and the rest renormalized to sum to 1.
/// Returns the kept weights' sum and count.
pub fn kept_weights(weights: impl Iterator<Item = f32>) -> (f32, usize) {
    weights
        .filter(|w| *w > ZERO_WEIGHT)
        .fold((0.0, 0), |(sum, n), w| (sum + w, n + 1))
}

/// Sums `w·T`, `w·S` and the rotations as 4-vectors, each flipped into the accumulator's
/// hemisphere; [`BlendAccumulator::finish`] normalizes the rotation.
#[derive(Clone, Copy, Debug)]
pub struct BlendAccumulator {
    rotation: Vec4,
    translation: Vec3,
    scale: Vec3,
    empty: bool,
}

impl Default for BlendAccumulator {
    fn default() -> Self {
        Self {
            rotation: Vec4::ZERO,
            translation: Vec3::ZERO,
            scale: Vec3::ZERO,
            empty: true,
        }
    }
}

impl BlendAccumulator {
    /// Adds `x` with an already renormalized weight `w`.
    pub fn add(&mut self, x: &Transform, w: f32) {
        let r = Vec4::from(x.rotation) * w;
        self.rotation = if self.empty || self.rotation.dot(r) >= 0.0 {
            self.rotation + r
        } else {
            self.rotation - r
        };
        self.translation += x.translation * w;
        self.scale += x.scale * w;
        self.empty = false;
    }

    /// The blend: the summed rotation normalized, translation and scale as summed.
    pub fn finish(&self) -> Transform {
        Transform {
            rotation: normalize_quat(self.rotation),
            translation: self.translation,
            scale: self.scale,
        }
    }
}

/// Blends `poses` (each a transform and a weight) by the spec's rule. One surviving pose is
/// returned as it is (the rule with weight 1 gives it back up to rounding); with none, `empty`.
pub fn blend(poses: &[(Transform, f32)], empty: Transform) -> Transform {
    blend_with(poses.iter().map(|p| p.1), empty, |k| poses[k].0)
}

/// [`blend`] over poses made on demand: `pose(k)` is called only for the kept weights, in
/// order (the sampling stage samples only the clips a blend keeps).
pub fn blend_with(
    weights: impl Iterator<Item = f32> + Clone,
    empty: Transform,
    mut pose: impl FnMut(usize) -> Transform,
) -> Transform {
    let (sum, kept) = kept_weights(weights.clone());
    let mut kept_poses = weights.enumerate().filter(|(_, w)| *w > ZERO_WEIGHT);
    if kept <= 1 {
        return kept_poses.next().map_or(empty, |(k, _)| pose(k));
    }
    let mut acc = BlendAccumulator::default();
    for (k, w) in kept_poses {
        acc.add(&pose(k), w / sum);
    }
    acc.finish()
}

/// `a` blended toward `b` by `w` (a layered blend per bone at one bone): `a` at or below
/// `ZERO_WEIGHT`, `b` at or above `1 − ZERO_WEIGHT`, else the blend rule over `(a, 1 − w)`
/// and `(b, w)`.
pub fn blend_two(a: &Transform, b: &Transform, w: f32) -> Transform {
    if w <= ZERO_WEIGHT {
        return *a;
    }
    if w >= 1.0 - ZERO_WEIGHT {
        return *b;
    }
    let mut acc = BlendAccumulator::default();
    acc.add(a, 1.0 - w);
    acc.add(b, w);
    acc.finish()
}

/// One bone of a mesh-space layered blend (UE's `bMeshSpaceRotationBlend`): `local` (the pose
/// so far, whose rotation in mesh space is `pose_mesh`) blended toward `layer` (the layer's
/// pose, `layer_mesh` in mesh space) by `w`: translation and scale in local space, the rotation
/// in mesh space, then brought back under the parent's blended mesh rotation `parent` (`None`
/// at a root). Returns the bone's new local transform and its blended mesh rotation, which its
/// children take as `parent`.
pub(crate) fn blend_two_mesh(
    local: &Transform,
    layer: &Transform,
    w: f32,
    pose_mesh: Quat,
    layer_mesh: Quat,
    parent: Option<Quat>,
) -> (Transform, Quat) {
    let a = Transform {
        rotation: pose_mesh,
        ..*local
    };
    let b = Transform {
        rotation: layer_mesh,
        ..*layer
    };
    let blended = blend_two(&a, &b, w);
    let mesh = blended.rotation;
    let rotation = match parent {
        Some(p) => normalize_quat(Vec4::from(p.conjugate() * mesh)),
        None => mesh,
    };
    (
        Transform {
            rotation,
            ..blended
        },
        mesh,
    )
}
