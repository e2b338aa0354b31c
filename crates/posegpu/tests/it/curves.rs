//! Curves: float tracks sampled and blended per instance like the pose, against hand-computed
//! values (blends, layered blends, additives, dynamic additives, STEP keys, absent curves);
//! glTF morph-target weights read as curves; GPU against CPU; bad curves as typed errors.

use crate::common;

use glam::{Quat, Vec3};
use posegpu::{
    AdditiveSpace, AnimLibrary, Bone, Channel, Clip, ClipSample, CpuEvaluator, Error,
    Interpolation, PoseBatch, Poses, Skeleton, Transform,
};

use common::{assert_batch_gpu_matches_cpu, gpu};

fn skeleton() -> Skeleton {
    let at = |y: f32| Transform::new(Vec3::Y * y, Quat::IDENTITY, Vec3::ONE);
    Skeleton::new(vec![
        Bone::new("root", None, at(0.0)),
        Bone::new("spine", Some(0), at(1.0)),
    ])
    .unwrap()
}

fn linear(times: &[f32], values: &[f32]) -> Channel<f32> {
    Channel::new(times.to_vec(), values.to_vec(), Interpolation::Linear)
}

/// Clips 0 `a` (smile 0 → 1 over a second), 1 `b` (smile 0.5; blink 0 → 1, STEP at 0.5),
/// 2 `add` (an additive whose smile is 0.2).
fn library() -> AnimLibrary {
    let skeleton = skeleton();
    let pose = |name: &str| Clip::from_pose(name, &skeleton, skeleton.rest()).unwrap();
    let a = pose("a")
        .with_curve("smile", linear(&[0.0, 1.0], &[0.0, 1.0]))
        .unwrap();
    let b = pose("b")
        .with_curve("smile", linear(&[0.0, 1.0], &[0.5, 0.5]))
        .and_then(|c| {
            c.with_curve(
                "blink",
                Channel::new(
                    vec![0.0, 0.5, 1.0],
                    vec![0.0, 1.0, 0.0],
                    Interpolation::Step,
                ),
            )
        })
        .unwrap();
    let add = pose("add")
        .with_additive(AdditiveSpace::Local)
        .with_curve("smile", linear(&[0.0], &[0.2]))
        .unwrap();
    AnimLibrary::new(&skeleton, &[a, b, add]).unwrap()
}

fn evaluate(lib: &AnimLibrary, batch: &PoseBatch) -> Poses {
    let mut poses = Poses::default();
    CpuEvaluator::new(lib).evaluate(batch, &mut poses).unwrap();
    poses
}

fn close(a: f32, b: f32, what: &str) {
    assert!((a - b).abs() < 1e-6, "{what}: {a} != {b}");
}

#[test]
fn curves_blend_like_the_pose() {
    let lib = library();
    assert_eq!(lib.curve_names(), ["smile", "blink"]);
    let (smile, blink) = (0, 1);
    // A clip's ranges grow to its curves: `a` has no bone keys past 0.
    assert_eq!(lib.clip_duration(0), 1.0);
    let mut batch = PoseBatch::new();
    batch.push_clip(0, 0.25, false);
    batch.push_blend(&[
        ClipSample::new(0, 0.5, false).with_weight(1.0),
        ClipSample::new(1, 0.5, false).with_weight(3.0),
    ]);
    batch.push_clip(0, 1.0, false).blend(
        AdditiveSpace::Local,
        0.5,
        &[ClipSample::new(1, 0.75, false)],
    );
    batch.push_clip(0, 0.5, false).additive(
        AdditiveSpace::Local,
        0.5,
        &[ClipSample::new(2, 0.0, false)],
    );
    batch.push_clip(0, 0.25, false).dynamic(
        AdditiveSpace::Mesh,
        1.0,
        ClipSample::new(0, 1.0, false),
        ClipSample::new(0, 0.0, false),
    );
    let poses = evaluate(&lib, &batch);
    // One clip: its keys interpolated; a curve the clip lacks is 0.
    close(poses.curve(0, smile), 0.25, "a at 0.25");
    close(poses.curve(0, blink), 0.0, "blink absent from a");
    // Weights renormalized (1 : 3); blink's STEP key at 0.5 holds 1.
    close(poses.curve(1, smile), 0.25 * 0.5 + 0.75 * 0.5, "blend");
    close(poses.curve(1, blink), 0.75 * 1.0, "blend of blink");
    // A layered blend moves the value toward the layer's: 1 + (0.5 − 1) · 0.5.
    close(poses.curve(2, smile), 0.75, "layered blend");
    close(
        poses.curve(2, blink),
        0.5,
        "layered blend of blink (held at 1)",
    );
    // An additive adds its weighted value: 0.5 + 0.2 · 0.5.
    close(poses.curve(3, smile), 0.6, "additive");
    // A dynamic additive adds its pose's value less its base's: 0.25 + (1 − 0).
    close(poses.curve(4, smile), 1.25, "dynamic");
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "curves");
    }
}

#[test]
fn morph_target_weights_of_a_gltf_file_are_curves() {
    // The Khronos AnimatedMorphCube (in Debian's assimp-testmodels): one node, two morph
    // targets animated by LINEAR weights, no skin.
    let path = std::path::Path::new(
        "/usr/share/assimp/models/glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf",
    );
    let asset = posegpu::import::load(path).unwrap();
    let clip = &asset.clips[0];
    let names: Vec<&str> = clip.curves().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // The file's own keys, read here from its JSON and buffer.
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let sampler = &json["animations"][0]["samplers"][0];
    let accessor = |i: &serde_json::Value| &json["accessors"][i.as_u64().unwrap() as usize];
    let (input, output) = (accessor(&sampler["input"]), accessor(&sampler["output"]));
    let keys = input["count"].as_u64().unwrap() as usize;
    assert_eq!(output["count"].as_u64().unwrap() as usize, keys * 2);
    assert!(clip.curves().iter().all(|c| c.channel.len() == keys));
    let max = input["max"][0].as_f64().unwrap() as f32;
    assert!((clip.duration() - max).abs() < 1e-6);
    // Sampled and blended on both backends.
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for k in 0..16 {
        batch.push_clip(0, k as f32 * max / 15.0, false);
    }
    let poses = evaluate(&lib, &batch);
    let (first, last) = (&clip.curves()[0].channel, &clip.curves()[1].channel);
    close(poses.curve(0, 0), first.values[0], "first key");
    close(poses.curve(15, 1), *last.values.last().unwrap(), "last key");
    assert!((0..16).any(|i| poses.curve(i, 0) > 0.1), "the weights move");
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "morph weights");
    }
}

#[test]
fn a_crowd_with_curves_on_real_clips_matches_on_the_gpu() {
    // The Knight's clips with a curve of the user's on two of them: a crowd of blends and
    // layers whose curves the GPU must sample as the CPU does.
    let path = common::anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let knight = posegpu::import::load(&path).unwrap();
    let mut clips = knight.clips.clone();
    let walk = Clip::find(&clips, "Walking_A").unwrap();
    let idle = Clip::find(&clips, "Idle").unwrap();
    let d = clips[walk].duration();
    clips[walk] = clips[walk]
        .clone()
        .with_curve("footstep", linear(&[0.0, d * 0.5, d], &[0.0, 1.0, 0.0]))
        .unwrap();
    clips[idle] = clips[idle]
        .clone()
        .with_curve("breath", linear(&[0.0, 1.0], &[0.2, 0.9]))
        .unwrap();
    let lib = AnimLibrary::new(&knight.skeleton, &clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..48u32 {
        let t = i as f32 * 0.173;
        let w = (i % 5) as f32 * 0.25;
        let layers = batch.push_blend(&[
            ClipSample::new(walk as u32, t, true).with_weight(1.0 - w * 0.5),
            ClipSample::new(idle as u32, t * 0.7, true).with_weight(w),
        ]);
        if i % 3 == 0 {
            layers.blend(
                AdditiveSpace::Local,
                w.min(1.0),
                &[ClipSample::new(idle as u32, t, true)],
            );
        }
    }
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "knight curves");
    }
    let poses = evaluate(&lib, &batch);
    assert_eq!(poses.curve_count, 2);
    assert!(poses.curves.iter().any(|&v| v > 0.5));
}

#[test]
fn bad_curves_are_typed_errors() {
    let skeleton = skeleton();
    let clip = Clip::from_pose("a", &skeleton, skeleton.rest()).unwrap();
    let e = clip
        .clone()
        .with_curve("x", linear(&[0.0, 1.0], &[0.0, f32::NAN]))
        .unwrap_err();
    assert!(
        matches!(&e, Error::NonFinite { what } if what.contains("curve 'x'")),
        "{e}"
    );
    let e = clip
        .clone()
        .with_curve("x", linear(&[1.0, 0.5], &[0.0, 1.0]))
        .unwrap_err();
    assert!(matches!(e, Error::TimesDecrease { .. }), "{e}");
    let e = clip
        .with_curve("x", linear(&[0.0, 1.0], &[0.0]))
        .unwrap_err();
    assert!(matches!(e, Error::KeyCountMismatch { .. }), "{e}");
}
