//! Demo workloads: crowds that play every clip of a library at spread phases.

use posegpu::{AnimLibrary, ClipId, ClipSample};

/// A crowd of `count` looping instances, clips dealt round-robin, phases spread evenly over
/// each clip (a golden-ratio sequence), all advanced by `time` seconds: the workload of the
/// demo, `posegpu render` and the benchmarks.
pub fn crowd(lib: &AnimLibrary, count: usize, time: f32) -> Vec<ClipSample> {
    crowd_of(lib, 0..lib.clip_count(), count, time)
}

/// The same, dealing only the clips in `clips` (a range of `lib`'s clip indices).
pub fn crowd_of(
    lib: &AnimLibrary,
    clips: std::ops::Range<usize>,
    count: usize,
    time: f32,
) -> Vec<ClipSample> {
    let n = clips.len().max(1);
    (0..count)
        .map(|i| {
            let clip = clips.start + i % n;
            let duration = if clip < lib.clip_count() {
                lib.clip_duration(ClipId(clip as u32))
            } else {
                0.0
            };
            let phase = (i as f32 * 0.618_034).fract() * duration;
            ClipSample::new(clip as u32, phase + time, true)
        })
        .collect()
}
