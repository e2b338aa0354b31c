//! Compressed clips entering a library: a [`ClipPacker`] (the authoring side's
//! `compress::Compression`) packs the clips it chooses, and the builder checks each packed
//! block word by word ([`check_block`]) before it places it in the key values.

use std::fmt::Debug;

use super::{to_u32, LibraryData, RetargetSource};
use crate::error::{Error, Result};
use crate::layout::{
    key_bits, ClipData, PackedHeader, PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS,
    PACKED_INDEX_SHIFT, PACKED_QUANTIZED_SHIFT, PACKED_SEGMENT_KEYS, PACKED_UNIFORM, RATE_CONSTANT,
    RATE_MASK, RATE_RAW, RATE_SHIFT,
};
use crate::{BoneTrack, Clip};

/// One clip's packed block, and its key times where they are not uniform.
#[derive(Clone, Debug)]
pub(crate) struct PackedClip {
    pub name: String,
    pub block: Vec<u32>,
    pub times: Option<Vec<f32>>,
}

/// What packs the clips a builder adds (`LibraryBuilder::compress`): the clips it chooses, or
/// `None` for a clip that stays plain. `data` holds the tables built so far (the source's
/// records, which say what its absent tracks play).
pub(crate) trait ClipPacker: Debug + Send + Sync {
    fn pack(
        &self,
        data: &LibraryData,
        source: &RetargetSource,
        retarget_base: u32,
        clip: &Clip,
        goals: &[BoneTrack],
    ) -> Result<Option<PackedClip>>;
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
    let header = u64::from(PACKED_HEADER_WORDS) + u64::from(PACKED_DESCRIPTOR_WORDS) * bones as u64;
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
    let (mut bits, mut quantized, mut constants) = (0u64, 0u64, 0u64);
    for b in 0..bones as u32 {
        let d = h.bone(block, b);
        let index_mask = (1u32 << PACKED_INDEX_SHIFT) - 1;
        let firsts = (
            d[1] & index_mask,
            d[1] >> PACKED_INDEX_SHIFT,
            d[0] >> PACKED_INDEX_SHIFT,
        );
        if (
            u64::from(firsts.0),
            u64::from(firsts.1),
            u64::from(firsts.2),
        ) != (bits, quantized, constants)
        {
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
            quantized += u64::from(rate > RATE_CONSTANT && rate < RATE_RAW);
            constants += u64::from(rate == RATE_CONSTANT);
        }
    }
    if u64::from(h.ranges) < header || u64::from(h.ranges) + 6 * quantized + 3 * constants > len {
        return Err(bad("the ranges lie outside the block".into()));
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
    let ranges = u64::from(h.segment_range_words());
    for s in 0..segments {
        let at = u64::from(block[(u64::from(h.segment_table) + s) as usize]);
        let keys = u64::from(PACKED_SEGMENT_KEYS)
            .min(u64::from(h.keys) - s * u64::from(PACKED_SEGMENT_KEYS));
        let end = (at + ranges) * 32 + keys * bits;
        if end > len * 32 {
            return Err(bad(format!("segment {s} ends past the block")));
        }
    }
    Ok(())
}

/// Places `c` (checked, for `bones` source bones and goals) in `data`'s key values (and its
/// times, where not uniform): `clip`'s `channel_base` becomes the block's first 16-byte word.
pub(crate) fn place(
    data: &mut LibraryData,
    c: &PackedClip,
    clip: &mut ClipData,
    bones: usize,
) -> Result<()> {
    let times = c.times.as_deref().unwrap_or(&[]);
    check_block(&c.name, &c.block, bones, times.len())?;
    let mut block = c.block.clone();
    if c.times.is_some() {
        block[3] = to_u32(data.times.len(), "key times")?;
        to_u32(data.times.len() + times.len(), "key times")?;
        data.times.extend_from_slice(times);
    }
    let base = data.values.len();
    to_u32((base + block.len().div_ceil(4)) * 4, "key values")?;
    data.values.extend(
        block
            .chunks(4)
            .map(|w| std::array::from_fn(|k| f32::from_bits(w.get(k).copied().unwrap_or(0)))),
    );
    clip.channel_base = base as u32;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_block;
    use crate::compress::{CompressedClip, DEFAULT_TOLERANCE};
    use crate::error::Error;
    use crate::layout::{PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS, PACKED_INDEX_SHIFT};
    use crate::procedural::humanoid_asset;

    /// A packed block of the humanoid's first clip, its bone count and its times.
    fn block() -> (Vec<u32>, usize, usize) {
        let asset = humanoid_asset();
        let c = CompressedClip::new(&asset.skeleton, &asset.clips[0], DEFAULT_TOLERANCE).unwrap();
        (c.block().to_vec(), asset.skeleton.len(), c.times().len())
    }

    fn refused(block: &[u32], bones: usize, times: usize, says: &str) {
        match check_block("walk", block, bones, times) {
            Err(Error::PackedBlock { clip, what }) => {
                assert_eq!(clip, "walk");
                assert!(what.contains(says), "{what} (wanted '{says}')");
            }
            other => panic!("a damaged block passed: {other:?}"),
        }
    }

    #[test]
    fn damaged_blocks_are_typed_errors_and_whole_ones_pass() {
        let (good, bones, times) = block();
        check_block("walk", &good, bones, times).unwrap();
        // Cut short, or read for another skeleton.
        refused(&good[..good.len() - 1], bones, times, "segment");
        refused(&good[..10], bones, times, "under the header");
        refused(&good, bones + 5, times, "");
        // No keys; a rate that is no rate; a descriptor that skips bits.
        let mut b = good.clone();
        b[0] = 0;
        refused(&b, bones, times, "no keys");
        let first = PACKED_HEADER_WORDS as usize;
        let mut b = good.clone();
        b[first] |= 31;
        refused(&b, bones, times, "rate code 31");
        let mut b = good.clone();
        b[first + PACKED_DESCRIPTOR_WORDS as usize + 1] += 1 << PACKED_INDEX_SHIFT;
        refused(&b, bones, times, "does not follow");
        // The segment table pointing past the end; the ranges outside the block.
        let mut b = good.clone();
        b[6] = good.len() as u32;
        refused(&b, bones, times, "segment table");
        let mut b = good.clone();
        b[7] = good.len() as u32;
        refused(&b, bones, times, "ranges");
    }
}
