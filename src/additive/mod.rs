//! Additive poses: deltas built from a pose and a base pose, in local space or as mesh-space
//! rotations, and applied onto other poses with a weight.
//!
//! [`delta`] holds the per-bone math (the reference both evaluators follow); [`build`] turns
//! whole clips into additive clips on the host, once, before they are uploaded.

pub mod build;
pub mod delta;

pub use build::{frame_time, make_additive, AdditiveBase};
pub use delta::{apply_delta, make_delta, to_local_rotations, to_mesh_rotations, weighted_delta};

/// Where an additive's rotations live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AdditiveSpace {
    /// Per-bone local deltas (UE's AAT_LocalSpaceBase).
    #[default]
    Local,
    /// Rotation deltas between mesh-space rotations; translations and scales stay local
    /// (UE's AAT_RotationOffsetMeshSpace). Applying one needs the parent-ordered conversions.
    Mesh,
}

impl AdditiveSpace {
    pub const ALL: [Self; 2] = [Self::Local, Self::Mesh];

    /// `local` or `mesh`, as the command line and the docs write them.
    pub fn name(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Mesh => "mesh",
        }
    }
}

impl std::str::FromStr for AdditiveSpace {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("'{s}' is not an additive space (local or mesh)"))
    }
}
