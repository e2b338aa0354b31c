//! Retargeting real characters: Mech_Mike's clips on Mech_Stan in every mode and with the
//! humanoid preset, several sources in one batch, BVH onto BVH, offline against run time, and
//! the GPU against the CPU for all of it.

use crate::common;

use std::path::PathBuf;

use glam::{Quat, Vec3};
use posegpu::retarget::{remap_clip, BoneMapping, Rig};
use posegpu::TranslationMode;
use posegpu::{
    AdditiveSpace, AnimLibrary, Asset, Clip, ClipSample, PoseBatch, Poses, RestPose, SourceId,
};

use common::{
    assert_batch_gpu_matches_cpu, assert_gpu_matches_cpu, cpu_eval, gpu, spread_instances,
};

fn load(rel: &str) -> Asset {
    let path: PathBuf = common::anim_data().join(rel);
    posegpu::import::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn mike() -> Asset {
    load("gltf/quaternius/Mech_Mike.glb")
}

fn stan() -> Asset {
    load("gltf/quaternius/Mech_Stan.glb")
}

/// Stan playing Mike's clips through `rig`.
fn mike_on_stan(rig: &Rig, mike: &Asset, stan: &Asset) -> AnimLibrary {
    let mut b = AnimLibrary::builder(&stan.skeleton);
    let src = b
        .add_source("Mech_Mike", &mike.skeleton, None, rig)
        .unwrap();
    b.add_clips_from(src, &mike.clips).unwrap();
    b.build()
}

/// Clip `clip` of `lib` at every key time of `keys`, clamped (one instance per time).
fn at_keys(lib: &AnimLibrary, clip: usize, keys: &Clip) -> Poses {
    let instances: Vec<ClipSample> = keys
        .key_times()
        .iter()
        .map(|&t| ClipSample::new(clip as u32, t, false))
        .collect();
    cpu_eval(lib, &instances)
}

fn clip_index(asset: &Asset, name: &str) -> usize {
    asset.clips.iter().position(|c| c.name() == name).unwrap()
}

const CLIPS: [&str; 4] = ["Walk", "Run", "Jump", "Dance"];

#[test]
fn every_bone_resolves_by_exact_name() {
    let (mike, stan) = (mike(), stan());
    let m = BoneMapping::new(&mike.skeleton, &stan.skeleton, &Rig::default()).unwrap();
    assert_eq!(m.matched_count(), 43);
    assert!(m.unused_sources().is_empty());
}

#[test]
fn skeleton_mode_never_changes_a_bone_length_of_stan() {
    let (mike, stan) = (mike(), stan());
    let lib = mike_on_stan(&Rig::uniform(TranslationMode::Skeleton), &mike, &stan);
    let rest = stan.skeleton.rest_component();
    let tol = 1e-4 * stan.skeleton.extent();
    for name in CLIPS {
        let c = clip_index(&mike, name);
        let poses = at_keys(&lib, c, &mike.clips[c]);
        for f in 0..poses.instance_count() {
            for bone in 0..stan.skeleton.len() {
                let Some(p) = stan.skeleton.parent(bone) else {
                    continue;
                };
                let len = |cs: &dyn Fn(usize) -> Vec3| (cs(bone) - cs(p)).length();
                let now = len(&|i| poses.component(f, i).translation);
                let reference = len(&|i| rest[i].translation);
                assert!(
                    (now - reference).abs() < tol,
                    "{name} frame {f}: bone {} is {now} long, Stan's is {reference}",
                    stan.skeleton.names()[bone]
                );
            }
        }
    }
}

#[test]
fn animation_mode_plays_mikes_translations_unchanged() {
    let (mike, stan) = (mike(), stan());
    let lib = mike_on_stan(&Rig::uniform(TranslationMode::Animation), &mike, &stan);
    let own = AnimLibrary::new(&mike.skeleton, &mike.clips).unwrap();
    for name in CLIPS {
        let c = clip_index(&mike, name);
        let (on_stan, on_mike) = (
            at_keys(&lib, c, &mike.clips[c]),
            at_keys(&own, c, &mike.clips[c]),
        );
        assert_eq!(on_stan.locals, on_mike.locals, "{name}");
    }
}

#[test]
fn animation_scaled_scales_translations_by_stans_length_ratio() {
    let (mike, stan) = (mike(), stan());
    let lib = mike_on_stan(
        &Rig::uniform(TranslationMode::AnimationScaled),
        &mike,
        &stan,
    );
    let own = AnimLibrary::new(&mike.skeleton, &mike.clips).unwrap();
    let ratio: Vec<f32> = (0..43)
        .map(|i| {
            stan.skeleton.rest()[i].translation.length()
                / mike.skeleton.rest()[i].translation.length()
        })
        .collect();
    assert!(
        ratio.iter().any(|r| (r - 1.0).abs() > 0.1),
        "the two mechs differ in proportions"
    );
    let body = stan.skeleton.find("Body").unwrap();
    for name in CLIPS {
        let c = clip_index(&mike, name);
        let (on_stan, on_mike) = (
            at_keys(&lib, c, &mike.clips[c]),
            at_keys(&own, c, &mike.clips[c]),
        );
        for f in 0..on_stan.instance_count() {
            for (bone, r) in ratio.iter().enumerate() {
                let (s, m) = (on_stan.local(f, bone), on_mike.local(f, bone));
                assert!(
                    s.translation.abs_diff_eq(m.translation * r, 1e-5),
                    "{name} frame {f} bone {bone}"
                );
                assert!(s.rotation.abs_diff_eq(m.rotation, 1e-6));
            }
            // The root's height, in component space, scales by the same ratio.
            let (hs, hm) = (
                on_stan.component(f, body).translation.y,
                on_mike.component(f, body).translation.y,
            );
            assert!(
                (hs - hm * ratio[body]).abs() < 1e-5,
                "{name} frame {f}: root at {hs}, Mike's {hm}"
            );
        }
    }
}

#[test]
fn relative_and_orient_modes_map_mikes_reference_pose_onto_stans() {
    let (mut mike, stan) = (mike(), stan());
    mike.clips
        .push(Clip::from_pose("reference", &mike.skeleton, mike.skeleton.rest()).unwrap());
    let reference = mike.clips.len() - 1;
    for mode in [
        TranslationMode::AnimationRelative,
        TranslationMode::OrientAndScale,
    ] {
        let lib = mike_on_stan(&Rig::uniform(mode), &mike, &stan);
        let poses = cpu_eval(&lib, &[ClipSample::new(reference as u32, 0.0, false)]);
        for (bone, r) in stan.skeleton.rest().iter().enumerate() {
            let l = poses.local(0, bone);
            assert!(
                l.translation.abs_diff_eq(r.translation, 1e-5),
                "{mode}: bone {bone} at {}",
                l.translation
            );
            if mode == TranslationMode::AnimationRelative {
                let same = l.rotation.abs_diff_eq(r.rotation, 1e-5)
                    || l.rotation.abs_diff_eq(-r.rotation, 1e-5);
                assert!(same, "{mode}: bone {bone}");
            }
        }
    }
    // Away from the reference, AnimationRelative adds the difference of the references.
    let lib = mike_on_stan(
        &Rig::uniform(TranslationMode::AnimationRelative),
        &mike,
        &stan,
    );
    let own = AnimLibrary::new(&mike.skeleton, &mike.clips).unwrap();
    let c = clip_index(&mike, "Walk");
    let (on_stan, on_mike) = (
        at_keys(&lib, c, &mike.clips[c]),
        at_keys(&own, c, &mike.clips[c]),
    );
    for f in 0..on_stan.instance_count() {
        for bone in 0..43 {
            let delta =
                stan.skeleton.rest()[bone].translation - mike.skeleton.rest()[bone].translation;
            let got = on_stan.local(f, bone).translation - on_mike.local(f, bone).translation;
            assert!(got.abs_diff_eq(delta, 1e-5), "frame {f} bone {bone}");
        }
    }
}

#[test]
fn with_the_preset_stans_feet_touch_the_ground_when_mikes_do() {
    let (mike, stan) = (mike(), stan());
    let lib = mike_on_stan(&Rig::humanoid(), &mike, &stan);
    let own = AnimLibrary::new(&mike.skeleton, &mike.clips).unwrap();
    let (mike_rest, stan_rest) = (
        mike.skeleton.rest_component(),
        stan.skeleton.rest_component(),
    );
    let mut contacts = 0;
    for name in ["Walk", "Run"] {
        let c = clip_index(&mike, name);
        let (on_stan, on_mike) = (
            at_keys(&lib, c, &mike.clips[c]),
            at_keys(&own, c, &mike.clips[c]),
        );
        for foot in ["Foot.L", "Foot.R"] {
            let (fm, fs) = (
                mike.skeleton.find(foot).unwrap(),
                stan.skeleton.find(foot).unwrap(),
            );
            // Each stands on its ground in its reference pose.
            let (mike_ground, stan_ground) =
                (mike_rest[fm].translation.y, stan_rest[fs].translation.y);
            for f in 0..on_mike.instance_count() {
                let hm = on_mike.component(f, fm).translation.y;
                if (hm - mike_ground).abs() < 1e-3 {
                    contacts += 1;
                    let hs = on_stan.component(f, fs).translation.y;
                    assert!(
                        (hs - stan_ground).abs() < 1e-3,
                        "{name} frame {f}: {foot} at {hs}, ground {stan_ground}"
                    );
                }
            }
        }
    }
    assert!(
        contacts > 4,
        "Mike's feet touch the ground in {contacts} frames"
    );
}

/// Offline conversion and run-time AnimationScaled build the same component-space positions;
/// offline rotations are run time's offset by θ = OldRefCS⁻¹ ⊗ NewRefCS.
fn assert_offline_matches_run_time(source: &Asset, target: &Asset, clip: usize) {
    let rig = Rig::default();
    let mapping = BoneMapping::new(&source.skeleton, &target.skeleton, &rig).unwrap();
    let converted = remap_clip(
        &source.clips[clip],
        &source.skeleton,
        &target.skeleton,
        &mapping,
    )
    .unwrap();
    assert_eq!(converted.key_times(), source.clips[clip].key_times());
    let offline = at_keys(
        &AnimLibrary::new(&target.skeleton, &[converted]).unwrap(),
        0,
        &source.clips[clip],
    );
    let lib = {
        let mut b = AnimLibrary::builder(&target.skeleton);
        let s = b
            .add_source(
                "source",
                &source.skeleton,
                None,
                &Rig::uniform(TranslationMode::AnimationScaled),
            )
            .unwrap();
        b.add_clips_from(s, &source.clips[clip..clip + 1]).unwrap();
        b.build()
    };
    let run_time = at_keys(&lib, 0, &source.clips[clip]);
    let (old_ref, new_ref) = (
        source.skeleton.rest_component(),
        target.skeleton.rest_component(),
    );
    let tol = 1e-4 * target.skeleton.extent();
    for f in 0..offline.instance_count() {
        for (bone, new_ref) in new_ref.iter().enumerate() {
            let Some(o) = mapping.source_of(bone) else {
                continue;
            };
            let (a, b) = (offline.component(f, bone), run_time.component(f, bone));
            assert!(
                a.translation.abs_diff_eq(b.translation, tol),
                "frame {f} bone {bone}: {} vs {}",
                a.translation,
                b.translation
            );
            let theta: Quat = old_ref[o].rotation.conjugate() * new_ref.rotation;
            let expected = b.rotation * theta;
            let angle = posegpu::math::angle_between(a.rotation, expected);
            assert!(
                angle < 1e-3,
                "frame {f} bone {bone}: rotations {angle} rad apart"
            );
        }
    }
}

#[test]
fn offline_conversion_agrees_with_run_time_mech() {
    let (mike, stan) = (mike(), stan());
    assert_offline_matches_run_time(&mike, &stan, clip_index(&mike, "Walk"));
}

#[test]
fn offline_conversion_agrees_with_run_time_bvh() {
    let (walk, cmu) = (load("bvh/cmu_walk_delfem2.bvh"), load("bvh/cmu_01_01.bvh"));
    assert_offline_matches_run_time(&walk, &cmu, 0);
}

#[test]
fn gpu_matches_cpu_in_every_mode() {
    let Some(ctx) = gpu() else { return };
    let (mike, stan) = (mike(), stan());
    let mut rigs: Vec<(String, Rig)> = TranslationMode::ALL
        .iter()
        .map(|m| (m.to_string(), Rig::uniform(*m)))
        .collect();
    rigs.push(("humanoid preset".into(), Rig::humanoid()));
    for (what, rig) in &rigs {
        let lib = mike_on_stan(rig, &mike, &stan);
        assert_gpu_matches_cpu(
            &ctx,
            &lib,
            &spread_instances(&lib, 2),
            &format!("Mike on Stan, {what}"),
        );
    }
    // The procedural humanoid onto a variant with other proportions and rest orientations.
    let h = posegpu::procedural::humanoid_asset();
    let variant = posegpu::procedural::humanoid_variant(7);
    for (what, rig) in &rigs {
        let mut b = AnimLibrary::builder(&variant);
        let s = b.add_source("humanoid", &h.skeleton, None, rig).unwrap();
        b.add_clips_from(s, &h.clips).unwrap();
        let lib = b.build();
        assert_gpu_matches_cpu(
            &ctx,
            &lib,
            &spread_instances(&lib, 3),
            &format!("humanoid variant, {what}"),
        );
    }
}

#[test]
fn one_batch_mixes_sources_reference_poses_and_additive_clips() {
    let (mike, stan) = (mike(), stan());
    // Mike with longer legs as a named alternative retarget source.
    let long_legs: Vec<_> = mike
        .skeleton
        .rest()
        .iter()
        .zip(mike.skeleton.names())
        .map(|(r, n)| {
            let mut r = *r;
            if n.contains("Leg") {
                r.translation *= 1.3;
            }
            r
        })
        .collect();
    let mike_skeleton = mike
        .skeleton
        .clone()
        .with_reference_pose("long_legs", long_legs)
        .unwrap();
    let walk = &mike.clips[clip_index(&mike, "Walk")..clip_index(&mike, "Walk") + 1];
    let additive = [mike.clips[clip_index(&mike, "Yes")]
        .clone()
        .with_additive(AdditiveSpace::Local)];
    let humanoid = posegpu::procedural::humanoid_asset();

    let scaled = Rig::uniform(TranslationMode::AnimationScaled);
    let mut b = AnimLibrary::builder(&stan.skeleton);
    b.add_clips(&stan.clips[..2]).unwrap();
    let plain = b.add_source("Mike", &mike_skeleton, None, &scaled).unwrap();
    let long = b
        .add_source("Mike long legs", &mike_skeleton, Some("long_legs"), &scaled)
        .unwrap();
    let relative = b
        .add_source(
            "Mike relative",
            &mike_skeleton,
            None,
            &Rig::uniform(TranslationMode::AnimationRelative),
        )
        .unwrap();
    let unrelated = b
        .add_source("humanoid", &humanoid.skeleton, None, &Rig::humanoid())
        .unwrap();
    b.add_clips_from(plain, walk).unwrap();
    b.add_clips_from(long, walk).unwrap();
    b.add_clips_from(relative, &additive).unwrap();
    b.add_clips_from(unrelated, &humanoid.clips[..1]).unwrap();
    let lib = b.build();
    assert_eq!(lib.clip_count(), 6);
    assert_eq!(lib.clip_source(2), plain);
    assert_eq!(lib.clip_source(0), SourceId::TARGET);

    // Under AnimationScaled, the long-legged source shortens the leg translations on Stan and
    // leaves the others alone.
    let poses = cpu_eval(
        &lib,
        &[ClipSample::new(2, 0.3, true), ClipSample::new(3, 0.3, true)],
    );
    let thigh = stan.skeleton.find("UpperLeg.L").unwrap();
    let head = stan.skeleton.find("Head").unwrap();
    assert_eq!(poses.local(0, head), poses.local(1, head));
    assert_ne!(
        poses.local(0, thigh).translation,
        poses.local(1, thigh).translation
    );

    // An unrelated skeleton matches no bone: Stan keeps his reference pose.
    let poses = cpu_eval(&lib, &[ClipSample::new(5, 0.5, true)]);
    for (bone, r) in stan.skeleton.rest().iter().enumerate() {
        assert!(poses
            .local(0, bone)
            .translation
            .abs_diff_eq(r.translation, 1e-6));
    }
    // An additive clip under AnimationRelative keeps its deltas.
    let own = AnimLibrary::new(&mike.skeleton, &additive).unwrap();
    for bone in 0..stan.skeleton.len() {
        let delta = |lib: &AnimLibrary, clip| {
            posegpu::CpuEvaluator::new(lib)
                .sample_bone(clip, bone, 0.4, false)
                .unwrap()
        };
        assert_eq!(delta(&lib, 4), delta(&own, 0), "bone {bone}");
    }

    if let Some(ctx) = gpu() {
        assert_gpu_matches_cpu(&ctx, &lib, &spread_instances(&lib, 4), "mixed sources");
        // The retargeted additive, layered over each clip of the batch.
        let mut batch = PoseBatch::new();
        for i in spread_instances(&lib, 4) {
            let layer = [ClipSample::new(4, i.time * 0.7, true)];
            batch
                .push_clip(i.clip, i.time, i.looping)
                .additive(AdditiveSpace::Local, 0.6, &layer);
        }
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "mixed sources, additive layer");
    }
}

#[test]
fn an_unknown_reference_pose_is_an_error() {
    let (mike, stan) = (mike(), stan());
    let mut b = AnimLibrary::builder(&stan.skeleton);
    let e = b
        .add_source("Mike", &mike.skeleton, Some("tall"), &Rig::humanoid())
        .unwrap_err();
    assert!(
        matches!(&e, posegpu::Error::UnknownReferencePose { name, .. } if name == "tall"),
        "{e}"
    );
    // Clips of another skeleton than the source's are refused.
    let s = b
        .add_source("Mike", &mike.skeleton, None, &Rig::humanoid())
        .unwrap();
    let h = posegpu::procedural::humanoid_asset();
    let e = b.add_clips_from(s, &h.clips).err().unwrap();
    assert!(matches!(e, posegpu::Error::TrackCount { .. }), "{e}");
    // A source of another builder is refused, not a panic.
    let mut other = AnimLibrary::builder(&h.skeleton);
    other
        .add_source("a", &h.skeleton, None, &Rig::humanoid())
        .unwrap();
    let foreign = other
        .add_source("b", &h.skeleton, None, &Rig::humanoid())
        .unwrap();
    let e = b.add_clips_from(foreign, &h.clips).err().unwrap();
    assert!(matches!(e, posegpu::Error::UnknownSource { .. }), "{e}");
}

#[test]
fn ue_modes_measure_from_the_nodes_unless_the_rig_asks_for_the_bind_pose() {
    // Stan's `Body` joint stands lower in its nodes than in its bind pose (the nodes crouch):
    // `skeleton` mode gives it the reference translation of the pose the rig names, the node
    // transforms unless `rest` is `bind` (docs/pose-math.md, "Translation retargeting").
    let (mike, stan) = (mike(), stan());
    let body = stan.skeleton.find("Body").unwrap();
    let (bind, nodes) = (stan.skeleton.bind_pose()[body], stan.skeleton.rest()[body]);
    assert!((bind.translation - nodes.translation).length() > 0.01);
    let c = clip_index(&mike, "Walk");
    for (rest, want) in [
        (None, nodes),
        (Some(RestPose::Nodes), nodes),
        (Some(RestPose::Bind), bind),
    ] {
        let rig = Rig {
            rest,
            ..Rig::uniform(TranslationMode::Skeleton)
        };
        let poses = at_keys(&mike_on_stan(&rig, &mike, &stan), c, &mike.clips[c]);
        for f in 0..poses.instance_count() {
            let got = poses.local(f, body).translation;
            assert!(got.abs_diff_eq(want.translation, 1e-5), "{rest:?}: {got}");
        }
    }
}
