//! The Rust side of `bench/evaluate.py`: the same evaluation (the procedural humanoid, 10,000
//! instances at varied clips and phases) through posegpu directly, so that the Python call's
//! overhead can be stated against Rust's own. A fresh `Poses` per call, as each Python call
//! makes one; the time with one reused across calls (a Rust host's steady state) beside it.
//!
//! `cargo run --release --example evaluate -- [INSTANCES] [RUNS] [cpu|gpu|both]`; prints one
//! JSON object per backend: median seconds.

use std::time::Instant;

use posegpu::{AnimLibrary, ClipSample, CpuEvaluator, GpuContext, GpuEvaluator, GpuOptions, Poses};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> posegpu::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let instances: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(15);
    let which = args.get(3).map_or("both", String::as_str);
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    // The workload bench/evaluate.py builds: clip i % 4, time i * 0.013, looping.
    let samples: Vec<ClipSample> = (0..instances)
        .map(|i| ClipSample::new((i % 4) as u32, i as f32 * 0.013, true))
        .collect();
    if which != "gpu" {
        let cpu = CpuEvaluator::new(&lib);
        let mut fresh = Vec::new();
        let mut reused = Vec::new();
        let mut kept = Poses::default();
        for _ in 0..runs {
            let start = Instant::now();
            let mut poses = Poses::default();
            cpu.evaluate(samples.as_slice(), &mut poses)?;
            fresh.push(start.elapsed().as_secs_f64());
            drop(poses);
            let start = Instant::now();
            cpu.evaluate(samples.as_slice(), &mut kept)?;
            reused.push(start.elapsed().as_secs_f64());
        }
        println!(
            "{{\"backend\": \"cpu\", \"instances\": {instances}, \"bones\": {}, \"fresh_poses_s\": {}, \"reused_poses_s\": {}}}",
            lib.bone_count(),
            median(fresh),
            median(reused)
        );
    }
    if which != "cpu" {
        let ctx = match GpuContext::new() {
            Ok(ctx) => ctx,
            Err(posegpu::Error::NoAdapter) => {
                eprintln!("no GPU adapter: the GPU side is skipped");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let mut gpu = GpuEvaluator::new(&ctx, &lib, instances, &GpuOptions::default())?;
        let mut times = Vec::new();
        for _ in 0..runs.max(2) {
            let start = Instant::now();
            gpu.evaluate(samples.as_slice())?;
            let poses = gpu.read_back()?;
            times.push(start.elapsed().as_secs_f64());
            drop(poses);
        }
        // The first frame compiles pipelines; it is not the steady state.
        times.remove(0);
        println!(
            "{{\"backend\": \"gpu\", \"adapter\": \"{}\", \"instances\": {instances}, \"bones\": {}, \"evaluate_read_back_s\": {}}}",
            ctx.describe().replace('"', "'"),
            lib.bone_count(),
            median(times)
        );
    }
    Ok(())
}
