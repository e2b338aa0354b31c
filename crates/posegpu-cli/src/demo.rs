//! The main job on the embedded default: a crowd of procedural humanoids at varied clips and
//! phases, evaluated on the GPU for a number of frames, a sample checked against the CPU twin.

use std::process::ExitCode;
use std::time::Instant;

use posegpu::{
    AnimLibrary, ClipSample, CpuEvaluator, Deviation, Error, GpuEvaluator, GpuOptions, Poses,
};

use crate::util::{open_gpu, rate};

/// Largest GPU-vs-CPU deviation accepted, relative to the skeleton's size.
const TOLERANCE: f32 = 1e-4;

#[derive(clap::Args, Clone, Copy)]
pub struct DemoArgs {
    /// Crowd size.
    #[arg(long, default_value_t = DemoArgs::DEFAULT.instances, value_parser = crate::util::positive_count)]
    instances: usize,
    /// Frames to evaluate (at 60 Hz).
    #[arg(long, default_value_t = DemoArgs::DEFAULT.frames, value_parser = crate::util::positive_count)]
    frames: usize,
    /// Instances checked against the CPU twin.
    #[arg(long, default_value_t = DemoArgs::DEFAULT.check)]
    check: usize,
}

impl DemoArgs {
    /// What `posegpu` with no arguments runs; also the flags' defaults.
    pub const DEFAULT: Self = Self {
        instances: 10_000,
        frames: 60,
        check: 256,
    };
}

pub fn run(args: &DemoArgs) -> Result<ExitCode, Error> {
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let (n, frames) = (args.instances, args.frames);
    let bones = (n * lib.bone_count() * frames) as f64;
    println!(
        "posegpu demo: {n} procedural humanoids ({} bones, clips: {}), {frames} frames",
        lib.bone_count(),
        lib.clip_names().join(", ")
    );

    let cpu = CpuEvaluator::new(&lib);
    let mut cpu_poses = Poses::default();
    let start = Instant::now();
    for f in 0..frames {
        cpu.evaluate(
            &crate::workload::crowd(&lib, n, f as f32 / 60.0),
            &mut cpu_poses,
        )?;
    }
    let cpu_s = start.elapsed().as_secs_f64();
    println!(
        "CPU twin ({} threads): {:.2} ms/frame, {}",
        rayon::current_num_threads(),
        cpu_s * 1e3 / frames as f64,
        rate(bones, cpu_s)
    );

    let Some(ctx) = open_gpu()? else {
        println!("No GPU adapter found (not even lavapipe): ran on the CPU only.");
        return Ok(ExitCode::SUCCESS);
    };
    println!("adapter: {}", ctx.describe());
    let mut gpu = GpuEvaluator::new(&ctx, &lib, n, &GpuOptions::default())?;
    let mut gpu_ns = 0.0;
    let start = Instant::now();
    for f in 0..frames {
        match gpu.evaluate_timed(&crate::workload::crowd(&lib, n, f as f32 / 60.0))? {
            Some(t) => gpu_ns += t.total_ns(),
            None => gpu_ns = f64::NAN,
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    if gpu_ns.is_finite() {
        println!(
            "GPU: {:.3} ms/frame of GPU time (timestamps), {}",
            gpu_ns / 1e6 / frames as f64,
            rate(bones, gpu_ns / 1e9)
        );
    }
    println!(
        "GPU: {:.2} ms/frame wall clock with upload and sync, {}",
        wall_s * 1e3 / frames as f64,
        rate(bones, wall_s)
    );

    // Check a sample of the last frame's instances against the CPU twin.
    let last = crate::workload::crowd(&lib, n, (frames - 1) as f32 / 60.0);
    let step = (n / args.check.clamp(1, n)).max(1);
    let sample: Vec<usize> = (0..n).step_by(step).collect();
    let gpu_poses = gpu.read_back()?;
    let mut expected = Poses::default();
    let sampled: Vec<ClipSample> = sample.iter().map(|&i| last[i]).collect();
    cpu.evaluate(&sampled, &mut expected)?;
    let deviation = Deviation::between(&gpu_poses.select(&sample), &expected);
    let relative = deviation.relative(lib.skeleton().extent());
    println!(
        "checked {} instances against the CPU twin: largest deviation {relative:.2e} of the skeleton's size (tolerance {TOLERANCE:.0e})",
        sample.len()
    );
    if relative > TOLERANCE {
        println!("FAILED: the GPU and the CPU disagree");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
