// Stage 1, one invocation per (instance, bone): the instance's base pose at this bone (clips
// sampled, retargeted when authored on another skeleton, blended), then its layers (additives
// and layered blends, each weighted at this bone by its mask): applied here up to the
// instance's first mesh-space layer, written to delta slots for the layer stage from there on.
// CPU twin: src/cpu/sample.rs. Clip sampling: clip.wgsl.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> locals: array<Xform>;
@group(0) @binding(8) var<storage, read_write> deltas: array<Xform>;

// True for a batch in which every instance plays one clip with no layers: the pipeline built
// with it compiles the blend and layer code away (SIMD devices such as lavapipe run every branch
// for every lane).
override SINGLE_CLIP: bool = false;

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
    let head = as_head(frame[index / bones]);
    let bone = index % bones;
    root_bone = params.root_bone;
    root_up = params.root_up.xyz;
    if (SINGLE_CLIP) {
        locals[index] = sample_clip(as_sample(frame[head.first + 1u]), bone);
        return;
    }
    var pose = IDENTITY_DELTA;
    var e = head.first;
    var slot = head.slot;
    var deferred = false;
    for (var l = 0u; l < head.layers; l++) {
        let layer = as_layer(frame[e]);
        let kind = layer_kind(layer);
        let count = layer_samples(layer);
        let weight = layer.weight;
        let first = e + 1u;
        e = first + count;
        if (layer_is_stage(kind)) {
            continue;
        }
        deferred = deferred || layer_is_mesh(kind);
        let at = slot * bones + bone;
        if (deferred) {
            slot += layer_slots(kind);
        }
        if (kind != LAYER_BASE && weight <= ZERO_WEIGHT) {
            continue;
        }
        // Blend rule: weights at or below ZERO_WEIGHT dropped, the rest renormalized; one kept
        // sample as it is. A dynamic layer keeps both of its samples (pose, base) unblended.
        let dynamic = kind == LAYER_DYNAMIC_LOCAL || kind == LAYER_DYNAMIC_MESH;
        var sum = 0.0;
        var kept = 0u;
        for (var k = 0u; k < count; k++) {
            let w = as_sample(frame[first + k]).weight;
            if (w > ZERO_WEIGHT) {
                sum += w;
                kept += 1u;
            }
        }
        let blend = kind == LAYER_BLEND_LOCAL || kind == LAYER_BLEND_MESH;
        var x0 = IDENTITY_DELTA;
        if (kind == LAYER_BASE || blend) {
            x0 = target_reference(bone);
        }
        var x1 = x0;
        var acc = BLEND_EMPTY;
        // The one place clips are sampled, shared by every kind of layer: on SIMD devices each
        // call site would run for every lane.
        for (var k = 0u; k < count; k++) {
            let sample = as_sample(frame[first + k]);
            let w = sample.weight;
            if (!dynamic && w <= ZERO_WEIGHT) {
                continue;
            }
            let x = sample_clip(sample, bone);
            if (dynamic && k == 1u) {
                x1 = x;
            } else if (dynamic || kept == 1u) {
                x0 = x;
            } else {
                blend_add(&acc, x, w / sum);
            }
        }
        if (acc.started) {
            x0 = blend_result(acc);
        }
        if (kind == LAYER_BASE) {
            pose = x0;
            continue;
        }
        // The layer's weight at this bone; deferred layers that apply it in the layer stage
        // find it in their slot's translation w.
        let w = weight * mask_weight(layer.mask, bone);
        if (blend) {
            if (deferred) {
                x0.t.w = w;
                deltas[at] = x0;
            } else {
                pose = blend_two(pose, x0, w);
            }
            continue;
        }
        if (kind == LAYER_DYNAMIC_MESH) {
            x0.t.w = w;
            deltas[at] = x0;
            deltas[at + bones] = x1;
            continue;
        }
        var delta = x0;
        if (kind == LAYER_DYNAMIC_LOCAL) {
            delta = make_delta(x0, x1);
        }
        // A bone the mask leaves out gets the identity (the slot must not keep old data).
        var d = IDENTITY_DELTA;
        if (w > ZERO_WEIGHT) {
            d = weighted_delta(delta, w);
        } else if (!deferred) {
            continue;
        }
        if (deferred) {
            deltas[at] = d;
        } else {
            pose = apply_delta(pose, d);
        }
    }
    locals[index] = pose;
}
