//! Crowd playback (`src/playback/` describes it, `src/gpu/crowd/` keeps it on the GPU).

use bytemuck::{Pod, Zeroable};

use super::Xform;

/// Per crowd chunk and step, and the library's root-motion bone and its up axis (as in
/// [`Params`](super::Params)).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct CrowdParams {
    pub dt: f32,
    pub group_count: u32,
    /// Where the tracks and the segments start in the structure buffer (in 16-byte words).
    pub tracks: u32,
    pub segments: u32,
    pub root_up: [f32; 3],
    pub root_bone: u32,
    /// The root-motion bone's parent at the reference pose, in component space: root motion
    /// measured in its frame is turned into the character's (`P ∘ Δ ∘ P⁻¹`).
    pub root_parent: Xform,
    /// The target's bone count: the stride of the retarget records' fields on the GPU.
    pub bone_count: u32,
    pub pad0: u32,
    pub pad1: u32,
    pub pad2: u32,
}

/// One sequence player (64 bytes). `entry` is its clip sample in the chunk's frame buffer;
/// `step_start` and `step_travel` are its last step, for the root-motion stage.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct PlayerData {
    pub track: u32,
    /// [`PLAYER_LOOP`].
    pub flags: u32,
    pub entry: u32,
    pub _pad0: u32,
    pub position: f32,
    pub start_position: f32,
    pub weight: f32,
    /// An outgoing player's: seconds into the inertialized transition its own transition
    /// interrupts when asked for (the advance stage writes it, a step on, into the old pose's
    /// sample); −1 for none.
    pub interrupted: f32,
    pub rate: f32,
    pub basis: f32,
    pub scale: f32,
    pub bias: f32,
    pub clamp_min: f32,
    pub clamp_max: f32,
    pub step_start: f32,
    pub step_travel: f32,
}

/// [`PlayerData::flags`]: the player loops.
pub(crate) const PLAYER_LOOP: u32 = 1;

/// One instance's players in the structure buffer: the first, how many, `GROUP_*` flags |
/// root-lock code (with its axis mask) << [`GROUP_LOCK_SHIFT`], and the instance's index in the
/// crowd.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GroupData {
    pub first_player: u32,
    pub player_count: u32,
    pub flags: u32,
    pub instance: u32,
}

/// [`GroupData::flags`] from this bit up: the instance's root-lock code, with its axis mask
/// (a [`SampleEntry::root_lock`](super::SampleEntry::root_lock)).
pub(crate) const GROUP_LOCK_SHIFT: u32 = 8;
/// [`GroupData::flags`]: the players follow the leader's phase.
pub(crate) const GROUP_SYNC: u32 = 1;
/// [`GroupData::flags`]: the instance extracts root motion.
pub(crate) const GROUP_ROOT_MOTION: u32 = 2;
/// [`GroupData::flags`]: only montage players are locked and give root motion (UE's root
/// motion from montages only).
pub(crate) const GROUP_MONTAGES_ONLY: u32 = 4;
/// [`GroupData::flags`]: the root motion is extracted and reported, but the placement does not
/// move (UE's ignore root motion).
pub(crate) const GROUP_IGNORE_MOTION: u32 = 8;
/// [`GroupData::flags`]: the instance's second player is its outgoing one, and its frame ends
/// with an inertialization layer whose two samples the advance stage writes from it.
pub(crate) const GROUP_TRANSITIONS: u32 = 16;
/// An event record's kind (`[instance, player, kind, payload]`): a notify passed (payload: its
/// id), a looping track wrapped, a montage segment entered (payload: the segment).
pub(crate) const EVENT_NOTIFY: u32 = 0;
pub(crate) const EVENT_LOOPED: u32 = 1;
pub(crate) const EVENT_SEGMENT: u32 = 2;
/// The most laps of a looping track one step's events cover (a step longer than that reports
/// the crossings of its first laps only).
pub(crate) const MAX_EVENT_LAPS: u32 = 64;

/// A track: its segments and its length in seconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct TrackData {
    pub first_segment: u32,
    pub segment_count: u32,
    pub length: f32,
    /// [`TRACK_MONTAGE`].
    pub flags: u32,
}

/// [`TrackData::flags`]: a montage's track (`Crowd::add_montage`), not a clip's.
pub(crate) const TRACK_MONTAGE: u32 = 1;

/// A segment: its clip, where it starts on its track, where in its clip, and its length (in
/// seconds).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct SegmentData {
    pub clip: u32,
    pub track_start: f32,
    pub clip_start: f32,
    pub length: f32,
}

/// Per instance: its root motion over the last step, and its placement (96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct RootMotionData {
    pub delta: Xform,
    pub placement: Xform,
}
