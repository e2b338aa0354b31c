// The curve pass (its place in the frame: frame_plan.rs), one invocation per (instance, curve): the
// curve's value as the instance's layers blend it. A sample's value is its clip's curve at the
// sample's time (0 where the clip lacks it); the base blends its samples by the blend rule's
// weights; a layered blend moves the value toward its samples' blend by its weight; an additive (or
// dynamic) layer adds its weighted value (its pose's minus its base's). CPU twin:
// src/cpu/curves.rs.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
// Per clip, one channel per library curve (count 0 where the clip lacks it).
@group(0) @binding(7) var<storage, read> curve_table: array<ChannelData>;
@group(0) @binding(8) var<storage, read_write> curves: array<f32>;

fn curve_of(s: SampleEntry, curve: u32) -> f32 {
    let c = s.clip_and_flags & ~INSTANCE_LOOP;
    let t = map_time(s.time, clip_data(c).duration, (s.clip_and_flags & INSTANCE_LOOP) != 0u);
    return sample_curve(curve_table[c * params.curve_count + curve], t);
}

// The blend of `count` samples from entry `first` by the blend rule (0 where no weight is kept).
fn blend_curve(first: u32, count: u32, curve: u32) -> f32 {
    var sum = 0.0;
    for (var k = 0u; k < count; k++) {
        let w = as_sample(frame[first + k]).weight;
        if (w > ZERO_WEIGHT) {
            sum += w;
        }
    }
    var acc = 0.0;
    for (var k = 0u; k < count; k++) {
        let s = as_sample(frame[first + k]);
        if (s.weight > ZERO_WEIGHT) {
            acc += curve_of(s, curve) * (s.weight / sum);
        }
    }
    return acc;
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let index = invocation_index(wg, num_wg, local_index);
    let count = params.curve_count;
    if (count == 0u || index >= params.instance_count * count) {
        return;
    }
    let curve = index % count;
    let head = as_head(frame[index / count]);
    var value = 0.0;
    var e = head.first;
    for (var l = 0u; l < head.layers; l++) {
        let layer = as_layer(frame[e]);
        let kind = layer_kind(layer);
        let n = layer_samples(layer);
        let first = e + 1u;
        e = first + n;
        let w = layer.weight;
        if (kind == LAYER_BASE) {
            value = blend_curve(first, n, curve);
            continue;
        }
        if (layer_is_stage(kind) || w <= ZERO_WEIGHT) {
            continue;
        }
        if (kind == LAYER_BLEND_LOCAL || kind == LAYER_BLEND_MESH) {
            let layered = blend_curve(first, n, curve);
            value = select(value + (layered - value) * w, layered, w >= 1.0 - ZERO_WEIGHT);
        } else if (kind == LAYER_DYNAMIC_LOCAL || kind == LAYER_DYNAMIC_MESH) {
            let pose = curve_of(as_sample(frame[first]), curve);
            let base = curve_of(as_sample(frame[first + 1u]), curve);
            value += (pose - base) * w;
        } else {
            value += blend_curve(first, n, curve) * w;
        }
    }
    curves[index] = value;
}
