//! Drawing a skinned crowd straight from the evaluator's skinning buffers.

use glam::{Mat4, Vec3};
use wgpu::util::DeviceExt;

use super::mesh::{SkinnedMesh, SkinnedVertex};
use crate::error::{Error, Result};
use crate::gpu::shaders;
use crate::gpu::{GpuContext, GpuCrowd, OutputChunk, SkinningLayout};
use crate::layout::{ChunkUniform, ViewUniform, Xform};
use crate::Transform;

/// The colour format [`CrowdRenderer`] draws into by default (and [`super::RenderTarget`] holds).
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
/// The light grey `posegpu render` clears to.
pub const BACKGROUND: wgpu::Color = wgpu::Color {
    r: 0.92,
    g: 0.93,
    b: 0.95,
    a: 1.0,
};
/// The depth format the renderer tests against.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

const XFORM_BYTES: u64 = std::mem::size_of::<Xform>() as u64;
/// Per-chunk uniforms sit at this stride (the strictest `min_uniform_buffer_offset_alignment`).
const SLOT: u64 = 256;

/// Where the camera is and where the light comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// World to clip space (wgpu's: depth 0..1).
    pub view_proj: Mat4,
    /// Towards the light.
    pub light: Vec3,
}

impl Camera {
    /// A view of the box `min..max` from in front (+Z) and above, as close as keeps all of
    /// it in frame, for a target `aspect` (width / height) wide.
    pub fn framing(min: Vec3, max: Vec3, aspect: f32) -> Self {
        Self::framing_from(min, max, aspect, Vec3::new(0.35, 0.5, 1.0))
    }

    /// The same from `direction` (towards the camera, from the box's centre; +Y is up): say
    /// `Vec3::X` for a side view at the box's middle height, where feet and floor line up.
    pub fn framing_from(min: Vec3, max: Vec3, aspect: f32, direction: Vec3) -> Self {
        let (center, aspect) = ((min + max) * 0.5, aspect.max(1e-3));
        let radius = ((max - min).length() * 0.5).max(1e-3);
        let direction = direction.try_normalize().unwrap_or(Vec3::Z);
        let fov = 30f32.to_radians();
        let camera = |distance: f32| {
            let near = (distance - radius * 1.1).max(distance * 1e-3);
            let far = distance + radius * 1.1;
            let eye = center + direction * distance;
            // wgpu clip space is Direct3D's: depth 0 at `near`, 1 at `far`, Y up.
            let projection = glam::camera::rh::proj::directx::perspective(fov, aspect, near, far);
            projection * glam::camera::rh::view::look_at_mat4(eye, center, Vec3::Y)
        };
        let corners = (0..8).map(|i| {
            let pick = |bit: usize, lo: f32, hi: f32| if i & bit == 0 { lo } else { hi };
            Vec3::new(
                pick(1, min.x, max.x),
                pick(2, min.y, max.y),
                pick(4, min.z, max.z),
            )
        });
        let fits = |m: &Mat4| {
            corners.clone().all(|c| {
                let p = m.project_point3(c);
                p.x.abs() <= 0.95 && p.y.abs() <= 0.95
            })
        };
        // Bisect between a distance that fits (the bounding sphere's) and one that does not.
        let (mut near, mut far) = (radius * 0.5, radius / (0.5 * fov * aspect.min(1.0)).sin());
        for _ in 0..32 {
            let mid = 0.5 * (near + far);
            if fits(&camera(mid)) {
                far = mid;
            } else {
                near = mid;
            }
        }
        Self {
            view_proj: camera(far),
            light: Vec3::new(-0.5, 0.8, 0.45).normalize(),
        }
    }
}

/// One draw: `count` instances whose skinning matrices start at the beginning of `skinning`
/// (the evaluator's layout, `bones` matrices per instance) and whose placements are
/// `placements[placement_first + i * placement_stride]` ([`Xform`]s).
#[derive(Clone, Copy, Debug)]
pub struct DrawChunk<'a> {
    /// Skinning matrices ([`crate::Mat3x4`]s or 4x4 columns), `bones` per instance from the start.
    pub skinning: &'a wgpu::Buffer,
    /// The layout of `skinning`.
    pub skinning_layout: SkinningLayout,
    /// Instances to draw.
    pub count: usize,
    /// Global index of the first instance (instance colours stay put across chunks).
    pub first: usize,
    /// Each instance's placement in the world, an [`Xform`].
    pub placements: &'a wgpu::Buffer,
    /// Index, in `Xform`s, of the first instance's placement.
    pub placement_first: u32,
    /// `Xform`s from one instance's placement to the next.
    pub placement_stride: u32,
}

impl<'a> DrawChunk<'a> {
    /// Every chunk of an evaluator's last frame, placed by one buffer of [`Xform`]s indexed by
    /// global instance.
    pub fn from_outputs(chunks: &'a [OutputChunk], placements: &'a wgpu::Buffer) -> Vec<Self> {
        chunks
            .iter()
            .filter(|c| c.count > 0)
            .map(|c| Self {
                skinning: &c.skinning,
                skinning_layout: c.skinning_layout,
                count: c.count,
                first: c.first,
                placements,
                placement_first: c.first as u32,
                placement_stride: 1,
            })
            .collect()
    }
}

impl<'a> DrawChunk<'a> {
    /// Every chunk of a crowd's last step, each instance where its root motion has taken it:
    /// the placements are the crowd's own root-motion records on the GPU (96 bytes each, the
    /// step's delta then the placement: index 1, stride 2 in `Xform`s).
    pub fn from_crowd(crowd: &'a GpuCrowd) -> Vec<Self> {
        crowd
            .evaluator()
            .chunks()
            .iter()
            .zip(crowd.root_motion_buffers())
            .filter(|(c, _)| c.count > 0)
            .map(|(c, (_, _, motion))| Self {
                skinning: &c.skinning,
                skinning_layout: c.skinning_layout,
                count: c.count,
                first: c.first,
                placements: motion,
                placement_first: 1,
                placement_stride: 2,
            })
            .collect()
    }
}

/// Draws instances of one skinned mesh, each skinned by its own matrices in posegpu's output
/// buffers (vertex-stage storage reads) and placed by an [`Xform`].
pub struct CrowdRenderer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::RenderPipeline,
    group_layout: wgpu::BindGroupLayout,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    bones: usize,
    root: Mat4,
    view: wgpu::Buffer,
    /// One uniform slot per chunk drawn.
    chunk_slots: wgpu::Buffer,
    /// Bind groups by chunk, kept while the chunk's buffers stay the same.
    groups: Vec<(wgpu::Buffer, wgpu::Buffer, wgpu::BindGroup)>,
}

impl CrowdRenderer {
    /// Uploads `mesh` (checked against a skeleton of `bones` bones) and builds the pipeline
    /// for `color` targets with a [`DEPTH_FORMAT`] depth buffer.
    pub fn new(
        ctx: &GpuContext,
        mesh: &SkinnedMesh,
        bones: usize,
        color: wgpu::TextureFormat,
    ) -> Result<Self> {
        mesh.validate(bones)?;
        let device = ctx.device.clone();
        let scope = crate::gpu::ErrorScope::push(&device);
        let stage = shaders::skin();
        let group_layout = shaders::bind_group_layout(&device, stage);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("skin"),
            source: wgpu::ShaderSource::Wgsl(shaders::source(stage).into()),
        });
        let attributes = wgpu::vertex_attr_array![
            0 => Float32x3, 1 => Float32x3, 2 => Uint32x4, 3 => Float32x4
        ];
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("skin"),
            layout: Some(&shaders::pipeline_layout(&device, &group_layout)),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<SkinnedVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &attributes,
                })],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(color.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let init = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let vertices = init(
            "mesh vertices",
            bytemuck::cast_slice(&mesh.vertices),
            wgpu::BufferUsages::VERTEX,
        );
        let indices = init(
            "mesh indices",
            bytemuck::cast_slice(&mesh.indices),
            wgpu::BufferUsages::INDEX,
        );
        let view = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("view"),
            size: std::mem::size_of::<ViewUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let chunk_slots = Self::slots(&device, 1);
        scope.pop()?;
        let renderer = Self {
            device,
            queue: ctx.queue.clone(),
            pipeline,
            group_layout,
            vertices,
            indices,
            index_count: mesh.indices.len() as u32,
            bones,
            root: mesh.root,
            view,
            chunk_slots,
            groups: Vec::new(),
        };
        renderer.set_camera(&Camera::framing(Vec3::splat(-1.0), Vec3::ONE, 1.0));
        Ok(renderer)
    }

    fn slots(device: &wgpu::Device, count: usize) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("draw chunks"),
            size: count as u64 * SLOT,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Sets the camera for the draws that follow (written with the next submission).
    pub fn set_camera(&self, camera: &Camera) {
        let view = ViewUniform {
            view_proj: camera.view_proj.to_cols_array_2d(),
            root: self.root.to_cols_array_2d(),
            light: camera.light.normalize_or_zero().extend(0.0).to_array(),
        };
        self.queue
            .write_buffer(&self.view, 0, bytemuck::bytes_of(&view));
    }

    /// Records one render pass that clears `color` and `depth` and draws every chunk. Checks
    /// first that each chunk's buffers hold what it names. The per-chunk uniforms are written
    /// with the queue: submit this encoder before the next `draw`.
    pub fn draw(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        clear: wgpu::Color,
        chunks: &[DrawChunk],
    ) -> Result<()> {
        for (k, c) in chunks.iter().enumerate() {
            self.check(k, c)?;
        }
        if chunks.len() as u64 * SLOT > self.chunk_slots.size() {
            self.chunk_slots = Self::slots(&self.device, chunks.len());
            self.groups.clear();
        }
        for (k, c) in chunks.iter().enumerate() {
            let uniform = ChunkUniform {
                bones: self.bones as u32,
                first: c.first as u32,
                placement_first: c.placement_first,
                placement_stride: c.placement_stride,
                matrix_words: c.skinning_layout.words(),
            };
            let at = k as u64 * SLOT;
            self.queue
                .write_buffer(&self.chunk_slots, at, bytemuck::bytes_of(&uniform));
            let same = self
                .groups
                .get(k)
                .is_some_and(|(s, p, _)| s == c.skinning && p == c.placements);
            if !same {
                let group = self.bind_group(k, c);
                let entry = (c.skinning.clone(), c.placements.clone(), group);
                if k < self.groups.len() {
                    self.groups[k] = entry;
                } else {
                    self.groups.push(entry);
                }
            }
        }
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("crowd"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: color,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(clear),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_vertex_buffer(0, self.vertices.slice(..));
        pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
        for (c, (_, _, group)) in chunks.iter().zip(&self.groups) {
            pass.set_bind_group(0, group, &[]);
            pass.draw_indexed(0..self.index_count, 0, 0..c.count as u32);
        }
        Ok(())
    }

    /// `Error::Render` when chunk `k`'s buffers are too small for what it names.
    fn check(&self, k: usize, c: &DrawChunk) -> Result<()> {
        let bad = |what: String| Err(Error::Render { what });
        let count = c.count as u64;
        let skinning = count * self.bones as u64 * c.skinning_layout.bytes();
        if skinning > c.skinning.size() {
            return bad(format!(
                "draw chunk {k}: {count} instances of {} bones need {skinning} bytes of skinning \
                 matrices; the buffer has {}",
                self.bones,
                c.skinning.size()
            ));
        }
        if count > 0 {
            let last = u64::from(c.placement_first) + (count - 1) * u64::from(c.placement_stride);
            if (last + 1) * XFORM_BYTES > c.placements.size() {
                return bad(format!(
                    "draw chunk {k}: placement {last} is past the placements buffer's {} transforms",
                    c.placements.size() / XFORM_BYTES
                ));
            }
        }
        if u32::try_from(c.first + c.count).is_err() {
            return bad(format!("draw chunk {k}: instance indices past u32"));
        }
        Ok(())
    }

    fn bind_group(&self, k: usize, c: &DrawChunk) -> wgpu::BindGroup {
        let slot = wgpu::BufferBinding {
            buffer: &self.chunk_slots,
            offset: k as u64 * SLOT,
            size: wgpu::BufferSize::new(std::mem::size_of::<ChunkUniform>() as u64),
        };
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("draw chunk"),
            layout: &self.group_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.view.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Buffer(slot),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: c.skinning.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: c.placements.as_entire_binding(),
                },
            ],
        })
    }
}

/// An error unless the placements of `count` instances fit one storage binding of the device
/// (a crowd too large to draw in one buffer: say so before anything is allocated).
pub fn check_placements(ctx: &GpuContext, count: usize) -> Result<()> {
    let limits = ctx.device.limits();
    let limit = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    let size = (count as u64).saturating_mul(XFORM_BYTES);
    if size > limit {
        return Err(Error::TooLarge {
            what: format!("the placements of {count} instances"),
            size,
            limit,
            unit: "bytes",
            limit_name: "max_storage_buffer_binding_size",
        });
    }
    Ok(())
}

/// A storage buffer of placements for [`DrawChunk::placements`], one [`Xform`] per instance.
pub fn placements_buffer(ctx: &GpuContext, placements: &[Transform]) -> Result<wgpu::Buffer> {
    check_placements(ctx, placements.len())?;
    if let Some(k) = placements.iter().position(|p| !p.is_finite()) {
        return Err(Error::Render {
            what: format!("placement {k} is not finite"),
        });
    }
    let xforms: Vec<Xform> = placements.iter().map(|&p| p.into()).collect();
    let mut bytes = bytemuck::cast_slice::<_, u8>(&xforms).to_vec();
    bytes.resize(bytes.len().max(XFORM_BYTES as usize), 0);
    Ok(ctx
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("placements"),
            contents: &bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        }))
}
