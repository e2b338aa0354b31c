//! Compressed clips in a library: [`LibraryBuilder::compress`] chooses the clips, and
//! [`Compression`] packs them for the builder (which checks each block as it places it).

use std::sync::Arc;

use super::{check_tolerance, skeleton_height, CompressedClip, Input};
use crate::error::Result;
use crate::library::{
    ClipPacker, LibraryBuilder, LibraryData, PackedClip, RetargetSource, SourceKind,
};
use crate::{BoneTrack, Clip, Transform};

/// Which clips a [`LibraryBuilder`] compresses, and how closely.
#[derive(Clone, Debug, PartialEq)]
pub struct Compression {
    tolerance: f32,
    clips: Option<Vec<String>>,
}

impl Compression {
    /// Every clip added from now on, within `tolerance` × its skeleton's height
    /// ([`super::DEFAULT_TOLERANCE`] is the default the command line uses).
    pub fn all(tolerance: f32) -> Result<Self> {
        check_tolerance("(every clip)", tolerance)?;
        Ok(Self {
            tolerance,
            clips: None,
        })
    }

    /// Only the clips named `clips` among those added from now on.
    pub fn named(tolerance: f32, clips: &[&str]) -> Result<Self> {
        check_tolerance(clips.first().copied().unwrap_or("(no clip)"), tolerance)?;
        Ok(Self {
            tolerance,
            clips: Some(clips.iter().map(|c| c.to_string()).collect()),
        })
    }

    /// The tolerance, a fraction of the skeleton's height.
    pub fn tolerance(&self) -> f32 {
        self.tolerance
    }

    pub(crate) fn applies(&self, clip: &str) -> bool {
        self.clips
            .as_ref()
            .is_none_or(|c| c.iter().any(|n| n == clip))
    }
}

impl LibraryBuilder {
    /// Compresses the clips added after this call that `compression` names (every clip's keys
    /// packed at rates the optimizer chooses; `docs/pose-math.md`, "Compressed keys"); `None`
    /// stops compressing. Compressed and plain clips mix in one library and play alike, on
    /// the GPU and the CPU twin.
    pub fn compress(&mut self, compression: Option<Compression>) -> &mut Self {
        self.packer = compression.map(|c| Arc::new(c) as Arc<dyn ClipPacker>);
        self
    }
}

impl ClipPacker for Compression {
    fn pack(
        &self,
        data: &LibraryData,
        source: &RetargetSource,
        retarget_base: u32,
        clip: &Clip,
        goals: &[BoneTrack],
    ) -> Result<Option<PackedClip>> {
        if !self.applies(clip.name()) {
            return Ok(None);
        }
        let fill = fill_reference(data, source, retarget_base, clip, goals.len());
        let c = compress_for(source, clip, goals, fill, self.tolerance)?;
        Ok(Some(PackedClip {
            name: c.name().to_string(),
            block: c.block().to_vec(),
            times: (!c.uniform()).then(|| c.times().to_vec()),
        }))
    }
}

/// The values `clip`'s absent tracks play, per source bone then goal, read from the tables the
/// sampler reads them from: the identity delta (additive), a character source's stored
/// reference locals, or each bone's record's source reference (its own rest where no target
/// bone reads it); a goal, the identity.
fn fill_reference(
    data: &LibraryData,
    source: &RetargetSource,
    retarget_base: u32,
    clip: &Clip,
    goals: usize,
) -> Vec<Transform> {
    let bones = source.skeleton.len();
    let mut fill: Vec<Transform> = if clip.is_additive() {
        vec![crate::math::delta::IDENTITY_DELTA; bones]
    } else if source.kind == SourceKind::Character {
        let rest = data.bone_plan(retarget_base, 0).source_rest;
        (0..bones as u32)
            .map(|s| data.retarget_xform(rest + 3 * s).into())
            .collect()
    } else {
        let mut fill = source.skeleton.rest().to_vec();
        for b in (0..data.table_bones()).rev() {
            let r = data.bone_retarget(retarget_base, b);
            if let Ok(s) = usize::try_from(r.source) {
                if s < bones {
                    fill[s] = r.source_ref.into();
                }
            }
        }
        fill
    };
    fill.extend(std::iter::repeat_n(Transform::IDENTITY, goals));
    fill
}

/// `clip` (with `goals` after its bones) compressed for `source` within `tolerance`, absent
/// tracks playing `fill`.
fn compress_for(
    source: &RetargetSource,
    clip: &Clip,
    goals: &[BoneTrack],
    fill: Vec<Transform>,
    tolerance: f32,
) -> Result<CompressedClip> {
    let mut parents = source.skeleton.parents().to_vec();
    parents.extend(std::iter::repeat_n(-1, goals.len()));
    let rest = source.skeleton.rest();
    CompressedClip::compress(
        &Input {
            name: clip.name(),
            parents: &parents,
            tracks: clip.tracks().iter().chain(goals).collect(),
            reference: fill,
            base: clip.is_additive().then_some(rest),
            height: skeleton_height(&source.skeleton),
        },
        tolerance,
    )
}
