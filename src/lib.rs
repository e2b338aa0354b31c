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

pub mod additive;
pub mod batch;
pub mod blend;
pub mod clip;
pub mod cpu;
pub mod error;
pub mod export;
pub mod gpu;
pub mod import;
pub mod library;
pub mod math;
pub mod picture;
pub mod playback;
pub mod plot;
pub mod pose;
pub mod procedural;
pub mod render;
pub mod retarget;
pub mod skeleton;

pub use additive::{make_additive, AdditiveBase, AdditiveSpace};
pub use batch::{ClipSample, LayerKind, PoseBatch};
pub use blend::clips::{AimOffset, ClipBlendSpace};
pub use blend::space::BlendSpace;
pub use clip::{BoneTrack, Channel, Clip, Interpolation};
pub use cpu::CpuEvaluator;
pub use error::{Error, Result};
pub use gpu::{CrowdTimes, GpuContext, GpuCrowd, GpuEvaluator, GpuOptions, OutputChunk, PassTimes};
pub use import::Asset;
pub use library::{AnimLibrary, Instance, LibraryBuilder, Mat3x4, RetargetSource, SourceId, Xform};
pub use math::Transform;
pub use playback::{Agent, Crowd, Montage, PlayRate, Player, RootLock, Segment, TrackId};
pub use pose::{Deviation, Poses};
pub use retarget::{BoneMapping, Rig, TranslationMode};
pub use skeleton::{Bone, ReferencePose, Skeleton};
