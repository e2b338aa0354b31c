//! The rate optimizer: the lowest rate per track whose error at the virtual vertices stays
//! within the threshold, in component space, so that a parent's error counts at its children.

use glam::Vec3;

use super::pack::{
    dequantize_in, key_value, quantize_in, set_field, Rate, SegmentRange, LEVELS, SEGMENT_KEYS,
};
use crate::{component_space, Transform};

/// One clip resampled at its key times, with each track's range.
pub(super) struct Problem<'a> {
    pub(super) parents: &'a [i32],
    /// `[key][bone]` local transforms of the clip.
    pub(super) raw: Vec<Vec<Transform>>,
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
            .map_or(l, |b| crate::additive::apply_delta(&b[bone], &l))
    }

    /// Component-space transforms of `locals` as [`Problem::posed`] shows them.
    fn component(&self, locals: &[Transform]) -> Vec<Transform> {
        let posed: Vec<Transform> = (0..locals.len())
            .map(|b| self.posed(b, locals[b]))
            .collect();
        component_space(self.parents, &posed)
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
        let raw_cs: Vec<Vec<Transform>> = self.raw.iter().map(|l| self.component(l)).collect();
        let mut levels = vec![LEVELS - 1; bones * 3];
        let mut scratch = vec![Transform::IDENTITY; bones];
        let mut subtree = Vec::new();
        for (track, level) in levels.iter_mut().enumerate() {
            let bone = track / 3;
            if track % 3 == 0 {
                subtree = self.subtree(bone);
            }
            *level = (0..LEVELS - 1)
                .find(|&l| {
                    (0..keys).all(|k| {
                        let mut local = self.raw[k][bone];
                        self.decode_into(&mut local, track, Rate::from_level(l), k);
                        self.subtree_error(&subtree, &raw_cs[k], k, local, &mut scratch)
                            <= threshold
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
            let (worst, key, bone) = self.worst(&locals, &raw_cs);
            if worst <= threshold {
                return (levels.into_iter().map(Rate::from_level).collect(), worst);
            }
            let mut chain = vec![bone];
            while let Ok(p) = usize::try_from(self.parents[*chain.last().unwrap_or(&0)]) {
                chain.push(p);
            }
            let mut best: Option<(f32, usize)> = None;
            for track in chain.iter().flat_map(|&b| b * 3..b * 3 + 3) {
                if levels[track] == LEVELS - 1 {
                    continue;
                }
                let mut trial = locals[key].clone();
                let rate = Rate::from_level(levels[track] + 1);
                self.decode_into(&mut trial[track / 3], track, rate, key);
                let e = vertex_error(
                    &self.component(&trial)[bone],
                    &raw_cs[key][bone],
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

    /// The worst error over `subtree` at key `k` when its root bone's local is `local`.
    fn subtree_error(
        &self,
        subtree: &[usize],
        raw_cs: &[Transform],
        k: usize,
        local: Transform,
        scratch: &mut [Transform],
    ) -> f32 {
        let mut worst = 0.0f32;
        for (i, &c) in subtree.iter().enumerate() {
            let l = self.posed(c, if i == 0 { local } else { self.raw[k][c] });
            let parent = usize::try_from(self.parents[c]).ok();
            scratch[c] = match parent {
                Some(p) if i > 0 => Transform::compose(&l, &scratch[p]),
                Some(p) => Transform::compose(&l, &raw_cs[p]),
                None => l,
            };
            worst = worst.max(vertex_error(&scratch[c], &raw_cs[c], self.distance));
        }
        worst
    }

    /// The worst error of `locals` against the clip: (error, key, bone).
    pub(super) fn worst(
        &self,
        locals: &[Vec<Transform>],
        raw_cs: &[Vec<Transform>],
    ) -> (f32, usize, usize) {
        let mut worst = (0.0, 0, 0);
        for (k, l) in locals.iter().enumerate() {
            let cs = self.component(l);
            for (b, t) in cs.iter().enumerate() {
                let e = vertex_error(t, &raw_cs[k][b], self.distance);
                if e > worst.0 {
                    worst = (e, k, b);
                }
            }
        }
        worst
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
