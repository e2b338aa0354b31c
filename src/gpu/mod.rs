//! The GPU backend (wgpu compute).

mod context;
mod evaluator;
pub mod shaders;

pub use context::GpuContext;
pub use evaluator::{GpuEvaluator, GpuOptions, OutputChunk, PassTimes};
