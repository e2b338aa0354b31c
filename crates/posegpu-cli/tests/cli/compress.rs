//! `--compress[=TOL]` on eval and bench: compressed keys through the same JSON and reports.

use super::*;

/// The sampling pass's DRAM bytes per bone in the separate passes, from `bench --traffic`.
fn separate_sample_bytes(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("separate  sample"))
        .unwrap_or_else(|| panic!("no separate sample line in:\n{stdout}"));
    let (_, dram) = line.rsplit_once("DRAM").unwrap();
    let (bytes, _) = dram.split_once("B/bone").unwrap();
    bytes.trim().parse().unwrap()
}

/// The largest difference between two arrays of `[t, q, s]` rows, a quaternion and its
/// negation alike (a packed rotation is rebuilt with w >= 0).
fn max_pose_diff(a: &Value, b: &Value) -> f64 {
    let rows = |v: &Value| -> Vec<Vec<f64>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect()
            })
            .collect()
    };
    let mut max = 0.0f64;
    for (x, y) in rows(a).iter().zip(rows(b).iter()) {
        let dot: f64 = (3..7).map(|i| x[i] * y[i]).sum();
        let sign = if dot < 0.0 { -1.0 } else { 1.0 };
        for i in 0..10 {
            let s = if (3..7).contains(&i) { sign } else { 1.0 };
            max = max.max((x[i] - s * y[i]).abs());
        }
    }
    max
}

#[test]
fn eval_compress_gives_the_same_json_within_the_tolerance() {
    let times = "0,0.31,0.77,1.4";
    let plain = eval_json(&["eval", "humanoid", "--times", times, "--loop"]);
    let mut runs = vec![("cpu", "--compress"), ("cpu", "--compress=0.001")];
    if common::gpu().is_some() {
        runs.push(("gpu", "--compress"));
    }
    for (backend, compress) in runs {
        let args = [
            "eval",
            "humanoid",
            "--times",
            times,
            "--loop",
            "--backend",
            backend,
        ];
        let packed = eval_json(&[&args[..], &[compress]].concat());
        assert_eq!(plain["bones"], packed["bones"]);
        assert_eq!(plain["parents"], packed["parents"]);
        let (a, b) = (
            plain["frames"].as_array().unwrap(),
            packed["frames"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x["time"], y["time"]);
            // Within a few tolerances of the skeleton's height (under 2 m) in every component
            // and every quaternion term.
            for space in ["local", "component"] {
                let d = max_pose_diff(&x[space], &y[space]);
                assert!(
                    d < 0.02,
                    "{backend} {compress} {space} at {}: {d}",
                    x["time"]
                );
            }
        }
    }
}

#[test]
fn eval_compress_rejects_a_tolerance_outside_zero_to_one() {
    for bad in [
        "--compress=0",
        "--compress=-0.001",
        "--compress=NaN",
        "--compress=2",
    ] {
        let out = posegpu(&["eval", "humanoid", "--times", "0.5", bad]);
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("tolerance"), "{bad}: {err}");
    }
    let out = posegpu(&["eval", "humanoid", "--times", "0.5", "--compress=x"]);
    assert!(!out.status.success());
}

#[test]
fn bench_traffic_with_compress_reads_fewer_bytes_per_bone_in_sampling() {
    let dir = scratch("bench-compress");
    let (csv, svg) = (dir.join("b.csv"), dir.join("b.svg"));
    let (csv_arg, svg_arg) = (csv.display().to_string(), svg.display().to_string());
    let run = |compress: Option<&str>| {
        let mut args = vec![
            "bench",
            "--backend",
            "cpu",
            "--traffic",
            "--instances",
            "64",
            "--frames",
            "1",
            "--csv",
            &csv_arg,
            "--plot",
            &svg_arg,
        ];
        args.extend(compress);
        let out = posegpu(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (plain, packed) = (run(None), run(Some("--compress")));
    assert!(packed.contains("every clip compressed"), "{packed}");
    let (a, b) = (
        separate_sample_bytes(&plain),
        separate_sample_bytes(&packed),
    );
    assert!(b < a, "plain {a} B/bone, compressed {b} B/bone");
    let _ = std::fs::remove_dir_all(dir);
}
