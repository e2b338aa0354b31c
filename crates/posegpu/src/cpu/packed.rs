//! CPU twin of `shaders/packed.wgsl`: compressed clips' packed blocks read from the same words
//! of the key values (issue 31); also the decoder [`crate::compress::CompressedClip`] samples
//! with. Layout: the `PACKED_*` and `RATE_*` constants in `src/layout/clips.rs` and the header
//! in `src/layout/packed.rs`; spec: `docs/pose-math.md`, "Compressed keys".

use glam::{Vec3, Vec4};

use crate::layout::{
    rate_bits, BONE_PRESENT, PACKED_SEGMENTED, PACKED_SEGMENT_KEYS, PACKED_UNIFORM, RATE_CONSTANT,
    RATE_RAW, RATE_STEP_SHIFT,
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

    /// The stored track `at` (of kind `kind`: 0 rotation, 1 translation, 2 scale) at keys `a`
    /// and `b` (`packed_track` twice): x, y, z, and a raw rotation's w. The same words as the
    /// shader reads, a track's ranges read once for both keys.
    #[inline(always)]
    fn decode_pair(
        &self,
        w: &[u32],
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
            let v = |c| f32::from_bits(w[(range + c) as usize]);
            let x = [v(0), v(1), v(2), 0.0];
            return (x, x);
        }
        let segmented = self.flags & PACKED_SEGMENTED != 0;
        let ranges_words = self.segment_range_words();
        let segment = |key: u32| {
            self.base + w[(self.base + self.segment_table + key / PACKED_SEGMENT_KEYS) as usize]
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
            let pair = w[(segment + byte / 4) as usize] >> (8 * (byte % 4));
            [(pair & 255) as u8, ((pair >> 8) & 255) as u8]
        };
        for c in 0..3u32 {
            let min = f32::from_bits(w[(range + c) as usize]);
            let unit = f32::from_bits(w[(range + 3 + c) as usize]);
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
        w: &[u32],
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
        w: &[u32],
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
        w: &[u32],
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
        w: &[u32],
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
    pub(crate) fn present(&self, w: &[u32], bone: u32) -> bool {
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
