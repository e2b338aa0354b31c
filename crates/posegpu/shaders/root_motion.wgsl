// Crowd stage 2, one invocation per instance that extracts root motion: each kept player's
// root motion over its last step (relative(Root(t1), Root(t0)) of the root-motion bone's parts
// the instance's axis mask extracts, split where a looping track wraps and at segment
// boundaries, accumulated in play order), blended by weight (montage players only in
// montages-only mode), then the placement moved by it (unless the motion is ignored). CPU twin: src/cpu/root_motion.rs and Crowd::advance (src/cpu/crowd.rs).

struct RootMotionData {
    delta: Xform,
    placement: Xform,
}

@group(0) @binding(7) var<storage, read> players: array<PlayerData>;
@group(0) @binding(8) var<storage, read_write> motion: array<RootMotionData>;

// The parts `axes` extract of the root-motion bone at track position `pos` within segment
// `s`, retargeted as the pose is.
fn root_at(s: SegmentData, pos: f32, axes: u32) -> Xform {
    let t = map_time(segment_clip_time(s, pos), clip_data(s.clip).duration, false);
    return root_extract(sample_clip(SampleEntry(s.clip, t, 1.0, 0u), root_bone), axes);
}

// The root's motion from a to b (backwards when b < a), one piece per segment crossed. Both
// ends of a piece are sampled in one loop, and the ranges of a step in one loop below, so that
// the clip sampling is inlined once where a compiler inlines every call (lavapipe).
fn range_motion(track: u32, a: f32, b: f32, axes: u32) -> Xform {
    let t = track_at(track);
    let forward = b >= a;
    var acc = IDENTITY;
    for (var j = 0u; j < t.segment_count; j++) {
        let s = track_segment(t, select(t.segment_count - 1u - j, j, forward));
        let lo = max(min(a, b), s.track_start);
        let hi = min(max(a, b), segment_end(s));
        if (hi > lo) {
            let ends = array<f32, 2>(select(hi, lo, forward), select(lo, hi, forward));
            var roots: array<Xform, 2>;
            for (var k = 0u; k < 2u; k++) {
                roots[k] = root_at(s, ends[k], axes);
            }
            acc = compose(relative(roots[1], roots[0]), acc);
        }
    }
    return acc;
}

// x composed with itself n times, by squaring.
fn power(x: Xform, count: u32) -> Xform {
    var n = count;
    var acc = IDENTITY;
    var base = x;
    while (n > 0u) {
        if ((n & 1u) == 1u) {
            acc = compose(base, acc);
        }
        base = compose(base, base);
        n = n >> 1u;
    }
    return acc;
}

// One player's root motion over its last step: to the end it crossed, whole laps (one lap
// composed n − 1 times), then from the other end on; one range where it crossed none, or does
// not loop. The first piece composed onto the identity is the piece itself.
fn step_motion(p: PlayerData, axes: u32) -> Xform {
    let length = track_length(p.track);
    if (p.step_travel == 0.0 || length <= 0.0) {
        return IDENTITY;
    }
    let total = p.step_start + p.step_travel;
    let forward = p.step_travel > 0.0;
    let crossed = select(-floor(total / length), floor(total / length), forward);
    let wraps = player_loops(p) && crossed > 0.0;
    let n = u32(max(crossed, 0.0));
    let end = select(0.0, length, forward);
    let start = select(length, 0.0, forward);
    let rest = clamp(total - sign(p.step_travel) * crossed * length, 0.0, length);
    let starts = array<f32, 3>(p.step_start, start, start);
    let stops = array<f32, 3>(select(total, end, wraps), end, rest);
    var acc = IDENTITY;
    for (var k = 0u; k < select(1u, 3u, wraps); k++) {
        if (k == 1u && n <= 1u) {
            continue;
        }
        var piece = range_motion(p.track, starts[k], stops[k], axes);
        if (k == 1u) {
            piece = power(piece, n - 1u);
        }
        acc = compose(piece, acc);
    }
    return acc;
}

// A player's weight in the root motion: 0 for a player that is not a montage's in
// montages-only mode.
fn motion_weight(g: GroupData, p: PlayerData) -> f32 {
    return select(p.weight, 0.0, !extracts(g, p.track));
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_index(wg, num_wg, local_index);
    if (i >= crowd.group_count) {
        return;
    }
    let g = group_at(i);
    if ((g.flags & GROUP_ROOT_MOTION) == 0u) {
        motion[i].delta = IDENTITY;
        return;
    }
    set_library(crowd.bone_count, crowd.root_bone, crowd.root_up);
    let axes = (g.flags >> GROUP_LOCK_SHIFT) & ~ROOT_LOCK_MASK;
    // The blend rule: weights at or below ZERO_WEIGHT dropped, the rest renormalized; one kept
    // player's motion as it is. Players that give no root motion weigh nothing.
    var sum = 0.0;
    var kept = 0u;
    for (var k = 0u; k < g.player_count; k++) {
        let w = motion_weight(g, players[g.first_player + k]);
        if (w > ZERO_WEIGHT) {
            sum += w;
            kept += 1u;
        }
    }
    var out = IDENTITY;
    var acc = BLEND_EMPTY;
    for (var k = 0u; k < g.player_count; k++) {
        let p = players[g.first_player + k];
        let w = motion_weight(g, p);
        if (w <= ZERO_WEIGHT) {
            continue;
        }
        let x = step_motion(p, axes);
        if (kept == 1u) {
            out = x;
        } else {
            blend_add(&acc, x, w / sum);
        }
    }
    if (acc.started) {
        out = blend_result(acc);
    }
    // Measured in the root-motion bone's parent's frame; moved into the character's.
    out = compose(compose(inverse_xform(crowd.root_parent), out), crowd.root_parent);
    motion[i].delta = out;
    if ((g.flags & GROUP_IGNORE_MOTION) == 0u) {
        motion[i].placement = compose(out, motion[i].placement);
    }
}
