//! Characters whose nodes are posed away from their bind pose, on the command line: what
//! `info` reports, `--rest`, and the offline conversion keeping the target's node transforms.

use std::process::{Command, Output};

#[path = "../../posegpu/tests/it/common/mod.rs"]
mod common;

fn posegpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(args)
        .output()
        .expect("run posegpu")
}

fn data(rel: &str) -> String {
    common::anim_data().join(rel).display().to_string()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn info_says_when_the_nodes_are_posed_away_from_the_bind_pose() {
    let stan = posegpu(&["info", &data("gltf/quaternius/Mech_Stan.glb")]);
    let t = text(&stan);
    assert!(stan.status.success(), "{t}");
    assert!(t.contains("posed away"), "{t}");
    assert!(t.contains("UpperArm.L 58.0"), "{t}");
    assert!(t.contains("Retargeting measures from the bind pose"), "{t}");
    let knight = posegpu(&["info", &data("gltf/kaykit-adventurers/Knight.glb")]);
    let t = text(&knight);
    assert!(t.contains("bind pose: the node transforms"), "{t}");
    let bvh = posegpu(&["info", &data("bvh/cmu_walk_delfem2.bvh")]);
    assert!(
        text(&bvh).contains("bind pose: none in the file"),
        "{}",
        text(&bvh)
    );
}

#[test]
fn rest_chooses_the_pose_the_plan_is_built_from() {
    let (stan, walk) = (
        data("gltf/quaternius/Mech_Stan.glb"),
        data("bvh/cmu_walk_delfem2.bvh"),
    );
    let plan = |rest: &str| {
        let out = posegpu(&["info", &stan, "--against", &walk, "--rest", rest]);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (bind, nodes) = (plan("bind"), plan("nodes"));
    assert_eq!(
        bind,
        text(&posegpu(&["info", &stan, "--against", &walk])),
        "bind is the default"
    );
    assert_ne!(bind, nodes, "the node pose gives another plan");
    let bad = posegpu(&["info", &stan, "--against", &walk, "--rest", "tpose"]);
    assert!(!bad.status.success());
    assert!(text(&bad).contains("bind or nodes"), "{}", text(&bad));
}

#[test]
fn the_converted_file_keeps_the_targets_node_transforms() {
    let stan = data("gltf/quaternius/Mech_Stan.glb");
    let dir = std::env::temp_dir().join(format!("posegpu-bind-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("stan_walk.glb");
    let run = posegpu(&[
        "retarget",
        &data("bvh/cmu_walk_delfem2.bvh"),
        "--all",
        "--target",
        &stan,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run));
    let written = posegpu::import::load(&out).unwrap();
    let original = posegpu::import::load(&stan).unwrap();
    // The nodes as they were (posed), the same bind pose, and the converted clip on them.
    assert_eq!(written.skeleton.rest(), original.skeleton.rest());
    for (a, b) in written
        .skeleton
        .bind_pose()
        .iter()
        .zip(original.skeleton.bind_pose())
    {
        // |dot| rather than an angle: acos loses precision next to 1.
        assert!(a.rotation.dot(b.rotation).abs() > 1.0 - 1e-6, "{a:?} {b:?}");
    }
    assert_eq!(written.clips.last().unwrap().name(), "cmu_walk_delfem2");
}
