//! Unreal's five translation retargeting modes.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

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
