//! What a player plays: a track of clip segments laid end to end. Every clip of the library is
//! a track of one segment (track `k` is clip `k`); a montage adds a track of several.

use crate::error::{Error, Result};
use crate::layout::{SegmentData, TrackData, TRACK_MONTAGE};
use crate::library::AnimLibrary;

/// A track: clip `k` of the library for `k` below its clip count, montages after them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrackId(pub u32);

impl From<u32> for TrackId {
    /// The track that plays clip `clip` whole.
    fn from(clip: u32) -> Self {
        Self(clip)
    }
}

/// `[start, end]` of a clip, in the clip's seconds, played forward at the track's rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// The clip's index in the library (an ordinary clip, not an additive).
    pub clip: u32,
    /// Where the segment starts, in clip seconds (at least 0).
    pub start: f32,
    /// Where it ends, in clip seconds (after `start`, at most the clip's duration).
    pub end: f32,
}

impl Segment {
    /// Clip `clip` from `start` to `end` seconds.
    pub fn new(clip: u32, start: f32, end: f32) -> Self {
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

impl SegmentData {
    /// Clip seconds at track position `pos`, clamped to the segment.
    pub(crate) fn clip_time(&self, pos: f32) -> f32 {
        self.clip_start + (pos - self.track_start).clamp(0.0, self.length)
    }

    pub(crate) fn track_end(&self) -> f32 {
        self.track_start + self.length
    }
}

/// Every track of a crowd.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Timeline {
    pub tracks: Vec<TrackData>,
    pub segments: Vec<SegmentData>,
}

impl Timeline {
    /// One track per clip of `lib`, the clip whole.
    pub(crate) fn new(lib: &AnimLibrary) -> Self {
        let mut timeline = Self::default();
        for (c, clip) in lib.data().clips.iter().enumerate() {
            let whole = SegmentData {
                clip: c as u32,
                track_start: 0.0,
                clip_start: 0.0,
                length: clip.duration,
            };
            timeline.push(&[whole], 0);
        }
        timeline
    }

    fn push(&mut self, segments: &[SegmentData], flags: u32) -> TrackId {
        let id = TrackId(self.tracks.len() as u32);
        self.tracks.push(TrackData {
            first_segment: self.segments.len() as u32,
            segment_count: segments.len() as u32,
            length: segments.last().map_or(0.0, SegmentData::track_end),
            flags,
        });
        self.segments.extend_from_slice(segments);
        id
    }

    /// Adds a montage's track, checking that every segment lies within an ordinary clip.
    pub(crate) fn add_montage(&mut self, lib: &AnimLibrary, montage: &Montage) -> Result<TrackId> {
        let bad = |what: String| Error::Playback {
            what: format!("montage '{}': {what}", montage.name),
        };
        if montage.segments.is_empty() {
            return Err(bad("no segments".into()));
        }
        let mut segments = Vec::with_capacity(montage.segments.len());
        let mut at = 0.0;
        for (k, s) in montage.segments.iter().enumerate() {
            let c = s.clip as usize;
            let Some(clip) = lib.data().clips.get(c) else {
                let n = lib.clip_count();
                return Err(bad(format!(
                    "segment {k}: clip {c} does not exist (the library has {n})"
                )));
            };
            let name = &lib.clip_names()[c];
            if lib.clip_additive_space(c).is_some() {
                return Err(bad(format!(
                    "segment {k}: clip '{name}' is additive; montages play ordinary clips"
                )));
            }
            if !(s.start.is_finite() && s.end.is_finite())
                || s.start < 0.0
                || s.end > clip.duration
                || s.end <= s.start
            {
                return Err(bad(format!(
                    "segment {k}: [{}, {}] is not a non-empty range within clip '{name}' \
                     ([0, {}])",
                    s.start, s.end, clip.duration
                )));
            }
            segments.push(SegmentData {
                clip: s.clip,
                track_start: at,
                clip_start: s.start,
                length: s.end - s.start,
            });
            at += s.end - s.start;
        }
        Ok(self.push(&segments, TRACK_MONTAGE))
    }

    pub(crate) fn get(&self, track: TrackId) -> Option<&TrackData> {
        self.tracks.get(track.0 as usize)
    }

    pub(crate) fn length(&self, track: TrackId) -> f32 {
        self.tracks[track.0 as usize].length
    }

    /// True for a montage's track.
    pub(crate) fn is_montage(&self, track: TrackId) -> bool {
        self.tracks[track.0 as usize].flags & TRACK_MONTAGE != 0
    }

    pub(crate) fn segments(&self, track: TrackId) -> &[SegmentData] {
        let t = &self.tracks[track.0 as usize];
        let first = t.first_segment as usize;
        &self.segments[first..first + t.segment_count as usize]
    }

    /// The clip and clip seconds at track position `pos`: the last segment that starts at or
    /// before it (the first for positions before 0).
    pub(crate) fn locate(&self, track: TrackId, pos: f32) -> (u32, f32) {
        let segments = self.segments(track);
        let s = segments
            .iter()
            .rev()
            .find(|s| s.track_start <= pos)
            .unwrap_or(&segments[0]);
        (s.clip, s.clip_time(pos))
    }
}
