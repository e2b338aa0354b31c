// The sampling pass (its place in the frame: frame_plan.rs), one invocation per (instance, bone):
// the instance's local pose at the bone (local_pose.wgsl), written to the locals, and each deferred
// layer's delta to its slot. CPU twin: src/cpu/sample.rs.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> locals: array<Xform>;
@group(0) @binding(8) var<storage, read_write> deltas: array<Xform>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let index = invocation_index(wg, num_wg, local_index);
    if (index >= params.instance_count * params.bone_count) {
        return;
    }
    set_library(params.bone_count, params.root_bone, params.root_up.xyz);
    locals[index] = bone_pose(index);
}
