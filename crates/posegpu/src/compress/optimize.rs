//! The rate optimizer: the lowest rate per track whose error at the virtual vertices stays
//! within the threshold, in component space, so that a parent's error counts at its children.
//! The error is measured where the clip is played: at its keys, halfway between each two, and
//! at the clip's own key times where its keys went onto a grid ([`Check`]).

use glam::Vec3;

use super::pack::{
    dequantize_in, key_value, quantize_in, set_field, Rate, SegmentRange, LEVELS, SEGMENT_KEYS,
};
use crate::math::{lerp3, nlerp};
use crate::{component_space, Transform};

/// A time the optimizer measures the error at: `alpha` of the way from key `key` to the next
/// (0 at a key), where the clip itself plays `locals`, which put its bones at `cs`.
pub(super) struct Check {
    pub(super) key: usize,
    pub(super) alpha: f32,
    pub(super) locals: Vec<Transform>,
    pub(super) cs: Vec<Transform>,
}

impl Check {
    /// The two keys it lies between (the same one twice at the last key).
    fn keys(&self, count: usize) -> [usize; 2] {
        [self.key, (self.key + 1).min(count - 1)]
    }
}

/// One clip resampled at its key times, with each track's range.
pub(super) struct Problem<'a> {
    pub(super) parents: &'a [i32],
    /// `[key][bone]` local transforms of the clip.
    pub(super) raw: Vec<Vec<Transform>>,
    /// Where the error is measured, with the clip's exact pose there (`check_times` in
    /// `compress/mod.rs`).
    pub(super) checks: Vec<Check>,
    /// `[track]` whether the track holds its keys (STEP) instead of interpolating them.
    pub(super) steps: Vec<bool>,
    /// The value a [`Rate::Reference`] track plays, per bone.
    pub(super) reference: &'a [Transform],
    /// For an additive clip, the pose its deltas are measured on (applied in local space).
    pub(super) base: Option<&'a [Transform]>,
    /// `[track]` per-component minimum and extent (track = bone * 3 + kind).
    pub(super) ranges: Vec<([f32; 4], [f32; 4])>,
    /// `[segment * tracks + track]` each track's range within each segment.
    pub(super) segments: Vec<SegmentRange>,
    /// Distance of the virtual vertices from each bone.
    pub(super) distance: f32,
}

impl Problem<'_> {
    fn bones(&self) -> usize {
        self.parents.len()
    }

    /// What bone `bone`'s local `l` puts on screen: itself, or an additive delta applied onto
    /// the base pose (a delta's own hierarchy has no lever arms to measure at).
    fn posed(&self, bone: usize, l: Transform) -> Transform {
        self.base
            .map_or(l, |b| crate::math::delta::apply_delta(&b[bone], &l))
    }

    /// Component-space transforms of `locals` as [`Problem::posed`] shows them.
    pub(super) fn component(&self, locals: &[Transform]) -> Vec<Transform> {
        shown(self.parents, self.base, locals)
    }

    /// Bone `bone` as the sampler plays it `alpha` of the way from its key value `x` to the next,
    /// `y`: each track interpolated as the sampling stage interpolates it (nlerp, lerp), or
    /// held where it steps.
    fn played(&self, bone: usize, x: &Transform, y: &Transform, alpha: f32) -> Transform {
        if alpha == 0.0 {
            return *x;
        }
        let step = |kind: usize| self.steps[bone * 3 + kind];
        let mut out = *x;
        if !step(super::pack::ROTATION) {
            out.rotation = nlerp(x.rotation, y.rotation, alpha);
        }
        if !step(super::pack::TRANSLATION) {
            out.translation = lerp3(x.translation, y.translation, alpha);
        }
        if !step(super::pack::SCALE) {
            out.scale = lerp3(x.scale, y.scale, alpha);
        }
        out
    }

    /// The pose played `alpha` of the way from key pose `a` to the next, `b`.
    fn played_pose(&self, a: &[Transform], b: &[Transform], alpha: f32) -> Vec<Transform> {
        (0..self.bones())
            .map(|bone| self.played(bone, &a[bone], &b[bone], alpha))
            .collect()
    }

    /// Track `track`'s value at `key` as stored at `rate`, written into `out`.
    pub(super) fn decode_into(&self, out: &mut Transform, track: usize, rate: Rate, key: usize) {
        let (bone, kind) = (track / 3, track % 3);
        let (min, extent) = self.ranges[track];
        let v = key_value(&self.raw[key][bone], kind);
        let mut d = [0.0; 4];
        match rate {
            Rate::Reference => {
                let r = key_value(&self.reference[bone], kind);
                return set_field(out, kind, r, false);
            }
            Rate::Raw => return set_field(out, kind, v, false),
            Rate::Constant => {
                for c in 0..3 {
                    d[c] = min[c] + extent[c] * 0.5;
                }
            }
            Rate::Bits(n) => {
                let seg = self.segments[key / SEGMENT_KEYS * self.bones() * 3 + track];
                for c in 0..3 {
                    let q = quantize_in(v[c], min[c], extent[c], seg[c], n);
                    d[c] = dequantize_in(q, min[c], extent[c], seg[c], n);
                }
            }
        }
        set_field(out, kind, d, true);
    }

    /// The rates: each track alone first (the others exact), then, while the worst error of
    /// the whole pose exceeds `threshold`, one level more for the track on the worst bone's
    /// chain whose raise lowers that error most. Raw is exact, so this ends within threshold.
    /// Returns the rates and the worst error (skeleton units).
    pub(super) fn solve(&self, threshold: f32) -> (Vec<Rate>, f32) {
        let bones = self.bones();
        let keys = self.raw.len();
        let mut levels = vec![LEVELS - 1; bones * 3];
        let mut scratch = vec![Transform::IDENTITY; bones];
        let mut subtree = Vec::new();
        let mut decoded = vec![Transform::IDENTITY; keys];
        for (track, level) in levels.iter_mut().enumerate() {
            let (bone, kind) = (track / 3, track % 3);
            if kind == 0 {
                subtree = self.subtree(bone);
            }
            *level = (0..LEVELS - 1)
                .find(|&l| {
                    for (k, d) in decoded.iter_mut().enumerate() {
                        *d = self.raw[k][bone];
                        self.decode_into(d, track, Rate::from_level(l), k);
                    }
                    self.checks.iter().all(|c| {
                        // The track as played there, the bone's other tracks exact.
                        let [a, b] = c.keys(keys);
                        let played = self.played(bone, &decoded[a], &decoded[b], c.alpha);
                        let mut local = c.locals[bone];
                        set_field(&mut local, kind, key_value(&played, kind), false);
                        self.subtree_error(&subtree, c, local, &mut scratch) <= threshold
                    })
                })
                .unwrap_or(LEVELS - 1);
        }
        let mut locals = self.raw.clone();
        for (track, &level) in levels.iter().enumerate() {
            for (k, l) in locals.iter_mut().enumerate() {
                self.decode_into(&mut l[track / 3], track, Rate::from_level(level), k);
            }
        }
        loop {
            let (worst, at, bone) = self.worst(&locals);
            if worst <= threshold {
                return (levels.into_iter().map(Rate::from_level).collect(), worst);
            }
            let check = &self.checks[at];
            let mut chain = vec![bone];
            while let Ok(p) = usize::try_from(self.parents[*chain.last().unwrap_or(&0)]) {
                chain.push(p);
            }
            let mut best: Option<(f32, usize)> = None;
            for track in chain.iter().flat_map(|&b| b * 3..b * 3 + 3) {
                if levels[track] == LEVELS - 1 {
                    continue;
                }
                let rate = Rate::from_level(levels[track] + 1);
                let trial = check.keys(keys).map(|k| {
                    let mut pose = locals[k].clone();
                    self.decode_into(&mut pose[track / 3], track, rate, k);
                    pose
                });
                let played = self.played_pose(&trial[0], &trial[1], check.alpha);
                let e = vertex_error(
                    &self.component(&played)[bone],
                    &check.cs[bone],
                    self.distance,
                );
                if best.is_none_or(|(b, _)| e < b) {
                    best = Some((e, track));
                }
            }
            // The worst bone's chain holds an inexact track, or its error would be zero.
            let Some((_, track)) = best else {
                return (levels.into_iter().map(Rate::from_level).collect(), worst);
            };
            levels[track] += 1;
            for (k, l) in locals.iter_mut().enumerate() {
                self.decode_into(&mut l[track / 3], track, Rate::from_level(levels[track]), k);
            }
        }
    }

    /// `bone` and its descendants, ascending (so parents first); O(bones) memory, so that a
    /// deep chain does not hold every bone's subtree at once.
    fn subtree(&self, bone: usize) -> Vec<usize> {
        let mut inside = vec![false; self.bones()];
        inside[bone] = true;
        let mut out = vec![bone];
        for c in bone + 1..self.bones() {
            if usize::try_from(self.parents[c]).is_ok_and(|p| inside[p]) {
                inside[c] = true;
                out.push(c);
            }
        }
        out
    }

    /// The worst error over `subtree` at `check` when its root bone's local is `local`, the
    /// other bones playing the clip's own.
    fn subtree_error(
        &self,
        subtree: &[usize],
        check: &Check,
        local: Transform,
        scratch: &mut [Transform],
    ) -> f32 {
        let mut worst = 0.0f32;
        for (i, &c) in subtree.iter().enumerate() {
            let l = self.posed(c, if i == 0 { local } else { check.locals[c] });
            let parent = usize::try_from(self.parents[c]).ok();
            scratch[c] = match parent {
                Some(p) if i > 0 => Transform::compose(&l, &scratch[p]),
                Some(p) => Transform::compose(&l, &check.cs[p]),
                None => l,
            };
            worst = worst.max(vertex_error(&scratch[c], &check.cs[c], self.distance));
        }
        worst
    }

    /// The worst error of the key poses `locals` as played at every check: (error, check,
    /// bone).
    pub(super) fn worst(&self, locals: &[Vec<Transform>]) -> (f32, usize, usize) {
        let mut worst = (0.0, 0, 0);
        for (i, check) in self.checks.iter().enumerate() {
            let [a, b] = check.keys(locals.len());
            let cs = self.component(&self.played_pose(&locals[a], &locals[b], check.alpha));
            for (b, t) in cs.iter().enumerate() {
                let e = vertex_error(t, &check.cs[b], self.distance);
                if e > worst.0 {
                    worst = (e, i, b);
                }
            }
        }
        worst
    }
}

/// Component-space transforms of `locals` on a skeleton of `parents` as they show: for an
/// additive clip (`base`: the pose its deltas are measured on) each delta applied onto its
/// bone's base local first.
pub(super) fn shown(
    parents: &[i32],
    base: Option<&[Transform]>,
    locals: &[Transform],
) -> Vec<Transform> {
    match base {
        Some(base) => {
            let posed: Vec<Transform> = (base.iter().zip(locals))
                .map(|(b, l)| crate::math::delta::apply_delta(b, l))
                .collect();
            component_space(parents, &posed)
        }
        None => component_space(parents, locals),
    }
}

/// The largest distance between where `a` and `b` put the bone's origin and its three virtual
/// vertices at `d` along its axes.
pub(super) fn vertex_error(a: &Transform, b: &Transform, d: f32) -> f32 {
    [Vec3::ZERO, Vec3::X * d, Vec3::Y * d, Vec3::Z * d]
        .iter()
        .map(|p| {
            let pa = a.rotation * (a.scale * *p) + a.translation;
            let pb = b.rotation * (b.scale * *p) + b.translation;
            pa.distance(pb)
        })
        .fold(0.0, f32::max)
}
