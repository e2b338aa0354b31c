// Stage 1, one invocation per (instance, bone): the instance's base pose at this bone (clips
// sampled, retargeted when authored on another skeleton, blended), then its additive layers:
// applied here up to the instance's first mesh-space layer, written to delta slots for the
// layer stage from there on. CPU twins: src/cpu/sample.rs and src/retarget/runtime.rs.

struct ClipData {
    duration: f32,
    channel_base: u32,
    retarget_base: u32,
    flags: u32,
}

struct ChannelData {
    time_offset: u32,
    value_offset: u32,
    count: u32,
    flags: u32,
}

// Per (retarget source, target bone), built once on the host (BoneRetarget in Rust).
struct BoneRetarget {
    source: i32,
    mode: u32,
    flags: u32,
    length_ratio: f32,
    source_ref: Xform,
    target_ref: Xform,
    relative: Xform,
    orient_rotation: vec4<f32>,
    orient_source: vec4<f32>,
    orient_target: vec4<f32>,
}

const CHANNEL_STEP: u32 = 1u;
const CLIP_ADDITIVE: u32 = 1u;
const RETARGET_ORIENT: u32 = 1u;
const MODE_SKELETON: u32 = 1u;
const MODE_ANIMATION_SCALED: u32 = 2u;
const MODE_ANIMATION_RELATIVE: u32 = 3u;
const MODE_ORIENT_AND_SCALE: u32 = 4u;
const ORIENT_PRECISION: f32 = 1e-3;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> clips: array<ClipData>;
@group(0) @binding(3) var<storage, read> channels: array<ChannelData>;
@group(0) @binding(4) var<storage, read> times: array<f32>;
@group(0) @binding(5) var<storage, read> values: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> retarget: array<BoneRetarget>;
@group(0) @binding(7) var<storage, read_write> locals: array<Xform>;
@group(0) @binding(8) var<storage, read_write> deltas: array<Xform>;

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

// The last key search, reused by the next channel with the same key times (channels that share
// times share one stored array). count == 0 matches no channel that is searched.
struct KeySearch {
    time_offset: u32,
    count: u32,
    lo: u32,
    hi: u32,
    alpha: f32,
}

// times[lo] <= t < times[hi], or lo == hi before the first key and after the last.
fn search_keys(search: ptr<function, KeySearch>, ch: ChannelData, t: f32) {
    if ((*search).time_offset == ch.time_offset && (*search).count == ch.count) {
        return;
    }
    let first = ch.time_offset;
    let last = ch.count - 1u;
    *search = KeySearch(ch.time_offset, ch.count, 0u, 0u, 0.0);
    if (t <= times[first]) {
        return;
    }
    if (t >= times[first + last]) {
        (*search).lo = last;
        (*search).hi = last;
        return;
    }
    var lo = 0u;
    var hi = last;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (times[first + mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t0 = times[first + lo];
    (*search).lo = lo;
    (*search).hi = hi;
    (*search).alpha = (t - t0) / (times[first + hi] - t0);
}

// The two keys of a channel around t (absolute value indices) and the blend factor.
struct KeyPair {
    a: u32,
    b: u32,
    alpha: f32,
}

fn channel_keys(search: ptr<function, KeySearch>, ch: ChannelData, t: f32) -> KeyPair {
    search_keys(search, ch, t);
    let step = (ch.flags & CHANNEL_STEP) != 0u;
    return KeyPair(ch.value_offset + (*search).lo, ch.value_offset + (*search).hi, select((*search).alpha, 0.0, step));
}

// The translation retargeting modes, exactly as retarget_bone in src/retarget/runtime.rs.
fn retarget_bone(x: Xform, index: u32, additive: bool) -> Xform {
    var out = x;
    let mode = retarget[index].mode;
    if (mode == MODE_SKELETON) {
        out.t = select(retarget[index].target_ref.t, vec4<f32>(0.0), additive);
    } else if (mode == MODE_ANIMATION_SCALED) {
        out.t = vec4<f32>(x.t.xyz * retarget[index].length_ratio, 0.0);
    } else if (mode == MODE_ANIMATION_RELATIVE && !additive) {
        let rel = retarget[index].relative;
        out.r = normalize_quat(quat_mul(x.r, rel.r));
        out.t = vec4<f32>(x.t.xyz + rel.t.xyz, 0.0);
        out.s = vec4<f32>(x.s.xyz * rel.s.xyz, 0.0);
    } else if (mode == MODE_ORIENT_AND_SCALE && !additive
        && (retarget[index].flags & RETARGET_ORIENT) != 0u) {
        let s = retarget[index].orient_source;
        let d = abs(x.t.xyz - s.xyz);
        if (max(d.x, max(d.y, d.z)) <= ORIENT_PRECISION) {
            out.t = retarget[index].orient_target;
        } else {
            out.t = vec4<f32>(s.w * quat_rotate(retarget[index].orient_rotation, x.t.xyz), 0.0);
        }
    }
    return out;
}

// One clip sample's local transform of `bone`, as sample_bone in src/cpu/sample.rs.
fn sample_clip(sample: vec4<u32>, bone: u32) -> Xform {
    let clip = clips[sample.x & ~INSTANCE_LOOP];
    let t = map_time(bitcast<f32>(sample.y), clip.duration, (sample.x & INSTANCE_LOOP) != 0u);
    let additive = (clip.flags & CLIP_ADDITIVE) != 0u;
    let r = clip.retarget_base + bone;
    let source = retarget[r].source;

    // A bone with no source bone, or whose source bone has no track, keeps its reference.
    var ct = ChannelData(0u, 0u, 0u, 0u);
    var cr = ct;
    var cs = ct;
    if (source >= 0) {
        let base = clip.channel_base + u32(source) * 3u;
        ct = channels[base];
        cr = channels[base + 1u];
        cs = channels[base + 2u];
    }
    if (ct.count == 0u && cr.count == 0u && cs.count == 0u) {
        var out = IDENTITY_DELTA;
        if (!additive) {
            out = retarget[r].target_ref;
        }
        out.r = normalize_quat(out.r);
        return out;
    }

    var out = IDENTITY_DELTA;
    if (!additive) {
        out = retarget[r].source_ref;
    }
    var search = KeySearch(0u, 0u, 0u, 0u, 0.0);
    if (ct.count > 0u) {
        let k = channel_keys(&search, ct, t);
        out.t = vec4<f32>(values[k.a].xyz * (1.0 - k.alpha) + values[k.b].xyz * k.alpha, 0.0);
    }
    if (cr.count > 0u) {
        let k = channel_keys(&search, cr, t);
        let qa = values[k.a];
        let qb = values[k.b];
        let sign = select(-1.0, 1.0, dot(qa, qb) >= 0.0);
        out.r = normalize_quat(qa * (1.0 - k.alpha) + qb * (k.alpha * sign));
    } else {
        out.r = normalize_quat(out.r);
    }
    if (cs.count > 0u) {
        let k = channel_keys(&search, cs, t);
        out.s = vec4<f32>(values[k.a].xyz * (1.0 - k.alpha) + values[k.b].xyz * k.alpha, 0.0);
    }
    return retarget_bone(out, r, additive);
}

fn sample_weight(sample: vec4<u32>) -> f32 {
    return bitcast<f32>(sample.z);
}

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
    let head = frame[index / bones];
    let bone = index % bones;
    if (SINGLE_CLIP) {
        locals[index] = sample_clip(frame[head.x + 1u], bone);
        return;
    }
    var pose = IDENTITY_DELTA;
    var e = head.x;
    var slot = head.z;
    var deferred = false;
    for (var l = 0u; l < head.y; l++) {
        let header = frame[e];
        let kind = layer_kind(header);
        let count = layer_samples(header);
        let weight = bitcast<f32>(header.y);
        let first = e + 1u;
        e = first + count;
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
            let w = sample_weight(frame[first + k]);
            if (w > ZERO_WEIGHT) {
                sum += w;
                kept += 1u;
            }
        }
        var x0 = IDENTITY_DELTA;
        if (kind == LAYER_BASE) {
            x0 = retarget[bone].target_ref;
        }
        var x1 = x0;
        var r = vec4<f32>(0.0);
        var t = vec3<f32>(0.0);
        var s = vec3<f32>(0.0);
        var started = false;
        // The one place clips are sampled, shared by every kind of layer: on SIMD devices each
        // call site would run for every lane.
        for (var k = 0u; k < count; k++) {
            let w = sample_weight(frame[first + k]);
            if (!dynamic && w <= ZERO_WEIGHT) {
                continue;
            }
            let x = sample_clip(frame[first + k], bone);
            if (dynamic && k == 1u) {
                x1 = x;
            } else if (dynamic || kept == 1u) {
                x0 = x;
            } else {
                let wn = w / sum;
                let q = x.r * wn;
                // Each rotation flipped into the accumulator's hemisphere.
                r = select(r - q, r + q, !started || dot(r, q) >= 0.0);
                t += x.t.xyz * wn;
                s += x.s.xyz * wn;
                started = true;
            }
        }
        if (started) {
            x0 = Xform(normalize_quat(r), vec4<f32>(t, 0.0), vec4<f32>(s, 0.0));
        }
        if (kind == LAYER_BASE) {
            pose = x0;
            continue;
        }
        if (kind == LAYER_DYNAMIC_MESH) {
            deltas[at] = x0;
            deltas[at + bones] = x1;
            continue;
        }
        var delta = x0;
        if (kind == LAYER_DYNAMIC_LOCAL) {
            delta = make_delta(x0, x1);
        }
        let d = weighted_delta(delta, weight);
        if (deferred) {
            deltas[at] = d;
        } else {
            pose = apply_delta(pose, d);
        }
    }
    locals[index] = pose;
}
