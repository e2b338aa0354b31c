//! The packed block a compressed clip is uploaded as, written word for word as the GPU reads
//! it (`src/cpu/packed.rs` reads it back; the layout is the `PACKED_*` and `RATE_*`
//! constants in `src/layout/clips.rs`).

use super::optimize::Problem;
use super::pack::{key_value, quantize_in, unit, BitWriter, Rate, ROTATION, SCALE, SEGMENT_KEYS};
use crate::layout::key_bits;
use crate::layout::{
    BONE_PRESENT, PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS, PACKED_INDEX_SHIFT,
    PACKED_QUANTIZED_SHIFT, PACKED_SEGMENTED, PACKED_SEGMENT_KEYS, PACKED_UNIFORM, RATE_RAW,
    RATE_SHIFT, RATE_STEP_SHIFT,
};
use crate::{BoneTrack, Interpolation};

const _: () = assert!(SEGMENT_KEYS == PACKED_SEGMENT_KEYS as usize);

/// What [`write`] packs: the solved problem and each track's rate.
pub(super) struct Plan<'a> {
    pub problem: &'a Problem<'a>,
    pub tracks: &'a [&'a BoneTrack],
    pub rates: &'a [Rate],
    pub first_time: f32,
    pub inv_step: f32,
    pub uniform: bool,
    pub segmented: bool,
}

/// A rate's code in a descriptor.
fn code(rate: Rate) -> u32 {
    match rate {
        Rate::Reference => 0,
        Rate::Constant => 1,
        Rate::Bits(n) => u32::from(n) + 1,
        Rate::Raw => RATE_RAW,
    }
}

/// Whether track `kind` of `track` plays STEP.
pub(super) fn step(track: &BoneTrack, kind: usize) -> bool {
    let interpolation = match kind {
        ROTATION => track.rotation.as_ref().map(|c| c.interpolation),
        SCALE => track.scale.as_ref().map(|c| c.interpolation),
        _ => track.translation.as_ref().map(|c| c.interpolation),
    };
    interpolation == Some(Interpolation::Step)
}

/// The block's words.
pub(super) fn write(p: &Plan) -> Vec<u32> {
    let bones = p.tracks.len();
    let problem = p.problem;
    let ranges_start = (PACKED_HEADER_WORDS + PACKED_DESCRIPTOR_WORDS * bones as u32) as usize;
    let mut descriptors = Vec::with_capacity(2 * bones);
    // Every quantized track's minima and units, then every constant's value.
    let (mut quantized_ranges, mut constants): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    let (mut bit, mut quantized, mut constant) = (0u32, 0u32, 0u32);
    for (b, track) in p.tracks.iter().enumerate() {
        let mut flags = constant << PACKED_INDEX_SHIFT;
        let first = bit | quantized << PACKED_INDEX_SHIFT;
        for kind in 0..3 {
            let i = b * 3 + kind;
            let rate = p.rates[i];
            flags |= code(rate) << (RATE_SHIFT * kind as u32);
            if step(track, kind) {
                flags |= 1 << (RATE_STEP_SHIFT + kind as u32);
            }
            bit += key_bits(code(rate), kind as u32);
            let (min, extent) = problem.ranges[i];
            match rate {
                Rate::Constant => {
                    constants.extend((0..3).map(|c| (min[c] + extent[c] * 0.5).to_bits()));
                    constant += 1;
                }
                Rate::Bits(n) => {
                    quantized_ranges.extend((0..3).map(|c| min[c].to_bits()));
                    quantized_ranges.extend((0..3).map(|c| unit(extent[c], n).to_bits()));
                    quantized += 1;
                }
                Rate::Reference | Rate::Raw => {}
            }
        }
        let present =
            track.translation.is_some() || track.rotation.is_some() || track.scale.is_some();
        if present {
            flags |= BONE_PRESENT;
        }
        descriptors.extend([flags, first]);
    }
    let mut ranges = quantized_ranges;
    ranges.extend(constants);
    let keys = problem.raw.len();
    let segment_count = keys.div_ceil(SEGMENT_KEYS);
    let table_at = ranges_start + ranges.len();
    let mut flags = quantized << PACKED_QUANTIZED_SHIFT;
    if p.uniform {
        flags |= PACKED_UNIFORM;
    }
    if p.segmented {
        flags |= PACKED_SEGMENTED;
    }
    let mut words = vec![
        keys as u32,
        p.first_time.to_bits(),
        p.inv_step.to_bits(),
        0,
        flags,
        bit,
        table_at as u32,
        ranges_start as u32,
    ];
    words.extend(descriptors);
    words.extend(ranges);
    words.resize(table_at + segment_count, 0);
    let tracks = bones * 3;
    for s in 0..segment_count {
        words[table_at + s] = words.len() as u32;
        let seg_ranges = &problem.segments[s * tracks..(s + 1) * tracks];
        if p.segmented {
            let bytes: Vec<u8> = (0..tracks)
                .filter(|&i| matches!(p.rates[i], Rate::Bits(_)))
                .flat_map(|i| seg_ranges[i].iter().flatten().copied())
                .collect();
            words.extend(bytes.chunks(4).map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0u32, |w, (k, &b)| w | u32::from(b) << (8 * k))
            }));
        }
        let mut stream = BitWriter::default();
        for pose in &problem.raw[s * SEGMENT_KEYS..keys.min((s + 1) * SEGMENT_KEYS)] {
            for i in 0..tracks {
                let v = key_value(&pose[i / 3], i % 3);
                let (min, extent) = problem.ranges[i];
                match p.rates[i] {
                    Rate::Bits(n) => (0..3).for_each(|c| {
                        let q = quantize_in(v[c], min[c], extent[c], seg_ranges[i][c], n);
                        stream.push(q, u32::from(n))
                    }),
                    Rate::Raw => {
                        let comps = if i % 3 == ROTATION { 4 } else { 3 };
                        (0..comps).for_each(|c| stream.push(v[c].to_bits(), 32));
                    }
                    Rate::Reference | Rate::Constant => {}
                }
            }
        }
        stream.align();
        words.extend(stream.words);
    }
    words
}
