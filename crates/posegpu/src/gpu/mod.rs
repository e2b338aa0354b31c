//! The GPU backend (wgpu compute).

mod context;
mod crowd;
mod evaluator;
mod outputs;
mod replay;
pub(crate) mod shaders;
mod util;

pub use context::GpuContext;
pub use crowd::GpuCrowd;
pub use evaluator::{GpuEvaluator, GpuOptions, OutputChunk, PassPlan};
pub use outputs::{Outputs, SkinningLayout};
pub use replay::{replay_traffic, PassTraffic};
pub use util::PassTimer;
#[cfg(feature = "render")]
pub(crate) use util::{read_mapped, ErrorScope};
