//! What a transition costs per instance, side by side: the procedural humanoid (67 bones)
//! walking, 10,000 instances, in the middle of a 0.3 s switch to running. An inertialized
//! transition samples the new clip only and adds each bone's decaying offset (the
//! inertialization pass); a crossfade samples both clips and blends them. The plain rows play
//! one clip with no transition, through the same general sampling pipeline.
//!
//! The whole frame is timed: CPU twin on one core, GPU time from timestamp queries.
//! `POSEGPU_BENCH_SIZES=10000` picks the crowd sizes (default 10,000).

mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use posegpu::procedural::humanoid_asset;
use posegpu::{
    AnimLibrary, ClipSample, CpuEvaluator, GpuContext, GpuEvaluator, GpuOptions, InertialStart,
    PoseBatch, Poses,
};

const WALK: u32 = 1;
const RUN: u32 = 2;
const BLEND: f32 = 0.3;
const DT: f32 = 1.0 / 30.0;

#[derive(Clone, Copy)]
enum Row {
    Plain,
    Crossfade,
    Inertialized,
}

/// Frame `t` of `n` instances; an inertialized row's first frame (`start`) measures offsets.
fn batch(n: usize, row: Row, t: f32, start: bool) -> PoseBatch {
    let mut batch = PoseBatch::with_capacity(n, 5);
    for i in 0..n {
        let t = t + i as f32 * 0.37;
        match row {
            // A second sample of weight 0: the general pipeline, one clip sampled.
            Row::Plain => {
                batch.push_blend(&[
                    ClipSample::new(RUN, t, true),
                    ClipSample::new(WALK, t, true).with_weight(0.0),
                ]);
            }
            Row::Crossfade => {
                batch.push_blend(&[
                    ClipSample::new(RUN, t, true).with_weight(0.4),
                    ClipSample::new(WALK, t, true).with_weight(0.6),
                ]);
            }
            Row::Inertialized => {
                let begin = start.then(|| InertialStart {
                    now: ClipSample::new(WALK, t, true),
                    before: ClipSample::new(WALK, t - DT, true),
                    dt: DT,
                    interrupted: None,
                });
                let elapsed = if start { 0.0 } else { 0.12 };
                batch
                    .push_clip(RUN, t, true)
                    .inertialize(BLEND, elapsed, begin);
            }
        }
    }
    batch
}

fn transitions(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    match &ctx {
        Some(ctx) => eprintln!("adapter: {}", ctx.describe()),
        None => eprintln!("no adapter: CPU only"),
    }
    let asset = humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let rows = [
        ("plain", Row::Plain),
        ("crossfade", Row::Crossfade),
        ("inertialized", Row::Inertialized),
    ];
    for n in common::sizes() {
        let mut group = c.benchmark_group(format!("transitions/{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements((n * lib.bone_count()) as u64));
        for (label, row) in rows {
            let cpu = CpuEvaluator::new(&lib);
            let mut poses = Poses::default();
            cpu.evaluate_single_thread(&batch(n, row, 0.5, true), &mut poses)
                .unwrap();
            let fixed = batch(n, row, 0.5, false);
            group.bench_function(BenchmarkId::new("cpu_one_core", label), |b| {
                b.iter(|| cpu.evaluate_single_thread(&fixed, &mut poses).unwrap())
            });
            let Some(ctx) = &ctx else { continue };
            let mut gpu = GpuEvaluator::new(ctx, &lib, n, &GpuOptions::default()).unwrap();
            gpu.evaluate(&batch(n, row, 0.5, true)).unwrap();
            group.bench_function(BenchmarkId::new("gpu", label), |b| {
                b.iter_custom(|iters| {
                    common::gpu_time(&mut gpu, iters, |i| {
                        batch(n, row, 0.5 + i as f32 / 60.0, false)
                    })
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, transitions);
criterion_main!(benches);
