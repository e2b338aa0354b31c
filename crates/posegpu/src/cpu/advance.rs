//! CPU twin of `shaders/advance.wgsl`: each instance's players stepped by `dt` (followers of a
//! synced instance take their leader's phase), wrapped when looping, stopped at either end
//! otherwise; and the markers each step passes (notifies, loops, montage segments).

use crate::layout::{GROUP_SYNC, MAX_EVENT_LAPS};
use crate::library::{AnimLibrary, ClipId};
use crate::model::map_time;
use crate::playback::state::Timeline;
use crate::playback::{EventKind, Player};

/// One step of a player: where it was, how far it went (signed), where it is now, and whether
/// it reached the end of a non-looping track in this step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Step {
    pub from: f32,
    /// Signed track seconds: the requested distance when looping, the distance actually
    /// covered up to the end otherwise.
    pub travel: f32,
    pub to: f32,
    pub finished: bool,
}

/// Moves a player at `from` by `travel` track seconds on a track of `length`: wrapped into
/// `[0, length)` when looping, stopped at either end otherwise. A zero-length track stays at 0.
pub(super) fn step(from: f32, travel: f32, length: f32, looping: bool) -> Step {
    if length <= 0.0 {
        return Step::default();
    }
    if looping {
        let to = map_time(from + travel, length, true);
        return Step {
            from,
            travel,
            to,
            finished: false,
        };
    }
    let to = (from + travel).clamp(0.0, length);
    let travel = to - from;
    Step {
        from,
        travel,
        to,
        finished: (travel > 0.0 && to >= length) || (travel < 0.0 && to <= 0.0),
    }
}

/// Steps every player of one instance into `steps` and moves it to its new position.
pub(crate) fn advance_group(
    timeline: &Timeline,
    players: &mut [Player],
    flags: u32,
    dt: f32,
    steps: &mut Vec<Step>,
) {
    let length = |p: &Player| timeline.length(p.track);
    let own = |p: &Player| step(p.position, p.rate.effective() * dt, length(p), p.looping);
    steps.clear();
    if flags & GROUP_SYNC != 0 && players.len() > 1 {
        let leader = leader(players);
        let lead = own(&players[leader]);
        let lead_length = length(&players[leader]);
        let phase = if lead_length > 0.0 {
            lead.to / lead_length
        } else {
            0.0
        };
        steps.extend(players.iter().enumerate().map(|(k, p)| {
            if k == leader {
                return lead;
            }
            let l = length(p);
            let travel = if lead_length > 0.0 {
                lead.travel * (l / lead_length)
            } else {
                0.0
            };
            // The follower's own range for its root motion; its new position is the phase.
            let mut s = step(p.position, travel, l, p.looping);
            s.to = map_time(phase * l, l, p.looping);
            s
        }));
    } else {
        steps.extend(players.iter().map(own));
    }
    for (p, s) in players.iter_mut().zip(steps.iter()) {
        p.position = s.to;
    }
}

/// The player with the highest weight, the first on a tie.
pub(crate) fn leader(players: &[Player]) -> usize {
    let mut best = 0;
    for (k, p) in players.iter().enumerate() {
        if p.weight > players[best].weight {
            best = k;
        }
    }
    best
}

/// Calls `emit` for every marker a player's step passes, on a track that loops or not: the
/// notifies of each segment's clip range, each segment boundary, and (looping) each wrap; a
/// marker at track position `x` (and `x + k·length` for a looping track) is passed when
/// `from < x <= end` playing forward, `end <= x < from` backward, `end = from + travel`. As
/// `emit_crossings` in `shaders/advance.wgsl`, marker for marker.
pub(crate) fn crossings(
    lib: &AnimLibrary,
    timeline: &Timeline,
    player: &Player,
    step: &Step,
    mut emit: impl FnMut(EventKind),
) {
    let length = timeline.length(player.track);
    if step.travel == 0.0 || length <= 0.0 {
        return;
    }
    let (from, end) = (step.from, step.from + step.travel);
    let laps = if player.looping {
        lap_range(from, end, length)
    } else {
        (0, 0)
    };
    let mut marker = |x: f32, kind: EventKind| {
        for k in laps.0..=laps.1 {
            let at = x + k as f32 * length;
            let passed = if end > from {
                from < at && at <= end
            } else {
                end <= at && at < from
            };
            if passed {
                emit(kind);
            }
        }
    };
    if player.looping {
        marker(0.0, EventKind::Looped);
    }
    for (j, s) in timeline.segments(player.track).iter().enumerate() {
        if j > 0 {
            let entered = if end > from { j } else { j - 1 };
            marker(s.track_start, EventKind::Segment(entered as u32));
        }
        for (id, n) in lib.clip_notifies(ClipId(s.clip)) {
            if n.time >= s.clip_start && n.time <= s.clip_start + s.length {
                marker(
                    s.track_start + (n.time - s.clip_start),
                    EventKind::Notify(id),
                );
            }
        }
    }
}

/// The laps `k` whose markers `x + k·length` a step from `from` to `end` may pass: one more on
/// each side than the division says (the comparisons decide), at most [`MAX_EVENT_LAPS`].
fn lap_range(from: f32, end: f32, length: f32) -> (i32, i32) {
    let lo = (from.min(end) / length).floor() as i32 - 1;
    let hi = (from.max(end) / length).floor() as i32 + 1;
    (lo, hi.min(lo + MAX_EVENT_LAPS as i32 + 1))
}
