//! CPU twin of `shaders/sample.wgsl`: per (instance, bone), the base pose (clips sampled,
//! retargeted when they come from another skeleton, blended) and the additive layers that
//! apply bone by bone.

use glam::Vec4;

use crate::additive::delta::{
    apply_delta, make_delta, weighted_delta, IDENTITY_DELTA, ZERO_WEIGHT,
};
use crate::additive::AdditiveSpace;
use crate::batch::{self, ClipSample, Entry, LayerKind, PoseBatch};
use crate::blend::pose::blend_with;
use crate::library::{AnimLibrary, ChannelData, Xform, CHANNEL_STEP, CLIP_ADDITIVE};
use crate::math::{lerp3, normalize_quat, Transform};
use crate::playback::RootLock;
use crate::retarget::retarget_bone;

/// Clamps `t` to `[0, duration]`, or wraps it into `[0, duration)` when looping (a Euclidean
/// remainder, negative times included). A zero-length clip maps every time to 0.
pub fn map_time(t: f32, duration: f32, looping: bool) -> f32 {
    if duration <= 0.0 {
        return 0.0;
    }
    if looping {
        let r = t - duration * (t / duration).floor();
        // Rounding can land exactly on `duration` (or a hair below 0): that is the loop's start.
        if (0.0..duration).contains(&r) {
            r
        } else {
            0.0
        }
    } else {
        t.clamp(0.0, duration)
    }
}

/// The pair of keys around `t` and the blend factor between them: `times[k0] ≤ t < times[k1]`,
/// or `k0 == k1` before the first key and after the last.
pub fn find_keys(times: &[f32], t: f32) -> (usize, usize, f32) {
    let last = times.len() - 1;
    if t <= times[0] {
        return (0, 0, 0.0);
    }
    if t >= times[last] {
        return (last, last, 0.0);
    }
    let (mut lo, mut hi) = (0, last);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if times[mid] <= t {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi, (t - times[lo]) / (times[hi] - times[lo]))
}

/// The last key search, reused by the next channel with the same key times: glTF samplers
/// often share them, and the library stores identical time arrays once.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeySearch {
    time_offset: u32,
    count: u32,
    found: (usize, usize, f32),
}

impl KeySearch {
    fn find(&mut self, lib: &AnimLibrary, ch: &ChannelData, t: f32) -> (usize, usize, f32) {
        if (self.time_offset, self.count) != (ch.time_offset, ch.count) {
            let start = ch.time_offset as usize;
            self.found = find_keys(&lib.times[start..start + ch.count as usize], t);
            (self.time_offset, self.count) = (ch.time_offset, ch.count);
        }
        self.found
    }
}

/// Samples one channel: absolute value indices and blend factor; `None` when it is absent.
fn sample_channel(
    lib: &AnimLibrary,
    ch: &ChannelData,
    t: f32,
    search: &mut KeySearch,
) -> Option<(u32, u32, f32)> {
    if ch.count == 0 {
        return None;
    }
    let (k0, k1, alpha) = search.find(lib, ch, t);
    let alpha = if ch.flags & CHANNEL_STEP != 0 {
        0.0
    } else {
        alpha
    };
    Some((
        ch.value_offset + k0 as u32,
        ch.value_offset + k1 as u32,
        alpha,
    ))
}

/// The local transform of target bone `bone` in `clip` at an already mapped time: its source
/// bone's channels sampled (channels the clip lacks take the retarget source's reference
/// value), then retargeted; a bone with no source bone or no track keeps its target reference
/// (for additive clips, the identity delta: no rotation or translation, scale delta 0). `search` carries the last key search over from the
/// previous call at the same time (a fresh `KeySearch::default()` otherwise).
pub fn sample_bone(
    lib: &AnimLibrary,
    clip: usize,
    bone: usize,
    t: f32,
    search: &mut KeySearch,
) -> Transform {
    let c = &lib.clips[clip];
    let r = &lib.retarget[c.retarget_base as usize + bone];
    let additive = c.flags & CLIP_ADDITIVE != 0;
    let reference = |x: &Xform| -> Transform {
        if additive {
            IDENTITY_DELTA
        } else {
            (*x).into()
        }
    };
    let channels = (r.source >= 0).then(|| {
        let base = c.channel_base as usize + r.source as usize * 3;
        &lib.channels[base..base + 3]
    });
    let Some(channels) = channels.filter(|ch| ch.iter().any(|c| c.count > 0)) else {
        let mut out = reference(&r.target_ref);
        out.rotation = normalize_quat(Vec4::from(out.rotation));
        return out;
    };
    let mut out = reference(&r.source_ref);
    if let Some((a, b, alpha)) = sample_channel(lib, &channels[0], t, search) {
        out.translation = lerp3(lib.value3(a), lib.value3(b), alpha);
    }
    if let Some((a, b, alpha)) = sample_channel(lib, &channels[1], t, search) {
        let (qa, qb) = (lib.value4(a), lib.value4(b));
        let sign = if qa.dot(qb) >= 0.0 { 1.0 } else { -1.0 };
        out.rotation = normalize_quat(qa * (1.0 - alpha) + qb * (alpha * sign));
    } else {
        out.rotation = normalize_quat(Vec4::from(out.rotation));
    }
    if let Some((a, b, alpha)) = sample_channel(lib, &channels[2], t, search) {
        out.scale = lerp3(lib.value3(a), lib.value3(b), alpha);
    }
    retarget_bone(out, r, additive)
}

/// The per-instance state the sampling reuses from bone to bone: each sample of the layer at
/// hand with its mapped time, and one key search per sample.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    samples: Vec<Prepared>,
    searches: Vec<KeySearch>,
}

/// A clip sample with its time mapped into the clip's range.
#[derive(Clone, Copy, Debug)]
struct Prepared {
    clip: usize,
    time: f32,
    weight: f32,
    root_lock: Option<RootLock>,
}

impl Prepared {
    /// `bone` of this sample; an in-place sample's root shows its lock instead.
    fn bone(&self, lib: &AnimLibrary, bone: usize, search: &mut KeySearch) -> Transform {
        match (bone, self.root_lock) {
            (0, Some(RootLock::RefPose)) => {
                let mut out: Transform = lib.retarget[0].target_ref.into();
                out.rotation = normalize_quat(Vec4::from(out.rotation));
                out
            }
            (0, Some(RootLock::Zero)) => Transform::IDENTITY,
            // A search of its own: `search` carries this sample's time over to the next bones.
            (0, Some(RootLock::FirstFrame)) => {
                sample_bone(lib, self.clip, 0, 0.0, &mut KeySearch::default())
            }
            _ => sample_bone(lib, self.clip, bone, self.time, search),
        }
    }
}

impl Scratch {
    /// Maps the times of `samples` once for all bones; fresh key searches.
    fn prepare(&mut self, lib: &AnimLibrary, samples: &[Entry]) {
        self.samples.clear();
        self.samples.extend(samples.iter().map(|e| {
            let s = ClipSample::from_entry(e);
            let clip = s.clip as usize;
            Prepared {
                clip,
                time: map_time(s.time, lib.clips[clip].duration, s.looping),
                weight: s.weight,
                root_lock: s.root_lock,
            }
        }));
        self.searches.clear();
        self.searches.resize(samples.len(), KeySearch::default());
    }

    /// `bone` of sample `k`.
    fn sample(&mut self, lib: &AnimLibrary, k: usize, bone: usize) -> Transform {
        self.samples[k].bone(lib, bone, &mut self.searches[k])
    }

    /// The blend of the prepared samples at `bone` (sampling only the kept ones); `empty`
    /// where no weight is kept.
    fn blend(&mut self, lib: &AnimLibrary, bone: usize, empty: Transform) -> Transform {
        let (samples, searches) = (&self.samples, &mut self.searches);
        blend_with(samples.iter().map(|s| s.weight), empty, |k| {
            samples[k].bone(lib, bone, &mut searches[k])
        })
    }
}

/// One instance: the base, then the layers that apply bone by bone (every layer before its
/// first mesh-space layer) into `out`, one entry per bone. From that layer on, each layer's
/// weighted delta (or a dynamic mesh-space layer's two sampled poses) goes to its slots in
/// `deltas` (the instance's slots, `slot * bones + bone`) for the layer stage.
///
/// Layer by layer over all bones: each bone sees the same operations in the same order as in
/// the shader's bone-by-bone loop, and the key searches carry over from bone to bone.
pub fn sample_instance(
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
        if layer.kind != LayerKind::Base && layer.weight <= ZERO_WEIGHT {
            continue;
        }
        scratch.prepare(lib, layer.samples);
        if layer.kind == LayerKind::Base {
            for (bone, o) in out.iter_mut().enumerate() {
                let reference = lib.retarget[bone].target_ref.into();
                *o = scratch.blend(lib, bone, reference).into();
            }
            continue;
        }
        let slot = layer.slot as usize * bones;
        for (bone, o) in out.iter_mut().enumerate() {
            let delta = match layer.kind {
                LayerKind::Dynamic(space) => {
                    let (p, b) = (scratch.sample(lib, 0, bone), scratch.sample(lib, 1, bone));
                    if space == AdditiveSpace::Mesh {
                        deltas[slot + bone] = p.into();
                        deltas[slot + bones + bone] = b.into();
                        continue;
                    }
                    make_delta(&p, &b)
                }
                _ => scratch.blend(lib, bone, IDENTITY_DELTA),
            };
            let Some(d) = weighted_delta(&delta, layer.weight) else {
                continue;
            };
            if layer.deferred {
                deltas[slot + bone] = d.into();
            } else {
                *o = apply_delta(&(*o).into(), &d).into();
            }
        }
    }
}

/// The stage: local transforms of every instance, instance-major (`locals[i * bones + b]`),
/// and the deferred layers' deltas (`deltas[(head.slot + slot) * bones + b]`). The batch must
/// have been validated ([`AnimLibrary::validate_batch`]).
pub fn run(lib: &AnimLibrary, batch: &PoseBatch, locals: &mut [Xform], deltas: &mut [Xform]) {
    let bones = lib.bone_count();
    let mut scratch = Scratch::default();
    for (i, out) in locals.chunks_exact_mut(bones).enumerate() {
        let h = &batch.heads[i];
        let d = &mut deltas[h.slot as usize * bones..(h.slot + h.slots) as usize * bones];
        sample_instance(lib, batch, i, out, d, &mut scratch);
    }
}
