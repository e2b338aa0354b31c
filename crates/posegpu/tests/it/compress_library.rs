//! Compressed clips in a library (issue 31, phase 2): the GPU decodes what the CPU twin
//! decodes, compressed clips play within the threshold of the plain ones, compressed and plain
//! clips mix in one library, and every way a clip is played works on compressed keys (UE's
//! modes, a character plan, baked clips with IK goals, additive layers).

use crate::common;

use glam::{Quat, Vec3};
use posegpu::compress::{Compression, DEFAULT_TOLERANCE};
use posegpu::procedural::{humanoid_asset, humanoid_variant};
use posegpu::retarget::Rig;
use posegpu::{
    AnimLibrary, BoneTrack, Channel, Clip, ClipId, ClipSample, CpuEvaluator, Deviation, IkWeights,
    Interpolation, LibraryBuilder, PoseBatch, Poses, Skeleton, Transform,
};

/// One way of adding clips to a builder.
type Build<'a> = Box<dyn Fn(&mut LibraryBuilder) + 'a>;

fn compressed() -> Option<Compression> {
    Some(Compression::all(DEFAULT_TOLERANCE).unwrap())
}

/// The largest component-space distance between two evaluations, over the skeleton's size.
fn apart(lib: &AnimLibrary, a: &Poses, b: &Poses) -> f32 {
    let mut w = 0.0f32;
    for i in 0..a.instance_count() {
        for bone in 0..lib.bone_count() {
            let d = a.component(i, bone).translation - b.component(i, bone).translation;
            w = w.max(d.length());
        }
    }
    w / lib.skeleton().extent()
}

/// `build` run twice, plain and with every clip compressed.
fn both(build: impl Fn(&mut LibraryBuilder)) -> (AnimLibrary, AnimLibrary) {
    let skeleton = humanoid_asset().skeleton;
    let mut plain = AnimLibrary::builder(&skeleton);
    build(&mut plain);
    let mut packed = AnimLibrary::builder(&skeleton);
    packed.compress(compressed());
    build(&mut packed);
    (plain.build(), packed.build())
}

#[test]
fn compressed_clips_play_within_the_threshold_and_the_gpu_decodes_as_the_twin() {
    let asset = humanoid_asset();
    let (plain, packed) = both(|b| {
        b.add_clips(&asset.clips).unwrap();
    });
    assert!(packed.asset_bytes() < plain.asset_bytes());
    let instances = common::spread_instances(&plain, 9);
    let (p, c) = (
        common::cpu_eval(&plain, &instances),
        common::cpu_eval(&packed, &instances),
    );
    let d = apart(&plain, &p, &c);
    // Keys within 3e-4 of the height at virtual vertices; between keys the same blend of them.
    assert!(d > 0.0 && d < 1e-3, "compressed against plain: {d:e}");
    if let Some(ctx) = common::gpu() {
        common::assert_gpu_matches_cpu(&ctx, &packed, &instances, "compressed clips");
    }
}

#[test]
fn compressed_and_plain_clips_mix_in_one_library() {
    let asset = humanoid_asset();
    let names: Vec<&str> = asset.clips.iter().map(|c| c.name()).collect();
    let mut b = AnimLibrary::builder(&asset.skeleton);
    b.compress(Some(
        Compression::named(DEFAULT_TOLERANCE, &names[..1]).unwrap(),
    ));
    b.add_clips(&asset.clips).unwrap();
    let mixed = b.build();
    let plain = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let instances = common::spread_instances(&plain, 5);
    let (p, m) = (
        common::cpu_eval(&plain, &instances),
        common::cpu_eval(&mixed, &instances),
    );
    // Only the compressed clip's instances move.
    let per = plain.bone_count();
    for (i, inst) in instances.iter().enumerate() {
        let differs = (0..per).any(|bone| p.component(i, bone) != m.component(i, bone));
        assert_eq!(
            differs,
            inst.clip == ClipId(0),
            "instance {i} of clip {}",
            inst.clip.0
        );
    }
    if let Some(ctx) = common::gpu() {
        common::assert_gpu_matches_cpu(&ctx, &mixed, &instances, "mixed library");
    }
}

/// A two-bone clip keyed every 1/32 s (a step that is a power of two: the key times map onto
/// keys exactly), translations and scales moving.
fn grid_clip() -> (Skeleton, Clip) {
    let skeleton = Skeleton::new(vec![
        posegpu::Bone::new("root", None, posegpu::Transform::IDENTITY),
        posegpu::Bone::new(
            "tip",
            Some(0),
            posegpu::Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE),
        ),
    ])
    .unwrap();
    let times: Vec<f32> = (0..40).map(|k| k as f32 / 32.0).collect();
    let moving = |f: fn(f32) -> Vec3| {
        Channel::new(
            times.clone(),
            times.iter().map(|&t| f(t)).collect(),
            Interpolation::Linear,
        )
    };
    let tracks = vec![
        BoneTrack {
            translation: Some(moving(|t| Vec3::new(t.sin(), 0.3 * t, (2.0 * t).cos()))),
            rotation: Some(Channel::new(
                times.clone(),
                times.iter().map(|&t| Quat::from_rotation_y(t)).collect(),
                Interpolation::Linear,
            )),
            ..BoneTrack::default()
        },
        BoneTrack {
            scale: Some(moving(|t| Vec3::splat(1.0 + 0.2 * t.sin()))),
            ..BoneTrack::default()
        },
    ];
    let clip = Clip::new("grid", &skeleton, tracks).unwrap();
    (skeleton, clip)
}

/// How many f32 steps apart `a` and `b` are (same sign assumed: keys here are positive).
fn ulps(a: f32, b: f32) -> u32 {
    a.to_bits().abs_diff(b.to_bits())
}

#[test]
fn decoded_keys_agree_to_the_bit_or_the_products_rounding_on_the_gpu_and_the_twin() {
    let (skeleton, clip) = grid_clip();
    let mut b = AnimLibrary::builder(&skeleton);
    b.compress(compressed());
    b.add_clips(std::slice::from_ref(&clip)).unwrap();
    let lib = b.build();
    // At each key time every lane blends with weight 0: the decoded key itself.
    let instances: Vec<posegpu::ClipSample> = (0..40)
        .map(|k| posegpu::ClipSample::new(0, k as f32 / 32.0, false))
        .collect();
    let cpu = common::cpu_eval(&lib, &instances);
    let Some(ctx) = common::gpu() else { return };
    let gpu = common::gpu_eval(&ctx, &lib, &instances, &Default::default());
    // One fma per component: identical where the GPU fuses it (NVIDIA), else apart by the
    // product's one rounding, an ulp of the track's magnitude (here about 1).
    let (mut worst, mut apart) = (0, 0.0f32);
    for (g, c) in gpu.locals.iter().zip(&cpu.locals) {
        for k in 0..3 {
            for (x, y) in [
                (g.translation[k], c.translation[k]),
                (g.scale[k], c.scale[k]),
            ] {
                worst = worst.max(ulps(x, y));
                apart = apart.max((x - y).abs());
            }
        }
    }
    eprintln!("decoded keys: {apart:e} apart ({worst} ulp of the value) at most");
    assert!(apart <= f32::EPSILON, "{apart:e}");
    let d = Deviation::between(&gpu, &cpu);
    assert!(d.rotation < 1e-6, "{d:?}");
}

/// The humanoid and a variant of it without clips, to retarget onto.
fn humanoid_and_variant() -> (posegpu::Asset, posegpu::Asset) {
    let asset = humanoid_asset();
    let target = posegpu::Asset {
        skeleton: humanoid_variant(7),
        clips: Vec::new(),
        ..asset.clone()
    };
    (asset, target)
}

#[test]
fn retargeted_clips_play_compressed_through_modes_plans_and_baked_goals() {
    let (asset, target) = humanoid_and_variant();
    let batch_of = |lib: &AnimLibrary| {
        let mut batch = PoseBatch::new();
        for clip in lib.clip_ids() {
            for k in 0..6 {
                let t = lib.clip_duration(clip) * k as f32 / 5.0;
                batch
                    .push_blend(&[ClipSample::new(clip, t, k % 2 == 0)])
                    .ik(IkWeights::FEET);
            }
        }
        batch
    };
    let plan = posegpu::retarget::RetargetPlan::new(&asset, &target, &Default::default()).unwrap();
    let builds: [(&str, Build); 3] = [
        (
            "UE modes",
            Box::new(|b: &mut LibraryBuilder| {
                let id = b
                    .add_source("src", &asset.skeleton, None, &Rig::humanoid())
                    .unwrap();
                b.add_clips_from(id, &asset.clips[..2]).unwrap();
            }),
        ),
        (
            "character plan",
            Box::new(|b: &mut LibraryBuilder| {
                let id = b.add_character_source("src", &asset, &plan).unwrap();
                b.add_clips_from(id, &asset.clips[..2]).unwrap();
            }),
        ),
        (
            "baked with goals",
            Box::new(|b: &mut LibraryBuilder| {
                b.add_baked_clips(&asset, &plan, &asset.clips[..2]).unwrap();
            }),
        ),
    ];
    for (what, build) in builds {
        let mut plain = AnimLibrary::builder(&target.skeleton);
        build(&mut plain);
        let mut packed = AnimLibrary::builder(&target.skeleton);
        packed.compress(compressed());
        build(&mut packed);
        let (plain, packed) = (plain.build(), packed.build());
        let batch = batch_of(&plain);
        let (p, c) = (
            common::cpu_eval_batch(&plain, &batch),
            common::cpu_eval_batch(&packed, &batch),
        );
        let d = apart(&plain, &p, &c);
        eprintln!("{what}: compressed against plain {d:.2e} of the size");
        assert!(d > 0.0 && d < 2e-3, "{what}: {d:e}");
        if let Some(ctx) = common::gpu() {
            common::assert_batch_gpu_matches_cpu(&ctx, &packed, &batch, what);
        }
    }
}

/// The sampling stage decodes each key a crowd's samples share once, at every bone, and plays
/// them from there (`DecodedKeys` in `src/cpu/packed.rs`); a sample alone decodes bone by
/// bone. Both give the same bits, on the clips' own skeleton, through UE's modes and through a
/// character plan.
#[test]
fn keys_a_crowd_shares_play_as_keys_decoded_bone_by_bone() {
    let (asset, target) = humanoid_and_variant();
    let plan = posegpu::retarget::RetargetPlan::new(&asset, &target, &Default::default()).unwrap();
    let builds: [(&str, &Skeleton, Build); 3] = [
        (
            "own skeleton",
            &asset.skeleton,
            Box::new(|b: &mut LibraryBuilder| {
                b.add_clips(&asset.clips).unwrap();
            }),
        ),
        (
            "UE modes",
            &target.skeleton,
            Box::new(|b: &mut LibraryBuilder| {
                let id = b
                    .add_source("src", &asset.skeleton, None, &Rig::humanoid())
                    .unwrap();
                b.add_clips_from(id, &asset.clips).unwrap();
            }),
        ),
        (
            "character plan",
            &target.skeleton,
            Box::new(|b: &mut LibraryBuilder| {
                let id = b.add_character_source("src", &asset, &plan).unwrap();
                b.add_clips_from(id, &asset.clips).unwrap();
            }),
        ),
    ];
    for (what, skeleton, build) in builds {
        let mut b = AnimLibrary::builder(skeleton);
        b.compress(compressed());
        build(&mut b);
        let lib = b.build();
        // Many more instances than keys: most keys are shared.
        let instances = common::crowd(&lib, 400, 0.25);
        let cpu = CpuEvaluator::new(&lib);
        let mut locals = Vec::new();
        cpu.sample_locals(&PoseBatch::from_instances(&instances), &mut locals)
            .unwrap();
        let bones = lib.bone_count();
        for (i, s) in instances.iter().enumerate() {
            for bone in 0..bones {
                let alone = cpu.sample_bone(s.clip, bone, s.time, s.looping).unwrap();
                let shared = Transform::from(locals[i * bones + bone]);
                assert_eq!(shared, alone, "{what}: instance {i}, bone {bone}");
            }
        }
    }
}

#[test]
fn additives_masked_blends_and_root_locks_play_compressed() {
    use posegpu::additive::{make_additive, AdditiveBase};
    use posegpu::{AdditiveSpace, MaskBranch, RootLock};
    let asset = humanoid_asset();
    let skeleton = &asset.skeleton;
    let (a, b) = (&asset.clips[0], &asset.clips[1]);
    let mut clips = asset.clips.clone();
    for space in AdditiveSpace::ALL {
        let add = make_additive(
            space.name(),
            skeleton,
            a,
            AdditiveBase::ClipScaled(b),
            space,
        );
        clips.push(add.unwrap());
    }
    let spine = skeleton.names()[skeleton.len() / 3].clone();
    let build = |compression: Option<Compression>| {
        let mut builder = AnimLibrary::builder(skeleton);
        builder.compress(compression);
        builder.add_clips(&clips).unwrap();
        let mask = builder
            .add_mask("upper", &[MaskBranch::new(&spine, 2)])
            .unwrap();
        (builder.build(), mask)
    };
    let ((plain, mask), (packed, _)) = (build(None), build(compressed()));
    let n = asset.clips.len() as u32;
    let mut batch = PoseBatch::new();
    for k in 0..8 {
        let t = k as f32 * 0.11;
        let lock = [None, Some(RootLock::FirstFrame), Some(RootLock::RefPose)][k % 3];
        let base = ClipSample::new(1, t, true).with_root_lock(lock);
        for (i, space) in AdditiveSpace::ALL.into_iter().enumerate() {
            batch
                .push_blend(&[base])
                .additive(space, 0.7, &[ClipSample::new(n + i as u32, t, true)])
                .blend(space, 0.5, &[ClipSample::new(2, t, true)])
                .with_mask(mask);
        }
    }
    let (p, c) = (
        common::cpu_eval_batch(&plain, &batch),
        common::cpu_eval_batch(&packed, &batch),
    );
    let d = apart(&plain, &p, &c);
    assert!(
        d > 0.0 && d < 2e-3,
        "layers: compressed against plain {d:e}"
    );
    if let Some(ctx) = common::gpu() {
        common::assert_batch_gpu_matches_cpu(&ctx, &packed, &batch, "compressed layers");
    }
}

#[test]
fn a_bad_tolerance_is_refused_before_any_clip_is_packed() {
    for bad in [0.0, -1e-4, f32::NAN, f32::INFINITY, 2.0] {
        for made in [Compression::all(bad), Compression::named(bad, &["walk"])] {
            let Err(e) = made else {
                panic!("tolerance {bad} accepted")
            };
            assert!(
                matches!(e, posegpu::Error::CompressTolerance { value, .. } if value.to_bits() == bad.to_bits()),
                "{e}"
            );
        }
    }
}
