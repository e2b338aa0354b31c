//! Animation clips: per-bone keyframe tracks of translation, rotation and scale, named float
//! curves (morph-target weights, material parameters) and notifies.

use glam::{Quat, Vec3};

use super::keys::find_keys;
use super::skeleton::Skeleton;
use crate::error::{Error, Result};
use crate::math::{lerp3, nlerp};
use crate::Transform;

/// How values between two keys are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Interpolation {
    /// Translation and scale linear; rotation `normalize(fastLerp)` (nlerp, shorter arc).
    #[default]
    Linear,
    /// Hold the earlier key until the next key's time.
    Step,
}

/// Keys of one channel: times (seconds, non-decreasing) and one value per time.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel<T> {
    /// Key times in seconds, non-decreasing.
    pub times: Vec<f32>,
    /// Key values, one per time.
    pub values: Vec<T>,
    /// How values between keys are found.
    pub interpolation: Interpolation,
}

impl<T> Channel<T> {
    /// A channel from its keys (checked when a [`Clip`] is made).
    pub fn new(times: Vec<f32>, values: Vec<T>, interpolation: Interpolation) -> Self {
        Self {
            times,
            values,
            interpolation,
        }
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when the channel has no keys (a clip refuses it).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    fn validate(&self, what: &str, mut check_value: impl FnMut(&T) -> Result<()>) -> Result<()> {
        if self.times.is_empty() {
            return Err(Error::EmptyChannel {
                what: what.to_string(),
            });
        }
        if self.times.len() != self.values.len() {
            return Err(Error::KeyCountMismatch {
                what: what.to_string(),
                times: self.times.len(),
                values: self.values.len(),
            });
        }
        for (i, t) in self.times.iter().enumerate() {
            if !t.is_finite() {
                return Err(Error::NonFinite {
                    what: format!("{what}, key time {i}"),
                });
            }
            if i > 0 && *t < self.times[i - 1] {
                return Err(Error::TimesDecrease {
                    what: what.to_string(),
                    index: i,
                    prev: self.times[i - 1],
                    next: *t,
                });
            }
        }
        self.values.iter().try_for_each(&mut check_value)
    }
}

/// The keys of one bone. A missing channel keeps the reference value of the skeleton the clip
/// plays on (the identity delta, for an additive clip); a bone with no channel at all has an empty
/// track ([`BoneTrack::default`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneTrack {
    /// Local translation keys; `None` when the bone's translation is not animated.
    pub translation: Option<Channel<Vec3>>,
    /// Local rotation keys (quaternions); `None` when the rotation is not animated.
    pub rotation: Option<Channel<Quat>>,
    /// Local scale keys; `None` when the scale is not animated.
    pub scale: Option<Channel<Vec3>>,
}

impl BoneTrack {
    /// True when the bone has at least one channel.
    pub fn is_animated(&self) -> bool {
        self.translation.is_some() || self.rotation.is_some() || self.scale.is_some()
    }

    pub(crate) fn times(&self) -> impl Iterator<Item = &f32> {
        let t = self.translation.iter().flat_map(|c| &c.times);
        let r = self.rotation.iter().flat_map(|c| &c.times);
        let s = self.scale.iter().flat_map(|c| &c.times);
        t.chain(r).chain(s)
    }

    /// A track that holds `pose` (one key at time 0 on each channel).
    pub fn holding(pose: &Transform) -> Self {
        let key = |v| Some(Channel::new(vec![0.0], vec![v], Interpolation::Linear));
        Self {
            translation: key(pose.translation),
            rotation: Some(Channel::new(
                vec![0.0],
                vec![pose.rotation],
                Interpolation::Linear,
            )),
            scale: key(pose.scale),
        }
    }

    /// The local transform at time `t` (no wrapping), as the sampling stage computes it;
    /// channels the track lacks take their value from `fill`.
    pub fn sample(&self, t: f32, fill: &Transform) -> Transform {
        let mut out = *fill;
        if let Some(c) = &self.translation {
            let (a, b, alpha) = c.keys(t);
            out.translation = lerp3(c.values[a], c.values[b], alpha);
        }
        if let Some(c) = &self.rotation {
            let (a, b, alpha) = c.keys(t);
            out.rotation = nlerp(c.values[a], c.values[b], alpha);
        }
        if let Some(c) = &self.scale {
            let (a, b, alpha) = c.keys(t);
            out.scale = lerp3(c.values[a], c.values[b], alpha);
        }
        out
    }

    /// True when every channel present holds its keys (STEP).
    pub fn is_step(&self) -> bool {
        let step = |i: Interpolation| i == Interpolation::Step;
        self.translation
            .as_ref()
            .is_none_or(|c| step(c.interpolation))
            && self.rotation.as_ref().is_none_or(|c| step(c.interpolation))
            && self.scale.as_ref().is_none_or(|c| step(c.interpolation))
    }
}

impl<T> Channel<T> {
    /// The two keys around `t` and the blend factor (0 under STEP).
    fn keys(&self, t: f32) -> (usize, usize, f32) {
        let (a, b, alpha) = find_keys(&self.times, t);
        match self.interpolation {
            Interpolation::Linear => (a, b, alpha),
            Interpolation::Step => (a, b, 0.0),
        }
    }
}

/// An immutable, validated clip for one skeleton: one [`BoneTrack`] per bone, in the
/// skeleton's (parents-first) order.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    name: String,
    duration: f32,
    key_count: usize,
    tracks: Vec<BoneTrack>,
    additive: Option<AdditiveSpace>,
    notifies: Vec<Notify>,
    curves: Vec<Curve>,
}

/// A named float track of a clip (UE's animation curve): a glTF morph-target weight, or a
/// value of the user's. Sampled and blended per instance like the pose
/// ([`crate::Poses::curve`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// Its name; curves of one name in different clips are one curve of the library.
    pub name: String,
    /// Its keys.
    pub channel: Channel<f32>,
}

impl Curve {
    /// Its value at `t` seconds (clamped to its keys' range): its keys interpolated as the
    /// curve stage does (`sample_curve` in `shaders/clip.wgsl`).
    pub fn value_at(&self, t: f32) -> f32 {
        let c = &self.channel;
        let (k0, k1, alpha) = find_keys(&c.times, t);
        let alpha = match c.interpolation {
            Interpolation::Linear => alpha,
            Interpolation::Step => 0.0,
        };
        let (a, b) = (c.values[k0], c.values[k1]);
        a + (b - a) * alpha
    }
}

/// A named time marker on a clip (UE's anim notify): a crowd reports it each time an
/// instance's play position passes it ([`crate::playback::Event`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Notify {
    /// What it marks (`footstep_l`, `hit`); several notifies may share a name.
    pub name: String,
    /// Seconds into the clip, within `[0, duration]`.
    pub time: f32,
}

impl Clip {
    /// Validates `tracks` (one per bone of `skeleton`): key counts, finite values, non-zero
    /// quaternions, finite scales of any sign, non-decreasing times, and at least one key.
    pub fn new(
        name: impl Into<String>,
        skeleton: &Skeleton,
        tracks: Vec<BoneTrack>,
    ) -> Result<Self> {
        Self::validated(name.into(), skeleton, tracks, None)
    }

    /// An additive clip: its keys are deltas in `space` (scale deltas `S − 1`; below −1 the delta mirrors),
    /// validated as [`Clip::new`] does otherwise.
    pub fn new_additive(
        name: impl Into<String>,
        skeleton: &Skeleton,
        tracks: Vec<BoneTrack>,
        space: AdditiveSpace,
    ) -> Result<Self> {
        Self::validated(name.into(), skeleton, tracks, Some(space))
    }

    fn validated(
        name: String,
        skeleton: &Skeleton,
        tracks: Vec<BoneTrack>,
        additive: Option<AdditiveSpace>,
    ) -> Result<Self> {
        if tracks.len() != skeleton.len() {
            return Err(Error::TrackCount {
                clip: name,
                expected: skeleton.len(),
                got: tracks.len(),
            });
        }
        for (bone, track) in tracks.iter().enumerate() {
            let what = |ch: &str| {
                format!(
                    "clip '{name}', bone {bone} '{}', {ch}",
                    skeleton.names()[bone]
                )
            };
            if let Some(c) = &track.translation {
                let w = what("translation");
                c.validate(&w, |v| finite3(v, &w))?;
            }
            if let Some(c) = &track.rotation {
                let w = what("rotation");
                c.validate(&w, |q| {
                    if !q.is_finite() {
                        Err(Error::NonFinite { what: w.clone() })
                    } else if q.length_squared() < 1e-12 {
                        Err(Error::ZeroQuaternion { what: w.clone() })
                    } else {
                        Ok(())
                    }
                })?;
            }
            if let Some(c) = &track.scale {
                // Any sign: a negative component mirrors the bone (an additive scale delta below
                // −1 flips its sign), evaluated by the matrix path ("Transforms").
                let w = what("scale");
                c.validate(&w, |v| finite3(v, &w))?;
            }
        }
        let times = union_times(&tracks);
        if times.is_empty() {
            return Err(Error::EmptyClip { clip: name });
        }
        Ok(Self {
            name,
            duration: times.last().copied().unwrap_or(0.0).max(0.0),
            key_count: times.len(),
            tracks,
            additive,
            notifies: Vec::new(),
            curves: Vec::new(),
        })
    }

    /// The clip's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The latest key time of any channel; the clip's range is `[0, duration]`.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The number of distinct key times over all channels ("frame N" lies at
    /// `clamp(N / key_count, 0, 1) · duration`).
    pub fn key_count(&self) -> usize {
        self.key_count
    }

    /// One track per bone, in the skeleton's order.
    pub fn tracks(&self) -> &[BoneTrack] {
        &self.tracks
    }

    /// Marks the clip's keys as deltas in `space` to add onto a base pose (an additive clip):
    /// channels it lacks are the identity, and retargeting follows the additive rules of the
    /// spec. `make_additive` builds such clips from ordinary ones.
    pub fn with_additive(mut self, space: AdditiveSpace) -> Self {
        self.additive = Some(space);
        self
    }

    /// The clip with a notify named `name` at `time` seconds (kept in time order); a time
    /// outside the clip's range `[0, duration]`, or not finite, is an [`Error::Notify`].
    pub fn with_notify(mut self, name: impl Into<String>, time: f32) -> Result<Self> {
        let name = name.into();
        if !(time.is_finite() && (0.0..=self.duration).contains(&time)) {
            return Err(Error::Notify {
                clip: self.name,
                what: format!(
                    "notify '{name}' at {time} s lies outside the clip's range [0, {}]",
                    self.duration
                ),
            });
        }
        let at = self.notifies.partition_point(|n| n.time <= time);
        self.notifies.insert(at, Notify { name, time });
        Ok(self)
    }

    /// The clip with a curve named `name` (replacing one of that name): finite values, key
    /// times as a bone channel's. The clip's range grows to the curve's last key (a clip of
    /// morph weights alone has one).
    pub fn with_curve(mut self, name: impl Into<String>, channel: Channel<f32>) -> Result<Self> {
        let name = name.into();
        let what = format!("clip '{}', curve '{name}'", self.name);
        channel.validate(&what, |v| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(Error::NonFinite { what: what.clone() })
            }
        })?;
        let last = channel.times.last().copied().unwrap_or(0.0);
        self.duration = self.duration.max(last);
        self.curves.retain(|c| c.name != name);
        self.curves.push(Curve { name, channel });
        Ok(self)
    }

    /// The clip's curves.
    pub fn curves(&self) -> &[Curve] {
        &self.curves
    }

    /// The curve named `name`.
    pub fn curve(&self, name: &str) -> Option<&Curve> {
        self.curves.iter().find(|c| c.name == name)
    }

    /// This clip (made from `from`: baked, converted, retargeted) with `from`'s notifies and
    /// curves, which name times of the same clip. A notify past this clip's range is moved to
    /// its end, not dropped.
    pub(crate) fn with_markers_of(mut self, from: &Clip) -> Self {
        for c in &from.curves {
            let last = c.channel.times.last().copied().unwrap_or(0.0);
            self.duration = self.duration.max(last);
        }
        self.curves = from.curves.clone();
        self.notifies = from
            .notifies
            .iter()
            .map(|n| Notify {
                time: n.time.min(self.duration),
                ..n.clone()
            })
            .collect();
        self
    }

    /// The clip's notifies, in time order.
    pub fn notifies(&self) -> &[Notify] {
        &self.notifies
    }

    /// True for an additive clip.
    pub fn is_additive(&self) -> bool {
        self.additive.is_some()
    }

    /// The space of an additive clip's deltas; `None` for an ordinary clip.
    pub fn additive_space(&self) -> Option<AdditiveSpace> {
        self.additive
    }

    /// A clip of single keys holding `locals` (one per bone): a pose as a clip, such as the
    /// reference pose.
    pub fn from_pose(
        name: impl Into<String>,
        skeleton: &Skeleton,
        locals: &[Transform],
    ) -> Result<Self> {
        Self::new(
            name,
            skeleton,
            locals.iter().map(BoneTrack::holding).collect(),
        )
    }

    /// The local pose of every bone at `t` (already in range), as the sampling stage computes
    /// it for the clip's own skeleton: bones and channels the clip lacks take `reference` (the
    /// skeleton's reference pose, one transform per bone).
    pub fn pose_at(&self, reference: &[Transform], t: f32) -> Vec<Transform> {
        self.tracks
            .iter()
            .zip(reference)
            .map(|(track, r)| track.sample(t, r))
            .collect()
    }

    /// The index of the clip named `name` in `clips`, or `name` read as an index.
    pub fn find(clips: &[Clip], name: &str) -> Result<usize> {
        super::find_named(clips.iter().map(Clip::name), name)
    }

    /// Every distinct key time of every channel, ascending.
    pub fn key_times(&self) -> Vec<f32> {
        let mut times: Vec<f32> = self
            .tracks
            .iter()
            .flat_map(BoneTrack::times)
            .copied()
            .collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        times
    }

    /// The time a requested time maps to: clamped to `[0, duration]`, or wrapped into
    /// `[0, duration)` with a Euclidean remainder when looping.
    pub fn map_time(&self, t: f32, looping: bool) -> f32 {
        super::keys::map_time(t, self.duration, looping)
    }
}

/// Every distinct key time of `tracks`, ascending.
fn union_times(tracks: &[BoneTrack]) -> Vec<f32> {
    let mut times: Vec<f32> = tracks.iter().flat_map(BoneTrack::times).copied().collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    times
}

fn finite3(v: &Vec3, what: &str) -> Result<()> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(Error::NonFinite {
            what: what.to_string(),
        })
    }
}

/// Where an additive's rotations live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AdditiveSpace {
    /// Per-bone local deltas (UE's AAT_LocalSpaceBase).
    #[default]
    Local,
    /// Rotation deltas between mesh-space rotations; translations and scales stay local
    /// (UE's AAT_RotationOffsetMeshSpace). Applying one needs the parent-ordered conversions.
    Mesh,
}

impl AdditiveSpace {
    /// Every space, in declaration order.
    pub const ALL: [Self; 2] = [Self::Local, Self::Mesh];

    /// `local` or `mesh`, as the command line and the docs write them.
    pub fn name(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Mesh => "mesh",
        }
    }
}

impl std::str::FromStr for AdditiveSpace {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("'{s}' is not an additive space (local or mesh)"))
    }
}
