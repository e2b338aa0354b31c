//! CPU twin of `shaders/layers.wgsl`: per instance, the layers from its first mesh-space layer
//! on, in order. Mesh-space layers walk the bones parents first: rotations to mesh space, the
//! delta applied, back to local, in one forward loop. Each bone's mesh-space rotations before
//! and after the delta replace its used delta slot, where its children read them. A layer whose
//! weight differs per bone (a mask, a layered blend) finds it in its slot's translation w,
//! written by the sampling stage.

use glam::Quat;

use crate::batch::{self, LayerKind, PoseBatch};
use crate::layout::{Entry, Head, Xform, ZERO_WEIGHT};
use crate::library::AnimLibrary;
use crate::math::blend::{blend_two, blend_two_mesh};
use crate::math::delta::{
    apply_delta, apply_mesh_delta, make_delta, weighted_delta, IDENTITY_DELTA,
};
use crate::model::AdditiveSpace;
use crate::Transform;

fn quat(v: [f32; 4]) -> Quat {
    Quat::from_array(v)
}

/// The deferred layers of one instance applied to its `locals`; `deltas` holds its slots
/// (`slot * bones + bone`), written by the sampling stage, used here as scratch too.
pub(super) fn run_instance(
    lib: &AnimLibrary,
    entries: &[Entry],
    head: &Head,
    locals: &mut [Xform],
    deltas: &mut [Xform],
) {
    let bones = lib.bone_count();
    let parents = &lib.data().parents;
    let layers = batch::layers(entries, head).map_while(|l| l);
    for layer in layers.filter(|l| l.deferred && l.weight > ZERO_WEIGHT) {
        let base = layer.slot as usize * bones;
        match layer.kind {
            LayerKind::Additive(AdditiveSpace::Local)
            | LayerKind::Dynamic(AdditiveSpace::Local) => {
                for (x, d) in locals.iter_mut().zip(&deltas[base..base + bones]) {
                    *x = apply_delta(&(*x).into(), &(*d).into()).into();
                }
            }
            LayerKind::Additive(AdditiveSpace::Mesh) => {
                for i in 0..bones {
                    let parent = usize::try_from(parents[i]).ok().map(|p| {
                        let s = &deltas[base + p];
                        (quat(s.rotation), quat(s.translation))
                    });
                    let d = deltas[base + i].into();
                    let (out, before, after) = apply_mesh_delta(&locals[i].into(), &d, parent);
                    locals[i] = out.into();
                    deltas[base + i].rotation = before.to_array();
                    deltas[base + i].translation = after.to_array();
                }
            }
            LayerKind::Dynamic(AdditiveSpace::Mesh) => {
                // Slot 0 holds the pose, slot 1 the base; after bone i they hold its mesh-space
                // pose and base rotations, and (in slot 0) the instance's before and after.
                let (pose_slot, base_slot) = (base, base + bones);
                for i in 0..bones {
                    let p = usize::try_from(parents[i]).ok();
                    let mut pose: Transform = deltas[pose_slot + i].into();
                    let mut base_pose: Transform = deltas[base_slot + i].into();
                    if let Some(p) = p {
                        pose.rotation = quat(deltas[pose_slot + p].rotation) * pose.rotation;
                        base_pose.rotation =
                            quat(deltas[base_slot + p].rotation) * base_pose.rotation;
                    }
                    let w = deltas[pose_slot + i].translation[3];
                    let delta = make_delta(&pose, &base_pose);
                    let d = weighted_delta(&delta, w).unwrap_or(IDENTITY_DELTA);
                    let parent = p.map(|p| {
                        let s = &deltas[pose_slot + p];
                        (quat(s.translation), quat(s.scale))
                    });
                    let (out, before, after) = apply_mesh_delta(&locals[i].into(), &d, parent);
                    locals[i] = out.into();
                    deltas[pose_slot + i] = Xform {
                        rotation: pose.rotation.to_array(),
                        translation: before.to_array(),
                        scale: after.to_array(),
                    };
                    deltas[base_slot + i].rotation = base_pose.rotation.to_array();
                }
            }
            LayerKind::Blend(AdditiveSpace::Local) => {
                for (x, s) in locals.iter_mut().zip(&deltas[base..base + bones]) {
                    *x = blend_two(&(*x).into(), &(*s).into(), s.translation[3]).into();
                }
            }
            LayerKind::Blend(AdditiveSpace::Mesh) => {
                // Slot i holds the layer's pose at bone i and its weight; after bone i it holds
                // the layer's mesh-space rotation, the pose's, and the blend's.
                for i in 0..bones {
                    let s = deltas[base + i];
                    let (local, layer_pose): (Transform, Transform) = (locals[i].into(), s.into());
                    let p = usize::try_from(parents[i]).ok().map(|p| &deltas[base + p]);
                    let (pose_mesh, layer_mesh) = match p {
                        Some(p) => (
                            quat(p.translation) * local.rotation,
                            quat(p.rotation) * layer_pose.rotation,
                        ),
                        None => (local.rotation, layer_pose.rotation),
                    };
                    let parent = p.map(|p| quat(p.scale));
                    let (out, mesh) = blend_two_mesh(
                        &local,
                        &layer_pose,
                        s.translation[3],
                        pose_mesh,
                        layer_mesh,
                        parent,
                    );
                    locals[i] = out.into();
                    deltas[base + i] = Xform {
                        rotation: layer_mesh.to_array(),
                        translation: pose_mesh.to_array(),
                        scale: mesh.to_array(),
                    };
                }
            }
            LayerKind::Base | LayerKind::Ik | LayerKind::Inertialize => {}
        }
    }
}

/// The stage for every instance of `batch` (instance-major `locals`, batch-wide `deltas`).
pub(super) fn run(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    locals: &mut [Xform],
    deltas: &mut [Xform],
) {
    let bones = lib.bone_count();
    for (h, l) in batch.heads.iter().zip(locals.chunks_exact_mut(bones)) {
        let d = &mut deltas[h.slot as usize * bones..(h.slot + h.slots) as usize * bones];
        run_instance(lib, &batch.entries, h, l, d);
    }
}
