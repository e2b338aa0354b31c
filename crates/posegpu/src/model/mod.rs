//! The data model, which knows nothing of how poses are evaluated: skeletons, clips and their
//! keys, bone masks, and the time mapping every sampler follows. Everything else builds on these.

mod asset;
mod bind;
mod clip;
mod keys;
mod mask;
mod skeleton;

pub use asset::{Asset, AssetFrame};
pub use bind::{BindOrigin, BindPose, BindSpace, RestPose};
pub use clip::{AdditiveSpace, BoneTrack, Channel, Clip, Curve, Interpolation, Notify};
pub use keys::{find_keys, map_time};
pub use mask::{mask_weights, MaskBranch};
pub use skeleton::{component_space, Bone, ReferencePose, Skeleton};

use crate::error::{Error, Result};

/// The index of `name` in `names`, or `name` read as an index; the error lists the names.
pub(crate) fn find_named<'a>(
    names: impl Iterator<Item = &'a str> + Clone,
    name: &str,
) -> Result<usize> {
    if let Some(i) = names.clone().position(|n| n == name) {
        return Ok(i);
    }
    match name.parse::<usize>() {
        Ok(i) if i < names.clone().count() => Ok(i),
        _ => Err(Error::UnknownAnimation {
            name: name.to_string(),
            available: names.collect::<Vec<_>>().join(", "),
        }),
    }
}
