//! Tools that measure the evaluator rather than run it, without a GPU: the warp-level replay of
//! each pass's memory traffic, and each pipeline's size (SPIR-V instructions, workgroup memory).

pub use crate::gpu::{replay_traffic, shader_stats, PassTraffic, PipelineStats, ShaderStats};
