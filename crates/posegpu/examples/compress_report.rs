//! Compressed keys measured: per clip of each file given, ACL's raw bytes, the packed bytes,
//! the ratio, the worst error (fraction of the skeleton's height) as the optimizer measured it
//! and as the decoder plays the clip at its keys and halfway between them, and the compression
//! time; then the totals (summed raw over summed packed). With `--bits` first, also where the
//! key bits go over all the files: per track kind (rotation, translation, scale) and rate, the
//! tracks and the bits their keys take in the packed stream.
//!
//! `cargo run --release --example compress_report -- [--bits] FILE...` (BENCHMARKS.md,
//! "Compressed keys").

use std::collections::BTreeMap;

use posegpu::compress::{compression_report, CompressedClip, Rate, DEFAULT_TOLERANCE};

/// Bits one key of a track at `rate` takes in the stream (a rotation stores x, y and z; raw
/// rotations all four).
fn key_bits(kind: usize, rate: Rate) -> u64 {
    match rate {
        Rate::Reference | Rate::Constant => 0,
        Rate::Bits(n) => 3 * u64::from(n),
        Rate::Raw if kind == 0 => 128,
        Rate::Raw => 96,
    }
}

fn main() -> Result<(), posegpu::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bits = args.first().is_some_and(|a| a == "--bits");
    let (mut raw, mut packed, mut seconds) = (0usize, 0usize, 0.0f64);
    let (mut worst, mut played) = (0.0f32, 0.0f32);
    // (kind, rate) -> (tracks, key bits).
    let mut tally: BTreeMap<(usize, String), (u64, u64)> = BTreeMap::new();
    for file in args.iter().skip(usize::from(bits)) {
        let asset = posegpu::import::load(file)?;
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
        if bits {
            for clip in &asset.clips {
                let c = CompressedClip::new(&asset.skeleton, clip, DEFAULT_TOLERANCE)?;
                let keys = c.times().len() as u64;
                for (track, rate) in c.rates().enumerate() {
                    let name = match rate {
                        Rate::Bits(n) => format!("{n:02} bits"),
                        other => format!("{other:?}"),
                    };
                    let t = tally.entry((track % 3, name)).or_default();
                    t.0 += 1;
                    t.1 += keys * key_bits(track % 3, rate);
                }
            }
        }
    }
    println!(
        "total: {raw} B raw, {packed} B packed ({:.2}:1), worst {worst:.2e}, played {played:.2e}, {seconds:.2} s",
        raw as f64 / packed.max(1) as f64
    );
    if bits {
        let all: u64 = tally.values().map(|t| t.1).sum();
        println!("| kind | rate | tracks | key bytes | share of key bytes |");
        println!("|---|---|---:|---:|---:|");
        for ((kind, rate), (tracks, b)) in &tally {
            let kind = ["rotation", "translation", "scale"][*kind];
            let share = 100.0 * *b as f64 / all.max(1) as f64;
            println!("| {kind} | {rate} | {tracks} | {} | {share:.1}% |", b / 8);
        }
    }
    Ok(())
}
