//! Retargeting: playing clips on skeletons other than the one they were authored on.
//!
//! Between characters from different tools (the default): [`recognise`] finds a canonical
//! humanoid on each skeleton (names, then structure), [`BodyFrame`] measures each one's body frame
//! in its file's world, and a [`RetargetPlan`] built once per (source, target) pair drives every
//! target bone from the source's rotations from rest, per bone, in the sampling stage
//! ([`crate::LibraryBuilder::add_character_source`]) and offline ([`bake_clip`]); [`quality`]
//! measures the result as a user sees it. Spec: `docs/pose-math.md`, "Retargeting between
//! characters".
//!
//! UE's per-bone translation modes, for skeletons of one tool and rig files that set modes: a
//! per-bone cache built per (retarget source, target) pair and applied per bone by the sampling
//! stage ([`crate::BoneCache`] shows it; [`crate::LibraryBuilder::add_source`]), and offline
//! ([`remap_clip`], UE's RemapTracksToNewSkeleton). Spec: `docs/pose-math.md`, "Translation
//! retargeting" and "Offline retargeting".
//!
//! This is the authoring side: what it builds goes into a library as packed tables
//! (`RetargetPlan` as its section, a rig as per-bone caches), which the runtime plays without it
//! (`src/drive/`: the translation modes, the plan records' application, IK after retargeting).

mod feet;
mod frame;
pub(crate) mod goals;
mod humanoid;
mod matching;
mod offline;
mod plan;
pub mod quality;
mod rig;
mod sources;
mod tree;

pub use feet::{FootHold, FOOT_ON_SHIN};
pub use frame::{BodyFrame, Character, REST_FLOOR_TOLERANCE, TOELESS_SOLE};
pub use goals::MAX_IK_DEPTH;
pub use humanoid::{recognise, Digit, Humanoid, Method, Role, Side, SideLimbs};
pub use matching::{BoneMapping, MatchKind};
pub use offline::{bake_clip, remap_clip};
pub use plan::{BoneKind, BonePlanInfo, PlanOptions, RetargetPlan, MAX_PATH};
pub use rig::{Preset, Rig};

#[cfg(test)]
mod tests;
