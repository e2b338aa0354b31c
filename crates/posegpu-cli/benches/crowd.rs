//! Crowd playback cost against crowd size and skeleton size: each instance a synced blend of
//! two clips with root motion extracted in place (the `crowd_sim` example's workload), stepped
//! by `GpuCrowd::advance_timed` (all five passes, GPU time from timestamp queries) and by the
//! CPU twin (`Crowd::advance` + `CpuEvaluator::evaluate` on every core), side by side.
//!
//! ```text
//! cargo bench --bench crowd
//! ```
//! Writes `target/bench/crowd.csv` and two plots (SVG and PNG) next to it. Environment:
//! `POSEGPU_BENCH_MAX_INSTANCES` caps the size sweep (default 1,048,576 on a GPU, 16,384 on a
//! CPU adapter such as lavapipe); `POSEGPU_BENCH_CPU_MAX` caps the sizes the CPU twin runs
//! (default 65,536); `POSEGPU_BENCH_FRAMES` sets the frames per point (default 5; the median
//! is kept).

use std::fmt::Write as _;
use std::time::Instant;

use posegpu::playback::{Agent, Player};
use posegpu::procedural::{humanoid_asset, random_asset};
use posegpu::{
    AnimLibrary, CpuEvaluator, Crowd, GpuContext, GpuCrowd, GpuOptions, Poses, RootLock,
};
use posegpu::{PassTimes, Stage};
use posegpu_cli::plot::LogPlot;

const DT: f32 = 1.0 / 30.0;

fn env(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// `n` instances blending clips 0 and 1 of `lib`, synced, root motion in place.
fn crowd(lib: &AnimLibrary, n: usize) -> Crowd {
    let mut crowd = Crowd::new(lib);
    for i in 0..n {
        let w = (i % 11) as f32 / 10.0;
        let phase = (i as f32 * 0.618).fract();
        let players = [0u32, 1].map(|c| {
            let length = crowd.track_length(c.into()).unwrap();
            Player::new(c).starting_at(phase * length)
        });
        let players = [
            players[0].with_weight(1.0 - w),
            players[1].with_weight(w.max(0.05)),
        ];
        let agent = Agent::blend(&players)
            .synced()
            .with_root_motion(Some(RootLock::RefPose));
        crowd.add(&agent).unwrap();
    }
    crowd
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One measured point.
struct Point {
    instances: usize,
    bones: usize,
    gpu: Option<PassTimes>,
    cpu_ns: Option<f64>,
}

fn measure(ctx: Option<&GpuContext>, lib: &AnimLibrary, n: usize, cpu_max: usize) -> Point {
    let frames = env("POSEGPU_BENCH_FRAMES").unwrap_or(5).max(1);
    let mut crowd = crowd(lib, n);
    let gpu = ctx.and_then(|ctx| {
        let mut gpu = match GpuCrowd::new(ctx, lib, &crowd, &GpuOptions::default()) {
            Ok(gpu) => gpu,
            Err(e) => {
                eprintln!("  {n} instances: {e}");
                return None;
            }
        };
        gpu.advance_timed(DT).unwrap(); // warm-up
        let times: Vec<PassTimes> = (0..frames)
            .map(|_| gpu.advance_timed(DT).unwrap())
            .collect::<Option<_>>()?;
        // The frame with the median total, so that its passes add up.
        let total = median(times.iter().map(PassTimes::total_ns).collect());
        times.into_iter().find(|t| t.total_ns() == total)
    });
    let cpu_ns = (n <= cpu_max).then(|| {
        let eval = CpuEvaluator::new(lib);
        let mut poses = Poses::default();
        let samples = (0..frames.min(3))
            .map(|_| {
                let start = Instant::now();
                crowd.advance(lib, DT).unwrap();
                eval.evaluate(&crowd.batch(), &mut poses).unwrap();
                start.elapsed().as_nanos() as f64
            })
            .collect();
        median(samples)
    });
    Point {
        instances: n,
        bones: lib.bone_count(),
        gpu,
        cpu_ns,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let ctx = GpuContext::new().ok();
    let device = ctx
        .as_ref()
        .map_or("no adapter".into(), |c| c.info.name.clone());
    let is_cpu = ctx
        .as_ref()
        .is_none_or(|c| c.info.device_type == wgpu::DeviceType::Cpu);
    let max = env("POSEGPU_BENCH_MAX_INSTANCES").unwrap_or(if is_cpu { 16_384 } else { 1 << 20 });
    let cpu_max = env("POSEGPU_BENCH_CPU_MAX").unwrap_or(65_536);
    println!(
        "adapter: {device}; CPU twin on {} threads",
        rayon::current_num_threads()
    );

    let walk_run = {
        // The humanoid's walk and run as clips 0 and 1.
        let asset = humanoid_asset();
        let pick = |name: &str| {
            asset
                .clips
                .iter()
                .find(|c| c.name() == name)
                .unwrap()
                .clone()
        };
        AnimLibrary::new(&asset.skeleton, &[pick("walk"), pick("run")]).unwrap()
    };
    let mut points = Vec::new();
    let sizes = (0..)
        .map(|k| 1024usize << (2 * k))
        .take_while(|&n| n <= max);
    for n in sizes {
        points.push(measure(ctx.as_ref(), &walk_run, n, cpu_max));
        report(points.last().unwrap());
    }
    let bones_n = env("POSEGPU_BENCH_BONE_INSTANCES").unwrap_or(if is_cpu { 4096 } else { 65_536 });
    let mut by_bones = Vec::new();
    for bones in [16, 32, 64, 128, 256] {
        let asset = random_asset(bones as u64, bones, 2);
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        by_bones.push(measure(ctx.as_ref(), &lib, bones_n, cpu_max));
        report(by_bones.last().unwrap());
    }

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let mut csv = String::from(
        "sweep,instances,bones,advance_ns,root_motion_ns,sample_ns,hierarchy_ns,gpu_total_ns,cpu_twin_ns\n",
    );
    for (sweep, list) in [("instances", &points), ("bones", &by_bones)] {
        for p in list.iter() {
            let g = p.gpu.clone().unwrap_or_default();
            // The fused pass's time counts as sampling (the hierarchy is then 0).
            let sample = g.ns(Stage::Sample) + g.ns(Stage::Fused);
            let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.0}"));
            writeln!(
                csv,
                "{sweep},{},{},{:.0},{:.0},{:.0},{:.0},{},{}",
                p.instances,
                p.bones,
                g.ns(Stage::Advance),
                g.ns(Stage::RootMotion),
                sample,
                g.ns(Stage::Hierarchy),
                opt(p.gpu.as_ref().map(|g| g.total_ns())),
                opt(p.cpu_ns)
            )
            .unwrap();
        }
    }
    std::fs::write(dir.join("crowd.csv"), csv).unwrap();
    let series = |list: &[Point], x: fn(&Point) -> f64, y: fn(&Point) -> Option<f64>| {
        list.iter()
            .filter_map(|p| Some((x(p), y(p)?)))
            .collect::<Vec<_>>()
    };
    let instances_plot = LogPlot::new(
        format!("Crowd frame cost against instances (67 bones; {device})"),
        "instances",
        "ms per frame",
    )
    .series(
        "GPU, all passes",
        series(&points, |p| p.instances as f64, gpu_ms),
    )
    .series(
        "CPU twin, all cores",
        series(&points, |p| p.instances as f64, cpu_ms),
    );
    let bones_plot = LogPlot::new(
        format!("Cost per bone against skeleton size ({bones_n} instances; {device})"),
        "bones",
        "ns per bone",
    )
    .series(
        "GPU, all passes",
        series(
            &by_bones,
            |p| p.bones as f64,
            |p| gpu_ms(p).map(|v| per_bone(v, p)),
        ),
    )
    .series(
        "CPU twin, all cores",
        series(
            &by_bones,
            |p| p.bones as f64,
            |p| cpu_ms(p).map(|v| per_bone(v, p)),
        ),
    );
    for (name, plot) in [
        ("crowd_instances", instances_plot),
        ("crowd_bones", bones_plot),
    ] {
        std::fs::write(dir.join(format!("{name}.svg")), plot.svg()).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), plot.png().unwrap()).unwrap();
    }
    println!("wrote {}", dir.display());
}

fn gpu_ms(p: &Point) -> Option<f64> {
    p.gpu.as_ref().map(|g| g.total_ns() / 1e6)
}

fn cpu_ms(p: &Point) -> Option<f64> {
    p.cpu_ns.map(|v| v / 1e6)
}

/// Milliseconds per frame as nanoseconds per bone.
fn per_bone(ms: f64, p: &Point) -> f64 {
    ms * 1e6 / (p.instances * p.bones) as f64
}

fn report(p: &Point) {
    let ms = |ns: f64| ns / 1e6;
    let gpu = p.gpu.as_ref().map_or("-".into(), |g| {
        let passes: Vec<String> = (g.passes().iter())
            .map(|(pass, ns)| format!("{} {:.3}", pass.label(), ms(*ns)))
            .collect();
        format!("{:.3} ms ({})", ms(g.total_ns()), passes.join(", "))
    });
    let cpu = p.cpu_ns.map_or("-".into(), |c| format!("{:.3} ms", ms(c)));
    let ratio = match (&p.gpu, p.cpu_ns) {
        (Some(g), Some(c)) => format!("{:.1}x", c / g.total_ns()),
        _ => "-".into(),
    };
    println!(
        "{:>8} instances x {:>3} bones: GPU {gpu}; CPU twin {cpu}; CPU/GPU {ratio}",
        p.instances, p.bones
    );
}
