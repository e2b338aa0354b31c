//! Refusals, closed pipes, overflow and a quiet Vulkan loader.

use super::*;

#[test]
fn zero_counts_are_refused_not_rounded_up() {
    for args in [
        &["demo", "--instances", "0"][..],
        &["demo", "--frames", "0"][..],
    ] {
        let out = posegpu(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("at least 1"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    use std::io::Read;
    // A bone tree longer than a pipe's buffer (64 KiB), so that the writes meet the closed pipe.
    let joints = 3000;
    let mut bvh = String::from("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n");
    for i in 0..joints {
        bvh += &format!(" JOINT Joint{i}\n {{\n  OFFSET 0 1 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {{\n   OFFSET 0 1 0\n  }}\n }}\n");
    }
    bvh += &format!(
        "}}\nMOTION\nFrames: 1\nFrame Time: 0.033\n{}\n",
        vec!["0"; 6 + 3 * joints].join(" ")
    );
    let path = std::env::temp_dir().join(format!("posegpu-wide-{}.bvh", std::process::id()));
    std::fs::write(&path, bvh).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["info", path.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe as `head -c 1` would.
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    stdout.read_exact(&mut byte).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        out.status.code() == Some(141) || out.status.success(),
        "{:?}",
        out.status
    );
}

#[test]
fn eval_refuses_a_pose_that_overflows_instead_of_writing_null() {
    // Two offsets of 3e38 are finite each, infinite once composed: JSON has no infinity.
    let bvh = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 3e38 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  JOINT Spine\n  {\n    OFFSET 0 3e38 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 1 0\n    }\n  }\n}\nMOTION\nFrames: 1\nFrame Time: 0.033\n0 0 0 0 0 0\n";
    let path = std::env::temp_dir().join(format!("posegpu-overflow-{}.bvh", std::process::id()));
    std::fs::write(&path, bvh).unwrap();
    let out = posegpu(&["eval", &path.display().to_string(), "--times", "0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains("'Spine'") && stderr.contains("not finite"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("null"));
}

#[test]
fn the_vulkan_loader_says_nothing_on_the_main_command() {
    // Without XDG_RUNTIME_DIR (containers, CI) the loader would complain on stderr.
    if common::gpu().is_none() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["demo", "--instances", "4", "--frames", "1"])
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
}
