//! How an instance's root bone moves: locked in place, or its motion kept or dropped part by
//! part (`docs/pose-math.md`, "Root motion"). A sample's choices pack into its last word.

use crate::layout::{
    ROOT_AXES_ALL, ROOT_AXES_NONE, ROOT_AXES_PLANE, ROOT_LOCK_FIRST_FRAME, ROOT_LOCK_REF_POSE,
    ROOT_LOCK_ZERO, ROOT_ROTATION_SHIFT, ROOT_TRANSLATION_SHIFT,
};

/// What an in-place instance's root bone shows once its motion is taken out of the pose (UE's
/// root motion root lock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
            Some(Self::RefPose) => ROOT_LOCK_REF_POSE,
            Some(Self::FirstFrame) => ROOT_LOCK_FIRST_FRAME,
            Some(Self::Zero) => ROOT_LOCK_ZERO,
        }
    }

    pub(crate) fn from_code(code: u32) -> Option<Option<Self>> {
        Some(match code {
            0 => None,
            ROOT_LOCK_REF_POSE => Some(Self::RefPose),
            ROOT_LOCK_FIRST_FRAME => Some(Self::FirstFrame),
            ROOT_LOCK_ZERO => Some(Self::Zero),
            _ => return None,
        })
    }
}

/// One part of the root's motion ([`RootMotionAxes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RootPart {
    /// All of it.
    #[default]
    All,
    /// Translation: its part in the ground plane (perpendicular to the library's up); rotation:
    /// its yaw, the turn about up (the rest, pitch and roll, stays in the pose).
    Horizontal,
    /// None of it: it stays in the pose.
    None,
}

impl RootPart {
    fn code(self) -> u32 {
        match self {
            Self::All => ROOT_AXES_ALL,
            Self::Horizontal => ROOT_AXES_PLANE,
            Self::None => ROOT_AXES_NONE,
        }
    }

    fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            ROOT_AXES_ALL => Self::All,
            ROOT_AXES_PLANE => Self::Horizontal,
            ROOT_AXES_NONE => Self::None,
            _ => return None,
        })
    }
}

/// Which parts of the root bone's motion are extracted as root motion; an in-place instance
/// takes exactly those parts out of its pose and keeps the rest (a walk's bob and sway stay in
/// the pose, its travel and turn move the placement). Up is the library's
/// ([`crate::LibraryBuilder::set_root_motion_bone`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RootMotionAxes {
    /// Which part of the translation.
    pub translation: RootPart,
    /// Which part of the rotation.
    pub rotation: RootPart,
}

impl RootMotionAxes {
    /// All of the motion (UE's root motion; the default).
    pub const EVERYTHING: Self = Self {
        translation: RootPart::All,
        rotation: RootPart::All,
    };
    /// Motion in the ground plane: the horizontal translation and the yaw.
    pub const GROUND_PLANE: Self = Self {
        translation: RootPart::Horizontal,
        rotation: RootPart::Horizontal,
    };
    /// The yaw alone: the character turns; its travel stays in the pose.
    pub const YAW_ONLY: Self = Self {
        translation: RootPart::None,
        rotation: RootPart::Horizontal,
    };

    /// The bits a root-lock code carries above the lock.
    pub(crate) fn code(self) -> u32 {
        self.translation.code() << ROOT_TRANSLATION_SHIFT
            | self.rotation.code() << ROOT_ROTATION_SHIFT
    }

    /// The axes of a root-lock code; `None` for bits no mask has.
    pub(crate) fn from_code(code: u32) -> Option<Self> {
        if code >> (ROOT_ROTATION_SHIFT + 2) != 0 {
            return None;
        }
        Some(Self {
            translation: RootPart::from_code(code >> ROOT_TRANSLATION_SHIFT & 3)?,
            rotation: RootPart::from_code(code >> ROOT_ROTATION_SHIFT & 3)?,
        })
    }
}
