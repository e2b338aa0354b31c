//! Root-motion options: the root-motion bone chosen by name under a Z-up armature, axis masks
//! (ground plane, yaw only) against hand-computed motion, the pose keeping what is not
//! extracted, UE's modes (from montages only, ignore), GPU against CPU, `ClipMotion` (the same
//! motion for callers that keep their own playback), and bad options.

use crate::common;

use std::f32::consts::TAU;

use glam::{Quat, Vec3};
use posegpu::playback::Montage;
use posegpu::playback::{Agent, PlayRate, Player, RootMotionMode, Segment};
use posegpu::{
    AnimLibrary, Bone, BoneTrack, Channel, Clip, ClipMotion, CpuEvaluator, Crowd, Error, GpuCrowd,
    GpuOptions, Interpolation, Poses, RootLock, RootMotionAxes, Skeleton, Transform,
};

/// A Z-up armature (turned −90° about X, as Blender exports it) over hips over a leg.
fn skeleton() -> Skeleton {
    let armature = Transform::new(Vec3::ZERO, Quat::from_rotation_x(-TAU / 4.0), Vec3::ONE);
    let at = |v: Vec3| Transform::new(v, Quat::IDENTITY, Vec3::ONE);
    Skeleton::new(vec![
        Bone::new("Armature", None, armature),
        Bone::new("hips", Some(0), at(Vec3::Z)),
        Bone::new("leg", Some(1), at(Vec3::new(0.1, 0.0, -0.5))),
    ])
    .unwrap()
}

/// The hips in the armature's frame (Z up) at `t`: travel along X and Y, a bob along Z, a
/// turn about Z and a pitch about X.
fn hips_at(t: f32) -> Transform {
    Transform::new(
        Vec3::new(2.0 * t, 0.5 * t, 1.0 + 0.1 * (TAU * t).sin()),
        Quat::from_rotation_z(0.8 * t) * Quat::from_rotation_x(0.2 * (TAU * t).sin()),
        Vec3::ONE,
    )
}

/// One second of `hips_at`, keyed every 1/64 s (linear keys: between keys the motion is the
/// keys' interpolation, so the checks sample at key times).
fn walk(skeleton: &Skeleton) -> Clip {
    let times: Vec<f32> = (0..=64).map(|k| k as f32 / 64.0).collect();
    let poses: Vec<Transform> = times.iter().map(|&t| hips_at(t)).collect();
    let mut tracks = vec![BoneTrack::default(); skeleton.len()];
    tracks[1] = BoneTrack {
        translation: Some(Channel::new(
            times.clone(),
            poses.iter().map(|p| p.translation).collect(),
            Interpolation::Linear,
        )),
        rotation: Some(Channel::new(
            times.clone(),
            poses.iter().map(|p| p.rotation).collect(),
            Interpolation::Linear,
        )),
        scale: None,
    };
    Clip::new("walk", skeleton, tracks).unwrap()
}

/// The library, with its root motion from the hips, up +Y in component space.
fn library() -> AnimLibrary {
    let skeleton = skeleton();
    let walk = walk(&skeleton);
    let mut builder = AnimLibrary::builder(&skeleton);
    builder.add_clips(&[walk]).unwrap();
    builder.set_root_motion_bone("hips", Vec3::Y).unwrap();
    builder.build()
}

fn close(a: Vec3, b: Vec3, what: &str) {
    assert!(a.abs_diff_eq(b, 1e-4), "{what}: {a} != {b}");
}

fn close_q(a: Quat, b: Quat, what: &str) {
    assert!(
        a.abs_diff_eq(b, 1e-4) || a.abs_diff_eq(-b, 1e-4),
        "{what}: {a:?} != {b:?}"
    );
}

/// A crowd of one instance walking with `agent`'s options, after one step of `dt`.
fn stepped(lib: &AnimLibrary, agent: Agent, dt: f32) -> Crowd {
    let mut crowd = Crowd::new(lib);
    crowd.add(&agent).unwrap();
    crowd.advance(lib, dt).unwrap();
    crowd
}

fn pose(lib: &AnimLibrary, crowd: &Crowd) -> Poses {
    let mut poses = Poses::default();
    CpuEvaluator::new(lib)
        .evaluate(&crowd.batch(), &mut poses)
        .unwrap();
    poses
}

#[test]
fn the_ground_plane_extracts_travel_and_turn_and_leaves_bob_and_pitch_in_the_pose() {
    let lib = library();
    assert_eq!(lib.root_motion_bone(), 1);
    let agent = Agent::new(Player::new(0u32))
        .with_root_motion(Some(RootLock::RefPose))
        .with_root_axes(RootMotionAxes::GROUND_PLANE);
    let t = 0.625;
    let crowd = stepped(&lib, agent, t);
    // In the character's frame (Y up): the armature turns the hips' X, Y travel into X, −Z,
    // and its turn about Z into a turn about Y.
    let delta = crowd.root_motion()[0];
    close(
        delta.translation,
        Vec3::new(2.0 * t, 0.0, -0.5 * t),
        "travel",
    );
    close_q(delta.rotation, Quat::from_rotation_y(0.8 * t), "turn");
    close(
        crowd.placements()[0].translation,
        delta.translation,
        "placement",
    );
    // The pose keeps the bob and the pitch: the hips at their rest ground position and turn,
    // at the animated height, pitched as animated.
    let hips = pose(&lib, &crowd).local(0, 1);
    let animated = hips_at(t);
    close(
        hips.translation,
        Vec3::new(0.0, 0.0, animated.translation.z),
        "shown hips",
    );
    let pitch = 0.2 * (TAU * t).sin();
    assert!(pitch.abs() > 0.1);
    close_q(hips.rotation, Quat::from_rotation_x(pitch), "shown pitch");
}

#[test]
fn the_world_pose_is_the_animation_whatever_part_is_extracted() {
    // Placement ∘ shown pose = the animation played without extraction, at every step. (UE's
    // whole-motion extraction turns the placement about its origin, not about the hips, so
    // this holds for it only where the locked root sits at the origin.)
    let lib = library();
    for axes in [RootMotionAxes::GROUND_PLANE, RootMotionAxes::YAW_ONLY] {
        let mut crowd = Crowd::new(&lib);
        let agent = Agent::new(Player::new(0u32).looping(false))
            .with_root_motion(Some(RootLock::FirstFrame))
            .with_root_axes(axes);
        crowd.add(&agent).unwrap();
        let mut plain = Crowd::new(&lib);
        plain
            .add(&Agent::new(Player::new(0u32).looping(false)))
            .unwrap();
        for step in 0..8 {
            crowd.advance(&lib, 0.125).unwrap();
            plain.advance(&lib, 0.125).unwrap();
            let (a, b) = (pose(&lib, &crowd), pose(&lib, &plain));
            for bone in [1, 2] {
                let moved = Transform::compose(&a.component(0, bone), &crowd.placements()[0]);
                let want = b.component(0, bone);
                close(
                    moved.translation,
                    want.translation,
                    &format!("{axes:?}, step {step}, bone {bone}"),
                );
                close_q(moved.rotation, want.rotation, &format!("{axes:?} rotation"));
            }
        }
    }
}

#[test]
fn yaw_only_turns_the_placement_and_keeps_the_travel_in_the_pose() {
    let lib = library();
    let agent = Agent::new(Player::new(0u32))
        .with_root_motion(Some(RootLock::RefPose))
        .with_root_axes(RootMotionAxes::YAW_ONLY);
    let crowd = stepped(&lib, agent, 0.5);
    let delta = crowd.root_motion()[0];
    close(delta.translation, Vec3::ZERO, "no travel");
    close_q(delta.rotation, Quat::from_rotation_y(0.4), "turn");
    // The travel stays in the pose, in the turned placement's frame.
    let hips = pose(&lib, &crowd).local(0, 1);
    let travel = Quat::from_rotation_z(-0.4) * hips_at(0.5).translation;
    close(hips.translation, travel, "travel kept");
}

#[test]
fn montages_only_moves_by_the_montage_and_ignore_moves_nothing() {
    let lib = library();
    let mut crowd = Crowd::new(&lib);
    let montage = crowd
        .add_montage(&lib, &Montage::new("m", &[Segment::new(0, 0.0, 1.0)]))
        .unwrap();
    let sequence = Player::new(0u32).with_weight(0.5);
    let from_montage = Player::new(montage).with_weight(0.5);
    let agent = |mode| {
        Agent::blend(&[sequence, from_montage])
            .with_root_motion(Some(RootLock::RefPose))
            .with_root_mode(mode)
    };
    crowd.add(&agent(RootMotionMode::FromMontagesOnly)).unwrap();
    crowd.add(&agent(RootMotionMode::FromEverything)).unwrap();
    crowd.add(&agent(RootMotionMode::Ignore)).unwrap();
    crowd.advance(&lib, 0.5).unwrap();
    let motion = crowd.root_motion();
    // The montage player alone, at full weight: the whole clip's motion; both players (the
    // same motion) blended give the same; ignored motion is reported but does not move.
    close(
        motion[0].translation,
        motion[1].translation,
        "montage's motion",
    );
    assert!(motion[0].translation.length() > 0.5);
    close(motion[2].translation, motion[1].translation, "reported");
    close(crowd.placements()[2].translation, Vec3::ZERO, "ignored");
    // Montages only: the sequence player keeps its root motion in the pose, the montage's is
    // locked; a frame sample per player says which.
    let batch = crowd.batch();
    let locks: Vec<Option<RootLock>> = batch
        .layers(0)
        .next()
        .unwrap()
        .unwrap()
        .samples()
        .map(|s| s.root_lock)
        .collect();
    assert_eq!(locks, [None, Some(RootLock::RefPose)]);
}

#[test]
fn root_motion_options_match_on_the_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let lib = library();
    let mut cpu = Crowd::new(&lib);
    let montage = cpu
        .add_montage(
            &lib,
            &Montage::new("m", &[Segment::new(0, 0.2, 0.9), Segment::new(0, 0.0, 0.5)]),
        )
        .unwrap();
    let all_axes = [
        RootMotionAxes::EVERYTHING,
        RootMotionAxes::GROUND_PLANE,
        RootMotionAxes::YAW_ONLY,
    ];
    let modes = [
        RootMotionMode::FromEverything,
        RootMotionMode::FromMontagesOnly,
        RootMotionMode::Ignore,
    ];
    let locks = [None, Some(RootLock::RefPose), Some(RootLock::FirstFrame)];
    for i in 0..27usize {
        let players = [
            Player::new(0u32)
                .starting_at(i as f32 * 0.03)
                .with_weight(0.6),
            Player::new(montage).with_weight(0.4),
        ];
        let agent = Agent::blend(&players)
            .with_root_motion(locks[i % 3])
            .with_root_axes(all_axes[i / 3 % 3])
            .with_root_mode(modes[i / 9]);
        cpu.add(&agent).unwrap();
    }
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu, &GpuOptions::default()).unwrap();
    for step in 0..5 {
        let dt = [0.1, 0.45, 0.0, 1.3, 0.05][step];
        cpu.advance(&lib, dt).unwrap();
        gpu.advance(dt).unwrap();
        let (motion, placements) = (
            gpu.read_root_motion().unwrap(),
            gpu.read_placements().unwrap(),
        );
        for i in 0..cpu.len() {
            let what = format!("step {step}, instance {i}");
            close(
                motion[i].translation,
                cpu.root_motion()[i].translation,
                &what,
            );
            close_q(motion[i].rotation, cpu.root_motion()[i].rotation, &what);
            close(
                placements[i].translation,
                cpu.placements()[i].translation,
                &what,
            );
        }
        let poses = gpu.evaluator().read_back().unwrap();
        let want = pose(&lib, &cpu);
        let d = posegpu::Deviation::between(&poses, &want).relative(lib.skeleton().extent());
        assert!(d <= 1e-4, "step {step}: poses differ by {d:e}");
    }
}

#[test]
fn clip_motion_is_what_a_crowd_player_extracts_over_the_same_step() {
    let lib = library();
    let motion = ClipMotion::new(&lib);
    // (start, rate, step, looping): inside the clip, across its end once and twice, backwards
    // across its start, and stopping at the end of a clip that does not loop.
    let cases = [
        (0.25, 1.0, 0.5, true),
        (0.75, 1.0, 0.5, true),
        (0.5, 2.0, 1.3, true),
        (0.25, -1.0, 0.5, true),
        (0.75, 1.0, 0.5, false),
    ];
    for (start, rate, dt, looping) in cases {
        for axes in [RootMotionAxes::EVERYTHING, RootMotionAxes::GROUND_PLANE] {
            let player = Player::new(0u32)
                .starting_at(start)
                .with_rate(PlayRate::new(rate))
                .looping(looping);
            let agent = Agent::new(player)
                .with_root_motion(Some(RootLock::RefPose))
                .with_root_axes(axes);
            let expected = stepped(&lib, agent, dt).root_motion()[0];
            // A time past the clip's end wraps as the sampling does.
            let time = if looping { start + 3.0 } else { start };
            let got = motion.step(0, time, rate * dt, looping, axes).unwrap();
            let what = format!("from {start} at rate {rate} for {dt} s, looping {looping}");
            assert!(
                expected.translation.length() > 0.1,
                "{what}: no motion to compare"
            );
            close(got.translation, expected.translation, &what);
            close_q(got.rotation, expected.rotation, &what);
        }
    }
    for (clip, time) in [(1, 0.0), (0, f32::NAN)] {
        let e = motion.step(clip, time, 0.1, true, RootMotionAxes::EVERYTHING);
        assert!(matches!(e, Err(Error::Playback { .. })), "{e:?}");
    }
}

#[test]
fn bad_root_motion_settings_are_typed_errors() {
    let skeleton = skeleton();
    let mut builder = AnimLibrary::builder(&skeleton);
    let e = builder
        .set_root_motion_bone("pelvis", Vec3::Y)
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(&e, Error::UnknownBone { name, .. } if name == "pelvis"),
        "{e}"
    );
    for up in [Vec3::ZERO, Vec3::NAN] {
        let e = builder
            .set_root_motion_bone("hips", up)
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&e, Error::Playback { what } if what.contains("up")),
            "{e}"
        );
    }
    // Nothing set by the failed calls.
    assert_eq!(builder.build().root_motion_bone(), 0);
}
