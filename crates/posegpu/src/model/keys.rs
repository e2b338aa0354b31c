//! From a requested time to the keys around it: the time mapping (clamp or loop) and the key
//! search every sampler follows (`clip.wgsl` on the GPU, [`crate::Clip`] and the CPU twin on
//! the host). `docs/pose-math.md`, "Keyframe sampling".

/// Clamps `t` to `[0, duration]`, or wraps it into `[0, duration)` when looping (a Euclidean
/// remainder, negative times included). A zero-length clip maps every time to 0.
pub fn map_time(t: f32, duration: f32, looping: bool) -> f32 {
    if duration <= 0.0 {
        return 0.0;
    }
    if looping {
        let r = t - duration * (t / duration).floor();
        // Rounding can land exactly on `duration` (or a hair below 0): that is the loop's start.
        if (0.0..duration).contains(&r) {
            r
        } else {
            0.0
        }
    } else {
        t.clamp(0.0, duration)
    }
}

/// The pair of keys around `t` and the blend factor between them: `times[k0] ≤ t < times[k1]`,
/// or `k0 == k1` before the first key and after the last.
#[inline]
pub fn find_keys(times: &[f32], t: f32) -> (usize, usize, f32) {
    let last = times.len() - 1;
    if t <= times[0] {
        return (0, 0, 0.0);
    }
    if t >= times[last] {
        return (last, last, 0.0);
    }
    let (mut lo, mut hi) = (0, last);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if times[mid] <= t {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi, (t - times[lo]) / (times[hi] - times[lo]))
}
