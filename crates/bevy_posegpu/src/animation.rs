//! What each instance plays: clips with their own time and rate, blended into a base, layers
//! over it (additive, dynamic additive, layered blend per bone), IK weights for clips from other
//! characters, and root motion; and how that becomes a posegpu batch entry and a root-motion
//! step. Both backends build their batch here, so they play the same thing.

use bevy::math::{Mat4, Quat, Vec3};
use bevy::prelude::Transform;
use posegpu::InstanceLayers;
use posegpu::{
    AdditiveSpace, ClipId, ClipMotion, ClipSample, IkWeights, MaskId, PoseBatch, RootLock,
    RootMotionAxes,
};

/// One clip as an instance plays it: from `time` (seconds), advanced by `rate` times Bevy's
/// frame time, with `weight` among the clips of its blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayingClip {
    pub clip: ClipId,
    pub time: f32,
    pub rate: f32,
    pub looping: bool,
    /// Its weight in the blend it belongs to (normalized there; 1 for a clip alone).
    pub weight: f32,
}

impl PlayingClip {
    /// `clip` from `time` on, at normal speed, looping, weight 1.
    pub fn new(clip: impl Into<ClipId>, time: f32) -> Self {
        Self {
            clip: clip.into(),
            time,
            rate: 1.0,
            looping: true,
            weight: 1.0,
        }
    }

    /// The same at `rate` (0: frozen; negative: backwards).
    pub fn with_rate(self, rate: f32) -> Self {
        Self { rate, ..self }
    }

    /// The same with `weight` in its blend.
    pub fn with_weight(self, weight: f32) -> Self {
        Self { weight, ..self }
    }

    /// The same played once: it holds its last frame at the end.
    pub fn once(self) -> Self {
        Self {
            looping: false,
            ..self
        }
    }

    fn sample(&self) -> ClipSample {
        ClipSample::new(self.clip, self.time, self.looping).with_weight(self.weight)
    }

    fn advance(&mut self, dt: f32) {
        self.time += dt * self.rate;
    }
}

/// A layer over an instance's base pose, in order (posegpu's `InstanceLayers`).
#[derive(Clone, Debug, PartialEq)]
pub enum Layer {
    /// The blend of additive clips' deltas (clips made with `posegpu::additive::make_additive`), applied
    /// with `weight`.
    Additive {
        space: AdditiveSpace,
        weight: f32,
        clips: Vec<PlayingClip>,
    },
    /// UE's Make Dynamic Additive: `pose`'s delta against `base` (ordinary clips, such as a
    /// glTF file's), made at run time and applied with `weight`: a lean or a flinch from two
    /// ordinary clips.
    Dynamic {
        space: AdditiveSpace,
        weight: f32,
        pose: PlayingClip,
        base: PlayingClip,
    },
    /// UE's Layered blend per bone: the blend of `clips` over the pose so far, by `weight`
    /// times `mask`'s weight per bone (no mask: every bone), rotations blended in `space`: an
    /// upper-body wave over a walk.
    Blend {
        space: AdditiveSpace,
        weight: f32,
        clips: Vec<PlayingClip>,
        mask: Option<MaskId>,
    },
}

impl Layer {
    /// Advances every clip of the layer by `dt` seconds of its own rate.
    fn advance(&mut self, dt: f32) {
        match self {
            Self::Additive { clips, .. } | Self::Blend { clips, .. } => {
                clips.iter_mut().for_each(|p| p.advance(dt));
            }
            Self::Dynamic { pose, base, .. } => {
                pose.advance(dt);
                base.advance(dt);
            }
        }
    }

    fn push<'a>(&self, layers: InstanceLayers<'a>) -> InstanceLayers<'a> {
        let samples =
            |clips: &[PlayingClip]| clips.iter().map(PlayingClip::sample).collect::<Vec<_>>();
        match self {
            Self::Additive {
                space,
                weight,
                clips,
            } => layers.additive(*space, *weight, &samples(clips)),
            Self::Dynamic {
                space,
                weight,
                pose,
                base,
            } => layers.dynamic(*space, *weight, pose.sample(), base.sample()),
            Self::Blend {
                space,
                weight,
                clips,
                mask,
            } => {
                let layers = layers.blend(*space, *weight, &samples(clips));
                match mask {
                    Some(m) => layers.with_mask(*m),
                    None => layers,
                }
            }
        }
    }
}

/// Everything an instance plays. A [`PlayingClip`] alone converts into one (`.into()`).
#[derive(Clone, Debug, PartialEq)]
pub struct Animation {
    /// The base pose: the blend of these clips by their weights (one clip: itself).
    pub base: Vec<PlayingClip>,
    /// Layers over the base, in order.
    pub layers: Vec<Layer>,
    /// IK after retargeting, for clips from other characters ([`crate::CrowdModel`]'s
    /// `clips_from`): feet kept where the source's are, the left hand on a shared grip.
    pub ik: Option<IkWeights>,
    /// Root motion: these parts of the root bone's motion leave the pose and move the
    /// instance's `Transform` instead, each frame (`None`: the pose keeps all of it, the
    /// instance stays where it is placed).
    pub root_motion: Option<RootMotionAxes>,
}

impl From<PlayingClip> for Animation {
    fn from(clip: PlayingClip) -> Self {
        Self::blend(vec![clip])
    }
}

impl Animation {
    /// The blend of `base` clips by their weights, with no layers, IK or root motion.
    pub fn blend(base: Vec<PlayingClip>) -> Self {
        Self {
            base,
            layers: Vec::new(),
            ik: None,
            root_motion: None,
        }
    }

    /// The same with `layer` added over the others.
    pub fn with_layer(mut self, layer: Layer) -> Self {
        self.layers.push(layer);
        self
    }

    /// The same with IK after retargeting.
    pub fn with_ik(self, ik: IkWeights) -> Self {
        Self {
            ik: Some(ik),
            ..self
        }
    }

    /// The same moving its instance by `axes` of the root motion (the pose keeps the rest).
    pub fn with_root_motion(self, axes: RootMotionAxes) -> Self {
        Self {
            root_motion: Some(axes),
            ..self
        }
    }

    /// Advances every clip, base and layers, by `dt` seconds of its own rate.
    pub(crate) fn advance(&mut self, dt: f32) {
        self.base.iter_mut().for_each(|p| p.advance(dt));
        self.layers.iter_mut().for_each(|l| l.advance(dt));
    }

    /// Appends this animation to `batch` as one instance.
    pub(crate) fn push(&self, batch: &mut PoseBatch) {
        let lock = self.root_motion.map(|_| RootLock::RefPose);
        let axes = self.root_motion.unwrap_or_default();
        let base: Vec<ClipSample> = self
            .base
            .iter()
            .map(|p| p.sample().with_root_lock(lock).with_root_axes(axes))
            .collect();
        let mut layers = batch.push_blend(&base);
        for layer in &self.layers {
            layers = layer.push(layers);
        }
        if let Some(w) = self.ik {
            layers.ik(w);
        }
    }

    /// The root's motion over the next `dt` seconds, in the character's frame (the base's
    /// clips' motions blended by their weights, as posegpu's `Crowd` blends its players');
    /// `None` without root motion.
    pub(crate) fn root_step(
        &self,
        motion: &ClipMotion,
        dt: f32,
    ) -> posegpu::Result<Option<posegpu::Transform>> {
        let Some(axes) = self.root_motion else {
            return Ok(None);
        };
        let steps = self
            .base
            .iter()
            .map(|p| {
                let step = motion.step(p.clip, p.time, dt * p.rate, p.looping, axes)?;
                Ok((step, p.weight))
            })
            .collect::<posegpu::Result<Vec<_>>>()?;
        Ok(Some(posegpu::math::blend::blend(
            &steps,
            posegpu::Transform::IDENTITY,
        )))
    }
}

/// The instance's new `Transform` after its skeleton moved by `step` (in the skeleton's frame):
/// `skeleton` is where the skeleton stands relative to the instance (the scene's nodes above
/// its top joint), so the skeleton's world placement becomes `instance · skeleton · step`.
pub(crate) fn moved(instance: &Transform, skeleton: &Mat4, step: &posegpu::Transform) -> Transform {
    let step = Mat4::from_scale_rotation_translation(
        Vec3::from_array(step.scale.to_array()),
        Quat::from_array(step.rotation.to_array()),
        Vec3::from_array(step.translation.to_array()),
    );
    let placed = instance.to_matrix() * *skeleton * step * skeleton.inverse();
    Transform::from_matrix(placed)
}
