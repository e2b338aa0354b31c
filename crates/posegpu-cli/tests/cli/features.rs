//! Feet IK, baked clips, masked layers, curves and transitions on the command line.

use super::*;

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
