//! Crowd playback: a sequence player per clip an instance plays (rate, basis, scale/bias/clamp,
//! start position, looping), full-pose blends kept in step by normalized phase (UE's sync groups
//! in their simplest form), montages of several clip segments, root motion per instance,
//! events for instances that finished a non-looping clip, and the events a step crosses:
//! notifies, loops and montage segments.
//!
//! This module holds the description ([`Agent`], [`Player`], [`Montage`]) and the state it is
//! packed into: [`crate::Crowd`] (`crowd.rs`), its groups and tracks (`state.rs`, which the
//! crowd passes read through `shaders/playback.wgsl`). Two steppers advance that one state:
//! `cpu/crowd.rs` on the CPU and [`crate::GpuCrowd`] on the GPU (`shaders/advance.wgsl`,
//! `shaders/root_motion.wgsl`).

pub(crate) mod crowd;
mod player;
pub(crate) mod state;
mod track;

pub use player::{PlayRate, Player};
pub use track::{Montage, Segment, TrackId};

pub(crate) use crowd::Crowd;

use crate::batch::RootLock;
use crate::batch::RootMotionAxes;
use crate::drive::IkWeights;
use crate::layout::{EVENT_LOOPED, EVENT_NOTIFY, EVENT_SEGMENT};

/// What one instance plays: its players blended by weight, optionally kept in step.
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    /// The players, blended by their weights.
    pub players: Vec<Player>,
    /// Keeps the players in step by normalized phase (UE's sync group in its simplest form):
    /// the player with the highest weight leads (the first on a tie); the others take its
    /// phase, whatever their own rates.
    pub sync: bool,
    /// Extracts the root's motion each step into the instance's root-motion delta, and moves
    /// its placement by it.
    pub root_motion: bool,
    /// Takes the root's motion out of the pose (in-place playback): the root bone shows this
    /// instead of its animation.
    pub in_place: Option<RootLock>,
    /// IK after retargeting for this instance ([`crate::batch::InstanceLayers::ik`]); `None`:
    /// none.
    pub ik: Option<IkWeights>,
    /// Which parts of the root's motion are extracted (and, in place, taken out of the pose).
    pub root_axes: RootMotionAxes,
    /// Where root motion comes from, and whether it moves the placement.
    pub root_mode: RootMotionMode,
    /// Room for transitions ([`crate::Crowd::transition_to`]): the instance keeps a second
    /// player, the outgoing one (weight 0 between transitions). Single-player agents only, not
    /// synced.
    pub transitions: bool,
}

impl Agent {
    /// One player.
    pub fn new(player: Player) -> Self {
        Self::blend(&[player])
    }

    /// Several players blended by their weights.
    pub fn blend(players: &[Player]) -> Self {
        Self {
            players: players.to_vec(),
            sync: false,
            root_motion: false,
            in_place: None,
            ik: None,
            root_axes: RootMotionAxes::EVERYTHING,
            root_mode: RootMotionMode::FromEverything,
            transitions: false,
        }
    }

    /// With room for transitions to other clips ([`Agent::transitions`]).
    pub fn with_transitions(self) -> Self {
        Self {
            transitions: true,
            ..self
        }
    }

    /// IK after retargeting with these weights (feet on the ground where the source's are).
    pub fn with_ik(self, weights: IkWeights) -> Self {
        Self {
            ik: Some(weights),
            ..self
        }
    }

    /// The players kept in step by normalized phase (see [`Agent::sync`]).
    pub fn synced(self) -> Self {
        Self { sync: true, ..self }
    }

    /// Only these parts of the root's motion extracted (see [`RootMotionAxes`]).
    pub fn with_root_axes(self, root_axes: RootMotionAxes) -> Self {
        Self { root_axes, ..self }
    }

    /// Root motion from these players, applied or not (see [`RootMotionMode`]).
    pub fn with_root_mode(self, root_mode: RootMotionMode) -> Self {
        Self { root_mode, ..self }
    }

    /// Root motion extracted (and applied to the placement); with `in_place`, taken out of the
    /// pose as UE does when it extracts root motion.
    pub fn with_root_motion(self, in_place: Option<RootLock>) -> Self {
        Self {
            root_motion: true,
            in_place,
            ..self
        }
    }
}

/// Something a player's step passed ([`crate::Crowd::events`], [`crate::GpuCrowd::events`]):
/// a notify of its clip, the end of its looping track, or a boundary between montage segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Event {
    /// The instance, in the crowd.
    pub instance: u32,
    /// The player of the instance whose step it was.
    pub player: u32,
    /// What was passed.
    pub kind: EventKind,
}

/// What an [`Event`] passed. Each crossing is reported once: forward play passes a marker at
/// `x` when `from < x <= to`, backward play when `to <= x < from` (`to` unwrapped: a step of
/// several laps passes a marker once per lap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// A notify: its id in the library ([`crate::AnimLibrary::notify`]).
    Notify(u32),
    /// A looping track wrapped around (once per lap).
    Looped,
    /// A montage entered segment `k` from the one before it (forward) or after it (backward).
    Segment(u32),
}

impl EventKind {
    /// The kind of an event record's code and payload (`EVENT_*` in `shaders/advance.wgsl`).
    pub(crate) fn from_code([kind, payload]: [u32; 2]) -> Option<Self> {
        Some(match kind {
            EVENT_NOTIFY => Self::Notify(payload),
            EVENT_LOOPED => Self::Looped,
            EVENT_SEGMENT => Self::Segment(payload),
            _ => return None,
        })
    }
}

/// Where an instance's root motion comes from, as UE's root motion modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RootMotionMode {
    /// From every player (UE's root motion from everything; the default).
    #[default]
    FromEverything,
    /// From the players of montage tracks only: they play in place and move the placement,
    /// the other players keep their root motion in the pose (UE's root motion from montages
    /// only). Their weights are renormalized among the montage players.
    FromMontagesOnly,
    /// Extracted and reported ([`crate::Crowd::root_motion`]), and taken out of the pose in
    /// place, but the placement does not move (UE's ignore root motion).
    Ignore,
}

/// How [`crate::Crowd::transition_to`] moves an instance to its new clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transition {
    /// UE5's inertialization (Bollo): the new clip alone is evaluated; the offset to the old
    /// pose, and its velocity, decays to nothing over the blend time (a quintic, per bone).
    Inertialize,
    /// Both clips evaluated and blended, the new one's weight rising linearly from 0 to 1 over
    /// the blend time.
    Crossfade,
}
