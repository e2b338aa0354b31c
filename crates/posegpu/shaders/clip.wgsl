// Clip sampling, shared by the stages that sample clips (prepended after common.wgsl): one
// bone of one clip at one time, retargeted. CPU twin: src/cpu/clip.rs. The library's tables
// are bindings 2 to 6 of every stage that samples (src/gpu/shaders.rs lists each stage's).

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
const ROOT_LOCK_REF_POSE: u32 = 1u;
const ROOT_LOCK_FIRST_FRAME: u32 = 2u;
const ROOT_LOCK_ZERO: u32 = 3u;

@group(0) @binding(2) var<storage, read> clips: array<ClipData>;
@group(0) @binding(3) var<storage, read> channels: array<ChannelData>;
@group(0) @binding(4) var<storage, read> times: array<f32>;
@group(0) @binding(5) var<storage, read> values: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> retarget: array<BoneRetarget>;

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

// The translation retargeting modes, exactly as retarget_bone in src/cpu/clip.rs.
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

// One clip sample's local transform of `bone`, as Prepared::bone in src/cpu/clip.rs: an
// in-place sample's root (bone 0) shows its lock instead of its animation.
fn sample_clip(sample: SampleEntry, bone: u32) -> Xform {
    let clip = clips[sample.clip_and_flags & ~INSTANCE_LOOP];
    let looping = (sample.clip_and_flags & INSTANCE_LOOP) != 0u;
    var t = map_time(sample.time, clip.duration, looping);
    let additive = (clip.flags & CLIP_ADDITIVE) != 0u;
    let r = clip.retarget_base + bone;
    if (bone == 0u && sample.root_lock == ROOT_LOCK_REF_POSE) {
        var out = retarget[0].target_ref;
        out.r = normalize_quat(out.r);
        return out;
    }
    if (bone == 0u && sample.root_lock == ROOT_LOCK_ZERO) {
        return IDENTITY;
    }
    if (bone == 0u && sample.root_lock == ROOT_LOCK_FIRST_FRAME) {
        t = 0.0;
    }
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
