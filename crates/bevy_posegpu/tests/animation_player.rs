//! The same knight, the same clip, the same time: posegpu on the GPU path (bones read back)
//! against Bevy's own `AnimationPlayer` (joint entities' `GlobalTransform`s), every bone in the
//! world, within 1e-4 of the knight's height, on a key and between keys. Between keys they could
//! differ by how rotations are interpolated (posegpu's nlerp, UE's; Bevy's slerp): on this 30 Hz
//! clip that is below 1e-6 of the height (measured: 3.1e-7 at worst, on a key and between).

mod common;

use bevy::animation::graph::{AnimationGraph, AnimationGraphHandle, AnimationNodeIndex};
use bevy::animation::AnimationPlayer;
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy::world_serialization::WorldAssetRoot;
use bevy_posegpu::headless::{self, Target};
use bevy_posegpu::{PlayingClip, PoseGpuPlugin};
use common::*;

const CLIP: &str = "Walking_A";

/// Marks the knight Bevy animates.
#[derive(Component)]
struct ByBevy;

#[derive(Resource)]
struct Graph(Handle<AnimationGraph>, AnimationNodeIndex, f32);

/// The glTF animation index of the clip named `name` (Bevy's labels count animations).
fn gltf_animation(name: &str) -> usize {
    let gltf = gltf::Gltf::open(headless::data_root().join(KNIGHT)).unwrap();
    gltf.animations()
        .position(|a| a.name() == Some(name))
        .expect(name)
}

/// Starts Bevy's players (those the glTF loader put on the knight) paused at the chosen time.
fn start_players(
    mut commands: Commands,
    graph: Res<Graph>,
    mut players: Query<(Entity, &mut AnimationPlayer), Without<AnimationGraphHandle>>,
) {
    for (entity, mut player) in &mut players {
        commands
            .entity(entity)
            .insert(AnimationGraphHandle(graph.0.clone()));
        player.play(graph.1).set_seek_time(graph.2).pause();
    }
}

/// The worst distance, over every bone, between where posegpu puts it and where Bevy's
/// player does, in units of the knight's height; and where Bevy's player puts the right hand.
fn worst_difference(time: f32) -> (f32, Vec4) {
    let mut app = headless::app(W, H);
    app.add_plugins(PoseGpuPlugin);
    app.add_systems(
        Startup,
        move |mut commands: Commands,
              assets: Res<AssetServer>,
              mut graphs: ResMut<Assets<AnimationGraph>>,
              target: Res<Target>| {
            let model = knight(&assets);
            let clip = model.clip(CLIP).unwrap();
            let bones: Vec<u32> = (0..model.library().bone_count() as u32).collect();
            let at = Transform::from_xyz(0.3, 0.0, -0.5).with_rotation(Quat::from_rotation_y(0.7));
            let crowd = bevy_posegpu::spawn_crowd(
                &mut commands,
                model,
                [(at, PlayingClip::new(clip, time).with_rate(0.0))],
            );
            commands.insert_resource(Chosen(crowd, bones));
            let label = GltfAssetLabel::Animation(gltf_animation(CLIP));
            let clip = assets.load(label.from_asset(KNIGHT.to_string()));
            let (graph, node) = AnimationGraph::from_clip(clip);
            commands.insert_resource(Graph(graphs.add(graph), node, time));
            let scene = assets.load(GltfAssetLabel::Scene(0).from_asset(KNIGHT.to_string()));
            commands.spawn((WorldAssetRoot(scene), at, ByBevy));
            headless::camera_and_light(&mut commands, &target, Vec3::new(0.0, 1.5, 6.0), Vec3::Y);
        },
    );
    app.add_systems(Update, (ask_for_bones, start_players));
    headless::run_and_read(&mut app, 8).expect("a frame was read back");

    let world = app.world_mut();
    let posed = world
        .query::<&bevy_posegpu::BoneReadback>()
        .single(world)
        .expect("one knight reads back its bones")
        .world
        .clone();
    let root = world
        .query_filtered::<Entity, With<ByBevy>>()
        .single(world)
        .unwrap();
    let mut by_name = std::collections::HashMap::new();
    let mut children = world.query::<&Children>();
    let descendants: Vec<Entity> = children.query(world).iter_descendants(root).collect();
    for e in descendants {
        if let (Some(name), Some(g)) = (world.get::<Name>(e), world.get::<GlobalTransform>(e)) {
            by_name.insert(name.as_str().to_string(), g.to_matrix());
        }
    }
    let asset = posegpu::import::load(headless::data_root().join(KNIGHT)).unwrap();
    let names = asset.skeleton.names();
    assert_eq!(posed.len(), names.len(), "every bone came back");
    let height = posed
        .iter()
        .map(|m| m.w_axis.y)
        .fold(0.0f32, f32::max)
        .max(1e-3);
    let mut worst = (0.0f32, "");
    for (name, m) in names.iter().zip(&posed) {
        let bevy = by_name
            .get(name)
            .unwrap_or_else(|| panic!("Bevy's knight has no joint {name}"));
        let d = (bevy.w_axis - m.w_axis).length() / height;
        if d > worst.0 {
            worst = (d, name);
        }
    }
    eprintln!(
        "at {time} s: worst bone {} off by {:.2e} of the height ({height:.3} m)",
        worst.1, worst.0
    );
    (worst.0, by_name["hand.r"].w_axis)
}

#[test]
fn posegpu_poses_as_bevys_animation_player_on_keys_and_between() {
    // Walking_A is keyed at 30 Hz: 0.3 s is its key 9, 0.55 s halfway from key 16 to 17.
    let (on_key, hand_at_key) = worst_difference(0.3);
    let (between, hand_between) = worst_difference(0.55);
    assert!(on_key <= 1e-4, "{on_key} of the height on a key");
    assert!(between <= 1e-4, "{between} of the height between keys");
    // Bevy's player moved the hand between the two times: the comparison is of a walk.
    let moved = (hand_at_key - hand_between).length();
    assert!(moved > 0.05, "Bevy's knight's hand moved {moved} m");
}
