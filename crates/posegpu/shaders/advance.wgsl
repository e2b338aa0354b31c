// Crowd stage 1, one invocation per instance: steps its players by dt (followers of a synced
// instance take their leader's phase), writes each player's clip sample into the frame buffer
// the sampling stage reads, and lists the instance when a non-looping player reached its end.
// CPU twin: src/cpu/advance.rs.

@group(0) @binding(2) var<storage, read_write> players: array<PlayerData>;
@group(0) @binding(3) var<storage, read_write> frame: array<vec4<u32>>;
// events[0]: how many instances finished in this step; events[1..]: which (in any order).
@group(0) @binding(4) var<storage, read_write> events: array<atomic<u32>>;

const TINY: f32 = 1e-8;

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
    let lock = g.flags >> 8u;

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
        frame[p.entry] = sample_word(locate(p.track, s.to, p.weight, lock));
    }
    if (finished) {
        let n = atomicAdd(&events[0], 1u);
        atomicStore(&events[1u + n], g.instance);
    }
}
