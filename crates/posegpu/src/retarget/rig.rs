//! The target rig: a translation retargeting mode per bone, and how bone names correspond.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::drive::TranslationMode;
use crate::error::{Error, Result};
use crate::model::{RestPose, Skeleton};

/// A named starting point for the per-bone modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Preset {
    /// UE's usual humanoid setup: every root bone and the pelvis (a bone named `pelvis` or
    /// `hips`, or ending so, prefix and case aside) `animation_scaled`, every other bone
    /// `skeleton`.
    Humanoid,
}

/// How clips from a source skeleton play on a target skeleton. The JSON form (all keys
/// optional, unknown keys refused):
///
/// ```json
/// {
///   "translation_retargeting": {
///     "preset": "humanoid",
///     "default": "skeleton",
///     "bones": { "pelvis": "animation_scaled", "ik_foot_l": "animation" }
///   },
///   "bone_map": { "target bone": "source bone" },
///   "strip_prefixes": ["Bip01 ", "mixamorig:"],
///   "rest": "bind"
/// }
/// ```
///
/// Modes resolve in order: `default` (else `skeleton` under the humanoid preset, else
/// `animation`, UE's default), then the preset's bones, then `bones`. Bone names in `bones`
/// and the keys of `bone_map` are the target's, exactly.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rig {
    /// The translation retargeting mode of each target bone.
    #[serde(default)]
    pub translation_retargeting: ModeTable,
    /// Explicit correspondences, target bone → source bone, used where names do not match.
    #[serde(default)]
    pub bone_map: BTreeMap<String, String>,
    /// Prefixes removed (the longest that fits, case ignored) before names are compared
    /// without case.
    #[serde(default)]
    pub strip_prefixes: Vec<String>,
    /// The pose both skeletons are measured from, `"bind"` or `"nodes"`. Absent: the bind pose
    /// for the character retargeting, the node transforms for UE's per-bone modes (whose
    /// reference pose is also what a source's unanimated channels hold, as in UE: the node
    /// transforms keep a clip played through them what it is on its own skeleton; `"bind"`
    /// is UE's import, which takes a glTF's bind pose as the reference pose).
    #[serde(default)]
    pub rest: Option<RestPose>,
}

/// The per-bone modes of a [`Rig`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeTable {
    /// The preset the modes start from, if any.
    pub preset: Option<Preset>,
    /// The mode of bones not otherwise set; `None` for the preset's (`skeleton` for the
    /// humanoid one), else `animation`.
    pub default: Option<TranslationMode>,
    /// Modes of named target bones, over the default and the preset.
    #[serde(default)]
    pub bones: BTreeMap<String, TranslationMode>,
}

impl Rig {
    /// Whether the rig sets translation modes (a preset, a default or any bone's), so that its
    /// clips play through UE's per-bone modes; a rig that only pairs names (`bone_map`,
    /// `strip_prefixes`) keeps the character retargeting.
    pub fn sets_modes(&self) -> bool {
        let modes = &self.translation_retargeting;
        modes.preset.is_some() || modes.default.is_some() || !modes.bones.is_empty()
    }

    /// The humanoid preset (see [`Preset::Humanoid`]).
    pub fn humanoid() -> Self {
        let mut rig = Self::default();
        rig.translation_retargeting.preset = Some(Preset::Humanoid);
        rig
    }

    /// Every bone in one mode.
    pub fn uniform(mode: TranslationMode) -> Self {
        let mut rig = Self::default();
        rig.translation_retargeting.default = Some(mode);
        rig
    }

    /// Parses the JSON form; `origin` names the text in errors (a path, say).
    pub fn from_json(text: &str, origin: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::Rig {
            origin: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// Reads and parses a JSON rig file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// A rig named on the command line: a JSON file, the preset `humanoid`, or a mode name
    /// (every bone in that mode).
    pub fn from_arg(arg: &str) -> Result<Self> {
        let path = Path::new(arg);
        if path.is_file() {
            return Self::load(path);
        }
        if arg == "humanoid" {
            return Ok(Self::humanoid());
        }
        if let Ok(mode) = arg.parse() {
            return Ok(Self::uniform(mode));
        }
        Err(Error::Rig {
            origin: arg.to_string(),
            message: "no such file, and not a preset (humanoid) or a mode name (animation, \
                      skeleton, animation_scaled, animation_relative, orient_and_scale)"
                .to_string(),
        })
    }

    /// The mode of every bone of `target`. A bone named in `bones` that `target` lacks is an
    /// error.
    pub fn modes(&self, target: &Skeleton) -> Result<Vec<TranslationMode>> {
        let table = &self.translation_retargeting;
        let humanoid = table.preset == Some(Preset::Humanoid);
        let base = table.default.unwrap_or(if humanoid {
            TranslationMode::Skeleton
        } else {
            TranslationMode::Animation
        });
        let mut modes = vec![base; target.len()];
        if humanoid {
            for (i, mode) in modes.iter_mut().enumerate() {
                let key = self.match_key(&target.names()[i]);
                let pelvis = ["pelvis", "hips"].iter().any(|p| key.ends_with(p));
                if target.parent(i).is_none() || pelvis {
                    *mode = TranslationMode::AnimationScaled;
                }
            }
        }
        for (name, &mode) in &table.bones {
            let bone = target.find(name).ok_or_else(|| Error::UnknownBone {
                what: "rig translation_retargeting.bones".to_string(),
                name: name.clone(),
                skeleton: "target",
            })?;
            modes[bone] = mode;
        }
        Ok(modes)
    }

    /// A name as compared in the second matching round: the longest configured prefix removed
    /// (case ignored), then lower-cased.
    pub fn match_key(&self, name: &str) -> String {
        let lower = name.to_lowercase();
        let stripped = self
            .strip_prefixes
            .iter()
            .map(|p| p.to_lowercase())
            .filter(|p| lower.starts_with(p.as_str()))
            .max_by_key(String::len)
            .map_or(lower.as_str(), |p| &lower[p.len()..]);
        stripped.to_string()
    }
}
