//! The render world's side: each frame, posegpu evaluates every crowd on Bevy's device and the
//! scatter stage writes the matrices into Bevy's joint buffer.

use std::collections::HashMap;

use bevy::math::Mat4;
use bevy::pbr::SkinUniforms;
use bevy::prelude::*;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::Extract;
use log::error;
use posegpu::{GpuEvaluator, GpuOptions, Outputs, PoseBatch, SkinningLayout};

use crate::crowd::{Backend, Bound, CrowdInstance, CrowdModel, Playback, PoseGpuCrowd};
use crate::scatter::{ScatterBuffers, ScatterPipeline, SkinJob};

/// One frame's crowds, as extracted from the main world.
#[derive(Resource, Default)]
pub(crate) struct Extracted {
    crowds: Vec<ExtractedCrowd>,
}

struct ExtractedCrowd {
    id: Entity,
    model: CrowdModel,
    instances: Vec<ExtractedInstance>,
}

struct ExtractedInstance {
    playback: Playback,
    /// The world transform of the node above the skeleton's top joint.
    world: Mat4,
    meshes: Vec<MainEntity>,
}

pub(crate) fn extract(
    mut out: ResMut<Extracted>,
    crowds: Extract<Query<(Entity, &PoseGpuCrowd)>>,
    instances: Extract<Query<(&CrowdInstance, &Bound)>>,
    globals: Extract<Query<&GlobalTransform>>,
) {
    out.crowds.clear();
    for (id, crowd) in &crowds {
        if crowd.backend != Backend::Gpu {
            continue;
        }
        out.crowds.push(ExtractedCrowd {
            id,
            model: crowd.model.clone(),
            instances: Vec::new(),
        });
    }
    for (instance, bound) in &instances {
        let Some(crowd) = out.crowds.iter_mut().find(|c| c.id == instance.crowd) else {
            continue;
        };
        let Ok(world) = globals.get(bound.above) else {
            continue;
        };
        crowd.instances.push(ExtractedInstance {
            playback: instance.playback,
            world: world.to_matrix(),
            meshes: bound.meshes.iter().map(|&e| MainEntity::from(e)).collect(),
        });
    }
}

/// posegpu's evaluators (one per crowd) and the scatter stage, on Bevy's device.
#[derive(Resource, Default)]
pub(crate) struct RenderCrowds {
    evaluators: HashMap<Entity, GpuEvaluator>,
    scatter: Option<ScatterPipeline>,
    /// Crowds whose evaluation failed, reported once.
    failed: Vec<Entity>,
}

/// Evaluates every crowd and scatters its matrices into Bevy's joint buffer; runs after Bevy
/// has uploaded its own joint matrices for the frame (`prepare_skins`).
pub(crate) fn animate(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    skins: Res<SkinUniforms>,
    extracted: Res<Extracted>,
    mut state: ResMut<RenderCrowds>,
) {
    let device = device.wgpu_device();
    let state = &mut *state;
    let scatter = state
        .scatter
        .get_or_insert_with(|| ScatterPipeline::new(device));
    for crowd in &extracted.crowds {
        if crowd.instances.is_empty() || state.failed.contains(&crowd.id) {
            continue;
        }
        let result = evaluate(device, &queue, &mut state.evaluators, crowd)
            .map(|ev| scatter_crowd(device, &queue, scatter, &skins, ev, crowd));
        if let Err(e) = result {
            error!("bevy_posegpu: crowd {:?}: {e}", crowd.id);
            state.failed.push(crowd.id);
        }
    }
}

fn evaluate<'a>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    evaluators: &'a mut HashMap<Entity, GpuEvaluator>,
    crowd: &ExtractedCrowd,
) -> posegpu::Result<&'a GpuEvaluator> {
    let library = &crowd.model.library;
    let evaluator = match evaluators.entry(crowd.id) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => {
            let options = GpuOptions {
                outputs: Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4),
                ..GpuOptions::default()
            };
            v.insert(GpuEvaluator::with_device(
                device,
                queue,
                library,
                crowd.instances.len(),
                &options,
            )?)
        }
    };
    let mut batch = PoseBatch::new();
    for i in &crowd.instances {
        batch.push_clip(i.playback.clip, i.playback.time, i.playback.looping);
    }
    evaluator.evaluate_batch(&batch)?;
    Ok(evaluator)
}

/// One scatter dispatch per output chunk of `evaluator`.
fn scatter_crowd(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    scatter: &ScatterPipeline,
    skins: &SkinUniforms,
    evaluator: &GpuEvaluator,
    crowd: &ExtractedCrowd,
) {
    let joint_bones = &crowd.model.joint_bones;
    let bones = crowd.model.library.bone_count() as u32;
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("bevy_posegpu scatter"),
    });
    for chunk in evaluator.chunks() {
        let jobs: Vec<SkinJob> = (chunk.first..chunk.first + chunk.count)
            .flat_map(|i| {
                let instance = &crowd.instances[i];
                instance.meshes.iter().filter_map(move |&mesh| {
                    Some(SkinJob {
                        world: instance.world.to_cols_array_2d(),
                        skin_index: skins.skin_index(mesh)?,
                        instance: (i - chunk.first) as u32,
                        joint_base: 0,
                        joint_count: joint_bones.len() as u32,
                    })
                })
            })
            .collect();
        scatter.encode(
            device,
            &mut encoder,
            &jobs,
            joint_bones,
            bones,
            ScatterBuffers {
                skin: &chunk.skinning,
                joints: &skins.current_buffer,
            },
        );
    }
    queue.submit([encoder.finish()]);
}
