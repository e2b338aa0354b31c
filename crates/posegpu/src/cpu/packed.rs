//! CPU twin of `shaders/packed.wgsl`: compressed clips' packed blocks read from the same words
//! of the key values (issue 31); also the decoder [`crate::compress::CompressedClip`] samples
//! with. Layout: the `PACKED_*` and `RATE_*` constants in `src/layout/clips.rs` and the header
//! in `src/layout/packed.rs`; spec: `docs/pose-math.md`, "Compressed keys".
//!
//! In a crowd many instances sample a clip between the same two keys: the sampling stage
//! decodes such a key once at every bone and shares it ([`DecodedKeys`]). A key is shared the
//! second time a sample asks for it (a key one sample plays is cheaper decoded bone by bone),
//! and holds the values [`KeyCursor::local`] decodes, so a sample plays alike from either.

use std::sync::Arc;

use glam::Vec4;

use crate::layout::{
    rate_bits, BONE_PRESENT, PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS, PACKED_SEGMENTED,
    PACKED_SEGMENT_KEYS, PACKED_UNIFORM, RATE_CONSTANT, RATE_MASK, RATE_RAW, RATE_SHIFT,
    RATE_STEP_SHIFT,
};
use crate::layout::{Located, PackedHeader};
use crate::math::{lerp3, normalize_quat};
use crate::model::find_keys;
use crate::Transform;

/// `N * unit + min` with one rounding, `N = lo * steps + q * (hi - lo)` an exact integer under
/// 2^24: `fma` in `packed.wgsl`, the same bits where the GPU fuses it (NVIDIA does; lavapipe
/// may round the product first, 1 ulp apart).
#[inline(always)]
pub(crate) fn dequantize(q: u32, min: f32, unit: f32, seg: [u8; 2], steps: u32) -> f32 {
    let n = u32::from(seg[0]) * steps + q * u32::from(seg[1] - seg[0]);
    (n as f32).mul_add(unit, min)
}

impl PackedHeader {
    /// The two keys around `t` and the blend factor (`packed_keys`): uniform keys by one
    /// multiply, others by a search of their times in `times`.
    #[inline]
    pub(crate) fn keys_at(&self, times: &[f32], t: f32) -> (u32, u32, f32) {
        let last = self.keys.saturating_sub(1);
        if self.flags & PACKED_UNIFORM == 0 {
            let start = self.time_offset as usize;
            let (a, b, alpha) = find_keys(&times[start..start + self.keys as usize], t);
            return (a as u32, b as u32, alpha);
        }
        if last == 0 || t <= self.first_time {
            return (0, 0, 0.0);
        }
        let u = (t - self.first_time) * self.inv_step;
        if u >= last as f32 {
            return (last, last, 0.0);
        }
        // u >= 0: truncation is the floor, without a libm call.
        let k = u as u32;
        (k, k + 1, u - k as f32)
    }

    /// Where the two keys around `t` lie ([`KeyCursor`]): found once per sample, for all of
    /// its bones.
    #[inline]
    pub(crate) fn cursor(&self, w: &[u32], times: &[f32], t: f32) -> KeyCursor {
        let (a, b, alpha) = self.keys_at(times, t);
        let ranges_words = self.segment_range_words();
        let segment = |key: u32| {
            self.base + w[(self.base + self.segment_table + key / PACKED_SEGMENT_KEYS) as usize]
        };
        let first_bit = |segment: u32, key: u32| {
            (segment + ranges_words) * 32 + (key % PACKED_SEGMENT_KEYS) * self.key_bits
        };
        let sa = segment(a);
        let sb = if a / PACKED_SEGMENT_KEYS == b / PACKED_SEGMENT_KEYS {
            sa
        } else {
            segment(b)
        };
        KeyCursor {
            header: *self,
            keys: [a, b],
            alpha,
            segment: [sa, sb],
            bit: [first_bit(sa, a), first_bit(sb, b)],
        }
    }

    /// Source bone `bone`'s local at `t` (`packed_local`): each track decoded at the two keys
    /// and interpolated as plain keys are (`sample_channels` in `src/cpu/clip.rs`); a reference
    /// track keeps `fill`'s value (its rotation normalized). Only the rotation unless `full`.
    pub(crate) fn local(
        &self,
        w: &[u32],
        times: &[f32],
        bone: u32,
        t: f32,
        fill: Transform,
        full: bool,
    ) -> Transform {
        self.cursor(w, times, t)
            .local(w, self.bone(w, bone), fill, full)
    }

    /// Whether the clip keys bone `bone` at all (`packed_present`).
    #[inline]
    pub(crate) fn present(&self, w: &[u32], bone: u32) -> bool {
        self.bone(w, bone)[0] & BONE_PRESENT != 0
    }

    /// How many bones (and goals) the block describes.
    pub(crate) fn descriptors(&self) -> u32 {
        (self.ranges - PACKED_HEADER_WORDS) / PACKED_DESCRIPTOR_WORDS
    }
}

/// Where one sample's two keys lie in a packed block ([`PackedHeader::cursor`]): what
/// `packed_track` in `packed.wgsl` finds per track (the keys' segments, and where their bits
/// start), found once for every bone of the sample.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyCursor {
    pub header: PackedHeader,
    /// The two keys' indexes, and the blend factor between them.
    pub keys: [u32; 2],
    pub alpha: f32,
    /// Per key: its segment's first word, where its 8-bit ranges lie.
    segment: [u32; 2],
    /// Per key: the bit its key's tracks start at, in the block's buffer.
    bit: [u32; 2],
}

/// One bone's stored tracks at one key, decoded, by kind (0 rotation, its `w` rebuilt and not
/// normalized; 1 translation; 2 scale; `w` 0); zeros where the clip does not store a track.
pub(crate) type DecodedBone = [Vec4; 3];

impl KeyCursor {
    /// [`PackedHeader::local`] at this cursor's keys, of the bone of descriptor `d`
    /// ([`PackedHeader::bone`]). Where the CPU has FMA the dequantization's `mul_add` is one
    /// instruction, not a call.
    pub(crate) fn local(&self, w: &[u32], d: [u32; 2], fill: Transform, full: bool) -> Transform {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA.
            return unsafe { self.local_fma(w, d, fill, full) };
        }
        self.local_any(w, d, fill, full)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn local_fma(&self, w: &[u32], d: [u32; 2], fill: Transform, full: bool) -> Transform {
        self.local_any(w, d, fill, full)
    }

    #[inline(always)]
    fn local_any(&self, w: &[u32], d: [u32; 2], fill: Transform, full: bool) -> Transform {
        let h = &self.header;
        // No closures here: a closure is compiled apart, without the caller's FMA.
        let mut pairs = [None; 3];
        for (kind, pair) in pairs.iter_mut().enumerate() {
            let at = h.locate(d, kind as u32);
            if at.rate != 0 && (full || kind == 0) {
                let kind = kind as u32;
                *pair = Some([self.decode(w, &at, kind, 0), self.decode(w, &at, kind, 1)]);
            }
        }
        interpolate(d[0], self.alpha, pairs, fill)
    }

    /// [`Self::local`] from both keys decoded already ([`Self::decode_key`]): the same
    /// interpolation of the same values.
    #[inline]
    pub(crate) fn local_decoded(
        &self,
        d: [u32; 2],
        keys: [&DecodedBone; 2],
        fill: Transform,
        full: bool,
    ) -> Transform {
        let mut pairs = [None; 3];
        for (kind, pair) in pairs.iter_mut().enumerate() {
            let rate = (d[0] >> (RATE_SHIFT * kind as u32)) & RATE_MASK;
            if rate != 0 && (full || kind == 0) {
                *pair = Some([keys[0][kind], keys[1][kind]]);
            }
        }
        interpolate(d[0], self.alpha, pairs, fill)
    }

    /// Every bone's (and goal's) tracks at this cursor's key `k` (0 or 1), decoded: what
    /// [`Self::local`] decodes bone by bone, for samples that share the key.
    pub(crate) fn decode_key(&self, w: &[u32], k: usize) -> Vec<DecodedBone> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA.
            return unsafe { self.decode_key_fma(w, k) };
        }
        self.decode_key_any(w, k)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn decode_key_fma(&self, w: &[u32], k: usize) -> Vec<DecodedBone> {
        self.decode_key_any(w, k)
    }

    #[inline(always)]
    fn decode_key_any(&self, w: &[u32], k: usize) -> Vec<DecodedBone> {
        let h = &self.header;
        let mut out = Vec::with_capacity(h.descriptors() as usize);
        for bone in 0..h.descriptors() {
            let d = h.bone(w, bone);
            let mut tracks = [Vec4::ZERO; 3];
            for (kind, track) in tracks.iter_mut().enumerate() {
                let at = h.locate(d, kind as u32);
                if at.rate != 0 {
                    *track = self.decode(w, &at, kind as u32, k);
                }
            }
            out.push(tracks);
        }
        out
    }

    /// The stored track `at` (of kind `kind`: 0 rotation, 1 translation, 2 scale) at key `k`
    /// (0 or 1) (`packed_track`): a rotation rebuilt ([`rotation`]), else x, y, z and 0. The
    /// words the shader reads; a quantized key's three components from one 64-bit window.
    #[inline(always)]
    fn decode(&self, w: &[u32], at: &Located, kind: u32, k: usize) -> Vec4 {
        let Located {
            rate,
            bit,
            range,
            quantized,
        } = *at;
        let range = range as usize;
        if rate == RATE_CONSTANT {
            let v = &w[range..range + 3];
            let x = [v[0], v[1], v[2], 0].map(f32::from_bits);
            return if kind == 0 {
                rotation(x, false)
            } else {
                Vec4::from(x)
            };
        }
        let first = self.bit[k] + bit;
        if rate == RATE_RAW {
            let n = if kind == 0 { 4 } else { 3 };
            let mut x = [0.0; 4];
            for (c, v) in x.iter_mut().enumerate().take(n) {
                *v = f32::from_bits(read_bits(w, first + 32 * c as u32, 32));
            }
            return Vec4::from(x);
        }
        let bits = rate_bits(rate);
        let steps = (1u32 << bits) - 1;
        let ranges = &w[range..range + 6];
        let keyed = window(w, first);
        // The segment's (lo, hi) byte pairs of this track's components, side by side.
        let pairs = if self.header.flags & PACKED_SEGMENTED != 0 {
            window(w, self.segment[k] * 32 + quantized * 48)
        } else {
            0xff00_ff00_ff00
        };
        let mut x = [0.0; 4];
        for (c, v) in x.iter_mut().enumerate().take(3) {
            let q = (keyed >> (c as u32 * bits)) as u32 & steps;
            let (min, unit) = (f32::from_bits(ranges[c]), f32::from_bits(ranges[3 + c]));
            let pair = (pairs >> (16 * c)) as u16;
            *v = dequantize(q, min, unit, pair.to_le_bytes(), steps);
        }
        if kind == 0 {
            rotation(x, false)
        } else {
            Vec4::from(x)
        }
    }
}

/// A bone's local from its tracks at two keys (`pairs` by kind; `None` keeps `fill`'s value),
/// interpolated as plain keys are (`sample_channels` in `src/cpu/clip.rs`): lerp, or nlerp
/// along the shorter arc; a STEP track (its flag in descriptor word `d0`) holds the first key.
#[inline(always)]
fn interpolate(d0: u32, alpha: f32, pairs: [Option<[Vec4; 2]>; 3], fill: Transform) -> Transform {
    let alpha_of = |kind: u32| {
        if d0 & (1 << (RATE_STEP_SHIFT + kind)) != 0 {
            0.0
        } else {
            alpha
        }
    };
    let mut out = fill;
    if let Some([x, y]) = pairs[1] {
        out.translation = lerp3(x.truncate(), y.truncate(), alpha_of(1));
    }
    if let Some([x, y]) = pairs[2] {
        out.scale = lerp3(x.truncate(), y.truncate(), alpha_of(2));
    }
    out.rotation = match pairs[0] {
        Some([qa, qb]) => {
            let alpha = alpha_of(0);
            let sign = if qa.dot(qb) >= 0.0 { 1.0 } else { -1.0 };
            normalize_quat(qa * (1.0 - alpha) + qb * (alpha * sign))
        }
        None => normalize_quat(Vec4::from(out.rotation)),
    };
    out
}

/// One key of a compressed clip, decoded at every bone (and goal) of its block.
pub(crate) type DecodedKey = Arc<[DecodedBone]>;

/// The keys a scratch's samples have decoded, by clip and key; bounded: past
/// [`DecodedKeys::CAPACITY`] bones it starts afresh (the keys samples hold stay theirs).
#[derive(Clone, Debug)]
pub(crate) struct DecodedKeys {
    /// By clip, then key: `Asked` where one sample has asked for it.
    clips: Vec<Vec<Slot>>,
    /// Bones held, over all keys.
    held: usize,
    /// Bones held at most.
    capacity: usize,
}

impl Default for DecodedKeys {
    fn default() -> Self {
        Self {
            clips: Vec::new(),
            held: 0,
            capacity: Self::CAPACITY,
        }
    }
}

#[derive(Clone, Debug, Default)]
enum Slot {
    #[default]
    Unasked,
    Asked,
    Decoded(DecodedKey),
}

impl DecodedKeys {
    /// Decoded bones held at most: 6 MiB at 48 bytes each, a cache's worth.
    const CAPACITY: usize = 1 << 17;

    /// A cache of at most `capacity` decoded bones (tests: one that fills).
    #[cfg(test)]
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity,
            ..Self::default()
        }
    }

    /// The two keys of `cursor` (in `clip`) decoded, where both are shared (decoded here the
    /// second time they are asked for); `None` where a sample should decode them itself.
    pub(crate) fn pair(
        &mut self,
        w: &[u32],
        clip: usize,
        cursor: &KeyCursor,
    ) -> Option<[DecodedKey; 2]> {
        if self.clips.len() <= clip {
            self.clips.resize(clip + 1, Vec::new());
        }
        let slots = &mut self.clips[clip];
        if slots.is_empty() {
            slots.resize(cursor.header.keys as usize, Slot::Unasked);
        }
        let keys = cursor.keys.map(|k| k as usize);
        let asked = keys.map(|k| matches!(slots[k], Slot::Asked));
        let needed = asked.iter().filter(|&&a| a).count() * cursor.header.descriptors() as usize;
        if self.held + needed > self.capacity {
            // Afresh, but for what this sample has asked before.
            self.clips
                .iter_mut()
                .flatten()
                .for_each(|s| *s = Slot::Unasked);
            self.held = 0;
            for (k, asked) in keys.into_iter().zip(asked) {
                if asked {
                    self.clips[clip][k] = Slot::Asked;
                }
            }
        }
        let (a, b) = (self.key(w, clip, cursor, 0), self.key(w, clip, cursor, 1));
        Some([a?, b?])
    }

    fn key(&mut self, w: &[u32], clip: usize, cursor: &KeyCursor, k: usize) -> Option<DecodedKey> {
        let slot = &mut self.clips[clip][cursor.keys[k] as usize];
        match slot {
            Slot::Decoded(decoded) => Some(decoded.clone()),
            Slot::Unasked => {
                *slot = Slot::Asked;
                None
            }
            Slot::Asked => {
                let decoded: DecodedKey = cursor.decode_key(w, k).into();
                self.held += decoded.len();
                *slot = Slot::Decoded(decoded.clone());
                Some(decoded)
            }
        }
    }
}

/// A decoded rotation key: a raw one as stored, a quantized one with `w >= 0` rebuilt from
/// the unit length (`packed_rotation`). Not normalized: the interpolation that follows
/// normalizes (and the optimizer measures the key as played, normalized).
#[inline(always)]
pub(crate) fn rotation(v: [f32; 4], raw: bool) -> Vec4 {
    if raw {
        return Vec4::from(v);
    }
    let w = (1.0 - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
        .max(0.0)
        .sqrt();
    Vec4::new(v[0], v[1], v[2], w)
}

/// The 64 bits from bit `at` (zeros past the words' end): a quantized key's three components
/// (at most 48 bits) lie within them. Bits run least significant first within little-endian
/// words, as the GPU reads them.
#[inline(always)]
fn window(w: &[u32], at: u32) -> u64 {
    let i = (at / 32) as usize;
    let [a, b, c] = match w.get(i..i + 3) {
        Some(&[a, b, c]) => [a, b, c],
        _ => [i, i + 1, i + 2].map(|i| w.get(i).copied().unwrap_or(0)),
    };
    let three = u128::from(a) | u128::from(b) << 32 | u128::from(c) << 64;
    (three >> (at % 32)) as u64
}

/// `count` bits (1 to 32) from bit `at`, least significant first within little-endian words.
#[inline(always)]
pub(crate) fn read_bits(w: &[u32], at: u32, count: u32) -> u32 {
    let (i, b) = (at / 32, at % 32);
    let lo = w[i as usize] >> b;
    let mask = if count == 32 {
        u32::MAX
    } else {
        (1u32 << count) - 1
    };
    if b + count <= 32 {
        return lo & mask;
    }
    (lo | (w[(i + 1) as usize] << (32 - b))) & mask
}
