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

use crate::crowd::{Backend, Bound, CrowdInstance, CrowdModel, PoseGpuCrowd};
use crate::readback::{Arrived, BoneReadback, Slot};
use crate::scatter::{ScatterBuffers, ScatterPipeline, SkinJob};

/// One frame's crowds, as extracted from the main world.
#[derive(Resource, Default)]
pub(crate) struct Extracted {
    crowds: Vec<ExtractedCrowd>,
}

struct ExtractedCrowd {
    id: Entity,
    model: CrowdModel,
    /// What every instance plays, in `instances`' order.
    batch: PoseBatch,
    instances: Vec<ExtractedInstance>,
}

struct ExtractedInstance {
    /// The world transform of the node above the skeleton's top joint.
    world: Mat4,
    meshes: Vec<MainEntity>,
    /// The instance's entity and the bones it reads back.
    readback: Option<(Entity, Vec<u32>)>,
}

/// What extraction reads of an instance.
type InstanceData = (
    Entity,
    &'static CrowdInstance,
    &'static Bound,
    Option<&'static BoneReadback>,
);

pub(crate) fn extract(
    mut out: ResMut<Extracted>,
    crowds: Extract<Query<(Entity, &PoseGpuCrowd)>>,
    instances: Extract<Query<InstanceData>>,
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
            batch: PoseBatch::new(),
            instances: Vec::new(),
        });
    }
    for (entity, instance, bound, readback) in &instances {
        let Some(crowd) = out.crowds.iter_mut().find(|c| c.id == instance.crowd) else {
            continue;
        };
        let Ok(world) = globals.get(bound.above) else {
            continue;
        };
        instance.animation.push(&mut crowd.batch);
        crowd.instances.push(ExtractedInstance {
            world: world.to_matrix(),
            meshes: bound.meshes.iter().map(|&e| MainEntity::from(e)).collect(),
            readback: readback
                .filter(|r| !r.bones.is_empty())
                .map(|r| (entity, r.bones.clone())),
        });
    }
}

/// posegpu's evaluators (one per crowd, with its model's joint map) and the scatter stage, on
/// Bevy's device.
#[derive(Resource, Default)]
pub(crate) struct RenderCrowds {
    evaluators: HashMap<Entity, CrowdGpu>,
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
    slot: Res<Slot>,
    mut state: ResMut<RenderCrowds>,
) {
    let device = device.wgpu_device();
    // Runs the map callbacks of last frame's read-backs.
    let _ = device.poll(wgpu::PollType::Poll);
    let state = &mut *state;
    let scatter = state
        .scatter
        .get_or_insert_with(|| ScatterPipeline::new(device));
    for crowd in &extracted.crowds {
        if crowd.instances.is_empty() || state.failed.contains(&crowd.id) {
            continue;
        }
        let result = evaluate(device, &queue, &mut state.evaluators, crowd)
            .map(|gpu| scatter_crowd(device, &queue, scatter, &skins, gpu, crowd, &slot));
        if let Err(e) = result {
            error!("bevy_posegpu: crowd {:?}: {e}", crowd.id);
            state.failed.push(crowd.id);
        }
    }
}

/// One crowd's evaluator and its model's joint → bone map, on Bevy's device.
struct CrowdGpu {
    evaluator: GpuEvaluator,
    joint_map: wgpu::Buffer,
}

fn evaluate<'a>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    evaluators: &'a mut HashMap<Entity, CrowdGpu>,
    crowd: &ExtractedCrowd,
) -> posegpu::Result<&'a CrowdGpu> {
    let gpu = match evaluators.entry(crowd.id) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => {
            let options = GpuOptions {
                outputs: Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4),
                ..GpuOptions::default()
            };
            v.insert(CrowdGpu {
                evaluator: GpuEvaluator::with_device(
                    device,
                    queue,
                    &crowd.model.library,
                    crowd.instances.len(),
                    &options,
                )?,
                joint_map: ScatterPipeline::joint_map(device, &crowd.model.joint_bones),
            })
        }
    };
    gpu.evaluator.evaluate(&crowd.batch)?;
    Ok(gpu)
}

/// One scatter dispatch per output chunk of `evaluator`.
fn scatter_crowd(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    scatter: &ScatterPipeline,
    skins: &SkinUniforms,
    gpu: &CrowdGpu,
    crowd: &ExtractedCrowd,
    slot: &Slot,
) {
    let (evaluator, joint_count) = (&gpu.evaluator, crowd.model.joint_bones.len() as u32);
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
                        joint_count,
                    })
                })
            })
            .collect();
        scatter.encode(
            device,
            &mut encoder,
            &jobs,
            bones,
            ScatterBuffers {
                joint_map: &gpu.joint_map,
                skin: &chunk.skinning,
                joints: &skins.current_buffer,
            },
        );
    }
    let readback = encode_readback(device, &mut encoder, evaluator, crowd);
    queue.submit([encoder.finish()]);
    if let Some((buffer, arrived)) = readback {
        let (sink, mapped) = (slot.0.clone(), buffer.clone());
        buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| {
                if result.is_err() {
                    return;
                }
                let Ok(view) = mapped.slice(..).get_mapped_range() else {
                    return;
                };
                let matrices: &[[f32; 16]] = bytemuck::cast_slice(&view[..]);
                let mut at = 0;
                let mut out = sink.lock().unwrap();
                for mut a in arrived {
                    a.skinning = matrices[at..at + a.bones.len()].to_vec();
                    at += a.bones.len();
                    out.push(a);
                }
            });
    }
}

/// Copies the skinning matrices of the bones instances read back into a mappable buffer, in
/// instance order; `None` when no instance reads any.
fn encode_readback(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    evaluator: &GpuEvaluator,
    crowd: &ExtractedCrowd,
) -> Option<(wgpu::Buffer, Vec<Arrived>)> {
    const MATRIX: u64 = 64;
    let bones = crowd.model.library.bone_count() as u64;
    let mut arrived = Vec::new();
    let mut copies = Vec::new();
    for chunk in evaluator.chunks() {
        for i in chunk.first..chunk.first + chunk.count {
            let instance = &crowd.instances[i];
            let Some((entity, wanted)) = &instance.readback else {
                continue;
            };
            let wanted: Vec<u32> = wanted
                .iter()
                .copied()
                .filter(|&b| u64::from(b) < bones)
                .collect();
            for &b in &wanted {
                let src = ((i - chunk.first) as u64 * bones + u64::from(b)) * MATRIX;
                copies.push((&chunk.skinning, src));
            }
            arrived.push(Arrived {
                entity: *entity,
                bones: wanted,
                above: instance.world,
                skinning: Vec::new(),
            });
        }
    }
    if copies.is_empty() {
        return None;
    }
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bevy_posegpu bone read-back"),
        size: copies.len() as u64 * MATRIX,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    for (k, (skinning, src)) in copies.into_iter().enumerate() {
        encoder.copy_buffer_to_buffer(skinning, src, &buffer, k as u64 * MATRIX, MATRIX);
    }
    Some((buffer, arrived))
}
