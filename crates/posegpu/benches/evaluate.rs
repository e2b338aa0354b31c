//! GPU against the CPU twin, side by side: sampling + hierarchy for 1k, 10k and 100k instances
//! of the procedural humanoid (67 bones) and Mech_Mike (43 bones).
//!
//! The GPU figures are GPU time from timestamp queries (`iter_custom`), not wall clock; where the
//! adapter has no timestamps they fall back to wall clock including the wait.
//! `POSEGPU_BENCH_SIZES=1000,10000` picks the crowd sizes.

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use posegpu::{AnimLibrary, CpuEvaluator, GpuContext, GpuEvaluator, GpuOptions, PoseBatch, Poses};

fn libraries() -> Vec<(&'static str, AnimLibrary)> {
    let mut out = Vec::new();
    let h = posegpu::procedural::humanoid_asset();
    out.push((
        "humanoid67",
        AnimLibrary::new(&h.skeleton, &h.clips).unwrap(),
    ));
    let mike = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/anim-data/gltf/quaternius/Mech_Mike.glb"
    );
    match posegpu::import::load(mike) {
        Ok(a) => out.push((
            "mech_mike43",
            AnimLibrary::new(&a.skeleton, &a.clips).unwrap(),
        )),
        Err(e) => eprintln!("Mech_Mike not measured: {e}"),
    }
    out
}

fn sizes() -> Vec<usize> {
    std::env::var("POSEGPU_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000])
}

fn evaluate(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    match &ctx {
        Some(ctx) => eprintln!("adapter: {}", ctx.describe()),
        None => eprintln!("no GPU adapter: CPU only"),
    }
    for (name, lib) in libraries() {
        let mut group = c.benchmark_group(format!("evaluate/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500));
        for n in sizes() {
            group.throughput(Throughput::Elements((n * lib.bone_count()) as u64));
            let cpu = CpuEvaluator::new(&lib);
            let mut poses = Poses::default();
            group.bench_function(BenchmarkId::new("cpu_all_cores", n), |b| {
                let mut frame = 0;
                b.iter(|| {
                    frame += 1;
                    cpu.evaluate(&common::crowd(&lib, n, frame as f32 / 60.0), &mut poses)
                        .unwrap();
                })
            });
            if n <= 10_000 {
                group.bench_function(BenchmarkId::new("cpu_one_core", n), |b| {
                    let batch = PoseBatch::from_instances(&common::crowd(&lib, n, 1.0 / 60.0));
                    b.iter(|| cpu.evaluate_single_thread(&batch, &mut poses).unwrap())
                });
            }
            let Some(ctx) = &ctx else { continue };
            let mut gpu = GpuEvaluator::new(ctx, &lib, n, &GpuOptions::default()).unwrap();
            group.bench_function(BenchmarkId::new("gpu", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for frame in 0..iters {
                        let inst = common::crowd(&lib, n, frame as f32 / 60.0);
                        let start = Instant::now();
                        let timed = gpu.evaluate_timed(&inst).unwrap();
                        total += match timed {
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

criterion_group!(benches, evaluate);
criterion_main!(benches);
