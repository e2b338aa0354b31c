//! The embedded default character: a 67-bone humanoid skeleton (Y up, facing +Z, T-pose) with
//! four keyframed clips, and proportioned variants of it for retargeting.

use std::f32::consts::{FRAC_PI_2, PI, TAU};

use glam::{Quat, Vec3};

use super::{skeleton_with_binds, Rng};
use crate::model::{Asset, AssetFrame, BoneTrack, Channel, Clip, Interpolation, Skeleton};
use crate::Transform;

/// Key rate of the procedural clips.
const FPS: f32 = 30.0;
/// Bone-name suffix and the sign of X on that side (the character faces +Z, its left is +X).
const SIDES: [(&str, f32); 2] = [("l", 1.0), ("r", -1.0)];
/// Finger name, base offset from the hand and direction (left side, T-pose, palm down), and
/// the lengths of the first two segments.
type Finger = (&'static str, [f32; 3], [f32; 3], [f32; 2]);
const FINGERS: [Finger; 5] = [
    (
        "thumb",
        [0.03, -0.015, 0.035],
        [0.5, -0.25, 0.83],
        [0.040, 0.033],
    ),
    ("index", [0.10, 0.0, 0.033], [1.0, 0.0, 0.0], [0.045, 0.028]),
    (
        "middle",
        [0.105, 0.0, 0.011],
        [1.0, 0.0, 0.0],
        [0.050, 0.031],
    ),
    ("ring", [0.10, 0.0, -0.011], [1.0, 0.0, 0.0], [0.046, 0.029]),
    (
        "pinky",
        [0.09, -0.003, -0.031],
        [1.0, 0.0, 0.0],
        [0.036, 0.022],
    ),
];

/// A humanoid of 67 bones (UE-mannequin-like naming), Y up, facing +Z, in metres, ~1.8 m tall,
/// in a T-pose, with inverse bind matrices = inverse of the rest component-space matrix.
///
/// Bones, parents-first (`_l` then `_r` for each sided group):
/// - 10 body: `root`, `pelvis`, `spine_01`, `spine_02`, `spine_03`, `neck_01`, `head`, `jaw`,
///   `eye_l`, `eye_r`;
/// - 2 × 21 arm: `clavicle`, `upperarm`, `upperarm_twist_01`, `lowerarm`, `lowerarm_twist_01`,
///   `hand`, then `thumb|index|middle|ring|pinky` × `_01.._03` (e.g. `index_02_l`);
/// - 2 × 6 leg: `thigh`, `thigh_twist_01`, `calf`, `calf_twist_01`, `foot`, `ball`;
/// - 3 IK: `ik_foot_root`, `ik_foot_l`, `ik_foot_r`.
///
/// As in UE rigs, limb and spine bones point along their local +X, so most rest rotations are
/// not the identity (the spine and pelvis are turned 90° about Z, the thighs -90° about Z, the
/// clavicles 90° about X, the feet -90° about Y). All rest scales are 1.
pub fn humanoid() -> Skeleton {
    let v = Vec3::new;
    let along_up = Quat::from_rotation_z(FRAC_PI_2);
    let along_down = Quat::from_rotation_z(-FRAC_PI_2);
    let along_forward = Quat::from_rotation_y(-FRAC_PI_2);
    let mut rig = Rig::default();
    rig.add("root", "", Vec3::ZERO, Some(Quat::IDENTITY));
    rig.add("pelvis", "root", v(0.0, 0.95, 0.0), Some(along_up));
    rig.add("spine_01", "pelvis", v(0.0, 1.02, -0.01), None);
    rig.add("spine_02", "spine_01", v(0.0, 1.14, -0.005), None);
    rig.add("spine_03", "spine_02", v(0.0, 1.28, -0.01), None);
    rig.add("neck_01", "spine_03", v(0.0, 1.50, -0.02), None);
    rig.add("head", "neck_01", v(0.0, 1.60, 0.0), None);
    rig.add("jaw", "head", v(0.0, 1.62, 0.04), None);
    for (s, x) in SIDES {
        rig.add(
            &format!("eye_{s}"),
            "head",
            v(0.032 * x, 1.70, 0.08),
            Some(along_forward),
        );
    }
    for (s, x) in SIDES {
        let n = |bone: &str| format!("{bone}_{s}");
        let at = |px: f32, py: f32, pz: f32| v(px * x, py, pz);
        // Left arm along +X, right along -X, both rolled 90° about the bone.
        let outward = Quat::from_rotation_y(if x > 0.0 { 0.0 } else { PI });
        let arm = outward * Quat::from_rotation_x(FRAC_PI_2);
        rig.add(&n("clavicle"), "spine_03", at(0.03, 1.45, 0.0), Some(arm));
        rig.add(&n("upperarm"), &n("clavicle"), at(0.17, 1.45, -0.03), None);
        rig.add(
            &n("upperarm_twist_01"),
            &n("upperarm"),
            at(0.30, 1.45, -0.03),
            None,
        );
        rig.add(&n("lowerarm"), &n("upperarm"), at(0.45, 1.45, -0.03), None);
        rig.add(
            &n("lowerarm_twist_01"),
            &n("lowerarm"),
            at(0.57, 1.45, -0.03),
            None,
        );
        let hand = at(0.70, 1.45, -0.03);
        rig.add(&n("hand"), &n("lowerarm"), hand, None);
        for (finger, base, dir, lengths) in FINGERS {
            let dir = Vec3::from(dir).normalize() * v(x, 1.0, 1.0);
            let rotation = (finger == "thumb").then(|| Quat::from_rotation_arc(Vec3::X, dir));
            let mut parent = n("hand");
            let mut pos = hand + Vec3::from(base) * v(x, 1.0, 1.0);
            for seg in 1..=3 {
                let name = format!("{finger}_{seg:02}_{s}");
                rig.add(&name, &parent, pos, rotation);
                pos += dir * lengths.get(seg - 1).copied().unwrap_or(0.0);
                parent = name;
            }
        }
    }
    for (s, x) in SIDES {
        let n = |bone: &str| format!("{bone}_{s}");
        let at = |py: f32, pz: f32| v(0.09 * x, py, pz);
        rig.add(&n("thigh"), "pelvis", at(0.92, 0.0), Some(along_down));
        rig.add(&n("thigh_twist_01"), &n("thigh"), at(0.71, 0.0), None);
        rig.add(&n("calf"), &n("thigh"), at(0.50, 0.01), None);
        rig.add(&n("calf_twist_01"), &n("calf"), at(0.29, 0.0), None);
        rig.add(&n("foot"), &n("calf"), at(0.08, -0.03), Some(along_forward));
        rig.add(&n("ball"), &n("foot"), at(0.02, 0.11), None);
    }
    rig.add("ik_foot_root", "root", Vec3::ZERO, None);
    for (s, x) in SIDES {
        let foot = v(0.09 * x, 0.08, -0.03);
        rig.add(
            &format!("ik_foot_{s}"),
            "ik_foot_root",
            foot,
            Some(along_forward),
        );
    }
    rig.build()
}

/// Bones given by component-space placement; local transforms are derived from it.
#[derive(Default)]
struct Rig {
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    component: Vec<Transform>,
}

impl Rig {
    /// `parent` is a name added before (`""` for a root); `rotation` is the component-space
    /// orientation, `None` to keep the parent's.
    fn add(&mut self, name: &str, parent: &str, position: Vec3, rotation: Option<Quat>) {
        let parent = (!parent.is_empty()).then(|| {
            self.names
                .iter()
                .position(|n| n == parent)
                .unwrap_or_else(|| panic!("parent '{parent}' of '{name}' not yet added"))
        });
        let inherited = parent.map_or(Quat::IDENTITY, |p| self.component[p].rotation);
        let rotation = rotation.unwrap_or(inherited);
        self.names.push(name.to_string());
        self.parents.push(parent);
        self.component
            .push(Transform::new(position, rotation, Vec3::ONE));
    }

    fn build(self) -> Skeleton {
        let locals: Vec<Transform> = self
            .component
            .iter()
            .zip(&self.parents)
            .map(|(cs, p)| p.map_or(*cs, |p| Transform::relative(cs, &self.component[p])))
            .collect();
        skeleton_with_binds(self.names, &self.parents, locals, |_| true)
    }
}

/// [`humanoid`] with other proportions and rest orientations, a retargeting target: every
/// bone's reference translation scaled by a factor in [0.7, 1.4] drawn once per bone and its
/// reference rotation turned by up to 15° about a random axis (seeded, deterministic). Names
/// and hierarchy are the humanoid's; inverse binds match the new reference pose.
pub fn humanoid_variant(seed: u64) -> Skeleton {
    let base = humanoid();
    let mut rng = Rng(seed);
    let parents: Vec<Option<usize>> = (0..base.len()).map(|i| base.parent(i)).collect();
    let locals = base
        .rest()
        .iter()
        .map(|r| {
            let axis = rng.vec3(-1.0, 1.0).try_normalize().unwrap_or(Vec3::X);
            let tilt = Quat::from_axis_angle(axis, rng.range(0.0, 15f32.to_radians()));
            Transform::new(
                r.translation * rng.range(0.7, 1.4),
                (r.rotation * tilt).normalize(),
                r.scale,
            )
        })
        .collect();
    skeleton_with_binds(base.names().to_vec(), &parents, locals, |_| true)
}

/// Procedural clips for [`humanoid`]: "idle" (2 s), "walk" (1 s cycle, 1.4 m/s), "run" (0.7 s
/// cycle, 3.5 m/s) and "wave" (2 s), keyed at 30 fps. Every channel's last key equals its first,
/// so the clips loop, except the root translation of "walk" and "run": root motion along +Z.
/// Idle has STEP channels (eye saccades) and a scale channel (breathing chest); constant poses
/// (elbows, fingers) are single-key channels. Bones that `skeleton` lacks get no keys.
pub fn humanoid_clips(skeleton: &Skeleton) -> Vec<Clip> {
    [
        idle(skeleton),
        locomotion(skeleton, "walk", &WALK),
        locomotion(skeleton, "run", &RUN),
        wave(skeleton),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// [`humanoid`] and its [`humanoid_clips`].
pub fn humanoid_asset() -> Asset {
    let skeleton = humanoid();
    let clips = humanoid_clips(&skeleton);
    Asset {
        skeleton,
        clips,
        nodes: None,
        frame: AssetFrame::Y_UP,
    }
}

// Rotations in degrees, in the rest component frame (Y up, facing +Z).
pub(super) fn rx(deg: f32) -> Quat {
    Quat::from_rotation_x(deg.to_radians())
}

pub(super) fn ry(deg: f32) -> Quat {
    Quat::from_rotation_y(deg.to_radians())
}

/// Lowers a T-posed arm (pointing along `side`·X) towards -Y; raises it when `deg` < 0.
fn lower(side: f32, deg: f32) -> Quat {
    Quat::from_rotation_z((-side * deg).to_radians())
}

/// Turns a T-posed arm forward (towards +Z) about the vertical.
fn fore(side: f32, deg: f32) -> Quat {
    ry(-side * deg)
}

/// A clip being keyed on a skeleton, one cycle of `frames` frames.
struct Anim<'a> {
    skeleton: &'a Skeleton,
    rest_component: Vec<Transform>,
    frames: usize,
    tracks: Vec<BoneTrack>,
}

impl<'a> Anim<'a> {
    fn new(skeleton: &'a Skeleton, duration: f32) -> Self {
        Self {
            skeleton,
            rest_component: skeleton.rest_component(),
            frames: (duration * FPS).round() as usize,
            tracks: vec![BoneTrack::default(); skeleton.len()],
        }
    }

    fn duration(&self) -> f32 {
        self.frames as f32 / FPS
    }

    fn times(&self) -> Vec<f32> {
        (0..=self.frames).map(|i| i as f32 / FPS).collect()
    }

    /// The cycle phase of each key in `[0, 1)`: the last key wraps to 0, so it equals the first
    /// exactly and the clip loops without a seam.
    fn phases(&self) -> impl Iterator<Item = f32> {
        let n = self.frames;
        (0..=n).map(move |i| (i % n) as f32 / n as f32)
    }

    /// The local rotation of `bone` turned by `delta` about its pivot, `delta` being expressed
    /// in the rest component frame (the parent's motion then applies on top). Rigs have
    /// arbitrary bone frames; this keeps the clips readable in world terms.
    fn local(&self, bone: usize, delta: Quat) -> Quat {
        let r = self.rest_component[bone].rotation;
        (self.skeleton.rest()[bone].rotation * r.conjugate() * delta * r).normalize()
    }

    fn rotation_keys(&mut self, name: &str, times: Vec<f32>, deltas: Vec<Quat>, step: bool) {
        let Some(b) = self.skeleton.find(name) else {
            return;
        };
        let values = deltas.into_iter().map(|d| self.local(b, d)).collect();
        let interpolation = if step {
            Interpolation::Step
        } else {
            Interpolation::Linear
        };
        self.tracks[b].rotation = Some(Channel::new(times, values, interpolation));
    }

    fn rotate(&mut self, name: &str, delta: impl Fn(f32) -> Quat) {
        let deltas = self.phases().map(delta).collect();
        self.rotation_keys(name, self.times(), deltas, false);
    }

    /// A constant pose: one key.
    fn hold(&mut self, name: &str, delta: Quat) {
        self.rotation_keys(name, vec![0.0], vec![delta], false);
    }

    /// Translation = rest + `offset(phase)`, in the parent's frame.
    fn offset(&mut self, name: &str, offset: impl Fn(f32) -> Vec3) {
        let Some(b) = self.skeleton.find(name) else {
            return;
        };
        let rest = self.skeleton.rest()[b].translation;
        let values = self.phases().map(|p| rest + offset(p)).collect();
        let channel = Channel::new(self.times(), values, Interpolation::Linear);
        self.tracks[b].translation = Some(channel);
    }

    fn scale(&mut self, name: &str, scale: impl Fn(f32) -> Vec3) {
        let Some(b) = self.skeleton.find(name) else {
            return;
        };
        let values = self.phases().map(scale).collect();
        self.tracks[b].scale = Some(Channel::new(self.times(), values, Interpolation::Linear));
    }

    /// Root motion: the root advances at `velocity`, so its last key is not its first.
    fn root_motion(&mut self, velocity: Vec3) {
        let Some(b) = self.skeleton.find("root") else {
            return;
        };
        let rest = self.skeleton.rest()[b].translation;
        let times = self.times();
        let values = times.iter().map(|&t| rest + velocity * t).collect();
        self.tracks[b].translation = Some(Channel::new(times, values, Interpolation::Linear));
    }

    /// Arms hanging at the sides, `deg` down from the T-pose, elbows slightly bent.
    fn arms_down(&mut self, sides: &[(&str, f32)], deg: f32) {
        for &(s, side) in sides {
            self.rotate(&format!("upperarm_{s}"), |p| {
                lower(side, deg + 1.5 * (TAU * p).sin())
            });
            self.hold(&format!("lowerarm_{s}"), fore(side, 12.0));
        }
    }

    /// Relaxed fingers, curled by `curl` degrees per joint (more towards the tips).
    fn fingers(&mut self, sides: &[(&str, f32)], curl: f32) {
        for &(s, side) in sides {
            for (finger, ..) in FINGERS {
                let scale = if finger == "thumb" { 0.4 } else { 1.0 };
                for seg in 1..=3 {
                    let deg = curl * scale * (0.85 + 0.15 * seg as f32);
                    self.hold(&format!("{finger}_{seg:02}_{s}"), lower(side, deg));
                }
            }
        }
    }

    fn build(self, name: &str) -> Option<Clip> {
        Clip::new(name, self.skeleton, self.tracks).ok()
    }
}

fn idle(skeleton: &Skeleton) -> Option<Clip> {
    let mut a = Anim::new(skeleton, 2.0);
    let breath = |p: f32| (TAU * p).sin();
    for spine in ["spine_01", "spine_02", "spine_03"] {
        a.rotate(spine, |p| rx(1.2 * breath(p)));
    }
    // The chest widens and deepens (spine_03's local X runs along the spine).
    a.scale("spine_03", |p| {
        let e = 0.012 * (0.5 - 0.5 * (TAU * p).cos());
        Vec3::new(1.0, 1.0 + e, 1.0 + e)
    });
    a.offset("pelvis", |p| Vec3::new(0.01 * breath(p), 0.0, 0.0));
    a.rotate("head", |p| {
        ry(4.0 * breath(p)) * rx(2.0 * (2.0 * TAU * p).sin())
    });
    a.arms_down(&SIDES, 72.0);
    a.fingers(&SIDES, 12.0);
    // Saccades: the gaze jumps and holds, at irregular times (STEP keys).
    // The gaze is back ahead well before the end, so that the loop has no jump.
    let gaze = [
        (0.0, 0.0),
        (8.0, 1.0),
        (-5.0, -2.0),
        (3.0, 0.0),
        (0.0, 0.0),
        (0.0, 0.0),
    ];
    let d = a.duration();
    let times = vec![0.0, 0.225 * d, 0.55 * d, 0.7 * d, 0.85 * d, d];
    for (s, _) in SIDES {
        let deltas = gaze
            .iter()
            .map(|&(yaw, pitch)| ry(yaw) * rx(pitch))
            .collect();
        a.rotation_keys(&format!("eye_{s}"), times.clone(), deltas, true);
    }
    a.build("idle")
}

/// Amplitudes of a locomotion cycle (degrees, metres, seconds, m/s).
struct Gait {
    duration: f32,
    speed: f32,
    thigh: f32,
    knee: f32,
    arm: f32,
    elbow: f32,
    bob: f32,
    crouch: f32,
    lean: f32,
}

const WALK: Gait = Gait {
    duration: 1.0,
    speed: 1.4,
    thigh: 25.0,
    knee: 45.0,
    arm: 18.0,
    elbow: 15.0,
    bob: 0.015,
    crouch: 0.0,
    lean: 2.0,
};

const RUN: Gait = Gait {
    duration: 0.7,
    speed: 3.5,
    thigh: 40.0,
    knee: 95.0,
    arm: 35.0,
    elbow: 80.0,
    bob: 0.035,
    crouch: 0.06,
    lean: 10.0,
};

/// One gait cycle: the left leg is forward at phase 0.25, the right one at 0.75.
fn locomotion(skeleton: &Skeleton, name: &str, g: &Gait) -> Option<Clip> {
    let mut a = Anim::new(skeleton, g.duration);
    a.root_motion(Vec3::Z * g.speed);
    // Hips are highest at mid-stance (phases 0 and 0.5), sway over the supporting leg and turn
    // with the leading leg; the chest turns back against them.
    a.offset("pelvis", |p| {
        let w = TAU * p;
        Vec3::new(-0.02 * w.cos(), g.bob * (2.0 * w).cos() - g.crouch, 0.0)
    });
    a.rotate("pelvis", |p| ry(-6.0 * (TAU * p).sin()));
    a.rotate("spine_01", |p| rx(g.lean) * ry(4.0 * (TAU * p).sin()));
    a.rotate("spine_02", |p| ry(3.0 * (TAU * p).sin()));
    for (s, side) in SIDES {
        let leg = move |p: f32| TAU * p + if side > 0.0 { 0.0 } else { PI };
        // Negative angles about X swing a hanging limb forward.
        let thigh = move |p: f32| -g.thigh * leg(p).sin();
        // The knee bends most mid-swing, when the leg passes under the body.
        let knee = move |p: f32| 5.0 + g.knee * (0.5 + 0.5 * leg(p).cos()).powi(2);
        a.rotate(&format!("thigh_{s}"), |p| rx(thigh(p)));
        a.rotate(&format!("calf_{s}"), |p| rx(knee(p)));
        // The foot stays nearly level.
        a.rotate(&format!("foot_{s}"), |p| rx(-0.8 * (thigh(p) + knee(p))));
        // Each arm swings with the opposite leg.
        a.rotate(&format!("upperarm_{s}"), |p| {
            rx(g.arm * leg(p).sin()) * lower(side, 75.0)
        });
        a.rotate(&format!("lowerarm_{s}"), |p| {
            fore(side, g.elbow * (1.0 - 0.3 * leg(p).sin()))
        });
    }
    a.fingers(&SIDES, 20.0);
    a.build(name)
}

fn wave(skeleton: &Skeleton) -> Option<Clip> {
    let mut a = Anim::new(skeleton, 2.0);
    // Four waves per cycle; the hand lags the forearm.
    let wag = |p: f32| (4.0 * TAU * p).sin();
    let right = -1.0;
    a.rotate("spine_02", |p| rx(1.0 * (TAU * p).sin()));
    // Looks towards the raised hand (the right side is -X).
    a.rotate("head", |p| ry(-10.0) * rx(-3.0 + 1.5 * (TAU * p).sin()));
    a.arms_down(&SIDES[..1], 72.0);
    a.hold("clavicle_r", lower(right, -8.0));
    a.hold("upperarm_r", fore(right, 20.0) * lower(right, 5.0));
    a.rotate("lowerarm_r", |p| lower(right, -(85.0 + 22.0 * wag(p))));
    a.rotate("hand_r", |p| lower(right, -12.0 * wag(p - 0.03)));
    a.fingers(&SIDES[..1], 12.0);
    a.fingers(&SIDES[1..], 3.0);
    a.build("wave")
}
