//! The spec's thresholds that the shaders share, each the twin of a WGSL `const` of the same
//! name (checked by `layout::tests`). The math that reads them is in `crate::math`.

/// Below this, a reciprocal is taken as 0 (`safeRecip` in the spec).
pub const TINY: f32 = 1e-8;
/// Per-component tolerance of OrientAndScale retargeting.
pub const ORIENT_PRECISION: f32 = 1e-3;
/// Weights at or below this do nothing; at or above `1 − ZERO_WEIGHT` they take the full path
/// (the blend rule, additive layers, IK weights).
pub const ZERO_WEIGHT: f32 = 1e-5;
/// `1 − D.R.w²` at or below this is no rotation at all (`math::delta::weighted_delta`).
pub(crate) const NO_ROTATION: f32 = 1e-10;
/// Inertialization offsets below this (units or radians) are none.
pub const NO_OFFSET: f32 = 1e-6;
