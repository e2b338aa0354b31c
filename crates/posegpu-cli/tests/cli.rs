//! The command line: the eval JSON contract, info, and errors.

#[path = "../../posegpu/tests/common/mod.rs"]
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

#[test]
fn eval_follows_the_contract() {
    let model = data("gltf/khronos/CesiumMan.glb");
    let json = eval_json(&["eval", &model, "--times=-0.5,0,1.25"]);
    let bones = json["bones"].as_array().unwrap();
    let parents = json["parents"].as_array().unwrap();
    assert_eq!(bones.len(), 19);
    assert_eq!(parents.len(), 19);
    assert_eq!(parents[0], -1);
    for (i, p) in parents.iter().enumerate() {
        assert!(p.as_i64().unwrap() < i as i64, "parents-first");
    }
    let frames = json["frames"].as_array().unwrap();
    let times: Vec<f64> = frames.iter().map(|f| f["time"].as_f64().unwrap()).collect();
    assert_eq!(times, [-0.5, 0.0, 1.25], "times as requested");
    for f in frames {
        for key in ["local", "component"] {
            let rows = f[key].as_array().unwrap();
            assert_eq!(rows.len(), 19);
            assert!(rows.iter().all(|r| r.as_array().unwrap().len() == 10));
        }
    }
    // -0.5 clamps to 0.
    assert_eq!(frames[0]["local"], frames[1]["local"]);
    // The root has no parent: its component transform is its local one.
    assert_eq!(frames[2]["local"][0], frames[2]["component"][0]);
}

#[test]
fn eval_selects_loops_and_matches_across_backends() {
    let model = data("gltf/quaternius/Mech_Mike.glb");
    let by_name = eval_json(&["eval", &model, "--animation", "Walk", "--times", "0.3"]);
    let info = posegpu(&["info", &model]);
    let text = String::from_utf8_lossy(&info.stdout);
    let index = text
        .lines()
        .find(|l| l.contains("] Walk:"))
        .expect("Walk listed");
    let index = index
        .trim()
        .trim_start_matches('[')
        .split(']')
        .next()
        .unwrap();
    let by_index = eval_json(&["eval", &model, "--animation", index, "--times", "0.3"]);
    assert_eq!(by_name["frames"], by_index["frames"]);

    // Looping: a time one duration later evaluates the same pose.
    let asset = posegpu::import::load(&model).unwrap();
    let walk = asset.clips.iter().find(|c| c.name() == "Walk").unwrap();
    let duration = f64::from(walk.duration());
    let later = format!("{}", 0.3 + duration);
    let looped = eval_json(&[
        "eval",
        &model,
        "--animation",
        "Walk",
        "--loop",
        "--times",
        &later,
    ]);
    let (a, b) = (
        &by_name["frames"][0]["component"],
        &looped["frames"][0]["component"],
    );
    let max_diff = max_abs_diff(a, b);
    assert!(max_diff < 1e-4, "loop: {max_diff}");

    if common::gpu().is_some() {
        let gpu = eval_json(&[
            "eval",
            &model,
            "--animation",
            "Walk",
            "--times",
            "0.3",
            "--backend",
            "gpu",
        ]);
        let (a, b) = (
            &by_name["frames"][0]["component"],
            &gpu["frames"][0]["component"],
        );
        let diff = max_abs_diff(a, b);
        assert!(diff < 1e-3, "gpu vs cpu: {diff}");
    }
}

#[test]
fn eval_of_a_model_without_clips_is_its_reference_pose_and_out_writes_a_file() {
    let model = data("gltf/kaykit-rig-medium/manny_med_mod.gltf");
    let out = std::env::temp_dir().join(format!("posegpu-eval-{}.json", std::process::id()));
    let o = posegpu(&[
        "eval",
        &model,
        "--times",
        "0,1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    let json: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let asset = posegpu::import::load(&model).unwrap();
    let rest = asset.skeleton.rest();
    let local = &json["frames"][1]["local"];
    for (b, t) in rest.iter().enumerate() {
        let x = local[b][0].as_f64().unwrap() as f32;
        assert!((x - t.translation.x).abs() < 1e-5, "bone {b}");
    }
    let err = posegpu(&["eval", &model, "--animation", "Walk", "--times", "0"]);
    assert!(!err.status.success());
}

#[test]
fn eval_reads_bvh() {
    let json = eval_json(&[
        "eval",
        &data("bvh/cmu_walk_delfem2.bvh"),
        "--times",
        "0,0.5",
    ]);
    assert_eq!(
        json["bones"].as_array().unwrap().len(),
        json["parents"].as_array().unwrap().len()
    );
    assert_ne!(json["frames"][0]["local"], json["frames"][1]["local"]);
}

#[test]
fn errors_are_messages_and_exit_codes() {
    let out = posegpu(&["eval", "/nonexistent.glb", "--times", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.glb"));
    let model = data("gltf/khronos/Fox.glb");
    let out = posegpu(&["eval", &model, "--animation", "Dance", "--times", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("Dance") && err.contains("Survey"),
        "{err}"
    );
    let out = posegpu(&["eval", &model, "--times", "NaN"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("NaN"));
}

#[test]
fn info_prints_the_tree_and_clips() {
    let out = posegpu(&["info", &data("gltf/khronos/Fox.glb")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("24 bones") && text.contains("3 clips"),
        "{text}"
    );
    assert!(text.contains("Survey") && text.contains("Walk") && text.contains("Run"));
}

#[test]
fn the_demo_runs_and_checks_itself() {
    let out = posegpu(&["demo", "--instances", "500", "--frames", "3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("bones/s"), "{text}");
    if common::gpu().is_some() {
        assert!(
            text.contains("adapter:") && text.contains("largest deviation"),
            "{text}"
        );
    }
}

#[test]
fn eval_plays_a_clip_of_another_skeleton_through_a_rig() {
    let (mike, stan) = mechs();
    let rig = std::env::temp_dir().join(format!("posegpu-rig-{}.json", std::process::id()));
    std::fs::write(
        &rig,
        r#"{"translation_retargeting": {"default": "skeleton", "bones": {"Body": "animation"}}}"#,
    )
    .unwrap();
    let rig = rig.display().to_string();
    let args = |backend| {
        [
            "eval",
            &stan,
            "--animation-from",
            &mike,
            "--animation",
            "Walk",
            "--rig",
            &rig,
            "--times",
            "0,0.4",
            "--backend",
            backend,
        ]
        .map(str::to_string)
    };
    let cpu = eval_json(&args("cpu").each_ref().map(String::as_str));
    assert_eq!(cpu["bones"].as_array().unwrap().len(), 43);
    // Stan's reference translations under `skeleton`, Mike's animated root under `animation`.
    let stan_rest = posegpu::import::load(&stan).unwrap().skeleton.rest()[4].translation;
    let mike_walk = eval_json(&["eval", &mike, "--animation", "Walk", "--times", "0.4"]);
    let frame = &cpu["frames"][1]["local"];
    let head = 4;
    let translation = |v: &Value| v.as_array().unwrap()[..3].to_vec();
    let head_t: Vec<f32> = translation(&frame[head])
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(head_t, stan_rest.to_array());
    assert_eq!(
        translation(&frame[0]),
        translation(&mike_walk["frames"][0]["local"][0])
    );
    // The GPU gives the same (skipped without an adapter, except under CI=true).
    if common::gpu().is_some() {
        let gpu = eval_json(&args("gpu").each_ref().map(String::as_str));
        for f in 0..2 {
            let (c, g) = (&cpu["frames"][f], &gpu["frames"][f]);
            assert!(max_abs_diff(&c["component"], &g["component"]) < 1e-3);
        }
    }
}

#[test]
fn eval_plays_a_clip_of_another_file_on_a_model_without_clips() {
    // Superhero has no clips: --animation names the source's clip, not the model's.
    let hero = data("gltf/quaternius-ubc/Superhero_Male_FullBody.gltf");
    let (mike, _) = mechs();
    let out = eval_json(&[
        "eval",
        &hero,
        "--animation-from",
        &mike,
        "--animation",
        "Walk",
        "--times",
        "0,0.5",
    ]);
    assert_eq!(out["bones"].as_array().unwrap().len(), 65);
    assert_eq!(out["frames"].as_array().unwrap().len(), 2);
}

#[test]
fn info_against_shows_the_matching_and_bad_rigs_are_errors() {
    let (mike, stan) = mechs();
    let out = posegpu(&["info", &stan, "--against", &mike, "--rig", "humanoid"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("43 of 43 target bones matched"), "{text}");
    assert!(
        text.contains("Body <- Body (exact), animation_scaled"),
        "{text}"
    );
    assert!(text.contains("Head <- Head (exact), skeleton"), "{text}");

    let out = posegpu(&[
        "info",
        &data("bvh/cmu_01_01.bvh"),
        "--against",
        &mike,
        "--rig",
        "humanoid",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("of 31 target bones matched"), "{text}");
    assert!(text.contains("keeps its reference pose"), "{text}");

    let eval_with_rig = |rig: &str| {
        posegpu(&[
            "eval",
            &stan,
            "--animation-from",
            &mike,
            "--rig",
            rig,
            "--times",
            "0",
        ])
    };
    let bad = std::env::temp_dir().join(format!("posegpu-bad-rig-{}.json", std::process::id()));
    for (json, expect) in [
        (
            r#"{"translation_retargeting": {"default": "wobble"}}"#,
            "wobble",
        ),
        (
            r#"{"translation_retargeting": {"bones": {"Tail": "skeleton"}}}"#,
            "Tail",
        ),
        (r#"{"bone_map": {"Head": "#, "EOF"),
    ] {
        std::fs::write(&bad, json).unwrap();
        let out = eval_with_rig(&bad.display().to_string());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(expect),
            "{json}: {err}"
        );
    }
    assert!(!eval_with_rig("sideways").status.success());
}

#[test]
fn retarget_writes_a_glb_with_the_targets_mesh_and_the_converted_clip() {
    let (mike, stan) = mechs();
    let out = std::env::temp_dir().join(format!("posegpu-retarget-{}.glb", std::process::id()));
    let out_s = out.display().to_string();
    let run = posegpu(&[
        "retarget",
        &mike,
        "--animation",
        "Walk",
        "--target",
        &stan,
        "--out",
        &out_s,
        "--method",
        "ue",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // The gltf crate reads it, buffers and all, and it keeps Stan's meshes and skin.
    let (doc, _, _) = gltf::import(&out).unwrap();
    let (stan_doc, _, _) = gltf::import(&stan).unwrap();
    assert_eq!(doc.meshes().count(), stan_doc.meshes().count());
    assert!(doc.meshes().count() > 0);
    assert_eq!(doc.skins().count(), stan_doc.skins().count());
    assert_eq!(doc.animations().count(), 1);

    // It loads back as Stan's skeleton with the clip the library converts, at Mike's key times.
    let back = posegpu::import::load(&out).unwrap();
    let (m, s) = (
        posegpu::import::load(&mike).unwrap(),
        posegpu::import::load(&stan).unwrap(),
    );
    assert_eq!(back.skeleton.names(), s.skeleton.names());
    assert_eq!(back.skeleton.rest(), s.skeleton.rest());
    let walk = &m.clips[posegpu::Clip::find(&m.clips, "Walk").unwrap()];
    let mapping = posegpu::retarget::BoneMapping::new(
        &m.skeleton,
        &s.skeleton,
        &posegpu::retarget::Rig::default(),
    )
    .unwrap();
    let expected = posegpu::retarget::remap_clip(walk, &m.skeleton, &s.skeleton, &mapping).unwrap();
    assert_eq!(back.clips.len(), 1);
    assert_eq!(back.clips[0].name(), "Walk");
    assert_eq!(back.clips[0].key_times(), walk.key_times());
    for (a, b) in back.clips[0].tracks().iter().zip(expected.tracks()) {
        let (ra, rb) = (a.rotation.as_ref().unwrap(), b.rotation.as_ref().unwrap());
        for (qa, qb) in ra.values.iter().zip(&rb.values) {
            assert!(qa.abs_diff_eq(*qb, 1e-6));
        }
    }
    std::fs::remove_file(&out).ok();
}

#[test]
fn retarget_converts_bvh_onto_bvh_and_refuses_what_cannot_match() {
    let (walk, cmu) = (data("bvh/cmu_walk_delfem2.bvh"), data("bvh/cmu_01_01.bvh"));
    let out = std::env::temp_dir().join(format!("posegpu-retarget-bvh-{}.glb", std::process::id()));
    let out_s = out.display().to_string();
    let run = posegpu(&[
        "retarget", &walk, "--all", "--target", &cmu, "--out", &out_s, "--method", "ue",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let back = posegpu::import::load(&out).unwrap();
    let target = posegpu::import::load(&cmu).unwrap();
    assert_eq!(back.skeleton.names(), target.skeleton.names());
    assert_eq!(back.clips.len(), 1);
    gltf::import(&out).unwrap();
    std::fs::remove_file(&out).ok();

    // Unnamed nodes match nothing by name: a clear error, and no file.
    let cesium = data("gltf/khronos/CesiumMan.glb");
    let run = posegpu(&[
        "retarget", &cesium, "--all", "--target", &walk, "--out", &out_s, "--method", "ue",
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && err.contains("bone_map"), "{err}");
    assert!(!out.exists());
    let run = posegpu(&[
        "retarget",
        &walk,
        "--animation",
        "Jog",
        "--target",
        &cmu,
        "--out",
        &out_s,
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && err.contains("Jog"), "{err}");
}

fn knight_file() -> String {
    data("gltf/kaykit-adventurers/Knight.glb")
}

#[test]
fn eval_additive_built_against_frame_0_gives_the_clip_back_on_frame_0() {
    let knight = knight_file();
    let plain = eval_json(&["eval", &knight, "--animation", "Hit_A", "--times", "0.2"]);
    for space in ["local", "mesh"] {
        let layered = eval_json(&[
            "eval",
            &knight,
            "--animation",
            "Hit_A",
            "--times",
            "0",
            "--additive",
            "Hit_A",
            "--additive-base",
            "frame:0",
            "--additive-space",
            space,
            "--additive-time",
            "0.2",
        ]);
        let (a, b) = (&plain["frames"][0], &layered["frames"][0]);
        assert!(max_abs_diff(&a["local"], &b["local"]) < 1e-4, "{space}");
        // At alpha 0 the base comes back untouched.
        let none = eval_json(&[
            "eval",
            &knight,
            "--animation",
            "Hit_A",
            "--times",
            "0",
            "--additive",
            "Hit_A",
            "--additive-space",
            space,
            "--alpha",
            "0",
        ]);
        let base = eval_json(&["eval", &knight, "--animation", "Hit_A", "--times", "0"]);
        assert_eq!(none["frames"], base["frames"]);
    }
}

#[test]
fn eval_additive_matches_across_backends() {
    let knight = knight_file();
    let args = |backend| {
        vec![
            "eval".to_string(),
            knight.clone(),
            "--animation=Walking_A".into(),
            "--times=0,0.3,0.77".into(),
            "--loop".into(),
            "--additive=Hit_B".into(),
            "--additive-base=clip:Unarmed_Pose:frame:0".into(),
            "--additive-space=mesh".into(),
            "--alpha=0.6".into(),
            format!("--backend={backend}"),
        ]
    };
    let run = |backend| {
        let a = args(backend);
        eval_json(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let cpu = run("cpu");
    assert_ne!(
        cpu["frames"][1]["local"],
        eval_json(&[
            "eval",
            &knight,
            "--animation=Walking_A",
            "--times=0.3",
            "--loop"
        ])["frames"][0]["local"]
    );
    if common::gpu().is_some() {
        let gpu = run("gpu");
        for (a, b) in cpu["frames"]
            .as_array()
            .unwrap()
            .iter()
            .zip(gpu["frames"].as_array().unwrap())
        {
            assert!(max_abs_diff(&a["component"], &b["component"]) < 1e-4);
        }
    }
}

#[test]
fn eval_aim_turns_the_embedded_humanoids_head() {
    let head = |json: &Value| {
        let i = json["bones"]
            .as_array()
            .unwrap()
            .iter()
            .position(|b| b == "head")
            .unwrap();
        let r = &json["frames"][0]["component"][i];
        let q: Vec<f32> = (3..7).map(|k| r[k].as_f64().unwrap() as f32).collect();
        glam::Quat::from_xyzw(q[0], q[1], q[2], q[3])
    };
    let base = eval_json(&["eval", "humanoid", "--animation", "idle", "--times", "0.5"]);
    let aimed = eval_json(&[
        "eval",
        "humanoid",
        "--animation",
        "idle",
        "--times",
        "0.5",
        "--aim=90,0",
    ]);
    let turn = head(&aimed) * head(&base).conjugate();
    assert!(
        turn.abs_diff_eq(
            glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            1e-4
        ),
        "{turn:?}"
    );
}

#[test]
fn eval_additive_errors_name_the_problem() {
    let knight = knight_file();
    let (mike, stan) = mechs();
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["--additive", "Hit_A", "--additive-base", "frame:99"],
            "frame 99 is past the end",
        ),
        (vec!["--additive", "Hit_Z"], "Hit_Z"),
        (
            vec!["--additive", "Hit_A", "--additive-base", "clip:Nope:scaled"],
            "Nope",
        ),
        (
            vec!["--additive", "Hit_A", "--additive-base", "later"],
            "not a base pose",
        ),
        (vec!["--aim=1"], "YAW,PITCH"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["eval", knight.as_str(), "--times", "0"];
        args.extend(extra);
        let out = posegpu(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    // An additive from another skeleton needs a rig; with one it plays retargeted.
    let args = [
        "eval",
        &stan,
        "--additive",
        "Yes",
        "--additive-from",
        &mike,
        "--times",
        "0.2",
    ];
    let out = posegpu(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("give --rig"), "{err}");
    let mut with_rig = args.to_vec();
    with_rig.extend(["--rig", "humanoid"]);
    eval_json(&with_rig);
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

#[test]
fn info_against_shows_roles_and_the_plan_of_the_character_retargeting() {
    let knight = knight_file();
    let out = posegpu(&["info", &knight, "--against", &data("bvh/cmu_01_01.bvh")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("driven by"), "{text}");
    // The CMU take's upper leg and the knight's, each recognised by its own naming.
    assert!(text.contains("LeftUpLeg"), "{text}");
}

#[test]
fn retarget_converts_a_list_of_sources_in_shards_with_a_report() {
    let knight = knight_file();
    let dir = std::env::temp_dir().join(format!("posegpu-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("sources.txt");
    let sources = [data("bvh/cmu_walk_delfem2.bvh"), data("bvh/cmu_01_01.bvh")];
    std::fs::write(
        &list,
        format!("# takes\n{}\n\n{}\n", sources[0], sources[1]),
    )
    .unwrap();
    let out = dir.join("out");
    let shard = |i: &str| {
        posegpu(&[
            "retarget",
            &format!("@{}", list.display()),
            "--all",
            "--target",
            &knight,
            "--out",
            out.to_str().unwrap(),
            "--shard",
            i,
            "--report",
            "--skip-existing",
        ])
    };
    // Shard 0 of 2 takes the first source of the sorted list only.
    let run = shard("0/2");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        text.contains("ankle lift") && text.contains("overall"),
        "{text}"
    );
    let written = |out: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(written(&out), ["cmu_01_01.glb"]);
    assert!(shard("1/2").status.success());
    assert_eq!(written(&out), ["cmu_01_01.glb", "cmu_walk_delfem2.glb"]);
    // Each holds the knight's skeleton with the converted clip.
    let target = posegpu::import::load(&knight).unwrap();
    let back = posegpu::import::load(out.join("cmu_walk_delfem2.glb")).unwrap();
    assert_eq!(back.skeleton.names(), target.skeleton.names());
    assert_eq!(back.clips.len(), 1);
    // A retried worker leaves what exists; a bad shard is refused.
    assert!(shard("0/2").status.success());
    for bad in ["2/2", "1/0", "x"] {
        let run = shard(bad);
        assert!(!run.status.success(), "{bad} accepted");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn retarget_in_a_batch_reports_a_bad_source_and_converts_the_others() {
    let dir = std::env::temp_dir().join(format!("posegpu-batch-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.bvh");
    std::fs::write(&broken, "HIERARCHY\nROOT Hips {\n").unwrap();
    let out = dir.join("out");
    let run = posegpu(&[
        "retarget",
        broken.to_str().unwrap(),
        &data("bvh/cmu_walk_delfem2.bvh"),
        "--all",
        "--target",
        &knight_file(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        err.contains("broken.bvh") && err.contains("1 of 2"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.join("cmu_walk_delfem2.glb").exists());
    assert!(!out.join("broken.glb").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

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

#[test]
fn eval_runs_feet_ik_on_retargeted_clips_unless_told_not_to() {
    // A CMU walk on the Knight: feet IK (the default) moves the legs; --ik-feet 0 leaves the
    // plan's pose; a weight past 1 is refused by name.
    let knight = data("gltf/kaykit-adventurers/Knight.glb");
    let walk = data("bvh/cmu_walk_delfem2.bvh");
    let args = |w: &str| {
        [
            "eval",
            &knight,
            "--animation-from",
            &walk,
            "--times",
            "0.3,0.6",
            "--ik-feet",
            w,
        ]
        .map(str::to_string)
    };
    let run = |w: &str| eval_json(&args(w).each_ref().map(String::as_str));
    let (with, without) = (run("1"), run("0"));
    let d = max_abs_diff(
        &with["frames"][1]["component"],
        &without["frames"][1]["component"],
    );
    assert!(d > 1e-3, "feet IK changed nothing ({d})");
    let out = posegpu(&args("1.5").each_ref().map(String::as_str));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--ik-feet") && stderr.contains("from 0 to 1"),
        "{stderr}"
    );
}

#[test]
fn eval_bakes_retargeted_clips_at_load_when_asked() {
    // A CMU walk on the Knight, retargeted per bone each frame and baked at load (feet IK
    // either way): on the capture's keys (120 Hz) the poses agree; the IK weight given still
    // applies to baked clips; --bake needs the character retargeting and --animation-from.
    let knight = data("gltf/kaykit-adventurers/Knight.glb");
    let walk = data("bvh/cmu_walk_delfem2.bvh");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            &knight,
            "--animation-from",
            &walk,
            "--times",
            "0.25,0.5",
        ];
        args.extend_from_slice(extra);
        eval_json(&args)
    };
    let (live, baked) = (run(&[]), run(&["--bake"]));
    for f in 0..2 {
        let d = max_abs_diff(
            &live["frames"][f]["component"],
            &baked["frames"][f]["component"],
        );
        assert!(d < 1e-4, "frame {f}: baked and live differ by {d}");
    }
    let no_ik = run(&["--bake", "--ik-feet", "0"]);
    let d = max_abs_diff(
        &baked["frames"][1]["component"],
        &no_ik["frames"][1]["component"],
    );
    assert!(
        d > 1e-3,
        "the IK weight changed nothing on baked clips ({d})"
    );
    let out = posegpu(&[
        "eval",
        &knight,
        "--animation-from",
        &walk,
        "--bake",
        "--rig",
        "humanoid",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--rig"),
        "{stderr}"
    );
    let out = posegpu(&["eval", &knight, "--bake"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--animation-from"),
        "{stderr}"
    );
}

#[test]
fn eval_blends_a_masked_layer_per_bone() {
    // The humanoid walking, waving from the spine up: the legs keep the walk, the arms wave;
    // the same on both backends; a mask with nothing to weight and an unknown bone are errors.
    let args = |extra: &[&str]| {
        let mut a = vec!["eval", "humanoid", "--animation", "walk", "--times", "0.3"];
        a.extend_from_slice(extra);
        eval_json(&a)
    };
    let walk = args(&[]);
    let layered = args(&["--layer", "wave", "--mask", "spine_01:2,neck_01:-1"]);
    let bones: Vec<&str> = walk["bones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    let bone = |name: &str| bones.iter().position(|b| *b == name).unwrap();
    let local = |json: &Value, b: usize| json["frames"][0]["local"][b].clone();
    for leg in ["thigh_l", "calf_r", "foot_l", "neck_01"] {
        assert_eq!(local(&layered, bone(leg)), local(&walk, bone(leg)), "{leg}");
    }
    let arm = bone("upperarm_r");
    let d = max_abs_diff(
        &Value::Array(vec![local(&layered, arm)]),
        &Value::Array(vec![local(&walk, arm)]),
    );
    assert!(d > 1e-2, "the wave did not reach the arm ({d})");
    if common::gpu().is_some() {
        let gpu = args(&[
            "--layer",
            "wave",
            "--mask",
            "spine_01:2,neck_01:-1",
            "--backend",
            "gpu",
        ]);
        let frame = |json: &Value| json["frames"][0]["component"].clone();
        assert!(max_abs_diff(&frame(&layered), &frame(&gpu)) < 1e-4);
    }

    let fails = |extra: &[&str], needle: &str| {
        let mut a = vec!["eval", "humanoid", "--times", "0.3"];
        a.extend_from_slice(extra);
        let out = posegpu(&a);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{stderr}");
    };
    fails(&["--mask", "spine_01"], "no layer to weight");
    fails(&["--layer", "wave", "--mask", "spine_9"], "'spine_9'");
    fails(&["--layer", "wave", "--layer-weight", "2"], "from 0 to 1");
    fails(&["--layer", "dance"], "dance");
}

#[test]
fn eval_lists_curves_and_info_lists_them_per_clip() {
    // Khronos' AnimatedMorphCube (Debian's assimp-testmodels): two morph weights as curves.
    let cube = "/usr/share/assimp/models/glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf";
    let json = eval_json(&["eval", cube, "--times", "0,1,2"]);
    let names = json["curves"].as_array().unwrap();
    assert_eq!(names.len(), 2);
    let values: Vec<f64> = json["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["curves"][0].as_f64().unwrap())
        .collect();
    assert_eq!(values[0], 0.0);
    assert!(values[1] > 0.1, "{values:?}");
    // A model without curves has no curve fields.
    let plain = eval_json(&["eval", "humanoid", "--times", "0"]);
    assert!(plain.get("curves").is_none());
    let out = posegpu(&["info", cube]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("curves: AnimatedMorphCube.morph0"), "{text}");
}

#[test]
fn eval_plays_a_transition_at_a_time() {
    // The humanoid walking, switching to its run at 0.5 s over 0.3 s: on the old pose where it
    // begins, on the run (0.4 s into it) once the blend is over, the same on the GPU; a
    // transition with layers or before 0 is refused.
    let frames = |extra: &[&str]| {
        let mut a = vec![
            "eval",
            "humanoid",
            "--animation",
            "walk",
            "--loop",
            "--transition-to",
            "run",
            "--transition-at",
            "0.5",
            "--times",
            "0.5,0.9",
        ];
        a.extend_from_slice(extra);
        eval_json(&a)
    };
    let pose = |json: &Value, i: usize| json["frames"][i]["component"].clone();
    let walk = eval_json(&[
        "eval",
        "humanoid",
        "--animation",
        "walk",
        "--loop",
        "--times",
        "0.5",
    ]);
    let run = eval_json(&[
        "eval",
        "humanoid",
        "--animation",
        "run",
        "--loop",
        "--times",
        "0.4",
    ]);
    for kind in ["inertialize", "crossfade"] {
        let json = frames(&["--transition", kind]);
        assert!(
            max_abs_diff(&pose(&json, 0), &pose(&walk, 0)) < 1e-5,
            "{kind}"
        );
        assert!(
            max_abs_diff(&pose(&json, 1), &pose(&run, 0)) < 1e-4,
            "{kind}"
        );
    }
    if common::gpu().is_some() {
        let gpu = frames(&["--backend", "gpu"]);
        let cpu = frames(&[]);
        assert!(max_abs_diff(&pose(&gpu, 1), &pose(&cpu, 1)) < 1e-4);
    }
    let out = posegpu(&[
        "eval",
        "humanoid",
        "--transition-to",
        "run",
        "--transition-at",
        "0.2",
        "--times=-1",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 or later"));
    let out = posegpu(&[
        "eval",
        "humanoid",
        "--transition-to",
        "run",
        "--transition-at",
        "0.2",
        "--times",
        "1",
        "--layer",
        "wave",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("without layers"));
}
