//! Retargeting from and onto characters with mirrored bones. A mirrored character here is an
//! ordinary one re-expressed: below a chosen bone every world matrix is multiplied on the right
//! by `D = diag(-1, 1, 1)` (the chosen bone's scale turns to `(-sx, sy, sz)`, each bone below
//! it has `D · L · D`: translation x negated, rotation reflected), so its world positions are
//! the ordinary character's, as a Blender rig mirrored by scale. A plan onto (or from) it must
//! put every bone where the plan onto (from) the ordinary character puts it.

use crate::common;

use common::{cpu_eval, gpu, gpu_eval};
use glam::{Quat, Vec3};
use posegpu::component_space;
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::IkWeights;
use posegpu::{
    AnimLibrary, Asset, AssetFrame, Bone, BoneTrack, Channel, Clip, ClipSample, Deviation, Error,
    GpuOptions, Interpolation, Skeleton, Transform,
};

const D: Vec3 = Vec3::new(-1.0, 1.0, 1.0);

/// `D · q · D` as a rotation (`det D = −1`: the axis becomes `−D · axis`).
fn reflect(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

/// Which bones lie at or below one of `tops`: `Some(true)` for a top, `Some(false)` below one.
fn marks(s: &Skeleton, tops: &[&str]) -> Vec<Option<bool>> {
    let mut m: Vec<Option<bool>> = vec![None; s.len()];
    for i in 0..s.len() {
        if tops.contains(&s.names()[i].as_str()) {
            m[i] = Some(true);
        } else if let Some(p) = s.parent(i) {
            m[i] = m[p].map(|_| false);
        }
    }
    m
}

fn mirror_local(t: &Transform, mark: Option<bool>) -> Transform {
    match mark {
        None => *t,
        Some(true) => Transform {
            scale: t.scale * D,
            ..*t
        },
        Some(false) => Transform::new(t.translation * D, reflect(t.rotation), t.scale),
    }
}

/// `s` mirrored below each of `tops` (inverse binds from the new rest pose).
fn mirror_skeleton(s: &Skeleton, tops: &[&str]) -> Skeleton {
    let m = marks(s, tops);
    let rest: Vec<Transform> = (0..s.len())
        .map(|i| mirror_local(&s.rest()[i], m[i]))
        .collect();
    let cs = component_space(s.parents(), &rest);
    let bones = (0..s.len())
        .map(|i| Bone {
            name: s.names()[i].clone(),
            parent: s.parent(i),
            rest: rest[i],
            inverse_bind: Some(cs[i].to_matrix().inverse()),
        })
        .collect();
    Skeleton::new(bones).unwrap()
}

/// `clip` for the mirrored skeleton: its keys mirrored as the rest poses are.
fn mirror_clip(clip: &Clip, skeleton: &Skeleton, m: &[Option<bool>]) -> Clip {
    let tracks = clip
        .tracks()
        .iter()
        .zip(m)
        .map(|(t, &mark)| {
            let mut t: BoneTrack = t.clone();
            match mark {
                None => {}
                Some(true) => {
                    if let Some(c) = &mut t.scale {
                        c.values.iter_mut().for_each(|v| *v *= D);
                    }
                }
                Some(false) => {
                    if let Some(c) = &mut t.translation {
                        c.values.iter_mut().for_each(|v| *v *= D);
                    }
                    if let Some(c) = &mut t.rotation {
                        c.values.iter_mut().for_each(|q| *q = reflect(*q));
                    }
                }
            }
            t
        })
        .collect();
    Clip::new(clip.name(), skeleton, tracks).unwrap()
}

fn asset(skeleton: Skeleton, clips: Vec<Clip>) -> Asset {
    Asset {
        skeleton,
        clips,
        nodes: None,
        frame: AssetFrame::Y_UP,
    }
}

/// The hand and fingers of one side, and the other side's whole arm (mirrored sides).
const SIDES: &[&str] = &["hand_l", "clavicle_r"];

/// The finger tips of both hands (leaves, as ozz's sample character's mirrored joints).
fn leaves(s: &Skeleton) -> Vec<&str> {
    let tips: Vec<&str> = s
        .names()
        .iter()
        .filter(|n| n.contains("_03_"))
        .map(String::as_str)
        .collect();
    assert!(tips.len() >= 10, "{tips:?}");
    assert!(tips
        .iter()
        .all(|t| !s.parents().contains(&(s.find(t).unwrap() as i32))));
    tips
}

fn positions(s: &Skeleton, locals: &[Transform]) -> Vec<Vec3> {
    component_space(s.parents(), locals)
        .iter()
        .map(|t| t.translation)
        .collect()
}

fn assert_same_positions(
    s: &Skeleton,
    tops: &[&str],
    [a, b]: [&[Vec3]; 2],
    tol: f32,
    what: &str,
) -> usize {
    let m = marks(s, tops);
    let mut mirrored = 0;
    for i in 0..s.len() {
        let d = (a[i] - b[i]).length();
        assert!(
            d <= tol,
            "{what}: bone {} ({}mirrored) is {d} away: {} vs {}",
            s.names()[i],
            if m[i].is_some() { "" } else { "not " },
            a[i],
            b[i]
        );
        mirrored += usize::from(m[i].is_some());
    }
    mirrored
}

#[test]
fn the_mirrored_character_is_the_ordinary_one_re_expressed() {
    let plain = posegpu::procedural::humanoid_variant(7);
    for tops in [SIDES.to_vec(), leaves(&plain)] {
        let mirrored = mirror_skeleton(&plain, &tops);
        let n = assert_same_positions(
            &plain,
            &tops,
            [
                &positions(&plain, plain.rest()),
                &positions(&mirrored, mirrored.rest()),
            ],
            1e-5,
            "rest",
        );
        assert!(n >= 10, "{n} mirrored bones");
        assert!(mirrored.rest().iter().any(|r| r.scale.x < 0.0));
    }
}

#[test]
fn a_plan_onto_mirrored_leaves_places_them_as_onto_the_ordinary_character() {
    let plain = posegpu::procedural::humanoid_variant(7);
    onto_mirrored(&leaves(&plain));
}

#[test]
fn a_plan_from_mirrored_leaves_reads_them_as_the_ordinary_character() {
    let source = posegpu::procedural::humanoid_asset();
    from_mirrored(&leaves(&source.skeleton));
}

#[test]
fn a_source_clip_that_changes_a_reflection_is_a_typed_error() {
    let source = posegpu::procedural::humanoid_asset();
    let m = marks(&source.skeleton, SIDES);
    let skeleton = mirror_skeleton(&source.skeleton, SIDES);
    let target = asset(posegpu::procedural::humanoid_variant(7), vec![]);
    let mirrored = asset(skeleton.clone(), vec![]);
    let plan = RetargetPlan::new(&mirrored, &target, &PlanOptions::default()).unwrap();
    let clip = mirror_clip(&source.clips[0], &skeleton, &m);
    plan.check_clip(&clip).unwrap();
    // The mirrored hand's reflection taken away at one key (a key of the ordinary scale).
    let hand = skeleton.find("hand_l").unwrap();
    let mut tracks = clip.tracks().to_vec();
    tracks[hand].scale = Some(Channel::new(
        vec![0.0, clip.duration()],
        vec![D, Vec3::ONE],
        Interpolation::Linear,
    ));
    let flipped = Clip::new("flipped", &skeleton, tracks).unwrap();
    let mut lib = AnimLibrary::builder(&target.skeleton);
    let id = lib
        .add_character_source("mirrored", &mirrored, &plan)
        .unwrap();
    for err in [
        plan.check_clip(&flipped).unwrap_err(),
        lib.add_clips_from(id, std::slice::from_ref(&flipped))
            .err()
            .unwrap(),
    ] {
        assert!(
            matches!(&err, Error::MirroredRetarget { what, bone } if what.contains("flipped") && bone == "hand_l"),
            "{err}"
        );
        assert!(err.to_string().contains("reflection"), "{err}");
    }
    // A mirrored leaf may change as it likes.
    let tip = skeleton.find(leaves(&skeleton)[0]).unwrap();
    let mut tracks = clip.tracks().to_vec();
    tracks[tip].scale = Some(Channel::new(vec![0.0], vec![D], Interpolation::Linear));
    plan.check_clip(&Clip::new("tip", &skeleton, tracks).unwrap())
        .unwrap();
}

#[test]
fn a_plan_onto_a_mirrored_side_places_its_bones_as_onto_the_ordinary_one() {
    onto_mirrored(SIDES);
}

#[test]
fn a_plan_from_a_mirrored_side_reads_it_as_the_ordinary_one() {
    from_mirrored(SIDES);
}

fn onto_mirrored(tops: &[&str]) {
    let source = posegpu::procedural::humanoid_asset();
    let plain = posegpu::procedural::humanoid_variant(7);
    let mirrored = mirror_skeleton(&plain, tops);
    let opts = PlanOptions::default();
    let onto_plain = RetargetPlan::new(&source, &asset(plain.clone(), vec![]), &opts).unwrap();
    let onto_mirrored =
        RetargetPlan::new(&source, &asset(mirrored.clone(), vec![]), &opts).unwrap();
    let h = onto_plain.target().body.hip_height;
    for clip in &source.clips {
        for k in 0..8 {
            let t = clip.duration() * k as f32 / 7.0;
            let src = clip.pose_at(source.skeleton.rest(), t);
            let what = format!("{} at {t}", clip.name());
            let a = positions(&plain, &onto_plain.apply(&src));
            let b = positions(&mirrored, &onto_mirrored.apply(&src));
            assert_same_positions(&plain, tops, [&a, &b], 1e-3 * h, &what);
            // IK after retargeting, the left hand's goal in the (mirrored) right hand's frame.
            let a = positions(&plain, &onto_plain.apply_with_ik(&src, IkWeights::ALL));
            let b = positions(
                &mirrored,
                &onto_mirrored.apply_with_ik(&src, IkWeights::ALL),
            );
            assert_same_positions(&plain, tops, [&a, &b], 1e-3 * h, &format!("IK: {what}"));
        }
    }
    // The GPU runs the mirrored plan as the CPU twin does.
    let Some(ctx) = gpu() else { return };
    let mut builder = AnimLibrary::builder(&mirrored);
    let id = builder
        .add_character_source("humanoid", &source, &onto_mirrored)
        .unwrap();
    builder.add_clips_from(id, &source.clips).unwrap();
    let lib = builder.build();
    let instances: Vec<ClipSample> = (0..source.clips.len())
        .map(|c| ClipSample::new(c as u32, 0.3, true))
        .collect();
    let cpu = cpu_eval(&lib, &instances);
    let out = gpu_eval(&ctx, &lib, &instances, &GpuOptions::default());
    let d = Deviation::between(&out, &cpu).relative(mirrored.extent());
    assert!(d <= common::TOLERANCE, "GPU vs CPU {d:e}");
}

fn from_mirrored(tops: &[&str]) {
    let source = posegpu::procedural::humanoid_asset();
    let m = marks(&source.skeleton, tops);
    let mirrored_skeleton = mirror_skeleton(&source.skeleton, tops);
    let clips = source
        .clips
        .iter()
        .map(|c| mirror_clip(c, &mirrored_skeleton, &m))
        .collect();
    let mirrored = asset(mirrored_skeleton, clips);
    let target_skeleton = posegpu::procedural::humanoid_variant(7);
    let target = asset(target_skeleton.clone(), vec![]);
    let opts = PlanOptions::default();
    let from_plain = RetargetPlan::new(&source, &target, &opts).unwrap();
    let from_mirrored = RetargetPlan::new(&mirrored, &target, &opts).unwrap();
    let h = from_plain.target().body.hip_height;
    for (clip, mclip) in source.clips.iter().zip(&mirrored.clips) {
        for k in 0..8 {
            let t = clip.duration() * k as f32 / 7.0;
            // The mirrored source's pose is the plain one's, re-expressed. Checked without the
            // breathing chest's non-uniform scale (1.2%): under UE's matrix path it shears the
            // mirrored frames below it, which TRS does not (up to 5e-4 m on the right arm); a
            // plan reads the mirrored side as its unmirrored twin, the plain character.
            let src = clip.pose_at(source.skeleton.rest(), t);
            let msrc = mclip.pose_at(mirrored.skeleton.rest(), t);
            let unscaled = |pose: &[Transform], rest: &[Transform]| -> Vec<Transform> {
                pose.iter()
                    .zip(rest)
                    .map(|(p, r)| Transform {
                        scale: r.scale,
                        ..*p
                    })
                    .collect()
            };
            let (ps, pm) = (
                positions(&source.skeleton, &unscaled(&src, source.skeleton.rest())),
                positions(
                    &mirrored.skeleton,
                    &unscaled(&msrc, mirrored.skeleton.rest()),
                ),
            );
            assert_same_positions(&source.skeleton, tops, [&ps, &pm], 1e-4, "source");
            let a = positions(&target_skeleton, &from_plain.apply(&src));
            let b = positions(&target_skeleton, &from_mirrored.apply(&msrc));
            let what = format!("{} at {t}", clip.name());
            assert_same_positions(&target_skeleton, tops, [&a, &b], 1e-3 * h, &what);
        }
    }
    // The GPU reads the mirrored source as the CPU twin does.
    let Some(ctx) = gpu() else { return };
    let mut builder = AnimLibrary::builder(&target_skeleton);
    let id = builder
        .add_character_source("mirrored", &mirrored, &from_mirrored)
        .unwrap();
    builder.add_clips_from(id, &mirrored.clips).unwrap();
    let lib = builder.build();
    let instances: Vec<ClipSample> = (0..mirrored.clips.len())
        .map(|c| ClipSample::new(c as u32, 0.3, true))
        .collect();
    let cpu = cpu_eval(&lib, &instances);
    let out = gpu_eval(&ctx, &lib, &instances, &GpuOptions::default());
    let d = Deviation::between(&out, &cpu).relative(target_skeleton.extent());
    assert!(d <= common::TOLERANCE, "GPU vs CPU {d:e}");
}
