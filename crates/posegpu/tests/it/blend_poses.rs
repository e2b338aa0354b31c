//! Full-pose blends from blend spaces, and aim offsets, on the CPU twin and the GPU.

use crate::common;

use glam::{Quat, Vec2};
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::blend::clips::{AimOffset, ClipBlendSpace};
use posegpu::blend::space::BlendSpace;
use posegpu::blend::space::{BlendGrid, BlendSpace1D, BlendTriangulation};
use posegpu::math::blend::blend;
use posegpu::procedural::{
    aim_rotation, humanoid_aim_poses, humanoid_asset, AIM_PITCHES, AIM_YAWS,
};
use posegpu::{AdditiveSpace, AnimLibrary, Asset, Clip, ClipSample, Error, PoseBatch};

use common::{assert_batch_gpu_matches_cpu, cpu_eval, cpu_eval_batch, gpu};

fn knight() -> Asset {
    let path = common::anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    posegpu::import::load(&path).unwrap()
}

fn clip_index(asset: &Asset, name: &str) -> u32 {
    Clip::find(&asset.clips, name).unwrap() as u32
}

#[test]
fn a_1d_blend_space_blends_its_two_neighbours_as_the_spec_says() {
    let knight = knight();
    let lib = AnimLibrary::new(&knight.skeleton, &knight.clips).unwrap();
    let clips = ["Idle", "Walking_A", "Running_A"].map(|n| clip_index(&knight, n));
    let space = BlendSpace1D::new(&[0.0, 1.5, 4.0]).unwrap();
    let speeds = ClipBlendSpace::new(&lib, space.into(), clips.to_vec()).unwrap();
    for (speed, phase) in [(0.6, 0.1), (2.0, 0.45), (3.9, 0.8)] {
        let samples = speeds.samples_at_phase(&lib, Vec2::new(speed, 0.0), phase);
        assert_eq!(samples.len(), 2);
        let mut batch = PoseBatch::new();
        batch.push_blend(&samples);
        let blended = cpu_eval_batch(&lib, &batch);
        // Each neighbour alone, blended by hand with the blend rule.
        let alone: Vec<_> = samples
            .iter()
            .map(|s| cpu_eval(&lib, &[ClipSample::new(s.clip, s.time, s.looping)]))
            .collect();
        for bone in 0..lib.bone_count() {
            let poses: Vec<_> = samples
                .iter()
                .zip(&alone)
                .map(|(s, p)| (p.local(0, bone), s.weight))
                .collect();
            let expected = blend(&poses, posegpu::Transform::IDENTITY);
            let got = blended.local(0, bone);
            assert!(got.translation.abs_diff_eq(expected.translation, 1e-6));
            assert!(got.rotation.abs_diff_eq(expected.rotation, 1e-6));
            assert!(got.scale.abs_diff_eq(expected.scale, 1e-6));
        }
    }
}

#[test]
fn blend_spaces_and_blended_bases_gpu_matches_cpu() {
    let knight = knight();
    let lib = AnimLibrary::new(&knight.skeleton, &knight.clips).unwrap();
    let names = [
        "Idle",
        "Walking_A",
        "Walking_B",
        "Running_A",
        "Walking_Backwards",
        "Running_B",
    ];
    let clips: Vec<u32> = names.iter().map(|n| clip_index(&knight, n)).collect();
    let grid = BlendGrid::new(&[-1.0, 0.0, 1.0], &[0.0, 1.0]).unwrap();
    let grid = ClipBlendSpace::new(&lib, grid.into(), clips.clone()).unwrap();
    let points = [
        [0.0, 0.0],
        [0.0, 1.0],
        [1.0, 1.0],
        [-1.0, 1.0],
        [0.0, -1.0],
        [0.0, 2.0],
    ];
    let scattered = BlendTriangulation::new(&points.map(Vec2::from)).unwrap();
    let scattered = ClipBlendSpace::new(&lib, scattered.into(), clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..64 {
        let p = Vec2::new((i as f32 * 0.37).sin() * 1.3, (i as f32 * 0.21).cos() * 1.6);
        let space = if i % 2 == 0 { &grid } else { &scattered };
        let samples = space.samples_at_phase(&lib, p, (i as f32 * 0.618).fract());
        assert!((samples.iter().map(|s| s.weight).sum::<f32>() - 1.0).abs() < 1e-5);
        batch.push_blend(&samples);
    }
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "blend spaces");
    }
}

/// The humanoid's clips, then its nine aim poses as mesh-space additives against the
/// reference pose, and the aim offset over them.
fn humanoid_aim() -> (AnimLibrary, AimOffset, u32) {
    let asset = humanoid_asset();
    let skeleton = &asset.skeleton;
    let mut clips = asset.clips.clone();
    let first = clips.len() as u32;
    for pose in humanoid_aim_poses(skeleton).unwrap() {
        let name = format!("{} additive", pose.name());
        let mesh = AdditiveSpace::Mesh;
        clips.push(
            make_additive(&name, skeleton, &pose, AdditiveBase::ReferencePose, mesh).unwrap(),
        );
    }
    let lib = AnimLibrary::new(skeleton, &clips).unwrap();
    let grid = BlendGrid::new(&AIM_YAWS, &AIM_PITCHES).unwrap();
    let aim = AimOffset::new(&lib, grid.into(), (first..first + 9).collect()).unwrap();
    (lib, aim, first)
}

#[test]
fn an_aim_offset_turns_the_head_in_mesh_space_whatever_the_base() {
    let (lib, aim, _) = humanoid_aim();
    let head = lib.skeleton().find("head").unwrap();
    for (yaw, pitch) in [(90.0, 0.0), (-90.0, 45.0), (0.0, -45.0)] {
        let mut batch = PoseBatch::new();
        for t in [0.0, 0.3, 0.71] {
            for clip in 0..4 {
                batch.push_clip(clip, t, true);
                batch
                    .push_clip(clip, t, true)
                    .aim(&aim, Vec2::new(yaw, pitch), 0.0, 1.0);
            }
        }
        let poses = cpu_eval_batch(&lib, &batch);
        let turn = aim_rotation(yaw, pitch);
        for i in (0..batch.len()).step_by(2) {
            let (base, aimed) = (poses.component(i, head), poses.component(i + 1, head));
            let expected = turn * base.rotation;
            assert!(
                aimed.rotation.abs_diff_eq(expected, 1e-5)
                    || aimed.rotation.abs_diff_eq(-expected, 1e-5),
                "yaw {yaw} pitch {pitch}, instance {i}"
            );
        }
    }
}

#[test]
fn aim_alpha_is_clamped_and_halfway_aims_turn_halfway() {
    let (lib, aim, _) = humanoid_aim();
    let head = lib.skeleton().find("head").unwrap();
    let at = |yaw: f32, alpha: f32| {
        let mut batch = PoseBatch::new();
        batch
            .push_clip(1, 0.4, true)
            .aim(&aim, Vec2::new(yaw, 0.0), 0.0, alpha);
        cpu_eval_batch(&lib, &batch)
    };
    assert_eq!(at(60.0, 1.7), at(60.0, 1.0));
    let mut base = PoseBatch::new();
    base.push_clip(1, 0.4, true);
    assert_eq!(at(60.0, -0.5).locals, cpu_eval_batch(&lib, &base).locals);
    // Yaw 45 blends the 0 and 90 poses half and half: the head turns 45° about the vertical.
    let (straight, half) = (at(0.0, 1.0), at(45.0, 1.0));
    let turn = half.component(0, head).rotation * straight.component(0, head).rotation.conjugate();
    assert!(
        turn.abs_diff_eq(Quat::from_rotation_y(45f32.to_radians()), 1e-4),
        "{turn:?}"
    );
}

#[test]
fn aim_offsets_gpu_matches_cpu() {
    let (lib, aim, _) = humanoid_aim();
    let mut batch = PoseBatch::new();
    for i in 0..96 {
        let f = i as f32;
        let target = Vec2::new((f * 0.77).sin() * 120.0, (f * 0.31).cos() * 60.0);
        batch
            .push_clip(i % 4, f * 0.05, true)
            .aim(&aim, target, 0.0, (f * 0.13).fract() * 1.2);
    }
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "aim offsets");
    }
}

#[test]
fn bad_blend_spaces_are_typed_errors() {
    let (lib, _, first) = humanoid_aim();
    let grid = || BlendSpace::from(BlendGrid::new(&AIM_YAWS, &AIM_PITCHES).unwrap());
    // Ordinary clips are not aim poses.
    let e = AimOffset::new(&lib, grid(), (0..9).collect()).unwrap_err();
    assert!(matches!(e, Error::BlendSpace { .. }), "{e}");
    // Nine samples, eight clips.
    let e = AimOffset::new(&lib, grid(), (first..first + 8).collect()).unwrap_err();
    assert!(e.to_string().contains("8 clips for 9 samples"), "{e}");
    // A clip the library lacks.
    let e = ClipBlendSpace::new(&lib, grid(), (first..first + 9).map(|c| c + 50).collect())
        .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    // Ordinary and additive clips mixed in one space.
    let mixed: Vec<u32> = (0..8).map(|k| first + k).chain([0]).collect();
    let e = ClipBlendSpace::new(&lib, grid(), mixed).unwrap_err();
    assert!(e.to_string().contains("not of the same kind"), "{e}");
    // A NaN alpha reaches validation as a typed error, not a panic.
    let mut batch = PoseBatch::new();
    let aim = AimOffset::new(&lib, grid(), (first..first + 9).collect()).unwrap();
    batch
        .push_clip(0, 0.0, true)
        .aim(&aim, Vec2::ZERO, 0.0, f32::NAN);
    let e = batch.validate(&lib).unwrap_err();
    assert!(matches!(e, Error::BadInstance { instance: 0, .. }), "{e}");
}
