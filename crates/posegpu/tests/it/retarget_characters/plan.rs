//! The retarget plan: exactness (a character onto itself, UE's RemapTracksToNewSkeleton
//! offsets with alignment off), chains of different lengths and twist shares, extra source
//! bones, IK-style targets, units and up axes, the path limit, baking and the report.

use glam::{Quat, Vec3};
use posegpu::retarget::quality::frame_times;
use posegpu::retarget::{
    bake_clip, remap_clip, BoneKind, BoneMapping, Character, PlanOptions, RetargetPlan, Rig, Side,
};
use posegpu::{Bone, Clip, Error, Skeleton, Transform};

use crate::retarget_characters::data::*;
use crate::retarget_characters::recognition::y_up;

fn angle(a: Quat, b: Quat) -> f32 {
    posegpu::math::angle_between(a, b)
}

fn sample_pose(skeleton: &Skeleton, clip: &Clip, t: f32) -> Vec<Transform> {
    clip.pose_at(skeleton.rest(), t)
}

fn component_pose(skeleton: &Skeleton, locals: &[Transform]) -> Vec<Transform> {
    posegpu::component_space(skeleton.parents(), locals)
}

#[test]
fn a_character_onto_itself_is_the_identity() {
    for (file, clip) in [
        (KNIGHT, "Walking_A"),
        (UAL, "Jog_Fwd_Loop"),
        (MECH_STAN, "Walk"),
    ] {
        let c = asset(file);
        let plan = plan(file, file);
        assert!(
            angle(plan.frame_rotation(), Quat::IDENTITY) < 1e-5
                && (plan.hip_height_ratio() - 1.0).abs() < 1e-6
        );
        let clip = crate::retarget_characters::data::clip(&c, Some(clip));
        let h = plan.target().body.hip_height;
        for t in frame_times(clip, 12) {
            let src = sample_pose(&c.skeleton, clip, t);
            let out = plan.apply(&src);
            let cs_s = component_pose(&c.skeleton, &src);
            let cs_t = component_pose(&c.skeleton, &out);
            for (b, info) in plan.bones().iter().enumerate() {
                if info.source == Some(b) {
                    assert!(
                        angle(cs_s[b].rotation, cs_t[b].rotation) < 1e-3,
                        "{file} bone {b}"
                    );
                    assert!(
                        (cs_s[b].translation - cs_t[b].translation).length() < 1e-3 * h,
                        "{file} bone {} at {t}: {:?} vs {:?}",
                        c.skeleton.names()[b],
                        cs_s[b].translation,
                        cs_t[b].translation
                    );
                }
            }
        }
    }
}

/// Side `side` of `plan` (source 0, target 1) as the plan measured it (its bind pose, IK-style
/// feet where the shins carry them).
fn measured(plan: &RetargetPlan, side: usize) -> Skeleton {
    let names = if side == 0 {
        asset(MECH_MIKE).skeleton.clone()
    } else {
        asset(MECH_STAN).skeleton.clone()
    };
    let bones = (0..names.len())
        .map(|b| {
            Bone::new(
                names.names()[b].clone(),
                names.parent(b),
                if side == 0 {
                    plan.measured_source()[b]
                } else {
                    plan.measured_target()[b]
                },
            )
        })
        .collect();
    Skeleton::new(bones).unwrap()
}

#[test]
fn alignment_off_reproduces_remap_tracks_to_new_skeleton() {
    // Mech_Mike → Mech_Stan: one tool, the same names; with rest alignment off the plan's
    // component rotations are UE's RemapTracksToNewSkeleton's (AnimCS ⊗ OldRefCS⁻¹ ⊗ NewRefCS),
    // both measured from the bind poses (their nodes are posed away from them).
    let (s, t) = (asset(MECH_MIKE), asset(MECH_STAN));
    let opts = PlanOptions {
        align_rest: false,
        ..Default::default()
    };
    let plan = RetargetPlan::new(&s, &t, &opts).unwrap();
    assert!(
        angle(plan.frame_rotation(), Quat::IDENTITY) < 1e-5,
        "G = {:?}",
        plan.frame_rotation()
    );
    let (ss, ts) = (&s.skeleton, &t.skeleton);
    let mapping = BoneMapping::new(ss, ts, &Rig::default()).unwrap();
    let mut compared = 0;
    let mut worst = 0.0f32;
    for clip in s
        .clips
        .iter()
        .filter(|c| ["Walk", "Punch", "Jump"].contains(&c.name()))
    {
        let ue = remap_clip(clip, &measured(&plan, 0), &measured(&plan, 1), &mapping).unwrap();
        for time in frame_times(clip, 20) {
            let ue_locals = sample_pose(ts, &ue, time);
            let ue_cs = component_pose(ts, &ue_locals);
            let ours = component_pose(ts, &plan.apply(&sample_pose(ss, clip, time)));
            for (b, info) in plan.bones().iter().enumerate() {
                let Some(a) = info.source else { continue };
                assert_eq!(mapping.source_of(b), Some(a), "{}", ts.names()[b]);
                let e = angle(ue_cs[b].rotation, ours[b].rotation);
                worst = worst.max(e);
                compared += 1;
            }
        }
    }
    assert!(compared > 1000);
    assert!(worst < 2e-4, "worst rotation difference {worst} rad");
}

/// A Y-up humanoid with `spine` bones between hips and chest, `neck` bones between chest and
/// head, and `twist` forearm segments; bone lengths sum to the same torso.
fn chain_humanoid(spine: usize, neck: usize, twist: usize) -> Skeleton {
    let t = |x: f32, y: f32| Transform::new(Vec3::new(x, y, 0.0), Quat::IDENTITY, Vec3::ONE);
    let mut bones = vec![Bone::new("hips", None, t(0.0, 1.0))];
    let mut last = 0;
    for i in 0..spine {
        bones.push(Bone::new(
            format!("spine_{:02}", i + 1),
            Some(last),
            t(0.0, if i == 0 { 0.1 } else { 0.3 / spine as f32 }),
        ));
        last = bones.len() - 1;
    }
    bones.push(Bone::new("chest", Some(last), t(0.0, 0.3 / spine as f32)));
    let chest = bones.len() - 1;
    last = chest;
    for i in 0..neck {
        bones.push(Bone::new(
            format!("neck_{:02}", i + 1),
            Some(last),
            t(0.0, if i == 0 { 0.15 } else { 0.1 / neck as f32 }),
        ));
        last = bones.len() - 1;
    }
    bones.push(Bone::new(
        "head",
        Some(last),
        t(0.0, if neck == 0 { 0.15 } else { 0.1 / neck as f32 }),
    ));
    for (side, sx) in [("l", 1.0f32), ("r", -1.0)] {
        bones.push(Bone::new(
            format!("clavicle_{side}"),
            Some(chest),
            t(0.03 * sx, 0.1),
        ));
        let c = bones.len() - 1;
        bones.push(Bone::new(
            format!("upperarm_{side}"),
            Some(c),
            t(0.12 * sx, 0.0),
        ));
        let u = bones.len() - 1;
        bones.push(Bone::new(
            format!("lowerarm_{side}"),
            Some(u),
            t(0.28 * sx, 0.0),
        ));
        let mut f = bones.len() - 1;
        for k in 0..twist {
            bones.push(Bone::new(
                format!("lowerarm_seg{}_{side}", k + 1),
                Some(f),
                t(0.25 / (twist + 1) as f32 * sx, 0.0),
            ));
            f = bones.len() - 1;
        }
        bones.push(Bone::new(
            format!("hand_{side}"),
            Some(f),
            t(0.25 / (twist + 1) as f32 * sx, 0.0),
        ));
        bones.push(Bone::new(
            format!("thigh_{side}"),
            Some(0),
            t(0.1 * sx, -0.05),
        ));
        let th = bones.len() - 1;
        bones.push(Bone::new(format!("calf_{side}"), Some(th), t(0.0, -0.45)));
        let ca = bones.len() - 1;
        bones.push(Bone::new(format!("foot_{side}"), Some(ca), t(0.0, -0.42)));
    }
    Skeleton::new(bones).unwrap()
}

/// The default plan between two Y-up skeletons without clips.
fn plan_between(source: &Skeleton, target: &Skeleton) -> Result<RetargetPlan, Error> {
    RetargetPlan::new(
        &y_up(source.clone()),
        &y_up(target.clone()),
        &PlanOptions::default(),
    )
}

#[test]
fn chains_of_different_lengths_keep_their_ends() {
    // A 2-bone spine (+ chest) with one neck bone drives a 4-bone spine with two neck bones
    // and a twist segment in each forearm.
    let src = chain_humanoid(2, 1, 0);
    let tgt = chain_humanoid(4, 2, 1);
    let plan = plan_between(&src, &tgt).unwrap();
    let shares = plan
        .bones()
        .iter()
        .filter(|i| i.kind == BoneKind::ChainShare)
        .count();
    assert!(shares >= 3, "{shares} chain shares");
    // Bend the source's spine, nod its head, twist its left hand about the forearm.
    let mut pose = src.rest().to_vec();
    let s = |n: &str| src.find(n).unwrap();
    pose[s("spine_01")].rotation = Quat::from_rotation_x(0.35);
    pose[s("spine_02")].rotation = Quat::from_rotation_x(0.25) * Quat::from_rotation_z(0.1);
    pose[s("chest")].rotation = Quat::from_rotation_y(0.3);
    pose[s("head")].rotation = Quat::from_rotation_x(-0.4);
    pose[s("hand_l")].rotation = Quat::from_rotation_x(1.2);
    let out = plan.apply(&pose);
    let (s_cs, s_ref) = (component_pose(&src, &pose), src.rest_component());
    let (t_cs, t_ref) = (
        component_pose(&tgt, &out),
        component_pose(&tgt, plan.reference()),
    );
    let g = plan.frame_rotation();
    // Chain ends (chest, head, hands) turn exactly as the source's do from the rest pose.
    for (sn, tn) in [
        ("chest", "chest"),
        ("head", "head"),
        ("hand_l", "hand_l"),
        ("neck_01", "neck_01"),
    ] {
        let (a, b) = (s(sn), tgt.find(tn).unwrap());
        let want = g * s_cs[a].rotation * s_ref[a].rotation.inverse() * g.inverse();
        let have = t_cs[b].rotation * t_ref[b].rotation.inverse();
        assert!(angle(want, have) < 1e-4, "{tn}: {}", angle(want, have));
    }
    // The extra spine bones take shares: each turns, none by the whole.
    for n in ["spine_02", "spine_04", "neck_02"] {
        let b = tgt.find(n).unwrap();
        assert_eq!(plan.bones()[b].kind, BoneKind::ChainShare, "{n}");
        let turned = angle(out[b].rotation, plan.reference()[b].rotation);
        assert!(turned > 0.02 && turned < 0.5, "{n} turned {turned}");
    }
    // The twist segment takes a share of the hand's twist, about the forearm only: the forearm
    // keeps its direction and the segment does not bend it.
    let seg = tgt.find("lowerarm_seg1_l").unwrap();
    assert_eq!(plan.bones()[seg].kind, BoneKind::ChainShare);
    let local = out[seg].rotation * plan.reference()[seg].rotation.inverse();
    let (axis, a) = local.to_axis_angle();
    assert!((a - 0.6).abs() < 0.05, "twist share {a}");
    assert!(axis.abs().dot(Vec3::X) > 0.999, "twist axis {axis:?}");
    let fore = tgt.find("lowerarm_l").unwrap();
    let hand = tgt.find("hand_l").unwrap();
    let d_t = (t_cs[hand].translation - t_cs[fore].translation).normalize();
    let d_s = g * (s_cs[s("hand_l")].translation - s_cs[s("lowerarm_l")].translation).normalize();
    assert!(d_t.dot(d_s) > 1.0 - 1e-6);
}

#[test]
fn extra_source_bones_are_composed_and_swung() {
    // Reverse: the 4-bone spine with two neck bones drives the short one; the short target's
    // spine directions follow the source's joints (swings) and its head turns exactly.
    let src = chain_humanoid(4, 2, 0);
    let tgt = chain_humanoid(2, 1, 0);
    let plan = plan_between(&src, &tgt).unwrap();
    let mut pose = src.rest().to_vec();
    for (i, n) in [
        "spine_01", "spine_02", "spine_03", "spine_04", "chest", "neck_01", "neck_02",
    ]
    .iter()
    .enumerate()
    {
        pose[src.find(n).unwrap()].rotation = Quat::from_rotation_x(0.12 + 0.03 * i as f32);
    }
    let out = plan.apply(&pose);
    let s_cs = component_pose(&src, &pose);
    let t_cs = component_pose(&tgt, &out);
    let g = plan.frame_rotation();
    let dir =
        |cs: &[Transform], a: usize, b: usize| (cs[b].translation - cs[a].translation).normalize();
    // The neck (one bone) points from the neck's base to the head as the source's two do.
    let (sn, th_) = (src.find("neck_01").unwrap(), src.find("head").unwrap());
    let (tn, tth) = (tgt.find("neck_01").unwrap(), tgt.find("head").unwrap());
    let e = (g * dir(&s_cs, sn, th_))
        .dot(dir(&t_cs, tn, tth))
        .clamp(-1.0, 1.0)
        .acos();
    assert!(e < 1e-3, "neck direction off by {e}");
    let ref_s = src.rest_component();
    let ref_t = component_pose(&tgt, plan.reference());
    let want = g * s_cs[th_].rotation * ref_s[th_].rotation.inverse() * g.inverse();
    let have = t_cs[tth].rotation * ref_t[tth].rotation.inverse();
    assert!(angle(want, have) < 1e-4);
}

#[test]
fn paths_longer_than_the_limit_are_refused() {
    // Nine helper joints between the source's thigh and shin.
    let t = |x: f32, y: f32| Transform::new(Vec3::new(x, y, 0.0), Quat::IDENTITY, Vec3::ONE);
    let base = chain_humanoid(2, 1, 0);
    let mut bones: Vec<Bone> = (0..base.len())
        .map(|i| Bone::new(base.names()[i].clone(), base.parent(i), base.rest()[i]))
        .collect();
    let thigh = base.find("thigh_l").unwrap();
    let calf = base.find("calf_l").unwrap();
    let mut last = thigh;
    for k in 0..9 {
        bones.push(Bone::new(
            format!("__helper{k}"),
            Some(last),
            t(0.0, -0.45 / 10.0),
        ));
        last = bones.len() - 1;
    }
    bones[calf].parent = Some(last);
    bones[calf].rest = t(0.0, -0.45 / 10.0);
    let src = Skeleton::from_unordered(bones).unwrap();
    let tgt = chain_humanoid(2, 1, 0);
    let err = plan_between(&src, &tgt).unwrap_err();
    assert!(
        matches!(&err, Error::RetargetPath { bone, len: 10, limit: 8, .. } if bone == "calf_l"),
        "{err}"
    );
}

#[test]
fn ik_style_target_gets_its_feet_where_the_source_feet_are() {
    // CMU's walk on Mech_Stan, whose Foot.L/R are skeleton roots (IK targets): each foot
    // moves as the source's ankle does, scaled by k, carried by G; its height above the floor
    // follows the source's ankle lift.
    let (s, t) = (asset(CMU_WALK), asset(MECH_STAN));
    let plan = plan(CMU_WALK, MECH_STAN);
    let (ss, ts) = (&s.skeleton, &t.skeleton);
    let clip = &s.clips[0];
    let (g, k) = (plan.frame_rotation(), plan.hip_height_ratio());
    let (sf, tf) = (&plan.source().body, &plan.target().body);
    let times = frame_times(clip, 60);
    let mut worst_move = 0.0f32;
    let mut worst_lift = 0.0f32;
    for side in Side::BOTH {
        let sa = plan.source().humanoid.side(side).foot;
        let tb = plan.target().humanoid.side(side).foot;
        assert_eq!(ts.parent(tb), None);
        assert!(plan.bones()[tb].driven);
        let first_s = component_pose(ss, &sample_pose(ss, clip, times[0]));
        let first_t = component_pose(ts, &plan.apply(&sample_pose(ss, clip, times[0])));
        for &time in &times {
            let src = sample_pose(ss, clip, time);
            let cs_s = component_pose(ss, &src);
            let cs_t = component_pose(ts, &plan.apply(&src));
            let ds = sf.horizontal(cs_s[sa].translation - first_s[sa].translation);
            let dt = tf.horizontal(cs_t[tb].translation - first_t[tb].translation);
            worst_move = worst_move.max((k * (g * ds) - dt).length() / tf.hip_height);
            let lift_s = (sf.height(cs_s[sa].translation)
                - (ss.rest_component()[sa].translation.dot(sf.up) - sf.rest_ground))
                / sf.hip_height;
            let lift_t = (tf.height(cs_t[tb].translation)
                - (ts.rest_component()[tb].translation.dot(tf.up) - tf.rest_ground))
                / tf.hip_height;
            worst_lift = worst_lift.max((lift_s - lift_t).abs());
        }
    }
    // The rest offsets (Mech's stance is four times wider, its ankles lower) turn with each
    // foot, so the match is close, not exact.
    assert!(
        worst_move < 0.06,
        "feet travel off by {worst_move} hip heights"
    );
    assert!(
        worst_lift < 0.06,
        "feet heights off by {worst_lift} hip heights"
    );
}

/// cmu_walk_delfem2 rewritten Z-up (x, y, z) → (x, −z, y) and in other units (× `scale`).
fn bvh_z_up(text: &str, scale: f32) -> String {
    let mut out = String::new();
    let mut channel_map: Vec<(bool, f32)> = Vec::new(); // per channel: (negate, scale)
    let mut in_motion = false;
    let mut frames_seen = 0;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if in_motion {
            if frames_seen < 2 {
                frames_seen += 1;
                out.push_str(line);
                out.push('\n');
                continue;
            }
            let vals: Vec<String> = words
                .iter()
                .zip(&channel_map)
                .map(|(w, &(neg, s))| {
                    let v: f32 = w.parse().unwrap();
                    format!("{}", if neg { -v } else { v } * s)
                })
                .collect();
            out.push_str(&vals.join(" "));
            out.push('\n');
            continue;
        }
        match words.first().copied() {
            Some("OFFSET") => {
                let v: Vec<f32> = words[1..4].iter().map(|w| w.parse().unwrap()).collect();
                out.push_str(&format!(
                    "OFFSET {} {} {}\n",
                    v[0] * scale,
                    -v[2] * scale,
                    v[1] * scale
                ));
            }
            Some("CHANNELS") => {
                let mut names = Vec::new();
                for w in &words[2..] {
                    let (name, neg, s) = match *w {
                        "Xposition" => ("Xposition", false, scale),
                        "Yposition" => ("Zposition", false, scale),
                        "Zposition" => ("Yposition", true, scale),
                        "Xrotation" => ("Xrotation", false, 1.0),
                        "Yrotation" => ("Zrotation", false, 1.0),
                        "Zrotation" => ("Yrotation", true, 1.0),
                        other => panic!("channel {other}"),
                    };
                    names.push(name);
                    channel_map.push((neg, s));
                }
                out.push_str(&format!("CHANNELS {} {}\n", words[1], names.join(" ")));
            }
            Some("MOTION") => {
                in_motion = true;
                out.push_str(line);
                out.push('\n');
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn z_up_centimetres_and_y_up_inches_give_one_result() {
    let text = std::fs::read_to_string(crate::common::anim_data().join(CMU_WALK)).unwrap();
    let z_up = bvh_z_up(&text, 2.54);
    let rotated = posegpu::import::parse_bvh(&z_up, std::path::Path::new("walk_z_up.bvh")).unwrap();
    let rotated_char = Character::measure(&rotated).unwrap();
    assert!(rotated_char.humanoid.up.dot(Vec3::Z) > 0.999);
    let original = asset(CMU_WALK);
    let original_char = Character::measure(&original).unwrap();
    assert!((rotated_char.body.hip_height / original_char.body.hip_height - 2.54).abs() < 1e-3);
    for target in [SUPERHERO, MECH_STAN, UAL] {
        let t = asset(target);
        let a = RetargetPlan::new(&original, &t, &PlanOptions::default()).unwrap();
        let b = RetargetPlan::new(&rotated, &t, &PlanOptions::default()).unwrap();
        let clip_a = &original.clips[0];
        let clip_b = &rotated.clips[0];
        for time in frame_times(clip_a, 25) {
            let out_a = a.apply(&sample_pose(&original.skeleton, clip_a, time));
            let out_b = b.apply(&sample_pose(&rotated.skeleton, clip_b, time));
            for (i, (x, y)) in out_a.iter().zip(&out_b).enumerate() {
                assert!(
                    angle(x.rotation, y.rotation) < 2e-3,
                    "{target} bone {i} at {time}"
                );
                assert!(
                    (x.translation - y.translation).length() < 2e-3 * a.target().body.hip_height,
                    "{target} bone {i} at {time}: {:?} vs {:?}",
                    x.translation,
                    y.translation
                );
            }
        }
    }
}

#[test]
fn a_baked_clip_plays_the_plan_on_the_target() {
    // Offline: the baked clip, sampled on the target at the source's key times, is the plan's
    // pose; bones that never move get no keys.
    let (s, t) = (asset(ZOMBIE), asset(SUPERHERO));
    let plan = plan(ZOMBIE, SUPERHERO);
    let clip = &s.clips[0];
    let baked = bake_clip(&plan, &s, clip, &t.skeleton, IkWeights::NONE).unwrap();
    assert_eq!(baked.name(), clip.name());
    assert!((baked.duration() - clip.duration()).abs() < 1e-6);
    let extent = t.skeleton.extent();
    for time in frame_times(clip, 30) {
        let want = plan.apply(&sample_pose(&s.skeleton, clip, time));
        let have = sample_pose(&t.skeleton, &baked, time);
        for (b, (w, h)) in want.iter().zip(&have).enumerate() {
            assert!(angle(w.rotation, h.rotation) < 1e-5, "bone {b} at {time}");
            assert!(
                (w.translation - h.translation).length() < 1e-5 * extent,
                "bone {b}"
            );
        }
    }
    let still = plan
        .bones()
        .iter()
        .zip(baked.tracks())
        .filter(|(i, track)| i.kind == BoneKind::Reference && !track.is_animated())
        .count();
    assert!(still > 0, "bones without a counterpart get no keys");
    // Additive clips, and clips of another skeleton, are refused.
    let additive = clip.clone().with_additive(posegpu::AdditiveSpace::Local);
    let err = bake_clip(&plan, &s, &additive, &t.skeleton, IkWeights::NONE).unwrap_err();
    assert!(matches!(err, Error::Additive { .. }), "{err}");
    let err = bake_clip(&plan, &s, clip, &asset(KNIGHT).skeleton, IkWeights::NONE).unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
}

#[test]
fn the_report_names_every_target_bone() {
    // What `posegpu info TARGET --against SOURCE` prints: a line per target bone with its
    // counterpart, kind and reason; roles with their reasons per bone.
    let (s, t) = (asset(CMU_WALK), asset(MECH_STAN));
    let plan = plan(CMU_WALK, MECH_STAN);
    let text = plan.describe(&s.skeleton, &t.skeleton);
    assert_eq!(text.lines().count(), t.skeleton.len() + 1, "{text}");
    let foot = text.lines().find(|l| l.contains(" Foot.L ")).unwrap();
    assert!(
        foot.contains("LeftFoot") && foot.contains("mapped pos"),
        "{foot}"
    );
    let roles = plan.target().humanoid.describe(&t.skeleton);
    assert!(roles.contains("IK target"), "{roles}");
    // A bone_map entry pairs what roles do not, and names unknown bones.
    let mut options = PlanOptions::default();
    options
        .bone_map
        .insert("PoleTarget.L".into(), "LeftFoot".into());
    let mapped = RetargetPlan::new(&s, &t, &options).unwrap();
    let pole = t.skeleton.find("PoleTarget.L").unwrap();
    assert_eq!(mapped.bones()[pole].source, s.skeleton.find("LeftFoot"));
    options.bone_map.insert("nope".into(), "LeftFoot".into());
    let err = RetargetPlan::new(&s, &t, &options).unwrap_err();
    assert!(matches!(err, Error::UnknownBone { .. }), "{err}");
}

#[test]
fn rest_alignment_keeps_wide_hips_level() {
    // Aligning the pelvis → neck line turns the hips about the hip line only: a roll would put
    // one hip joint of a wide-hipped character (the Knight's and Mech_Stan's hips are 0.7 of
    // their hip height wide) well above the other, and one foot with it.
    for target in [KNIGHT, MECH_STAN, SUPERHERO] {
        let t = asset(target);
        let plan = plan(CMU_WALK, target);
        let (h, up) = (&plan.target().humanoid, plan.target().body.up);
        let roll = |cs: &[Transform]| {
            let across = cs[h.right.thigh].translation - cs[h.left.thigh].translation;
            across.normalize().dot(up).asin().to_degrees()
        };
        // Measured in the pose the plan measures from (Mech_Stan's bind pose).
        let rest = roll(&component_pose(&t.skeleton, plan.measured_target()));
        let aligned = roll(&component_pose(&t.skeleton, plan.reference()));
        assert!(
            (aligned - rest).abs() < 0.01,
            "{target}: the hips rolled from {rest:.3}° to {aligned:.3}°"
        );
        // The line itself still turns where the source's leans (pitch).
        let off = RetargetPlan::new(
            &asset(CMU_WALK),
            &t,
            &PlanOptions {
                align_rest: false,
                ..PlanOptions::default()
            },
        )
        .unwrap();
        let hips = h.hips;
        let turned = angle(
            plan.reference()[hips].rotation,
            off.reference()[hips].rotation,
        );
        assert!(
            turned.to_degrees() > 1.0,
            "{target}: the hips did not turn ({turned} rad)"
        );
    }
}
