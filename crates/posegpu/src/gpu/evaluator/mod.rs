//! The GPU evaluator: the library's tables uploaded once, a small frame buffer per frame (what
//! each instance plays), the passes of the frame's [`FramePlan`] recorded, and output buffers a
//! renderer binds directly. By concern: `resources` (what lives on the device), `upload` (a
//! frame written), `record` (its passes recorded), `read_back` (the outputs read back).

mod read_back;
mod record;
mod resources;
#[cfg(test)]
mod tests;
mod upload;

pub use resources::OutputChunk;
pub(crate) use resources::{pass_constants, PerPass};

use super::context::GpuContext;
use super::outputs::{Outputs, SkinningLayout};
use super::shader_stats::pipeline_stats;
use super::specialize::Paths;
use super::util::{fits_binding, ErrorScope, FrameScope, PassTimer, StagePipeline};
use crate::error::{Error, Result};
use crate::frame_plan::{FrameOptions, FramePlan, FrameShape, Pass};
use crate::layout::{Entry, Xform, FUSED_BONES, FUSED_MAX_POSES, WORKGROUP_SIZE};
use crate::library::{AnimLibrary, SkeletonSection};
use resources::Assets;

const XFORM_BYTES: u64 = std::mem::size_of::<Xform>() as u64;
const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;
/// The poses a fused workgroup holds by default on a CPU adapter (`GpuOptions::fused_poses`).
const CPU_FUSED_POSES: u32 = 640;

/// Limits below the device's, to force the splitting paths (tests use them), or to keep
/// buffers small.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuOptions {
    /// At most this many bytes per storage binding (and per output buffer).
    pub max_binding_size: Option<u64>,
    /// At most this many workgroups per dispatch dimension.
    pub max_workgroups_per_dimension: Option<u32>,
    /// Room in a [`crate::GpuCrowd`]'s event list for this many events per step (notifies,
    /// loops, montage segments); default four per player plus 64.
    pub event_capacity: Option<u32>,
    /// The results kept in the output buffers, and the skinning matrices' layout; default
    /// all of them, in 3x4 rows.
    pub outputs: Outputs,
    /// One fused pass or separate passes for the batches the fused pass can run (no
    /// mesh-space layers, IK or inertialization, at most 320 bones).
    pub passes: FusePolicy,
    /// Keep wgpu's runtime checks in the shaders: bounds clamps on every index, a counter in
    /// every loop, workgroup memory zero-filled. Off by default: the library and batches
    /// check every index they hold when they are built, so the checks only cost time; on,
    /// an index out of bounds reads a clamped word instead of whatever lies there.
    pub runtime_checks: bool,
    /// The occupancy probe: this many more 4-byte words of workgroup memory in the fused
    /// pass, so that fewer of its workgroups fit an SM (`posegpu bench --occupancy-pad`).
    /// Past the device's workgroup storage limit, [`GpuEvaluator::new`] refuses it
    /// ([`Error::TooLarge`](crate::Error::TooLarge)). 0 (the default) for any other use.
    pub occupancy_pad_words: u32,
    /// The fused pass writes each skinning matrix from the lane that composes its bone, as
    /// the level walk goes, instead of building them in workgroup memory after the walk and
    /// writing them in consecutive words (`posegpu bench --skin-at-compose`). Two barriers and
    /// a pass over the poses fewer, against stores that coalesce less (the traffic replay:
    /// 1.40x the compulsory sectors instead of 1.17x). Off by default until a GPU's timings
    /// say otherwise (BENCHMARKS.md); the outputs are the same bits either way.
    pub skin_at_compose: bool,
    /// The poses a workgroup of the fused pass holds in workgroup memory (48 bytes each); it
    /// takes as many whole skeletons as fit, so that each level of the hierarchy keeps more
    /// of its 64 lanes busy, at the cost of fewer workgroups resident at once. Default: 320
    /// on GPUs (15 KiB, within WebGPU's 16 KiB), 640 on CPU adapters (lavapipe measured
    /// 0.89x the time: BENCHMARKS.md), at most what the device's workgroup memory holds. At
    /// most 1,024; at least one skeleton. Past the device's limit,
    /// [`GpuEvaluator::new`] refuses it ([`Error::TooLarge`](crate::Error::TooLarge)).
    pub fused_poses: Option<u32>,
}

/// The fuse policy: how batches with no stage between sampling and the hierarchy are evaluated
/// ([`GpuOptions::passes`]): in the fused pass, or as separate sampling and hierarchy passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusePolicy {
    /// Fused on GPUs; separate on CPU adapters (lavapipe, SwiftShader), where the fused pass's
    /// barriers and workgroup memory measured slower (BENCHMARKS.md).
    #[default]
    Auto,
    /// One pass: each workgroup samples a block of instances into workgroup memory, walks their
    /// hierarchy there and writes only the outputs.
    Fused,
    /// A sampling pass that writes the locals, then a hierarchy pass that reads them back.
    Separate,
}

/// Evaluates a crowd of instances of one [`AnimLibrary`] on the GPU.
pub struct GpuEvaluator {
    device: wgpu::Device,
    queue: wgpu::Queue,
    lib: AnimLibrary,
    assets: Assets,
    /// A pipeline per pass, a variant per [`Paths`] its frames take.
    pipelines: PerPass<StagePipeline>,
    /// The paths the library's clips take (root locks and heavy layers are the frame's).
    library_paths: Paths,
    /// Where the fused pass finds the skeleton in the retarget table.
    skeleton: SkeletonSection,
    /// Whether frames that can run as the fused pass do, and a crowd's passes.
    frame_options: FrameOptions,
    /// The frame last written, and its passes.
    shape: FrameShape,
    plan: FramePlan,
    chunks: Vec<OutputChunk>,
    instances_per_chunk: usize,
    max_binding: u64,
    max_workgroups: u32,
    outputs: Outputs,
    /// A timestamp pair per pass of the longest plan.
    timer: Option<PassTimer>,
}

impl GpuEvaluator {
    /// Uploads `lib` and creates output buffers for `capacity` instances (grown on demand), on
    /// the context's device.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(
        ctx: &GpuContext,
        lib: &AnimLibrary,
        capacity: usize,
        options: &GpuOptions,
    ) -> Result<Self> {
        pollster::block_on(Self::new_async(ctx, lib, capacity, options))
    }

    /// [`GpuEvaluator::new`] without blocking: the device's verdict on the uploads is awaited
    /// (what a browser, which cannot block, needs).
    pub async fn new_async(
        ctx: &GpuContext,
        lib: &AnimLibrary,
        capacity: usize,
        options: &GpuOptions,
    ) -> Result<Self> {
        Self::with_device_async(&ctx.device, &ctx.queue, lib, capacity, options).await
    }

    /// The same on a host application's own device and queue (an engine's renderer, say), so
    /// that its draw calls bind the output buffers directly. The device should have been opened
    /// with [`GpuEvaluator::required_limits`] and [`GpuEvaluator::required_features`] (and
    /// [`GpuEvaluator::optional_features`] where the adapter has them). The evaluator keeps
    /// handles to the device and queue (wgpu's are shared references) and shares `lib`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn with_device(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        lib: &AnimLibrary,
        capacity: usize,
        options: &GpuOptions,
    ) -> Result<Self> {
        pollster::block_on(Self::with_device_async(
            device, queue, lib, capacity, options,
        ))
    }

    /// [`GpuEvaluator::with_device`] without blocking.
    pub async fn with_device_async(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        lib: &AnimLibrary,
        capacity: usize,
        options: &GpuOptions,
    ) -> Result<Self> {
        let device = device.clone();
        let limits = device.limits();
        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(options.max_binding_size.unwrap_or(u64::MAX));
        let max_workgroups = limits
            .max_compute_workgroups_per_dimension
            .min(options.max_workgroups_per_dimension.unwrap_or(u32::MAX))
            .max(1);
        let bones = lib.bone_count() as u64;
        let cpu = device.adapter_info().device_type == wgpu::DeviceType::Cpu;
        let explicit = options.fused_poses.is_some();
        let options = &GpuOptions {
            fused_poses: Some(fused_poses(options, bones as u32, &limits, cpu)?),
            ..*options
        };
        let outputs = options.outputs;
        let per_instance = bones * XFORM_BYTES.max(outputs.skinning.bytes());
        let what = || format!("one instance's output ({bones} bones)");
        fits_binding(what, per_instance, max_binding)?;
        // The fused pass's workgroup memory as a caller set it (its poses, the occupancy
        // probe's padding), as its specialised module declares it: past the device's limit,
        // refused here, as drivers differ on whether a pipeline past it fails.
        if options.occupancy_pad_words > 0 || explicit {
            let fused = Pass::Fused {
                single_clips: false,
            };
            let (stats, _) = pipeline_stats(fused, options, Paths::of(lib.data()))?;
            let size = stats.workgroup_bytes;
            let limit = u64::from(limits.max_compute_workgroup_storage_size);
            if size > limit {
                return Err(Error::TooLarge {
                    what: format!(
                        "the fused pass's workgroup memory ({} poses, an occupancy pad of {} \
                         words)",
                        options.fused_poses.unwrap_or_default(),
                        options.occupancy_pad_words
                    ),
                    size,
                    limit,
                    unit: "bytes",
                    limit_name: "max_compute_workgroup_storage_size",
                });
            }
        }
        // The sampling pass runs `instances * bones` invocations over a 2D grid of workgroups.
        let max_invocations = u64::from(max_workgroups).pow(2) * u64::from(WORKGROUP_SIZE);
        let instances_per_chunk = (max_binding / per_instance)
            .min(max_invocations / bones)
            .min(u64::from(u32::MAX) / bones)
            .max(1) as usize;

        // Where the fused pass finds the skeleton in the retarget table (its Params).
        let skeleton = lib.data().skeleton_section;
        let scope = ErrorScope::push(&device);
        let assets = Assets::upload(&device, lib, max_binding)?;
        let pipelines = resources::pipelines(&device, options);
        let timer = device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| PassTimer::new(&device, queue, FramePlan::MOST_PASSES));

        let fuse = match options.passes {
            FusePolicy::Auto => device.adapter_info().device_type != wgpu::DeviceType::Cpu,
            FusePolicy::Fused => true,
            FusePolicy::Separate => false,
        };
        let frame_options = FrameOptions {
            fused_poses: options.fused_poses.unwrap_or(FUSED_BONES),
            ..FrameOptions::fusing(fuse)
        };
        let shape = FrameShape::default();
        let mut evaluator = Self {
            device,
            queue: queue.clone(),
            plan: FramePlan::new(lib, &shape, &frame_options),
            lib: lib.clone(),
            assets,
            pipelines,
            library_paths: Paths::of(lib.data()),
            chunks: Vec::new(),
            instances_per_chunk,
            max_binding,
            max_workgroups,
            outputs,
            skeleton,
            frame_options,
            shape,
            timer,
        };
        evaluator.reserve(capacity.max(1))?;
        scope.pop_async().await?;
        Ok(evaluator)
    }

    /// Features the evaluator needs: none beyond WebGPU's.
    pub fn required_features() -> wgpu::Features {
        wgpu::Features::empty()
    }

    /// Features the evaluator uses where the adapter has them: timestamp queries, for the
    /// per-pass GPU times of the `*_timed` calls.
    pub fn optional_features() -> wgpu::Features {
        wgpu::Features::TIMESTAMP_QUERY
    }

    /// The limits evaluating `lib` needs, on top of WebGPU's defaults: 10 bindings and 8
    /// storage buffers in one stage, and storage bindings that hold each of `lib`'s tables and
    /// one instance's output (its skinning matrices as 4x4, the larger layout). Larger crowds
    /// are split into chunks that fit the device's binding size, so asking the adapter for its
    /// own `max_storage_buffer_binding_size` and `max_buffer_size` (as [`GpuContext::new`]
    /// does) means fewer, larger dispatches.
    pub fn required_limits(lib: &AnimLibrary) -> wgpu::Limits {
        let data = lib.data();
        let bones = lib.bone_count() as u64;
        let tables = [
            std::mem::size_of_val(&data.clip_table[..]),
            std::mem::size_of_val(&data.times[..]),
            std::mem::size_of_val(&data.values[..]),
            // The skeleton section included.
            std::mem::size_of_val(&data.retarget[..]),
            std::mem::size_of_val(&data.parents[..]),
            std::mem::size_of_val(&data.inverse_bind[..]),
        ];
        let largest = tables
            .into_iter()
            .map(|b| b as u64)
            .chain([bones * SkinningLayout::Columns4x4.bytes()])
            .max()
            .unwrap_or(0)
            .next_multiple_of(16);
        let defaults = wgpu::Limits::default();
        wgpu::Limits {
            max_storage_buffers_per_shader_stage: defaults
                .max_storage_buffers_per_shader_stage
                .max(8),
            max_bindings_per_bind_group: defaults.max_bindings_per_bind_group.max(10),
            max_storage_buffer_binding_size: defaults.max_storage_buffer_binding_size.max(largest),
            max_buffer_size: defaults.max_buffer_size.max(largest),
            ..defaults
        }
    }

    /// The fuse policy in effect ([`FusePolicy::Auto`] resolved for this device).
    pub fn fuse_policy(&self) -> FusePolicy {
        if self.frame_options.fuse {
            FusePolicy::Fused
        } else {
            FusePolicy::Separate
        }
    }

    /// The passes of the frame last written, in the order they are recorded.
    pub(crate) fn frame_plan(&self) -> &FramePlan {
        &self.plan
    }

    /// The library this evaluator plays.
    pub fn library(&self) -> &AnimLibrary {
        &self.lib
    }

    /// The paths the frame last written takes: the pipeline variants it runs.
    pub(crate) fn paths(&self) -> Paths {
        self.library_paths.for_frame(&self.shape)
    }

    pub(crate) fn timer(&self) -> Option<&PassTimer> {
        self.timer.as_ref()
    }

    /// Puts a crowd's passes in front of every frame's (`root_motion` when some instance
    /// extracts root motion).
    pub(crate) fn set_crowd(&mut self, root_motion: bool) {
        self.frame_options.crowd = Some(root_motion);
        self.plan_frame(self.shape);
    }

    /// The library's curves: values per instance in the curve buffers.
    fn curve_count(&self) -> u64 {
        self.lib.curve_names().len() as u64
    }

    pub(crate) fn device(&self) -> &wgpu::Device {
        &self.device
    }

    pub(crate) fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The most bytes one storage binding may hold.
    pub(crate) fn max_binding(&self) -> u64 {
        self.max_binding
    }

    pub(crate) fn max_workgroups(&self) -> u32 {
        self.max_workgroups
    }

    /// Output buffers, one chunk per range of instances.
    pub fn chunks(&self) -> &[OutputChunk] {
        &self.chunks
    }

    /// The most instances one chunk holds on this device.
    pub fn instances_per_chunk(&self) -> usize {
        self.instances_per_chunk
    }

    /// Instances there is room for without new buffers.
    pub fn capacity(&self) -> usize {
        self.chunks.iter().map(|c| c.capacity).sum()
    }

    /// Makes room for at least `instances` instances.
    pub fn reserve(&mut self, instances: usize) -> Result<()> {
        if self.capacity() >= instances {
            return Ok(());
        }
        let scope = FrameScope::push(&self.device);
        while self.capacity() < instances {
            let first = self.capacity();
            let capacity = (instances - first).min(self.instances_per_chunk);
            let chunk = self.create_chunk(first, capacity);
            self.chunks.push(chunk);
        }
        scope.pop()
    }
}

/// The poses a fused workgroup of `options` holds, on a device of `limits` (a CPU adapter's
/// if `cpu`), for skeletons of `bones`: as set, if within the pass's range, or the default
/// for the adapter within the device's workgroup memory.
fn fused_poses(options: &GpuOptions, bones: u32, limits: &wgpu::Limits, cpu: bool) -> Result<u32> {
    match options.fused_poses {
        Some(poses) if poses > FUSED_MAX_POSES || (poses < bones && bones <= FUSED_BONES) => {
            Err(Error::BadRequest {
                what: format!(
                    "GpuOptions::fused_poses is {poses}: a fused workgroup holds from one \
                     skeleton ({bones} bones) to {FUSED_MAX_POSES} poses"
                ),
            })
        }
        Some(poses) => Ok(poses),
        None => {
            let pad = 4 * (options.occupancy_pad_words + 1);
            let room = limits
                .max_compute_workgroup_storage_size
                .saturating_sub(pad);
            let preferred = if cpu { CPU_FUSED_POSES } else { FUSED_BONES };
            Ok(preferred.min(room / XFORM_BYTES as u32).max(FUSED_BONES))
        }
    }
}
