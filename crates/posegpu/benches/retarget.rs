//! The cost of retargeting against playing clips on their own skeleton: the procedural
//! humanoid's clips (67 bones) on `humanoid_variant` (other proportions and rest orientations),
//! every bone in one of UE's translation modes, with the humanoid preset, and through a
//! character source's plan (onto the humanoid itself and onto the variant).
//!
//! Only the sampling stage retargets, so this measures it alone: on the CPU (one core,
//! `CpuEvaluator::sample_locals`) and on the GPU (the sampling pass's time from timestamp queries).
//! `POSEGPU_BENCH_SIZES=10000` picks the crowd sizes (default 10,000 and 100,000).
//!
//! The `real` group does the same with motion capture, where every bone is animated: a CMU
//! walk (BVH) and the UAL walk (glTF) each on its own skeleton, against the same clip through
//! the default plan onto a character of another tool (per bone: the skeletons differ in size),
//! and baked onto it at upload; then the whole CPU pipeline of each, the retargeted ones with
//! feet IK per instance, and on the GPU the sampling pass and the IK pass.
//!
//! The `ik` group times the IK stage after retargeting (the torso, both legs and the left arm
//! of the variant, `IkWeights::ALL`): the whole CPU pipeline on one core with and without it, and on
//! the GPU the IK pass against the sampling pass, from timestamp queries.

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use posegpu::retarget::Rig;
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{
    AnimLibrary, Asset, AssetFrame, CpuEvaluator, FusePolicy, GpuContext, GpuEvaluator, GpuOptions,
    IkWeights, PoseBatch, Poses, TranslationMode,
};
use posegpu::{PassTimes, Stage};

/// (label, library): the baseline first, then each mode, the preset, then the plans.
fn libraries() -> Vec<(String, AnimLibrary)> {
    let h = posegpu::procedural::humanoid_asset();
    let variant = posegpu::procedural::humanoid_variant(7);
    let mut rigs: Vec<(String, Rig)> = TranslationMode::ALL
        .iter()
        .map(|m| (m.to_string(), Rig::uniform(*m)))
        .collect();
    rigs.push(("humanoid_preset".into(), Rig::humanoid()));
    let mut out = vec![(
        "own_skeleton".to_string(),
        AnimLibrary::new(&h.skeleton, &h.clips).unwrap(),
    )];
    for (label, rig) in rigs {
        let mut b = AnimLibrary::builder(&variant);
        let s = b.add_source("humanoid", &h.skeleton, None, &rig).unwrap();
        b.add_clips_from(s, &h.clips).unwrap();
        out.push((label, b.build()));
    }
    let variant = Asset {
        skeleton: variant,
        clips: Vec::new(),
        nodes: None,
        frame: AssetFrame::Y_UP,
    };
    for (label, target) in [("plan_onto_itself", &h), ("plan_onto_variant", &variant)] {
        let plan = RetargetPlan::new(&h, target, &PlanOptions::default()).unwrap();
        let mut b = AnimLibrary::builder(&target.skeleton);
        let s = b.add_character_source("humanoid", &h, &plan).unwrap();
        b.add_clips_from(s, &h.clips).unwrap();
        out.push((label.to_string(), b.build()));
    }
    out
}

fn sizes() -> Vec<usize> {
    std::env::var("POSEGPU_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000])
}

fn retarget(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    match &ctx {
        Some(ctx) => eprintln!("adapter: {}", ctx.describe()),
        None => eprintln!("no GPU adapter: CPU only"),
    }
    for n in sizes() {
        let mut group = c.benchmark_group(format!("retarget/{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        for (label, lib) in libraries() {
            group.throughput(Throughput::Elements((n * lib.bone_count()) as u64));
            let instances = common::crowd(&lib, n, 0.5);
            if n <= 10_000 {
                let mut locals = Vec::new();
                let batch = PoseBatch::from_instances(&instances);
                let cpu = CpuEvaluator::new(&lib);
                group.bench_function(BenchmarkId::new("cpu_sample_one_core", &label), |b| {
                    b.iter(|| cpu.sample_locals(&batch, &mut locals).unwrap())
                });
            }
            let Some(ctx) = &ctx else { continue };
            let mut gpu = GpuEvaluator::new(ctx, &lib, n, &GpuOptions::default()).unwrap();
            group.bench_function(BenchmarkId::new("gpu_sample", &label), |b| {
                b.iter_custom(|iters| common::gpu_sampling_time(&mut gpu, &lib, n, iters))
            });
        }
        group.finish();
    }
}

/// `instances` of `lib`, each with IK weights `w` (none: no IK layer).
fn ik_batch(lib: &AnimLibrary, n: usize, time: f32, w: Option<IkWeights>) -> PoseBatch {
    let mut batch = PoseBatch::with_capacity(n, 3);
    for i in common::crowd(lib, n, time) {
        let instance = batch.push_blend(&[i]);
        if let Some(w) = w {
            instance.ik(w);
        }
    }
    batch
}

fn ik(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    let (_, lib) = libraries()
        .into_iter()
        .find(|(l, _)| l == "plan_onto_variant")
        .expect("the plan library");
    for n in sizes() {
        let mut group = c.benchmark_group(format!("ik/{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements((n * lib.bone_count()) as u64));
        if n <= 10_000 {
            let cpu = CpuEvaluator::new(&lib);
            let mut poses = Poses::default();
            for (label, w) in [("no_ik", None), ("ik", Some(IkWeights::ALL))] {
                let batch = ik_batch(&lib, n, 0.5, w);
                group.bench_function(BenchmarkId::new("cpu_pipeline_one_core", label), |b| {
                    b.iter(|| cpu.evaluate_single_thread(&batch, &mut poses).unwrap())
                });
            }
        }
        let Some(ctx) = &ctx else { continue };
        let mut gpu = GpuEvaluator::new(ctx, &lib, n, &GpuOptions::default()).unwrap();
        let passes: [(&str, PassOf); 2] = [
            ("gpu_sample_pass", |t| {
                t.ns(Stage::Sample) + t.ns(Stage::Fused)
            }),
            ("gpu_ik_pass", |t| t.ns(Stage::Ik)),
        ];
        for (label, pass) in passes {
            group.bench_function(label, |b| {
                b.iter_custom(|iters| {
                    gpu_pass(&mut gpu, &lib, n, Some(IkWeights::ALL), iters, pass)
                })
            });
        }
        group.finish();
    }
}

/// (label, library, retargeted) of the `real` group: a clip on its own skeleton, then through a
/// plan, then baked onto the target at upload.
fn real_libraries() -> Vec<(String, AnimLibrary, bool)> {
    let mut out = Vec::new();
    for (i, (source, _, target)) in common::CROSS_TOOL_PAIRS.into_iter().enumerate() {
        let (s, clip, t, plan) = common::cross_tool_pair(i);
        let stem = |p: &str| {
            std::path::Path::new(p)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        let own = AnimLibrary::new(&s.skeleton, std::slice::from_ref(&clip)).unwrap();
        out.push((format!("{}_own", stem(source)), own, false));
        let mut b = AnimLibrary::builder(&t.skeleton);
        let id = b.add_character_source("source", &s, &plan).unwrap();
        b.add_clips_from(id, std::slice::from_ref(&clip)).unwrap();
        out.push((
            format!("{}_onto_{}", stem(source), stem(target)),
            b.build(),
            true,
        ));
        // The same clip baked onto the target at upload: the target's own speed.
        let mut b = AnimLibrary::builder(&t.skeleton);
        b.add_baked_clips(&s, &plan, std::slice::from_ref(&clip))
            .unwrap();
        out.push((
            format!("{}_baked_onto_{}", stem(source), stem(target)),
            b.build(),
            true,
        ));
    }
    out
}

/// One pass's time, of the times a frame reports.
type PassOf = fn(&PassTimes) -> f64;

/// The GPU time of `pass` (of the times a frame reports) over `iters` frames of `n` instances
/// of `lib`, each with IK weights `w` (none: no IK layer); wall time where the adapter has no
/// timestamp queries.
fn gpu_pass(
    gpu: &mut GpuEvaluator,
    lib: &AnimLibrary,
    n: usize,
    w: Option<IkWeights>,
    iters: u64,
    pass: PassOf,
) -> Duration {
    let mut total = Duration::ZERO;
    for frame in 0..iters {
        let batch = ik_batch(lib, n, frame as f32 / 60.0, w);
        let start = Instant::now();
        total += match gpu.evaluate_timed(&batch).unwrap() {
            Some(t) => Duration::from_nanos(pass(&t) as u64),
            None => start.elapsed(),
        };
    }
    total
}

fn real(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    for n in sizes().into_iter().filter(|&n| n <= 10_000) {
        let mut group = c.benchmark_group(format!("real/{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        for (label, lib, retargeted) in real_libraries() {
            group.throughput(Throughput::Elements((n * lib.bone_count()) as u64));
            let batch = PoseBatch::from_instances(&common::crowd(&lib, n, 0.5));
            let cpu = CpuEvaluator::new(&lib);
            let mut locals = Vec::new();
            group.bench_function(BenchmarkId::new("cpu_sample_one_core", &label), |b| {
                b.iter(|| cpu.sample_locals(&batch, &mut locals).unwrap())
            });
            // The whole frame: retargeted clips with feet IK per instance (the baked clips'
            // goals from their keys, the plan's from its goal records), the own clip without.
            let w = retargeted.then_some(IkWeights::FEET);
            let batch = ik_batch(&lib, n, 0.5, w);
            let mut poses = Poses::default();
            group.bench_function(BenchmarkId::new("cpu_pipeline_one_core", &label), |b| {
                b.iter(|| cpu.evaluate_single_thread(&batch, &mut poses).unwrap())
            });
            // On the GPU, separate passes (the fused one would fold the hierarchy into the
            // sampling time): the sampling pass, and the IK pass of the retargeted clips.
            let Some(ctx) = &ctx else { continue };
            let options = GpuOptions {
                passes: FusePolicy::Separate,
                ..GpuOptions::default()
            };
            let mut gpu = GpuEvaluator::new(ctx, &lib, n, &options).unwrap();
            group.bench_function(BenchmarkId::new("gpu_sample_pass", &label), |b| {
                b.iter_custom(|iters| {
                    gpu_pass(&mut gpu, &lib, n, w, iters, |t| {
                        t.ns(Stage::Sample) + t.ns(Stage::Fused)
                    })
                })
            });
            if w.is_some() {
                group.bench_function(BenchmarkId::new("gpu_ik_pass", &label), |b| {
                    b.iter_custom(|iters| {
                        gpu_pass(&mut gpu, &lib, n, w, iters, |t| t.ns(Stage::Ik))
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, retarget, ik, real);
criterion_main!(benches);
