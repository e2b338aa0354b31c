//! One error type for the crate: every bad input gets a variant that names what is wrong.

use std::path::PathBuf;

/// What went wrong, and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("skeleton has no bones")]
    EmptySkeleton,
    #[error(
        "bone {bone} '{name}': parent {parent} does not exist (the skeleton has {count} bones)"
    )]
    ParentOutOfRange {
        bone: usize,
        name: String,
        parent: i64,
        count: usize,
    },
    #[error(
        "bone {bone} '{name}': parent {parent} is stored after it; bones must be stored parents-first \
         (use Skeleton::from_unordered to reorder)"
    )]
    ParentOrder {
        bone: usize,
        name: String,
        parent: usize,
    },
    #[error("bone hierarchy has a cycle through bone {bone} '{name}'")]
    Cycle { bone: usize, name: String },
    #[error("two bones are named '{name}' (indices {first} and {second})")]
    DuplicateBoneName {
        name: String,
        first: usize,
        second: usize,
    },
    #[error("{what}: value is not finite (NaN or infinity)")]
    NonFinite { what: String },
    #[error("{what}: zero-length quaternion")]
    ZeroQuaternion { what: String },
    #[error(
        "{what}: negative scale {value}; posegpu rejects negative scales (UE switches to a matrix path for them)"
    )]
    NegativeScale { what: String, value: f32 },
    #[error("{what}: key times must not decrease (key {index}: {prev} then {next})")]
    TimesDecrease {
        what: String,
        index: usize,
        prev: f32,
        next: f32,
    },
    #[error("{what}: {times} key times but {values} values")]
    KeyCountMismatch {
        what: String,
        times: usize,
        values: usize,
    },
    #[error("{what}: channel has no keys")]
    EmptyChannel { what: String },
    #[error("clip '{clip}' has no keys on any bone")]
    EmptyClip { clip: String },
    #[error("clip '{clip}' has {got} bone tracks but the skeleton has {expected} bones")]
    TrackCount {
        clip: String,
        expected: usize,
        got: usize,
    },
    #[error("reference pose '{pose}' has {got} bones but the skeleton has {expected}")]
    PoseLength {
        pose: String,
        expected: usize,
        got: usize,
    },
    #[error("{what}: interpolation {interpolation} is not supported (only LINEAR and STEP are)")]
    UnsupportedInterpolation {
        what: String,
        interpolation: &'static str,
    },
    #[error("no animation named or numbered '{name}' (available: {available})")]
    UnknownAnimation { name: String, available: String },
    #[error("rig {origin}: {message}")]
    Rig { origin: String, message: String },
    #[error("{what}: no bone named '{name}' in the {skeleton} skeleton")]
    UnknownBone {
        what: String,
        name: String,
        skeleton: &'static str,
    },
    #[error(
        "bone map: target bone '{target}' is mapped to '{mapped}' but its name already matches \
         source bone '{matched}'; names match first, so remove the entry or rename"
    )]
    MapShadowed {
        target: String,
        mapped: String,
        matched: String,
    },
    #[error("retarget source {index} does not exist (the library has {count})")]
    UnknownSource { index: usize, count: usize },
    #[error("no reference pose named '{name}' (available: {available})")]
    UnknownReferencePose { name: String, available: String },
    #[error("instance {instance}: {what}")]
    BadInstance { instance: usize, what: String },
    #[error("playback: {what}")]
    Playback { what: String },
    #[error("blend space: {what}")]
    BlendSpace { what: String },
    #[error("additive '{clip}': {what}")]
    Additive { clip: String, what: String },
    #[error("{what} needs {size} bytes, over the device limit of {limit} bytes ({limit_name})")]
    TooLarge {
        what: String,
        size: u64,
        limit: u64,
        limit_name: &'static str,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: glTF: {message}")]
    Gltf { path: PathBuf, message: String },
    #[error("{path}: BVH line {line}: {message}")]
    Bvh {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: unknown file type (expected .glb, .gltf or .bvh)")]
    UnknownFormat { path: PathBuf },
    #[error(
        "{path}: posegpu was built without its `{feature}` feature, which reads this file type"
    )]
    FeatureDisabled {
        path: PathBuf,
        feature: &'static str,
    },
    #[error("mesh: {what}")]
    Mesh { what: String },
    #[error("render: {what}")]
    Render { what: String },
    #[error("no GPU adapter found (not even a software one such as lavapipe)")]
    NoAdapter,
    /// A device operation failed: `what` says which, `source` is wgpu's error where there is
    /// one (validation, out of memory, a lost device, a failed mapping).
    #[error("GPU: {what}")]
    Gpu {
        what: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// [`Error::Gpu`] for `what`, keeping wgpu's error as the source.
    pub(crate) fn gpu(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Gpu {
            what: what.into(),
            source: Some(Box::new(source)),
        }
    }
}
