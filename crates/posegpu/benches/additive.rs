//! The cost of additive layers per layer per bone, local against mesh space, on the CPU twin
//! and the GPU: the procedural humanoid (67 bones) walking or idling, with 0, 1 or 2 layers of
//! its aim poses as additives (weight 0.7, the partial-weight path), all in local space or all
//! in mesh space.
//!
//! The whole frame is timed (sampling, the layer stage when there are mesh-space layers, the
//! hierarchy): CPU twin on one core (`CpuEvaluator::evaluate_single_thread`), GPU time from
//! timestamp queries. A layer's cost is the difference to the 0-layer row.
//! `POSEGPU_BENCH_SIZES=10000` picks the crowd sizes (default 10,000).

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use posegpu::procedural::{humanoid_aim_poses, humanoid_asset};
use posegpu::{
    make_additive, AdditiveBase, AdditiveSpace, AnimLibrary, ClipSample, CpuEvaluator, GpuContext,
    GpuEvaluator, GpuOptions, PoseBatch, Poses,
};

/// The humanoid's clips, then two aim poses as local additives, then the same as mesh ones.
fn library() -> (AnimLibrary, u32) {
    let asset = humanoid_asset();
    let skeleton = &asset.skeleton;
    let poses = humanoid_aim_poses(skeleton).unwrap();
    let mut clips = asset.clips.clone();
    let first = clips.len() as u32;
    for space in AdditiveSpace::ALL {
        for pose in [&poses[0], &poses[8]] {
            let base = AdditiveBase::ReferencePose;
            clips.push(make_additive(pose.name(), skeleton, pose, base, space).unwrap());
        }
    }
    (AnimLibrary::new(skeleton, &clips).unwrap(), first)
}

/// `n` instances on the first two clips, each with `layers` additive layers in `space` of
/// weight `w`.
fn batch(n: usize, first: u32, (layers, space, w): Config, t: f32) -> PoseBatch {
    let mut batch = PoseBatch::with_capacity(n, 2 + 2 * layers);
    let offset = first + if space == AdditiveSpace::Mesh { 2 } else { 0 };
    for i in 0..n {
        let mut instance = batch.push_clip((i % 2) as u32, t + i as f32 * 0.37, true);
        for k in 0..layers {
            let sample = ClipSample::new(offset + k as u32, 0.0, false);
            instance = instance.additive(space, w, &[sample]);
        }
    }
    batch
}

/// Layers per instance, their space and weight.
type Config = (usize, AdditiveSpace, f32);

fn sizes() -> Vec<usize> {
    std::env::var("POSEGPU_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000])
}

fn additive(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    match &ctx {
        Some(ctx) => eprintln!("adapter: {}", ctx.describe()),
        None => eprintln!("no adapter: CPU only"),
    }
    let (lib, first) = library();
    // The "none" row has one layer of weight 0: it keeps the general sampling pipeline of the
    // layered rows, and is skipped before any clip is sampled.
    let configs: [(&str, Config); 5] = [
        ("none", (1, AdditiveSpace::Local, 0.0)),
        ("local_x1", (1, AdditiveSpace::Local, 0.7)),
        ("local_x2", (2, AdditiveSpace::Local, 0.7)),
        ("mesh_x1", (1, AdditiveSpace::Mesh, 0.7)),
        ("mesh_x2", (2, AdditiveSpace::Mesh, 0.7)),
    ];
    for n in sizes() {
        let mut group = c.benchmark_group(format!("additive/{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements((n * lib.bone_count()) as u64));
        let mut gpu = ctx
            .as_ref()
            .map(|ctx| GpuEvaluator::new(ctx, &lib, n, &GpuOptions::default()).unwrap());
        for (label, config) in configs {
            let frame = |t: f32| batch(n, first, config, t);
            let cpu = CpuEvaluator::new(&lib);
            let mut poses = Poses::default();
            let fixed = frame(0.5);
            group.bench_function(BenchmarkId::new("cpu_one_core", label), |b| {
                b.iter(|| cpu.evaluate_single_thread(&fixed, &mut poses).unwrap())
            });
            let Some(gpu) = gpu.as_mut() else { continue };
            group.bench_function(BenchmarkId::new("gpu", label), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for i in 0..iters {
                        let batch = frame(i as f32 / 60.0);
                        let start = Instant::now();
                        total += match gpu.evaluate_batch_timed(&batch).unwrap() {
                            Some(t) => Duration::from_nanos(t.total_ns() as u64),
                            None => start.elapsed(),
                        };
                    }
                    total
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, additive);
criterion_main!(benches);
