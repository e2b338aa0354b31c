//! The pose stages of `posegpu check`: each builds a library and a batch in code, evaluates it
//! on the GPU and on the CPU twin, and compares.

use std::path::PathBuf;

use glam::{Quat, Vec3};
use posegpu::procedural::{humanoid_asset, humanoid_ik_feet_asset, random_asset};
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{
    AdditiveSpace, AnimLibrary, Asset, Bone, BoneTrack, Channel, Clip, ClipId, ClipSample,
    CpuEvaluator, Error, FusePolicy, GpuEvaluator, GpuOptions, IkWeights, Interpolation,
    MaskBranch, Outputs, PoseBatch, Poses, RootLock, Skeleton, SkinningLayout, Transform,
    TranslationMode,
};

use super::layers::{additive, aim_offset, curves, inertialized, masked};
use super::retarget::{baked, plan, plan_between, ue_mode};
use super::{Checker, Measured};

type StageFn = fn(&Checker) -> Result<Measured, Error>;

/// Every pose stage, in the order the table prints them.
pub const STAGES: &[(&str, StageFn)] = &[
    ("sampling: 16 random bones (LINEAR, STEP, one-key)", |c| {
        own_clips(c, "sampling: 16", &random_asset(16, 16, 4))
    }),
    ("sampling: 67-bone humanoid", |c| {
        own_clips(c, "sampling: 67", &humanoid_asset())
    }),
    ("sampling: 256 random bones", |c| {
        own_clips(c, "sampling: 256", &random_asset(256, 256, 3))
    }),
    ("sampling: a deep chain of 300 bones", deep_chain),
    ("compressed keys: the humanoid's clips, packed", compressed),
    (
        "partial workgroups: 1, 63, 65, 321 instances",
        partial_workgroups,
    ),
    ("UE mode animation", |c| {
        ue_mode(c, TranslationMode::Animation)
    }),
    ("UE mode skeleton", |c| {
        ue_mode(c, TranslationMode::Skeleton)
    }),
    ("UE mode animation_scaled", |c| {
        ue_mode(c, TranslationMode::AnimationScaled)
    }),
    ("UE mode animation_relative", |c| {
        ue_mode(c, TranslationMode::AnimationRelative)
    }),
    ("UE mode orient_and_scale", |c| {
        ue_mode(c, TranslationMode::OrientAndScale)
    }),
    (
        "character plan: humanoid -> variant, in place or not",
        |c| plan(c, "character plan", &[IkWeights::NONE]),
    ),
    ("IK after retargeting: feet, pelvis, toes", |c| {
        let half = IkWeights {
            feet: 0.5,
            hands: 0.0,
        };
        plan(c, "IK after retargeting: feet", &[IkWeights::FEET, half])
    }),
    ("IK after retargeting: hands", |c| {
        let hands = IkWeights {
            feet: 0.0,
            hands: 1.0,
        };
        plan(c, "IK after retargeting: hands", &[hands, IkWeights::ALL])
    }),
    (
        "IK after retargeting: IK-style feet kept on the legs",
        |c| {
            let (source, target) = (humanoid_asset(), humanoid_ik_feet_asset());
            let plan = RetargetPlan::new(&source, &target, &PlanOptions::default())?;
            let stage = "IK after retargeting: IK-style feet";
            plan_between(
                c,
                stage,
                &source,
                &target,
                &plan,
                &[IkWeights::FEET, IkWeights::NONE],
            )
        },
    ),
    ("baked clips, IK per instance", baked),
    ("additive layer, local space", |c| {
        additive(c, "additive layer, local", AdditiveSpace::Local)
    }),
    ("additive layer, mesh space", |c| {
        additive(c, "additive layer, mesh", AdditiveSpace::Mesh)
    }),
    ("aim offset (mesh-space additives on a grid)", aim_offset),
    ("layered blend with a mask, local space", |c| {
        masked(c, "layered blend with a mask, local", AdditiveSpace::Local)
    }),
    ("layered blend with a mask, mesh space", |c| {
        masked(c, "layered blend with a mask, mesh", AdditiveSpace::Mesh)
    }),
    ("inertialized transitions, 12 frames", inertialized),
    ("curves and morph weights", curves),
    ("fused pass (blends, masked local layers)", |c| {
        passes(c, "fused pass", FusePolicy::Fused)
    }),
    ("separate passes (blends, masked local layers)", |c| {
        passes(c, "separate passes", FusePolicy::Separate)
    }),
    ("outputs: locals, component, skinning 3x4", |c| {
        outputs(c, "outputs: locals", Outputs::ALL)
    }),
    ("outputs: component, skinning 4x4", |c| {
        let o = Outputs::COMPONENT_AND_SKINNING.with_skinning(SkinningLayout::Columns4x4);
        outputs(c, "outputs: component", o)
    }),
    ("outputs: skinning 3x4 only", |c| {
        outputs(c, "outputs: skinning 3x4", Outputs::SKINNING)
    }),
    ("outputs: skinning 4x4 only", |c| {
        let o = Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4);
        outputs(c, "outputs: skinning 4x4", o)
    }),
    ("chunking at forced-low binding limits", chunking),
];

/// The stages for the files given: each file's own clips; with two or more, the first file's
/// clips retargeted onto each other file through a character plan with feet IK.
pub fn files(c: &Checker, files: &[(PathBuf, Asset)]) -> Vec<(String, Result<Measured, Error>)> {
    let mut out = Vec::new();
    let name = |p: &PathBuf| {
        p.file_name()
            .unwrap_or(p.as_os_str())
            .to_string_lossy()
            .to_string()
    };
    for (path, asset) in files {
        let stage = format!("file {}: own clips", name(path));
        let measured = if asset.clips.is_empty() {
            Err(Error::UnknownAnimation {
                name: "any".into(),
                available: format!("none: {} has no animations", path.display()),
            })
        } else {
            own_clips(c, &stage, asset)
        };
        out.push((stage, measured));
    }
    if let Some(((first, source), rest)) = files.split_first() {
        for (path, target) in rest {
            let stage = format!("file plan: {} -> {}", name(first), name(path));
            let measured = RetargetPlan::new(source, target, &PlanOptions::default())
                .and_then(|p| plan_between(c, &stage, source, target, &p, &[IkWeights::FEET]));
            out.push((stage, measured));
        }
    }
    out
}

/// Evaluates `batch` on both backends and compares.
pub(super) fn both(
    c: &Checker,
    stage: &str,
    lib: &AnimLibrary,
    batch: &PoseBatch,
    options: &GpuOptions,
) -> Result<Measured, Error> {
    let mut gpu = GpuEvaluator::new(&c.ctx, lib, batch.len(), options)?;
    gpu.evaluate(batch)?;
    let got = gpu.read_back()?;
    let mut want = Poses::default();
    CpuEvaluator::new(lib).evaluate(batch, &mut want)?;
    Ok(Measured {
        instances: batch.len(),
        bones: lib.bone_count(),
        deviation: c.compare(stage, lib, got, &want),
        tolerance: super::tolerance(lib.skeleton()),
        note: None,
    })
}

/// The worse of a stage's measurements so far (`None` before the first) and a new one.
pub(super) fn worst(a: Option<Measured>, b: Measured) -> Measured {
    let Some(a) = a else { return b };
    let note = a.note.or(b.note);
    Measured {
        instances: a.instances.max(b.instances),
        bones: a.bones.max(b.bones),
        tolerance: a.tolerance.min(b.tolerance),
        deviation: if a.deviation.is_nan() || b.deviation.is_nan() {
            f32::NAN
        } else {
            a.deviation.max(b.deviation)
        },
        note,
    }
}

/// Both pass plans (fused and separate) on the same batch, keeping every output.
pub(super) fn both_plans(
    c: &Checker,
    stage: &str,
    lib: &AnimLibrary,
    batch: &PoseBatch,
) -> Result<Measured, Error> {
    both_plans_keeping(c, stage, lib, batch, Outputs::ALL)
}

/// Both pass plans on the same batch, keeping `outputs`.
fn both_plans_keeping(
    c: &Checker,
    stage: &str,
    lib: &AnimLibrary,
    batch: &PoseBatch,
    outputs: Outputs,
) -> Result<Measured, Error> {
    let mut out: Option<Measured> = None;
    for passes in [FusePolicy::Fused, FusePolicy::Separate] {
        let options = GpuOptions {
            passes,
            outputs,
            ..Default::default()
        };
        let m = both(c, stage, lib, batch, &options)?;
        out = Some(worst(out, m));
    }
    Ok(out.expect("two plans ran"))
}

/// `n` instances over `lib`'s ordinary clips, times spread over and past each clip's range,
/// alternately clamped and looping; `lock` gives instance `i`'s root lock.
pub(super) fn spread(
    lib: &AnimLibrary,
    n: usize,
    lock: impl Fn(usize) -> Option<RootLock>,
) -> Vec<ClipSample> {
    let clips: Vec<ClipId> = lib
        .clip_ids()
        .filter(|&c| lib.clip_additive_space(c).is_none())
        .collect();
    (0..n)
        .map(|i| {
            let clip = clips[i % clips.len()];
            let d = lib.clip_duration(clip);
            let u = (i as f32 * 0.618_034).fract();
            ClipSample::new(clip, (1.5 * u - 0.25) * d, i % 2 == 1).with_root_lock(lock(i))
        })
        .collect()
}

fn batch_of(samples: &[ClipSample]) -> PoseBatch {
    let mut batch = PoseBatch::with_capacity(samples.len(), 1);
    for s in samples {
        batch.push_blend(std::slice::from_ref(s));
    }
    batch
}

/// The humanoid's own clips, every clip compressed at the default tolerance (the GPU decodes
/// the packed blocks), both pass plans. (Random skeletons' rotations near w = 0 amplify a GPU
/// that does not fuse the decode's fma, lavapipe, past the tolerance: the closing note says so.)
fn compressed(c: &Checker) -> Result<Measured, Error> {
    let asset = humanoid_asset();
    let all = || posegpu::compress::Compression::all(posegpu::compress::DEFAULT_TOLERANCE);
    let mut b = AnimLibrary::builder(&asset.skeleton);
    b.compress(Some(all()?));
    b.add_clips(&asset.clips)?;
    let lib = b.build();
    let batch = batch_of(&spread(&lib, c.instances, |_| None));
    let measured = both_plans(c, "compressed keys", &lib, &batch)?;
    decoded_keys(c, all()?)?;
    Ok(measured)
}

/// Prints how many decoded key components the GPU gives bit for bit as the CPU twin does: a
/// clip keyed every 1/32 s sampled at its key times (each lane blends with weight 0, so its
/// translation and scale are the decoded keys themselves).
fn decoded_keys(c: &Checker, compression: posegpu::compress::Compression) -> Result<(), Error> {
    let chain = |i: usize| Transform::new(Vec3::Y * i as f32, Quat::IDENTITY, Vec3::ONE);
    let skeleton = Skeleton::new(
        (0..8usize)
            .map(|i| Bone::new(format!("b{i}"), i.checked_sub(1), chain(i.min(1))))
            .collect(),
    )?;
    let times: Vec<f32> = (0..64).map(|k| k as f32 / 32.0).collect();
    let wave = |i: usize, f: fn(f32) -> f32| -> Vec<Vec3> {
        let i = i as f32;
        times
            .iter()
            .map(|&t| Vec3::new(f(t + i), 0.3 * f(2.0 * t - i), 1.0 + 0.2 * f(t * i)))
            .collect()
    };
    let tracks = (0..8)
        .map(|i| BoneTrack {
            translation: Some(Channel::new(
                times.clone(),
                wave(i, f32::sin),
                Interpolation::Linear,
            )),
            scale: Some(Channel::new(
                times.clone(),
                wave(i, f32::cos),
                Interpolation::Linear,
            )),
            ..BoneTrack::default()
        })
        .collect();
    let clip = Clip::new("grid", &skeleton, tracks)?;
    let mut b = AnimLibrary::builder(&skeleton);
    b.compress(Some(compression));
    b.add_clips(std::slice::from_ref(&clip))?;
    let lib = b.build();
    let samples: Vec<ClipSample> = (0..c.instances.max(64))
        .map(|i| ClipSample::new(0, (i % 64) as f32 / 32.0, false))
        .collect();
    let batch = batch_of(&samples);
    let mut gpu = GpuEvaluator::new(&c.ctx, &lib, batch.len(), &GpuOptions::default())?;
    gpu.evaluate(&batch)?;
    let got = gpu.read_back()?;
    let mut want = Poses::default();
    CpuEvaluator::new(&lib).evaluate(&batch, &mut want)?;
    let (mut same, mut all, mut apart) = (0usize, 0usize, 0.0f32);
    for (g, w) in got.locals.iter().zip(&want.locals) {
        for (x, y) in g.translation[..3]
            .iter()
            .chain(&g.scale[..3])
            .zip(w.translation[..3].iter().chain(&w.scale[..3]))
        {
            all += 1;
            same += usize::from(x.to_bits() == y.to_bits());
            apart = apart.max((x - y).abs());
        }
    }
    println!(
        "  (compressed keys decoded at their times: {same} of {all} components bit-identical on \
         the GPU and the CPU twin; largest difference {apart:.1e})"
    );
    Ok(())
}

/// An asset's own clips, both pass plans.
fn own_clips(c: &Checker, stage: &str, asset: &Asset) -> Result<Measured, Error> {
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let batch = batch_of(&spread(&lib, c.instances, |_| None));
    both_plans(c, stage, &lib, &batch)
}

/// A chain of 300 bones (the deepest the fused pass takes), each turned a little by its own
/// wave.
fn deep_chain(c: &Checker) -> Result<Measured, Error> {
    const BONES: usize = 300;
    let step = |i: usize| {
        let rest = Quat::from_axis_angle(Vec3::new(1.0, 0.3, 0.2).normalize(), 0.02);
        let lean = if i == 0 { Quat::IDENTITY } else { rest };
        Transform::new(Vec3::new(0.0, 0.01, 0.0), lean, Vec3::ONE)
    };
    let bones = |binds: Option<&[Transform]>| -> Vec<Bone> {
        (0..BONES)
            .map(|i| Bone {
                inverse_bind: binds.map(|b| b[i].to_matrix().inverse()),
                ..Bone::new(format!("chain_{i:03}"), i.checked_sub(1), step(i))
            })
            .collect()
    };
    let unbound = Skeleton::new(bones(None))?;
    let skeleton = Skeleton::new(bones(Some(&unbound.rest_component())))?;
    let times: Vec<f32> = (0..16).map(|k| k as f32 / 15.0).collect();
    let tracks = (0..BONES)
        .map(|i| {
            let axis = Vec3::new((i as f32).sin(), 1.0, (i as f32 * 0.7).cos()).normalize();
            let rotations = times
                .iter()
                .map(|t| {
                    skeleton.rest()[i].rotation
                        * Quat::from_axis_angle(axis, 0.05 * (6.0 * t + i as f32).sin())
                })
                .collect();
            BoneTrack {
                rotation: Some(Channel::new(
                    times.clone(),
                    rotations,
                    Interpolation::Linear,
                )),
                ..BoneTrack::default()
            }
        })
        .collect();
    let clip = Clip::new("curl", &skeleton, tracks)?;
    let lib = AnimLibrary::new(&skeleton, &[clip])?;
    let batch = batch_of(&spread(&lib, c.instances, |_| None));
    both_plans(c, "sampling: a deep chain", &lib, &batch)
}

/// One evaluator reused for crowds of 1, 63, 65 and 321 instances (partial workgroups and
/// fused blocks at every size), both plans.
fn partial_workgroups(c: &Checker) -> Result<Measured, Error> {
    let asset = humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let stage = "partial workgroups";
    let mut out: Option<Measured> = None;
    for passes in [FusePolicy::Fused, FusePolicy::Separate] {
        let options = GpuOptions {
            passes,
            ..Default::default()
        };
        let mut gpu = GpuEvaluator::new(&c.ctx, &lib, 1, &options)?;
        for n in [1, 63, 65, 321] {
            let batch = batch_of(&spread(&lib, n, |_| None));
            gpu.evaluate(&batch)?;
            let got = gpu.read_back()?;
            let mut want = Poses::default();
            CpuEvaluator::new(&lib).evaluate(&batch, &mut want)?;
            let m = Measured {
                instances: n,
                bones: lib.bone_count(),
                deviation: c.compare(stage, &lib, got, &want),
                tolerance: super::tolerance(lib.skeleton()),
                note: None,
            };
            out = Some(worst(out, m));
        }
    }
    Ok(out.expect("sizes ran"))
}

/// Blends of two clips, and masked local layers over a clip, on the humanoid: what the fused
/// pass takes, under `plan`.
fn passes(c: &Checker, stage: &str, plan: FusePolicy) -> Result<Measured, Error> {
    let (lib, batch) = masked_local_batch(c.instances)?;
    let options = GpuOptions {
        passes: plan,
        ..Default::default()
    };
    both(c, stage, &lib, &batch, &options)
}

/// The humanoid with an upper-body mask, and `n` instances: single clips, two-clip blends, and
/// clips under a masked local blend.
fn masked_local_batch(n: usize) -> Result<(AnimLibrary, PoseBatch), Error> {
    let asset = humanoid_asset();
    let mut builder = AnimLibrary::builder(&asset.skeleton);
    builder.add_clips(&asset.clips)?;
    let mask = builder.add_mask("upper", &[MaskBranch::new("spine_02", 1)])?;
    let lib = builder.build();
    let samples = spread(&lib, n, |_| None);
    let mut batch = PoseBatch::with_capacity(n, 3);
    for (i, s) in samples.iter().enumerate() {
        let other = ClipSample::new((s.clip.0 + 1) % 4, s.time * 0.7 + 0.1, true);
        match i % 3 {
            0 => {
                batch.push_blend(std::slice::from_ref(s));
            }
            1 => {
                batch.push_blend(&[s.with_weight(0.35), other.with_weight(0.65)]);
            }
            _ => {
                batch
                    .push_blend(std::slice::from_ref(s))
                    .blend(AdditiveSpace::Local, 0.6, &[other])
                    .with_mask(mask);
            }
        }
    }
    Ok((lib, batch))
}

/// The masked batch keeping only `outputs`, under both plans.
fn outputs(c: &Checker, stage: &str, outputs: Outputs) -> Result<Measured, Error> {
    let (lib, batch) = masked_local_batch(c.instances)?;
    both_plans_keeping(c, stage, &lib, &batch, outputs)
}

/// Binding limits forced down so the crowd splits over many output chunks and dispatches of
/// at most 3 x 3 workgroups, with mesh-space layers (their delta slots split too).
fn chunking(c: &Checker) -> Result<Measured, Error> {
    let (lib, batch) = super::layers::mesh_batch(c.instances)?;
    let per_instance = (lib.bone_count() * 48) as u64;
    let options = GpuOptions {
        max_binding_size: Some(per_instance * 37 + 5),
        max_workgroups_per_dimension: Some(3),
        ..Default::default()
    };
    both(c, "chunking", &lib, &batch, &options)
}
