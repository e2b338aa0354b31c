//! The formulas of pose-math.md against hand-computed cases, through the CPU twin.

use crate::common;

use std::f32::consts::FRAC_PI_2;

use glam::{Mat3, Mat4, Quat, Vec3};
use posegpu::math::{fast_lerp, nlerp, quat_pow, safe_recip, twist};
use posegpu::{
    AnimLibrary, Bone, BoneTrack, Channel, Clip, ClipSample, Interpolation, Skeleton, Transform,
};

const EPS: f32 = 1e-5;

fn assert_vec(a: Vec3, b: Vec3, what: &str) {
    assert!(a.abs_diff_eq(b, EPS), "{what}: {a} != {b}");
}

fn assert_quat(a: Quat, b: Quat, what: &str) {
    assert!(
        a.abs_diff_eq(b, EPS) || a.abs_diff_eq(-b, EPS),
        "{what}: {a} != {b}"
    );
}

#[test]
fn compose_follows_ue_trs() {
    let parent = Transform::new(
        Vec3::new(0.0, 0.0, 1.0),
        Quat::from_rotation_z(FRAC_PI_2),
        Vec3::splat(2.0),
    );
    let child = Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE);
    let cs = Transform::compose(&child, &parent);
    // T = Rp·(Sp∘Tc) + Tp = Rz90·(2,0,0) + (0,0,1)
    assert_vec(cs.translation, Vec3::new(0.0, 2.0, 1.0), "T");
    assert_quat(cs.rotation, Quat::from_rotation_z(FRAC_PI_2), "R");
    assert_vec(cs.scale, Vec3::splat(2.0), "S");
    // The rotation order: R = Rp ⊗ Rc (rotate by the child first).
    let c = Transform::new(Vec3::ZERO, Quat::from_rotation_x(FRAC_PI_2), Vec3::ONE);
    let p = Transform::new(Vec3::ZERO, Quat::from_rotation_z(FRAC_PI_2), Vec3::ONE);
    let r = Transform::compose(&c, &p).rotation;
    // X-rotation sends Y to Z, then Z-rotation leaves Z: Y ends at Z.
    assert_vec(r * Vec3::Y, Vec3::Z, "order");
}

#[test]
fn compose_drops_the_shear_a_matrix_chain_keeps() {
    let parent = Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(2.0, 1.0, 1.0));
    let child = Transform::new(Vec3::Y, Quat::from_rotation_z(FRAC_PI_2), Vec3::ONE);
    let cs = Transform::compose(&child, &parent);
    assert_vec(cs.translation, Vec3::Y, "T");
    assert_vec(cs.scale, Vec3::new(2.0, 1.0, 1.0), "S");
    // TRS: Rz90·diag(2,1,1) maps X to (0,2,0); the matrix chain diag(2,1,1)·Rz90 maps X to (0,1,0).
    let trs = Mat3::from_mat4(cs.to_matrix());
    let chain = Mat3::from_mat4(parent.to_matrix() * child.to_matrix());
    assert_vec(trs * Vec3::X, Vec3::new(0.0, 2.0, 0.0), "TRS");
    assert_vec(chain * Vec3::X, Vec3::new(0.0, 1.0, 0.0), "matrix chain");
}

#[test]
fn relative_inverts_compose_and_uses_safe_recip() {
    let a = Transform::new(
        Vec3::new(0.0, 2.0, 1.0),
        Quat::from_rotation_z(FRAC_PI_2),
        Vec3::splat(2.0),
    );
    let b = Transform::new(
        Vec3::new(0.0, 0.0, 1.0),
        Quat::from_rotation_z(FRAC_PI_2),
        Vec3::splat(2.0),
    );
    let r = Transform::relative(&a, &b);
    // R = I; S = 1; T = (Rz90⁻¹·(0,2,0)) / 2 = (1,0,0)
    assert_quat(r.rotation, Quat::IDENTITY, "R");
    assert_vec(r.scale, Vec3::ONE, "S");
    assert_vec(r.translation, Vec3::X, "T");
    // A zero scale component gives 0, not infinity.
    let b0 = Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(0.0, 1.0, 4.0));
    let r = Transform::relative(&Transform::new(Vec3::ONE, Quat::IDENTITY, Vec3::ONE), &b0);
    assert_vec(r.scale, Vec3::new(0.0, 1.0, 0.25), "S with zero");
    assert_vec(r.translation, Vec3::new(0.0, 1.0, 0.25), "T with zero");
    assert_eq!(
        safe_recip(Vec3::new(1e-9, -1e-8, 2.0)),
        Vec3::new(0.0, 0.0, 0.5)
    );
}

#[test]
fn inverse_twist_and_power_of_the_character_retargeting() {
    // "Retargeting between characters": the inverse undoes a transform (uniform scale), the
    // twist about an axis keeps only the turn about it, q^f scales the angle.
    let t = Transform::new(
        Vec3::new(1.0, -2.0, 0.5),
        Quat::from_rotation_y(0.7) * Quat::from_rotation_x(0.2),
        Vec3::splat(2.0),
    );
    let back = Transform::compose(&t.inverse(), &t);
    assert_vec(
        back.translation,
        Vec3::ZERO,
        "inverse then transform: translation",
    );
    assert_quat(
        back.rotation,
        Quat::IDENTITY,
        "inverse then transform: rotation",
    );
    assert_vec(back.scale, Vec3::ONE, "inverse then transform: scale");
    let (about_x, about_z) = (Quat::from_rotation_x(0.6), Quat::from_rotation_z(0.9));
    assert_quat(
        twist(about_z * about_x, Vec3::X),
        about_x,
        "twist of swing ⊗ twist",
    );
    assert_quat(
        twist(about_z, Vec3::X),
        Quat::IDENTITY,
        "a pure swing has no twist",
    );
    assert_quat(
        quat_pow(about_z, 0.5),
        Quat::from_rotation_z(0.45),
        "half the angle",
    );
    assert_quat(
        quat_pow(-about_z, -1.0),
        about_z.inverse(),
        "w < 0 is the same rotation",
    );
    assert_quat(quat_pow(Quat::IDENTITY, 0.3), Quat::IDENTITY, "no angle");
}

#[test]
fn fast_lerp_flips_to_the_shorter_arc() {
    let a = Quat::IDENTITY;
    let b = -Quat::from_rotation_z(FRAC_PI_2); // the same rotation, the other hemisphere
    let raw = fast_lerp(a, b, 0.5);
    // (1−α)·a + α·sign(a·b)·b with sign = −1: (0, 0, 0.35355, 0.85355)
    assert!(
        raw.abs_diff_eq(glam::Vec4::new(0.0, 0.0, 0.353_553_4, 0.853_553_4), EPS),
        "{raw}"
    );
    assert_quat(
        nlerp(a, b, 0.5),
        Quat::from_rotation_z(FRAC_PI_2 / 2.0),
        "halfway",
    );
}

/// One root bone and one child with rest T = (0,1,0), S = 2.
fn two_bones() -> Skeleton {
    let mut child = Bone::new(
        "child",
        Some(0),
        Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::splat(2.0)),
    );
    child.inverse_bind = Some(Mat4::from_translation(-Vec3::Y));
    Skeleton::new(vec![Bone::new("root", None, Transform::IDENTITY), child]).unwrap()
}

fn channel(times: &[f32], values: &[f32], interpolation: Interpolation) -> Channel<Vec3> {
    Channel::new(
        times.to_vec(),
        values.iter().map(|&v| Vec3::new(v, 0.0, 0.0)).collect(),
        interpolation,
    )
}

/// Samples the root translation's x of a one-clip library at `t`.
fn root_x(clip: &Clip, skeleton: &Skeleton, t: f32, looping: bool) -> f32 {
    let lib = AnimLibrary::new(skeleton, std::slice::from_ref(clip)).unwrap();
    common::cpu_eval(&lib, &[ClipSample::new(0, t, looping)])
        .local(0, 0)
        .translation
        .x
}

fn root_clip(c: Channel<Vec3>, s: &Skeleton) -> Clip {
    let tracks = vec![
        BoneTrack {
            translation: Some(c),
            ..Default::default()
        },
        BoneTrack::default(),
    ];
    Clip::new("c", s, tracks).unwrap()
}

#[test]
fn linear_and_step_sampling() {
    let s = two_bones();
    let linear = root_clip(
        channel(&[0.0, 1.0, 2.0], &[0.0, 10.0, 20.0], Interpolation::Linear),
        &s,
    );
    let step = root_clip(
        channel(&[0.0, 1.0, 2.0], &[0.0, 10.0, 20.0], Interpolation::Step),
        &s,
    );
    assert!((root_x(&linear, &s, 1.5, false) - 15.0).abs() < EPS);
    assert!((root_x(&linear, &s, 0.25, false) - 2.5).abs() < EPS);
    assert_eq!(root_x(&step, &s, 1.5, false), 10.0);
    assert_eq!(root_x(&step, &s, 0.999, false), 0.0);
    assert_eq!(root_x(&step, &s, 1.0, false), 10.0);
    assert_eq!(root_x(&step, &s, 2.0, false), 20.0);
}

#[test]
fn clamping_and_looping() {
    let s = two_bones();
    let c = root_clip(
        channel(&[0.0, 1.0, 2.0], &[0.0, 10.0, 20.0], Interpolation::Linear),
        &s,
    );
    assert_eq!(c.duration(), 2.0);
    assert_eq!(root_x(&c, &s, -1.0, false), 0.0);
    assert_eq!(root_x(&c, &s, 5.0, false), 20.0);
    // Looping wraps with a Euclidean remainder into [0, 2).
    assert!((root_x(&c, &s, 2.5, true) - 5.0).abs() < EPS);
    assert!((root_x(&c, &s, -0.5, true) - 15.0).abs() < EPS);
    assert!((root_x(&c, &s, -4.0, true)).abs() < EPS);
    assert!((root_x(&c, &s, 4.0, true)).abs() < EPS);
    assert!((root_x(&c, &s, 7.25, true) - 12.5).abs() < EPS);
}

#[test]
fn keys_after_zero_hold_the_first_key_before_it() {
    let s = two_bones();
    let c = root_clip(channel(&[0.5, 1.5], &[4.0, 8.0], Interpolation::Linear), &s);
    assert_eq!(c.duration(), 1.5, "the range is [0, latest key]");
    assert_eq!(root_x(&c, &s, 0.0, false), 4.0);
    assert_eq!(root_x(&c, &s, 0.25, false), 4.0);
    assert!((root_x(&c, &s, 1.0, false) - 6.0).abs() < EPS);
}

#[test]
fn single_keys_and_zero_length_clips() {
    let s = two_bones();
    let c = root_clip(channel(&[0.0], &[3.0], Interpolation::Linear), &s);
    assert_eq!(c.duration(), 0.0);
    for t in [-1.0, 0.0, 0.7, 100.0] {
        assert_eq!(root_x(&c, &s, t, false), 3.0);
        assert_eq!(root_x(&c, &s, t, true), 3.0);
    }
}

#[test]
fn absent_channels_keep_the_reference_pose() {
    let s = two_bones();
    let rot = Quat::from_rotation_x(0.5);
    let tracks = vec![
        BoneTrack::default(),
        BoneTrack {
            rotation: Some(Channel::new(
                vec![0.0, 1.0],
                vec![rot, rot],
                Interpolation::Linear,
            )),
            ..Default::default()
        },
    ];
    let clip = Clip::new("c", &s, tracks).unwrap();
    let lib = AnimLibrary::new(&s, &[clip]).unwrap();
    let poses = common::cpu_eval(&lib, &[ClipSample::new(0, 0.5, false)]);
    assert_eq!(
        poses.local(0, 0),
        Transform::IDENTITY,
        "a bone without a track"
    );
    let child = poses.local(0, 1);
    assert_vec(child.translation, Vec3::Y, "absent translation");
    assert_vec(child.scale, Vec3::splat(2.0), "absent scale");
    assert_quat(child.rotation, rot, "animated rotation");
}

#[test]
fn hierarchy_and_skinning_matrices() {
    let s = two_bones();
    let tracks = vec![
        BoneTrack {
            translation: Some(channel(&[0.0], &[1.0], Interpolation::Linear)),
            rotation: Some(Channel::new(
                vec![0.0],
                vec![Quat::from_rotation_z(FRAC_PI_2)],
                Interpolation::Linear,
            )),
            ..Default::default()
        },
        BoneTrack::default(),
    ];
    let lib = AnimLibrary::new(&s, &[Clip::new("c", &s, tracks).unwrap()]).unwrap();
    let poses = common::cpu_eval(&lib, &[ClipSample::new(0, 0.0, false)]);
    // CS[child] = compose(L[child], CS[root]): T = Rz90·(0,1,0) + (1,0,0) = (0,0,0)
    let cs = poses.component(0, 1);
    assert_vec(cs.translation, Vec3::ZERO, "child T");
    assert_vec(cs.scale, Vec3::splat(2.0), "child S");
    // Skinning = M(CS) · inverseBind: the child's bind point (0,1,0) lands on the child's origin.
    let m = posegpu::math::rows_to_mat4(poses.skinning(0, 1));
    assert_vec(m.transform_point3(Vec3::Y), Vec3::ZERO, "bind point");
    // A bone without an inverse bind matrix uses identity: skinning = M(CS).
    let root = posegpu::math::rows_to_mat4(poses.skinning(0, 0));
    assert!(root.abs_diff_eq(poses.component(0, 0).to_matrix(), EPS));
}

#[test]
fn duration_and_key_count_span_all_channels() {
    let s = two_bones();
    let tracks = vec![
        BoneTrack {
            translation: Some(channel(&[0.0, 1.0], &[0.0, 1.0], Interpolation::Linear)),
            ..Default::default()
        },
        BoneTrack {
            scale: Some(channel(
                &[0.5, 1.0, 3.0],
                &[1.0, 1.0, 2.0],
                Interpolation::Linear,
            )),
            ..Default::default()
        },
    ];
    let clip = Clip::new("c", &s, tracks).unwrap();
    assert_eq!(clip.duration(), 3.0);
    assert_eq!(clip.key_count(), 4, "distinct times 0, 0.5, 1, 3");
}
