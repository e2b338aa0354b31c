//! What the evaluator holds on the device: the library's tables (uploaded once), a pipeline
//! per pass, and per chunk of instances its output, frame and state buffers with a bind group
//! per pass, each bound as its stage's [`Binding`]s list.

use wgpu::util::DeviceExt;

use super::super::outputs::SkinningLayout;
use super::super::util::{fits_binding, StagePipeline};
use super::{GpuEvaluator, GpuOptions, XFORM_BYTES};
use crate::error::Result;
use crate::frame_plan::{Binding, Pass};
use crate::layout::{Params, FUSED_BONES};
use crate::library::AnimLibrary;

/// One value per pass the evaluator records (a pipeline, a bind group), named fields looked up
/// by [`Pass`]. A crowd's own passes are the crowd's.
pub(crate) struct PerPass<T> {
    resolve: T,
    sample_single: T,
    sample: T,
    fused_single: T,
    fused: T,
    layers: T,
    inertialize: T,
    inertialize_starting: T,
    ik: T,
    hierarchy: T,
    curves: T,
}

impl<T> PerPass<T> {
    pub(crate) fn new(mut f: impl FnMut(Pass) -> T) -> Self {
        Self {
            resolve: f(Pass::Resolve),
            sample_single: f(Pass::Sample { single_clips: true }),
            sample: f(Pass::Sample {
                single_clips: false,
            }),
            fused_single: f(Pass::Fused { single_clips: true }),
            fused: f(Pass::Fused {
                single_clips: false,
            }),
            layers: f(Pass::Layers),
            inertialize: f(Pass::Inertialize { starts: false }),
            inertialize_starting: f(Pass::Inertialize { starts: true }),
            ik: f(Pass::Ik),
            hierarchy: f(Pass::Hierarchy),
            curves: f(Pass::Curves),
        }
    }

    /// The value of `pass`; `None` for a crowd's passes.
    pub(crate) fn get(&self, pass: Pass) -> Option<&T> {
        Some(match pass {
            Pass::Resolve => &self.resolve,
            Pass::Sample { single_clips: true } => &self.sample_single,
            Pass::Sample {
                single_clips: false,
            } => &self.sample,
            Pass::Fused { single_clips: true } => &self.fused_single,
            Pass::Fused {
                single_clips: false,
            } => &self.fused,
            Pass::Layers => &self.layers,
            Pass::Inertialize { starts: false } => &self.inertialize,
            Pass::Inertialize { starts: true } => &self.inertialize_starting,
            Pass::Ik => &self.ik,
            Pass::Hierarchy => &self.hierarchy,
            Pass::Curves => &self.curves,
            Pass::Advance | Pass::RootMotion => return None,
        })
    }
}

/// The pipeline of each pass: its stage, with the pipeline constants of its variant and of the
/// outputs kept. Compiled the first time a frame needs it.
pub(super) fn pipelines(device: &wgpu::Device, options: &GpuOptions) -> PerPass<StagePipeline> {
    PerPass::new(|pass| {
        let constants = pass_constants(pass, options);
        StagePipeline::new(device, pass.stage(), &constants, options.runtime_checks)
    })
}

/// The override constants of `pass`'s variant with `options` (the paths' apart).
pub(crate) fn pass_constants(pass: Pass, options: &GpuOptions) -> Vec<(&'static str, f64)> {
    let outputs = options.outputs;
    let flag = |on: bool| f64::from(u8::from(on));
    let columns = (
        "SKIN_COLUMNS",
        flag(outputs.skinning == SkinningLayout::Columns4x4),
    );
    match pass {
        Pass::Sample { single_clips } => vec![("SINGLE_CLIP", flag(single_clips))],
        Pass::Fused { single_clips } => vec![
            ("WRITE_LOCALS", flag(outputs.locals)),
            ("WRITE_COMPONENT", flag(outputs.component)),
            columns,
            ("SINGLE_CLIP", flag(single_clips)),
            ("SKIN_AT_COMPOSE", flag(options.skin_at_compose)),
            (
                "FUSED_POSES",
                f64::from(options.fused_poses.unwrap_or(FUSED_BONES)),
            ),
            (
                "OCCUPANCY_PAD_WORDS",
                f64::from(options.occupancy_pad_words),
            ),
        ],
        Pass::Inertialize { starts } => vec![("STARTS", flag(starts))],
        Pass::Hierarchy => vec![("IN_PLACE", flag(!outputs.locals)), columns],
        _ => Vec::new(),
    }
}

/// The library's tables on the device.
pub(crate) struct Assets {
    /// The clips, then their channels (`LibraryData::clip_table`).
    pub clip_table: wgpu::Buffer,
    pub times: wgpu::Buffer,
    pub values: wgpu::Buffer,
    /// The retarget table, then the skeleton section the fused pass reads.
    pub retarget: wgpu::Buffer,
    parents: wgpu::Buffer,
    inverse_bind: wgpu::Buffer,
    ik: wgpu::Buffer,
    curve_table: wgpu::Buffer,
    /// 48 bytes bound where a stage's layout needs a buffer it does not read (the hierarchy's
    /// locals when it builds in place).
    placeholder: wgpu::Buffer,
}

impl Assets {
    /// Uploads `lib`'s tables as they are, each checked against the binding limit first.
    pub(super) fn upload(
        device: &wgpu::Device,
        lib: &AnimLibrary,
        max_binding: u64,
    ) -> Result<Self> {
        let storage = |label: &str, bytes: &[u8]| -> Result<wgpu::Buffer> {
            let what = || format!("the {label} buffer");
            fits_binding(what, bytes.len() as u64, max_binding)?;
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
        let data = lib.data();
        Ok(Self {
            clip_table: storage("clip table", bytemuck::cast_slice(&data.clip_table))?,
            times: storage("key times", bytemuck::cast_slice(&data.times))?,
            values: storage("key values", bytemuck::cast_slice(&data.values))?,
            retarget: storage("retarget caches", bytemuck::cast_slice(&data.retarget))?,
            parents: storage("parents", bytemuck::cast_slice(&data.parents))?,
            inverse_bind: storage("inverse bind", bytemuck::cast_slice(&data.inverse_bind))?,
            ik: storage("IK chains", bytemuck::cast_slice(&data.ik))?,
            curve_table: storage("curves", bytemuck::cast_slice(&data.curve_table))?,
            placeholder: storage("placeholder", &[0; XFORM_BYTES as usize])?,
        })
    }
}

/// One chunk's buffers, by what they hold.
#[derive(Clone)]
pub(crate) struct ChunkBuffers {
    /// Where sampling writes the locals (the `locals` output when it is kept).
    pub work: wgpu::Buffer,
    /// Where the hierarchy writes the component transforms: the `component` output when it is
    /// kept, `work` itself when the locals are not (built in place).
    pub built: wgpu::Buffer,
    pub skinning: wgpu::Buffer,
    pub curves: wgpu::Buffer,
    pub params: wgpu::Buffer,
    /// This frame's heads and entries (grown on demand).
    pub frame: wgpu::Buffer,
    /// Delta slots of deferred layers (grown on demand; 48 bytes when there are none).
    pub deltas: wgpu::Buffer,
    /// Inertialization offsets, 48 bytes per bone (made the first time a batch has a
    /// transition; 48 bytes before). Kept from frame to frame.
    pub inertia: wgpu::Buffer,
}

/// Instances `first .. first + count` live in one set of output buffers. Where a crowd exceeds
/// a device limit (binding size, workgroups per dimension) it is split over several chunks.
///
/// Layouts, instance-major within the chunk (`[(instance - first) * bones + bone]`):
/// `locals` and `component` are arrays of [`Xform`](crate::Xform) (48 bytes), `skinning` an
/// array of [`Mat3x4`](crate::Mat3x4) (48 bytes, three rows) or of column-major `mat4x4<f32>`
/// (64 bytes), as `skinning_layout` says. All have `STORAGE | COPY_SRC` usage. `locals` and
/// `component` are there when [`GpuOptions::outputs`](super::GpuOptions::outputs) asks for
/// them.
pub struct OutputChunk {
    /// The crowd index of the chunk's first instance.
    pub first: usize,
    /// Instances evaluated in the last frame.
    pub count: usize,
    /// Instances the buffers hold room for.
    pub capacity: usize,
    /// Local transforms after sampling and layers ([`Xform`](crate::Xform) per bone), when
    /// asked for.
    pub locals: Option<wgpu::Buffer>,
    /// Component-space transforms ([`Xform`](crate::Xform) per bone), when asked for.
    pub component: Option<wgpu::Buffer>,
    /// Skinning matrices, component-space transform times inverse bind, one per bone.
    pub skinning: wgpu::Buffer,
    /// The layout of `skinning`.
    pub skinning_layout: SkinningLayout,
    /// The library's curves per instance (`f32`, `[(instance - first) * curves + curve]`;
    /// morph-target weights a vertex stage binds); 16 bytes when the library has none.
    pub curves: wgpu::Buffer,
    pub(super) buffers: ChunkBuffers,
    /// A bind group per pass.
    pub(super) groups: PerPass<wgpu::BindGroup>,
}

impl OutputChunk {
    /// This frame's heads and entries, as the passes read them.
    pub(crate) fn frame(&self) -> &wgpu::Buffer {
        &self.buffers.frame
    }
}

impl GpuEvaluator {
    /// The library's table bound as `binding`; `None` for the others.
    pub(crate) fn asset(&self, binding: Binding) -> Option<&wgpu::Buffer> {
        let a = &self.assets;
        Some(match binding {
            Binding::ClipTable => &a.clip_table,
            Binding::Times => &a.times,
            Binding::Values => &a.values,
            Binding::Retarget => &a.retarget,
            Binding::Parents => &a.parents,
            Binding::InverseBind => &a.inverse_bind,
            Binding::IkChains => &a.ik,
            Binding::CurveTable => &a.curve_table,
            _ => return None,
        })
    }

    /// The buffer bound as `binding` for a chunk with `buffers`; `None` for a crowd's own.
    pub(crate) fn binding<'a>(
        &'a self,
        binding: Binding,
        buffers: &'a ChunkBuffers,
    ) -> Option<&'a wgpu::Buffer> {
        let c = buffers;
        if let Some(table) = self.asset(binding) {
            return Some(table);
        }
        Some(match binding {
            Binding::Params => &c.params,
            Binding::Frame => &c.frame,
            Binding::Locals => &c.work,
            // Where the locals are not kept, the stages after sampling bind a placeholder in
            // their place, and the component transforms are built in the locals' buffer.
            Binding::KeptLocals if self.outputs.locals => &c.work,
            Binding::KeptLocals => &self.assets.placeholder,
            Binding::Built => &c.built,
            Binding::Skinning => &c.skinning,
            Binding::Curves => &c.curves,
            Binding::Deltas => &c.deltas,
            Binding::Inertia => &c.inertia,
            _ => return None,
        })
    }

    /// A bind group per pass, each binding its stage's list.
    pub(super) fn bind_groups(&self, buffers: &ChunkBuffers) -> PerPass<wgpu::BindGroup> {
        PerPass::new(|pass| {
            let bound: Vec<&wgpu::Buffer> = (pass.stage().bindings().iter())
                .filter_map(|&b| self.binding(b, buffers))
                .collect();
            let pipeline = self.pipelines.get(pass).expect("an evaluator pass");
            pipeline.bind(&self.device, &bound)
        })
    }

    pub(super) fn create_chunk(&self, first: usize, capacity: usize) -> OutputChunk {
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
        let buffers = ChunkBuffers {
            skinning: output("skinning", n * bones * o.skinning.bytes()),
            curves: output("curves", (n * self.curve_count() * 4).max(16)),
            params: self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: std::mem::size_of::<Params>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            // Three words per instance (a head, a base layer, a clip: the most common frame),
            // then as many for the resolve pass's key searches.
            frame: self.frame_buffer(n * 6 * super::ENTRY_BYTES),
            deltas: self.frame_buffer(XFORM_BYTES),
            inertia: self.frame_buffer(XFORM_BYTES),
            work,
            built,
        };
        OutputChunk {
            first,
            count: 0,
            capacity,
            locals: o.locals.then(|| buffers.work.clone()),
            component: o.component.then(|| buffers.built.clone()),
            skinning: buffers.skinning.clone(),
            skinning_layout: o.skinning,
            curves: buffers.curves.clone(),
            groups: self.bind_groups(&buffers),
            buffers,
        }
    }

    /// A per-frame storage buffer of `bytes` (at least 16, rounded up to whole 16-byte words),
    /// which can be read back (the resolve pass's searches, for the tests).
    pub(super) fn frame_buffer(&self, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame"),
            size: bytes.max(16).next_multiple_of(16),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }
}
