// Shared types and math, prepended to every stage (src/gpu/shaders.rs). Every struct and scalar
// constant shared with Rust has its twin of the same name in src/layout/, checked by a test
// (layout::tests); the math follows src/math.rs and src/additive/delta.rs in the same order.

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

// Per dispatch: the skeleton's bone count, this chunk's instance count, and the library's
// root-motion bone and its up (in its parent's frame) for in-place samples.
struct Params {
    bone_count: u32,
    instance_count: u32,
    root_bone: u32,
    curve_count: u32,
    root_up: vec4<f32>,
    root_parent: Xform,
    // The fused pass's (fused.wgsl).
    levels: u32,
    group_instances: u32,
    parents_word: u32,
    inverse_bind_word: u32,
    tasks_word: u32,
    level_starts_word: u32,
    // Where each sample's resolved key search lies in the frame buffer (resolve.wgsl): entry
    // `e`'s at word `resolved_word + e`.
    resolved_word: u32,
    // Instances per block of the fused pass's task table.
    task_instances: u32,
}

const WORKGROUP_SIZE: u32 = 64u;
// Bones one invocation walks in a stage that walks an instance's bones (hierarchy, layers):
// lavapipe ends an invocation's loops after 65,535 iterations in all, so longer skeletons take a
// dispatch per block of bones. Dispatch k has k + 1 layers of workgroups in z and only the last
// works, so no per-dispatch uniform is needed.
const BONE_BLOCK: u32 = 4096u;

fn last_block(wg: vec3<u32>, num_wg: vec3<u32>) -> bool {
    return wg.z + 1u == num_wg.z;
}

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

// Whether a scale can be negative in the pipeline's library (src/gpu/specialize.rs folds the
// matrix path away where none can).
override NEGATIVE_SCALES: bool = true;

// True where a component of a or b is negative (a mirrored bone): the matrix path's test.
fn any_negative(a: vec4<f32>, b: vec4<f32>) -> bool {
    return any(min(a.xyz, b.xyz) < vec3<f32>(0.0));
}

// compose(child, parent): R = Rp ⊗ Rc, S = Sc ∘ Sp, T = Rp · (Sp ∘ Tc) + Tp; R by the matrix
// path where a scale is negative (Transform::compose).
fn compose(child: Xform, parent: Xform) -> Xform {
    var out: Xform;
    out.r = quat_mul(parent.r, child.r);
    out.s = vec4<f32>(child.s.xyz * parent.s.xyz, 0.0);
    out.t = vec4<f32>(quat_rotate(parent.r, parent.s.xyz * child.t.xyz) + parent.t.xyz, 0.0);
    if (NEGATIVE_SCALES & any_negative(child.s, parent.s)) {
        out.r = compose_rotation_mirrored(child, parent);
    }
    return out;
}

// relative(a, b): a expressed in b's space; R by the matrix path where a scale is negative
// (Transform::relative).
fn relative(a: Xform, b: Xform) -> Xform {
    let inv_r = quat_conj(b.r);
    let inv_s = safe_recip3(b.s.xyz);
    var out = Xform(
        quat_mul(inv_r, a.r),
        vec4<f32>(quat_rotate(inv_r, a.t.xyz - b.t.xyz) * inv_s, 0.0),
        vec4<f32>(a.s.xyz * inv_s, 0.0),
    );
    if (NEGATIVE_SCALES & any_negative(a.s, b.s)) {
        out.r = relative_rotation_mirrored(a, b);
    }
    return out;
}

// The columns of q's rotation matrix (quat_axes in src/transform/mirror.rs).
fn quat_axes(q: vec4<f32>) -> mat3x3<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat3x3<f32>(
        vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy),
        vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx),
        vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy)),
    );
}

// The normalized quaternion of the matrix with columns c0, c1, c2: Shepperd's method, the same
// branches as quat_from_axes in src/transform/mirror.rs.
fn quat_from_axes(c0: vec3<f32>, c1: vec3<f32>, c2: vec3<f32>) -> vec4<f32> {
    let m00 = c0.x;
    let m10 = c0.y;
    let m20 = c0.z;
    let m01 = c1.x;
    let m11 = c1.y;
    let m21 = c1.z;
    let m02 = c2.x;
    let m12 = c2.y;
    let m22 = c2.z;
    let trace = m00 + m11 + m22;
    var q: vec4<f32>;
    if (trace > 0.0) {
        let s = sqrt(trace + 1.0);
        let k = 0.5 / s;
        q = vec4<f32>((m21 - m12) * k, (m02 - m20) * k, (m10 - m01) * k, 0.5 * s);
    } else if (m00 >= m11 && m00 >= m22) {
        let s = sqrt(m00 - m11 - m22 + 1.0);
        let k = 0.5 / s;
        q = vec4<f32>(0.5 * s, (m01 + m10) * k, (m02 + m20) * k, (m21 - m12) * k);
    } else if (m11 >= m22) {
        let s = sqrt(m11 - m22 - m00 + 1.0);
        let k = 0.5 / s;
        q = vec4<f32>((m01 + m10) * k, 0.5 * s, (m12 + m21) * k, (m02 - m20) * k);
    } else {
        let s = sqrt(m22 - m00 - m11 + 1.0);
        let k = 0.5 / s;
        q = vec4<f32>((m02 + m20) * k, (m12 + m21) * k, 0.5 * s, (m10 - m01) * k);
    }
    return normalize_quat(q);
}

// Axis v of a product with its scaling removed (an axis under sqrt(TINY) kept) and the desired
// scale's sign s put back (signed_unit in src/transform/mirror.rs).
fn signed_unit(v: vec3<f32>, s: f32) -> vec3<f32> {
    let sq = dot(v, v);
    var unit = v;
    if (sq >= TINY) {
        unit = v * (1.0 / sqrt(sq));
    }
    return select(-unit, unit, s >= 0.0);
}

// The matrix path's rotation of compose(child, parent) (compose_rotation in
// src/transform/mirror.rs): axis i of M_parent · M_child, desired scale Sc ∘ Sp.
fn compose_rotation_mirrored(child: Xform, parent: Xform) -> vec4<f32> {
    let a = quat_axes(child.r);
    let sc = child.s.xyz;
    let sp = parent.s.xyz;
    let d = sc * sp;
    let v0 = signed_unit(quat_rotate(parent.r, sp * (a[0] * sc.x)), d.x);
    let v1 = signed_unit(quat_rotate(parent.r, sp * (a[1] * sc.y)), d.y);
    let v2 = signed_unit(quat_rotate(parent.r, sp * (a[2] * sc.z)), d.z);
    return quat_from_axes(v0, v1, v2);
}

// The matrix path's rotation of relative(a, b) (relative_rotation in src/transform/mirror.rs): axis
// i of M_b⁻¹ · M_a, desired scale Sa ∘ safeRecip(Sb).
fn relative_rotation_mirrored(a: Xform, b: Xform) -> vec4<f32> {
    let axes = quat_axes(a.r);
    let inv_r = quat_conj(b.r);
    let inv_s = safe_recip3(b.s.xyz);
    let sa = a.s.xyz;
    let d = sa * inv_s;
    let v0 = signed_unit(inv_s * quat_rotate(inv_r, axes[0] * sa.x), d.x);
    let v1 = signed_unit(inv_s * quat_rotate(inv_r, axes[1] * sa.y), d.y);
    let v2 = signed_unit(inv_s * quat_rotate(inv_r, axes[2] * sa.z), d.z);
    return quat_from_axes(v0, v1, v2);
}

// The inverse of a TRS transform: relative(identity, x) (Transform::inverse).
fn inverse_xform(x: Xform) -> Xform {
    return relative(IDENTITY, x);
}

// The rotation taking unit vector a to unit vector b; for opposite vectors a half turn about an
// axis perpendicular to a (find_between_normals in src/math.rs).
fn find_between_normals(a: vec3<f32>, b: vec3<f32>) -> vec4<f32> {
    let w = 1.0 + dot(a, b);
    var q = vec4<f32>(cross(a, b), w);
    if (w < 1e-6) {
        q = select(vec4<f32>(0.0, -a.z, a.y, 0.0), vec4<f32>(-a.z, 0.0, a.x, 0.0), abs(a.x) > abs(a.y));
    }
    return normalize_quat(q);
}

// The twist of q about unit vector axis (swing-twist; twist in src/math.rs).
fn twist(q: vec4<f32>, axis: vec3<f32>) -> vec4<f32> {
    let t = vec4<f32>(axis * dot(q.xyz, axis), q.w);
    let len = length(t);
    if (len < 1e-9) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    return t / len;
}

// q^f: f times q's angle about q's axis, q taken with w >= 0 (quat_pow in src/math.rs).
fn quat_pow(q_in: vec4<f32>, f: f32) -> vec4<f32> {
    let q = select(q_in, -q_in, q_in.w < 0.0);
    let s = length(q.xyz);
    if (s < 1e-9) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    let half = atan2(s, q.w) * f;
    return vec4<f32>(q.xyz * (sin(half) / s), cos(half));
}

// The frame buffer is an array of 16-byte words (src/batch.rs builds it): the chunk's heads,
// then its entries. Each word is read through the record it holds: a Head per instance, then
// per layer a LayerEntry followed by its SampleEntry words.

// Per instance: its first entry in the frame buffer, its layer count (the base included), its
// first delta slot and slot count.
struct Head {
    first: u32,
    layers: u32,
    slot: u32,
    slots: u32,
}

// A layer: kind (LAYER_*) | sample count << LAYER_SAMPLES_SHIFT, its weight, a word of its kind's own (an IK
// layer's hands weight), and its bone mask (the retarget-table word its weights start at; 0:
// none).
struct LayerEntry {
    kind_and_samples: u32,
    weight: f32,
    extra: u32,
    mask: u32,
}

// A clip at a time: clip | INSTANCE_LOOP, seconds, weight in its layer, root-lock code.
struct SampleEntry {
    clip_and_flags: u32,
    time: f32,
    weight: f32,
    root_lock: u32,
}

fn as_head(w: vec4<u32>) -> Head {
    return Head(w.x, w.y, w.z, w.w);
}

fn as_layer(w: vec4<u32>) -> LayerEntry {
    return LayerEntry(w.x, bitcast<f32>(w.y), w.z, w.w);
}

fn as_sample(w: vec4<u32>) -> SampleEntry {
    return SampleEntry(w.x, bitcast<f32>(w.y), bitcast<f32>(w.z), w.w);
}

fn sample_word(s: SampleEntry) -> vec4<u32> {
    return vec4<u32>(s.clip_and_flags, bitcast<u32>(s.time), bitcast<u32>(s.weight), s.root_lock);
}

// kind_and_samples: the kind's bits, and the sample count's first bit.
const LAYER_KIND_MASK: u32 = 0xffu;
const LAYER_SAMPLES_SHIFT: u32 = 8u;
const LAYER_BASE: u32 = 0u;
const LAYER_LOCAL: u32 = 1u;
const LAYER_MESH: u32 = 2u;
const LAYER_DYNAMIC_LOCAL: u32 = 3u;
const LAYER_DYNAMIC_MESH: u32 = 4u;
// The instance's IK weights (feet in the weight, hands in the third word): its last layer, no
// samples, read by the IK stage only.
const LAYER_IK: u32 = 5u;
// UE's Layered blend per bone: the blend of the layer's samples replaces the pose by the layer's
// weight times its mask's, rotations blended in local or (by the layer stage) mesh space.
const LAYER_BLEND_LOCAL: u32 = 6u;
const LAYER_BLEND_MESH: u32 = 7u;
// An inertialized transition: blend time in the weight, elapsed seconds in the third word, the
// step between its two samples (the old pose now and before) in the fourth, 0 once started.
const LAYER_INERTIALIZE: u32 = 8u;
const INSTANCE_LOOP: u32 = 0x80000000u;
// A SampleEntry's root_lock: the lock's bits (ROOT_LOCK_*), its axis mask above them.
const ROOT_LOCK_MASK: u32 = 0xffu;

fn layer_kind(layer: LayerEntry) -> u32 {
    return layer.kind_and_samples & LAYER_KIND_MASK;
}

fn layer_samples(layer: LayerEntry) -> u32 {
    return layer.kind_and_samples >> LAYER_SAMPLES_SHIFT;
}

fn layer_is_mesh(kind: u32) -> bool {
    return kind == LAYER_MESH || kind == LAYER_DYNAMIC_MESH || kind == LAYER_BLEND_MESH;
}

// Delta slots a layer takes once it is deferred to the layer stage.
fn layer_slots(kind: u32) -> u32 {
    if (kind == LAYER_IK || kind == LAYER_INERTIALIZE) {
        return 0u;
    }
    return select(1u, 2u, kind == LAYER_DYNAMIC_MESH);
}

// Layers the pose stages (sampling, layers, curves) pass over: their own stages read them.
fn layer_is_stage(kind: u32) -> bool {
    return kind == LAYER_IK || kind == LAYER_INERTIALIZE;
}

// The additive math of src/additive/delta.rs, in the same order.
// Clamps t to [0, duration], or wraps it into [0, duration) when looping (map_time in
// src/model/keys.rs).
fn map_time(t: f32, duration: f32, looping: bool) -> f32 {
    if (duration <= 0.0) {
        return 0.0;
    }
    if (looping) {
        let r = t - duration * floor(t / duration);
        return select(0.0, r, r >= 0.0 && r < duration);
    }
    return clamp(t, 0.0, duration);
}

const ZERO_WEIGHT: f32 = 1e-5;
// Below this a length or a divisor counts as zero (math::TINY).
const TINY: f32 = 1e-8;

// The blend rule's sum (BlendAccumulator in src/blend/pose.rs): w·T and w·S summed, rotations
// summed as 4-vectors, each flipped into the accumulator's hemisphere, then normalized.
struct Blend {
    r: vec4<f32>,
    t: vec3<f32>,
    s: vec3<f32>,
    started: bool,
}

const BLEND_EMPTY = Blend(vec4<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0), false);

// Adds x with its renormalized weight w.
fn blend_add(acc: ptr<function, Blend>, x: Xform, w: f32) {
    let q = x.r * w;
    let r = (*acc).r;
    (*acc).r = select(r - q, r + q, !(*acc).started || dot(r, q) >= 0.0);
    (*acc).t += x.t.xyz * w;
    (*acc).s += x.s.xyz * w;
    (*acc).started = true;
}

fn blend_result(acc: Blend) -> Xform {
    return Xform(normalize_quat(acc.r), vec4<f32>(acc.t, 0.0), vec4<f32>(acc.s, 0.0));
}

// a blended toward b by w: a at or below ZERO_WEIGHT, b at or above 1 - ZERO_WEIGHT, else the
// blend rule over the two (blend_two in src/blend/pose.rs).
fn blend_two(a: Xform, b: Xform, w: f32) -> Xform {
    if (w <= ZERO_WEIGHT) {
        return a;
    }
    if (w >= 1.0 - ZERO_WEIGHT) {
        return b;
    }
    var acc = BLEND_EMPTY;
    blend_add(&acc, a, 1.0 - w);
    blend_add(&acc, b, w);
    return blend_result(acc);
}
const IDENTITY = Xform(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(0.0), vec4<f32>(1.0, 1.0, 1.0, 0.0));
const NO_ROTATION: f32 = 1e-10;
const NO_DELTA_ROTATION = vec4<f32>(0.0, 0.0, 0.0, 1.0);
const IDENTITY_DELTA = Xform(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(0.0), vec4<f32>(0.0));

fn quat_conj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

fn safe_recip3(v: vec3<f32>) -> vec3<f32> {
    return select(1.0 / v, vec3<f32>(0.0), abs(v) <= vec3<f32>(TINY));
}

// Δ of pose p against base b.
fn make_delta(p: Xform, b: Xform) -> Xform {
    return Xform(
        normalize_quat(quat_mul(p.r, quat_conj(b.r))),
        vec4<f32>(p.t.xyz - b.t.xyz, 0.0),
        vec4<f32>(p.s.xyz * safe_recip3(b.s.xyz) - 1.0, 0.0),
    );
}

// D, the part of Δ weight w applies (w > ZERO_WEIGHT): full weight scales it all, the rotation
// as a 4-vector; partial weight takes normalize(fastLerp(identity, Δ.R, w)). A rotation the
// spec skips (D.R.w² ≥ 1 − 1e-10, evaluated as |D.R.xyz|² ≤ w² − 1 + 1e-10) becomes the exact
// identity.
fn weighted_delta(delta: Xform, w: f32) -> Xform {
    var r = delta.r * w;
    var limit = (w - 1.0) * (w + 1.0) + NO_ROTATION;
    if (w < 1.0 - ZERO_WEIGHT) {
        let sign = select(-1.0, 1.0, delta.r.w >= 0.0);
        r = normalize_quat(vec4<f32>(0.0, 0.0, 0.0, 1.0 - w) + delta.r * (w * sign));
        limit = NO_ROTATION;
    }
    if (dot(r.xyz, r.xyz) <= limit) {
        r = NO_DELTA_ROTATION;
    }
    return Xform(r, delta.t * w, delta.s * w);
}

// D applied onto x: R = normalize(D.R ⊗ R) (no product for the identity), T + D.T,
// S ∘ (1 + D.S).
fn apply_delta(x: Xform, d: Xform) -> Xform {
    var r = x.r;
    if (any(d.r != NO_DELTA_ROTATION)) {
        r = quat_mul(d.r, x.r);
    }
    return Xform(
        normalize_quat(r),
        vec4<f32>(x.t.xyz + d.t.xyz, 0.0),
        vec4<f32>(x.s.xyz * (1.0 + d.s.xyz), 0.0),
    );
}

// translate(T) · rotate(R) · scale(S) · B, with B an affine 3x4 matrix.
fn skinning_matrix(x: Xform, b: Mat3x4) -> Mat3x4 {
    // Rows of rotate(R) · scale(S).
    let r = transpose(quat_axes(x.r));
    let m0 = r[0] * x.s.xyz;
    let m1 = r[1] * x.s.xyz;
    let m2 = r[2] * x.s.xyz;
    let c0 = vec3<f32>(b.r0.x, b.r1.x, b.r2.x);
    let c1 = vec3<f32>(b.r0.y, b.r1.y, b.r2.y);
    let c2 = vec3<f32>(b.r0.z, b.r1.z, b.r2.z);
    let c3 = vec3<f32>(b.r0.w, b.r1.w, b.r2.w);
    return Mat3x4(
        vec4<f32>(dot(m0, c0), dot(m0, c1), dot(m0, c2), dot(m0, c3) + x.t.x),
        vec4<f32>(dot(m1, c0), dot(m1, c1), dot(m1, c2), dot(m1, c3) + x.t.y),
        vec4<f32>(dot(m2, c0), dot(m2, c1), dot(m2, c2), dot(m2, c3) + x.t.z),
    );
}
