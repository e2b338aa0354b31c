//! The eval JSON contract, BVH input, errors as messages, info and the demo.

use super::*;

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
