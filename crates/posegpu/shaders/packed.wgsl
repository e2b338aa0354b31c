// Compressed clips (issue 31), prepended before clip.wgsl: a clip with CLIP_COMPRESSED keeps
// its keys as a packed block in `values` (its channel_base the block's first 16-byte word),
// read here word by word. The layout is the PACKED_* and RATE_* constants (src/layout/clips.rs);
// CPU twin: src/cpu/packed.rs (same words, same operations, in the same order); spec:
// docs/pose-math.md, "Compressed keys".

const CLIP_COMPRESSED: u32 = 16u;
const PACKED_HEADER_WORDS: u32 = 8u;
const PACKED_UNIFORM: u32 = 1u;
const PACKED_SEGMENTED: u32 = 2u;
const PACKED_QUANTIZED_SHIFT: u32 = 8u;
const PACKED_SEGMENT_KEYS: u32 = 16u;
const PACKED_DESCRIPTOR_WORDS: u32 = 2u;
const PACKED_INDEX_SHIFT: u32 = 19u;
const RATE_SHIFT: u32 = 5u;
const RATE_MASK: u32 = 31u;
const RATE_CONSTANT: u32 = 1u;
const RATE_RAW: u32 = 18u;
const RATE_STEP_SHIFT: u32 = 15u;
const BONE_PRESENT: u32 = 262144u;

struct PackedHeader {
    base: u32,
    keys: u32,
    first_time: f32,
    inv_step: f32,
    time_offset: u32,
    flags: u32,
    key_bits: u32,
    segment_table: u32,
    ranges: u32,
}

// Word `w` of the key values, counted in u32s.
fn packed_word(w: u32) -> u32 {
    return bitcast<u32>(values[w / 4u][w % 4u]);
}

fn packed_header(clip: ClipData) -> PackedHeader {
    let b = clip.channel_base * 4u;
    return PackedHeader(b, packed_word(b), bitcast<f32>(packed_word(b + 1u)),
        bitcast<f32>(packed_word(b + 2u)), packed_word(b + 3u), packed_word(b + 4u),
        packed_word(b + 5u), packed_word(b + 6u), packed_word(b + 7u));
}

// Bone `bone`'s descriptor: rates, STEP and present flags, and its first constant track's
// index; its first bit within a key and its first quantized track's index.
fn packed_bone(h: PackedHeader, bone: u32) -> vec2<u32> {
    let w = h.base + PACKED_HEADER_WORDS + PACKED_DESCRIPTOR_WORDS * bone;
    return vec2<u32>(packed_word(w), packed_word(w + 1u));
}

// Where one track lies: its rate, its first bit within a key, its range's first word and its
// index among the quantized tracks (as PackedHeader::locate in the twin).
struct Located {
    rate: u32,
    bit: u32,
    range: u32,
    quantized: u32,
}

fn packed_locate(h: PackedHeader, d: vec2<u32>, kind: u32) -> Located {
    var bit = d.y & ((1u << PACKED_INDEX_SHIFT) - 1u);
    var quantized = d.y >> PACKED_INDEX_SHIFT;
    var constant = d.x >> PACKED_INDEX_SHIFT;
    for (var j = 0u; j < kind; j++) {
        let r = (d.x >> (RATE_SHIFT * j)) & RATE_MASK;
        bit += packed_key_bits(r, j);
        quantized += select(0u, 1u, r > RATE_CONSTANT && r < RATE_RAW);
        constant += select(0u, 1u, r == RATE_CONSTANT);
    }
    let rate = (d.x >> (RATE_SHIFT * kind)) & RATE_MASK;
    var range = h.base + h.ranges + 6u * quantized;
    if (rate == RATE_CONSTANT) {
        range = h.base + h.ranges + 6u * (h.flags >> PACKED_QUANTIZED_SHIFT) + 3u * constant;
    }
    return Located(rate, bit, range, quantized);
}

// Whether the clip keys `bone` at all.
fn packed_present(clip: ClipData, bone: u32) -> bool {
    return (packed_bone(packed_header(clip), bone).x & BONE_PRESENT) != 0u;
}

fn rate_bits(rate: u32) -> u32 {
    if (rate == RATE_RAW) {
        return 32u;
    }
    if (rate > RATE_CONSTANT) {
        return rate - 1u;
    }
    return 0u;
}

fn packed_key_bits(rate: u32, kind: u32) -> u32 {
    if (rate == RATE_RAW && kind == 0u) {
        return 128u;
    }
    return 3u * rate_bits(rate);
}

// `count` bits (1 to 32) from bit `at`, least significant first.
fn read_bits(at: u32, count: u32) -> u32 {
    let i = at / 32u;
    let b = at % 32u;
    let lo = packed_word(i) >> b;
    let mask = select((1u << count) - 1u, 0xffffffffu, count == 32u);
    if (b + count <= 32u) {
        return lo & mask;
    }
    return (lo | (packed_word(i + 1u) << (32u - b))) & mask;
}

// The two keys around t and the blend factor: uniform keys by one multiply, others by a search
// of their times.
fn packed_keys(h: PackedHeader, t: f32) -> KeyPair {
    let last = max(h.keys, 1u) - 1u;
    if ((h.flags & PACKED_UNIFORM) == 0u) {
        var search = NO_SEARCH;
        search_keys(&search, ChannelData(h.time_offset, 0u, h.keys, 0u), t);
        return KeyPair(search.lo, search.hi, search.alpha);
    }
    if (last == 0u || t <= h.first_time) {
        return KeyPair(0u, 0u, 0.0);
    }
    let u = (t - h.first_time) * h.inv_step;
    if (u >= f32(last)) {
        return KeyPair(last, last, 0.0);
    }
    let k = floor(u);
    return KeyPair(u32(k), u32(k) + 1u, u - k);
}

// Track `kind` (0 rotation, 1 translation, 2 scale) of the bone of descriptor `d` at keys k.a
// and k.b into `xa` and `xb`: x, y, z (and a raw rotation's w); false for the reference
// (nothing stored). The track is located and its ranges read once for both keys.
fn packed_track(h: PackedHeader, d: vec2<u32>, kind: u32, k: KeyPair,
    xa: ptr<function, vec4<f32>>, xb: ptr<function, vec4<f32>>) -> bool {
    let at_track = packed_locate(h, d, kind);
    let rate = at_track.rate;
    let bit = at_track.bit;
    let range = at_track.range;
    let quantized = at_track.quantized;
    if (rate == 0u) {
        return false;
    }
    if (rate == RATE_CONSTANT) {
        *xa = vec4<f32>(bitcast<f32>(packed_word(range)), bitcast<f32>(packed_word(range + 1u)),
            bitcast<f32>(packed_word(range + 2u)), 0.0);
        *xb = *xa;
        return true;
    }
    let segmented = (h.flags & PACKED_SEGMENTED) != 0u;
    var ranges_words = 0u;
    if (segmented) {
        ranges_words = (6u * (h.flags >> PACKED_QUANTIZED_SHIFT) + 3u) / 4u;
    }
    let sa = h.base + packed_word(h.base + h.segment_table + k.a / PACKED_SEGMENT_KEYS);
    var sb = sa;
    if (k.a / PACKED_SEGMENT_KEYS != k.b / PACKED_SEGMENT_KEYS) {
        sb = h.base + packed_word(h.base + h.segment_table + k.b / PACKED_SEGMENT_KEYS);
    }
    let at_a = (sa + ranges_words) * 32u + (k.a % PACKED_SEGMENT_KEYS) * h.key_bits + bit;
    let at_b = (sb + ranges_words) * 32u + (k.b % PACKED_SEGMENT_KEYS) * h.key_bits + bit;
    var va = vec4<f32>(0.0);
    var vb = vec4<f32>(0.0);
    if (rate == RATE_RAW) {
        let n = select(3u, 4u, kind == 0u);
        for (var c = 0u; c < n; c++) {
            va[c] = bitcast<f32>(read_bits(at_a + 32u * c, 32u));
            vb[c] = bitcast<f32>(read_bits(at_b + 32u * c, 32u));
        }
        *xa = va;
        *xb = vb;
        return true;
    }
    let bits = rate_bits(rate);
    let steps = (1u << bits) - 1u;
    for (var c = 0u; c < 3u; c++) {
        let unit = bitcast<f32>(packed_word(range + 3u + c));
        let low = bitcast<f32>(packed_word(range + c));
        var pa = 255u << 8u;
        var pb = pa;
        if (segmented) {
            // An even byte: its pair (lo, hi) shares one word.
            let byte = quantized * 6u + c * 2u;
            pa = packed_word(sa + byte / 4u) >> (8u * (byte % 4u));
            pb = pa;
            if (sb != sa) {
                pb = packed_word(sb + byte / 4u) >> (8u * (byte % 4u));
            }
        }
        // N is an exact integer under 2^24 and N * unit + min one fma: the twin's mul_add gives
        // the same bits where the GPU fuses it.
        let qa = read_bits(at_a + c * bits, bits);
        let qb = read_bits(at_b + c * bits, bits);
        let na = (pa & 255u) * steps + qa * (((pa >> 8u) & 255u) - (pa & 255u));
        let nb = (pb & 255u) * steps + qb * (((pb >> 8u) & 255u) - (pb & 255u));
        va[c] = fma(f32(na), unit, low);
        vb[c] = fma(f32(nb), unit, low);
    }
    *xa = va;
    *xb = vb;
    return true;
}

// A decoded rotation key: a raw one as stored, a quantized one with w >= 0 rebuilt from the
// unit length; not normalized (the interpolation that follows normalizes).
fn packed_rotation(v: vec4<f32>, raw: bool) -> vec4<f32> {
    if (raw) {
        return v;
    }
    let w = sqrt(max(1.0 - (v.x * v.x + v.y * v.y + v.z * v.z), 0.0));
    return vec4<f32>(v.xyz, w);
}

// Source bone `bone`'s local at t: each track decoded at the two keys and interpolated as
// plain keys are (sample_channels); a reference track keeps fill's value (its rotation
// normalized). Only the rotation unless `full`.
fn packed_local(clip: ClipData, bone: u32, t: f32, fill: Xform, full: bool) -> Xform {
    let h = packed_header(clip);
    let d = packed_bone(h, bone);
    let k = packed_keys(h, t);
    var out = fill;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    for (var kind = 1u; kind < 3u; kind++) {
        if (full && packed_track(h, d, kind, k, &a, &b)) {
            let alpha = select(k.alpha, 0.0, (d.x & (1u << (RATE_STEP_SHIFT + kind))) != 0u);
            let v = vec4<f32>(a.xyz * (1.0 - alpha) + b.xyz * alpha, 0.0);
            if (kind == 1u) {
                out.t = v;
            } else {
                out.s = v;
            }
        }
    }
    if (packed_track(h, d, 0u, k, &a, &b)) {
        let raw = (d.x & RATE_MASK) == RATE_RAW;
        let qa = packed_rotation(a, raw);
        let qb = packed_rotation(b, raw);
        let alpha = select(k.alpha, 0.0, (d.x & (1u << RATE_STEP_SHIFT)) != 0u);
        let sign = select(-1.0, 1.0, dot(qa, qb) >= 0.0);
        out.r = normalize_quat(qa * (1.0 - alpha) + qb * (alpha * sign));
    } else {
        out.r = normalize_quat(out.r);
    }
    return out;
}
