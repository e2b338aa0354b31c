//! Mirrored characters (negative scales) and plans: `docs/pose-math.md`, "Transforms". Plans
//! read and write component-space rotations, which a mirrored parent frame reflects; until
//! they unmirror such frames, a bone below a mirrored bone is refused. Mirrored leaves are
//! fine: a bone's own negative scale leaves its component rotation the TRS one.

use crate::error::{Error, Result};
use crate::model::Skeleton;

/// [`Error::MirroredRetarget`] for the first bone of `skeleton` whose parent's component-space
/// reference scale has a negative component (mirrored leaves pass).
pub(super) fn refuse_mirrored_frames(skeleton: &Skeleton, which: &str) -> Result<()> {
    let cs = skeleton.rest_component();
    let mirrored = (0..skeleton.len()).find(|&i| {
        skeleton
            .parent(i)
            .is_some_and(|p| cs[p].scale.min_element() < 0.0)
    });
    match mirrored {
        Some(i) => Err(Error::MirroredRetarget {
            which: which.to_string(),
            bone: skeleton.names()[i].clone(),
        }),
        None => Ok(()),
    }
}
