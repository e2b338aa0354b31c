// The inertialization pass (its place in the frame: frame_plan.rs), one invocation per (instance,
// bone): an instance with an inertialized transition adds each bone's offset to the old pose,
// decaying by Bollo's quintic, to its new pose; on the frame the transition begins it first
// measures and stores the offsets (the old pose sampled now and one step earlier). CPU twin:
// src/cpu/inertialize.rs; the math: src/blend/inertia.rs, in the same order.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> locals: array<Xform>;
// Per (instance, bone): translation direction and x0, rotation axis and x0, then v0 and t1 of
// each (start in src/blend/inertia.rs).
@group(0) @binding(8) var<storage, read_write> inertia: array<Xform>;

const NO_OFFSET: f32 = 1e-6;

// False for a frame in which no transition begins: the pipeline built with it compiles the
// sampling of old poses away (SIMD devices such as lavapipe run every branch for every lane).
override STARTS: bool = true;

fn decay(x0: f32, v0: f32, t1: f32, t: f32) -> f32 {
    if (t >= t1 || t1 <= 0.0) {
        return 0.0;
    }
    let t1_2 = t1 * t1;
    let t1_3 = t1 * t1 * t1;
    let a0 = (-8.0 * v0 * t1 - 20.0 * x0) / t1_2;
    let a = -(a0 * t1_2 + 6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t1_3 * t1_2);
    let b = (3.0 * a0 * t1_2 + 16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t1_2 * t1_2);
    let c = -(3.0 * a0 * t1_2 + 12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t1_3);
    return ((((a * t + b) * t + c) * t + 0.5 * a0) * t + v0) * t + x0;
}

// (x0, v0, t1) of one offset.
fn offset(x0: f32, x_before: f32, dt: f32, blend_time: f32) -> vec3<f32> {
    if (x0 < NO_OFFSET) {
        return vec3<f32>(0.0);
    }
    var v0 = 0.0;
    if (STARTS && dt > 0.0) {
        v0 = min((x0 - x_before) / dt, 0.0);
    }
    var t1 = blend_time;
    if (v0 < 0.0) {
        t1 = min(blend_time, -5.0 * x0 / v0);
    }
    return vec3<f32>(x0, v0, t1);
}

fn hemisphere(q: vec4<f32>, toward: vec4<f32>) -> vec4<f32> {
    return select(q, -q, dot(q, toward) < 0.0);
}

fn start_offsets(old: Xform, before: Xform, fresh: Xform, dt: f32, blend_time: f32) -> Xform {
    let d = old.t.xyz - fresh.t.xyz;
    let len = length(d);
    var n = vec3<f32>(0.0);
    if (len >= NO_OFFSET) {
        n = d / len;
    }
    let tr = offset(len, dot(before.t.xyz - fresh.t.xyz, n), dt, blend_time);
    let q = hemisphere(quat_mul(old.r, quat_conj(fresh.r)), vec4<f32>(0.0, 0.0, 0.0, 1.0));
    let s = length(q.xyz);
    var axis = vec3<f32>(0.0);
    if (s >= NO_OFFSET) {
        axis = q.xyz / s;
    }
    let angle = 2.0 * atan2(s, q.w);
    let p = hemisphere(quat_mul(before.r, quat_conj(fresh.r)), q);
    let angle_before = 2.0 * atan2(dot(p.xyz, axis), p.w);
    let rot = offset(angle, angle_before, dt, blend_time);
    return Xform(vec4<f32>(n, tr.x), vec4<f32>(axis, rot.x), vec4<f32>(tr.y, tr.z, rot.y, rot.z));
}

fn apply_offsets(state: Xform, fresh: Xform, t: f32) -> Xform {
    let moved = state.r.xyz * decay(state.r.w, state.s.x, state.s.y, t);
    let angle = decay(state.t.w, state.s.z, state.s.w, t);
    let turn = vec4<f32>(state.t.xyz * sin(0.5 * angle), cos(0.5 * angle));
    return Xform(normalize_quat(quat_mul(turn, fresh.r)), vec4<f32>(fresh.t.xyz + moved, 0.0), fresh.s);
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let index = invocation_index(wg, num_wg, local_index);
    let bones = params.bone_count;
    if (index >= params.instance_count * bones) {
        return;
    }
    set_library(params.bone_count, params.root_bone, params.root_up.xyz);
    let head = as_head(frame[index / bones]);
    let bone = index % bones;
    var e = head.first;
    var found = false;
    var layer = as_layer(frame[e]);
    for (var l = 0u; l < head.layers; l++) {
        layer = as_layer(frame[e]);
        if (layer_kind(layer) == LAYER_INERTIALIZE) {
            found = true;
            break;
        }
        e += 1u + layer_samples(layer);
    }
    let blend_time = layer.weight;
    if (!found || blend_time <= 0.0) {
        return;
    }
    let elapsed = bitcast<f32>(layer.extra);
    let dt = bitcast<f32>(layer.mask);
    let x = locals[index];
    if (dt > 0.0) {
        // The old pose now and one step earlier: one call site, inlined once.
        var olds: array<Xform, 2>;
        for (var k = 0u; k < 2u; k++) {
            olds[k] = sample_clip(as_sample(frame[e + 1u + k]), bone);
        }
        // Interrupting a transition: the old pose is the one shown, its offsets included.
        let interrupted = as_sample(frame[e + 1u]).weight;
        if (interrupted >= 0.0) {
            let shown = inertia[index];
            olds[0] = apply_offsets(shown, olds[0], interrupted);
            olds[1] = apply_offsets(shown, olds[1], max(interrupted - dt, 0.0));
        }
        inertia[index] = start_offsets(olds[0], olds[1], x, dt, blend_time);
    }
    locals[index] = apply_offsets(inertia[index], x, elapsed);
}
