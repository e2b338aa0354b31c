//! posegpu bench: its CSV, plots and argument checks.

use super::*;

const BENCH_CSV_HEADER: &str = "instances,bones,layer_space,frames,sample_ms,layers_ms,\
hierarchy_ms,gpu_ms,gpu_time,gpu_wall_ms,gpu_bones_per_s,sample_bytes_per_bone,\
layers_bytes_per_bone,hierarchy_bytes_per_bone,bytes_per_bone,effective_gb_per_s,copy_gb_per_s,\
fraction_of_copy,copy_ceiling_bones_per_s,cpu_ms,cpu_threads,cpu_bones_per_s,gpu_speedup,adapter";

/// The CSV's rows as column name -> cell.
fn bench_rows(csv: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(BENCH_CSV_HEADER));
    let names: Vec<&str> = BENCH_CSV_HEADER.split(',').collect();
    lines
        .map(|line| {
            let cells = csv_cells(line);
            assert_eq!(cells.len(), names.len(), "{line}");
            names.iter().map(|n| n.to_string()).zip(cells).collect()
        })
        .collect()
}

fn number(row: &std::collections::HashMap<String, String>, column: &str) -> f64 {
    let cell = &row[column];
    let x: f64 = cell
        .parse()
        .unwrap_or_else(|e| panic!("{column} = '{cell}': {e}"));
    assert!(x.is_finite(), "{column} = {x}");
    x
}

#[test]
fn bench_writes_a_csv_row_per_configuration_and_a_png_plot() {
    // Both backends; without an adapter (and CI unset) there is nothing to run here
    // (`bench_on_the_cpu_alone_...` covers the CPU twin alone).
    if common::gpu().is_none() {
        return;
    }
    let dir = scratch("bench");
    let (csv, png) = (dir.join("out/pipeline.csv"), dir.join("out/pipeline.png"));
    let (csv_arg, png_arg) = (csv.display().to_string(), png.display().to_string());
    let out = posegpu(&[
        "bench",
        "--instances",
        "64,256",
        "--bones",
        "16,67",
        "--frames",
        "2",
        "--copy-mib",
        "4",
        "--csv",
        &csv_arg,
        "--plot",
        &png_arg,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in ["GPU rate", "CPU rate", "B/bone", "compulsory-traffic model"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }

    let rows = bench_rows(&csv);
    let configs: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (number(r, "instances"), number(r, "bones")))
        .collect();
    assert_eq!(
        configs,
        [(64.0, 16.0), (256.0, 16.0), (64.0, 67.0), (256.0, 67.0)]
    );
    let positive = |r: &std::collections::HashMap<String, String>, columns: &[&str]| {
        for c in columns {
            assert!(number(r, c) > 0.0, "{c} = {}", r[*c]);
        }
    };
    for r in &rows {
        assert_eq!(
            (r["layer_space"].as_str(), r["frames"].as_str()),
            ("local", "2")
        );
        // A local-space layer runs in the sampling pass: no layer pass, no bytes for it.
        assert_eq!(number(r, "layers_bytes_per_bone"), 0.0);
        positive(r, &["sample_bytes_per_bone", "hierarchy_bytes_per_bone"]);
        // At least a local transform written and read back, a component transform and a
        // skinning matrix written: 4 x 48 bytes per bone.
        assert!(number(r, "bytes_per_bone") >= 192.0, "{r:?}");
        positive(r, &["cpu_ms", "cpu_threads", "cpu_bones_per_s"]);
        positive(
            r,
            &[
                "sample_ms",
                "hierarchy_ms",
                "gpu_ms",
                "gpu_wall_ms",
                "gpu_bones_per_s",
                "effective_gb_per_s",
                "copy_gb_per_s",
                "fraction_of_copy",
                "copy_ceiling_bones_per_s",
                "gpu_speedup",
            ],
        );
        assert!(!r["adapter"].is_empty());
        let bones = number(r, "instances") * number(r, "bones");
        let gpu_ms = number(r, "gpu_ms");
        let rate = bones / (gpu_ms / 1e3);
        assert!(
            (number(r, "gpu_bones_per_s") / rate - 1.0).abs() < 1e-3,
            "{r:?}"
        );
        if r["gpu_time"] == "timestamps" {
            assert_eq!(number(r, "layers_ms"), 0.0);
            let sum = number(r, "sample_ms") + number(r, "hierarchy_ms");
            assert!((sum - gpu_ms).abs() < 1e-3 * gpu_ms, "{r:?}");
        }
        let effective = number(r, "bytes_per_bone") * rate / 1e9;
        assert!((number(r, "effective_gb_per_s") / effective - 1.0).abs() < 1e-3);
    }

    let (width, height, rgba) =
        posegpu_cli::picture::decode_png(&std::fs::read(&png).unwrap()).expect("the plot is a PNG");
    assert_eq!((width, height), (860, 400));
    assert!(rgba.chunks(4).any(|p| p[..3] != [0xff; 3]), "an empty plot");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bench_on_the_cpu_alone_leaves_the_gpu_cells_empty_and_writes_svg() {
    let dir = scratch("bench-cpu");
    let (csv, svg) = (dir.join("cpu.csv"), dir.join("cpu.svg"));
    let (csv_arg, svg_arg) = (csv.display().to_string(), svg.display().to_string());
    let out = posegpu(&[
        "bench",
        "--backend",
        "cpu",
        "--instances",
        "32",
        "--bones",
        "5",
        "--frames",
        "1",
        "--layer-space",
        "mesh",
        "--csv",
        &csv_arg,
        "--plot",
        &svg_arg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = bench_rows(&csv);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["layer_space"], "mesh");
    for column in ["gpu_ms", "copy_gb_per_s", "gpu_speedup", "adapter"] {
        assert_eq!(r[column], "", "{column}");
    }
    assert!(number(r, "cpu_ms") > 0.0);
    // A mesh-space layer runs the layer pass, which moves bytes of its own.
    assert!(number(r, "layers_bytes_per_bone") > 0.0);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("CPU twin"), "{svg}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bench_rejects_bad_arguments_with_a_message() {
    let dir = scratch("bench-bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let under_file = file.join("pipeline.csv").display().to_string();
    let cases: [(&[&str], &str); 5] = [
        (&["--bones", "0"], "at least 1"),
        (&["--bones", "16,x"], "invalid"),
        (&["--instances", "0"], "at least 1"),
        (&["--frames", "0"], "at least 1"),
        (&["--frames", "1", "--csv", &under_file], &under_file),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["bench", "--instances", "8", "--bones", "4"];
        args.extend(extra);
        let out = posegpu(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(needle) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `bench --shader-stats`: a line per pipeline, each pipeline specialised to what its
/// workload can take (issue 38's aim: the full workload's fused pipeline within 8,000 SPIR-V
/// instructions, where every path compiled in gave 33,640), and `--spirv` writes the modules.
#[test]
fn bench_shader_stats_prints_each_specialised_pipeline() {
    let dir = scratch("shader-stats");
    let stats = |args: &[&str]| {
        let mut all = vec!["bench", "--shader-stats", "--instances", "64"];
        all.extend_from_slice(args);
        let out = posegpu(&all);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<(String, u64, u64)> = text
            .lines()
            .filter_map(|l| l.strip_prefix("shader "))
            .map(|l| {
                let (name, rest) = l.split_once(": ").unwrap();
                let words: Vec<&str> = rest.split_whitespace().collect();
                // Exactly `N SPIR-V instructions, M bytes of workgroup memory`.
                let shape = [&words[1..3], &words[4..]].concat();
                let expected = [
                    "SPIR-V",
                    "instructions,",
                    "bytes",
                    "of",
                    "workgroup",
                    "memory",
                ];
                assert_eq!(shape, expected, "{l}");
                (
                    name.to_string(),
                    words[0].parse().unwrap(),
                    words[3].parse().unwrap(),
                )
            })
            .collect();
        assert!(!lines.is_empty(), "{text}");
        lines
    };
    let dir_arg = dir.display().to_string();
    let full = stats(&["--passes", "fused", "--spirv", &dir_arg]);
    // The samples' key searches (resolve.wgsl), then the fused pass.
    assert_eq!(full.len(), 2, "{full:?}");
    assert!(
        full[0].0.starts_with("resolve/") && full[0].2 == 0,
        "{full:?}"
    );
    let (name, instructions, workgroup) = &full[1];
    assert!(name.starts_with("fused/"), "{name}");
    assert!(*instructions <= 8_000, "{name}: {instructions}");
    assert!(*workgroup >= 320 * 48, "{name}: {workgroup} bytes");
    let spv = std::fs::read(dir.join(format!("{}.spv", name.replace('/', "-")))).unwrap();
    assert_eq!(spv[..4], 0x0723_0203u32.to_le_bytes());
    // The separate passes: the searches, sampling and the hierarchy, none with workgroup
    // memory.
    let separate = stats(&["--passes", "separate"]);
    let names: Vec<&str> = separate.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(
        names[0].starts_with("resolve/")
            && names[1].starts_with("sample/")
            && names[2].starts_with("hierarchy/"),
        "{names:?}"
    );
    assert!(separate.iter().all(|&(_, _, w)| w == 0), "{separate:?}");
    // Compressed clips compile their decoder in: a larger pipeline, named for the path.
    let packed = stats(&["--passes", "fused", "--compress"]);
    assert!(packed[1].0.contains("packed"), "{packed:?}");
    assert!(
        packed[1].1 > *instructions,
        "{packed:?} against {instructions}"
    );
}
