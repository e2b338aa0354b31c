//! Blend spaces over a library's clips: full-pose blend spaces for a base, and aim offsets
//! (blend spaces of mesh-space-rotation additives applied as one layer).

use glam::Vec2;

use super::space::BlendSpace;
use crate::batch::{ClipSample, InstanceLayers};
use crate::error::{Error, Result};
use crate::library::{AnimLibrary, ClipId};
use crate::model::AdditiveSpace;

/// A blend space whose samples are clips of one library. The weights are computed on the host
/// (a few dozen flops per instance); the GPU receives the weighted clip samples.
#[derive(Clone, Debug)]
pub struct ClipBlendSpace {
    space: BlendSpace,
    clips: Vec<u32>,
}

impl ClipBlendSpace {
    /// `clips[k]` is the library clip at `space`'s sample `k`. Every clip must exist in `lib`
    /// and be of the same kind: ordinary clips, or additives of one space.
    pub fn new(lib: &AnimLibrary, space: BlendSpace, clips: Vec<u32>) -> Result<Self> {
        if clips.len() != space.sample_count() {
            return Err(Error::BlendSpace {
                what: format!("{} clips for {} samples", clips.len(), space.sample_count()),
            });
        }
        let kind = |c: u32| lib.clip_additive_space(ClipId(c));
        for (k, &c) in clips.iter().enumerate() {
            if c as usize >= lib.clip_count() {
                return Err(Error::BlendSpace {
                    what: format!(
                        "sample {k}: clip {c} does not exist (the library has {})",
                        lib.clip_count()
                    ),
                });
            }
            if kind(c) != kind(clips[0]) {
                return Err(Error::BlendSpace {
                    what: format!(
                        "sample {k}: clip '{}' is not of the same kind as clip '{}' (ordinary or \
                         additive, and in which space)",
                        lib.clip_names()[c as usize],
                        lib.clip_names()[clips[0] as usize]
                    ),
                });
            }
        }
        Ok(Self { space, clips })
    }

    /// The blend space that places the samples.
    pub fn space(&self) -> &BlendSpace {
        &self.space
    }

    /// The library clip at each sample, in sample order.
    pub fn clips(&self) -> &[u32] {
        &self.clips
    }

    /// The weighted samples at `p` (1D spaces read `p.x`); `sample(clip)` gives each clip's
    /// time and looping (its weight is replaced).
    pub fn samples(&self, p: Vec2, sample: impl Fn(u32) -> ClipSample) -> Vec<ClipSample> {
        self.space
            .weights(p)
            .into_iter()
            .map(|w| sample(self.clips[w.sample]).with_weight(w.weight))
            .collect()
    }

    /// The samples at `p`, every clip looping at the same normalized time `phase` (0 to 1) of
    /// its own length: the synchronization a locomotion blend space needs.
    pub fn samples_at_phase(&self, lib: &AnimLibrary, p: Vec2, phase: f32) -> Vec<ClipSample> {
        self.samples(p, |c| {
            ClipSample::new(c, phase * lib.clip_duration(ClipId(c)), true)
        })
    }
}

/// An aim offset: a blend space, usually over (yaw, pitch), whose samples are mesh-space
/// rotation additives. Its blended delta is applied to the base in mesh space with an alpha
/// clamped to [0, 1].
#[derive(Clone, Debug)]
pub struct AimOffset {
    poses: ClipBlendSpace,
}

impl AimOffset {
    /// `clips` must be mesh-space additives of `lib` (see [`crate::additive::make_additive`]).
    pub fn new(lib: &AnimLibrary, space: BlendSpace, clips: Vec<u32>) -> Result<Self> {
        let poses = ClipBlendSpace::new(lib, space, clips)?;
        if let Some(&c) = poses.clips.first() {
            if lib.clip_additive_space(ClipId(c)) != Some(AdditiveSpace::Mesh) {
                return Err(Error::BlendSpace {
                    what: format!(
                        "aim offset pose '{}' is not a mesh-space additive",
                        lib.clip_names()[c as usize]
                    ),
                });
            }
        }
        Ok(Self { poses })
    }

    /// The blend space of the aim poses (mesh-space additive clips).
    pub fn poses(&self) -> &ClipBlendSpace {
        &self.poses
    }

    /// The pose samples at `aim` (yaw, pitch in the space's units), each at `time`.
    pub fn samples(&self, aim: Vec2, time: f32) -> Vec<ClipSample> {
        self.poses.samples(aim, |c| ClipSample::new(c, time, false))
    }
}

impl<'a> InstanceLayers<'a> {
    /// Adds `aim_offset` evaluated at `aim` (its poses sampled at `time`), applied in mesh
    /// space with `alpha` clamped to [0, 1].
    pub fn aim(self, aim_offset: &AimOffset, aim: Vec2, time: f32, alpha: f32) -> Self {
        let samples = aim_offset.samples(aim, time);
        self.additive(AdditiveSpace::Mesh, alpha.clamp(0.0, 1.0), &samples)
    }
}
