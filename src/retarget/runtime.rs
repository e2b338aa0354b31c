//! The per-bone retarget cache and its application: the CPU twin of `retarget_bone` in
//! `shaders/sample.wgsl`.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3, Vec4};

use super::{BoneMapping, TranslationMode};
use crate::library::Xform;
use crate::math::{
    find_between_normals, normalize_quat, safe_recip, Transform, ORIENT_PRECISION, SMALL, TINY,
};
use crate::skeleton::Skeleton;

/// [`BoneRetarget::flags`]: the bone has an OrientAndScale entry.
pub const RETARGET_ORIENT: u32 = 1;

/// Everything the sampling stage needs to drive one target bone from one retarget source:
/// built on the host once per (retarget source, target skeleton) pair, uploaded once, read for
/// every instance. 208 bytes; WGSL `struct BoneRetarget` in `shaders/sample.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BoneRetarget {
    /// The source bone whose channels drive this bone; -1 for none (the bone keeps its
    /// target reference local).
    pub source: i32,
    /// A [`TranslationMode`] as `u32`.
    pub mode: u32,
    /// Bit 0 ([`RETARGET_ORIENT`]): an OrientAndScale entry is present.
    pub flags: u32,
    /// AnimationScaled: `|T_tgt| / |T_src|`, or exactly 1 where `|T_src| ≤ SMALL`.
    pub length_ratio: f32,
    /// The retarget source's local reference: the value of channels a clip lacks.
    pub source_ref: Xform,
    /// The target's local reference.
    pub target_ref: Xform,
    /// AnimationRelative: `(R_src⁻¹ ⊗ R_tgt, T_tgt − T_src, S_tgt ∘ safeRecip(S_src))`.
    pub relative: Xform,
    /// OrientAndScale: `Δq = findBetweenNormals(ŝ, t̂)`.
    pub orient_rotation: [f32; 4],
    /// OrientAndScale: `s` in xyz, `k = |t| / |s|` in w.
    pub orient_source: [f32; 4],
    /// OrientAndScale: `t` in xyz.
    pub orient_target: [f32; 4],
}

impl BoneRetarget {
    /// The caches of every target bone for clips whose retarget source is `source_pose` (local
    /// reference transforms of the source skeleton, one per source bone).
    pub fn build(
        source_pose: &[Transform],
        target: &Skeleton,
        mapping: &BoneMapping,
        modes: &[TranslationMode],
    ) -> Vec<Self> {
        (0..target.len())
            .map(|i| {
                let tgt = target.rest()[i];
                match mapping.source_of(i) {
                    Some(s) => Self::pair(s, &source_pose[s], &tgt, modes[i]),
                    None => Self {
                        source: -1,
                        mode: modes[i] as u32,
                        source_ref: tgt.into(),
                        target_ref: tgt.into(),
                        ..Self::default()
                    },
                }
            })
            .collect()
    }

    fn pair(source: usize, src: &Transform, tgt: &Transform, mode: TranslationMode) -> Self {
        let (s, t) = (src.translation, tgt.translation);
        let src_len = s.length();
        let length_ratio = if src_len > SMALL {
            t.length() / src_len
        } else {
            1.0
        };
        let relative = Transform {
            rotation: src.rotation.conjugate() * tgt.rotation,
            translation: t - s,
            scale: tgt.scale * safe_recip(src.scale),
        };
        let mut out = Self {
            source: source as i32,
            mode: mode as u32,
            flags: 0,
            length_ratio,
            source_ref: (*src).into(),
            target_ref: (*tgt).into(),
            relative: relative.into(),
            ..Self::default()
        };
        let differs = (s - t).abs().max_element() > ORIENT_PRECISION;
        if differs && src_len * t.length() > TINY {
            let dq = find_between_normals(s / src_len, t / t.length());
            out.flags |= RETARGET_ORIENT;
            out.orient_rotation = dq.to_array();
            out.orient_source = s.extend(t.length() / src_len).to_array();
            out.orient_target = t.extend(0.0).to_array();
        }
        out
    }

    pub fn mode(&self) -> TranslationMode {
        TranslationMode::ALL
            .get(self.mode as usize)
            .copied()
            .unwrap_or_default()
    }
}

/// Applies a bone's translation retargeting mode to its sampled local transform `x`. Additive
/// clips (whose keys are deltas) follow the spec's rules: Skeleton gives a zero translation,
/// AnimationScaled scales, AnimationRelative and OrientAndScale leave the delta alone.
pub fn retarget_bone(x: Transform, b: &BoneRetarget, additive: bool) -> Transform {
    let mut out = x;
    match b.mode() {
        TranslationMode::Animation => {}
        TranslationMode::Skeleton => {
            out.translation = if additive {
                Vec3::ZERO
            } else {
                Transform::from(b.target_ref).translation
            };
        }
        TranslationMode::AnimationScaled => out.translation = x.translation * b.length_ratio,
        TranslationMode::AnimationRelative if !additive => {
            let rel = Transform::from(b.relative);
            out.rotation = normalize_quat(Vec4::from(x.rotation * rel.rotation));
            out.translation = x.translation + rel.translation;
            out.scale = x.scale * rel.scale;
        }
        TranslationMode::OrientAndScale if !additive && b.flags & RETARGET_ORIENT != 0 => {
            let s = Vec4::from(b.orient_source);
            let near = (x.translation - s.truncate()).abs().max_element() <= ORIENT_PRECISION;
            out.translation = if near {
                Vec4::from(b.orient_target).truncate()
            } else {
                s.w * (Quat::from_array(b.orient_rotation) * x.translation)
            };
        }
        TranslationMode::AnimationRelative | TranslationMode::OrientAndScale => {}
    }
    out
}
