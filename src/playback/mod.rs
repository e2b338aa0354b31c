//! Crowd playback: a sequence player per clip an instance plays (rate, basis, scale/bias/clamp,
//! start position, looping), full-pose blends kept in step by normalized phase (UE's sync groups
//! in their simplest form), montages of several clip segments, root motion per instance and
//! events for instances that finished a non-looping clip.
//!
//! [`Crowd`] is the description and the CPU twin; [`crate::gpu::GpuCrowd`] keeps the same state
//! on the GPU and advances it there (`shaders/advance.wgsl`, `shaders/root_motion.wgsl`).

pub mod crowd;
pub mod player;
pub mod root_motion;
pub mod track;

pub use crowd::{Agent, Crowd};
pub use player::{PlayRate, Player};
pub use track::{Montage, Segment, TrackId};

/// What an in-place instance's root bone shows once its motion is taken out of the pose (UE's
/// root motion root lock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RootLock {
    /// The skeleton's reference pose (UE's default).
    #[default]
    RefPose,
    /// The clip's own root at time 0.
    FirstFrame,
    /// The identity transform.
    Zero,
}

impl RootLock {
    /// The code in a clip sample's fourth word (0: no lock).
    pub(crate) fn code(lock: Option<Self>) -> u32 {
        match lock {
            None => 0,
            Some(Self::RefPose) => 1,
            Some(Self::FirstFrame) => 2,
            Some(Self::Zero) => 3,
        }
    }

    pub(crate) fn from_code(code: u32) -> Option<Option<Self>> {
        Some(match code {
            0 => None,
            1 => Some(Self::RefPose),
            2 => Some(Self::FirstFrame),
            3 => Some(Self::Zero),
            _ => return None,
        })
    }
}
