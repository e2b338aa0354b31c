//! CPU twin of `shaders/sample.wgsl`: per (instance, bone), the local transform at the
//! instance's time, retargeted when the clip comes from another skeleton.

use glam::Vec4;

use crate::library::{AnimLibrary, ChannelData, Instance, Xform, CHANNEL_STEP, CLIP_ADDITIVE};
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
#[derive(Clone, Copy, Default)]
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
/// (the identity for additive clips). `search` carries the last key search over from the
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
            Transform::IDENTITY
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

/// Samples every bone of one instance into `out` (one entry per bone).
pub fn sample_instance(lib: &AnimLibrary, inst: &Instance, out: &mut [Xform]) {
    let clip = inst.clip() as usize;
    let t = map_time(inst.time, lib.clips[clip].duration, inst.looping());
    let mut search = KeySearch::default();
    for (bone, o) in out.iter_mut().enumerate() {
        *o = sample_bone(lib, clip, bone, t, &mut search).into();
    }
}

/// The stage: local transforms of every instance, instance-major (`locals[i * bones + b]`).
/// Instances must have been validated ([`AnimLibrary::validate_instances`]).
pub fn run(lib: &AnimLibrary, instances: &[Instance], locals: &mut [Xform]) {
    let bones = lib.bone_count();
    for (inst, out) in instances.iter().zip(locals.chunks_exact_mut(bones)) {
        sample_instance(lib, inst, out);
    }
}
