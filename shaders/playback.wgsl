// Crowd playback state, shared by the advance and root-motion stages (prepended after
// common.wgsl). Rust twins: src/playback/ (logic) and src/gpu/crowd.rs (layouts).
//
// Per chunk, `layout` holds the chunk's groups (one per instance: first player, player count,
// flags, global instance index), then every track (first segment, segment count, length bits,
// 0), then every segment (clip, track start bits, clip start bits, length bits).

struct CrowdParams {
    dt: f32,
    group_count: u32,
    tracks: u32,
    segments: u32,
}

// One sequence player (PlayerData in src/gpu/crowd.rs). `entry` is its clip sample in the
// chunk's frame buffer; `step_start` and `step_travel` are its last step, for the root-motion stage.
struct Player {
    track: u32,
    flags: u32,
    entry: u32,
    _pad0: u32,
    position: f32,
    start_position: f32,
    weight: f32,
    _pad1: f32,
    rate: f32,
    basis: f32,
    scale: f32,
    bias: f32,
    clamp_min: f32,
    clamp_max: f32,
    step_start: f32,
    step_travel: f32,
}

const PLAYER_LOOP: u32 = 1u;
const GROUP_SYNC: u32 = 1u;
const GROUP_ROOT_MOTION: u32 = 2u;

@group(0) @binding(0) var<uniform> crowd: CrowdParams;
@group(0) @binding(1) var<storage, read> structure: array<vec4<u32>>;

fn player_loops(p: Player) -> bool {
    return (p.flags & PLAYER_LOOP) != 0u;
}

fn track_length(track: u32) -> f32 {
    return bitcast<f32>(structure[crowd.tracks + track].z);
}

// Segment k of a track.
fn track_segment(track: vec4<u32>, k: u32) -> vec4<u32> {
    return structure[crowd.segments + track.x + k];
}

fn segment_start(s: vec4<u32>) -> f32 {
    return bitcast<f32>(s.y);
}

fn segment_end(s: vec4<u32>) -> f32 {
    return bitcast<f32>(s.y) + bitcast<f32>(s.w);
}

// Clip seconds at track position `pos`, clamped to the segment.
fn segment_clip_time(s: vec4<u32>, pos: f32) -> f32 {
    return bitcast<f32>(s.z) + clamp(pos - bitcast<f32>(s.y), 0.0, bitcast<f32>(s.w));
}
