//! What `posegpu bench` evaluates: every instance plays one clip authored on another skeleton
//! (retargeted at run time), with one additive layer over it, then the hierarchy.

use glam::{Quat, Vec3};
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::compress::Compression;
use posegpu::procedural::{humanoid_asset, humanoid_variant, random_asset};
use posegpu::retarget::Rig;
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{
    AdditiveSpace, AnimLibrary, Asset, AssetFrame, Bone, Clip, ClipSample, Error, IkWeights,
    PoseBatch, Skeleton, Transform, TranslationMode,
};

/// The additive layer's weight: a partial weight, so the layer takes the blend path
/// (`fastLerp` towards the delta, normalized), not the full-weight shortcut.
pub const LAYER_WEIGHT: f32 = 0.7;

/// The seed of the proportioned copies (and of `humanoid_variant`).
const VARIANT_SEED: u64 = 7;

/// The description's note of compressed clips (none where plain).
fn compressed(compression: Option<&Compression>) -> String {
    compression.map_or(String::new(), |c| {
        format!("; every clip compressed (tolerance {})", c.tolerance())
    })
}

/// The humanoid's bone count: `--bones 67` is the procedural humanoid.
pub const HUMANOID_BONES: usize = 67;

/// A library of retargeted clips and one additive clip on the target skeleton.
pub struct Workload {
    /// One line: what plays on what.
    pub description: String,
    pub lib: AnimLibrary,
    /// The retargeted clips the bases play, dealt round-robin.
    bases: Vec<u32>,
    /// The additive clip of the layer; none for the plain workload.
    layer: Option<u32>,
    space: AdditiveSpace,
    /// IK after retargeting, for every instance (the character workloads).
    ik: Option<IkWeights>,
}

impl Workload {
    /// `bones` = 67: the humanoid's four clips on `humanoid_variant(7)` through the humanoid
    /// rig preset. Any other size: `random_asset(bones)`'s four clips (resampled on shared key
    /// times, [`on_shared_times`]) on a proportioned copy of its skeleton, every bone
    /// `animation_scaled`.
    pub fn for_bones(
        bones: usize,
        space: AdditiveSpace,
        compression: Option<&Compression>,
    ) -> Result<Self, Error> {
        if bones == HUMANOID_BONES {
            let asset = humanoid_asset();
            let target = humanoid_variant(VARIANT_SEED);
            let what = "humanoid_variant(7) playing the humanoid's clips (rig: humanoid preset)";
            return Self::retargeted(&asset, target, &Rig::humanoid(), space, what, compression);
        }
        let asset = on_shared_times(&random_asset(bones as u64, bones, 4))?;
        let target = proportioned(&asset.skeleton, VARIANT_SEED)?;
        let rig = Rig::uniform(TranslationMode::AnimationScaled);
        let what = format!(
            "a proportioned copy of random_asset({bones}) playing its clips (rig: animation_scaled)"
        );
        Self::retargeted(&asset, target, &rig, space, &what, compression)
    }

    /// A model's clips on a proportioned copy of its skeleton, every bone `animation_scaled`.
    pub fn for_model(
        asset: &Asset,
        name: &str,
        space: AdditiveSpace,
        compression: Option<&Compression>,
    ) -> Result<Self, Error> {
        if asset.clips.is_empty() {
            return Err(Error::UnknownAnimation {
                name: "any".into(),
                available: "none: the model has no animations to measure".into(),
            });
        }
        let target = proportioned(&asset.skeleton, VARIANT_SEED)?;
        let rig = Rig::uniform(TranslationMode::AnimationScaled);
        let what =
            format!("a proportioned copy of {name} playing its clips (rig: animation_scaled)");
        Self::retargeted(asset, target, &rig, space, &what, compression)
    }

    /// `asset`'s clips retargeted onto `target`; the layer is the delta of the last clip
    /// (replayed on `target`, whose bones it names alike) against its own first frame.
    fn retargeted(
        asset: &Asset,
        target: Skeleton,
        rig: &Rig,
        space: AdditiveSpace,
        what: &str,
        compression: Option<&Compression>,
    ) -> Result<Self, Error> {
        let last = asset.clips.last().ok_or_else(|| Error::UnknownAnimation {
            name: "any".into(),
            available: "none".into(),
        })?;
        let on_target = Clip::new(last.name(), &target, last.tracks().to_vec())?;
        let name = format!("{} additive", last.name());
        let additive = make_additive(&name, &target, &on_target, AdditiveBase::Frame(0), space)?;
        let mut builder = AnimLibrary::builder(&target);
        builder.compress(compression.cloned());
        let source = builder.add_source("source", &asset.skeleton, None, rig)?;
        builder.add_clips_from(source, &asset.clips)?;
        builder.add_clips(std::slice::from_ref(&additive))?;
        let lib = builder.build();
        let layer = asset.clips.len() as u32;
        Ok(Self {
            description: format!(
                "{} bones: {what}, {} clips; layer: '{name}' ({} space, against its frame 0, \
                 weight {LAYER_WEIGHT}){}",
                lib.bone_count(),
                asset.clips.len(),
                space.name(),
                compressed(compression)
            ),
            bases: (0..layer).collect(),
            layer: Some(layer),
            lib,
            space,
            ik: None,
        })
    }

    /// The plain workload: each instance plays one of a skeleton's own clips (keys on shared
    /// times, [`on_shared_times`]), no retargeting, no layer; what a batched forward-kinematics
    /// script computes (the PyTorch peer's workload, `bench/peer.rs`). `bones` = 67 is the
    /// procedural humanoid, any other size `random_asset(bones)`.
    pub fn plain(bones: usize, compression: Option<&Compression>) -> Result<Self, Error> {
        let (asset, what) = plain_asset(bones)?;
        let mut builder = AnimLibrary::builder(&asset.skeleton);
        builder.compress(compression.cloned());
        builder.add_clips(&asset.clips)?;
        let lib = builder.build();
        let description = format!(
            "{} bones: {what} playing its own {} clips ({SHARED_KEYS} keys each), no layer{}",
            lib.bone_count(),
            lib.clip_count(),
            compressed(compression)
        );
        Ok(Self::every_clip(lib, description, None))
    }

    /// The humanoid's clips on `humanoid_variant(7)` through a character plan (per bone at run
    /// time, or `baked` onto the variant at upload), every instance with feet IK after
    /// retargeting; no layer.
    pub fn character(baked: bool, compression: Option<&Compression>) -> Result<Self, Error> {
        let source = humanoid_asset();
        let target = Asset {
            skeleton: humanoid_variant(VARIANT_SEED),
            clips: Vec::new(),
            nodes: None,
            frame: AssetFrame::Y_UP,
        };
        let plan = RetargetPlan::new(&source, &target, &PlanOptions::default())?;
        let mut builder = AnimLibrary::builder(&target.skeleton);
        builder.compress(compression.cloned());
        if baked {
            builder.add_baked_clips(&source, &plan, &source.clips)?;
        } else {
            let id = builder.add_character_source("humanoid", &source, &plan)?;
            builder.add_clips_from(id, &source.clips)?;
        }
        let lib = builder.build();
        let how = if baked {
            "baked onto it at upload"
        } else {
            "through a character plan at run time"
        };
        let description = format!(
            "{} bones: humanoid_variant(7) playing the humanoid's {} clips {how}, feet IK{}",
            lib.bone_count(),
            lib.clip_count(),
            compressed(compression)
        );
        Ok(Self::every_clip(lib, description, Some(IkWeights::FEET)))
    }

    /// Instances dealt every clip of `lib` in turn, no layer.
    fn every_clip(lib: AnimLibrary, description: String, ik: Option<IkWeights>) -> Self {
        Self {
            description,
            bases: (0..lib.clip_count() as u32).collect(),
            layer: None,
            lib,
            space: AdditiveSpace::Local,
            ik,
        }
    }

    /// Whether instances play an additive layer over their clip.
    pub fn has_layer(&self) -> bool {
        self.layer.is_some()
    }

    pub fn bones(&self) -> usize {
        self.lib.bone_count()
    }

    /// Frame `time` (seconds) of `count` instances into `batch`: instance `i` plays base clip
    /// `i % clips` and the layer, both looping, each at its own phase (a golden-ratio sequence,
    /// as `AnimLibrary::crowd`).
    pub fn batch(&self, count: usize, time: f32, batch: &mut PoseBatch) {
        batch.clear();
        for i in 0..count {
            let clip = self.bases[i % self.bases.len()];
            let phase = (i as f32 * 0.618_034).fract();
            let t = phase * self.lib.clip_duration(clip) + time;
            let mut layers = batch.push_clip(clip, t, true);
            if let Some(ik) = self.ik {
                layers = layers.ik(ik);
            }
            if let Some(layer) = self.layer {
                let u = (phase + 0.5).fract() * self.lib.clip_duration(layer) + time;
                layers.additive(self.space, LAYER_WEIGHT, &[ClipSample::new(layer, u, true)]);
            }
        }
    }
}

/// The plain workload's asset and what it is: the humanoid (`bones` = 67) or
/// `random_asset(bones)`, keys on shared times, without scale channels: under a non-uniform
/// parent scale, UE's transform composition (posegpu's) and a product of matrices (the peer's)
/// differ, so the peer computes the same poses only without them.
pub fn plain_asset(bones: usize) -> Result<(Asset, String), Error> {
    let (asset, what) = if bones == HUMANOID_BONES {
        (humanoid_asset(), "the procedural humanoid".to_string())
    } else {
        let what = format!("random_asset({bones})");
        (random_asset(bones as u64, bones, 4), what)
    };
    let asset = on_shared_times(&asset)?;
    let clips = asset
        .clips
        .iter()
        .map(|clip| {
            let tracks = clip
                .tracks()
                .iter()
                .map(|t| posegpu::BoneTrack {
                    scale: None,
                    ..t.clone()
                })
                .collect();
            Clip::new(clip.name(), &asset.skeleton, tracks)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let what = format!("{what} (no scale keys)");
    Ok((Asset { clips, ..asset }, what))
}

/// A copy of `skeleton` with other proportions: every bone's reference translation scaled by a
/// factor in [0.7, 1.4] and its reference rotation turned by up to 15° (as
/// `procedural::humanoid_variant`), names and hierarchy kept, inverse binds (where the bone has
/// one) matching the new reference pose. Deterministic from `seed`.
pub fn proportioned(skeleton: &Skeleton, seed: u64) -> Result<Skeleton, Error> {
    let mut state = seed;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    };
    let bones = |rest: &[Transform], binds: Option<&[Transform]>| -> Vec<Bone> {
        (0..skeleton.len())
            .map(|i| Bone {
                inverse_bind: binds
                    .filter(|_| skeleton.inverse_bind()[i].is_some())
                    .map(|c| c[i].to_matrix().inverse()),
                ..Bone::new(&skeleton.names()[i], skeleton.parent(i), rest[i])
            })
            .collect()
    };
    let rest: Vec<Transform> = skeleton
        .rest()
        .iter()
        .map(|r| {
            let axis = Vec3::new(next(), next(), next()) * 2.0 - Vec3::ONE;
            let axis = axis.try_normalize().unwrap_or(Vec3::X);
            let tilt = Quat::from_axis_angle(axis, next() * 15f32.to_radians());
            let stretch = 0.7 + 0.7 * next();
            Transform::new(
                r.translation * stretch,
                (r.rotation * tilt).normalize(),
                r.scale,
            )
        })
        .collect();
    let unbound = Skeleton::new(bones(&rest, None))?;
    Skeleton::new(bones(&rest, Some(&unbound.rest_component())))
}

/// Keys per clip of [`on_shared_times`].
pub const SHARED_KEYS: usize = 31;

/// `asset` with every animated channel of every clip resampled (linear) at [`SHARED_KEYS`]
/// times shared by all its bones. `random_asset` gives each channel its own irregular times,
/// so the union of a clip's key times (where a mesh-space additive samples the whole pose)
/// grows with the bone count, and `make_additive`'s memory with its square; shared times keep
/// the bench linear in bones (4,000 bones: tens of MB, not 5 GB).
pub fn on_shared_times(asset: &Asset) -> Result<Asset, Error> {
    let rest = asset.skeleton.rest();
    let clips = asset
        .clips
        .iter()
        .map(|clip| {
            let d = clip.duration();
            let times: Vec<f32> = (0..SHARED_KEYS)
                .map(|k| d * k as f32 / (SHARED_KEYS - 1) as f32)
                .collect();
            let poses: Vec<Vec<Transform>> = times.iter().map(|&t| clip.pose_at(rest, t)).collect();
            let tracks = clip
                .tracks()
                .iter()
                .enumerate()
                .map(|(b, track)| {
                    let (t, p) = (times.as_slice(), poses.as_slice());
                    posegpu::BoneTrack {
                        translation: (track.translation.as_ref())
                            .map(|_| resampled(t, p, b, |x| x.translation)),
                        rotation: (track.rotation.as_ref())
                            .map(|_| resampled(t, p, b, |x| x.rotation)),
                        scale: (track.scale.as_ref()).map(|_| resampled(t, p, b, |x| x.scale)),
                    }
                })
                .collect();
            Clip::new(clip.name(), &asset.skeleton, tracks)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Asset {
        clips,
        ..asset.clone()
    })
}

/// A channel keyed at `times` with bone `b`'s `get` of each pose.
fn resampled<T>(
    times: &[f32],
    poses: &[Vec<Transform>],
    b: usize,
    get: fn(&Transform) -> T,
) -> posegpu::Channel<T> {
    let values = poses.iter().map(|p| get(&p[b])).collect();
    posegpu::Channel::new(times.to_vec(), values, posegpu::Interpolation::Linear)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_times_bound_the_key_times_and_keep_the_poses() {
        // The union of a clip's key times no longer grows with the bones (what made the bench
        // quadratic in them), and the resampled clip passes through the original's poses there.
        let asset = random_asset(3, 300, 2);
        let shared = on_shared_times(&asset).unwrap();
        for (a, b) in asset.clips.iter().zip(&shared.clips) {
            assert!(
                a.key_times().len() > 4 * SHARED_KEYS,
                "the original's union is large"
            );
            assert_eq!(b.key_times().len(), SHARED_KEYS);
            for &t in &b.key_times() {
                let (pa, pb) = (
                    a.pose_at(asset.skeleton.rest(), t),
                    b.pose_at(asset.skeleton.rest(), t),
                );
                for (x, y) in pa.iter().zip(&pb) {
                    assert!((x.translation - y.translation).length() < 1e-5);
                    assert!(x.rotation.dot(y.rotation).abs() > 1.0 - 1e-5);
                }
            }
        }
    }
}
