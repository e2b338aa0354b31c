//! A compressed clip's packed block as the shaders read it (`packed.wgsl`): its header and
//! where each track lies. The decoding is the CPU twin's (`src/cpu/packed.rs`); the constants
//! are in `clips.rs`.

use super::{
    key_bits, PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS, PACKED_INDEX_SHIFT,
    PACKED_QUANTIZED_SHIFT, PACKED_SEGMENTED, RATE_CONSTANT, RATE_MASK, RATE_RAW, RATE_SHIFT,
};

/// A packed block's header (`packed_header` in `packed.wgsl`), read from the words of the
/// block's buffer (the library's key values, or a block of its own).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PackedHeader {
    pub base: u32,
    pub keys: u32,
    pub first_time: f32,
    pub inv_step: f32,
    pub time_offset: u32,
    pub flags: u32,
    pub key_bits: u32,
    pub segment_table: u32,
    /// The ranges' first word, from the block's start.
    pub ranges: u32,
}

/// Where one track of a packed block lies ([`PackedHeader::locate`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Located {
    pub rate: u32,
    /// Its first bit within a key.
    pub bit: u32,
    /// Its range's first word (a constant's value, or a quantized track's minima then units).
    pub range: u32,
    /// Its index among the clip's quantized tracks (where its segment ranges are).
    pub quantized: u32,
}

impl PackedHeader {
    #[inline]
    pub(crate) fn read(w: &[u32], base: u32) -> Self {
        Self {
            base,
            keys: w[base as usize],
            first_time: f32::from_bits(w[base as usize + 1]),
            inv_step: f32::from_bits(w[base as usize + 2]),
            time_offset: w[base as usize + 3],
            flags: w[base as usize + 4],
            key_bits: w[base as usize + 5],
            segment_table: w[base as usize + 6],
            ranges: w[base as usize + 7],
        }
    }

    /// Bone `bone`'s descriptor (`packed_bone`).
    #[inline]
    pub(crate) fn bone(&self, w: &[u32], bone: u32) -> [u32; 2] {
        let at = self.base + PACKED_HEADER_WORDS + PACKED_DESCRIPTOR_WORDS * bone;
        [w[at as usize], w[at as usize + 1]]
    }

    /// Where track `kind` of the bone of descriptor `d` lies (`packed_locate`): its rate, its
    /// first bit within a key, its range's first word, and its index among the quantized
    /// tracks; the tracks before it in the bone counted from the descriptor's firsts.
    #[inline(always)]
    pub(crate) fn locate(&self, d: [u32; 2], kind: u32) -> Located {
        let index_mask = (1u32 << PACKED_INDEX_SHIFT) - 1;
        let (mut bit, mut quantized) = (d[1] & index_mask, d[1] >> PACKED_INDEX_SHIFT);
        let mut constant = d[0] >> PACKED_INDEX_SHIFT;
        for j in 0..kind {
            let r = (d[0] >> (RATE_SHIFT * j)) & RATE_MASK;
            bit += key_bits(r, j);
            quantized += u32::from(r > RATE_CONSTANT && r < RATE_RAW);
            constant += u32::from(r == RATE_CONSTANT);
        }
        let rate = (d[0] >> (RATE_SHIFT * kind)) & RATE_MASK;
        let ranges = self.base + self.ranges;
        let range = if rate == RATE_CONSTANT {
            ranges + 6 * (self.flags >> PACKED_QUANTIZED_SHIFT) + 3 * constant
        } else {
            ranges + 6 * quantized
        };
        Located {
            rate,
            bit,
            range,
            quantized,
        }
    }

    /// Words at the start of each segment that hold its quantized tracks' 8-bit ranges (none
    /// unless segmented).
    #[inline]
    pub(crate) fn segment_range_words(&self) -> u32 {
        if self.flags & PACKED_SEGMENTED != 0 {
            (6 * (self.flags >> PACKED_QUANTIZED_SHIFT)).div_ceil(4)
        } else {
            0
        }
    }
}
