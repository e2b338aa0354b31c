//! The per-track rates and the bit stream: what a key's bits are and where they sit.

use glam::{Quat, Vec3, Vec4};

use crate::math::normalize_quat;
use crate::Transform;

/// Keys per segment: a segment's bits start on a 32-bit word, so that a workgroup can decode
/// one segment without reading another's.
pub const SEGMENT_KEYS: usize = 16;

/// The rates the optimizer walks through, cheapest first.
pub(super) const LEVELS: usize = 19;

/// How one track (a bone's rotation, translation or scale) is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// No value: the track plays the skeleton's reference pose.
    Reference,
    /// One value (three f32) for every key.
    Constant,
    /// Three components per key of this many bits (1 to 16), within the track's range.
    Bits(u8),
    /// Every key at full precision: three f32 (four for a rotation, so that `w` is exact).
    Raw,
}

impl Rate {
    /// The rate of optimizer level `level` (0 = [`Rate::Reference`], `LEVELS - 1` = raw).
    pub(super) fn from_level(level: usize) -> Self {
        match level {
            0 => Self::Reference,
            1 => Self::Constant,
            l if l < LEVELS - 1 => Self::Bits(l as u8 - 1),
            _ => Self::Raw,
        }
    }
}

/// Track kinds, in the order each bone's three tracks are stored.
pub(super) const ROTATION: usize = 0;
pub(super) const TRANSLATION: usize = 1;
pub(super) const SCALE: usize = 2;

/// A track's key as stored before quantization: a rotation made `w >= 0` (x, y, z, w), or a
/// vector (x, y, z, 0).
pub(super) fn key_value(local: &Transform, kind: usize) -> [f32; 4] {
    match kind {
        ROTATION => {
            let q = if local.rotation.w < 0.0 {
                -local.rotation
            } else {
                local.rotation
            };
            q.to_array()
        }
        TRANSLATION => local.translation.extend(0.0).to_array(),
        _ => local.scale.extend(0.0).to_array(),
    }
}

/// Writes a decoded key value into the matching field of `out`; a quantized rotation rebuilds
/// `w` from the unit length.
pub(super) fn set_field(out: &mut Transform, kind: usize, v: [f32; 4], rebuild_w: bool) {
    match kind {
        ROTATION if rebuild_w => {
            let w = (1.0 - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
                .max(0.0)
                .sqrt();
            out.rotation = normalize_quat(Vec4::new(v[0], v[1], v[2], w));
        }
        ROTATION => out.rotation = Quat::from_array(v),
        TRANSLATION => out.translation = Vec3::new(v[0], v[1], v[2]),
        _ => out.scale = Vec3::new(v[0], v[1], v[2]),
    }
}

/// The largest integer of `bits` bits, as the quantization's step count.
pub(crate) fn steps(bits: u32) -> u32 {
    (1u32 << bits) - 1
}

/// The value one step of the integer `N` of [`dequantize_in`] stands for, in a clip range of
/// `extent` at `bits` bits: the encoder stores this f32, and the decoders read it.
pub(super) fn unit(extent: f32, bits: u8) -> f32 {
    extent / (255.0 * steps(u32::from(bits)) as f32)
}

/// A quantized track's range within one segment, per component: the low and high ends of its
/// keys, in 1/255ths of the clip's range (ACL's segment range reduction).
pub(super) type SegmentRange = [[u8; 2]; 3];

/// `v`'s place in the clip's range `[min, min + extent]`, 0 to 1.
fn normalized(v: f32, min: f32, extent: f32) -> f32 {
    if extent > 0.0 {
        (v - min) / extent
    } else {
        0.0
    }
}

/// The 8-bit range around the values `v` of one component within one segment.
pub(super) fn segment_range(v: impl Iterator<Item = f32>, min: f32, extent: f32) -> [u8; 2] {
    let (lo, hi) = v
        .map(|v| normalized(v, min, extent))
        .fold((f32::MAX, f32::MIN), |(lo, hi), n| (lo.min(n), hi.max(n)));
    let a = (lo * 255.0).floor().clamp(0.0, 255.0);
    let b = (hi * 255.0).ceil().clamp(a, 255.0);
    [a as u8, b as u8]
}

/// `v` quantized to `bits` bits within its segment's range `seg` of the clip's range: the `q`
/// whose [`dequantize_in`] is nearest.
pub(super) fn quantize_in(v: f32, min: f32, extent: f32, seg: [u8; 2], bits: u8) -> u32 {
    let (s, u) = (steps(u32::from(bits)), unit(extent, bits));
    let span = u32::from(seg[1] - seg[0]);
    if u.is_nan() || u <= 0.0 || span == 0 {
        return 0;
    }
    let n = (v - min) / u - (u32::from(seg[0]) * s) as f32;
    (n / span as f32).round().clamp(0.0, s as f32) as u32
}

/// The value `q` of [`quantize_in`] stands for: `N = lo * steps + q * (hi - lo)` is an exact
/// integer under 2^24 and `min + N * unit` one fused multiply-add, so that the GPU and every
/// CPU decoder (`cpu/packed.rs`, the optimizer) give the same bits where the GPU fuses `fma`.
pub(super) fn dequantize_in(q: u32, min: f32, extent: f32, seg: [u8; 2], bits: u8) -> f32 {
    crate::cpu::packed::dequantize(q, min, unit(extent, bits), seg, steps(u32::from(bits)))
}

/// A growing stream of bits, least significant first within little-endian u32 words.
#[derive(Default)]
pub(super) struct BitWriter {
    pub(super) words: Vec<u32>,
    pub(super) bits: usize,
}

impl BitWriter {
    pub(super) fn push(&mut self, value: u32, count: u32) {
        for i in 0..count {
            let (w, b) = (self.bits / 32, self.bits % 32);
            if w == self.words.len() {
                self.words.push(0);
            }
            self.words[w] |= ((value >> i) & 1) << b;
            self.bits += 1;
        }
    }

    /// Pads to the next word (a segment's start).
    pub(super) fn align(&mut self) {
        self.bits = self.bits.div_ceil(32) * 32;
        self.words.resize(self.bits / 32, 0);
    }
}
