//! The cost of additive layers per layer per bone, local against mesh space, on the CPU twin
//! and the GPU: the procedural humanoid (67 bones) walking or idling, with 0, 1 or 2 layers of
//! its aim poses as additives (weight 0.7, the partial-weight path), all in local space or all
//! in mesh space. Then one layer with a bone mask (the upper body, from `spine_01` over two
//! bones) against the same layer unmasked, and layered blends per bone of the wave clip
//! (weight 0.7), local and mesh, masked and not.
//!
//! The whole frame is timed (sampling, the layer stage when there are mesh-space layers, the
//! hierarchy): CPU twin on one core (`CpuEvaluator::evaluate_single_thread`), GPU time from
//! timestamp queries. A layer's cost is the difference to the 0-layer row.
//! `POSEGPU_BENCH_SIZES=10000` picks the crowd sizes (default 10,000).

mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::procedural::{humanoid_aim_poses, humanoid_asset};
use posegpu::{
    AdditiveSpace, AnimLibrary, ClipSample, CpuEvaluator, GpuContext, GpuEvaluator, GpuOptions,
    MaskBranch, MaskId, PoseBatch, Poses,
};

/// The humanoid's wave clip, blended over the walk by the blend rows.
const WAVE: u32 = 3;

/// The humanoid's clips, then two aim poses as local additives, then the same as mesh ones;
/// the upper-body mask.
fn library() -> (AnimLibrary, u32, MaskId) {
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
    let mut builder = AnimLibrary::builder(skeleton);
    builder.add_clips(&clips).unwrap();
    let upper = builder
        .add_mask("upper", &[MaskBranch::new("spine_01", 2)])
        .unwrap();
    (builder.build(), first, upper)
}

/// What a row's layers are.
#[derive(Clone, Copy)]
enum Form {
    Additive,
    Blend,
}

/// Layers per instance, their form, space and weight, and whether they are masked.
type Config = (usize, Form, AdditiveSpace, f32, bool);

/// `n` instances on the first two clips, each with the layers `config` says.
fn batch(n: usize, first: u32, upper: MaskId, config: Config, t: f32) -> PoseBatch {
    let (layers, form, space, w, masked) = config;
    let mut batch = PoseBatch::with_capacity(n, 2 + 2 * layers);
    let offset = first + if space == AdditiveSpace::Mesh { 2 } else { 0 };
    for i in 0..n {
        let t = t + i as f32 * 0.37;
        let mut instance = batch.push_clip((i % 2) as u32, t, true);
        for k in 0..layers {
            instance = match form {
                Form::Additive => {
                    let sample = ClipSample::new(offset + k as u32, 0.0, false);
                    instance.additive(space, w, &[sample])
                }
                Form::Blend => instance.blend(space, w, &[ClipSample::new(WAVE, t, true)]),
            };
            if masked {
                instance = instance.with_mask(upper);
            }
        }
    }
    batch
}

fn additive(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    match &ctx {
        Some(ctx) => eprintln!("adapter: {}", ctx.describe()),
        None => eprintln!("no adapter: CPU only"),
    }
    let (lib, first, upper) = library();
    // The "none" row has one layer of weight 0: it keeps the general sampling pipeline of the
    // layered rows, and is skipped before any clip is sampled.
    let (add, blend) = (Form::Additive, Form::Blend);
    let (local, mesh) = (AdditiveSpace::Local, AdditiveSpace::Mesh);
    let configs: [(&str, Config); 11] = [
        ("none", (1, add, local, 0.0, false)),
        ("local_x1", (1, add, local, 0.7, false)),
        ("local_x2", (2, add, local, 0.7, false)),
        ("mesh_x1", (1, add, mesh, 0.7, false)),
        ("mesh_x2", (2, add, mesh, 0.7, false)),
        ("local_x1_masked", (1, add, local, 0.7, true)),
        ("mesh_x1_masked", (1, add, mesh, 0.7, true)),
        ("blend_local", (1, blend, local, 0.7, false)),
        ("blend_local_masked", (1, blend, local, 0.7, true)),
        ("blend_mesh", (1, blend, mesh, 0.7, false)),
        ("blend_mesh_masked", (1, blend, mesh, 0.7, true)),
    ];
    for n in common::sizes() {
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
            let frame = |t: f32| batch(n, first, upper, config, t);
            let cpu = CpuEvaluator::new(&lib);
            let mut poses = Poses::default();
            let fixed = frame(0.5);
            group.bench_function(BenchmarkId::new("cpu_one_core", label), |b| {
                b.iter(|| cpu.evaluate_single_thread(&fixed, &mut poses).unwrap())
            });
            let Some(gpu) = gpu.as_mut() else { continue };
            group.bench_function(BenchmarkId::new("gpu", label), |b| {
                b.iter_custom(|iters| common::gpu_time(gpu, iters, |i| frame(i as f32 / 60.0)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, additive);
criterion_main!(benches);
