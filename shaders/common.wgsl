// Shared types and math, prepended to every stage (src/gpu/shaders.rs). The Rust twins are in
// src/math.rs and src/library.rs; keep the layouts and the operation order identical.

// A transform: rotation quaternion (x, y, z, w), translation and scale (w unused).
struct Xform {
    r: vec4<f32>,
    t: vec4<f32>,
    s: vec4<f32>,
}

// A 3x4 affine matrix as three rows [r | t].
struct Mat3x4 {
    r0: vec4<f32>,
    r1: vec4<f32>,
    r2: vec4<f32>,
}

// Per dispatch: the skeleton's bone count and this chunk's instance count.
struct Params {
    bone_count: u32,
    instance_count: u32,
    _pad0: u32,
    _pad1: u32,
}

const WORKGROUP_SIZE: u32 = 64u;

// Linear invocation index over a 2D grid of workgroups (dispatches wider than the per-dimension
// limit spill into y).
fn invocation_index(wg: vec3<u32>, num_wg: vec3<u32>, local_index: u32) -> u32 {
    return (wg.y * num_wg.x + wg.x) * WORKGROUP_SIZE + local_index;
}

// Hamilton product a ⊗ b: rotate by b, then by a.
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    );
}

fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

fn normalize_quat(q: vec4<f32>) -> vec4<f32> {
    return q * (1.0 / sqrt(dot(q, q)));
}

// compose(child, parent): R = Rp ⊗ Rc, S = Sc ∘ Sp, T = Rp · (Sp ∘ Tc) + Tp.
fn compose(child: Xform, parent: Xform) -> Xform {
    var out: Xform;
    out.r = quat_mul(parent.r, child.r);
    out.s = vec4<f32>(child.s.xyz * parent.s.xyz, 0.0);
    out.t = vec4<f32>(quat_rotate(parent.r, parent.s.xyz * child.t.xyz) + parent.t.xyz, 0.0);
    return out;
}
