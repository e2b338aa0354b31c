// Crowd playback state, shared by the advance and root-motion stages (prepended after
// common.wgsl). CPU twin: src/cpu/playback.rs (the records are src/layout/'s).
//
// Per chunk, `structure` (16-byte words) holds the chunk's groups (a GroupData per instance),
// then every track (TrackData), then every segment (SegmentData).

struct CrowdParams {
    dt: f32,
    group_count: u32,
    tracks: u32,
    segments: u32,
    root_up: vec3<f32>,
    root_bone: u32,
    root_parent: Xform,
    // The target's bone count (table_bones in clip.wgsl).
    bone_count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// One sequence player. `entry` is its clip sample in the chunk's frame buffer; `step_start`
// and `step_travel` are its last step, for the root-motion stage.
struct PlayerData {
    track: u32,
    flags: u32,
    entry: u32,
    _pad0: u32,
    position: f32,
    start_position: f32,
    weight: f32,
    interrupted: f32,
    rate: f32,
    basis: f32,
    scale: f32,
    bias: f32,
    clamp_min: f32,
    clamp_max: f32,
    step_start: f32,
    step_travel: f32,
}

// One instance's players: the first, how many, GROUP_* | root-lock code << GROUP_LOCK_SHIFT, and the
// instance's index in the crowd.
struct GroupData {
    first_player: u32,
    player_count: u32,
    flags: u32,
    instance: u32,
}

// A track: its segments, its length in seconds, and TRACK_MONTAGE for a montage's.
struct TrackData {
    first_segment: u32,
    segment_count: u32,
    length: f32,
    flags: u32,
}

// A segment: its clip, where it starts on its track and in its clip, and its length (seconds).
struct SegmentData {
    clip: u32,
    track_start: f32,
    clip_start: f32,
    length: f32,
}

const PLAYER_LOOP: u32 = 1u;
const GROUP_SYNC: u32 = 1u;
const GROUP_ROOT_MOTION: u32 = 2u;
const GROUP_MONTAGES_ONLY: u32 = 4u;
const GROUP_IGNORE_MOTION: u32 = 8u;
const GROUP_LOCK_SHIFT: u32 = 8u;
// The second player is the outgoing one; the frame's inertialization layer follows its sample.
const GROUP_TRANSITIONS: u32 = 16u;
const TRACK_MONTAGE: u32 = 1u;

@group(0) @binding(0) var<uniform> crowd: CrowdParams;
@group(0) @binding(1) var<storage, read> structure: array<vec4<u32>>;

fn player_loops(p: PlayerData) -> bool {
    return (p.flags & PLAYER_LOOP) != 0u;
}

fn group_at(instance: u32) -> GroupData {
    let w = structure[instance];
    return GroupData(w.x, w.y, w.z, w.w);
}

fn track_at(track: u32) -> TrackData {
    let w = structure[crowd.tracks + track];
    return TrackData(w.x, w.y, bitcast<f32>(w.z), w.w);
}

// Segment k of a track.
fn track_segment(track: TrackData, k: u32) -> SegmentData {
    let w = structure[crowd.segments + track.first_segment + k];
    return SegmentData(w.x, bitcast<f32>(w.y), bitcast<f32>(w.z), bitcast<f32>(w.w));
}

// Whether a player on `track` is locked and gives root motion (montage players alone in
// montages-only mode).
fn extracts(g: GroupData, track: u32) -> bool {
    return (g.flags & GROUP_MONTAGES_ONLY) == 0u || (track_at(track).flags & TRACK_MONTAGE) != 0u;
}

fn track_length(track: u32) -> f32 {
    return track_at(track).length;
}

fn segment_end(s: SegmentData) -> f32 {
    return s.track_start + s.length;
}

// Clip seconds at track position `pos`, clamped to the segment.
fn segment_clip_time(s: SegmentData, pos: f32) -> f32 {
    return s.clip_start + clamp(pos - s.track_start, 0.0, s.length);
}
