//! Opt-in read-back for gameplay: the world transforms of chosen bones of chosen instances (a
//! hand socket, the head), copied out of posegpu's skinning buffer on the GPU, mapped, and
//! available to ECS systems a frame later, without reading back whole crowds.

use std::sync::{Arc, Mutex};

use bevy::math::Mat4;
use bevy::prelude::*;

use crate::crowd::{CrowdInstance, PoseGpuCrowd};

/// Put on a crowd instance: `bones` (posegpu bone indices, [`crate::CrowdModel::bone`]) are
/// read back each frame; `world` holds their world transforms (`GlobalTransform` as Bevy
/// would give the joint entities), one frame late, once the first read-back has arrived
/// (empty before).
#[derive(Component, Clone, Debug, Default)]
pub struct BoneReadback {
    pub bones: Vec<u32>,
    pub world: Vec<Mat4>,
}

impl BoneReadback {
    /// Reads back `bones`.
    pub fn new(bones: impl IntoIterator<Item = u32>) -> Self {
        Self {
            bones: bones.into_iter().collect(),
            world: Vec::new(),
        }
    }
}

/// One instance's read-back: its entity, its bones, the world matrix of the node above its
/// skeleton when it was evaluated, and the skinning matrices that came back.
pub(crate) struct Arrived {
    pub entity: Entity,
    pub bones: Vec<u32>,
    pub above: Mat4,
    pub skinning: Vec<[f32; 16]>,
}

/// The slot the render world's map callback fills and the main world empties; shared by both
/// worlds.
#[derive(Resource, Clone, Default)]
pub(crate) struct Slot(pub Arc<Mutex<Vec<Arrived>>>);

/// Main world: the bones that came back, made world transforms
/// (`above × skinning × inverse(inverse bind)`), into each instance's [`BoneReadback`].
pub(crate) fn publish(
    slot: Res<Slot>,
    crowds: Query<&PoseGpuCrowd>,
    mut instances: Query<(&CrowdInstance, &mut BoneReadback)>,
) {
    let arrived = std::mem::take(&mut *slot.0.lock().unwrap());
    for a in arrived {
        let Ok((instance, mut readback)) = instances.get_mut(a.entity) else {
            continue;
        };
        let Ok(crowd) = crowds.get(instance.crowd) else {
            continue;
        };
        readback.world = a
            .bones
            .iter()
            .zip(&a.skinning)
            .map(|(&b, m)| a.above * Mat4::from_cols_array(m) * crowd.model.bind(b as usize))
            .collect();
    }
}
