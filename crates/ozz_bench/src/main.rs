//! Prints a markdown table: posegpu's CPU twin against ozz-animation-rs on ozz's playback
//! sample, per stage (sampling; hierarchy = local-to-model; the whole frame), per instance,
//! for crowds of 1k, 10k and 100k instances on rayon pools of 1 and 2 threads, side by side
//! in one process.
//!
//! ```text
//! cargo run --release -- [--sizes 1000,10000,100000] [--threads 1,2] [--frames N]
//! ```
//!
//! Each measured frame the crowd time moves on by 1/60 s (ozz's sampling contexts see forward
//! playback, as in a game). Per configuration: two frames of warm-up, then `frames` frames in
//! which both libraries run each stage once, alternating which goes first; the table gives the
//! medians. posegpu has no public call that runs its CPU hierarchy alone, so its hierarchy
//! figure is its frame minus its sampling (both medians).

use std::time::Instant;

use ozz_bench::{compare, extent, median, posegpu_library, OzzCrowd, OzzData, PosegpuCrowd};

struct Options {
    sizes: Vec<usize>,
    threads: Vec<usize>,
    frames: Option<usize>,
}

fn list(v: &str) -> Vec<usize> {
    v.split(',')
        .map(|s| {
            s.trim()
                .replace('_', "")
                .parse()
                .expect("a list of numbers")
        })
        .collect()
}

fn options() -> Options {
    let mut o = Options {
        sizes: vec![1_000, 10_000, 100_000],
        threads: vec![1, 2],
        frames: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--sizes" => o.sizes = list(&value()),
            "--threads" => o.threads = list(&value()),
            "--frames" => o.frames = Some(value().parse().expect("--frames N")),
            "-h" | "--help" => {
                println!("ozz_bench [--sizes 1000,10000,100000] [--threads 1,2] [--frames N]");
                std::process::exit(0);
            }
            // cargo bench passes --bench.
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    o
}

/// Seconds `f` takes.
fn timed(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

/// `a` and `b` timed, `a` first when `a_first` and `b` first otherwise (the frames alternate,
/// so neither always runs on caches the other warmed).
fn timed_pair(a_first: bool, a: impl FnOnce(), b: impl FnOnce()) -> (f64, f64) {
    if a_first {
        let a = timed(a);
        (a, timed(b))
    } else {
        let b = timed(b);
        (timed(a), b)
    }
}

#[derive(Default)]
struct Samples {
    ozz_sample: Vec<f64>,
    ozz_l2m: Vec<f64>,
    ozz_frame: Vec<f64>,
    ozz_skinned: Vec<f64>,
    pg_sample: Vec<f64>,
    pg_frame: Vec<f64>,
    pg_separate: Vec<f64>,
}

struct Row {
    threads: usize,
    n: usize,
    /// Medians in seconds: ozz sampling, hierarchy, frame, frame with skinning matrices;
    /// posegpu sampling, frame, and (one thread) frame by separate passes.
    ozz: [f64; 4],
    pg: [f64; 2],
    pg_separate: Option<f64>,
    frames: usize,
}

fn measure(
    data: &OzzData,
    lib: &posegpu::AnimLibrary,
    threads: usize,
    n: usize,
    frames: usize,
) -> Row {
    let mut ozz = OzzCrowd::new(data, n);
    let mut pg = PosegpuCrowd::new(lib, n, threads);
    let mut s = Samples::default();
    let mut clock = 0u32;
    let mut next_time = || {
        clock += 1;
        clock as f32 / 60.0
    };
    for frame in 0..frames + 2 {
        let keep = frame >= 2;
        let ozz_first = frame % 2 == 0;
        // Sampling, then ozz's hierarchy on what it sampled.
        let t = next_time();
        ozz.set_time(t);
        pg.set_time(t);
        let (a, b) = timed_pair(ozz_first, || ozz.sample(), || pg.sample());
        let l2m = timed(|| ozz.local_to_model());
        // The whole frame, at the next time.
        let t = next_time();
        ozz.set_time(t);
        pg.set_time(t);
        let (c, d) = timed_pair(ozz_first, || ozz.frame(), || pg.frame());
        // ozz's frame with skinning matrices, as posegpu's frame has them.
        let t = next_time();
        ozz.set_time(t);
        let skinned = timed(|| ozz.frame_skinned());
        let e = if threads == 1 {
            let t = next_time();
            pg.set_time(t);
            timed(|| pg.frame_single_thread())
        } else {
            0.0
        };
        if keep {
            s.ozz_sample.push(a);
            s.pg_sample.push(b);
            s.ozz_l2m.push(l2m);
            s.ozz_frame.push(c);
            s.ozz_skinned.push(skinned);
            s.pg_frame.push(d);
            s.pg_separate.push(e);
        }
    }
    Row {
        threads,
        n,
        ozz: [
            median(&mut s.ozz_sample),
            median(&mut s.ozz_l2m),
            median(&mut s.ozz_frame),
            median(&mut s.ozz_skinned),
        ],
        pg: [median(&mut s.pg_sample), median(&mut s.pg_frame)],
        pg_separate: (threads == 1).then(|| median(&mut s.pg_separate)),
        frames,
    }
}

fn us(seconds: f64, n: usize) -> String {
    format!("{:.3} µs", seconds * 1e6 / n as f64)
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The machine's 1-minute load average (other work running beside the bench skews it).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let o = options();
    println!("load average before: {}", load());
    let data = OzzData::load_default().unwrap_or_else(|e| panic!("loading ozz's data: {e}"));
    let lib = posegpu_library(&data).expect("converting ozz's playback sample");
    println!(
        "ozz playback sample: {} joints, clip '{}' of {:.3} s; {} translation, {} rotation, {} \
         scale keys (ozz's count, padding tracks included)",
        data.skeleton.num_joints(),
        data.animation.name(),
        data.duration(),
        data.animation.translations().len(),
        data.animation.rotations().len(),
        data.animation.scales().len(),
    );
    // Agreement first: a table of two libraries that disagree measures nothing.
    {
        let n = 1_000;
        let mut ozz = OzzCrowd::new(&data, n);
        let mut pg = PosegpuCrowd::new(&lib, n, 1);
        let mut worst = ozz_bench::Agreement::default();
        for k in 0..20 {
            let t = k as f32 * 0.173;
            ozz.set_time(t);
            ozz.frame_skinned();
            pg.set_time(t);
            pg.frame();
            let a = compare(&ozz, &pg.poses, extent(&lib));
            if a.worst() > worst.worst() {
                worst = a;
            }
        }
        println!(
            "agreement ({n} instances x 20 times): model matrices' 3x3 within {:.2e}, translations \
             within {:.2e} ({:.2e} of the skeleton's size {:.3}), locals within {:.2e}, skinning \
             matrices within {:.2e}",
            worst.linear,
            worst.translation,
            worst.translation_relative,
            extent(&lib),
            worst.local,
            worst.skinning
        );
    }
    let mut rows = Vec::new();
    for &threads in &o.threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        for &n in &o.sizes {
            let frames = o.frames.unwrap_or((300_000 / n).clamp(5, 200));
            let row = pool.install(|| measure(&data, &lib, threads, n, frames));
            eprintln!(
                "{threads} thread(s), {n} instances, {frames} frames: ozz {:?} posegpu {:?}; load average {}",
                row.ozz, row.pg, load()
            );
            rows.push(row);
        }
    }
    println!();
    println!("Per instance (median frame time / instances); ratio = posegpu / ozz (below 1: posegpu faster).");
    println!();
    println!(
        "| threads | instances | stage | ozz-animation-rs | posegpu CPU twin | posegpu / ozz |"
    );
    println!("|---:|---:|---|---:|---:|---:|");
    for r in &rows {
        let pg_h = (r.pg[1] - r.pg[0]).max(0.0);
        let stages = [
            ("sampling", r.ozz[0], r.pg[0]),
            ("hierarchy", r.ozz[1], pg_h),
            ("frame", r.ozz[2], r.pg[1]),
            ("frame + skinning matrices", r.ozz[3], r.pg[1]),
        ];
        for (stage, a, b) in stages {
            println!(
                "| {} | {} | {} | {} | {} | {:.2} |",
                r.threads,
                thousands(r.n),
                stage,
                us(a, r.n),
                us(b, r.n),
                b / a
            );
        }
    }
    println!();
    println!(
        "Load average after: {} (the bench's own threads count in it).",
        load()
    );
    println!();
    println!("- ozz: SamplingJob and LocalToModelJob per instance (each with its own SamplingContext), rayon over instances; frame = both per instance; frame + skinning matrices = the frame, then each model matrix times its joint's inverse bind matrix (glam Mat4 product), per instance.");
    println!("- posegpu: sampling = CpuEvaluator::sample_locals (one batch per thread, in parallel); frame = CpuEvaluator::evaluate (sampling, hierarchy and 3x4 skinning matrices per instance, blocks of 64 instances: the same figure in both frame rows); hierarchy = frame - sampling (so it includes the skinning matrices).");
    for r in rows.iter().filter(|r| r.pg_separate.is_some()) {
        let s = r.pg_separate.unwrap_or(0.0);
        println!(
            "- 1 thread, {} instances: posegpu's evaluate_single_thread (separate passes) {} per instance ({:.2}x ozz's frame), its hierarchy pass alone about {} ({:.2}x ozz's local-to-model). {} frames.",
            thousands(r.n),
            us(s, r.n),
            s / r.ozz[2],
            us((s - r.pg[0]).max(0.0), r.n),
            (s - r.pg[0]).max(0.0) / r.ozz[1],
            r.frames
        );
    }
}
