//! A crowd of KayKit knights animated by posegpu inside Bevy, drawn by Bevy's renderer and
//! written as a PNG (headless: no window is needed, so it runs on CI's lavapipe too).
//!
//! `cargo run --release --ignore-rust-version --example crowd -- [COUNT] [OUT.png] [FRAMES]`
//! (defaults: 10,000 knights, `crowd.png`, 30 frames). The models come from
//! `../shared/anim-data` (`POSEGPU_DATA` overrides it).

use bevy::prelude::*;
use bevy_posegpu::headless::{self, Target};
use bevy_posegpu::{CrowdModel, Playback, PoseGpuPlugin};

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
    let model = CrowdModel::load(
        assets,
        headless::data_root(),
        "gltf/kaykit-adventurers/Knight.glb",
    )
    .expect("Knight.glb");
    let walk = model.clip("Walking_A").unwrap_or(0);
    let side = (count as f32).sqrt().ceil() as usize;
    let spacing = 1.6;
    bevy_posegpu::spawn_crowd(
        commands,
        model,
        (0..count).map(|i| {
            let (x, z) = ((i % side) as f32, (i / side) as f32);
            let at = Transform::from_xyz((x - side as f32 / 2.0) * spacing, 0.0, -z * spacing);
            (at, Playback::new(walk, i as f32 * 0.137))
        }),
    );
    let extent = side as f32 * spacing;
    headless::camera_and_light(
        commands,
        target,
        Vec3::new(0.0, extent * 0.35 + 2.0, extent * 0.25 + 4.0),
        Vec3::new(0.0, 0.5, -extent * 0.3),
    );
}
