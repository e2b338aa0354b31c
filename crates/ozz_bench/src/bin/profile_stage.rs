//! One stage of one library, frame after frame on the calling thread, for a profiler:
//!
//! ```text
//! cargo build --release --bin profile_stage
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*run_stage*' \
//!     target/release/profile_stage posegpu-sample 10000 3
//! ```
//!
//! Stages: `posegpu-sample`, `posegpu-frame`, `posegpu-separate` (evaluate_single_thread),
//! `ozz-sample`, `ozz-l2m`, `ozz-frame`, `ozz-skinned` (the frame and skinning matrices). The crowd time moves on by 1/60 s per frame; one
//! frame of warm-up runs before (outside `run_stage`). Prints the mean time per instance.

use std::time::Instant;

use ozz_bench::{posegpu_library, OzzCrowd, OzzData, PosegpuCrowd};

enum Crowd<'a> {
    Posegpu(PosegpuCrowd<'a>),
    Ozz(OzzCrowd<'a>),
}

#[inline(never)]
fn run_stage(stage: &str, crowd: &mut Crowd<'_>) {
    match crowd {
        Crowd::Posegpu(c) => match stage {
            "posegpu-sample" => c.sample(),
            "posegpu-frame" => c.frame(),
            "posegpu-separate" => c.frame_single_thread(),
            _ => unreachable!(),
        },
        Crowd::Ozz(c) => match stage {
            "ozz-sample" => c.sample(),
            "ozz-l2m" => c.local_to_model(),
            "ozz-frame" => c.frame(),
            "ozz-skinned" => c.frame_skinned(),
            _ => unreachable!(),
        },
    }
}

fn set_time(crowd: &mut Crowd<'_>, t: f32) {
    match crowd {
        Crowd::Posegpu(c) => c.set_time(t),
        Crowd::Ozz(c) => c.set_time(t),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stage = args.first().map_or("posegpu-sample", String::as_str);
    let n: usize = args
        .get(1)
        .map_or(10_000, |v| v.parse().expect("instances"));
    let frames: usize = args.get(2).map_or(3, |v| v.parse().expect("frames"));
    let data = OzzData::load_default().expect("ozz's data");
    let lib = posegpu_library(&data).expect("conversion");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a rayon pool");
    let mut crowd = match stage {
        "posegpu-sample" | "posegpu-frame" | "posegpu-separate" => {
            Crowd::Posegpu(PosegpuCrowd::new(&lib, n, 1))
        }
        "ozz-sample" | "ozz-l2m" | "ozz-frame" | "ozz-skinned" => {
            Crowd::Ozz(OzzCrowd::new(&data, n))
        }
        other => panic!("unknown stage {other}"),
    };
    pool.install(|| {
        set_time(&mut crowd, 0.0);
        if let Crowd::Ozz(c) = &mut crowd {
            c.sample();
        }
        run_stage(stage, &mut crowd);
        let mut total = 0.0;
        for f in 1..=frames {
            set_time(&mut crowd, f as f32 / 60.0);
            let start = Instant::now();
            run_stage(stage, &mut crowd);
            total += start.elapsed().as_secs_f64();
        }
        println!(
            "{stage}: {n} instances, {frames} frames: {:.3} µs per instance",
            total * 1e6 / (frames * n) as f64
        );
    });
}
