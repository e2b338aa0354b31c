//! Additive clips built on the host, once: a clip's deltas against a base pose, sampled at the
//! clip's key times, in local space or as mesh-space rotations (spec: `docs/pose-math.md`,
//! "Additive poses", base pose kinds).

use crate::error::{Error, Result};
use crate::math::delta::{make_delta, to_mesh_rotations};
use crate::model::AdditiveSpace;
use crate::model::Skeleton;
use crate::model::{BoneTrack, Channel, Clip, Interpolation};
use crate::Transform;

/// The pose an additive's deltas are measured against.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum AdditiveBase<'a> {
    /// The skeleton's reference pose.
    ReferencePose,
    /// Another clip of the same skeleton, stretched to this clip's length: at time `t` the base
    /// is sampled at `clamp(t / length_this, 0, 1) · length_base`.
    ClipScaled(&'a Clip),
    /// Frame `N` of another clip, at `clamp(N / keyCount, 0, 1) · length` (UE divides by the
    /// key count, not by keyCount − 1).
    ClipFrame(&'a Clip, usize),
    /// Frame `N` of the clip itself, by the same formula.
    Frame(usize),
}

/// The time of frame `n` of `clip`; an error past its last frame.
pub fn frame_time(clip: &Clip, n: usize) -> Result<f32> {
    let keys = clip.key_count();
    if n >= keys {
        return Err(Error::Additive {
            clip: clip.name().to_string(),
            what: format!(
                "frame {n} is past the end (it has {keys} frames, 0 to {})",
                keys - 1
            ),
        });
    }
    Ok((n as f32 / keys as f32).clamp(0.0, 1.0) * clip.duration())
}

/// An additive clip named `name`: the deltas of `clip` against `base` in `space`, one key per
/// key time of `clip` (and, for [`AdditiveBase::ClipScaled`], per key time of the base mapped
/// onto this clip's length). A channel whose delta never changes is stored as one key. A bone
/// whose keys are all STEP keeps STEP keys. Both clips must be ordinary clips of `skeleton`.
pub fn make_additive(
    name: &str,
    skeleton: &Skeleton,
    clip: &Clip,
    base: AdditiveBase,
    space: AdditiveSpace,
) -> Result<Clip> {
    let base_clip = match base {
        AdditiveBase::ReferencePose => None,
        AdditiveBase::Frame(_) => Some(clip),
        AdditiveBase::ClipScaled(b) | AdditiveBase::ClipFrame(b, _) => Some(b),
    };
    for c in std::iter::once(clip).chain(base_clip) {
        if c.tracks().len() != skeleton.len() {
            return Err(Error::Additive {
                clip: name.to_string(),
                what: format!(
                    "clip '{}' has {} tracks but the skeleton has {} bones: it belongs to \
                     another skeleton (retarget it first, or play the additive through a rig)",
                    c.name(),
                    c.tracks().len(),
                    skeleton.len()
                ),
            });
        }
        if c.is_additive() {
            return Err(Error::Additive {
                clip: name.to_string(),
                what: format!("clip '{}' is already additive", c.name()),
            });
        }
    }
    let length = clip.duration();
    let mut times = clip.key_times();
    if let AdditiveBase::ClipScaled(b) = base {
        if b.duration() > 0.0 {
            times.extend(b.key_times().iter().map(|t| t / b.duration() * length));
            times.sort_by(f32::total_cmp);
            times.dedup();
        }
    }
    let fixed_base_time = match base {
        AdditiveBase::Frame(n) => Some(frame_time(clip, n)?),
        AdditiveBase::ClipFrame(b, n) => Some(frame_time(b, n)?),
        AdditiveBase::ReferencePose | AdditiveBase::ClipScaled(_) => None,
    };
    let reference = skeleton.rest();
    let parents = skeleton.parents();
    let mut deltas: Vec<Vec<Transform>> = vec![Vec::with_capacity(times.len()); skeleton.len()];
    for &t in &times {
        let mut pose = clip.pose_at(reference, t);
        let mut base_pose = match (base_clip, base) {
            (None, _) => reference.to_vec(),
            (Some(b), AdditiveBase::ClipScaled(_)) => {
                let u = if length > 0.0 { t / length } else { 0.0 };
                b.pose_at(reference, u.clamp(0.0, 1.0) * b.duration())
            }
            (Some(b), _) => b.pose_at(reference, fixed_base_time.unwrap_or(0.0)),
        };
        if space == AdditiveSpace::Mesh {
            to_mesh_rotations(parents, &mut pose);
            to_mesh_rotations(parents, &mut base_pose);
        }
        for (d, (p, b)) in deltas.iter_mut().zip(pose.iter().zip(&base_pose)) {
            d.push(make_delta(p, b));
        }
    }
    let tracks = deltas
        .iter()
        .zip(clip.tracks())
        .map(|(keys, track)| {
            let interpolation = if track.is_animated() && track.is_step() {
                Interpolation::Step
            } else {
                Interpolation::Linear
            };
            BoneTrack {
                translation: Some(channel(&times, keys, interpolation, |x| x.translation)),
                rotation: Some(channel(&times, keys, interpolation, |x| x.rotation)),
                scale: Some(channel(&times, keys, interpolation, |x| x.scale)),
            }
        })
        .collect();
    let mut additive = Clip::new_additive(name, skeleton, tracks, space)?.with_markers_of(clip);
    // Its curves as deltas against the base's curve of the same name (0 where it has none),
    // at the times the bones' base poses are taken.
    for curve in clip.curves() {
        let base_value = |t: f32| -> f32 {
            let of = |b: &Clip, at: f32| b.curve(&curve.name).map_or(0.0, |c| c.value_at(at));
            match (base_clip, base) {
                (None, _) => 0.0,
                (Some(b), AdditiveBase::ClipScaled(_)) => {
                    let u = if length > 0.0 { t / length } else { 0.0 };
                    of(b, u.clamp(0.0, 1.0) * b.duration())
                }
                (Some(b), _) => of(b, fixed_base_time.unwrap_or(0.0)),
            }
        };
        let ch = &curve.channel;
        let values = ch
            .times
            .iter()
            .zip(&ch.values)
            .map(|(&t, &v)| v - base_value(t))
            .collect();
        let deltas = Channel::new(ch.times.clone(), values, ch.interpolation);
        additive = additive.with_curve(curve.name.clone(), deltas)?;
    }
    Ok(additive)
}

/// One channel of `keys`, a single key when every value is the same.
fn channel<T: PartialEq + Copy>(
    times: &[f32],
    keys: &[Transform],
    interpolation: Interpolation,
    value: impl Fn(&Transform) -> T,
) -> Channel<T> {
    let values: Vec<T> = keys.iter().map(value).collect();
    if values.windows(2).all(|w| w[0] == w[1]) {
        return Channel::new(vec![times[0]], vec![values[0]], interpolation);
    }
    Channel::new(times.to_vec(), values, interpolation)
}
