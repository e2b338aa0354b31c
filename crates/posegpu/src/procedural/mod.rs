//! Content built in code, which needs no files: the embedded humanoid character and its clips,
//! its aim poses, a variant with IK-style feet, and synthetic skeletons and clips for tests and
//! benchmarks.

mod aim;
mod crowd;
mod humanoid;
mod ik_feet;
mod synthetic;

use std::f32::consts::TAU;

use glam::{Quat, Vec3};

use crate::model::{component_space, Bone, Skeleton};
use crate::Transform;

pub use aim::{aim_angles, aim_rotation, humanoid_aim_poses, AIM_PITCHES, AIM_YAWS};
pub use crowd::humanoid_crowd;
pub use humanoid::{humanoid, humanoid_asset, humanoid_clips, humanoid_variant};
pub use ik_feet::{humanoid_ik_feet_asset, with_feet_on_root};
pub use synthetic::random_asset;

/// A skeleton whose inverse bind matrices (where `with_bind(bone)`) are the inverse of the rest
/// pose's component-space matrix, so that the rest pose skins to the identity.
pub(super) fn skeleton_with_binds(
    names: Vec<String>,
    parents: &[Option<usize>],
    locals: Vec<Transform>,
    mut with_bind: impl FnMut(usize) -> bool,
) -> Skeleton {
    let parents_i32: Vec<i32> = parents.iter().map(|p| p.map_or(-1, |p| p as i32)).collect();
    let component = component_space(&parents_i32, &locals);
    let bones = names
        .into_iter()
        .zip(parents)
        .zip(locals)
        .enumerate()
        .map(|(i, ((name, &parent), rest))| Bone {
            inverse_bind: with_bind(i).then(|| component[i].to_matrix().inverse()),
            ..Bone::new(name, parent, rest)
        })
        .collect();
    Skeleton::new(bones).expect("bones are built parents-first with finite rest poses")
}

/// SplitMix64: tiny, fast and deterministic, enough for test data.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub(crate) fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    pub(crate) fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    /// Uniform in `0..n` (n > 0).
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub(super) fn vec3(&mut self, lo: f32, hi: f32) -> Vec3 {
        let x = self.range(lo, hi);
        let y = self.range(lo, hi);
        Vec3::new(x, y, self.range(lo, hi))
    }

    /// A uniformly distributed rotation (Shoemake's method).
    pub(super) fn quat(&mut self) -> Quat {
        let u = self.unit();
        let (a, b) = ((1.0 - u).sqrt(), u.sqrt());
        let (v, w) = (self.range(0.0, TAU), self.range(0.0, TAU));
        Quat::from_xyzw(a * v.sin(), a * v.cos(), b * w.sin(), b * w.cos())
    }
}
