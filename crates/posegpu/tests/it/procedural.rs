//! The embedded humanoid, its clips, and the random asset generator.

use std::collections::HashSet;

use glam::{Mat4, Quat, Vec4};
use posegpu::procedural::{humanoid, humanoid_asset, humanoid_clips, random_asset};
use posegpu::{
    AnimLibrary, Channel, Clip, ClipSample, CpuEvaluator, Interpolation, Poses, Skeleton,
};

fn channels(clip: &Clip) -> impl Iterator<Item = (usize, Option<ChannelRef<'_>>)> + '_ {
    clip.tracks().iter().enumerate().flat_map(|(bone, t)| {
        [
            (bone, t.translation.as_ref().map(ChannelRef::Vec)),
            (bone, t.rotation.as_ref().map(ChannelRef::Quat)),
            (bone, t.scale.as_ref().map(ChannelRef::Vec)),
        ]
    })
}

/// One channel, whatever its value type, for feature counting.
#[derive(Clone, Copy)]
enum ChannelRef<'a> {
    Vec(&'a Channel<glam::Vec3>),
    Quat(&'a Channel<Quat>),
}

impl ChannelRef<'_> {
    fn times(&self) -> &[f32] {
        match self {
            Self::Vec(c) => &c.times,
            Self::Quat(c) => &c.times,
        }
    }

    fn interpolation(&self) -> Interpolation {
        match self {
            Self::Vec(c) => c.interpolation,
            Self::Quat(c) => c.interpolation,
        }
    }

    /// Values as 4-vectors (translation and scale with w = 0).
    fn values(&self) -> Vec<Vec4> {
        match self {
            Self::Vec(c) => c.values.iter().map(|v| v.extend(0.0)).collect(),
            Self::Quat(c) => c.values.iter().map(|&q| Vec4::from(q)).collect(),
        }
    }
}

fn evaluate(skel: &Skeleton, clips: &[Clip], instances: &[ClipSample]) -> Poses {
    let lib = AnimLibrary::new(skel, clips).unwrap();
    let mut poses = Poses::default();
    CpuEvaluator::new(&lib)
        .evaluate(instances, &mut poses)
        .unwrap();
    poses
}

#[test]
fn humanoid_skeleton_is_well_formed() {
    let skel = humanoid();
    assert_eq!(skel.len(), 67);
    let names: HashSet<&String> = skel.names().iter().collect();
    assert_eq!(names.len(), 67, "bone names are unique");
    for (i, &p) in skel.parents().iter().enumerate() {
        assert!(p < i as i32, "bone {i} is stored after its parent");
    }
    assert_eq!(skel.parents().iter().filter(|&&p| p < 0).count(), 1);
    assert!(skel.depth() >= 8, "depth {}", skel.depth());
    for name in [
        "root",
        "pelvis",
        "head",
        "eye_r",
        "pinky_03_l",
        "thumb_01_r",
        "ball_r",
    ] {
        assert!(skel.find(name).is_some(), "{name}");
    }
    for name in [
        "thigh_twist_01_l",
        "lowerarm_twist_01_r",
        "ik_foot_root",
        "ik_foot_r",
    ] {
        assert!(skel.find(name).is_some(), "{name}");
    }
    let rest = skel.rest_component();
    let height = rest
        .iter()
        .map(|t| t.translation.y)
        .fold(f32::MIN, f32::max);
    assert!((1.6..=2.0).contains(&height), "height {height}");
    let pelvis = rest[skel.find("pelvis").unwrap()].translation.y;
    assert!((0.85..=1.05).contains(&pelvis), "pelvis at {pelvis}");
    // Left is +X (facing +Z).
    let hand_l = rest[skel.find("hand_l").unwrap()].translation;
    let hand_r = rest[skel.find("hand_r").unwrap()].translation;
    assert!(hand_l.x > 0.5 && hand_r.x < -0.5);
    let turned = skel
        .rest()
        .iter()
        .filter(|t| t.rotation.angle_between(Quat::IDENTITY) > 0.5);
    assert!(
        turned.count() >= 4,
        "some rest rotations are not the identity"
    );
    assert!(skel.rest().iter().all(|t| t.scale == glam::Vec3::ONE));
}

#[test]
fn humanoid_rest_pose_skins_to_identity() {
    let skel = humanoid();
    for (i, (cs, ibm)) in skel
        .rest_component()
        .iter()
        .zip(skel.inverse_bind())
        .enumerate()
    {
        let m = cs.to_matrix() * ibm.expect("every bone has an inverse bind matrix");
        assert!(m.abs_diff_eq(Mat4::IDENTITY, 1e-5), "bone {i}: {m}");
    }
}

#[test]
fn humanoid_clips_load_and_loop() {
    let asset = humanoid_asset();
    let skel = &asset.skeleton;
    let names: Vec<&str> = asset.clips.iter().map(Clip::name).collect();
    for want in ["idle", "walk", "run", "wave"] {
        assert!(names.contains(&want), "missing clip {want}");
    }
    assert_eq!(asset.clips, humanoid_clips(skel));
    let lib = AnimLibrary::new(skel, &asset.clips).unwrap();
    let root = skel.find("root").unwrap();
    for (c, clip) in asset.clips.iter().enumerate() {
        assert!(clip.duration() > 0.0, "{}", clip.name());
        for (bone, ch) in channels(clip) {
            let Some(ch) = ch else { continue };
            let values = ch.values();
            let (first, last) = (values[0], values[values.len() - 1]);
            let root_motion = bone == root && matches!(ch, ChannelRef::Vec(_)) && c > 0;
            if root_motion && matches!(clip.name(), "walk" | "run") {
                continue;
            }
            assert!(
                first.abs_diff_eq(last, 1e-6),
                "{} bone {}: first key {first} != last {last}",
                clip.name(),
                skel.names()[bone]
            );
            if values.len() > 1 {
                assert!((ch.times()[values.len() - 1] - clip.duration()).abs() < 1e-6);
            }
        }
        // Sampled: just before the end equals the start, root motion aside.
        let d = clip.duration();
        let instances = [
            ClipSample::new(c as u32, 0.0, true),
            ClipSample::new(c as u32, d - 1e-4, true),
        ];
        let mut poses = Poses::default();
        CpuEvaluator::new(&lib)
            .evaluate(&instances, &mut poses)
            .unwrap();
        for bone in 1..skel.len() {
            let (a, b) = (poses.local(0, bone), poses.local(1, bone));
            assert!(
                a.translation.abs_diff_eq(b.translation, 1e-3),
                "{}",
                clip.name()
            );
            assert!(
                a.rotation.angle_between(b.rotation) < 1e-2,
                "{}",
                clip.name()
            );
            assert!(a.scale.abs_diff_eq(b.scale, 1e-3), "{}", clip.name());
        }
    }
}

#[test]
fn humanoid_clips_exercise_step_scale_and_single_key_paths() {
    let asset = humanoid_asset();
    let all: Vec<ChannelRef> = asset
        .clips
        .iter()
        .flat_map(|c| channels(c).filter_map(|x| x.1))
        .collect();
    assert!(all.iter().any(|c| c.interpolation() == Interpolation::Step));
    assert!(all.iter().any(|c| c.times().len() == 1));
    let scaled = asset
        .clips
        .iter()
        .flat_map(|c| c.tracks())
        .filter_map(|t| t.scale.as_ref());
    assert!(scaled
        .flat_map(|c| &c.values)
        .any(|s| !s.abs_diff_eq(glam::Vec3::ONE, 1e-3)));
    // Unanimated bones have no track at all.
    let idle = asset.clips.iter().find(|c| c.name() == "idle").unwrap();
    assert!(!idle.tracks()[asset.skeleton.find("ik_foot_l").unwrap()].is_animated());
}

#[test]
fn locomotion_moves_forward_with_alternating_feet() {
    let asset = humanoid_asset();
    let skel = &asset.skeleton;
    let (root, foot_l, foot_r) = (
        skel.find("root").unwrap(),
        skel.find("foot_l").unwrap(),
        skel.find("foot_r").unwrap(),
    );
    let (calf_l, calf_r) = (skel.find("calf_l").unwrap(), skel.find("calf_r").unwrap());
    for (name, speed) in [("walk", 1.4), ("run", 3.5)] {
        let c = asset.clips.iter().position(|c| c.name() == name).unwrap();
        let clip = &asset.clips[c];
        let d = clip.duration();
        let keys = clip.tracks()[root]
            .translation
            .as_ref()
            .expect("root motion");
        let first = keys.values[0];
        let last = keys.values[keys.len() - 1];
        assert!(
            (last.z - first.z - speed * d).abs() < 1e-4,
            "{name}: {first} -> {last}"
        );
        assert!((last.x - first.x).abs() < 1e-6 && (last.y - first.y).abs() < 1e-6);
        assert!(
            keys.values.windows(2).all(|w| w[1].z > w[0].z),
            "{name}: steady advance"
        );
        let instances = [
            ClipSample::new(c as u32, 0.25 * d, true),
            ClipSample::new(c as u32, 0.75 * d, true),
        ];
        let poses = evaluate(skel, &asset.clips, &instances);
        let z = |i: usize, bone: usize| poses.component(i, bone).translation.z;
        assert!(
            z(0, foot_l) > z(0, foot_r) + 0.15,
            "{name}: left foot ahead at 0.25"
        );
        assert!(
            z(1, foot_r) > z(1, foot_l) + 0.15,
            "{name}: right foot ahead at 0.75"
        );
        // Feet stay below the knees and near the ground.
        for i in 0..2 {
            for (foot, knee) in [(foot_l, calf_l), (foot_r, calf_r)] {
                let y = poses.component(i, foot).translation.y;
                assert!((-0.05..0.5).contains(&y), "{name}: foot at height {y}");
                assert!(y < poses.component(i, knee).translation.y);
            }
        }
    }
}

#[test]
fn random_asset_is_deterministic_and_valid() {
    for seed in [0, 1, 7, 42, 0xDEAD_BEEF] {
        for bones in [1, 2, 17, 67, 150] {
            let a = random_asset(seed, bones, 3);
            let b = random_asset(seed, bones, 3);
            assert_eq!(a.clips, b.clips, "seed {seed}, {bones} bones");
            assert_eq!(a.skeleton.names(), b.skeleton.names());
            assert_eq!(a.skeleton.parents(), b.skeleton.parents());
            assert_eq!(a.skeleton.rest(), b.skeleton.rest());
            assert_eq!(a.skeleton.len(), bones);
            assert_eq!(a.clips.len(), 3);
            assert!(a.clips.iter().all(|c| c.duration() > 0.0));
            // Rest poses skin to the identity where there is a bind matrix.
            for (cs, ibm) in a
                .skeleton
                .rest_component()
                .iter()
                .zip(a.skeleton.inverse_bind())
            {
                if let Some(ibm) = ibm {
                    let m = cs.to_matrix() * *ibm;
                    assert!(m.abs_diff_eq(Mat4::IDENTITY, 1e-3), "seed {seed}: {m}");
                }
            }
            let instances: Vec<ClipSample> = (0..12)
                .map(|i| ClipSample::new(i % 3, i as f32 * 0.37 - 0.5, i % 2 == 0))
                .collect();
            let poses = evaluate(&a.skeleton, &a.clips, &instances);
            assert!(poses.skinning.iter().flatten().all(|x| x.is_finite()));
        }
    }
    assert_ne!(random_asset(1, 67, 2).clips, random_asset(2, 67, 2).clips);
}

#[test]
fn random_asset_has_every_promised_feature() {
    for seed in [3, 11, 12345] {
        random_asset_features(seed);
    }
    // Several roots in some skeletons.
    let roots = |a: &posegpu::Asset| a.skeleton.parents().iter().filter(|&&p| p < 0).count();
    assert!((0..8).any(|seed| roots(&random_asset(seed, 67, 0)) > 1));
    assert!((0..8).all(|seed| roots(&random_asset(seed, 10, 0)) == 1));
}

fn random_asset_features(seed: u64) {
    let asset = random_asset(seed, 67, 4);
    let all: Vec<Option<ChannelRef>> = asset
        .clips
        .iter()
        .flat_map(|c| channels(c).map(|x| x.1))
        .collect();
    let present: Vec<ChannelRef> = all.iter().flatten().copied().collect();
    let count = |f: &dyn Fn(&ChannelRef) -> bool| present.iter().filter(|c| f(c)).count();
    let absent = all.iter().filter(|c| c.is_none()).count();
    let step = count(&|c| c.interpolation() == Interpolation::Step && c.times().len() > 1);
    let linear = count(&|c| c.interpolation() == Interpolation::Linear && c.times().len() > 1);
    let single = count(&|c| c.times().len() == 1);
    let late_start = count(&|c| c.times()[0] > 0.0);
    let early_end = asset
        .clips
        .iter()
        .flat_map(|clip| channels(clip).filter_map(move |x| Some((clip.duration(), x.1?))))
        .filter(|(d, c)| c.times().len() > 1 && c.times()[c.times().len() - 1] < d - 1e-3)
        .count();
    let uneven = count(&|c| {
        let gaps: Vec<f32> = c.times().windows(2).map(|w| w[1] - w[0]).collect();
        gaps.windows(2)
            .any(|g| (g[0] - g[1]).abs() > 0.01 * g[0].max(g[1]))
    });
    let flips = count(&|c| match c {
        ChannelRef::Quat(q) => q.values.windows(2).any(|w| w[0].dot(w[1]) < 0.0),
        ChannelRef::Vec(_) => false,
    });
    let scaled = asset
        .clips
        .iter()
        .flat_map(|c| c.tracks())
        .filter_map(|t| t.scale.as_ref())
        .filter(|c| {
            c.values
                .iter()
                .any(|s| !s.abs_diff_eq(glam::Vec3::ONE, 1e-3))
        })
        .count();
    let increasing = present
        .iter()
        .all(|c| c.times().windows(2).all(|w| w[1] > w[0]));
    assert!(increasing, "key times strictly increase");
    for (what, n) in [
        ("absent", absent),
        ("STEP", step),
        ("LINEAR", linear),
        ("single-key", single),
        ("first key after 0", late_start),
        ("last key before the end", early_end),
        ("uneven spacing", uneven),
        ("q/-q neighbours", flips),
        ("scale animation", scaled),
    ] {
        assert!(n >= 5, "seed {seed}: only {n} {what} channels");
    }
    let rest = asset.skeleton.rest();
    assert!(
        rest.iter().any(|t| (t.scale.x - t.scale.y).abs() > 0.05),
        "non-uniform rest scale"
    );
    assert!(rest.iter().all(|t| t.scale.min_element() > 0.0));
    assert!(asset.skeleton.inverse_bind().iter().any(Option::is_none));
    assert!(
        asset.skeleton.depth() >= 6,
        "depth {}",
        asset.skeleton.depth()
    );
}
