//! A crowd of KayKit knights animated by posegpu inside Bevy, drawn by Bevy's renderer and
//! written as a PNG (headless: no window is needed, so it runs on CI's lavapipe too). Most walk;
//! some blend a walk with a run, some cheer with the upper body over their walk, some take a
//! hit (a dynamic additive).
//!
//! `cargo run --release --ignore-rust-version --example crowd -- [COUNT] [OUT.png] [FRAMES]`
//! (defaults: 10,000 knights, `crowd.png`, 30 frames). The models come from
//! `../shared/anim-data` (`POSEGPU_DATA` overrides it).

use bevy::prelude::*;
use bevy_posegpu::headless::{self, Target};
use bevy_posegpu::{
    AdditiveSpace, Animation, CrowdModel, Layer, MaskBranch, PlayingClip, PoseGpuPlugin,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map_or(10_000, |a| a.parse().expect("COUNT"));
    let out = args.next().unwrap_or_else(|| "crowd.png".to_string());
    let frames: u32 = args.next().map_or(30, |a| a.parse().expect("FRAMES"));
    let mut app = headless::app(640, 360);
    app.add_plugins(PoseGpuPlugin);
    // The knight's sword, shields and helmet hang rigidly from joint nodes, which the GPU path
    // does not move.
    app.add_systems(Update, bevy_posegpu::hide_rigid_meshes);
    app.add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>, target: Res<Target>| {
            setup(&mut commands, &assets, &target, count)
        },
    );
    headless::run_and_save(&mut app, frames, &out);
    println!("{count} knights, {frames} frames: {out}");
}

fn setup(commands: &mut Commands, assets: &AssetServer, target: &Target, count: usize) {
    let model = CrowdModel::builder(headless::data_root(), "gltf/kaykit-adventurers/Knight.glb")
        .mask("upper", &[MaskBranch::new("spine", 1)])
        .load(assets)
        .expect("Knight.glb");
    let clip = |name: &str, time: f32| PlayingClip::new(model.clip(name).expect(name), time);
    let upper = model.mask("upper");
    let animation = |i: usize| -> Animation {
        let time = i as f32 * 0.137;
        let walk = clip("Walking_A", time);
        match i % 10 {
            3 => Animation::blend(vec![walk, clip("Running_A", time).with_weight(0.7)]),
            6 => Animation::from(walk).with_layer(Layer::Blend {
                space: AdditiveSpace::Mesh,
                weight: 1.0,
                clips: vec![clip("Cheer", time)],
                mask: upper,
            }),
            8 => Animation::from(walk).with_layer(Layer::Dynamic {
                space: AdditiveSpace::Local,
                weight: 1.0,
                pose: clip("Hit_A", time),
                base: clip("Idle", time),
            }),
            _ => walk.into(),
        }
    };
    let side = (count as f32).sqrt().ceil() as usize;
    let spacing = 1.6;
    let instances: Vec<(Transform, Animation)> = (0..count)
        .map(|i| {
            let (x, z) = ((i % side) as f32, (i / side) as f32);
            let at = Transform::from_xyz((x - side as f32 / 2.0) * spacing, 0.0, -z * spacing);
            (at, animation(i))
        })
        .collect();
    bevy_posegpu::spawn_crowd(commands, model, instances);
    let extent = side as f32 * spacing;
    headless::camera_and_light(
        commands,
        target,
        Vec3::new(0.0, extent * 0.35 + 2.0, extent * 0.25 + 4.0),
        Vec3::new(0.0, 0.5, -extent * 0.3),
    );
}
