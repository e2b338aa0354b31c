//! What a player plays: a track of clip segments laid end to end. Every clip of the library is
//! a track of one segment (track `k` is clip `k`); a montage adds a track of several.

use crate::library::ClipId;

/// A track: clip `k` of the library for `k` below its clip count, montages after them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrackId(pub u32);

impl From<u32> for TrackId {
    /// The track that plays clip `clip` whole.
    fn from(clip: u32) -> Self {
        Self(clip)
    }
}

impl From<ClipId> for TrackId {
    /// The track that plays `clip` whole.
    fn from(clip: ClipId) -> Self {
        Self(clip.0)
    }
}

/// `[start, end]` of a clip, in the clip's seconds, played forward at the track's rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// The clip (an ordinary clip, not an additive).
    pub clip: ClipId,
    /// Where the segment starts, in clip seconds (at least 0).
    pub start: f32,
    /// Where it ends, in clip seconds (after `start`, at most the clip's duration).
    pub end: f32,
}

impl Segment {
    /// Clip `clip` from `start` to `end` seconds.
    pub fn new(clip: impl Into<ClipId>, start: f32, end: f32) -> Self {
        let clip = clip.into();
        Self { clip, start, end }
    }
}

/// Clip segments played one after the other (UE's montage slot track, without sections or
/// blends between segments).
#[derive(Clone, Debug, PartialEq)]
pub struct Montage {
    /// The montage's name, for errors.
    pub name: String,
    /// The segments, in playing order (at least one).
    pub segments: Vec<Segment>,
}

impl Montage {
    /// A montage of `segments`, in order.
    pub fn new(name: &str, segments: &[Segment]) -> Self {
        Self {
            name: name.to_string(),
            segments: segments.to_vec(),
        }
    }
}
