//! Synthetic assets for tests and benchmarks: random skeletons of any size and shape with clips
//! that exercise every sampling path.

use glam::{Quat, Vec3};

use super::{skeleton_with_binds, Rng};
use crate::model::{Asset, AssetFrame, BoneTrack, Channel, Clip, Interpolation, Skeleton};
use crate::Transform;

/// A random skeleton of `bones` bones (at least 1) and `clips` random clips, deterministic from
/// `seed`, for tests. The skeleton is stored parents-first, its tree shape mixes long chains
/// and bushy fans (several roots in about half of the skeletons over 10 bones), rest poses have
/// random rotations and translations and non-uniform positive scales, and about 10% of the
/// bones have no inverse bind matrix. The clips exercise every sampling path: LINEAR and STEP
/// channels, absent channels, single-key channels, irregular key spacing, channels whose first
/// key comes after 0 or whose last comes before the end, neighbouring rotation keys in opposite
/// hemispheres (q and -q) and large steps between them, and scale animation.
pub fn random_asset(seed: u64, bones: usize, clips: usize) -> Asset {
    let mut rng = Rng(seed);
    let count = bones.max(1);
    let mut roots = vec![false; count];
    roots[0] = true;
    if count > 10 && rng.chance(0.5) {
        for _ in 0..1 + rng.below(3) {
            roots[1 + rng.below(count - 1)] = true;
        }
    }
    let parents: Vec<Option<usize>> = (0..count)
        .map(|i| (!roots[i]).then(|| if rng.chance(0.5) { i - 1 } else { rng.below(i) }))
        .collect();
    // Scales near 1 keep long chains' accumulated scale (and so precision) reasonable.
    let locals = (0..count)
        .map(|_| {
            let translation = rng.vec3(-0.5, 0.5);
            let rotation = rng.quat();
            let scale = if rng.chance(0.3) {
                Vec3::ONE
            } else {
                rng.vec3(0.8, 1.25)
            };
            Transform::new(translation, rotation, scale)
        })
        .collect();
    let names = (0..count).map(|i| format!("bone_{i:03}")).collect();
    let skeleton = skeleton_with_binds(names, &parents, locals, |_| rng.chance(0.9));
    let clips = (0..clips)
        .map(|c| random_clip(&mut rng, &skeleton, format!("clip_{c}")))
        .collect();
    Asset {
        skeleton,
        clips,
        nodes: None,
        frame: AssetFrame::UNKNOWN,
    }
}

fn random_clip(rng: &mut Rng, skeleton: &Skeleton, name: String) -> Clip {
    let length = rng.range(0.5, 3.0);
    let mut tracks: Vec<BoneTrack> = (0..skeleton.len())
        .map(|_| BoneTrack {
            translation: random_channel(rng, length, |r, _| r.vec3(-0.5, 0.5)),
            rotation: random_channel(rng, length, |r, prev: Option<&Quat>| {
                let q = match prev {
                    None => r.quat(),
                    // Steps up to 120°: large, yet still shorter than the other way round.
                    Some(q) => {
                        let axis = r.quat() * Vec3::X;
                        (*q * Quat::from_axis_angle(axis, r.range(0.0, 2.1))).normalize()
                    }
                };
                // The sampler must take the shorter arc between q and -q neighbours.
                if r.chance(0.3) {
                    -q
                } else {
                    q
                }
            }),
            scale: random_channel(rng, length, |r, _| r.vec3(0.7, 1.4)),
        })
        .collect();
    // A clip needs a key, and a zero-length one would leave time mapping unexercised.
    if !tracks.iter().flat_map(channel_lengths).any(|n| n > 1) {
        let bone = rng.below(tracks.len());
        let values = vec![rng.vec3(-0.5, 0.5), rng.vec3(-0.5, 0.5)];
        let channel = Channel::new(vec![0.0, length], values, Interpolation::Linear);
        tracks[bone].translation = Some(channel);
    }
    Clip::new(name, skeleton, tracks).expect("random keys are valid by construction")
}

fn channel_lengths(t: &BoneTrack) -> [usize; 3] {
    [
        t.translation.as_ref().map_or(0, Channel::len),
        t.rotation.as_ref().map_or(0, Channel::len),
        t.scale.as_ref().map_or(0, Channel::len),
    ]
}

/// A channel or none; `value(rng, previous key)` makes each key.
fn random_channel<T>(
    rng: &mut Rng,
    length: f32,
    mut value: impl FnMut(&mut Rng, Option<&T>) -> T,
) -> Option<Channel<T>> {
    if rng.chance(0.3) {
        return None;
    }
    let keys = if rng.chance(0.15) {
        1
    } else {
        2 + rng.below(11)
    };
    let interpolation = if rng.chance(0.25) {
        Interpolation::Step
    } else {
        Interpolation::Linear
    };
    let start = if rng.chance(0.3) {
        rng.range(0.05, 0.5) * length
    } else {
        0.0
    };
    let end = if rng.chance(0.6) {
        length
    } else {
        rng.range(start + 0.2 * (length - start), length)
    };
    // Irregular gaps, strictly increasing times.
    let gaps: Vec<f32> = (1..keys).map(|_| rng.range(0.2, 1.8)).collect();
    let total: f32 = gaps.iter().sum();
    let mut times = vec![start];
    for g in &gaps {
        times.push(times[times.len() - 1] + g / total * (end - start));
    }
    if keys > 1 {
        times[keys - 1] = end;
    }
    let mut values: Vec<T> = Vec::with_capacity(keys);
    for _ in 0..keys {
        let v = value(rng, values.last());
        values.push(v);
    }
    Some(Channel::new(times, values, interpolation))
}
