//! What the Bevy frame tests share: the knight, frames of a row of knights, silhouettes, and
//! bone read-back on chosen instances.

#![allow(dead_code)]

use bevy::prelude::*;
use bevy_posegpu::headless::{self, Target};
use bevy_posegpu::{Animation, Backend, CrowdModel, PoseGpuPlugin};

pub const W: u32 = 320;
pub const H: u32 = 192;

pub const KNIGHT: &str = "gltf/kaykit-adventurers/Knight.glb";

/// The knight with its own clips.
pub fn knight(assets: &AssetServer) -> CrowdModel {
    CrowdModel::load(assets, headless::data_root(), KNIGHT).unwrap()
}

/// The frame (RGBA rows) of a row of knights read by `load`, one per animation `animations`
/// gives, evaluated on `backend`, `frames` frames in.
pub fn row_frame(
    backend: Backend,
    load: fn(&AssetServer) -> CrowdModel,
    animations: fn(&CrowdModel) -> Vec<Animation>,
    frames: u32,
) -> Vec<u8> {
    let mut app = headless::app(W, H);
    app.add_plugins(PoseGpuPlugin);
    app.add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>, target: Res<Target>| {
            let model = load(&assets);
            let animations = animations(&model);
            let n = animations.len() as f32;
            let at = |i: usize| Transform::from_xyz((i as f32 - (n - 1.0) / 2.0) * 1.5, 0.0, 0.0);
            bevy_posegpu::spawn_crowd_on(
                &mut commands,
                model,
                backend,
                animations.into_iter().enumerate().map(|(i, a)| (at(i), a)),
            );
            row_camera(&mut commands, &target);
        },
    );
    app.add_systems(Update, bevy_posegpu::hide_rigid_meshes);
    headless::run_and_read(&mut app, frames).expect("a frame was read back")
}

/// The camera and light of a row of knights' frame.
pub fn row_camera(commands: &mut Commands, target: &Target) {
    headless::camera_and_light(
        commands,
        target,
        Vec3::new(0.0, 1.5, 6.0),
        Vec3::new(0.0, 0.9, 0.0),
    );
}

/// Which pixels differ from the background (the top-left pixel's colour).
pub fn silhouette(pixels: &[u8]) -> Vec<bool> {
    let bg = &pixels[..4];
    pixels[..(W * H * 4) as usize]
        .chunks_exact(4)
        .map(|p| p.iter().zip(bg).any(|(a, b)| a.abs_diff(*b) > 8))
        .collect()
}

pub fn differing(a: &[bool], b: &[bool]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

pub fn area(a: &[bool]) -> usize {
    a.iter().filter(|&&p| p).count()
}

/// The crowd whose instances read back these bones.
#[derive(Resource)]
pub struct Chosen(pub Entity, pub Vec<u32>);

/// Puts the read-back on the chosen crowd's instances.
pub fn ask_for_bones(
    mut commands: Commands,
    chosen: Option<Res<Chosen>>,
    instances: Query<(Entity, &bevy_posegpu::CrowdInstance), Without<bevy_posegpu::BoneReadback>>,
) {
    let Some(chosen) = chosen else { return };
    for (e, i) in &instances {
        if i.crowd == chosen.0 {
            commands
                .entity(e)
                .insert(bevy_posegpu::BoneReadback::new(chosen.1.clone()));
        }
    }
}

/// The largest absolute difference between two matrices' entries.
pub fn max_diff(a: Mat4, b: Mat4) -> f32 {
    (a - b)
        .to_cols_array()
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()))
}
