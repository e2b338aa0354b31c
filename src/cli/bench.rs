//! `posegpu bench`: instances x frames on a backend, with per-pass GPU time from timestamps.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use posegpu::{AnimLibrary, CpuEvaluator, Error, GpuEvaluator, GpuOptions, Poses};

use super::{open_gpu, rate};
use crate::Backend;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// A model to measure (default: the procedural humanoid).
    model: Option<PathBuf>,
    /// Crowd sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000, 10_000, 100_000])]
    instances: Vec<usize>,
    /// Frames per size; the median is reported.
    #[arg(long, default_value_t = 10)]
    frames: usize,
    /// Where to evaluate.
    #[arg(long, value_enum, default_value = "gpu")]
    backend: Backend,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(args: &BenchArgs) -> Result<ExitCode, Error> {
    let asset = match &args.model {
        Some(path) => posegpu::import::load(path)?,
        None => posegpu::procedural::humanoid_asset(),
    };
    if asset.clips.is_empty() {
        return Err(Error::UnknownAnimation {
            name: "any".into(),
            available: "none: the model has no animations to measure".into(),
        });
    }
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let bones = lib.bone_count();
    let frames = args.frames.max(1);
    println!(
        "{bones} bones, {} clips, {frames} frames per size",
        lib.clip_count()
    );
    match args.backend {
        Backend::Cpu => {
            let cpu = CpuEvaluator::new(&lib);
            let mut poses = Poses::default();
            println!("CPU, {} threads", rayon::current_num_threads());
            println!(
                "{:>10} {:>12} {:>16} {:>12}",
                "instances", "ms/frame", "rate", "us/instance"
            );
            for &n in &args.instances {
                let mut times = Vec::new();
                for f in 0..frames {
                    let inst = lib.crowd(n, f as f32 / 60.0);
                    let start = Instant::now();
                    cpu.evaluate(&inst, &mut poses)?;
                    times.push(start.elapsed().as_secs_f64());
                }
                let s = median(times);
                println!(
                    "{n:>10} {:>12.3} {:>16} {:>12.3}",
                    s * 1e3,
                    rate((n * bones) as f64, s),
                    s * 1e6 / n as f64
                );
            }
        }
        Backend::Gpu => {
            let ctx = open_gpu()?.ok_or(Error::NoAdapter)?;
            println!("adapter: {}", ctx.describe());
            if !ctx.has_timestamps() {
                println!("(no timestamp queries on this adapter: wall clock only)");
            }
            println!(
                "{:>10} {:>12} {:>12} {:>12} {:>16} {:>12}",
                "instances", "sample ms", "hierarchy ms", "GPU ms", "rate", "wall ms"
            );
            let mut gpu = GpuEvaluator::new(&ctx, &lib, 1, &GpuOptions::default())?;
            for &n in &args.instances {
                let (mut sample, mut hierarchy, mut wall) = (Vec::new(), Vec::new(), Vec::new());
                gpu.evaluate_timed(&lib.crowd(n, 0.0))?; // warm-up, buffers grown
                for f in 0..frames {
                    let inst = lib.crowd(n, f as f32 / 60.0);
                    let start = Instant::now();
                    let t = gpu.evaluate_timed(&inst)?.unwrap_or_default();
                    wall.push(start.elapsed().as_secs_f64());
                    sample.push(t.sample_ns);
                    hierarchy.push(t.hierarchy_ns);
                }
                let (s, h, w) = (median(sample), median(hierarchy), median(wall));
                let gpu_s = (s + h) / 1e9;
                println!(
                    "{n:>10} {:>12.3} {:>12.3} {:>12.3} {:>16} {:>12.3}",
                    s / 1e6,
                    h / 1e6,
                    gpu_s * 1e3,
                    rate((n * bones) as f64, if gpu_s > 0.0 { gpu_s } else { w }),
                    w * 1e3
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
