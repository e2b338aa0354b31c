//! Translation retargeting: playing clips on skeletons other than the one they were authored on.
//!
//! At run time ([`BoneRetarget`], built per (retarget source, target) pair and applied per bone
//! by the sampling stage) and offline ([`remap_clip`], UE's RemapTracksToNewSkeleton). The math
//! is in `docs/pose-math.md`, "Translation retargeting" and "Offline retargeting".

mod matching;
mod mode;
mod offline;
mod rig;
mod runtime;

pub use matching::{BoneMapping, MatchKind};
pub use mode::TranslationMode;
pub use offline::remap_clip;
pub use rig::{Preset, Rig};
pub use runtime::{retarget_bone, BoneRetarget, RETARGET_ORIENT};
