//! The resampling rule: keys on a uniform grid (a first time and 1 / step, no times
//! stored), except where a clip's keys are sparse and a grid would cost more. A clip whose
//! distinct key times are not uniform is tried on grids of as many keys and of twice as many;
//! a grid is kept only where it replays the clip within half the threshold at every original
//! key time, and the packed form that comes out smallest wins (`CompressedClip::compress`).

use glam::Vec4;

use super::optimize::{shown, vertex_error};
use super::Input;
use crate::math::{lerp3, normalize_quat};
use crate::{Interpolation, Transform};

/// A uniform grid over `times`' span whose keys (the clip's exact values there, interpolated
/// as the sampler does) replay the clip within `budget` (skeleton units) at every original key
/// time; `None` where no grid of `times.len()` or `2 × times.len() − 1` keys does, or where a
/// track steps (a grid would move its steps). The optimizer then measures the form's error
/// itself.
pub(super) fn grid(input: &Input, times: &[f32], budget: f32) -> Option<Vec<f32>> {
    let stepped = input.tracks.iter().any(|t| {
        [
            t.translation.as_ref().map(|c| c.interpolation),
            t.rotation.as_ref().map(|c| c.interpolation),
            t.scale.as_ref().map(|c| c.interpolation),
        ]
        .contains(&Some(Interpolation::Step))
    });
    let (first, last) = (times[0], times[times.len() - 1]);
    if stepped || times.len() < 3 || last <= first || last.is_nan() {
        return None;
    }
    [times.len(), 2 * times.len() - 1]
        .into_iter()
        .find_map(|n| {
            let step = (last - first) / (n - 1) as f32;
            let grid: Vec<f32> = (0..n).map(|k| first + k as f32 * step).collect();
            let error = replay_error(input, times, &grid);
            (error <= budget).then_some(grid)
        })
}

/// The largest vertex error, at every time of `times`, between the clip and its exact values
/// at `grid` interpolated as the sampler interpolates them.
fn replay_error(input: &Input, times: &[f32], grid: &[f32]) -> f32 {
    let pose = |t: f32| -> Vec<Transform> {
        let tracks = input.tracks.iter().zip(&input.reference);
        tracks.map(|(track, r)| track.sample(t, r)).collect()
    };
    let keys: Vec<Vec<Transform>> = grid.iter().map(|&t| pose(t)).collect();
    let step = grid[1] - grid[0];
    let posed = |locals: Vec<Transform>| shown(input.parents, input.base, &locals);
    let distance = input.height / 60.0;
    let mut worst = 0.0f32;
    for &t in times {
        let u = ((t - grid[0]) / step).clamp(0.0, (grid.len() - 1) as f32);
        let k = (u as usize).min(grid.len() - 2);
        let alpha = u - k as f32;
        let (a, b) = (&keys[k], &keys[k + 1]);
        let between: Vec<Transform> = a
            .iter()
            .zip(b)
            .map(|(x, y)| {
                let (qa, qb) = (Vec4::from(x.rotation), Vec4::from(y.rotation));
                let sign = if qa.dot(qb) >= 0.0 { 1.0 } else { -1.0 };
                Transform {
                    translation: lerp3(x.translation, y.translation, alpha),
                    rotation: normalize_quat(qa * (1.0 - alpha) + qb * (alpha * sign)),
                    scale: lerp3(x.scale, y.scale, alpha),
                }
            })
            .collect();
        let (want, got) = (posed(pose(t)), posed(between));
        for (x, y) in want.iter().zip(&got) {
            worst = worst.max(vertex_error(x, y, distance));
        }
    }
    worst
}
