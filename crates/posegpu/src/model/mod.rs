//! The data model, which knows nothing of how poses are evaluated: skeletons, clips and their
//! keys, and the time mapping every sampler follows. Everything else builds on these.

mod clip;
mod keys;
mod skeleton;

pub use clip::{AdditiveSpace, BoneTrack, Channel, Clip, Interpolation};
pub use keys::{find_keys, map_time};
pub use skeleton::{component_space, Bone, ReferencePose, Skeleton};

use crate::error::{Error, Result};

/// A skeleton and the clips that animate it, as read from a file or built in code.
#[derive(Clone, Debug)]
pub struct Asset {
    /// The skeleton (bones parents-first).
    pub skeleton: Skeleton,
    /// Its clips, each with one track per bone.
    pub clips: Vec<Clip>,
    /// For glTF, the node index of each bone in the skeleton's (parents-first) order: what an
    /// exporter needs to write clips back onto the same file. `None` for BVH and procedural
    /// assets, which have no nodes.
    pub nodes: Option<Vec<usize>>,
}

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
