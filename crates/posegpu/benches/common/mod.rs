//! What the benches share: the crowd sizes they run, and GPU time per frame.

use std::time::{Duration, Instant};

use posegpu::{GpuEvaluator, PoseBatch};

/// `POSEGPU_BENCH_SIZES` (comma-separated instance counts), default 10,000.
pub fn sizes() -> Vec<usize> {
    std::env::var("POSEGPU_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000])
}

/// The GPU time of `iters` frames, frame `i` being `frame(i)`: from timestamp queries, or the
/// wall clock where the adapter has none.
pub fn gpu_time(gpu: &mut GpuEvaluator, iters: u64, frame: impl Fn(u64) -> PoseBatch) -> Duration {
    let mut total = Duration::ZERO;
    for i in 0..iters {
        let batch = frame(i);
        let start = Instant::now();
        total += match gpu.evaluate_timed(&batch).unwrap() {
            Some(t) => Duration::from_nanos(t.total_ns() as u64),
            None => start.elapsed(),
        };
    }
    total
}
