//! posegpu inside Bevy: crowds of glTF characters whose poses posegpu's compute passes evaluate
//! on Bevy's own device, drawn by Bevy's own skinned-mesh pipeline (lighting, shadows, prepass
//! and motion vectors unchanged).
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_posegpu::{CrowdModel, PlayingClip, PoseGpuPlugin};
//!
//! fn setup(mut commands: Commands, assets: Res<AssetServer>) {
//!     let model = CrowdModel::load(&assets, "assets", "Knight.glb").unwrap();
//!     let crowd = bevy_posegpu::spawn_crowd(
//!         &mut commands,
//!         model,
//!         (0..100).map(|i| {
//!             let at = Transform::from_xyz((i % 10) as f32, 0.0, (i / 10) as f32);
//!             (at, PlayingClip::new(0, i as f32 * 0.1))
//!         }),
//!     );
//! }
//!
//! App::new()
//!     .add_plugins((DefaultPlugins, PoseGpuPlugin))
//!     .add_systems(Startup, setup)
//!     .run();
//! ```
//!
//! How it works (each frame):
//! - Main world: each instance's [`Animation`] advances with Bevy's `Time` (root motion moves
//!   its `Transform`); instances whose scene has spawned are bound once (their skinned meshes,
//!   and the node above the skeleton's top joint).
//! - Extract: per instance, its animation, its world placement and its meshes.
//! - Render world, after Bevy uploads its joint matrices (`prepare_skins`): posegpu evaluates
//!   every instance on Bevy's `RenderDevice` (skinning matrices only, column-major 4x4), and the
//!   scatter stage (`shaders/scatter.wgsl`) writes them, placed in the world, into Bevy's joint
//!   buffer at each mesh's skin index. Bevy's draw then reads them; last frame's stay in
//!   Bevy's previous-joints buffer for motion vectors. No CPU round trip.
//!
//! Gameplay that needs bones (a hand socket, the head) puts a [`BoneReadback`] on chosen
//! instances: those bones' matrices are copied out on the GPU and come back a frame later.
//!
//! Bevy still extracts the (unmoving) joint entities' matrices and uploads them before the
//! scatter overwrites them: that upload is the part of Bevy's skin path a compute pass cannot
//! replace without changing Bevy.

mod animation;
mod crowd;
pub mod headless;
mod readback;
mod render;
pub mod scatter;

pub use animation::{Animation, Layer, PlayingClip};
pub use crowd::{
    hide_rigid_meshes, spawn_crowd, spawn_crowd_on, Backend, Bound, CrowdInstance, CrowdModel,
    CrowdModelBuilder, PoseGpuCrowd, RigidHidden,
};
pub use posegpu::{AdditiveSpace, IkWeights, MaskBranch, RootMotionAxes};
pub use readback::BoneReadback;

use bevy::app::{App, Plugin, Update};
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::render::{ExtractSchedule, Render, RenderApp, RenderSystems};

/// Animates every [`PoseGpuCrowd`] on the GPU with posegpu, each frame.
pub struct PoseGpuPlugin;

impl Plugin for PoseGpuPlugin {
    fn build(&self, app: &mut App) {
        let slot = readback::Slot::default();
        app.insert_resource(slot.clone()).add_systems(
            Update,
            (
                readback::publish,
                crowd::advance,
                crowd::bind_instances,
                crowd::evaluate_on_cpu,
            )
                .chain(),
        );
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .insert_resource(slot)
            .init_resource::<render::Extracted>()
            .init_resource::<render::RenderCrowds>()
            .add_systems(ExtractSchedule, render::extract)
            .add_systems(
                Render,
                render::animate
                    .in_set(RenderSystems::PrepareResources)
                    .after(bevy::pbr::prepare_skins),
            );
    }
}

/// The README's code blocks, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
