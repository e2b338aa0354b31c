//! A character's body frame: its own up, right and forward, floor and hip height, measured in
//! its component space from its rest pose (`docs/pose-math.md`, "Retargeting between
//! characters"). Everything retargeting between characters compares is in these terms, so units
//! and up axes never matter.
//!
//! `up` is the world's up (the file's, [`crate::AssetFrame`]; for BVH the axis closest to
//! feet→head); `right` points from the character's left hip and shoulder to its right ones,
//! made perpendicular to `up`; `forward = up × right`. `[right, up, forward]` is the same-handed
//! basis on every character, so the rotation between two characters' frames
//! ([`BodyFrame::rotation_to`]) is a proper rotation.

use std::borrow::Cow;

use glam::{Mat3, Quat, Vec3};

use super::humanoid::{recognise, skeleton_label, Humanoid, Side, SideLimbs};
use super::tree::Tree;
use crate::error::{Error, Result};
use crate::model::{component_space, Asset, Clip, RestPose, Skeleton};
use crate::Transform;

/// A character as retargeting sees it: its humanoid roles and its body frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Character {
    /// The bone of each role.
    pub humanoid: Humanoid,
    /// Up, right, forward, floor and hip height.
    pub body: BodyFrame,
}

impl Character {
    /// Recognises `asset`'s humanoid ([`recognise`]) and measures its body frame; a floating
    /// rest pose takes its floor from the asset's first clip, and so does a rest pose that
    /// stands in no world (BVH: the root's position channels replace its OFFSET in every
    /// frame, so where the rest stands says nothing of the capture's floor) where the clip's
    /// floor lies more than [`REST_FLOOR_TOLERANCE`] hip heights from the rest's.
    pub fn measure(asset: &Asset) -> Result<Self> {
        Ok(Self::measure_at(asset, RestPose::Nodes)?.0)
    }

    /// The same, measured from `rest` (its bind pose or its node transforms), with the asset as
    /// it was measured: its skeleton's rest is that pose. In a bind pose an IK-style foot (one
    /// that does not hang below its shin, and deforms nothing) stays where the file's IK rig
    /// put it in the node pose relative to the shin: its own inverse bind matrix only says
    /// where it stood when the mesh was bound, not where the shin's end is.
    pub fn measure_at(asset: &Asset, rest: RestPose) -> Result<(Self, Cow<'_, Asset>)> {
        let mut view = asset.measured_at(rest);
        let humanoid = recognise(&view)?;
        if let Cow::Owned(measured) = &mut view {
            carry_feet_as_nodes(&mut measured.skeleton, &asset.skeleton, &humanoid);
        }
        let asset = view.as_ref();
        // Motion capture (a rest in no world) without toe joints stands on soles below its
        // ankles; a model's toeless foot (Mech's spikes) stands on its ankle.
        let soles = asset.frame.up.is_none();
        let mut body = BodyFrame::measure_with_soles(&asset.skeleton, &humanoid, soles)?;
        if let Some(clip) = asset.clips.first() {
            let from_clip = body.with_clip_floor(&asset.skeleton, &humanoid, clip);
            let apart = (from_clip.ground - body.rest_ground).abs() / body.hip_height;
            let placed = asset.frame.up.is_some();
            if body.floating_rest || (!placed && apart > REST_FLOOR_TOLERANCE) {
                body = from_clip;
            }
        }
        Ok((Self { humanoid, body }, view))
    }
}

/// Puts each IK-style foot of `view` (a foot not below its shin) where its shin carries it in
/// `nodes`' rest pose.
fn carry_feet_as_nodes(view: &mut Skeleton, nodes: &Skeleton, humanoid: &Humanoid) {
    let tree = Tree::new(view);
    let node_cs = nodes.rest_component();
    for side in Side::BOTH {
        let l = humanoid.side(side);
        if tree.is_ancestor(l.shin, l.foot) {
            continue;
        }
        let cs = view.rest_component();
        let carried = Transform::relative(&node_cs[l.foot], &node_cs[l.shin]);
        let want = Transform::compose(&carried, &cs[l.shin]);
        let local = match view.parent(l.foot) {
            Some(p) => Transform::relative(&want, &cs[p]),
            None => want,
        };
        view.set_rest_local(l.foot, local);
    }
}

/// How far (in hip heights) the first clip's floor may lie from the rest pose's before a rest
/// pose in no world (BVH) takes the clip's: the contact tolerance of the quality measure, so
/// that an authored rest standing on the capture's floor (MakeHuman's, 1.6% of its hip height
/// above its walk's floor) keeps its own.
pub const REST_FLOOR_TOLERANCE: f32 = 0.03;

/// How far below a motion capture's toeless ankle its sole lies, in thigh + shin lengths: the
/// ankle's height above the toe joints in the CMU captures (0.030 to 0.050 over both legs of
/// both takes), so that a capture written without toe joints stands where it stands with them.
pub const TOELESS_SOLE: f32 = 0.04;

/// A character's own frame, in its component space (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyFrame {
    /// World up in component space.
    pub up: Vec3,
    /// From the character's left to its right (hips and shoulders), perpendicular to `up`.
    pub right: Vec3,
    /// `up × right`: the way the character faces.
    pub forward: Vec3,
    /// The floor's height along `up` for motion (component units): the rest pose's lowest
    /// foot or toe joint, or for a floating rest pose or one in no world (BVH) the clip's
    /// ([`BodyFrame::with_clip_floor`]).
    pub ground: f32,
    /// The rest pose's lowest foot or toe joint height (a toeless capture's foot: its sole).
    pub rest_ground: f32,
    /// Per side (left, right): how far a foot's sole lies below its ankle joint where the
    /// floor is measured from the ankle: [`TOELESS_SOLE`] of thigh + shin for a capture's leg
    /// without toe joints, else 0.
    pub soles: [f32; 2],
    /// The scale of everything retargeting compares: the standing height of the hip joints,
    /// thigh + shin + the ankle's height above the floor (the mean of both legs). For straight
    /// rest legs it is the pelvis height; it stays right where the rest pose splays the legs
    /// (CMU's calibration pose) or bends them (Mech's).
    pub hip_height: f32,
    /// The rest pelvis (the midpoint of the two hip joints).
    pub pelvis_rest: Vec3,
    /// True when the rest pose hangs far below the origin (BVH offsets with a zero root
    /// translation, whose height is in the motion): its floor is not where the rest feet are.
    pub floating_rest: bool,
}

impl BodyFrame {
    /// Measures the frame of `skeleton`, whose roles are `humanoid`, from its rest pose.
    pub fn measure(skeleton: &Skeleton, humanoid: &Humanoid) -> Result<Self> {
        Self::measure_with_soles(skeleton, humanoid, false)
    }

    /// The same; with `soles`, a leg without toe joints stands on a sole [`TOELESS_SOLE`] of
    /// its thigh + shin below its ankle (motion capture).
    pub fn measure_with_soles(
        skeleton: &Skeleton,
        humanoid: &Humanoid,
        soles: bool,
    ) -> Result<Self> {
        let degenerate = |why: &str| Error::NotHumanoid {
            what: skeleton_label(skeleton),
            why: format!("the rest pose does not define the body frame: {why}"),
        };
        let pos: Vec<Vec3> = skeleton
            .rest_component()
            .iter()
            .map(|t| t.translation)
            .collect();
        let up = humanoid
            .up
            .try_normalize()
            .ok_or_else(|| degenerate("no up direction"))?;
        let (l, r) = (&humanoid.left, &humanoid.right);
        let across = (pos[r.thigh] - pos[l.thigh]) + (pos[r.upper_arm] - pos[l.upper_arm]);
        let right = (across - up * across.dot(up))
            .try_normalize()
            .ok_or_else(|| degenerate("left and right hips and shoulders coincide"))?;
        let lengths = |s: &SideLimbs| {
            (pos[s.shin] - pos[s.thigh]).length() + (pos[s.foot] - pos[s.shin]).length()
        };
        let sole = |s: &SideLimbs| match (soles, s.toes) {
            (true, None) => TOELESS_SOLE * lengths(s),
            _ => 0.0,
        };
        let rest_ground = [l, r]
            .into_iter()
            .flat_map(|s| {
                let toes = s.toes.map(|b| pos[b].dot(up));
                std::iter::once(pos[s.foot].dot(up) - sole(s)).chain(toes)
            })
            .fold(f32::INFINITY, f32::min);
        let pelvis_rest = (pos[l.thigh] + pos[r.thigh]) * 0.5;
        let leg = |s: &SideLimbs| lengths(s) + (pos[s.foot].dot(up) - rest_ground).max(0.0);
        let hip_height = 0.5 * (leg(l) + leg(r));
        let above_feet = pelvis_rest.dot(up) - rest_ground;
        if !(above_feet > 0.0 && hip_height > 0.0 && hip_height.is_finite()) {
            return Err(degenerate("the hips are not above the feet"));
        }
        let floating_rest = rest_ground < -0.5 * hip_height;
        Ok(Self {
            up,
            right,
            forward: up.cross(right),
            ground: if floating_rest { 0.0 } else { rest_ground },
            rest_ground,
            soles: [sole(l), sole(r)],
            hip_height,
            pelvis_rest,
            floating_rest,
        })
    }

    /// The floor taken from `clip`: the 10th percentile, over at most 400 of the clip's key
    /// times, of the lowest foot or toe joint ([`Character::measure`] takes it for a floating
    /// rest pose or one in no world).
    pub fn with_clip_floor(
        mut self,
        skeleton: &Skeleton,
        humanoid: &Humanoid,
        clip: &Clip,
    ) -> Self {
        let mut lows: Vec<f32> = frame_times(clip, 400)
            .into_iter()
            .map(|t| {
                let cs = component_space(skeleton.parents(), &clip.pose_at(skeleton.rest(), t));
                let height = |b: usize| cs[b].translation.dot(self.up);
                Side::BOTH
                    .iter()
                    .zip(self.soles)
                    .map(|(&s, sole)| (humanoid.side(s), sole))
                    .flat_map(|(s, sole)| {
                        std::iter::once(height(s.foot) - sole).chain(s.toes.map(height))
                    })
                    .fold(f32::INFINITY, f32::min)
            })
            .collect();
        lows.sort_by(f32::total_cmp);
        if let Some(&floor) = lows.get(lows.len() / 10) {
            self.ground = floor;
        }
        self
    }

    /// The basis `[right, up, forward]` as matrix columns.
    pub fn basis(&self) -> Mat3 {
        Mat3::from_cols(self.right, self.up, self.forward)
    }

    /// `G`: the rotation taking this frame to `target`'s (component space to component space):
    /// `G · self.up = target.up`, and likewise for right and forward.
    pub fn rotation_to(&self, target: &BodyFrame) -> Quat {
        Quat::from_mat3(&(target.basis() * self.basis().transpose())).normalize()
    }

    /// Height of component-space point `p` above the motion floor.
    pub fn height(&self, p: Vec3) -> f32 {
        p.dot(self.up) - self.ground
    }

    /// The horizontal part of vector `v`.
    pub fn horizontal(&self, v: Vec3) -> Vec3 {
        v - self.up * v.dot(self.up)
    }

    /// `O`: the point on the motion floor under the rest pelvis, the origin of retargeted
    /// motion.
    pub fn origin(&self) -> Vec3 {
        self.horizontal(self.pelvis_rest) + self.up * self.ground
    }
}

/// Up to `max` of `clip`'s key times, evenly spread over all of them (long motion-capture
/// takes are subsampled).
pub fn frame_times(clip: &Clip, max: usize) -> Vec<f32> {
    let times = clip.key_times();
    if times.len() <= max || max == 0 {
        return times;
    }
    let step = times.len() as f32 / max as f32;
    (0..max)
        .map(|i| times[(i as f32 * step) as usize])
        .collect()
}
