//! An asset: a skeleton, its clips, and the world the skeleton stands in.

use std::borrow::Cow;

use glam::{Mat3, Mat4, Vec3};

use super::{Clip, RestPose, Skeleton};

/// A skeleton and the clips that animate it, as read from a file or built in code.
#[derive(Clone, Debug)]
pub struct Asset {
    /// The skeleton (bones parents-first).
    pub skeleton: Skeleton,
    /// Its clips, each with one track per bone.
    pub clips: Vec<Clip>,
    /// For glTF, the node index of each bone in the skeleton's (parents-first) order: what an
    /// exporter needs to write clips back onto the same file. `None` for BVH and procedural
    /// assets, which have no nodes.
    pub nodes: Option<Vec<usize>>,
    /// Where the skeleton stands in its file's world, and which bones deform a mesh.
    pub frame: AssetFrame,
}

impl Asset {
    /// This asset measured from `which` pose ([`Skeleton::reference`]): its skeleton's rest is
    /// that pose, and it keeps only its first clip (what a floating rest pose takes its floor
    /// from). Borrowed where that pose is already the rest.
    pub(crate) fn measured_at(&self, which: RestPose) -> Cow<'_, Asset> {
        match self.skeleton.with_rest_as(which) {
            Cow::Borrowed(_) => Cow::Borrowed(self),
            Cow::Owned(skeleton) => Cow::Owned(Asset {
                skeleton,
                clips: self.clips.iter().take(1).cloned().collect(),
                nodes: self.nodes.clone(),
                frame: self.frame.clone(),
            }),
        }
    }
}

/// The world a skeleton stands in, as its file gives it. Component space (where poses are
/// evaluated) ends at the skeleton's top joint; this is what lies above it, which retargeting
/// between characters of different tools needs to know which way is up.
#[derive(Clone, Debug, PartialEq)]
pub struct AssetFrame {
    /// Component space → the file's world: for glTF, the product of the local matrices of the
    /// nodes above the first top joint (an armature turned −90° about X, a 0.01 scale); the
    /// identity for BVH and procedural assets.
    pub above: Mat4,
    /// The world's up axis in world coordinates, where the format fixes it (glTF: +Y). `None`
    /// where it does not (BVH exists Y-up and Z-up): up is then found from the rest pose.
    pub up: Option<Vec3>,
    /// Per bone (the skeleton's order): whether a mesh of the file deforms with it: skinned to
    /// it with a weight above 1e-3, or a mesh node without a skin below it (directly or
    /// through nodes that are not joints). `None` where the file has neither.
    pub skinned: Option<Vec<bool>>,
}

impl AssetFrame {
    /// Nothing known: identity above, up unknown, no skin weights (BVH).
    pub const UNKNOWN: Self = Self {
        above: Mat4::IDENTITY,
        up: None,
        skinned: None,
    };

    /// A Y-up world with nothing above the skeleton and no skin weights (procedural assets).
    pub const Y_UP: Self = Self {
        above: Mat4::IDENTITY,
        up: Some(Vec3::Y),
        skinned: None,
    };

    /// The world's up direction expressed in component space (the gradient of world height,
    /// normalized), where the world's up is known.
    pub fn up_in_component(&self) -> Option<Vec3> {
        (Mat3::from_mat4(self.above).transpose() * self.up?).try_normalize()
    }
}
