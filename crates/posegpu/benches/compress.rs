//! The decode cost of compressed keys (issue 31): the sampling stage alone, plain keys against
//! the same clips compressed at the default tolerance, side by side in one run, per bone.
//!
//! On the CPU twin (one core, `CpuEvaluator::sample_locals`) and, where there is an adapter, on
//! the GPU (the sampling pass's time from timestamp queries). The libraries: the procedural
//! humanoid's clips on their own skeleton, through UE's modes (the humanoid preset) and through
//! a character plan onto `humanoid_variant`; then motion capture where every bone is animated,
//! the cross-tool pairs' clips on their own skeleton and through the default plan; and a
//! motion library, the 76 clips of KayKit's Knight on its own skeleton.
//! `POSEGPU_BENCH_SIZES=64,10000` picks the crowd sizes (default 10,000): a crowd of many
//! instances per clip shares its keys, one of few decodes them sample by sample.

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use posegpu::compress::{Compression, DEFAULT_TOLERANCE};
use posegpu::retarget::{PlanOptions, RetargetPlan, Rig};
use posegpu::{
    AnimLibrary, Asset, AssetFrame, Clip, CpuEvaluator, GpuContext, GpuEvaluator, GpuOptions,
    PoseBatch,
};

/// What a library plays: `asset`'s clips on its own skeleton, through UE's modes onto a
/// target, or through a plan onto one.
enum Play<'a> {
    Own,
    Modes(&'a Asset),
    Plan(&'a Asset),
}

/// `clips` of `asset` as `play` says, compressed where `compression` is given.
fn library(
    asset: &Asset,
    clips: &[Clip],
    play: &Play,
    compression: Option<Compression>,
) -> AnimLibrary {
    let target = match play {
        Play::Own => asset,
        Play::Modes(t) | Play::Plan(t) => t,
    };
    let mut b = AnimLibrary::builder(&target.skeleton);
    b.compress(compression);
    let source = match play {
        Play::Own => {
            b.add_clips(clips).unwrap();
            return b.build();
        }
        Play::Modes(_) => b.add_source("source", &asset.skeleton, None, &Rig::humanoid()),
        Play::Plan(t) => {
            let plan = RetargetPlan::new(asset, t, &PlanOptions::default()).unwrap();
            b.add_character_source("source", asset, &plan)
        }
    };
    b.add_clips_from(source.unwrap(), clips).unwrap();
    b.build()
}

/// (label, plain, compressed) for every library measured.
fn libraries() -> Vec<(String, AnimLibrary, AnimLibrary)> {
    let compression = Compression::all(DEFAULT_TOLERANCE).unwrap();
    let both = |label: String, asset: &Asset, clips: &[Clip], play: Play| {
        let plain = library(asset, clips, &play, None);
        let packed = library(asset, clips, &play, Some(compression.clone()));
        (label, plain, packed)
    };
    let h = posegpu::procedural::humanoid_asset();
    let variant = Asset {
        skeleton: posegpu::procedural::humanoid_variant(7),
        clips: Vec::new(),
        nodes: None,
        frame: AssetFrame::Y_UP,
    };
    let mut out = vec![
        both("humanoid_own".into(), &h, &h.clips, Play::Own),
        both("humanoid_modes".into(), &h, &h.clips, Play::Modes(&variant)),
        both("humanoid_plan".into(), &h, &h.clips, Play::Plan(&variant)),
    ];
    // A motion library: every clip of a character (76), each instance on one of them.
    let knight = common::anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let knight = posegpu::import::load(knight).unwrap();
    out.push(both(
        "knight_library".into(),
        &knight,
        &knight.clips,
        Play::Own,
    ));
    for i in 0..common::CROSS_TOOL_PAIRS.len() {
        let (s, clip, t, _) = common::cross_tool_pair(i);
        let clips = std::slice::from_ref(&clip);
        out.push(both(format!("pair{i}_own"), &s, clips, Play::Own));
        out.push(both(format!("pair{i}_plan"), &s, clips, Play::Plan(&t)));
    }
    out
}

fn sizes() -> Vec<usize> {
    std::env::var("POSEGPU_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000])
}

fn decode(c: &mut Criterion) {
    let ctx = GpuContext::new().ok();
    match &ctx {
        Some(ctx) => eprintln!("adapter: {}", ctx.describe()),
        None => eprintln!("no GPU adapter: CPU only"),
    }
    let libraries = libraries();
    for n in sizes() {
        for (label, plain, packed) in &libraries {
            let mut group = c.benchmark_group(format!("compress/{n}/{label}"));
            group
                .sample_size(20)
                .warm_up_time(Duration::from_millis(300))
                .measurement_time(Duration::from_secs(2))
                .throughput(Throughput::Elements((n * plain.bone_count()) as u64));
            for (keys, lib) in [("plain", plain), ("compressed", packed)] {
                let batch = PoseBatch::from_instances(&common::crowd(lib, n, 0.5));
                let cpu = CpuEvaluator::new(lib);
                let mut locals = Vec::new();
                group.bench_function(BenchmarkId::new("cpu_sample_one_core", keys), |b| {
                    b.iter(|| cpu.sample_locals(&batch, &mut locals).unwrap())
                });
            }
            let Some(ctx) = &ctx else {
                group.finish();
                continue;
            };
            for (keys, lib) in [("plain", plain), ("compressed", packed)] {
                let mut gpu = GpuEvaluator::new(ctx, lib, n, &GpuOptions::default()).unwrap();
                group.bench_function(BenchmarkId::new("gpu_sample", keys), |b| {
                    b.iter_custom(|iters| common::gpu_sampling_time(&mut gpu, lib, n, iters))
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, decode);
criterion_main!(benches);
