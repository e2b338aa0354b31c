// Bevy's joint matrices from posegpu's skinning matrices: one invocation per (skinned mesh,
// joint). Each job is one skinned mesh entity of one instance: its joints start at Bevy's skin
// index for that mesh, joint j is posegpu bone joint_bones[joint_base + j] of the instance,
// placed in the world by the instance's matrix (the world transform of the node above the
// skeleton's top joint), as Bevy's `GlobalTransform(joint) * inverse bind` would give it.
// CPU twin: `scatter_cpu` in src/scatter.rs.

struct SkinJob {
    world: mat4x4<f32>,
    skin_index: u32,
    instance: u32,
    joint_base: u32,
    joint_count: u32,
}

struct ScatterParams {
    job_count: u32,
    bones: u32,
    max_joints: u32,
    _pad: u32,
}

const WORKGROUP: u32 = 64u;

@group(0) @binding(0) var<uniform> params: ScatterParams;
@group(0) @binding(1) var<storage, read> jobs: array<SkinJob>;
@group(0) @binding(2) var<storage, read> joint_bones: array<u32>;
// posegpu's skinning output, column-major 4x4 (SkinningLayout::Columns4x4), instance-major.
@group(0) @binding(3) var<storage, read> skin: array<mat4x4<f32>>;
// Bevy's joint matrices (SkinUniforms::current_buffer).
@group(0) @binding(4) var<storage, read_write> joints: array<mat4x4<f32>>;

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    // x: blocks of joints; y and z: jobs (a grid of at most 65,535 rows).
    let job_index = wg.y + wg.z * num_wg.y;
    let joint = wg.x * WORKGROUP + lane;
    if (job_index >= params.job_count) {
        return;
    }
    let job = jobs[job_index];
    if (joint >= job.joint_count) {
        return;
    }
    let bone = joint_bones[job.joint_base + joint];
    joints[job.skin_index + joint] = job.world * skin[job.instance * params.bones + bone];
}
