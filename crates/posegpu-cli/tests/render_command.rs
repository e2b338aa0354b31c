//! `posegpu render`: numbered frames that differ, the reference pose of a model without clips,
//! and bad input reported without writing a picture.

#[path = "../../posegpu/tests/it/common/mod.rs"]
mod common;

use common::{anim_data, gpu};
use posegpu_cli::picture::decode_png;

fn posegpu(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn render_command_writes_a_numbered_sequence_of_pictures() {
    if gpu().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("posegpu-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("crowd.png");
    let run = posegpu(&[
        "render",
        "--instances",
        "6",
        "--width",
        "120",
        "--height",
        "80",
        "--frames",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut pictures = Vec::new();
    for k in 0..2 {
        let path = dir.join(format!("crowd_{k:04}.png"));
        let (w, h, rgba) = decode_png(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!((w, h), (120, 80), "{}", path.display());
        let background = &rgba[..4];
        let drawn = rgba.chunks_exact(4).filter(|p| p != &background).count();
        assert!(drawn > 200, "{}: only {drawn} pixels drawn", path.display());
        pictures.push(rgba);
    }
    assert_ne!(
        pictures[0], pictures[1],
        "the two frames are the same picture"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn render_command_reports_bad_input_without_a_picture() {
    let dir = std::env::temp_dir().join(format!("posegpu-render-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("x.png");
    let knight = anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let cases: [(&[&str], &str); 7] = [
        (&["--animation", "Moonwalk"], "Moonwalk"),
        (&["--instances", "0"], "at least 1"),
        (&["--frames", "0"], "at least 1"),
        (&["--fps", "0"], "above 0"),
        (&["--fps", "NaN"], "above 0"),
        (
            &["--model", knight.to_str().unwrap(), "--hide", "Excalibur"],
            "Excalibur",
        ),
        (&["--model", "/nonexistent/model.glb"], "nonexistent"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["render", "--out", out.to_str().unwrap()];
        all.extend_from_slice(args);
        let run = posegpu(&all);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote a picture");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn render_command_draws_a_model_without_clips_in_its_reference_pose() {
    if gpu().is_none() {
        return;
    }
    let model = anim_data().join("gltf/kaykit-rig-medium/manny_med_mod.gltf");
    let out = std::env::temp_dir().join(format!("posegpu-manny-{}.png", std::process::id()));
    let run = posegpu(&[
        "render",
        "--model",
        model.to_str().unwrap(),
        "--instances",
        "2",
        "--width",
        "64",
        "--height",
        "48",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let (_, _, rgba) = decode_png(&std::fs::read(&out).unwrap()).unwrap();
    let drawn = rgba.chunks_exact(4).filter(|p| p != &&rgba[..4]).count();
    assert!(drawn > 100, "only {drawn} pixels drawn");
    std::fs::remove_file(&out).unwrap();
}

#[test]
fn render_command_plays_another_files_clip_retargeted() {
    if gpu().is_none() {
        return;
    }
    let model = anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let source = anim_data().join("bvh/cmu_walk_delfem2.bvh");
    let dir = std::env::temp_dir().join(format!("posegpu-render-from-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // `posegpu render` of the knight playing the CMU walk, with further arguments, into `name`.
    let render = |name: &str, more: &[&str]| {
        let out = dir.join(name);
        let mut args = vec![
            "render",
            "--model",
            model.to_str().unwrap(),
            "--animation-from",
            source.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        (posegpu(&args), out)
    };
    let picture = |time: &str, name: &str| {
        let size = ["--instances", "1", "--width", "96", "--height", "96"];
        let (run, out) = render(name, &[&size[..], &["--time", time]].concat());
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        decode_png(&std::fs::read(&out).unwrap()).unwrap().2
    };
    // The knight walks: the source's clip moves it, so two times draw two different pictures.
    let (a, b) = (picture("0.1", "a.png"), picture("0.6", "b.png"));
    let drawn = a.chunks_exact(4).filter(|p| p != &&a[..4]).count();
    assert!(drawn > 100, "only {drawn} pixels drawn");
    assert_ne!(a, b, "the retargeted clip does not move the knight");
    // A clip the source does not have is named in the error.
    let (run, _) = render("c.png", &["--animation", "Moonwalk"]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("Moonwalk"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crowd_past_the_device_limit_is_a_typed_error_not_a_panic() {
    if gpu().is_none() {
        return;
    }
    let out = std::env::temp_dir().join(format!("posegpu-huge-{}.png", std::process::id()));
    let run = posegpu(&[
        "render",
        "--instances",
        "100000000",
        "--out",
        &out.display().to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("placements of 100000000 instances") && !stderr.contains("panicked"),
        "{stderr}"
    );
    assert!(!out.exists());
}
