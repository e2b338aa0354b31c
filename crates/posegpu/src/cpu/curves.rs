//! CPU twin of `shaders/curves.wgsl`: per (instance, curve), the curve's value as the
//! instance's layers blend it. A sample's value is its clip's curve at the sample's time (0
//! where the clip lacks the curve); the base blends its samples by the blend rule's weights;
//! a layered blend moves the value toward its samples' blend by its weight; an additive (or
//! dynamic) layer adds its weighted value (its pose's minus its base's). Masks weight bones,
//! not curves. Spec: `docs/pose-math.md`, "Curves".

use crate::batch::{self, ClipSample, LayerKind, PoseBatch};
use crate::layout::ZERO_WEIGHT;
use crate::layout::{Entry, Head};
use crate::library::AnimLibrary;
use crate::math::blend::kept_weights;
use crate::model::map_time;

/// Curve `curve` of one clip sample (`curve_of` in `curves.wgsl`).
fn curve_of(lib: &AnimLibrary, sample: &ClipSample, curve: usize) -> f32 {
    let data = lib.data();
    let clip = sample.clip.index();
    let t = map_time(
        sample.time,
        data.clip_data(sample.clip.0).duration,
        sample.looping,
    );
    let ch = &data.curve_table[clip * data.curve_names.len() + curve];
    super::clip::sample_curve(lib, ch, t)
}

/// The blend of a layer's samples' values by the blend rule (0 where no weight is kept).
fn blend(lib: &AnimLibrary, samples: &[Entry], curve: usize) -> f32 {
    let samples = || samples.iter().map(ClipSample::from_entry);
    let (sum, _) = kept_weights(samples().map(|s| s.weight));
    samples()
        .filter(|s| s.weight > ZERO_WEIGHT)
        .fold(0.0, |acc, s| {
            acc + curve_of(lib, &s, curve) * (s.weight / sum)
        })
}

/// One instance's value of curve `curve`.
fn instance_value(lib: &AnimLibrary, entries: &[Entry], head: &Head, curve: usize) -> f32 {
    let mut value = 0.0;
    for layer in batch::layers(entries, head).map_while(|l| l) {
        let w = layer.weight;
        match layer.kind {
            LayerKind::Base => value = blend(lib, layer.samples, curve),
            LayerKind::Ik | LayerKind::Inertialize => {}
            _ if w <= ZERO_WEIGHT => {}
            LayerKind::Blend(_) => {
                let target = blend(lib, layer.samples, curve);
                value = if w >= 1.0 - ZERO_WEIGHT {
                    target
                } else {
                    value + (target - value) * w
                };
            }
            LayerKind::Additive(_) => value += blend(lib, layer.samples, curve) * w,
            LayerKind::Dynamic(_) => {
                let s = |k: usize| curve_of(lib, &ClipSample::from_entry(&layer.samples[k]), curve);
                value += (s(0) - s(1)) * w;
            }
        }
    }
    value
}

/// One instance's values of every curve.
pub(super) fn run_instance(lib: &AnimLibrary, entries: &[Entry], head: &Head, values: &mut [f32]) {
    for (c, v) in values.iter_mut().enumerate() {
        *v = instance_value(lib, entries, head, c);
    }
}

/// The stage for every instance of `batch`: `out[instance * curves + curve]`.
pub(super) fn run(lib: &AnimLibrary, batch: &PoseBatch, out: &mut [f32]) {
    let curves = lib.curve_names().len();
    if curves == 0 {
        return;
    }
    for (head, values) in batch.heads.iter().zip(out.chunks_exact_mut(curves)) {
        run_instance(lib, &batch.entries, head, values);
    }
}
