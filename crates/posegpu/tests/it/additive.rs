//! Additive poses: the spec's delta rules by hand, identities on real clips, mesh space against
//! local space, dynamic additives, GPU against CPU, and bad input.

use crate::common;

use glam::{Quat, Vec3};
use posegpu::additive::frame_time;
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::math::blend::blend;
use posegpu::math::delta::{
    apply_delta, apply_mesh_delta, make_delta, to_local_rotations, to_mesh_rotations,
    weighted_delta, IDENTITY_DELTA,
};
use posegpu::{
    AdditiveSpace, AnimLibrary, Asset, Bone, Clip, ClipSample, Error, PoseBatch, Poses, Skeleton,
    Transform,
};

use common::{assert_batch_gpu_matches_cpu, cpu_eval_batch, gpu, gpu_eval_batch};

const LOCAL: AdditiveSpace = AdditiveSpace::Local;
const MESH: AdditiveSpace = AdditiveSpace::Mesh;

fn load(rel: &str) -> Asset {
    let path = common::anim_data().join(rel);
    posegpu::import::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn knight() -> Asset {
    load("gltf/kaykit-adventurers/Knight.glb")
}

fn clip<'a>(asset: &'a Asset, name: &str) -> &'a Clip {
    &asset.clips[Clip::find(&asset.clips, name).unwrap()]
}

/// A small deterministic generator (no dependency on a random crate).
use common::Lcg;

impl Lcg {
    fn transform(&mut self) -> Transform {
        let axis = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), 1.0).normalize();
        Transform::new(
            Vec3::new(
                self.range(-2.0, 2.0),
                self.range(-2.0, 2.0),
                self.range(-2.0, 2.0),
            ),
            Quat::from_axis_angle(axis, self.range(-3.0, 3.0)),
            Vec3::new(
                self.range(0.5, 2.0),
                self.range(0.5, 2.0),
                self.range(0.5, 2.0),
            ),
        )
    }
}

fn assert_close(a: &Transform, b: &Transform, tol: f32, what: &str) {
    let r = (a.rotation.dot(b.rotation).abs() - 1.0).abs();
    assert!(
        a.translation.abs_diff_eq(b.translation, tol)
            && a.scale.abs_diff_eq(b.scale, tol)
            && r <= tol,
        "{what}: {a:?} != {b:?}"
    );
}

fn assert_poses_close(a: &Poses, b: &Poses, tol: f32, what: &str) {
    for (i, (x, y)) in a.locals.iter().zip(&b.locals).enumerate() {
        assert_close(
            &(*x).into(),
            &(*y).into(),
            tol,
            &format!("{what}, local {i}"),
        );
    }
}

#[test]
fn a_delta_against_itself_is_the_identity_and_applies_as_nothing() {
    let mut rng = Lcg(7);
    for _ in 0..200 {
        let p = rng.transform();
        let d = make_delta(&p, &p);
        assert_close(&d, &IDENTITY_DELTA, 1e-6, "delta of a pose against itself");
        assert_eq!(d.translation, Vec3::ZERO);
        // Weight 0 (or anything up to ZERO_WEIGHT) applies nothing at all.
        assert!(weighted_delta(&make_delta(&rng.transform(), &p), 1e-5).is_none());
    }
}

#[test]
fn a_delta_applied_at_full_weight_onto_its_base_gives_the_pose_back() {
    let mut rng = Lcg(11);
    for _ in 0..200 {
        let (p, b) = (rng.transform(), rng.transform());
        let d = weighted_delta(&make_delta(&p, &b), 1.0).unwrap();
        assert_close(&apply_delta(&b, &d), &p, 2e-5, "P against B onto B");
    }
}

#[test]
fn hand_computed_weights_follow_the_full_and_partial_paths() {
    let quarter = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let delta = Transform {
        rotation: quarter,
        translation: Vec3::new(1.0, -2.0, 4.0),
        scale: Vec3::new(0.5, -0.5, 1.0),
    };
    let base = Transform::new(Vec3::new(1.0, 1.0, 1.0), Quat::IDENTITY, Vec3::splat(2.0));

    // Partial weight: T and S scaled, R = normalize(fastLerp(identity, Δ.R, w)), which for 90°
    // at w = 0.5 is exactly 45° about the same axis; S = S ∘ (1 + w·ΔS).
    let d = weighted_delta(&delta, 0.5).unwrap();
    assert_eq!(d.translation, Vec3::new(0.5, -1.0, 2.0));
    let out = apply_delta(&base, &d);
    assert_eq!(out.translation, Vec3::new(1.5, 0.0, 3.0));
    assert!(out.scale.abs_diff_eq(Vec3::new(2.5, 1.5, 3.0), 1e-6));
    let (axis, angle) = out.rotation.to_axis_angle();
    assert!((angle - std::f32::consts::FRAC_PI_4).abs() < 1e-6);
    assert!(axis.abs_diff_eq(Vec3::Z, 1e-6));

    // A weight of 0.25 on the partial path is not a quarter of the angle (nlerp, not slerp).
    let q = weighted_delta(&delta, 0.25).unwrap().rotation;
    let expected = Quat::from_xyzw(0.0, 0.0, 0.25 * 0.5f32.sqrt(), 0.75 + 0.25 * 0.5f32.sqrt());
    assert!(q.abs_diff_eq(expected.normalize(), 1e-6));
    assert!((q.angle_between(Quat::IDENTITY) - std::f32::consts::FRAC_PI_8).abs() > 1e-3);

    // Full weight: D = Δ scaled by w as a 4-vector. At w = 1.2 the rotation, once normalized,
    // is Δ.R itself; T and ΔS scale by w.
    let d = weighted_delta(&delta, 1.2).unwrap();
    assert!(d.translation.abs_diff_eq(delta.translation * 1.2, 1e-6));
    assert_eq!(d.rotation.to_array(), (quarter * 1.2).to_array());
    let out = apply_delta(&base, &d);
    assert!(out.rotation.abs_diff_eq(quarter, 1e-6));
    assert!(out
        .scale
        .abs_diff_eq(Vec3::new(2.0 * 1.6, 2.0 * 0.4, 2.0 * 2.2), 1e-6));
    // At w = 2, D.R.w² = (2·cos 45°)² = 2 ≥ 1 − 1e-10: the rule skips the rotation.
    let d = weighted_delta(&delta, 2.0).unwrap();
    assert_eq!(d.scale, delta.scale * 2.0);
    let out = apply_delta(&base, &d);
    assert_eq!(out.rotation, Quat::IDENTITY);
    assert!(out.scale.abs_diff_eq(Vec3::new(4.0, 0.0, 6.0), 1e-6));

    // Just below 1 − ZERO_WEIGHT is still partial; at it, full.
    let near = weighted_delta(&delta, 1.0 - 2e-5).unwrap();
    assert!((near.rotation.length() - 1.0).abs() < 1e-6);
    let full = weighted_delta(&delta, 1.0 - 1e-5).unwrap();
    assert_eq!(
        full.rotation.to_array(),
        (quarter * (1.0 - 1e-5)).to_array()
    );
}

#[test]
fn a_delta_rotation_within_the_threshold_leaves_the_rotation_alone() {
    let x = Transform::new(Vec3::ZERO, Quat::from_rotation_y(0.7), Vec3::ONE);
    let turn = |angle: f32| Transform {
        rotation: Quat::from_rotation_x(angle),
        ..IDENTITY_DELTA
    };
    // 1 − w² ≤ 1e-10 (an angle under 2e-5 rad): no product, the rotation only renormalized.
    for w in [1.0, 0.5, 1.5] {
        let d = weighted_delta(&turn(1e-5), w).unwrap();
        assert_eq!(d.rotation, Quat::IDENTITY);
        assert_eq!(
            apply_delta(&x, &d).rotation.to_array(),
            posegpu::math::normalize_quat(x.rotation.into()).to_array()
        );
    }
    // 1e-4 rad is past the threshold and turns the bone, though its w² rounds to 1 in f32.
    assert_eq!(Quat::from_rotation_x(1e-4).w.powi(2), 1.0);
    let out = apply_delta(&x, &weighted_delta(&turn(1e-4), 1.0).unwrap());
    let turned = 2.0 * (out.rotation * x.rotation.conjugate()).xyz().length();
    assert!((turned - 1e-4).abs() < 2e-6, "{turned}");
    // Over full weight, D.R.w² = w²·Δ.R.w² can pass 1: the spec then skips the rotation.
    let d = weighted_delta(&turn(0.5), 1.2).unwrap();
    assert_eq!(d.rotation, Quat::IDENTITY);
    let d = weighted_delta(&turn(1.5), 1.2).unwrap();
    assert_ne!(d.rotation, Quat::IDENTITY);
}

#[test]
fn blending_drops_tiny_weights_renormalizes_and_keeps_one_hemisphere() {
    let a = Transform::new(Vec3::X, Quat::from_rotation_z(0.4), Vec3::ONE);
    let b = Transform::new(
        Vec3::Y * 3.0,
        -Quat::from_rotation_z(-0.4),
        Vec3::splat(3.0),
    );
    // Weights 2 and 6 are 0.25 and 0.75; b's rotation is flipped into a's hemisphere.
    let out = blend(&[(a, 2.0), (b, 6.0)], IDENTITY_DELTA);
    assert!(out
        .translation
        .abs_diff_eq(Vec3::new(0.25, 2.25, 0.0), 1e-6));
    assert!(out.scale.abs_diff_eq(Vec3::splat(2.5), 1e-6));
    let expected =
        (Quat::from_rotation_z(0.4) * 0.25 + Quat::from_rotation_z(-0.4) * 0.75).normalize();
    assert!(
        out.rotation.abs_diff_eq(expected, 1e-6),
        "{:?}",
        out.rotation
    );
    // A weight at or below ZERO_WEIGHT is dropped: the other pose comes back as it is.
    assert_eq!(blend(&[(a, 1e-5), (b, 0.3)], IDENTITY_DELTA), b);
    assert_eq!(blend(&[(a, 0.0)], IDENTITY_DELTA), IDENTITY_DELTA);
}

#[test]
fn the_forward_mesh_loop_equals_the_spec_written_out() {
    let skeleton = posegpu::procedural::humanoid();
    let parents = skeleton.parents();
    let mut rng = Lcg(3);
    let pose: Vec<Transform> = (0..skeleton.len()).map(|_| rng.transform()).collect();
    let deltas: Vec<Transform> = (0..skeleton.len())
        .map(|_| weighted_delta(&make_delta(&rng.transform(), &rng.transform()), 0.6).unwrap())
        .collect();

    // The spec: all rotations to mesh space, the local rule, back from the last bone, normalize.
    let mut spec = pose.clone();
    to_mesh_rotations(parents, &mut spec);
    for (x, d) in spec.iter_mut().zip(&deltas) {
        *x = apply_delta(x, d);
    }
    to_local_rotations(parents, &mut spec);
    for x in &mut spec {
        x.rotation = x.rotation.normalize();
    }

    // The twins' single forward loop.
    let mut kept: Vec<(Quat, Quat)> = Vec::new();
    for (i, (x, d)) in pose.iter().zip(&deltas).enumerate() {
        let parent = usize::try_from(parents[i]).ok().map(|p| kept[p]);
        let (out, before, after) = apply_mesh_delta(x, d, parent);
        kept.push((before, after));
        assert_close(&out, &spec[i], 1e-5, &format!("bone {i}"));
    }
}

/// root → spine → chest → arm, with the spine leaning `lean` radians about X.
fn leaning_spine() -> (Skeleton, Vec<Clip>) {
    let up = |y: f32| Transform::new(Vec3::Y * y, Quat::IDENTITY, Vec3::ONE);
    let skeleton = Skeleton::new(vec![
        Bone::new("root", None, up(0.0)),
        Bone::new("spine", Some(0), up(1.0)),
        Bone::new("chest", Some(1), up(0.5)),
        Bone::new(
            "arm",
            Some(2),
            Transform::new(Vec3::X * 0.4, Quat::IDENTITY, Vec3::ONE),
        ),
    ])
    .unwrap();
    let pose = |spine: Quat, chest: Quat| {
        let mut locals = skeleton.rest().to_vec();
        locals[1].rotation = spine;
        locals[2].rotation = chest;
        locals
    };
    let lean = Quat::from_rotation_x(0.7);
    let clips = vec![
        Clip::from_pose("upright", &skeleton, &pose(Quat::IDENTITY, Quat::IDENTITY)).unwrap(),
        Clip::from_pose("leaning", &skeleton, &pose(lean, Quat::IDENTITY)).unwrap(),
        // The aim, authored on an upright character: the chest turns 50° about the vertical.
        Clip::from_pose(
            "aim",
            &skeleton,
            &pose(Quat::IDENTITY, Quat::from_rotation_y(0.9)),
        )
        .unwrap(),
    ];
    (skeleton, clips)
}

#[test]
fn in_mesh_space_the_aim_does_not_depend_on_the_lean() {
    let (skeleton, mut clips) = leaning_spine();
    for space in AdditiveSpace::ALL {
        let name = format!("aim {}", space.name());
        let add = make_additive(
            &name,
            &skeleton,
            &clips[2],
            AdditiveBase::ReferencePose,
            space,
        );
        clips.push(add.unwrap());
    }
    let lib = AnimLibrary::new(&skeleton, &clips).unwrap();
    let (local, mesh) = (3, 4);
    let arm = 3;
    let mut batch = PoseBatch::new();
    for base in [0, 1] {
        batch.push_clip(base, 0.0, false);
        for layer in [local, mesh] {
            batch.push_clip(base, 0.0, false).additive(
                lib.clip_additive_space(layer).unwrap(),
                1.0,
                &[ClipSample::new(layer, 0.0, false)],
            );
        }
    }
    let poses = cpu_eval_batch(&lib, &batch);
    // How the additive turned the arm's component-space direction, on each base.
    let turn = |base_instance: usize, layered: usize| {
        let before = poses.component(base_instance, arm).rotation;
        let after = poses.component(layered, arm).rotation;
        after * before.conjugate()
    };
    let (upright, leaning) = (0, 3);
    let mesh_turns = (turn(upright, upright + 2), turn(leaning, leaning + 2));
    let local_turns = (turn(upright, upright + 1), turn(leaning, leaning + 1));
    // Mesh space: the same turn about the vertical, leaning or not.
    assert!(mesh_turns.0.abs_diff_eq(Quat::from_rotation_y(0.9), 1e-5));
    assert!(mesh_turns.1.abs_diff_eq(mesh_turns.0, 1e-5));
    // Local space: the turn follows the lean, about the leaning chest's axis.
    assert!(local_turns.0.abs_diff_eq(Quat::from_rotation_y(0.9), 1e-5));
    assert!(local_turns.1.angle_between(local_turns.0) > 0.3);

    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "leaning spine");
    }
}

/// Key times of `clip` inside its range.
fn key_times(clip: &Clip) -> Vec<f32> {
    clip.key_times()
}

#[test]
fn hit_reactions_built_against_idle_give_the_hit_back_on_idle() {
    let knight = knight();
    let (hit, idle) = (clip(&knight, "Hit_A"), clip(&knight, "Idle"));
    let skeleton = &knight.skeleton;
    for space in AdditiveSpace::ALL {
        let add =
            make_additive("hit", skeleton, hit, AdditiveBase::ClipScaled(idle), space).unwrap();
        assert_eq!(add.duration(), hit.duration());
        let lib = AnimLibrary::new(skeleton, &[hit.clone(), idle.clone(), add]).unwrap();
        let mut plain = PoseBatch::new();
        let mut layered = PoseBatch::new();
        for t in key_times(hit) {
            let base_t = (t / hit.duration()).clamp(0.0, 1.0) * idle.duration();
            plain.push_clip(0, t, false);
            layered.push_clip(1, base_t, false).additive(
                space,
                1.0,
                &[ClipSample::new(2, t, false)],
            );
        }
        let (a, b) = (cpu_eval_batch(&lib, &plain), cpu_eval_batch(&lib, &layered));
        assert_poses_close(&a, &b, 2e-5, space.name());
        // Weight 0 leaves the base exactly as it is.
        let mut zero = PoseBatch::new();
        let mut base = PoseBatch::new();
        for t in key_times(hit) {
            zero.push_clip(1, t, false)
                .additive(space, 0.0, &[ClipSample::new(2, t, false)]);
            base.push_clip(1, t, false);
        }
        assert_eq!(cpu_eval_batch(&lib, &zero), cpu_eval_batch(&lib, &base));
        if let Some(ctx) = gpu() {
            // The general sampling pipeline (a layer) and the single-clip one give the same.
            assert!(zero.is_single_clips() != base.is_single_clips());
            let (z, b) = (
                gpu_eval_batch(&ctx, &lib, &zero),
                gpu_eval_batch(&ctx, &lib, &base),
            );
            assert_eq!(z.locals, b.locals);
        }
    }
}

#[test]
fn every_base_pose_kind_gives_its_base_back_at_full_weight() {
    let knight = knight();
    let skeleton = &knight.skeleton;
    let (hit, pose, walk) = (
        clip(&knight, "Hit_B"),
        clip(&knight, "Unarmed_Pose"),
        clip(&knight, "Walking_A"),
    );
    let kinds = [
        (AdditiveBase::ReferencePose, None),
        (AdditiveBase::ClipFrame(pose, 0), Some((pose, 0.0))),
        (
            AdditiveBase::ClipFrame(walk, 5),
            Some((walk, frame_time(walk, 5).unwrap())),
        ),
        (
            AdditiveBase::Frame(3),
            Some((hit, frame_time(hit, 3).unwrap())),
        ),
    ];
    // UE's frame formula: N / keyCount of the duration.
    assert_eq!(
        frame_time(walk, 5).unwrap(),
        5.0 / walk.key_count() as f32 * walk.duration()
    );
    for (base, base_clip) in kinds {
        for space in AdditiveSpace::ALL {
            let add = make_additive("d", skeleton, hit, base, space).unwrap();
            let mut clips = vec![hit.clone(), add];
            let base_sample = match base_clip {
                Some((c, t)) => {
                    clips.push(c.clone());
                    ClipSample::new(2, t, false)
                }
                None => {
                    let rest = Clip::from_pose("rest", skeleton, skeleton.rest()).unwrap();
                    clips.push(rest);
                    ClipSample::new(2, 0.0, false)
                }
            };
            let lib = AnimLibrary::new(skeleton, &clips).unwrap();
            let (mut plain, mut layered) = (PoseBatch::new(), PoseBatch::new());
            for t in key_times(hit) {
                plain.push_clip(0, t, false);
                layered.push_blend(&[base_sample]).additive(
                    space,
                    1.0,
                    &[ClipSample::new(1, t, false)],
                );
            }
            let what = format!("{base:?} {}", space.name());
            let (a, b) = (cpu_eval_batch(&lib, &plain), cpu_eval_batch(&lib, &layered));
            assert_poses_close(&a, &b, 2e-5, &what);
        }
    }
}

#[test]
fn a_dynamic_additive_matches_the_one_built_on_the_host() {
    let knight = knight();
    let skeleton = &knight.skeleton;
    let (hit, pose, walk) = (
        clip(&knight, "Hit_A"),
        clip(&knight, "Unarmed_Pose"),
        clip(&knight, "Walking_A"),
    );
    for space in AdditiveSpace::ALL {
        let add =
            make_additive("d", skeleton, hit, AdditiveBase::ClipFrame(pose, 0), space).unwrap();
        let lib =
            AnimLibrary::new(skeleton, &[hit.clone(), pose.clone(), walk.clone(), add]).unwrap();
        let (mut host, mut dynamic) = (PoseBatch::new(), PoseBatch::new());
        for (k, t) in key_times(hit).into_iter().enumerate() {
            let w = [1.0, 0.6, 0.3][k % 3];
            host.push_clip(2, t, true)
                .additive(space, w, &[ClipSample::new(3, t, false)]);
            let (p, b) = (ClipSample::new(0, t, false), ClipSample::new(1, 0.0, false));
            dynamic.push_clip(2, t, true).dynamic(space, w, p, b);
        }
        let (a, b) = (cpu_eval_batch(&lib, &host), cpu_eval_batch(&lib, &dynamic));
        assert_poses_close(&a, &b, 2e-5, space.name());
        if let Some(ctx) = gpu() {
            assert_batch_gpu_matches_cpu(&ctx, &lib, &dynamic, "dynamic additive");
        }
    }
}

/// Layers of every kind, in mixed orders, over real clips: the GPU against the CPU.
fn assert_layered_gpu_matches_cpu(asset: &Asset, bases: &[&str], additives: &[(&str, &str)]) {
    let skeleton = &asset.skeleton;
    let mut clips: Vec<Clip> = bases.iter().map(|b| clip(asset, b).clone()).collect();
    for (hit, base) in additives {
        let base = AdditiveBase::ClipFrame(clip(asset, base), 0);
        for space in AdditiveSpace::ALL {
            let name = format!("{hit} {}", space.name());
            clips.push(make_additive(&name, skeleton, clip(asset, hit), base, space).unwrap());
        }
    }
    let lib = AnimLibrary::new(skeleton, &clips).unwrap();
    let n = bases.len() as u32;
    let additive = |k: usize, space: AdditiveSpace| {
        n + 2 * (k % additives.len()) as u32 + u32::from(space == MESH)
    };
    let mut batch = PoseBatch::new();
    let mut rng = Lcg(5);
    for i in 0..48usize {
        let t = rng.range(-0.5, 2.0);
        let base = (i % bases.len()) as u32;
        let mut instance = if i % 4 == 3 {
            // A base blended from two clips.
            batch.push_blend(&[
                ClipSample::new(base, t, true).with_weight(rng.range(0.0, 1.0)),
                ClipSample::new((base + 1) % n, t * 0.8, true).with_weight(rng.range(0.0, 1.0)),
            ])
        } else {
            batch.push_clip(base, t, true)
        };
        for k in 0..i % 4 {
            let space = if (i + k) % 2 == 0 { LOCAL } else { MESH };
            let w = [1.0, 0.5, 0.0, 1.3][(i + k) % 4];
            let s = ClipSample::new(additive(i + k, space), rng.range(0.0, 1.0), false);
            instance = instance.additive(space, w, &[s]);
        }
        if i % 5 == 1 {
            let space = if i % 2 == 0 { LOCAL } else { MESH };
            let (p, b) = (
                ClipSample::new(base, t + 0.3, true),
                ClipSample::new(base, 0.0, false),
            );
            instance.dynamic(space, 0.7, p, b);
        }
    }
    assert!(batch.has_mesh_layers());
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "layered crowd");
    }
}

#[test]
fn kaykit_hit_reactions_over_idle_and_walking_gpu_matches_cpu() {
    assert_layered_gpu_matches_cpu(
        &knight(),
        &["Idle", "Walking_A"],
        &[("Hit_A", "Unarmed_Pose"), ("Hit_B", "T-Pose")],
    );
}

#[test]
fn mech_yes_and_no_over_walk_gpu_matches_cpu() {
    let mike = load("gltf/quaternius/Mech_Mike.glb");
    assert_layered_gpu_matches_cpu(&mike, &["Walk", "Idle"], &[("Yes", "Idle"), ("No", "Idle")]);
}

#[test]
fn bad_additives_are_typed_errors() {
    let knight = knight();
    let mike = load("gltf/quaternius/Mech_Mike.glb");
    let skeleton = &knight.skeleton;
    let hit = clip(&knight, "Hit_A");
    // A base clip of another skeleton, without a rig.
    let walk = clip(&mike, "Walk");
    let e = make_additive("x", skeleton, hit, AdditiveBase::ClipScaled(walk), LOCAL).unwrap_err();
    assert!(
        matches!(&e, Error::Additive { what, .. } if what.contains("another skeleton")),
        "{e}"
    );
    // A frame past the end.
    let pose = clip(&knight, "Unarmed_Pose");
    let e = make_additive("x", skeleton, hit, AdditiveBase::ClipFrame(pose, 1), MESH).unwrap_err();
    assert!(e.to_string().contains("frame 1 is past the end"), "{e}");
    let frames = hit.key_count();
    let e = make_additive("x", skeleton, hit, AdditiveBase::Frame(frames), LOCAL).unwrap_err();
    assert!(e.to_string().contains(&format!("frame {frames}")), "{e}");
    // An unknown clip name.
    let e = Clip::find(&knight.clips, "Hit_Z").unwrap_err();
    assert!(matches!(e, Error::UnknownAnimation { .. }), "{e}");
    // An additive of an additive.
    let add = make_additive("x", skeleton, hit, AdditiveBase::ReferencePose, LOCAL).unwrap();
    let e = make_additive("y", skeleton, &add, AdditiveBase::ReferencePose, LOCAL).unwrap_err();
    assert!(e.to_string().contains("already additive"), "{e}");
}

#[test]
fn bad_layers_are_typed_errors_naming_the_instance() {
    let knight = knight();
    let skeleton = &knight.skeleton;
    let hit = clip(&knight, "Hit_A");
    let local = make_additive(
        "hit local",
        skeleton,
        hit,
        AdditiveBase::ReferencePose,
        LOCAL,
    );
    let lib = AnimLibrary::new(skeleton, &[hit.clone(), local.unwrap()]).unwrap();
    let cpu = posegpu::CpuEvaluator::new(&lib);
    let check = |batch: PoseBatch, needle: &str| {
        let e = cpu.evaluate(&batch, &mut Poses::default()).unwrap_err();
        assert!(
            matches!(&e, Error::BadInstance { instance: 1, .. }) && e.to_string().contains(needle),
            "{e}"
        );
    };
    let ok = |b: &mut PoseBatch| {
        b.push_clip(0, 0.0, false);
    };
    let add = ClipSample::new(1, 0.0, false);
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(1, 0.0, false);
    check(b, "needs an ordinary clip");
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(0, 0.0, false)
        .additive(LOCAL, 1.0, &[ClipSample::new(0, 0.0, false)]);
    check(b, "needs a local additive");
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(0, 0.0, false).additive(MESH, 1.0, &[add]);
    check(b, "needs a mesh additive");
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(0, 0.0, false).additive(LOCAL, f32::NAN, &[add]);
    check(b, "not finite");
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(0, 0.0, false)
        .additive(LOCAL, 1.0, &[ClipSample::new(9, 0.0, false)]);
    check(b, "clip 9 does not exist");
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(0, 0.0, false).additive(LOCAL, 1.0, &[]);
    check(b, "no samples");
    let mut b = PoseBatch::new();
    ok(&mut b);
    b.push_clip(0, f32::INFINITY, false);
    check(b, "not finite");
    let mut b = PoseBatch::new();
    ok(&mut b);
    let dyn_add = (
        ClipSample::new(1, 0.0, false),
        ClipSample::new(0, 0.0, false),
    );
    b.push_clip(0, 0.0, false)
        .dynamic(LOCAL, 1.0, dyn_add.0, dyn_add.1);
    check(b, "needs an ordinary clip");
}
