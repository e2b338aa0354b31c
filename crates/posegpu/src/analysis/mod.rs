//! Tools that measure the evaluator rather than run it, without a GPU: the warp-level replay of
//! each pass's memory traffic, and each pipeline's size (SPIR-V instructions, workgroup memory).
//! They read the runtime's plans and shaders; the runtime names nothing here.

mod pipelines;
mod replay;

pub use crate::gpu::ShaderStats;
pub use pipelines::{shader_stats, PipelineStats};
pub use replay::{replay_traffic, PassTraffic};
