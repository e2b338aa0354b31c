//! Clips baked onto the target at upload (`LibraryBuilder::add_baked_clips`) against the same
//! clips retargeted per bone at run time (`add_character_source`), on real cross-tool pairs:
//! at the source's key times every bone is where the run-time plan puts it, at each instance's
//! own IK weights (the baked goals feed the same IK stage), in place or not; between keys the
//! interpolated keys stay within a small distance of the plan's pose; GPU against CPU as ever.

use crate::common;

use posegpu::{AnimLibrary, ClipSample, IkWeights, PoseBatch, Poses, RootLock};

/// The run-time library and the baked one of one pair's clip.
fn libraries(pair: usize) -> (AnimLibrary, AnimLibrary, Vec<f32>, f32) {
    let (s, clip, t, plan) = common::cross_tool_pair(pair);
    let mut run = AnimLibrary::builder(&t.skeleton);
    let id = run.add_character_source("source", &s, &plan).unwrap();
    run.add_clips_from(id, std::slice::from_ref(&clip)).unwrap();
    let mut baked = AnimLibrary::builder(&t.skeleton);
    baked
        .add_baked_clips(&s, &plan, std::slice::from_ref(&clip))
        .unwrap();
    let height = t.skeleton.extent();
    (run.build(), baked.build(), clip.key_times(), height)
}

/// The IK weights the instances play at: none, the feet, half the feet, the feet and hands.
const WEIGHTS: [IkWeights; 4] = [
    IkWeights::NONE,
    IkWeights::FEET,
    IkWeights {
        feet: 0.5,
        hands: 0.0,
    },
    IkWeights::ALL,
];

/// One instance per (time, IK weights, in place or not): every bone's component-space
/// position.
fn batch(times: &[f32]) -> PoseBatch {
    let mut batch = PoseBatch::new();
    for &t in times {
        for ik in WEIGHTS {
            for lock in [None, Some(RootLock::RefPose)] {
                let sample = ClipSample::new(0, t, false).with_root_lock(lock);
                batch.push_blend(&[sample]).ik(ik);
            }
        }
    }
    batch
}

/// The largest distance between the two poses' bones, over all instances.
fn worst(a: &Poses, b: &Poses, bones: usize) -> f32 {
    let mut w = 0.0f32;
    for i in 0..a.instance_count() {
        for bone in 0..bones {
            let d = a.component(i, bone).translation - b.component(i, bone).translation;
            w = w.max(d.length());
        }
    }
    w
}

#[test]
fn baked_clips_pose_as_the_run_time_plan_on_keys_and_close_between_at_every_ik_weight() {
    for (pair, (source, _, _)) in common::CROSS_TOOL_PAIRS.iter().enumerate() {
        let (run, baked, keys, height) = libraries(pair);
        let bones = run.bone_count();
        // Keys well inside the clip (the ends wrap or clamp alike), and the midpoints.
        let on: Vec<f32> = keys[1..keys.len() - 1].iter().step_by(7).copied().collect();
        let mid: Vec<f32> = keys[1..keys.len() - 1]
            .windows(2)
            .step_by(7)
            .map(|w| 0.5 * (w[0] + w[1]))
            .collect();
        let eval = |lib: &AnimLibrary, times: &[f32]| common::cpu_eval_batch(lib, &batch(times));
        let on_keys = worst(&eval(&run, &on), &eval(&baked, &on), bones);
        let between = worst(&eval(&run, &mid), &eval(&baked, &mid), bones);
        eprintln!(
            "{source}: on keys {:.2e}, between keys {:.2e} of the height",
            on_keys / height,
            between / height
        );
        assert!(on_keys <= 1e-4 * height, "on keys: {on_keys}");
        assert!(between <= 1e-2 * height, "between keys: {between}");
        // The weights matter: the IK moves the baked pose (else the comparison shows nothing).
        let plain = eval(&baked, &on);
        let moved = (0..plain.instance_count())
            .step_by(2 * WEIGHTS.len())
            .map(|i| {
                (0..bones)
                    .map(|b| {
                        let d = plain.component(i, b).translation
                            - plain.component(i + 2, b).translation;
                        d.length()
                    })
                    .fold(0.0f32, f32::max)
            })
            .fold(0.0f32, f32::max);
        assert!(
            moved > 1e-3 * height,
            "feet IK moved no bone of the baked clip ({moved})"
        );
    }
}

#[test]
fn a_refused_bake_leaves_the_library_as_it_was() {
    // A plan built for another target is refused, and the library keeps only what it had.
    let (s, clip, t, plan) = common::cross_tool_pair(0);
    let (s2, clip2, _, _) = common::cross_tool_pair(1);
    let other = posegpu::retarget::RetargetPlan::new(&s2, &s2, &Default::default()).unwrap();
    let mut b = AnimLibrary::builder(&t.skeleton);
    b.add_baked_clips(&s, &plan, std::slice::from_ref(&clip))
        .unwrap();
    let Err(err) = b.add_baked_clips(&s2, &other, std::slice::from_ref(&clip2)) else {
        panic!("a plan for another target was taken");
    };
    assert!(
        matches!(err, posegpu::Error::PlanMismatch { .. }),
        "a plan for another target: {err}"
    );
    assert_eq!(b.build().clip_count(), 1, "the refused clip was not added");
}

#[test]
fn baked_clips_match_on_the_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let (_, baked, keys, _) = libraries(0);
    let times: Vec<f32> = keys.iter().step_by(11).map(|t| t + 0.003).collect();
    common::assert_batch_gpu_matches_cpu(
        &ctx,
        &baked,
        &batch(&times),
        "a baked CMU walk on the knight, IK per instance",
    );
}
