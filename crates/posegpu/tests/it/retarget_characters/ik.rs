//! IK after retargeting: the GPU IK stage against its CPU twin (single clips, blends, layers,
//! carried chains, hands), the CPU stage against `RetargetPlan::apply_with_ik`, and what a
//! user sees: feet on the ground where the source's are, an IK-style leg reaching its foot,
//! the left hand on the right hand's grip, weights that scale it all and an instance without
//! IK left as it was.

use posegpu::component_space;
use posegpu::playback::{Agent, Player};
use posegpu::retarget::quality;
use posegpu::{
    AdditiveSpace, AnimLibrary, ClipSample, CpuEvaluator, Crowd, Deviation, Error, GpuCrowd,
    GpuOptions, IkWeights, PoseBatch, Poses, RootLock, RootMotionAxes, Transform,
};

use crate::common::{self, assert_batch_gpu_matches_cpu};
use crate::retarget_characters::data::*;

/// Instances over the clip's range with IK weights `w`: single clips, blends of two times
/// (one of weight zero), and a local additive layer under the IK.
fn ik_batch(lib: &AnimLibrary, w: IkWeights) -> PoseBatch {
    let d = lib.clip_duration(0);
    let mut batch = PoseBatch::new();
    for k in 0..12 {
        let t = d * k as f32 / 11.0;
        batch.push_clip(0, t, true).ik(w);
        let pair = [
            ClipSample::new(0, t, true).with_weight(0.7),
            ClipSample::new(0, t + 0.3 * d, true).with_weight(0.3),
        ];
        batch.push_blend(&pair).ik(w);
        let dropped = [
            ClipSample::new(0, t, false),
            ClipSample::new(0, t + 0.1, false).with_weight(0.0),
        ];
        batch.push_blend(&dropped).ik(w);
    }
    batch
}

fn cpu(lib: &AnimLibrary, batch: &PoseBatch) -> Poses {
    let mut poses = Poses::default();
    CpuEvaluator::new(lib).evaluate(batch, &mut poses).unwrap();
    poses
}

#[test]
fn the_ik_stage_runs_the_same_on_gpu_and_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let pairs: &[(&str, Option<&str>, &str)] = &[
        (CMU_WALK, None, KNIGHT),
        (UAL, Some("Jog_Fwd_Loop"), SUPERHERO),
        (UAL, Some("Walk_Loop"), MECH_STAN),
        (ZOMBIE, None, CESIUM),
    ];
    for &(source, clip, target) in pairs {
        let lib = plan_library(source, clip, target);
        let what = format!("{} -> {} with IK", short(source), short(target));
        let batch = ik_batch(&lib, IkWeights::ALL);
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, &what);
        let half = IkWeights {
            feet: 0.5,
            hands: 0.25,
        };
        assert_batch_gpu_matches_cpu(&ctx, &lib, &ik_batch(&lib, half), &what);
    }
}

#[test]
fn the_cpu_ik_stage_is_the_plan_applied_with_ik() {
    let (s, t) = (asset(CMU_WALK), asset(KNIGHT));
    let lib = plan_library(CMU_WALK, None, KNIGHT);
    let plan = plan(CMU_WALK, KNIGHT);
    let clip = &s.clips[0];
    let times = quality::frame_times(clip, 10);
    let mut batch = PoseBatch::new();
    for &time in &times {
        batch.push_clip(0, time, false).ik(IkWeights::ALL);
    }
    let poses = cpu(&lib, &batch);
    for (i, &time) in times.iter().enumerate() {
        let want = plan.apply_with_ik(&clip.pose_at(s.skeleton.rest(), time), IkWeights::ALL);
        for (b, w) in want.iter().enumerate() {
            let have = poses.local(i, b);
            assert!(
                (have.rotation.dot(w.rotation).abs() - 1.0).abs() < 1e-5
                    && (have.translation - w.translation).length() < 1e-5,
                "bone {} at {time}: {have:?} vs {w:?}",
                t.skeleton.names()[b]
            );
        }
    }
}

#[test]
fn feet_reach_the_ground_where_the_source_stands() {
    // Over a walk on a target of other proportions, IK brings each ankle's lift (in hip
    // heights) to the source's wherever the legs reach, and never makes it worse.
    for (source, clip, target) in [
        (UAL, Some("Walk_Loop"), KNIGHT),
        (CMU_WALK, None, SUPERHERO),
        (ZOMBIE, None, MECH_STAN),
    ] {
        let (_, off) = run_pair(source, clip, target, 60, IkWeights::NONE);
        let (label, on) = run_pair(source, clip, target, 60, IkWeights::FEET);
        assert!(
            on.feet_height.max <= off.feet_height.max + 1e-3,
            "{label}: ankle lift {} with IK, {} without",
            on.feet_height.max,
            off.feet_height.max
        );
        assert!(
            on.feet_height.max <= quality::AIM_HEIGHT,
            "{label}: ankle lift {:.4} with IK",
            on.feet_height.max
        );
    }
}

#[test]
fn legs_short_for_the_stride_lower_the_pelvis() {
    // KayKit's Knight under a MakeHuman walk: its legs are short for its hip height, so at
    // full stride they cannot reach where the source's feet are. The IK stage lowers the hips
    // as far as the legs need (at most 10% of hip height), and the feet then meet the aim.
    let (_, off) = run_pair(ZOMBIE, None, KNIGHT, 60, IkWeights::NONE);
    let (label, on) = run_pair(ZOMBIE, None, KNIGHT, 60, IkWeights::FEET);
    assert!(
        off.feet_height.max > quality::AIM_HEIGHT,
        "{label}: {}",
        off.summary()
    );
    for (what, v) in [
        ("ankle lift", on.feet_height.max),
        ("contact", on.contact_height.max),
    ] {
        assert!(v <= quality::AIM_HEIGHT, "{label}: {what} {v:.4} with IK");
    }
    let dropped = on.hips_height.max - off.hips_height.max;
    assert!(
        dropped > 0.01 && dropped <= 0.1 + 1e-4,
        "{label}: pelvis {dropped:.4}"
    );
    assert!(
        on.travel.max <= quality::AIM_HEIGHT,
        "{label}: {}",
        on.summary()
    );
}

#[test]
fn toes_stay_where_the_source_toes_are() {
    // Feet IK turns each foot about its ankle to put the toe at the source's toe height: the
    // contact lift (the toes, where both have toes) follows the ankle's instead of the foot's
    // own pitch. Measured 0.4-2.4% of hip height without the toe turn on these pairs, at most
    // 0.05% with it.
    for (source, clip, target) in [
        (UAL, Some("Walk_Loop"), KNIGHT),
        (UAL, Some("Walk_Loop"), SUPERHERO),
        (ZOMBIE, None, KNIGHT),
    ] {
        let (label, on) = run_pair(source, clip, target, 60, IkWeights::FEET);
        assert!(
            on.contact_height.max <= 0.005,
            "{label}: contact {:.4}",
            on.contact_height.max
        );
    }
}

#[test]
fn an_ik_style_leg_goes_where_the_source_stands_and_reaches_its_own_foot() {
    // Mech_Stan's feet hang from the root and deform nothing: what the mesh shows is the point
    // its shins carry. Under a retargeted clip IK takes that point to the source's ankle height
    // (on the floor in contact, within the 2% slack in the swing), which the pose alone misses.
    let (_, off) = run_pair(UAL, Some("Walk_Loop"), MECH_STAN, 60, IkWeights::NONE);
    let (label, on) = run_pair(UAL, Some("Walk_Loop"), MECH_STAN, 60, IkWeights::FEET);
    assert!(
        off.feet_height.max > on.feet_height.max + 0.005,
        "{label}: {}",
        off.summary()
    );
    assert!(on.feet_height.max < 0.0201, "{label}: {}", on.summary());
    assert!(on.contact_height.max < 0.005, "{label}: {}", on.summary());
    // Playing its own clips (no goal from a source), the shin reaches its foot bone wherever
    // the leg is long enough, on the GPU as on the CPU.
    let mech = asset(MECH_STAN);
    let mut builder = plan_builder(UAL, Some("Walk_Loop"), MECH_STAN);
    builder.add_clips(&mech.clips).unwrap();
    let lib = builder.build();
    let own = clip(&mech, Some("Walk"));
    let walk = 1 + mech
        .clips
        .iter()
        .position(|c| c.name() == own.name())
        .unwrap();
    let times: Vec<f32> = (0..12).map(|k| k as f32 * own.duration() / 12.0).collect();
    let mut batch = PoseBatch::new();
    for &t in &times {
        batch.push_clip(walk as u32, t, true);
        batch.push_clip(walk as u32, t, true).ik(IkWeights::FEET);
    }
    let poses = cpu(&lib, &batch);
    let target = plan(UAL, MECH_STAN).target().clone();
    let rest = mech.skeleton.rest_component();
    let (mut reached, mut closed) = (0, 0);
    for side in [&target.humanoid.left, &target.humanoid.right] {
        let tip = Transform::relative(&rest[side.foot], &rest[side.shin]);
        let reach = (rest[side.shin].translation - rest[side.thigh].translation).length()
            + tip.translation.length();
        let at = |i: usize, b: usize| poses.component(i, b).translation;
        let gap = |i: usize| {
            let carried = Transform::compose(&tip, &poses.component(i, side.shin));
            (carried.translation - at(i, side.foot)).length() / target.body.hip_height
        };
        for (k, t) in times.iter().enumerate() {
            if (at(2 * k, side.foot) - at(2 * k, side.thigh)).length() < 0.99 * reach {
                reached += 1;
                assert!(gap(2 * k + 1) < 1e-5, "{t}: gap {}", gap(2 * k + 1));
                closed += usize::from(gap(2 * k) > 1e-3);
            }
        }
    }
    assert!(
        reached > 12 && closed > 0,
        "{reached} within reach, {closed} closed"
    );
    if let Some(ctx) = common::gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "Mech_Stan's own walk with IK");
    }
}

#[test]
fn the_left_hand_keeps_its_place_on_the_right_hands_grip() {
    // The source's left hand relative to its right hand, scaled and turned into the target's
    // right hand frame, is where the target's left hand goes with hands IK.
    let (s, t) = (asset(UAL), asset(KNIGHT));
    let plan = plan(UAL, KNIGHT);
    let clip = clip(&s, Some("Walk_Loop"));
    let h = &plan.target().humanoid;
    let (lh, rh) = (h.left.hand, h.right.hand);
    let hand_goal = plan
        .goals(&clip.pose_at(s.skeleton.rest(), 0.0))
        .into_iter()
        .flatten()
        .count();
    assert_eq!(
        hand_goal, 4,
        "the torso, two feet and the left hand have goals"
    );
    for time in quality::frame_times(clip, 8) {
        let sl = clip.pose_at(s.skeleton.rest(), time);
        let goal = plan.goals(&sl)[2].unwrap();
        let off = component_space(t.skeleton.parents(), &plan.apply(&sl));
        let hands = IkWeights {
            feet: 0.0,
            hands: 1.0,
        };
        let on = component_space(t.skeleton.parents(), &plan.apply_with_ik(&sl, hands));
        let want = posegpu::Transform::compose(&goal, &on[rh]).translation;
        let err = |cs: &[posegpu::Transform]| (cs[lh].translation - want).length();
        let reach = (on[h.left.upper_arm].translation - want).length();
        let arm = (on[h.left.forearm].translation - on[h.left.upper_arm].translation).length()
            + (on[lh].translation - on[h.left.forearm].translation).length();
        if reach < 0.98 * arm {
            assert!(
                err(&on) < 1e-3 * arm,
                "at {time}: {} off the grip",
                err(&on)
            );
        }
        assert!(
            err(&on) <= err(&off) + 1e-5,
            "at {time}: IK moved the hand away"
        );
        // The rest of the body is untouched by the hands.
        for b in [h.left.foot, h.right.foot, rh, h.head] {
            assert_eq!(on[b], off[b]);
        }
    }
}

#[test]
fn weights_scale_the_ik_and_no_ik_layer_leaves_the_pose() {
    let lib = plan_library(CMU_WALK, None, KNIGHT);
    let t = 0.72;
    let mut batch = PoseBatch::new();
    batch.push_clip(0, t, false);
    batch.push_clip(0, t, false).ik(IkWeights::NONE);
    batch.push_clip(0, t, false).ik(IkWeights::FEET);
    batch.push_clip(0, t, false).ik(IkWeights {
        feet: 0.5,
        hands: 0.0,
    });
    let poses = cpu(&lib, &batch);
    let foot = plan(CMU_WALK, KNIGHT).target().humanoid.right.foot;
    let at = |i: usize| poses.component(i, foot).translation;
    let bones = lib.bone_count();
    for b in 0..bones {
        assert_eq!(
            poses.local(0, b),
            poses.local(1, b),
            "weight 0 changes nothing"
        );
    }
    let (none, full, half) = (at(0), at(2), at(3));
    assert!((full - none).length() > 1e-3, "this frame needs IK");
    // Half the weight: the ankle about half way (the joints turn, so not exactly).
    let mid = (none + full) * 0.5;
    assert!((half - mid).length() < 0.25 * (full - none).length());
}

#[test]
fn an_ik_layer_must_be_last_with_weights_in_range() {
    let lib = plan_library(CMU_WALK, None, KNIGHT);
    let bad = |batch: &PoseBatch| {
        let err = CpuEvaluator::new(&lib)
            .evaluate(batch, &mut Poses::default())
            .unwrap_err();
        assert!(matches!(err, Error::BadInstance { .. }), "{err}");
        err.to_string()
    };
    let mut batch = PoseBatch::new();
    batch.push_clip(0, 0.0, false).ik(IkWeights {
        feet: 1.5,
        hands: 0.0,
    });
    assert!(bad(&batch).contains("IK"));
    let mut batch = PoseBatch::new();
    batch.push_clip(0, 0.0, false).ik(IkWeights {
        feet: f32::NAN,
        hands: 0.0,
    });
    bad(&batch);
    let mut batch = PoseBatch::new();
    batch.push_clip(0, 0.0, false).ik(IkWeights::FEET).additive(
        AdditiveSpace::Local,
        1.0,
        &[ClipSample::new(0, 0.0, false)],
    );
    assert!(bad(&batch).contains("last"));
    // The sampling stage alone would skip the IK: refused rather than silently dropped.
    let mut batch = PoseBatch::new();
    batch.push_clip(0, 0.0, false).ik(IkWeights::FEET);
    let err = CpuEvaluator::new(&lib)
        .sample_locals(&batch, &mut Vec::new())
        .unwrap_err();
    assert!(err.to_string().contains("IK"), "{err}");
}

#[test]
fn an_unnamed_humanoid_gets_its_chains_from_its_structure() {
    // The IK chains come from the target's roles (CesiumMan's joints are unnamed): the torso,
    // both legs and the left arm, each with a goal from a source that has the bones.
    let plan = plan(UAL, CESIUM);
    let goals = plan.goals(asset(UAL).skeleton.rest());
    assert_eq!(goals.len(), 4);
    assert!(goals.iter().all(Option::is_some));
}

#[test]
fn an_in_place_instance_keeps_its_feet_on_the_ground() {
    // CMU's walker has its hips as bone 0: locked in place at their rest height, the goals
    // follow bone 0 across the ground but keep the heights the clip gives them, so the feet
    // stand at the travelling instance's heights (a swinging foot within the slack of them,
    // from either side), and IK is what puts them there.
    let lib = plan_library(UAL, Some("Walk_Loop"), CMU_WALK);
    let target = plan(UAL, CMU_WALK).target().clone();
    let (up, h) = (target.body.up, target.humanoid);
    let extent = lib.skeleton().extent();
    let slack = 2.0 * 0.02 * target.body.hip_height + 1e-4 * extent;
    let mut moved = 0;
    for time in [0.1, 0.4, 0.7] {
        let mut batch = PoseBatch::new();
        let sample = ClipSample::new(0, time, true);
        let locked = sample.with_root_lock(Some(RootLock::RefPose));
        batch.push_blend(&[sample]).ik(IkWeights::FEET);
        batch.push_blend(&[locked]).ik(IkWeights::FEET);
        batch.push_blend(&[locked]);
        let poses = cpu(&lib, &batch);
        let height = |i: usize, b: usize| poses.component(i, b).translation.dot(up);
        for foot in [h.left.foot, h.right.foot] {
            let (travelling, in_place) = (height(0, foot), height(1, foot));
            assert!(
                (travelling - in_place).abs() < slack,
                "{time}: foot {foot} at {in_place}, travelling {travelling}"
            );
            moved += usize::from((height(2, foot) - travelling).abs() > slack);
        }
    }
    assert!(moved > 0, "the lock alone leaves the feet elsewhere");
}

#[test]
fn a_crowd_with_ik_plays_the_same_on_gpu_and_cpu() {
    // Agents with IK weights, root motion in place: GpuCrowd's IK pass against the CPU twin.
    let lib = plan_library(UAL, Some("Walk_Loop"), KNIGHT);
    let crowd = |lib: &AnimLibrary| {
        let mut crowd = Crowd::new(lib);
        for i in 0..6 {
            let player = Player::new(0u32).starting_at(0.13 * i as f32);
            let agent = Agent::new(player).with_root_motion(Some(RootLock::RefPose));
            let agent = if i % 3 == 2 {
                agent
            } else {
                agent.with_ik(IkWeights::ALL)
            };
            crowd.add(&agent).unwrap();
        }
        crowd
    };
    let mut cpu_crowd = crowd(&lib);
    assert!(cpu_crowd.batch().has_ik());
    let bad = Agent::new(Player::new(0u32)).with_ik(IkWeights {
        feet: 2.0,
        hands: 0.0,
    });
    assert!(matches!(
        cpu_crowd.add(&bad),
        Err(Error::BadInstance { .. })
    ));
    let Some(ctx) = common::gpu() else { return };
    let mut cpu_crowd = crowd(&lib);
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu_crowd, &GpuOptions::default()).unwrap();
    let extent = lib.skeleton().extent();
    for step in 0..3 {
        cpu_crowd.advance(&lib, 0.1).unwrap();
        gpu.advance(0.1).unwrap();
        let want = cpu(&lib, &cpu_crowd.batch());
        let have = gpu.evaluator().read_back().unwrap();
        let d = Deviation::between(&have, &want).relative(extent);
        assert!(d <= common::TOLERANCE, "step {step}: poses differ by {d:e}");
    }
}

#[test]
fn in_place_goals_follow_a_root_motion_bone_other_than_bone_0() {
    // The Knight's motion from its hips (bone 1, under a static root), a CMU walk in place in
    // the ground plane: the goals follow the hips, so the feet stand at the travelling
    // instance's heights; a crowd of such instances plays the same on the GPU.
    let mut builder = plan_builder(CMU_WALK, None, KNIGHT);
    builder.set_root_motion_bone("hips", glam::Vec3::Y).unwrap();
    let lib = builder.build();
    let (up, h) = {
        let p = plan(CMU_WALK, KNIGHT);
        (p.target().body.up, p.target().humanoid.clone())
    };
    let extent = lib.skeleton().extent();
    for time in [0.2, 0.5, 0.9] {
        let mut batch = PoseBatch::new();
        let sample = ClipSample::new(0, time, true);
        let locked = sample
            .with_root_lock(Some(RootLock::FirstFrame))
            .with_root_axes(RootMotionAxes::GROUND_PLANE);
        batch.push_blend(&[sample]).ik(IkWeights::FEET);
        batch.push_blend(&[locked]).ik(IkWeights::FEET);
        let poses = cpu(&lib, &batch);
        let height = |i: usize, b: usize| poses.component(i, b).translation.dot(up);
        // In place, the whole body is the travelling one moved by the hips' ground-plane
        // motion, IK'd feet included.
        let hips = lib.root_motion_bone();
        let moved = Transform::compose(
            &poses.component(0, hips).inverse(),
            &poses.component(1, hips),
        );
        for foot in [h.left.foot, h.right.foot] {
            let (travelling, in_place) = (height(0, foot), height(1, foot));
            assert!(
                (travelling - in_place).abs() < 1e-3 * extent,
                "{time}: foot {foot} at {in_place}, travelling {travelling}"
            );
            let want = Transform::compose(&poses.component(0, foot), &moved).translation;
            let got = poses.component(1, foot).translation;
            assert!(
                got.distance(want) < 1e-3 * extent,
                "{time}: foot {foot} at {got}, the travelling foot moved with the hips {want}"
            );
        }
        if let Some(ctx) = common::gpu() {
            assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "in place from the hips");
        }
    }
    let mut crowd = Crowd::new(&lib);
    for i in 0..4 {
        let agent = Agent::new(Player::new(0u32).starting_at(0.2 * i as f32))
            .with_root_motion(Some(RootLock::RefPose))
            .with_root_axes(RootMotionAxes::GROUND_PLANE)
            .with_ik(IkWeights::FEET);
        crowd.add(&agent).unwrap();
    }
    let Some(ctx) = common::gpu() else { return };
    let mut gpu = GpuCrowd::new(&ctx, &lib, &crowd, &GpuOptions::default()).unwrap();
    for step in 0..3 {
        crowd.advance(&lib, 0.1).unwrap();
        gpu.advance(0.1).unwrap();
        let want = cpu(&lib, &crowd.batch());
        let have = gpu.evaluator().read_back().unwrap();
        let d = Deviation::between(&have, &want).relative(extent);
        assert!(d <= common::TOLERANCE, "step {step}: poses differ by {d:e}");
    }
}

#[test]
fn the_torso_leans_as_the_source_does_and_the_chest_keeps_its_turn() {
    // The MakeHuman zombie walks hunched, bending at its chest; CesiumMan's chest joint sits
    // high on its spine, so bone for bone its pelvis → neck line leans 7° less. With IK the
    // spine bone below the chest takes up the difference: the line follows the source's, and
    // the chest (with the arms and the head on it) keeps the turn the plan gave it.
    let (_, off) = run_pair(ZOMBIE, None, CESIUM, 60, IkWeights::NONE);
    let (label, on) = run_pair(ZOMBIE, None, CESIUM, 60, IkWeights::FEET);
    let torso = |q: &quality::QualityReport| {
        q.limbs
            .iter()
            .find(|l| l.limb == quality::Limb::PelvisToNeck)
            .unwrap()
            .degrees
    };
    assert!(torso(&off).p95 > 6.0, "{label}: {:?}", torso(&off));
    assert!(torso(&on).p95 < 0.5, "{label}: {:?}", torso(&on));
    let (s, t) = (asset(ZOMBIE), asset(CESIUM));
    let plan = plan(ZOMBIE, CESIUM);
    let h = &plan.target().humanoid;
    let weak = IkWeights {
        feet: 0.5,
        hands: 0.0,
    };
    for time in [0.3, 0.9] {
        let source = s.clips[0].pose_at(s.skeleton.rest(), time);
        let pose =
            |w: IkWeights| component_space(t.skeleton.parents(), &plan.apply_with_ik(&source, w));
        let (without, with, half) = (pose(IkWeights::NONE), pose(IkWeights::FEET), pose(weak));
        for b in [h.chest, h.head, h.left.upper_arm, h.right.forearm] {
            let turned = posegpu::math::angle_between(without[b].rotation, with[b].rotation);
            assert!(turned < 1e-4, "{time}: bone {b} turned {turned} rad");
        }
        let spine = *h.spine.last().unwrap();
        let (full, part) = (
            posegpu::math::angle_between(without[spine].rotation, with[spine].rotation),
            posegpu::math::angle_between(without[spine].rotation, half[spine].rotation),
        );
        assert!(full > 0.02, "{time}: the spine did not turn");
        assert!(
            (part / full - 0.5).abs() < 0.1,
            "{time}: half the weight turned {part} of {full}"
        );
    }
}
