//! A headless Bevy frame (lavapipe in CI) of KayKit knights animated by posegpu on the GPU,
//! compared silhouette by silhouette with the same knights posed by posegpu's CPU twin through
//! Bevy's own skin path (joint entities' transforms, Bevy's CPU joint matrices), and with the
//! knights left at rest: the GPU path must draw what the CPU twin poses, and something else
//! than the rest pose. Measured: 11,631 pixels of knights, none differing between the GPU path
//! and the CPU twin, 3,498 differing from the rest pose.

mod common;

use bevy::prelude::*;
use bevy_posegpu::headless::{self, Target};
use bevy_posegpu::{Animation, Backend, CrowdModel, PlayingClip, PoseGpuPlugin};
use common::*;

/// Four knights frozen at different times of their walk.
fn walks(model: &CrowdModel) -> Vec<Animation> {
    let walk = model.clip("Walking_A").unwrap();
    (0..4)
        .map(|i| {
            PlayingClip::new(walk, 0.2 + 0.25 * i as f32)
                .with_rate(0.0)
                .into()
        })
        .collect()
}

/// The frame of the four knights at rest (their scenes without a crowd).
fn rest_frame() -> Vec<u8> {
    let mut app = headless::app(W, H);
    app.add_systems(
        Startup,
        |mut commands: Commands, assets: Res<AssetServer>, target: Res<Target>| {
            let scene =
                assets.load(bevy::gltf::GltfAssetLabel::Scene(0).from_asset(KNIGHT.to_string()));
            for i in 0..4 {
                commands.spawn((
                    bevy::world_serialization::WorldAssetRoot(scene.clone()),
                    Transform::from_xyz(i as f32 * 1.5 - 2.25, 0.0, 0.0),
                ));
            }
            row_camera(&mut commands, &target);
        },
    );
    app.add_systems(Update, bevy_posegpu::hide_rigid_meshes);
    headless::run_and_read(&mut app, 4).expect("a frame was read back")
}

#[test]
fn the_gpu_path_draws_what_the_cpu_twin_poses() {
    // Bevy panics without an adapter: this test fails, never skips, where there is none.
    let gpu = silhouette(&row_frame(Backend::Gpu, knight, walks, 4));
    let cpu = silhouette(&row_frame(Backend::Cpu, knight, walks, 4));
    let rest = silhouette(&rest_frame());
    let area = area(&gpu);
    assert!(area > 2_000, "the knights cover {area} pixels");
    let (d_cpu, d_rest) = (differing(&gpu, &cpu), differing(&gpu, &rest));
    eprintln!("{area} pixels of knights; {d_cpu} differ from the CPU twin's, {d_rest} from rest");
    // Rounding may move an edge pixel here and there; a wrong joint or placement moves limbs.
    assert!(
        d_cpu * 100 <= area,
        "GPU against CPU twin: {d_cpu} of {area} pixels differ"
    );
    assert!(
        d_rest * 10 >= area,
        "the GPU frame is the rest pose: {d_rest} of {area} differ"
    );
}

#[test]
fn chosen_bones_come_back_a_frame_later() {
    // One knight on the GPU path reads back its right hand and head; they must be where
    // posegpu's CPU twin puts them, placed in the world as Bevy places the skeleton.
    let mut app = headless::app(W, H);
    app.add_plugins(PoseGpuPlugin);
    let time = 0.45;
    app.add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>, target: Res<Target>| {
            let model = knight(&assets);
            let clip = model.clip("Walking_A").unwrap();
            let bones = ["hand.r", "head"].map(|n| model.bone(n).expect(n)).to_vec();
            let crowd = bevy_posegpu::spawn_crowd(
                &mut commands,
                model,
                [(
                    Transform::from_xyz(0.5, 0.0, -1.0).with_rotation(Quat::from_rotation_y(0.6)),
                    PlayingClip::new(clip, time).with_rate(0.0),
                )],
            );
            commands.insert_resource(Chosen(crowd, bones));
            headless::camera_and_light(&mut commands, &target, Vec3::new(0.0, 1.5, 6.0), Vec3::Y);
        },
    );
    app.add_systems(Update, ask_for_bones);
    headless::run_and_read(&mut app, 8).expect("a frame was read back");
    let world = app.world_mut();
    let (readback, bound) = world
        .query::<(&bevy_posegpu::BoneReadback, &bevy_posegpu::Bound)>()
        .single(world)
        .expect("one instance reads back bones");
    let (got, above) = (readback.world.clone(), bound.above());
    let above = world.get::<GlobalTransform>(above).unwrap().to_matrix();
    assert_eq!(got.len(), 2, "both bones came back");

    let path = headless::data_root().join(KNIGHT);
    let asset = posegpu::import::load(&path).unwrap();
    let lib = posegpu::AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let clip = lib
        .clip_names()
        .iter()
        .position(|n| n == "Walking_A")
        .unwrap() as u32;
    let mut batch = posegpu::PoseBatch::new();
    batch.push_clip(clip, time, true);
    let mut poses = posegpu::Poses::default();
    posegpu::CpuEvaluator::new(&lib)
        .evaluate(&batch, &mut poses)
        .unwrap();
    for (k, name) in ["hand.r", "head"].into_iter().enumerate() {
        let b = asset.skeleton.find(name).unwrap();
        let c = poses.component(0, b).to_matrix().to_cols_array();
        let expected = above * Mat4::from_cols_array(&c);
        let err = max_diff(got[k], expected);
        assert!(err <= 1e-4, "{name}: {err}\n{}\n{expected}", got[k]);
    }
}
