//! `posegpu check`, `scripts/gpu-run --quick` and the PyTorch peer, run here: on lavapipe where
//! there is no GPU (skipped without any adapter, except under CI=true).

#[path = "../../posegpu/tests/it/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn check(instances: &str, corrupt: Option<&str>) -> (Output, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_posegpu"));
    cmd.args(["check", "--instances", instances]);
    match corrupt {
        Some(c) => cmd.env(posegpu_cli::check::CORRUPT_VAR, c),
        None => cmd.env_remove(posegpu_cli::check::CORRUPT_VAR),
    };
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    (out, text)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn check_passes_and_names_every_stage() {
    if common::gpu().is_none() {
        return;
    }
    // 70 instances: no multiple of the workgroup size (64), nor of the fused blocks.
    let (out, text) = check("70", None);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("adapter: "), "{text}");
    let names = posegpu_cli::check::stage_names();
    assert!(names.len() >= 30, "{} stages", names.len());
    for name in names {
        let row = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for '{name}':\n{text}"));
        assert!(row.trim_end().ends_with("ok"), "{row}");
    }
    assert!(text.contains("all within tolerance"), "{text}");
}

#[test]
fn a_corrupted_stage_fails_the_check_and_is_named() {
    if common::gpu().is_none() {
        return;
    }
    for (corrupt, stage) in [
        ("1", posegpu_cli::check::CORRUPTED_BY_DEFAULT),
        (
            "crowd",
            "crowd: rates, montages, root motion, events (fused)",
        ),
    ] {
        let (out, text) = check("20", Some(corrupt));
        assert_eq!(out.status.code(), Some(1), "{corrupt}: {text}");
        let failed = text.lines().find(|l| l.contains("FAILED: ")).unwrap();
        assert!(failed.contains(stage), "{corrupt}: {failed}");
        // Only that stage.
        assert_eq!(text.matches("  FAIL").count(), 1, "{corrupt}: {text}");
    }
}

#[test]
fn gpu_run_quick_leaves_its_files() {
    if common::gpu().is_none() {
        return;
    }
    let out_dir = std::env::temp_dir().join(format!("posegpu-gpu-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let out = Command::new("bash")
        .arg(repo().join("scripts/gpu-run"))
        .arg("--quick")
        .env("OUT", &out_dir)
        .env("POSEGPU_BIN", env!("CARGO_BIN_EXE_posegpu"))
        .env("PEER_DATA", out_dir.join("no-such-folder"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        "check.log",
        "bench.log",
        "pipeline.csv",
        "pipeline.png",
        "peer.log",
        "summary.md",
    ] {
        let path = out_dir.join(file);
        assert!(
            std::fs::metadata(&path).is_ok_and(|m| m.len() > 0),
            "{file} missing or empty:\n{text}"
        );
    }
    let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    assert!(summary.contains("all within tolerance"), "{summary}");
    assert!(summary.contains("| 4,000 × 16 |"), "{summary}");
    let csv = std::fs::read_to_string(out_dir.join("pipeline.csv")).unwrap();
    for run in [
        "fused-all",
        "separate-all",
        "plan-ik",
        "baked-ik",
        "mesh-layer",
        "cpu-twin",
    ] {
        assert!(
            csv.lines().any(|l| l.starts_with(run)),
            "no {run} row:\n{csv}"
        );
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// The peer computes posegpu's poses: its self-test against a float64 reference, then the
/// exported workload against the CPU twin's sample. Skipped where PyTorch is not installed.
#[test]
fn the_pytorch_peer_agrees_with_the_cpu_twin() {
    let torch = Command::new("python3")
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !torch {
        eprintln!("skipping the PyTorch peer: python3 cannot import torch");
        return;
    }
    let script = repo().join("crates/posegpu-cli/benches/peers/torch_fk.py");
    let dir = std::env::temp_dir().join(format!("posegpu-peer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let export = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["bench", "--export-peer"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(export.status.success());
    for args in [
        vec!["--selftest", "--device", "cpu"],
        vec![
            dir.to_str().unwrap(),
            "--instances",
            "300",
            "--frames",
            "1",
            "--device",
            "cpu",
        ],
    ] {
        let out = Command::new("python3")
            .arg(&script)
            .args(&args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("): ok"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_takes_files_and_names_a_missing_one() {
    // A missing file is an error naming it, before any device is opened.
    let out = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["check", "no/such/walk.bvh"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such/walk.bvh"), "{err}");
    if common::gpu().is_none() {
        return;
    }
    let walk = common::anim_data().join("bvh/cmu_walk_delfem2.bvh");
    let knight = common::anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let out = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(["check", "--instances", "20"])
        .args([&walk, &knight])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for row in [
        "file cmu_walk_delfem2.bvh: own clips",
        "file Knight.glb: own clips",
        "file plan: cmu_walk_delfem2.bvh -> Knight.glb",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.trim_end().ends_with("ok"), "{line}");
    }
}
