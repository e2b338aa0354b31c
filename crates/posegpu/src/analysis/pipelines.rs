//! What each pipeline of a frame asks of a GPU, read without one: `posegpu bench
//! --shader-stats` prints it per pipeline.

use crate::batch::PoseBatch;
use crate::error::Result;
use crate::frame_plan::{FrameOptions, FramePlan, FrameShape, Pass};
use crate::gpu::{pipeline_stats, FusePolicy, GpuOptions, Paths, ShaderStats};
use crate::layout::FUSED_BONES;
use crate::library::AnimLibrary;

/// One pipeline a frame runs, named `stage/variant/paths` (`fused/single-clip/plain`: the
/// fused stage, every instance playing one clip, no optional path; a fused pass's variant
/// also names a workgroup of other than 320 poses, `poses-640/`, and `skin-at-compose/`), and
/// its statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineStats {
    /// The stage's name, then its variant, then the paths it can take.
    pub name: String,
    /// What it asks of a GPU.
    pub stats: ShaderStats,
    /// The specialised module as SPIR-V words (naga's output, entry point `main`): for offline
    /// tools (a disassembler, a driver's compiler).
    pub spirv: Vec<u32>,
}

/// The statistics of each pipeline a frame of `batch` runs (fused where `options.passes` says
/// so and the frame allows it; [`FusePolicy::Auto`] counts as fused), specialised as a
/// [`GpuEvaluator`] of `lib` with `options` would specialise it (no GPU needed).
///
/// [`GpuEvaluator`]: crate::GpuEvaluator
pub fn shader_stats(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    options: &GpuOptions,
) -> Result<Vec<PipelineStats>> {
    batch.validate(lib)?;
    let shape = FrameShape::of(batch);
    let frame = FrameOptions {
        fused_poses: options.fused_poses.unwrap_or(FUSED_BONES),
        ..FrameOptions::fusing(options.passes != FusePolicy::Separate)
    };
    let plan = FramePlan::new(lib, &shape, &frame);
    let paths = Paths::of(lib.data()).for_frame(&shape);
    plan.passes()
        .iter()
        .map(|planned| {
            let pass = planned.pass;
            let (stats, spirv) = pipeline_stats(pass, options, paths)?;
            let variant = match pass {
                Pass::Sample { single_clips: true } | Pass::Fused { single_clips: true } => {
                    "single-clip/"
                }
                Pass::Inertialize { starts: true } => "starting/",
                _ => "",
            };
            let fused = match pass {
                Pass::Fused { .. } => {
                    let poses = frame.fused_poses;
                    let poses = (poses != FUSED_BONES).then(|| format!("poses-{poses}/"));
                    let skin = if options.skin_at_compose {
                        "skin-at-compose/"
                    } else {
                        ""
                    };
                    poses.unwrap_or_default() + skin
                }
                _ => String::new(),
            };
            let name = format!("{}/{variant}{fused}{}", pass.stage().name(), paths.name());
            Ok(PipelineStats { name, stats, spirv })
        })
        .collect()
}
