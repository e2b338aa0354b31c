//! How a library's retarget sources drive the target's bones at run time: what the sampling and
//! IK stages read and what their CPU twins compute, apart from how it was authored. UE's
//! translation modes and their per-bone caches ([`modes`]), a retarget plan's packed section
//! and the application of its records ([`plan`]), and IK after retargeting: the per-instance
//! weights and the two-bone solver ([`ik`]).
//!
//! `retarget/` (authoring: recognising characters, pairing bones, building plans and caches,
//! measuring quality) compiles into these; nothing here reads it.

pub(crate) mod ik;
pub(crate) mod modes;
pub(crate) mod plan;

pub use ik::IkWeights;
pub use modes::{BoneCache, TranslationMode};
