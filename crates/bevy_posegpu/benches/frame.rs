//! Frame time of N knights walking, side by side in one run: animated by Bevy's own
//! `AnimationPlayer` (its animation systems, then transform propagation of every joint), by
//! posegpu on Bevy's device (the GPU path), and by posegpu's CPU twin through Bevy's skin path.
//! The meshes are hidden so that drawing (software rasterization on this machine) does not
//! bury the animation's cost: each frame is the animation, its extraction and, on the GPU
//! path, posegpu's passes, finished before the clock stops. Also posegpu's own GPU time for
//! the same crowd from timestamp queries, on the same adapter, outside Bevy.
//!
//! `cargo bench --ignore-rust-version --bench frame -- [N ...]` (default 1000 10000).

use std::time::Instant;

use bevy::animation::graph::{AnimationGraph, AnimationGraphHandle, AnimationNodeIndex};
use bevy::animation::AnimationPlayer;
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy::render::renderer::RenderDevice;
use bevy::world_serialization::WorldAssetRoot;
use bevy_posegpu::headless;
use bevy_posegpu::{Backend, CrowdModel, PlayingClip, PoseGpuPlugin};

const KNIGHT: &str = "gltf/kaykit-adventurers/Knight.glb";
const WALK: &str = "Walking_A";
const FRAMES: u32 = 30;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Animator {
    Bevy,
    Posegpu(Backend),
}

#[derive(Resource)]
struct Graph(Handle<AnimationGraph>, AnimationNodeIndex);

/// Knight `i` of `n`: its place in a square grid and its start time.
fn knight(i: usize, n: usize) -> (Transform, f32) {
    let side = (n as f32).sqrt().ceil() as usize;
    let at = Transform::from_xyz((i % side) as f32 * 1.6, 0.0, (i / side) as f32 * -1.6);
    (at, i as f32 * 0.137 % 1.0)
}

fn app(n: usize, animator: Animator) -> App {
    let mut app = headless::app(64, 64);
    app.add_plugins(PoseGpuPlugin);
    app.add_systems(
        Startup,
        move |mut commands: Commands,
              assets: Res<AssetServer>,
              mut graphs: ResMut<Assets<AnimationGraph>>| {
            let scene = assets.load(GltfAssetLabel::Scene(0).from_asset(KNIGHT.to_string()));
            match animator {
                Animator::Bevy => {
                    let gltf = gltf::Gltf::open(headless::data_root().join(KNIGHT)).unwrap();
                    let walk = gltf.animations().position(|a| a.name() == Some(WALK));
                    let label = GltfAssetLabel::Animation(walk.unwrap());
                    let clip = assets.load(label.from_asset(KNIGHT.to_string()));
                    let (graph, node) = AnimationGraph::from_clip(clip);
                    commands.insert_resource(Graph(graphs.add(graph), node));
                    for i in 0..n {
                        commands.spawn((WorldAssetRoot(scene.clone()), knight(i, n).0));
                    }
                }
                Animator::Posegpu(backend) => {
                    let model = CrowdModel::load(&assets, headless::data_root(), KNIGHT).unwrap();
                    let walk = model.clip(WALK).unwrap();
                    bevy_posegpu::spawn_crowd_on(
                        &mut commands,
                        model,
                        backend,
                        (0..n).map(|i| {
                            let (at, time) = knight(i, n);
                            (at, PlayingClip::new(walk, time))
                        }),
                    );
                }
            }
        },
    );
    app.add_systems(Update, (hide_meshes, start_players));
    app.finish();
    app.cleanup();
    app
}

/// Hides every mesh once spawned.
fn hide_meshes(mut commands: Commands, meshes: Query<Entity, (With<Mesh3d>, Without<Hidden>)>) {
    for e in &meshes {
        commands.entity(e).insert((Visibility::Hidden, Hidden));
    }
}

#[derive(Component)]
struct Hidden;

/// Starts each of Bevy's players on the walk, at its knight's time.
fn start_players(
    mut commands: Commands,
    graph: Option<Res<Graph>>,
    mut players: Query<(Entity, &mut AnimationPlayer), Without<AnimationGraphHandle>>,
) {
    let Some(graph) = graph else { return };
    for (k, (entity, mut player)) in players.iter_mut().enumerate() {
        commands
            .entity(entity)
            .insert(AnimationGraphHandle(graph.0.clone()));
        player
            .play(graph.1)
            .repeat()
            .set_seek_time(k as f32 * 0.137 % 1.0);
    }
}

/// True once all `n` knights animate: Bevy's players have their graph, posegpu's instances
/// are bound.
fn ready(app: &mut App, n: usize) -> bool {
    let world = app.world_mut();
    let players = world
        .query_filtered::<(), With<AnimationGraphHandle>>()
        .iter(world)
        .count();
    let bound = world
        .query_filtered::<(), With<bevy_posegpu::Bound>>()
        .iter(world)
        .count();
    players == n || bound == n
}

/// Milliseconds per frame over [`FRAMES`] frames, the device idle at both ends.
fn frame_ms(n: usize, animator: Animator) -> f64 {
    let mut app = app(n, animator);
    let mut updates = 0;
    while !ready(&mut app, n) {
        app.update();
        updates += 1;
        assert!(updates < 20_000, "{animator:?}: the knights never spawned");
    }
    for _ in 0..10 {
        app.update();
    }
    let wait = |app: &App| {
        // Bevy keeps its device in the main world too (the render app may run on its own thread).
        let device = app.world().resource::<RenderDevice>();
        let _ = device
            .wgpu_device()
            .poll(wgpu::PollType::wait_indefinitely());
    };
    wait(&app);
    let start = Instant::now();
    for _ in 0..FRAMES {
        app.update();
    }
    wait(&app);
    start.elapsed().as_secs_f64() * 1e3 / f64::from(FRAMES)
}

/// posegpu's own GPU time for the same crowd (timestamp queries; `None` without them).
fn posegpu_gpu_ms(n: usize) -> Option<(f64, String)> {
    let asset = posegpu::import::load(headless::data_root().join(KNIGHT)).ok()?;
    let lib = posegpu::AnimLibrary::new(&asset.skeleton, &asset.clips).ok()?;
    let walk = lib.find_clip(WALK).ok()?;
    let ctx = posegpu::GpuContext::new().ok()?;
    let options = posegpu::GpuOptions {
        outputs: posegpu::Outputs::SKINNING.with_skinning(posegpu::SkinningLayout::Columns4x4),
        ..Default::default()
    };
    let mut gpu = posegpu::GpuEvaluator::new(&ctx, &lib, n, &options).ok()?;
    let mut batch = posegpu::PoseBatch::new();
    for i in 0..n {
        batch.push_clip(walk, knight(i, n).1, true);
    }
    let mut total = 0.0;
    for k in 0..6 {
        let times = gpu.evaluate_timed(&batch).ok()??;
        if k > 0 {
            total += times.total_ns();
        }
    }
    Some((total / 5.0 / 1e6, ctx.describe()))
}

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![1_000, 10_000]
    } else {
        counts
    };
    println!("| knights | Bevy AnimationPlayer | posegpu GPU path | posegpu CPU twin | posegpu's passes (GPU time) |");
    println!("|---:|---:|---:|---:|---:|");
    for n in counts {
        let bevy = frame_ms(n, Animator::Bevy);
        let gpu = frame_ms(n, Animator::Posegpu(Backend::Gpu));
        let cpu = frame_ms(n, Animator::Posegpu(Backend::Cpu));
        let passes = posegpu_gpu_ms(n);
        let passes = passes.map_or("no timestamps".to_string(), |(ms, adapter)| {
            format!("{ms:.2} ms ({adapter})")
        });
        println!(
            "| {n} | {bevy:.1} ms | {gpu:.1} ms ({:.2}×) | {cpu:.1} ms ({:.2}×) | {passes} |",
            gpu / bevy,
            cpu / bevy
        );
    }
}
