//! One error type for the crate: every bad input gets a variant that names what is wrong.

use std::path::PathBuf;

/// What went wrong, and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A skeleton was built from an empty bone list.
    #[error("skeleton has no bones")]
    EmptySkeleton,
    /// A bone's parent index is not the index of a bone in the same list.
    #[error(
        "bone {bone} '{name}': parent {parent} does not exist (the skeleton has {count} bones)"
    )]
    ParentOutOfRange {
        /// The bone's index in the list given.
        bone: usize,
        /// The bone's name.
        name: String,
        /// The parent index given.
        parent: i64,
        /// How many bones the list has.
        count: usize,
    },
    /// [`crate::Skeleton::new`] got a bone whose parent is not stored before it.
    #[error(
        "bone {bone} '{name}': parent {parent} is stored after it; bones must be stored parents-first \
         (use Skeleton::from_unordered to reorder)"
    )]
    ParentOrder {
        /// The bone's index in the list given.
        bone: usize,
        /// The bone's name.
        name: String,
        /// The parent's index, not smaller than `bone`.
        parent: usize,
    },
    /// Following parents from some bone never reaches a root ([`crate::Skeleton::from_unordered`]).
    #[error("bone hierarchy has a cycle through bone {bone} '{name}'")]
    Cycle {
        /// The index (in the list given) of a bone on or below the cycle.
        bone: usize,
        /// That bone's name.
        name: String,
    },
    /// Two bones share a non-empty name.
    #[error("two bones are named '{name}' (indices {first} and {second})")]
    DuplicateBoneName {
        /// The shared name.
        name: String,
        /// Index of the first bone with that name.
        first: usize,
        /// Index of the second.
        second: usize,
    },
    /// A reference pose, inverse bind matrix, key time or key value holds NaN or infinity.
    #[error("{what}: value is not finite (NaN or infinity)")]
    NonFinite {
        /// Which value.
        what: String,
    },
    /// A rotation (rest pose or key) is a zero-length quaternion, which has no direction.
    #[error("{what}: zero-length quaternion")]
    ZeroQuaternion {
        /// Which rotation.
        what: String,
    },
    /// A channel's key times go backwards.
    #[error("{what}: key times must not decrease (key {index}: {prev} then {next})")]
    TimesDecrease {
        /// Which channel.
        what: String,
        /// Index of the key whose time is smaller than the one before it.
        index: usize,
        /// The previous key's time (seconds).
        prev: f32,
        /// This key's time (seconds).
        next: f32,
    },
    /// A channel has a different number of key times and key values.
    #[error("{what}: {times} key times but {values} values")]
    KeyCountMismatch {
        /// Which channel.
        what: String,
        /// Number of key times.
        times: usize,
        /// Number of key values.
        values: usize,
    },
    /// A channel has no keys (a channel that is not animated is left out instead).
    #[error("{what}: channel has no keys")]
    EmptyChannel {
        /// Which channel.
        what: String,
    },
    /// A clip has no channel on any bone.
    #[error("clip '{clip}' has no keys on any bone")]
    EmptyClip {
        /// The clip's name.
        clip: String,
    },
    /// A clip's track count differs from its skeleton's bone count.
    #[error("clip '{clip}' has {got} bone tracks but the skeleton has {expected} bones")]
    TrackCount {
        /// The clip's name.
        clip: String,
        /// The skeleton's bone count.
        expected: usize,
        /// The clip's track count.
        got: usize,
    },
    /// An alternative reference pose has more or fewer transforms than the skeleton has bones.
    #[error("reference pose '{pose}' has {got} bones but the skeleton has {expected}")]
    PoseLength {
        /// The pose's name.
        pose: String,
        /// The skeleton's bone count.
        expected: usize,
        /// The pose's transform count.
        got: usize,
    },
    /// An imported channel uses an interpolation other than linear or step (glTF `CUBICSPLINE`).
    #[error("{what}: interpolation {interpolation} is not supported (only LINEAR and STEP are)")]
    UnsupportedInterpolation {
        /// Which channel.
        what: String,
        /// The interpolation's name in the file.
        interpolation: &'static str,
    },
    /// No clip has the name asked for, and it is not a valid clip index either.
    #[error("no animation named or numbered '{name}' (available: {available})")]
    UnknownAnimation {
        /// The name or index asked for.
        name: String,
        /// The clip names there are, comma-separated.
        available: String,
    },
    /// A rig file could not be parsed, or a rig argument is neither a file, a preset nor a mode.
    #[error("rig {origin}: {message}")]
    Rig {
        /// Where the rig came from (a path, or the argument given).
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A bone name (in a rig, a bone map or a procedural pose) is not in the skeleton.
    #[error("{what}: no bone named '{name}' in the {skeleton} skeleton")]
    UnknownBone {
        /// Where the name was used.
        what: String,
        /// The name.
        name: String,
        /// Which skeleton was searched (`"source"` or `"target"`).
        skeleton: &'static str,
    },
    /// A bone map entry gives a target bone another source bone than the one its name matches.
    #[error(
        "bone map: target bone '{target}' is mapped to '{mapped}' but its name already matches \
         source bone '{matched}'; names match first, so remove the entry or rename"
    )]
    MapShadowed {
        /// The target bone's name.
        target: String,
        /// The source bone the map names for it.
        mapped: String,
        /// The source bone its name already matches.
        matched: String,
    },
    /// A skeleton is not a humanoid, which retargeting between characters needs on both
    /// sides (a rig that sets translation modes retargets any skeleton by name).
    #[error("the {what} is not a humanoid: {why}")]
    NotHumanoid {
        /// Which skeleton (source or target, its size and top joint).
        what: String,
        /// Why not: the part not found, or how the rest pose is not a biped's.
        why: String,
    },
    /// A target bone of a retarget plan would read more source bones than a record holds.
    #[error(
        "target bone '{bone}' of the {target} would read {len} source bones, more than {limit}: \
         pair an intermediate bone with a bone_map entry"
    )]
    RetargetPath {
        /// The target bone.
        bone: String,
        /// The target skeleton (its size and top joint).
        target: String,
        /// The source bones its path holds.
        len: usize,
        /// The most a path may hold (`retarget::plan::MAX_PATH`).
        limit: usize,
    },
    /// A retarget plan met a mirrored frame other than its reference pose's: a source clip or
    /// pose that changes the signs of the scale of a bone with bones below it (a reflection
    /// that comes, goes or turns between keys). A plan reads mirrored frames as their
    /// unmirrored twins, fixed when it is built; mirrored leaf bones may change freely.
    #[error(
        "retarget plan: {what} changes the reflection (the signs of the scale) of bone '{bone}' \
         from the reference pose's; a plan needs each mirrored frame's reflection fixed"
    )]
    MirroredRetarget {
        /// What changes it: a source clip, or the source's node transforms.
        what: String,
        /// The first such bone.
        bone: String,
    },
    /// A retarget plan met skeletons or poses other than those it was built for.
    #[error("retarget plan: {what}")]
    PlanMismatch {
        /// What differs.
        what: String,
    },
    /// A [`crate::SourceId`] does not name a retarget source of the library being built.
    #[error("retarget source {index} does not exist (the library has {count})")]
    UnknownSource {
        /// The source's index.
        index: usize,
        /// How many sources the library has.
        count: usize,
    },
    /// A retarget source names an alternative reference pose the skeleton does not have.
    #[error("no reference pose named '{name}' (available: {available})")]
    UnknownReferencePose {
        /// The name asked for.
        name: String,
        /// The skeleton's alternative pose names, comma-separated.
        available: String,
    },
    /// An instance (or its layers, clips, times or weights) does not fit the library or batch.
    #[error("instance {instance}: {what}")]
    BadInstance {
        /// The instance's index in the batch or crowd.
        instance: usize,
        /// What is wrong.
        what: String,
    },
    /// A compression threshold that is not a fraction of the skeleton's height in (0, 1]
    /// (zero, negative, NaN, infinite, or larger than the skeleton).
    #[error("compressing clip '{clip}': tolerance {value} is not a fraction of the skeleton's height in (0, 1]")]
    CompressTolerance {
        /// The clip being compressed.
        clip: String,
        /// The tolerance asked for.
        value: f32,
    },
    /// A compressed clip's packed block that does not hold together (an offset past its end,
    /// a rate that is no rate, a bone count that is not its source's), found when it enters a
    /// library's tables.
    #[error("compressed clip '{clip}': {what}")]
    PackedBlock {
        /// The clip.
        clip: String,
        /// What is wrong.
        what: String,
    },
    /// A call whose arguments do not fit the library as a whole (a clip or bone out of range,
    /// a batch a stage-level entry point cannot run), not any one instance.
    #[error("{what}")]
    BadRequest {
        /// What is wrong.
        what: String,
    },
    /// A crowd, track or montage cannot play as asked (bad time step, no motion, wrong library).
    #[error("playback: {what}")]
    Playback {
        /// What is wrong.
        what: String,
    },
    /// A blend space or clip blend space is malformed (samples, clips, kinds or parameters).
    #[error("blend space: {what}")]
    BlendSpace {
        /// What is wrong.
        what: String,
    },
    /// A notify cannot be placed as asked (a time past the clip's end, a sidecar file naming
    /// a clip or a field that does not exist).
    #[error("clip '{clip}': {what}")]
    Notify {
        /// The clip (or the sidecar file and clip).
        clip: String,
        /// What is wrong.
        what: String,
    },
    /// A bone mask cannot be made as asked (no branches, a name already taken) or is used
    /// where it does not belong.
    #[error("bone mask '{mask}': {what}")]
    Mask {
        /// The mask's name.
        mask: String,
        /// What is wrong.
        what: String,
    },
    /// An additive clip cannot be made as asked (a clip of another skeleton, a clip already
    /// additive, a base frame past the clip's end).
    #[error("additive '{clip}': {what}")]
    Additive {
        /// The additive being made, or the clip whose frame is past its end.
        clip: String,
        /// What is wrong.
        what: String,
    },
    /// Data exceeds a device or index limit (a storage binding, a texture size, 32-bit indices).
    #[error("{what} needs {size} {unit}, over the device limit of {limit} {unit} ({limit_name})")]
    TooLarge {
        /// What was too large.
        what: String,
        /// Its size, in `unit`.
        size: u64,
        /// The limit, in the same unit.
        limit: u64,
        /// The unit of both: `"bytes"`, `"pixels"` (a texture side) or a count's noun.
        unit: &'static str,
        /// The limit's name (a `wgpu::Limits` field, or `"32-bit index"`).
        limit_name: &'static str,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A glTF file could not be read, or a clip could not be written to one.
    #[error("{path}: glTF: {message}")]
    Gltf {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A BVH file is malformed.
    #[error("{path}: BVH line {line}: {message}")]
    Bvh {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// What was wrong with the data read from a file (a skeleton, clip or pose the file
    /// describes), with the file named.
    #[error("{path}: {source}")]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with what it holds.
        #[source]
        source: Box<Error>,
    },
    /// A file is larger than `import::max_file_bytes` (refused before it is read whole).
    #[error("{path}: larger than {limit} bytes, the most a file may have (set POSEGPU_MAX_FILE_BYTES to read larger ones)")]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, in bytes.
        limit: u64,
    },
    /// `import::load` got a path whose extension is not `.glb`, `.gltf` or `.bvh`.
    #[error("{path}: unknown file type (expected .glb, .gltf or .bvh)")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A file needs a cargo feature this build lacks.
    #[error(
        "{path}: posegpu was built without its `{feature}` feature, which reads this file type"
    )]
    FeatureDisabled {
        /// The file.
        path: PathBuf,
        /// The missing feature (`"gltf"` or `"bvh"`).
        feature: &'static str,
    },
    /// A mesh cannot be drawn, or a mesh node to hide does not exist.
    #[error("mesh: {what}")]
    Mesh {
        /// What is wrong.
        what: String,
    },
    /// A render target or draw is invalid (an empty target, a buffer too small, a non-finite
    /// placement).
    #[error("render: {what}")]
    Render {
        /// What is wrong.
        what: String,
    },
    /// wgpu found no adapter, not even a software one.
    #[error("no GPU adapter found (not even a software one such as lavapipe)")]
    NoAdapter,
    /// A device operation failed: `what` says which, `source` is wgpu's error where there is
    /// one (validation, out of memory, a lost device, a failed mapping).
    #[error("GPU: {what}")]
    Gpu {
        /// Which operation failed.
        what: String,
        /// wgpu's error, where there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
}

/// `Result` with [`Error`] as its default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// [`Error::Gpu`] for `what`, keeping wgpu's error as the source.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn gpu(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Gpu {
            what: what.into(),
            source: Some(Box::new(source)),
        }
    }

    /// [`Error::Gpu`] for `what`, with wgpu's message: on the web its errors hold JavaScript
    /// values, which cannot be sent between threads as `Error`'s source must.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn gpu(what: impl Into<String>, source: impl std::error::Error) -> Self {
        Self::Gpu {
            what: format!("{}: {source}", what.into()),
            source: None,
        }
    }
}
