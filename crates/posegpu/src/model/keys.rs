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

/// The key index of `times` (at least two, non-decreasing), stored right after them in the
/// library's time table so that a search takes two dependent loads instead of one per halving
/// (`search_keys` in `clip.wgsl`, [`find_indexed`]): a scale word `g = (n − 1) / (last −
/// first)`, then for each of the `n − 1` equal buckets of the time range, and one past the
/// last, the bucket's first candidate key as u32 bits.
///
/// A time `t` strictly inside the range falls in bucket `b = min((t − first)·g, n − 2)`
/// (f32, truncated), and its key `lo` (the last with `times[lo] ≤ t`) lies in `[L(b),
/// L(b + 1)]`, where `L(b)` is the last key whose own bucket is below `b`: every key before a
/// time's bucket is at or before that time, and every key past it after. The buckets of the
/// keys are made by the formula the search uses, so the window holds whatever the rounding.
pub(crate) fn key_index(times: &[f32]) -> Vec<f32> {
    let n = times.len();
    if n < 2 {
        return Vec::new();
    }
    let (first, last) = (times[0], times[n - 1]);
    let g = ((n - 1) as f64 / f64::from(last - first)) as f32;
    let g = if g.is_finite() { g } else { 0.0 };
    let mut index = Vec::with_capacity(n + 1);
    index.push(g);
    // L(b) for b = 0..=n-1: keys are in order, so their buckets never decrease.
    let mut k = 0;
    for b in 0..n as u32 {
        while k + 1 < n && bucket(times[k + 1] - first, g, n as u32 - 1) < b {
            k += 1;
        }
        index.push(f32::from_bits(k as u32));
    }
    index
}

/// The bucket of a time `d` past the first key, among `buckets` (`search_keys` in
/// `clip.wgsl` computes it with the same operations).
#[inline]
fn bucket(d: f32, g: f32, buckets: u32) -> u32 {
    (d * g).min((buckets - 1) as f32) as u32
}

/// [`find_keys`] over the `count` key times at `first` in the library's time table `table`,
/// through the key index after them ([`key_index`]): the same keys and blend factor, bit for
/// bit.
#[inline]
pub(crate) fn find_indexed(
    table: &[f32],
    first: usize,
    count: usize,
    t: f32,
) -> (usize, usize, f32) {
    let times = &table[first..first + count];
    let last = count - 1;
    if t <= times[0] {
        return (0, 0, 0.0);
    }
    if t >= times[last] {
        return (last, last, 0.0);
    }
    let index = &table[first + count..first + count + count + 1];
    let b = bucket(t - times[0], index[0], last as u32) as usize;
    let (mut lo, mut hi) = (
        index[1 + b].to_bits() as usize,
        (index[2 + b].to_bits() as usize + 1).min(last),
    );
    // The window first; where it does not hold `t` (an index and a time that disagree on the
    // bucket: a table from elsewhere), the whole range. The check reads the two keys the
    // blend factor needs anyway.
    for _ in 0..2 {
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if times[mid] <= t {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if times[lo] <= t && t < times[hi] {
            break;
        }
        (lo, hi) = (0, last);
    }
    (lo, hi, (t - times[lo]) / (times[hi] - times[lo]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `times` with its index after it, as the library stores them.
    fn table(times: &[f32]) -> Vec<f32> {
        let mut t = times.to_vec();
        t.extend(key_index(times));
        assert_eq!(t.len(), 2 * times.len() + 1);
        t
    }

    fn agrees(times: &[f32], probes: impl Iterator<Item = f32>) {
        let t = table(times);
        let (n, index) = (times.len(), &t[times.len()..]);
        for p in probes {
            // The index's own window holds the key, without the fallback to the whole range.
            if times[0] < p && p < times[n - 1] {
                let b = bucket(p - times[0], index[0], n as u32 - 1) as usize;
                let lo = index[1 + b].to_bits() as usize;
                let hi = (index[2 + b].to_bits() as usize + 1).min(n - 1);
                assert!(
                    times[lo] <= p && p < times[hi],
                    "{times:?} at {p}: {lo}..{hi}"
                );
            }
            let (a, b) = (find_keys(times, p), find_indexed(&t, 0, times.len(), p));
            assert_eq!(
                (a.0, a.1, a.2.to_bits()),
                (b.0, b.1, b.2.to_bits()),
                "{times:?} at {p}"
            );
        }
    }

    #[test]
    fn the_index_finds_what_the_search_finds() {
        let mut rng = crate::procedural::Rng(7);
        for n in 2..40 {
            // Uniform, clustered, repeated and tiny-span key times.
            let uniform: Vec<f32> = (0..n).map(|k| k as f32 / 30.0).collect();
            let mut random: Vec<f32> = (0..n).map(|_| rng.unit() * 3.0).collect();
            random.sort_by(f32::total_cmp);
            let clustered: Vec<f32> = (0..n).map(|k| ((k * k * k) as f32) * 1e-3).collect();
            let repeated: Vec<f32> = (0..n).map(|k| (k / 3) as f32 * 0.5).collect();
            let tiny: Vec<f32> = (0..n).map(|k| 1.0 + k as f32 * f32::EPSILON).collect();
            for times in [uniform, random, clustered, repeated, tiny] {
                let (lo, hi) = (times[0] - 0.1, times[n - 1] + 0.1);
                let probes = (0..400).map(|k| lo + (hi - lo) * k as f32 / 399.0);
                agrees(&times, probes.chain(times.iter().copied()));
            }
        }
    }

    #[test]
    fn a_wrong_index_still_finds_the_keys() {
        let times: Vec<f32> = (0..20).map(|k| (k as f32).sqrt()).collect();
        let mut t = table(&times);
        // Every bucket's window pointing at the wrong keys.
        for w in &mut t[times.len() + 1..] {
            *w = f32::from_bits(17);
        }
        for p in (0..300).map(|k| k as f32 / 60.0) {
            let (a, b) = (find_keys(&times, p), find_indexed(&t, 0, times.len(), p));
            assert_eq!(
                (a.0, a.1, a.2.to_bits()),
                (b.0, b.1, b.2.to_bits()),
                "at {p}"
            );
        }
    }
}
