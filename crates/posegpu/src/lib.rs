//! posegpu: skeletal animation poses for huge crowds, evaluated with wgpu compute shaders, with
//! a CPU twin of every GPU stage.
//!
//! ```no_run
//! use posegpu::{AnimLibrary, ClipSample, GpuContext, GpuEvaluator, GpuOptions};
//!
//! let asset = posegpu::import::load("character.glb")?;
//! let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
//! let ctx = GpuContext::new()?;
//! let mut gpu = GpuEvaluator::new(&ctx, &lib, 10_000, &GpuOptions::default())?;
//! let crowd: Vec<ClipSample> = (0..10_000).map(|i| ClipSample::new(0, i as f32 * 0.01, true)).collect();
//! gpu.evaluate(&crowd)?; // skinning matrices now in gpu.chunks()[k].skinning
//! let poses = gpu.read_back()?; // only when the host needs them
//! # Ok::<(), posegpu::Error>(())
//! ```
//!
//! Crowds that play on their own: [`Crowd`] gives each instance sequence players (rates,
//! looping, sync, montages, root motion) and [`GpuCrowd`] advances them on the GPU each frame
//! without uploads (see `examples/crowd_sim.rs`).
//!
//! The guide is in `docs/guide/`; the map of the code follows.
#![doc = include_str!("../../../docs/architecture.md")]
#![warn(unreachable_pub)]
#![warn(missing_docs)]

// The renderer draws into headless targets and reads them back, blocking: native only.
#[cfg(all(feature = "render", target_arch = "wasm32"))]
compile_error!(
    "posegpu's `render` feature is native only: build for the web with \
     default-features = false (features \"gltf\", \"bvh\")"
);

// The runtime's core (a library, a frame's batch, the evaluators, their outputs, crowds, the
// frame's passes): private modules, every public type re-exported once here. What a crowd
// plays (`playback`), the spec's per-bone math (`math`) and the tools (importers, exporters,
// retargeting, compression, procedural assets, blend spaces, additive clips, drawing,
// analysis): public modules, their types reachable there only. `tests/it/public_surface.rs`
// checks that each public item has one path; `tests/it/modules.rs` puts each module on one
// side (shared model, runtime, authoring).
pub mod additive;
pub mod analysis;
mod batch;
pub mod blend;
pub mod compress;
mod cpu;
mod drive;
mod error;
#[cfg(feature = "gltf")]
pub mod export;
mod frame_plan;
mod gpu;
#[cfg(any(feature = "gltf", feature = "bvh"))]
pub mod import;
mod layout;
mod library;
pub mod math;
mod model;
pub mod playback;
mod pose;
pub mod procedural;
#[cfg(feature = "render")]
pub mod render;
pub mod retarget;

/// The glam posegpu's public types use (an engine on another glam converts at the boundary).
pub use glam;

pub use batch::{
    ClipSample, FrameInput, InertialStart, InstanceLayers, Layer, LayerKind, PoseBatch, RootLock,
    RootMotionAxes, RootPart,
};
pub use cpu::{ClipMotion, CpuEvaluator};
pub use drive::{BoneCache, IkWeights, TranslationMode};
pub use error::{Error, Result};
pub use frame_plan::{Pass, PassTimes, Stage};
pub use gpu::{
    FusePolicy, GpuContext, GpuCrowd, GpuEvaluator, GpuOptions, OutputChunk, Outputs, PassTimer,
    SkinningLayout,
};
pub use layout::{Mat3x4, Xform};
pub use library::{
    AnimLibrary, ClipId, LibraryBuilder, MaskId, NotifyInfo, RetargetSource, SourceId, SourceKind,
};
pub use math::transform::Transform;
pub use model::{
    component_space, find_keys, map_time, mask_weights, AdditiveSpace, Asset, AssetFrame,
    BindOrigin, BindPose, BindSpace, Bone, BoneTrack, Channel, Clip, Curve, Interpolation,
    MaskBranch, Notify, ReferencePose, RestPose, Skeleton,
};
pub use playback::crowd::Crowd;
pub use pose::{Deviation, Poses};

/// The README's code blocks, compiled as doctests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// The guide's code blocks (`docs/guide/`), compiled as doctests too.
#[cfg(doctest)]
mod guide_doctests {
    #[doc = include_str!("../../../docs/guide/command-line.md")]
    struct CommandLine;
    #[doc = include_str!("../../../docs/guide/library.md")]
    struct Library;
    #[doc = include_str!("../../../docs/guide/rendering.md")]
    struct Rendering;
    #[doc = include_str!("../../../docs/guide/additive.md")]
    struct Additive;
    #[doc = include_str!("../../../docs/guide/masks.md")]
    struct Masks;
    #[doc = include_str!("../../../docs/guide/curves.md")]
    struct Curves;
    #[doc = include_str!("../../../docs/guide/crowds.md")]
    struct Crowds;
    #[doc = include_str!("../../../docs/guide/retargeting.md")]
    struct Retargeting;
    #[doc = include_str!("../../../docs/guide/bevy.md")]
    struct Bevy;
    #[doc = include_str!("../../../docs/guide/conventions.md")]
    struct Conventions;
    #[doc = include_str!("../../../docs/guide/gpu-design.md")]
    struct GpuDesign;
}
