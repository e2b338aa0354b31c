//! A crowd's packed playback state, and its readers: the CPU twin of `shaders/playback.wgsl`,
//! which reads the same records (the `structure` buffer [`crate::GpuCrowd`] uploads): each
//! instance's group of players, and the tracks with their clip segments, packed from the
//! description ([`super::Agent`], [`super::Player`], [`super::Montage`]). The records are
//! `layout/`'s.

use super::crowd::TransitionState;
use super::{Montage, TrackId};
use crate::batch::{RootLock, RootMotionAxes};
use crate::drive::IkWeights;
use crate::error::{Error, Result};
use crate::layout::{
    SegmentData, TrackData, GROUP_LOCK_SHIFT, GROUP_MONTAGES_ONLY, ROOT_LOCK_MASK, TRACK_MONTAGE,
};
use crate::library::AnimLibrary;

/// An instance's players: `first .. first + count` of the crowd's players (`GroupData`, read
/// by `group_at`), and what the host keeps beside them for the frame's IK and inertialization
/// layers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Group {
    pub first: u32,
    pub count: u32,
    /// `GROUP_*` | root-lock code (with its axis mask) << [`GROUP_LOCK_SHIFT`].
    pub flags: u32,
    /// The instance's IK weights, when it has them.
    pub ik: Option<IkWeights>,
    /// The transition under way ([`super::Crowd::transition_to`]).
    pub transition: Option<TransitionState>,
}

impl Group {
    pub(crate) fn lock(&self) -> Option<RootLock> {
        RootLock::from_code(self.flags >> GROUP_LOCK_SHIFT & ROOT_LOCK_MASK).flatten()
    }

    pub(crate) fn axes(&self) -> RootMotionAxes {
        RootMotionAxes::from_code(self.flags >> GROUP_LOCK_SHIFT & !ROOT_LOCK_MASK)
            .unwrap_or_default()
    }

    /// Whether a player on `track` is locked and gives root motion (in montages-only mode,
    /// montage players alone): `extracts`.
    pub(crate) fn extracts(&self, timeline: &Timeline, track: TrackId) -> bool {
        self.flags & GROUP_MONTAGES_ONLY == 0 || timeline.is_montage(track)
    }

    pub(crate) fn players(&self) -> std::ops::Range<usize> {
        self.first as usize..(self.first + self.count) as usize
    }
}

impl SegmentData {
    /// Clip seconds at track position `pos`, clamped to the segment: `segment_clip_time`.
    pub(crate) fn clip_time(&self, pos: f32) -> f32 {
        self.clip_start + (pos - self.track_start).clamp(0.0, self.length)
    }

    /// Where the segment ends on its track: `segment_end`.
    pub(crate) fn track_end(&self) -> f32 {
        self.track_start + self.length
    }
}

/// Every track of a crowd, and its segments (`track_at`, `track_segment`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Timeline {
    pub tracks: Vec<TrackData>,
    pub segments: Vec<SegmentData>,
}

impl Timeline {
    /// One track per clip of `lib`, the clip whole.
    pub(crate) fn new(lib: &AnimLibrary) -> Self {
        let mut timeline = Self::default();
        for c in 0..lib.clip_count() as u32 {
            let whole = SegmentData {
                clip: c,
                track_start: 0.0,
                clip_start: 0.0,
                length: lib.data().clip_data(c).duration,
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
            let c = s.clip.index();
            let Some(clip) = (c < lib.clip_count()).then(|| lib.data().clip_data(s.clip.0)) else {
                let n = lib.clip_count();
                return Err(bad(format!(
                    "segment {k}: clip {c} does not exist (the library has {n})"
                )));
            };
            let name = &lib.clip_names()[c];
            if lib.clip_additive_space(s.clip).is_some() {
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
                clip: s.clip.0,
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

    /// The track's length in seconds: `track_length`.
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
    /// before it (the first for positions before 0), as `locate` in `advance.wgsl`.
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
