// Clip sampling, shared by the stages that sample clips (prepended after common.wgsl): one
// bone of one clip at one time, retargeted by UE's translation modes or a character source's
// plan. CPU twin: src/cpu/clip.rs. The library's tables are bindings 2, 4, 5 and 6 of every
// stage that samples (src/gpu/shaders.rs lists each stage's).

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

// Per (character source, target bone), built once on the host (BonePlan in src/layout/, which
// documents the fields; docs/pose-math.md, "Retargeting between characters").
struct BonePlan {
    pre: vec4<f32>,
    post: vec4<f32>,
    outer_pre: vec4<f32>,
    outer_post: vec4<f32>,
    twist_axis: vec3<f32>,
    fraction: f32,
    t_rot: vec4<f32>,
    t_inv_scale: vec3<f32>,
    t_k: f32,
    t_w: vec3<f32>,
    path_start: u32,
    t_const: vec3<f32>,
    path_len: u32,
    t_sub: vec3<f32>,
    chord_len: u32,
    swing: vec3<f32>,
    parent_chord_len: u32,
    parent_swing: vec3<f32>,
    modes: u32,
    scale: vec3<f32>,
    t_cap: u32,
    t_wpre: vec4<f32>,
    t_wpost: vec4<f32>,
    t_par_inv: vec4<f32>,
    t_yaw_axis: vec3<f32>,
    source_rest: u32,
}

const CHANNEL_STEP: u32 = 1u;
const CHANNEL_STRIDE_SHIFT: u32 = 8u;
const KEYS_PRESENT: u32 = 1u;
const KEYS_MOVING: u32 = 8u;
const KEYS_STEP: u32 = 64u;
const KEYS_OWN_TIMES: u32 = 512u;
const KEYS_STRIDE_SHIFT: u32 = 16u;
const CLIP_SOURCES_SHIFT: u32 = 8u;
const CLIP_ADDITIVE: u32 = 1u;
const RETARGET_ORIENT: u32 = 1u;
const CLIP_PLAN: u32 = 4u;
const CLIP_GOALS: u32 = 8u;
const RETARGET_WORDS: u32 = 13u;
const PLAN_WORDS: u32 = 17u;
const PLAN_ROTATION: u32 = 3u;
const PLAN_REFERENCE: u32 = 0u;
const PLAN_MAPPED: u32 = 1u;
const PLAN_CHAIN: u32 = 2u;
const PLAN_SEGMENT_END: u32 = 3u;
const PLAN_DRIVEN: u32 = 4u;
const PATH_INVERSE: u32 = 0x80000000u;
const PATH_BONE: u32 = 0xffffffu;
const PATH_MIRROR_SHIFT: u32 = 24u;
const PATH_MIRRORED: u32 = 0x3f000000u;
const MIRROR_PATTERN_BITS: u32 = 3u;
const MIRROR_PATTERN: u32 = 7u;
const PLAN_MIRROR_SHIFT: u32 = 4u;
const MODE_SKELETON: u32 = 1u;
const MODE_ANIMATION_SCALED: u32 = 2u;
const MODE_ANIMATION_RELATIVE: u32 = 3u;
const MODE_ORIENT_AND_SCALE: u32 = 4u;
const ORIENT_PRECISION: f32 = 1e-3;
const ROOT_LOCK_REF_POSE: u32 = 1u;
const ROOT_LOCK_FIRST_FRAME: u32 = 2u;
const ROOT_LOCK_ZERO: u32 = 3u;
const ROOT_TRANSLATION_SHIFT: u32 = 8u;
const ROOT_ROTATION_SHIFT: u32 = 10u;
const ROOT_AXES_ALL: u32 = 0u;
const ROOT_AXES_PLANE: u32 = 1u;
const ROOT_AXES_NONE: u32 = 2u;

// The paths a pipeline variant can take (src/gpu/specialize.rs folds the branches they decide
// and drops what only those branches called): the library has plan clips, compressed clips;
// the frame locks roots. Every path is on unless the evaluator says otherwise. Conditions
// they decide combine with `&`, not `&&`: naga lowers `&&` to a branch through a variable,
// which no constant then decides.
override PLAN_CLIPS: bool = true;
override PACKED_CLIPS: bool = true;
override ROOT_LOCKS: bool = true;

// The library's root-motion bone and its up (in the bone's parent's frame): each stage that
// samples sets them (set_library).
var<private> root_bone: u32 = 0u;
var<private> root_up: vec3<f32> = vec3<f32>(0.0, 1.0, 0.0);
// The target's bone count, the stride of the retarget records' fields.
var<private> table_bones: u32 = 0u;

// Sets the library's facts above from a stage's uniform (Params, CrowdParams): each stage that
// samples calls it before it samples.
fn set_library(bone_count: u32, bone: u32, up: vec3<f32>) {
    table_bones = bone_count;
    root_bone = bone;
    root_up = up;
}

// The clip table: the library's clips, then their channels, one binding for both
// (src/library/tables.rs). A clip's channels are kind-major (all its source bones' translations,
// then rotations, then scales), so that lanes sampling neighbouring bones read neighbouring
// words, then (a clip of UE's modes) a bone-keys word per target bone (bone_keys);
// channel_base counts from the table's start and the clip's flags carry its source bone count
// above bit 8.
@group(0) @binding(2) var<storage, read> clip_table: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> times: array<f32>;
@group(0) @binding(5) var<storage, read> values: array<vec4<f32>>;
// The retarget table, 16-byte words: per source its BoneRetargets (RETARGET_WORDS words each,
// field-major: record_word), or a character source's BonePlans, its reference locals and its
// path entries (four per word), read word by word in the order of their fields; the bone
// masks; then the skeleton section the fused pass reads (src/library/tables.rs).
@group(0) @binding(6) var<storage, read> retarget: array<vec4<u32>>;

fn clip_data(clip: u32) -> ClipData {
    let w = clip_table[clip];
    return ClipData(bitcast<f32>(w.x), w.y, w.z, w.w);
}

fn channel_data(channel: u32) -> ChannelData {
    let w = clip_table[channel];
    return ChannelData(w.x, w.y, w.z, w.w);
}

// Channel `k` (0 translation, 1 rotation, 2 scale) of source bone `source` in `clip`.
fn clip_channel(clip: ClipData, source: u32, k: u32) -> ChannelData {
    return channel_data(clip.channel_base + k * (clip.flags >> CLIP_SOURCES_SHIFT) + source);
}

fn retarget_f32(w: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(retarget[w]);
}

fn retarget_xform(w: u32) -> Xform {
    return Xform(retarget_f32(w), retarget_f32(w + 1u), retarget_f32(w + 2u));
}

// Word `k` of target bone `bone`'s record (BoneRetarget) in the retarget section at word
// `base`. The section is field-major (word k of bone b at base + k * table_bones + b: lanes of
// neighbouring bones read neighbouring words); src/library/tables.rs lays it out. Each use
// loads the fields it reads, where it reads them: a mode loads its own.
fn record_word(base: u32, bone: u32, k: u32) -> u32 {
    return base + k * table_bones + bone;
}

// The Xform of fields k, k + 1 and k + 2 of a record: 1 source_ref, 4 target_ref, 7 relative.
fn record_xform(base: u32, bone: u32, k: u32) -> Xform {
    return Xform(retarget_f32(record_word(base, bone, k)),
        retarget_f32(record_word(base, bone, k + 1u)),
        retarget_f32(record_word(base, bone, k + 2u)));
}

// Word `k` of plan record `record` in the plan section at word `base`: the target bones'
// records are field-major (word k of bone b at base + k * table_bones + b), the IK goal
// records after them as they are (src/library/tables.rs).
fn plan_word(base: u32, record: u32, k: u32) -> u32 {
    if (record < table_bones) {
        return base + k * table_bones + record;
    }
    return base + record * PLAN_WORDS + k;
}

fn plan_f32(base: u32, record: u32, k: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(retarget[plan_word(base, record, k)]);
}

fn bone_plan(base: u32, record: u32) -> BonePlan {
    let p0 = plan_f32(base, record, 0u);
    let p1 = plan_f32(base, record, 1u);
    let p2 = plan_f32(base, record, 2u);
    let p3 = plan_f32(base, record, 3u);
    let p5 = plan_f32(base, record, 5u);
    let p13 = plan_f32(base, record, 13u);
    let p14 = plan_f32(base, record, 14u);
    let p15 = plan_f32(base, record, 15u);
    let w4 = plan_f32(base, record, 4u);
    let w6 = plan_f32(base, record, 6u);
    let w7 = retarget[plan_word(base, record, 7u)];
    let w8 = retarget[plan_word(base, record, 8u)];
    let w9 = retarget[plan_word(base, record, 9u)];
    let w10 = retarget[plan_word(base, record, 10u)];
    let w11 = retarget[plan_word(base, record, 11u)];
    let w12 = retarget[plan_word(base, record, 12u)];
    let w16 = retarget[plan_word(base, record, 16u)];
    return BonePlan(p0, p1, p2, p3, w4.xyz, w4.w, p5, w6.xyz, w6.w,
        bitcast<vec3<f32>>(w7.xyz), w7.w, bitcast<vec3<f32>>(w8.xyz), w8.w,
        bitcast<vec3<f32>>(w9.xyz), w9.w, bitcast<vec3<f32>>(w10.xyz), w10.w,
        bitcast<vec3<f32>>(w11.xyz), w11.w, bitcast<vec3<f32>>(w12.xyz), w12.w,
        p13, p14, p15, bitcast<vec3<f32>>(w16.xyz), w16.w);
}

// The weight of `bone` in the bone mask at word `mask` of the retarget table, four weights a
// word; 1 for mask 0 (none). As LibraryData::mask_weight in src/library/tables.rs.
fn mask_weight(mask: u32, bone: u32) -> f32 {
    if (mask == 0u) {
        return 1.0;
    }
    return bitcast<f32>(retarget[mask + bone / 4u][bone % 4u]);
}

// A curve channel's value at an already mapped time; 0 where the clip lacks the curve (as
// sample_curve in src/cpu/clip.rs).
fn sample_curve(ch: ChannelData, t: f32) -> f32 {
    if (ch.count == 0u) {
        return 0.0;
    }
    var search = NO_SEARCH;
    let k = channel_keys(&search, ch, t);
    let a = values[k.a].x;
    return a + (values[k.b].x - a) * k.alpha;
}

// The target's reference local of `bone`: the library's own table comes first.
fn target_reference(bone: u32) -> Xform {
    return record_xform(0u, bone, 4u);
}

// The last key search, reused by the next channel with the same key times (channels that share
// times share one stored array, which its first time's word names alone). NO_TIMES matches no
// channel (NO_SEARCH). One 16-byte word: the form resolve.wgsl writes.
struct KeySearch {
    time_offset: u32,
    lo: u32,
    hi: u32,
    alpha: f32,
}

const NO_TIMES: u32 = 0xffffffffu;
const NO_SEARCH = KeySearch(NO_TIMES, 0u, 0u, 0.0);

fn as_search(w: vec4<u32>) -> KeySearch {
    return KeySearch(w.x, w.y, w.z, bitcast<f32>(w.w));
}

fn search_word(s: KeySearch) -> vec4<u32> {
    return vec4<u32>(s.time_offset, s.lo, s.hi, bitcast<u32>(s.alpha));
}

// The search a stage has already made for the sample about to be sampled, at its time (the
// resolve pass's, which sample.wgsl and fused.wgsl read); NO_SEARCH otherwise. Each clip
// sampling starts from it, so channels with its key times skip their own search.
var<private> seeded_search: KeySearch = NO_SEARCH;

// The search of `sample`'s clip at its time, over its reference times (reference_channel);
// NO_SEARCH where it has none.
fn sample_search(sample: SampleEntry) -> KeySearch {
    let clip = clip_data(sample.clip_and_flags & ~INSTANCE_LOOP);
    let looping = (sample.clip_and_flags & INSTANCE_LOOP) != 0u;
    let t = map_time(sample.time, clip.duration, looping);
    var search = NO_SEARCH;
    if (PACKED_CLIPS & ((clip.flags & CLIP_COMPRESSED) != 0u)) {
        // Packed keys find their own (one multiply where uniform).
        return search;
    }
    let ch = reference_channel(clip);
    if (ch.count > 0u) {
        search_keys(&search, ch, t);
    }
    return search;
}

// times[lo] <= t < times[hi], or lo == hi before the first key and after the last.
fn search_keys(search: ptr<function, KeySearch>, ch: ChannelData, t: f32) {
    if ((*search).time_offset == ch.time_offset) {
        return;
    }
    let first = ch.time_offset;
    let last = ch.count - 1u;
    *search = KeySearch(ch.time_offset, 0u, 0u, 0.0);
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
    // A channel of one key (one that holds still) needs no search, and keeps the one made for
    // the channels around it (a baked clip's moving channels share their key times).
    if (ch.count == 1u) {
        return KeyPair(ch.value_offset, ch.value_offset, 0.0);
    }
    search_keys(search, ch, t);
    let step = (ch.flags & CHANNEL_STEP) != 0u;
    // Keys are stored key-major among the channels that share their times.
    let stride = ch.flags >> CHANNEL_STRIDE_SHIFT;
    return KeyPair(ch.value_offset + (*search).lo * stride, ch.value_offset + (*search).hi * stride,
        select((*search).alpha, 0.0, step));
}

// The translation retargeting modes, exactly as retarget_bone in src/cpu/clip.rs, for the
// bone whose record's first word is `head` (source, mode, flags, length ratio) in the section
// at word `base`.
fn retarget_bone(x: Xform, head: vec4<u32>, base: u32, bone: u32, additive: bool) -> Xform {
    var out = x;
    let mode = head.y;
    if (mode == MODE_SKELETON) {
        out.t = select(retarget_f32(record_word(base, bone, 5u)), vec4<f32>(0.0), additive);
    } else if (mode == MODE_ANIMATION_SCALED) {
        out.t = vec4<f32>(x.t.xyz * bitcast<f32>(head.w), 0.0);
    } else if (mode == MODE_ANIMATION_RELATIVE && !additive) {
        let rel = record_xform(base, bone, 7u);
        out.r = normalize_quat(quat_mul(x.r, rel.r));
        out.t = vec4<f32>(x.t.xyz + rel.t.xyz, 0.0);
        out.s = vec4<f32>(x.s.xyz * rel.s.xyz, 0.0);
    } else if (mode == MODE_ORIENT_AND_SCALE && !additive
        && (head.z & RETARGET_ORIENT) != 0u) {
        let s = retarget_f32(record_word(base, bone, 11u));
        let d = abs(x.t.xyz - s.xyz);
        if (max(d.x, max(d.y, d.z)) <= ORIENT_PRECISION) {
            out.t = retarget_f32(record_word(base, bone, 12u));
        } else {
            let rotation = retarget_f32(record_word(base, bone, 10u));
            out.t = vec4<f32>(s.w * quat_rotate(rotation, x.t.xyz), 0.0);
        }
    }
    return out;
}

// Target bone `bone`'s bone-keys word in `clip` (after the clip's channels; KEYS_PRESENT and
// the rest in src/layout/clips.rs).
fn bone_keys(clip: ClipData, bone: u32) -> vec4<u32> {
    return clip_table[clip.channel_base + 3u * (clip.flags >> CLIP_SOURCES_SHIFT) + 1u + bone];
}

// The key times a clip's samples are resolved on (a clip whose keys are not compressed): the
// times most of its moving channels share, in the word after its channels (count 0: none).
fn reference_channel(clip: ClipData) -> ChannelData {
    return channel_data(clip.channel_base + 3u * (clip.flags >> CLIP_SOURCES_SHIFT));
}

// A bone's channels at t from its bone-keys word: moving channels at the keys the search over
// the clip's reference times finds, one-key channels at their key; those absent keep fill's
// value (its rotation normalized). The operations of sample_channels on the same keys. As
// sample_keys in src/cpu/clip.rs.
fn sample_keys(clip: ClipData, keys: vec4<u32>, t: f32, fill: Xform,
    search: ptr<function, KeySearch>) -> Xform {
    let flags = keys.w;
    if ((flags & (KEYS_MOVING * 7u)) != 0u) {
        search_keys(search, reference_channel(clip), t);
    }
    // Per channel (x T, y R, z S): present, moving on the reference times, stepping.
    let kinds = vec3<u32>(1u, 2u, 4u);
    let present = (vec3<u32>(flags) & (kinds * KEYS_PRESENT)) != vec3<u32>(0u);
    let moving = (vec3<u32>(flags) & (kinds * KEYS_MOVING)) != vec3<u32>(0u);
    let step = (vec3<u32>(flags) & (kinds * KEYS_STEP)) != vec3<u32>(0u);
    let stride = flags >> KEYS_STRIDE_SHIFT;
    let a = keys.xyz + select(vec3<u32>(0u), vec3<u32>((*search).lo * stride), moving);
    let b = keys.xyz + select(vec3<u32>(0u), vec3<u32>((*search).hi * stride), moving);
    let alpha = select(vec3<f32>(0.0), vec3<f32>((*search).alpha), moving & !step);
    return interpolate(KeyPair(a.x, b.x, alpha.x), KeyPair(a.y, b.y, alpha.y),
        KeyPair(a.z, b.z, alpha.z), present, fill);
}

// A bone's three channels sampled at t; those absent keep fill's value (its rotation
// normalized). As sample_channels in src/cpu/clip.rs.
fn sample_channels(ct: ChannelData, cr: ChannelData, cs: ChannelData, t: f32, fill: Xform,
    search: ptr<function, KeySearch>) -> Xform {
    // Searched in this order (T, R, S): each carries its search over to the next.
    var kt = KeyPair(0u, 0u, 0.0);
    var kr = kt;
    var ks = kt;
    if (ct.count > 0u) {
        kt = channel_keys(search, ct, t);
    }
    if (cr.count > 0u) {
        kr = channel_keys(search, cr, t);
    }
    if (cs.count > 0u) {
        ks = channel_keys(search, cs, t);
    }
    let present = vec3<u32>(ct.count, cr.count, cs.count) > vec3<u32>(0u);
    return interpolate(kt, kr, ks, present, fill);
}

// fill with the present channels interpolated at their keys: translation and scale lerped,
// the rotation nlerped on the shorter arc; the rotation normalized either way. Shared by
// sample_channels and sample_keys (interpolate in src/cpu/clip.rs).
fn interpolate(kt: KeyPair, kr: KeyPair, ks: KeyPair, present: vec3<bool>, fill: Xform)
    -> Xform {
    var out = fill;
    if (present.x) {
        out.t = vec4<f32>(values[kt.a].xyz * (1.0 - kt.alpha) + values[kt.b].xyz * kt.alpha, 0.0);
    }
    if (present.y) {
        let qa = values[kr.a];
        let qb = values[kr.b];
        let sign = select(-1.0, 1.0, dot(qa, qb) >= 0.0);
        out.r = normalize_quat(qa * (1.0 - kr.alpha) + qb * (kr.alpha * sign));
    } else {
        out.r = normalize_quat(out.r);
    }
    if (present.z) {
        out.s = vec4<f32>(values[ks.a].xyz * (1.0 - ks.alpha) + values[ks.b].xyz * ks.alpha, 0.0);
    }
    return out;
}

// Source bone `bone`'s local in a plan clip at t; channels the clip lacks take the source's
// reference local, stored at word `rest` on. Only the rotation is sampled unless `full` (the
// translation and scale channels read as absent).
fn source_local(clip: ClipData, bone: u32, rest: u32, t: f32, full: bool,
    search: ptr<function, KeySearch>) -> Xform {
    if (PACKED_CLIPS & ((clip.flags & CLIP_COMPRESSED) != 0u)) {
        return packed_local(clip, bone, t, retarget_xform(rest + bone * 3u), full);
    }
    var ct = ChannelData(0u, 0u, 0u, 0u);
    var cs = ct;
    if (full) {
        ct = clip_channel(clip, bone, 0u);
        cs = clip_channel(clip, bone, 2u);
    }
    return sample_channels(ct, clip_channel(clip, bone, 1u), cs, t,
        retarget_xform(rest + bone * 3u), search);
}

// The diagonal D of a mirror sign pattern (pattern_signs in src/transform/mirror.rs).
fn pattern_signs(pattern: u32) -> vec3<f32> {
    return select(vec3<f32>(1.0), vec3<f32>(-1.0),
        (vec3<u32>(pattern) & vec3<u32>(1u, 2u, 4u)) != vec3<u32>(0u));
}

// D · q · D (reflect_rotation in src/transform/mirror.rs).
fn reflect_rotation(q: vec4<f32>, pattern: u32) -> vec4<f32> {
    let d = pattern_signs(pattern);
    return vec4<f32>(q.xyz * vec3<f32>(d.y * d.z, d.x * d.z, d.x * d.y), q.w);
}

// A source local as its unmirrored twin's, `bits` a path entry's mirror bits shifted down
// (unmirror in src/drive/plan.rs).
fn unmirror_local(l: Xform, bits: u32) -> Xform {
    let parent = bits & MIRROR_PATTERN;
    let own = (bits >> MIRROR_PATTERN_BITS) & MIRROR_PATTERN;
    return Xform(reflect_rotation(l.r, parent), vec4<f32>(l.t.xyz * pattern_signs(parent), l.t.w),
        vec4<f32>(l.s.xyz * pattern_signs(own), l.s.w));
}

// X, the composition of the sampled source locals over path entries start .. start + len (each
// read as its unmirrored twin's where it has mirror bits, inverted where PATH_INVERSE is set;
// the first is X itself), and X after the first `cap`.
struct PathFold {
    x: Xform,
    captured: Xform,
}

fn fold_path(clip: ClipData, rest: u32, t: f32, start: u32, len: u32, cap: u32, full: bool,
    search: ptr<function, KeySearch>) -> PathFold {
    var x = IDENTITY;
    var captured = IDENTITY;
    for (var k = 0u; k < len; k++) {
        let i = start + k;
        let e = retarget[i / 4u][i % 4u];
        var l = source_local(clip, e & PATH_BONE, rest, t, full, search);
        if ((e & PATH_MIRRORED) != 0u) {
            l = unmirror_local(l, e >> PATH_MIRROR_SHIFT);
        }
        if ((e & PATH_INVERSE) != 0u) {
            l = inverse_xform(l);
        }
        if (k == 0u) {
            x = l;
        } else {
            x = compose(l, x);
        }
        if (k + 1u == cap) {
            captured = x;
        }
    }
    return PathFold(x, captured);
}

// The smallest rotation taking rest (a unit direction) to chord's direction; the identity for a
// zero chord.
fn plan_swing(rest: vec3<f32>, chord: vec3<f32>) -> vec4<f32> {
    let len = length(chord);
    if (!(len > 0.0)) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    return find_between_normals(rest, chord * (1.0 / len));
}

// Target bone `bone` of a character source's clip at t, from its plan record: the CPU twin is
// apply_bone in src/drive/plan.rs (same operations, same order; factors that are the
// identity by construction are left out, and so are the samples the record does not read).
fn apply_plan(clip: ClipData, t: f32, bone: u32) -> Xform {
    let r = bone_plan(clip.retarget_base, bone);
    let driven = (r.modes & PLAN_DRIVEN) != 0u;
    if ((r.modes & PLAN_ROTATION) == PLAN_REFERENCE && !driven) {
        return Xform(normalize_quat(r.outer_post), vec4<f32>(r.t_const, 0.0),
            vec4<f32>(r.scale, 0.0));
    }
    var search = seeded_search;
    let parent = any(r.parent_swing != vec3<f32>(0.0));
    // X's translation is read by a driven translation or a parent swing without its own chord.
    let full = array<bool, 3>(driven || (parent && r.parent_chord_len == 0u), true, true);
    // X (main) and the two chords, folded in one loop: the sampling code is inlined once.
    let lens = array<u32, 3>(r.path_len, r.chord_len, r.parent_chord_len);
    let caps = array<u32, 3>(r.t_cap, 0u, 0u);
    var folds: array<PathFold, 3>;
    var first = r.path_start;
    for (var k = 0u; k < 3u; k++) {
        folds[k] = fold_path(clip, r.source_rest, t, first, lens[k], caps[k], full[k], &search);
        first += lens[k];
    }
    let main = folds[0];
    // Swings: this bone's own (its chord) and its parent's (its chord, or X itself), undone.
    let own = r.chord_len > 0u;
    var sc = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    if (own) {
        sc = plan_swing(r.swing, folds[1].x.t.xyz);
    }
    var sp_inv = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    if (parent) {
        let chord = select(main.x.t.xyz, folds[2].x.t.xyz, r.parent_chord_len > 0u);
        sp_inv = quat_conj(plan_swing(r.parent_swing, chord));
    }
    var rotation = r.outer_post;
    let mode = r.modes & PLAN_ROTATION;
    if (mode != PLAN_REFERENCE) {
        var xr = main.x.r;
        if (parent) {
            xr = quat_mul(sp_inv, xr);
        }
        if (own) {
            xr = quat_mul(xr, sc);
        }
        let e = quat_mul(quat_mul(r.pre, xr), r.post);
        var base = e;
        if (any(r.twist_axis != vec3<f32>(0.0))) {
            base = twist(e, r.twist_axis);
        }
        if (mode == PLAN_MAPPED) {
            rotation = e;
        } else if (mode == PLAN_CHAIN) {
            rotation = quat_mul(quat_mul(r.outer_pre, quat_pow(base, r.fraction)), r.outer_post);
        } else if (r.fraction != 0.0) {
            rotation = quat_mul(quat_mul(quat_mul(r.outer_pre, quat_pow(base, -r.fraction)), e),
                r.outer_post);
        } else {
            rotation = quat_mul(quat_mul(r.outer_pre, e), r.outer_post);
        }
    }
    var translation = r.t_const;
    if (driven) {
        var v = main.x.t.xyz * r.t_k - r.t_sub;
        if (parent) {
            v = quat_rotate(sp_inv, v);
        }
        var moved = quat_rotate(r.t_rot, v);
        if (r.t_cap > 0u) {
            // The rest offset W turns with the captured bones (or with their heading only).
            var d = quat_mul(quat_mul(r.t_wpre, main.captured.r), r.t_wpost);
            if (any(r.t_yaw_axis != vec3<f32>(0.0))) {
                d = twist(d, r.t_yaw_axis);
            }
            moved += quat_rotate(r.t_par_inv, quat_rotate(d, r.t_w));
        }
        translation += r.t_inv_scale * moved;
    }
    var out_r = normalize_quat(rotation);
    let mirror = (r.modes >> PLAN_MIRROR_SHIFT) & MIRROR_PATTERN;
    if (mirror != 0u) {
        // The unmirrored twin's local, under the target's reflected parent frame.
        out_r = reflect_rotation(out_r, mirror);
        translation *= pattern_signs(mirror);
    }
    return Xform(out_r, vec4<f32>(translation, 0.0), vec4<f32>(r.scale, 0.0));
}

fn horizontal(v: vec3<f32>) -> vec3<f32> {
    return v - root_up * dot(v, root_up);
}

// The parts of a root-motion bone's local transform that an axis mask (a root-lock code's
// bits above the lock) extracts as root motion, as root_extract in src/cpu/clip.rs.
fn root_extract(x: Xform, axes: u32) -> Xform {
    if (axes == 0u) {
        return x;
    }
    let tm = (axes >> ROOT_TRANSLATION_SHIFT) & 3u;
    let rm = (axes >> ROOT_ROTATION_SHIFT) & 3u;
    var t = x.t.xyz;
    if (tm == ROOT_AXES_PLANE) {
        t = horizontal(x.t.xyz);
    } else if (tm == ROOT_AXES_NONE) {
        t = vec3<f32>(0.0);
    }
    var r = x.r;
    if (rm == ROOT_AXES_PLANE) {
        r = twist(x.r, root_up);
    } else if (rm == ROOT_AXES_NONE) {
        r = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    return Xform(r, vec4<f32>(t, 0.0), vec4<f32>(1.0, 1.0, 1.0, 0.0));
}

// What an in-place sample's root-motion bone shows for a mask that extracts part of the
// motion: E(held) ∘ E(x)⁻¹ ∘ x, E = root_extract, as root_locked in src/cpu/clip.rs.
fn root_locked(x: Xform, held: Xform, axes: u32) -> Xform {
    var out = compose(relative(x, root_extract(x, axes)), root_extract(held, axes));
    out.r = normalize_quat(out.r);
    return out;
}

// One clip sample's local transform of `bone`, as Prepared::bone in src/cpu/clip.rs: an
// in-place sample's root-motion bone shows its lock instead of its animation, in the parts of
// its motion the sample's axis mask takes out.
fn sample_clip(sample: SampleEntry, bone: u32) -> Xform {
    let lock = sample.root_lock & ROOT_LOCK_MASK;
    let axes = sample.root_lock & ~ROOT_LOCK_MASK;
    let locked = ROOT_LOCKS & (bone == root_bone) & (lock != 0u);
    var held = IDENTITY;
    if (locked & (lock == ROOT_LOCK_REF_POSE)) {
        held = target_reference(bone);
        held.r = normalize_quat(held.r);
    }
    let clip = clip_data(sample.clip_and_flags & ~INSTANCE_LOOP);
    let looping = (sample.clip_and_flags & INSTANCE_LOOP) != 0u;
    let t = map_time(sample.time, clip.duration, looping);
    if (locked & (lock != ROOT_LOCK_FIRST_FRAME) & (axes == 0u)) {
        return held;
    }
    if (locked) {
        // A seed is a search at t; a first-frame lock samples at 0 too.
        seeded_search = NO_SEARCH;
    }
    // The animation at t, and for a first-frame lock the clip at 0 (one call site in a loop:
    // compilers that inline every call copy it once).
    let first_frame = locked & (lock == ROOT_LOCK_FIRST_FRAME);
    let times = array<f32, 2>(select(t, 0.0, first_frame & (axes == 0u)), 0.0);
    var xs: array<Xform, 2>;
    for (var k = 0u; k < select(1u, 2u, first_frame & (axes != 0u)); k++) {
        xs[k] = sample_clip_at(clip, times[k], bone);
    }
    if (!locked | (first_frame & (axes == 0u))) {
        return xs[0];
    }
    if (first_frame) {
        held = xs[1];
    }
    return root_locked(xs[0], held, axes);
}

// `bone` of `clip` at `t` (mapped into its range): retargeted through the clip's source. A
// clip with keys in the clip table finds them from its bone-keys word (one load from the
// clip), apart from its bone's retarget record; only a bone whose channels move on key times
// of their own reads its channel words through the record's source bone.
fn sample_clip_at(clip: ClipData, t: f32, bone: u32) -> Xform {
    let additive = (clip.flags & CLIP_ADDITIVE) != 0u;
    if (PLAN_CLIPS & ((clip.flags & CLIP_PLAN) != 0u)) {
        return apply_plan(clip, t, bone);
    }
    let base = clip.retarget_base;
    let head = retarget[record_word(base, bone, 0u)];
    let source = bitcast<i32>(head.x);

    // A bone with no source bone, or whose source bone has no track, keeps its reference.
    let packed = PACKED_CLIPS & ((clip.flags & CLIP_COMPRESSED) != 0u);
    var keys = vec4<u32>(0u);
    var ct = ChannelData(0u, 0u, 0u, 0u);
    var cr = ct;
    var cs = ct;
    var own_times = false;
    var keyed = false;
    if (packed) {
        keyed = source >= 0 && packed_present(clip, u32(source));
    } else {
        keys = bone_keys(clip, bone);
        own_times = (keys.w & KEYS_OWN_TIMES) != 0u;
        keyed = (keys.w & (KEYS_PRESENT * 7u)) != 0u;
        if (own_times) {
            ct = clip_channel(clip, u32(source), 0u);
            cr = clip_channel(clip, u32(source), 1u);
            cs = clip_channel(clip, u32(source), 2u);
        }
    }
    if (!keyed) {
        var out = IDENTITY_DELTA;
        if (!additive) {
            out = record_xform(base, bone, 4u);
        }
        out.r = normalize_quat(out.r);
        return out;
    }
    var fill = IDENTITY_DELTA;
    if (!additive) {
        fill = record_xform(base, bone, 1u);
    }
    var x: Xform;
    var search = seeded_search;
    if (packed) {
        x = packed_local(clip, u32(source), t, fill, true);
    } else if (own_times) {
        x = sample_channels(ct, cr, cs, t, fill, &search);
    } else {
        // A Skeleton-mode bone's translation is replaced: its keys are not read.
        let discarded = select(0u, KEYS_PRESENT | KEYS_MOVING, head.y == MODE_SKELETON);
        x = sample_keys(clip, vec4<u32>(keys.xyz, keys.w & ~discarded), t, fill, &search);
    }
    return retarget_bone(x, head, base, bone, additive);
}
