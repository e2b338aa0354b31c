//! The GPU backend (wgpu compute).

mod context;
mod crowd;
mod evaluator;
mod outputs;
mod replay;
mod shader_stats;
pub(crate) mod shaders;
mod specialize;
mod util;

pub use context::GpuContext;
pub use crowd::GpuCrowd;
pub use evaluator::{FusePolicy, GpuEvaluator, GpuOptions, OutputChunk};
pub use outputs::{Outputs, SkinningLayout};
pub use replay::{replay_traffic, PassTraffic};
pub use shader_stats::{shader_stats, PipelineStats, ShaderStats};
pub use util::PassTimer;
#[cfg(feature = "render")]
pub(crate) use util::{read_mapped, ErrorScope};
