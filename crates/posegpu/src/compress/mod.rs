//! Compressed keys (ACL-like), authoring side: a clip's keys packed at per-track bit rates that
//! an error-driven optimizer chooses, and a CPU decoder. Phase 1 of issue 31; the GPU does not
//! read this form yet.
//!
//! The format, per clip (spec: `docs/pose-math.md`, "Compressed keys"):
//!
//! - **Keys** are the clip's distinct key times (every frame of a BVH). Uniform times are stored
//!   as a start and a step; others as one f32 each.
//! - **Tracks**: each bone has three (rotation, translation, scale), each with a rate byte:
//!   [`Rate::Reference`] (no data: the skeleton's reference pose), [`Rate::Constant`] (one
//!   value), [`Rate::Bits`] 1 to 16 bits per component, or [`Rate::Raw`] (full f32, the
//!   fallback of a track that cannot meet the threshold). The top bit of the byte marks STEP.
//! - **Range reduction**: a quantized track stores its per-component minimum and extent
//!   (six f32); a constant one its value (three f32). Where it makes the clip smaller (dense
//!   keys, as in motion capture), each segment also stores, per quantized track and component,
//!   its keys' range within the clip's in 1/255ths (two bytes), and the bits span that
//!   (ACL's segment range reduction); a header flag says which.
//! - **Rotations** are made `w >= 0` and stored as x, y, z; `w` is rebuilt from the unit length
//!   (a raw rotation keeps all four).
//! - **Segments** of [`SEGMENT_KEYS`] keys, each starting on a 32-bit word and listed in a table
//!   of u32 word offsets (with the segment's ranges, padded to 4 bytes, when segmented): within a segment, key after key, each quantized or raw track's
//!   components in track order, least significant bit first.
//!
//! [`CompressedClip::packed_bytes`] counts all of it: a 16-byte header (key count, first time,
//! step, track count), the times when not uniform, the rate bytes (padded to 4), the ranges,
//! the segment table and the bit stream. The reference pose is the skeleton's, which a library
//! holds anyway.
//!
//! The error is ACL's: virtual vertices at a distance from each bone (default: the skeleton's
//! height / 60), compared in component space at every key; the worst over keys and bones stays
//! within the threshold (default 3e-4 of the height). An additive clip's deltas are measured
//! applied (in local space) onto the skeleton's reference pose; its reference track is the
//! identity delta.

mod optimize;
mod pack;
#[cfg(test)]
mod tests;

use std::time::Instant;

use crate::error::{Error, Result};
use crate::math::{lerp3, nlerp};
use crate::{find_keys, Asset, Clip, Skeleton, Transform};
use optimize::Problem;
use pack::{
    dequantize_in, quantize_in, set_field, BitWriter, SegmentRange, ROTATION, SCALE, TRANSLATION,
};
pub use pack::{Rate, SEGMENT_KEYS};

/// The default threshold: the worst error as a fraction of the skeleton's height.
pub const DEFAULT_TOLERANCE: f32 = 3e-4;

/// Bytes ACL counts per bone and sample of an uncompressed clip: rotation 16, translation 12,
/// scale 12.
pub const RAW_BYTES_PER_KEY: usize = 40;

/// A clip's keys compressed for one skeleton; [`CompressedClip::sample`] decodes them.
#[derive(Clone, Debug)]
pub struct CompressedClip {
    name: String,
    times: Vec<f32>,
    uniform: bool,
    /// Whether quantized tracks are range-reduced per segment too (a header flag).
    segmented: bool,
    reference: Vec<Transform>,
    tracks: Vec<Track>,
    key_bits: usize,
    segments: Vec<u32>,
    segment_ranges: Vec<SegmentRange>,
    words: Vec<u32>,
    worst_error: f32,
    height: f32,
}

/// One track's header: its rate, STEP flag, range, and bit offset within a key.
#[derive(Clone, Copy, Debug)]
struct Track {
    rate: Rate,
    step: bool,
    min: [f32; 4],
    extent: [f32; 4],
    offset: usize,
}

/// The height of `skeleton`: the largest side of the box around its reference pose's bone
/// positions (component space), or [`Skeleton::extent`] for a flat or single-point skeleton.
pub fn skeleton_height(skeleton: &Skeleton) -> f32 {
    let cs = skeleton.rest_component();
    let (lo, hi) = cs.iter().fold(
        (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
        |(lo, hi), t| (lo.min(t.translation), hi.max(t.translation)),
    );
    let side = (hi - lo).max_element();
    if side.is_finite() && side > 1e-6 {
        side
    } else {
        skeleton.extent()
    }
}

impl CompressedClip {
    /// Compresses `clip` (made for `skeleton`) so that its worst error stays within
    /// `tolerance` × the skeleton's height. A tolerance that is not finite, not positive or
    /// above 1 is an [`Error::CompressTolerance`]; a clip of another skeleton's bone count an
    /// [`Error::BadRequest`].
    pub fn new(skeleton: &Skeleton, clip: &Clip, tolerance: f32) -> Result<Self> {
        if !(tolerance.is_finite() && tolerance > 0.0 && tolerance <= 1.0) {
            return Err(Error::CompressTolerance {
                clip: clip.name().to_string(),
                value: tolerance,
            });
        }
        if clip.tracks().len() != skeleton.len() {
            return Err(Error::BadRequest {
                what: format!(
                    "compressing clip '{}': {} tracks for a skeleton of {} bones",
                    clip.name(),
                    clip.tracks().len(),
                    skeleton.len()
                ),
            });
        }
        // Segment ranges pay on dense keys (motion capture) and cost on short, sparse clips:
        // the smaller of the two forms is kept.
        let whole = Self::build(skeleton, clip, tolerance, false);
        let segmented = Self::build(skeleton, clip, tolerance, true);
        Ok(if segmented.packed_bytes() < whole.packed_bytes() {
            segmented
        } else {
            whole
        })
    }

    fn build(skeleton: &Skeleton, clip: &Clip, tolerance: f32, segmented: bool) -> Self {
        let height = skeleton_height(skeleton);
        let reference: Vec<Transform> = if clip.is_additive() {
            vec![crate::additive::IDENTITY_DELTA; skeleton.len()]
        } else {
            skeleton.rest().to_vec()
        };
        let mut times = clip.key_times();
        if times.is_empty() {
            times.push(0.0);
        }
        let raw: Vec<Vec<Transform>> = times.iter().map(|&t| clip.pose_at(&reference, t)).collect();
        let ranges = (0..skeleton.len() * 3)
            .map(|track| {
                let (mut lo, mut hi) = ([f32::MAX; 4], [f32::MIN; 4]);
                for pose in &raw {
                    let v = pack::key_value(&pose[track / 3], track % 3);
                    for c in 0..4 {
                        lo[c] = lo[c].min(v[c]);
                        hi[c] = hi[c].max(v[c]);
                    }
                }
                (lo, std::array::from_fn(|c| hi[c] - lo[c]))
            })
            .collect::<Vec<([f32; 4], [f32; 4])>>();
        let tracks_len = skeleton.len() * 3;
        let segments: Vec<SegmentRange> = raw
            .chunks(SEGMENT_KEYS)
            .flat_map(|keys| {
                let ranges = &ranges;
                (0..tracks_len).map(move |track| {
                    let (min, extent) = ranges[track];
                    std::array::from_fn(|c| {
                        let v = keys
                            .iter()
                            .map(|p| pack::key_value(&p[track / 3], track % 3)[c]);
                        if segmented {
                            pack::segment_range(v, min[c], extent[c])
                        } else {
                            [0, 255]
                        }
                    })
                })
            })
            .collect();
        let problem = Problem {
            parents: skeleton.parents(),
            raw,
            reference: &reference,
            base: clip.is_additive().then(|| skeleton.rest()),
            ranges,
            segments,
            distance: height / 60.0,
        };
        let (rates, worst_error) = problem.solve(tolerance * height);
        let mut tracks = Vec::with_capacity(rates.len());
        let mut key_bits = 0;
        for (i, &rate) in rates.iter().enumerate() {
            let bone = &clip.tracks()[i / 3];
            let step = match i % 3 {
                ROTATION => bone.rotation.as_ref().map(|c| c.interpolation),
                TRANSLATION => bone.translation.as_ref().map(|c| c.interpolation),
                _ => bone.scale.as_ref().map(|c| c.interpolation),
            } == Some(crate::Interpolation::Step);
            let (min, extent) = problem.ranges[i];
            tracks.push(Track {
                rate,
                step,
                min,
                extent,
                offset: key_bits,
            });
            key_bits += rate.key_bits(i % 3) as usize;
        }
        let mut stream = BitWriter::default();
        let mut segments = Vec::new();
        for (k, pose) in problem.raw.iter().enumerate() {
            if k % SEGMENT_KEYS == 0 {
                stream.align();
                segments.push(stream.words.len() as u32);
            }
            for (i, t) in tracks.iter().enumerate() {
                let v = pack::key_value(&pose[i / 3], i % 3);
                let seg = problem.segments[k / SEGMENT_KEYS * tracks.len() + i];
                match t.rate {
                    Rate::Bits(n) => (0..3).for_each(|c| {
                        let q = quantize_in(v[c], t.min[c], t.extent[c], seg[c], n);
                        stream.push(q, u32::from(n))
                    }),
                    Rate::Raw => {
                        let comps = if i % 3 == ROTATION { 4 } else { 3 };
                        (0..comps).for_each(|c| stream.push(v[c].to_bits(), 32));
                    }
                    Rate::Reference | Rate::Constant => {}
                }
            }
        }
        stream.align();
        let step = times.get(1).map_or(0.0, |t| t - times[0]);
        let uniform = times.iter().enumerate().all(|(k, &t)| {
            (times[0] + k as f32 * step - t).abs() <= 1e-5 * times[times.len() - 1].max(1.0)
        });
        if uniform {
            times = (0..times.len())
                .map(|k| times[0] + k as f32 * step)
                .collect();
        }
        Self {
            name: clip.name().to_string(),
            times,
            uniform,
            segmented,
            reference: reference.clone(),
            tracks,
            key_bits,
            segments,
            segment_ranges: problem.segments,
            words: stream.words,
            worst_error,
            height,
        }
    }

    /// The clip's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key times the clip keeps (its distinct key times; rebuilt from start and step when
    /// uniform).
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Each track's rate, three per bone (rotation, translation, scale).
    pub fn rates(&self) -> impl Iterator<Item = Rate> + '_ {
        self.tracks.iter().map(|t| t.rate)
    }

    /// ACL's uncompressed size: bones × key times × [`RAW_BYTES_PER_KEY`].
    pub fn raw_bytes(&self) -> usize {
        self.reference.len() * self.times.len() * RAW_BYTES_PER_KEY
    }

    /// Every byte of the packed form (see the module's documentation).
    pub fn packed_bytes(&self) -> usize {
        let times = if self.uniform {
            0
        } else {
            4 * self.times.len()
        };
        let rates = self.tracks.len().div_ceil(4) * 4;
        let ranges: usize = self
            .tracks
            .iter()
            .map(|t| match t.rate {
                Rate::Reference | Rate::Raw => 0,
                Rate::Constant => 12,
                Rate::Bits(_) => 24,
            })
            .sum();
        let quantized = self.rates().filter(|r| matches!(r, Rate::Bits(_))).count();
        // Each segment: its word offset and six bytes of range per quantized track, padded to 4.
        let segment = match self.segmented {
            true => 4 + (6 * quantized).div_ceil(4) * 4,
            false => 4,
        };
        16 + times + rates + ranges + segment * self.segments.len() + 4 * self.words.len()
    }

    /// The worst error the optimizer measured, as a fraction of the skeleton's height.
    pub fn worst_error(&self) -> f32 {
        self.worst_error / self.height
    }

    /// Bone `bone`'s local transform at `t` (clamped to the clip's keys), decoded from the
    /// packed form: keys interpolated as the sampling stage does (nlerp, lerp, or STEP).
    /// Panics when `bone` is not a bone of the skeleton the clip was compressed for.
    pub fn sample(&self, bone: usize, t: f32) -> Transform {
        let (a, b, alpha) = find_keys(&self.times, t);
        let mut out = self.reference[bone];
        for kind in [ROTATION, TRANSLATION, SCALE] {
            let i = bone * 3 + kind;
            let alpha = if self.tracks[i].step { 0.0 } else { alpha };
            let (mut ta, mut tb) = (out, out);
            self.decode_into(&mut ta, i, a);
            self.decode_into(&mut tb, i, b);
            match kind {
                ROTATION => out.rotation = nlerp(ta.rotation, tb.rotation, alpha),
                TRANSLATION => out.translation = lerp3(ta.translation, tb.translation, alpha),
                _ => out.scale = lerp3(ta.scale, tb.scale, alpha),
            }
        }
        out
    }

    /// Every bone's local transform at `t`.
    pub fn pose_at(&self, t: f32) -> Vec<Transform> {
        (0..self.reference.len())
            .map(|b| self.sample(b, t))
            .collect()
    }

    /// Track `i`'s value at key `key`, read from the bit stream.
    fn decode_into(&self, out: &mut Transform, i: usize, key: usize) {
        let t = &self.tracks[i];
        let (kind, bone) = (i % 3, i / 3);
        let at = self.segments[key / SEGMENT_KEYS] as usize * 32
            + (key % SEGMENT_KEYS) * self.key_bits
            + t.offset;
        let mut v = [0.0; 4];
        match t.rate {
            Rate::Reference => {
                let r = pack::key_value(&self.reference[bone], kind);
                return set_field(out, kind, r, false);
            }
            Rate::Constant => (0..3).for_each(|c| v[c] = t.min[c] + t.extent[c] * 0.5),
            Rate::Bits(n) => {
                let seg = self.segment_ranges[key / SEGMENT_KEYS * self.tracks.len() + i];
                (0..3).for_each(|c| {
                    let q = pack::read_bits(&self.words, at + c * n as usize, u32::from(n));
                    v[c] = dequantize_in(q, t.min[c], t.extent[c], seg[c], n);
                })
            }
            Rate::Raw => {
                let comps = if kind == ROTATION { 4 } else { 3 };
                (0..comps).for_each(|c| {
                    v[c] = f32::from_bits(pack::read_bits(&self.words, at + c * 32, 32))
                });
                return set_field(out, kind, v, false);
            }
        }
        set_field(out, kind, v, true);
    }
}

/// One clip's line of [`compression_report`].
#[derive(Clone, Debug, PartialEq)]
pub struct ClipReport {
    /// The clip's name.
    pub name: String,
    /// ACL's uncompressed size ([`CompressedClip::raw_bytes`]).
    pub raw_bytes: usize,
    /// Every byte of the packed form ([`CompressedClip::packed_bytes`]).
    pub packed_bytes: usize,
    /// The worst error, as a fraction of the skeleton's height.
    pub worst_error: f32,
    /// Seconds the compression took.
    pub seconds: f64,
}

impl ClipReport {
    /// `raw_bytes / packed_bytes`.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.packed_bytes.max(1) as f64
    }
}

/// Compresses every clip of `asset` at `tolerance` (a fraction of the skeleton's height) and
/// reports sizes, errors and times.
pub fn compression_report(asset: &Asset, tolerance: f32) -> Result<Vec<ClipReport>> {
    asset
        .clips
        .iter()
        .map(|clip| {
            let start = Instant::now();
            let c = CompressedClip::new(&asset.skeleton, clip, tolerance)?;
            Ok(ClipReport {
                name: c.name.clone(),
                raw_bytes: c.raw_bytes(),
                packed_bytes: c.packed_bytes(),
                worst_error: c.worst_error(),
                seconds: start.elapsed().as_secs_f64(),
            })
        })
        .collect()
}
