//! glTF's CUBICSPLINE channels, baked at import into LINEAR keys that stay within
//! [`CUBIC_TOLERANCE`] of the curve. Baked rather than sampled as Hermite at run time: the GPU
//! sampling stage then keeps one interpolation path (a key pair and a blend factor, the same
//! for every channel), the curve's extra keys cost memory only where the curve bends, and the
//! result plays the same in every consumer of the library (exported .glb files included).

use glam::Vec4;

/// The most a baked key's linear (for rotations: normalized linear) interpolation departs from
/// the curve, per component, at the checked points.
pub const CUBIC_TOLERANCE: f32 = 1e-4;

/// The most pieces one key interval is cut into.
const MAX_PIECES: usize = 256;

/// glTF's Hermite segment between values `p0` and `p1` with tangents `m0` (out of the first
/// key) and `m1` (into the second) already scaled by the interval's length, at `s` in 0..=1.
fn hermite(p0: Vec4, m0: Vec4, p1: Vec4, m1: Vec4, s: f32) -> Vec4 {
    let (s2, s3) = (s * s, s * s * s);
    p0 * (2.0 * s3 - 3.0 * s2 + 1.0)
        + m0 * (s3 - 2.0 * s2 + s)
        + p1 * (-2.0 * s3 + 3.0 * s2)
        + m1 * (s3 - s2)
}

/// LINEAR keys for a CUBICSPLINE channel: `values` holds, per key time, the in-tangent, the
/// value and the out-tangent (glTF's layout). `unit`: the values are rotations, normalized
/// after the curve as glTF says. Each interval is cut into 1, 2, 4, ... pieces until the
/// linear keys stay within [`CUBIC_TOLERANCE`] of the curve at every piece's quarter points.
pub(super) fn bake(
    times: &[f32],
    values: &[Vec4],
    unit: bool,
) -> Result<(Vec<f32>, Vec<Vec4>), String> {
    if values.len() != 3 * times.len() {
        return Err(format!(
            "CUBICSPLINE needs 3 values per key (in-tangent, value, out-tangent): {} values for \
             {} keys",
            values.len(),
            times.len()
        ));
    }
    let fix = |v: Vec4| if unit { v.normalize_or_zero() } else { v };
    let value = |k: usize| values[3 * k + 1];
    let mut out_t = Vec::with_capacity(times.len());
    let mut out_v = Vec::with_capacity(times.len());
    for k in 0..times.len() {
        out_t.push(times[k]);
        out_v.push(fix(value(k)));
        let Some(&t1) = times.get(k + 1) else { break };
        let dt = t1 - times[k];
        // Equal or decreasing times: the clip's own checks refuse them.
        if dt.is_nan() || dt <= 0.0 {
            continue;
        }
        let (p0, m0, p1, m1) = (
            value(k),
            values[3 * k + 2] * dt,
            value(k + 1),
            values[3 * k + 3] * dt,
        );
        let curve = |s: f32| fix(hermite(p0, m0, p1, m1, s));
        let lerp =
            |a: Vec4, b: Vec4, f: f32| fix(a.lerp(if unit && a.dot(b) < 0.0 { -b } else { b }, f));
        let mut pieces = 1;
        while pieces < MAX_PIECES {
            let fits = (0..pieces).all(|i| {
                let (s0, s1) = (i as f32 / pieces as f32, (i + 1) as f32 / pieces as f32);
                let (a, b) = (curve(s0), curve(s1));
                [0.25, 0.5, 0.75].iter().all(|&f| {
                    let s = s0 + (s1 - s0) * f;
                    (lerp(a, b, f) - curve(s)).abs().max_element() <= CUBIC_TOLERANCE
                })
            });
            if fits {
                break;
            }
            pieces *= 2;
        }
        for i in 1..pieces {
            let s = i as f32 / pieces as f32;
            out_t.push(times[k] + dt * s);
            out_v.push(curve(s));
        }
    }
    Ok((out_t, out_v))
}
