//! Offline conversion of a whole clip to another skeleton: through a [`RetargetPlan`]
//! ([`bake_clip`], between characters), or UE's RemapTracksToNewSkeleton ([`remap_clip`]).

use super::{BoneMapping, RetargetPlan};
use crate::drive::IkWeights;
use crate::error::{Error, Result};
use crate::math::{angle_between, TINY};
use crate::model::{Asset, Skeleton};
use crate::model::{BoneTrack, Channel, Clip, Interpolation};
use crate::Transform;

/// Converts `clip`, an ordinary clip of `source`, to `target` through `plan` (built for these
/// two skeletons) once: the source's pose at each of the clip's key times, the plan applied to
/// it as the sampling stage applies it, and keys written at those times (linear) for the
/// channels of target bones that move away from the target's reference pose (one key where a
/// channel holds still elsewhere). Played on `target`, the baked clip gives the plan's poses at
/// the key times, and their interpolation in between. With `ik` above
/// [`IkWeights::NONE`], the IK chains run on each key's pose ([`RetargetPlan::apply_with_ik`]):
/// feet planted where the source's are (the keys are then the IK stage's poses at those
/// times).
pub fn bake_clip(
    plan: &RetargetPlan,
    source: &Asset,
    clip: &Clip,
    target: &Skeleton,
    ik: IkWeights,
) -> Result<Clip> {
    let (times, sources) = source_poses(plan, source, clip, target)?;
    let poses: Vec<Vec<Transform>> = sources.iter().map(|p| plan.apply_with_ik(p, ik)).collect();
    baked_clip(clip, target, &times, &poses)
}

/// [`bake_clip`] without IK, and the plan's IK goals at the same key times as tracks: one per
/// goal record (every chain's goal, then every chain's toe goal), its translation and rotation
/// keyed (one key where it holds still), no channel where the plan has no such goal. The
/// library stores them after the bones' tracks, and the IK stage reads a baked clip's goals
/// there as it runs a plan clip's goal records: IK then stays per instance.
pub(crate) fn bake_with_goals(
    plan: &RetargetPlan,
    source: &Asset,
    clip: &Clip,
    target: &Skeleton,
) -> Result<(Clip, Vec<BoneTrack>)> {
    let (times, sources) = source_poses(plan, source, clip, target)?;
    let poses: Vec<Vec<Transform>> = sources.iter().map(|p| plan.apply(p)).collect();
    let goals: Vec<Vec<Option<Transform>>> = sources.iter().map(|p| plan.all_goals(p)).collect();
    let records = goals.first().map_or(0, Vec::len);
    let tracks = (0..records)
        .map(|g| {
            let keys: Option<Vec<Transform>> = goals.iter().map(|k| k[g]).collect();
            let Some(keys) = keys else {
                return Ok(BoneTrack::default());
            };
            if let Some(k) = keys.iter().position(|k| !k.is_finite()) {
                return Err(Error::NonFinite {
                    what: format!(
                        "clip '{}' baked: IK goal {g} at {} s",
                        clip.name(),
                        times[k]
                    ),
                });
            }
            Ok(BoneTrack {
                translation: Some(keyed(&times, &keys, |k| k.translation, |a, b| a != b)),
                rotation: Some(keyed(&times, &keys, |k| k.rotation, |a, b| a != b)),
                scale: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((baked_clip(clip, target, &times, &poses)?, tracks))
}

/// The checks of a bake, then the clip's key times and the source's pose at each.
fn source_poses(
    plan: &RetargetPlan,
    source: &Asset,
    clip: &Clip,
    target: &Skeleton,
) -> Result<(Vec<f32>, Vec<Vec<Transform>>)> {
    plan.check(&source.skeleton, target)?;
    if clip.tracks().len() != source.skeleton.len() {
        return Err(Error::TrackCount {
            clip: clip.name().to_string(),
            expected: source.skeleton.len(),
            got: clip.tracks().len(),
        });
    }
    if clip.is_additive() {
        return Err(Error::Additive {
            clip: clip.name().to_string(),
            what: "an additive clip cannot be baked through a retarget plan: bake the clips it \
                   was made from, then make the additive on the target"
                .to_string(),
        });
    }
    plan.check_clip(clip)?;
    let times = clip.key_times();
    let poses = times
        .iter()
        .map(|&t| clip.pose_at(source.skeleton.rest(), t))
        .collect();
    Ok((times, poses))
}

/// `target`'s clip keyed at `times` with `poses` (one per time), named and marked as `clip`.
fn baked_clip(
    clip: &Clip,
    target: &Skeleton,
    times: &[f32],
    poses: &[Vec<Transform>],
) -> Result<Clip> {
    let tol = 1e-6 * target.extent();
    let tracks = target
        .rest()
        .iter()
        .enumerate()
        .map(|(b, rest)| {
            let keys: Vec<Transform> = poses.iter().map(|p| p[b]).collect();
            BoneTrack {
                translation: channel(
                    times,
                    &keys,
                    |k| k.translation,
                    |a, b| (a - b).abs().max_element() > tol,
                    rest,
                ),
                rotation: channel(
                    times,
                    &keys,
                    |k| k.rotation,
                    |a, b| angle_between(a, b) > 1e-6,
                    rest,
                ),
                scale: channel(
                    times,
                    &keys,
                    |k| k.scale,
                    |a, b| (a - b).abs().max_element() > 1e-6,
                    rest,
                ),
            }
        })
        .collect();
    Ok(Clip::new(clip.name(), target, tracks)?.with_markers_of(clip))
}

/// One channel of baked `keys`: `None` where every key is the reference's value, else
/// [`keyed`].
fn channel<T: Copy>(
    times: &[f32],
    keys: &[Transform],
    value: impl Fn(&Transform) -> T,
    differ: impl Fn(T, T) -> bool,
    reference: &Transform,
) -> Option<Channel<T>> {
    if !keys.iter().any(|k| differ(value(k), value(reference))) {
        return None;
    }
    Some(keyed(times, keys, value, differ))
}

/// `keys`' values at `times` (linear), one key where all are equal; `differ` compares two
/// values.
fn keyed<T: Copy>(
    times: &[f32],
    keys: &[Transform],
    value: impl Fn(&Transform) -> T,
    differ: impl Fn(T, T) -> bool,
) -> Channel<T> {
    let first = value(&keys[0]);
    if !keys.iter().any(|k| differ(value(k), first)) {
        return Channel::new(vec![0.0], vec![first], Interpolation::Linear);
    }
    let values = keys.iter().map(value).collect();
    Channel::new(times.to_vec(), values, Interpolation::Linear)
}

/// Converts `clip`, a clip of `source`, to `target` once, in component space (the steps of
/// "Offline retargeting" in `docs/pose-math.md`): each target bone takes its source bone's
/// component-space rotation offset by the difference of the two reference poses, and its
/// translation scaled by the ratio of reference bone lengths. Keys are written, at the union of
/// the clip's key times, for the target bones whose source bone has a track; a bone whose
/// source track only held its keys (STEP) keeps STEP.
pub fn remap_clip(
    clip: &Clip,
    source: &Skeleton,
    target: &Skeleton,
    mapping: &BoneMapping,
) -> Result<Clip> {
    let old_ref_cs = source.rest_component();
    let new_ref_cs = target.rest_component();
    let n = target.len();

    // Step 2: θ and the length ratio of every matched target bone.
    let theta: Vec<Transform> = (0..n)
        .map(|i| match mapping.source_of(i) {
            Some(o) => Transform::relative(&new_ref_cs[i], &old_ref_cs[o]),
            None => Transform::IDENTITY,
        })
        .collect();
    let ratio: Vec<f32> = (0..n)
        .map(|i| match mapping.source_of(i) {
            Some(o) => {
                let old = source.rest()[o].translation.length();
                if old <= TINY {
                    1.0
                } else {
                    target.rest()[i].translation.length() / old
                }
            }
            None => 1.0,
        })
        .collect();
    // Per target bone: its source bone and that bone's track, where it has one.
    let track_of: Vec<Option<(usize, &BoneTrack)>> = (0..n)
        .map(|i| {
            mapping
                .source_of(i)
                .map(|o| (o, &clip.tracks()[o]))
                .filter(|(_, t)| t.is_animated())
        })
        .collect();

    let times = clip.key_times();
    let mut keys: Vec<Vec<Transform>> = vec![Vec::with_capacity(times.len()); n];
    let mut anim_cs = vec![Transform::IDENTITY; n];
    let mut conv_cs = vec![Transform::IDENTITY; n];
    for &t in &times {
        for i in 0..n {
            // Step 3: the animated pose on the target's hierarchy.
            let local = match (track_of[i], mapping.source_of(i)) {
                (Some((o, track)), _) => {
                    let mut k = track.sample(t, &source.rest()[o]);
                    k.translation *= ratio[i];
                    k
                }
                (None, Some(o)) => source.rest()[o],
                (None, None) => Transform::IDENTITY,
            };
            let parent = target.parent(i);
            anim_cs[i] = match parent {
                Some(p) => Transform::compose(&local, &anim_cs[p]),
                None => local,
            };
            // Step 4: rotation and scale offset by θ; translation kept.
            conv_cs[i] = Transform {
                rotation: anim_cs[i].rotation * theta[i].rotation,
                scale: anim_cs[i].scale * theta[i].scale,
                translation: anim_cs[i].translation,
            };
            if track_of[i].is_some() {
                keys[i].push(match parent {
                    Some(p) => Transform::relative(&conv_cs[i], &conv_cs[p]),
                    None => conv_cs[i],
                });
            }
        }
    }

    // Step 5: keys for the bones that had tracks.
    let tracks = keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            let Some((_, track)) = track_of[i] else {
                return BoneTrack::default();
            };
            let interpolation = if track.is_step() {
                Interpolation::Step
            } else {
                Interpolation::Linear
            };
            BoneTrack {
                translation: Some(Channel::new(
                    times.clone(),
                    k.iter().map(|x| x.translation).collect(),
                    interpolation,
                )),
                rotation: Some(Channel::new(
                    times.clone(),
                    k.iter().map(|x| x.rotation.normalize()).collect(),
                    interpolation,
                )),
                scale: Some(Channel::new(
                    times.clone(),
                    k.iter().map(|x| x.scale).collect(),
                    interpolation,
                )),
            }
        })
        .collect();
    let converted = match clip.additive_space() {
        None => Clip::new(clip.name(), target, tracks),
        Some(space) => Clip::new_additive(clip.name(), target, tracks, space),
    };
    Ok(converted?.with_markers_of(clip))
}
