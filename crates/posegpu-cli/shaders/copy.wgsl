// Bandwidth probe for `posegpu bench`: one 16-byte copy per invocation, so the device's
// achievable memory bandwidth is 2 * bytes / time, measured in the same run as the pose passes.

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    // Dispatches wider than the per-dimension limit spill into y.
    let i = (wg.y * num_wg.x + wg.x) * 64u + local_index;
    if i < arrayLength(&dst) {
        dst[i] = src[i];
    }
}
