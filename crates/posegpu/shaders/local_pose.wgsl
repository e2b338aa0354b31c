// An instance's local pose at one bone, shared by the stages that build it (sample.wgsl, and
// fused.wgsl where no later stage needs the bones apart): its clips sampled (retargeted when
// authored on another skeleton) and blended, then its layers (additives and layered blends,
// each weighted at this bone by its mask): applied here up to the instance's first mesh-space
// layer, written to delta slots (`deltas`, which each stage declares) for the layer stage from
// there on. CPU twin: src/cpu/local_pose.rs. Clip sampling: clip.wgsl.

// True for a batch in which every instance plays one clip with no layers: the pipeline built
// with it compiles the blend and layer code away (SIMD devices such as lavapipe run every branch
// for every lane).
override SINGLE_CLIP: bool = false;

// The key search of the sample at frame word `entry`, made once for all its bones by the
// resolve pass (resolve.wgsl).
fn seed(entry: u32) -> KeySearch {
    return as_search(frame[params.resolved_word + entry]);
}

// Invocation `index` of `params.instance_count * params.bone_count`: its instance's pose at its
// bone. The caller sets root_bone and root_up first.
fn bone_pose(index: u32) -> Xform {
    let bones = params.bone_count;
    let head = as_head(frame[index / bones]);
    let bone = index % bones;
    if (SINGLE_CLIP) {
        seeded_search = seed(head.first + 1u);
        return sample_clip(as_sample(frame[head.first + 1u]), bone);
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
        // With no sample kept, a base or a blend is the reference pose: loaded only then.
        if ((kind == LAYER_BASE || blend) && kept == 0u) {
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
            seeded_search = seed(first + k);
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
    return pose;
}
