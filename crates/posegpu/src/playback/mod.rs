//! Crowd playback: a sequence player per clip an instance plays (rate, basis, scale/bias/clamp,
//! start position, looping), full-pose blends kept in step by normalized phase (UE's sync groups
//! in their simplest form), montages of several clip segments, root motion per instance and
//! events for instances that finished a non-looping clip.
//!
//! This module holds the description ([`Agent`], [`Player`], [`Montage`]) and the packed
//! tracks; [`crate::Crowd`] steps it on the CPU and [`crate::GpuCrowd`] keeps the same state on
//! the GPU and advances it there (`shaders/advance.wgsl`, `shaders/root_motion.wgsl`).

mod player;
mod track;

pub use player::{PlayRate, Player};
pub(crate) use track::Timeline;
pub use track::{Montage, Segment, TrackId};

use crate::batch::RootLock;
use crate::retarget::IkWeights;

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
