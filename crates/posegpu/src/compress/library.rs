//! Compressed clips in a library: [`LibraryBuilder::compress`] chooses the clips, and the
//! builder packs each one's block into the key values (`values`), checked word by word first
//! ([`check_block`]).

use super::{check_tolerance, skeleton_height, CompressedClip, Input};
use crate::cpu::packed::{key_bits, range_words, PackedHeader};
use crate::error::{Error, Result};
use crate::layout::{
    ClipData, PACKED_HEADER_WORDS, PACKED_QUANTIZED_SHIFT, PACKED_SEGMENTED, PACKED_SEGMENT_KEYS,
    PACKED_UNIFORM, RATE_CONSTANT, RATE_MASK, RATE_RAW, RATE_SHIFT,
};
use crate::library::{LibraryBuilder, LibraryData, RetargetSource, SourceKind};
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
        self.compression = compression;
        self
    }
}

/// The values `clip`'s absent tracks play, per source bone then goal, read from the tables the
/// sampler reads them from: the identity delta (additive), a character source's stored
/// reference locals, or each bone's record's source reference (its own rest where no target
/// bone reads it); a goal, the identity.
pub(crate) fn fill_reference(
    data: &LibraryData,
    source: &RetargetSource,
    retarget_base: u32,
    clip: &Clip,
    goals: usize,
) -> Vec<Transform> {
    let bones = source.skeleton.len();
    let mut fill: Vec<Transform> = if clip.is_additive() {
        vec![crate::additive::IDENTITY_DELTA; bones]
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
pub(crate) fn compress_for(
    source: &RetargetSource,
    clip: &Clip,
    goals: &[BoneTrack],
    fill: Vec<Transform>,
    tolerance: f32,
) -> CompressedClip {
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

/// Checks that `block` holds together for `bones` source bones before it enters a library:
/// every descriptor's rates are rates, every offset within the block, every segment's bits
/// within it. A damaged block is a typed error, not a read past the table on the GPU.
pub(crate) fn check_block(name: &str, block: &[u32], bones: usize, times: usize) -> Result<()> {
    let bad = |what: String| Error::PackedBlock {
        clip: name.to_string(),
        what,
    };
    let len = block.len() as u64;
    let header = PACKED_HEADER_WORDS as u64 + 4 * bones as u64;
    if len < header {
        return Err(bad(format!(
            "{len} words, under the header and {bones} bones' descriptors"
        )));
    }
    let h = PackedHeader::read(block, 0);
    if h.keys == 0 {
        return Err(bad("no keys".into()));
    }
    if h.flags & PACKED_UNIFORM == 0 && h.keys as usize > times {
        return Err(bad(format!("{} keys but {times} key times", h.keys)));
    }
    if h.flags & PACKED_UNIFORM != 0 && !(h.first_time.is_finite() && h.inv_step.is_finite()) {
        return Err(bad(
            "uniform keys with a time or step that is not finite".into()
        ));
    }
    let (mut bits, mut quantized) = (0u64, 0u64);
    for b in 0..bones as u32 {
        let d = h.bone(block, b);
        let mut range = u64::from(d[2]);
        if u64::from(d[1]) != bits || u64::from(d[3]) != quantized {
            return Err(bad(format!(
                "bone {b}'s descriptor does not follow the one before"
            )));
        }
        for kind in 0..3 {
            let rate = (d[0] >> (RATE_SHIFT * kind)) & RATE_MASK;
            if rate > RATE_RAW {
                return Err(bad(format!("bone {b} track {kind}: rate code {rate}")));
            }
            bits += u64::from(key_bits(rate, kind));
            range += u64::from(range_words(rate));
            quantized += u64::from(rate > RATE_CONSTANT && rate < RATE_RAW);
        }
        if range > len {
            return Err(bad(format!("bone {b}'s ranges end past the block")));
        }
    }
    if bits != u64::from(h.key_bits) || quantized != u64::from(h.flags >> PACKED_QUANTIZED_SHIFT) {
        return Err(bad(
            "the header's bits per key or quantized tracks do not match".into(),
        ));
    }
    let segments = u64::from(h.keys.div_ceil(PACKED_SEGMENT_KEYS));
    if u64::from(h.segment_table) + segments > len {
        return Err(bad("the segment table ends past the block".into()));
    }
    let ranges = if h.flags & PACKED_SEGMENTED != 0 {
        (6 * quantized).div_ceil(4)
    } else {
        0
    };
    for s in 0..segments {
        let at = u64::from(block[(u64::from(h.segment_table) + s) as usize]);
        let keys = u64::from(PACKED_SEGMENT_KEYS).min(u64::from(h.keys) - s * 16);
        let end = (at + ranges) * 32 + keys * bits;
        if end > len * 32 {
            return Err(bad(format!("segment {s} ends past the block")));
        }
    }
    Ok(())
}

/// Places `c` (checked) in `data`'s key values (and its times, where not uniform) for the clip
/// `clip`: its `channel_base` becomes the block's first 16-byte word.
pub(crate) fn place(
    data: &mut LibraryData,
    c: &CompressedClip,
    clip: &mut ClipData,
    bones: usize,
) -> Result<()> {
    check_block(c.name(), c.block(), bones, c.times().len())?;
    let mut block = c.block().to_vec();
    if !c.uniform() {
        block[3] = crate::library::to_u32(data.times.len(), "key times")?;
        crate::library::to_u32(data.times.len() + c.times().len(), "key times")?;
        data.times.extend_from_slice(c.times());
    }
    let base = data.values.len();
    crate::library::to_u32((base + block.len().div_ceil(4)) * 4, "key values")?;
    data.values.extend(
        block
            .chunks(4)
            .map(|w| std::array::from_fn(|k| f32::from_bits(w.get(k).copied().unwrap_or(0)))),
    );
    clip.channel_base = base as u32;
    Ok(())
}
