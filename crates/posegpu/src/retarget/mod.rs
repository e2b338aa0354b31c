//! Translation retargeting: playing clips on skeletons other than the one they were authored on.
//!
//! At run time (a per-bone cache built per (retarget source, target) pair and applied per bone
//! by the sampling stage; [`BoneCache`] shows it) and offline ([`remap_clip`], UE's
//! RemapTracksToNewSkeleton). The math is in `docs/pose-math.md`, "Translation retargeting" and
//! "Offline retargeting".

mod matching;
mod mode;
mod offline;
mod rig;
mod runtime;

pub use matching::{BoneMapping, MatchKind};
pub use mode::TranslationMode;
pub use offline::remap_clip;
pub use rig::{Preset, Rig};
pub(crate) use runtime::build_retarget_table;
pub use runtime::BoneCache;

#[cfg(test)]
mod tests;
