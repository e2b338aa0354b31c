//! glTF import: every real file loads with the expected skeleton and clips; broken files give
//! typed errors, never a panic.

mod common;

use std::path::{Path, PathBuf};

use posegpu::{AnimLibrary, Error, Instance, Interpolation};

fn load(rel: &str) -> posegpu::Asset {
    let path = common::anim_data().join(rel);
    posegpu::import::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn real_files_have_the_documented_skeletons_and_clips() {
    // (file, joints, clips) from anim-data/README.md
    let expected = [
        ("gltf/quaternius/Mech_Mike.glb", 43, 18),
        ("gltf/quaternius/Mech_Stan.glb", 43, 18),
        ("gltf/khronos/CesiumMan.glb", 19, 1),
        ("gltf/khronos/RiggedFigure.glb", 19, 1),
        ("gltf/khronos/Fox.glb", 24, 3),
        ("gltf/khronos/RiggedSimple.glb", 2, 1),
        ("gltf/khronos/SimpleSkin.gltf", 2, 1),
        ("gltf/kaykit-adventurers/Knight.glb", 41, 76),
        ("gltf/kaykit-adventurers/Barbarian.glb", 41, 76),
        ("gltf/kaykit-rig-medium/Med_General.glb", 23, 15),
        ("gltf/kaykit-rig-medium/Med_MovementBasic.glb", 23, 11),
        ("gltf/kaykit-rig-medium/Med_MovementAdvanced.glb", 23, 13),
        ("gltf/kaykit-rig-medium/manny_med_mod.gltf", 21, 0),
    ];
    for (file, joints, clips) in expected {
        let asset = load(file);
        assert_eq!(asset.skeleton.len(), joints, "{file}: bones");
        assert_eq!(asset.clips.len(), clips, "{file}: clips");
        let parents = asset.skeleton.parents();
        assert!(
            parents.iter().enumerate().all(|(i, &p)| p < i as i32),
            "{file}: parents-first"
        );
        AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    }
}

#[test]
fn skin_joint_order_is_kept_as_a_mapping() {
    for file in [
        "gltf/khronos/Fox.glb",
        "gltf/quaternius/Mech_Mike.glb",
        "gltf/khronos/CesiumMan.glb",
    ] {
        let asset = load(file);
        let mut seen = asset.skeleton.source_index().to_vec();
        seen.sort();
        assert_eq!(
            seen,
            (0..asset.skeleton.len()).collect::<Vec<_>>(),
            "{file}: a permutation"
        );
    }
}

#[test]
fn interpolation_scale_and_late_first_keys_come_through() {
    let general = load("gltf/kaykit-rig-medium/Med_General.glb");
    let step = general.clips.iter().flat_map(|c| c.tracks()).flat_map(|t| {
        [
            t.translation.as_ref().map(|c| c.interpolation),
            t.rotation.as_ref().map(|c| c.interpolation),
        ]
    });
    assert!(
        step.flatten().any(|i| i == Interpolation::Step),
        "Med_General has STEP keys"
    );

    let spawn = general
        .clips
        .iter()
        .find(|c| c.name().ends_with("Spawn_Air"))
        .expect("Spawn_Air");
    let scaled = spawn
        .tracks()
        .iter()
        .filter_map(|t| t.scale.as_ref())
        .any(|c| {
            c.values
                .iter()
                .any(|s| (*s - glam::Vec3::ONE).abs().max_element() > 1e-3)
        });
    assert!(scaled, "Spawn_Air animates scale");

    let simple = load("gltf/khronos/RiggedSimple.glb");
    let first = simple.clips[0]
        .tracks()
        .iter()
        .filter_map(|t| t.rotation.as_ref())
        .map(|c| c.times[0]);
    assert!(
        first.into_iter().all(|t| (t - 1.0 / 24.0).abs() < 1e-4),
        "keys start at 1/24"
    );
}

#[test]
fn the_data_uri_file_loads_and_animates() {
    let asset = load("gltf/khronos/SimpleSkin.gltf");
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let d = lib.clip_duration(0);
    let poses = common::cpu_eval(
        &lib,
        &[
            Instance::new(0, 0.0, false),
            Instance::new(0, d / 5.5, false),
        ],
    );
    assert_ne!(
        poses.local(0, 1).rotation,
        poses.local(1, 1).rotation,
        "the joint moves"
    );
}

fn copy_to_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("posegpu-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn truncated_and_corrupted_copies_give_errors_not_panics() {
    for file in [
        "gltf/quaternius/Mech_Mike.glb",
        "gltf/khronos/Fox.glb",
        "gltf/khronos/SimpleSkin.gltf",
    ] {
        let src = common::anim_data().join(file);
        let bytes = std::fs::read(&src).unwrap();
        let ext = src.extension().unwrap().to_str().unwrap();
        for cut in [
            0,
            11,
            20,
            bytes.len() / 10,
            bytes.len() / 2,
            bytes.len() - 1,
        ] {
            let path = copy_to_temp(&format!("cut{cut}.{ext}"), &bytes[..cut]);
            let err = posegpu::import::load(&path).expect_err("a truncated file must not load");
            assert!(
                matches!(err, Error::Gltf { .. }),
                "{file} cut at {cut}: {err}"
            );
        }
        // Flip bytes all over the file: it may load (padding, image bytes) but must not panic.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..12 {
            let mut bad = bytes.clone();
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let i = (state % bad.len() as u64) as usize;
                bad[i] ^= (state >> 32) as u8 | 1;
            }
            let path = copy_to_temp(&format!("flip{round}.{ext}"), &bad);
            if let Ok(asset) = posegpu::import::load(&path) {
                AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
            }
        }
    }
}

/// Debian's assimp-testmodels: deliberately broken glTF files.
#[test]
fn assimp_broken_gltf_set() {
    let root = Path::new("/usr/share/assimp/models/glTF2");
    if !root.is_dir() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true but assimp-testmodels is not installed"
        );
        eprintln!("skipping: assimp-testmodels not installed");
        return;
    }
    let mut tried = 0;
    for dir in [
        "wrongTypes",
        "IndexOutOfRange",
        "RecursiveNodes",
        "MissingBin",
        "TestNoRootNode",
    ] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("gltf" | "glb")
                ) {
                    tried += 1;
                    match posegpu::import::load(&path) {
                        Ok(a) => eprintln!("{}: loaded {} bones", path.display(), a.skeleton.len()),
                        Err(e) => {
                            assert!(matches!(e, Error::Gltf { .. }), "{}: {e}", path.display());
                            eprintln!("{}: {e}", path.display());
                        }
                    }
                }
            }
        }
    }
    assert!(tried >= 5, "only {tried} files found");
}

#[test]
fn a_missing_file_and_an_unknown_extension() {
    let err = posegpu::import::load("/nonexistent/model.glb").unwrap_err();
    assert!(
        matches!(err, Error::Io { .. }) && err.to_string().contains("/nonexistent/model.glb"),
        "{err}"
    );
    let err = posegpu::import::load("model.fbx").unwrap_err();
    assert!(matches!(err, Error::UnknownFormat { .. }), "{err}");
}
