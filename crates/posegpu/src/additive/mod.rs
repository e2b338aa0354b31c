//! Additive poses: deltas built from a pose and a base pose, in local space or as mesh-space
//! rotations, and applied onto other poses with a weight.
//!
//! The per-bone math ([`make_delta`], [`apply_delta`]: the reference both evaluators follow),
//! and [`make_additive`], which turns whole clips into additive clips on the host, once, before
//! they are uploaded.

pub(crate) mod build;
pub(crate) mod delta;

pub use build::{frame_time, make_additive, AdditiveBase};
pub use delta::{
    apply_delta, apply_mesh_delta, make_delta, to_local_rotations, to_mesh_rotations,
    weighted_delta, IDENTITY_DELTA,
};
