//! The command line: the eval JSON contract, info, errors, retargeting, layers, the bench and
//! the features, one test binary.

#[path = "../../../posegpu/tests/it/common/mod.rs"]
mod common;

use std::process::{Command, Output};

use serde_json::Value;

fn posegpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(args)
        .output()
        .unwrap()
}

fn data(rel: &str) -> String {
    common::anim_data().join(rel).display().to_string()
}

/// The largest difference between two JSON arrays of `[f64; 10]` rows.
fn max_abs_diff(a: &Value, b: &Value) -> f64 {
    let rows = |v: &Value| v.as_array().unwrap().clone();
    let mut max = 0.0f64;
    for (x, y) in rows(a).iter().zip(rows(b).iter()) {
        for (p, q) in rows(x).iter().zip(rows(y).iter()) {
            max = max.max((p.as_f64().unwrap() - q.as_f64().unwrap()).abs());
        }
    }
    max
}

/// Mech_Mike and Mech_Stan: one hierarchy, other proportions.
fn mechs() -> (String, String) {
    (
        data("gltf/quaternius/Mech_Mike.glb"),
        data("gltf/quaternius/Mech_Stan.glb"),
    )
}

fn eval_json(args: &[&str]) -> Value {
    let out = posegpu(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn knight_file() -> String {
    data("gltf/kaykit-adventurers/Knight.glb")
}
/// A fresh folder for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("posegpu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
/// The cells of one CSV line (RFC 4180 quoting).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

mod additive;
mod basics;
mod batches;
mod bench;
mod compress;
mod features;
mod retargeting;
mod robustness;
