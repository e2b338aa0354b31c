//! Compressed keys (ACL-like), authoring side: a clip's keys packed at per-track bit rates that
//! an error-driven optimizer chooses ([`CompressedClip`]), and the builder option that puts
//! packed clips in a library ([`Compression`], [`crate::LibraryBuilder::compress`]). The
//! sampling and fused passes decode them (`shaders/packed.wgsl`), the CPU twin from the same
//! words (`src/cpu/packed.rs`, which [`CompressedClip::sample`] uses too).
//!
//! The format, per clip (spec: `docs/pose-math.md`, "Compressed keys"):
//!
//! - **Keys** are the clip's distinct key times (every frame of a BVH). Uniform times are stored
//!   as a first time and 1 / step; others as one f32 each, in the library's key times.
//! - **Tracks**: each bone has three (rotation, translation, scale), each at a rate:
//!   [`Rate::Reference`] (no data: what the sampler plays for an absent channel),
//!   [`Rate::Constant`] (one value), [`Rate::Bits`] 1 to 16 bits per component, or
//!   [`Rate::Raw`] (full f32, the fallback of a track that cannot meet the threshold).
//! - **Range reduction**: a quantized track stores its per-component minimum and unit (six
//!   f32); a constant one its value (three f32). Where it makes the clip smaller (dense keys,
//!   as in motion capture), each segment also stores, per quantized track and component, its
//!   keys' range within the clip's in 1/255ths (two bytes), and the bits span that (ACL's
//!   segment range reduction); a header flag says which.
//! - **Rotations** are made `w >= 0` and stored as x, y, z; `w` is rebuilt from the unit length
//!   (a raw rotation keeps all four).
//! - **Segments** of [`SEGMENT_KEYS`] keys, each starting on a 32-bit word and listed in a table
//!   of word offsets (each starting with its ranges, padded to 4 bytes, when segmented):
//!   within a segment, key after key, each quantized or raw track's components in track order,
//!   least significant bit first.
//!
//! [`CompressedClip::packed_bytes`] counts every word of the block the GPU reads (an 8-word
//! header, an 8-byte descriptor per bone, the ranges, the segment table and the segments) and
//! the times where they are not uniform. The reference pose is the skeleton's, which a library
//! holds anyway.
//!
//! The error is ACL's: virtual vertices at a distance from each bone (default: the skeleton's
//! height / 60), compared in component space where the clip is played: at every key, halfway
//! between each two, and at the clip's own key times where its keys went onto a grid. The
//! worst over those times and bones stays within the threshold (default 3e-4 of the height).
//! An additive clip's deltas are measured applied (in local space) onto the skeleton's
//! reference pose; its reference track is the identity delta.

mod block;
mod library;
mod optimize;
mod pack;
mod resample;
#[cfg(test)]
mod tests;

#[cfg(not(target_arch = "wasm32"))]
use std::time::Instant;
// std's clock panics in a browser; web-time reads `performance.now()` there.
#[cfg(target_arch = "wasm32")]
use web_time::Instant;

use crate::error::{Error, Result};
use crate::layout::PackedHeader;
use crate::layout::PACKED_MAX_BONES;
use crate::{Asset, BoneTrack, Clip, Skeleton, Transform};
pub use library::Compression;
use optimize::{Check, Problem};
use pack::SegmentRange;
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
    /// The clip's own distinct key times (what ACL's raw size counts), before any grid.
    raw_keys: usize,
    uniform: bool,
    /// The value a reference track plays, per bone (what a library fills absent channels with).
    reference: Vec<Transform>,
    rates: Vec<Rate>,
    /// The packed block, word for word as the GPU reads it (`src/cpu/packed.rs`).
    block: Vec<u32>,
    worst_error: f32,
    height: f32,
}

/// What one clip is compressed from: its tracks on a hierarchy, the values its absent and
/// reference tracks play, and the measure of its error.
pub(crate) struct Input<'a> {
    pub name: &'a str,
    pub parents: &'a [i32],
    pub tracks: Vec<&'a BoneTrack>,
    /// Per track bone, what the sampler plays where the clip has no key: the source's
    /// reference local, or the identity delta of an additive clip.
    pub reference: Vec<Transform>,
    /// For an additive clip, the pose its deltas are measured on.
    pub base: Option<&'a [Transform]>,
    pub height: f32,
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

/// A tolerance that is finite, positive and at most 1, or [`Error::CompressTolerance`].
pub(crate) fn check_tolerance(clip: &str, tolerance: f32) -> Result<()> {
    if tolerance.is_finite() && tolerance > 0.0 && tolerance <= 1.0 {
        Ok(())
    } else {
        Err(Error::CompressTolerance {
            clip: clip.to_string(),
            value: tolerance,
        })
    }
}

impl CompressedClip {
    /// Compresses `clip` (made for `skeleton`) so that its worst error stays within
    /// `tolerance` × the skeleton's height. A tolerance that is not finite, not positive or
    /// above 1 is an [`Error::CompressTolerance`]; a clip of another skeleton's bone count an
    /// [`Error::BadRequest`].
    pub fn new(skeleton: &Skeleton, clip: &Clip, tolerance: f32) -> Result<Self> {
        check_tolerance(clip.name(), tolerance)?;
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
        let reference = if clip.is_additive() {
            vec![crate::math::delta::IDENTITY_DELTA; skeleton.len()]
        } else {
            skeleton.rest().to_vec()
        };
        Self::compress(
            &Input {
                name: clip.name(),
                parents: skeleton.parents(),
                tracks: clip.tracks().iter().collect(),
                reference,
                base: clip.is_additive().then(|| skeleton.rest()),
                height: skeleton_height(skeleton),
            },
            tolerance,
        )
    }

    /// Compresses `input` within `tolerance` × its height (checked by the caller); a clip of
    /// more bones and goals than a packed block holds ([`PACKED_MAX_BONES`]) is an
    /// [`Error::BadRequest`].
    pub(crate) fn compress(input: &Input, tolerance: f32) -> Result<Self> {
        if input.tracks.len() > PACKED_MAX_BONES {
            return Err(Error::BadRequest {
                what: format!(
                    "compressing clip '{}': {} bones and goals, more than a packed block's {}",
                    input.name,
                    input.tracks.len(),
                    PACKED_MAX_BONES
                ),
            });
        }
        let mut times: Vec<f32> = input
            .tracks
            .iter()
            .flat_map(|t| t.times())
            .copied()
            .collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        if times.is_empty() {
            times.push(0.0);
        }
        let threshold = tolerance * input.height;
        // Segment ranges pay on dense keys (motion capture) and cost on short, sparse clips;
        // keys that are not uniform may pay on a grid. The smallest form is kept.
        let mut forms = vec![times.clone()];
        if !is_uniform(&times) {
            forms.extend(resample::grid(input, &times, 0.5 * threshold));
        }
        let raw_keys = times.len();
        // The smallest form within the threshold; a grid that plays the clip too far from
        // itself between its keys (where no rate helps) is not, so the clip's own times are
        // kept. Without one within (a track past full precision), the one with the least error.
        let best = forms
            .iter()
            .flat_map(|keys| {
                [false, true]
                    .map(|segmented| Self::build(input, keys.clone(), &times, threshold, segmented))
            })
            .min_by(|a, b| {
                let over = |c: &Self| c.worst_error > threshold;
                over(a).cmp(&over(b)).then_with(|| match over(a) {
                    true => a.worst_error.total_cmp(&b.worst_error),
                    false => a.packed_bytes().cmp(&b.packed_bytes()),
                })
            })
            .expect("one form at least");
        Ok(Self { raw_keys, ..best })
    }

    /// `input` packed at key times `times`, played within `threshold` (skeleton units) of the
    /// clip at its keys, halfway between each two and at the clip's own key times `original`
    /// (where `times` is a grid).
    fn build(
        input: &Input,
        mut times: Vec<f32>,
        original: &[f32],
        threshold: f32,
        segmented: bool,
    ) -> Self {
        let bones = input.tracks.len();
        let pose = |t: f32| -> Vec<Transform> {
            let tracks = input.tracks.iter().zip(&input.reference);
            tracks.map(|(track, r)| track.sample(t, r)).collect()
        };
        let raw: Vec<Vec<Transform>> = times.iter().map(|&t| pose(t)).collect();
        let ranges = (0..bones * 3)
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
        let segments: Vec<SegmentRange> = raw
            .chunks(SEGMENT_KEYS)
            .flat_map(|keys| {
                let ranges = &ranges;
                (0..bones * 3).map(move |track| {
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
        let steps = (0..bones * 3)
            .map(|track| block::step(input.tracks[track / 3], track % 3))
            .collect();
        let mut problem = Problem {
            parents: input.parents,
            raw,
            checks: Vec::new(),
            steps,
            reference: &input.reference,
            base: input.base,
            ranges,
            segments,
            distance: input.height / 60.0,
        };
        problem.checks = check_times(&times, original)
            .map(|(key, alpha, t)| {
                let locals = if alpha == 0.0 {
                    problem.raw[key].clone()
                } else {
                    pose(t)
                };
                let cs = problem.component(&locals);
                Check {
                    key,
                    alpha,
                    locals,
                    cs,
                }
            })
            .collect();
        let (rates, worst_error) = problem.solve(threshold);
        let step = times.get(1).map_or(0.0, |t| t - times[0]);
        let uniform = is_uniform(&times);
        let block = block::write(&block::Plan {
            problem: &problem,
            tracks: &input.tracks,
            rates: &rates,
            first_time: times[0],
            inv_step: if uniform && step > 0.0 {
                1.0 / step
            } else {
                0.0
            },
            uniform,
            segmented,
        });
        if uniform {
            times = (0..times.len())
                .map(|k| times[0] + k as f32 * step)
                .collect();
        }
        Self {
            name: input.name.to_string(),
            raw_keys: times.len(),
            times,
            uniform,
            reference: input.reference.clone(),
            rates,
            block,
            worst_error,
            height: input.height,
        }
    }

    /// The clip's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key times the packed form keeps: the clip's distinct key times, or a uniform grid
    /// where that packs smaller within the threshold (rebuilt from start and step when
    /// uniform).
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Each track's rate, three per bone (rotation, translation, scale).
    pub fn rates(&self) -> impl Iterator<Item = Rate> + '_ {
        self.rates.iter().copied()
    }

    /// ACL's uncompressed size: bones × the clip's distinct key times ×
    /// [`RAW_BYTES_PER_KEY`].
    pub fn raw_bytes(&self) -> usize {
        self.reference.len() * self.raw_keys * RAW_BYTES_PER_KEY
    }

    /// Every byte the GPU reads to decode the clip: the packed block (header, descriptors,
    /// ranges, segment table, segment ranges and bits) and, for keys that are not uniform,
    /// their times.
    pub fn packed_bytes(&self) -> usize {
        let times = if self.uniform {
            0
        } else {
            4 * self.times.len()
        };
        4 * self.block.len() + times
    }

    /// The packed block, word for word.
    pub(crate) fn block(&self) -> &[u32] {
        &self.block
    }

    /// Whether the keys are uniform (no times stored).
    pub(crate) fn uniform(&self) -> bool {
        self.uniform
    }

    /// The worst error the optimizer measured, as a fraction of the skeleton's height.
    pub fn worst_error(&self) -> f32 {
        self.worst_error / self.height
    }

    /// Bone `bone`'s local transform at `t` (clamped to the clip's keys), decoded from the
    /// packed block by the reader the CPU twin samples with: keys interpolated as the sampling
    /// stage does (nlerp, lerp, or STEP). Panics when `bone` is not a bone of the skeleton the
    /// clip was compressed for.
    pub fn sample(&self, bone: usize, t: f32) -> Transform {
        let h = PackedHeader::read(&self.block[..], 0);
        let times: &[f32] = if self.uniform { &[] } else { &self.times };
        h.local(
            &self.block[..],
            times,
            bone as u32,
            t,
            self.reference[bone],
            true,
        )
    }

    /// Every bone's local transform at `t`.
    pub fn pose_at(&self, t: f32) -> Vec<Transform> {
        (0..self.reference.len())
            .map(|b| self.sample(b, t))
            .collect()
    }

    /// The worst error of the clip as it plays from the packed keys (through the decoder)
    /// against `clip` itself, made for `skeleton`, as a fraction of the height: at the clip's
    /// own key times and at the packed keys, and halfway between each two of either, in
    /// component space at the optimizer's virtual vertices (an additive clip applied onto the
    /// reference pose). What [`CompressedClip::worst_error`] bounds, measured from outside the
    /// optimizer.
    pub fn played_error(&self, skeleton: &Skeleton, clip: &Clip) -> f32 {
        let own = clip.key_times();
        // Each time once: where the keys are the clip's own, both lists are the same.
        let mut times: Vec<f32> = [&own[..], &self.times[..]]
            .into_iter()
            .flat_map(|keys| {
                let halfway = keys.windows(2).map(|w| 0.5 * (w[0] + w[1]));
                keys.iter().copied().chain(halfway)
            })
            .collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        let base = clip.is_additive().then(|| skeleton.rest());
        let shown = |pose: Vec<Transform>| optimize::shown(skeleton.parents(), base, &pose);
        let worst = times
            .into_iter()
            .map(|t| {
                let (want, got) = (
                    shown(clip.pose_at(&self.reference, t)),
                    shown(self.pose_at(t)),
                );
                let errors = want.iter().zip(&got);
                errors
                    .map(|(a, b)| optimize::vertex_error(a, b, self.height / 60.0))
                    .fold(0.0, f32::max)
            })
            .fold(0.0, f32::max);
        worst / self.height
    }
}

/// Where a clip packed at key times `keys` is measured, as (key, the way to the next key, time):
/// every key, halfway between each two, and each of the clip's own key times `original` that
/// is not a key (where `keys` is a grid).
fn check_times<'a>(
    keys: &'a [f32],
    original: &'a [f32],
) -> impl Iterator<Item = (usize, f32, f32)> + 'a {
    let at_keys = keys.iter().enumerate().map(|(k, &t)| (k, 0.0, t));
    let halfway = keys
        .windows(2)
        .enumerate()
        .map(|(k, w)| (k, 0.5, 0.5 * (w[0] + w[1])));
    let own = original.iter().filter_map(move |&t| {
        let k = keys
            .partition_point(|&x| x <= t)
            .clamp(1, keys.len().max(2) - 1)
            - 1;
        let span = keys.get(k + 1).map_or(0.0, |&next| next - keys[k]);
        let alpha = if span > 0.0 {
            ((t - keys[k]) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (alpha > 0.0 && alpha < 1.0 && alpha != 0.5).then_some((k, alpha, t))
    });
    at_keys.chain(halfway).chain(own)
}

/// Whether `times` are uniform: each within 1e-5 of the span (at least 1 s) of its place on the
/// grid of its first two.
fn is_uniform(times: &[f32]) -> bool {
    let step = times.get(1).map_or(0.0, |t| t - times[0]);
    times.iter().enumerate().all(|(k, &t)| {
        (times[0] + k as f32 * step - t).abs() <= 1e-5 * times[times.len() - 1].max(1.0)
    })
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
    /// The worst error the optimizer measured, as a fraction of the skeleton's height.
    pub worst_error: f32,
    /// The worst error measured through the decoder at the keys and halfway between them
    /// ([`CompressedClip::played_error`]).
    pub played_error: f32,
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
/// reports sizes, errors (the optimizer's and the decoder's) and times (of compression alone).
pub fn compression_report(asset: &Asset, tolerance: f32) -> Result<Vec<ClipReport>> {
    asset
        .clips
        .iter()
        .map(|clip| {
            let start = Instant::now();
            let c = CompressedClip::new(&asset.skeleton, clip, tolerance)?;
            let seconds = start.elapsed().as_secs_f64();
            Ok(ClipReport {
                name: c.name.clone(),
                raw_bytes: c.raw_bytes(),
                packed_bytes: c.packed_bytes(),
                worst_error: c.worst_error(),
                played_error: c.played_error(&asset.skeleton, clip),
                seconds,
            })
        })
        .collect()
}
