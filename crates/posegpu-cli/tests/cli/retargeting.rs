//! Retargeting on the command line: rigs, other files, info --against, offline conversion.

use super::*;

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
