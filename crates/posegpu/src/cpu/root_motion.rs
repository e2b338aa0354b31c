//! Root motion: how the library's root-motion bone (bone 0 unless set, as in UE) moved over a
//! step of a player, as `relative(Root(t1), Root(t0))` of the parts its axes extract, split where a looping track wraps and at montage segment
//! boundaries, the pieces accumulated in the order they are played (`acc = compose(piece,
//! acc)`), backwards for backwards play. CPU twin of `shaders/root_motion.wgsl`. Spec:
//! `docs/pose-math.md`, "Root motion".

use super::advance::{step, Step};
use super::clip::{root_extract, sample_bone, KeySearch};
use crate::batch::RootMotionAxes;
use crate::error::{Error, Result};
use crate::layout::SegmentData;
use crate::library::{AnimLibrary, ClipId};
use crate::model::map_time;
use crate::playback::state::Timeline;
use crate::playback::TrackId;
use crate::Transform;

/// The parts `axes` extract of the root-motion bone's local transform (retargeted, as the pose
/// samples it) at track position `pos` within `segment`.
pub(crate) fn root_at(
    lib: &AnimLibrary,
    segment: &SegmentData,
    pos: f32,
    axes: RootMotionAxes,
) -> Transform {
    let (clip, data) = (segment.clip as usize, lib.data());
    let t = map_time(
        segment.clip_time(pos),
        data.clip_data(segment.clip).duration,
        false,
    );
    let x = sample_bone(
        lib,
        clip,
        data.root_bone as usize,
        t,
        &mut KeySearch::default(),
    );
    root_extract(&x, axes, data.root_up_local)
}

/// The root's motion from track position `a` to `b` (backwards when `b < a`), without
/// wrapping: one piece per segment crossed, in play order.
pub(crate) fn range(
    lib: &AnimLibrary,
    timeline: &Timeline,
    track: TrackId,
    a: f32,
    b: f32,
    axes: RootMotionAxes,
) -> Transform {
    let segments = timeline.segments(track);
    let forward = b >= a;
    let mut acc = Transform::IDENTITY;
    for j in 0..segments.len() {
        let s = &segments[if forward { j } else { segments.len() - 1 - j }];
        let lo = a.min(b).max(s.track_start);
        let hi = a.max(b).min(s.track_end());
        if hi > lo {
            let (x0, x1) = if forward { (lo, hi) } else { (hi, lo) };
            let piece = Transform::relative(&root_at(lib, s, x1, axes), &root_at(lib, s, x0, axes));
            acc = Transform::compose(&piece, &acc);
        }
    }
    acc
}

/// `x` composed with itself `n` times (by squaring: a step may cover many loops).
pub(super) fn power(x: &Transform, mut n: u32) -> Transform {
    let (mut acc, mut base) = (Transform::IDENTITY, *x);
    while n > 0 {
        if n & 1 == 1 {
            acc = Transform::compose(&base, &acc);
        }
        base = Transform::compose(&base, &base);
        n >>= 1;
    }
    acc
}

/// The root's motion over one step of a player on `track`.
pub(crate) fn step_motion(
    lib: &AnimLibrary,
    timeline: &Timeline,
    track: TrackId,
    step: &Step,
    looping: bool,
    axes: RootMotionAxes,
) -> Transform {
    let length = timeline.length(track);
    let (from, travel) = (step.from, step.travel);
    if travel == 0.0 || length <= 0.0 {
        return Transform::IDENTITY;
    }
    let total = from + travel;
    // Ends crossed: forward past `length`, or backward past 0.
    let crossed = if travel > 0.0 {
        (total / length).floor()
    } else {
        -(total / length).floor()
    };
    if !looping || crossed <= 0.0 {
        return range(lib, timeline, track, from, total, axes);
    }
    let n = crossed as u32;
    let (end, start) = if travel > 0.0 {
        (length, 0.0)
    } else {
        (0.0, length)
    };
    let rest = (total - travel.signum() * crossed * length).clamp(0.0, length);
    let mut acc = range(lib, timeline, track, from, end, axes);
    if n > 1 {
        let lap = range(lib, timeline, track, start, end, axes);
        acc = Transform::compose(&power(&lap, n - 1), &acc);
    }
    Transform::compose(&range(lib, timeline, track, start, rest, axes), &acc)
}

/// The root motion of single clips, for callers that keep each instance's playback themselves
/// (an engine's ECS) rather than in a [`crate::Crowd`]: the same motion a crowd's player of
/// that clip extracts over the same step, in the character's frame.
pub struct ClipMotion<'a> {
    lib: &'a AnimLibrary,
    timeline: Timeline,
}

impl<'a> ClipMotion<'a> {
    /// Root motion of `lib`'s clips (its root-motion bone and up).
    pub fn new(lib: &'a AnimLibrary) -> Self {
        Self {
            lib,
            timeline: Timeline::new(lib),
        }
    }

    /// The root's motion while `clip` plays from `time` (seconds; wrapped into the clip when
    /// `looping`, clamped otherwise) for `travel` seconds of clip time (negative: backwards),
    /// past its end and round again when `looping`, stopping at the end otherwise. `axes` say
    /// which parts are extracted (those an instance sampled with the same axes and a root lock
    /// leaves out of its pose).
    pub fn step(
        &self,
        clip: impl Into<ClipId>,
        time: f32,
        travel: f32,
        looping: bool,
        axes: RootMotionAxes,
    ) -> Result<Transform> {
        let clip = clip.into();
        let track = TrackId::from(clip);
        if clip.index() >= self.lib.clip_count() || !time.is_finite() || !travel.is_finite() {
            return Err(Error::Playback {
                what: format!(
                    "no root motion of clip {} from {time} s over {travel} s (the library \
                     has {} clips; times must be finite)",
                    clip.0,
                    self.lib.clip_count()
                ),
            });
        }
        let length = self.timeline.length(track);
        let from = if looping {
            map_time(time, length, true)
        } else {
            time.clamp(0.0, length)
        };
        let s = step(from, travel, length, looping);
        let motion = step_motion(self.lib, &self.timeline, track, &s, looping, axes);
        // Measured in the root-motion bone's parent's frame; moved into the character's.
        let parent = &self.lib.data().root_parent;
        Ok(Transform::compose(
            &Transform::compose(&parent.inverse(), &motion),
            parent,
        ))
    }
}
