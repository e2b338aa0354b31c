//! The scatter stage (`shaders/scatter.wgsl`, CPU twin [`scatter_cpu`]): Bevy's joint matrices
//! from posegpu's skinning matrices, written where Bevy's skinned-mesh pipeline reads them.
//!
//! Bevy keeps one joint-matrix range per skinned mesh entity (its skin index), in skin-joint
//! order and in world space (`GlobalTransform(joint) * inverse bind`). posegpu writes one
//! range per instance, in its own bone order (parents first) and in component space
//! (`component * inverse bind`). A job per (instance, mesh) maps one onto the other:
//! `joints[skin_index + j] = world * skin[instance * bones + joint_bones[joint_base + j]]`,
//! with `world` the world transform of the node above the skeleton's top joint.

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

/// The shader's source.
pub const SCATTER_WGSL: &str = include_str!("../shaders/scatter.wgsl");

/// Invocations per workgroup (`WORKGROUP` in the shader).
pub(crate) const WORKGROUP: u32 = 64;

/// The most workgroups in one grid dimension (WebGPU's limit).
const MAX_GRID: u32 = 65_535;

/// One skinned mesh of one instance (`SkinJob` in the shader).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SkinJob {
    /// The world transform of the node above the skeleton's top joint, column-major.
    pub world: [[f32; 4]; 4],
    /// The mesh's first joint in Bevy's joint buffer (`SkinUniforms::skin_index`).
    pub skin_index: u32,
    /// The instance, counted from the start of the skinning buffer read.
    pub instance: u32,
    /// Where the mesh's joint → bone map starts in the joint map.
    pub joint_base: u32,
    /// The mesh's joints.
    pub joint_count: u32,
}

/// The stage's uniform (`ScatterParams` in the shader).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ScatterParams {
    pub job_count: u32,
    pub bones: u32,
    pub max_joints: u32,
    pub _pad: u32,
}

/// The stage on the CPU: the same inputs and outputs as the shader. `skin` holds `bones`
/// column-major matrices per instance; `joints` is Bevy's joint buffer.
pub fn scatter_cpu(
    jobs: &[SkinJob],
    joint_bones: &[u32],
    skin: &[[f32; 16]],
    bones: usize,
    joints: &mut [[f32; 16]],
) {
    for job in jobs {
        let world = mat(&bytemuck::cast(job.world));
        for j in 0..job.joint_count as usize {
            let bone = joint_bones[job.joint_base as usize + j] as usize;
            let m = world * mat(&skin[job.instance as usize * bones + bone]);
            joints[job.skin_index as usize + j] = m.to_cols_array();
        }
    }
}

fn mat(cols: &[f32; 16]) -> bevy::math::Mat4 {
    bevy::math::Mat4::from_cols_array(cols)
}

/// The compiled stage on one device.
pub struct ScatterPipeline {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// The buffers one dispatch reads and writes.
pub struct ScatterBuffers<'a> {
    /// The joint → bone map ([`ScatterPipeline::joint_map`]: uploaded once per model).
    pub joint_map: &'a wgpu::Buffer,
    /// posegpu's skinning matrices (`OutputChunk::skinning`, `SkinningLayout::Columns4x4`).
    pub skin: &'a wgpu::Buffer,
    /// Bevy's joint matrices (`SkinUniforms::current_buffer`).
    pub joints: &'a wgpu::Buffer,
}

impl ScatterPipeline {
    /// Compiles the stage on `device`.
    pub fn new(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("bevy_posegpu scatter"),
            source: wgpu::ShaderSource::Wgsl(SCATTER_WGSL.into()),
        });
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let read = wgpu::BufferBindingType::Storage { read_only: true };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("bevy_posegpu scatter"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, read),
                entry(2, read),
                entry(3, read),
                entry(4, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("bevy_posegpu scatter"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("bevy_posegpu scatter"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        Self { layout, pipeline }
    }

    /// The joint → bone map `joint_bones` (every job's `joint_base` indexes it) as the
    /// buffer [`ScatterBuffers::joint_map`] takes.
    pub fn joint_map(device: &wgpu::Device, joint_bones: &[u32]) -> wgpu::Buffer {
        // A storage binding may not be empty.
        let map: &[u32] = if joint_bones.is_empty() {
            &[0]
        } else {
            joint_bones
        };
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("bevy_posegpu joint map"),
            contents: bytemuck::cast_slice(map),
            usage: wgpu::BufferUsages::STORAGE,
        })
    }

    /// Records one dispatch of `jobs` into `encoder`. Nothing is recorded for no jobs.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        jobs: &[SkinJob],
        bones: u32,
        buffers: ScatterBuffers,
    ) {
        let Some(max_joints) = jobs.iter().map(|j| j.joint_count).max() else {
            return;
        };
        let params = ScatterParams {
            job_count: jobs.len() as u32,
            bones,
            max_joints,
            _pad: 0,
        };
        let init = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let params = init(
            "bevy_posegpu scatter params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM,
        );
        let jobs_buffer = init(
            "bevy_posegpu scatter jobs",
            bytemuck::cast_slice(jobs),
            wgpu::BufferUsages::STORAGE,
        );
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("bevy_posegpu scatter"),
            layout: &self.layout,
            entries: &[
                whole(0, &params),
                whole(1, &jobs_buffer),
                whole(2, buffers.joint_map),
                whole(3, buffers.skin),
                whole(4, buffers.joints),
            ],
        });
        let (x, y, z) = grid(max_joints, jobs.len() as u32);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("bevy_posegpu scatter"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups(x, y, z);
    }
}

fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The dispatch grid for `jobs` jobs of at most `max_joints` joints: x covers the joints, y
/// and z the jobs (`job = y + z * rows`), rows at most [`MAX_GRID`].
pub(crate) fn grid(max_joints: u32, jobs: u32) -> (u32, u32, u32) {
    let x = max_joints.div_ceil(WORKGROUP);
    let z = jobs.div_ceil(MAX_GRID).max(1);
    let y = jobs.div_ceil(z);
    (x, y, z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shader_validates_and_its_structs_match_their_rust_twins() {
        let module = naga::front::wgsl::parse_str(SCATTER_WGSL).expect("scatter.wgsl parses");
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .expect("scatter.wgsl validates");
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).unwrap();
        let members = |name: &str| {
            let (handle, ty) = module
                .types
                .iter()
                .find(|(_, t)| t.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no struct {name} in scatter.wgsl"));
            let naga::TypeInner::Struct { members, .. } = &ty.inner else {
                panic!("{name} is not a struct");
            };
            let size = layouter[handle].size as usize;
            let offsets: Vec<(String, usize)> = members
                .iter()
                .map(|m| (m.name.clone().unwrap_or_default(), m.offset as usize))
                .collect();
            (size, offsets)
        };
        let (size, offsets) = members("SkinJob");
        assert_eq!(size, size_of::<SkinJob>());
        assert_eq!(
            offsets,
            [
                ("world", std::mem::offset_of!(SkinJob, world)),
                ("skin_index", std::mem::offset_of!(SkinJob, skin_index)),
                ("instance", std::mem::offset_of!(SkinJob, instance)),
                ("joint_base", std::mem::offset_of!(SkinJob, joint_base)),
                ("joint_count", std::mem::offset_of!(SkinJob, joint_count)),
            ]
            .map(|(n, o)| (n.to_string(), o))
        );
        let (size, offsets) = members("ScatterParams");
        assert_eq!(size, size_of::<ScatterParams>());
        assert_eq!(
            offsets,
            [
                ("job_count", std::mem::offset_of!(ScatterParams, job_count)),
                ("bones", std::mem::offset_of!(ScatterParams, bones)),
                (
                    "max_joints",
                    std::mem::offset_of!(ScatterParams, max_joints)
                ),
                ("_pad", std::mem::offset_of!(ScatterParams, _pad)),
            ]
            .map(|(n, o)| (n.to_string(), o))
        );
        // The workgroup size constant.
        let workgroup = module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some("WORKGROUP"))
            .map(|(_, c)| c.init)
            .expect("WORKGROUP");
        assert_eq!(
            module.global_expressions[workgroup],
            naga::Expression::Literal(naga::Literal::U32(WORKGROUP))
        );
    }

    #[test]
    fn the_grid_covers_every_job_within_the_limit() {
        for jobs in [1, 2, 65_535, 65_536, 200_000] {
            let (x, y, z) = grid(100, jobs);
            assert_eq!(x, 2);
            assert!(y <= MAX_GRID && z <= MAX_GRID);
            assert!(y * z >= jobs && (z - 1) * y < jobs, "{jobs}: {y} x {z}");
        }
    }

    #[test]
    fn the_cpu_twin_places_each_bone_at_its_joint() {
        let t = |x: f32| bevy::math::Mat4::from_translation(bevy::math::Vec3::new(x, 0.0, 0.0));
        // Two bones per instance, two instances; the mesh lists them in the other order.
        let skin: Vec<[f32; 16]> = [1.0, 2.0, 10.0, 20.0]
            .map(|x| t(x).to_cols_array())
            .to_vec();
        let job = |instance: u32, skin_index: u32| SkinJob {
            world: t(100.0).to_cols_array_2d(),
            skin_index,
            instance,
            joint_base: 0,
            joint_count: 2,
        };
        let mut joints = vec![[0.0; 16]; 6];
        scatter_cpu(&[job(1, 4), job(0, 0)], &[1, 0], &skin, 2, &mut joints);
        let x = |m: &[f32; 16]| m[12];
        assert_eq!(
            joints.iter().map(x).collect::<Vec<_>>(),
            [102.0, 101.0, 0.0, 0.0, 120.0, 110.0]
        );
    }
}
