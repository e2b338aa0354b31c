//! CPU twin of `shaders/local_pose.wgsl`: an instance's local pose at each bone, shared by the
//! sampling stage ([`super::sample`]) and the fused pass ([`super::fused`]): its clips sampled
//! (retargeted when they come from another skeleton) and blended, then the layers that apply
//! bone by bone; from its first mesh-space layer on, each layer's delta goes to its slot for
//! the layer stage.

use super::clip::{sample_mode_run, KeySearch, Prepared, Records};
use super::packed::DecodedKeys;
use crate::batch::{self, LayerKind, PoseBatch};
use crate::layout::{Entry, Xform, CLIP_COMPRESSED, ZERO_WEIGHT};
use crate::library::AnimLibrary;
use crate::math::blend::{blend_two, blend_with};
use crate::math::delta::{apply_delta, make_delta, weighted_delta, IDENTITY_DELTA};
use crate::model::AdditiveSpace;
use crate::Transform;

/// The per-instance state the sampling reuses from bone to bone: each sample of the layer at
/// hand with its mapped time, and one key search per sample.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    samples: Vec<Prepared>,
    searches: Vec<KeySearch>,
    /// The records of the sections sampled so far (kept over the instances a scratch serves).
    records: Records,
    /// Compressed clips' keys decoded so far, shared by the samples that play them.
    keys: DecodedKeys,
    /// A lane group's poses as the hierarchy composes them.
    pub(super) poses: Vec<super::hierarchy::Pose>,
}

impl Scratch {
    /// Maps the times of `samples` once for all bones; fresh key searches.
    fn prepare(&mut self, lib: &AnimLibrary, samples: &[Entry]) {
        self.samples.clear();
        self.samples
            .extend(samples.iter().map(|e| Prepared::from_entry(lib, e)));
        self.searches.clear();
        for s in &self.samples {
            self.records.gather(lib, s.clip);
            self.searches
                .push(KeySearch::share_keys(lib, s, &mut self.keys));
        }
    }

    /// `bone` of sample `k`.
    fn sample(&mut self, lib: &AnimLibrary, k: usize, bone: usize) -> Transform {
        self.samples[k].bone(lib, bone, &mut self.searches[k], &self.records)
    }

    /// Every bone of a layer that keeps one sample, of a clip of UE's translation modes with
    /// keys not compressed and no root lock, into `out` as one run ([`sample_mode_run`]): what
    /// [`Self::blend`] gives bone by bone (one kept sample is returned as it is), bit for bit.
    /// False, and nothing written, for any other layer.
    fn sample_run(&mut self, lib: &AnimLibrary, out: &mut [Xform]) -> bool {
        let mut kept = (self.samples.iter().enumerate()).filter(|(_, s)| s.weight > ZERO_WEIGHT);
        let (Some((k, s)), None) = (kept.next(), kept.next()) else {
            return false;
        };
        let c = lib.data().clip_data(s.clip as u32);
        if s.root_lock.is_some() || c.flags & CLIP_COMPRESSED != 0 {
            return false;
        }
        let Some(records) = self.records.modes_of(&c) else {
            return false;
        };
        sample_mode_run(lib, &c, records, s.time, &mut self.searches[k], out);
        true
    }

    /// The blend of the prepared samples at `bone` (sampling only the kept ones); `empty`
    /// where no weight is kept.
    fn blend(&mut self, lib: &AnimLibrary, bone: usize, empty: Transform) -> Transform {
        let (samples, searches, records) = (&self.samples, &mut self.searches, &self.records);
        blend_with(samples.iter().map(|s| s.weight), empty, |k| {
            samples[k].bone(lib, bone, &mut searches[k], records)
        })
    }
}

/// `bone_pose` (`local_pose.wgsl`) at every bone of one instance: the base, then the layers
/// that apply bone by bone (every layer before its first mesh-space layer) into `out`, one
/// entry per bone. From that layer on, each layer's
/// weighted delta (or a dynamic mesh-space layer's two sampled poses) goes to its slots in
/// `deltas` (the instance's slots, `slot * bones + bone`) for the layer stage.
///
/// Layer by layer over all bones: each bone sees the same operations in the same order as in
/// the shader's bone-by-bone loop, and the key searches carry over from bone to bone.
pub(crate) fn sample_instance(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    instance: usize,
    out: &mut [Xform],
    deltas: &mut [Xform],
    scratch: &mut Scratch,
) {
    let bones = lib.bone_count();
    let head = &batch.heads[instance];
    for layer in batch::layers(&batch.entries, head).map_while(|l| l) {
        if matches!(layer.kind, LayerKind::Ik | LayerKind::Inertialize)
            || layer.kind != LayerKind::Base && layer.weight <= ZERO_WEIGHT
        {
            continue;
        }
        scratch.prepare(lib, layer.samples);
        if layer.kind == LayerKind::Base {
            if scratch.sample_run(lib, out) {
                continue;
            }
            for (bone, o) in out.iter_mut().enumerate() {
                let reference = lib.data().target_reference(bone);
                *o = scratch.blend(lib, bone, reference).into();
            }
            continue;
        }
        let slot = layer.slot as usize * bones;
        let mask = layer.mask_word();
        for (bone, o) in out.iter_mut().enumerate() {
            // The layer's weight at this bone; deferred layers that apply it in the layer stage
            // find it in their slot's translation w.
            let w = layer.weight * lib.data().mask_weight(mask, bone);
            let delta = match layer.kind {
                LayerKind::Blend(_) => {
                    let x = scratch.blend(lib, bone, lib.data().target_reference(bone));
                    if layer.deferred {
                        deltas[slot + bone] = with_weight(x, w);
                    } else {
                        *o = blend_two(&(*o).into(), &x, w).into();
                    }
                    continue;
                }
                LayerKind::Dynamic(space) => {
                    let (p, b) = (scratch.sample(lib, 0, bone), scratch.sample(lib, 1, bone));
                    if space == AdditiveSpace::Mesh {
                        deltas[slot + bone] = with_weight(p, w);
                        deltas[slot + bones + bone] = b.into();
                        continue;
                    }
                    make_delta(&p, &b)
                }
                _ => scratch.blend(lib, bone, IDENTITY_DELTA),
            };
            // A bone the mask leaves out gets the identity (the slot must not keep old data).
            let d = weighted_delta(&delta, w);
            if layer.deferred {
                deltas[slot + bone] = d.unwrap_or(IDENTITY_DELTA).into();
            } else if let Some(d) = d {
                *o = apply_delta(&(*o).into(), &d).into();
            }
        }
    }
}

/// `x` as a slot holds it for the layer stage, with the layer's weight at its bone in the
/// translation's w.
fn with_weight(x: Transform, w: f32) -> Xform {
    let mut x: Xform = x.into();
    x.translation[3] = w;
    x
}
