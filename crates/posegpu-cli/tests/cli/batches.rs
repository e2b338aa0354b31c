//! Character retargeting reports and batch conversion.

use super::*;

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
