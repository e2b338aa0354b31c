// Crowd stage 1, one invocation per instance: steps its players by dt (followers of a synced
// instance take their leader's phase), writes each player's clip sample into the frame buffer
// the sampling stage reads, lists the instance when a non-looping player reached its end, and
// lists what each player's step passed: notifies, loops, montage segments. CPU twin:
// src/cpu/advance.rs.

@group(0) @binding(2) var<storage, read_write> players: array<PlayerData>;
@group(0) @binding(3) var<storage, read_write> frame: array<vec4<u32>>;
// events[0]: how many instances finished in this step; events[1..]: which (in any order).
@group(0) @binding(4) var<storage, read_write> events: array<atomic<u32>>;
// The library's notify table: per clip [first word, count], then per notify [time bits, id].
@group(0) @binding(5) var<storage, read> notify_table: array<vec4<u32>>;
// passed[0]: how many markers were passed in this step; from word 4, 16-byte records
// [instance, player, EVENT_*, payload] (in any order; those past the list's end are counted but
// not written).
@group(0) @binding(6) var<storage, read_write> passed: array<atomic<u32>>;

const EVENT_NOTIFY: u32 = 0u;
const EVENT_LOOPED: u32 = 1u;
const EVENT_SEGMENT: u32 = 2u;
const MAX_EVENT_LAPS: u32 = 64u;

// One player's step, for the markers it passes.
struct Crossing {
    instance: u32,
    player: u32,
    begin: f32,
    end: f32,
    length: f32,
    lap_lo: i32,
    lap_hi: i32,
}

fn record(c: Crossing, kind: u32, payload: u32) {
    let n = atomicAdd(&passed[0], 1u);
    let at = 4u + 4u * n;
    if (at + 3u < arrayLength(&passed)) {
        atomicStore(&passed[at], c.instance);
        atomicStore(&passed[at + 1u], c.player);
        atomicStore(&passed[at + 2u], kind);
        atomicStore(&passed[at + 3u], payload);
    }
}

// The marker at track position x (and x + k·length for every lap k of the step) passed?
fn marker(c: Crossing, x: f32, kind: u32, payload: u32) {
    for (var k = c.lap_lo; k <= c.lap_hi; k++) {
        let at = x + f32(k) * c.length;
        var crossed = c.end <= at && at < c.begin;
        if (c.end > c.begin) {
            crossed = c.begin < at && at <= c.end;
        }
        if (crossed) {
            record(c, kind, payload);
        }
    }
}

// Every marker a player's step passes, as crossings in src/cpu/advance.rs.
fn emit_crossings(instance: u32, player: u32, p: PlayerData, s: Step) {
    let length = track_length(p.track);
    if (s.travel == 0.0 || length <= 0.0) {
        return;
    }
    let end = s.start + s.travel;
    var c = Crossing(instance, player, s.start, end, length, 0, 0);
    let looping = player_loops(p);
    if (looping) {
        c.lap_lo = i32(floor(min(s.start, end) / length)) - 1;
        c.lap_hi = min(i32(floor(max(s.start, end) / length)) + 1, c.lap_lo + i32(MAX_EVENT_LAPS) + 1);
        marker(c, 0.0, EVENT_LOOPED, 0u);
    }
    let t = track_at(p.track);
    for (var j = 0u; j < t.segment_count; j++) {
        let seg = track_segment(t, j);
        if (j > 0u) {
            marker(c, seg.track_start, EVENT_SEGMENT, select(j - 1u, j, end > s.start));
        }
        let range = notify_table[seg.clip];
        for (var n = 0u; n < range.y; n++) {
            let w = notify_table[range.x + n];
            let time = bitcast<f32>(w.x);
            if (time >= seg.clip_start && time <= seg.clip_start + seg.length) {
                marker(c, seg.track_start + (time - seg.clip_start), EVENT_NOTIFY, w.y);
            }
        }
    }
}


// clamp(scale · (rate / basis) + bias, min, max); a basis within 1e-8 of 0 gives a ratio of 0.
fn effective_rate(p: PlayerData) -> f32 {
    var ratio = 0.0;
    if (abs(p.basis) > TINY) {
        ratio = p.rate / p.basis;
    }
    return min(max(ratio * p.scale + p.bias, p.clamp_min), p.clamp_max);
}

struct Step {
    start: f32,
    travel: f32,
    to: f32,
    finished: bool,
}

// Wrapped when looping; stopped at either end otherwise, with the distance actually covered.
fn step_player(start: f32, travel: f32, length: f32, looping: bool) -> Step {
    if (length <= 0.0) {
        return Step(0.0, 0.0, 0.0, false);
    }
    if (looping) {
        return Step(start, travel, map_time(start + travel, length, true), false);
    }
    let to = clamp(start + travel, 0.0, length);
    let moved = to - start;
    return Step(start, moved, to, (moved > 0.0 && to >= length) || (moved < 0.0 && to <= 0.0));
}

// The clip sample at track position `pos`: the last segment starting at or before it.
fn locate(track: u32, pos: f32, weight: f32, lock: u32) -> SampleEntry {
    let t = track_at(track);
    var s = track_segment(t, 0u);
    for (var k = t.segment_count; k > 1u; k--) {
        let c = track_segment(t, k - 1u);
        if (c.track_start <= pos) {
            s = c;
            break;
        }
    }
    return SampleEntry(s.clip, segment_clip_time(s, pos), weight, lock);
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
    let first = g.first_player;
    let count = g.player_count;
    let sync = (g.flags & GROUP_SYNC) != 0u && count > 1u;
    // The root-lock code with its axis mask; none at all without a lock.
    let code = g.flags >> GROUP_LOCK_SHIFT;
    let lock = select(0u, code, (code & ROOT_LOCK_MASK) != 0u);

    // The leader: the highest weight, the first on a tie.
    var leader = 0u;
    var lead = Step(0.0, 0.0, 0.0, false);
    var lead_length = 0.0;
    var phase = 0.0;
    if (sync) {
        for (var k = 1u; k < count; k++) {
            if (players[first + k].weight > players[first + leader].weight) {
                leader = k;
            }
        }
        let p = players[first + leader];
        lead_length = track_length(p.track);
        lead = step_player(p.position, effective_rate(p) * crowd.dt, lead_length, player_loops(p));
        if (lead_length > 0.0) {
            phase = lead.to / lead_length;
        }
    }

    var finished = false;
    for (var k = 0u; k < count; k++) {
        var p = players[first + k];
        let length = track_length(p.track);
        var s = lead;
        if (!sync) {
            s = step_player(p.position, effective_rate(p) * crowd.dt, length, player_loops(p));
        } else if (k != leader) {
            var travel = 0.0;
            if (lead_length > 0.0) {
                travel = lead.travel * (length / lead_length);
            }
            s = step_player(p.position, travel, length, player_loops(p));
            s.to = map_time(phase * length, length, player_loops(p));
        }
        finished = finished || s.finished;
        p.position = s.to;
        p.step_start = s.start;
        p.step_travel = s.travel;
        players[first + k] = p;
        let player_lock = select(0u, lock, extracts(g, p.track));
        frame[p.entry] = sample_word(locate(p.track, s.to, p.weight, player_lock));
        if (p.weight > ZERO_WEIGHT) {
            emit_crossings(g.instance, k, p, s);
        }
    }
    // An instance with transitions: its inertialization layer's two samples, the outgoing
    // player now and before this step (the host writes the layer's header).
    if ((g.flags & GROUP_TRANSITIONS) != 0u) {
        let p = players[first + 1u];
        let old_lock = select(0u, lock, extracts(g, p.track));
        // How far into a transition it interrupts, as of this step (−1: none).
        let interrupted = select(-1.0, p.interrupted + crowd.dt, p.interrupted >= 0.0);
        frame[p.entry + 2u] = sample_word(locate(p.track, p.position, interrupted, old_lock));
        frame[p.entry + 3u] = sample_word(locate(p.track, p.step_start, 1.0, old_lock));
    }
    if (finished) {
        let n = atomicAdd(&events[0], 1u);
        atomicStore(&events[1u + n], g.instance);
    }
}
