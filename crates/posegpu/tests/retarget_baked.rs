//! Clips baked onto the target at upload (`LibraryBuilder::add_baked_clips`) against the same
//! clips retargeted per bone at run time (`add_character_source`), on real cross-tool pairs:
//! at the source's key times every bone is where the run-time plan puts it (with feet IK baked
//! in, where the run-time IK stage puts it); between keys the interpolated keys stay within a
//! small distance of the plan's pose; GPU against CPU as ever.

mod common;

use posegpu::{AnimLibrary, ClipSample, IkWeights, PoseBatch, Poses};

/// The run-time library and the baked one (IK at `ik` baked in) of one pair's clip.
fn libraries(pair: usize, ik: IkWeights) -> (AnimLibrary, AnimLibrary, Vec<f32>, f32) {
    let (s, clip, t, plan) = common::cross_tool_pair(pair);
    let mut run = AnimLibrary::builder(&t.skeleton);
    let id = run.add_character_source("source", &s, &plan).unwrap();
    run.add_clips_from(id, std::slice::from_ref(&clip)).unwrap();
    let mut baked = AnimLibrary::builder(&t.skeleton);
    baked
        .add_baked_clips(&s, &plan, std::slice::from_ref(&clip), ik)
        .unwrap();
    let height = t.skeleton.extent();
    (run.build(), baked.build(), clip.key_times(), height)
}

/// Every bone's component-space position at each time, one instance per time.
fn positions(lib: &AnimLibrary, times: &[f32], ik: IkWeights) -> Poses {
    let mut batch = PoseBatch::new();
    for &t in times {
        let layers = batch.push_blend(&[ClipSample::new(0, t, false)]);
        if ik != IkWeights::NONE {
            layers.ik(ik);
        }
    }
    common::cpu_eval_batch(lib, &batch)
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
fn baked_clips_pose_as_the_run_time_plan_on_keys_and_close_between() {
    for (pair, (source, _, _)) in common::CROSS_TOOL_PAIRS.iter().enumerate() {
        for ik in [IkWeights::NONE, IkWeights::FEET] {
            let (run, baked, keys, height) = libraries(pair, ik);
            let bones = run.bone_count();
            // Keys well inside the clip (the ends wrap or clamp alike), and the midpoints.
            let on: Vec<f32> = keys[1..keys.len() - 1].iter().step_by(7).copied().collect();
            let mid: Vec<f32> = keys[1..keys.len() - 1]
                .windows(2)
                .step_by(7)
                .map(|w| 0.5 * (w[0] + w[1]))
                .collect();
            // The baked clip's IK is in its keys: it plays without an IK layer.
            let on_keys = worst(
                &positions(&run, &on, ik),
                &positions(&baked, &on, IkWeights::NONE),
                bones,
            );
            let between = worst(
                &positions(&run, &mid, ik),
                &positions(&baked, &mid, IkWeights::NONE),
                bones,
            );
            eprintln!(
                "{} (IK {ik:?}): on keys {:.2e}, between keys {:.2e} of the height",
                source,
                on_keys / height,
                between / height
            );
            assert!(on_keys <= 1e-4 * height, "on keys: {on_keys}");
            assert!(between <= 1e-2 * height, "between keys: {between}");
        }
    }
}

#[test]
fn baked_clips_match_on_the_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let (_, baked, keys, _) = libraries(0, IkWeights::FEET);
    let mut batch = PoseBatch::new();
    for &t in keys.iter().step_by(5) {
        batch.push_clip(0, t + 0.003, true);
    }
    common::assert_batch_gpu_matches_cpu(&ctx, &baked, &batch, "a baked CMU walk on the knight");
}
