//! posegpu: skeletal animation poses for huge crowds, evaluated with wgpu compute shaders, with
//! a CPU twin of every GPU stage.
//!
//! ```no_run
//! use posegpu::{AnimLibrary, GpuContext, GpuEvaluator, GpuOptions, Instance};
//!
//! let asset = posegpu::import::load("character.glb")?;
//! let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
//! let ctx = GpuContext::new()?;
//! let mut gpu = GpuEvaluator::new(&ctx, &lib, 10_000, &GpuOptions::default())?;
//! let crowd: Vec<Instance> = (0..10_000).map(|i| Instance::new(0, i as f32 * 0.01, true)).collect();
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

// The runtime's core (a library, a frame's batch, the evaluators, their outputs, crowds):
// private modules, every public type re-exported once here. What a crowd plays (`playback`),
// the passes of a frame (`frame_plan`) and the tools (importers, exporters, retargeting,
// procedural assets, blend spaces, additive math, the spec's math, drawing, the traffic model):
// public modules, their types reachable there only. `tests/it/public_surface.rs` checks that each
// public item has one path.
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
pub mod frame_plan;
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
mod transform;

/// The glam posegpu's public types use (an engine on another glam converts at the boundary).
pub use glam;

pub use batch::{
    ClipSample, FrameInput, InertialStart, Instance, InstanceLayers, Layer, LayerKind, PoseBatch,
    RootLock, RootMotionAxes, RootPart,
};
pub use cpu::{ClipMotion, CpuEvaluator};
pub use drive::{BoneCache, IkWeights, TranslationMode};
pub use error::{Error, Result};
pub use gpu::{
    FusePolicy, GpuContext, GpuCrowd, GpuEvaluator, GpuOptions, OutputChunk, Outputs, PassTimer,
    SkinningLayout,
};
pub use layout::{Mat3x4, Xform};
pub use library::{
    AnimLibrary, LibraryBuilder, MaskId, NotifyInfo, RetargetSource, SourceId, SourceKind,
};
pub use model::{
    component_space, find_keys, map_time, mask_weights, AdditiveSpace, Asset, AssetFrame,
    BindOrigin, BindPose, BindSpace, Bone, BoneTrack, Channel, Clip, Curve, Interpolation,
    MaskBranch, Notify, ReferencePose, RestPose, Skeleton,
};
pub use playback::crowd::Crowd;
pub use pose::{Deviation, Poses};
pub use transform::Transform;

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
