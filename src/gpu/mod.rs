//! The GPU backend (wgpu compute).

pub mod bandwidth;
mod context;
mod crowd;
mod evaluator;
pub mod shaders;
pub(crate) mod util;

pub use bandwidth::{copy_bandwidth, Bandwidth, TimeSource};
pub use context::GpuContext;
pub use crowd::{CrowdTimes, GpuCrowd};
pub use evaluator::{GpuEvaluator, GpuOptions, OutputChunk, PassTimes};
