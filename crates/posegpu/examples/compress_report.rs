//! Compressed keys measured: per clip of each file given, ACL's raw bytes, the packed bytes,
//! the ratio, the worst error (fraction of the skeleton's height) as the optimizer measured it
//! and as the decoder plays the clip at its keys and halfway between them, and the compression
//! time; then the totals (summed raw over summed packed).
//!
//! `cargo run --release --example compress_report -- FILE...` (BENCHMARKS.md, "Compressed
//! keys").

use posegpu::compress::{compression_report, DEFAULT_TOLERANCE};

fn main() -> Result<(), posegpu::Error> {
    let (mut raw, mut packed, mut seconds) = (0usize, 0usize, 0.0f64);
    let (mut worst, mut played) = (0.0f32, 0.0f32);
    for file in std::env::args().skip(1) {
        let asset = posegpu::import::load(&file)?;
        let reports = compression_report(&asset, DEFAULT_TOLERANCE)?;
        let (r, p): (usize, usize) = reports
            .iter()
            .fold((0, 0), |(r, p), c| (r + c.raw_bytes, p + c.packed_bytes));
        let w = reports.iter().map(|c| c.worst_error).fold(0.0, f32::max);
        let pl = reports.iter().map(|c| c.played_error).fold(0.0, f32::max);
        let s: f64 = reports.iter().map(|c| c.seconds).sum();
        println!(
            "{file}: {} clips, {r} B raw, {p} B packed ({:.1}:1), worst {w:.2e}, played {pl:.2e}, {s:.3} s",
            reports.len(),
            r as f64 / p.max(1) as f64
        );
        for c in &reports {
            println!(
                "  {}: {:.1}:1, worst {:.2e}, played {:.2e}, {:.3} s",
                c.name,
                c.ratio(),
                c.worst_error,
                c.played_error,
                c.seconds
            );
        }
        (raw, packed, seconds) = (raw + r, packed + p, seconds + s);
        (worst, played) = (worst.max(w), played.max(pl));
    }
    println!(
        "total: {raw} B raw, {packed} B packed ({:.2}:1), worst {worst:.2e}, played {played:.2e}, {seconds:.2} s",
        raw as f64 / packed.max(1) as f64
    );
    Ok(())
}
