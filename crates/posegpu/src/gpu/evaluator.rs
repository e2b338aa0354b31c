//! The GPU evaluator: assets uploaded once, a small frame buffer per frame (what each instance
//! plays), the compute passes (the fused pass where the batch allows it; else sampling, the
//! parent-ordered layer stage when some instance has a mesh-space layer, inertialization and IK
//! when some instance has them, and the hierarchy; then the curves when the library has any)
//! and output buffers a renderer binds directly.

use std::ops::Range;

use wgpu::util::DeviceExt;

use super::context::GpuContext;
use super::outputs::{Outputs, SkinningLayout};
use super::tables::SkeletonSection;
use super::util::{
    fits_binding, grid, submit_timed, ErrorScope, MapAll, PassTimer, StagePipeline, WORKGROUP_SIZE,
};
use crate::batch::{Instance, PoseBatch};
use crate::error::{Error, Result};
use crate::layout::{Entry, Head, Params, Xform, BONE_BLOCK, FUSED_BONES};
use crate::library::AnimLibrary;
use crate::pose::Poses;

const XFORM_BYTES: u64 = std::mem::size_of::<Xform>() as u64;
const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;
/// The evaluator's pipelines (see [`GpuEvaluator`]'s `pipelines`).
const PIPELINES: usize = 10;
/// The fused pipelines' places in `pipelines`: one clip per instance, and the general one.
const FUSED_SINGLE: usize = 8;
/// The evaluator's passes (sample or fused, layers, inertialize, IK, hierarchy, curves), each
/// timed when timestamps exist.
pub(crate) const EVAL_PASSES: u32 = 6;

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
    pub passes: PassPlan,
}

/// How batches with no stage between sampling and the hierarchy are evaluated
/// ([`GpuOptions::passes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PassPlan {
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

/// GPU time of each pass, from timestamp queries.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassTimes {
    /// The sampling pass, in nanoseconds; the fused pass (sampling and the hierarchy) when it
    /// ran.
    pub sample_ns: f64,
    /// 0 when no instance had a mesh-space layer (the pass did not run).
    pub layers_ns: f64,
    /// The inertialization pass; 0 when no instance had an inertialized transition.
    pub inertialize_ns: f64,
    /// The IK pass; 0 when no instance had IK weights or the library has no IK chains (the
    /// pass did not run).
    pub ik_ns: f64,
    /// The hierarchy pass, in nanoseconds; 0 when the fused pass ran (its time is in
    /// `sample_ns`).
    pub hierarchy_ns: f64,
    /// The curve pass; 0 when the library has no curves (the pass did not run).
    pub curves_ns: f64,
}

impl PassTimes {
    /// The sum of the passes, in nanoseconds.
    pub fn total_ns(&self) -> f64 {
        self.sample_ns
            + self.layers_ns
            + self.inertialize_ns
            + self.ik_ns
            + self.hierarchy_ns
            + self.curves_ns
    }
}

/// Instances `first .. first + count` live in one set of output buffers. Where a crowd exceeds
/// a device limit (binding size, workgroups per dimension) it is split over several chunks.
///
/// Layouts, instance-major within the chunk (`[(instance - first) * bones + bone]`):
/// `locals` and `component` are arrays of [`Xform`] (48 bytes), `skinning` an array of
/// [`Mat3x4`](crate::Mat3x4) (48 bytes, three rows) or of column-major `mat4x4<f32>` (64 bytes), as
/// `skinning_layout` says. All have `STORAGE | COPY_SRC` usage. `locals` and `component` are
/// there when [`GpuOptions::outputs`] asks for them.
pub struct OutputChunk {
    /// The crowd index of the chunk's first instance.
    pub first: usize,
    /// Instances evaluated in the last frame.
    pub count: usize,
    /// Instances the buffers hold room for.
    pub capacity: usize,
    /// Local transforms after sampling and layers ([`Xform`] per bone), when asked for.
    pub locals: Option<wgpu::Buffer>,
    /// Component-space transforms ([`Xform`] per bone), when asked for.
    pub component: Option<wgpu::Buffer>,
    /// Skinning matrices, component-space transform times inverse bind, one per bone.
    pub skinning: wgpu::Buffer,
    /// The layout of `skinning`.
    pub skinning_layout: SkinningLayout,
    /// The library's curves per instance (`f32`, `[(instance - first) * curves + curve]`;
    /// morph-target weights a vertex stage binds); 16 bytes when the library has none.
    pub curves: wgpu::Buffer,
    /// Where sampling writes the locals (`locals` when it is kept).
    work: wgpu::Buffer,
    /// Where the hierarchy writes the component transforms: `component` when it is kept,
    /// `work` itself when the locals are not (built in place).
    built: wgpu::Buffer,
    /// This frame's heads and entries (grown on demand).
    pub(crate) frame: wgpu::Buffer,
    /// Delta slots of deferred layers (grown on demand; 48 bytes when there are none).
    deltas: wgpu::Buffer,
    /// Inertialization offsets, 48 bytes per bone (made the first time a batch has a
    /// transition; 48 bytes before). Kept from frame to frame.
    inertia: wgpu::Buffer,
    params: wgpu::Buffer,
    /// One per pipeline.
    groups: [wgpu::BindGroup; PIPELINES],
}

pub(crate) struct Assets {
    /// The clips, then their channels ([`super::tables::clip_table`]).
    pub clip_table: wgpu::Buffer,
    pub times: wgpu::Buffer,
    pub values: wgpu::Buffer,
    pub retarget: wgpu::Buffer,
    parents: wgpu::Buffer,
    inverse_bind: wgpu::Buffer,
    ik: wgpu::Buffer,
    curve_table: wgpu::Buffer,
    /// 48 bytes bound where a stage's layout needs a buffer it does not read (the hierarchy's
    /// locals when it builds in place).
    placeholder: wgpu::Buffer,
}

/// Evaluates a crowd of instances of one [`AnimLibrary`] on the GPU.
pub struct GpuEvaluator {
    device: wgpu::Device,
    queue: wgpu::Queue,
    lib: AnimLibrary,
    assets: Assets,
    /// sample (one clip per instance), sample, layers, inertialize, ik, hierarchy, curves,
    /// inertialize (a transition begins), fused (one clip per instance), fused.
    pipelines: [StagePipeline; PIPELINES],
    /// Where the fused pass finds the skeleton in the retarget table.
    skeleton: SkeletonSection,
    /// Whether batches that can run as the fused pass do.
    fuse: bool,
    chunks: Vec<OutputChunk>,
    instances_per_chunk: usize,
    max_binding: u64,
    max_workgroups: u32,
    outputs: Outputs,
    /// Whether the last batch written has blends or layers (the sampling pipeline that has
    /// their code), and mesh-space layers (the layer stage runs).
    blends_or_layers: bool,
    layers_needed: bool,
    /// Whether the last batch written has IK layers and the library IK chains (the IK stage
    /// runs).
    ik_needed: bool,
    /// Whether the last batch written has inertialized transitions, and whether one begins
    /// (the pipeline that samples old poses runs).
    inertia_needed: bool,
    inertia_start: bool,
    timer: Option<PassTimer>,
}

impl GpuEvaluator {
    /// Uploads `lib` and creates output buffers for `capacity` instances (grown on demand), on
    /// the context's device.
    pub fn new(
        ctx: &GpuContext,
        lib: &AnimLibrary,
        capacity: usize,
        options: &GpuOptions,
    ) -> Result<Self> {
        Self::with_device(&ctx.device, &ctx.queue, lib, capacity, options)
    }

    /// The same on a host application's own device and queue (an engine's renderer, say), so
    /// that its draw calls bind the output buffers directly. The device should have been opened
    /// with [`GpuEvaluator::required_limits`] and [`GpuEvaluator::required_features`] (and
    /// [`GpuEvaluator::optional_features`] where the adapter has them). The evaluator keeps
    /// handles to the device and queue (wgpu's are shared references) and shares `lib`.
    pub fn with_device(
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
        let outputs = options.outputs;
        let per_instance = bones * XFORM_BYTES.max(outputs.skinning.bytes());
        let what = || format!("one instance's output ({bones} bones)");
        fits_binding(what, per_instance, max_binding)?;
        // The sampling pass runs `instances * bones` invocations over a 2D grid of workgroups.
        let max_invocations = u64::from(max_workgroups).pow(2) * WORKGROUP_SIZE;
        let instances_per_chunk = (max_binding / per_instance)
            .min(max_invocations / bones)
            .min(u64::from(u32::MAX) / bones)
            .max(1) as usize;

        // The fused pass reads the skeleton from the end of the retarget table.
        let skeleton = SkeletonSection::new(lib.data(), lib.data().retarget.len() as u32);
        let retarget = [
            &super::tables::retarget_table(lib.data())[..],
            &skeleton.words,
        ]
        .concat();
        let scope = ErrorScope::push(&device);
        let storage = |label: &str, bytes: &[u8]| -> Result<wgpu::Buffer> {
            fits_binding(
                || format!("the {label} buffer"),
                bytes.len() as u64,
                max_binding,
            )?;
            // Bindings may not be empty: a library without clips still binds 16 bytes.
            let mut padded = bytes.to_vec();
            padded.resize(bytes.len().max(16), 0);
            Ok(
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: &padded,
                    usage: wgpu::BufferUsages::STORAGE,
                }),
            )
        };
        let assets = Assets {
            clip_table: storage(
                "clip table",
                bytemuck::cast_slice(&super::tables::clip_table(lib.data())),
            )?,
            times: storage("key times", bytemuck::cast_slice(&lib.data().times))?,
            values: storage("key values", bytemuck::cast_slice(&lib.data().values))?,
            retarget: storage("retarget caches", bytemuck::cast_slice(&retarget))?,
            parents: storage("parents", bytemuck::cast_slice(&lib.data().parents))?,
            inverse_bind: storage(
                "inverse bind",
                bytemuck::cast_slice(&lib.data().inverse_bind),
            )?,
            ik: storage("IK chains", bytemuck::cast_slice(&lib.data().ik))?,
            curve_table: storage("curves", bytemuck::cast_slice(&lib.data().curve_table))?,
            placeholder: storage("placeholder", &[0; XFORM_BYTES as usize])?,
        };
        let pipeline = |stage: &str, constants: &[(&'static str, f64)]| {
            StagePipeline::new(&device, stage, constants)
        };
        let flag = |on: bool| f64::from(u8::from(on));
        let columns = (
            "SKIN_COLUMNS",
            flag(outputs.skinning == SkinningLayout::Columns4x4),
        );
        let fused_outputs = [
            ("WRITE_LOCALS", flag(outputs.locals)),
            ("WRITE_COMPONENT", flag(outputs.component)),
            columns,
        ];
        let pipelines = [
            pipeline("sample", &[("SINGLE_CLIP", 1.0)]),
            pipeline("sample", &[]),
            pipeline("layers", &[]),
            pipeline("inertialize", &[("STARTS", 0.0)]),
            pipeline("ik", &[]),
            pipeline("hierarchy", &[("IN_PLACE", flag(!outputs.locals)), columns]),
            pipeline("curves", &[]),
            pipeline("inertialize", &[("STARTS", 1.0)]),
            pipeline(
                "fused",
                &[&fused_outputs[..], &[("SINGLE_CLIP", 1.0)]].concat(),
            ),
            pipeline("fused", &fused_outputs),
        ];
        let timer = device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| PassTimer::new(&device, queue, EVAL_PASSES));
        scope.pop()?;

        let fuse = match options.passes {
            PassPlan::Auto => device.adapter_info().device_type != wgpu::DeviceType::Cpu,
            PassPlan::Fused => true,
            PassPlan::Separate => false,
        };
        let mut evaluator = Self {
            device,
            queue: queue.clone(),
            lib: lib.clone(),
            assets,
            pipelines,
            chunks: Vec::new(),
            instances_per_chunk,
            max_binding,
            max_workgroups,
            outputs,
            skeleton,
            fuse,
            blends_or_layers: false,
            layers_needed: false,
            ik_needed: false,
            inertia_needed: false,
            inertia_start: false,
            timer,
        };
        evaluator.reserve(capacity.max(1))?;
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
            std::mem::size_of_val(&data.clips[..]) + std::mem::size_of_val(&data.channels[..]),
            std::mem::size_of_val(&data.times[..]),
            std::mem::size_of_val(&data.values[..]),
            // The retarget table, the skeleton section after it.
            std::mem::size_of_val(&data.retarget[..])
                + std::mem::size_of_val(&SkeletonSection::new(data, 0).words[..]),
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

    /// The pass plan in effect ([`PassPlan::Auto`] resolved for this device).
    pub fn pass_plan(&self) -> PassPlan {
        if self.fuse {
            PassPlan::Fused
        } else {
            PassPlan::Separate
        }
    }

    /// The library this evaluator plays.
    pub fn library(&self) -> &AnimLibrary {
        &self.lib
    }

    pub(crate) fn assets(&self) -> &Assets {
        &self.assets
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
        let scope = ErrorScope::push(&self.device);
        while self.capacity() < instances {
            let first = self.capacity();
            let capacity = (instances - first).min(self.instances_per_chunk);
            let chunk = self.create_chunk(first, capacity);
            self.chunks.push(chunk);
        }
        scope.pop()
    }

    fn create_chunk(&self, first: usize, capacity: usize) -> OutputChunk {
        let bones = self.lib.bone_count() as u64;
        let n = capacity as u64;
        let output = |label: &str, bytes: u64| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let o = self.outputs;
        let work = output("locals", n * bones * XFORM_BYTES);
        // Component transforms get a buffer of their own only where the locals are kept.
        let built = if o.locals {
            output("component", n * bones * XFORM_BYTES)
        } else {
            work.clone()
        };
        let skinning = output("skinning", n * bones * o.skinning.bytes());
        let curves = output("curves", (n * self.curve_count() * 4).max(16));
        let params = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: std::mem::size_of::<Params>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // Two entries per instance: a header and a clip, the most common frame.
        let frame = self.frame_buffer(n * 3 * ENTRY_BYTES);
        let deltas = self.frame_buffer(XFORM_BYTES);
        let inertia = self.frame_buffer(XFORM_BYTES);
        let outputs = [&work, &built, &skinning, &curves];
        let groups = self.bind_groups(&params, &frame, &deltas, &inertia, outputs);
        OutputChunk {
            first,
            count: 0,
            capacity,
            locals: o.locals.then(|| work.clone()),
            component: o.component.then(|| built.clone()),
            skinning,
            skinning_layout: o.skinning,
            curves,
            work,
            built,
            frame,
            deltas,
            inertia,
            params,
            groups,
        }
    }

    /// A per-frame storage buffer of `bytes` (at least 16, rounded up to whole 16-byte words).
    fn frame_buffer(&self, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame"),
            size: bytes.max(16).next_multiple_of(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    fn bind_groups(
        &self,
        params: &wgpu::Buffer,
        frame: &wgpu::Buffer,
        deltas: &wgpu::Buffer,
        inertia: &wgpu::Buffer,
        [locals, built, skinning, curves]: [&wgpu::Buffer; 4],
    ) -> [wgpu::BindGroup; PIPELINES] {
        let a = &self.assets;
        let group = |pipeline: &StagePipeline, buffers: &[&wgpu::Buffer]| {
            pipeline.bind(&self.device, buffers)
        };
        let [plain, sample, layers, inertialize, ik, hierarchy, curve, starting, fused_plain, fused] =
            &self.pipelines;
        // Where the locals are not kept, the stages after sampling bind a placeholder in their
        // place, and the component transforms are built in the locals' buffer.
        let kept_locals = if self.outputs.locals {
            locals
        } else {
            &a.placeholder
        };
        let sampling = [
            params,
            frame,
            &a.clip_table,
            &a.times,
            &a.values,
            &a.retarget,
            locals,
            deltas,
        ];
        // The fused stage binds the tables as sampling does, then the outputs.
        let fusing = [&sampling[..6], &[kept_locals, built, skinning]].concat();
        [
            group(plain, &sampling),
            group(sample, &sampling),
            group(layers, &[params, frame, &a.parents, locals, deltas]),
            // The inertialization stage binds what sampling does, its state in the deltas'.
            group(inertialize, &[&sampling[..7], &[inertia]].concat()),
            // The IK stage binds what sampling does, with the IK table in the deltas' place.
            group(ik, &[&sampling[..7], &[&a.ik]].concat()),
            group(
                hierarchy,
                &[
                    params,
                    &a.parents,
                    &a.inverse_bind,
                    kept_locals,
                    built,
                    skinning,
                ],
            ),
            // The curve stage binds the library's tables as sampling does.
            group(curve, &[&sampling[..6], &[&a.curve_table, curves]].concat()),
            group(starting, &[&sampling[..7], &[inertia]].concat()),
            group(fused_plain, &fusing),
            group(fused, &fusing),
        ]
    }

    /// Whether an inertialization is under way, and whether one begins, in the next frame:
    /// for frames a crowd writes itself, whose inertialization layers stay idle between
    /// transitions (the pass is then skipped).
    pub(crate) fn set_inertia(&mut self, needed: bool, starts: bool) {
        self.inertia_needed = needed;
        self.inertia_start = starts;
    }

    /// The library's curves: values per instance in the curve buffers.
    fn curve_count(&self) -> u64 {
        self.lib.curve_names().len() as u64
    }

    /// Uploads this frame's instances (validated first), growing the buffers if needed.
    pub fn write_instances(&mut self, instances: &[Instance]) -> Result<()> {
        self.write_batch(&PoseBatch::from_instances(instances))
    }

    /// Uploads what every instance of `batch` plays this frame (validated first), growing the
    /// buffers if needed. Each chunk gets its instances' heads, rebased, then their entries.
    pub fn write_batch(&mut self, batch: &PoseBatch) -> Result<()> {
        batch.validate(&self.lib)?;
        self.reserve(batch.len())?;
        let bones = self.lib.bone_count() as u64;
        let (heads, entries) = (batch.heads(), batch.entries());
        // Each chunk's heads (rebased onto its own frame buffer and delta slots), its entries
        // and its delta bytes, all checked against the binding limit before anything is made.
        let mut frames = Vec::with_capacity(self.chunks.len());
        for chunk in &self.chunks {
            let end = (chunk.first + chunk.capacity).min(heads.len());
            let mine = heads.get(chunk.first..end).unwrap_or(&[]);
            let (e0, s0) = mine.first().map_or((0, 0), |h| (h.first, h.slot));
            let e1 = heads.get(end).map_or(entries.len(), |h| h.first as usize);
            let rebased: Vec<Head> = mine
                .iter()
                .map(|h| Head {
                    first: h.first - e0 + mine.len() as u32,
                    slot: h.slot - s0,
                    ..*h
                })
                .collect();
            let own = if mine.is_empty() {
                &[][..]
            } else {
                &entries[e0 as usize..e1]
            };
            let slots: u64 = mine.iter().map(|h| u64::from(h.slots)).sum();
            let frame_bytes = (rebased.len() + own.len()) as u64 * ENTRY_BYTES;
            let delta_bytes = slots * bones * XFORM_BYTES;
            for (what, size) in [("frame", frame_bytes), ("layer deltas", delta_bytes)] {
                let what = || {
                    format!(
                        "the {what} of instances {}..{end} (fewer layers or instances per batch)",
                        chunk.first
                    )
                };
                fits_binding(what, size, self.max_binding)?;
            }
            frames.push((rebased, own, frame_bytes, delta_bytes));
        }
        // Only a frame that grows buffers creates anything that can fail validation: the
        // others write and return without waiting on the device (an error scope's pop does).
        let inertia_bytes = |c: &OutputChunk| {
            u64::from(batch.has_inertia()) * c.capacity as u64 * bones * XFORM_BYTES
        };
        let grows = frames.iter().zip(&self.chunks).any(|((_, _, f, d), c)| {
            *f > c.frame.size() || *d > c.deltas.size() || inertia_bytes(c) > c.inertia.size()
        });
        let scope = grows.then(|| ErrorScope::push(&self.device));
        let group_instances = self.group_instances();
        for (k, (rebased, own, frame_bytes, delta_bytes)) in frames.into_iter().enumerate() {
            let inertia = inertia_bytes(&self.chunks[k]);
            self.fit_chunk(k, frame_bytes, delta_bytes, inertia);
            let chunk = &mut self.chunks[k];
            chunk.count = rebased.len();
            // Heads, then the entries straight from the batch (no copy).
            let heads_bytes: &[u8] = bytemuck::cast_slice(&rebased);
            if !rebased.is_empty() {
                self.queue.write_buffer(&chunk.frame, 0, heads_bytes);
                let at = heads_bytes.len() as u64;
                self.queue
                    .write_buffer(&chunk.frame, at, bytemuck::cast_slice(own));
            }
            let params = Params {
                bone_count: bones as u32,
                instance_count: chunk.count as u32,
                curve_count: self.lib.curve_names().len() as u32,
                root_bone: self.lib.data().root_bone,
                root_up: self.lib.data().root_up_local.extend(0.0).to_array(),
                root_parent: self.lib.data().root_parent.into(),
                levels: self.skeleton.levels,
                group_instances,
                parents_word: self.skeleton.parents,
                inverse_bind_word: self.skeleton.inverse_bind,
                order_word: self.skeleton.order,
                level_starts_word: self.skeleton.level_starts,
                pad0: 0,
                pad1: 0,
            };
            self.queue
                .write_buffer(&chunk.params, 0, bytemuck::bytes_of(&params));
        }
        self.blends_or_layers = !batch.is_single_clips();
        self.layers_needed = batch.has_mesh_layers();
        self.ik_needed = batch.has_ik() && !self.lib.data().ik.is_empty();
        self.inertia_needed = batch.has_inertia();
        self.inertia_start = batch.has_inertia_start();
        scope.map_or(Ok(()), ErrorScope::pop)?;
        self.compile_planned()
    }

    /// Grows chunk `k`'s frame and delta buffers to hold the given bytes (by half again, so a
    /// slowly growing crowd does not reallocate every frame) and rebinds them.
    fn fit_chunk(&mut self, k: usize, frame_bytes: u64, delta_bytes: u64, inertia_bytes: u64) {
        let grown = |size: u64| grown_capacity(size, self.max_binding);
        let chunk = &self.chunks[k];
        let frame =
            (frame_bytes > chunk.frame.size()).then(|| self.frame_buffer(grown(frame_bytes)));
        let deltas =
            (delta_bytes > chunk.deltas.size()).then(|| self.frame_buffer(grown(delta_bytes)));
        // The whole chunk's at once: the state must not move while transitions blend.
        let inertia =
            (inertia_bytes > chunk.inertia.size()).then(|| self.frame_buffer(inertia_bytes));
        if frame.is_none() && deltas.is_none() && inertia.is_none() {
            return;
        }
        let frame = frame.as_ref().unwrap_or(&chunk.frame);
        let deltas = deltas.as_ref().unwrap_or(&chunk.deltas);
        let inertia = inertia.as_ref().unwrap_or(&chunk.inertia);
        let outputs = [&chunk.work, &chunk.built, &chunk.skinning, &chunk.curves];
        let groups = self.bind_groups(&chunk.params, frame, deltas, inertia, outputs);
        let (frame, deltas, inertia) = (frame.clone(), deltas.clone(), inertia.clone());
        let chunk = &mut self.chunks[k];
        (chunk.frame, chunk.deltas, chunk.inertia, chunk.groups) = (frame, deltas, inertia, groups);
    }

    /// Records the passes for the batch last written: the fused pass, or sampling, the layer,
    /// inertialization and IK passes (each when needed) and the hierarchy; then the curves. A
    /// renderer may record its draw after this in the same encoder: wgpu orders the storage
    /// writes before the vertex reads.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_passes(encoder, None);
    }

    /// Whether the batch last written runs as the fused pass: no stage between sampling and the
    /// hierarchy is needed, and the skeleton fits the pass's workgroup memory.
    pub(crate) fn fused(&self) -> bool {
        self.fuse
            && self.lib.bone_count() as u32 <= FUSED_BONES
            && !self.layers_needed
            && !self.inertia_needed
            && !self.ik_needed
    }

    /// Instances per workgroup of the fused pass: as many whole skeletons as its workgroup
    /// memory holds.
    fn group_instances(&self) -> u32 {
        (FUSED_BONES / (self.lib.bone_count() as u32).max(1)).max(1)
    }

    /// The passes the batch last written runs, in order: each one's place among the
    /// [`EVAL_PASSES`] (its timer slot), its pipeline, and its invocations per instance (the
    /// fused pass takes `320 / bones` instances per workgroup instead).
    fn planned_passes(&self) -> Vec<(usize, usize, u64)> {
        let bones = self.lib.bone_count() as u64;
        let fused = self.fused();
        let per_instance = [bones, 1, bones, 1, 1, self.curve_count()];
        (0..EVAL_PASSES as usize)
            .filter(|&k| {
                let skipped = k == 1 && !self.layers_needed
                    || k == 2 && !self.inertia_needed
                    || k == 3 && !self.ik_needed
                    || k == 4 && fused;
                !skipped && per_instance[k] > 0
            })
            .map(|k| {
                // Pipelines: the sampling stage (or the fused one) for single clips or the
                // general one, then the others.
                let p = match k {
                    0 if fused => FUSED_SINGLE + usize::from(self.blends_or_layers),
                    0 => usize::from(self.blends_or_layers),
                    2 if self.inertia_start => 7,
                    _ => k + 1,
                };
                (k, p, per_instance[k])
            })
            .collect()
    }

    /// Compiles the pipelines the next frame runs that are not compiled yet, reporting a
    /// failure as an error (a pipeline is compiled the first time a frame needs it).
    pub(crate) fn compile_planned(&self) -> Result<()> {
        let planned = self.planned_passes();
        let missing = planned
            .iter()
            .filter(|&&(_, p, _)| !self.pipelines[p].is_compiled());
        let missing: Vec<usize> = missing.map(|&(_, p, _)| p).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let scope = ErrorScope::push(&self.device);
        for p in missing {
            self.pipelines[p].get();
        }
        scope.pop()
    }

    /// The passes, timed from the timer's pass `first` on when there is one.
    pub(crate) fn encode_passes(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timer: Option<(&PassTimer, u32)>,
    ) {
        let bones = self.lib.bone_count() as u64;
        let fused = self.fused();
        let group_instances = u64::from(self.group_instances());
        for (k, p, per_instance) in self.planned_passes() {
            let timestamp_writes = timer.map(|(t, first)| t.writes(first + k as u32));
            let label = self.pipelines[p].name();
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes,
            });
            pass.set_pipeline(self.pipelines[p].get());
            // The stages that walk an instance's bones take a dispatch per block of bones (see
            // BONE_BLOCK); dispatch b has b + 1 layers in z, of which the last works.
            let blocks = if matches!(k, 1 | 4) {
                bones.div_ceil(u64::from(BONE_BLOCK)).max(1) as u32
            } else {
                1
            };
            for chunk in self.chunks.iter().filter(|c| c.count > 0) {
                let count = chunk.count as u64;
                let workgroups = if k == 0 && fused {
                    count.div_ceil(group_instances)
                } else {
                    (count * per_instance).div_ceil(WORKGROUP_SIZE)
                };
                let (x, y) = grid(workgroups, self.max_workgroups);
                pass.set_bind_group(0, &chunk.groups[p], &[]);
                for z in 1..=blocks {
                    pass.dispatch_workgroups(x, y, z);
                }
            }
        }
    }

    /// Writes `instances` (one clip each), evaluates them and submits the work (without
    /// waiting for it).
    pub fn evaluate(&mut self, instances: &[Instance]) -> Result<()> {
        self.write_instances(instances)?;
        self.submit();
        Ok(())
    }

    /// Writes `batch` (bases, blends, additive layers), evaluates it and submits the work.
    pub fn evaluate_batch(&mut self, batch: &PoseBatch) -> Result<()> {
        self.write_batch(batch)?;
        self.submit();
        Ok(())
    }

    fn submit(&self) {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        self.encode(&mut encoder);
        self.queue.submit([encoder.finish()]);
    }

    /// Like [`GpuEvaluator::evaluate`], then waits and returns each pass's GPU time; `None`
    /// where the adapter has no timestamp queries.
    pub fn evaluate_timed(&mut self, instances: &[Instance]) -> Result<Option<PassTimes>> {
        self.write_instances(instances)?;
        self.run_timed()
    }

    /// Like [`GpuEvaluator::evaluate_batch`], timed.
    pub fn evaluate_batch_timed(&mut self, batch: &PoseBatch) -> Result<Option<PassTimes>> {
        self.write_batch(batch)?;
        self.run_timed()
    }

    fn run_timed(&self) -> Result<Option<PassTimes>> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        self.encode_passes(&mut encoder, self.timer.as_ref().map(|t| (t, 0)));
        let spans = submit_timed(&self.device, &self.queue, encoder, self.timer.as_ref())?;
        Ok(spans.map(|spans| self.pass_times(&spans)))
    }

    /// The passes' times from a timer's spans (the layer and IK passes count only when they
    /// ran).
    pub(crate) fn pass_times(&self, spans: &[f64]) -> PassTimes {
        PassTimes {
            sample_ns: spans[0],
            layers_ns: if self.layers_needed { spans[1] } else { 0.0 },
            inertialize_ns: if self.inertia_needed { spans[2] } else { 0.0 },
            ik_ns: if self.ik_needed { spans[3] } else { 0.0 },
            hierarchy_ns: if self.fused() { 0.0 } else { spans[4] },
            curves_ns: if self.curve_count() > 0 {
                spans[5]
            } else {
                0.0
            },
        }
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::gpu("waiting for the device", e))
    }

    /// Copies the last frame's outputs back to host memory (blocking): one submission for all
    /// the copies, then one map per buffer.
    pub fn read_back(&self) -> Result<Poses> {
        let staged = self.stage_outputs();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::gpu("waiting for the device", e))?;
        pollster::block_on(staged)
    }

    /// The same without blocking: records and submits the copies now, and returns a future
    /// that resolves once the buffers are mapped. Nothing here waits on the device, so it
    /// suits a frame loop and WebGPU; on native backends the host keeps the device polled
    /// (`device.poll(wgpu::PollType::Poll)` once a frame, as engines do) for it to resolve.
    pub fn read_back_async(&self) -> impl std::future::Future<Output = Result<Poses>> + 'static {
        self.stage_outputs()
    }

    /// Copies every chunk's outputs to mappable buffers, submits, and asks for their mapping.
    fn stage_outputs(&self) -> ReadBack {
        let bones = self.lib.bone_count();
        let curves = self.lib.curve_names().len();
        let total: usize = self.chunks.iter().map(|c| c.count).sum();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut staged = Vec::new();
        for chunk in self.chunks.iter().filter(|c| c.count > 0) {
            let n = (chunk.count * bones) as u64;
            let mut stage = |buffer: &wgpu::Buffer, size: u64| {
                let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("readback"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
                staging
            };
            staged.push(StagedChunk {
                bones: chunk.first * bones..(chunk.first + chunk.count) * bones,
                curves: chunk.first * curves..(chunk.first + chunk.count) * curves,
                locals: chunk.locals.as_ref().map(|b| stage(b, n * XFORM_BYTES)),
                component: chunk.component.as_ref().map(|b| stage(b, n * XFORM_BYTES)),
                skinning: stage(&chunk.skinning, n * chunk.skinning_layout.bytes()),
                layout: chunk.skinning_layout,
                // At least 4 bytes: a copy may not be empty.
                curve_values: stage(&chunk.curves, (chunk.count * curves * 4).max(4) as u64),
            });
        }
        self.queue.submit([encoder.finish()]);
        let buffers = staged.iter().flat_map(|c| {
            [&c.skinning, &c.curve_values]
                .into_iter()
                .chain(c.locals.iter())
                .chain(c.component.iter())
        });
        ReadBack {
            mapped: MapAll::new(buffers),
            staged,
            bones,
            curves,
            total,
            outputs: self.outputs,
        }
    }
}

/// The bytes a frame buffer that must hold `needed` bytes (a multiple of 16, within `limit`) is
/// given: half again, so a slowly growing crowd does not reallocate every frame, in whole
/// 16-byte words, and never past the binding limit (rounding up after capping once passed it:
/// NVIDIA's limit, 2,147,483,644 bytes, is not a multiple of 16).
fn grown_capacity(needed: u64, limit: u64) -> u64 {
    (needed + needed / 2)
        .next_multiple_of(16)
        .min(limit / 16 * 16)
        .max(needed.max(16))
}

/// One chunk's output copies: its ranges in the poses and the staged buffers.
struct StagedChunk {
    bones: Range<usize>,
    curves: Range<usize>,
    locals: Option<wgpu::Buffer>,
    component: Option<wgpu::Buffer>,
    skinning: wgpu::Buffer,
    layout: SkinningLayout,
    curve_values: wgpu::Buffer,
}

/// Staged output copies, resolving to [`Poses`] once every buffer is mapped.
struct ReadBack {
    mapped: MapAll,
    staged: Vec<StagedChunk>,
    bones: usize,
    curves: usize,
    total: usize,
    outputs: Outputs,
}

/// Copies a mapped buffer's first bytes into `dst` (cast from an aligned destination: the
/// mapped copy has no alignment promise) and unmaps it.
fn copy_mapped(dst: &mut [u8], buffer: &wgpu::Buffer) -> Result<()> {
    let view = buffer
        .get_mapped_range(..)
        .map_err(|e| Error::gpu("reading a mapped buffer", e))?;
    dst.copy_from_slice(&view[..dst.len()]);
    drop(view);
    buffer.unmap();
    Ok(())
}

impl ReadBack {
    /// The poses from the mapped copies: the outputs not kept are left empty.
    fn poses(&self) -> Result<Poses> {
        let mut poses = Poses::default();
        poses.resize(self.bones, self.curves, self.total);
        let mut words = Vec::new();
        for c in &self.staged {
            let r = c.bones.clone();
            if let Some(b) = &c.locals {
                copy_mapped(bytemuck::cast_slice_mut(&mut poses.locals[r.clone()]), b)?;
            }
            if let Some(b) = &c.component {
                copy_mapped(bytemuck::cast_slice_mut(&mut poses.component[r.clone()]), b)?;
            }
            if c.layout == SkinningLayout::Rows3x4 {
                copy_mapped(
                    bytemuck::cast_slice_mut(&mut poses.skinning[r]),
                    &c.skinning,
                )?;
            } else {
                let per = c.layout.words() as usize * 4;
                words.resize(r.len() * per, 0.0f32);
                copy_mapped(bytemuck::cast_slice_mut(&mut words), &c.skinning)?;
                for (m, w) in poses.skinning[r].iter_mut().zip(words.chunks_exact(per)) {
                    *m = c.layout.rows(w);
                }
            }
            copy_mapped(
                bytemuck::cast_slice_mut(&mut poses.curves[c.curves.clone()]),
                &c.curve_values,
            )?;
        }
        if !self.outputs.locals {
            poses.locals = Vec::new();
        }
        if !self.outputs.component {
            poses.component = Vec::new();
        }
        Ok(poses)
    }
}

impl std::future::Future for ReadBack {
    type Output = Result<Poses>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        match std::pin::Pin::new(&mut this.mapped).poll(cx) {
            std::task::Poll::Pending => std::task::Poll::Pending,
            std::task::Poll::Ready(Err(e)) => std::task::Poll::Ready(Err(e)),
            std::task::Poll::Ready(Ok(())) => std::task::Poll::Ready(this.poses()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::grown_capacity;

    #[test]
    fn grown_frame_buffers_stay_within_the_binding_limit() {
        // NVIDIA's limit, and odd ones.
        for limit in [2_147_483_644u64, 1_000_003, 4_099, 64] {
            for needed in [
                16u64,
                48,
                960,
                1_431_655_760,
                2_147_483_632,
                limit / 16 * 16,
            ] {
                if needed > limit {
                    continue;
                }
                let size = grown_capacity(needed, limit);
                assert!(size >= needed, "{needed} within {limit}: {size}");
                assert!(
                    size <= limit,
                    "{needed} within {limit}: {size} passes the limit"
                );
                assert_eq!(size % 16, 0, "{needed} within {limit}: {size}");
            }
        }
        // A million instances' mesh-space deltas (1.43 GB and up) used to round past it.
        assert_eq!(grown_capacity(1_431_655_760, 2_147_483_644), 2_147_483_632);
        assert_eq!(grown_capacity(1_000, u64::MAX), 1_504);
    }
}
