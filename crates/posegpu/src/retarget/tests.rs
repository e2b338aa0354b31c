//! Retargeting against hand-computed values: every translation mode and its thresholds (the
//! per-bone cache and its application, as the sampling stage runs them), the offline
//! conversion against UE's numbers, bone-name matching and rig files.

use glam::{DQuat, Mat3, Quat, Vec3};

use super::{remap_clip, BoneMapping, MatchKind, Rig};
use crate::cpu::retarget_bone;
use crate::drive::modes::mode_caches;
use crate::drive::TranslationMode;
use crate::layout::{BoneRetarget, RETARGET_ORIENT};
use crate::{Bone, BoneTrack, Clip, Error, Skeleton, Transform};

const EPS: f32 = 1e-6;

fn t(x: f32, y: f32, z: f32) -> Transform {
    Transform::new(Vec3::new(x, y, z), Quat::IDENTITY, Vec3::ONE)
}

/// The cache of a single bone retargeted from `src` to `tgt` in `mode`.
fn cache(src: Transform, tgt: Transform, mode: TranslationMode) -> BoneRetarget {
    let source = Skeleton::new(vec![Bone::new("b", None, src)]).unwrap();
    let target = Skeleton::new(vec![Bone::new("b", None, tgt)]).unwrap();
    let mapping = BoneMapping::new(&source, &target, &Rig::default()).unwrap();
    mode_caches(
        source.rest(),
        target.rest(),
        |b| mapping.source_of(b),
        &[mode],
    )[0]
}

fn close3(a: Vec3, b: Vec3) -> bool {
    a.abs_diff_eq(b, EPS)
}

fn same_rotation(a: Quat, b: Quat, eps: f32) -> bool {
    a.abs_diff_eq(b, eps) || a.abs_diff_eq(-b, eps)
}

#[test]
fn animation_leaves_everything() {
    let c = cache(
        t(0.0, 1.0, 0.0),
        t(0.0, 3.0, 0.0),
        TranslationMode::Animation,
    );
    let x = Transform::new(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_x(0.5),
        Vec3::splat(2.0),
    );
    assert_eq!(retarget_bone(x, &c, false), x);
    assert_eq!(retarget_bone(x, &c, true), x);
}

#[test]
fn skeleton_takes_the_target_translation_and_zero_for_additive() {
    let tgt = Transform::new(
        Vec3::new(0.0, 3.0, 1.0),
        Quat::from_rotation_z(0.3),
        Vec3::ONE,
    );
    let c = cache(t(0.0, 1.0, 0.0), tgt, TranslationMode::Skeleton);
    let x = Transform::new(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_x(0.5),
        Vec3::splat(2.0),
    );
    let out = retarget_bone(x, &c, false);
    assert_eq!(out.translation, Vec3::new(0.0, 3.0, 1.0));
    assert_eq!((out.rotation, out.scale), (x.rotation, x.scale));
    assert_eq!(retarget_bone(x, &c, true).translation, Vec3::ZERO);
}

#[test]
fn animation_scaled_uses_the_length_ratio_above_small() {
    // |T_src| = 2, |T_tgt| = 3: ratio 1.5, for additive clips too.
    let c = cache(
        t(0.0, 2.0, 0.0),
        t(0.0, 0.0, 3.0),
        TranslationMode::AnimationScaled,
    );
    let x = t(1.0, 1.0, 0.0);
    assert!(close3(
        retarget_bone(x, &c, false).translation,
        Vec3::new(1.5, 1.5, 0.0)
    ));
    assert!(close3(
        retarget_bone(x, &c, true).translation,
        Vec3::new(1.5, 1.5, 0.0)
    ));
    // |T_src| = 5e-5 ≤ SMALL: unchanged; just above SMALL: scaled.
    let c = cache(
        t(5e-5, 0.0, 0.0),
        t(0.0, 3.0, 0.0),
        TranslationMode::AnimationScaled,
    );
    assert_eq!(retarget_bone(x, &c, false).translation, x.translation);
    let c = cache(
        t(2e-4, 0.0, 0.0),
        t(0.0, 3.0, 0.0),
        TranslationMode::AnimationScaled,
    );
    assert!(close3(
        retarget_bone(x, &c, false).translation,
        x.translation * 15_000.0
    ));
}

#[test]
fn animation_relative_moves_rotation_translation_and_scale() {
    let src = Transform::new(
        Vec3::new(1.0, 1.0, 1.0),
        Quat::from_rotation_z(90f32.to_radians()),
        Vec3::new(1.5, 1.5, 0.0),
    );
    let tgt = Transform::new(
        Vec3::new(4.0, 5.0, 6.0),
        Quat::from_rotation_z(180f32.to_radians()),
        Vec3::new(3.0, 3.0, 3.0),
    );
    let c = cache(src, tgt, TranslationMode::AnimationRelative);
    let x = Transform::new(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_x(90f32.to_radians()),
        Vec3::splat(2.0),
    );
    let out = retarget_bone(x, &c, false);
    // R ⊗ R_src⁻¹ ⊗ R_tgt = Rx(90) ⊗ Rz(-90) ⊗ Rz(180) = Rx(90) ⊗ Rz(90).
    let expected =
        Quat::from_rotation_x(90f32.to_radians()) * Quat::from_rotation_z(90f32.to_radians());
    assert!(
        same_rotation(out.rotation, expected, 1e-6),
        "{:?}",
        out.rotation
    );
    assert!(close3(out.translation, Vec3::new(4.0, 6.0, 8.0)));
    // S ∘ S_tgt ∘ safeRecip(S_src): the zero source scale component gives 0, not infinity.
    assert!(close3(out.scale, Vec3::new(4.0, 4.0, 0.0)));
    // Skipped for additive clips.
    assert_eq!(retarget_bone(x, &c, true), x);
}

#[test]
fn orient_and_scale_rotates_and_scales_away_from_the_reference() {
    // s = +Y (length 1), t = +Z (length 2): Δq = Rx(90°), k = 2.
    let c = cache(
        t(0.0, 1.0, 0.0),
        t(0.0, 0.0, 2.0),
        TranslationMode::OrientAndScale,
    );
    assert_ne!(c.flags & RETARGET_ORIENT, 0);
    let q = Quat::from_array(c.orient_rotation);
    assert!(same_rotation(
        q,
        Quat::from_rotation_x(90f32.to_radians()),
        1e-6
    ));
    assert!((c.orient_source[3] - 2.0).abs() < EPS);
    let at = |x: Vec3| retarget_bone(t(x.x, x.y, x.z), &c, false).translation;
    // At the source reference (within ORIENT_PRECISION per component): exactly t.
    assert_eq!(at(Vec3::new(0.0, 1.0, 0.0)), Vec3::new(0.0, 0.0, 2.0));
    assert_eq!(
        at(Vec3::new(0.0009, 0.9991, -0.0009)),
        Vec3::new(0.0, 0.0, 2.0)
    );
    // Just past it: rotated and scaled.
    assert!(close3(
        at(Vec3::new(0.0011, 1.0, 0.0)),
        Vec3::new(0.0022, 0.0, 2.0)
    ));
    assert!(close3(
        at(Vec3::new(0.0, 2.0, 0.0)),
        Vec3::new(0.0, 0.0, 4.0)
    ));
    assert!(close3(
        at(Vec3::new(1.0, 0.0, 0.0)),
        Vec3::new(2.0, 0.0, 0.0)
    ));
    // Skipped for additive clips.
    assert_eq!(
        retarget_bone(t(0.0, 2.0, 0.0), &c, true).translation,
        Vec3::new(0.0, 2.0, 0.0)
    );
}

#[test]
fn orient_and_scale_has_no_entry_for_near_or_degenerate_references() {
    // Every component within ORIENT_PRECISION: no entry, T unchanged.
    let c = cache(
        t(0.0, 1.0, 0.0),
        t(0.0, 1.0009, 0.0),
        TranslationMode::OrientAndScale,
    );
    assert_eq!(c.flags & RETARGET_ORIENT, 0);
    assert_eq!(
        retarget_bone(t(0.0, 5.0, 0.0), &c, false).translation,
        Vec3::new(0.0, 5.0, 0.0)
    );
    // One component past it: an entry.
    let c = cache(
        t(0.0, 1.0, 0.0),
        t(0.0, 1.0011, 0.0),
        TranslationMode::OrientAndScale,
    );
    assert_ne!(c.flags & RETARGET_ORIENT, 0);
    // |s|·|t| ≤ TINY (a zero source translation): no entry.
    let c = cache(
        t(0.0, 0.0, 0.0),
        t(0.0, 1.0, 0.0),
        TranslationMode::OrientAndScale,
    );
    assert_eq!(c.flags & RETARGET_ORIENT, 0);
    assert_eq!(
        retarget_bone(t(0.3, 0.0, 0.0), &c, false).translation,
        Vec3::new(0.3, 0.0, 0.0)
    );
}

#[test]
fn orient_and_scale_handles_opposite_directions() {
    // a = +X, b = -X: |a_x| > |a_y|, q = normalize(-a_z, 0, a_x, 0) = a half turn about Z... as
    // (0, 0, 1, 0): a half turn about +Z.
    let c = cache(
        t(1.0, 0.0, 0.0),
        t(-2.0, 0.0, 0.0),
        TranslationMode::OrientAndScale,
    );
    assert_eq!(c.orient_rotation, [0.0, 0.0, 1.0, 0.0]);
    let out = retarget_bone(t(1.0, 0.5, 0.0), &c, false).translation;
    assert!(close3(out, Vec3::new(-2.0, -1.0, 0.0)), "{out}");
    // a = +Y, b = -Y: the other branch, normalize(0, -a_z, a_y, 0) = (0, 0, 1, 0).
    let c = cache(
        t(0.0, 1.0, 0.0),
        t(0.0, -1.0, 0.0),
        TranslationMode::OrientAndScale,
    );
    assert_eq!(c.orient_rotation, [0.0, 0.0, 1.0, 0.0]);
    // a = +Z, b = -Z: |a_x| = |a_y| = 0, so normalize(0, -1, 0, 0): a half turn about -Y.
    let c = cache(
        t(0.0, 0.0, 1.0),
        t(0.0, 0.0, -3.0),
        TranslationMode::OrientAndScale,
    );
    assert_eq!(c.orient_rotation, [0.0, -1.0, 0.0, 0.0]);
    let out = retarget_bone(t(0.0, 0.0, 2.0), &c, false).translation;
    assert!(close3(out, Vec3::new(0.0, 0.0, -6.0)), "{out}");
}

/// UE's `FRotator(pitch, yaw, roll)` as the spec states it: `Rz(yaw)·Ry(pitch)·Rx(roll)`,
/// from degrees as UE printed them (in f64, to keep every printed digit).
fn ue_rotation(yaw: f64, pitch: f64, roll: f64) -> Quat {
    (DQuat::from_rotation_z(yaw.to_radians())
        * DQuat::from_rotation_y(pitch.to_radians())
        * DQuat::from_rotation_x(roll.to_radians()))
    .as_quat()
}

fn one_key_clip(skeleton: &Skeleton, keys: Vec<Option<Transform>>) -> Clip {
    let tracks = keys
        .iter()
        .map(|k| k.as_ref().map(BoneTrack::holding).unwrap_or_default())
        .collect();
    Clip::new("key", skeleton, tracks).unwrap()
}

#[test]
fn offline_conversion_reproduces_ue() {
    // Root translations with UE's reference lengths: 83.99997 (source) and 106.4681 (target).
    let src_t = Vec3::new(0.0, 83.99997, 0.0);
    let tgt_t = Vec3::new(0.0, 0.0, 106.4681);
    let source = Skeleton::new(vec![
        Bone::new(
            "root",
            None,
            Transform::new(src_t, ue_rotation(0.0, 0.0, -89.996216), Vec3::ONE),
        ),
        Bone::new("child", Some(0), t(0.0, 10.0, 0.0)),
    ])
    .unwrap();
    let target = Skeleton::new(vec![
        Bone::new(
            "root",
            None,
            Transform::new(
                tgt_t,
                ue_rotation(-90.887756, 89.786018, 89.115906),
                Vec3::ONE,
            ),
        ),
        Bone::new("child", Some(0), t(0.0, 12.0, 0.0)),
    ])
    .unwrap();
    let animated_t = Vec3::new(3.5, 80.25, -7.0);
    let animated = Transform::new(
        animated_t,
        ue_rotation(-63.208164, 9.146088, -74.355972),
        Vec3::ONE,
    );
    let clip = one_key_clip(&source, vec![Some(animated), None]);
    let mapping = BoneMapping::new(&source, &target, &Rig::default()).unwrap();
    let out = remap_clip(&clip, &source, &target, &mapping).unwrap();

    let root = &out.tracks()[0];
    let r = root.rotation.as_ref().unwrap().values[0];
    let ue = ue_rotation(56.725945, 72.118958, -58.820042);
    let (m, e) = (Mat3::from_quat(r), Mat3::from_quat(ue));
    for (a, b) in m.to_cols_array().iter().zip(e.to_cols_array()) {
        assert!((a - b).abs() < 1e-3, "rotation matrix {m} against UE's {e}");
    }
    let tr = root.translation.as_ref().unwrap().values[0];
    for axis in 0..3 {
        let ratio = animated_t[axis] / tr[axis];
        assert!(
            (ratio - 0.78897).abs() < 1e-5,
            "axis {axis}: source/target {ratio}"
        );
    }
    // The child had no track: it gets no keys.
    assert!(!out.tracks()[1].is_animated());
}

#[test]
fn offline_conversion_onto_the_same_skeleton_changes_nothing() {
    let asset = crate::procedural::humanoid_asset();
    let s = &asset.skeleton;
    let mapping = BoneMapping::new(s, s, &Rig::default()).unwrap();
    for clip in &asset.clips {
        let out = remap_clip(clip, s, s, &mapping).unwrap();
        for time in clip.key_times() {
            for (bone, (a, b)) in clip.tracks().iter().zip(out.tracks()).enumerate() {
                assert_eq!(a.is_animated(), b.is_animated());
                if !a.is_animated() {
                    continue;
                }
                let (x, y) = (
                    a.sample(time, &s.rest()[bone]),
                    b.sample(time, &s.rest()[bone]),
                );
                assert!(
                    x.translation.abs_diff_eq(y.translation, 1e-5),
                    "{} bone {bone}",
                    clip.name()
                );
                assert!(
                    same_rotation(x.rotation, y.rotation, 1e-5),
                    "{} bone {bone}",
                    clip.name()
                );
                assert!(
                    x.scale.abs_diff_eq(y.scale, 1e-5),
                    "{} bone {bone}",
                    clip.name()
                );
            }
        }
    }
}

fn skeleton(names: &[&str]) -> Skeleton {
    Skeleton::new(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| Bone::new(*n, i.checked_sub(1), t(0.0, 1.0, 0.0)))
            .collect(),
    )
    .unwrap()
}

#[test]
fn names_match_exactly_then_without_prefix_and_case_then_by_map() {
    let source = skeleton(&[
        "Bip01",
        "Bip01 Pelvis",
        "Bip01 L Thigh",
        "Spine",
        "Tail",
        "Extra",
    ]);
    let target = skeleton(&["Root", "pelvis", "l thigh", "Spine", "tail_01", "", "Head"]);
    let mut rig: Rig = Rig::from_json(
        r#"{"strip_prefixes": ["Bip", "Bip01 "], "bone_map": {"tail_01": "Tail", "Root": "Bip01"}}"#,
        "test",
    )
    .unwrap();
    let m = BoneMapping::new(&source, &target, &rig).unwrap();
    let got: Vec<_> = m.matches().to_vec();
    assert_eq!(
        got,
        vec![
            Some((0, MatchKind::Mapped)),
            Some((1, MatchKind::Stripped)), // the longest prefix "Bip01 " is stripped
            Some((2, MatchKind::Stripped)),
            Some((3, MatchKind::Exact)),
            Some((4, MatchKind::Mapped)),
            None, // empty names never match
            None, // no source
        ]
    );
    assert_eq!(m.unused_sources(), vec![5]);
    // Without the prefixes, only case is ignored.
    rig.strip_prefixes.clear();
    rig.bone_map.clear();
    let m = BoneMapping::new(&source, &target, &rig).unwrap();
    assert_eq!(m.matched_count(), 1);
}

#[test]
fn a_stripped_name_two_source_bones_share_matches_neither() {
    let source = skeleton(&["a_hand", "b_hand", "A_Arm"]);
    let target = skeleton(&["hand", "arm"]);
    let rig = Rig::from_json(r#"{"strip_prefixes": ["a_", "b_"]}"#, "test").unwrap();
    let m = BoneMapping::new(&source, &target, &rig).unwrap();
    assert_eq!(m.matches(), &[None, Some((2, MatchKind::Stripped))]);
}

#[test]
fn bone_map_errors_name_the_bone() {
    let source = skeleton(&["a", "b"]);
    let target = skeleton(&["a", "c"]);
    let map = |json: &str| {
        BoneMapping::new(&source, &target, &Rig::from_json(json, "test").unwrap()).unwrap_err()
    };
    let e = map(r#"{"bone_map": {"nope": "a"}}"#);
    assert!(
        matches!(&e, Error::UnknownBone { name, skeleton: "target", .. } if name == "nope"),
        "{e}"
    );
    let e = map(r#"{"bone_map": {"c": "zz"}}"#);
    assert!(
        matches!(&e, Error::UnknownBone { name, skeleton: "source", .. } if name == "zz"),
        "{e}"
    );
    let e = map(r#"{"bone_map": {"a": "b"}}"#);
    assert!(matches!(&e, Error::MapShadowed { .. }), "{e}");
    // A redundant entry is fine.
    let rig = Rig::from_json(r#"{"bone_map": {"a": "a", "c": "b"}}"#, "test").unwrap();
    assert_eq!(
        BoneMapping::new(&source, &target, &rig)
            .unwrap()
            .source_of(1),
        Some(1)
    );
}

#[test]
fn rig_modes_resolve_default_preset_and_overrides() {
    let target = skeleton(&["root", "Bip01 Pelvis", "spine", "head"]);
    let modes = Rig::humanoid().modes(&target).unwrap();
    use TranslationMode::*;
    assert_eq!(
        modes,
        vec![AnimationScaled, AnimationScaled, Skeleton, Skeleton]
    );
    let rig = Rig::from_json(
        r#"{"translation_retargeting": {"preset": "humanoid", "default": "animation_relative",
            "bones": {"head": "orient_and_scale", "root": "animation"}}}"#,
        "test",
    )
    .unwrap();
    assert_eq!(
        rig.modes(&target).unwrap(),
        vec![
            Animation,
            AnimationScaled,
            AnimationRelative,
            OrientAndScale
        ]
    );
    assert_eq!(Rig::default().modes(&target).unwrap(), vec![Animation; 4]);
    assert_eq!(
        Rig::from_arg("skeleton").unwrap().modes(&target).unwrap(),
        vec![Skeleton; 4]
    );
}

#[test]
fn bad_rig_files_are_clear_errors() {
    let target = skeleton(&["root", "spine"]);
    let parse = |json: &str| Rig::from_json(json, "rig.json");
    let e = parse(r#"{"translation_retargeting": {"default": "sideways"}}"#).unwrap_err();
    assert!(
        matches!(e, Error::Rig { .. }) && e.to_string().contains("sideways"),
        "{e}"
    );
    assert!(
        e.to_string().contains("animation_scaled"),
        "lists the modes: {e}"
    );
    let e = parse(r#"{"translation_retargeting": {"default": "skeleton""#).unwrap_err();
    assert!(
        matches!(e, Error::Rig { .. }) && e.to_string().contains("rig.json"),
        "{e}"
    );
    let e = parse(r#"{"translation_retargting": {}}"#).unwrap_err();
    assert!(e.to_string().contains("translation_retargting"), "{e}");
    let e = parse(r#"{"translation_retargeting": {"preset": "quadruped"}}"#).unwrap_err();
    assert!(e.to_string().contains("quadruped"), "{e}");
    let rig = parse(r#"{"translation_retargeting": {"bones": {"tail": "skeleton"}}}"#).unwrap();
    let e = rig.modes(&target).unwrap_err();
    assert!(
        matches!(&e, Error::UnknownBone { name, .. } if name == "tail"),
        "{e}"
    );
    let e = Rig::from_arg("/no/such/rig.json").unwrap_err();
    assert!(matches!(e, Error::Rig { .. }), "{e}");
    let e = Rig::load(std::path::Path::new("/no/such/rig.json")).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
}
