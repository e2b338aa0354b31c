// Draw stage: each vertex skinned by the evaluator's skinning matrices, read straight from its
// storage buffer (no copy between evaluation and drawing), then placed per instance.
// CPU twin: src/cpu/skin.rs, then the placement and `view_proj`.

struct ViewUniform {
    view_proj: mat4x4<f32>,
    // Component space to model space (nodes above a glTF skeleton), applied after skinning.
    root: mat4x4<f32>,
    // Unit vector towards the light (w unused).
    light: vec4<f32>,
}

// One draw: instances 0..count of one output chunk.
struct ChunkUniform {
    bones: u32,
    // Global index of the chunk's first instance (stable colours across chunks).
    first: u32,
    // Where instance i's placement is: placements[placement_first + i * placement_stride].
    placement_first: u32,
    placement_stride: u32,
    // vec4 words per skinning matrix: 3 rows, or 4 columns of a mat4x4 (SkinningLayout).
    matrix_words: u32,
}

@group(0) @binding(0) var<uniform> view: ViewUniform;
@group(0) @binding(1) var<uniform> chunk: ChunkUniform;
@group(0) @binding(2) var<storage, read> skinning: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> placements: array<Xform>;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) joints: vec4<u32>,
    @location(3) weights: vec4<f32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) @interpolate(flat) color: vec3<f32>,
}

// Skinning matrix `j` of the chunk as three rows, from either layout.
fn skin_rows(j: u32) -> Mat3x4 {
    let k = j * chunk.matrix_words;
    if (chunk.matrix_words == 4u) {
        let c0 = skinning[k];
        let c1 = skinning[k + 1u];
        let c2 = skinning[k + 2u];
        let c3 = skinning[k + 3u];
        return Mat3x4(vec4<f32>(c0.x, c1.x, c2.x, c3.x), vec4<f32>(c0.y, c1.y, c2.y, c3.y),
            vec4<f32>(c0.z, c1.z, c2.z, c3.z));
    }
    return Mat3x4(skinning[k], skinning[k + 1u], skinning[k + 2u]);
}

fn apply_rows(m: Mat3x4, p: vec4<f32>) -> vec3<f32> {
    return vec3<f32>(dot(m.r0, p), dot(m.r1, p), dot(m.r2, p));
}

// A muted colour per instance, from a hash of its index.
fn instance_color(i: u32) -> vec3<f32> {
    var h = i * 747796405u + 2891336453u;
    h = ((h >> ((h >> 28u) + 4u)) ^ h) * 277803737u;
    h = (h >> 22u) ^ h;
    let c = vec3<f32>(f32(h & 255u), f32((h >> 8u) & 255u), f32((h >> 16u) & 255u)) / 255.0;
    return 0.15 + 0.7 * c;
}

@vertex
fn vs_main(v: VertexIn, @builtin(instance_index) instance: u32) -> VertexOut {
    let base = instance * chunk.bones;
    var p = vec3<f32>(0.0);
    var n = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k++) {
        let w = v.weights[k];
        if w > 0.0 {
            let m = skin_rows(base + v.joints[k]);
            p += w * apply_rows(m, vec4<f32>(v.position, 1.0));
            n += w * apply_rows(m, vec4<f32>(v.normal, 0.0));
        }
    }
    let model = (view.root * vec4<f32>(p, 1.0)).xyz;
    let place = placements[chunk.placement_first + instance * chunk.placement_stride];
    let world = place.t.xyz + quat_rotate(place.r, place.s.xyz * model);
    let model_normal = (view.root * vec4<f32>(n, 0.0)).xyz;
    var out: VertexOut;
    out.clip = view.view_proj * vec4<f32>(world, 1.0);
    out.normal = quat_rotate(place.r, model_normal * safe_recip3(place.s.xyz));
    out.color = instance_color(chunk.first + instance);
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    // Two-sided Lambert: imported meshes do not all agree on winding.
    let lit = abs(dot(normalize(in.normal), view.light.xyz));
    return vec4<f32>(in.color * (0.3 + 0.7 * lit), 1.0);
}
