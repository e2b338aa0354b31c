//! Unreal's five translation retargeting modes, and the per-bone cache they run from, built
//! once per (retarget source, target) pair; the sampling stage applies it (`retarget_bone` in
//! `shaders/clip.wgsl`, its CPU twin in `src/cpu/clip.rs`).

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use crate::layout::{BoneRetarget, RETARGET_ORIENT};
use crate::math::{find_between_normals, safe_recip, ORIENT_PRECISION, SMALL, TINY};
use crate::Transform;

/// How a bone's sampled local transform is adapted to the target skeleton (UE's
/// `EBoneTranslationRetargetingMode`). The numeric values are what the GPU reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u32)]
#[non_exhaustive]
pub enum TranslationMode {
    /// The animation's translation, unchanged (UE's default).
    #[default]
    Animation = 0,
    /// The target's reference translation: bone lengths never change.
    Skeleton = 1,
    /// The animation's translation scaled by the ratio of reference lengths.
    AnimationScaled = 2,
    /// The animation's motion relative to the source reference, applied on the target's.
    AnimationRelative = 3,
    /// The animation's translation rotated from the source's bone direction to the target's
    /// and scaled by the length ratio.
    OrientAndScale = 4,
}

impl TranslationMode {
    /// Every mode, in order of their GPU codes.
    pub const ALL: [Self; 5] = [
        Self::Animation,
        Self::Skeleton,
        Self::AnimationScaled,
        Self::AnimationRelative,
        Self::OrientAndScale,
    ];

    /// The mode a GPU code stands for (`MODE_*` in `shaders/clip.wgsl`); an unknown code reads as
    /// the default.
    pub(crate) fn from_code(code: u32) -> Self {
        Self::ALL.get(code as usize).copied().unwrap_or_default()
    }

    /// The name used in rig files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Animation => "animation",
            Self::Skeleton => "skeleton",
            Self::AnimationScaled => "animation_scaled",
            Self::AnimationRelative => "animation_relative",
            Self::OrientAndScale => "orient_and_scale",
        }
    }
}

impl fmt::Display for TranslationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TranslationMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown translation retargeting mode '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// The caches of every target bone for clips whose retarget source is `source_pose` (local
/// reference transforms of the source skeleton, one per source bone) playing on a target whose
/// reference pose is `target_pose`; `source_of(b)` is the source bone driving target bone `b`.
pub(crate) fn mode_caches(
    source_pose: &[Transform],
    target_pose: &[Transform],
    source_of: impl Fn(usize) -> Option<usize>,
    modes: &[TranslationMode],
) -> Vec<BoneRetarget> {
    (0..target_pose.len())
        .map(|i| {
            let tgt = target_pose[i];
            match source_of(i) {
                Some(s) => pair(s, &source_pose[s], &tgt, modes[i]),
                None => BoneRetarget {
                    source: -1,
                    mode: modes[i] as u32,
                    source_ref: tgt.into(),
                    target_ref: tgt.into(),
                    ..BoneRetarget::default()
                },
            }
        })
        .collect()
}

fn pair(source: usize, src: &Transform, tgt: &Transform, mode: TranslationMode) -> BoneRetarget {
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
    let mut out = BoneRetarget {
        source: source as i32,
        mode: mode as u32,
        flags: 0,
        length_ratio,
        source_ref: (*src).into(),
        target_ref: (*tgt).into(),
        relative: relative.into(),
        ..BoneRetarget::default()
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

/// How one target bone is driven by one retarget source, as `posegpu info --against` shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct BoneCache {
    /// The source bone whose channels drive this bone; `None` for none (the bone keeps its
    /// reference local transform).
    pub source: Option<usize>,
    /// The bone's translation retargeting mode.
    pub mode: TranslationMode,
    /// AnimationScaled's ratio of reference lengths `|T_tgt| / |T_src|`.
    pub length_ratio: f32,
    /// OrientAndScale's factor `k = |t| / |s|`, where the bone has an entry.
    pub orient_scale: Option<f32>,
}

impl From<&BoneRetarget> for BoneCache {
    fn from(b: &BoneRetarget) -> Self {
        Self {
            source: usize::try_from(b.source).ok(),
            mode: TranslationMode::from_code(b.mode),
            length_ratio: b.length_ratio,
            orient_scale: (b.flags & RETARGET_ORIENT != 0).then_some(b.orient_source[3]),
        }
    }
}
