//! The GPU backend (wgpu compute).

mod context;
mod crowd;
mod evaluator;
mod outputs;
mod shader_stats;
pub(crate) mod shaders;
mod specialize;
mod util;

pub use context::GpuContext;
pub use crowd::GpuCrowd;
pub use evaluator::{FusePolicy, GpuEvaluator, GpuOptions, OutputChunk};
pub use outputs::{Outputs, SkinningLayout};
pub(crate) use shader_stats::pipeline_stats;
pub use shader_stats::ShaderStats;
pub(crate) use specialize::Paths;
pub use util::PassTimer;
#[cfg(feature = "render")]
pub(crate) use util::{read_mapped, ErrorScope};
#[cfg(test)]
pub(crate) use {evaluator::pass_constants, shaders::shader, specialize::specialize};
