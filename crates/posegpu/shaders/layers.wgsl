// The layer pass (its place in the frame: frame_plan.rs), one invocation per instance: its layers
// from the first mesh-space one on, in order, reading the delta slots the sampling stage wrote. A
// mesh-space layer walks the bones parents first: rotations to mesh space, the delta applied, back
// to local, normalized, in one forward loop. Each bone's mesh-space rotations before and after the
// delta replace its used slot, where its children read them. A layer whose weight differs per bone
// (a mask, a layered blend) finds it in its slot's translation w, written by the sampling stage.
// CPU twin: src/cpu/layers.rs.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> parents: array<i32>;
@group(0) @binding(3) var<storage, read_write> locals: array<Xform>;
@group(0) @binding(4) var<storage, read_write> deltas: array<Xform>;

struct MeshApplied {
    local: Xform,
    before: vec4<f32>,
    after: vec4<f32>,
}

// d applied to `local` in mesh space, given the parent's mesh-space rotations before and after
// the delta; as apply_mesh_delta in src/cpu/layers.rs.
fn apply_mesh_delta(local: Xform, d: Xform, has_parent: bool, before: vec4<f32>, after: vec4<f32>) -> MeshApplied {
    var mesh = local.r;
    if (has_parent) {
        mesh = quat_mul(before, local.r);
    }
    let applied = apply_delta(Xform(mesh, local.t, local.s), d);
    var back = applied.r;
    if (has_parent) {
        back = quat_mul(quat_conj(after), applied.r);
    }
    return MeshApplied(Xform(normalize_quat(back), applied.t, applied.s), mesh, applied.r);
}

fn apply_mesh_layer(base: u32, s: u32, from_bone: u32, to_bone: u32) {
    for (var i = from_bone; i < to_bone; i++) {
        let p = parents[i];
        var before = vec4<f32>(0.0);
        var after = before;
        if (p >= 0) {
            before = deltas[s + u32(p)].r;
            after = deltas[s + u32(p)].t;
        }
        let m = apply_mesh_delta(locals[base + i], deltas[s + i], p >= 0, before, after);
        locals[base + i] = m.local;
        deltas[s + i].r = m.before;
        deltas[s + i].t = m.after;
    }
}

// Slot s holds the pose, slot s + bones the base; after bone i they hold its mesh-space pose
// and base rotations, and (pose slot) the instance's rotations before and after the delta.
fn apply_dynamic_mesh_layer(base: u32, s: u32, bones: u32, from_bone: u32, to_bone: u32) {
    let b = s + bones;
    for (var i = from_bone; i < to_bone; i++) {
        let p = parents[i];
        var pose = deltas[s + i];
        var base_pose = deltas[b + i];
        let w = pose.t.w;
        var before = vec4<f32>(0.0);
        var after = before;
        if (p >= 0) {
            let q = u32(p);
            pose.r = quat_mul(deltas[s + q].r, pose.r);
            base_pose.r = quat_mul(deltas[b + q].r, base_pose.r);
            before = deltas[s + q].t;
            after = deltas[s + q].s;
        }
        var d = IDENTITY_DELTA;
        if (w > ZERO_WEIGHT) {
            d = weighted_delta(make_delta(pose, base_pose), w);
        }
        let m = apply_mesh_delta(locals[base + i], d, p >= 0, before, after);
        locals[base + i] = m.local;
        deltas[s + i] = Xform(pose.r, m.before, m.after);
        deltas[b + i].r = base_pose.r;
    }
}

// A layered blend with rotations in mesh space: slot s holds the layer's pose and its weight per
// bone; after bone i it holds the layer's mesh-space rotation, the pose's, and the blend's
// (blend_two_mesh in src/blend/pose.rs).
fn apply_mesh_blend_layer(base: u32, s: u32, from_bone: u32, to_bone: u32) {
    for (var i = from_bone; i < to_bone; i++) {
        let p = parents[i];
        let x = deltas[s + i];
        let local = locals[base + i];
        var pose_mesh = local.r;
        var layer_mesh = x.r;
        if (p >= 0) {
            let q = deltas[s + u32(p)];
            pose_mesh = quat_mul(q.t, local.r);
            layer_mesh = quat_mul(q.r, x.r);
        }
        let b = blend_two(Xform(pose_mesh, local.t, local.s), Xform(layer_mesh, x.t, x.s), x.t.w);
        var r = b.r;
        if (p >= 0) {
            r = normalize_quat(quat_mul(quat_conj(deltas[s + u32(p)].s), b.r));
        }
        locals[base + i] = Xform(r, vec4<f32>(b.t.xyz, 0.0), b.s);
        deltas[s + i] = Xform(layer_mesh, pose_mesh, b.r);
    }
}

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
    let bones = params.bone_count;
    // This dispatch's block of bones: parents first across the dispatches too.
    let b0 = (num_wg.z - 1u) * BONE_BLOCK;
    let b1 = min(b0 + BONE_BLOCK, bones);
    let head = as_head(frame[instance]);
    let base = instance * bones;
    var e = head.first;
    var slot = head.slot;
    var deferred = false;
    for (var l = 0u; l < head.layers; l++) {
        let layer = as_layer(frame[e]);
        let kind = layer_kind(layer);
        let weight = layer.weight;
        e += 1u + layer_samples(layer);
        deferred = deferred || layer_is_mesh(kind);
        if (!deferred || layer_is_stage(kind)) {
            continue;
        }
        let s = slot * bones;
        slot += layer_slots(kind);
        if (weight <= ZERO_WEIGHT) {
            continue;
        }
        {
            if (kind == LAYER_MESH) {
                apply_mesh_layer(base, s, b0, b1);
            } else if (kind == LAYER_DYNAMIC_MESH) {
                apply_dynamic_mesh_layer(base, s, bones, b0, b1);
            } else if (kind == LAYER_BLEND_MESH) {
                apply_mesh_blend_layer(base, s, b0, b1);
            } else if (kind == LAYER_BLEND_LOCAL) {
                for (var i = b0; i < b1; i++) {
                    let x = deltas[s + i];
                    var y = blend_two(locals[base + i], x, x.t.w);
                    y.t.w = 0.0;
                    locals[base + i] = y;
                }
            } else {
                for (var i = b0; i < b1; i++) {
                    locals[base + i] = apply_delta(locals[base + i], deltas[s + i]);
                }
            }
        }
    }
}
