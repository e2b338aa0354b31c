//! The command line: the eval JSON contract, info, and errors.

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
    let gpu = eval_json(&args("gpu").each_ref().map(String::as_str));
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
    for f in 0..2 {
        let (c, g) = (&cpu["frames"][f], &gpu["frames"][f]);
        assert!(max_abs_diff(&c["component"], &g["component"]) < 1e-3);
    }
}

#[test]
fn info_against_shows_the_matching_and_bad_rigs_are_errors() {
    let (mike, stan) = mechs();
    let out = posegpu(&["info", &stan, "--against", &mike]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("43 of 43 target bones matched"), "{text}");
    assert!(
        text.contains("Body <- Body (exact), animation_scaled"),
        "{text}"
    );
    assert!(text.contains("Head <- Head (exact), skeleton"), "{text}");

    let out = posegpu(&["info", &data("bvh/cmu_01_01.bvh"), "--against", &mike]);
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
    let mapping =
        posegpu::BoneMapping::new(&m.skeleton, &s.skeleton, &posegpu::Rig::default()).unwrap();
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
        "retarget", &walk, "--all", "--target", &cmu, "--out", &out_s,
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
        "retarget", &cesium, "--all", "--target", &walk, "--out", &out_s,
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
