//! `posegpu bench`: the whole pose pipeline (a retargeted clip, one additive layer, the
//! hierarchy) over a sweep of instance counts and skeleton sizes, on the GPU (per-pass time
//! from timestamp queries) and on the CPU twin side by side, against the device's copy-kernel
//! bandwidth and a model of the bytes each pass moves. Prints a table, writes a CSV and a plot.

#[cfg(test)]
mod hashes;
mod peer;
mod report;
mod traffic;
mod workload;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::bandwidth::{copy_bandwidth, Bandwidth};
use clap::ValueEnum;
use posegpu::Stage;
use posegpu::{AdditiveSpace, CpuEvaluator, Error, GpuContext, GpuEvaluator, GpuOptions};
use posegpu::{FusePolicy, Outputs};
use posegpu::{PoseBatch, Poses};

use crate::util::open_gpu;
use report::{Csv, GpuFigures, Output, Row};
use workload::Workload;

/// Where `posegpu bench` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchBackend {
    /// The GPU and the CPU twin side by side (the CPU up to `--cpu-max-instances`); without
    /// an adapter, the CPU twin alone.
    Both,
    /// The GPU only; an error without an adapter.
    Gpu,
    /// The CPU twin only (no device is opened).
    Cpu,
}

/// How sampling and the hierarchy run (`posegpu::FusePolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Passes {
    /// Fused on GPUs, separate on CPU adapters (lavapipe).
    Auto,
    /// One fused pass.
    Fused,
    /// A sampling pass, then a hierarchy pass.
    Separate,
}

impl Passes {
    /// The library's policy of the same name.
    fn policy(self) -> FusePolicy {
        match self {
            Passes::Auto => FusePolicy::Auto,
            Passes::Fused => FusePolicy::Fused,
            Passes::Separate => FusePolicy::Separate,
        }
    }
}

/// What the evaluator keeps (`posegpu::Outputs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kept {
    /// Locals, component transforms and skinning matrices.
    All,
    /// Component transforms and skinning matrices.
    Component,
    /// Skinning matrices only.
    Skinning,
}

/// What each instance plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WorkloadKind {
    /// A clip retargeted from another skeleton, one additive layer, the hierarchy.
    Retarget,
    /// One of the skeleton's own clips and the hierarchy (the PyTorch peer's workload).
    Plain,
    /// The 67-bone humanoid's clips on a variant through a character plan, feet IK.
    Plan,
    /// The same clips baked onto the variant at upload, feet IK per instance.
    Baked,
}

/// The additive layer's space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayerSpace {
    /// Applied in the sampling pass, bone by bone.
    Local,
    /// Applied by the parent-ordered layer pass (a weighted delta per bone in between).
    Mesh,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// A model whose clips play, retargeted, on a proportioned copy of its skeleton, instead of
    /// the `--bones` sizes.
    #[arg(conflicts_with = "bones")]
    model: Option<PathBuf>,
    /// Crowd sizes, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = at_least_one,
          default_values_t = [1_000, 10_000, 100_000])]
    instances: Vec<usize>,
    /// Skeleton sizes, comma-separated: 67 is the procedural humanoid (its clips retargeted
    /// onto `humanoid_variant(7)`), any other size `random_asset`'s skeleton and clips
    /// retargeted onto a proportioned copy of it.
    #[arg(long, value_delimiter = ',', value_parser = at_least_one, default_values_t = [67])]
    bones: Vec<usize>,
    /// Timed frames per configuration (after one warm-up frame); medians are reported.
    #[arg(long, value_parser = at_least_one, default_value_t = 5)]
    frames: usize,
    /// Where to measure.
    #[arg(long, value_enum, default_value = "both")]
    backend: BenchBackend,
    /// The CPU twin runs only configurations of at most this many instances.
    #[arg(long, default_value_t = 100_000)]
    cpu_max_instances: usize,
    /// What each instance plays (`--bones` sizes only).
    #[arg(long, value_enum, default_value = "retarget")]
    workload: WorkloadKind,
    /// The additive layer's space.
    #[arg(long, value_enum, default_value = "local")]
    layer_space: LayerSpace,
    /// One fused pass or separate passes (auto: fused on GPUs, separate on lavapipe).
    #[arg(long, value_enum, default_value = "auto")]
    passes: Passes,
    /// The outputs the evaluator keeps.
    #[arg(long, value_enum, default_value = "all")]
    outputs: Kept,
    /// Also replay each configuration's memory traffic warp by warp (no GPU needed): sectors
    /// and lines per bone against the compulsory minimum, and DRAM bytes per bone, for the
    /// separate passes and the fused pass.
    #[arg(long)]
    traffic: bool,
    /// Print each pipeline the configuration runs (the first `--instances` size's frame, on
    /// the plan `--passes` gives, fused for auto), specialised as the evaluator specialises
    /// it: SPIR-V instructions of its entry point with every call inlined, and workgroup
    /// memory (no GPU needed); measure nothing.
    #[arg(long)]
    shader_stats: bool,
    /// With `--shader-stats`, also write each pipeline's specialised SPIR-V into this folder
    /// (`NAME.spv`, `/` in the name as `-`), for a disassembler or a driver's compiler.
    #[arg(long, value_name = "DIR", requires = "shader_stats")]
    spirv: Option<PathBuf>,
    /// The occupancy probe: pad the fused pass's workgroup memory by this many 4-byte words
    /// (`GpuOptions::occupancy_pad_words`). If its time stays flat as the padding grows,
    /// registers, not workgroup memory, limit the workgroups resident on an SM.
    #[arg(long, default_value_t = 0)]
    occupancy_pad: u32,
    /// The fused pass writes each skinning matrix as the level walk composes its bone
    /// (`GpuOptions::skin_at_compose`), instead of after the walk in consecutive words.
    #[arg(long)]
    skin_at_compose: bool,
    /// The poses a fused workgroup holds (`GpuOptions::fused_poses`): more instances per
    /// workgroup fill more lanes per level, fewer workgroups fit an SM. Default: the adapter's
    /// (320 on GPUs, 640 on CPU adapters).
    #[arg(long, value_name = "POSES")]
    fused_poses: Option<u32>,
    /// Keep wgpu's runtime checks in the shaders (`GpuOptions::runtime_checks`): bounds
    /// clamps, loop counters, zero-filled workgroup memory. What they cost, measured.
    #[arg(long)]
    runtime_checks: bool,
    #[command(flatten)]
    compress: crate::util::CompressArg,
    /// MiB copied by the bandwidth probe (clamped to the device's storage-binding limit).
    #[arg(long, value_parser = at_least_one, default_value_t = 256)]
    copy_mib: usize,
    /// The CSV written, one row per configuration (its folder is created).
    #[arg(long, default_value = "target/bench/pipeline.csv")]
    csv: PathBuf,
    /// The plot written: PNG, or SVG when the name ends in `.svg`.
    #[arg(long, default_value = "target/bench/pipeline.png")]
    plot: PathBuf,
    /// Start no further configuration once this many seconds have passed (the ones measured
    /// are reported); the sweep's sizes run smallest first.
    #[arg(long)]
    max_seconds: Option<f64>,
    /// Write the PyTorch peer's workload (the plain 67-bone workload, with a sample of the CPU
    /// twin's skinning matrices) into this folder and measure nothing.
    #[arg(long, value_name = "DIR", conflicts_with = "model")]
    export_peer: Option<PathBuf>,
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(args: &BenchArgs) -> Result<ExitCode, Error> {
    if let Some(dir) = &args.export_peer {
        peer::export(dir)?;
        println!("wrote the peer's workload into {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let started = Instant::now();
    let space = match args.layer_space {
        LayerSpace::Local => AdditiveSpace::Local,
        LayerSpace::Mesh => AdditiveSpace::Mesh,
    };
    // Every input is checked and every output opened before the first measurement.
    let compression = args.compress.compression()?;
    let compression = compression.as_ref();
    let workloads = match &args.model {
        Some(path) => {
            let asset = posegpu::import::load(path)?;
            let name = path
                .file_name()
                .unwrap_or(path.as_os_str())
                .to_string_lossy();
            vec![Workload::for_model(&asset, &name, space, compression)?]
        }
        None => args
            .bones
            .iter()
            .map(|&b| match args.workload {
                WorkloadKind::Retarget => Workload::for_bones(b, space, compression),
                WorkloadKind::Plain => Workload::plain(b, compression),
                WorkloadKind::Plan => Workload::character(false, compression),
                WorkloadKind::Baked => Workload::character(true, compression),
            })
            .collect::<Result<_, _>>()?,
    };
    let outputs = match args.outputs {
        Kept::All => Outputs::ALL,
        Kept::Component => Outputs::COMPONENT_AND_SKINNING,
        Kept::Skinning => Outputs::SKINNING,
    };
    let options = GpuOptions {
        passes: args.passes.policy(),
        outputs,
        occupancy_pad_words: args.occupancy_pad,
        skin_at_compose: args.skin_at_compose,
        fused_poses: args.fused_poses,
        runtime_checks: args.runtime_checks,
        ..Default::default()
    };
    if args.shader_stats {
        for w in &workloads {
            print_shader_stats(w, args.instances[0], &options, args.spirv.as_deref())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut csv = Csv::create(&args.csv)?;
    let mut plot_file = Output::create(&args.plot)?;

    let ctx = match args.backend {
        BenchBackend::Cpu => None,
        BenchBackend::Gpu => Some(open_gpu()?.ok_or(Error::NoAdapter)?),
        BenchBackend::Both => {
            let ctx = open_gpu()?;
            if ctx.is_none() {
                println!("no GPU adapter (not even lavapipe): the CPU twin alone");
            }
            ctx
        }
    };
    let cpu_threads = rayon::current_num_threads();
    let adapter = ctx.as_ref().map_or(String::new(), |c| c.describe());
    let copy = match &ctx {
        Some(ctx) => {
            println!("adapter: {adapter}");
            if !ctx.has_timestamps() {
                println!("(no timestamp queries on this adapter: wall clock only)");
            }
            let copy = copy_bandwidth(ctx, args.copy_mib as u64 * (1 << 20))?;
            println!("{}", copy_line(&copy));
            Some(copy)
        }
        None => None,
    };
    match args.workload {
        WorkloadKind::Retarget => println!(
            "pipeline per instance: one clip retargeted from another skeleton, one {} additive \
             layer (weight {}), the hierarchy (component and skinning matrices)",
            space.name(),
            workload::LAYER_WEIGHT
        ),
        WorkloadKind::Plain => println!(
            "pipeline per instance: one of the skeleton's own clips, the hierarchy (component \
             and skinning matrices)"
        ),
        WorkloadKind::Plan | WorkloadKind::Baked => println!(
            "pipeline per instance: a clip of another character, retargeted, feet IK after \
             retargeting, the hierarchy (IK runs the separate passes)"
        ),
    }
    for w in &workloads {
        println!("  {}", w.description);
    }
    println!(
        "{} timed frames per configuration, medians; CPU twin (CpuEvaluator::evaluate, {} \
         threads, wall clock) up to {} instances",
        args.frames, cpu_threads, args.cpu_max_instances
    );
    println!(
        "B/bone: compulsory-traffic model (bytes each pass must read and write once, shared \
         tables once per pass), not a hardware counter; GB/s = B/bone x GPU rate; \
         of copy = GB/s over the copy kernel's"
    );
    println!("{}", report::table_header());

    let run_cpu = args.backend != BenchBackend::Gpu;
    let mut rows = Vec::new();
    for w in &workloads {
        let mut gpu = match &ctx {
            Some(ctx) => Some(GpuEvaluator::new(ctx, &w.lib, 1, &options)?),
            None => None,
        };
        for &n in &args.instances {
            if let Some(limit) = args
                .max_seconds
                .filter(|&l| started.elapsed().as_secs_f64() > l)
            {
                println!("--max-seconds {limit}: no further configuration started");
                break;
            }
            let cpu = run_cpu && n <= args.cpu_max_instances;
            let row = measure(w, n, args.frames, (gpu.as_mut(), &options), cpu)?;
            let row = Row {
                layer_space: if w.has_layer() { space.name() } else { "none" },
                copy_bytes_per_s: copy.as_ref().map(Bandwidth::bytes_per_second),
                cpu_threads,
                adapter: adapter.clone(),
                ..row
            };
            println!("{}", report::table_row(&row));
            csv.row(&row)?;
            rows.push(row);
        }
    }

    if args.traffic {
        for w in &workloads {
            for &n in &args.instances {
                print_traffic(w, n, options.outputs);
            }
        }
    }

    let title = plot_title(ctx.as_ref(), space);
    let plot = report::plot(&rows, &title);
    let is_svg = args
        .plot
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    let bytes = if is_svg {
        plot.svg().into_bytes()
    } else {
        plot.png().map_err(|source| Error::Io {
            path: args.plot.clone(),
            source,
        })?
    };
    plot_file.write(&bytes)?;
    println!(
        "wrote {} and {}",
        csv.0.path.display(),
        plot_file.path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// One configuration: a warm-up frame, then `frames` timed frames on each backend asked for.
fn measure(
    w: &Workload,
    n: usize,
    frames: usize,
    (gpu, options): (Option<&mut GpuEvaluator>, &GpuOptions),
    cpu: bool,
) -> Result<Row, Error> {
    let mut batch = PoseBatch::with_capacity(n, 5);
    // The traffic modelled: the evaluator's plan, or without one the GPU design's (fused).
    let fused = gpu
        .as_ref()
        .map_or(options.passes != FusePolicy::Separate, |g| {
            g.fuse_policy() == FusePolicy::Fused
        });
    let outputs = options.outputs;
    let time = |f: usize| f as f32 / 60.0;
    let gpu = match gpu {
        Some(gpu) => {
            w.batch(n, time(0), &mut batch);
            gpu.evaluate_timed(&batch)?; // buffers grown, pipelines warm
            let (mut passes, mut wall) = (Vec::new(), Vec::new());
            for f in 1..=frames {
                w.batch(n, time(f), &mut batch);
                let start = Instant::now();
                let t = gpu.evaluate_timed(&batch)?;
                wall.push(start.elapsed().as_secs_f64() * 1e3);
                // The middle column holds every pass between sampling and the hierarchy
                // (mesh-space layers, inertialization, IK) and the curves.
                passes.extend(t.map(|t| {
                    // Sampling (the samples' key searches, then sampling or the fused
                    // pass), what runs between it and the hierarchy, and the hierarchy.
                    let sample = t.ns(Stage::Resolve) + t.ns(Stage::Sample) + t.ns(Stage::Fused);
                    let hierarchy = t.ns(Stage::Hierarchy);
                    [sample, t.total_ns() - sample - hierarchy, hierarchy]
                }));
            }
            let passes_ms = (passes.len() == frames).then(|| {
                std::array::from_fn(|k| median(passes.iter().map(|p| p[k]).collect()) / 1e6)
            });
            Some(GpuFigures {
                passes_ms,
                wall_ms: median(wall),
            })
        }
        None => None,
    };
    let cpu_ms = if cpu {
        let twin = CpuEvaluator::new(&w.lib);
        let mut poses = Poses::default();
        w.batch(n, time(0), &mut batch);
        twin.evaluate(&batch, &mut poses)?; // memory allocated
        let mut times = Vec::new();
        for f in 1..=frames {
            w.batch(n, time(f), &mut batch);
            let start = Instant::now();
            twin.evaluate(&batch, &mut poses)?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Some(median(times))
    } else {
        None
    };
    Ok(Row {
        instances: n,
        bones: w.bones(),
        layer_space: "",
        frames,
        gpu,
        traffic: traffic::model(&w.lib, &batch, fused, outputs),
        copy_bytes_per_s: None,
        cpu_ms,
        cpu_threads: 0,
        adapter: String::new(),
    })
}

/// One line per pipeline the frame of `n` instances of `w` runs (at most [`REPLAYED`]: the
/// frame's shape is what matters), on the fused plan unless `options.passes` is separate.
fn print_shader_stats(
    w: &Workload,
    n: usize,
    options: &GpuOptions,
    spirv: Option<&std::path::Path>,
) -> Result<(), Error> {
    let mut batch = PoseBatch::with_capacity(n.min(REPLAYED), 5);
    w.batch(n.min(REPLAYED), 0.0, &mut batch);
    println!("{} ({:?}):", w.description, options.outputs);
    for p in posegpu::analysis::shader_stats(&w.lib, &batch, options)? {
        println!(
            "shader {}: {} SPIR-V instructions, {} bytes of workgroup memory",
            p.name, p.stats.instructions, p.stats.workgroup_bytes
        );
        if let Some(dir) = spirv {
            let path = dir.join(format!("{}.spv", p.name.replace('/', "-")));
            let io = |source| Error::Io {
                path: path.clone(),
                source,
            };
            std::fs::create_dir_all(dir).map_err(io)?;
            std::fs::write(&path, bytemuck::cast_slice::<u32, u8>(&p.spirv)).map_err(io)?;
        }
    }
    Ok(())
}

/// Instances the traffic replay runs (a whole number of fused workgroups for any skeleton up
/// to 320 bones is not needed: the figures are per bone).
const REPLAYED: usize = 4096;

/// The warp-level traffic replay of `n` instances (at most [`REPLAYED`]) of `w`, keeping
/// `outputs`, for the separate passes and the fused one.
fn print_traffic(w: &Workload, n: usize, outputs: Outputs) {
    let replayed = n.min(REPLAYED);
    let mut batch = PoseBatch::with_capacity(replayed, 5);
    w.batch(replayed, 0.0, &mut batch);
    let bones = (replayed * w.bones()) as f64;
    println!(
        "traffic, {} bones x {n} instances (replayed: {replayed}; warps of 32 lanes, 32-byte \
         sectors, 128-byte lines; {outputs:?}):",
        w.bones()
    );
    for plan in [FusePolicy::Separate, FusePolicy::Fused] {
        let Some(passes) = posegpu::analysis::replay_traffic(&w.lib, &batch, plan, outputs) else {
            println!(
                "  {plan:?}: not replayed (plan clips, IK, inertialization or dynamic mesh layers)"
            );
            return;
        };
        let dram: u64 = passes.iter().map(|p| p.dram_bytes).sum();
        for p in &passes {
            println!(
                "  {:<9} {:<9} sectors/bone {:>6.2}  lines/bone {:>6.2}  compulsory {:>6.2}  \
                 x{:.2}  DRAM {:>6.1} B/bone  loads/bone {:>5.1}  key depth {:.2} (at most \
                 {})",
                format!("{plan:?}").to_lowercase(),
                p.pass,
                p.sectors as f64 / bones,
                p.lines as f64 / bones,
                p.compulsory_sectors as f64 / bones,
                p.sector_ratio(),
                p.dram_bytes as f64 / bones,
                p.loads as f64 / bones,
                p.mean_key_depth(),
                p.key_depth_max
            );
        }
        println!(
            "  {:<19} DRAM {:>6.1} B/bone in all",
            "",
            dram as f64 / bones
        );
    }
}

fn copy_line(copy: &Bandwidth) -> String {
    format!(
        "copy kernel: {:.1} MiB read + {:.1} MiB written per pass, best of {}: {:.2} GB/s \
         (median {:.2} GB/s), {}",
        copy.bytes as f64 / (1 << 20) as f64,
        copy.bytes as f64 / (1 << 20) as f64,
        copy.seconds.len(),
        copy.bytes_per_second() / 1e9,
        copy.median_bytes_per_second() / 1e9,
        copy.source.name()
    )
}

fn plot_title(ctx: Option<&GpuContext>, space: AdditiveSpace) -> String {
    let on = ctx.map_or("CPU twin".to_string(), |c| c.info.name.clone());
    let mut title = format!("retarget + {} additive + hierarchy: {on}", space.name());
    if title.chars().count() > 76 {
        title = title.chars().take(73).collect::<String>() + "...";
    }
    title
}
