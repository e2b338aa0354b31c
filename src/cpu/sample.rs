//! CPU twin of `shaders/sample.wgsl`: per (instance, bone), the base pose (clips sampled,
//! retargeted when they come from another skeleton, blended) and the additive layers that
//! apply bone by bone.

use glam::Vec4;

use crate::additive::delta::{
    apply_delta, make_delta, weighted_delta, IDENTITY_DELTA, ZERO_WEIGHT,
};
use crate::additive::AdditiveSpace;
use crate::batch::{self, ClipSample, Entry, Head, LayerKind, PoseBatch};
use crate::blend::pose::{kept_weights, BlendAccumulator};
use crate::library::{AnimLibrary, ChannelData, Xform, CHANNEL_STEP, CLIP_ADDITIVE};
use crate::math::{lerp3, normalize_quat, Transform};
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

/// The per-instance state the sampling reuses from bone to bone: one key search per entry (the
/// entries that are clip samples use theirs).
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    searches: Vec<KeySearch>,
}

/// `bone` of one clip sample at its mapped time, and the sample's weight.
fn sample_entry(lib: &AnimLibrary, e: &Entry, bone: usize, search: &mut KeySearch) -> Transform {
    let s = ClipSample::from_entry(e);
    let clip = s.clip as usize;
    let t = map_time(s.time, lib.clips[clip].duration, s.looping);
    sample_bone(lib, clip, bone, t, search)
}

/// The blend of a layer's samples at `bone` by the spec's rule (weights at or below
/// ZERO_WEIGHT dropped, the rest renormalized); one surviving sample is taken as it is, none
/// gives `empty`. `searches` holds one key search per sample.
fn blend_samples(
    lib: &AnimLibrary,
    samples: &[Entry],
    bone: usize,
    searches: &mut [KeySearch],
    empty: Transform,
) -> Transform {
    let weight = |e: &Entry| f32::from_bits(e[2]);
    let (sum, kept) = kept_weights(samples.iter().map(weight));
    if kept <= 1 {
        return match samples.iter().position(|e| weight(e) > ZERO_WEIGHT) {
            Some(k) => sample_entry(lib, &samples[k], bone, &mut searches[k]),
            None => empty,
        };
    }
    let mut acc = BlendAccumulator::default();
    for (k, e) in samples.iter().enumerate() {
        if weight(e) > ZERO_WEIGHT {
            let x = sample_entry(lib, e, bone, &mut searches[k]);
            acc.add(&x, weight(e) / sum);
        }
    }
    acc.finish()
}

/// The local transform of `bone` after the base and the layers applied bone by bone: every
/// layer before the instance's first mesh-space layer. From that layer on, each layer's
/// weighted delta (or a dynamic mesh-space layer's two sampled poses) goes to its slots in
/// `deltas` (the instance's slots, `slot * bones + bone`) for the layer stage.
pub fn sample_layers(
    lib: &AnimLibrary,
    entries: &[Entry],
    head: &Head,
    bone: usize,
    scratch: &mut Scratch,
    deltas: &mut [Xform],
) -> Transform {
    let bones = lib.bone_count();
    let mut pose = Transform::IDENTITY;
    for layer in batch::layers(entries, head).map_while(|l| l) {
        let first = layer.entry + 1;
        let searches = &mut scratch.searches[first..first + layer.samples.len()];
        let slot = |k: u32| (layer.slot + k) as usize * bones + bone;
        if layer.kind == LayerKind::Base {
            pose = blend_samples(
                lib,
                layer.samples,
                bone,
                searches,
                lib.retarget[bone].target_ref.into(),
            );
            continue;
        }
        if layer.weight <= ZERO_WEIGHT {
            continue;
        }
        let delta = match layer.kind {
            LayerKind::Dynamic(space) => {
                let p = sample_entry(lib, &layer.samples[0], bone, &mut searches[0]);
                let b = sample_entry(lib, &layer.samples[1], bone, &mut searches[1]);
                if space == AdditiveSpace::Mesh {
                    deltas[slot(0)] = p.into();
                    deltas[slot(1)] = b.into();
                    continue;
                }
                make_delta(&p, &b)
            }
            _ => blend_samples(lib, layer.samples, bone, searches, IDENTITY_DELTA),
        };
        let Some(d) = weighted_delta(&delta, layer.weight) else {
            continue;
        };
        if layer.deferred {
            deltas[slot(0)] = d.into();
        } else {
            pose = apply_delta(&pose, &d);
        }
    }
    pose
}

/// Samples every bone of one instance of `batch` into `out` (one entry per bone), writing its
/// deferred layers' deltas into `deltas` (`head.slots * bones` entries).
pub fn sample_instance(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    instance: usize,
    out: &mut [Xform],
    deltas: &mut [Xform],
    scratch: &mut Scratch,
) {
    let head = &batch.heads[instance];
    let entries = batch
        .layers(instance)
        .flatten()
        .map(|l| l.entry + 1 + l.samples.len());
    let count = entries.max().unwrap_or(0);
    scratch.searches.clear();
    scratch.searches.resize(count, KeySearch::default());
    for (bone, o) in out.iter_mut().enumerate() {
        *o = sample_layers(lib, &batch.entries, head, bone, scratch, deltas).into();
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
