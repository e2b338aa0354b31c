//! The GPU backend (wgpu compute).

mod context;
mod crowd;
mod evaluator;
pub mod shaders;
pub(crate) mod util;

pub use context::GpuContext;
pub use crowd::{CrowdTimes, GpuCrowd};
pub use evaluator::{GpuEvaluator, GpuOptions, OutputChunk, PassTimes};
