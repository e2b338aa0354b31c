//! Character sources in a library: the GPU sampling stage against its CPU twin (within 1e-4 of
//! the skeleton's size), mixed with own clips and UE-mode sources in one batch, root motion
//! through a plan, the CPU sampling stage against `RetargetPlan::apply`, and GPU poses judged by
//! `quality::measure_poses` as the CPU's are.

use posegpu::playback::{Agent, Player};
use posegpu::retarget::quality;
use posegpu::retarget::Rig;
use posegpu::{
    AdditiveSpace, AnimLibrary, ClipSample, CpuEvaluator, Crowd, Deviation, Error, GpuCrowd,
    GpuOptions, PoseBatch, Transform,
};

use crate::common::{self, assert_batch_gpu_matches_cpu, assert_gpu_matches_cpu};
use crate::retarget_characters::data::*;

/// Instances over the clip's range and past it, clamped and looping, at most 40.
fn instances(lib: &AnimLibrary, clip: u32) -> Vec<ClipSample> {
    let d = lib.clip_duration(clip);
    (0..20)
        .flat_map(|k| {
            let t = -0.1 * d + 1.2 * d * k as f32 / 19.0;
            [
                ClipSample::new(clip, t, false),
                ClipSample::new(clip, t + 0.37 * d, true),
            ]
        })
        .collect()
}

const GPU_PAIRS: &[(&str, Option<&str>, &str)] = &[
    (CMU_WALK, None, MECH_STAN),
    (UAL, Some("Jog_Fwd_Loop"), CESIUM),
    (ZOMBIE, None, KNIGHT),
    (KNIGHT, Some("Walking_A"), MECH_STAN),
    (CMU_01, None, TPOSE),
    (MECH_MIKE, Some("Walk"), SUPERHERO),
];

#[test]
fn plan_sources_sample_the_same_on_gpu_and_cpu() {
    let Some(ctx) = common::gpu() else { return };
    for &(source, clip, target) in GPU_PAIRS {
        let lib = plan_library(source, clip, target);
        let what = format!("{} -> {}", short(source), short(target));
        assert_gpu_matches_cpu(&ctx, &lib, &instances(&lib, 0), &what);
    }
}

#[test]
fn the_cpu_sampling_stage_is_the_plan_applied() {
    // The library's packed records and paths (rebased onto the retarget table) give what the
    // plan gives on its own, at every bone.
    let (s, t) = (asset(UAL), asset(MECH_STAN));
    let lib = plan_library(UAL, Some("Walk_Loop"), MECH_STAN);
    let plan = plan(UAL, MECH_STAN);
    let clip = clip(&s, Some("Walk_Loop"));
    let cpu = CpuEvaluator::new(&lib);
    for time in quality::frame_times(clip, 12) {
        let want = plan.apply(&clip.pose_at(s.skeleton.rest(), time));
        for (b, w) in want.iter().enumerate() {
            let have = cpu.sample_bone(0, b, time, false).unwrap();
            assert_eq!(have, *w, "bone {} at {time}", t.skeleton.names()[b]);
        }
    }
}

#[test]
fn one_batch_mixes_own_clips_ue_sources_and_plan_sources() {
    let Some(ctx) = common::gpu() else { return };
    let (stan, mike, walk) = (asset(MECH_STAN), asset(MECH_MIKE), asset(CMU_WALK));
    let mut builder = AnimLibrary::builder(&stan.skeleton);
    builder.add_clips(&stan.clips[..2]).unwrap();
    let ue = builder
        .add_source("Mike", &mike.skeleton, None, &Rig::humanoid())
        .unwrap();
    builder.add_clips_from(ue, &mike.clips[..2]).unwrap();
    let character = builder
        .add_character_source("walk", &walk, &plan(CMU_WALK, MECH_STAN))
        .unwrap();
    builder.add_clips_from(character, &walk.clips).unwrap();
    let lib = builder.build();
    assert!(lib.retarget_caches(character).is_empty());
    assert_eq!(lib.retarget_caches(ue).len(), stan.skeleton.len());
    let (own, from_ue, from_plan) = (0u32, 2u32, 4u32);
    let mut batch = PoseBatch::new();
    for i in 0..24 {
        let t = i as f32 * 0.11;
        let w = (i % 5) as f32 / 4.0;
        batch.push_clip([own, from_ue, from_plan][i % 3], t, true);
        batch
            .push_blend(&[
                ClipSample::new(from_plan, t, true).with_weight(w),
                ClipSample::new(from_ue, t, true).with_weight(1.0 - w),
            ])
            .dynamic(
                AdditiveSpace::Local,
                0.5,
                ClipSample::new(from_plan, t + 0.3, true),
                ClipSample::new(own, t, true),
            );
    }
    assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "own, UE and plan clips blended");
}

#[test]
fn additive_clips_of_a_character_source_are_refused() {
    let (s, t) = (asset(UAL), asset(MECH_STAN));
    let mut builder = AnimLibrary::builder(&t.skeleton);
    let id = builder
        .add_character_source("ual", &s, &plan(UAL, MECH_STAN))
        .unwrap();
    let additive = s.clips[0].clone().with_additive(AdditiveSpace::Local);
    let Err(err) = builder.add_clips_from(id, &[additive]) else {
        panic!("an additive clip of a character source was accepted");
    };
    assert!(
        matches!(&err, Error::Additive { what, .. } if what.contains("bake")),
        "{err}"
    );
    // A plan of other skeletons is refused too.
    let err = builder
        .add_character_source("zombie", &asset(ZOMBIE), &plan(UAL, MECH_STAN))
        .unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
}

#[test]
fn root_motion_plays_through_a_plan() {
    // UAL's jog on CMU's walker, whose bone 0 is its hips: the root motion of a step is
    // relative(Root(t1), Root(t0)) of the retargeted hips, on the CPU and the GPU alike.
    let lib = plan_library(UAL, Some("Jog_Fwd_Loop"), CMU_WALK);
    let cpu_eval = CpuEvaluator::new(&lib);
    let root = |t: f32| cpu_eval.sample_bone(0, 0, t, false).unwrap();
    let crowd = |lib: &AnimLibrary| {
        let mut crowd = Crowd::new(lib);
        for i in 0..8 {
            let player = Player::new(0u32).starting_at(0.05 * i as f32);
            crowd
                .add(&Agent::new(player).with_root_motion(None))
                .unwrap();
        }
        crowd
    };
    let mut cpu = crowd(&lib);
    let dt = 0.1;
    cpu.advance(&lib, dt).unwrap();
    let extent = lib.skeleton().extent();
    for (i, m) in cpu.root_motion().iter().enumerate() {
        let t0 = 0.05 * i as f32;
        let want = Transform::relative(&root(t0 + dt), &root(t0));
        assert!(
            (m.translation - want.translation).length() <= 1e-5 * extent,
            "instance {i}: {m:?} vs {want:?}"
        );
        assert!(m.translation.length() > 1e-3 * extent, "the hips move");
    }
    let Some(ctx) = common::gpu() else { return };
    let mut cpu = crowd(&lib);
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu, &GpuOptions::default()).unwrap();
    for step in 0..3 {
        cpu.advance(&lib, dt).unwrap();
        gpu.advance(dt).unwrap();
        let g = gpu.read_root_motion().unwrap();
        for (i, (a, b)) in g.iter().zip(cpu.root_motion()).enumerate() {
            let d = (a.translation - b.translation).length();
            assert!(
                d <= common::TOLERANCE * extent,
                "step {step}, instance {i}: {d}"
            );
            assert!(1.0 - a.rotation.dot(b.rotation).abs() <= 1e-5);
        }
        let cpu_poses = common::cpu_eval_batch(&lib, &cpu.batch());
        let gpu_poses = gpu.evaluator().read_back().unwrap();
        let d = Deviation::between(&gpu_poses, &cpu_poses).relative(extent);
        assert!(d <= common::TOLERANCE, "step {step}: poses differ by {d:e}");
    }
}

#[test]
fn gpu_poses_are_judged_as_the_cpu_plan() {
    let Some(ctx) = common::gpu() else { return };
    let (s, t) = (asset(ZOMBIE), asset(CESIUM));
    let lib = plan_library(ZOMBIE, None, CESIUM);
    let plan = plan(ZOMBIE, CESIUM);
    let clip = &s.clips[0];
    let times = quality::frame_times(clip, 40);
    let crowd: Vec<ClipSample> = times
        .iter()
        .map(|&t| ClipSample::new(0, t, false))
        .collect();
    let poses = common::gpu_eval(&ctx, &lib, &crowd, &GpuOptions::default());
    let on_gpu = quality::measure_poses(&s, &t, &plan, clip, &times, &poses).unwrap();
    let on_cpu = quality::measure(&s, &t, &plan, clip, &times, IkWeights::NONE).unwrap();
    assert!((on_gpu.overall.mean - on_cpu.overall.mean).abs() < 0.01);
    assert!((on_gpu.overall.max - on_cpu.overall.max).abs() < 0.05);
    assert!((on_gpu.hips_height.max - on_cpu.hips_height.max).abs() < 1e-3);
    assert!((on_gpu.feet_height.max - on_cpu.feet_height.max).abs() < 1e-3);
}
