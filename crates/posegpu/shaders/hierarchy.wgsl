// The hierarchy pass (its place in the frame: frame_plan.rs), one invocation per instance walking
// its bones parents-first: component-space transforms and skinning matrices. CPU twin:
// src/cpu/hierarchy.rs.
//
// One invocation per instance needs no barriers and composes in exactly the CPU's order (TRS
// composition is not associative under non-uniform scale, so pointer jumping would differ).

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> parents: array<i32>;
@group(0) @binding(2) var<storage, read> inverse_bind: array<Mat3x4>;
@group(0) @binding(3) var<storage, read> locals: array<Xform>;
@group(0) @binding(4) var<storage, read_write> component: array<Xform>;
// Three rows (Mat3x4) or four columns (mat4x4) per bone: SkinningLayout.
@group(0) @binding(5) var<storage, read_write> skinning: array<vec4<f32>>;

// The component transforms overwrite the locals they are built from (binding 4 holds both;
// binding 3 is a placeholder): for evaluators asked for no locals (Outputs).
override IN_PLACE: bool = false;
// Skinning matrices as column-major 4x4 (bottom row 0, 0, 0, 1) instead of three rows.
override SKIN_COLUMNS: bool = false;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let instance = invocation_index(wg, num_wg, local_index);
    if (instance >= params.instance_count || !last_block(wg, num_wg)) {
        return;
    }
    let base = instance * params.bone_count;
    // This dispatch's block of bones: parents first across the dispatches too.
    let b0 = (num_wg.z - 1u) * BONE_BLOCK;
    for (var bone = b0; bone < min(b0 + BONE_BLOCK, params.bone_count); bone++) {
        var cs: Xform;
        if (IN_PLACE) {
            cs = component[base + bone];
        } else {
            cs = locals[base + bone];
        }
        let parent = parents[bone];
        if (parent >= 0) {
            cs = compose(cs, component[base + u32(parent)]);
        }
        component[base + bone] = cs;
        let m = skinning_matrix(cs, inverse_bind[bone]);
        if (SKIN_COLUMNS) {
            let k = (base + bone) * 4u;
            skinning[k] = vec4<f32>(m.r0.x, m.r1.x, m.r2.x, 0.0);
            skinning[k + 1u] = vec4<f32>(m.r0.y, m.r1.y, m.r2.y, 0.0);
            skinning[k + 2u] = vec4<f32>(m.r0.z, m.r1.z, m.r2.z, 0.0);
            skinning[k + 3u] = vec4<f32>(m.r0.w, m.r1.w, m.r2.w, 1.0);
        } else {
            let k = (base + bone) * 3u;
            skinning[k] = m.r0;
            skinning[k + 1u] = m.r1;
            skinning[k + 2u] = m.r2;
        }
    }
}
