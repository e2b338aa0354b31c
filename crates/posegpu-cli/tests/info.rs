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
