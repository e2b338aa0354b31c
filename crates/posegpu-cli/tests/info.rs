//! `posegpu info` on skeletons past what a screen shows: a chain far deeper than any rig.

use std::process::Command;

#[test]
fn info_prints_a_100000_deep_chain_in_linear_output() {
    // Found by fuzzing: the tree printer's indentation overflowed the formatter ("Formatting
    // argument out of range") and grew quadratically.
    let depth = 100_000;
    let mut bvh = String::from(
        "HIERARCHY\nROOT j0\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n",
    );
    for i in 1..depth {
        bvh.push_str(&format!(
            "JOINT j{i}\n{{\n OFFSET 0 1 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n"
        ));
    }
    bvh.push_str(" End Site\n {\n OFFSET 0 1 0\n }\n");
    bvh.push_str(&"}\n".repeat(depth));
    bvh.push_str(&format!(
        "MOTION\nFrames: 1\nFrame Time: 0.033\n{}\n",
        vec!["0"; 3 * depth].join(" ")
    ));
    let dir = std::env::temp_dir().join(format!("posegpu-info-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chain.bvh");
    std::fs::write(&path, bvh).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["info", path.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(&format!("{depth} bones")), "{}", &text[..200]);
    let last = text
        .lines()
        .find(|l| l.contains(&format!(" j{} ", depth - 1)))
        .unwrap();
    assert!(last.contains("…(depth 99999)"), "{last}");
    // Linear: no line is longer than the capped indentation and one bone's fields.
    let widest = text.lines().map(str::len).max().unwrap();
    assert!(widest < 200, "a line of {widest} bytes");
}

#[test]
fn info_compress_prints_one_line_per_clip_within_the_threshold() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|d| d.join("shared/anim-data/bvh/cmu_walk_delfem2.bvh"))
        .find(|p| p.is_file())
        .expect("shared/anim-data is missing (see ../shared/anim-data/README.md)");
    let out = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["info", file.to_str().unwrap(), "--compress=3e-4"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    // "  NAME: keys: RAW bytes raw, PACKED bytes compressed (R:1), largest error E of the
    // skeleton's height"
    let rest = lines[0]
        .strip_prefix("  cmu_walk_delfem2: keys: ")
        .unwrap_or_else(|| panic!("{text}"));
    let (raw, rest) = rest.split_once(" bytes raw, ").unwrap();
    let (packed, rest) = rest.split_once(" bytes compressed (").unwrap();
    let (ratio, rest) = rest.split_once(":1), largest error ").unwrap();
    let error = rest.strip_suffix(" of the skeleton's height").unwrap();
    let (raw, packed): (u64, u64) = (raw.parse().unwrap(), packed.parse().unwrap());
    assert_eq!(
        ratio.split_once('.').map(|(_, d)| d.len()),
        Some(1),
        "{text}"
    );
    let ratio: f64 = ratio.parse().unwrap();
    assert!(raw > packed && ratio > 1.0, "{text}");
    assert!((ratio - raw as f64 / packed as f64).abs() < 0.051, "{text}");
    assert!(error.contains('e'), "{text}");
    assert!(error.parse::<f64>().unwrap() <= 3e-4, "{text}");
    // The default is the same threshold; a bad one is a typed error, not a panic.
    let bad = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["info", file.to_str().unwrap(), "--compress=-1"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tolerance -1"));
}
