//! CPU twin of `shaders/packed.wgsl`: compressed clips' packed blocks read from the same words
//! of the key values (issue 31); also the decoder [`crate::compress::CompressedClip`] samples
//! with. Layout: the `PACKED_*` and `RATE_*`
//! constants in `src/layout/clips.rs`; spec: `docs/pose-math.md`, "Compressed keys".

use glam::{Vec3, Vec4};

use crate::layout::{
    key_bits, rate_bits, BONE_PRESENT, PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS,
    PACKED_INDEX_SHIFT, PACKED_QUANTIZED_SHIFT, PACKED_SEGMENTED, PACKED_SEGMENT_KEYS,
    PACKED_UNIFORM, RATE_CONSTANT, RATE_MASK, RATE_RAW, RATE_SHIFT, RATE_STEP_SHIFT,
};
use crate::math::{lerp3, normalize_quat};
use crate::model::find_keys;
use crate::Transform;

/// Words a packed block is read from: the library's key values (four to a 16-byte word, as
/// the GPU binds them) or a block of its own.
pub(crate) trait Words {
    fn word(&self, i: u32) -> u32;
}

impl Words for [u32] {
    #[inline]
    fn word(&self, i: u32) -> u32 {
        self[i as usize]
    }
}

impl Words for [[f32; 4]] {
    #[inline]
    fn word(&self, i: u32) -> u32 {
        self[(i / 4) as usize][(i % 4) as usize].to_bits()
    }
}

/// `N * unit + min` with one rounding, `N = lo * steps + q * (hi - lo)` an exact integer under
/// 2^24: `fma` in `packed.wgsl`, the same bits where the GPU fuses it (NVIDIA does; lavapipe
/// may round the product first, 1 ulp apart).
#[inline(always)]
pub(crate) fn dequantize(q: u32, min: f32, unit: f32, seg: [u8; 2], steps: u32) -> f32 {
    let n = u32::from(seg[0]) * steps + q * u32::from(seg[1] - seg[0]);
    (n as f32).mul_add(unit, min)
}

/// A packed block's header (`packed_header` in `clip.wgsl`).
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
    pub(crate) fn read(w: &(impl Words + ?Sized), base: u32) -> Self {
        Self {
            base,
            keys: w.word(base),
            first_time: f32::from_bits(w.word(base + 1)),
            inv_step: f32::from_bits(w.word(base + 2)),
            time_offset: w.word(base + 3),
            flags: w.word(base + 4),
            key_bits: w.word(base + 5),
            segment_table: w.word(base + 6),
            ranges: w.word(base + 7),
        }
    }

    /// Bone `bone`'s descriptor (`packed_bone`).
    #[inline]
    pub(crate) fn bone(&self, w: &(impl Words + ?Sized), bone: u32) -> [u32; 2] {
        let at = self.base + PACKED_HEADER_WORDS + PACKED_DESCRIPTOR_WORDS * bone;
        [w.word(at), w.word(at + 1)]
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

    /// The stored track `at` (of kind `kind`: 0 rotation, 1 translation, 2 scale) at keys `a`
    /// and `b` (`packed_track` twice): x, y, z, and a raw rotation's w. The same words as the
    /// shader reads, a track's ranges read once for both keys.
    #[inline(always)]
    fn decode_pair(
        &self,
        w: &(impl Words + ?Sized),
        at: &Located,
        kind: u32,
        (a, b): (u32, u32),
    ) -> ([f32; 4], [f32; 4]) {
        let Located {
            rate,
            bit,
            range,
            quantized,
        } = *at;
        if rate == RATE_CONSTANT {
            let v = |c| f32::from_bits(w.word(range + c));
            let x = [v(0), v(1), v(2), 0.0];
            return (x, x);
        }
        let segmented = self.flags & PACKED_SEGMENTED != 0;
        let ranges_words = if segmented {
            (6 * (self.flags >> PACKED_QUANTIZED_SHIFT)).div_ceil(4)
        } else {
            0
        };
        let segment = |key: u32| {
            self.base + w.word(self.base + self.segment_table + key / PACKED_SEGMENT_KEYS)
        };
        let first_bit = |segment: u32, key: u32| {
            (segment + ranges_words) * 32 + (key % PACKED_SEGMENT_KEYS) * self.key_bits + bit
        };
        let sa = segment(a);
        let sb = if a / PACKED_SEGMENT_KEYS == b / PACKED_SEGMENT_KEYS {
            sa
        } else {
            segment(b)
        };
        let (at_a, at_b) = (first_bit(sa, a), first_bit(sb, b));
        let (mut x, mut y) = ([0.0; 4], [0.0; 4]);
        if rate == RATE_RAW {
            let n = if kind == 0 { 4 } else { 3 };
            for c in 0..n {
                x[c] = f32::from_bits(read_bits(w, at_a + 32 * c as u32, 32));
                y[c] = f32::from_bits(read_bits(w, at_b + 32 * c as u32, 32));
            }
            return (x, y);
        }
        let bits = rate_bits(rate);
        let steps = (1u32 << bits) - 1;
        // An even byte: its pair (lo, hi) shares one word.
        let pair = |segment: u32, c: u32| -> [u8; 2] {
            if !segmented {
                return [0, 255];
            }
            let byte = quantized * 6 + c * 2;
            let pair = w.word(segment + byte / 4) >> (8 * (byte % 4));
            [(pair & 255) as u8, ((pair >> 8) & 255) as u8]
        };
        for c in 0..3u32 {
            let min = f32::from_bits(w.word(range + c));
            let unit = f32::from_bits(w.word(range + 3 + c));
            let seg_a = pair(sa, c);
            let seg_b = if sb == sa { seg_a } else { pair(sb, c) };
            let qa = read_bits(w, at_a + c * bits, bits);
            let qb = read_bits(w, at_b + c * bits, bits);
            x[c as usize] = dequantize(qa, min, unit, seg_a, steps);
            y[c as usize] = dequantize(qb, min, unit, seg_b, steps);
        }
        (x, y)
    }

    /// Source bone `bone`'s local at `t` (`packed_local`): each track decoded at the two keys
    /// and interpolated as plain keys are (`sample_channels` in `src/cpu/clip.rs`); a reference
    /// track keeps `fill`'s value (its rotation normalized). Only the rotation unless `full`.
    pub(crate) fn local(
        &self,
        w: &(impl Words + ?Sized),
        times: &[f32],
        bone: u32,
        t: f32,
        fill: Transform,
        full: bool,
    ) -> Transform {
        self.local_at(w, bone, self.keys_at(times, t), fill, full)
    }

    /// [`Self::local`] between keys already found ([`Self::keys_at`]). Where the CPU has FMA the
    /// dequantization's `mul_add` is one instruction, not a call.
    pub(crate) fn local_at(
        &self,
        w: &(impl Words + ?Sized),
        bone: u32,
        keys: (u32, u32, f32),
        fill: Transform,
        full: bool,
    ) -> Transform {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA.
            return unsafe { self.local_fma(w, bone, keys, fill, full) };
        }
        self.local_any(w, bone, keys, fill, full)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn local_fma(
        &self,
        w: &(impl Words + ?Sized),
        bone: u32,
        keys: (u32, u32, f32),
        fill: Transform,
        full: bool,
    ) -> Transform {
        self.local_any(w, bone, keys, fill, full)
    }

    #[inline(always)]
    fn local_any(
        &self,
        w: &(impl Words + ?Sized),
        bone: u32,
        (a, b, alpha): (u32, u32, f32),
        fill: Transform,
        full: bool,
    ) -> Transform {
        let d = self.bone(w, bone);
        // No closures here: a closure is compiled apart, without the caller's FMA.
        let mut out = fill;
        for kind in [1, 2] {
            let at = self.locate(d, kind);
            if !full || at.rate == 0 {
                continue;
            }
            let (x, y) = self.decode_pair(w, &at, kind, (a, b));
            let stepped = d[0] & (1 << (RATE_STEP_SHIFT + kind)) != 0;
            let v = lerp3(vec3(x), vec3(y), if stepped { 0.0 } else { alpha });
            if kind == 1 {
                out.translation = v;
            } else {
                out.scale = v;
            }
        }
        let at = self.locate(d, 0);
        out.rotation = if at.rate != 0 {
            let (x, y) = self.decode_pair(w, &at, 0, (a, b));
            let raw = at.rate == RATE_RAW;
            let (qa, qb) = (rotation(x, raw), rotation(y, raw));
            let alpha = if d[0] & (1 << RATE_STEP_SHIFT) != 0 {
                0.0
            } else {
                alpha
            };
            let sign = if qa.dot(qb) >= 0.0 { 1.0 } else { -1.0 };
            normalize_quat(qa * (1.0 - alpha) + qb * (alpha * sign))
        } else {
            normalize_quat(Vec4::from(out.rotation))
        };
        out
    }

    /// Whether the clip keys bone `bone` at all (`packed_present`).
    #[inline]
    pub(crate) fn present(&self, w: &(impl Words + ?Sized), bone: u32) -> bool {
        self.bone(w, bone)[0] & BONE_PRESENT != 0
    }
}

fn vec3(v: [f32; 4]) -> Vec3 {
    Vec3::new(v[0], v[1], v[2])
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

/// `count` bits (1 to 32) from bit `at`, least significant first within little-endian words.
#[inline(always)]
pub(crate) fn read_bits(w: &(impl Words + ?Sized), at: u32, count: u32) -> u32 {
    let (i, b) = (at / 32, at % 32);
    let lo = w.word(i) >> b;
    let mask = if count == 32 {
        u32::MAX
    } else {
        (1u32 << count) - 1
    };
    if b + count <= 32 {
        return lo & mask;
    }
    (lo | (w.word(i + 1) << (32 - b))) & mask
}
