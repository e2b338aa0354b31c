//! Additive layers and aim offsets on the command line.

use super::*;

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
